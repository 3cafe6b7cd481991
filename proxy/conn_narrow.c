/*
 * conn_narrow.c: the rules a run sends the proxy in its PROXY v2 header
 * (cordon run --proxy-socket, lib/pp2.c), and the proxy's policy
 * narrowed by them, which decides that run's connections.  The rules
 * only narrow, as a workspace layer does, and a run may send no more
 * than network.mode, allow, deny and allow_cidrs: nothing that would
 * make the proxy read a file a client names.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "conn.h"
#include "policy.h"
#include "xmalloc.h"

/*
 * Whether a run's rules hold only what a run may send: "version" and
 * "network" with "mode", "allow", "deny" and "allow_cidrs" (no list
 * files: the proxy reads no file a client names).
 */
static bool
conn_narrow_keys_ok(const char *text)
{
	json_t		*doc, *net;
	const char	*key;
	json_t		*v;
	bool		 ok = false;

	if ((doc = json_loads(text, 0, NULL)) == NULL || !json_is_object(doc))
		goto out;
	json_object_foreach(doc, key, v)
		if (strcmp(key, "version") != 0 && strcmp(key, "network") != 0)
			goto out;
	if ((net = json_object_get(doc, "network")) != NULL) {
		if (!json_is_object(net))
			goto out;
		json_object_foreach(net, key, v)
			if (strcmp(key, "mode") != 0 &&
			    strcmp(key, "allow") != 0 &&
			    strcmp(key, "deny") != 0 &&
			    strcmp(key, "allow_cidrs") != 0)
				goto out;
	}
	ok = true;
out:
	json_decref(doc);
	return ok;
}

/*
 * The policy in force: base, the proxy's, or, for a run that sent rules
 * of its own, base narrowed by them (as a workspace layer narrows: allow
 * lists meet, deny lists join), made again after a reload.  Lends it.
 */
struct ppolicy *
conn_narrow_policy(struct conn_narrow *n, struct ppolicy *base)
{
	struct policy	*p;

	if (n->cn_rules == NULL)
		return base;
	if (n->cn_policy == NULL || n->cn_base != base) {
		p = policy_new();
		policy_merge(p, base->pp_policy);
		policy_narrow(p, n->cn_rules);
		ppolicy_unref(n->cn_policy);
		ppolicy_unref(n->cn_base);
		n->cn_policy = ppolicy_new(p);
		n->cn_base = ppolicy_ref(base);
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
	struct policy_ctx	 ctx;
	char			*from, *why;

	memset(&ctx, 0, sizeof(ctx));
	ctx.pc_workspace = ctx.pc_home = "/";
	ctx.pc_untrusted = true;
	xasprintf(&from, "sandbox %s", id);
	if (!conn_narrow_keys_ok(narrow)) {
		n->cn_rules = NULL;
		*cause = xstrdup("only network.mode, allow, deny and "
		    "allow_cidrs may be sent");
	} else
		n->cn_rules = policy_load_buffer(narrow, strlen(narrow), from,
		    &ctx, cause);
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
	ppolicy_unref(n->cn_policy);
	ppolicy_unref(n->cn_base);
	policy_free(n->cn_rules);
}
