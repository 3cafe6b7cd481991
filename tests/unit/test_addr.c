/*
 * test_addr.c: CIDR parsing, containment, intersection, special ranges.
 */
#include "unit.h"

#include <sys/socket.h>

#include "lib/addr.h"

static struct addr
A(const char *s)
{
	struct addr	 a;

	if (addr_parse(s, strlen(s), &a) == -1)
		fail_msg("\"%s\" is not an address", s);
	return a;
}

static struct cidr
C(const char *s)
{
	struct cidr	 c;
	char		*cause;

	if (addr_cidr_parse(s, &c, &cause) == -1)
		fail_msg("\"%s\": %s", s, cause);
	return c;
}

static void
test_cidr_parse(void **state)
{
	static const struct {
		const char	*in;
		const char	*out;	/* NULL: refused with cause */
		const char	*cause;
	} cases[] = {
		{ "10.0.0.0/8", "10.0.0.0/8", NULL },
		{ "127.0.0.1", "127.0.0.1/32", NULL },
		{ "::1", "::1/128", NULL },
		{ "fc00::/7", "fc00::/7", NULL },
		{ "::ffff:10.0.0.0/104", NULL, "write it as IPv4" },
		{ "0.0.0.0/0", "0.0.0.0/0", NULL },
		{ "10.0.0.1/8", NULL, "did you mean 10.0.0.0/8" },
		{ "10.0.0.0/33", NULL, "bad prefix length" },
		{ "10.0.0.0/", NULL, "bad prefix length" },
		{ "10.0.0.0/08", NULL, "bad prefix length" },
		{ "10.0.0.0/-1", NULL, "bad prefix length" },
		{ "10/8", NULL, "not an IP address" },
		{ "0x0a.0.0.0/8", NULL, "not an IP address" },
		{ "example.com/8", NULL, "not an IP address" },
		{ "", NULL, "not an IP address" },
	};
	struct cidr	 c;
	char		*cause, buf[64];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].out == NULL) {
			if (addr_cidr_parse(cases[i].in, &c, &cause) != -1)
				fail_msg("\"%s\" was accepted", cases[i].in);
			assert_contains(cause, cases[i].cause);
			free(cause);
			continue;
		}
		if (addr_cidr_parse(cases[i].in, &c, &cause) == -1)
			fail_msg("\"%s\": %s", cases[i].in, cause);
		assert_string_equal(addr_cidr_str(&c, buf, sizeof(buf)),
		    cases[i].out);
	}
}

static void
test_cidr_contains(void **state)
{
	struct cidr	 c8 = C("10.0.0.0/8"), all = C("0.0.0.0/0");
	struct addr	 a;

	(void)state;
	a = A("10.1.2.3");
	assert_true(addr_cidr_contains(&c8, &a));
	a = A("11.0.0.0");
	assert_false(addr_cidr_contains(&c8, &a));
	a = A("::ffff:10.9.9.9");
	assert_true(addr_cidr_contains(&c8, &a));	/* mapped is IPv4 */
	a = A("::1");
	assert_false(addr_cidr_contains(&c8, &a));
	assert_true(addr_cidr_contains(&all, &a) == false);
	a = A("203.0.113.7");
	assert_true(addr_cidr_contains(&all, &a));
}

static void
test_cidr_intersect(void **state)
{
	struct cidr	 a = C("10.0.0.0/8"), b = C("10.1.0.0/16");
	struct cidr	 c = C("192.168.0.0/16"), d = C("::/0"), out;
	char		 buf[64];

	(void)state;
	assert_true(addr_cidr_intersect(&a, &b, &out));
	assert_string_equal(addr_cidr_str(&out, buf, sizeof(buf)),
	    "10.1.0.0/16");
	assert_true(addr_cidr_intersect(&b, &a, &out));
	assert_string_equal(addr_cidr_str(&out, buf, sizeof(buf)),
	    "10.1.0.0/16");
	assert_false(addr_cidr_intersect(&a, &c, &out));
	assert_false(addr_cidr_intersect(&a, &d, &out));
}

static void
test_special(void **state)
{
	static const struct {
		const char	*addr;
		const char	*what;	/* NULL: an ordinary address */
	} cases[] = {
		{ "127.0.0.1", "loopback" },
		{ "127.255.255.254", "loopback" },
		{ "10.0.0.1", "private" },
		{ "172.16.0.1", "private" },
		{ "172.31.255.255", "private" },
		{ "172.32.0.1", NULL },
		{ "192.168.1.1", "private" },
		{ "169.254.169.254", "link-local" },
		{ "100.64.0.1", "CGNAT" },
		{ "100.128.0.1", NULL },
		{ "0.0.0.0", "this network" },
		{ "224.0.0.1", "multicast" },
		{ "255.255.255.255", "broadcast" },
		{ "240.0.0.1", "reserved" },
		{ "198.18.0.1", "benchmarking" },
		{ "8.8.8.8", NULL },
		{ "1.1.1.1", NULL },
		{ "::", "unspecified" },
		{ "::1", "loopback" },
		{ "::ffff:8.8.8.8", "IPv4-mapped" },
		{ "::127.0.0.1", "IPv4-compatible" },
		{ "fd00::1", "unique local" },
		{ "fe80::1", "link-local" },
		{ "ff02::1", "multicast" },
		{ "64:ff9b::7f00:1", "loopback" },	/* NAT64 of 127.0.0.1 */
		{ "64:ff9b::a9fe:a9fe", "link-local" },
		{ "64:ff9b::808:808", NULL },		/* NAT64 of 8.8.8.8 */
		{ "2002:7f00:1::", "loopback" },		/* 6to4 of 127.0.0.1 */
		{ "2002:c0a8:101::1", "private" },
		{ "2002:808:808::1", NULL },
		{ "2001::1", "Teredo" },
		{ "2001:db8::1", "documentation" },
		{ "2606:4700::1111", NULL },
	};
	struct addr	 a;
	const char	*what;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		a = A(cases[i].addr);
		what = addr_special(&a);
		if (cases[i].what == NULL) {
			if (what != NULL)
				fail_msg("%s is special: %s", cases[i].addr,
				    what);
			continue;
		}
		if (what == NULL)
			fail_msg("%s is not special", cases[i].addr);
		assert_contains(what, cases[i].what);
	}
}

static void
test_addr_numeric(void **state)
{
	(void)state;
	assert_true(addr_looks_numeric("1.2.3.4", 7));
	assert_true(addr_looks_numeric("example.0x", 10));
	assert_true(addr_looks_numeric("example.12.", 11));
	assert_false(addr_looks_numeric("example.com", 11));
	assert_false(addr_looks_numeric("1.2.3.x4", 8));
	assert_false(addr_looks_numeric("", 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cidr_parse),
		cmocka_unit_test(test_cidr_contains),
		cmocka_unit_test(test_cidr_intersect),
		cmocka_unit_test(test_special),
		cmocka_unit_test(test_addr_numeric),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
