/*
 * tls_peek.c: the server name (SNI, RFC 6066) of a TLS ClientHello, read
 * from the first bytes of a connection as peeked from its socket.
 *
 * The ClientHello is a handshake message (RFC 8446 4.1.2, RFC 5246 7.4.1.2)
 * that a client may split over several handshake records; it is put back
 * together from consecutive records within the first TLS_PEEK_MAX bytes
 * and then read field by field.  Every length is checked against the one
 * around it: a length that does not add up makes the whole hello BAD,
 * never a guess at the name.  The name is returned as sent, whatever
 * bytes it holds; the caller runs it through the policy's host rules and
 * escapes it before logging.  With Encrypted ClientHello the name seen
 * is the outer, public one.
 *
 * Each call starts from the first byte, so a caller peeks again with more
 * bytes after TLS_PEEK_MORE.  Decisions are made only on bytes present:
 * a prefix of a ClientHello gives MORE, never another answer.
 */
#include <stdbool.h>
#include <string.h>

#include "wire/wire.h"

#define TLS_CONTENT_HANDSHAKE	22
#define TLS_VERSION_MAJOR	3	/* SSL 3.0 and every TLS version */
#define TLS_RECORD_HEADER	5	/* type, version (2), length (2) */
#define TLS_RECORD_MAX		(1 << 14)	/* a plaintext fragment */
#define TLS_HS_CLIENT_HELLO	1
#define TLS_HS_HEADER		4	/* type, length (3) */
#define TLS_RANDOM		32
#define TLS_SESSION_ID_MAX	32
#define TLS_EXT_SERVER_NAME	0
#define TLS_NAME_HOST		0
#define TLS_HOST_NAME_MAX	255

/* What is left to read of a message or of a block inside it. */
struct tls_reader {
	const uint8_t	*tr_p;
	size_t		 tr_left;
};

/* Reads one byte; false if none is left. */
static bool
tls_read_u8(struct tls_reader *r, size_t *v)
{
	if (r->tr_left < 1)
		return false;
	*v = r->tr_p[0];
	r->tr_p++;
	r->tr_left--;
	return true;
}

/* Reads a 16-bit big-endian number; false if fewer bytes are left. */
static bool
tls_read_u16(struct tls_reader *r, size_t *v)
{
	if (r->tr_left < 2)
		return false;
	*v = (size_t)r->tr_p[0] << 8 | r->tr_p[1];
	r->tr_p += 2;
	r->tr_left -= 2;
	return true;
}

/* Skips n bytes; false if fewer are left. */
static bool
tls_skip(struct tls_reader *r, size_t n)
{
	if (r->tr_left < n)
		return false;
	r->tr_p += n;
	r->tr_left -= n;
	return true;
}

/*
 * Reads a vector with a length prefix of lenbytes (1 or 2) bytes into
 * *block; false if the prefix or the bytes it counts are not all there.
 */
static bool
tls_read_vector(struct tls_reader *r, int lenbytes, struct tls_reader *block)
{
	size_t	 n;

	if (!(lenbytes == 1 ? tls_read_u8(r, &n) : tls_read_u16(r, &n)))
		return false;
	if (r->tr_left < n)
		return false;
	block->tr_p = r->tr_p;
	block->tr_left = n;
	r->tr_p += n;
	r->tr_left -= n;
	return true;
}

/*
 * Puts the handshake message that starts the len bytes of buf back
 * together from its records into hello (TLS_PEEK_MAX bytes).  Returns
 * true with *hellolen set when the whole ClientHello is there; false with
 * *result MORE, NOT_TLS (the first record is no handshake record) or BAD.
 * Bytes after the record that ends the ClientHello are not looked at.
 */
static bool
tls_peek_reassemble(const uint8_t *buf, size_t len, uint8_t *hello,
    size_t *hellolen, int *result)
{
	size_t	 pos, end, reclen, got, have, need, rest, n;

	*result = TLS_PEEK_BAD;
	need = 0;	/* the message's length, once its header is here */
	got = 0;	/* message bytes in the records so far */
	have = 0;	/* of which have arrived and are in hello */
	for (pos = 0; need == 0 || got < need; pos = end) {
		if (len < pos + 1)
			goto more;
		if (buf[pos] != TLS_CONTENT_HANDSHAKE)
			goto not_handshake;
		if (len < pos + 2)
			goto more;
		if (buf[pos + 1] != TLS_VERSION_MAJOR)
			goto not_handshake;
		if (len < pos + TLS_RECORD_HEADER)
			goto more;

		/* Empty handshake fragments are forbidden (RFC 8446 5.1). */
		reclen = (size_t)buf[pos + 3] << 8 | buf[pos + 4];
		if (reclen == 0 || reclen > TLS_RECORD_MAX)
			return false;
		/* Past the limit; this also keeps the copy inside hello. */
		end = pos + TLS_RECORD_HEADER + reclen;
		if (end > TLS_PEEK_MAX)
			return false;
		got += reclen;

		n = (len < end ? len : end) - (pos + TLS_RECORD_HEADER);
		memcpy(hello + have, buf + pos + TLS_RECORD_HEADER, n);
		have += n;
		if (have >= 1 && hello[0] != TLS_HS_CLIENT_HELLO)
			return false;
		if (need == 0 && have >= TLS_HS_HEADER)
			need = TLS_HS_HEADER + ((size_t)hello[1] << 16 |
			    (size_t)hello[2] << 8 | hello[3]);
		if (need != 0) {
			/* Nothing but the ClientHello comes first. */
			if (got > need)
				return false;
			/*
			 * The rest needs records of 2^14 bytes at most; so
			 * a hello that cannot fit is BAD as soon as its
			 * length is known, never MORE up to the limit.
			 */
			rest = need - got;
			if (end + rest + TLS_RECORD_HEADER * ((rest +
			    TLS_RECORD_MAX - 1) / TLS_RECORD_MAX) >
			    TLS_PEEK_MAX)
				return false;
		}
		if (n < reclen)
			goto more;
	}
	*hellolen = need;
	return true;

more:
	*result = TLS_PEEK_MORE;
	return false;
not_handshake:
	*result = pos == 0 ? TLS_PEEK_NOT_TLS : TLS_PEEK_BAD;
	return false;
}

/*
 * Reads the server_name extension's data: a ServerNameList of exactly one
 * host_name.  RFC 6066 allows one name per type and host_name is the only
 * type, so a second entry is malformed (as OpenSSL reads it too): taking
 * one of two names could check one name while the server uses the other.
 * Returns true with *name and *namelen (1 to 255 bytes, as sent).
 */
static bool
tls_peek_server_name(struct tls_reader *ext, const uint8_t **name,
    size_t *namelen)
{
	struct tls_reader	 list, host;
	size_t			 type;

	if (!tls_read_vector(ext, 2, &list) || ext->tr_left != 0)
		return false;
	if (!tls_read_u8(&list, &type) || type != TLS_NAME_HOST)
		return false;
	if (!tls_read_vector(&list, 2, &host) || list.tr_left != 0)
		return false;
	if (host.tr_left == 0 || host.tr_left > TLS_HOST_NAME_MAX)
		return false;
	*name = host.tr_p;
	*namelen = host.tr_left;
	return true;
}

/*
 * Reads a whole ClientHello (hellolen bytes with its handshake header)
 * and copies its host_name to sni.  Returns TLS_PEEK_SNI, TLS_PEEK_NO_SNI
 * or TLS_PEEK_BAD; sni is written only for TLS_PEEK_SNI.
 */
static int
tls_peek_hello(const uint8_t *hello, size_t hellolen, char *sni,
    size_t snisize, size_t *snilen)
{
	struct tls_reader	 r, block, ext;
	const uint8_t		*name = NULL;
	size_t			 type, namelen = 0;
	bool			 seen = false;

	r.tr_p = hello + TLS_HS_HEADER;
	r.tr_left = hellolen - TLS_HS_HEADER;

	/* legacy_version, random, legacy_session_id<0..32> */
	if (!tls_skip(&r, 2 + TLS_RANDOM))
		return TLS_PEEK_BAD;
	if (!tls_read_vector(&r, 1, &block) ||
	    block.tr_left > TLS_SESSION_ID_MAX)
		return TLS_PEEK_BAD;
	/* cipher_suites<2..2^16-2>, two bytes each */
	if (!tls_read_vector(&r, 2, &block) || block.tr_left == 0 ||
	    block.tr_left % 2 != 0)
		return TLS_PEEK_BAD;
	/* legacy_compression_methods<1..2^8-1> */
	if (!tls_read_vector(&r, 1, &block) || block.tr_left == 0)
		return TLS_PEEK_BAD;

	/* Before TLS 1.3 the extensions may be left out altogether. */
	if (r.tr_left == 0)
		return TLS_PEEK_NO_SNI;
	if (!tls_read_vector(&r, 2, &block) || r.tr_left != 0)
		return TLS_PEEK_BAD;
	while (block.tr_left != 0) {
		if (!tls_read_u16(&block, &type) ||
		    !tls_read_vector(&block, 2, &ext))
			return TLS_PEEK_BAD;
		if (type != TLS_EXT_SERVER_NAME)
			continue;
		if (seen)
			return TLS_PEEK_BAD;	/* which one would count? */
		seen = true;
		if (!tls_peek_server_name(&ext, &name, &namelen))
			return TLS_PEEK_BAD;
	}
	if (!seen)
		return TLS_PEEK_NO_SNI;

	if (namelen >= snisize)
		return TLS_PEEK_BAD;
	memcpy(sni, name, namelen);
	sni[namelen] = '\0';
	*snilen = namelen;
	return TLS_PEEK_SNI;
}

/*
 * Looks at the len bytes that start a connection for a TLS ClientHello
 * and its server name.  Returns TLS_PEEK_SNI with the name's bytes in sni
 * (snisize bytes), NUL-terminated, and their number in *snilen (the name
 * may hold NUL or any other byte); TLS_PEEK_NO_SNI for a whole hello
 * without server_name; TLS_PEEK_MORE while it is incomplete and under
 * TLS_PEEK_MAX; TLS_PEEK_NOT_TLS when the first record is not a TLS
 * handshake record; TLS_PEEK_BAD for a malformed or oversized hello, or a
 * name that does not fit in sni.  Unless the result is TLS_PEEK_SNI,
 * *snilen is 0 and sni (if snisize > 0) the empty string.
 */
int
tls_peek_sni(const uint8_t *buf, size_t len, char *sni, size_t snisize,
    size_t *snilen)
{
	uint8_t	 hello[TLS_PEEK_MAX];
	size_t	 hellolen;
	int	 result;

	*snilen = 0;
	if (snisize > 0)
		sni[0] = '\0';
	if (!tls_peek_reassemble(buf, len, hello, &hellolen, &result))
		return result;
	return tls_peek_hello(hello, hellolen, sni, snisize, snilen);
}
