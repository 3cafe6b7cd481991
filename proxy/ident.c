/*
 * ident.c: a tls: client's identity at the proxy (policies/policy_ident.c
 * has the rules): the operator's policy joined by the layer of the rule
 * its identity matches, made once per rule and policy; "report", which
 * lets through what that policy would refuse, warned; and the limits of
 * an identity, counted for each identity apart (two certificates the
 * same rule matches have a count each): tunnels open at once, and new
 * decisions a second (a token bucket holding one second's worth).  The
 * counts are this process's; a worker of --workers N counts in the
 * region all the workers share (ident_shm.c).
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conn.h"
#include "log.h"
#include "policy.h"
#include "util.h"
#include "xmalloc.h"

/*
 * The identities counted apart; past them, one that has no tunnel open
 * and a full bucket gives its place, and if none does the newcomer is
 * counted with the last (stricter, never looser).
 */
#define IDENT_COUNTS_MAX	4096

struct ident_count {
	char		*ic_id;		/* NULL: free */
	unsigned int	 ic_tunnels;
	double		 ic_tokens;
	struct timespec	 ic_last;	/* of the last refill */
	unsigned int	 ic_rate;	/* the bucket's size, a second's */
};

/*
 * The policy that decides for identity id under pp, the operator's:
 * pp itself when it has no identities or id is NULL (no tls: client),
 * else the rule's join, made at its first use and kept with pp.  Lends.
 */
struct ppolicy *
ident_policy(struct ppolicy *pp, const char *id)
{
	const struct pidents	*is = pp->pp_policy->p_idents;
	const struct pident	*rule;
	struct ppolicy		*j;
	size_t			 i;

	if (is == NULL || id == NULL)
		return pp;
	rule = policy_ident_find(pp->pp_policy, id);
	i = rule == &is->is_default ? is->is_n : (size_t)(rule - is->is_v);
	if (pp->pp_idents == NULL) {
		pp->pp_idents = xcalloc(is->is_n + 1, sizeof(*pp->pp_idents));
		pp->pp_nidents = is->is_n + 1;
	}
	if ((j = pp->pp_idents[i]) == NULL) {
		j = proxy_policy_new(policy_ident_join(pp->pp_policy, rule,
		    NULL));
		j->pp_rules = policy_ident_ref(pp->pp_policy->p_idents);
		j->pp_rule = rule;
		pp->pp_idents[i] = j;
	}
	return j;
}

/* Frees the joins pp made (proxy_policy_unref). */
void
ident_policy_clear(struct ppolicy *pp)
{
	size_t	 i;

	for (i = 0; i < pp->pp_nidents; i++)
		proxy_policy_unref(pp->pp_idents[i]);
	free(pp->pp_idents);
	policy_ident_unref(pp->pp_rules);
}

/* The count of identity id, made or taken over if need be. */
static struct ident_count *
ident_count(struct proxy *px, const char *id, unsigned int rate)
{
	struct ident_count	*ic, *idle = NULL;
	size_t			 i;

	if (px->px_icounts == NULL)
		px->px_icounts = xcalloc(IDENT_COUNTS_MAX,
		    sizeof(*px->px_icounts));
	for (i = 0; i < px->px_nicounts; i++) {
		ic = &px->px_icounts[i];
		if (strcmp(ic->ic_id, id) == 0)
			return ic;
		if (idle == NULL && ic->ic_tunnels == 0 &&
		    ic->ic_tokens >= ic->ic_rate)
			idle = ic;
	}
	if (px->px_nicounts < IDENT_COUNTS_MAX)
		ic = &px->px_icounts[px->px_nicounts++];
	else if ((ic = idle) == NULL)
		return &px->px_icounts[IDENT_COUNTS_MAX - 1];
	free(ic->ic_id);
	memset(ic, 0, sizeof(*ic));
	ic->ic_id = xstrdup(id);
	ic->ic_tokens = rate;
	ic->ic_rate = rate;
	clock_gettime(CLOCK_MONOTONIC, &ic->ic_last);
	return ic;
}

/* Refills ic's bucket for the time gone by, up to a second's worth. */
static void
ident_refill(struct ident_count *ic, unsigned int rate)
{
	struct timespec	 now;
	double		 secs;

	clock_gettime(CLOCK_MONOTONIC, &now);
	secs = (double)(now.tv_sec - ic->ic_last.tv_sec) +
	    (double)(now.tv_nsec - ic->ic_last.tv_nsec) / 1e9;
	ic->ic_last = now;
	ic->ic_rate = rate;
	ic->ic_tokens += secs * rate;
	if (ic->ic_tokens > rate)
		ic->ic_tokens = rate;
}

/* Refuses c for its identity's limit, named; logs the fix. */
static void
ident_refuse(struct conn *c, const char *limit, unsigned int n)
{
	const struct pident	*rule = c->c_ident->pp_rule;
	char			*what, *why, *hint, *shown;

	shown = str_escape(c->c_identity, strlen(c->c_identity));
	xasprintf(&why, "identity %s is at its limit %s (%u; %s.limits)",
	    shown, limit, n, rule->id_from);
	xasprintf(&what, "%s:%d: %s", c->c_host, c->c_port, why);
	xasprintf(&hint, "retry later, or raise limits.%s of that rule",
	    limit);
	conn_reason(c, why);
	c->c_limit = limit;
	c->c_dec.d_verdict = VERDICT_DENY;
	log_warnx("proxy: %s: refused %s", c->c_client, what);
	log_warnx("hint: %s", hint);
	conn_refuse(c, CONN_LIMITED, what, hint);
	free(shown);
	free(why);
	free(what);
	free(hint);
}

/*
 * Counts c's new decision against its identity's limits: false when it
 * is past one (then c is refused, 429 or a SOCKS5 failure, and logged).
 * c takes one of its identity's tunnels at its first decision, until it
 * is freed (ident_release).
 */
bool
ident_admit(struct conn *c)
{
	struct proxy		*px = c->c_proxy;
	const struct pident	*rule;
	struct ident_count	*ic;
	const char		*limit;

	if (c->c_ident == NULL || (rule = c->c_ident->pp_rule) == NULL ||
	    (rule->id_max_tunnels == 0 && rule->id_new_per_second == 0))
		return true;
	if (px->px_ishm != NULL) {
		/* A worker's: counted for all the workers (ident_shm.c). */
		limit = ident_shm_admit(px->px_ishm, px->px_worker,
		    c->c_identity, rule, &c->c_ident_held);
		if (limit != NULL)
			ident_refuse(c, limit, strcmp(limit, "max_tunnels") ==
			    0 ? rule->id_max_tunnels : rule->id_new_per_second);
		return limit == NULL;
	}
	ic = ident_count(px, c->c_identity, rule->id_new_per_second);
	if (!c->c_ident_held && rule->id_max_tunnels != 0 &&
	    ic->ic_tunnels >= rule->id_max_tunnels) {
		ident_refuse(c, "max_tunnels", rule->id_max_tunnels);
		return false;
	}
	if (rule->id_new_per_second != 0) {
		ident_refill(ic, rule->id_new_per_second);
		if (ic->ic_tokens < 1) {
			ident_refuse(c, "new_per_second",
			    rule->id_new_per_second);
			return false;
		}
		ic->ic_tokens -= 1;
	}
	if (!c->c_ident_held) {
		ic->ic_tunnels++;
		c->c_ident_held = true;
	}
	return true;
}

/* c goes: the tunnel it held is its identity's again. */
void
ident_release(struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	size_t		 i;

	if (!c->c_ident_held)
		return;
	if (px->px_ishm != NULL)
		ident_shm_release(px->px_ishm, px->px_worker, c->c_identity);
	for (i = 0; px->px_ishm == NULL && i < px->px_nicounts; i++)
		if (strcmp(px->px_icounts[i].ic_id, c->c_identity) == 0) {
			if (px->px_icounts[i].ic_tunnels > 0)
				px->px_icounts[i].ic_tunnels--;
			break;
		}
	c->c_ident_held = false;
}

/* Frees the counts (proxy_clear). */
void
ident_counts_free(struct proxy *px)
{
	size_t	 i;

	for (i = 0; i < px->px_nicounts; i++)
		free(px->px_icounts[i].ic_id);
	free(px->px_icounts);
	px->px_icounts = NULL;
	px->px_nicounts = 0;
}

/*
 * Whether c's refusal, just decided, is let through by its rule's
 * "report": then c_dec says allow and c_warning names the rule that
 * refused.  Not when the run's own rules refuse it: a run's narrowing
 * is its own, whatever the rule.
 */
bool
ident_report(struct conn *c)
{
	const struct pident	*rule;
	struct decision		 d;
	const struct policy	*run = c->c_narrow.cn_rules;
	char			*what;
	bool			 ok;

	if (c->c_ident == NULL || (rule = c->c_ident->pp_rule) == NULL ||
	    rule->id_action != IDENT_REPORT ||
	    !policy_ident_liftable(&c->c_dec))
		return false;
	if (run != NULL && run->p_allow.pl_set) {
		ok = policy_match_host(run, c->c_host, c->c_hostlen,
		    c->c_port, &d);
		decision_clear(&d);
		if (!ok)
			return false;
	}
	what = decision_describe(&c->c_dec);
	free(c->c_warning);
	xasprintf(&c->c_warning, "report: would be refused (%s); allowed, "
	    "as %s has \"action\": \"report\"", what, rule->id_from);
	free(what);
	c->c_dec.d_verdict = VERDICT_ALLOW;
	c->c_dec.d_rule = NULL;		/* the warning names it */
	c->c_report = true;
	return true;
}
