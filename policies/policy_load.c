/*
 * policy_load.c: read one policy layer from JSON.
 *
 * Keys are walked through tables of name, kind and handler, so a new key
 * is one row; the records of network.inspect[] and credentials[] are
 * loaded in policy_rec.c.  Every error is collected before giving up, and
 * a layer with any error is thrown away whole: a policy never half-loads.
 * Syntax errors carry FILE:LINE:COLUMN from jansson; the rest carry the
 * JSON path (network.allow[3]).
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
#include <unistd.h>

#include <jansson.h>

#include "lib/addr.h"
#include "lib/host.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "policies/policy_load.h"

#define MAX_ENV_VALUE	32768

enum key_kind {
	KEY_SECTION,		/* an object with its own table */
	KEY_VERSION,		/* an integer */
	KEY_STRING,		/* one string */
	KEY_LIST,		/* an array of strings */
	KEY_MAP,		/* an object of strings */
	KEY_RECORDS,		/* an array of objects, each to k_rec */
	KEY_OBJECT		/* one object, to k_rec */
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
	rec_fn			 k_rec;		/* KEY_RECORDS, KEY_OBJECT */
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
static void	key_tier(struct loader *, const struct key *, const char *,
		    const char *, const char *, const char *);

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
	{ "inspect", KEY_RECORDS, NULL, 0, NULL, policy_rec_inspect },
	{ NULL, 0, NULL, 0, NULL, NULL }
};

static const struct key filesystem_keys[] = {
	{ "write", KEY_LIST, key_path, AT(p_write), NULL, NULL },
	{ "read_only", KEY_LIST, key_path, AT(p_read_only), NULL, NULL },
	{ "deny", KEY_LIST, key_path, AT(p_hide), NULL, NULL },
	{ "unix_sockets", KEY_LIST, key_socket, AT(p_sockets), NULL, NULL },
	{ "host_config", KEY_LIST, key_path, AT(p_host_config), NULL, NULL },
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

static const struct key tier_keys[] = {
	{ "proxy", KEY_STRING, key_tier, AT(p_tier[POLICY_TIER_PROXY]), NULL,
	    NULL },
	{ "client_cert", KEY_STRING, key_tier, AT(p_tier[POLICY_TIER_CERT]),
	    NULL, NULL },
	{ "client_key", KEY_STRING, key_tier, AT(p_tier[POLICY_TIER_KEY]),
	    NULL, NULL },
	{ "proxy_ca", KEY_STRING, key_tier, AT(p_tier[POLICY_TIER_CA]), NULL,
	    NULL },
	{ NULL, 0, NULL, 0, NULL, NULL }
};

static const struct key top_keys[] = {
	{ "version", KEY_VERSION, NULL, 0, NULL, NULL },
	{ "network", KEY_SECTION, NULL, 0, network_keys, NULL },
	{ "filesystem", KEY_SECTION, NULL, 0, filesystem_keys, NULL },
	{ "env", KEY_SECTION, NULL, 0, env_keys, NULL },
	{ "credentials", KEY_RECORDS, NULL, 0, NULL, policy_rec_cred },
	{ "tls", KEY_SECTION, NULL, 0, tls_keys, NULL },
	{ "identities", KEY_OBJECT, NULL, 0, NULL, policy_ident_load },
	{ "tier", KEY_SECTION, NULL, 0, tier_keys, NULL },
	{ NULL, 0, NULL, 0, NULL, NULL }
};

static void *
policy_field(struct loader *l, const struct key *k)
{
	return (char *)l->l_policy + k->k_offset;
}

/* Records an error about the value at path. */
void
policy_load_error(struct loader *l, const char *path, const char *text,
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
		policy_load_error(l, path, NULL, "too many entries");
		return NULL;
	}
	it = policy_plist_add(pl);
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

	policy_pitem_clear(&pl->pl_v[--pl->pl_n]);
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
		policy_load_error(l, path, text, "expected \"none\", \"proxy\" "
		    "or "
		    "\"host\"");
	else if (names == policy_capture_names)
		policy_load_error(l, path, text, "expected \"on\" or \"off\"");
	else
		policy_load_error(l, path, text, "expected \"deny\" or "
		    "\"allow\"");
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
		policy_load_error(l, path, text, cause);
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
		policy_load_error(l, path, text, "a workspace policy may only "
		    "name "
		    "list files inside its own folder");
		return;
	}
	/* Relative list files are read from the policy file's folder. */
	dctx = *l->l_ctx;
	if (dctx.pc_dir != NULL)
		dctx.pc_workspace = dctx.pc_dir;
	if (policy_parse_path(text, &dctx, &tmp, &cause) == -1) {
		policy_load_error(l, path, text, cause);
		free(cause);
		return;
	}
	file = tmp.pi_text;
	if (policy_list_load(file, pl, l->l_ctx, &cause) == -1) {
		policy_load_error(l, path, text, cause);
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
	if (addr_cidr_parse(text, &it->pi_cidr, &cause) == -1) {
		policy_load_error(l, path, text, cause);
		free(cause);
		load_drop(l, k);
		return;
	}
	it->pi_text = xstrdup(addr_cidr_str(&it->pi_cidr, buf, sizeof(buf)));
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
	policy_load_error(l, path, NULL, msg);
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
	policy_load_error(l, path, text, cause);
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
bool
policy_load_env_name_ok(const char *s, bool glob)
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
	if (!policy_load_env_name_ok(text, true)) {
		policy_load_error(l, path, text, "not a variable name "
		    "(letters, "
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
		policy_load_error(l, path, NULL, "a workspace policy may not "
		    "set "
		    "variables (it can only make a policy stricter)");
		return;
	}
	if (!policy_load_env_name_ok(name, false)) {
		policy_load_error(l, path, name, "not a variable name "
		    "(letters, "
		    "digits and '_')");
		return;
	}
	if (strlen(value) > MAX_ENV_VALUE) {
		policy_load_error(l, path, NULL, "value longer than 32768 "
		    "bytes");
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
		policy_load_error(l, path, NULL, "an annotated value has only "
		    "\"value\" and a \"from\" string");
		return NULL;
	}
	if (origin == NULL)
		return value;
	/* An origin is printed as it is: it may not fake lines or colours. */
	if (l->l_ctx->pc_untrusted) {
		policy_load_error(l, path, NULL, "a workspace policy may not "
		    "annotate "
		    "where a value came from");
		return NULL;
	}
	for (p = json_string_value(origin); *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			policy_load_error(l, path, NULL, "a \"from\" text may "
			    "not "
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
bool
policy_load_expect(struct loader *l, const json_t *v, json_type type,
    const char *path, const char *what)
{
	char	*msg;

	if (json_typeof(v) == type)
		return true;
	xasprintf(&msg, "expected %s, found %s", what, load_json_type(v));
	policy_load_error(l, path, NULL, msg);
	free(msg);
	return false;
}

/*
 * A key of one value (a path, the tier's address): it replaces what an
 * earlier layer set, and says where it came from.
 */
static void
key_set_one(struct loader *l, struct plist *pl, struct pitem *it,
    const char *path, const char *from)
{
	if (from != NULL)
		it->pi_from = xstrdup(from);
	else
		xasprintf(&it->pi_from, "%s: %s", l->l_name, path);
	policy_plist_free(pl);
	*policy_plist_add(pl) = *it;
	pl->pl_set = true;
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
		policy_load_error(l, path, NULL, "a workspace policy may not "
		    "name "
		    "the CA; put it in your user policy or a --policy file");
		return;
	}
	if (policy_parse_path(text, l->l_ctx, &it, &cause) == -1) {
		policy_load_error(l, path, text, cause);
		free(cause);
		policy_pitem_clear(&it);
		return;
	}
	key_set_one(l, pl, &it, path, from);
}

/*
 * tier.proxy ("tls://HOST:PORT") and its files (paths): one value each,
 * a later trusted layer replaces them.  A workspace may not name a tier:
 * it would pick where the run's traffic goes, and with what key.
 */
static void
key_tier(struct loader *l, const struct key *k, const char *path,
    const char *from, const char *text, const char *value)
{
	struct plist	*pl = policy_field(l, k);
	struct pitem	 it = { 0 };
	char		*cause = NULL, *host, *port;

	(void)value;
	if (l->l_ctx->pc_untrusted) {
		policy_load_error(l, path, NULL, "a workspace policy may not "
		    "name the egress tier; put it in the system policy");
		return;
	}
	if (strcmp(k->k_name, "proxy") == 0) {
		/* Read as cordon run will: refused now, not at each run. */
		if (strncmp(text, "tls://", 6) != 0 ||
		    host_tls_url(text, &host, &port, &cause) == -1) {
			policy_load_error(l, path, text, "not "
			    "tls://HOST:PORT (a host name, or an address in "
			    "[brackets] for IPv6, and a port from 1 to 65535)");
			free(cause);
			return;
		}
		free(host);
		free(port);
		it.pi_text = xstrdup(text);
	} else if (policy_parse_path(text, l->l_ctx, &it, &cause) == -1) {
		policy_load_error(l, path, text, cause);
		free(cause);
		policy_pitem_clear(&it);
		return;
	}
	key_set_one(l, pl, &it, path, from);
}

/* Checks that v is a string (after unwrapping) and hands it to k. */
static void
load_string(struct loader *l, const struct key *k, json_t *v,
    const char *path, const char *name)
{
	const char	*from;

	if ((v = load_unwrap(l, v, path, &from)) == NULL ||
	    !policy_load_expect(l, v, JSON_STRING, path, "a string"))
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

	/* Identities are the operator's: they choose whole layers. */
	if (l->l_ctx->pc_untrusted && k->k_kind == KEY_OBJECT) {
		policy_load_error(l, path, NULL, "a workspace policy may not "
		    "use \"identities\" (they choose a tls: client's policy); "
		    "put it in the proxy's own policy");
		return;
	}
	/* TLS inspection is the trusted layers' alone, even empty. */
	if (l->l_ctx->pc_untrusted && (k->k_kind == KEY_RECORDS ||
	    k->k_table == tls_keys)) {
		xasprintf(&sub, "a workspace policy may not use \"%s\" (it "
		    "chooses what TLS is opened, with which CA and secrets); "
		    "put it in your user policy or a --policy file",
		    k->k_name);
		policy_load_error(l, path, NULL, sub);
		free(sub);
		return;
	}
	switch (k->k_kind) {
	case KEY_SECTION:
		if (policy_load_expect(l, v, JSON_OBJECT, path, "an object"))
			load_object(l, v, k->k_table, path);
		return;
	case KEY_VERSION:
		if (!json_is_integer(v) ||
		    json_integer_value(v) != POLICY_VERSION)
			policy_load_error(l, path, NULL, "this cordon reads "
			    "\"version\": 1");
		return;
	case KEY_STRING:
		load_string(l, k, v, path, NULL);
		return;
	case KEY_LIST:
		if (!policy_load_expect(l, v, JSON_ARRAY, path,
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
		if (!policy_load_expect(l, v, JSON_OBJECT, path,
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
		if (!policy_load_expect(l, v, JSON_ARRAY, path,
		    "an array of objects"))
			return;
		json_array_foreach(v, i, elem) {
			xasprintf(&sub, "%s[%zu]", path, i);
			if ((elem = load_unwrap(l, elem, sub, &name)) !=
			    NULL && policy_load_expect(l, elem, JSON_OBJECT,
			    sub, "an object"))
				k->k_rec(l, sub, name, elem);
			free(sub);
		}
		return;
	case KEY_OBJECT:
		if ((v = load_unwrap(l, v, path, &name)) != NULL &&
		    policy_load_expect(l, v, JSON_OBJECT, path, "an object"))
			k->k_rec(l, path, name, v);
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

/*
 * Whether a run's rules hold only what a run may send: "version" and
 * "network" with "mode", "allow", "deny" and "allow_cidrs" (no list
 * files: the proxy reads no file a client names).
 */
static bool
load_narrowing_keys_ok(const char *text)
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
 * Loads the rules a run sends its proxy (cordon run --proxy-socket, in
 * the PROXY v2 header; policy_merge_layers_narrowing() makes them), named from
 * in messages, as a workspace layer: they may only narrow.  A run may
 * send no more than network.mode, allow, deny and allow_cidrs: nothing
 * that would make the proxy read a file a client names.  Returns the
 * rules, or NULL with *cause (caller frees).
 */
struct policy *
policy_load_narrowing(const char *text, const char *from, char **cause)
{
	struct policy_ctx	 ctx;

	if (!load_narrowing_keys_ok(text)) {
		*cause = xstrdup("only network.mode, allow, deny and "
		    "allow_cidrs may be sent");
		return NULL;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.pc_workspace = ctx.pc_home = "/";
	ctx.pc_untrusted = true;
	return policy_load_buffer(text, strlen(text), from, &ctx, cause);
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
