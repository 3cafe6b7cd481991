/*
 * run_proxy.c: the proxy's side of a run in cordon-offline, which has no
 * proxy: what runner/run_proxy.c does for a run in network mode none or
 * host, which is to hold the policy for a session's commands and
 * nothing else.  A run that needs the proxy, or a harness's --control,
 * is cordon-main's: run_proxy_served hands it over before anything is
 * made, and the other steps refuse it, should one get here.
 *
 * Runs in: cordon run on the host.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "lib/log.h"
#include "offline/offline.h"
#include "policies/policy.h"
#include "runner/run_host.h"
#include "runner/run_prep.h"
#include "runner/runner.h"

/* Whether the run has no proxy and no harness: cordon-offline's runs. */
static bool
run_proxy_none(const struct run *run, const struct run_net *net)
{
	return run->r_sb.sb_net.sn_mode != NET_PROXY && net->net_control ==
	    NULL;
}

/*
 * A run with the proxy or a harness goes to cordon-main, with the same
 * argv: never returns then, unless the exec fails (said).  Returns 0,
 * or -1.
 */
int
run_proxy_served(const struct run_prep *rp)
{
	if (run_proxy_none(&rp->rp_run, &rp->rp_net))
		return 0;
	offline_exec_main();
	return -1;
}

/* No proxy to start: the policy stays for a session's commands. */
int
run_proxy_setup(struct runner *rn, struct policy *policy)
{
	struct run	*run = rn->rn_run;

	run->r_policy = NULL;
	if (!run_proxy_none(run, rn->rn_net)) {
		log_warnx("run: cordon-offline has no proxy; nothing run");
		policy_free(policy);
		return -1;
	}
	if (run->r_session_opts != NULL)
		rn->rn_env_policy = policy;
	else
		policy_free(policy);
	return 0;
}

/* No feed to an operator's proxy to watch. */
void
run_proxy_watch(struct runner *rn)
{
	(void)rn;
}

/* No harness: run_proxy_served handed a run with one over. */
int
run_proxy_control(struct runner *rn)
{
	if (rn->rn_net->net_control == NULL)
		return 0;
	log_warnx("run: --control is cordon-main's; nothing run");
	return -1;
}

/* Nothing of a proxy to end. */
void
run_proxy_end(struct runner *rn)
{
	(void)rn;
}

/* The command holds no phantom credentials and no CA bundle. */
int
run_proxy_env(struct run_prep *rp)
{
	(void)rp;
	return 0;
}

void
run_proxy_env_clear(struct run_prep *rp)
{
	(void)rp;
}

/* cordon's CA is for the proxy, which is cordon-main's. */
int
run_proxy_agent_ca(const struct policy *p, const char *name)
{
	(void)p;
	log_warnx("run: --agent %s: cordon-offline has no proxy to put the "
	    "agent's key in; nothing run", name);
	return -1;
}
