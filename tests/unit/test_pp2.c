/*
 * test_pp2.c: the PROXY v2 header with a sandbox id.
 */
#include "unit.h"

#include <sys/socket.h>

#include "proxy/proxy.h"

static const uint8_t sig[12] = {
	0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a
};

/* Builds a header: command byte, family byte, then TLVs as given. */
static size_t
header(uint8_t *buf, uint8_t cmd, uint8_t fam, const uint8_t *rest,
    size_t restlen)
{
	memcpy(buf, sig, 12);
	buf[12] = cmd;
	buf[13] = fam;
	buf[14] = (uint8_t)(restlen >> 8);
	buf[15] = (uint8_t)restlen;
	memcpy(buf + 16, rest, restlen);
	return 16 + restlen;
}

static void
test_pp2_good(void **state)
{
	static const uint8_t tlv[] = { 0x05, 0x00, 0x06, 's', 'b', 'x', '-',
	    '4', '2' };
	uint8_t		 buf[256], rest[64];
	char		 id[PP2_ID_MAX + 1], *cause;
	size_t		 len, used, i;

	(void)state;
	len = header(buf, 0x20, 0x00, tlv, sizeof(tlv));
	buf[len] = 'G';		/* the request that follows */
	assert_int_equal(pp2_parse(buf, len + 1, &used, id, sizeof(id),
	    NULL, &cause), PP2_PARSE_OK);
	assert_int_equal(used, len);
	assert_string_equal(id, "sbx-42");
	/* Every prefix asks for more. */
	for (i = 0; i < len; i++)
		assert_int_equal(pp2_parse(buf, i, &used, id, sizeof(id),
		    NULL, &cause), PP2_PARSE_MORE);
	/* PROXY with IPv4 addresses, another TLV first, then the id. */
	memset(rest, 0, 12);
	memcpy(rest + 12, "\x04\x00\x01x", 4);	/* PP2_TYPE_NOOP */
	memcpy(rest + 16, tlv, sizeof(tlv));
	len = header(buf, 0x21, 0x11, rest, 16 + sizeof(tlv));
	assert_int_equal(pp2_parse(buf, len, &used, id, sizeof(id), NULL,
	    &cause), PP2_PARSE_OK);
	assert_string_equal(id, "sbx-42");
}

/* The run's rules ride in cordon's own field, once, without NUL. */
static void
test_pp2_narrow(void **state)
{
	static const uint8_t	 tlv[] = { 0x05, 0x00, 0x03, 'a', 'b', 'c',
				    0xe0, 0x00, 0x04, '{', '1', '2', '}' };
	uint8_t			 buf[256], two[sizeof(tlv) + 7];
	char			 id[PP2_ID_MAX + 1], *cause, *narrow;
	size_t			 len, used;

	(void)state;
	len = header(buf, 0x20, 0x00, tlv, sizeof(tlv));
	assert_int_equal(pp2_parse(buf, len, &used, id, sizeof(id), &narrow,
	    &cause), PP2_PARSE_OK);
	assert_string_equal(id, "abc");
	assert_string_equal(narrow, "{12}");
	free(narrow);
	/* Twice: refused. */
	memcpy(two, tlv, sizeof(tlv));
	memcpy(two + sizeof(tlv), "\xe0\x00\x04{34}", 7);
	len = header(buf, 0x20, 0x00, two, sizeof(two));
	assert_int_equal(pp2_parse(buf, len, &used, id, sizeof(id), &narrow,
	    &cause), PP2_PARSE_ERROR);
	assert_null(narrow);
	assert_contains(cause, "the run's rules");
	free(cause);
	/* Rules, then a broken field: refused, nothing handed out (the
	 * fuzzer found this one leaking the rules). */
	len = header(buf, 0x20, 0x00, (const uint8_t *)"\x05\x00\x03" "abc"
	    "\xe0\x00\x03" "abc" "\xe0\x00\x7d", 15);
	assert_int_equal(pp2_parse(buf, len, &used, id, sizeof(id), &narrow,
	    &cause), PP2_PARSE_ERROR);
	assert_null(narrow);
	free(cause);
	/* A NUL inside: refused. */
	memcpy(two, tlv, sizeof(tlv));
	two[sizeof(tlv) - 2] = '\0';
	len = header(buf, 0x20, 0x00, two, sizeof(tlv));
	assert_int_equal(pp2_parse(buf, len, &used, id, sizeof(id), &narrow,
	    &cause), PP2_PARSE_ERROR);
	free(cause);
}

static void
test_pp2_bad(void **state)
{
	static const struct {
		const uint8_t	*rest;
		size_t		 len;
		uint8_t		 cmd, fam;
		const char	*cause;
	} cases[] = {
		{ (const uint8_t *)"", 0, 0x20, 0x00, "no sandbox id" },
		{ (const uint8_t *)"\x05\x00\x00", 3, 0x20, 0x00,
		    "the sandbox id must be" },
		{ (const uint8_t *)"\x05\x00\x03" "a b", 6, 0x20, 0x00,
		    "the sandbox id must be" },
		{ (const uint8_t *)"\x05\x00\x01" "a" "\x05\x00\x01" "b", 8,
		    0x20, 0x00, "the sandbox id must be" },
		{ (const uint8_t *)"\x05\x00\x09" "a", 4, 0x20, 0x00,
		    "a field longer than the header" },
		{ (const uint8_t *)"\x05\x00", 2, 0x20, 0x00,
		    "a truncated field" },
		{ (const uint8_t *)"\x05\x00\x01" "a", 4, 0x10, 0x00,
		    "not v2 LOCAL or PROXY" },
		{ (const uint8_t *)"\x05\x00\x01" "a", 4, 0x22, 0x00,
		    "not v2 LOCAL or PROXY" },
		{ (const uint8_t *)"\x05\x00\x01" "a", 4, 0x21, 0x11,
		    "addresses longer than the header" },
		{ (const uint8_t *)"\x05\x00\x01" "a", 4, 0x21, 0x41,
		    "unknown address family" },
	};
	uint8_t		 buf[256];
	char		 id[PP2_ID_MAX + 1], *cause;
	size_t		 len, used, i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = header(buf, cases[i].cmd, cases[i].fam, cases[i].rest,
		    cases[i].len);
		if (pp2_parse(buf, len, &used, id, sizeof(id), NULL,
		    &cause) !=
		    PP2_PARSE_ERROR)
			fail_msg("case %zu accepted", i);
		assert_contains(cause, cases[i].cause);
		free(cause);
	}
	/* Not a PROXY header at all: refused at the first byte. */
	assert_int_equal(pp2_parse((const uint8_t *)"GET / HTTP/1.1", 14,
	    &used, id, sizeof(id), NULL, &cause), PP2_PARSE_ERROR);
	assert_contains(cause, "no PROXY protocol v2 header");
	free(cause);
	assert_int_equal(pp2_parse((const uint8_t *)"\x05", 1, &used, id,
	    sizeof(id), NULL, &cause), PP2_PARSE_ERROR);
	free(cause);
	/* Over the length limit. */
	memcpy(buf, sig, 12);
	buf[12] = 0x20;
	buf[13] = 0;
	buf[14] = 0xff;
	buf[15] = 0xff;
	assert_int_equal(pp2_parse(buf, 16, &used, id, sizeof(id), NULL,
	    &cause), PP2_PARSE_ERROR);
	assert_contains(cause, "longer than");
	free(cause);
}

/* What pp2_header() writes, pp2_parse() reads back, field by field. */
static void
test_pp2_roundtrip(void **state)
{
	struct pp2_out	 po = { "run-1", "{\"network\":{}}", "npm",
			    "registry.test:443", NULL, PP2_WATCH_VERSION,
			    PP2_WATCH_VERSION };
	char		 id[PP2_ID_MAX + 1], *cause, *narrow, *h;
	char		 text[PP2_TARGET_MAX + 1];
	size_t		 len, used, n;

	(void)state;
	assert_non_null(h = pp2_header(&po, &len, &cause));
	assert_int_equal(pp2_parse((uint8_t *)h, len, &used, id, sizeof(id),
	    &narrow, &cause), PP2_PARSE_OK);
	assert_int_equal(used, len);
	assert_string_equal(id, "run-1");
	assert_string_equal(narrow, "{\"network\":{}}");
	free(narrow);
	pp2_command((uint8_t *)h, used, text, sizeof(text));
	assert_string_equal(text, "npm");
	assert_int_equal(pp2_text((uint8_t *)h, used, PP2_TYPE_CORDON_TARGET,
	    text, sizeof(text)), 0);
	assert_string_equal(text, "registry.test:443");
	assert_int_equal(pp2_text((uint8_t *)h, used, PP2_TYPE_CORDON_NAME,
	    text, sizeof(text)), -1);
	assert_null(pp2_field((uint8_t *)h, used, PP2_TYPE_CORDON_NAME, &n));
	assert_int_equal(pp2_text((uint8_t *)h, used, PP2_TYPE_CORDON_WATCH,
	    text, sizeof(text)), 0);
	assert_string_equal(text, PP2_WATCH_VERSION);
	assert_int_equal(pp2_text((uint8_t *)h, used, PP2_TYPE_CORDON_CHANNEL,
	    text, sizeof(text)), 0);
	assert_string_equal(text, PP2_WATCH_VERSION);
	/* Too small to hold it: refused, not cut. */
	assert_int_equal(pp2_text((uint8_t *)h, used, PP2_TYPE_CORDON_TARGET,
	    text, 5), -1);
	assert_string_equal(text, "");
	free(h);

	/* Bounds: an id with a space, an empty target. */
	po.po_id = "a b";
	assert_null(pp2_header(&po, &len, &cause));
	assert_contains(cause, "a sandbox id");
	free(cause);
	po.po_id = "x";
	po.po_target = "";
	assert_null(pp2_header(&po, &len, &cause));
	assert_contains(cause, "a captured destination");
	free(cause);
}

/*
 * The originator's uid (0xe5): a uid in decimal, one field; anything
 * else refuses the header, rather than scope a run's channel under a
 * text of the client's choosing.
 */
static void
test_pp2_origin(void **state)
{
	static const char *const good[] = { "0", "1000", "4294967294" };
	static const char *const bad[] = { "", "x", "1000 ", "-1", "+1",
	    "01000", "1e3", "4294967295", "99999999999", "root" };
	uint8_t		 buf[256], rest[64];
	char		 id[PP2_ID_MAX + 1], *cause;
	size_t		 len, used, i, n;

	(void)state;
	memcpy(rest, "\x05\x00\x01" "a", 4);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		n = strlen(good[i]);
		memcpy(rest + 4, "\xe5\x00", 2);
		rest[6] = (uint8_t)n;
		memcpy(rest + 7, good[i], n);
		len = header(buf, 0x20, 0x00, rest, 7 + n);
		assert_int_equal(pp2_parse(buf, len, &used, id, sizeof(id),
		    NULL, &cause), PP2_PARSE_OK);
		/* Twice: refused. */
		memcpy(rest + 7 + n, rest + 4, 3 + n);
		len = header(buf, 0x20, 0x00, rest, 7 + n + 3 + n);
		assert_int_equal(pp2_parse(buf, len, &used, id, sizeof(id),
		    NULL, &cause), PP2_PARSE_ERROR);
		assert_contains(cause, "the originator's uid must be one "
		    "field of 1 to 10 digits");
		free(cause);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = strlen(bad[i]);
		memcpy(rest + 4, "\xe5\x00", 2);
		rest[6] = (uint8_t)n;
		memcpy(rest + 7, bad[i], n);
		len = header(buf, 0x20, 0x00, rest, 7 + n);
		if (pp2_parse(buf, len, &used, id, sizeof(id), NULL,
		    &cause) != PP2_PARSE_ERROR)
			fail_msg("origin \"%s\" accepted", bad[i]);
		assert_contains(cause, "the originator's uid");
		free(cause);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pp2_good),
		cmocka_unit_test(test_pp2_narrow),
		cmocka_unit_test(test_pp2_bad),
		cmocka_unit_test(test_pp2_roundtrip),
		cmocka_unit_test(test_pp2_origin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
