/*
 * http_body.c: where an HTTP/1.x body ends (RFC 9112 sections 6 and 7).
 *
 * Bodies are passed on unchanged; this only finds their end, by
 * Content-Length, by the chunked coding, or by the upstream closing.  The
 * chunked coding is read a byte at a time by a state machine, so that any
 * split of the input reads alike, and as strictly as heads are (http.c):
 * only CRLF ends a line, a size has at most HTTP_CHUNK_DIGITS_MAX digits,
 * and size lines and trailers are bounded.
 *
 * Nothing here touches a socket; the functions work on buffers and are
 * unit-tested and fuzzed that way (fuzz_http_body).
 */
#include <sys/types.h>

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "lib/util.h"
#include "wire/wire.h"

#define HTTP_CHUNK_LINE_MAX	4096	/* chunk-size line with extensions */
#define HTTP_CHUNK_DIGITS_MAX	15	/* hex digits of a chunk size */

/* Where http_body_scan is inside a chunked body (hb_state). */
enum http_chunk_state {
	CHUNK_SIZE_START,	/* first hex digit of a chunk size */
	CHUNK_SIZE,		/* more hex digits */
	CHUNK_SEMI_WS,		/* white space that must lead to ';' */
	CHUNK_EXT_NAME_START,	/* after ';' */
	CHUNK_EXT_NAME,
	CHUNK_EXT_NAME_WS,	/* white space after a name */
	CHUNK_EXT_VALUE_START,	/* after '=' */
	CHUNK_EXT_TOKEN,
	CHUNK_EXT_QUOTED,
	CHUNK_EXT_ESCAPE,	/* after '\' in a quoted value */
	CHUNK_EXT_AFTER_QUOTE,	/* after a quoted value */
	CHUNK_SIZE_LF,		/* the LF that ends the size line */
	CHUNK_DATA,
	CHUNK_DATA_CR,		/* the CRLF after the data */
	CHUNK_DATA_LF,
	CHUNK_TRAILER_START,	/* a trailer field line or the final CRLF */
	CHUNK_TRAILER_NAME,
	CHUNK_TRAILER_VALUE,
	CHUNK_TRAILER_LF,
	CHUNK_FINAL_LF,
	CHUNK_DONE,
	CHUNK_ERROR
};

/*
 * Makes hb ready to find the end of a body of kind; length is the
 * Content-Length for HTTP_BODY_LENGTH.
 */
void
http_body_init(struct http_body *hb, enum http_body_kind kind,
    uint64_t length)
{
	memset(hb, 0, sizeof(*hb));
	/* A length of 0 is an empty body: done before a byte arrives. */
	hb->hb_kind = kind == HTTP_BODY_LENGTH && length == 0 ?
	    HTTP_BODY_NONE : kind;
	hb->hb_left = kind == HTTP_BODY_LENGTH ? length : 0;
	hb->hb_state = CHUNK_SIZE_START;
}

/*
 * Feeds one byte of a chunk extension (RFC 9112 section 7.1.1), after
 * the chunk size, to hb's state machine: ;name, ;name=token or
 * ;name="quoted", with white space around them, up to the CR that ends
 * the size line.  Returns 0, or -1 for a byte the grammar does not allow
 * there.
 */
static int
http_chunk_ext_byte(struct http_body *hb, unsigned char ch)
{
	switch (hb->hb_state) {
	case CHUNK_SEMI_WS:
		if (ch == ';')
			hb->hb_state = CHUNK_EXT_NAME_START;
		else if (!http_ws((char)ch))
			return -1;
		return 0;
	case CHUNK_EXT_NAME_START:
		if (str_is_tchar(ch))
			hb->hb_state = CHUNK_EXT_NAME;
		else if (!http_ws((char)ch))
			return -1;
		return 0;
	case CHUNK_EXT_NAME:
		if (str_is_tchar(ch))
			return 0;
		if (http_ws((char)ch))
			hb->hb_state = CHUNK_EXT_NAME_WS;
		else if (ch == '=')
			hb->hb_state = CHUNK_EXT_VALUE_START;
		else if (ch == ';')
			hb->hb_state = CHUNK_EXT_NAME_START;
		else if (ch == '\r')
			hb->hb_state = CHUNK_SIZE_LF;
		else
			return -1;
		return 0;
	case CHUNK_EXT_NAME_WS:
		if (ch == '=')
			hb->hb_state = CHUNK_EXT_VALUE_START;
		else if (ch == ';')
			hb->hb_state = CHUNK_EXT_NAME_START;
		else if (!http_ws((char)ch))
			return -1;
		return 0;
	case CHUNK_EXT_VALUE_START:
		if (ch == '"')
			hb->hb_state = CHUNK_EXT_QUOTED;
		else if (str_is_tchar(ch))
			hb->hb_state = CHUNK_EXT_TOKEN;
		else if (!http_ws((char)ch))
			return -1;
		return 0;
	case CHUNK_EXT_TOKEN:
		if (str_is_tchar(ch))
			return 0;
		if (http_ws((char)ch))
			hb->hb_state = CHUNK_SEMI_WS;
		else if (ch == ';')
			hb->hb_state = CHUNK_EXT_NAME_START;
		else if (ch == '\r')
			hb->hb_state = CHUNK_SIZE_LF;
		else
			return -1;
		return 0;
	case CHUNK_EXT_QUOTED:
		if (ch == '"')
			hb->hb_state = CHUNK_EXT_AFTER_QUOTE;
		else if (ch == '\\')
			hb->hb_state = CHUNK_EXT_ESCAPE;
		else if (!http_vbyte(ch))
			return -1;
		return 0;
	case CHUNK_EXT_ESCAPE:
		if (!http_vbyte(ch))
			return -1;
		hb->hb_state = CHUNK_EXT_QUOTED;
		return 0;
	case CHUNK_EXT_AFTER_QUOTE:
		if (http_ws((char)ch))
			hb->hb_state = CHUNK_SEMI_WS;
		else if (ch == ';')
			hb->hb_state = CHUNK_EXT_NAME_START;
		else if (ch == '\r')
			hb->hb_state = CHUNK_SIZE_LF;
		else
			return -1;
		return 0;
	}
	return -1;
}

/*
 * Feeds one byte of a chunked body, outside chunk data, to hb's state
 * machine (RFC 9112 section 7.1): chunk-size [ chunk-ext ] CRLF, data
 * CRLF, and after the last chunk the trailer fields and CRLF.  Returns
 * 0, or -1 for a byte the grammar does not allow there.  As in heads,
 * only CRLF ends a line: a bare LF in a chunk extension is how a reader
 * that ends lines there is made to see a different body.
 */
static int
http_chunk_byte(struct http_body *hb, unsigned char ch)
{
	int	 d;

	switch (hb->hb_state) {
	case CHUNK_SIZE_START:
		if ((d = http_hex(ch)) == -1)
			return -1;
		hb->hb_left = (uint64_t)d;
		hb->hb_state = CHUNK_SIZE;
		return 0;
	case CHUNK_SIZE:
		if ((d = http_hex(ch)) != -1) {
			if (hb->hb_linelen > HTTP_CHUNK_DIGITS_MAX)
				return -1;
			hb->hb_left = hb->hb_left << 4 | (uint64_t)d;
			return 0;
		}
		if (http_ws((char)ch))
			hb->hb_state = CHUNK_SEMI_WS;
		else if (ch == ';')
			hb->hb_state = CHUNK_EXT_NAME_START;
		else if (ch == '\r')
			hb->hb_state = CHUNK_SIZE_LF;
		else
			return -1;
		return 0;
	case CHUNK_SEMI_WS:
	case CHUNK_EXT_NAME_START:
	case CHUNK_EXT_NAME:
	case CHUNK_EXT_NAME_WS:
	case CHUNK_EXT_VALUE_START:
	case CHUNK_EXT_TOKEN:
	case CHUNK_EXT_QUOTED:
	case CHUNK_EXT_ESCAPE:
	case CHUNK_EXT_AFTER_QUOTE:
		return http_chunk_ext_byte(hb, ch);
	case CHUNK_SIZE_LF:
		if (ch != '\n')
			return -1;
		if (hb->hb_left == 0) {
			hb->hb_state = CHUNK_TRAILER_START;
			hb->hb_linelen = 0;
		} else
			hb->hb_state = CHUNK_DATA;
		return 0;
	case CHUNK_DATA_CR:
		if (ch != '\r')
			return -1;
		hb->hb_state = CHUNK_DATA_LF;
		return 0;
	case CHUNK_DATA_LF:
		if (ch != '\n')
			return -1;
		hb->hb_state = CHUNK_SIZE_START;
		hb->hb_linelen = 0;
		return 0;
	case CHUNK_TRAILER_START:
		if (ch == '\r')
			hb->hb_state = CHUNK_FINAL_LF;
		else if (str_is_tchar(ch))
			hb->hb_state = CHUNK_TRAILER_NAME;
		else
			return -1;
		return 0;
	case CHUNK_TRAILER_NAME:
		if (ch == ':')
			hb->hb_state = CHUNK_TRAILER_VALUE;
		else if (!str_is_tchar(ch))
			return -1;
		return 0;
	case CHUNK_TRAILER_VALUE:
		if (ch == '\r')
			hb->hb_state = CHUNK_TRAILER_LF;
		else if (!http_vbyte(ch))
			return -1;
		return 0;
	case CHUNK_TRAILER_LF:
		if (ch != '\n')
			return -1;
		hb->hb_state = CHUNK_TRAILER_START;
		return 0;
	case CHUNK_FINAL_LF:
		if (ch != '\n')
			return -1;
		hb->hb_state = CHUNK_DONE;
		return 0;
	}
	return -1;
}

/*
 * Finds how much of len bytes at buf belongs to a chunked body, feeding
 * hb's state machine; chunk data is skipped without looking at it.  The
 * size line is bounded by HTTP_CHUNK_LINE_MAX, the trailer section by
 * HTTP_HEAD_MAX.  With data, stops where chunk data starts or ends, and
 * says whether the bytes were chunk data or framing.
 */
static ssize_t
http_chunked_scan(struct http_body *hb, const char *buf, size_t len,
    bool *done, bool *data)
{
	size_t	 i = 0, n;
	bool	 in = hb->hb_state == CHUNK_DATA;

	if (hb->hb_state == CHUNK_ERROR)
		return -1;
	if (data != NULL)
		*data = in;
	while (i < len && hb->hb_state != CHUNK_DONE) {
		if (data != NULL && (hb->hb_state == CHUNK_DATA) != in)
			break;
		if (hb->hb_state == CHUNK_DATA) {
			n = len - i;
			if (n > hb->hb_left)
				n = (size_t)hb->hb_left;
			i += n;
			if ((hb->hb_left -= n) == 0)
				hb->hb_state = CHUNK_DATA_CR;
			continue;
		}
		if (hb->hb_state < CHUNK_DATA) {
			if (++hb->hb_linelen > HTTP_CHUNK_LINE_MAX)
				goto bad;
		} else if (hb->hb_state >= CHUNK_TRAILER_START) {
			if (++hb->hb_linelen > HTTP_HEAD_MAX)
				goto bad;
		}
		if (http_chunk_byte(hb, (unsigned char)buf[i++]) == -1)
			goto bad;
	}
	*done = hb->hb_state == CHUNK_DONE;
	return (ssize_t)i;

bad:
	hb->hb_state = CHUNK_ERROR;
	return -1;
}

/*
 * Says how many of the len bytes at buf, which follow a head or earlier
 * calls, belong to the body hb was set up for; *done is set when the body
 * ends within them.  A body of HTTP_BODY_NONE is done at once; one of
 * HTTP_BODY_CLOSE never is.  Works on any split of the input.  Returns -1
 * for a malformed chunked body, and for ever after.
 */
ssize_t
http_body_scan(struct http_body *hb, const char *buf, size_t len,
    bool *done)
{
	size_t	 n;

	*done = false;
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	switch (hb->hb_kind) {
	case HTTP_BODY_NONE:
		*done = true;
		return 0;
	case HTTP_BODY_LENGTH:
		n = hb->hb_left < len ? (size_t)hb->hb_left : len;
		hb->hb_left -= n;
		*done = hb->hb_left == 0;
		return (ssize_t)n;
	case HTTP_BODY_CHUNKED:
		return http_chunked_scan(hb, buf, len, done, NULL);
	case HTTP_BODY_CLOSE:
		return (ssize_t)len;
	}
	return -1;
}

/*
 * As http_body_scan, but a chunked body comes a part at a time: chunk
 * data (*data true) or framing (sizes, extensions, trailers), so that a
 * reader can take the data out.  Other bodies are all data.
 */
ssize_t
http_body_part(struct http_body *hb, const char *buf, size_t len,
    bool *data, bool *done)
{
	*data = true;
	if (hb->hb_kind != HTTP_BODY_CHUNKED)
		return http_body_scan(hb, buf, len, done);
	*done = false;
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	return http_chunked_scan(hb, buf, len, done, data);
}
