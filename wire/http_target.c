/*
 * http_target.c: where a request goes, from its request target (RFC 9112
 * section 3.2): the host, port and path of an absolute-form or
 * authority-form target sent to a forward proxy, or of an origin-form
 * one and its Host header inside an inspected TLS connection.  The host
 * bytes are kept as they came: the policy judges them, and a head sent
 * on writes them back the same.  http.c calls these once it has the
 * request line and the headers; nothing here touches a socket.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "wire/wire.h"

/* Reads a port, 1-65535 without sign or leading zero, from len bytes. */
static int
http_port(const char *s, size_t len)
{
	size_t	 i;
	int	 n = 0;

	if (len == 0 || len > 5 || s[0] < '1' || s[0] > '9')
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		n = n * 10 + (s[i] - '0');
	}
	return n <= 65535 ? n : -1;
}

/*
 * Takes the host and port from len bytes of authority a: "host",
 * "host:port", "[v6]" or "[v6]:port"; needport is for CONNECT.  The host
 * bytes are kept as they are (the policy checks them); brackets must hold
 * a ':' so that the host can be written back the same way.  Returns 0, or
 * -1 with *cause set.
 */
static int
http_authority(struct http_request *req, const char *a, size_t len,
    bool needport, char **cause)
{
	const char	*h, *end, *colon, *port = NULL;
	size_t		 hlen, plen = 0;

	if (memchr(a, '@', len) != NULL) {
		xasprintf(cause, "user information (user@) in the request "
		    "target is refused");
		return -1;
	}
	if (len > 0 && a[0] == '[') {
		if ((end = memchr(a, ']', len)) == NULL) {
			xasprintf(cause, "'[' without ']' in the host");
			return -1;
		}
		h = a + 1;
		hlen = (size_t)(end - h);
		if (memchr(h, ':', hlen) == NULL ||
		    memchr(h, '[', hlen) != NULL) {
			http_cause(cause, false, "", h, hlen, " in brackets "
			    "is not an IPv6 literal");
			return -1;
		}
		if (end + 1 < a + len) {
			if (end[1] != ':') {
				xasprintf(cause, "text after ']' that is not "
				    ":port");
				return -1;
			}
			port = end + 2;
			plen = (size_t)(a + len - port);
		}
	} else {
		h = a;
		if ((colon = memchr(a, ':', len)) != NULL) {
			port = colon + 1;
			plen = (size_t)(a + len - port);
		}
		hlen = colon != NULL ? (size_t)(colon - a) : len;
		if (memchr(h, '[', hlen) != NULL ||
		    memchr(h, ']', hlen) != NULL) {
			xasprintf(cause, "'[' or ']' in a host name");
			return -1;
		}
	}
	if (hlen == 0) {
		xasprintf(cause, "empty host in the request target");
		return -1;
	}
	if (port == NULL) {
		if (needport) {
			xasprintf(cause, "CONNECT needs a port (host:port)");
			return -1;
		}
		req->hr_port = 80;
	} else if ((req->hr_port = http_port(port, plen)) == -1) {
		http_cause(cause, false, "port ", port, plen, " is not a "
		    "number from 1 to 65535");
		return -1;
	}
	req->hr_host = xstrndup(h, hlen);
	req->hr_hostlen = hlen;
	return 0;
}

/*
 * Takes host, port and path from the request target.  A forward proxy
 * is sent absolute-form (http://host/path) or, for CONNECT, authority-form
 * (host:port); origin-form and asterisk-form are for origin servers, and
 * https:// belongs in a CONNECT tunnel.  Returns 0, or -1 with *cause.
 */
int
http_target_parse(struct http_request *req, char **cause)
{
	const char	*t = req->hr_target, *a, *end;
	size_t		 n;

	if (strchr(t, '#') != NULL) {
		xasprintf(cause, "fragment ('#') in the request target");
		return -1;
	}
	if (req->hr_connect) {
		if (strpbrk(t, "/?") != NULL) {
			xasprintf(cause, "CONNECT needs an authority-form "
			    "target (host:port)");
			return -1;
		}
		return http_authority(req, t, strlen(t), true, cause);
	}
	if (strcmp(t, "*") == 0) {
		xasprintf(cause, "asterisk-form target (*): cordon is a "
		    "forward proxy and needs absolute-form (http://host/path)");
		return -1;
	}
	if (t[0] == '/') {
		xasprintf(cause, "origin-form target: cordon is a forward "
		    "proxy and needs absolute-form (http://host/path)");
		return -1;
	}
	for (n = 0; (t[n] >= 'a' && t[n] <= 'z') || (t[n] >= 'A' &&
	    t[n] <= 'Z') || (n > 0 && ((t[n] >= '0' && t[n] <= '9') ||
	    t[n] == '+' || t[n] == '-' || t[n] == '.')); n++)
		;
	if (n == 0 || t[n] != ':') {
		xasprintf(cause, "the request target is not absolute-form "
		    "(http://host/path)");
		return -1;
	}
	if (http_eq(t, n, "https")) {
		xasprintf(cause, "https:// target: clients must use CONNECT "
		    "for https");
		return -1;
	}
	if (!http_eq(t, n, "http")) {
		http_cause(cause, false, "scheme ", t, n, " is not supported "
		    "(http:// only; CONNECT for https)");
		return -1;
	}
	if (t[n + 1] != '/' || t[n + 2] != '/') {
		xasprintf(cause, "no \"//\" after \"http:\" in the request "
		    "target");
		return -1;
	}
	a = t + n + 3;
	end = a + strcspn(a, "/?");
	if (http_authority(req, a, (size_t)(end - a), false, cause) == -1)
		return -1;
	if (*end == '\0')
		req->hr_path = xstrdup("/");
	else if (*end == '?')
		xasprintf(&req->hr_path, "/%s", end);
	else
		req->hr_path = xstrdup(end);
	return 0;
}

/*
 * Host and port from the one Host header of an origin-form request, as
 * inside an inspected TLS connection, whose port is defport when the
 * header names none.  Returns 0, or -1 with *cause.
 */
int
http_target_origin(struct http_request *req, int defport, char **cause)
{
	const struct http_header	*hh = NULL;
	size_t				 i;

	if (req->hr_connect) {
		xasprintf(cause, "CONNECT inside an inspected TLS connection");
		return -1;
	}
	if (req->hr_target[0] != '/') {
		xasprintf(cause, "the request target is not origin-form "
		    "(/path), as a server is sent");
		return -1;
	}
	if (strchr(req->hr_target, '#') != NULL) {
		xasprintf(cause, "fragment ('#') in the request target");
		return -1;
	}
	for (i = 0; i < req->hr_nheaders; i++)
		if (http_name_is(req->hr_headers[i].hh_name, "Host")) {
			if (hh != NULL) {
				xasprintf(cause, "several Host headers");
				return -1;
			}
			hh = &req->hr_headers[i];
		}
	if (hh == NULL) {
		xasprintf(cause, "no Host header");
		return -1;
	}
	if (http_authority(req, hh->hh_value, strlen(hh->hh_value), false,
	    cause) == -1)
		return -1;
	if (strchr(hh->hh_value, ':') == NULL ||
	    hh->hh_value[strlen(hh->hh_value) - 1] == ']')
		req->hr_port = defport;
	req->hr_defport = defport;
	req->hr_path = xstrdup(req->hr_target);
	return 0;
}
