/*
 * mcpmsg.c: the MCP client's bytes, as messages.  The stdio transport
 * is one JSON-RPC message a line; a line is bounded (MCP_LINE_MAX: a
 * longer one is dropped whole, through its end, and said once), and
 * what is not JSON, or not a message of JSON-RPC 2.0's shapes, is told
 * apart here, so that the server answers each with its error code.
 * The output of commands becomes JSON text here too: JSON strings are
 * UTF-8, and a command writes any bytes.  The variables a call's shell
 * carries to the next (export -p) are cut into entries here, to drop
 * those too long to carry.  No I/O: fuzzed on buffers
 * (tests/fuzz/fuzz_mcpmsg.c).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/xmalloc.h"
#include "mcp/mcp.h"

/* Takes len bytes of the stream; a line past its bound is dropped. */
void
mcpmsg_feed(struct mcpbuf *b, const char *data, size_t len)
{
	const char	*nl;

	if (b->mb_skip) {
		if ((nl = memchr(data, '\n', len)) == NULL)
			return;
		b->mb_skip = false;
		len -= (size_t)(nl + 1 - data);
		data = nl + 1;
	}
	if (len == 0)
		return;
	if (b->mb_len + len > b->mb_cap) {
		b->mb_cap = b->mb_len + len + 4096;
		b->mb_buf = xreallocarray(b->mb_buf, b->mb_cap, 1);
	}
	memcpy(b->mb_buf + b->mb_len, data, len);
	b->mb_len += len;
}

/* Whether the n bytes at s are blanks alone. */
static bool
mcpmsg_blank(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/*
 * The next line: 1 with *msg the JSON it holds (the caller's), or with
 * *msg NULL and *err why it is none (not JSON; too long); 0 when no
 * whole line is there yet.  Blank lines are passed over.
 */
int
mcpmsg_next(struct mcpbuf *b, json_t **msg, const char **err)
{
	json_error_t	 je;
	char		*nl;
	size_t		 n, take;

	*msg = NULL;
	*err = NULL;
	for (;;) {
		if (b->mb_len == 0)
			return 0;
		if ((nl = memchr(b->mb_buf, '\n', b->mb_len)) == NULL) {
			if (b->mb_len <= MCP_LINE_MAX)
				return 0;
			b->mb_len = 0;
			b->mb_skip = true;
			*err = "a message longer than its bound (4 MiB)";
			return 1;
		}
		take = (size_t)(nl - b->mb_buf) + 1;
		n = take - 1;
		if (n > 0 && b->mb_buf[n - 1] == '\r')
			n--;
		if (n > MCP_LINE_MAX)
			*err = "a message longer than its bound (4 MiB)";
		else if (!mcpmsg_blank(b->mb_buf, n) &&
		    (*msg = json_loadb(b->mb_buf, n, JSON_REJECT_DUPLICATES |
		    JSON_ALLOW_NUL, &je)) == NULL)
			*err = "not JSON";
		memmove(b->mb_buf, b->mb_buf + take, b->mb_len - take);
		b->mb_len -= take;
		if (*msg != NULL || *err != NULL)
			return 1;
	}
}

void
mcpmsg_clear(struct mcpbuf *b)
{
	free(b->mb_buf);
	memset(b, 0, sizeof(*b));
}

/*
 * What msg is, by JSON-RPC 2.0 as MCP uses it: a request has a method
 * and an id (a string or an integer; never null), a notification a
 * method alone, a response an id and a result or an error.  *method is
 * lent from msg (NULL for a response or an invalid message).
 */
enum mcpmsg_kind
mcpmsg_kind(const json_t *msg, const char **method)
{
	const json_t	*id, *params, *m;

	*method = NULL;
	if (!json_is_object(msg) || !json_is_string(json_object_get(msg,
	    "jsonrpc")) || strcmp(json_string_value(json_object_get(msg,
	    "jsonrpc")), "2.0") != 0)
		return MCPMSG_INVALID;
	id = json_object_get(msg, "id");
	if (id != NULL && !json_is_string(id) && !json_is_integer(id))
		return MCPMSG_INVALID;
	if ((m = json_object_get(msg, "method")) != NULL) {
		params = json_object_get(msg, "params");
		if (!json_is_string(m) || (params != NULL &&
		    !json_is_object(params)))
			return MCPMSG_INVALID;
		*method = json_string_value(m);
		return id != NULL ? MCPMSG_REQUEST : MCPMSG_NOTIFY;
	}
	if (id != NULL && (json_object_get(msg, "result") != NULL) !=
	    (json_object_get(msg, "error") != NULL))
		return MCPMSG_RESPONSE;
	return MCPMSG_INVALID;
}

/* The length of the UTF-8 sequence at s (of len bytes), or 0: invalid. */
static size_t
mcpmsg_utf8_len(const unsigned char *s, size_t len)
{
	uint32_t	 c;
	size_t		 n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates, past U+10FFFF. */
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return n;
}

/*
 * A JSON string of len bytes of a command's output: each byte that is
 * not part of valid UTF-8 becomes U+FFFD, as a terminal would show it.
 */
json_t *
mcpmsg_text(const char *data, size_t len)
{
	const unsigned char	*s = (const unsigned char *)data;
	json_t			*j;
	char			*out;
	size_t			 i = 0, o = 0, n;

	out = xmalloc(len * 3 + 1);
	while (i < len) {
		if ((n = mcpmsg_utf8_len(s + i, len - i)) == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, s + i, n);
		o += n;
		i += n;
	}
	if ((j = json_stringn(out, o)) == NULL)
		j = json_string("");
	free(out);
	return j;
}

/*
 * The length of the entry of export -p's text at s (of len bytes): to
 * its newline outside quotes, the newline counted.  Its quotes are the
 * shells' (dash's 'x', bash's "x" and $'x', a backslash outside them).
 */
static size_t
mcpmsg_entry_len(const char *s, size_t len)
{
	size_t	 i;
	char	 q = '\0';	/* the open quote, '$' for $'...' */

	for (i = 0; i < len; i++) {
		if (q == '\0' && s[i] == '\n')
			return i + 1;
		if (s[i] == '\\' && q != '\'') {
			i++;
			continue;
		}
		if (q == '\0' && s[i] == '$' && i + 1 < len &&
		    s[i + 1] == '\'') {
			q = '$';
			i++;
		} else if (q == '\0' && (s[i] == '\'' || s[i] == '"'))
			q = s[i];
		else if (s[i] == '\'' && (q == '\'' || q == '$'))
			q = '\0';
		else if (s[i] == '"' && q == '"')
			q = '\0';
	}
	return len;
}

/*
 * Drops from the text of export -p (len bytes at s, from the sandbox's
 * shell) each entry of max bytes or more, in place: a variable that no
 * command's environment can hold (an argument's bound), carried, would
 * fail every command after it.  Returns the length left.
 */
size_t
mcpmsg_exports(char *s, size_t len, size_t max)
{
	size_t	 in = 0, out = 0, n;

	while (in < len) {
		n = mcpmsg_entry_len(s + in, len - in);
		if (n < max) {
			memmove(s + out, s + in, n);
			out += n;
		}
		in += n;
	}
	return out;
}
