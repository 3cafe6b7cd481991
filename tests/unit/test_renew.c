/*
 * test_renew.c: a login's token refresh from inside (proxy/renew.c):
 * which requests it takes, the real refresh token put in the request's
 * body, the answer's new real tokens taken out and the phantoms
 * renewed, and the answers that must not reach the sandbox.
 */
#include <sys/types.h>

#include <stdbool.h>

#include <event2/buffer.h>

#include "unit.h"

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"

#define FILE_NAME	"~/.claude/.credentials.json"
#define PH_ACCESS	PHANTOM_PREFIX "0123456789abcdef0123456789abcdef"
#define PH_REFRESH	PHANTOM_PREFIX "fedcba9876543210fedcba9876543210"
#define PH_OTHER	PHANTOM_PREFIX "00000000000000000000000000000000"

/* What the hook heard. */
static char		*heard_file;
static long long	 heard_expires;
static int		 heard;

static void
hook_renewed(const char *file, const struct phantom *ph, size_t n,
    long long expires_in, void *arg)
{
	(void)ph;
	(void)n;
	(void)arg;
	free(heard_file);
	heard_file = xstrdup(file);
	heard_expires = expires_in;
	heard++;
}

static const struct proxy_hooks hooks = { .hk_renewed = hook_renewed };

/* One phantom of ph for host. */
static void
phantom(struct phantom *ph, const char *host, const char *file,
    const char *member, const char *placeholder, const char *value)
{
	char	*cause;

	if (policy_parse_pattern(host, &ph->ph_host, &cause) == -1)
		fail_msg("%s", cause);
	ph->ph_file = xstrdup(file);
	ph->ph_member = member != NULL ? xstrdup(member) : NULL;
	ph->ph_format = xstrdup(member != NULL &&
	    strcmp(member, "refresh_token") == 0 ? "%s" : "Bearer %s");
	ph->ph_placeholder = xstrdup(placeholder);
	ph->ph_value = xstrdup(value);
}

/*
 * A proxy with a login's two phantoms (the access token for api.test,
 * the refresh token for the endpoint /oauth/token at auth.test) and a
 * token file's for api.test.
 */
static void
proxy_setup(struct proxy *px)
{
	memset(px, 0, sizeof(*px));
	px->px_phantoms = xcalloc(3, sizeof(*px->px_phantoms));
	px->px_nphantoms = 3;
	phantom(&px->px_phantoms[0], "api.test", FILE_NAME, "access_token",
	    PH_ACCESS, "real-access");
	px->px_phantoms[0].ph_header = xstrdup("Authorization");
	phantom(&px->px_phantoms[1], "auth.test", FILE_NAME, "refresh_token",
	    PH_REFRESH, "real-refresh");
	px->px_phantoms[1].ph_path = xstrdup("/oauth/token");
	phantom(&px->px_phantoms[2], "api.test", "~/.netrc", NULL, PH_OTHER,
	    "real-other");
	px->px_phantoms[2].ph_header = xstrdup("Authorization");
	px->px_hooks = &hooks;
	heard = 0;
}

static void
proxy_teardown(struct proxy *px)
{
	proxy_phantoms_free(px->px_phantoms, px->px_nphantoms);
	free(heard_file);
	heard_file = NULL;
}

/* The head of the request text parsed into req; its length. */
static size_t
parse_req(const char *text, struct http_request *req)
{
	size_t	 used;
	int	 status;
	char	*cause;

	if (http_request_parse_origin(text, strlen(text), 443, req, &used,
	    &status, &cause) != HTTP_PARSE_OK)
		fail_msg("%s", text);
	return used;
}

/* The request text (head and body) parsed into req, its body into r. */
static void
request(struct renew *r, struct http_request *req, const char *text)
{
	struct http_body	 hb;
	struct evbuffer		*in;
	size_t			 used = parse_req(text, req);
	bool			 done;

	http_body_init(&hb, req->hr_body, req->hr_length);
	in = evbuffer_new();
	evbuffer_add(in, text + used, strlen(text) - used);
	assert_int_equal(renew_collect(r, false, &hb, in, &done), 0);
	assert_true(done);
	evbuffer_free(in);
	renew_request(r, req);
}

/* What renew_new makes of a request head of method to path on host. */
static struct renew *
taken(struct proxy *px, const char *method, const char *path,
    const char *host, bool inspected)
{
	struct http_request	 req;
	struct renew		*r;
	char			*text;

	xasprintf(&text, "%s %s HTTP/1.1\r\nHost: %s\r\n\r\n", method, path,
	    host);
	parse_req(text, &req);
	r = renew_new(px, &req, host, inspected);
	http_request_clear(&req);
	free(text);
	return r;
}

/* The body of r's request or answer, as a string (caller frees). */
static char *
body(struct renew *r, bool answer)
{
	struct evbuffer	*b = renew_body(r, answer);
	size_t		 len = evbuffer_get_length(b);
	char		*s = xmalloc(len + 1);

	memcpy(s, evbuffer_pullup(b, -1), len);
	s[len] = '\0';
	return s;
}

/* The value of header name in the n headers at h, or NULL. */
static const char *
header(const struct http_header *h, size_t n, const char *name)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcasecmp(h[i].hh_name, name) == 0)
			return h[i].hh_value;
	return NULL;
}

/*
 * The answer text, a step bytes at a time, through r: 0 with *got (the
 * body the sandbox gets, caller frees) and *resp, or -1 with *cause.
 */
static int
answer(struct renew *r, const char *text, size_t step,
    struct http_response *resp, char **got, char **cause)
{
	struct http_body	 hb;
	struct evbuffer		*in;
	size_t			 used, i, n, len = strlen(text);
	char			*hint;
	bool			 done = false;
	int			 rc;

	*got = NULL;
	if (http_response_parse(text, len, "POST", resp, &used, cause) !=
	    HTTP_PARSE_OK)
		fail_msg("%s", text);
	if (renew_head(r, resp, cause, &hint) == -1) {
		free(hint);
		return -1;
	}
	http_body_init(&hb, resp->hs_body, resp->hs_length);
	in = evbuffer_new();
	for (i = used; i < len && !done; i += n) {
		n = len - i < step ? len - i : step;
		evbuffer_add(in, text + i, n);
		assert_int_equal(renew_collect(r, true, &hb, in, &done), 0);
	}
	evbuffer_free(in);
	assert_true(done);
	if ((rc = renew_answer(r, resp, cause, &hint)) == 0)
		*got = body(r, true);
	else
		free(hint);
	return rc;
}

static void
test_renew_which(void **state)
{
	struct proxy	 px;
	struct renew	*r;

	(void)state;
	proxy_setup(&px);
	/* A POST to the refresh token's endpoint, inspected: taken. */
	assert_non_null(r = taken(&px, "POST", "/oauth/token", "auth.test",
	    true));
	renew_free(r);
	assert_non_null(r = taken(&px, "POST", "/oauth/token?x=1",
	    "auth.test", true));
	renew_free(r);
	/* Anything else goes through as any request does. */
	assert_null(taken(&px, "POST", "/oauth/token", "auth.test", false));
	assert_null(taken(&px, "GET", "/oauth/token", "auth.test", true));
	assert_null(taken(&px, "POST", "/oauth/token/x", "auth.test", true));
	assert_null(taken(&px, "POST", "/oauth/tokens", "auth.test", true));
	assert_null(taken(&px, "POST", "/oauth/token", "api.test", true));
	assert_null(taken(&px, "POST", "/oauth/token", "evil.test", true));
	proxy_teardown(&px);
}

static void
test_renew_request(void **state)
{
	struct proxy		 px;
	struct http_request	 req;
	struct renew		*r;
	char			*got;

	(void)state;
	proxy_setup(&px);
	/* The placeholder in refresh_token: the real token, there alone. */
	r = taken(&px, "POST", "/oauth/token", "auth.test", true);
	request(r, &req, "POST /oauth/token HTTP/1.1\r\nHost: auth.test\r\n"
	    "Transfer-Encoding: chunked\r\nAccept-Encoding: gzip\r\n\r\n"
	    "20\r\n{\"grant_type\": \"refresh_token\", \r\n"
	    "44\r\n\"refresh_token\": \"" PH_REFRESH "\", \r\n"
	    "37\r\n\"x\": \"" PH_ACCESS "\"}\r\n0\r\n\r\n");
	got = body(r, false);
	assert_string_equal(got, "{\"grant_type\":\"refresh_token\","
	    "\"refresh_token\":\"real-refresh\",\"x\":\"" PH_ACCESS "\"}");
	assert_int_equal(req.hr_body, HTTP_BODY_LENGTH);
	assert_int_equal(req.hr_length, strlen(got));
	assert_null(header(req.hr_headers, req.hr_nheaders,
	    "Transfer-Encoding"));
	assert_int_equal(atoi(header(req.hr_headers, req.hr_nheaders,
	    "Content-Length")), strlen(got));
	assert_string_equal(header(req.hr_headers, req.hr_nheaders,
	    "Accept-Encoding"), "identity");
	free(got);
	http_request_clear(&req);
	renew_free(r);

	/* Not the placeholder there, or not JSON: as it came. */
	r = taken(&px, "POST", "/oauth/token", "auth.test", true);
	request(r, &req, "POST /oauth/token HTTP/1.1\r\nHost: auth.test\r\n"
	    "Content-Length: 86\r\n\r\n"
	    "grant_type=refresh_token&refresh_token=" PH_REFRESH);
	got = body(r, false);
	assert_string_equal(got, "grant_type=refresh_token&refresh_token="
	    PH_REFRESH);
	assert_int_equal(req.hr_length, 86);
	free(got);
	http_request_clear(&req);
	renew_free(r);
	proxy_teardown(&px);
}

/* A refresh whose request carried the real token; its renew. */
static struct renew *
filled(struct proxy *px)
{
	struct http_request	 req;
	struct renew		*r;

	r = taken(px, "POST", "/oauth/token", "auth.test", true);
	request(r, &req, "POST /oauth/token HTTP/1.1\r\nHost: auth.test\r\n"
	    "Content-Length: 68\r\n\r\n"
	    "{\"refresh_token\": \"" PH_REFRESH "\"}");
	http_request_clear(&req);
	return r;
}

static void
test_renew_answer(void **state)
{
	static const size_t	 steps[] = { 1, 3, 4096 };
	struct proxy		 px;
	struct http_response	 resp;
	struct renew		*r;
	char			*got, *cause;
	size_t			 i;

	(void)state;
	for (i = 0; i < nitems(steps); i++) {
		proxy_setup(&px);
		r = filled(&px);
		memset(&resp, 0, sizeof(resp));
		assert_int_equal(answer(r, "HTTP/1.1 200 OK\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n"
		    "1f\r\n{\"access_token\": \"new-access\", \r\n"
		    "41\r\n\"refresh_token\": \"new-refresh\", \"expires_in\": "
		    "3600, \"scope\": \"a\"}\r\n0\r\n\r\n", steps[i], &resp,
		    &got, &cause), 0);
		/* The sandbox gets the placeholders, the same as before. */
		assert_string_equal(got, "{\"access_token\":\"" PH_ACCESS "\","
		    "\"refresh_token\":\"" PH_REFRESH "\",\"expires_in\":3600,"
		    "\"scope\":\"a\"}");
		assert_int_equal(resp.hs_body, HTTP_BODY_LENGTH);
		assert_int_equal(resp.hs_length, strlen(got));
		assert_null(header(resp.hs_headers, resp.hs_nheaders,
		    "Transfer-Encoding"));
		/* The proxy fills in the new real ones from now on. */
		assert_string_equal(px.px_phantoms[0].ph_value, "new-access");
		assert_string_equal(px.px_phantoms[1].ph_value, "new-refresh");
		assert_string_equal(px.px_phantoms[2].ph_value, "real-other");
		assert_int_equal(heard, 1);
		assert_string_equal(heard_file, FILE_NAME);
		assert_int_equal(heard_expires, 3600);
		free(got);
		http_response_clear(&resp);
		renew_free(r);
		proxy_teardown(&px);
	}

	/* An answer without a new refresh token renews the access token. */
	proxy_setup(&px);
	r = filled(&px);
	memset(&resp, 0, sizeof(resp));
	assert_int_equal(answer(r, "HTTP/1.1 200 OK\r\nContent-Length: 25\r\n"
	    "\r\n{\"access_token\": \"new-a\"}", 4096, &resp, &got, &cause),
	    0);
	assert_string_equal(got, "{\"access_token\":\"" PH_ACCESS "\"}");
	assert_string_equal(px.px_phantoms[0].ph_value, "new-a");
	assert_string_equal(px.px_phantoms[1].ph_value, "real-refresh");
	assert_int_equal(heard_expires, -1);
	free(got);
	http_response_clear(&resp);
	renew_free(r);

	/* A refusal (invalid_grant) goes as it came: nothing renewed. */
	r = filled(&px);
	memset(&resp, 0, sizeof(resp));
	heard = 0;
	assert_int_equal(answer(r, "HTTP/1.1 400 Bad\r\nContent-Length: 26\r\n"
	    "\r\n{\"error\": \"invalid_grant\"}", 4096, &resp, &got, &cause),
	    0);
	assert_string_equal(got, "{\"error\": \"invalid_grant\"}");
	assert_int_equal(heard, 0);
	assert_string_equal(px.px_phantoms[0].ph_value, "new-a");
	free(got);
	http_response_clear(&resp);
	renew_free(r);
	proxy_teardown(&px);
}

/* Fails an answer text to a refresh that carried the real token. */
static void
refused(const char *text, const char *why, bool fill)
{
	struct proxy		 px;
	struct http_request	 req;
	struct http_response	 resp;
	struct renew		*r;
	char			*got, *cause;

	proxy_setup(&px);
	if (fill)
		r = filled(&px);
	else {
		r = taken(&px, "POST", "/oauth/token", "auth.test", true);
		request(r, &req, "POST /oauth/token HTTP/1.1\r\n"
		    "Host: auth.test\r\nContent-Length: 2\r\n\r\n{}");
		http_request_clear(&req);
	}
	memset(&resp, 0, sizeof(resp));
	if (answer(r, text, 4096, &resp, &got, &cause) == 0)
		fail_msg("passed: %s", text);
	assert_contains(cause, why);
	/* Nothing renewed. */
	assert_string_equal(px.px_phantoms[0].ph_value, "real-access");
	assert_string_equal(px.px_phantoms[1].ph_value, "real-refresh");
	assert_int_equal(heard, 0);
	free(cause);
	http_response_clear(&resp);
	renew_free(r);
	proxy_teardown(&px);
}

static void
test_renew_refused(void **state)
{
	(void)state;
	refused("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n<html>hi!",
	    "is not a JSON object", true);
	refused("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
	    "Content-Length: 3\r\n\r\nabc", "is coded or has no length", true);
	refused("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{}",
	    "is coded or has no length", true);
	/* A real value where no placeholder can go: an echo, a new token. */
	refused("HTTP/1.1 200 OK\r\nContent-Length: 48\r\n\r\n"
	    "{\"access_token\": \"new-n\", \"was\": \"real-refresh\"}",
	    "holds a real token", true);
	refused("HTTP/1.1 200 OK\r\nContent-Length: 51\r\n\r\n"
	    "{\"access_token\": \"n-a\", \"debug\": \"token n-a given\"}",
	    "holds a real token", true);
	/* A request the proxy did not fill: an echo of one still fails. */
	refused("HTTP/1.1 400 Bad\r\nContent-Length: 19\r\n\r\n"
	    "{\"e\": \"real-other\"}", "holds a real token", false);
}

/* JWTs: {"alg":"RS256"} and {"exp":1} or {"exp":2}, signed. */
#define JWT_HEAD	"eyJhbGciOiJSUzI1NiJ9."
#define JWT_OLD		JWT_HEAD "eyJleHAiOjF9.b2xkLXNpZ25hdHVyZQ"
#define JWT_NEW		JWT_HEAD "eyJleHAiOjJ9.bmV3LXNpZ25hdHVyZQ"
#define JWT_OLD_PH	JWT_HEAD "eyJleHAiOjF9.cGxhY2Vob2xkZXItMQ"

/*
 * A JWT's phantom renewed: the sandbox gets a placeholder made of the
 * new token (its claims, a signature of its own), the proxy fills that
 * one in from then on, and the copy's one still, which an agent that
 * could not store the new one sends; the real signatures never show.
 */
/*
 * A request to api.test carrying placeholder ph is pinned as the run's
 * and gets the newest real token, JWT_NEW (of px's three phantoms).
 */
static void
assert_jwt_fills(struct proxy *px, const char *ph)
{
	struct http_request	 req;
	char			*text, *where, *warning;

	xasprintf(&text, "GET / HTTP/1.1\r\nHost: api.test\r\n"
	    "Authorization: Bearer %s\r\n\r\n", ph);
	parse_req(text, &req);
	assert_int_equal(pin_classify(&req, px->px_phantoms, 3, NULL,
	    "api.test", true, &where), PIN_PHANTOM);
	assert_int_equal(inspect_phantom_apply(&req, px->px_phantoms, 3,
	    "api.test", true, &warning), 1);
	assert_null(warning);
	assert_string_equal(header(req.hr_headers, req.hr_nheaders,
	    "Authorization"), "Bearer " JWT_NEW);
	http_request_clear(&req);
	free(text);
}

static void
test_renew_jwt(void **state)
{
	struct proxy		 px;
	struct http_response	 resp;
	struct renew		*r;
	const char		*ph;
	char			*got, *cause;

	(void)state;
	proxy_setup(&px);
	free(px.px_phantoms[0].ph_placeholder);
	free(px.px_phantoms[0].ph_value);
	px.px_phantoms[0].ph_placeholder = xstrdup(JWT_OLD_PH);
	px.px_phantoms[0].ph_value = xstrdup(JWT_OLD);
	px.px_phantoms[0].ph_jwt = true;
	r = filled(&px);
	memset(&resp, 0, sizeof(resp));
	assert_int_equal(answer(r, "HTTP/1.1 200 OK\r\nContent-Length: 95\r\n"
	    "\r\n{\"access_token\": \"" JWT_NEW "\", \"refresh_token\": \"r2\"}",
	    4096, &resp, &got, &cause), 0);
	ph = px.px_phantoms[0].ph_placeholder;
	assert_string_equal(px.px_phantoms[0].ph_value, JWT_NEW);
	assert_string_equal(px.px_phantoms[0].ph_was, JWT_OLD_PH);
	assert_int_equal(strlen(ph), strlen(JWT_NEW));
	assert_int_equal(strncmp(ph, JWT_NEW, strlen(JWT_NEW) - 18), 0);
	assert_string_not_equal(ph, JWT_NEW);
	assert_non_null(strstr(got, ph));
	assert_null(strstr(got, "bmV3LXNpZ25hdHVyZQ"));
	assert_null(strstr(got, "r2"));
	free(got);
	http_response_clear(&resp);
	renew_free(r);
	/* Both placeholders are filled in with the new token, and pinned. */
	assert_jwt_fills(&px, ph);
	assert_jwt_fills(&px, JWT_OLD_PH);
	proxy_teardown(&px);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_renew_which),
		cmocka_unit_test(test_renew_request),
		cmocka_unit_test(test_renew_answer),
		cmocka_unit_test(test_renew_jwt),
		cmocka_unit_test(test_renew_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
