/*
 * run_control.c: the harness's side of a run (--control, --ask): each
 * decision of the run's proxy counted and told to it, connections held
 * while it is asked, and the rules and answers it sends back.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"
#include "log.h"
#include "policy.h"
#include "proxy.h"
#include "runner.h"
#include "util.h"
#include "xmalloc.h"

/* A connection held while the harness is asked (--ask). */
struct ask {
	char		 as_id[24];
	struct conn	*as_conn;
};

/* Each decision of the run's proxy: counted, and told to the harness. */
static void
run_control_observe(const struct egress *e, const char *hint,
    const char *pattern, void *arg)
{
	struct runner	*rn = arg;
	char		*host, id[24];

	tally_add(rn->rn_tally, e, hint, pattern);
	keeper_tally(rn, e, hint, pattern);
	if (e->e_allow || !control_alive(rn->rn_control))
		return;
	host = str_escape(e->e_host != NULL ? e->e_host : "",
	    e->e_host != NULL ? e->e_hostlen : 0);
	snprintf(id, sizeof(id), "r%lu", ++rn->rn_seq);
	control_send(rn->rn_control, json_pack("{s:s, s:s, s:s, s:i, s:s, "
	    "s:s, s:o, s:o, s:o}", "event", "refused", "id", id,
	    "host", host, "port", e->e_port,
	    "protocol", e->e_proto != NULL ? e->e_proto : "",
	    "reason", e->e_reason != NULL ? e->e_reason : "refused",
	    "rule", e->e_rule != NULL ? json_string(e->e_rule) : json_null(),
	    "fix", hint != NULL ? json_string(hint) : json_null(),
	    "allow", pattern != NULL ? json_string(pattern) : json_null()));
	free(host);
}

/* --ask: a connection no rule allows waits while the harness is asked. */
static bool
run_control_ask(struct conn *c, const struct egress *e, void *arg)
{
	struct runner	*rn = arg;
	struct ask	*as;
	char		*host;

	if (!rn->rn_net->net_ask || !control_alive(rn->rn_control))
		return false;
	rn->rn_asks = xreallocarray(rn->rn_asks, rn->rn_nasks + 1,
	    sizeof(*rn->rn_asks));
	as = &rn->rn_asks[rn->rn_nasks++];
	snprintf(as->as_id, sizeof(as->as_id), "a%lu", ++rn->rn_seq);
	as->as_conn = c;
	host = str_escape(e->e_host != NULL ? e->e_host : "",
	    e->e_host != NULL ? e->e_hostlen : 0);
	control_send(rn->rn_control, json_pack("{s:s, s:s, s:s, s:i, s:s, "
	    "s:i}", "event", "ask", "id", as->as_id, "host", host,
	    "port", e->e_port, "protocol", e->e_proto != NULL ?
	    e->e_proto : "", "timeout_secs", rn->rn_net->net_ask_secs));
	free(host);
	return true;
}

/* Forgets the ask of c (answered, timed out, or the client went). */
static void
run_control_ask_cancel(struct conn *c, void *arg)
{
	struct runner	*rn = arg;
	size_t		 i;

	for (i = 0; i < rn->rn_nasks; i++)
		if (rn->rn_asks[i].as_conn == c) {
			rn->rn_asks[i] = rn->rn_asks[--rn->rn_nasks];
			return;
		}
}

/* What the run's proxy tells cordon run, and asks it. */
const struct proxy_hooks run_proxy_hooks = {
	.hk_observe = run_control_observe,
	.hk_ask = run_control_ask,
	.hk_ask_cancel = run_control_ask_cancel,
};

/* {"allow": P} or {"deny": P}: the run's policy, with one rule more. */
static int
run_control_rule(bool allow, const char *pattern, void *arg, char **cause)
{
	struct runner	*rn = arg;
	struct proxy	*px = &rn->rn_proxy;
	struct policy	*p;
	struct plist	*pl;
	const char	*flag = allow ? "--allow-domain" : "--deny-domain";

	if (!rn->rn_own_proxy) {
		xasprintf(cause, "%s: the operator's proxy decides for this "
		    "run (--proxy-socket); ask its operator", allow ? "allow" :
		    "deny");
		return -1;
	}
	p = policy_new();
	policy_merge(p, px->px_policy->pp_policy);
	if (policy_add_flag(p, flag, pattern, NULL, cause) == -1) {
		policy_free(p);
		return -1;
	}
	pl = allow ? &p->p_allow : &p->p_deny;
	free(pl->pl_v[pl->pl_n - 1].pi_from);
	pl->pl_v[pl->pl_n - 1].pi_from = xstrdup("the control channel");
	ppolicy_unref(px->px_policy);
	px->px_policy = ppolicy_new(p);
	log_info("run: %s %s, from the control channel", allow ? "allow" :
	    "deny", pattern);
	control_send(rn->rn_control, json_pack("{s:s, s:s}", "event",
	    "applied", allow ? "allow" : "deny", pattern));
	return 0;
}

/* {"answer": ID, "decision": D} for a held connection. */
static int
run_control_answer(const char *id, const char *decision, void *arg,
    char **cause)
{
	struct runner	*rn = arg;
	struct conn	*c;
	char		*pattern;
	size_t		 i;

	for (i = 0; i < rn->rn_nasks; i++)
		if (strcmp(rn->rn_asks[i].as_id, id) == 0)
			break;
	if (i == rn->rn_nasks) {
		xasprintf(cause, "no question \"%s\" waits for an answer (it "
		    "was answered, timed out, or its client went)", id);
		return -1;
	}
	c = rn->rn_asks[i].as_conn;
	rn->rn_asks[i] = rn->rn_asks[--rn->rn_nasks];
	if (strcmp(decision, "allow-run") == 0) {
		pattern = conn_pattern(c);
		if (pattern == NULL || run_control_rule(true, pattern, rn,
		    cause) == -1) {
			if (pattern == NULL)
				xasprintf(cause, "no single rule allows it");
			free(pattern);
			conn_answer(c, false, NULL);
			return -1;
		}
		free(pattern);
		conn_answer(c, true, "allowed for the run by the harness "
		    "(--ask)");
	} else if (strcmp(decision, "allow-once") == 0)
		conn_answer(c, true, "allowed once by the harness (--ask)");
	else
		conn_answer(c, false, NULL);
	return 0;
}

/* The harness went: what waits is refused, and nothing more asked. */
static void
run_control_closed(void *arg)
{
	struct runner	*rn = arg;
	struct conn	*c;

	while (rn->rn_nasks > 0) {
		c = rn->rn_asks[--rn->rn_nasks].as_conn;
		conn_answer(c, false, NULL);
	}
}

static const struct control_hooks run_control_hooks = {
	run_control_rule, run_control_answer, run_control_closed
};

/* --control: the harness's channel, told the run starts; 0 or -1 said. */
int
run_control_start(struct runner *rn)
{
	char	*cause;

	if (rn->rn_net->net_control == NULL)
		return 0;
	if ((rn->rn_control = control_open(rn->rn_base,
	    rn->rn_net->net_control, &run_control_hooks, rn, &cause)) ==
	    NULL) {
		log_warnx("run: %s", cause);
		free(cause);
		return -1;
	}
	control_send(rn->rn_control, json_pack("{s:s, s:s, s:i}", "event",
	    "start", "sandbox", rn->rn_run->r_sb.sb_id, "version",
	    REPORT_VERSION));
	return 0;
}
