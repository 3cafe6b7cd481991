/*
 * pp2.c: the PROXY protocol v2 header (the HAProxy specification,
 * version 2) of a sandbox's connections, both ways: pp2_header() writes
 * it in the bridge, pp2_parse() and pp2_field() read it in the proxy.
 * It carries the sandbox id in a PP2_TYPE_UNIQUE_ID field and, in fields
 * of cordon's own, the rules a `cordon run --proxy-socket` adds for its
 * connections (a policy in cordon's JSON that can only narrow the
 * proxy's), the command's name, where a captured connection was going
 * (host:port), the name the sandbox's resolver asks about, the local
 * user a node-local originator took the connection from, and, on the
 * one connection a run opens for itself, that it wants its channel
 * (proxy/watch.c): the preflight's answer, then the run's decisions.
 *
 * Only the listeners that sandboxes' bridges connect to expect it, and
 * there it is required: a connection without one is refused, and a
 * client of an ordinary listener cannot claim a sandbox id at all.  On a
 * sandbox listener the id is the client's word: any client may name any
 * id.  So nothing here is kept under an id (the fields decide their own
 * connection alone), and on a Unix socket the proxy logs beside it the
 * uid the kernel gives (proxy/listen.c), which scopes it.  The addresses
 * in the header are ignored.
 */
#include <sys/types.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "wire/pp2.h"

static const uint8_t pp2_sig[12] = {
	0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a
};

/* Says whether len bytes are letters, digits, '.', '_' or '-'. */
static bool
pp2_id_ok(const uint8_t *p, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') ||
		    (p[i] >= 'A' && p[i] <= 'Z') ||
		    (p[i] >= '0' && p[i] <= '9') ||
		    p[i] == '.' || p[i] == '_' || p[i] == '-'))
			return false;
	return true;
}

/*
 * Whether len bytes are a uid in decimal: 1 to 10 digits, no leading 0,
 * below 4294967295 ((uid_t)-1, no one's).  One text per uid: the field
 * scopes a run's channel under its identity.
 */
static bool
pp2_uid_ok(const uint8_t *p, size_t len)
{
	uint64_t	 v = 0;
	size_t		 i;

	if (len == 0 || len > 10 || (p[0] == '0' && len > 1))
		return false;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	return v < UINT32_MAX;
}

/* Where the fields (TLVs) start, after the addresses; 0: unknown family. */
static size_t
pp2_fields(const uint8_t *buf)
{
	static const size_t	 addrlen[] = { 0, 12, 36, 216 };

	if ((buf[13] >> 4) >= 4)
		return 0;
	return 16 + addrlen[buf[13] >> 4];
}

/*
 * Parses the header at the start of len bytes of buf.  On PP2_PARSE_OK,
 * *used is its length and id (idsize bytes, at least PP2_ID_MAX + 1)
 * holds the sandbox id, and *narrow (when not NULL) the run's narrowing
 * rules, NUL-terminated, or NULL (caller frees).  PP2_PARSE_MORE: not
 * all of it yet.  PP2_PARSE_ERROR: *cause says why (caller frees).
 */
int
pp2_parse(const uint8_t *buf, size_t len, size_t *used, char *id,
    size_t idsize, char **narrow, char **cause)
{
	size_t	 n, total, off, tlen;
	bool	 found = false, origin = false;
	char	*rules = NULL;

	*used = 0;
	*cause = NULL;
	if (narrow != NULL)
		*narrow = NULL;
	n = len < sizeof(pp2_sig) ? len : sizeof(pp2_sig);
	if (memcmp(buf, pp2_sig, n) != 0) {
		xasprintf(cause, "no PROXY protocol v2 header (this listener "
		    "is for sandboxes' bridges: cordon bridge --proxy-id)");
		return PP2_PARSE_ERROR;
	}
	if (len < 16)
		return PP2_PARSE_MORE;
	if ((buf[12] & 0xf0) != 0x20 || (buf[12] & 0x0f) > 1) {
		xasprintf(cause, "PROXY header: version or command 0x%02x is "
		    "not v2 LOCAL or PROXY", buf[12]);
		return PP2_PARSE_ERROR;
	}
	total = 16 + ((size_t)buf[14] << 8 | buf[15]);
	if (total > PP2_HEADER_MAX) {
		xasprintf(cause, "PROXY header: longer than %d bytes",
		    PP2_HEADER_MAX);
		return PP2_PARSE_ERROR;
	}
	if (len < total)
		return PP2_PARSE_MORE;

	/* Addresses first (by family), then TLVs to the end. */
	if ((off = pp2_fields(buf)) == 0) {
		xasprintf(cause, "PROXY header: unknown address family");
		return PP2_PARSE_ERROR;
	}
	if (off > total) {
		xasprintf(cause, "PROXY header: addresses longer than the "
		    "header");
		return PP2_PARSE_ERROR;
	}
	while (off < total) {
		if (total - off < 3) {
			xasprintf(cause, "PROXY header: a truncated field");
			goto fail;
		}
		tlen = (size_t)buf[off + 1] << 8 | buf[off + 2];
		if (tlen > total - off - 3) {
			xasprintf(cause, "PROXY header: a field longer than "
			    "the header");
			goto fail;
		}
		if (buf[off] == PP2_TYPE_UNIQUE_ID) {
			if (found || tlen == 0 || tlen > PP2_ID_MAX ||
			    tlen >= idsize || !pp2_id_ok(buf + off + 3, tlen)) {
				xasprintf(cause, "PROXY header: the sandbox id "
				    "must be one field of 1 to %d letters, "
				    "digits, '.', '_' or '-'", PP2_ID_MAX);
				goto fail;
			}
			memcpy(id, buf + off + 3, tlen);
			id[tlen] = '\0';
			found = true;
		} else if (buf[off] == PP2_TYPE_CORDON_NARROW) {
			if (rules != NULL || tlen == 0 ||
			    tlen > PP2_NARROW_MAX ||
			    memchr(buf + off + 3, '\0', tlen) != NULL) {
				xasprintf(cause, "PROXY header: the run's rules "
				    "must be one field of 1 to %d bytes, "
				    "without NUL", PP2_NARROW_MAX);
				goto fail;
			}
			rules = xmalloc(tlen + 1);
			memcpy(rules, buf + off + 3, tlen);
			rules[tlen] = '\0';
		} else if (buf[off] == PP2_TYPE_CORDON_ORIGIN) {
			if (origin || !pp2_uid_ok(buf + off + 3, tlen)) {
				xasprintf(cause, "PROXY header: the originator's "
				    "uid must be one field of 1 to 10 digits "
				    "(a uid in decimal)");
				goto fail;
			}
			origin = true;
		}
		off += 3 + tlen;
	}
	if (!found) {
		xasprintf(cause, "PROXY header: no sandbox id");
		goto fail;
	}
	*used = total;
	if (narrow != NULL)
		*narrow = rules;
	else
		free(rules);
	return PP2_PARSE_OK;
fail:
	free(rules);
	return PP2_PARSE_ERROR;
}

/*
 * The first field of type in a header pp2_parse() accepted (used bytes):
 * its value, with its length in *len; NULL when there is none.
 */
const uint8_t *
pp2_field(const uint8_t *buf, size_t used, int type, size_t *len)
{
	size_t	 off, tlen;

	if (used < 16 || (off = pp2_fields(buf)) == 0)
		return NULL;
	while (off + 3 <= used) {
		tlen = (size_t)buf[off + 1] << 8 | buf[off + 2];
		if (off + 3 + tlen > used)
			return NULL;
		if (buf[off] == type) {
			*len = tlen;
			return buf + off + 3;
		}
		off += 3 + tlen;
	}
	return NULL;
}

/*
 * Copies the field of type into out (outsize bytes), NUL-terminated, when
 * it is there and is 1 to outsize - 1 printable characters without a
 * space.  Returns 0, or -1 (out then "").
 */
int
pp2_text(const uint8_t *buf, size_t used, int type, char *out,
    size_t outsize)
{
	const uint8_t	*v;
	size_t		 len, i;

	out[0] = '\0';
	if ((v = pp2_field(buf, used, type, &len)) == NULL || len == 0 ||
	    len >= outsize)
		return -1;
	for (i = 0; i < len; i++)
		if (v[i] <= 0x20 || v[i] >= 0x7f)
			return -1;
	memcpy(out, v, len);
	out[len] = '\0';
	return 0;
}

/*
 * The command's name from a header pp2_parse() accepted (used bytes), for
 * the log: a label, so a field that is missing or holds anything but
 * letters, digits, '.', '_', '+' or '-' (64 at most) gives "".
 */
void
pp2_command(const uint8_t *buf, size_t used, char *out, size_t outsize)
{
	size_t	 i;

	if (pp2_text(buf, used, PP2_TYPE_CORDON_COMMAND, out, outsize) == -1)
		return;
	for (i = 0; out[i] != '\0'; i++)
		if (i >= PP2_COMMAND_MAX || !(pp2_id_ok((uint8_t *)out + i,
		    1) || out[i] == '+')) {
			out[0] = '\0';
			return;
		}
}

/* Appends a field of type holding len bytes of v at *at in h. */
static void
pp2_put(unsigned char *h, size_t *at, int type, const char *v, size_t len)
{
	h[*at] = (unsigned char)type;
	h[*at + 1] = (unsigned char)(len >> 8);
	h[*at + 2] = (unsigned char)len;
	memcpy(h + *at + 3, v, len);
	*at += 3 + len;
}

/*
 * A header (version 2, LOCAL, no addresses) with the fields of po.
 * Returns it (caller frees) with its length in *len, or NULL with *cause
 * set when the id is not 1 to PP2_ID_MAX letters, digits, '.', '_' or
 * '-', or another field is empty or over its bound.
 */
char *
pp2_header(const struct pp2_out *po, size_t *len, char **cause)
{
	const struct {
		int		 type;
		const char	*v;
		size_t		 max;
		const char	*what;
	} f[] = {
		{ PP2_TYPE_UNIQUE_ID, po->po_id, PP2_ID_MAX, "a sandbox id" },
		{ PP2_TYPE_CORDON_NARROW, po->po_narrow, PP2_NARROW_MAX,
		    "the run's own rules" },
		{ PP2_TYPE_CORDON_COMMAND, po->po_command, PP2_COMMAND_MAX,
		    "a command name" },
		{ PP2_TYPE_CORDON_TARGET, po->po_target, PP2_TARGET_MAX,
		    "a captured destination" },
		{ PP2_TYPE_CORDON_NAME, po->po_name, PP2_NAME_MAX, "a name" },
		{ PP2_TYPE_CORDON_WATCH, po->po_watch, PP2_WATCH_MAX,
		    "a channel's version" },
		{ PP2_TYPE_CORDON_CHANNEL, po->po_channel, PP2_WATCH_MAX,
		    "a channel's version" },
	};
	unsigned char	*h;
	size_t		 i, n, body = 0, at = 16;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (f[i].v == NULL)
			continue;
		n = strlen(f[i].v);
		if (n == 0 || n > f[i].max || (i == 0 &&
		    !pp2_id_ok((const uint8_t *)f[i].v, n))) {
			xasprintf(cause, "%s is 1 to %zu %s", f[i].what,
			    f[i].max, i == 0 ? "letters, digits, '.', '_' or "
			    "'-'" : "bytes");
			return NULL;
		}
		body += 3 + n;
	}
	if (po->po_id == NULL) {
		xasprintf(cause, "a sandbox id is required");
		return NULL;
	}
	h = xmalloc(16 + body);
	memcpy(h, pp2_sig, sizeof(pp2_sig));
	h[12] = 0x20;			/* version 2, LOCAL */
	h[13] = 0x00;			/* AF_UNSPEC: no addresses */
	h[14] = (unsigned char)(body >> 8);
	h[15] = (unsigned char)body;
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].v != NULL)
			pp2_put(h, &at, f[i].type, f[i].v, strlen(f[i].v));
	*len = at;
	return (char *)h;
}
