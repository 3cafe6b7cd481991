/*
 * policy_show.c: a merged policy as JSON that loads back to itself.
 *
 * With annotations, each value is written {"value": V, "from": "TEXT"},
 * which the loader accepts anywhere a plain value may stand, so the output
 * of `cordon policy show` is itself a valid policy that keeps the record
 * of where each rule came from.
 */
#include <jansson.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"

/* Wraps v with its origin when annotating; takes v. */
static json_t *
show_value(json_t *v, const char *from, bool annotate)
{
	if (!annotate || from == NULL)
		return v;
	return json_pack("{s:o,s:s}", "value", v, "from", from);
}

/* An entry's text as it loads back: a folder keeps its final '/'. */
static json_t *
show_text(const struct pitem *it)
{
	return it->pi_dir ? json_sprintf("%s/", it->pi_text) :
	    json_string(it->pi_text);
}

static json_t *
show_list(const struct plist *pl, bool annotate)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < pl->pl_n; i++)
		json_array_append_new(a, show_value(show_text(&pl->pl_v[i]),
		    pl->pl_v[i].pi_from, annotate));
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

/* Fills obj[key] with the texts of pl, never annotated. */
static void
show_texts(json_t *obj, const char *key, const struct plist *pl)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < pl->pl_n; i++)
		json_array_append_new(a, show_text(&pl->pl_v[i]));
	json_object_set_new(obj, key, a);
}

/*
 * network.inspect, credentials and tls, printed only when a layer set
 * them, so a policy without them shows as before.  Each entry is
 * annotated as a whole.
 */
static void
show_tls(json_t *root, json_t *net, const struct policy *p, bool annotate)
{
	json_t			*a, *o, *tls;
	const struct pinspect	*in;
	const struct pcred	*cr;
	size_t			 i;

	if (p->p_ninspect != 0) {
		a = json_array();
		for (i = 0; i < p->p_ninspect; i++) {
			in = &p->p_inspect[i];
			o = json_pack("{s:s}", "host", in->in_host.pi_text);
			show_texts(o, "methods", &in->in_methods);
			show_texts(o, "paths", &in->in_paths);
			json_array_append_new(a, show_value(o,
			    in->in_host.pi_from, annotate));
		}
		json_object_set_new(net, "inspect", a);
	}
	if (p->p_ncreds != 0) {
		a = json_array();
		for (i = 0; i < p->p_ncreds; i++) {
			cr = &p->p_creds[i];
			o = json_pack("{s:s}", "host", cr->cr_host.pi_text);
			if (cr->cr_env != NULL)
				json_object_update_new(o, json_pack(
				    "{s:s,s:s,s:s}", "env", cr->cr_env,
				    "header", cr->cr_header,
				    "format", cr->cr_format));
			if (cr->cr_headers.pl_set)
				show_texts(o, "headers", &cr->cr_headers);
			if (cr->cr_cookies.pl_set)
				show_texts(o, "cookies", &cr->cr_cookies);
			if (cr->cr_foreign)
				json_object_set_new(o, "foreign",
				    json_string("allow"));
			json_array_append_new(a, show_value(o,
			    cr->cr_host.pi_from, annotate));
		}
		json_object_set_new(root, "credentials", a);
	}
	if (p->p_ca_dir.pl_n != 0) {
		tls = json_object();
		json_object_set_new(tls, "ca_dir", show_value(json_string(
		    p->p_ca_dir.pl_v[0].pi_text), p->p_ca_dir.pl_v[0].pi_from,
		    annotate));
		json_object_set_new(root, "tls", tls);
	}
	if (p->p_tier[POLICY_TIER_PROXY].pl_n != 0) {
		tls = json_object();
		for (i = 0; i < POLICY_TIER_N; i++)
			if (p->p_tier[i].pl_n != 0)
				json_object_set_new(tls, policy_tier_keys[i],
				    show_value(json_string(
				    p->p_tier[i].pl_v[0].pi_text),
				    p->p_tier[i].pl_v[0].pi_from, annotate));
		json_object_set_new(root, "tier", tls);
	}
}

/* Returns the policy as a new JSON object (caller json_decref()s it). */
json_t *
policy_show_json(const struct policy *p, bool annotate)
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
	if (p->p_host_ports.pl_n > 0)
		json_object_set_new(net, "host_ports",
		    show_list(&p->p_host_ports, annotate));
	json_object_set_new(net, "allow_cidrs", show_list(&p->p_cidrs,
	    annotate));
	show_scalar(net, "unix_sockets", &p->p_unix,
	    policy_unix_name(p->p_unix.ps_value), annotate);
	show_scalar(net, "capture", &p->p_capture,
	    policy_capture_name(p->p_capture.ps_value), annotate);
	json_object_set_new(root, "network", net);

	fs = json_object();
	json_object_set_new(fs, "write", show_list(&p->p_write, annotate));
	json_object_set_new(fs, "read_only", show_list(&p->p_read_only,
	    annotate));
	json_object_set_new(fs, "deny", show_list(&p->p_hide, annotate));
	if (p->p_sockets.pl_n > 0)
		json_object_set_new(fs, "unix_sockets",
		    show_list(&p->p_sockets, annotate));
	if (p->p_host_config.pl_n > 0)
		json_object_set_new(fs, "host_config",
		    show_list(&p->p_host_config, annotate));
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
	show_tls(root, net, p, annotate);
	if (p->p_idents != NULL)
		json_object_set_new(root, "identities",
		    policy_ident_show(p->p_idents, annotate));
	return root;
}
