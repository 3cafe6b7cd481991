/*
 * run_agent.c: what `cordon run --agent NAME` adds to a run beside the
 * profile's policy, which the merge took (policies/policy_agent.c):
 * cordon's CA, made on first use, since a profile inspects its API host
 * to put the real key in there; and the profile's hints for the command
 * (codex's own sandbox cannot start inside cordon's).  Nothing here
 * needs privileges.
 *
 * Runs in: cordon run on the host, after the merge, before the plan.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "runner/run_prep.h"
#include "runner/runner.h"

/* Whether argv holds one of hint ph's arguments. */
static bool
run_agent_hint_met(const struct pahint *ph, char *const *argv)
{
	size_t	 i, j;

	for (i = 1; argv[i] != NULL; i++)
		for (j = 0; j < ph->ph_nunless; j++)
			if (strcmp(argv[i], ph->ph_unless[j]) == 0)
				return true;
	return false;
}

/* The profile's hints for the command argv, said before it starts. */
static void
run_agent_hints(const struct pagent *pa, char *const *argv)
{
	const char	*base;
	size_t		 i;

	if ((base = strrchr(argv[0], '/')) != NULL)
		base++;
	else
		base = argv[0];
	for (i = 0; i < pa->pa_nhints; i++)
		if (strcmp(base, pa->pa_hints[i].ph_command) == 0 &&
		    !run_agent_hint_met(&pa->pa_hints[i], argv))
			log_warnx("hint: %s", pa->pa_hints[i].ph_text);
}

/*
 * The profile's state_env into p's env.set: each variable the path of
 * the home it names, where its state folder is kept.
 */
static void
run_agent_env(const struct pagent *pa, struct policy *p, const char *home)
{
	struct pitem	*it;
	size_t		 i, j;

	for (i = 0; i < pa->pa_nenv; i++) {
		/* The user's own env.set of it wins. */
		for (j = 0; j < p->p_env_set.pl_n; j++)
			if (strcmp(p->p_env_set.pl_v[j].pi_text,
			    pa->pa_env[i].pe_name) == 0)
				break;
		if (j < p->p_env_set.pl_n)
			continue;
		it = policy_plist_add(&p->p_env_set);
		it->pi_text = xstrdup(pa->pa_env[i].pe_name);
		xasprintf(&it->pi_value, "%s%s", home, pa->pa_env[i].pe_path);
		xasprintf(&it->pi_from, "agent profile %s: state_env",
		    pa->pa_name);
		p->p_env_set.pl_set = true;
	}
}

/*
 * The --agent of the run's layers, if any: its profile into
 * rp->rp_agent, its CA made, its hints said.  Returns 0, or -1 having
 * said why.
 */
int
run_agent_prepare(struct run_prep *rp, const struct run_opts *o)
{
	const struct run	*run = &rp->rp_run;
	struct policy_ctx	 ctx;
	struct policy		*layer;
	const char		*name;
	char			*cause;

	if ((name = policy_agent_of(&rp->rp_layers)) == NULL)
		return 0;
	if (policy_merge_ctx_init(&ctx, rp->rp_layers.ly_workspace,
	    &cause) == -1) {
		log_warnx("run: %s", cause);
		free(cause);
		return -1;
	}
	layer = policy_agent_load(name, &ctx, &rp->rp_agent, &cause);
	if (layer == NULL) {
		policy_merge_ctx_clear(&ctx);
		log_warnx("run: %s", cause);
		free(cause);
		return -1;
	}
	policy_free(layer);
	run_agent_env(&rp->rp_agent, rp->rp_policy, ctx.pc_home);
	policy_merge_ctx_clear(&ctx);
	if (run->r_sb.sb_net.sn_mode == NET_PROXY &&
	    rp->rp_net.net_socket == NULL && trust_wanted(rp->rp_policy) &&
	    run_proxy_agent_ca(rp->rp_policy, name) == -1)
		return -1;
	run_agent_hints(&rp->rp_agent, o->ro_argv);
	return 0;
}
