/*
 * http_request.c: a request's head (RFC 9112 section 3), as a forward
 * proxy is sent it or, inside an inspected TLS connection, as an origin
 * server would be: the request line here, the head's end, its field
 * lines and its framing through http.c, the target through
 * http_target.c.  Nothing here touches a socket.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "wire/wire.h"

/*
 * Parses the request line, len bytes at p without its CRLF: method SP
 * request-target SP HTTP-version, single spaces, nothing else.  Fills
 * hr_method, hr_target, hr_minor.  Returns 0, or -1 with *status and
 * *cause.
 */
static int
http_request_line(const char *p, size_t len, struct http_request *req,
    int *status, char **cause)
{
	size_t		 i, t, end;
	unsigned char	 ch;

	*status = 400;
	for (i = 0; i < len && str_is_tchar((unsigned char)p[i]); i++)
		;
	if (i == 0 || i == len || p[i] != ' ') {
		xasprintf(cause, "the request line does not start with a "
		    "method and one space");
		return -1;
	}
	t = i + 1;
	for (end = t; end < len && p[end] != ' '; end++)
		;
	if (end == t) {
		xasprintf(cause, "empty request target");
		return -1;
	}
	if (end == len) {
		xasprintf(cause, "the request line has no HTTP version");
		return -1;
	}
	if (http_version(p + end + 1, len - end - 1, false, &req->hr_minor,
	    status, cause) == -1)
		return -1;
	for (i = t; i < end; i++) {
		ch = (unsigned char)p[i];
		if (ch <= 0x20 || ch >= 0x7f) {
			xasprintf(cause, "byte 0x%02x in the request target",
			    ch);
			return -1;
		}
	}
	req->hr_method = xstrndup(p, t - 1);
	req->hr_target = xstrndup(p + t, end - t);
	return 0;
}

/*
 * Parses one request head from the len bytes at buf, which may hold more
 * after it.  On HTTP_PARSE_OK, fills req (http_request_clear frees it)
 * and sets *used to the length of the head, the empty line included.  On
 * HTTP_PARSE_MORE, nothing is kept; call again with more bytes.  On
 * HTTP_PARSE_ERROR, *status is the status to answer (400, 414, 431, 501,
 * 505) and *cause says why (caller frees).  req is overwritten, so clear
 * it first if it held an earlier request.
 */
static int	http_request_parse1(const char *, size_t, int,
		    struct http_request *, size_t *, int *, char **);

int
http_request_parse(const char *buf, size_t len, struct http_request *req,
    size_t *used, int *status, char **cause)
{
	return http_request_parse1(buf, len, 0, req, used, status, cause);
}

/*
 * The same, for a request an origin server would get: inside an inspected
 * TLS connection, whose scheme's port is defport (443).  The target is
 * origin-form ("/path?query"); the host and port come from the one Host
 * header (required, even from HTTP/1.0: the proxy must know which host
 * the client means), and the port, when the Host header has none, is
 * defport.
 */
int
http_request_parse_origin(const char *buf, size_t len, int defport,
    struct http_request *req, size_t *used, int *status, char **cause)
{
	return http_request_parse1(buf, len, defport, req, used, status,
	    cause);
}

static int
http_request_parse1(const char *buf, size_t len, int defport,
    struct http_request *req, size_t *used, int *status, char **cause)
{
	struct http_framing	 hf;
	const char		*line, *eol, *end;
	size_t			 skip, headlen;
	int			 rc;

	memset(req, 0, sizeof(*req));
	*used = 0;
	*status = 0;
	*cause = NULL;
	if ((rc = http_head_find(buf, len, true, &skip, &headlen, status,
	    cause)) != HTTP_PARSE_OK)
		return rc;

	line = buf + skip;
	eol = memchr(line, '\r', headlen - skip);
	end = buf + headlen - 2;
	if (http_request_line(line, (size_t)(eol - line), req, status,
	    cause) == -1)
		goto fail;
	if (http_fields_parse(eol + 2, end, false, &req->hr_headers,
	    &req->hr_nheaders, status, cause) == -1)
		goto fail;

	*status = 400;
	req->hr_connect = strcmp(req->hr_method, "CONNECT") == 0;
	if (defport != 0) {
		if (http_target_origin(req, defport, cause) == -1)
			goto fail;
	} else if (http_target_parse(req, cause) == -1)
		goto fail;
	else
		req->hr_defport = 80;
	if (http_framing(req->hr_headers, req->hr_nheaders, false, &hf,
	    cause) == -1)
		goto fail;
	if (hf.hf_hosts > 1) {
		xasprintf(cause, "several Host headers");
		goto fail;
	}
	if (hf.hf_te) {
		/* RFC 9112 section 6.1: faulty framing in HTTP/1.0. */
		if (req->hr_minor == 0) {
			xasprintf(cause, "Transfer-Encoding in an HTTP/1.0 "
			    "request");
			goto fail;
		}
		if (hf.hf_unknown) {
			*status = 501;
			xasprintf(cause, "unknown transfer coding (chunked, "
			    "gzip, deflate and compress are known)");
			goto fail;
		}
		/* Section 6.3: no chunked at the end, no length. */
		if (!hf.hf_chunked || hf.hf_notlast) {
			xasprintf(cause, "chunked must be the last transfer "
			    "coding, and come once");
			goto fail;
		}
		req->hr_body = HTTP_BODY_CHUNKED;
	} else if (hf.hf_cl) {
		req->hr_body = HTTP_BODY_LENGTH;
		req->hr_length = hf.hf_length;
	} else
		req->hr_body = HTTP_BODY_NONE;
	if (req->hr_minor == 1)
		req->hr_keepalive = !hf.hf_close;
	else
		req->hr_keepalive = hf.hf_keepalive && !hf.hf_close;
	/* RFC 6455 section 4.1: a GET of HTTP/1.1, with no body. */
	req->hr_websocket = hf.hf_upgrade && hf.hf_websocket &&
	    req->hr_minor == 1 && strcmp(req->hr_method, "GET") == 0 &&
	    req->hr_body == HTTP_BODY_NONE;

	*status = 0;
	*used = headlen;
	return HTTP_PARSE_OK;

fail:
	http_request_clear(req);
	return HTTP_PARSE_ERROR;
}

/* Frees what req holds and zeroes it; a cleared req may be cleared again. */
void
http_request_clear(struct http_request *req)
{
	free(req->hr_method);
	free(req->hr_target);
	free(req->hr_host);
	free(req->hr_path);
	http_headers_free(req->hr_headers, req->hr_nheaders);
	memset(req, 0, sizeof(*req));
}
