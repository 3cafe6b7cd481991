/*
 * http.c: strict HTTP/1.x heads (RFC 9112).  Where a body ends is
 * http_body.c's; the heads sent on are written by http_out.c.
 *
 * cordon forwards requests and responses it has parsed, so wherever it
 * reads a head differently from the client or the upstream, one side can
 * hide a second message inside the first (request smuggling, response
 * splitting).  The rule here is to refuse every shape a lenient parser
 * might read otherwise: only CRLF ends a line, header names are tokens
 * followed at once by ':', there is no line folding, one body length
 * (Content-Length or a Transfer-Encoding ending in chunked, never both),
 * and the hop-by-hop headers, including any that Connection names, are
 * removed before a head is sent on.  Nothing here is decoded: the host,
 * the path and the header values are kept as the bytes that came in.
 *
 * Here are the pieces every head has (its end, its field lines, what its
 * framing headers say) and a response; a request is read by
 * http_request.c, its target (where it goes: host, port, path) by
 * http_target.c.  These files touch no socket: they work on buffers, and
 * are unit-tested and fuzzed that way.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "wire/wire.h"

/* The transfer codings RFC 9112 section 7 and the registry know. */
static const char *const http_codings[] = {
	"chunked", "compress", "deflate", "gzip", "x-compress", "x-gzip"
};

/* Says whether ch may appear in a field value: VCHAR, SP, HTAB, obs-text. */
bool
http_vbyte(unsigned char ch)
{
	return ch == ' ' || ch == '\t' || (ch > 0x20 && ch != 0x7f);
}

/* Says whether ch is white space in a field: SP or HTAB. */
bool
http_ws(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* The value of hex digit ch, or -1. */
int
http_hex(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Compares len bytes of s with the NUL-terminated name, ASCII case folded. */
bool
http_eq(const char *s, size_t len, const char *name)
{
	size_t		 i;
	unsigned char	 a, b;

	if (strlen(name) != len)
		return false;
	for (i = 0; i < len; i++) {
		a = (unsigned char)s[i];
		b = (unsigned char)name[i];
		if (a >= 'A' && a <= 'Z')
			a += 'a' - 'A';
		if (b >= 'A' && b <= 'Z')
			b += 'a' - 'A';
		if (a != b)
			return false;
	}
	return true;
}

/* Says whether header name is want, ASCII case folded. */
bool
http_name_is(const char *name, const char *want)
{
	return http_eq(name, strlen(name), want);
}

/*
 * Walks a comma-separated list (RFC 9110 5.6.1): *sp is where the walk
 * is; sets *elem and *elen to the next element without white space
 * around it (it may be empty).  Returns false when the list is done.
 */
bool
http_list_next(const char **sp, const char **elem, size_t *elen)
{
	const char	*s = *sp, *end;

	if (s == NULL)
		return false;
	while (http_ws(*s))
		s++;
	if ((end = strchr(s, ',')) == NULL) {
		end = s + strlen(s);
		*sp = NULL;
	} else
		*sp = end + 1;
	*elem = s;
	while (end > s && http_ws(end[-1]))
		end--;
	*elen = (size_t)(end - s);
	return true;
}

/*
 * Sets *cause to before, then len bytes of s escaped and in double
 * quotes, then after: outside text never reaches a log unescaped.  The
 * bytes of an upstream's answer (up) are not shown, only counted: an
 * answer to a request carrying a credential's real value may hold it
 * anywhere, and the cause goes back to the sandbox and into the log.
 */
void
http_cause(char **cause, bool up, const char *before, const char *s,
    size_t len, const char *after)
{
	char	*shown;

	if (up) {
		xasprintf(cause, "%s(%zu byte%s from upstream, not shown)%s",
		    before, len, len == 1 ? "" : "s", after);
		return;
	}
	shown = str_escape(s, len);
	xasprintf(cause, "%s\"%s\"%s", before, shown, after);
	free(shown);
}

/*
 * Finds the end of the head at the start of buf: the empty line after
 * the start line and the field lines.  A request may be led by one empty
 * line (RFC 9112 section 2.2); *skip says how many bytes that took.
 * Returns HTTP_PARSE_OK with *used just past the empty line,
 * HTTP_PARSE_MORE, or HTTP_PARSE_ERROR with *status and *cause.  A bare
 * CR or LF is refused as soon as it is seen: a lenient reader would end
 * a line there, cordon would not.
 */
int
http_head_find(const char *buf, size_t len, bool request, size_t *skip,
    size_t *used, int *status, char **cause)
{
	const char	*nl, *cr;
	size_t		 i, lim, line = 0, nlines = 0;

	*skip = 0;
	lim = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
	for (;;) {
		/* memchr: a client sending a byte at a time costs less. */
		nl = memchr(buf + line, '\n', lim - line);
		i = nl != NULL ? (size_t)(nl - buf) : lim;
		for (cr = memchr(buf + line, '\r', i - line); cr != NULL;
		    cr = memchr(cr + 1, '\r', i - (size_t)(cr + 1 - buf))) {
			if (cr + 1 < buf + len && cr[1] != '\n') {
				*status = 400;
				xasprintf(cause, "bare CR at byte %zu of the "
				    "head (lines end in CRLF)",
				    (size_t)(cr - buf));
				return HTTP_PARSE_ERROR;
			}
		}
		if (nl == NULL)
			break;
		if (i == 0 || buf[i - 1] != '\r') {
			*status = 400;
			xasprintf(cause, "bare LF at byte %zu of the head "
			    "(lines end in CRLF)", i);
			return HTTP_PARSE_ERROR;
		}
		if (i - 1 == line) {
			if (nlines != 0) {
				*used = i + 1;
				return HTTP_PARSE_OK;
			}
			if (!request || line != 0) {
				*status = 400;
				xasprintf(cause, "empty line where the %s "
				    "line was expected",
				    request ? "request" : "status");
				return HTTP_PARSE_ERROR;
			}
			*skip = line = i + 1;
			continue;
		}
		nlines++;
		line = i + 1;
	}
	if (len < HTTP_HEAD_MAX)
		return HTTP_PARSE_MORE;
	if (nlines == 0) {
		*status = 414;
		xasprintf(cause, "%s line longer than %d bytes",
		    request ? "request" : "status", HTTP_HEAD_MAX);
		return HTTP_PARSE_ERROR;
	}
	*status = 431;
	xasprintf(cause, "head longer than %d bytes", HTTP_HEAD_MAX);
	return HTTP_PARSE_ERROR;
}

/*
 * Reads "HTTP/1.0" or "HTTP/1.1" from len bytes at s (from upstream:
 * up) into *minor.  Returns 0, or -1 with *status (505 for another
 * version, 400 for what is not a version at all) and *cause.
 */
int
http_version(const char *s, size_t len, bool up, int *minor, int *status,
    char **cause)
{
	if (len == 8 && memcmp(s, "HTTP/1.", 7) == 0 &&
	    (s[7] == '0' || s[7] == '1')) {
		*minor = s[7] - '0';
		return 0;
	}
	if (len == 8 && memcmp(s, "HTTP/", 5) == 0 && s[5] >= '0' &&
	    s[5] <= '9' && s[6] == '.' && s[7] >= '0' && s[7] <= '9') {
		*status = 505;
		http_cause(cause, up, "HTTP version ", s, len, " is not "
		    "supported (HTTP/1.0 and HTTP/1.1 are)");
		return -1;
	}
	*status = 400;
	http_cause(cause, up, "the version ", s, len,
	    " is not an HTTP version");
	return -1;
}

/*
 * Parses one field line of len bytes at p (without its CRLF; from
 * upstream: up) into hh.  Returns 0, or -1 with *cause set.
 */
static int
http_field_parse(const char *p, size_t len, bool up, struct http_header *hh,
    char **cause)
{
	size_t		 i, colon, start, end;
	unsigned char	 ch;

	if (http_ws(p[0])) {
		xasprintf(cause, "a header line starts with white space "
		    "(obs-fold and leading white space are refused)");
		return -1;
	}
	for (i = 0; i < len && str_is_tchar((unsigned char)p[i]); i++)
		;
	if (i == len) {
		http_cause(cause, up, "header line ", p, len, " has no ':'");
		return -1;
	}
	if (p[i] != ':') {
		if (http_ws(p[i]))
			http_cause(cause, up, "white space between header "
			    "name ", p, i, " and ':'");
		else
			xasprintf(cause, "byte 0x%02x in a header name",
			    (unsigned char)p[i]);
		return -1;
	}
	if (i == 0) {
		xasprintf(cause, "empty header name");
		return -1;
	}
	colon = i;
	for (start = i + 1; start < len && http_ws(p[start]); start++)
		;
	for (end = len; end > start && http_ws(p[end - 1]); end--)
		;
	for (i = start; i < end; i++) {
		ch = (unsigned char)p[i];
		if (!http_vbyte(ch)) {
			xasprintf(cause, "byte 0x%02x in the value of a "
			    "header", ch);
			return -1;
		}
	}
	hh->hh_name = xstrndup(p, colon);
	hh->hh_value = xstrndup(p + start, end - start);
	return 0;
}

/*
 * Parses the field lines in [p, end) (from upstream: up), each ending in
 * CRLF, into a new array (*hdrs, *nhdrs).  Returns 0, or -1 with *status
 * and *cause; on failure the caller frees what was stored so far.
 */
int
http_fields_parse(const char *p, const char *end, bool up,
    struct http_header **hdrs, size_t *nhdrs, int *status, char **cause)
{
	const char	*q, *eol;
	size_t		 n = 0;

	for (q = p; q < end; n++)
		q = (const char *)memchr(q, '\n', (size_t)(end - q)) + 1;
	if (n > HTTP_HEADERS_MAX) {
		*status = 431;
		xasprintf(cause, "more than %d header lines",
		    HTTP_HEADERS_MAX);
		return -1;
	}
	*hdrs = n == 0 ? NULL : xcalloc(n, sizeof(**hdrs));
	*nhdrs = 0;
	for (q = p; q < end; q = eol + 2) {
		eol = memchr(q, '\r', (size_t)(end - q));
		if (http_field_parse(q, (size_t)(eol - q), up,
		    &(*hdrs)[*nhdrs], cause) == -1) {
			*status = 400;
			return -1;
		}
		(*nhdrs)++;
	}
	return 0;
}

/*
 * Reads a Content-Length value (from upstream: up): 1*DIGIT, no sign, no
 * list, at most INT64_MAX so that no reader can take it as negative.
 */
static int
http_length(const char *s, bool up, uint64_t *n, char **cause)
{
	const char	*p;
	unsigned	 d;

	*n = 0;
	if (*s == '\0') {
		xasprintf(cause, "empty Content-Length");
		return -1;
	}
	for (p = s; *p != '\0'; p++) {
		if (*p < '0' || *p > '9') {
			http_cause(cause, up, "Content-Length ", s, strlen(s),
			    " is not one decimal number");
			return -1;
		}
		d = (unsigned)(*p - '0');
		if (*n > ((uint64_t)INT64_MAX - d) / 10) {
			xasprintf(cause, "Content-Length too large");
			return -1;
		}
		*n = *n * 10 + d;
	}
	return 0;
}

/*
 * Adds the codings of one Transfer-Encoding value (from upstream: up) to
 * hf.  A coding must be a plain token: empty list elements, parameters
 * and quoted strings are refused, since a lenient reader may count them
 * differently when it looks for the last coding.  Returns 0, or -1 with
 * *cause.
 */
static int
http_te_add(const char *value, bool up, struct http_framing *hf,
    char **cause)
{
	const char	*s = value, *e;
	size_t		 len, i;
	bool		 known;

	while (http_list_next(&s, &e, &len)) {
		if (len == 0) {
			xasprintf(cause, "empty element in Transfer-Encoding");
			return -1;
		}
		if (!str_is_token(e, len)) {
			http_cause(cause, up, "Transfer-Encoding ", value,
			    strlen(value), " is not a list of codings");
			return -1;
		}
		if (hf->hf_chunked)
			hf->hf_notlast = true;
		hf->hf_chunked = http_eq(e, len, "chunked");
		known = false;
		for (i = 0; i < nitems(http_codings); i++)
			known = known || http_eq(e, len, http_codings[i]);
		if (!known)
			hf->hf_unknown = true;
	}
	hf->hf_te = true;
	return 0;
}

/*
 * Reads one Connection value (from upstream: up): a list of header
 * names.  Naming Content-Length or Transfer-Encoding is refused: hop-by-
 * hop removal would take the framing away from the next hop and turn the
 * body into a second message.  Returns 0, or -1 with *cause.
 */
static int
http_connection_add(const char *value, bool up, struct http_framing *hf,
    char **cause)
{
	const char	*s = value, *e;
	size_t		 len;

	while (http_list_next(&s, &e, &len)) {
		if (len == 0)
			continue;
		if (!str_is_token(e, len)) {
			http_cause(cause, up, "Connection ", value,
			    strlen(value), " is not a list of header names");
			return -1;
		}
		if (http_eq(e, len, "close"))
			hf->hf_close = true;
		else if (http_eq(e, len, "keep-alive"))
			hf->hf_keepalive = true;
		else if (http_eq(e, len, "upgrade"))
			hf->hf_upgrade = true;
		else if (http_eq(e, len, "content-length") ||
		    http_eq(e, len, "transfer-encoding")) {
			/* One of two names: no credential in it. */
			http_cause(cause, false, "Connection names ", e, len,
			    ", which frames the message");
			return -1;
		}
	}
	return 0;
}

/*
 * Reads one Upgrade value, a list of protocols: hf_websocket when one is
 * WebSocket's (RFC 6455 section 4.1: "websocket", any case, no version).
 */
static void
http_upgrade_add(const char *value, struct http_framing *hf)
{
	const char	*s = value, *e;
	size_t		 len;

	while (http_list_next(&s, &e, &len))
		if (http_eq(e, len, "websocket"))
			hf->hf_websocket = true;
}

/*
 * Reads the headers that frame a message (from upstream: up) and its
 * connection into hf: Transfer-Encoding, Content-Length, Connection,
 * Host.  Refuses what is malformed, a second Content-Length (even with
 * the same value) and Content-Length beside Transfer-Encoding.  Returns
 * 0, or -1 with *cause.
 */
int
http_framing(const struct http_header *hdrs, size_t n, bool up,
    struct http_framing *hf, char **cause)
{
	const struct http_header	*hh;
	size_t				 i;

	memset(hf, 0, sizeof(*hf));
	for (i = 0; i < n; i++) {
		hh = &hdrs[i];
		if (http_name_is(hh->hh_name, "Transfer-Encoding")) {
			if (http_te_add(hh->hh_value, up, hf, cause) == -1)
				return -1;
		} else if (http_name_is(hh->hh_name, "Content-Length")) {
			if (hf->hf_cl) {
				xasprintf(cause, "several Content-Length "
				    "headers");
				return -1;
			}
			if (http_length(hh->hh_value, up, &hf->hf_length,
			    cause) == -1)
				return -1;
			hf->hf_cl = true;
		} else if (http_name_is(hh->hh_name, "Connection")) {
			if (http_connection_add(hh->hh_value, up, hf,
			    cause) == -1)
				return -1;
		} else if (http_name_is(hh->hh_name, "Host"))
			hf->hf_hosts++;
		else if (http_name_is(hh->hh_name, "Upgrade"))
			http_upgrade_add(hh->hh_value, hf);
	}
	if (hf->hf_te && hf->hf_cl) {
		xasprintf(cause, "both Transfer-Encoding and Content-Length");
		return -1;
	}
	return 0;
}

void
http_headers_free(struct http_header *hdrs, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(hdrs[i].hh_name);
		free(hdrs[i].hh_value);
	}
	free(hdrs);
}

/*
 * Parses the status line, len bytes at p without its CRLF: HTTP-version
 * SP 3DIGIT SP reason.  A missing SP before an empty reason is let
 * through: it changes nothing about framing.  Returns 0, or -1 with
 * *cause.
 */
static int
http_status_line(const char *p, size_t len, struct http_response *resp,
    char **cause)
{
	int	 status;
	size_t	 i;

	if (len < 12 || p[8] != ' ' || (len > 12 && p[12] != ' ')) {
		http_cause(cause, true, "the status line ", p, len, " is not "
		    "HTTP-version SP 3DIGIT SP reason");
		return -1;
	}
	if (http_version(p, 8, true, &resp->hs_minor, &status, cause) == -1)
		return -1;
	for (i = 9; i < 12; i++) {
		if (p[i] < '0' || p[i] > '9') {
			http_cause(cause, true, "the status line ", p, len,
			    " is not HTTP-version SP 3DIGIT SP reason");
			return -1;
		}
		resp->hs_status = resp->hs_status * 10 + (p[i] - '0');
	}
	if (resp->hs_status < 100 || resp->hs_status > 599) {
		xasprintf(cause, "status %d is outside 100-599",
		    resp->hs_status);
		return -1;
	}
	for (i = 13; i < len; i++) {
		if (!http_vbyte((unsigned char)p[i])) {
			xasprintf(cause, "byte 0x%02x in the reason phrase",
			    (unsigned char)p[i]);
			return -1;
		}
	}
	resp->hs_reason = len > 13 ? xstrndup(p + 13, len - 13) : xstrdup("");
	return 0;
}

/*
 * Parses one response head from the len bytes at buf, for a request
 * whose method was method (NULL: not HEAD).  On HTTP_PARSE_OK, fills
 * resp (http_response_clear frees it), *used is the length of the head,
 * and hs_body says how the body ends (RFC 9112 section 6.3).  On
 * HTTP_PARSE_ERROR, *cause says why (caller frees), naming what was
 * malformed without the upstream's bytes (http_cause); the proxy answers
 * 502.  resp is overwritten.
 */
int
http_response_parse(const char *buf, size_t len, const char *method,
    struct http_response *resp, size_t *used, char **cause)
{
	struct http_framing	 hf;
	const char		*eol, *end;
	size_t			 skip, headlen;
	int			 rc, status, code;

	memset(resp, 0, sizeof(*resp));
	*used = 0;
	*cause = NULL;
	if ((rc = http_head_find(buf, len, false, &skip, &headlen, &status,
	    cause)) != HTTP_PARSE_OK)
		return rc;

	eol = memchr(buf, '\r', headlen);
	end = buf + headlen - 2;
	if (http_status_line(buf, (size_t)(eol - buf), resp, cause) == -1)
		goto fail;
	if (http_fields_parse(eol + 2, end, true, &resp->hs_headers,
	    &resp->hs_nheaders, &status, cause) == -1)
		goto fail;
	if (http_framing(resp->hs_headers, resp->hs_nheaders, true, &hf,
	    cause) == -1)
		goto fail;
	if (hf.hf_te && resp->hs_minor == 0) {
		xasprintf(cause, "Transfer-Encoding in an HTTP/1.0 response");
		goto fail;
	}
	if (hf.hf_te && hf.hf_chunked && hf.hf_notlast) {
		xasprintf(cause, "chunked applied more than once");
		goto fail;
	}

	code = resp->hs_status;
	if ((method != NULL && strcmp(method, "HEAD") == 0) ||
	    (code >= 100 && code < 200) || code == 204 || code == 304)
		resp->hs_body = HTTP_BODY_NONE;
	else if (hf.hf_te)
		resp->hs_body = hf.hf_chunked ? HTTP_BODY_CHUNKED :
		    HTTP_BODY_CLOSE;
	else if (hf.hf_cl) {
		resp->hs_body = HTTP_BODY_LENGTH;
		resp->hs_length = hf.hf_length;
	} else
		resp->hs_body = HTTP_BODY_CLOSE;
	if (resp->hs_minor == 1)
		resp->hs_keepalive = !hf.hf_close;
	else
		resp->hs_keepalive = hf.hf_keepalive && !hf.hf_close;
	if (resp->hs_body == HTTP_BODY_CLOSE)
		resp->hs_keepalive = false;
	resp->hs_websocket = code == 101 && hf.hf_upgrade && hf.hf_websocket;

	*used = headlen;
	return HTTP_PARSE_OK;

fail:
	http_response_clear(resp);
	return HTTP_PARSE_ERROR;
}

/* Frees what resp holds and zeroes it; may be called again. */
void
http_response_clear(struct http_response *resp)
{
	free(resp->hs_reason);
	http_headers_free(resp->hs_headers, resp->hs_nheaders);
	memset(resp, 0, sizeof(*resp));
}
