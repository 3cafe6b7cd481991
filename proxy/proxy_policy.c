/*
 * proxy_policy.c: a policy shared by the connections deciding with it,
 * counted, so that a reload leaves a decision begun with the policy it
 * began with; and, for an operator's policy with identities
 * (policies/policy_ident.c has the rules), the policy of each rule:
 * the operator's joined by the rule's layer, made at its first use and
 * kept with the operator's until it goes.
 */
#include <sys/types.h>

#include <stdlib.h>

#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy_policy.h"

/* Wraps a policy (taken) for sharing between connections. */
struct ppolicy *
proxy_policy_new(struct policy *p)
{
	struct ppolicy	*pp;

	pp = xcalloc(1, sizeof(*pp));
	pp->pp_policy = p;
	pp->pp_refs = 1;
	return pp;
}

struct ppolicy *
proxy_policy_ref(struct ppolicy *pp)
{
	pp->pp_refs++;
	return pp;
}

/* Frees the joins pp made. */
static void
proxy_policy_idents_clear(struct ppolicy *pp)
{
	size_t	 i;

	for (i = 0; i < pp->pp_nidents; i++)
		proxy_policy_unref(pp->pp_idents[i]);
	free(pp->pp_idents);
	policy_pidents_unref(pp->pp_rules);
}

void
proxy_policy_unref(struct ppolicy *pp)
{
	if (pp == NULL || --pp->pp_refs > 0)
		return;
	proxy_policy_idents_clear(pp);
	policy_free(pp->pp_policy);
	free(pp);
}

/*
 * The policy that decides for identity id under pp, the operator's:
 * pp itself when it has no identities or id is NULL (no tls: client),
 * else the rule's join, made at its first use and kept with pp.  Lends.
 */
struct ppolicy *
proxy_policy_ident(struct ppolicy *pp, const char *id)
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
		j->pp_rules = policy_pidents_ref(pp->pp_policy->p_idents);
		j->pp_rule = rule;
		pp->pp_idents[i] = j;
	}
	return j;
}
