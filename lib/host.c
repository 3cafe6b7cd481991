/*
 * host.c: turn a host as received (from a policy, a URL, a CONNECT line or
 * a SOCKS5 request) into one canonical form, or refuse it.
 *
 * The canonical form of a name is lower case without the trailing dot; of
 * an IP literal, its address in inet_ntop form (an IPv4-mapped IPv6
 * literal becomes the IPv4 address it names).  Whatever two spellings
 * reach the same place must compare equal after this, or an allowlist
 * or denylist can be walked around.  Nothing is decoded: a name that holds
 * '%', NUL, a control byte or a space is refused, never unescaped.
 */
#include <sys/socket.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/addr.h"
#include "lib/host.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

static bool
host_byte_ok(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_';
}

/* Fills h from an IP literal of len bytes; -1 if it is not one. */
static int
host_parse_addr(const char *s, size_t len, struct host *h)
{
	if (addr_parse(s, len, &h->h_ip) == -1)
		return -1;
	addr_unmap(&h->h_ip);
	h->h_kind = HOST_ADDR;
	addr_str(&h->h_ip, h->h_name, sizeof(h->h_name));
	return 0;
}

/*
 * Parses len bytes of s (which may hold NUL bytes) as a host name or an IP
 * literal into h.  Returns 0, or -1 with *cause set (caller frees); the
 * cause does not repeat the name, which callers show escaped.
 */
int
host_parse(const char *s, size_t len, struct host *h, char **cause)
{
	size_t		 i, label;

	*cause = NULL;
	memset(h, 0, sizeof(*h));
	if (len == 0) {
		xasprintf(cause, "empty host name");
		return -1;
	}
	if (len > HOST_NAME_MAX_LEN + 1) {
		xasprintf(cause, "host name longer than %d bytes",
		    HOST_NAME_MAX_LEN);
		return -1;
	}

	/* IPv6, with or without brackets; zones ("%eth0") are refused. */
	if (s[0] == '[' || memchr(s, ':', len) != NULL) {
		if (host_parse_addr(s, len, h) == 0)
			return 0;
		xasprintf(cause, "not a valid IPv6 literal");
		return -1;
	}

	for (i = 0; i < len; i++) {
		unsigned char	 ch = (unsigned char)s[i];

		if (host_byte_ok(ch))
			continue;
		if (ch == '%')
			xasprintf(cause, "'%%' in a host name is refused "
			    "(percent-escapes are never decoded)");
		else if (ch < 0x20 || ch >= 0x7f)
			xasprintf(cause, "byte 0x%02x at offset %zu is not "
			    "allowed in a host name", ch, i);
		else
			xasprintf(cause, "'%c' is not allowed in a host name "
			    "(letters, digits, '-', '_' and '.')", ch);
		return -1;
	}

	if (s[len - 1] == '.')		/* one trailing dot is the root */
		len--;
	if (len == 0 || s[len - 1] == '.' || s[0] == '.') {
		xasprintf(cause, "empty label in host name");
		return -1;
	}
	if (len > HOST_NAME_MAX_LEN) {
		xasprintf(cause, "host name longer than %d bytes",
		    HOST_NAME_MAX_LEN);
		return -1;
	}

	/* A name ending in a number is an IPv4 literal or nothing. */
	if (addr_looks_numeric(s, len)) {
		if (host_parse_addr(s, len, h) == 0)
			return 0;
		xasprintf(cause, "ends in a number but is not a valid IPv4 "
		    "address");
		return -1;
	}

	for (i = 0, label = 0; i < len; i++) {
		if (s[i] == '.') {
			if (label == 0)
				break;
			label = 0;
			continue;
		}
		if (label == 0 && s[i] == '-') {
			xasprintf(cause, "a label may not start with '-'");
			return -1;
		}
		if (++label > HOST_LABEL_MAX_LEN) {
			xasprintf(cause, "label longer than %d bytes",
			    HOST_LABEL_MAX_LEN);
			return -1;
		}
	}
	if (i < len) {
		xasprintf(cause, "empty label in host name");
		return -1;
	}

	h->h_kind = HOST_NAME;
	for (i = 0; i < len; i++) {
		char	 ch = s[i];

		h->h_name[i] = (ch >= 'A' && ch <= 'Z') ? ch - 'A' + 'a' : ch;
	}
	h->h_name[len] = '\0';
	return 0;
}

/*
 * Says whether canonical name lies strictly below canonical suffix, on a
 * label boundary: "a.b.example.com" is in "example.com"; "example.com"
 * and "badexample.com" are not.
 */
bool
host_in_suffix(const char *name, const char *suffix)
{
	size_t	 n = strlen(name), s = strlen(suffix);

	return n > s + 1 && name[n - s - 1] == '.' &&
	    strcmp(name + n - s, suffix) == 0;
}

/*
 * Splits "HOST", "HOST:PORT", "[V6]", "[V6]:PORT" or a bare IPv6 literal
 * (which has no port): *hostlen gets the length of the host part
 * (brackets included) and *port the text after its ':', or NULL.
 * Returns 0, or -1 with *cause set when brackets are malformed.
 */
int
host_split(const char *s, size_t *hostlen, const char **port, char **cause)
{
	const char	*end, *colon;

	*cause = NULL;
	*port = NULL;
	*hostlen = strlen(s);
	if (s[0] == '[') {
		if ((end = strchr(s, ']')) == NULL) {
			xasprintf(cause, "'[' without ']'");
			return -1;
		}
		*hostlen = (size_t)(end - s) + 1;
		if (end[1] == ':')
			*port = end + 2;
		else if (end[1] != '\0') {
			xasprintf(cause, "text after ']' that is not :PORT");
			return -1;
		}
	} else if ((colon = strchr(s, ':')) != NULL &&
	    strchr(colon + 1, ':') == NULL) {
		*hostlen = (size_t)(colon - s);
		*port = colon + 1;
	}
	return 0;
}

/* Reads a port number 1-65535 (no sign, no leading zero); -1 if bad. */
int
host_port(const char *s)
{
	long	 n = 0;
	size_t	 i;

	if (s[0] < '1' || s[0] > '9')
		return -1;
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 5)
			return -1;
		n = n * 10 + (s[i] - '0');
	}
	return n <= 65535 ? (int)n : -1;
}

/*
 * Is h the host's own loopback: the name localhost, or an address in
 * 127.0.0.0/8 or ::1, however spelled (::ffff:127.0.0.1 is 127.0.0.1),
 * or the unspecified address, which a connect turns into the loopback?
 */
bool
host_is_loopback(const struct host *h)
{
	static const uint8_t	 v6_loopback[16] = { [15] = 1 };
	static const uint8_t	 zero[16];
	struct addr		 u;

	if (h->h_kind == HOST_NAME)
		return strcmp(h->h_name, "localhost") == 0;
	u = h->h_ip;
	addr_unmap(&u);
	if (u.a_family == AF_INET)
		return u.a_bytes[0] == 127 || memcmp(u.a_bytes, zero, 4) == 0;
	return memcmp(u.a_bytes, v6_loopback, 16) == 0 ||
	    memcmp(u.a_bytes, zero, 16) == 0;
}

/*
 * Reads url ("tls://HOST:PORT", [HOST] for IPv6, as host_split reads
 * it) into host and port (caller frees).  An IPv6 address without
 * brackets is refused: "::1:443" is an address, or one and a port.
 * Returns 0, or -1 with *cause set.
 */
int
host_tls_url(const char *url, char **host, char **port, char **cause)
{
	const char	*p, *portstr;
	char		*why;
	size_t		 len;
	bool		 v6;

	*host = *port = *cause = NULL;
	if (strncmp(url, "tls://", 6) != 0 && strncmp(url, "tls:", 4) != 0) {
		xasprintf(cause, "%s: not tls://HOST:PORT", url);
		return -1;
	}
	p = url + (strncmp(url, "tls://", 6) == 0 ? 6 : 4);
	v6 = p[0] == '[' || strchr(p, ':') != strrchr(p, ':');
	if (host_split(p, &len, &portstr, &why) == -1 || portstr == NULL ||
	    len == (p[0] == '[' ? 2 : 0)) {
		free(why);
		xasprintf(cause, "%s: not tls://%s:PORT", url, v6 ?
		    "[ADDRESS]" : "HOST");
		return -1;
	}
	if (host_port(portstr) == -1) {
		xasprintf(cause, "%s: the port is not a number from 1 to 65535",
		    url);
		return -1;
	}
	*host = p[0] == '[' ? xstrndup(p + 1, len - 2) : xstrndup(p, len);
	*port = xstrdup(portstr);
	return 0;
}
