/*
 * test_http.c: strict HTTP/1.x heads, their serialisation and body
 * framing.  The bad shapes are the ones request smuggling is made of.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <ctype.h>
#include <stdbool.h>

#include "unit.h"

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "proxy/proxy.h"

#define CRLF	"\r\n"
#define END	"\r\n\r\n"

struct good_request {
	const char	*in;
	size_t		 len;		/* 0: strlen(in) */
	const char	*method;
	const char	*host;
	int		 port;
	const char	*path;		/* NULL for CONNECT */
	int		 minor;
	enum http_body_kind body;
	uint64_t	 length;
	bool		 keepalive;
};

static const struct good_request good_requests[] = {
	{ "GET http://example.com/ HTTP/1.1" CRLF "Host: example.com" END, 0,
	    "GET", "example.com", 80, "/", 1, HTTP_BODY_NONE, 0, true },
	{ "GET http://example.com HTTP/1.1" END, 0,
	    "GET", "example.com", 80, "/", 1, HTTP_BODY_NONE, 0, true },
	{ "GET http://example.com?q=1 HTTP/1.1" END, 0,
	    "GET", "example.com", 80, "/?q=1", 1, HTTP_BODY_NONE, 0, true },
	{ "GET HTTP://Example.COM:8080/a/b?c=d HTTP/1.1" END, 0,
	    "GET", "Example.COM", 8080, "/a/b?c=d", 1, HTTP_BODY_NONE, 0,
	    true },
	{ "GET hTtP://a:65535/ HTTP/1.1" END, 0,
	    "GET", "a", 65535, "/", 1, HTTP_BODY_NONE, 0, true },
	{ "GET http://[::1]:8080/x HTTP/1.1" END, 0,
	    "GET", "::1", 8080, "/x", 1, HTTP_BODY_NONE, 0, true },
	{ "GET http://[2001:db8::1]/ HTTP/1.1" END, 0,
	    "GET", "2001:db8::1", 80, "/", 1, HTTP_BODY_NONE, 0, true },
	/* Nothing is decoded: the policy sees, and refuses, the raw bytes. */
	{ "GET http://evil%2etest/%2e%2e/ HTTP/1.1" END, 0,
	    "GET", "evil%2etest", 80, "/%2e%2e/", 1, HTTP_BODY_NONE, 0, true },
	{ "GET http://[fe80::1%25eth0]/ HTTP/1.1" END, 0,
	    "GET", "fe80::1%25eth0", 80, "/", 1, HTTP_BODY_NONE, 0, true },
	/* One empty line before the request line is skipped. */
	{ CRLF "GET http://a/ HTTP/1.1" END, 0,
	    "GET", "a", 80, "/", 1, HTTP_BODY_NONE, 0, true },
	/* A Host header that disagrees is rewritten, not refused. */
	{ "GET http://a/ HTTP/1.1" CRLF "Host: b" END, 0,
	    "GET", "a", 80, "/", 1, HTTP_BODY_NONE, 0, true },
	{ "GET http://a/ HTTP/1.1" CRLF "Host:" END, 0,
	    "GET", "a", 80, "/", 1, HTTP_BODY_NONE, 0, true },
	{ "FOO-BAR http://a/ HTTP/1.1" END, 0,
	    "FOO-BAR", "a", 80, "/", 1, HTTP_BODY_NONE, 0, true },
	/* Keep-alive by version and Connection. */
	{ "GET http://a/ HTTP/1.0" END, 0,
	    "GET", "a", 80, "/", 0, HTTP_BODY_NONE, 0, false },
	{ "GET http://a/ HTTP/1.0" CRLF "Connection: Keep-Alive" END, 0,
	    "GET", "a", 80, "/", 0, HTTP_BODY_NONE, 0, true },
	{ "GET http://a/ HTTP/1.0" CRLF "Connection: keep-alive, close" END,
	    0, "GET", "a", 80, "/", 0, HTTP_BODY_NONE, 0, false },
	{ "GET http://a/ HTTP/1.1" CRLF "Connection: Close" END, 0,
	    "GET", "a", 80, "/", 1, HTTP_BODY_NONE, 0, false },
	{ "GET http://a/ HTTP/1.1" CRLF "Connection: x-foo,\t close ,"
	    END, 0, "GET", "a", 80, "/", 1, HTTP_BODY_NONE, 0, false },
	{ "GET http://a/ HTTP/1.1" CRLF "Connection: x-foo" CRLF
	    "Connection: close" END, 0,
	    "GET", "a", 80, "/", 1, HTTP_BODY_NONE, 0, false },
	{ "GET http://a/ HTTP/1.1" CRLF "Connection: closer" END, 0,
	    "GET", "a", 80, "/", 1, HTTP_BODY_NONE, 0, true },
	/* CONNECT, authority-form. */
	{ "CONNECT example.com:443 HTTP/1.1" END, 0,
	    "CONNECT", "example.com", 443, NULL, 1, HTTP_BODY_NONE, 0, true },
	{ "CONNECT [2001:db8::1]:8443 HTTP/1.1" CRLF "Host: x" END, 0,
	    "CONNECT", "2001:db8::1", 8443, NULL, 1, HTTP_BODY_NONE, 0, true },
	{ "CONNECT 10.0.0.1:1 HTTP/1.0" END, 0,
	    "CONNECT", "10.0.0.1", 1, NULL, 0, HTTP_BODY_NONE, 0, false },
	/* Bodies. */
	{ "POST http://a/ HTTP/1.1" CRLF "Content-Length: 5" END, 0,
	    "POST", "a", 80, "/", 1, HTTP_BODY_LENGTH, 5, true },
	{ "POST http://a/ HTTP/1.1" CRLF "content-length: \t 0 \t" END, 0,
	    "POST", "a", 80, "/", 1, HTTP_BODY_LENGTH, 0, true },
	{ "POST http://a/ HTTP/1.1" CRLF "Content-Length: 007" END, 0,
	    "POST", "a", 80, "/", 1, HTTP_BODY_LENGTH, 7, true },
	{ "POST http://a/ HTTP/1.1" CRLF
	    "Content-Length: 9223372036854775807" END, 0,
	    "POST", "a", 80, "/", 1, HTTP_BODY_LENGTH, INT64_MAX, true },
	{ "POST http://a/ HTTP/1.0" CRLF "Content-Length: 1" END, 0,
	    "POST", "a", 80, "/", 0, HTTP_BODY_LENGTH, 1, false },
	{ "POST http://a/ HTTP/1.1" CRLF "Transfer-Encoding: chunked" END, 0,
	    "POST", "a", 80, "/", 1, HTTP_BODY_CHUNKED, 0, true },
	{ "POST http://a/ HTTP/1.1" CRLF "Transfer-Encoding:CHUNKED" END, 0,
	    "POST", "a", 80, "/", 1, HTTP_BODY_CHUNKED, 0, true },
	{ "POST http://a/ HTTP/1.1" CRLF "Transfer-Encoding: gzip ,\tchunked"
	    END, 0, "POST", "a", 80, "/", 1, HTTP_BODY_CHUNKED, 0, true },
	{ "POST http://a/ HTTP/1.1" CRLF "Transfer-Encoding: gzip" CRLF
	    "Transfer-Encoding: chunked" END, 0,
	    "POST", "a", 80, "/", 1, HTTP_BODY_CHUNKED, 0, true },
	/* Values: obs-text, inner white space and HTAB, empty. */
	{ "GET http://a/ HTTP/1.1" CRLF "X-A: caf\xc3\xa9 \t x" CRLF
	    "X-Empty:" CRLF "X-Sp:   " END, 0,
	    "GET", "a", 80, "/", 1, HTTP_BODY_NONE, 0, true },
	/* Proxy-Connection means nothing to cordon; it is only dropped. */
	{ "GET http://a/ HTTP/1.0" CRLF "Proxy-Connection: keep-alive" END, 0,
	    "GET", "a", 80, "/", 0, HTTP_BODY_NONE, 0, false },
};

struct bad_request {
	const char	*in;
	size_t		 len;		/* 0: strlen(in) */
	int		 status;
	const char	*cause;
};

#define REQ	"POST http://a/ HTTP/1.1" CRLF

static const struct bad_request bad_requests[] = {
	/* Smuggling shapes. */
	{ REQ "Content-Length: 5" CRLF "Transfer-Encoding: chunked" END, 0,
	    400, "both Transfer-Encoding and Content-Length" },
	{ REQ "Transfer-Encoding: chunked" CRLF "Content-Length: 5" END, 0,
	    400, "both Transfer-Encoding and Content-Length" },
	{ REQ "Transfer-Encoding: chunked, identity" END, 0,
	    501, "unknown transfer coding" },
	{ REQ "Transfer-Encoding : chunked" END, 0,
	    400, "white space between header name \"Transfer-Encoding\"" },
	{ REQ "Transfer-Encoding\t: chunked" END, 0,
	    400, "white space between header name" },
	{ REQ "Content-Length: +5" END, 0, 400, "is not one decimal number" },
	{ REQ "Content-Length: -5" END, 0, 400, "is not one decimal number" },
	{ REQ "Content-Length: 5, 6" END, 0, 400, "is not one decimal number" },
	{ REQ "Content-Length: 5,5" END, 0, 400, "is not one decimal number" },
	{ REQ "Content-Length: 5 6" END, 0, 400, "is not one decimal number" },
	{ REQ "Content-Length: 0x5" END, 0, 400, "is not one decimal number" },
	{ REQ "Content-Length: 5.0" END, 0, 400, "is not one decimal number" },
	{ REQ "Content-Length:" END, 0, 400, "empty Content-Length" },
	{ REQ "Content-Length: 5" CRLF "Content-Length: 6" END, 0,
	    400, "several Content-Length headers" },
	{ REQ "Content-Length: 5" CRLF "Content-Length: 5" END, 0,
	    400, "several Content-Length headers" },
	{ REQ "Content-Length: 9223372036854775808" END, 0,
	    400, "Content-Length too large" },
	{ REQ "Content-Length: 99999999999999999999999" END, 0,
	    400, "Content-Length too large" },
	{ "GET http://a/ HTTP/1.1\nHost: a\n\n", 0, 400, "bare LF at byte 22" },
	{ "GET http://a/ HTTP/1.1\r\nHost: a\n\r\n", 0, 400, "bare LF" },
	{ "GET http://a/ HTTP/1.1\r\nHost: a\r\n\n", 0, 400, "bare LF" },
	{ "\nGET http://a/ HTTP/1.1" END, 0, 400, "bare LF at byte 0" },
	{ "GET http://a/ HTTP/1.1\r\nX: a\rb" END, 0, 400, "bare CR" },
	{ "GET http://a/ HTTP/1.1\rHost: a" END, 0, 400, "bare CR" },
	{ "GET http://a/ HTTP/1.1\r\r\n\r\n", 0, 400, "bare CR" },
	{ REQ "X: a" CRLF " folded" END, 0, 400, "obs-fold" },
	{ REQ "X: a" CRLF "\tfolded" END, 0, 400, "obs-fold" },
	{ REQ " X: a" END, 0, 400, "starts with white space" },
	{ REQ "X: a\0b" END, sizeof(REQ "X: a\0b" END) - 1, 400,
	    "byte 0x00 in the value" },
	{ REQ "X\0: a" END, sizeof(REQ "X\0: a" END) - 1, 400,
	    "byte 0x00 in a header name" },
	{ REQ "X: a\x01" END, 0, 400, "byte 0x01 in the value" },
	{ REQ "X: a\x7f" END, 0, 400, "byte 0x7f in the value" },
	{ REQ "X: \x1b[31m" END, 0, 400, "byte 0x1b in the value" },
	{ REQ "Transfer-Encoding: xchunked" END, 0,
	    501, "unknown transfer coding" },
	{ REQ "Transfer-Encoding: chunked, gzip" END, 0,
	    400, "chunked must be the last transfer coding" },
	{ REQ "Transfer-Encoding: gzip" END, 0,
	    400, "chunked must be the last transfer coding" },
	{ REQ "Transfer-Encoding: chunked, chunked" END, 0,
	    400, "chunked must be the last transfer coding" },
	{ REQ "Transfer-Encoding: chunked" CRLF "Transfer-Encoding: chunked"
	    END, 0, 400, "chunked must be the last transfer coding" },
	{ REQ "Transfer-Encoding: chunked," END, 0,
	    400, "empty element in Transfer-Encoding" },
	{ REQ "Transfer-Encoding: ,chunked" END, 0,
	    400, "empty element in Transfer-Encoding" },
	{ REQ "Transfer-Encoding:" END, 0,
	    400, "empty element in Transfer-Encoding" },
	{ REQ "Transfer-Encoding: chunked;q=1" END, 0,
	    400, "is not a list of codings" },
	{ REQ "Transfer-Encoding: \"chunked\"" END, 0,
	    400, "is not a list of codings" },
	{ REQ "Transfer-Encoding: chunked chunked" END, 0,
	    400, "is not a list of codings" },
	{ REQ "Transfer-Encoding: chunked\xa0" END, 0,
	    400, "is not a list of codings" },
	{ "POST http://a/ HTTP/1.0" CRLF "Transfer-Encoding: chunked" END, 0,
	    400, "Transfer-Encoding in an HTTP/1.0 request" },
	{ REQ "Connection: Content-Length" CRLF "Content-Length: 5" END, 0,
	    400, "Connection names \"Content-Length\"" },
	{ REQ "Connection: close, transfer-encoding" END, 0,
	    400, "Connection names \"transfer-encoding\"" },
	{ REQ "Connection: a b" END, 0, 400, "is not a list of header names" },
	{ REQ "Host: a" CRLF "host: a" END, 0, 400, "several Host headers" },
	/* Field lines. */
	{ REQ "Bad Name: x" END, 0, 400, "white space between header name" },
	{ REQ "NoColon" END, 0, 400, "has no ':'" },
	{ REQ ": x" END, 0, 400, "empty header name" },
	{ REQ "X(: x" END, 0, 400, "byte 0x28 in a header name" },
	{ REQ "X\xc3\xa9: x" END, 0, 400, "byte 0xc3 in a header name" },
	/* Request line. */
	{ "GET http://a/ HTTP/2.0" END, 0, 505, "HTTP version \"HTTP/2.0\"" },
	{ "GET http://a/ HTTP/1.2" END, 0, 505, "is not supported" },
	{ "GET http://a/ HTTP/0.9" END, 0, 505, "is not supported" },
	{ "GET http://a/ HTTP/1.1x" END, 0, 400, "is not an HTTP version" },
	{ "GET http://a/ http/1.1" END, 0, 400, "is not an HTTP version" },
	{ "GET http://a/ HTTP/1" END, 0, 400, "is not an HTTP version" },
	{ "GET http://a/ HTTP/1.1 " END, 0, 400, "is not an HTTP version" },
	{ "GET http://a/  HTTP/1.1" END, 0, 400, "is not an HTTP version" },
	{ "GET  http://a/ HTTP/1.1" END, 0, 400, "empty request target" },
	{ "GET http://a/" END, 0, 400, "has no HTTP version" },
	{ "GET\thttp://a/ HTTP/1.1" END, 0, 400,
	    "does not start with a method" },
	{ " GET http://a/ HTTP/1.1" END, 0, 400,
	    "does not start with a method" },
	{ "G(ET http://a/ HTTP/1.1" END, 0, 400,
	    "does not start with a method" },
	{ "GET http://a/\t HTTP/1.1" END, 0, 400, "byte 0x09 in the" },
	{ "GET http://a/\x80 HTTP/1.1" END, 0, 400, "byte 0x80 in the" },
	{ "GET http://a/\x7f HTTP/1.1" END, 0, 400, "byte 0x7f in the" },
	{ CRLF CRLF "GET http://a/ HTTP/1.1" END, 0, 400, "empty line where" },
	/* Targets. */
	{ "GET / HTTP/1.1" CRLF "Host: a" END, 0, 400,
	    "forward proxy and needs absolute-form" },
	{ "OPTIONS * HTTP/1.1" END, 0, 400, "asterisk-form" },
	{ "GET https://a/ HTTP/1.1" END, 0, 400,
	    "clients must use CONNECT for https" },
	{ "GET HTTPS://a:443/ HTTP/1.1" END, 0, 400,
	    "clients must use CONNECT for https" },
	{ "GET ftp://a/ HTTP/1.1" END, 0, 400, "scheme \"ftp\" is not" },
	{ "GET a.test:443 HTTP/1.1" END, 0, 400, "is not supported" },
	{ "GET a HTTP/1.1" END, 0, 400, "is not absolute-form" },
	{ "GET 1http://a/ HTTP/1.1" END, 0, 400, "is not absolute-form" },
	{ "GET http:/a/ HTTP/1.1" END, 0, 400, "no \"//\" after" },
	{ "GET http:a HTTP/1.1" END, 0, 400, "no \"//\" after" },
	{ "GET http://user@a/ HTTP/1.1" END, 0, 400, "user information" },
	{ "GET http://u:p@a:80/ HTTP/1.1" END, 0, 400, "user information" },
	{ "GET http://a/#frag HTTP/1.1" END, 0, 400, "fragment" },
	{ "GET http://a# HTTP/1.1" END, 0, 400, "fragment" },
	{ "GET http:///p HTTP/1.1" END, 0, 400, "empty host" },
	{ "GET http:// HTTP/1.1" END, 0, 400, "empty host" },
	{ "GET http://:80/ HTTP/1.1" END, 0, 400, "empty host" },
	{ "GET http://?q HTTP/1.1" END, 0, 400, "empty host" },
	{ "GET http://[]/ HTTP/1.1" END, 0, 400, "is not an IPv6 literal" },
	{ "GET http://[v1.x]/ HTTP/1.1" END, 0, 400, "is not an IPv6 literal" },
	{ "GET http://[a[:]/ HTTP/1.1" END, 0, 400, "is not an IPv6 literal" },
	{ "GET http://[::1/ HTTP/1.1" END, 0, 400, "'[' without ']'" },
	{ "GET http://[::1]x/ HTTP/1.1" END, 0, 400, "text after ']'" },
	{ "GET http://a]b/ HTTP/1.1" END, 0, 400, "'[' or ']'" },
	{ "GET http://a[b/ HTTP/1.1" END, 0, 400, "'[' or ']'" },
	{ "GET http://a:0/ HTTP/1.1" END, 0, 400, "port \"0\"" },
	{ "GET http://a:65536/ HTTP/1.1" END, 0, 400, "port \"65536\"" },
	{ "GET http://a:/ HTTP/1.1" END, 0, 400, "port \"\"" },
	{ "GET http://a:08/ HTTP/1.1" END, 0, 400, "port \"08\"" },
	{ "GET http://a:+80/ HTTP/1.1" END, 0, 400, "port \"+80\"" },
	{ "GET http://a:80:80/ HTTP/1.1" END, 0, 400, "port \"80:80\"" },
	{ "GET http://a:100000/ HTTP/1.1" END, 0, 400, "port" },
	{ "GET http://::1/ HTTP/1.1" END, 0, 400, "empty host" },
	{ "CONNECT example.com HTTP/1.1" END, 0, 400, "needs a port" },
	{ "CONNECT [::1] HTTP/1.1" END, 0, 400, "needs a port" },
	{ "CONNECT example.com: HTTP/1.1" END, 0, 400, "port \"\"" },
	{ "CONNECT example.com:0 HTTP/1.1" END, 0, 400, "port \"0\"" },
	{ "CONNECT ::1:443 HTTP/1.1" END, 0, 400, "empty host" },
	{ "CONNECT :443 HTTP/1.1" END, 0, 400, "empty host" },
	{ "CONNECT http://a:443/ HTTP/1.1" END, 0, 400, "authority-form" },
	{ "CONNECT a:443/ HTTP/1.1" END, 0, 400, "authority-form" },
	{ "CONNECT a:443?x HTTP/1.1" END, 0, 400, "authority-form" },
	{ "CONNECT u@a:443 HTTP/1.1" END, 0, 400, "user information" },
	{ "CONNECT a:443#x HTTP/1.1" END, 0, 400, "fragment" },
};

/* Returns a heap copy of len bytes, so ASan sees any read past the end. */
static char *
copy(const char *s, size_t len)
{
	char	*p;

	p = malloc(len == 0 ? 1 : len);
	assert_non_null(p);
	memcpy(p, s, len);
	return p;
}

/* Parses len bytes of in, which must be a whole good request. */
static void
check_good_request(size_t i, const struct good_request *c)
{
	struct http_request	 req;
	size_t			 len, used;
	int			 status;
	char			*cause, *buf;

	len = c->len ? c->len : strlen(c->in);
	buf = copy(c->in, len);
	if (http_request_parse(buf, len, &req, &used, &status, &cause) !=
	    HTTP_PARSE_OK)
		fail_msg("good request %zu refused (%d): %s", i, status,
		    cause);
	assert_int_equal(used, len);
	assert_int_equal(status, 0);
	assert_null(cause);
	assert_string_equal(req.hr_method, c->method);
	assert_int_equal(req.hr_hostlen, strlen(c->host));
	assert_memory_equal(req.hr_host, c->host, req.hr_hostlen);
	assert_int_equal(req.hr_port, c->port);
	if (c->path == NULL)
		assert_null(req.hr_path);
	else
		assert_string_equal(req.hr_path, c->path);
	assert_int_equal(req.hr_connect, c->path == NULL);
	assert_int_equal(req.hr_minor, c->minor);
	if (req.hr_body != c->body || req.hr_length != c->length)
		fail_msg("good request %zu: body %d length %llu", i,
		    req.hr_body, (unsigned long long)req.hr_length);
	if (req.hr_keepalive != c->keepalive)
		fail_msg("good request %zu: keepalive %d", i,
		    req.hr_keepalive);
	http_request_clear(&req);
	free(buf);
}

static void
test_request_good(void **state)
{
	size_t	 i;

	(void)state;
	for (i = 0; i < nitems(good_requests); i++)
		check_good_request(i, &good_requests[i]);
}

static void
test_request_bad(void **state)
{
	const struct bad_request	*c;
	struct http_request		 req;
	size_t				 i, len, used;
	int				 status, rc;
	char				*cause, *buf;

	(void)state;
	for (i = 0; i < nitems(bad_requests); i++) {
		c = &bad_requests[i];
		len = c->len ? c->len : strlen(c->in);
		buf = copy(c->in, len);
		rc = http_request_parse(buf, len, &req, &used, &status,
		    &cause);
		if (rc != HTTP_PARSE_ERROR)
			fail_msg("bad request %zu gave %d", i, rc);
		if (status != c->status)
			fail_msg("bad request %zu: status %d, want %d (%s)", i,
			    status, c->status, cause);
		assert_contains(cause, c->cause);
		assert_int_equal(used, 0);
		assert_null(req.hr_method);
		assert_null(req.hr_headers);
		free(cause);
		free(buf);
	}
}

/*
 * Every good head cut short at every offset asks for more; every bad one
 * cut short asks for more or is refused, never accepted; with bytes after
 * the head, *used stops at its end.
 */
static void
test_request_split(void **state)
{
	struct http_request	 req;
	const char		*in;
	size_t			 i, k, len, used;
	int			 status, rc;
	char			*cause, *buf, *more;

	(void)state;
	for (i = 0; i < nitems(good_requests); i++) {
		in = good_requests[i].in;
		len = good_requests[i].len ? good_requests[i].len : strlen(in);
		for (k = 0; k < len; k++) {
			buf = copy(in, k);
			rc = http_request_parse(buf, k, &req, &used, &status,
			    &cause);
			if (rc != HTTP_PARSE_MORE)
				fail_msg("good request %zu cut at %zu gave %d "
				    "(%s)", i, k, rc, cause);
			assert_null(cause);
			assert_null(req.hr_method);
			free(buf);
		}
		more = malloc(len + 40);
		assert_non_null(more);
		memcpy(more, in, len);
		memcpy(more + len,
		    "GET http://b/ HTTP/1.1\r\n\r\nabcdefghijklm", 40);
		rc = http_request_parse(more, len + 40, &req, &used, &status,
		    &cause);
		assert_int_equal(rc, HTTP_PARSE_OK);
		assert_int_equal(used, len);
		http_request_clear(&req);
		free(more);
	}
	for (i = 0; i < nitems(bad_requests); i++) {
		in = bad_requests[i].in;
		len = bad_requests[i].len ? bad_requests[i].len : strlen(in);
		for (k = 0; k < len; k++) {
			buf = copy(in, k);
			rc = http_request_parse(buf, k, &req, &used, &status,
			    &cause);
			if (rc == HTTP_PARSE_OK)
				fail_msg("bad request %zu cut at %zu was "
				    "accepted", i, k);
			free(cause);
			free(buf);
		}
	}
}

/* Builds a request whose head is exactly size bytes (size >= 64). */
static char *
sized_request(size_t size)
{
	static const char	 line[] = "GET http://a/ HTTP/1.1\r\nX: ";
	char			*buf;

	buf = malloc(size);
	assert_non_null(buf);
	memcpy(buf, line, sizeof(line) - 1);
	memset(buf + sizeof(line) - 1, 'v', size - (sizeof(line) - 1) - 4);
	memcpy(buf + size - 4, END, 4);
	return buf;
}

static void
test_request_limits(void **state)
{
	struct http_request	 req;
	size_t			 used, n;
	int			 status;
	char			*cause, *buf, *p;

	(void)state;
	/* A head of exactly HTTP_HEAD_MAX bytes is fine, one more is not. */
	buf = sized_request(HTTP_HEAD_MAX);
	assert_int_equal(http_request_parse(buf, HTTP_HEAD_MAX, &req, &used,
	    &status, &cause), HTTP_PARSE_OK);
	assert_int_equal(used, HTTP_HEAD_MAX);
	http_request_clear(&req);
	free(buf);

	buf = sized_request(HTTP_HEAD_MAX + 1);
	assert_int_equal(http_request_parse(buf, HTTP_HEAD_MAX + 1, &req,
	    &used, &status, &cause), HTTP_PARSE_ERROR);
	assert_int_equal(status, 431);
	assert_contains(cause, "head longer than 65536 bytes");
	free(cause);
	/* Under the limit without an end: more; at the limit: refused. */
	assert_int_equal(http_request_parse(buf, HTTP_HEAD_MAX - 1, &req,
	    &used, &status, &cause), HTTP_PARSE_MORE);
	assert_int_equal(http_request_parse(buf, HTTP_HEAD_MAX, &req,
	    &used, &status, &cause), HTTP_PARSE_ERROR);
	assert_int_equal(status, 431);
	free(cause);
	free(buf);

	/* A request line that does not end within the limit. */
	n = HTTP_HEAD_MAX + 100;
	buf = malloc(n);
	assert_non_null(buf);
	memcpy(buf, "GET http://a/", 13);
	memset(buf + 13, 'a', n - 13);
	memcpy(buf + n - 13, " HTTP/1.1" END, 13);
	assert_int_equal(http_request_parse(buf, HTTP_HEAD_MAX - 1, &req,
	    &used, &status, &cause), HTTP_PARSE_MORE);
	assert_int_equal(http_request_parse(buf, HTTP_HEAD_MAX, &req,
	    &used, &status, &cause), HTTP_PARSE_ERROR);
	assert_int_equal(status, 414);
	assert_contains(cause, "request line longer than");
	free(cause);
	assert_int_equal(http_request_parse(buf, n, &req, &used, &status,
	    &cause), HTTP_PARSE_ERROR);
	assert_int_equal(status, 414);
	free(cause);
	free(buf);

	/* HTTP_HEADERS_MAX header lines are fine, one more is not. */
	n = 64 + (HTTP_HEADERS_MAX + 1) * 8;
	buf = p = malloc(n);
	assert_non_null(buf);
	p += sprintf(p, "GET http://a/ HTTP/1.1\r\n");
	for (n = 0; n < HTTP_HEADERS_MAX; n++)
		p += sprintf(p, "X%02zu: v\r\n", n % 100);
	p += sprintf(p, "\r\n");
	assert_int_equal(http_request_parse(buf, (size_t)(p - buf), &req,
	    &used, &status, &cause), HTTP_PARSE_OK);
	assert_int_equal(req.hr_nheaders, HTTP_HEADERS_MAX);
	http_request_clear(&req);
	p -= 2;
	p += sprintf(p, "Y: v\r\n\r\n");
	assert_int_equal(http_request_parse(buf, (size_t)(p - buf), &req,
	    &used, &status, &cause), HTTP_PARSE_ERROR);
	assert_int_equal(status, 431);
	assert_contains(cause, "more than 100 header lines");
	free(cause);
	free(buf);
}

/* Parses in, which must be good, and returns its serialised head. */
static char *
request_head(const char *in, bool keepalive, size_t *len)
{
	struct http_request	 req;
	size_t			 used;
	int			 status;
	char			*cause, *head;

	if (http_request_parse(in, strlen(in), &req, &used, &status,
	    &cause) != HTTP_PARSE_OK)
		fail_msg("refused (%d): %s", status, cause);
	head = http_out_request_head(&req, keepalive, len);
	assert_int_equal(*len, strlen(head));
	http_request_clear(&req);
	return head;
}

struct head_case {
	const char	*in;
	bool		 keepalive;
	const char	*out;
};

static const struct head_case request_heads[] = {
	{ "GET http://example.com/ HTTP/1.1" CRLF "Host: example.com" END,
	    true,
	    "GET / HTTP/1.1" CRLF "Host: example.com" CRLF
	    "Connection: keep-alive" END },
	{ "GET http://example.com:80/x?y HTTP/1.0" END, false,
	    "GET /x?y HTTP/1.1" CRLF "Host: example.com" CRLF
	    "Connection: close" END },
	{ "GET http://example.com:8080 HTTP/1.1" CRLF "Host: evil.test" END,
	    true,
	    "GET / HTTP/1.1" CRLF "Host: example.com:8080" CRLF
	    "Connection: keep-alive" END },
	{ "GET http://[::1]/ HTTP/1.1" END, true,
	    "GET / HTTP/1.1" CRLF "Host: [::1]" CRLF
	    "Connection: keep-alive" END },
	{ "GET http://[::1]:8080/ HTTP/1.1" END, false,
	    "GET / HTTP/1.1" CRLF "Host: [::1]:8080" CRLF
	    "Connection: close" END },
	{ "CONNECT a.test:443 HTTP/1.1" CRLF "Host: a.test:443" CRLF
	    "Proxy-Authorization: Basic eDp5" END, true,
	    "CONNECT a.test:443 HTTP/1.1" CRLF "Host: a.test:443" CRLF
	    "Connection: keep-alive" END },
	{ "CONNECT [::1]:80 HTTP/1.1" END, true,
	    "CONNECT [::1]:80 HTTP/1.1" CRLF "Host: [::1]:80" CRLF
	    "Connection: keep-alive" END },
	/* Hop-by-hop headers go, those Connection names too; order stays. */
	{ "POST http://a.test:8080/p?q HTTP/1.1" CRLF
	    "Host: a.test:8080" CRLF
	    "Connection: X-Drop, keep-alive" CRLF
	    "X-Keep: 1" CRLF
	    "x-drop: 2" CRLF
	    "Keep-Alive: timeout=5" CRLF
	    "Proxy-Connection: keep-alive" CRLF
	    "TE: trailers" CRLF
	    "Trailer: X-T" CRLF
	    "Upgrade: websocket" CRLF
	    "Proxy-Authenticate: Basic" CRLF
	    "proxy-authorization: Basic eDp5" CRLF
	    "Content-Length: 3" CRLF
	    "connection: x-also" CRLF
	    "X-Also: 3" CRLF
	    "X-Keep:   two  words  " END, false,
	    "POST /p?q HTTP/1.1" CRLF "Host: a.test:8080" CRLF
	    "X-Keep: 1" CRLF "Content-Length: 3" CRLF
	    "X-Keep: two  words" CRLF "Connection: close" END },
	/* A WebSocket handshake keeps its Upgrade, and says so. */
	{ "GET http://a/ws HTTP/1.1" CRLF "Upgrade: WebSocket" CRLF
	    "Connection: keep-alive, Upgrade" CRLF "Sec-WebSocket-Key: k"
	    END, true,
	    "GET /ws HTTP/1.1" CRLF "Host: a" CRLF "Sec-WebSocket-Key: k"
	    CRLF "Upgrade: websocket" CRLF "Connection: Upgrade" END },
	/* Not one: a POST, HTTP/1.0, another protocol, no Connection. */
	{ "POST http://a/ws HTTP/1.1" CRLF "Upgrade: websocket" CRLF
	    "Connection: Upgrade" CRLF "Content-Length: 0" END, true,
	    "POST /ws HTTP/1.1" CRLF "Host: a" CRLF "Content-Length: 0" CRLF
	    "Connection: keep-alive" END },
	{ "GET http://a/ws HTTP/1.0" CRLF "Upgrade: websocket" CRLF
	    "Connection: Upgrade" END, false,
	    "GET /ws HTTP/1.1" CRLF "Host: a" CRLF "Connection: close" END },
	{ "GET http://a/ws HTTP/1.1" CRLF "Upgrade: h2c" CRLF
	    "Connection: Upgrade" END, true,
	    "GET /ws HTTP/1.1" CRLF "Host: a" CRLF
	    "Connection: keep-alive" END },
	{ "GET http://a/ws HTTP/1.1" CRLF "Upgrade: websocket" END, true,
	    "GET /ws HTTP/1.1" CRLF "Host: a" CRLF
	    "Connection: keep-alive" END },
	{ "POST http://a/ HTTP/1.1" CRLF "Transfer-Encoding: gzip, chunked"
	    CRLF "X-Empty:" END, true,
	    "POST / HTTP/1.1" CRLF "Host: a" CRLF
	    "Transfer-Encoding: gzip, chunked" CRLF "X-Empty: " CRLF
	    "Connection: keep-alive" END },
};

static void
test_request_head(void **state)
{
	size_t	 i, len;
	char	*head;

	(void)state;
	for (i = 0; i < nitems(request_heads); i++) {
		head = request_head(request_heads[i].in,
		    request_heads[i].keepalive, &len);
		if (strcmp(head, request_heads[i].out) != 0)
			fail_msg("head %zu:\n%s\nwant:\n%s", i, head,
			    request_heads[i].out);
		free(head);
	}
}

/* Proxy-Authorization never leaves, however it is spelt or named. */
static void
test_request_head_proxy_auth(void **state)
{
	static const char *const ins[] = {
		"GET http://a/ HTTP/1.1" CRLF "Proxy-Authorization: x" END,
		"GET http://a/ HTTP/1.1" CRLF "PROXY-AUTHORIZATION: x" END,
		"GET http://a/ HTTP/1.1" CRLF "Connection: keep-alive" CRLF
		    "Proxy-Authorization: x" CRLF "proxy-authorization: y" END,
		"GET http://a/ HTTP/1.1" CRLF
		    "Connection: Proxy-Authorization" CRLF
		    "Proxy-Authorization: x" END,
	};
	size_t	 i, len, j;
	char	*head;

	(void)state;
	for (i = 0; i < nitems(ins); i++) {
		head = request_head(ins[i], true, &len);
		for (j = 0; j < len; j++)
			head[j] = (char)tolower((unsigned char)head[j]);
		if (strstr(head, "proxy-authorization") != NULL)
			fail_msg("case %zu forwards it:\n%s", i, head);
		free(head);
	}
}

/*
 * A serialised head, turned back into absolute-form, parses to the same
 * request: what cordon decided on is what the upstream is told.
 */
static void
test_request_head_reparse(void **state)
{
	struct http_request	 a, b;
	size_t			 i, used, len;
	int			 status;
	char			*cause, *head, *abs, *sp, *host, *eol;

	(void)state;
	for (i = 0; i < nitems(good_requests); i++) {
		if (good_requests[i].path == NULL)
			continue;
		assert_int_equal(http_request_parse(good_requests[i].in,
		    strlen(good_requests[i].in), &a, &used, &status, &cause),
		    HTTP_PARSE_OK);
		head = http_out_request_head(&a, a.hr_keepalive, &len);
		sp = strchr(head, ' ');
		host = strstr(head, "\r\nHost: ") + 8;
		eol = strstr(host, "\r\n");
		xasprintf(&abs, "%.*s http://%.*s%s", (int)(sp - head), head,
		    (int)(eol - host), host, sp + 1);
		assert_int_equal(http_request_parse(abs, strlen(abs), &b,
		    &used, &status, &cause), HTTP_PARSE_OK);
		assert_string_equal(a.hr_method, b.hr_method);
		assert_int_equal(a.hr_hostlen, b.hr_hostlen);
		assert_memory_equal(a.hr_host, b.hr_host, a.hr_hostlen);
		assert_int_equal(a.hr_port, b.hr_port);
		assert_string_equal(a.hr_path, b.hr_path);
		assert_int_equal(a.hr_body, b.hr_body);
		assert_int_equal(a.hr_length, b.hr_length);
		assert_int_equal(a.hr_keepalive, b.hr_keepalive);
		http_request_clear(&a);
		http_request_clear(&b);
		free(head);
		free(abs);
	}
}

struct good_response {
	const char	*in;
	const char	*method;
	int		 status;
	const char	*reason;
	int		 minor;
	enum http_body_kind body;
	uint64_t	 length;
	bool		 keepalive;
};

#define OK11	"HTTP/1.1 200 OK" CRLF

static const struct good_response good_responses[] = {
	{ OK11 "Content-Length: 5" END, "GET", 200, "OK", 1,
	    HTTP_BODY_LENGTH, 5, true },
	{ OK11 "Content-Length: 0" END, NULL, 200, "OK", 1,
	    HTTP_BODY_LENGTH, 0, true },
	{ OK11 "Transfer-Encoding: chunked" END, "GET", 200, "OK", 1,
	    HTTP_BODY_CHUNKED, 0, true },
	{ OK11 "Transfer-Encoding: gzip, Chunked" END, "POST", 200, "OK", 1,
	    HTTP_BODY_CHUNKED, 0, true },
	/* Chunked not last: the body runs to the close (RFC 9112 6.3). */
	{ OK11 "Transfer-Encoding: gzip" END, "GET", 200, "OK", 1,
	    HTTP_BODY_CLOSE, 0, false },
	{ OK11 "Transfer-Encoding: chunked, gzip" END, "GET", 200, "OK", 1,
	    HTTP_BODY_CLOSE, 0, false },
	{ OK11 "Transfer-Encoding: x-unknown" END, "GET", 200, "OK", 1,
	    HTTP_BODY_CLOSE, 0, false },
	{ OK11 "Server: x" END, "GET", 200, "OK", 1,
	    HTTP_BODY_CLOSE, 0, false },
	{ "HTTP/1.1 204 No Content" CRLF "Content-Length: 5" END, "GET", 204,
	    "No Content", 1, HTTP_BODY_NONE, 0, true },
	{ "HTTP/1.1 304 Not Modified" CRLF "Transfer-Encoding: chunked" END,
	    "GET", 304, "Not Modified", 1, HTTP_BODY_NONE, 0, true },
	{ "HTTP/1.1 100 Continue" END, "POST", 100, "Continue", 1,
	    HTTP_BODY_NONE, 0, true },
	{ "HTTP/1.1 199 x" END, "POST", 199, "x", 1, HTTP_BODY_NONE, 0, true },
	{ OK11 "Content-Length: 10" END, "HEAD", 200, "OK", 1,
	    HTTP_BODY_NONE, 0, true },
	{ OK11 "Transfer-Encoding: chunked" END, "HEAD", 200, "OK", 1,
	    HTTP_BODY_NONE, 0, true },
	/* The method is case-sensitive: "head" is not HEAD. */
	{ OK11 "Content-Length: 10" END, "head", 200, "OK", 1,
	    HTTP_BODY_LENGTH, 10, true },
	{ "HTTP/1.0 200 OK" CRLF "Content-Length: 5" END, "GET", 200, "OK", 0,
	    HTTP_BODY_LENGTH, 5, false },
	{ "HTTP/1.0 200 OK" CRLF "Content-Length: 5" CRLF
	    "Connection: keep-alive" END, "GET", 200, "OK", 0,
	    HTTP_BODY_LENGTH, 5, true },
	{ "HTTP/1.0 200 OK" CRLF "Connection: keep-alive" END, "GET", 200,
	    "OK", 0, HTTP_BODY_CLOSE, 0, false },
	{ OK11 "Connection: close" CRLF "Content-Length: 1" END, "GET", 200,
	    "OK", 1, HTTP_BODY_LENGTH, 1, false },
	{ "HTTP/1.1 404 " END, "GET", 404, "", 1, HTTP_BODY_CLOSE, 0, false },
	{ "HTTP/1.1 404" CRLF "Content-Length: 0" END, "GET", 404, "", 1,
	    HTTP_BODY_LENGTH, 0, true },
	{ "HTTP/1.1 599 Caf\xc3\xa9 \tau lait" CRLF "Content-Length: 0" END,
	    "GET", 599, "Caf\xc3\xa9 \tau lait", 1, HTTP_BODY_LENGTH, 0, true },
};

struct bad_response {
	const char	*in;
	size_t		 len;
	const char	*cause;
};

static const struct bad_response bad_responses[] = {
	{ "HTTP/1.1 200 OK\nContent-Length: 5\n\n", 0, "bare LF" },
	{ "HTTP/1.1 200 OK\r\nX: a\rb" END, 0, "bare CR" },
	{ CRLF OK11 CRLF, 0, "empty line where the status line" },
	{ "HTTP/2 200 OK" END, 0, "is not HTTP-version SP 3DIGIT" },
	{ "HTTP/2.0 200 OK" END, 0, "is not supported" },
	{ "HTTP/1.1 20 OK" END, 0, "is not HTTP-version SP 3DIGIT" },
	{ "HTTP/1.1 2000 OK" END, 0, "is not HTTP-version SP 3DIGIT" },
	{ "HTTP/1.1 2x0 OK" END, 0, "is not HTTP-version SP 3DIGIT" },
	{ "HTTP/1.1  200 OK" END, 0, "is not HTTP-version SP 3DIGIT" },
	{ "HTTP/1.1 099 x" END, 0, "outside 100-599" },
	{ "HTTP/1.1 600 x" END, 0, "outside 100-599" },
	{ "http/1.1 200 OK" END, 0, "is not an HTTP version" },
	{ "HTTP/1.1 200 O\x01K" END, 0, "byte 0x01 in the reason" },
	{ "HTTP/1.1 200 OK\x7f" END, 0, "byte 0x7f in the reason" },
	{ OK11 "Content-Length: 5" CRLF "Transfer-Encoding: chunked" END, 0,
	    "both Transfer-Encoding and Content-Length" },
	{ OK11 "Content-Length: 5" CRLF "Content-Length: 5" END, 0,
	    "several Content-Length" },
	{ OK11 "Content-Length: 5, 5" END, 0, "not one decimal number" },
	{ OK11 "Content-Length: -1" END, 0, "not one decimal number" },
	{ OK11 "Content-Length: 18446744073709551616" END, 0, "too large" },
	{ "HTTP/1.0 200 OK" CRLF "Transfer-Encoding: chunked" END, 0,
	    "Transfer-Encoding in an HTTP/1.0 response" },
	{ OK11 "Transfer-Encoding: chunked, chunked" END, 0,
	    "chunked applied more than once" },
	{ OK11 "Transfer-Encoding: chunked," END, 0, "empty element" },
	{ OK11 "Transfer-Encoding : chunked" END, 0, "white space between" },
	{ OK11 "Connection: Transfer-Encoding" CRLF
	    "Transfer-Encoding: chunked" END, 0, "frames the message" },
	{ OK11 "X: a" CRLF " b" END, 0, "obs-fold" },
	{ OK11 "X: a\0" END, sizeof(OK11 "X: a\0" END) - 1, "byte 0x00" },
	/* 204 and HEAD do not excuse a malformed head. */
	{ "HTTP/1.1 204 x" CRLF "Content-Length: x" END, 0,
	    "not one decimal number" },
	/*
	 * The upstream's bytes are counted, never shown: they may echo a
	 * credential's real value (test_response_bad looks for "tok3n").
	 */
	{ "HTTP/1.1 Bearer tok3n" END, 0, "the status line (21 bytes from "
	    "upstream, not shown) is not HTTP-version SP 3DIGIT SP reason" },
	{ "HTTP/1.1 2t0 tok3n" END, 0, "the status line (18 bytes" },
	{ "tok3n/1. 200 OK" END, 0,
	    "the version (8 bytes from upstream, not shown) is not an HTTP" },
	{ "HTTP/4.2 200 tok3n" END, 0, "HTTP version (8 bytes" },
	{ OK11 "tok3n" END, 0, "header line (5 bytes from upstream, not "
	    "shown) has no ':'" },
	{ OK11 "tok3n : x" END, 0, "header name (5 bytes from upstream" },
	{ OK11 "Content-Length: tok3n" END, 0, "Content-Length (5 bytes" },
	{ OK11 "Transfer-Encoding: a tok3n" END, 0,
	    "Transfer-Encoding (7 bytes" },
	{ OK11 "Connection: a tok3n" END, 0, "Connection (7 bytes" },
};

static void
test_response_good(void **state)
{
	const struct good_response	*c;
	struct http_response		 resp;
	size_t				 i, k, len, used;
	char				*cause, *buf;
	int				 rc;

	(void)state;
	for (i = 0; i < nitems(good_responses); i++) {
		c = &good_responses[i];
		len = strlen(c->in);
		buf = copy(c->in, len);
		if (http_response_parse(buf, len, c->method, &resp, &used,
		    &cause) != HTTP_PARSE_OK)
			fail_msg("good response %zu refused: %s", i, cause);
		assert_null(cause);
		assert_int_equal(used, len);
		assert_int_equal(resp.hs_status, c->status);
		assert_string_equal(resp.hs_reason, c->reason);
		assert_int_equal(resp.hs_minor, c->minor);
		if (resp.hs_body != c->body || resp.hs_length != c->length ||
		    resp.hs_keepalive != c->keepalive)
			fail_msg("good response %zu: body %d length %llu "
			    "keepalive %d", i, resp.hs_body,
			    (unsigned long long)resp.hs_length,
			    resp.hs_keepalive);
		http_response_clear(&resp);
		free(buf);

		for (k = 0; k < len; k++) {
			buf = copy(c->in, k);
			rc = http_response_parse(buf, k, c->method, &resp,
			    &used, &cause);
			if (rc != HTTP_PARSE_MORE)
				fail_msg("good response %zu cut at %zu gave "
				    "%d", i, k, rc);
			assert_null(resp.hs_reason);
			free(buf);
		}
	}
}

static void
test_response_bad(void **state)
{
	const struct bad_response	*c;
	struct http_response		 resp;
	size_t				 i, len, used;
	char				*cause, *buf;

	(void)state;
	for (i = 0; i < nitems(bad_responses); i++) {
		c = &bad_responses[i];
		len = c->len ? c->len : strlen(c->in);
		buf = copy(c->in, len);
		if (http_response_parse(buf, len, "GET", &resp, &used,
		    &cause) != HTTP_PARSE_ERROR)
			fail_msg("bad response %zu accepted", i);
		assert_contains(cause, c->cause);
		assert_null(strstr(cause, "tok3n"));
		assert_null(resp.hs_reason);
		assert_null(resp.hs_headers);
		free(cause);
		free(buf);
	}
}

static void
test_response_limits(void **state)
{
	struct http_response	 resp;
	size_t			 used;
	char			*cause, *buf;

	(void)state;
	buf = malloc(HTTP_HEAD_MAX + 1);
	assert_non_null(buf);
	memcpy(buf, OK11 "X: ", 20);
	memset(buf + 20, 'v', HTTP_HEAD_MAX + 1 - 20);
	memcpy(buf + HTTP_HEAD_MAX - 4, END, 4);
	assert_int_equal(http_response_parse(buf, HTTP_HEAD_MAX, "GET",
	    &resp, &used, &cause), HTTP_PARSE_OK);
	assert_int_equal(used, HTTP_HEAD_MAX);
	http_response_clear(&resp);
	memcpy(buf + HTTP_HEAD_MAX - 4, "v" END, 5);
	assert_int_equal(http_response_parse(buf, HTTP_HEAD_MAX - 1, "GET",
	    &resp, &used, &cause), HTTP_PARSE_MORE);
	assert_int_equal(http_response_parse(buf, HTTP_HEAD_MAX + 1, "GET",
	    &resp, &used, &cause), HTTP_PARSE_ERROR);
	assert_contains(cause, "head longer than");
	free(cause);
	free(buf);
}

static void
test_response_head(void **state)
{
	static const char	 in[] = "HTTP/1.0 200 Fine" CRLF
	    "Connection: keep-alive, X-Hop" CRLF
	    "Content-Type: text/plain" CRLF
	    "X-Hop: 1" CRLF
	    "Keep-Alive: timeout=5" CRLF
	    "Proxy-Authenticate: Basic" CRLF
	    "Upgrade: h2c" CRLF
	    "Trailer: X-T" CRLF
	    "Content-Length: 2" CRLF
	    "Host: kept" END "ok";
	static const char	 want[] = "HTTP/1.1 200 Fine" CRLF
	    "Content-Type: text/plain" CRLF
	    "Content-Length: 2" CRLF
	    "Host: kept" CRLF
	    "Connection: close" END;
	struct http_response	 resp;
	size_t			 used, len;
	char			*cause, *head;

	(void)state;
	assert_int_equal(http_response_parse(in, sizeof(in) - 1, "GET",
	    &resp, &used, &cause), HTTP_PARSE_OK);
	assert_int_equal(used, sizeof(in) - 3);
	assert_true(resp.hs_keepalive);
	head = http_out_response_head(&resp, false, &len);
	assert_string_equal(head, want);
	assert_int_equal(len, strlen(want));
	free(head);
	http_response_clear(&resp);

	/* A 101 to WebSocket keeps its Upgrade; to another, not. */
	assert_int_equal(http_response_parse("HTTP/1.1 101 S" CRLF
	    "Upgrade: websocket" CRLF "Connection: upgrade" CRLF
	    "Sec-WebSocket-Accept: a" END, 84, NULL, &resp, &used, &cause),
	    HTTP_PARSE_OK);
	assert_true(resp.hs_websocket);
	head = http_out_response_head(&resp, true, &len);
	assert_string_equal(head, "HTTP/1.1 101 S" CRLF
	    "Sec-WebSocket-Accept: a" CRLF "Upgrade: websocket" CRLF
	    "Connection: Upgrade" END);
	free(head);
	http_response_clear(&resp);
	assert_int_equal(http_response_parse("HTTP/1.1 101 S" CRLF
	    "Upgrade: h2c" CRLF "Connection: upgrade" END, 53, NULL, &resp,
	    &used, &cause), HTTP_PARSE_OK);
	assert_false(resp.hs_websocket);
	http_response_clear(&resp);

	assert_int_equal(http_response_parse("HTTP/1.1 204 " END, 17, NULL,
	    &resp, &used, &cause), HTTP_PARSE_OK);
	head = http_out_response_head(&resp, true, &len);
	assert_string_equal(head, "HTTP/1.1 204 " CRLF
	    "Connection: keep-alive" END);
	free(head);
	http_response_clear(&resp);
}

static void
test_clear(void **state)
{
	struct http_request	 req;
	struct http_response	 resp;
	size_t			 used;
	int			 status;
	char			*cause;

	(void)state;
	memset(&req, 0, sizeof(req));
	http_request_clear(&req);
	assert_int_equal(http_request_parse("GET http://a/ HTTP/1.1" CRLF
	    "X: y" END, 32, &req, &used, &status, &cause), HTTP_PARSE_OK);
	http_request_clear(&req);
	assert_null(req.hr_method);
	assert_null(req.hr_headers);
	assert_int_equal(req.hr_nheaders, 0);
	http_request_clear(&req);

	memset(&resp, 0, sizeof(resp));
	http_response_clear(&resp);
	assert_int_equal(http_response_parse(OK11 "X: y" END, 25, "GET",
	    &resp, &used, &cause), HTTP_PARSE_OK);
	http_response_clear(&resp);
	assert_null(resp.hs_reason);
	http_response_clear(&resp);
}

/* Bodies. */

static void
test_body_simple(void **state)
{
	struct http_body	 hb;
	bool			 done;

	(void)state;
	http_body_init(&hb, HTTP_BODY_NONE, 0);
	assert_int_equal(http_body_scan(&hb, "abc", 3, &done), 0);
	assert_true(done);

	http_body_init(&hb, HTTP_BODY_LENGTH, 5);
	assert_int_equal(http_body_scan(&hb, "abc", 3, &done), 3);
	assert_false(done);
	assert_int_equal(http_body_scan(&hb, "", 0, &done), 0);
	assert_false(done);
	assert_int_equal(http_body_scan(&hb, "deGET", 5, &done), 2);
	assert_true(done);
	assert_int_equal(http_body_scan(&hb, "GET", 3, &done), 0);
	assert_true(done);

	http_body_init(&hb, HTTP_BODY_LENGTH, 0);
	assert_int_equal(http_body_scan(&hb, "GET", 3, &done), 0);
	assert_true(done);

	http_body_init(&hb, HTTP_BODY_CLOSE, 7);
	assert_int_equal(http_body_scan(&hb, "abc", 3, &done), 3);
	assert_false(done);
	assert_int_equal(http_body_scan(&hb, "", 0, &done), 0);
	assert_false(done);
}

struct chunked_case {
	const char	*in;
	size_t		 len;		/* 0: strlen(in) */
	ssize_t		 want;		/* bytes of body, or -1 */
	bool		 done;
};

#define CHUNKS	"5\r\nhello\r\n0\r\n\r\n"

static const struct chunked_case chunked_cases[] = {
	{ CHUNKS, 0, 15, true },
	{ CHUNKS "GET http://a/ HTTP/1.1\r\n\r\n", 0, 15, true },
	{ "5;ext=val\r\nhello\r\n0\r\n\r\n", 0, 23, true },
	{ "5 ; a = b ;c=\"q\\\"x\" ;d\r\nhello\r\n0;e\r\n\r\n", 0, 38, true },
	{ "5;a=\"\"\r\nhello\r\n0\r\n\r\n", 0, 20, true },
	{ "5;a=\"\xc3\xa9 \t\"\r\nhello\r\n0\r\n\r\n", 0, 24, true },
	{ "A\r\n0123456789\r\na\r\n0123456789\r\n0\r\n\r\n", 0, 35, true },
	{ "1\r\n\n\r\n2\r\n\r\n\r\n0\r\n\r\n", 0, 18, true },
	{ "0\r\nTrailer: x\r\nT2:\r\n\r\n", 0, 22, true },
	{ "000\r\n\r\n", 0, 7, true },
	{ "000000000000001\r\nx\r\n0\r\n\r\n", 0, 25, true },
	{ "fffffffffffffff\r\n", 0, 17, false },
	{ "5\r\nhel", 0, 6, false },
	{ "5\r\nhello\r\n0\r\n", 0, 13, false },
	{ "", 0, 0, false },
	/* Malformed. */
	{ "0000000000000001\r\nx\r\n0\r\n\r\n", 0, -1, false },
	{ "10000000000000000\r\n", 0, -1, false },
	{ "5\nhello\r\n0\r\n\r\n", 0, -1, false },
	{ "5\r\nhello\n0\r\n\r\n", 0, -1, false },
	{ "5\r\nhelloX\r\n0\r\n\r\n", 0, -1, false },
	{ "5\r\nhello\r\r\n0\r\n\r\n", 0, -1, false },
	{ "5\r\nhello\n\n0\r\n\r\n", 0, -1, false },
	{ "5\r\nhello\r\r0\r\n\r\n", 0, -1, false },
	{ "x\r\n", 0, -1, false },
	{ "\r\n", 0, -1, false },
	{ " 5\r\n", 0, -1, false },
	{ "-5\r\n", 0, -1, false },
	{ "+5\r\n", 0, -1, false },
	{ "0x5\r\n", 0, -1, false },
	{ "5 \r\n", 0, -1, false },
	{ "5\t\r\n", 0, -1, false },
	{ "5;\r\n", 0, -1, false },
	{ "5;=b\r\n", 0, -1, false },
	{ "5;a=\r\n", 0, -1, false },
	{ "5;a \r\n", 0, -1, false },
	{ "5;a=b \r\n", 0, -1, false },
	{ "5;a=\"x\r\n", 0, -1, false },
	{ "5;a=\"x\"y\r\n", 0, -1, false },
	{ "5;a=b=c\r\n", 0, -1, false },
	{ "5;a\nb\r\n", 0, -1, false },
	{ "5;a\n\nhello\r\n0\r\n\r\n", 0, -1, false },
	{ "5;a=b\n\nhello\r\n0\r\n\r\n", 0, -1, false },
	{ "5;a=\"b\"\n\nhello\r\n0\r\n\r\n", 0, -1, false },
	{ "5\n\nhello\r\n0\r\n\r\n", 0, -1, false },
	{ "0;a\n\r\n", 0, -1, false },
	{ "5;a=b\nhello\r\n", 0, -1, false },
	{ "5;a=b\x01\r\n", 0, -1, false },
	{ "5;a=\"\x01\"\r\n", 0, -1, false },
	{ "5;a=\"\\\x01\"\r\n", 0, -1, false },
	{ "5\r\n", 0, 3, false },
	{ "5\r\x00", 3, -1, false },
	{ "0\r\nTrailer : x\r\n\r\n", 0, -1, false },
	{ "0\r\n folded\r\n\r\n", 0, -1, false },
	{ "0\r\nX: a\nb\r\n\r\n", 0, -1, false },
	{ "0\r\nX: a\rb\r\n\r\n", 0, -1, false },
	{ "0\r\nX: a\x00\r\n\r\n", 12, -1, false },
	{ "0\r\n: x\r\n\r\n", 0, -1, false },
	{ "0\r\nX\r\n\r\n", 0, -1, false },
	{ "0\r\n\n", 0, -1, false },
	{ "0\r\n\rX", 0, -1, false },
	{ "0\n\r\n", 0, -1, false },
};

/* Scans in all at once; returns the bytes of body or -1, and done. */
static ssize_t
scan_whole(const char *in, size_t len, bool *done)
{
	struct http_body	 hb;

	http_body_init(&hb, HTTP_BODY_CHUNKED, 0);
	return http_body_scan(&hb, in, len, done);
}

/*
 * Scans in in pieces: first cut bytes, then step bytes at a time; each
 * piece is a heap copy so ASan sees a read past it.  Returns what
 * scan_whole would.
 */
static ssize_t
scan_pieces(const char *in, size_t len, size_t cut, size_t step, bool *done)
{
	struct http_body	 hb;
	size_t			 off = 0, n, total = 0;
	ssize_t			 got;
	char			*piece;
	bool			 first = true;

	http_body_init(&hb, HTTP_BODY_CHUNKED, 0);
	*done = false;
	while (first || off < len) {
		n = first ? cut : step;
		first = false;
		if (n > len - off)
			n = len - off;
		piece = copy(in + off, n);
		got = http_body_scan(&hb, piece, n, done);
		free(piece);
		if (got == -1)
			return -1;
		assert_true((size_t)got <= n);
		total += (size_t)got;
		if (*done) {
			assert_int_equal(http_body_scan(&hb, "x", 1, done), 0);
			assert_true(*done);
			return (ssize_t)total;
		}
		assert_int_equal((size_t)got, n);
		off += n;
	}
	return (ssize_t)total;
}

static void
test_body_chunked(void **state)
{
	const struct chunked_case	*c;
	size_t				 i, k, len;
	ssize_t				 got;
	bool				 done;

	(void)state;
	for (i = 0; i < nitems(chunked_cases); i++) {
		c = &chunked_cases[i];
		len = c->len ? c->len : strlen(c->in);
		got = scan_whole(c->in, len, &done);
		if (got != c->want || (got != -1 && done != c->done))
			fail_msg("chunked %zu: got %zd done %d, want %zd "
			    "done %d", i, got, done, c->want, c->done);
		/* Every split point, and one byte at a time. */
		for (k = 0; k <= len; k++) {
			got = scan_pieces(c->in, len, k, len, &done);
			if (got != c->want || (got != -1 && done != c->done))
				fail_msg("chunked %zu split at %zu: got %zd",
				    i, k, got);
		}
		got = scan_pieces(c->in, len, 1, 1, &done);
		if (got != c->want || (got != -1 && done != c->done))
			fail_msg("chunked %zu byte by byte: got %zd", i, got);
	}
}

static void
test_body_chunked_limits(void **state)
{
	struct http_body	 hb;
	char			*buf;
	size_t			 n;
	bool			 done;

	(void)state;
	/* A chunk-size line with extensions up to 4 KiB, not beyond. */
	n = 4096;
	buf = malloc(n + 64);
	assert_non_null(buf);
	buf[0] = '1';
	buf[1] = ';';
	memset(buf + 2, 'e', n - 4);
	memcpy(buf + n - 2, "\r\nx\r\n0\r\n\r\n", 10);
	http_body_init(&hb, HTTP_BODY_CHUNKED, 0);
	assert_int_equal(http_body_scan(&hb, buf, n + 8, &done),
	    (ssize_t)(n + 8));
	assert_true(done);
	buf[1] = 'e';
	buf[1] = ';';
	memset(buf + 2, 'e', n - 3);
	memcpy(buf + n - 1, "\r\nx\r\n0\r\n\r\n", 10);
	http_body_init(&hb, HTTP_BODY_CHUNKED, 0);
	assert_int_equal(http_body_scan(&hb, buf, n + 9, &done), -1);
	free(buf);

	/* Trailer fields up to HTTP_HEAD_MAX bytes in all. */
	n = HTTP_HEAD_MAX;
	buf = malloc(n + 64);
	assert_non_null(buf);
	memcpy(buf, "0\r\nX: ", 6);
	memset(buf + 6, 'v', n);
	memcpy(buf + n - 1, "\r\n\r\n", 4);
	http_body_init(&hb, HTTP_BODY_CHUNKED, 0);
	assert_int_equal(http_body_scan(&hb, buf, n + 3, &done),
	    (ssize_t)(n + 3));
	assert_true(done);
	memcpy(buf + n - 1, "v\r\n\r\n", 5);
	http_body_init(&hb, HTTP_BODY_CHUNKED, 0);
	assert_int_equal(http_body_scan(&hb, buf, n + 4, &done), -1);
	free(buf);

	/* Once malformed, always malformed. */
	http_body_init(&hb, HTTP_BODY_CHUNKED, 0);
	assert_int_equal(http_body_scan(&hb, "z", 1, &done), -1);
	assert_int_equal(http_body_scan(&hb, "0\r\n\r\n", 5, &done), -1);

	/* A large chunk is skipped, not read. */
	http_body_init(&hb, HTTP_BODY_CHUNKED, 0);
	assert_int_equal(http_body_scan(&hb, "100000\r\n", 8, &done), 8);
	assert_int_equal(hb.hb_left, 0x100000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_good),
		cmocka_unit_test(test_request_bad),
		cmocka_unit_test(test_request_split),
		cmocka_unit_test(test_request_limits),
		cmocka_unit_test(test_request_head),
		cmocka_unit_test(test_request_head_proxy_auth),
		cmocka_unit_test(test_request_head_reparse),
		cmocka_unit_test(test_response_good),
		cmocka_unit_test(test_response_bad),
		cmocka_unit_test(test_response_limits),
		cmocka_unit_test(test_response_head),
		cmocka_unit_test(test_clear),
		cmocka_unit_test(test_body_simple),
		cmocka_unit_test(test_body_chunked),
		cmocka_unit_test(test_body_chunked_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
