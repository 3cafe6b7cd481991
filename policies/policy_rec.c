/*
 * policy_rec.c: the records of one policy layer, the objects of
 * network.inspect[] and credentials[] (policy_load.c walks the arrays).
 * Each record is checked whole: its keys, its host (a name or *.suffix,
 * no port), its methods and paths or its variable, header and format.
 * A record with any error is reported and left out; the workspace layer
 * may add none.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "policies/policy_load.h"

/*
 * Refuses the keys of a record not in names (listing them).  Returns
 * whether all were known.
 */
static bool
rec_known(struct loader *l, json_t *obj, const char *path,
    const char *const *names)
{
	const char	*name;
	const char	*const *np;
	json_t		*v;
	char		*known = NULL, *tmp, *shown;
	bool		 ok = true;

	json_object_foreach(obj, name, v) {
		for (np = names; *np != NULL; np++)
			if (strcmp(*np, name) == 0)
				break;
		if (*np != NULL)
			continue;
		if (known == NULL) {
			known = xstrdup("");
			for (np = names; *np != NULL; np++) {
				xasprintf(&tmp, "%s%s\"%s\"", known,
				    *known ? ", " : "", *np);
				free(known);
				known = tmp;
			}
		}
		xasprintf(&tmp, "%s.%s", path, name);
		shown = str_escape(tmp, strlen(tmp));
		errlist_add(&l->l_errors, "%s: unknown key \"%s\" (known "
		    "here: %s)", l->l_name, shown, known);
		free(shown);
		free(tmp);
		ok = false;
	}
	free(known);
	return ok;
}

/* Returns the string member name of obj, or NULL (reported). */
static const char *
rec_string(struct loader *l, json_t *obj, const char *path,
    const char *name)
{
	json_t		*v;
	char		*sub;
	const char	*s = NULL;

	xasprintf(&sub, "%s.%s", path, name);
	if ((v = json_object_get(obj, name)) == NULL)
		policy_load_error(l, sub, NULL, "missing");
	else if (policy_load_expect(l, v, JSON_STRING, sub, "a string"))
		s = json_string_value(v);
	free(sub);
	return s;
}

/*
 * Parses the host of an inspect or credentials entry into it: a name or
 * *.suffix, without port or address.  Returns 0 or -1 (reported).
 */
static int
rec_host(struct loader *l, json_t *obj, const char *path, const char *from,
    struct pitem *it)
{
	const char	*text;
	char		*cause, *sub;
	int		 rc = -1;

	if ((text = rec_string(l, obj, path, "host")) == NULL)
		return -1;
	xasprintf(&sub, "%s.host", path);
	if (policy_parse_pattern(text, it, &cause) == -1) {
		policy_load_error(l, sub, text, cause);
		free(cause);
	} else if (it->pi_kind == PAT_ADDR)
		policy_load_error(l, sub, text, "a host name or \"*.suffix\", "
		    "not "
		    "an address (inspection works on names)");
	else if (it->pi_port != PORT_UNSET)
		policy_load_error(l, sub, text, "no port here: the rule holds "
		    "on "
		    "every port network.allow admits");
	else
		rc = 0;
	free(sub);
	if (from != NULL)
		it->pi_from = xstrdup(from);
	else
		xasprintf(&it->pi_from, "%s: %s", l->l_name, path);
	return rc;
}

/* Says why p is not a path rule ("/exact" or "/prefix*"), or NULL. */
static const char *
rec_path_rule_error(const char *p)
{
	const char	*seg, *star;
	size_t		 n = strlen(p), len;

	if (p[0] != '/')
		return "a path rule starts with '/'";
	if (n > 1024)
		return "longer than 1024 bytes";
	if ((star = strchr(p, '*')) != NULL && star[1] != '\0')
		return "'*' may only end a path rule (a prefix)";
	for (; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f ||
		    *p == '?' || *p == '#' || *p == '%' || *p == '\\')
			return "only printable ASCII without spaces, '?', "
			    "'#', '%' or '\\' (a rule is compared with the "
			    "decoded path)";
	for (seg = p - n; *seg != '\0'; seg += len) {
		seg++;
		len = strcspn(seg, "/");
		if ((len == 1 && seg[0] == '.') ||
		    (len == 2 && seg[0] == '.' && seg[1] == '.'))
			return "no \".\" or \"..\" segments";
	}
	return NULL;
}

/*
 * Fills pl from the array of strings obj.name, checked and made canonical
 * by upper-casing (methods) or rec_path_rule_error (paths).
 */
static void
rec_strings(struct loader *l, json_t *obj, const char *path,
    const char *name, bool methods, struct plist *pl)
{
	json_t		*arr, *v;
	const char	*text, *why;
	char		*sub, *elem, *up;
	size_t		 i, j;

	xasprintf(&sub, "%s.%s", path, name);
	if ((arr = json_object_get(obj, name)) == NULL)
		policy_load_error(l, sub, NULL, "missing (list what is "
		    "allowed)");
	else if (policy_load_expect(l, arr, JSON_ARRAY, sub, "an array of "
	    "strings")
	    && json_array_size(arr) == 0)
		policy_load_error(l, sub, NULL, "empty: an inspected host with "
		    "nothing allowed is a deny; use network.deny");
	else if (json_is_array(arr)) {
		json_array_foreach(arr, i, v) {
			xasprintf(&elem, "%s[%zu]", sub, i);
			if (!policy_load_expect(l, v, JSON_STRING, elem,
			    "a string")) {
				free(elem);
				continue;
			}
			text = json_string_value(v);
			if (methods && !policy_parse_http_token(text))
				policy_load_error(l, elem, text, "not a method "
				    "(an "
				    "RFC 9110 token, as GET)");
			else if (!methods &&
			    (why = rec_path_rule_error(text)) != NULL)
				policy_load_error(l, elem, text, why);
			else if (pl->pl_n >= 1000)
				policy_load_error(l, elem, NULL, "too many "
				    "entries");
			else {
				up = xstrdup(text);
				for (j = 0; methods && up[j] != '\0'; j++)
					if (up[j] >= 'a' && up[j] <= 'z')
						up[j] -= 'a' - 'A';
				policy_plist_add(pl)->pi_text = up;
			}
			free(elem);
		}
		pl->pl_set = true;
	}
	free(sub);
}

static const char *const inspect_names[] = {
	"host", "methods", "paths", NULL
};

/* network.inspect[i]: {"host", "methods", "paths"}. */
void
policy_rec_inspect(struct loader *l, const char *path, const char *from,
    json_t *obj)
{
	struct pinspect	 in = { 0 };
	size_t		 errors = l->l_errors.el_count;

	if (l->l_ctx->pc_untrusted) {
		policy_load_error(l, path, NULL, "a workspace policy may not "
		    "add "
		    "TLS inspection rules; put them in your user policy or a "
		    "--policy file");
		return;
	}
	rec_known(l, obj, path, inspect_names);
	rec_host(l, obj, path, from, &in.in_host);
	rec_strings(l, obj, path, "methods", true, &in.in_methods);
	rec_strings(l, obj, path, "paths", false, &in.in_paths);
	if (l->l_errors.el_count != errors ||
	    l->l_policy->p_ninspect >= POLICY_MAX_ITEMS) {
		if (l->l_errors.el_count == errors)
			policy_load_error(l, path, NULL, "too many entries");
		policy_pinspect_clear(&in);
		return;
	}
	l->l_policy->p_inspect = xreallocarray(l->l_policy->p_inspect,
	    l->l_policy->p_ninspect + 1, sizeof(in));
	l->l_policy->p_inspect[l->l_policy->p_ninspect++] = in;
}

/* Hop-by-hop headers and those the proxy itself frames the request with. */
static const char *const cred_bad_headers[] = {
	"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
	"Proxy-Authorization", "TE", "Trailer", "Transfer-Encoding",
	"Upgrade", "Host", "Content-Length", NULL
};

/* Says why f is not a credential format, or NULL. */
static const char *
rec_format_error(const char *f)
{
	const char	*p;
	int		 n = 0;

	if (strlen(f) > 1024)
		return "longer than 1024 bytes";
	for (p = f; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return "no control characters (CR, LF, ...)";
		if (*p != '%')
			continue;
		if (p[1] != 's')
			return "'%' may only stand in the one \"%s\" (no "
			    "\"%%\" or other conversions)";
		n++;
		p++;
	}
	if (n != 1)
		return "exactly one \"%s\", where the secret goes";
	return NULL;
}

static const char *const cred_names[] = {
	"host", "env", "header", "format", "headers", "cookies", "foreign",
	NULL
};

/*
 * Fills pl from the optional array of names obj.name: header or cookie
 * names, each an RFC 9110 token (RFC 6265's cookie-name is one too).
 */
static void
rec_names(struct loader *l, json_t *obj, const char *path, const char *name,
    struct plist *pl)
{
	json_t		*arr, *v;
	char		*sub, *elem;
	size_t		 i;

	if ((arr = json_object_get(obj, name)) == NULL)
		return;
	xasprintf(&sub, "%s.%s", path, name);
	if (policy_load_expect(l, arr, JSON_ARRAY, sub, "an array of strings"))
		json_array_foreach(arr, i, v) {
			xasprintf(&elem, "%s[%zu]", sub, i);
			if (!policy_load_expect(l, v, JSON_STRING, elem,
			    "a string"))
				;
			else if (!policy_parse_http_token(json_string_value(v)))
				policy_load_error(l, elem, json_string_value(v),
				    "not a name (an RFC 9110 token)");
			else if (pl->pl_n >= 100)
				policy_load_error(l, elem, NULL, "too many "
				    "entries");
			else
				policy_plist_add(pl)->pi_text =
				    xstrdup(json_string_value(v));
			free(elem);
		}
	pl->pl_set = true;
	free(sub);
}

/* credentials[i].foreign: "deny" (the default) or "allow". */
static void
rec_foreign(struct loader *l, json_t *obj, const char *path, bool *allow)
{
	json_t		*v;
	char		*sub;

	if ((v = json_object_get(obj, "foreign")) == NULL)
		return;
	xasprintf(&sub, "%s.foreign", path);
	if (policy_load_expect(l, v, JSON_STRING, sub, "\"allow\" or "
	    "\"deny\"")) {
		if (strcmp(json_string_value(v), "allow") == 0)
			*allow = true;
		else if (strcmp(json_string_value(v), "deny") != 0)
			policy_load_error(l, sub, json_string_value(v),
			    "\"allow\" or \"deny\"");
	}
	free(sub);
}

/* credentials[i]'s header: a token, not hop-by-hop or framing. */
static void
rec_cred_header(struct loader *l, const char *path, const char *header)
{
	const char *const	*h;
	char			*sub;

	xasprintf(&sub, "%s.header", path);
	for (h = cred_bad_headers; *h != NULL; h++)
		if (strcasecmp(*h, header) == 0)
			break;
	if (!policy_parse_http_token(header))
		policy_load_error(l, sub, header, "not a header name (an "
		    "RFC 9110 token)");
	else if (*h != NULL)
		policy_load_error(l, sub, header, "a hop-by-hop or framing "
		    "header cannot carry a credential");
	free(sub);
}

/*
 * credentials[i]: {"host", "env", "header", "format"}, and optionally
 * "headers", "cookies" and "foreign"; an entry that only pins its host
 * has no env, header or format, but one of the three others.
 */
void
policy_rec_cred(struct loader *l, const char *path, const char *from,
    json_t *obj)
{
	struct pcred		 cr = { 0 };
	const char		*env = NULL, *header = NULL, *format = NULL;
	const char		*why;
	char			*sub;
	size_t			 errors = l->l_errors.el_count;
	bool			 fill;

	if (l->l_ctx->pc_untrusted) {
		policy_load_error(l, path, NULL, "a workspace policy may not "
		    "add "
		    "credentials; put them in your user policy or a --policy "
		    "file");
		return;
	}
	rec_known(l, obj, path, cred_names);
	rec_host(l, obj, path, from, &cr.cr_host);
	rec_names(l, obj, path, "headers", &cr.cr_headers);
	rec_names(l, obj, path, "cookies", &cr.cr_cookies);
	rec_foreign(l, obj, path, &cr.cr_foreign);
	fill = json_object_get(obj, "env") != NULL ||
	    json_object_get(obj, "header") != NULL ||
	    json_object_get(obj, "format") != NULL;
	if (!fill && json_object_get(obj, "headers") == NULL &&
	    json_object_get(obj, "cookies") == NULL &&
	    json_object_get(obj, "foreign") == NULL)
		policy_load_error(l, path, NULL, "needs \"env\", \"header\" "
		    "and \"format\" (a credential to fill in), or, to pin the "
		    "host only, \"foreign\", \"headers\" or \"cookies\"");
	xasprintf(&sub, "%s.env", path);
	if (fill && (env = rec_string(l, obj, path, "env")) != NULL &&
	    !policy_load_env_name_ok(env, false))
		policy_load_error(l, sub, env, "not a variable name (letters, "
		    "digits and '_')");
	free(sub);
	if (fill && (header = rec_string(l, obj, path, "header")) != NULL)
		rec_cred_header(l, path, header);
	xasprintf(&sub, "%s.format", path);
	if (fill && (format = rec_string(l, obj, path, "format")) != NULL &&
	    (why = rec_format_error(format)) != NULL)
		policy_load_error(l, sub, format, why);
	free(sub);
	if (l->l_errors.el_count != errors ||
	    l->l_policy->p_ncreds >= POLICY_MAX_ITEMS) {
		if (l->l_errors.el_count == errors)
			policy_load_error(l, path, NULL, "too many entries");
		policy_pcred_clear(&cr);
		return;
	}
	if (fill) {
		cr.cr_env = xstrdup(env);
		cr.cr_header = xstrdup(header);
		cr.cr_format = xstrdup(format);
	}
	l->l_policy->p_creds = xreallocarray(l->l_policy->p_creds,
	    l->l_policy->p_ncreds + 1, sizeof(cr));
	l->l_policy->p_creds[l->l_policy->p_ncreds++] = cr;
}
