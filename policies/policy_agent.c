/*
 * policy_agent.c: the agent profiles (--agent NAME), the files of
 * policies/agents/ linked into the binary, as the Makefile links
 * default.json: a profile cannot go missing or differ from the binary
 * that reads it.  A profile is JSON: its name, a line about it, the
 * folders of the agent's state kept per workspace, hints said before the
 * agent starts, and a policy, merged as a trusted layer where --agent
 * stands among the flags (policy_merge.c).  The runner takes the rest
 * (runner/run_agent.c).  Every key is checked; an unknown one is an
 * error that names the known ones.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "policies/policy_load.h"

/* policies/agents/NAME.json, linked in by the build (see the Makefile). */
extern const char	 policy_agent_claude_json[];
extern const char	 policy_agent_claude_json_end[];
extern const char	 policy_agent_codex_json[];
extern const char	 policy_agent_codex_json_end[];
extern const char	 policy_agent_gemini_json[];
extern const char	 policy_agent_gemini_json_end[];
extern const char	 policy_agent_opencode_json[];
extern const char	 policy_agent_opencode_json_end[];

static const struct {
	const char	*name;
	const char	*text;
	const char	*end;
} policy_agents[] = {
	{ "claude", policy_agent_claude_json, policy_agent_claude_json_end },
	{ "codex", policy_agent_codex_json, policy_agent_codex_json_end },
	{ "gemini", policy_agent_gemini_json, policy_agent_gemini_json_end },
	{ "opencode", policy_agent_opencode_json,
	    policy_agent_opencode_json_end },
};

/* The profiles' names, for messages: "claude, codex, gemini, opencode" (new string). */
char *
policy_agent_names(void)
{
	char	*s = NULL;
	size_t	 i;

	for (i = 0; i < nitems(policy_agents); i++)
		str_append(&s, ", ", policy_agents[i].name);
	return s;
}

/* The text of profile name and its length, or NULL when none has it. */
const char *
policy_agent_text(const char *name, size_t *len)
{
	size_t	 i;

	for (i = 0; i < nitems(policy_agents); i++)
		if (strcmp(policy_agents[i].name, name) == 0) {
			*len = (size_t)(policy_agents[i].end -
			    policy_agents[i].text);
			return policy_agents[i].text;
		}
	return NULL;
}

/* A string array of at most max entries into *v, *n: 0, or -1. */
static int
policy_agent_strings(const json_t *a, size_t max, char ***v, size_t *n)
{
	const json_t	*s;
	size_t		 i;

	if (!json_is_array(a) || json_array_size(a) > max)
		return -1;
	json_array_foreach(a, i, s)
		if (!json_is_string(s))
			return -1;
	*v = xcalloc(json_array_size(a) + 1, sizeof(**v));
	json_array_foreach(a, i, s)
		(*v)[i] = xstrdup(json_string_value(s));
	*n = json_array_size(a);
	return 0;
}

/* One entry of "hints": 0, or -1 with *cause. */
static int
policy_agent_hint(struct pagent *pa, json_t *h, size_t i, char **cause)
{
	struct pahint	*ph;
	const json_t	*cmd, *text, *unless;
	const char	*key;
	json_t		*v;

	pa->pa_hints = xreallocarray(pa->pa_hints, pa->pa_nhints + 1,
	    sizeof(*pa->pa_hints));
	ph = &pa->pa_hints[pa->pa_nhints];
	memset(ph, 0, sizeof(*ph));
	if (!json_is_object(h))
		goto bad;
	json_object_foreach(h, key, v)
		if (strcmp(key, "command") != 0 && strcmp(key, "text") != 0 &&
		    strcmp(key, "unless_args") != 0)
			goto bad;
	cmd = json_object_get(h, "command");
	text = json_object_get(h, "text");
	unless = json_object_get(h, "unless_args");
	if (!json_is_string(cmd) || !json_is_string(text) ||
	    (unless != NULL && policy_agent_strings(unless, 64,
	    &ph->ph_unless, &ph->ph_nunless) == -1))
		goto bad;
	ph->ph_command = xstrdup(json_string_value(cmd));
	ph->ph_text = xstrdup(json_string_value(text));
	pa->pa_nhints++;
	return 0;
bad:
	xasprintf(cause, "hints[%zu]: an object of \"command\" and \"text\" "
	    "(strings) and \"unless_args\" (an array of strings)", i);
	return -1;
}

/*
 * "state_env": variables set inside to a path of the home that "state"
 * keeps, "~/..." (Claude Code's CLAUDE_CONFIG_DIR, so that its
 * ~/.claude.json moves into the kept ~/.claude).  0, or -1 with *cause.
 */
static int
policy_agent_state_env(struct pagent *pa, json_t *o, char **cause)
{
	const char	*key, *val;
	json_t		*v;
	char		*dir;
	size_t		 i;
	bool		 kept;

	if (!json_is_object(o) || json_object_size(o) > 16)
		goto bad;
	json_object_foreach(o, key, v) {
		if (!json_is_string(v))
			goto bad;
		val = json_string_value(v);
		for (i = 0, kept = false; i < pa->pa_nstate && !kept; i++) {
			/* "~/.claude/" holds "~/.claude" too. */
			dir = xstrndup(pa->pa_state[i],
			    strlen(pa->pa_state[i]) - 1);
			kept = path_is_below(val, dir);
			free(dir);
		}
		if (!kept || !policy_load_env_name_ok(key, false))
			goto bad;
		pa->pa_env = xreallocarray(pa->pa_env, pa->pa_nenv + 1,
		    sizeof(*pa->pa_env));
		pa->pa_env[pa->pa_nenv].pe_name = xstrdup(key);
		pa->pa_env[pa->pa_nenv++].pe_path = xstrdup(val + 1);
	}
	return 0;
bad:
	*cause = xstrdup("state_env: an object of at most 16 variables, each "
	    "a path \"~/...\" that \"state\" keeps");
	return -1;
}

/*
 * "seed": files written into a state folder's copy when it is made,
 * "~/.codex/config.toml": its text; a file directly in one of the
 * "state" folders.  0, or -1 with *cause.
 */
static int
policy_agent_seed(struct pagent *pa, json_t *o, char **cause)
{
	const char	*key, *name;
	json_t		*v;
	size_t		 i, n;

	if (!json_is_object(o) || json_object_size(o) > 16)
		goto bad;
	json_object_foreach(o, key, v) {
		if (!json_is_string(v) || json_string_length(v) > 65536)
			goto bad;
		for (i = 0; i < pa->pa_nstate; i++) {
			n = strlen(pa->pa_state[i]);
			name = key + n;
			if (strncmp(key, pa->pa_state[i], n) == 0 &&
			    *name != '\0' && strchr(name, '/') == NULL &&
			    strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
				break;
		}
		if (i == pa->pa_nstate)
			goto bad;
		pa->pa_seed = xreallocarray(pa->pa_seed, pa->pa_nseed + 1,
		    sizeof(*pa->pa_seed));
		pa->pa_seed[pa->pa_nseed].ps_state = i;
		pa->pa_seed[pa->pa_nseed].ps_name = xstrdup(name);
		pa->pa_seed[pa->pa_nseed++].ps_text =
		    xstrdup(json_string_value(v));
	}
	return 0;
bad:
	*cause = xstrdup("seed: an object of at most 16 files, each \"~/"
	    "NAME/FILE\" in a \"state\" folder, its text a string of at "
	    "most 64 KiB");
	return -1;
}

/* The members of profile root but "policy" into pa: 0, or -1, *cause. */
static int
policy_agent_members(struct pagent *pa, json_t *root, char **cause)
{
	static const char *const keys[] = { "version", "agent", "about",
	    "base_url", "state", "state_env", "seed", "hints", "policy" };
	const char	*key;
	json_t		*v, *h;
	size_t		 i;

	json_object_foreach(root, key, v) {
		for (i = 0; i < nitems(keys); i++)
			if (strcmp(key, keys[i]) == 0)
				break;
		if (i == nitems(keys)) {
			xasprintf(cause, "unknown key \"%s\" (the keys are "
			    "version, agent, about, base_url, state, "
			    "state_env, seed, hints and policy)", key);
			return -1;
		}
	}
	if (json_integer_value(json_object_get(root, "version")) != 1 ||
	    !json_is_string(json_object_get(root, "agent")) ||
	    !json_is_string(json_object_get(root, "about")) ||
	    !json_is_object(json_object_get(root, "policy"))) {
		*cause = xstrdup("needs \"version\": 1, \"agent\" and "
		    "\"about\" (strings) and \"policy\" (an object)");
		return -1;
	}
	pa->pa_name = xstrdup(json_string_value(json_object_get(root,
	    "agent")));
	pa->pa_about = xstrdup(json_string_value(json_object_get(root,
	    "about")));
	if ((v = json_object_get(root, "state")) != NULL &&
	    policy_agent_strings(v, 16, &pa->pa_state, &pa->pa_nstate) == -1) {
		*cause = xstrdup("state: an array of at most 16 paths");
		return -1;
	}
	for (i = 0; i < pa->pa_nstate; i++)
		if (strncmp(pa->pa_state[i], "~/", 2) != 0 ||
		    strlen(pa->pa_state[i]) < 4 ||
		    pa->pa_state[i][strlen(pa->pa_state[i]) - 1] != '/') {
			xasprintf(cause, "state[%zu]: a folder below the home, "
			    "\"~/NAME/\"", i);
			return -1;
		}
	if ((v = json_object_get(root, "state_env")) != NULL &&
	    policy_agent_state_env(pa, v, cause) == -1)
		return -1;
	if ((v = json_object_get(root, "seed")) != NULL &&
	    policy_agent_seed(pa, v, cause) == -1)
		return -1;
	if ((v = json_object_get(root, "hints")) != NULL) {
		if (!json_is_array(v)) {
			*cause = xstrdup("hints: an array");
			return -1;
		}
		json_array_foreach(v, i, h)
			if (policy_agent_hint(pa, h, i, cause) == -1)
				return -1;
	}
	return 0;
}

/*
 * The host[:port] of an https:// URL (new string), or NULL when url is
 * not one, or names a host in a form a policy does not take.
 */
static char *
policy_agent_url_host(const char *url)
{
	const char	*h;
	size_t		 n, i;

	if (strncmp(url, "https://", 8) != 0)
		return NULL;
	h = url + 8;
	n = strcspn(h, "/?#");
	if (n == 0 || n > 260)
		return NULL;
	for (i = 0; i < n; i++)
		if (!((h[i] >= 'a' && h[i] <= 'z') || (h[i] >= 'A' &&
		    h[i] <= 'Z') || (h[i] >= '0' && h[i] <= '9') ||
		    h[i] == '.' || h[i] == '-' || h[i] == ':'))
			return NULL;
	return xstrndup(h, n);
}

/*
 * "base_url": the variables that name the agent's model API elsewhere
 * (ANTHROPIC_BASE_URL).  When the caller's environment sets one to an
 * https:// URL, that host is added to the profile's policy as its API
 * host is: allowed (on the URL's port), inspected (the first inspect
 * entry's methods, every path), and given each credential, so that the
 * key is filled in there too; one that names an IPv4 address is not
 * (inspection goes by name), and that is said.  0, or -1 with *cause.
 */
static int
policy_agent_base_url(json_t *root, char **cause)
{
	json_t		*vars, *pol, *net, *v, *list, *first, *in, *cr, *copy;
	const char	*val;
	char		*hp, *host;
	size_t		 i, j;

	if ((vars = json_object_get(root, "base_url")) == NULL)
		return 0;
	if (!json_is_array(vars)) {
		*cause = xstrdup("base_url: an array of variable names");
		return -1;
	}
	pol = json_object_get(root, "policy");
	json_array_foreach(vars, i, v) {
		if (!json_is_string(v)) {
			*cause = xstrdup("base_url: an array of variable names");
			return -1;
		}
		if ((val = getenv(json_string_value(v))) == NULL ||
		    (hp = policy_agent_url_host(val)) == NULL)
			continue;
		host = xstrndup(hp, strcspn(hp, ":"));
		/* Inspection goes by name: an address is not followed. */
		if (host[strspn(host, "0123456789.")] == '\0') {
			log_warnx("--agent: %s names an address (%s), not a "
			    "host name: its API is not allowed or given the "
			    "key by the profile", json_string_value(v), host);
			log_warnx("hint: name the gateway by its host name, or "
			    "allow it with --allow-cidr %s/32 and give its "
			    "key in a --policy file's credentials", host);
			free(host);
			free(hp);
			continue;
		}
		if ((net = json_object_get(pol, "network")) == NULL)
			json_object_set_new(pol, "network", net = json_object());
		if ((list = json_object_get(net, "allow")) == NULL)
			json_object_set_new(net, "allow", list = json_array());
		json_array_append_new(list, json_string(hp));
		/* The profile's own API host, on another port: as it is. */
		list = json_object_get(net, "inspect");
		json_array_foreach(list, j, in)
			if (json_is_string(json_object_get(in, "host")) &&
			    strcmp(json_string_value(json_object_get(in,
			    "host")), host) == 0)
				break;
		if (list != NULL && j < json_array_size(list)) {
			free(host);
			free(hp);
			continue;
		}
		if ((first = json_array_get(list, 0)) != NULL) {
			in = json_deep_copy(first);
			json_object_set_new(in, "host", json_string(host));
			json_object_set_new(in, "paths", json_pack("[s]", "/*"));
			json_array_append_new(list, in);
		}
		list = json_object_get(pol, "credentials");
		for (j = 0, cr = json_array_get(list, 0); cr != NULL;
		    cr = json_array_get(list, ++j)) {
			if (json_is_string(json_object_get(cr, "host")) &&
			    strcmp(json_string_value(json_object_get(cr,
			    "host")), host) == 0)
				continue;
			copy = json_deep_copy(cr);
			json_object_set_new(copy, "host", json_string(host));
			json_array_append_new(list, copy);
			if (json_array_size(list) > 64)
				break;
		}
		free(host);
		free(hp);
	}
	return 0;
}

/*
 * Loads profile name: its members into pa (when not NULL; cleared with
 * policy_agent_clear) and its policy as a layer for ctx.  Returns the
 * layer, or NULL with *cause (the known names when there is no such
 * profile).
 */
struct policy *
policy_agent_load(const char *name, const struct policy_ctx *ctx,
    struct pagent *pa, char **cause)
{
	struct pagent	 own;
	struct policy	*p = NULL;
	json_error_t	 jerr;
	json_t		*root;
	const char	*text;
	char		*pol, *from, *why = NULL, *names;
	size_t		 len;

	*cause = NULL;
	if (pa == NULL)
		pa = &own;
	memset(pa, 0, sizeof(*pa));
	xasprintf(&from, "agent profile %s", name);
	if ((text = policy_agent_text(name, &len)) == NULL) {
		names = policy_agent_names();
		xasprintf(cause, "--agent %s: no such profile (the profiles "
		    "are %s)", name, names);
		free(names);
		goto out;
	}
	if ((root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL || !json_is_object(root)) {
		xasprintf(cause, "%s:%d:%d: %s", from, jerr.line, jerr.column,
		    root == NULL ? jerr.text : "not an object");
		json_decref(root);
		goto out;
	}
	if (policy_agent_members(pa, root, &why) == 0 &&
	    policy_agent_base_url(root, &why) == 0) {
		pol = json_dumps(json_object_get(root, "policy"), 0);
		p = policy_load_buffer(pol, strlen(pol), from, ctx, cause);
		free(pol);
	} else
		xasprintf(cause, "%s: %s", from, why);
	json_decref(root);
out:
	free(why);
	free(from);
	if (p == NULL || pa == &own)
		policy_agent_clear(pa);
	return p;
}

/* Frees what policy_agent_load() put in pa. */
void
policy_agent_clear(struct pagent *pa)
{
	size_t	 i, j;

	free(pa->pa_name);
	free(pa->pa_about);
	for (i = 0; i < pa->pa_nstate; i++)
		free(pa->pa_state[i]);
	free(pa->pa_state);
	for (i = 0; i < pa->pa_nhints; i++) {
		free(pa->pa_hints[i].ph_command);
		free(pa->pa_hints[i].ph_text);
		for (j = 0; j < pa->pa_hints[i].ph_nunless; j++)
			free(pa->pa_hints[i].ph_unless[j]);
		free(pa->pa_hints[i].ph_unless);
	}
	free(pa->pa_hints);
	for (i = 0; i < pa->pa_nenv; i++) {
		free(pa->pa_env[i].pe_name);
		free(pa->pa_env[i].pe_path);
	}
	free(pa->pa_env);
	for (i = 0; i < pa->pa_nseed; i++) {
		free(pa->pa_seed[i].ps_name);
		free(pa->pa_seed[i].ps_text);
	}
	free(pa->pa_seed);
	memset(pa, 0, sizeof(*pa));
}

/* The --agent of pl (the last one given), or NULL. */
const char *
policy_agent_of(const struct policy_layers *pl)
{
	const char	*name = NULL;
	size_t		 i;

	for (i = 0; i + 1 < pl->ly_nargs; i += 2)
		if (strcmp(pl->ly_args[i], "--agent") == 0)
			name = pl->ly_args[i + 1];
	return name;
}
