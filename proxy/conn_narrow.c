/*
 * conn_narrow.c: the rules a run sends the proxy in its PROXY v2 header
 * (cordon run --proxy-socket, wire/pp2.c), and the proxy's policy
 * narrowed by them, which decides that run's connections.  What a run
 * may send, and how it is read, is the policy's (policy_load_narrowing).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/conn.h"

/*
 * The policy in force: base, the proxy's, or, for a run that sent rules
 * of its own or changed them live (live: the run channel's, watch.c),
 * base narrowed by them (as a workspace layer narrows: allow lists
 * meet, deny lists join; policy_merge_live), made again after a reload or a
 * live change.  Lends it.
 */
struct ppolicy *
conn_narrow_policy(struct conn_narrow *n, struct ppolicy *base,
    struct ppolicy *live)
{
	struct policy	*p;

	if (n->cn_rules == NULL && live == NULL)
		return base;
	if (n->cn_policy == NULL || n->cn_base != base || n->cn_live != live) {
		p = policy_new();
		policy_merge(p, base->pp_policy);
		if (n->cn_rules != NULL)
			policy_merge_narrow(p, n->cn_rules);
		if (live != NULL)
			policy_merge_live(p, base->pp_policy, live->pp_policy);
		proxy_policy_unref(n->cn_policy);
		proxy_policy_unref(n->cn_base);
		proxy_policy_unref(n->cn_live);
		n->cn_policy = proxy_policy_new(p);
		n->cn_base = proxy_policy_ref(base);
		n->cn_live = live != NULL ? proxy_policy_ref(live) : NULL;
	}
	return n->cn_policy;
}

/*
 * Loads the run's own rules, narrow (taken), from the PROXY v2 header of
 * sandbox id into cn_rules, read like a workspace layer: they may only
 * narrow.  Returns 0, or -1 with *cause: a connection with rules that
 * do not load is refused, never decided without them.
 */
int
conn_narrow_load(struct conn_narrow *n, const char *id, char *narrow,
    char **cause)
{
	char	*from, *why;

	xasprintf(&from, "sandbox %s", id);
	n->cn_rules = policy_load_narrowing(narrow, from, cause);
	free(from);
	free(narrow);
	if (n->cn_rules != NULL)
		return 0;
	xasprintf(&why, "the run's own rules: %s", *cause);
	free(*cause);
	*cause = why;
	return -1;
}

/* Frees what n holds (not n). */
void
conn_narrow_clear(struct conn_narrow *n)
{
	proxy_policy_unref(n->cn_policy);
	proxy_policy_unref(n->cn_base);
	proxy_policy_unref(n->cn_live);
	policy_free(n->cn_rules);
}
