/*
 * policy_ident.c: "identities", a policy layer per tls: client, chosen
 * by its certificate's identity (certs/mtls.c: the URI SAN, else the CN).
 *
 *   "identities": {
 *     "rules": [ { "match": GLOB, "policy": "ci.json",
 *                  "action": "enforce" | "report",
 *                  "limits": { "max_tunnels": N, "new_per_second": N } } ],
 *     "default": "deny" | "FILE" | { "policy": ..., "action": ...,
 *                                    "limits": ... }
 *   }
 *
 * The first rule whose glob matches wins, in the order written; an
 * identity no rule matches gets "default".  A glob is the identity
 * split on '/': each segment is compared exactly, but a segment "*"
 * matches any one non-empty segment, and a last segment "**" matches
 * one or more segments, the whole rest; '*' anywhere else is refused.
 *
 * The layer of a rule joins the operator's policy (the one that holds
 * "identities"): its network.allow entries are added to the operator's,
 * and its network.deny entries too.  It may hold nothing else (no mode,
 * no allow_cidrs, ports or sockets of the host, no inspection, no
 * credentials), so what an identity can add is bounded by what the
 * operator keeps: the operator's deny entries still refuse (deny beats
 * allow), its mode still holds, and an address in a special range is
 * still refused unless the operator's own allow_cidrs admits it.  A
 * run's narrowing then narrows the joined policy, as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "policies/policy_load.h"

static const char *const ident_rule_keys[] = {
	"match", "policy", "action", "limits", NULL
};
static const char *const ident_limit_keys[] = {
	"max_tunnels", "new_per_second", NULL
};

/* Reports each member of obj that is not in known, with the known. */
static void
ident_known(struct loader *l, json_t *obj, const char *path,
    const char *const *known)
{
	const char	*key;
	const char *const *k;
	json_t		*v;
	char		*list = xstrdup(""), *tmp, *sub;

	for (k = known; *k != NULL; k++) {
		xasprintf(&tmp, "%s%s\"%s\"", list, *list ? ", " : "", *k);
		free(list);
		list = tmp;
	}
	json_object_foreach(obj, key, v) {
		for (k = known; *k != NULL; k++)
			if (strcmp(*k, key) == 0)
				break;
		if (*k != NULL)
			continue;
		xasprintf(&sub, "%s.%s", path, key);
		xasprintf(&tmp, "unknown key (known here: %s)", list);
		policy_load_error(l, sub, NULL, tmp);
		free(tmp);
		free(sub);
	}
	free(list);
}

/*
 * Whether glob g is one this file's matcher reads (see the top); on
 * false, *cause says why (caller frees).
 */
int
policy_ident_glob_ok(const char *g, char **cause)
{
	const char	*seg, *end;
	size_t		 n;

	if (*g == '\0' || strlen(g) > 255) {
		*cause = xstrdup("a glob is 1 to 255 bytes");
		return -1;
	}
	for (seg = g; ; seg = end + 1) {
		end = strchr(seg, '/');
		n = end != NULL ? (size_t)(end - seg) : strlen(seg);
		if (memchr(seg, '*', n) != NULL && !(n == 1 ||
		    (n == 2 && seg[0] == '*' && seg[1] == '*' &&
		    end == NULL))) {
			*cause = xstrdup("'*' may only be a whole segment, or "
			    "\"**\" the last one (the rest of the identity)");
			return -1;
		}
		if (end == NULL)
			break;
	}
	for (; *g != '\0'; g++)
		if ((unsigned char)*g < 0x20 || *g == 0x7f) {
			*cause = xstrdup("a glob holds no control character");
			return -1;
		}
	return 0;
}

/* Whether identity id matches glob g (policy_ident_glob_ok's). */
bool
policy_ident_match(const char *g, const char *id)
{
	const char	*ge, *ie;
	size_t		 gn, in;

	for (;;) {
		ge = strchr(g, '/');
		ie = strchr(id, '/');
		gn = ge != NULL ? (size_t)(ge - g) : strlen(g);
		in = ie != NULL ? (size_t)(ie - id) : strlen(id);
		if (ge == NULL && gn == 2 && g[0] == '*' && g[1] == '*')
			return *id != '\0';
		if (gn == 1 && g[0] == '*') {
			if (in == 0)
				return false;
		} else if (gn != in || memcmp(g, id, gn) != 0)
			return false;
		if (ge == NULL || ie == NULL)
			return ge == NULL && ie == NULL;
		g = ge + 1;
		id = ie + 1;
	}
}

/* limits: {"max_tunnels": N, "new_per_second": N}, each 1 to 1000000. */
static void
ident_limits(struct loader *l, const char *path, json_t *obj,
    struct pident *id)
{
	unsigned int	*to[2] = { &id->id_max_tunnels,
			    &id->id_new_per_second };
	json_t		*v;
	char		*sub;
	size_t		 i;

	if (!policy_load_expect(l, obj, JSON_OBJECT, path, "an object"))
		return;
	ident_known(l, obj, path, ident_limit_keys);
	for (i = 0; i < 2; i++) {
		if ((v = json_object_get(obj, ident_limit_keys[i])) == NULL)
			continue;
		xasprintf(&sub, "%s.%s", path, ident_limit_keys[i]);
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > IDENT_LIMIT_MAX)
			policy_load_error(l, sub, NULL, "expected a whole "
			    "number from 1 to 1000000");
		else
			*to[i] = (unsigned int)json_integer_value(v);
		free(sub);
	}
}

/*
 * Whether layer holds only what an identity's layer may: network.allow
 * and network.deny entries (written directly or as list files).
 */
static bool
ident_layer_ok(const struct policy *p)
{
	return !p->p_mode.ps_set && !p->p_unix.ps_set &&
	    !p->p_capture.ps_set && p->p_cidrs.pl_n == 0 &&
	    p->p_host_ports.pl_n == 0 && p->p_write.pl_n == 0 &&
	    p->p_read_only.pl_n == 0 && p->p_hide.pl_n == 0 &&
	    p->p_sockets.pl_n == 0 && p->p_host_config.pl_n == 0 &&
	    p->p_env_pass.pl_n == 0 &&
	    p->p_env_set.pl_n == 0 && p->p_ninspect == 0 &&
	    p->p_ncreds == 0 && p->p_ca_dir.pl_n == 0 && p->p_idents == NULL;
}

/* Loads the layer FILE (relative: to the policy's folder) into id. */
static void
ident_layer(struct loader *l, const char *path, const char *file,
    struct pident *id)
{
	struct policy_ctx	 dctx = *l->l_ctx;
	struct pitem		 tmp = { 0 };
	char			*cause;
	size_t			 i;

	if (dctx.pc_dir != NULL)
		dctx.pc_workspace = dctx.pc_dir;
	if (policy_parse_path(file, &dctx, &tmp, &cause) == -1) {
		policy_load_error(l, path, file, cause);
		free(cause);
		policy_pitem_clear(&tmp);
		return;
	}
	id->id_file = tmp.pi_text;
	tmp.pi_text = NULL;
	policy_pitem_clear(&tmp);
	if ((id->id_layer = policy_load_file(id->id_file, &dctx,
	    &cause)) == NULL) {
		policy_load_error(l, path, file, cause);
		free(cause);
		return;
	}
	if (!ident_layer_ok(id->id_layer)) {
		policy_load_error(l, path, file, "an identity's policy may "
		    "hold only network.allow, deny, allow_files and "
		    "deny_files (the operator's policy keeps the rest)");
		return;
	}
	for (i = 0; i < id->id_layer->p_allow.pl_n; i++)
		id->id_layer->p_allow.pl_v[i].pi_ident = true;
	for (i = 0; i < id->id_layer->p_deny.pl_n; i++)
		id->id_layer->p_deny.pl_v[i].pi_ident = true;
}

/* One rule, or the default as an object (no "match"), at path. */
static void
ident_rule(struct loader *l, const char *path, json_t *obj, bool rule,
    struct pident *id)
{
	json_t		*v;
	const char	*s;
	char		*sub, *cause;

	ident_known(l, obj, path, rule ? ident_rule_keys :
	    ident_rule_keys + 1);
	xasprintf(&id->id_from, "%s: %s", l->l_name, path);
	xasprintf(&sub, "%s.match", path);
	if (rule && ((v = json_object_get(obj, "match")) == NULL ||
	    !json_is_string(v)))
		policy_load_error(l, sub, NULL, "expected a glob string");
	else if (rule && policy_ident_glob_ok(json_string_value(v),
	    &cause) == -1) {
		policy_load_error(l, sub, json_string_value(v), cause);
		free(cause);
	} else if (rule)
		id->id_match = xstrdup(json_string_value(v));
	free(sub);
	xasprintf(&sub, "%s.policy", path);
	if ((v = json_object_get(obj, "policy")) == NULL ||
	    !json_is_string(v))
		policy_load_error(l, sub, NULL, "expected a policy file");
	else
		ident_layer(l, sub, json_string_value(v), id);
	free(sub);
	xasprintf(&sub, "%s.action", path);
	if ((v = json_object_get(obj, "action")) != NULL) {
		s = json_is_string(v) ? json_string_value(v) : "";
		if (strcmp(s, "report") == 0)
			id->id_action = IDENT_REPORT;
		else if (strcmp(s, "enforce") != 0)
			policy_load_error(l, sub, NULL, "expected \"enforce\" "
			    "or \"report\"");
	}
	free(sub);
	xasprintf(&sub, "%s.limits", path);
	if ((v = json_object_get(obj, "limits")) != NULL)
		ident_limits(l, sub, v, id);
	free(sub);
}

/* "default": "deny", a FILE, or an object as a rule without "match". */
static void
ident_default(struct loader *l, const char *path, json_t *v,
    struct pident *id)
{
	if (json_is_string(v) && strcmp(json_string_value(v), "deny") == 0)
		xasprintf(&id->id_from, "%s: %s", l->l_name, path);
	else if (json_is_string(v)) {
		xasprintf(&id->id_from, "%s: %s", l->l_name, path);
		ident_layer(l, path, json_string_value(v), id);
	} else if (json_is_object(v))
		ident_rule(l, path, v, false, id);
	else
		policy_load_error(l, path, NULL, "expected \"deny\", a "
		    "policy file, or an object with \"policy\"");
}

/*
 * "identities" of the layer being loaded, at path (an object, already
 * unwrapped; from is ignored: each rule names where it was written).
 * A later layer's identities replace an earlier one's whole.
 */
void
policy_ident_load(struct loader *l, const char *path, const char *from,
    json_t *obj)
{
	static const char *const top[] = { "rules", "default", NULL };
	struct pidents	*is;
	json_t		*rules, *v;
	char		*sub;
	size_t		 i, errors = l->l_errors.el_count;

	(void)from;
	ident_known(l, obj, path, top);
	is = xcalloc(1, sizeof(*is));
	is->is_refs = 1;
	xasprintf(&sub, "%s.rules", path);
	if ((rules = json_object_get(obj, "rules")) == NULL ||
	    !json_is_array(rules))
		policy_load_error(l, sub, NULL, "expected an array of rules");
	else if (json_array_size(rules) > IDENT_MAX_RULES)
		policy_load_error(l, sub, NULL, "at most 1024 rules");
	else {
		is->is_v = xcalloc(json_array_size(rules) + 1,
		    sizeof(*is->is_v));
		json_array_foreach(rules, i, v) {
			free(sub);
			xasprintf(&sub, "%s.rules[%zu]", path, i);
			if (policy_load_expect(l, v, JSON_OBJECT, sub,
			    "an object"))
				ident_rule(l, sub, v, true,
				    &is->is_v[is->is_n]);
			is->is_n++;
		}
	}
	free(sub);
	xasprintf(&sub, "%s.default", path);
	if ((v = json_object_get(obj, "default")) == NULL)
		policy_load_error(l, sub, NULL, "missing: \"deny\" or the "
		    "policy file of an identity no rule matches");
	else
		ident_default(l, sub, v, &is->is_default);
	free(sub);
	if (l->l_errors.el_count != errors) {
		policy_pidents_unref(is);
		return;
	}
	policy_pidents_unref(l->l_policy->p_idents);
	l->l_policy->p_idents = is;
}

/* The rule of p's identities for identity id (the default: no match). */
const struct pident *
policy_ident_find(const struct policy *p, const char *id)
{
	const struct pidents	*is = p->p_idents;
	size_t			 i;

	for (i = 0; i < is->is_n; i++)
		if (policy_ident_match(is->is_v[i].id_match, id))
			return &is->is_v[i];
	return &is->is_default;
}

/*
 * A new policy: op joined by the layer of rule (see the top), for
 * identity id (or NULL: any the rule takes), without identities of
 * its own.  A "deny" rule makes network.mode "none", from a text that
 * says so.
 */
struct policy *
policy_ident_join(const struct policy *op, const struct pident *rule,
    const char *id)
{
	struct policy	*p;
	char		*shown;

	p = policy_new();
	policy_merge(p, op);
	policy_pidents_unref(p->p_idents);
	p->p_idents = NULL;
	if (rule->id_layer == NULL) {
		shown = id != NULL ? str_escape(id, strlen(id)) : NULL;
		free(p->p_mode.ps_from);
		xasprintf(&p->p_mode.ps_from, "%s is \"deny\", and no rule "
		    "matches the identity%s%s; add a rule for it",
		    rule->id_from, shown != NULL ? " " : "",
		    shown != NULL ? shown : "");
		free(shown);
		p->p_mode.ps_value = NET_NONE;
		p->p_mode.ps_set = true;
		return p;
	}
	policy_plist_append(&p->p_allow, &rule->id_layer->p_allow);
	policy_plist_append(&p->p_deny, &rule->id_layer->p_deny);
	return p;
}

/*
 * Whether a "report" rule lets decision d through: a refusal for want of
 * a rule, or by a deny entry of the identity's own layer.  Never the
 * operator's deny entries, its mode, a malformed target or a special
 * address.
 */
bool
policy_ident_liftable(const struct decision *d)
{
	if (d->d_verdict != VERDICT_DENY)
		return false;
	if (d->d_why == WHY_NO_RULE)
		return true;
	return d->d_why == WHY_DENY_RULE && d->d_rule != NULL &&
	    d->d_rule->pi_ident;
}

static json_t *
ident_show_one(const struct pident *id, bool rule)
{
	json_t	*o = json_object(), *lim;

	if (rule)
		json_object_set_new(o, "match", json_string(id->id_match));
	json_object_set_new(o, "policy", json_string(id->id_file));
	json_object_set_new(o, "action", json_string(id->id_action ==
	    IDENT_REPORT ? "report" : "enforce"));
	if (id->id_max_tunnels != 0 || id->id_new_per_second != 0) {
		lim = json_object();
		if (id->id_max_tunnels != 0)
			json_object_set_new(lim, "max_tunnels",
			    json_integer(id->id_max_tunnels));
		if (id->id_new_per_second != 0)
			json_object_set_new(lim, "new_per_second",
			    json_integer(id->id_new_per_second));
		json_object_set_new(o, "limits", lim);
	}
	return o;
}

/* identities as it loads back (annotated: where its default was set). */
json_t *
policy_ident_show(const struct pidents *is, bool annotate)
{
	json_t	*o = json_object(), *rules = json_array();
	size_t	 i;

	for (i = 0; i < is->is_n; i++)
		json_array_append_new(rules, ident_show_one(&is->is_v[i],
		    true));
	json_object_set_new(o, "rules", rules);
	if (is->is_default.id_file == NULL)
		json_object_set_new(o, "default", json_string("deny"));
	else
		json_object_set_new(o, "default",
		    ident_show_one(&is->is_default, false));
	if (!annotate)
		return o;
	return json_pack("{s:o,s:s}", "value", o, "from",
	    is->is_default.id_from);
}
