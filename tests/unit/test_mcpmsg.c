/*
 * test_mcpmsg.c: an MCP client's lines (mcp/mcpmsg.c): whole lines come
 * out as JSON, in order, however the bytes were cut; blank lines and
 * CRs are passed over; a line that is not JSON, or past its bound, is
 * said, and the next line is read; each message is sorted as JSON-RPC
 * 2.0 says; a command's bytes become valid UTF-8; export -p's entries,
 * of dash or bash, are told apart by their quotes, and the long ones
 * dropped.  The first test is the
 * fuzzer's first find: an empty buffer read (memchr on NULL).
 */
#include "unit.h"

#include <string.h>

#include <jansson.h>

#include "lib/util.h"
#include "mcp/mcp.h"

static void
test_empty(void **state)
{
	struct mcpbuf	 b;
	const char	*err;
	json_t		*msg;

	(void)state;
	memset(&b, 0, sizeof(b));
	assert_int_equal(mcpmsg_next(&b, &msg, &err), 0);
	mcpmsg_feed(&b, "", 0);
	assert_int_equal(mcpmsg_next(&b, &msg, &err), 0);
	mcpmsg_clear(&b);
}

static void
test_lines(void **state)
{
	static const char	 in[] = "{\"a\":1}\r\n\n  \r\n{\"b\":2";
	struct mcpbuf		 b;
	const char		*err;
	json_t			*msg;
	size_t			 i;

	(void)state;
	memset(&b, 0, sizeof(b));
	/* A byte at a time: the same two messages. */
	for (i = 0; i < sizeof(in) - 1; i++)
		mcpmsg_feed(&b, in + i, 1);
	assert_int_equal(mcpmsg_next(&b, &msg, &err), 1);
	assert_int_equal(json_integer_value(json_object_get(msg, "a")), 1);
	json_decref(msg);
	assert_int_equal(mcpmsg_next(&b, &msg, &err), 0);
	mcpmsg_feed(&b, "}\nnot json\n{\"c\":3}\n", 19);
	assert_int_equal(mcpmsg_next(&b, &msg, &err), 1);
	assert_int_equal(json_integer_value(json_object_get(msg, "b")), 2);
	json_decref(msg);
	assert_int_equal(mcpmsg_next(&b, &msg, &err), 1);
	assert_null(msg);
	assert_string_equal(err, "not JSON");
	assert_int_equal(mcpmsg_next(&b, &msg, &err), 1);
	assert_int_equal(json_integer_value(json_object_get(msg, "c")), 3);
	json_decref(msg);
	mcpmsg_clear(&b);
}

static void
test_too_long(void **state)
{
	struct mcpbuf	 b;
	const char	*err;
	json_t		*msg;
	char		*big;

	(void)state;
	memset(&b, 0, sizeof(b));
	big = calloc(1, MCP_LINE_MAX + 2);
	assert_non_null(big);
	memset(big, ' ', MCP_LINE_MAX + 1);
	mcpmsg_feed(&b, big, MCP_LINE_MAX + 1);
	assert_int_equal(mcpmsg_next(&b, &msg, &err), 1);
	assert_null(msg);
	assert_non_null(strstr(err, "longer"));
	/* The rest of that line is dropped; the next one is read. */
	mcpmsg_feed(&b, "xx\n{\"d\":4}\n", 11);
	assert_int_equal(mcpmsg_next(&b, &msg, &err), 1);
	assert_int_equal(json_integer_value(json_object_get(msg, "d")), 4);
	json_decref(msg);
	assert_true(b.mb_len == 0);
	free(big);
	mcpmsg_clear(&b);
}

static void
test_kinds(void **state)
{
	static const struct {
		const char		*text;
		enum mcpmsg_kind	 kind;
	} cases[] = {
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
		    MCPMSG_REQUEST },
		{ "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"m\","
		    "\"params\":{}}", MCPMSG_REQUEST },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}", MCPMSG_NOTIFY },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
		    MCPMSG_RESPONSE },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{}}",
		    MCPMSG_RESPONSE },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{}}",
		    MCPMSG_INVALID },
		{ "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"m\"}",
		    MCPMSG_INVALID },
		{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"m\"}",
		    MCPMSG_INVALID },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"m\"}",
		    MCPMSG_INVALID },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":3}",
		    MCPMSG_INVALID },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\","
		    "\"params\":[1]}", MCPMSG_INVALID },
		{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}]",
		    MCPMSG_INVALID },
	};
	json_error_t	 je;
	const char	*method;
	json_t		*msg;
	size_t		 i;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		msg = json_loads(cases[i].text, 0, &je);
		assert_non_null(msg);
		assert_int_equal(mcpmsg_kind(msg, &method), cases[i].kind);
		json_decref(msg);
	}
}

static void
test_text(void **state)
{
	json_t	*s;

	(void)state;
	/* Valid UTF-8 stays; a lone byte, an overlong form and a
	 * surrogate become U+FFFD each. */
	s = mcpmsg_text("h\xc3\xa9\xff" "a\xc0\x80\xed\xa0\x80", 10);
	assert_string_equal(json_string_value(s), "h\xc3\xa9\xef\xbf\xbd" "a"
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	json_decref(s);
}

static void
test_exports(void **state)
{
	/* dash's quotes, bash's $'...' and "...", each value with a
	 * newline in it; the fourth entry is the one too long. */
	static const char	 in[] = "export A='it'\"'\"'s\nx'\n"
	    "export B=$'it\\'s\nx'\n"
	    "declare -x C=\"a \\\"q\\\"\ny\"\n"
	    "export LONG='0123456789abcdef'\n"
	    "export E\n"
	    "export F='open";
	char			 buf[sizeof(in)];
	size_t			 n;

	(void)state;
	memcpy(buf, in, sizeof(in));
	n = mcpmsg_exports(buf, sizeof(in) - 1, 28);
	buf[n] = '\0';
	assert_string_equal(buf, "export A='it'\"'\"'s\nx'\n"
	    "export B=$'it\\'s\nx'\n"
	    "declare -x C=\"a \\\"q\\\"\ny\"\n"
	    "export E\n"
	    "export F='open");
	/* All kept below a bound past them; none with 1. */
	memcpy(buf, in, sizeof(in));
	assert_int_equal(mcpmsg_exports(buf, sizeof(in) - 1, 64),
	    sizeof(in) - 1);
	assert_int_equal(mcpmsg_exports(buf, sizeof(in) - 1, 1), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_exports),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
