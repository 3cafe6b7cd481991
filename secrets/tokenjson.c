/*
 * tokenjson.c: the agents' login files, JSON, one parser each (the
 * secret_format sk_parse of secrets.c): Claude Code's
 * ~/.claude/.credentials.json and Codex's ~/.codex/auth.json.  The copy
 * keeps the file's shape, the access token a placeholder the proxy fills
 * in for the agent's API alone.  A refresh token is never in the copy:
 * the proxy puts tokens in headers, and a refresh sends it in a body, so
 * a refresh inside fails, and its answer (a new real token) could not be
 * kept out of the sandbox anyway.  Said through secrets_left(), with
 * what to do: refresh on the host.  Pure: text in, text and tokens out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "secrets.h"
#include "xmalloc.h"

#define TOKENJSON_HELD	"cordon-held-back"

/*
 * Copies the string member key of from, when there, into to as a
 * placeholder the proxy fills in for host (header value format).
 */
static void
tokenjson_take(struct secrets_out *so, json_t *to, const json_t *from,
    const char *key, const char *host, const char *format)
{
	const char	*ph;
	json_t		*s;

	if ((s = json_object_get(from, key)) == NULL || !json_is_string(s))
		return;
	if ((ph = secrets_take(so, host, NULL, format, json_string_value(s),
	    json_string_length(s))) == NULL)
		ph = TOKENJSON_HELD;
	json_object_set_new(to, key, json_string(ph));
}

/*
 * Copies the members of from that keys names and that hold no secret
 * (a date, scopes, a plan) into to, as they are.
 */
static void
tokenjson_keep(json_t *to, json_t *from, const char *const *keys)
{
	json_t	*v;

	for (; *keys != NULL; keys++)
		if ((v = json_object_get(from, *keys)) != NULL)
			json_object_set(to, *keys, v);
}

/* Whether from has a member that is not one of keys. */
static bool
tokenjson_more(json_t *from, const char *const *keys)
{
	const char		*key;
	const char *const	*k;
	json_t			*v;

	json_object_foreach(from, key, v) {
		for (k = keys; *k != NULL; k++)
			if (strcmp(*k, key) == 0)
				break;
		if (*k == NULL)
			return true;
	}
	return false;
}

/* Writes doc, the copy, to the output; a file that does not parse is "{}". */
static void
tokenjson_out(struct secrets_out *so, json_t *doc)
{
	char	*text;

	text = doc != NULL ? json_dumps(doc, JSON_INDENT(2)) : NULL;
	fprintf(so->sx_f, "%s\n", text != NULL ? text : "{}");
	if (text != NULL) {
		explicit_bzero(text, strlen(text));
		free(text);
	}
}

/* Parses text as a JSON object, or says it left the whole file out. */
static json_t *
tokenjson_load(struct secrets_out *so, const char *text, size_t len)
{
	json_t	*doc;

	if ((doc = json_loadb(text, len, 0, NULL)) != NULL &&
	    json_is_object(doc))
		return doc;
	json_decref(doc);
	secrets_left(so->sx_sf, "the whole file (not a JSON object)");
	return NULL;
}

/*
 * ~/.claude/.credentials.json: {"claudeAiOauth": {"accessToken",
 * "refreshToken", "expiresAt", ...}, ...}.  The copy holds the login
 * alone, its access token a placeholder for api.anthropic.com, its
 * refresh token held back; every other member (MCP servers' tokens,
 * "mcpOAuth") is left out.
 */
void
tokenjson_claude(struct secrets_out *so, const char *text, size_t len)
{
	static const char *const top[] = { "claudeAiOauth", NULL };
	static const char *const plain[] = { "expiresAt", "scopes",
	    "subscriptionType", "rateLimitTier", NULL };
	static const char *const all[] = { "accessToken", "refreshToken",
	    "expiresAt", "scopes", "subscriptionType", "rateLimitTier", NULL };
	json_t	*doc, *copy, *oauth, *login;

	if ((doc = tokenjson_load(so, text, len)) == NULL) {
		tokenjson_out(so, NULL);
		return;
	}
	copy = json_object();
	oauth = json_object_get(doc, "claudeAiOauth");
	if (json_is_object(oauth)) {
		login = json_object();
		tokenjson_take(so, login, oauth, "accessToken",
		    "api.anthropic.com", "Bearer %s");
		tokenjson_keep(login, oauth, plain);
		if (json_object_get(oauth, "refreshToken") != NULL) {
			json_object_set_new(login, "refreshToken",
			    json_string(TOKENJSON_HELD));
			secrets_left(so->sx_sf, "the refresh token: a refresh "
			    "inside fails; when the login expires, run claude "
			    "once on the host");
		}
		if (tokenjson_more(oauth, all))
			secrets_left(so->sx_sf, "the login's other members");
		json_object_set_new(copy, "claudeAiOauth", login);
	}
	if (tokenjson_more(doc, top))
		secrets_left(so->sx_sf, "every member but claudeAiOauth (MCP "
		    "servers' tokens and the like)");
	tokenjson_out(so, copy);
	json_decref(copy);
	json_decref(doc);
}

/*
 * ~/.codex/auth.json: {"OPENAI_API_KEY", "tokens": {"id_token",
 * "access_token", "refresh_token", "account_id"}, ...}.  The copy holds
 * the API key alone, a placeholder for api.openai.com; the ChatGPT
 * login's tokens are left out whole (its id_token is read inside as a
 * JWT, and can be exchanged for a key), "tokens" null.
 */
void
tokenjson_codex(struct secrets_out *so, const char *text, size_t len)
{
	static const char *const known[] = { "OPENAI_API_KEY", "tokens",
	    "last_refresh", NULL };
	json_t	*doc, *copy, *tokens;

	if ((doc = tokenjson_load(so, text, len)) == NULL) {
		tokenjson_out(so, NULL);
		return;
	}
	copy = json_object();
	json_object_set_new(copy, "OPENAI_API_KEY", json_null());
	tokenjson_take(so, copy, doc, "OPENAI_API_KEY", "api.openai.com",
	    "Bearer %s");
	json_object_set_new(copy, "tokens", json_null());
	tokens = json_object_get(doc, "tokens");
	if (tokens != NULL && !json_is_null(tokens))
		secrets_left(so->sx_sf, "the ChatGPT login's tokens: log in "
		    "with an API key (OPENAI_API_KEY) inside");
	if (tokenjson_more(doc, known))
		secrets_left(so->sx_sf, "its other members");
	tokenjson_out(so, copy);
	json_decref(copy);
	json_decref(doc);
}
