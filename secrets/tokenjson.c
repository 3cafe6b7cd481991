/*
 * tokenjson.c: the agents' login files, JSON, one parser each (the
 * secret_format sk_parse of secrets.c): Claude Code's
 * ~/.claude/.credentials.json and Codex's ~/.codex/auth.json.  The copy
 * keeps the file's shape, each token a placeholder the proxy fills in
 * for its host alone: the access token in the API's Authorization
 * header, the refresh token in the body of a refresh sent to its token
 * endpoint.  The proxy reads that exchange whole
 * (proxy/renew.c): the answer's new tokens become the same placeholders
 * before the sandbox sees it, and the new real ones are written back to
 * the host's file here (sk_renew), refresh tokens rotating.  Pure: text
 * in, text and tokens out.
 */
#include <sys/time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "lib/xmalloc.h"
#include "secrets/secrets.h"

#define TOKENJSON_HELD	"cordon-held-back"

/* Claude Code's token endpoint, where its refresh token goes. */
#define CLAUDE_TOKEN_HOST	"platform.claude.com"
#define CLAUDE_TOKEN_PATH	"/v1/oauth/token"

/*
 * Copies the string member key of from, when there, into to as a
 * placeholder the proxy fills in for host: in a header (value format),
 * or with path in the body of a POST there, as OAuth's member (which a
 * refresh renews; NULL: never).
 */
static void
tokenjson_take(struct secrets_out *so, json_t *to, const json_t *from,
    const char *key, const char *host, const char *format, const char *path,
    const char *member)
{
	const char	*ph;
	json_t		*s;

	if ((s = json_object_get(from, key)) == NULL || !json_is_string(s))
		return;
	if ((ph = secrets_take_login(so, host, format, path, member,
	    json_string_value(s), json_string_length(s))) == NULL)
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
 * refresh token one for the body of a refresh at platform.claude.com;
 * every other member (MCP servers' tokens, "mcpOAuth") is left out.
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
		    "api.anthropic.com", "Bearer %s", NULL, "access_token");
		tokenjson_take(so, login, oauth, "refreshToken",
		    CLAUDE_TOKEN_HOST, "%s", CLAUDE_TOKEN_PATH,
		    "refresh_token");
		tokenjson_keep(login, oauth, plain);
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
 * Claude Code's login file text (len bytes) with a refresh's new tokens
 * (OAuth's names and values, n of them) in claudeAiOauth, and expiresAt
 * expires_in seconds from now (-1: kept); every other member kept.
 * Returns the new text (caller wipes), or NULL with *cause.
 */
char *
tokenjson_claude_renew(const char *text, size_t len,
    const char *const *names, const char *const *values, size_t n,
    long long expires_in, char **cause)
{
	struct timeval	 now;
	json_t		*doc, *oauth;
	char		*out;
	size_t		 i;

	doc = json_loadb(text, len, 0, NULL);
	oauth = json_object_get(doc, "claudeAiOauth");
	if (!json_is_object(oauth)) {
		xasprintf(cause, "it holds no claudeAiOauth login any more");
		json_decref(doc);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(names[i], "access_token") == 0)
			json_object_set_new(oauth, "accessToken",
			    json_string(values[i]));
		else if (strcmp(names[i], "refresh_token") == 0)
			json_object_set_new(oauth, "refreshToken",
			    json_string(values[i]));
	}
	if (expires_in >= 0) {
		gettimeofday(&now, NULL);
		json_object_set_new(oauth, "expiresAt", json_integer(
		    ((json_int_t)now.tv_sec + expires_in) * 1000 +
		    now.tv_usec / 1000));
	}
	if ((out = json_dumps(doc, JSON_INDENT(2))) == NULL)
		xasprintf(cause, "cannot write it as JSON");
	json_decref(doc);
	return out;
}

/* Codex's token endpoint, where its refresh token goes. */
#define CODEX_TOKEN_HOST	"auth.openai.com"
#define CODEX_TOKEN_PATH	"/oauth/token"

/*
 * ~/.codex/auth.json: {"OPENAI_API_KEY", "tokens": {"id_token",
 * "access_token", "refresh_token", "account_id"}, "last_refresh", ...}.
 * The copy keeps the file's shape: the API key a placeholder for
 * api.openai.com; the ChatGPT login's access token one for chatgpt.com
 * (its backend-api), its refresh token one for the body of a refresh at
 * auth.openai.com, and its id token one for auth.openai.com alone.
 * Codex reads both JWTs' claims (plan, account, expiry) inside, so
 * their placeholders are JWTs with the same claims and a random
 * signature (secrets_take_login).  The account id and the dates are no
 * secret and are kept; any other member is left out.
 */
void
tokenjson_codex(struct secrets_out *so, const char *text, size_t len)
{
	static const char *const known[] = { "OPENAI_API_KEY", "tokens",
	    "last_refresh", "auth_mode", NULL };
	static const char *const plain[] = { "last_refresh", "auth_mode",
	    NULL };
	static const char *const login[] = { "id_token", "access_token",
	    "refresh_token", "account_id", NULL };
	static const char *const login_plain[] = { "account_id", NULL };
	json_t	*doc, *copy, *tokens, *to;

	if ((doc = tokenjson_load(so, text, len)) == NULL) {
		tokenjson_out(so, NULL);
		return;
	}
	copy = json_object();
	json_object_set_new(copy, "OPENAI_API_KEY", json_null());
	tokenjson_take(so, copy, doc, "OPENAI_API_KEY", "api.openai.com",
	    "Bearer %s", NULL, NULL);
	json_object_set_new(copy, "tokens", json_null());
	tokens = json_object_get(doc, "tokens");
	if (json_is_object(tokens)) {
		to = json_object();
		tokenjson_take(so, to, tokens, "id_token", CODEX_TOKEN_HOST,
		    "Bearer %s", NULL, "id_token");
		tokenjson_take(so, to, tokens, "access_token", "chatgpt.com",
		    "Bearer %s", NULL, "access_token");
		tokenjson_take(so, to, tokens, "refresh_token",
		    CODEX_TOKEN_HOST, "%s", CODEX_TOKEN_PATH, "refresh_token");
		tokenjson_keep(to, tokens, login_plain);
		if (tokenjson_more(tokens, login))
			secrets_left(so->sx_sf, "the login's other members");
		json_object_set_new(copy, "tokens", to);
	} else if (tokens != NULL && !json_is_null(tokens))
		secrets_left(so->sx_sf, "the ChatGPT login (tokens is not an "
		    "object)");
	tokenjson_keep(copy, doc, plain);
	if (tokenjson_more(doc, known))
		secrets_left(so->sx_sf, "its other members");
	tokenjson_out(so, copy);
	json_decref(copy);
	json_decref(doc);
}

/*
 * Codex's login file text (len bytes) with a refresh's new tokens
 * (OAuth's names and values, n of them) in "tokens", and last_refresh
 * now, as Codex writes it; every other member kept.  expires_in is not
 * kept: Codex reads the expiry from the access token.  Returns the new
 * text (caller wipes), or NULL with *cause.
 */
char *
tokenjson_codex_renew(const char *text, size_t len,
    const char *const *names, const char *const *values, size_t n,
    long long expires_in, char **cause)
{
	struct timeval	 now;
	struct tm	 tm;
	json_t		*doc, *tokens;
	char		*out, date[64];
	size_t		 i;

	(void)expires_in;
	doc = json_loadb(text, len, 0, NULL);
	tokens = json_object_get(doc, "tokens");
	if (!json_is_object(tokens)) {
		xasprintf(cause, "it holds no ChatGPT login any more");
		json_decref(doc);
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (strcmp(names[i], "id_token") == 0 ||
		    strcmp(names[i], "access_token") == 0 ||
		    strcmp(names[i], "refresh_token") == 0)
			json_object_set_new(tokens, names[i],
			    json_string(values[i]));
	gettimeofday(&now, NULL);
	gmtime_r(&now.tv_sec, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(date + strlen(date), sizeof(date) - strlen(date),
	    ".%06ldZ", (long)now.tv_usec);
	json_object_set_new(doc, "last_refresh", json_string(date));
	if ((out = json_dumps(doc, JSON_INDENT(2))) == NULL)
		xasprintf(cause, "cannot write it as JSON");
	json_decref(doc);
	return out;
}
