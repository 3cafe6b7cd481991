/*
 * test_host.c: host name normalisation and IP literal spellings.
 */
#include "unit.h"

#include "lib/host.h"

struct host_case {
	const char	*in;
	size_t		 len;		/* 0: strlen(in) */
	const char	*out;		/* canonical form, NULL: refused */
	int		 kind;
	const char	*cause;		/* part of the refusal */
};

static const struct host_case cases[] = {
	{ "example.com", 0, "example.com", HOST_NAME, NULL },
	{ "EXAMPLE.Com", 0, "example.com", HOST_NAME, NULL },
	{ "example.com.", 0, "example.com", HOST_NAME, NULL },
	{ "example.com..", 0, NULL, 0, "empty label" },
	{ ".example.com", 0, NULL, 0, "empty label" },
	{ "a..b", 0, NULL, 0, "empty label" },
	{ ".", 0, NULL, 0, "empty label" },
	{ "", 0, NULL, 0, "empty host name" },
	{ "my_host.example", 0, "my_host.example", HOST_NAME, NULL },
	{ "-bad.example", 0, NULL, 0, "may not start with '-'" },
	{ "ok-.example", 0, "ok-.example", HOST_NAME, NULL },
	{ "evil%00.test", 0, NULL, 0, "percent-escapes" },
	{ "evil.test\0.github.com", 22, NULL, 0, "byte 0x00 at offset 9" },
	{ "evil\n.test", 0, NULL, 0, "byte 0x0a" },
	{ "evil .test", 0, NULL, 0, "' ' is not allowed" },
	{ "evil/.test", 0, NULL, 0, "'/' is not allowed" },
	{ "ex\xc3\xa4mple.com", 0, NULL, 0, "byte 0xc3" },
	{ "localhost", 0, "localhost", HOST_NAME, NULL },
	{ "LOCALHOST.", 0, "localhost", HOST_NAME, NULL },
	/* IPv4 in every spelling inet_aton and browsers accept. */
	{ "127.0.0.1", 0, "127.0.0.1", HOST_ADDR, NULL },
	{ "127.0.0.1.", 0, "127.0.0.1", HOST_ADDR, NULL },
	{ "2130706433", 0, "127.0.0.1", HOST_ADDR, NULL },
	{ "0x7f000001", 0, "127.0.0.1", HOST_ADDR, NULL },
	{ "0X7F000001", 0, "127.0.0.1", HOST_ADDR, NULL },
	{ "0177.0.0.1", 0, "127.0.0.1", HOST_ADDR, NULL },
	{ "0x7f.1", 0, "127.0.0.1", HOST_ADDR, NULL },
	{ "127.1", 0, "127.0.0.1", HOST_ADDR, NULL },
	{ "127.0.1", 0, "127.0.0.1", HOST_ADDR, NULL },
	{ "169.254.43518", 0, "169.254.169.254", HOST_ADDR, NULL },
	{ "0", 0, "0.0.0.0", HOST_ADDR, NULL },
	/* Found by fuzz_addr: inet_aton refuses a bare "0x", browsers read
	 * it as 0; we do as browsers, and 0.0.0.0/8 is refused anyway. */
	{ "0x", 0, "0.0.0.0", HOST_ADDR, NULL },
	{ "1.0x.0X", 0, "1.0.0.0", HOST_ADDR, NULL },
	{ "256.0.0.1", 0, NULL, 0, "not a valid IPv4" },
	{ "1.2.3.4.5", 0, NULL, 0, "not a valid IPv4" },
	{ "4294967296", 0, NULL, 0, "not a valid IPv4" },
	{ "08.0.0.1", 0, NULL, 0, "not a valid IPv4" },
	{ "example.123", 0, NULL, 0, "not a valid IPv4" },
	{ "example.0x1f", 0, NULL, 0, "not a valid IPv4" },
	{ "123.example", 0, "123.example", HOST_NAME, NULL },
	{ "0xg.example", 0, "0xg.example", HOST_NAME, NULL },
	/* IPv6, bracketed or not; mapped IPv4 becomes IPv4. */
	{ "::1", 0, "::1", HOST_ADDR, NULL },
	{ "[::1]", 0, "::1", HOST_ADDR, NULL },
	{ "[0:0:0:0:0:0:0:1]", 0, "::1", HOST_ADDR, NULL },
	{ "[::FFFF:127.0.0.1]", 0, "127.0.0.1", HOST_ADDR, NULL },
	{ "::ffff:7f00:1", 0, "127.0.0.1", HOST_ADDR, NULL },
	{ "[fe80::1%eth0]", 0, NULL, 0, "not a valid IPv6" },
	{ "[::1", 0, NULL, 0, "not a valid IPv6" },
	{ "[1.2.3.4]", 0, NULL, 0, "not a valid IPv6" },
	{ "example.com:443", 0, NULL, 0, "not a valid IPv6" },
};

static void
test_host_cases(void **state)
{
	struct host	 h;
	char		*cause;
	size_t		 i, len;
	int		 rc;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = cases[i].len ? cases[i].len : strlen(cases[i].in);
		rc = host_parse(cases[i].in, len, &h, &cause);
		if (cases[i].out == NULL) {
			if (rc != -1)
				fail_msg("case %zu \"%s\" was accepted as %s",
				    i, cases[i].in, h.h_name);
			assert_contains(cause, cases[i].cause);
			free(cause);
			continue;
		}
		if (rc != 0)
			fail_msg("case %zu \"%s\" refused: %s", i,
			    cases[i].in, cause);
		assert_string_equal(h.h_name, cases[i].out);
		assert_int_equal(h.h_kind, cases[i].kind);
	}
}

static void
test_host_lengths(void **state)
{
	char		 name[300], label[70];
	struct host	 h;
	char		*cause;
	size_t		 i;

	(void)state;
	/* 63-byte labels are fine, 64 are not. */
	memset(label, 'a', 63);
	label[63] = '\0';
	snprintf(name, sizeof(name), "%s.example", label);
	assert_int_equal(host_parse(name, strlen(name), &h, &cause), 0);
	snprintf(name, sizeof(name), "%sa.example", label);
	assert_int_equal(host_parse(name, strlen(name), &h, &cause), -1);
	assert_contains(cause, "label longer than 63");
	free(cause);

	/* 253 bytes are fine (254 with the trailing dot), 254 are not. */
	for (i = 0; i < 253; i++)
		name[i] = (i % 2) ? '.' : 'a';
	name[253] = '\0';
	assert_int_equal(host_parse(name, 253, &h, &cause), 0);
	name[253] = '.';
	assert_int_equal(host_parse(name, 254, &h, &cause), 0);
	name[253] = 'a';
	assert_int_equal(host_parse(name, 254, &h, &cause), -1);
	assert_contains(cause, "longer than 253");
	free(cause);
}

static void
test_host_suffix(void **state)
{
	(void)state;
	assert_true(host_in_suffix("a.example.com", "example.com"));
	assert_true(host_in_suffix("a.b.example.com", "example.com"));
	assert_false(host_in_suffix("example.com", "example.com"));
	assert_false(host_in_suffix("badexample.com", "example.com"));
	assert_false(host_in_suffix("example.com.evil", "example.com"));
	assert_false(host_in_suffix("com", "example.com"));
}

static void
test_host_split(void **state)
{
	const char	*port;
	size_t		 n;
	char		*cause;

	(void)state;
	assert_int_equal(host_split("example.com:8443", &n, &port, &cause), 0);
	assert_int_equal(n, 11);
	assert_string_equal(port, "8443");
	assert_int_equal(host_split("[::1]:80", &n, &port, &cause), 0);
	assert_int_equal(n, 5);
	assert_string_equal(port, "80");
	assert_int_equal(host_split("::1", &n, &port, &cause), 0);
	assert_int_equal(n, 3);
	assert_null(port);
	assert_int_equal(host_split("[::1", &n, &port, &cause), -1);
	free(cause);
	assert_int_equal(host_split("[::1]x", &n, &port, &cause), -1);
	free(cause);

	assert_int_equal(host_port("443"), 443);
	assert_int_equal(host_port("65535"), 65535);
	assert_int_equal(host_port("65536"), -1);
	assert_int_equal(host_port("0"), -1);
	assert_int_equal(host_port("0443"), -1);
	assert_int_equal(host_port("+443"), -1);
	assert_int_equal(host_port(""), -1);
	assert_int_equal(host_port("4430000"), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_cases),
		cmocka_unit_test(test_host_lengths),
		cmocka_unit_test(test_host_suffix),
		cmocka_unit_test(test_host_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
