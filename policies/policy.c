/*
 * policy.c: a policy as plain data (policy.h): its names, making,
 * copying and freeing its lists, records and identities.  No JSON here: loading is
 * policy_load.c's and policy_rec.c's, parsing a rule's text
 * policy_parse.c's.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"

const char *const policy_mode_names[3] = { "none", "proxy", "host" };
const char *const policy_tier_keys[POLICY_TIER_N] = {
	"proxy", "client_cert", "client_key", "proxy_ca"
};
const char *const policy_unix_names[2] = { "deny", "allow" };
const char *const policy_capture_names[2] = { "off", "on" };

const char *
policy_mode_name(int mode)
{
	if (mode < 0 || (size_t)mode >= nitems(policy_mode_names))
		return "?";
	return policy_mode_names[mode];
}

const char *
policy_unix_name(int value)
{
	if (value < 0 || (size_t)value >= nitems(policy_unix_names))
		return "?";
	return policy_unix_names[value];
}

const char *
policy_capture_name(int value)
{
	if (value < 0 || (size_t)value >= nitems(policy_capture_names))
		return "?";
	return policy_capture_names[value];
}

/* Whether a run captures every connection: on unless a layer said off. */
bool
policy_capture(const struct policy *p)
{
	return !p->p_capture.ps_set || p->p_capture.ps_value == CAPTURE_ON;
}

struct policy *
policy_new(void)
{
	return xcalloc(1, sizeof(struct policy));
}

void
policy_pitem_clear(struct pitem *it)
{
	free(it->pi_text);
	free(it->pi_from);
	free(it->pi_value);
	free(it->pi_host);
	memset(it, 0, sizeof(*it));
}

/* Makes dst a deep copy of src. */
void
policy_pitem_copy(struct pitem *dst, const struct pitem *src)
{
	*dst = *src;
	dst->pi_text = src->pi_text ? xstrdup(src->pi_text) : NULL;
	dst->pi_from = src->pi_from ? xstrdup(src->pi_from) : NULL;
	dst->pi_value = src->pi_value ? xstrdup(src->pi_value) : NULL;
	dst->pi_host = src->pi_host ? xstrdup(src->pi_host) : NULL;
}

/* Returns a new zeroed item at the end of pl. */
struct pitem *
policy_plist_add(struct plist *pl)
{
	struct pitem	*it;

	pl->pl_v = xreallocarray(pl->pl_v, pl->pl_n + 1, sizeof(*pl->pl_v));
	it = &pl->pl_v[pl->pl_n++];
	memset(it, 0, sizeof(*it));
	return it;
}

/* Adds copies of src's items at the end of dst; dst is set if src is. */
void
policy_plist_append(struct plist *dst, const struct plist *src)
{
	size_t	 i;

	for (i = 0; i < src->pl_n; i++)
		policy_pitem_copy(policy_plist_add(dst), &src->pl_v[i]);
	dst->pl_set |= src->pl_set;
}

void
policy_plist_free(struct plist *pl)
{
	size_t	 i;

	for (i = 0; i < pl->pl_n; i++)
		policy_pitem_clear(&pl->pl_v[i]);
	free(pl->pl_v);
	memset(pl, 0, sizeof(*pl));
}

void
policy_pinspect_clear(struct pinspect *in)
{
	policy_pitem_clear(&in->in_host);
	policy_plist_free(&in->in_methods);
	policy_plist_free(&in->in_paths);
}

static void
policy_plist_copy(struct plist *dst, const struct plist *src)
{
	size_t	 i;

	memset(dst, 0, sizeof(*dst));
	for (i = 0; i < src->pl_n; i++)
		policy_pitem_copy(policy_plist_add(dst), &src->pl_v[i]);
	dst->pl_set = src->pl_set;
}

/* Makes dst a deep copy of src. */
void
policy_pinspect_copy(struct pinspect *dst, const struct pinspect *src)
{
	policy_pitem_copy(&dst->in_host, &src->in_host);
	policy_plist_copy(&dst->in_methods, &src->in_methods);
	policy_plist_copy(&dst->in_paths, &src->in_paths);
	dst->in_any = src->in_any;
}

void
policy_pcred_clear(struct pcred *cr)
{
	policy_pitem_clear(&cr->cr_host);
	free(cr->cr_env);
	free(cr->cr_header);
	free(cr->cr_format);
	policy_plist_free(&cr->cr_headers);
	policy_plist_free(&cr->cr_cookies);
	memset(cr, 0, sizeof(*cr));
}

/* Makes dst a deep copy of src. */
void
policy_pcred_copy(struct pcred *dst, const struct pcred *src)
{
	policy_pitem_copy(&dst->cr_host, &src->cr_host);
	dst->cr_env = src->cr_env != NULL ? xstrdup(src->cr_env) : NULL;
	dst->cr_header = src->cr_header != NULL ? xstrdup(src->cr_header) :
	    NULL;
	dst->cr_format = src->cr_format != NULL ? xstrdup(src->cr_format) :
	    NULL;
	policy_plist_append(&dst->cr_headers, &src->cr_headers);
	policy_plist_append(&dst->cr_cookies, &src->cr_cookies);
	dst->cr_foreign = src->cr_foreign;
}

void
policy_free(struct policy *p)
{
	size_t	 i;

	if (p == NULL)
		return;
	for (i = 0; i < p->p_ninspect; i++)
		policy_pinspect_clear(&p->p_inspect[i]);
	free(p->p_inspect);
	for (i = 0; i < p->p_ncreds; i++)
		policy_pcred_clear(&p->p_creds[i]);
	free(p->p_creds);
	policy_plist_free(&p->p_ca_dir);
	for (i = 0; i < POLICY_TIER_N; i++)
		policy_plist_free(&p->p_tier[i]);
	free(p->p_mode.ps_from);
	free(p->p_unix.ps_from);
	free(p->p_capture.ps_from);
	policy_plist_free(&p->p_allow);
	policy_plist_free(&p->p_deny);
	policy_plist_free(&p->p_cidrs);
	policy_plist_free(&p->p_host_ports);
	policy_plist_free(&p->p_write);
	policy_plist_free(&p->p_read_only);
	policy_plist_free(&p->p_hide);
	policy_plist_free(&p->p_sockets);
	policy_plist_free(&p->p_host_config);
	policy_plist_free(&p->p_env_pass);
	policy_plist_free(&p->p_env_set);
	policy_pidents_unref(p->p_idents);
	free(p);
}

static void
policy_pident_clear(struct pident *id)
{
	free(id->id_match);
	free(id->id_file);
	free(id->id_from);
	policy_free(id->id_layer);
	memset(id, 0, sizeof(*id));
}

/*
 * A policy's identities (policy_ident.c loads them) are shared by the
 * policies merged from it and the proxy's joins (proxy_policy.c), so
 * they are counted: each holder takes a reference, and the last to
 * let go frees them with their layers.
 */
struct pidents *
policy_pidents_ref(struct pidents *is)
{
	if (is != NULL)
		is->is_refs++;
	return is;
}

void
policy_pidents_unref(struct pidents *is)
{
	size_t	 i;

	if (is == NULL || --is->is_refs > 0)
		return;
	for (i = 0; i < is->is_n; i++)
		policy_pident_clear(&is->is_v[i]);
	free(is->is_v);
	policy_pident_clear(&is->is_default);
	free(is);
}
