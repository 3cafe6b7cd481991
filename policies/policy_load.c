/*
 * policy_load.c: read one policy layer from JSON.
 *
 * Keys are walked through tables of name, kind and handler, so a new key
 * is one row.  Every error is collected before giving up, and a layer with
 * any error is thrown away whole: a policy never half-loads.  Syntax
 * errors carry FILE:LINE:COLUMN from jansson; the rest carry the JSON path
 * (network.allow[3]).
 *
 * Any leaf value may also be written {"value": V, "from": "TEXT"}: that is
 * how `cordon policy show` records where a merged rule came from, in a
 * form that loads back to the same policy.
 */

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "addr.h"
#include "policy.h"
#include "util.h"
#include "xmalloc.h"

#define MAX_ENV_VALUE	32768

/* The state of one load. */
struct loader {
	struct policy		*l_policy;
	const struct policy_ctx	*l_ctx;
	const char		*l_name;	/* file name for messages */
	struct errlist		 l_errors;
};

enum key_kind {
	KEY_SECTION,		/* an object with its own table */
	KEY_VERSION,		/* an integer */
	KEY_STRING,		/* one string */
	KEY_LIST,		/* an array of strings */
	KEY_MAP,		/* an object of strings */
	KEY_RECORDS		/* an array of objects, each to k_rec */
};

struct key;

/*
 * A handler takes one string (for KEY_MAP, a name and a value) at JSON
 * path `path`, whose origin is `from`; it adds to the list at
 * k_offset or reports through the loader.
 */
typedef void (*key_fn)(struct loader *, const struct key *, const char *,
    const char *, const char *, const char *);

/*
 * A record handler takes one object of an array (already unwrapped) at
 * path, whose origin is from.
 */
typedef void (*rec_fn)(struct loader *, const char *, const char *,
    json_t *);

struct key {
	const char		*k_name;
	enum key_kind		 k_kind;
	key_fn			 k_fn;
	size_t			 k_offset;	/* of a plist or pscalar */
	const struct key	*k_table;	/* KEY_SECTION */
	rec_fn			 k_rec;		/* KEY_RECORDS */
};

static void	key_mode(struct loader *, const struct key *, const char *,
		    const char *, const char *, const char *);
static void	key_unix(struct loader *, const struct key *, const char *,
		    const char *, const char *, const char *);
static void	key_capture(struct loader *, const struct key *,
		    const char *, const char *, const char *, const char *);
static void	key_pattern(struct loader *, const struct key *, const char *,
		    const char *, const char *, const char *);
static void	key_list_file(struct loader *, const struct key *,
		    const char *, const char *, const char *, const char *);
static void	key_cidr(struct loader *, const struct key *, const char *,
		    const char *, const char *, const char *);
static void	key_path(struct loader *, const struct key *, const char *,
		    const char *, const char *, const char *);
static void	key_socket(struct loader *, const struct key *, const char *,
		    const char *, const char *, const char *);
static void	key_env_pass(struct loader *, const struct key *,
		    const char *, const char *, const char *, const char *);
static void	key_host_port(struct loader *, const struct key *,
		    const char *, const char *, const char *, const char *);
static void	key_env_set(struct loader *, const struct key *, const char *,
		    const char *, const char *, const char *);
static void	key_ca_dir(struct loader *, const struct key *, const char *,
		    const char *, const char *, const char *);
static void	rec_inspect(struct loader *, const char *, const char *,
		    json_t *);
static void	rec_cred(struct loader *, const char *, const char *,
		    json_t *);

#define AT(field)	offsetof(struct policy, field)

static const struct key network_keys[] = {
	{ "mode", KEY_STRING, key_mode, AT(p_mode), NULL, NULL },
	{ "allow", KEY_LIST, key_pattern, AT(p_allow), NULL, NULL },
	{ "deny", KEY_LIST, key_pattern, AT(p_deny), NULL, NULL },
	{ "allow_files", KEY_LIST, key_list_file, AT(p_allow), NULL, NULL },
	{ "deny_files", KEY_LIST, key_list_file, AT(p_deny), NULL, NULL },
	{ "allow_cidrs", KEY_LIST, key_cidr, AT(p_cidrs), NULL, NULL },
	{ "host_ports", KEY_LIST, key_host_port, AT(p_host_ports), NULL,
	    NULL },
	{ "unix_sockets", KEY_STRING, key_unix, AT(p_unix), NULL, NULL },
	{ "capture", KEY_STRING, key_capture, AT(p_capture), NULL, NULL },
	{ "inspect", KEY_RECORDS, NULL, 0, NULL, rec_inspect },
	{ NULL, 0, NULL, 0, NULL, NULL }
};

static const struct key filesystem_keys[] = {
	{ "write", KEY_LIST, key_path, AT(p_write), NULL, NULL },
	{ "read_only", KEY_LIST, key_path, AT(p_read_only), NULL, NULL },
	{ "deny", KEY_LIST, key_path, AT(p_hide), NULL, NULL },
	{ "unix_sockets", KEY_LIST, key_socket, AT(p_sockets), NULL, NULL },
	{ NULL, 0, NULL, 0, NULL, NULL }
};

static const struct key env_keys[] = {
	{ "pass", KEY_LIST, key_env_pass, AT(p_env_pass), NULL, NULL },
	{ "set", KEY_MAP, key_env_set, AT(p_env_set), NULL, NULL },
	{ NULL, 0, NULL, 0, NULL, NULL }
};

static const struct key tls_keys[] = {
	{ "ca_dir", KEY_STRING, key_ca_dir, AT(p_ca_dir), NULL, NULL },
	{ NULL, 0, NULL, 0, NULL, NULL }
};

static const struct key top_keys[] = {
	{ "version", KEY_VERSION, NULL, 0, NULL, NULL },
	{ "network", KEY_SECTION, NULL, 0, network_keys, NULL },
	{ "filesystem", KEY_SECTION, NULL, 0, filesystem_keys, NULL },
	{ "env", KEY_SECTION, NULL, 0, env_keys, NULL },
	{ "credentials", KEY_RECORDS, NULL, 0, NULL, rec_cred },
	{ "tls", KEY_SECTION, NULL, 0, tls_keys, NULL },
	{ NULL, 0, NULL, 0, NULL, NULL }
};

static void *
policy_field(struct loader *l, const struct key *k)
{
	return (char *)l->l_policy + k->k_offset;
}

/* Records an error about the value at path. */
static void
load_error(struct loader *l, const char *path, const char *text,
    const char *cause)
{
	char	*shown;

	if (text == NULL) {
		errlist_add(&l->l_errors, "%s: %s: %s", l->l_name, path, cause);
		return;
	}
	shown = str_escape(text, strlen(text));
	errlist_add(&l->l_errors, "%s: %s: \"%s\": %s", l->l_name, path,
	    shown, cause);
	free(shown);
}

/* Adds an item to the list at k with its origin; returns it. */
static struct pitem *
load_item(struct loader *l, const struct key *k, const char *path,
    const char *from)
{
	struct plist	*pl = policy_field(l, k);
	struct pitem	*it;

	if (pl->pl_n >= POLICY_MAX_ITEMS) {
		load_error(l, path, NULL, "too many entries");
		return NULL;
	}
	it = plist_add(pl);
	if (from != NULL)
		it->pi_from = xstrdup(from);
	else
		xasprintf(&it->pi_from, "%s: %s", l->l_name, path);
	return it;
}

/* Drops the last item of the list at k (after a failed parse). */
static void
load_drop(struct loader *l, const struct key *k)
{
	struct plist	*pl = policy_field(l, k);

	pitem_clear(&pl->pl_v[--pl->pl_n]);
}

static void
load_scalar(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *const *names,
    size_t nnames)
{
	struct pscalar	*ps = policy_field(l, k);
	size_t		 i;

	for (i = 0; i < nnames; i++) {
		if (strcmp(text, names[i]) != 0)
			continue;
		ps->ps_value = (int)i;
		ps->ps_set = true;
		free(ps->ps_from);
		if (from != NULL)
			ps->ps_from = xstrdup(from);
		else
			xasprintf(&ps->ps_from, "%s: %s", l->l_name, path);
		return;
	}
	if (nnames == 3)
		load_error(l, path, text, "expected \"none\", \"proxy\" or "
		    "\"host\"");
	else if (names == policy_capture_names)
		load_error(l, path, text, "expected \"on\" or \"off\"");
	else
		load_error(l, path, text, "expected \"deny\" or \"allow\"");
}

static void
key_mode(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *value)
{
	(void)value;
	load_scalar(l, k, path, from, text, policy_mode_names, nitems(policy_mode_names));
}

static void
key_unix(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *value)
{
	(void)value;
	load_scalar(l, k, path, from, text, policy_unix_names, nitems(policy_unix_names));
}

static void
key_capture(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *value)
{
	(void)value;
	load_scalar(l, k, path, from, text, policy_capture_names,
	    nitems(policy_capture_names));
}

static void
key_pattern(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *value)
{
	struct pitem	*it;
	char		*cause;

	(void)value;
	if ((it = load_item(l, k, path, from)) == NULL)
		return;
	if (policy_parse_pattern(text, it, &cause) == -1) {
		load_error(l, path, text, cause);
		free(cause);
		load_drop(l, k);
	}
}

static void
key_list_file(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *value)
{
	struct plist		*pl = policy_field(l, k);
	struct policy_ctx	 dctx;
	struct pitem		 tmp = { 0 };
	char			*cause, *file;

	(void)from;
	(void)value;
	/* Below .cordon/, without "..", and no links (file_read). */
	if (l->l_ctx->pc_untrusted && (text[0] == '/' || text[0] == '~')) {
		load_error(l, path, text, "a workspace policy may only name "
		    "list files inside its own folder");
		return;
	}
	/* Relative list files are read from the policy file's folder. */
	dctx = *l->l_ctx;
	if (dctx.pc_dir != NULL)
		dctx.pc_workspace = dctx.pc_dir;
	if (policy_parse_path(text, &dctx, &tmp, &cause) == -1) {
		load_error(l, path, text, cause);
		free(cause);
		return;
	}
	file = tmp.pi_text;
	if (policy_list_load(file, pl, l->l_ctx, &cause) == -1) {
		load_error(l, path, text, cause);
		free(cause);
	}
	free(file);
}

static void
key_cidr(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *value)
{
	struct pitem	*it;
	char		*cause, buf[ADDR_STRLEN + 8];

	(void)value;
	if ((it = load_item(l, k, path, from)) == NULL)
		return;
	if (cidr_parse(text, &it->pi_cidr, &cause) == -1) {
		load_error(l, path, text, cause);
		free(cause);
		load_drop(l, k);
		return;
	}
	it->pi_text = xstrdup(cidr_str(&it->pi_cidr, buf, sizeof(buf)));
}

/*
 * A key a workspace policy may not set, as it opens what (ports, sockets)
 * of the host: refused there, said with the fix.  Returns whether it was.
 */
static bool
load_refuse_untrusted(struct loader *l, const char *path, const char *what)
{
	char	*msg;

	if (!l->l_ctx->pc_untrusted)
		return false;
	xasprintf(&msg, "a workspace policy may not open %s: put it in your "
	    "own policy or pass --policy", what);
	load_error(l, path, NULL, msg);
	free(msg);
	return true;
}

/* What parsing the item load_item made gave: on -1, said and dropped. */
static void
load_parsed(struct loader *l, const struct key *k, const char *path,
    const char *text, int rc, char *cause)
{
	if (rc == 0)
		return;
	load_error(l, path, text, cause);
	free(cause);
	load_drop(l, k);
}

static void
key_host_port(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *value)
{
	struct pitem	*it;
	char		*cause = NULL;
	int		 rc;

	(void)value;
	if (load_refuse_untrusted(l, path, "ports of the host "
	    "(network.host_ports)") ||
	    (it = load_item(l, k, path, from)) == NULL)
		return;
	rc = policy_parse_host_port(text, it, &cause);
	load_parsed(l, k, path, text, rc, cause);
}

static void
key_path(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *value)
{
	struct pitem	*it;
	char		*cause = NULL;
	int		 rc;

	(void)value;
	if ((it = load_item(l, k, path, from)) == NULL)
		return;
	rc = policy_parse_path(text, l->l_ctx, it, &cause);
	load_parsed(l, k, path, text, rc, cause);
}

static void
key_socket(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *value)
{
	struct pitem	*it;
	char		*cause = NULL;
	int		 rc;

	(void)value;
	if (load_refuse_untrusted(l, path, "Unix sockets of the host "
	    "(filesystem.unix_sockets)") ||
	    (it = load_item(l, k, path, from)) == NULL)
		return;
	rc = policy_parse_socket(text, l->l_ctx, it, &cause);
	load_parsed(l, k, path, text, rc, cause);
}

/* Says whether s is a variable name, with a final '*' if glob is set. */
static bool
env_name_ok(const char *s, bool glob)
{
	size_t	 i, n = strlen(s);

	if (glob && n > 0 && s[n - 1] == '*')
		n--;
	if (n == 0 || n > 256 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static void
key_env_pass(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *value)
{
	struct pitem	*it;

	(void)value;
	if (!env_name_ok(text, true)) {
		load_error(l, path, text, "not a variable name (letters, "
		    "digits and '_', optionally ending in '*')");
		return;
	}
	if ((it = load_item(l, k, path, from)) != NULL)
		it->pi_text = xstrdup(text);
}

static void
key_env_set(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *name, const char *value)
{
	struct pitem	*it;

	if (l->l_ctx->pc_untrusted) {
		load_error(l, path, NULL, "a workspace policy may not set "
		    "variables (it can only make a policy stricter)");
		return;
	}
	if (!env_name_ok(name, false)) {
		load_error(l, path, name, "not a variable name (letters, "
		    "digits and '_')");
		return;
	}
	if (strlen(value) > MAX_ENV_VALUE) {
		load_error(l, path, NULL, "value longer than 32768 bytes");
		return;
	}
	if ((it = load_item(l, k, path, from)) != NULL) {
		it->pi_text = xstrdup(name);
		it->pi_value = xstrdup(value);
	}
}

/*
 * Unwraps {"value": V, "from": "TEXT"}; returns V and sets *from, or v
 * itself when it is not such an object.  NULL means a malformed wrapper
 * (reported).
 */
static json_t *
load_unwrap(struct loader *l, json_t *v, const char *path, const char **from)
{
	json_t		*value, *origin;
	const char	*p;

	*from = NULL;
	if (!json_is_object(v) || json_object_get(v, "value") == NULL)
		return v;
	value = json_object_get(v, "value");
	origin = json_object_get(v, "from");
	if (json_object_size(v) != (origin != NULL ? 2u : 1u) ||
	    (origin != NULL && !json_is_string(origin))) {
		load_error(l, path, NULL, "an annotated value has only "
		    "\"value\" and a \"from\" string");
		return NULL;
	}
	if (origin == NULL)
		return value;
	/* An origin is printed as it is: it may not fake lines or colours. */
	if (l->l_ctx->pc_untrusted) {
		load_error(l, path, NULL, "a workspace policy may not annotate "
		    "where a value came from");
		return NULL;
	}
	for (p = json_string_value(origin); *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			load_error(l, path, NULL, "a \"from\" text may not "
			    "hold control characters");
			return NULL;
		}
	}
	*from = json_string_value(origin);
	return value;
}

static const char *
load_json_type(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

static void	load_object(struct loader *, json_t *, const struct key *,
		    const char *);

/* Says whether v has the type wanted, reporting it when not. */
static bool
load_expect(struct loader *l, const json_t *v, json_type type,
    const char *path, const char *what)
{
	char	*msg;

	if (json_typeof(v) == type)
		return true;
	xasprintf(&msg, "expected %s, found %s", what, load_json_type(v));
	load_error(l, path, NULL, msg);
	free(msg);
	return false;
}

/*
 * tls.ca_dir: one path; a later trusted layer replaces it.  The workspace
 * layer may not say which CA the sandbox trusts.
 */
static void
key_ca_dir(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *value)
{
	struct plist	*pl = policy_field(l, k);
	struct pitem	 it = { 0 };
	char		*cause;

	(void)value;
	if (l->l_ctx->pc_untrusted) {
		load_error(l, path, NULL, "a workspace policy may not name "
		    "the CA; put it in your user policy or a --policy file");
		return;
	}
	if (policy_parse_path(text, l->l_ctx, &it, &cause) == -1) {
		load_error(l, path, text, cause);
		free(cause);
		pitem_clear(&it);
		return;
	}
	if (from != NULL)
		it.pi_from = xstrdup(from);
	else
		xasprintf(&it.pi_from, "%s: %s", l->l_name, path);
	plist_free(pl);
	*plist_add(pl) = it;
	pl->pl_set = true;
}

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
		load_error(l, sub, NULL, "missing");
	else if (load_expect(l, v, JSON_STRING, sub, "a string"))
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
		load_error(l, sub, text, cause);
		free(cause);
	} else if (it->pi_kind == PAT_ADDR)
		load_error(l, sub, text, "a host name or \"*.suffix\", not "
		    "an address (inspection works on names)");
	else if (it->pi_port != PORT_UNSET)
		load_error(l, sub, text, "no port here: the rule holds on "
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
path_rule_error(const char *p)
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
 * by upper-casing (methods) or path_rule_error (paths).
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
		load_error(l, sub, NULL, "missing (list what is allowed)");
	else if (load_expect(l, arr, JSON_ARRAY, sub, "an array of strings")
	    && json_array_size(arr) == 0)
		load_error(l, sub, NULL, "empty: an inspected host with "
		    "nothing allowed is a deny; use network.deny");
	else if (json_is_array(arr)) {
		json_array_foreach(arr, i, v) {
			xasprintf(&elem, "%s[%zu]", sub, i);
			if (!load_expect(l, v, JSON_STRING, elem,
			    "a string")) {
				free(elem);
				continue;
			}
			text = json_string_value(v);
			if (methods && !policy_http_token(text))
				load_error(l, elem, text, "not a method (an "
				    "RFC 9110 token, as GET)");
			else if (!methods &&
			    (why = path_rule_error(text)) != NULL)
				load_error(l, elem, text, why);
			else if (pl->pl_n >= 1000)
				load_error(l, elem, NULL, "too many entries");
			else {
				up = xstrdup(text);
				for (j = 0; methods && up[j] != '\0'; j++)
					if (up[j] >= 'a' && up[j] <= 'z')
						up[j] -= 'a' - 'A';
				plist_add(pl)->pi_text = up;
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
static void
rec_inspect(struct loader *l, const char *path, const char *from,
    json_t *obj)
{
	struct pinspect	 in = { 0 };
	size_t		 errors = l->l_errors.el_count;

	if (l->l_ctx->pc_untrusted) {
		load_error(l, path, NULL, "a workspace policy may not add "
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
			load_error(l, path, NULL, "too many entries");
		pinspect_clear(&in);
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
format_error(const char *f)
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
	"host", "env", "header", "format", NULL
};

/* credentials[i]: {"host", "env", "header", "format"}. */
static void
rec_cred(struct loader *l, const char *path, const char *from,
    json_t *obj)
{
	struct pcred		 cr = { 0 };
	const char		*env, *header, *format, *why;
	const char *const	*h;
	char			*sub;
	size_t			 errors = l->l_errors.el_count;

	if (l->l_ctx->pc_untrusted) {
		load_error(l, path, NULL, "a workspace policy may not add "
		    "credentials; put them in your user policy or a --policy "
		    "file");
		return;
	}
	rec_known(l, obj, path, cred_names);
	rec_host(l, obj, path, from, &cr.cr_host);
	xasprintf(&sub, "%s.env", path);
	if ((env = rec_string(l, obj, path, "env")) != NULL &&
	    !env_name_ok(env, false))
		load_error(l, sub, env, "not a variable name (letters, "
		    "digits and '_')");
	free(sub);
	xasprintf(&sub, "%s.header", path);
	if ((header = rec_string(l, obj, path, "header")) != NULL) {
		for (h = cred_bad_headers; *h != NULL; h++)
			if (strcasecmp(*h, header) == 0)
				break;
		if (!policy_http_token(header))
			load_error(l, sub, header, "not a header name (an "
			    "RFC 9110 token)");
		else if (*h != NULL)
			load_error(l, sub, header, "a hop-by-hop or framing "
			    "header cannot carry a credential");
	}
	free(sub);
	xasprintf(&sub, "%s.format", path);
	if ((format = rec_string(l, obj, path, "format")) != NULL &&
	    (why = format_error(format)) != NULL)
		load_error(l, sub, format, why);
	free(sub);
	if (l->l_errors.el_count != errors ||
	    l->l_policy->p_ncreds >= POLICY_MAX_ITEMS) {
		if (l->l_errors.el_count == errors)
			load_error(l, path, NULL, "too many entries");
		pcred_clear(&cr);
		return;
	}
	cr.cr_env = xstrdup(env);
	cr.cr_header = xstrdup(header);
	cr.cr_format = xstrdup(format);
	l->l_policy->p_creds = xreallocarray(l->l_policy->p_creds,
	    l->l_policy->p_ncreds + 1, sizeof(cr));
	l->l_policy->p_creds[l->l_policy->p_ncreds++] = cr;
}

/* Checks that v is a string (after unwrapping) and hands it to k. */
static void
load_string(struct loader *l, const struct key *k, json_t *v,
    const char *path, const char *name)
{
	const char	*from;

	if ((v = load_unwrap(l, v, path, &from)) == NULL ||
	    !load_expect(l, v, JSON_STRING, path, "a string"))
		return;
	if (name != NULL)
		k->k_fn(l, k, path, from, name, json_string_value(v));
	else
		k->k_fn(l, k, path, from, json_string_value(v), NULL);
}

/* Walks one key's value according to its row. */
static void
load_key(struct loader *l, const struct key *k, json_t *v, const char *path)
{
	json_t		*elem;
	const char	*name;
	char		*sub;
	size_t		 i;

	/* TLS inspection is the trusted layers' alone, even empty. */
	if (l->l_ctx->pc_untrusted && (k->k_kind == KEY_RECORDS ||
	    k->k_table == tls_keys)) {
		xasprintf(&sub, "a workspace policy may not use \"%s\" (it "
		    "chooses what TLS is opened, with which CA and secrets); "
		    "put it in your user policy or a --policy file",
		    k->k_name);
		load_error(l, path, NULL, sub);
		free(sub);
		return;
	}
	switch (k->k_kind) {
	case KEY_SECTION:
		if (load_expect(l, v, JSON_OBJECT, path, "an object"))
			load_object(l, v, k->k_table, path);
		return;
	case KEY_VERSION:
		if (!json_is_integer(v) ||
		    json_integer_value(v) != POLICY_VERSION)
			load_error(l, path, NULL, "this cordon reads "
			    "\"version\": 1");
		return;
	case KEY_STRING:
		load_string(l, k, v, path, NULL);
		return;
	case KEY_LIST:
		if (!load_expect(l, v, JSON_ARRAY, path,
		    "an array of strings"))
			return;
		((struct plist *)policy_field(l, k))->pl_set = true;
		json_array_foreach(v, i, elem) {
			xasprintf(&sub, "%s[%zu]", path, i);
			load_string(l, k, elem, sub, NULL);
			free(sub);
		}
		return;
	case KEY_MAP:
		if (!load_expect(l, v, JSON_OBJECT, path,
		    "an object of strings"))
			return;
		((struct plist *)policy_field(l, k))->pl_set = true;
		json_object_foreach(v, name, elem) {
			xasprintf(&sub, "%s.%s", path, name);
			load_string(l, k, elem, sub, name);
			free(sub);
		}
		return;
	case KEY_RECORDS:
		if (!load_expect(l, v, JSON_ARRAY, path,
		    "an array of objects"))
			return;
		json_array_foreach(v, i, elem) {
			xasprintf(&sub, "%s[%zu]", path, i);
			if ((elem = load_unwrap(l, elem, sub, &name)) !=
			    NULL && load_expect(l, elem, JSON_OBJECT, sub,
			    "an object"))
				k->k_rec(l, sub, name, elem);
			free(sub);
		}
		return;
	}
}

/* Walks the members of obj against table; unknown keys list the known. */
static void
load_object(struct loader *l, json_t *obj, const struct key *table,
    const char *path)
{
	const struct key	*k;
	const char		*name;
	json_t			*v;
	char			*sub, *known, *tmp, *shown;

	json_object_foreach(obj, name, v) {
		for (k = table; k->k_name != NULL; k++)
			if (strcmp(k->k_name, name) == 0)
				break;
		if (*path == '\0')
			sub = xstrdup(name);
		else
			xasprintf(&sub, "%s.%s", path, name);
		if (k->k_name != NULL) {
			load_key(l, k, v, sub);
			free(sub);
			continue;
		}
		known = xstrdup("");
		for (k = table; k->k_name != NULL; k++) {
			xasprintf(&tmp, "%s%s\"%s\"", known,
			    *known ? ", " : "", k->k_name);
			free(known);
			known = tmp;
		}
		shown = str_escape(sub, strlen(sub));
		errlist_add(&l->l_errors, "%s: unknown key \"%s\" (known "
		    "here: %s)", l->l_name, shown, known);
		free(shown);
		free(known);
		free(sub);
	}
}

/*
 * Loads one layer from len bytes of buf; name is used in messages.
 * Returns the layer, or NULL with every error in *cause (caller frees).
 */
struct policy *
policy_load_buffer(const char *buf, size_t len, const char *name,
    const struct policy_ctx *ctx, char **cause)
{
	struct loader	 l;
	json_error_t	 jerr;
	json_t		*root;

	*cause = NULL;
	memset(&l, 0, sizeof(l));
	l.l_name = name;
	l.l_ctx = ctx;

	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		xasprintf(cause, "%s:%d:%d: %s", name, jerr.line, jerr.column,
		    jerr.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		xasprintf(cause, "%s: a policy is a JSON object, found %s",
		    name, load_json_type(root));
		json_decref(root);
		return NULL;
	}
	l.l_policy = policy_new();
	if (json_object_get(root, "version") == NULL)
		errlist_add(&l.l_errors, "%s: missing \"version\": 1", name);
	load_object(&l, root, top_keys, "");
	json_decref(root);

	if (l.l_errors.el_count != 0) {
		*cause = errlist_steal(&l.l_errors);
		policy_free(l.l_policy);
		return NULL;
	}
	return l.l_policy;
}

/* Loads one layer from a file; see policy_load_buffer. */
struct policy *
policy_load_file(const char *path, const struct policy_ctx *ctx,
    char **cause)
{
	struct policy_ctx	 fctx = *ctx;
	struct policy		*p;
	const char		*slash;
	char			*buf, *dir, *tmp, cwd[PATH_MAX];
	size_t			 len;

	if ((buf = file_read(path, POLICY_MAX_FILE,
	    ctx->pc_untrusted ? ctx->pc_workspace : NULL, &len,
	    cause)) == NULL)
		return NULL;
	/* The folder of the file, made absolute, for relative list files. */
	if ((slash = strrchr(path, '/')) == NULL)
		dir = xstrdup(".");
	else if (slash == path)
		dir = xstrdup("/");
	else
		dir = xstrndup(path, (size_t)(slash - path));
	if (dir[0] != '/') {
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			xasprintf(cause, "getcwd: %s", strerror(errno));
			free(dir);
			free(buf);
			return NULL;
		}
		xasprintf(&tmp, "%s/%s", cwd, dir);
		free(dir);
		dir = tmp;
	}
	fctx.pc_dir = dir;
	p = policy_load_buffer(buf, len, path, &fctx, cause);
	free(dir);
	free(buf);
	return p;
}
