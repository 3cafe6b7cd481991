/*
 * fuzz_http_body.c: the body scanner (http_body_init, http_body_scan),
 * which finds where a request or response body ends so that the next
 * head starts at the right byte; a wrong end is request smuggling.
 *
 * The first byte picks the mode.  Raw: the rest is a body of the kind
 * and length it names, fed in pieces of sizes the input picks.  Encoded:
 * the rest is cut into chunks and written as a valid chunked body (with
 * extensions and trailers the input picks), followed by garbage.
 * Checks: a call never consumes more than it was given, nor less unless
 * the body ended; the body ends once, and after that nothing more is
 * taken; an error sticks; the end does not depend on how the bytes were
 * split; a Content-Length body ends at its length; and a chunked body
 * that a strict reader (below) or our encoder vouches for ends exactly
 * where it should, and http_body_part takes out exactly the data our
 * encoder put in.
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

enum strict {
	STRICT_END,		/* a whole body, *end bytes */
	STRICT_MORE,		/* a valid prefix of one */
	STRICT_UNKNOWN		/* not in the strict subset */
};

static uint32_t
next_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Checks for "\r\n" at *i; advances past it. */
static enum strict
strict_crlf(const unsigned char *p, size_t len, size_t *i)
{
	if (*i < len && p[*i] != '\r')
		return STRICT_UNKNOWN;
	if (*i + 1 < len && p[*i + 1] != '\n')
		return STRICT_UNKNOWN;
	if (*i + 2 > len)
		return STRICT_MORE;
	*i += 2;
	return STRICT_END;
}

/*
 * An independent reader for a strict subset of chunked coding: 1 to 8
 * hex digits, CRLF, data, CRLF; the last chunk "0" and CRLF, with no
 * extensions and no trailers.  Anything the scanner must take as well.
 */
static enum strict
strict_chunked(const unsigned char *p, size_t len, size_t *end)
{
	size_t		 i = 0, digits;
	uint64_t	 size;
	enum strict	 r;
	int		 d;

	for (;;) {
		size = 0;
		for (digits = 0; i < len && (d = hexval(p[i])) != -1; i++) {
			if (++digits > 8)
				return STRICT_UNKNOWN;
			size = size << 4 | (uint64_t)d;
		}
		if (i == len)
			return STRICT_MORE;
		if (digits == 0)
			return STRICT_UNKNOWN;
		if ((r = strict_crlf(p, len, &i)) != STRICT_END)
			return r;
		if (size == 0) {
			if ((r = strict_crlf(p, len, &i)) != STRICT_END)
				return r;
			*end = i;
			return STRICT_END;
		}
		if (len - i <= size)
			return STRICT_MORE;
		i += (size_t)size;
		if ((r = strict_crlf(p, len, &i)) != STRICT_END)
			return r;
	}
}

struct scan {
	ssize_t		 s_total;	/* -1: malformed */
	bool		 s_done;
};

/*
 * Feeds len bytes at p to a fresh scanner in pieces (each a heap copy,
 * so that ASan sees a read past it); split 0 gives it all at once.
 */
static void
scan(enum http_body_kind kind, uint64_t length, const char *p, size_t len,
    uint32_t split, struct scan *s)
{
	struct http_body	 hb;
	ssize_t			 got;
	size_t			 off = 0, n;
	bool			 done;
	char			*piece;

	http_body_init(&hb, kind, length);
	s->s_total = 0;
	s->s_done = false;
	do {
		if (split == 0)
			n = len - off;
		else
			n = next_rand(&split) % 4 == 0 ?
			    next_rand(&split) % 200 : next_rand(&split) % 3;
		if (n > len - off)
			n = len - off;
		if ((piece = malloc(n ? n : 1)) == NULL)
			abort();
		memcpy(piece, p + off, n);
		got = http_body_scan(&hb, piece, n, &done);
		free(piece);
		if (got == -1) {
			s->s_total = -1;
			/* An error sticks. */
			if (http_body_scan(&hb, p, len, &done) != -1)
				abort();
			return;
		}
		if (got < 0 || (size_t)got > n)
			abort();	/* took more than it was given */
		if (!done && (size_t)got != n)
			abort();	/* stopped short without an end */
		if (done && kind == HTTP_BODY_CLOSE)
			abort();	/* such a body ends only at close */
		s->s_total += got;
		off += n;
	} while (!done && off < len);
	s->s_done = done;

	/* Once over, the body takes nothing more and stays over. */
	if (done && (got = http_body_scan(&hb, p + off, len - off,
	    &done)) != 0)
		abort();
	if (s->s_done && !done)
		abort();
}

/*
 * Writes the bytes at p as a chunked body: a byte picks each chunk's
 * size, and whether it has an extension; the last byte picks trailers.
 * Returns the length written to out (room for 16 * len + 256 bytes);
 * the chunk data alone goes to data (room for len), its length to *dlen.
 */
static size_t
encode(const uint8_t *p, size_t len, char *out, uint8_t *data, size_t *dlen)
{
	static const char *const exts[] = {
		"", ";a", ";a=b", " ; name=\"q\\\"d\"", ";x=1;y", "\t;e=t-1"
	};
	static const char *const trailers[] = {
		"", "X-T: 1\r\n", "Expires: now\r\nX-Y:\r\n"
	};
	size_t		 i = 0, o = 0, n;
	uint8_t		 b;

	while (i < len) {
		b = p[i++];
		n = b % 64 + 1;
		if (n > len - i)
			n = len - i;
		if (n == 0)
			break;
		o += (size_t)sprintf(out + o, (b & 64) ? "%zX%s\r\n" :
		    "%zx%s\r\n", n, exts[b % 6]);
		memcpy(out + o, p + i, n);
		memcpy(data + *dlen, p + i, n);
		*dlen += n;
		o += n;
		out[o++] = '\r';
		out[o++] = '\n';
		i += n;
	}
	b = len > 0 ? p[len - 1] : 0;
	o += (size_t)sprintf(out + o, "%s%s\r\n%s", (b & 1) ? "000" : "0",
	    exts[b % 6], trailers[b % 3]);
	out[o++] = '\r';
	out[o++] = '\n';
	return o;
}

/*
 * Takes the chunk data out of the len bytes at p with http_body_part,
 * in pieces split picks, and checks it is want (wlen bytes) and ends at
 * end, as scrub.c relies on.
 */
static void
parts(const char *p, size_t len, size_t end, const uint8_t *want,
    size_t wlen, uint32_t split)
{
	struct http_body	 hb;
	ssize_t			 got;
	size_t			 off = 0, o = 0, n;
	bool			 data, done = false;
	char			*out;

	if ((out = malloc(wlen + 1)) == NULL)
		abort();
	http_body_init(&hb, HTTP_BODY_CHUNKED, 0);
	while (!done && off < len) {
		n = next_rand(&split) % 3 == 0 ? next_rand(&split) % 100 + 1 :
		    next_rand(&split) % 4 + 1;
		if (n > len - off)
			n = len - off;
		got = http_body_part(&hb, p + off, n, &data, &done);
		if (got <= 0 || (size_t)got > n)
			abort();
		if (data) {
			if (o + (size_t)got > wlen)
				abort();	/* more data than was sent */
			memcpy(out + o, p + off, (size_t)got);
			o += (size_t)got;
		}
		off += (size_t)got;
	}
	if (!done || off != end || o != wlen || memcmp(out, want, wlen) != 0)
		abort();	/* the data is not what was chunked */
	free(out);
}

static void
raw(const uint8_t *data, size_t size)
{
	enum http_body_kind	 kind;
	enum strict		 st;
	struct scan		 whole, part;
	uint64_t		 length = 0;
	size_t			 end = 0, i;
	const char		*p;

	if (size < 3)
		return;
	kind = (enum http_body_kind)(data[0] % 4);
	/* Lengths around the input's size, and some far larger. */
	if (data[1] & 0x80)
		length = (uint64_t)data[1] << 56 | (uint64_t)data[2] << 8;
	else
		length = (uint64_t)data[1] << 8 | data[2];
	p = (const char *)data + 3;
	size -= 3;

	scan(kind, length, p, size, 0, &whole);
	for (i = 0; i < 3; i++) {
		scan(kind, length, p, size, (uint32_t)(size * 7 + i + 1),
		    &part);
		if (part.s_total != whole.s_total ||
		    part.s_done != whole.s_done)
			abort();	/* the split moved the end */
	}

	switch (kind) {
	case HTTP_BODY_NONE:
		if (whole.s_total != 0 || !whole.s_done)
			abort();
		break;
	case HTTP_BODY_LENGTH:
		if ((uint64_t)whole.s_total != (length < size ? length : size) ||
		    whole.s_done != (length <= size))
			abort();
		break;
	case HTTP_BODY_CHUNKED:
		st = strict_chunked((const unsigned char *)p, size, &end);
		if (st == STRICT_END && (!whole.s_done ||
		    (size_t)whole.s_total != end))
			abort();	/* a plain body ends elsewhere */
		if (st == STRICT_MORE && (whole.s_done ||
		    whole.s_total != (ssize_t)size))
			abort();	/* a valid prefix refused or ended */
		break;
	case HTTP_BODY_CLOSE:
		if (whole.s_total != (ssize_t)size || whole.s_done)
			abort();
		break;
	}
}

static void
encoded(const uint8_t *data, size_t size)
{
	struct scan	 s;
	size_t		 blen, glen, i, dlen = 0;
	char		*out;
	uint8_t		*want;

	if (size < 1 || size > 4096)
		return;
	/* The first byte: how much of the rest trails the body. */
	glen = data[0] % 32;
	if (glen > size - 1)
		glen = size - 1;
	data++;
	size--;
	if ((out = malloc(16 * size + 256 + glen)) == NULL ||
	    (want = malloc(size + 1)) == NULL)
		abort();
	blen = encode(data, size - glen, out, want, &dlen);
	memcpy(out + blen, data + size - glen, glen);
	for (i = 0; i < 4; i++) {
		scan(HTTP_BODY_CHUNKED, 0, out, blen + glen,
		    (uint32_t)i * 0x9e3779b9u, &s);
		if (!s.s_done || s.s_total != (ssize_t)blen)
			abort();	/* a valid body did not end at its end */
		/* Cut anywhere before its end, it wants more. */
		scan(HTTP_BODY_CHUNKED, 0, out, blen - 1 - i % blen,
		    (uint32_t)i + 1, &s);
		if (s.s_done || s.s_total == -1)
			abort();
		parts(out, blen + glen, blen, want, dlen, (uint32_t)i + 7);
	}
	free(want);
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	if (data[0] & 1)
		encoded(data + 1, size - 1);
	else
		raw(data + 1, size - 1);
	return 0;
}
