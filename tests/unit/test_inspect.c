/*
 * test_inspect.c: what the proxy does with a request inside an inspected
 * tunnel: origin-form heads, the path as the rules see it, the method and
 * path rules, and the phantom credentials.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdbool.h>

#include <event2/buffer.h>

#include "unit.h"

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"

#define END	"\r\n\r\n"

static void
parse_ok(const char *in, struct http_request *req)
{
	size_t	 used;
	int	 status, rc;
	char	*cause;

	rc = http_request_parse_origin(in, strlen(in), 443, req, &used,
	    &status, &cause);
	if (rc != HTTP_PARSE_OK)
		fail_msg("%s: %s", in, cause ? cause : "more");
	assert_int_equal(used, strlen(in));
}

static void
parse_bad(const char *in, const char *why)
{
	struct http_request	 req;
	size_t			 used;
	int			 status, rc;
	char			*cause = NULL;

	rc = http_request_parse_origin(in, strlen(in), 443, &req, &used,
	    &status, &cause);
	if (rc != HTTP_PARSE_ERROR)
		fail_msg("accepted: %s", in);
	assert_contains(cause, why);
	free(cause);
}

static void
test_origin_form(void **state)
{
	struct http_request	 req;
	char			*head;
	size_t			 len;

	(void)state;
	parse_ok("GET /a/b?c=d HTTP/1.1\r\nHost: Api.Test" END, &req);
	assert_string_equal(req.hr_host, "Api.Test");
	assert_int_equal(req.hr_port, 443);
	assert_string_equal(req.hr_path, "/a/b?c=d");
	head = http_out_request_head(&req, true, &len);
	/* The default port is not written back. */
	assert_contains(head, "GET /a/b?c=d HTTP/1.1\r\nHost: Api.Test\r\n");
	free(head);
	http_request_clear(&req);

	parse_ok("GET / HTTP/1.1\r\nHost: api.test:8443" END, &req);
	assert_int_equal(req.hr_port, 8443);
	head = http_out_request_head(&req, true, &len);
	assert_contains(head, "Host: api.test:8443\r\n");
	free(head);
	http_request_clear(&req);

	parse_ok("GET / HTTP/1.0\r\nHost: [::1]" END, &req);
	assert_string_equal(req.hr_host, "::1");
	assert_int_equal(req.hr_port, 443);
	http_request_clear(&req);

	parse_bad("GET / HTTP/1.1" END, "no Host header");
	parse_bad("GET / HTTP/1.1\r\nHost: a\r\nHost: a" END, "several Host");
	parse_bad("GET http://a/ HTTP/1.1\r\nHost: a" END, "origin-form");
	parse_bad("OPTIONS * HTTP/1.1\r\nHost: a" END, "origin-form");
	parse_bad("CONNECT a:443 HTTP/1.1\r\nHost: a" END, "CONNECT inside");
	parse_bad("GET /#x HTTP/1.1\r\nHost: a" END, "fragment");
	parse_bad("GET / HTTP/1.1\r\nHost: u@a" END, "user information");
	parse_bad("GET / HTTP/1.1\r\nHost: a:0" END, "port");
}

static void
test_path_normalise(void **state)
{
	static const struct {
		const char	*in;
		const char	*out;	/* NULL: refused */
	} cases[] = {
		{ "/", "/" },
		{ "/repos/org/x?q=/../y", "/repos/org/x" },
		{ "/a%20b", "/a b" },
		{ "/%72epos/org", "/repos/org" },
		{ "/a//b", "/a//b" },
		{ "/a/.b/..c", "/a/.b/..c" },
		{ "/a/./b", NULL },
		{ "/a/../b", NULL },
		{ "/a/..", NULL },
		{ "/.", NULL },
		{ "/a/%2e%2E/b", NULL },
		{ "/a/%2e/b", NULL },
		{ "/a%2fb", NULL },
		{ "/a%5Cb", NULL },
		{ "/a%00b", NULL },
		{ "/a\\b", NULL },
		{ "/a%", NULL },
		{ "/a%4", NULL },
		{ "/a%4?x", NULL },
		{ "/a%zz", NULL },
		{ "a/b", NULL },
		{ "?x", NULL },
		/* Path parameters: "..;" is ".." to Tomcat and Jetty. */
		{ "/repos/myorg/..;/other", NULL },
		{ "/repos/myorg/x;jsessionid=1", NULL },
		{ "/repos/myorg/.%3b/x", NULL },
		{ "/a%3Bb", NULL },
		/* Escaped twice: another path to a server that decodes again. */
		{ "/repos/myorg/..%252f..%252fother", NULL },
		{ "/repos/myorg/%252e%252e/other", NULL },
		{ "/a/%25%32%65%25%32%65/b", NULL },
		{ "/a%255C", NULL },
		{ "/100%25done", "/100%done" },
		{ "/100%25", "/100%" },
		{ "/a%25zz", "/a%zz" },
		/* Overlong and invalid UTF-8: C0 AE is '.' to a lax decoder. */
		{ "/repos/myorg/%c0%ae%c0%ae/other", NULL },
		{ "/repos/myorg/%C0%AE%C0%AE%C0%AF", NULL },
		{ "/%e0%80%ae", NULL },
		{ "/%f0%80%80%ae", NULL },
		{ "/%ed%a0%80", NULL },
		{ "/%f4%90%80%80", NULL },
		{ "/%c3", NULL },
		{ "/%c3x", NULL },
		{ "/%80", NULL },
		{ "/%ff", NULL },
		{ "/%c3%a9t%c3%a9", "/\xc3\xa9t\xc3\xa9" },
		{ "/%f0%9f%98%80", "/\xf0\x9f\x98\x80" },
		{ "/%ef%bf%bd", "/\xef\xbf\xbd" },
	};
	size_t	 i;
	char	*out, *cause;
	int	 rc;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		rc = http_path_normalise(cases[i].in, &out, &cause);
		if (cases[i].out == NULL) {
			if (rc != -1)
				fail_msg("%s: accepted as "
				    "%s", cases[i].in, out);
			assert_non_null(cause);
			free(cause);
			continue;
		}
		if (rc != 0)
			fail_msg("%s: %s", cases[i].in, cause);
		assert_string_equal(out, cases[i].out);
		free(out);
	}
}

/* A policy from JSON text, or the test fails. */
static struct policy *
policy_of(const char *text)
{
	struct policy_ctx	 ctx;
	struct policy		*p;
	char			*cause = NULL;

	memset(&ctx, 0, sizeof(ctx));
	ctx.pc_workspace = ctx.pc_home = ctx.pc_dir = "/";
	if ((p = policy_load_buffer(text, strlen(text), "test.json", &ctx,
	    &cause)) == NULL)
		fail_msg("%s", cause);
	return p;
}

static void
test_inspect_rules(void **state)
{
	static const struct {
		const char	*head;
		int		 status;	/* 0: allowed */
		const char	*why;
	} cases[] = {
		{ "GET /repos/org/x HTTP/1.1", 0, NULL },
		{ "HEAD /repos/org/ HTTP/1.1", 0, NULL },
		{ "GET /user HTTP/1.1", 0, NULL },
		{ "GET /user?x=1 HTTP/1.1", 0, NULL },
		{ "GET /repos/org HTTP/1.1", 403, "path /repos/org is not" },
		{ "GET /users HTTP/1.1", 403, "path /users" },
		{ "GET /repos/org/../other HTTP/1.1", 400, "segment" },
		{ "GET /repos/org%2f..%2fother HTTP/1.1", 400, "escaped" },
		{ "GET /repos/other/x HTTP/1.1", 403, "not among the paths" },
		{ "GET /repos/org/..;/other HTTP/1.1", 400, "';'" },
		{ "GET /repos/org/x;a=..%2f HTTP/1.1", 400, "escaped" },
		{ "GET /repos/org/..%252fother HTTP/1.1", 400, "twice" },
		{ "GET /repos/org/%c0%ae%c0%ae/x HTTP/1.1", 400, "UTF-8" },
		{ "POST /repos/org/x HTTP/1.1", 403, "method POST" },
		{ "get /repos/org/x HTTP/1.1", 403, "method get" },
		/* Method overrides: only to a method the entry allows. */
		{ "GET /repos/org/x HTTP/1.1\r\nX-HTTP-Method-Override: DELETE",
		    403, "header X-HTTP-Method-Override asks the server for "
		    "method \"DELETE\"" },
		{ "GET /repos/org/x HTTP/1.1\r\nx-http-method: PUT", 403,
		    "header X-HTTP-Method asks" },
		{ "GET /repos/org/x HTTP/1.1\r\nX-METHOD-OVERRIDE: POST", 403,
		    "header X-Method-Override asks" },
		{ "GET /repos/org/x HTTP/1.1\r\nX-HTTP-Method-Override: get",
		    403, "\"get\"" },
		{ "GET /repos/org/x HTTP/1.1\r\nX-HTTP-Method-Override: "
		    "GET, DELETE", 403, "\"GET, DELETE\"" },
		{ "GET /repos/org/x HTTP/1.1\r\nX-HTTP-Method-Override: GET"
		    "\r\nX-HTTP-Method: DELETE", 403, "X-HTTP-Method asks" },
		{ "GET /repos/org/x HTTP/1.1\r\nX-HTTP-Method-Override: HEAD",
		    0, NULL },
		{ "HEAD /repos/org/x HTTP/1.1\r\nX-Method-Override: GET", 0,
		    NULL },
		/* A WebSocket's frames are no GET's: WEBSOCKET it is. */
		{ "GET /user HTTP/1.1\r\nUpgrade: websocket\r\n"
		    "Connection: Upgrade", 403, "is judged as method "
		    "WEBSOCKET, which is not among the methods" },
	};
	struct policy		*p;
	const struct pinspect	*in;
	struct http_request	 req;
	char			*head, *why, *hint;
	size_t			 i;
	int			 status;
	bool			 ok, want;

	(void)state;
	p = policy_of("{\"version\":1,\"network\":{\"inspect\":["
	    "{\"host\":\"*.test\",\"methods\":[\"GET\"],\"paths\":[\"/\"]},"
	    "{\"host\":\"api.test\",\"methods\":[\"GET\",\"HEAD\"],"
	    "\"paths\":[\"/repos/org/*\",\"/user\"]}]}}");
	assert_null(policy_match_inspect(p, "test"));
	in = policy_match_inspect(p, "x.api.test");
	assert_string_equal(in->in_host.pi_text, "*.test");
	in = policy_match_inspect(p, "api.test");
	assert_string_equal(in->in_host.pi_text, "api.test");
	for (i = 0; i < nitems(cases); i++) {
		xasprintf(&head, "%s\r\nHost: api.test" END, cases[i].head);
		parse_ok(head, &req);
		ok = inspect_allows(in, &req, &status, &why, &hint);
		want = cases[i].status == 0;
		if (ok != want)
			fail_msg("%s: %s", cases[i].head, ok ? "allowed" : why);
		if (!ok) {
			assert_int_equal(status, cases[i].status);
			assert_contains(why, cases[i].why);
			/* Every refusal names the rule and the fix. */
			assert_non_null(hint);
			assert_contains(hint, "test.json");
		}
		free(why);
		free(hint);
		free(head);
		http_request_clear(&req);
	}
	policy_free(p);
}

static const char *
header_of(const struct http_request *req, const char *name)
{
	size_t	 i;

	for (i = 0; i < req->hr_nheaders; i++)
		if (strcasecmp(req->hr_headers[i].hh_name, name) == 0)
			return req->hr_headers[i].hh_value;
	return NULL;
}

static void
test_phantoms(void **state)
{
	struct phantom		*ph;
	struct http_request	 req;
	char			*cause, *warning;
	const char		*placeholder =
	    PHANTOM_PREFIX "0123456789abcdef0123456789abcdef";

	(void)state;
	ph = xcalloc(1, sizeof(*ph));
	if (policy_parse_pattern("api.test", &ph->ph_host, &cause) == -1)
		fail_msg("%s", cause);
	ph->ph_env = xstrdup("TOKEN");
	ph->ph_header = xstrdup("Authorization");
	ph->ph_format = xstrdup("Bearer %s");
	ph->ph_placeholder = xstrdup(placeholder);
	ph->ph_value = xstrdup("real-secret");

	/* Inspected, the right host, header and shape: filled in. */
	parse_ok("GET / HTTP/1.1\r\nHost: api.test\r\nauthorization: Bearer "
	    PHANTOM_PREFIX "0123456789abcdef0123456789abcdef" END, &req);
	assert_int_equal(inspect_phantom_apply(&req, ph, 1, "api.test", true,
	    &warning), 1);
	assert_null(warning);
	assert_string_equal(header_of(&req, "Authorization"),
	    "Bearer real-secret");
	/* And asks for an answer scrub.c can search. */
	assert_string_equal(header_of(&req, "Accept-Encoding"), "identity");
	http_request_clear(&req);

	/* An Accept-Encoding the client sent is made "identity". */
	parse_ok("GET / HTTP/1.1\r\nHost: api.test\r\nAccept-Encoding: gzip, "
	    "br\r\nAuthorization: Bearer "
	    PHANTOM_PREFIX "0123456789abcdef0123456789abcdef" END, &req);
	assert_int_equal(inspect_phantom_apply(&req, ph, 1, "api.test", true,
	    &warning), 1);
	assert_string_equal(header_of(&req, "Accept-Encoding"), "identity");
	assert_int_equal(req.hr_nheaders, 3);
	http_request_clear(&req);

	/* Not inspected: never, and said. */
	parse_ok("GET / HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer "
	    PHANTOM_PREFIX "0123456789abcdef0123456789abcdef" END, &req);
	assert_int_equal(inspect_phantom_apply(&req, ph, 1, "api.test", false,
	    &warning), 0);
	assert_contains(warning, "placeholder of TOKEN was sent to api.test");
	assert_contains(header_of(&req, "Authorization"), placeholder);
	assert_null(header_of(&req, "Accept-Encoding"));
	free(warning);
	http_request_clear(&req);

	/* Another host. */
	parse_ok("GET / HTTP/1.1\r\nHost: evil.test\r\nAuthorization: Bearer "
	    PHANTOM_PREFIX "0123456789abcdef0123456789abcdef" END, &req);
	assert_int_equal(inspect_phantom_apply(&req, ph, 1, "evil.test", true,
	    &warning), 0);
	assert_contains(warning, "to evil.test in header Authorization");
	free(warning);
	http_request_clear(&req);

	/* Another header, another shape, the target: not replaced. */
	parse_ok("GET /?t=" PHANTOM_PREFIX "0123456789abcdef0123456789abcdef"
	    " HTTP/1.1\r\nHost: api.test\r\nX-Token: "
	    PHANTOM_PREFIX "0123456789abcdef0123456789abcdef\r\n"
	    "Authorization: token "
	    PHANTOM_PREFIX "0123456789abcdef0123456789abcdef" END, &req);
	assert_int_equal(inspect_phantom_apply(&req, ph, 1, "api.test", true,
	    &warning), 0);
	assert_contains(warning, "in the request target");
	assert_contains(warning, "in header X-Token");
	assert_contains(warning, "not in the credential's format");
	assert_null(strstr(header_of(&req, "Authorization"), "real-secret"));
	free(warning);
	http_request_clear(&req);

	/* No placeholder: nothing to say. */
	parse_ok("GET / HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer x"
	    END, &req);
	assert_int_equal(inspect_phantom_apply(&req, ph, 1, "api.test", true,
	    &warning), 0);
	assert_null(warning);
	http_request_clear(&req);
	proxy_phantoms_free(ph, 1);
}

/*
 * Passes the answer text (head and body) through s as the proxy does,
 * the body step bytes at a time; close: the upstream closes after it.
 * Returns what the sandbox gets (caller frees).
 */
static char *
scrub_through(struct scrub *s, const char *text, size_t step, bool close)
{
	struct http_response	 resp;
	struct http_body	 hb;
	struct evbuffer		*in, *out;
	char			*cause, *hint, *head, *got;
	size_t			 len = strlen(text), used, hlen, i, n;
	bool			 done = false;

	in = evbuffer_new();
	out = evbuffer_new();
	memset(&resp, 0, sizeof(resp));
	if (http_response_parse(text, len, "GET", &resp, &used, &cause) !=
	    HTTP_PARSE_OK)
		fail_msg("%s", text);
	if (scrub_head(s, &resp, &cause, &hint) == -1)
		fail_msg("%s", cause);
	head = http_out_response_head(&resp, true, &hlen);
	evbuffer_add(out, head, hlen);
	free(head);
	http_body_init(&hb, resp.hs_body, resp.hs_length);
	for (i = used; i < len; i += n) {
		n = len - i < step ? len - i : step;
		evbuffer_add(in, text + i, n);
		if (scrub_body(s, &hb, in, out, evbuffer_get_length(in),
		    &done) < 0)
			fail_msg("malformed: %s", text);
	}
	assert_int_equal(evbuffer_get_length(in), 0);
	if (close)
		scrub_end(s, out);
	else
		assert_true(done);
	len = evbuffer_get_length(out);
	got = xmalloc(len + 1);
	evbuffer_remove(out, got, len);
	got[len] = '\0';
	evbuffer_free(in);
	evbuffer_free(out);
	http_response_clear(&resp);
	return got;
}

static void
test_scrub(void **state)
{
	static const size_t	 steps[] = { 1, 2, 5, 7, 4096 };
	struct phantom		*ph;
	struct scrub		*s;
	struct http_response	 resp;
	char			*got, *cause, *hint, *warning = NULL;
	size_t			 i, used;
	const char		*coded = "HTTP/1.1 200 OK\r\nContent-Encoding: "
	    "gzip\r\nContent-Length: 3\r\n\r\nabc";

	(void)state;
	ph = xcalloc(2, sizeof(*ph));
	ph[0].ph_env = xstrdup("TOKEN");
	ph[0].ph_placeholder = xstrdup(PHANTOM_PREFIX "0123");
	ph[0].ph_value = xstrdup("real-secret");
	ph[1].ph_env = xstrdup("OTHER");
	ph[1].ph_placeholder = xstrdup(PHANTOM_PREFIX "4567");
	ph[1].ph_value = xstrdup("s3cr");
	/* Nothing to look for: no scrubber. */
	assert_null(scrub_new(ph, 0, true));

	for (i = 0; i < nitems(steps); i++) {
		/* A length-framed body: as long as it came. */
		s = scrub_new(ph, 2, true);
		got = scrub_through(s, "HTTP/1.1 200 real-secret\r\n"
		    "X-Echo: Bearer real-secret, s3cr\r\n"
		    "real-secret: 1\r\nContent-Length: 37\r\n\r\n"
		    "a real-secretreal-secret s3cr real-se", steps[i], false);
		assert_contains(got, "HTTP/1.1 200 " PHANTOM_PREFIX "0123\r\n");
		assert_contains(got, "X-Echo: Bearer " PHANTOM_PREFIX "0123, "
		    PHANTOM_PREFIX "4567\r\n" PHANTOM_PREFIX "0123: 1\r\n");
		/* Under 8 bytes, a part is let through: "real-se". */
		assert_contains(got, "\r\n\r\na ********************** "
		    "**** real-se");
		assert_null(strstr(got, "real-secret"));
		scrub_warn(s, &warning);
		/* Read a few bytes at a time, a value is seen in parts. */
		assert_contains(warning, steps[i] == 4096 ? "the real value "
		    "of TOKEN came back in the answer 5 times; taken out" :
		    "the real value of TOKEN came back in the answer ");
		assert_contains(warning, "the real value of OTHER came back "
		    "in the answer 2 times; taken out");
		free(warning);
		warning = NULL;
		scrub_free(s);
		free(got);

		/* Chunked: a value cut across chunks, and in a trailer. */
		s = scrub_new(ph, 2, true);
		got = scrub_through(s, "HTTP/1.1 200 OK\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n5;x=y\r\nreal-\r\n2\r\nse\r\n"
		    "4\r\ncret\r\n0\r\nX-T: real-secret\r\n\r\n", steps[i],
		    false);
		assert_null(strstr(got, "real-secret"));
		assert_null(strstr(got, "cret"));
		assert_null(strstr(got, "X-T"));
		/* Our own chunks: whole when read all at once. */
		if (steps[i] == 4096)
			assert_contains(got, "\r\n\r\nb\r\n***********\r\n"
			    "0\r\n\r\n");
		assert_contains(got + strlen(got) - 7, "\r\n0\r\n\r\n");
		scrub_free(s);
		free(got);

		/* Close-delimited: what is held back goes out at the end. */
		s = scrub_new(ph, 2, false);
		got = scrub_through(s, "HTTP/1.1 200 OK\r\n\r\nxxreal-secret"
		    "yreal-sec", steps[i], true);
		assert_contains(got, "\r\n\r\nxx***********y********");
		scrub_free(s);
		free(got);
	}

	/* A coded answer to a request that carried a real value. */
	s = scrub_new(ph, 2, true);
	memset(&resp, 0, sizeof(resp));
	assert_int_equal(http_response_parse(coded, strlen(coded), "GET",
	    &resp, &used, &cause), HTTP_PARSE_OK);
	assert_int_equal(scrub_head(s, &resp, &cause, &hint), -1);
	assert_contains(cause, "is coded (Content-Encoding: gzip)");
	assert_contains(hint, "Accept-Encoding: identity");
	free(cause);
	free(hint);
	http_response_clear(&resp);
	scrub_free(s);
	/* To one that did not: searched as it is. */
	s = scrub_new(ph, 2, false);
	assert_int_equal(http_response_parse(coded, strlen(coded), "GET",
	    &resp, &used, &cause), HTTP_PARSE_OK);
	assert_int_equal(scrub_head(s, &resp, &cause, &hint), 0);
	http_response_clear(&resp);
	scrub_free(s);
	proxy_phantoms_free(ph, 2);
}

/*
 * Basic: the base64 of "user:value" the proxy sent is looked for too,
 * and a head gets the same form of the placeholder back, what the
 * sandbox sent; a body gets '*', a match cut across reads included.
 */
static void
test_scrub_basic(void **state)
{
	static const size_t	 steps[] = { 1, 3, 4096 };
	struct phantom		*ph;
	struct scrub		*s;
	char			*got, *real, *put, *text, *warning = NULL;
	size_t			 i;

	(void)state;
	ph = xcalloc(1, sizeof(*ph));
	ph[0].ph_file = xstrdup("~/.netrc");
	ph[0].ph_header = xstrdup("Authorization");
	ph[0].ph_user = xstrdup("alice");
	ph[0].ph_placeholder = xstrdup(PHANTOM_PREFIX "0123");
	ph[0].ph_value = xstrdup("pw-1");
	real = inspect_phantom_format(&ph[0], ph[0].ph_value);
	put = inspect_phantom_format(&ph[0], ph[0].ph_placeholder);
	assert_string_equal(real, "Basic YWxpY2U6cHctMQ==");
	xasprintf(&text, "HTTP/1.1 200 OK\r\nX-Echo: Authorization: %s\r\n"
	    "Content-Length: 50\r\n\r\n[Authorization: %s] alice:pw-1",
	    real, real);
	for (i = 0; i < nitems(steps); i++) {
		s = scrub_new(ph, 1, true);
		got = scrub_through(s, text, steps[i], false);
		assert_contains(got, "X-Echo: Authorization: ");
		assert_contains(got, put);
		/* Cut across reads, the user's part may go: no secret. */
		assert_contains(got, steps[i] == 4096 ?
		    "\r\n\r\n[Authorization: Basic ****************] "
		    "alice:****" : "\r\n\r\n[Authorization: Basic "
		    "YWxpY2U6********] alice:****");
		assert_null(strstr(got, "cHctMQ"));
		assert_null(strstr(got, "pw-1"));
		scrub_warn(s, &warning);
		assert_contains(warning, "the real value of ~/.netrc came "
		    "back in the answer ");
		free(warning);
		warning = NULL;
		scrub_free(s);
		free(got);
	}
	free(text);
	free(real);
	free(put);
	proxy_phantoms_free(ph, 1);
}

/* Whether got holds no part of SCRUB_PIECE (8) bytes of value. */
static bool
scrub_no_part(const char *got, const char *value)
{
	size_t	 k;

	for (k = 0; k + 8 <= strlen(value); k++)
		if (memmem(got, strlen(got), value + k, 8) != NULL)
			return false;
	return true;
}

/*
 * An origin that echoes a value cut in pieces (over two header lines,
 * two parts of a multipart body, two WebSocket frames) gives back no
 * part of 8 bytes or more; a shorter end of a read that may go on into
 * one is held until the next bytes say, and any other is not held.
 */
static void
test_scrub_pieces(void **state)
{
	static const size_t	 steps[] = { 1, 3, 7, 4096 };
	static const char	 v[] = "tok-0123456789abcdefghijKLMNOPQRSTUV";
	struct phantom		*ph;
	struct scrub		*s;
	struct http_body	 hb;
	struct evbuffer		*in, *out;
	char			*got, *text;
	size_t			 i, cut;
	bool			 done = false;

	(void)state;
	ph = xcalloc(1, sizeof(*ph));
	ph[0].ph_env = xstrdup("TOKEN");
	ph[0].ph_placeholder = xstrdup(PHANTOM_PREFIX "0123");
	ph[0].ph_value = xstrdup(v);
	xasprintf(&text, "HTTP/1.1 200 OK\r\nX-A: Bearer %.18s\r\n"
	    "X-B: %s\r\nContent-Type: multipart/mixed; boundary=b\r\n"
	    "Content-Length: %zu\r\n\r\n--b\r\nX-A: Bearer %.18s\r\n"
	    "--b\r\nX-B: %s\r\n--b--\r\n", v, v + 18,
	    strlen("--b\r\nX-A: Bearer \r\n--b\r\nX-B: \r\n--b--\r\n") +
	    strlen(v), v, v + 18);
	for (i = 0; i < nitems(steps); i++) {
		s = scrub_new(ph, 1, true);
		got = scrub_through(s, text, steps[i], false);
		assert_contains(got, "X-A: Bearer ******************\r\n");
		assert_contains(got, "--b\r\nX-B: ******************\r\n");
		assert_true(scrub_no_part(got, v));
		scrub_free(s);
		free(got);
	}
	free(text);

	/* Frames: nothing held, a part cut across reads masked after. */
	for (cut = 1; cut < strlen(v); cut++) {
		s = scrub_new(ph, 1, true);
		in = evbuffer_new();
		out = evbuffer_new();
		evbuffer_add_printf(in, "\x81\x7fxx%.*s", (int)cut, v);
		scrub_stream(s, in, out);
		/* Under 8 bytes, the end of the first read goes as it is. */
		assert_int_equal(evbuffer_get_length(out), 4 + cut);
		evbuffer_add_printf(in, "%s\x81\x01y", v + cut);
		scrub_stream(s, in, out);
		evbuffer_add(out, "", 1);
		got = (char *)evbuffer_pullup(out, -1);
		assert_int_equal(evbuffer_get_length(out),
		    4 + strlen(v) + 3 + 1);
		if (cut < 8 || strlen(v) - cut < 8)
			assert_true(memmem(got, evbuffer_get_length(out),
			    "********", 8) != NULL);
		else
			assert_true(scrub_no_part(got + 4, v));
		assert_true(strstr(got, v + (cut < 8 ? cut : 0)) == NULL);
		evbuffer_free(in);
		evbuffer_free(out);
		scrub_free(s);
	}

	/* A body's end that may go on into the value is held, no other. */
	s = scrub_new(ph, 1, true);
	in = evbuffer_new();
	out = evbuffer_new();
	http_body_init(&hb, HTTP_BODY_LENGTH, 100);
	evbuffer_add_printf(in, "data: {}\n\n");
	assert_int_equal(scrub_body(s, &hb, in, out, 10, &done), 10);
	assert_int_equal(evbuffer_get_length(out), 10);
	evbuffer_add_printf(in, "x=tok-012");
	assert_int_equal(scrub_body(s, &hb, in, out, 9, &done), 9);
	assert_int_equal(evbuffer_get_length(out), 12);	/* "x=" */
	evbuffer_add_printf(in, "3456789abcdef, then no more");
	assert_int_equal(scrub_body(s, &hb, in, out, 27, &done), 27);
	evbuffer_add(out, "", 1);
	got = (char *)evbuffer_pullup(out, -1);
	/* The last "e" may begin the value: held. */
	assert_string_equal(got, "data: {}\n\nx=********************, "
	    "then no mor");
	evbuffer_free(in);
	evbuffer_free(out);
	scrub_free(s);
	proxy_phantoms_free(ph, 1);
}

/*
 * A JWT's phantom: an answer may quote its header and claims, which the
 * placeholder holds too, and they go through; the whole token, or a
 * piece of its signature, is masked.
 */
static void
test_scrub_jwt(void **state)
{
	static const char	 head[] = "eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjF9.";
	static const char	 sig[] = "c2lnbmF0dXJlLW9mLXRoZS1yZWFs";
	struct phantom		*ph;
	struct scrub		*s;
	char			*got, *text, *real;
	const char		*stars;

	(void)state;
	ph = xcalloc(1, sizeof(*ph));
	ph[0].ph_file = xstrdup("~/.codex/auth.json");
	xasprintf(&real, "%s%s", head, sig);
	ph[0].ph_value = real;
	ph[0].ph_placeholder = str_jwt_placeholder(real);
	ph[0].ph_jwt = true;
	xasprintf(&text, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n"
	    "claims %s; piece %.12s; whole %s", strlen("claims ; piece ; whole ")
	    + strlen(head) + 12 + strlen(real), head, sig + 8, real);
	s = scrub_new(ph, 1, true);
	got = scrub_through(s, text, 4096, false);
	assert_contains(got, "claims eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjF9.; ");
	assert_contains(got, "piece ************; ");
	assert_null(strstr(got, sig + 8));
	/* The whole token: as many stars as it has bytes. */
	assert_non_null(stars = strstr(got, "whole "));
	assert_int_equal(strspn(stars + 6, "*"), strlen(real));
	scrub_free(s);
	free(got);
	free(text);
	proxy_phantoms_free(ph, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_origin_form),
		cmocka_unit_test(test_path_normalise),
		cmocka_unit_test(test_inspect_rules),
		cmocka_unit_test(test_phantoms),
		cmocka_unit_test(test_scrub),
		cmocka_unit_test(test_scrub_basic),
		cmocka_unit_test(test_scrub_pieces),
		cmocka_unit_test(test_scrub_jwt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
