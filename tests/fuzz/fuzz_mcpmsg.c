/*
 * fuzz_mcpmsg.c: an MCP client's bytes (mcp/mcpmsg.c), as a client that
 * is not well behaved could send them to cordon mcp.  The bytes are fed
 * in two parts (the first byte says where to cut), and every line comes
 * out as JSON or with the reason it is none; the buffer never holds more
 * than a line's bound and a read; each message is sorted, and the sort
 * agrees with its shape.  The same bytes as a command's output become a
 * JSON string that jansson takes back (valid UTF-8); as export -p's
 * text, its entries cut never leave more than it had.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mcp/mcp.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_sort(const json_t *msg)
{
	const char		*method;
	enum mcpmsg_kind	 k;

	k = mcpmsg_kind(msg, &method);
	if ((k == MCPMSG_REQUEST || k == MCPMSG_NOTIFY) && (method == NULL ||
	    !json_is_string(json_object_get(msg, "method"))))
		abort();
	if (k == MCPMSG_REQUEST && json_object_get(msg, "id") == NULL)
		abort();
	if ((k == MCPMSG_RESPONSE || k == MCPMSG_INVALID) && method != NULL)
		abort();
}

static void
fuzz_lines(const uint8_t *data, size_t size)
{
	struct mcpbuf	 b;
	const char	*err;
	json_t		*msg;
	size_t		 cut;

	if (size == 0)
		return;
	memset(&b, 0, sizeof(b));
	cut = data[0] % size;
	mcpmsg_feed(&b, (const char *)data + 1, cut);
	for (;;) {
		while (mcpmsg_next(&b, &msg, &err) == 1) {
			if ((msg == NULL) == (err == NULL))
				abort();
			if (msg != NULL)
				fuzz_sort(msg);
			json_decref(msg);
		}
		if (b.mb_len > MCP_LINE_MAX || cut == size - 1)
			break;
		mcpmsg_feed(&b, (const char *)data + 1 + cut, size - 1 - cut);
		cut = size - 1;
	}
	mcpmsg_clear(&b);
}

static void
fuzz_text(const uint8_t *data, size_t size)
{
	json_error_t	 je;
	json_t		*s, *back;
	char		*text;

	if ((s = mcpmsg_text((const char *)data, size)) == NULL)
		abort();
	if ((text = json_dumps(s, JSON_ENCODE_ANY)) == NULL ||
	    (back = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL,
	    &je)) == NULL || !json_equal(s, back))
		abort();
	json_decref(back);
	free(text);
	json_decref(s);
}

static void
fuzz_exports(const uint8_t *data, size_t size)
{
	char	*buf;

	if (size == 0)
		return;
	buf = malloc(size);
	memcpy(buf, data, size);
	if (mcpmsg_exports(buf, size, data[0] % 32 + 1) > size)
		abort();
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_lines(data, size);
	fuzz_text(data, size);
	fuzz_exports(data, size);
	return 0;
}
