/*
 * http_out.c: the heads cordon sends on, written anew from parsed ones
 * (http.c): a request in origin form with a Host made from its target,
 * an answer with a status line of our own, each without the hop-by-hop
 * headers and with a Connection header that says what cordon will do.
 * Only what was parsed goes out: a byte the parser refused never reaches
 * the other side.
 *
 * Nothing here touches a socket; the functions work on parsed heads and
 * are unit-tested and fuzzed that way.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "wire/wire.h"

/* A growing output buffer for the serialisers. */
struct http_out {
	char		*ho_buf;
	size_t		 ho_len;
	size_t		 ho_size;
};

/*
 * Headers that describe one connection, not the message (RFC 9110
 * section 7.6.1), and so are never sent on; Connection names more.
 * Proxy-Authorization is for cordon alone and must not leak upstream.
 */
static const char *const http_hop_by_hop[] = {
	"Connection", "Keep-Alive", "Proxy-Connection", "TE", "Trailer",
	"Upgrade", "Proxy-Authenticate", "Proxy-Authorization"
};

/* Appends len bytes of s to o, keeping it NUL-terminated. */
static void
http_out_add(struct http_out *o, const char *s, size_t len)
{
	size_t	 size;

	if (o->ho_size - o->ho_len <= len) {
		size = o->ho_size == 0 ? 512 : o->ho_size;
		while (size - o->ho_len <= len)
			size *= 2;
		o->ho_buf = xreallocarray(o->ho_buf, 1, size);
		o->ho_size = size;
	}
	memcpy(o->ho_buf + o->ho_len, s, len);
	o->ho_len += len;
	o->ho_buf[o->ho_len] = '\0';
}

static void
http_out_str(struct http_out *o, const char *s)
{
	http_out_add(o, s, strlen(s));
}

/*
 * Says whether header name is hop-by-hop in a message with headers hdrs:
 * one of the fixed list or named by a Connection header.  The framing
 * headers are never dropped, whatever Connection says.
 */
static bool
http_out_hop(const char *name, const struct http_header *hdrs, size_t n)
{
	const char	*s, *e;
	size_t		 i, len;

	for (i = 0; i < nitems(http_hop_by_hop); i++) {
		if (http_name_is(name, http_hop_by_hop[i]))
			return true;
	}
	if (http_name_is(name, "Content-Length") ||
	    http_name_is(name, "Transfer-Encoding"))
		return false;
	for (i = 0; i < n; i++) {
		if (!http_name_is(hdrs[i].hh_name, "Connection"))
			continue;
		s = hdrs[i].hh_value;
		while (http_list_next(&s, &e, &len)) {
			if (http_eq(e, len, name))
				return true;
		}
	}
	return false;
}

/*
 * Appends the end-to-end headers of hdrs (all but Host when nohost), in
 * order, then our Connection header and the empty line.  A WebSocket
 * handshake, asked or answered, keeps its Upgrade: the one hop-by-hop
 * header cordon passes on, as the upgrade it carries itself.
 */
static void
http_out_fields(struct http_out *o, const struct http_header *hdrs,
    size_t n, bool nohost, bool keepalive, bool websocket)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if (http_out_hop(hdrs[i].hh_name, hdrs, n))
			continue;
		if (nohost && http_name_is(hdrs[i].hh_name, "Host"))
			continue;
		http_out_str(o, hdrs[i].hh_name);
		http_out_str(o, ": ");
		http_out_str(o, hdrs[i].hh_value);
		http_out_str(o, "\r\n");
	}
	if (websocket)
		http_out_str(o, "Upgrade: websocket\r\n"
		    "Connection: Upgrade\r\n\r\n");
	else
		http_out_str(o, keepalive ? "Connection: keep-alive\r\n\r\n" :
		    "Connection: close\r\n\r\n");
}

/*
 * Returns the head to send upstream for req (caller frees), its length
 * in *len: origin-form (authority-form for CONNECT) and HTTP/1.1, a Host
 * header made from the target (the client's is dropped), the client's
 * other end-to-end headers in order, and a Connection header saying
 * keepalive (or, for a WebSocket handshake, the upgrade).
 */
char *
http_out_request_head(const struct http_request *req, bool keepalive,
    size_t *len)
{
	struct http_out	 o = { NULL, 0, 0 };
	struct http_out	 auth = { NULL, 0, 0 };
	char		 port[16];
	bool		 v6;

	v6 = memchr(req->hr_host, ':', req->hr_hostlen) != NULL;
	http_out_str(&auth, v6 ? "[" : "");
	http_out_add(&auth, req->hr_host, req->hr_hostlen);
	http_out_str(&auth, v6 ? "]" : "");
	if (req->hr_connect || req->hr_port != req->hr_defport) {
		snprintf(port, sizeof(port), ":%d", req->hr_port);
		http_out_str(&auth, port);
	}

	http_out_str(&o, req->hr_method);
	http_out_str(&o, " ");
	if (req->hr_connect)
		http_out_add(&o, auth.ho_buf, auth.ho_len);
	else
		http_out_str(&o, req->hr_path);
	http_out_str(&o, " HTTP/1.1\r\nHost: ");
	http_out_add(&o, auth.ho_buf, auth.ho_len);
	http_out_str(&o, "\r\n");
	http_out_fields(&o, req->hr_headers, req->hr_nheaders, true,
	    keepalive, req->hr_websocket);
	free(auth.ho_buf);
	*len = o.ho_len;
	return o.ho_buf;
}

/*
 * Returns the head to send the client for resp (caller frees), its
 * length in *len: an HTTP/1.1 status line, the end-to-end headers in
 * order and a Connection header saying keepalive.
 */
char *
http_out_response_head(const struct http_response *resp, bool keepalive,
    size_t *len)
{
	struct http_out	 o = { NULL, 0, 0 };
	char		 line[32];

	snprintf(line, sizeof(line), "HTTP/1.1 %03d ", resp->hs_status);
	http_out_str(&o, line);
	http_out_str(&o, resp->hs_reason != NULL ? resp->hs_reason : "");
	http_out_str(&o, "\r\n");
	http_out_fields(&o, resp->hs_headers, resp->hs_nheaders, false,
	    keepalive, resp->hs_websocket);
	*len = o.ho_len;
	return o.ho_buf;
}
