/*
 * policy.c: a policy as plain data (policy.h): its names, making,
 * copying and freeing its lists and records.  No JSON here: loading is
 * policy_load.c's and policy_rec.c's, parsing a rule's text
 * policy_parse.c's.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "util.h"
#include "xmalloc.h"

const char *const policy_mode_names[3] = { "none", "proxy", "host" };
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
pitem_clear(struct pitem *it)
{
	free(it->pi_text);
	free(it->pi_from);
	free(it->pi_value);
	free(it->pi_host);
	memset(it, 0, sizeof(*it));
}

/* Makes dst a deep copy of src. */
void
pitem_copy(struct pitem *dst, const struct pitem *src)
{
	*dst = *src;
	dst->pi_text = src->pi_text ? xstrdup(src->pi_text) : NULL;
	dst->pi_from = src->pi_from ? xstrdup(src->pi_from) : NULL;
	dst->pi_value = src->pi_value ? xstrdup(src->pi_value) : NULL;
	dst->pi_host = src->pi_host ? xstrdup(src->pi_host) : NULL;
}

/* Returns a new zeroed item at the end of pl. */
struct pitem *
plist_add(struct plist *pl)
{
	struct pitem	*it;

	pl->pl_v = xreallocarray(pl->pl_v, pl->pl_n + 1, sizeof(*pl->pl_v));
	it = &pl->pl_v[pl->pl_n++];
	memset(it, 0, sizeof(*it));
	return it;
}

void
plist_free(struct plist *pl)
{
	size_t	 i;

	for (i = 0; i < pl->pl_n; i++)
		pitem_clear(&pl->pl_v[i]);
	free(pl->pl_v);
	memset(pl, 0, sizeof(*pl));
}

void
pinspect_clear(struct pinspect *in)
{
	pitem_clear(&in->in_host);
	plist_free(&in->in_methods);
	plist_free(&in->in_paths);
}

static void
plist_copy(struct plist *dst, const struct plist *src)
{
	size_t	 i;

	memset(dst, 0, sizeof(*dst));
	for (i = 0; i < src->pl_n; i++)
		pitem_copy(plist_add(dst), &src->pl_v[i]);
	dst->pl_set = src->pl_set;
}

/* Makes dst a deep copy of src. */
void
pinspect_copy(struct pinspect *dst, const struct pinspect *src)
{
	pitem_copy(&dst->in_host, &src->in_host);
	plist_copy(&dst->in_methods, &src->in_methods);
	plist_copy(&dst->in_paths, &src->in_paths);
	dst->in_any = src->in_any;
}

void
pcred_clear(struct pcred *cr)
{
	pitem_clear(&cr->cr_host);
	free(cr->cr_env);
	free(cr->cr_header);
	free(cr->cr_format);
	memset(cr, 0, sizeof(*cr));
}

/* Makes dst a deep copy of src. */
void
pcred_copy(struct pcred *dst, const struct pcred *src)
{
	pitem_copy(&dst->cr_host, &src->cr_host);
	dst->cr_env = xstrdup(src->cr_env);
	dst->cr_header = xstrdup(src->cr_header);
	dst->cr_format = xstrdup(src->cr_format);
}

void
policy_free(struct policy *p)
{
	size_t	 i;

	if (p == NULL)
		return;
	for (i = 0; i < p->p_ninspect; i++)
		pinspect_clear(&p->p_inspect[i]);
	free(p->p_inspect);
	for (i = 0; i < p->p_ncreds; i++)
		pcred_clear(&p->p_creds[i]);
	free(p->p_creds);
	plist_free(&p->p_ca_dir);
	free(p->p_mode.ps_from);
	free(p->p_unix.ps_from);
	free(p->p_capture.ps_from);
	plist_free(&p->p_allow);
	plist_free(&p->p_deny);
	plist_free(&p->p_cidrs);
	plist_free(&p->p_host_ports);
	plist_free(&p->p_write);
	plist_free(&p->p_read_only);
	plist_free(&p->p_hide);
	plist_free(&p->p_sockets);
	plist_free(&p->p_env_pass);
	plist_free(&p->p_env_set);
	free(p);
}
