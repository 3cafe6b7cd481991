/*
 * policy_show.c: a merged policy as JSON that loads back to itself.
 *
 * With annotations, each value is written {"value": V, "from": "TEXT"},
 * which the loader accepts anywhere a plain value may stand, so the output
 * of `cordon policy show` is itself a valid policy that keeps the record
 * of where each rule came from.
 */
#include <jansson.h>

#include "policy.h"
#include "util.h"
#include "xmalloc.h"

/* Wraps v with its origin when annotating; takes v. */
static json_t *
show_value(json_t *v, const char *from, bool annotate)
{
	if (!annotate || from == NULL)
		return v;
	return json_pack("{s:o,s:s}", "value", v, "from", from);
}

static json_t *
show_list(const struct plist *pl, bool annotate)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < pl->pl_n; i++)
		json_array_append_new(a, show_value(json_string(
		    pl->pl_v[i].pi_text), pl->pl_v[i].pi_from, annotate));
	return a;
}

static void
show_scalar(json_t *obj, const char *key, const struct pscalar *ps,
    const char *name, bool annotate)
{
	if (ps->ps_set)
		json_object_set_new(obj, key, show_value(json_string(name),
		    ps->ps_from, annotate));
}

/* Returns the policy as a new JSON object (caller json_decref()s it). */
json_t *
policy_to_json(const struct policy *p, bool annotate)
{
	json_t	*root, *net, *fs, *env, *set;
	size_t	 i;

	root = json_object();
	json_object_set_new(root, "version", json_integer(POLICY_VERSION));

	net = json_object();
	show_scalar(net, "mode", &p->p_mode,
	    policy_mode_name(p->p_mode.ps_value), annotate);
	json_object_set_new(net, "allow", show_list(&p->p_allow, annotate));
	json_object_set_new(net, "deny", show_list(&p->p_deny, annotate));
	json_object_set_new(net, "allow_cidrs", show_list(&p->p_cidrs,
	    annotate));
	show_scalar(net, "unix_sockets", &p->p_unix,
	    policy_unix_name(p->p_unix.ps_value), annotate);
	json_object_set_new(root, "network", net);

	fs = json_object();
	json_object_set_new(fs, "write", show_list(&p->p_write, annotate));
	json_object_set_new(fs, "read_only", show_list(&p->p_read_only,
	    annotate));
	json_object_set_new(fs, "deny", show_list(&p->p_hide, annotate));
	json_object_set_new(root, "filesystem", fs);

	env = json_object();
	json_object_set_new(env, "pass", show_list(&p->p_env_pass, annotate));
	set = json_object();
	for (i = 0; i < p->p_env_set.pl_n; i++)
		json_object_set_new(set, p->p_env_set.pl_v[i].pi_text,
		    show_value(json_string(p->p_env_set.pl_v[i].pi_value),
		    p->p_env_set.pl_v[i].pi_from, annotate));
	json_object_set_new(env, "set", set);
	json_object_set_new(root, "env", env);
	return root;
}
