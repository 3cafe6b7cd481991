/*
 * fuzz_http.c: the HTTP head parsers and the body scanner on arbitrary
 * bytes.  The first byte chooses options (keep-alive, the method a
 * response answers, the seed of the piece sizes); the rest is read as a
 * request, as a response and as a chunked body.  Checks the invariants
 * the proxy relies on: a head ends where its parse says and nowhere
 * earlier; what is parsed serialises to a head that parses back to the
 * same method, host, port, path and body; and a body ends at the same
 * byte whether it arrives all at once or in pieces.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static uint32_t
next_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Returns a heap copy of len bytes, so ASan sees a read past them. */
static char *
copy(const void *p, size_t len)
{
	char	*c;

	if ((c = malloc(len == 0 ? 1 : len)) == NULL)
		abort();
	memcpy(c, p, len);
	return c;
}

/*
 * Scans len bytes at p as a body of kind, once whole and once in pieces
 * of random sizes; both must say the same.
 */
static void
scan_compare(enum http_body_kind kind, uint64_t length, const char *p,
    size_t len, uint32_t seed)
{
	struct http_body	 hb;
	ssize_t			 whole, got = 0;
	size_t			 off = 0, n, total = 0;
	bool			 wdone, done = false;
	char			*piece;

	http_body_init(&hb, kind, length);
	whole = http_body_scan(&hb, p, len, &wdone);
	if (whole != -1 && ((size_t)whole > len ||
	    (!wdone && (size_t)whole != len)))
		abort();	/* stopped early without an end */
	if (kind == HTTP_BODY_NONE && (whole != 0 || !wdone))
		abort();
	if (kind == HTTP_BODY_CLOSE && (whole != (ssize_t)len || wdone))
		abort();

	http_body_init(&hb, kind, length);
	if (seed == 0)
		seed = 1;
	do {
		n = next_rand(&seed) % 4 == 0 ? next_rand(&seed) % 300 :
		    next_rand(&seed) % 4;
		if (n > len - off)
			n = len - off;
		piece = copy(p + off, n);
		got = http_body_scan(&hb, piece, n, &done);
		free(piece);
		if (got == -1)
			break;
		if ((size_t)got > n || (!done && (size_t)got != n))
			abort();
		total += (size_t)got;
		off += n;
	} while (!done && off < len);

	if ((whole == -1) != (got == -1))
		abort();	/* malformed in one reading only */
	if (whole != -1 && (wdone != done || (size_t)whole != total))
		abort();	/* the body ends elsewhere */
}

/*
 * Turns a serialised request head (origin-form, Host header) back into
 * absolute-form so that http_request_parse takes it; CONNECT heads are
 * already authority-form.  Returns a new string.
 */
static char *
absolute_form(const char *head, bool connect)
{
	const char	*sp, *host, *eol;
	char		*abs;

	if (connect)
		return strdup(head);
	sp = strchr(head, ' ');
	if ((host = strstr(head, "\r\nHost: ")) == NULL)
		abort();
	host += 8;
	eol = strstr(host, "\r\n");
	if (asprintf(&abs, "%.*s http://%.*s%s", (int)(sp - head), head,
	    (int)(eol - host), host, sp + 1) == -1)
		abort();
	return abs;
}

static void
fuzz_request(const char *buf, size_t len, bool keepalive, uint32_t seed)
{
	struct http_request	 req, back;
	size_t			 used, again, hlen;
	int			 status, rc;
	char			*cause, *head, *abs, *part;

	rc = http_request_parse(buf, len, &req, &used, &status, &cause);
	if (rc == HTTP_PARSE_MORE) {
		if (cause != NULL || used != 0 || len >= HTTP_HEAD_MAX)
			abort();
		return;
	}
	if (rc == HTTP_PARSE_ERROR) {
		if (cause == NULL || (status != 400 && status != 414 &&
		    status != 431 && status != 501 && status != 505))
			abort();
		free(cause);
		return;
	}
	if (rc != HTTP_PARSE_OK || cause != NULL || status != 0 ||
	    used == 0 || used > len || used > HTTP_HEAD_MAX ||
	    req.hr_host == NULL || req.hr_hostlen == 0 ||
	    memchr(req.hr_host, '\0', req.hr_hostlen) != NULL ||
	    req.hr_port < 1 || req.hr_port > 65535 ||
	    (req.hr_path == NULL) != req.hr_connect ||
	    (req.hr_path != NULL && req.hr_path[0] != '/'))
		abort();

	/* The head ends where it says, and not before. */
	part = copy(buf, used);
	if (http_request_parse(part, used, &back, &again, &status,
	    &cause) != HTTP_PARSE_OK || again != used)
		abort();
	http_request_clear(&back);
	if (http_request_parse(part, used - 1, &back, &again, &status,
	    &cause) != HTTP_PARSE_MORE)
		abort();
	free(part);

	/* What is sent upstream says the same. */
	head = http_out_request_head(&req, keepalive, &hlen);
	if (hlen != strlen(head))
		abort();
	abs = absolute_form(head, req.hr_connect);
	rc = http_request_parse(abs, strlen(abs), &back, &again, &status,
	    &cause);
	if (rc != HTTP_PARSE_OK) {
		/* Our Host and Connection may tip it over a limit. */
		if (rc != HTTP_PARSE_ERROR || status != 431 ||
		    (req.hr_nheaders < HTTP_HEADERS_MAX - 2 &&
		    strlen(abs) < HTTP_HEAD_MAX))
			abort();
		free(cause);
	} else {
		if (again != strlen(abs) ||
		    strcmp(req.hr_method, back.hr_method) != 0 ||
		    req.hr_hostlen != back.hr_hostlen ||
		    memcmp(req.hr_host, back.hr_host, req.hr_hostlen) != 0 ||
		    req.hr_port != back.hr_port ||
		    req.hr_connect != back.hr_connect ||
		    (req.hr_path != NULL &&
		    strcmp(req.hr_path, back.hr_path) != 0) ||
		    req.hr_body != back.hr_body ||
		    req.hr_length != back.hr_length ||
		    back.hr_keepalive != keepalive ||
		    strstr(head, "\r\nProxy-Authorization:") != NULL)
			abort();
		http_request_clear(&back);
	}
	free(abs);
	free(head);

	scan_compare(req.hr_body, req.hr_length, buf + used, len - used,
	    seed);
	http_request_clear(&req);
}

static void
fuzz_response(const char *buf, size_t len, const char *method,
    bool keepalive, uint32_t seed)
{
	struct http_response	 resp, back;
	size_t			 used, again, hlen;
	int			 rc;
	char			*cause, *head, *part;

	rc = http_response_parse(buf, len, method, &resp, &used, &cause);
	if (rc == HTTP_PARSE_MORE) {
		if (cause != NULL || used != 0 || len >= HTTP_HEAD_MAX)
			abort();
		return;
	}
	if (rc == HTTP_PARSE_ERROR) {
		if (cause == NULL)
			abort();
		free(cause);
		return;
	}
	if (rc != HTTP_PARSE_OK || cause != NULL || used == 0 ||
	    used > len || resp.hs_status < 100 || resp.hs_status > 599 ||
	    resp.hs_reason == NULL ||
	    (resp.hs_body == HTTP_BODY_CLOSE && resp.hs_keepalive))
		abort();

	part = copy(buf, used);
	if (http_response_parse(part, used, method, &back, &again,
	    &cause) != HTTP_PARSE_OK || again != used)
		abort();
	http_response_clear(&back);
	if (http_response_parse(part, used - 1, method, &back, &again,
	    &cause) != HTTP_PARSE_MORE)
		abort();
	free(part);

	head = http_out_response_head(&resp, keepalive, &hlen);
	if (hlen != strlen(head))
		abort();
	rc = http_response_parse(head, hlen, method, &back, &again, &cause);
	if (rc != HTTP_PARSE_OK) {
		if (rc != HTTP_PARSE_ERROR ||
		    (resp.hs_nheaders < HTTP_HEADERS_MAX &&
		    hlen < HTTP_HEAD_MAX))
			abort();
		free(cause);
	} else {
		if (again != hlen || back.hs_status != resp.hs_status ||
		    strcmp(back.hs_reason, resp.hs_reason) != 0 ||
		    back.hs_body != resp.hs_body ||
		    back.hs_length != resp.hs_length ||
		    back.hs_keepalive != (keepalive &&
		    resp.hs_body != HTTP_BODY_CLOSE))
			abort();
		http_response_clear(&back);
	}
	free(head);

	scan_compare(resp.hs_body, resp.hs_length, buf + used, len - used,
	    seed);
	http_response_clear(&resp);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*buf;
	uint8_t		 opts;
	uint32_t	 seed;

	if (size < 1 || size > 2 * HTTP_HEAD_MAX)
		return 0;
	opts = data[0];
	buf = (const char *)data + 1;
	size--;
	seed = (uint32_t)opts << 16 | (uint32_t)size;

	fuzz_request(buf, size, opts & 1, seed);
	fuzz_response(buf, size, (opts & 2) ? "HEAD" : "GET", opts & 1, seed);
	scan_compare(HTTP_BODY_CHUNKED, 0, buf, size, seed);
	scan_compare(HTTP_BODY_LENGTH, opts, buf, size, seed);
	return 0;
}
