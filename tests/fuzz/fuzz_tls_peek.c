/*
 * fuzz_tls_peek.c: the ClientHello reader on arbitrary bytes.  Checks
 * what the proxy relies on: the name fits the buffer, is NUL-terminated
 * and counted; MORE is never the answer at TLS_PEEK_MAX bytes; a prefix
 * of the input gives MORE or the same answer with the same name, never
 * another; a smaller buffer gives the same name or BAD; how the hello
 * is cut into records does not change the answer.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct answer {
	int		 a_rc;
	char		 a_sni[256];
	size_t		 a_len;
};

/*
 * Peeks at len bytes of data, copied so that ASan sees any read past
 * them, with an sni buffer of snisize bytes; checks what any answer must
 * hold.
 */
static void
peek(const uint8_t *data, size_t len, size_t snisize, struct answer *a)
{
	uint8_t	*copy;
	char	*sni;

	if ((copy = malloc(len ? len : 1)) == NULL ||
	    (sni = malloc(snisize ? snisize : 1)) == NULL)
		abort();
	memcpy(copy, data, len);
	memset(sni, 'x', snisize ? snisize : 1);
	a->a_rc = tls_peek_sni(copy, len, snisize ? sni : NULL, snisize,
	    &a->a_len);
	free(copy);

	switch (a->a_rc) {
	case TLS_PEEK_SNI:
		if (a->a_len == 0 || a->a_len > 255 || a->a_len >= snisize ||
		    sni[a->a_len] != '\0')
			abort();
		memcpy(a->a_sni, sni, a->a_len + 1);
		break;
	case TLS_PEEK_MORE:
		if (len >= TLS_PEEK_MAX)
			abort();	/* would wait for ever */
		/* FALLTHROUGH */
	case TLS_PEEK_NOT_TLS:
	case TLS_PEEK_NO_SNI:
	case TLS_PEEK_BAD:
		if (a->a_len != 0 || (snisize > 0 && sni[0] != '\0'))
			abort();
		break;
	default:
		abort();
	}
	free(sni);
}

/* Aborts unless a prefix's answer p is MORE or the whole's answer w. */
static void
same_or_more(const struct answer *p, const struct answer *w)
{
	if (p->a_rc == TLS_PEEK_MORE)
		return;
	if (p->a_rc != w->a_rc)
		abort();
	if (p->a_rc == TLS_PEEK_SNI && (p->a_len != w->a_len ||
	    memcmp(p->a_sni, w->a_sni, p->a_len) != 0))
		abort();	/* a prefix named another server */
}

/* Frames the n bytes of p as handshake records of size bytes each. */
static size_t
frame(uint8_t *out, const uint8_t *p, size_t n, size_t size)
{
	size_t	 off, k, len = 0;

	for (off = 0; off < n; off += k) {
		k = n - off < size ? n - off : size;
		out[len++] = 22;
		out[len++] = 3;
		out[len++] = 1;
		out[len++] = (uint8_t)(k >> 8);
		out[len++] = (uint8_t)k;
		memcpy(out + len, p + off, k);
		len += k;
	}
	return len;
}

/*
 * Reads the input (after a record header, if it has one) as a handshake
 * message, framed as one record and as records of a few bytes each: the
 * answers agree, unless the small records pass TLS_PEEK_MAX (BAD).  With
 * small records, inputs of a few kilobytes reach the limit.
 */
static void
check_framing(const uint8_t *data, size_t size)
{
	struct answer	 one, small;
	uint8_t		*out;
	size_t		 n, rsize, len;

	if (size > 0 && data[0] == 22) {
		if (size <= 5)
			return;
		data += 5;
		size -= 5;
	}
	/* Nothing after the message: it would fall in another record. */
	if (size >= 4 && size > 4 + ((size_t)data[1] << 16 |
	    (size_t)data[2] << 8 | data[3]))
		size = 4 + ((size_t)data[1] << 16 | (size_t)data[2] << 8 |
		    data[3]);
	if (size == 0 || size > 16384)
		return;
	rsize = 1 + size % 7;
	if ((out = malloc(size * 6 + 5)) == NULL)
		abort();
	n = frame(out, data, size, 16384);
	peek(out, n, 256, &one);
	len = frame(out, data, size, rsize);
	peek(out, len, 256, &small);
	free(out);

	switch (one.a_rc) {
	case TLS_PEEK_MORE:
		if (small.a_rc != TLS_PEEK_MORE && small.a_rc != TLS_PEEK_BAD)
			abort();
		break;
	case TLS_PEEK_BAD:
		if (small.a_rc != TLS_PEEK_BAD)
			abort();
		break;
	case TLS_PEEK_SNI:
	case TLS_PEEK_NO_SNI:
		if (len > TLS_PEEK_MAX) {
			if (small.a_rc != TLS_PEEK_BAD)
				abort();
			break;
		}
		if (small.a_rc != one.a_rc || small.a_len != one.a_len ||
		    memcmp(small.a_sni, one.a_sni, one.a_len) != 0)
			abort();	/* the framing changed the answer */
		break;
	default:
		abort();		/* we framed it as TLS */
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct answer	 whole, part;
	size_t		 cut, i, snisize;

	if (size > 4 * TLS_PEEK_MAX)
		return 0;
	check_framing(data, size);
	peek(data, size, 256, &whole);
	if (whole.a_rc == TLS_PEEK_SNI && whole.a_len > 255)
		abort();

	/* Prefixes: one short, half, and a few the input picks. */
	if (size > 0) {
		peek(data, size - 1, 256, &part);
		same_or_more(&part, &whole);
		peek(data, size / 2, 256, &part);
		same_or_more(&part, &whole);
	}
	for (i = 0; i + 1 < size && i < 8; i += 2) {
		cut = ((size_t)data[size - 1 - i] << 8 | data[size - 2 - i]) %
		    (size + 1);
		peek(data, cut, 256, &part);
		same_or_more(&part, &whole);
	}

	/* A buffer too small for the name makes it BAD, nothing else. */
	if (whole.a_rc == TLS_PEEK_SNI) {
		snisize = data[size - 1] % (whole.a_len + 2);
		peek(data, size, snisize, &part);
		if (snisize > whole.a_len) {
			if (part.a_rc != TLS_PEEK_SNI ||
			    part.a_len != whole.a_len ||
			    memcmp(part.a_sni, whole.a_sni, part.a_len) != 0)
				abort();
		} else if (part.a_rc != TLS_PEEK_BAD)
			abort();
	}
	return 0;
}
