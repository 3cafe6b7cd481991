/*
 * proxy_policy.h: a policy the proxy's connections share, counted, and
 * the layer of each identity's rule joined to it (proxy_policy.c).
 */
#ifndef CORDON_PROXY_POLICY_H
#define CORDON_PROXY_POLICY_H

#include <stddef.h>

#include "policies/policy.h"

/*
 * A policy and the connections deciding with it (it outlives a reload).
 * An operator's with identities keeps the policy of each rule, joined,
 * made at its first use (proxy_policy_ident); a joined one keeps its
 * rule.
 */
struct ppolicy {
	struct policy		*pp_policy;
	unsigned int		 pp_refs;
	struct ppolicy		**pp_idents;	/* [rule], the default last */
	size_t			 pp_nidents;
	struct pidents		*pp_rules;	/* a join: what pp_rule is in */
	const struct pident	*pp_rule;	/* a join: its rule, or NULL */
};

struct ppolicy	*proxy_policy_new(struct policy *);
struct ppolicy	*proxy_policy_ref(struct ppolicy *);
void		 proxy_policy_unref(struct ppolicy *);
struct ppolicy	*proxy_policy_ident(struct ppolicy *, const char *);

#endif /* CORDON_PROXY_POLICY_H */
