/*
 * control_run.c: the harness's side of a run (--control, --ask): each
 * decision of the run's proxy counted and told to it, connections held
 * while it is asked, and the rules and answers it sends back.
 *
 * Runs in: cordon run on the host, on its event loop.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"
#include "runner/control.h"
#include "runner/run_host.h"
#include "runner/runner.h"
#include "runner/tally.h"

/*
 * --ask: a connection no rule allows waits while the harness is asked;
 * returns the seconds it waits, or 0.
 */
static int
control_run_ask(struct conn *c, const struct egress *e, void *arg)
{
	struct runner	*rn = arg;
	struct ask	*as;
	char		*host;

	if (!rn->rn_net->net_ask || !control_alive(rn->rn_control))
		return 0;
	rn->rn_asks = xreallocarray(rn->rn_asks, rn->rn_nasks + 1,
	    sizeof(*rn->rn_asks));
	as = &rn->rn_asks[rn->rn_nasks++];
	memset(as, 0, sizeof(*as));
	snprintf(as->as_id, sizeof(as->as_id), "a%lu", ++rn->rn_seq);
	as->as_conn = c;
	host = str_escape(e->e_host != NULL ? e->e_host : "",
	    e->e_host != NULL ? e->e_hostlen : 0);
	control_send(rn->rn_control, json_pack("{s:s, s:s, s:s, s:i, s:s, "
	    "s:i}", "event", "ask", "id", as->as_id, "host", host,
	    "port", e->e_port, "protocol", e->e_proto != NULL ?
	    e->e_proto : "", "timeout_secs", rn->rn_net->net_ask_secs));
	free(host);
	return rn->rn_net->net_ask_secs;
}

/* Forgets the ask of c (answered, timed out, or the client went). */
static void
control_run_ask_cancel(struct conn *c, void *arg)
{
	struct runner	*rn = arg;
	size_t		 i;

	for (i = 0; i < rn->rn_nasks; i++)
		if (rn->rn_asks[i].as_conn == c) {
			rn->rn_asks[i] = rn->rn_asks[--rn->rn_nasks];
			return;
		}
}

/* A login was refreshed inside: its new tokens go to the host's file. */
static void
control_run_renewed(const char *file, const struct phantom *ph, size_t n,
    long long expires_in, void *arg)
{
	struct runner	*rn = arg;

	run_secrets_renewed(rn->rn_run, file, ph, n, expires_in);
}

/* What the run's proxy tells cordon run, and asks it. */
const struct proxy_hooks control_run_proxy_hooks = {
	.hk_observe = control_tell_observe,
	.hk_ask = control_run_ask,
	.hk_ask_cancel = control_run_ask_cancel,
	.hk_renewed = control_run_renewed,
};

/*
 * {"allow": P} or {"deny": P} with --proxy-socket: checked here, then
 * sent to the operator's proxy, which holds the run's rules; its answer
 * comes back to control_tell_said().  Returns 0, or -1 with *cause.
 */
static int
control_run_remote_rule(struct runner *rn, bool allow, const char *pattern,
    char **cause)
{
	struct pitem	 it;

	/* While it reopens, the rule waits and goes with the replay. */
	if (!control_feed_replay_reopening(rn) && (rn->rn_feed == NULL ||
	    rn->rn_feed_ended)) {
		xasprintf(cause, "%s: the run's channel to the operator's "
		    "proxy is closed; nothing changed", allow ? "allow" :
		    "deny");
		return -1;
	}
	if (control_feed_replay_full(rn)) {
		xasprintf(cause, "%s: %d live rules of the run are in force or "
		    "wait for the operator's proxy's answer; nothing changed",
		    allow ? "allow" : "deny", FEED_KEPT_MAX);
		return -1;
	}
	memset(&it, 0, sizeof(it));
	if (policy_parse_pattern(pattern, &it, cause) == -1)
		return -1;
	policy_pitem_clear(&it);
	control_feed_rule(rn, allow, pattern);
	return 0;
}

/* {"allow": P} or {"deny": P}: the run's policy, with one rule more. */
static int
control_run_rule(bool allow, const char *pattern, void *arg, char **cause)
{
	struct runner	*rn = arg;
	struct proxy	*px = &rn->rn_proxy;
	struct policy	*p;
	struct plist	*pl;
	const char	*flag = allow ? "--allow-domain" : "--deny-domain";

	if (!rn->rn_own_proxy)
		return control_run_remote_rule(rn, allow, pattern, cause);
	p = policy_new();
	policy_merge(p, px->px_policy->pp_policy);
	if (policy_merge_flag(p, flag, pattern, NULL, cause) == -1) {
		policy_free(p);
		return -1;
	}
	pl = allow ? &p->p_allow : &p->p_deny;
	free(pl->pl_v[pl->pl_n - 1].pi_from);
	pl->pl_v[pl->pl_n - 1].pi_from = xstrdup("the control channel");
	proxy_policy_unref(px->px_policy);
	px->px_policy = proxy_policy_new(p);
	log_info("run: %s %s, from the control channel", allow ? "allow" :
	    "deny", pattern);
	control_send(rn->rn_control, json_pack("{s:s, s:s}", "event",
	    "applied", allow ? "allow" : "deny", pattern));
	return 0;
}

/* {"answer": ID, "decision": D} for a held connection. */
static int
control_run_answer(const char *id, const char *decision, void *arg,
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
	if (c == NULL) {
		/* The operator's proxy holds it, and hears the answer. */
		control_feed_answer(rn, rn->rn_asks[i].as_remote, decision);
		rn->rn_asks[i] = rn->rn_asks[--rn->rn_nasks];
		return 0;
	}
	rn->rn_asks[i] = rn->rn_asks[--rn->rn_nasks];
	if (strcmp(decision, "allow-run") == 0) {
		pattern = conn_pattern(c);
		if (pattern == NULL || control_run_rule(true, pattern, rn,
		    cause) == -1) {
			if (pattern == NULL)
				xasprintf(cause, "no single rule allows it");
			free(pattern);
			conn_dial_answer(c, false, NULL);
			return -1;
		}
		free(pattern);
		conn_dial_answer(c, true, "allowed for the run by the harness "
		    "(--ask)");
	} else if (strcmp(decision, "allow-once") == 0)
		conn_dial_answer(c, true,
		    "allowed once by the harness (--ask)");
	else
		conn_dial_answer(c, false, NULL);
	return 0;
}

/* The harness went: what waits is refused, and nothing more asked. */
static void
control_run_closed(void *arg)
{
	struct runner	*rn = arg;
	struct conn	*c;

	while (rn->rn_nasks > 0) {
		c = rn->rn_asks[--rn->rn_nasks].as_conn;
		if (c != NULL)
			conn_dial_answer(c, false, NULL);
		else
			control_feed_answer(rn,
			    rn->rn_asks[rn->rn_nasks].as_remote, "deny");
	}
}

static const struct control_hooks control_run_hooks = {
	control_run_rule, control_run_answer, control_run_closed
};

/* --control: the harness's channel, told the run starts; 0 or -1 said. */
int
control_run_start(struct runner *rn)
{
	char	*cause;

	if (rn->rn_net->net_control == NULL)
		return 0;
	if ((rn->rn_control = control_open(rn->rn_base,
	    rn->rn_net->net_control, &control_run_hooks, rn, &cause)) ==
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
