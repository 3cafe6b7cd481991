/*
 * ssh_peek.c: what an SSH server shows in clear in its first key
 * exchange, read from the bytes it sends down a tunnel: its host key
 * (K_S) and its signature of the exchange hash, which becomes the
 * session identifier.  OpenSSH's client hands that very signature to
 * its agent in session-bind@openssh.com (kex->initial_sig), so cordon
 * run's agent can tell which tunnel carried the session it is asked to
 * sign for, and so where the proxy connected for it.
 *
 * The stream is RFC 4253's: lines before the version line (section
 * 4.2), the version line, then binary packets (section 6), in clear
 * until NEWKEYS.  The reply is SSH_MSG_KEXDH_REPLY or
 * SSH_MSG_KEX_ECDH_REPLY (31: string K_S, string f or Q_S, string
 * signature, as the post-quantum hybrids send too) or
 * SSH_MSG_KEX_DH_GEX_REPLY (33, the same three); a 31 that is not three
 * strings is the group exchange's GROUP, and is passed over.  Anything
 * else, or more than SSH_PEEK_MAX bytes, ends the watch with nothing.
 * No I/O here: the unit tests and the fuzzer feed it any bytes.
 */
#include <sys/types.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "wire/wire.h"

#define SSH_PEEK_LINE_MAX	255	/* RFC 4253 section 4.2 */
#define SSH_PEEK_LINES_MAX	32	/* lines before the version */
#define SSH_PEEK_PACKET_MAX	35000	/* RFC 4253 section 6.1 */

#define SSH_MSG_IGNORE		2
#define SSH_MSG_DEBUG		4
#define SSH_MSG_KEXINIT		20
#define SSH_MSG_KEX_REPLY	31	/* or the group exchange's GROUP */
#define SSH_MSG_KEX_GEX_REPLY	33

/* A string of the wire at *p (*left bytes); false when it does not fit. */
static bool
ssh_peek_string(const uint8_t **p, size_t *left, const uint8_t **s,
    size_t *len)
{
	uint32_t	 n;

	if (*left < 4)
		return false;
	n = (uint32_t)(*p)[0] << 24 | (uint32_t)(*p)[1] << 16 |
	    (uint32_t)(*p)[2] << 8 | (uint32_t)(*p)[3];
	if (n > *left - 4)
		return false;
	*s = *p + 4;
	*len = n;
	*p += 4 + (size_t)n;
	*left -= 4 + (size_t)n;
	return true;
}

/* A reply's body (after its type): three strings and nothing more. */
static bool
ssh_peek_reply(struct ssh_peek *sp, const uint8_t *p, size_t left)
{
	const uint8_t	*key, *pub, *sig;
	size_t		 keylen, publen, siglen;

	if (!ssh_peek_string(&p, &left, &key, &keylen) ||
	    !ssh_peek_string(&p, &left, &pub, &publen) ||
	    !ssh_peek_string(&p, &left, &sig, &siglen) || left != 0 ||
	    keylen == 0 || siglen == 0)
		return false;
	sp->sp_hostkey = xmalloc(keylen);
	memcpy(sp->sp_hostkey, key, keylen);
	sp->sp_hostkeylen = keylen;
	sp->sp_sig = xmalloc(siglen);
	memcpy(sp->sp_sig, sig, siglen);
	sp->sp_siglen = siglen;
	return true;
}

/*
 * The line at sp_off, before the version line's end: SSH_PEEK_MORE to
 * go on, SSH_PEEK_NONE when this is not an SSH server.
 */
static int
ssh_peek_line(struct ssh_peek *sp)
{
	const uint8_t	*p = sp->sp_buf + sp->sp_off, *nl;
	size_t		 left = sp->sp_len - sp->sp_off, len, i;

	nl = memchr(p, '\n', left);
	len = nl != NULL ? (size_t)(nl - p) : left;
	/* Text only: a TLS server's first byte ends the watch at once. */
	for (i = 0; i < len && i <= SSH_PEEK_LINE_MAX; i++)
		if ((p[i] < 0x20 || p[i] > 0x7e) && !(p[i] == '\r' &&
		    i + 1 == len))
			return SSH_PEEK_NONE;
	if (len > SSH_PEEK_LINE_MAX)
		return SSH_PEEK_NONE;
	if (nl == NULL)
		return SSH_PEEK_MORE;
	sp->sp_off += len + 1;
	if (len >= 4 && memcmp(p, "SSH-", 4) == 0) {
		if ((len < 8 || memcmp(p, "SSH-2.0-", 8) != 0) &&
		    (len < 9 || memcmp(p, "SSH-1.99-", 9) != 0))
			return SSH_PEEK_NONE;
		sp->sp_banner = true;
	} else if (++sp->sp_lines > SSH_PEEK_LINES_MAX)
		return SSH_PEEK_NONE;
	return SSH_PEEK_MORE;
}

/*
 * The packet at sp_off, once it is all there: SSH_PEEK_MORE to go on,
 * SSH_PEEK_FOUND with the reply's key and signature, or SSH_PEEK_NONE.
 */
static int
ssh_peek_packet(struct ssh_peek *sp)
{
	const uint8_t	*p = sp->sp_buf + sp->sp_off;
	size_t		 left = sp->sp_len - sp->sp_off, paylen;
	uint32_t	 plen;
	uint8_t		 type;

	if (left < 5)
		return SSH_PEEK_MORE;
	plen = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
	if (plen < 2 || plen > SSH_PEEK_PACKET_MAX || p[4] >= plen - 1)
		return SSH_PEEK_NONE;
	if (left - 4 < plen)
		return SSH_PEEK_MORE;
	sp->sp_off += 4 + (size_t)plen;
	paylen = plen - 1 - p[4];
	type = p[5];
	switch (type) {
	case SSH_MSG_IGNORE:
	case SSH_MSG_DEBUG:
	case SSH_MSG_KEXINIT:
		return SSH_PEEK_MORE;
	case SSH_MSG_KEX_REPLY:
		if (ssh_peek_reply(sp, p + 6, paylen - 1))
			return SSH_PEEK_FOUND;
		return SSH_PEEK_MORE;	/* the group exchange's GROUP */
	case SSH_MSG_KEX_GEX_REPLY:
		if (ssh_peek_reply(sp, p + 6, paylen - 1))
			return SSH_PEEK_FOUND;
		return SSH_PEEK_NONE;
	default:		/* NEWKEYS, DISCONNECT, anything else */
		return SSH_PEEK_NONE;
	}
}

/*
 * Feeds the next len bytes the server sent.  Returns SSH_PEEK_MORE
 * while it wants more, then SSH_PEEK_FOUND (sp_hostkey and sp_sig are
 * set) or SSH_PEEK_NONE, and the same again for any later call.
 */
int
ssh_peek_feed(struct ssh_peek *sp, const void *data, size_t len)
{
	int	 rc = SSH_PEEK_MORE;

	if (sp->sp_done != SSH_PEEK_MORE)
		return sp->sp_done;
	if (len > SSH_PEEK_MAX - sp->sp_seen)
		len = SSH_PEEK_MAX - sp->sp_seen;
	sp->sp_seen += len;
	sp->sp_buf = xreallocarray(sp->sp_buf, 1, sp->sp_len + len + 1);
	memcpy(sp->sp_buf + sp->sp_len, data, len);
	sp->sp_len += len;
	while (rc == SSH_PEEK_MORE && sp->sp_off < sp->sp_len) {
		size_t	 off = sp->sp_off;

		rc = sp->sp_banner ? ssh_peek_packet(sp) : ssh_peek_line(sp);
		if (rc == SSH_PEEK_MORE && sp->sp_off == off)
			break;		/* a part: wait for the rest */
	}
	if (rc == SSH_PEEK_MORE && sp->sp_seen == SSH_PEEK_MAX)
		rc = SSH_PEEK_NONE;
	/* What is parsed goes; the part left moves to the front. */
	memmove(sp->sp_buf, sp->sp_buf + sp->sp_off, sp->sp_len - sp->sp_off);
	sp->sp_len -= sp->sp_off;
	sp->sp_off = 0;
	if (rc != SSH_PEEK_MORE) {
		free(sp->sp_buf);
		sp->sp_buf = NULL;
		sp->sp_len = 0;
		sp->sp_done = rc;
	}
	return rc;
}

/* Frees what sp holds; it is then as new (all zeros). */
void
ssh_peek_clear(struct ssh_peek *sp)
{
	free(sp->sp_buf);
	free(sp->sp_hostkey);
	free(sp->sp_sig);
	memset(sp, 0, sizeof(*sp));
}
