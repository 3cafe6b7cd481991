/*
 * test_policy_match.c: decisions by name, port and address.
 */
#include "unit.h"

#include "policies/policy.h"

static struct policy_ctx	 ctx = {
	.pc_workspace = "/w",
	.pc_home = "/h",
};

static struct policy *
load(const char *text)
{
	struct policy	*p;
	char		*cause;

	if ((p = policy_load_buffer(text, strlen(text), "t.json", &ctx,
	    &cause)) == NULL)
		fail_msg("%s", cause);
	return p;
}

/* Decides host:port and checks the verdict and, if want_rule, the rule. */
static void
expect(const struct policy *p, const char *host, size_t len, int port,
    bool allow, enum decision_why why, const char *rule)
{
	struct decision	 d;
	bool		 got;

	got = policy_match_host(p, host, len ? len : strlen(host), port, &d);
	if (got != allow || d.d_why != why)
		fail_msg("%s:%d: got %s (why %d), want %s (why %d)", host, port,
		    got ? "allow" : "deny", d.d_why, allow ? "allow" : "deny",
		    why);
	assert_int_equal(d.d_verdict, allow ? VERDICT_ALLOW : VERDICT_DENY);
	if (rule != NULL) {
		assert_non_null(d.d_rule);
		assert_string_equal(d.d_rule->pi_text, rule);
	}
	decision_clear(&d);
}

static const char *policy_text =
    "{\"version\": 1, \"network\": {\"allow\": [\"github.com\","
    " \"*.githubusercontent.com\", \"api.test:8443\", \"any.test:*\","
    " \"*.corp.test\", \"10.1.2.3\", \"[2606:4700::1111]\", \"127.0.0.1:8080\","
    " \"localhost\"],"
    " \"deny\": [\"gist.github.com\", \"*.evil.corp.test\", \"203.0.113.9\"],"
    " \"allow_cidrs\": [\"127.0.0.0/8\"]}}";

static void
test_names(void **state)
{
	struct policy	*p = load(policy_text);

	(void)state;
	expect(p, "github.com", 0, 443, true, WHY_ALLOW_RULE, "github.com");
	expect(p, "github.com", 0, 80, true, WHY_ALLOW_RULE, "github.com");
	expect(p, "GitHub.COM.", 0, 443, true, WHY_ALLOW_RULE, "github.com");
	expect(p, "github.com", 0, 22, false, WHY_NO_RULE, NULL);
	expect(p, "www.github.com", 0, 443, false, WHY_NO_RULE, NULL);
	expect(p, "evilgithub.com", 0, 443, false, WHY_NO_RULE, NULL);
	expect(p, "github.com.evil.test", 0, 443, false, WHY_NO_RULE, NULL);
	/* "*." is strictly below, at any depth, on label boundaries. */
	expect(p, "raw.githubusercontent.com", 0, 443, true, WHY_ALLOW_RULE,
	    "*.githubusercontent.com");
	expect(p, "a.b.githubusercontent.com", 0, 443, true, WHY_ALLOW_RULE,
	    NULL);
	expect(p, "githubusercontent.com", 0, 443, false, WHY_NO_RULE, NULL);
	expect(p, "xgithubusercontent.com", 0, 443, false, WHY_NO_RULE, NULL);
	/* Ports. */
	expect(p, "api.test", 0, 8443, true, WHY_ALLOW_RULE, "api.test:8443");
	expect(p, "api.test", 0, 443, false, WHY_NO_RULE, NULL);
	expect(p, "any.test", 0, 1, true, WHY_ALLOW_RULE, "any.test:*");
	expect(p, "any.test", 0, 65535, true, WHY_ALLOW_RULE, NULL);
	expect(p, "any.test", 0, 0, false, WHY_BAD_PORT, NULL);
	expect(p, "any.test", 0, 65536, false, WHY_BAD_PORT, NULL);
	/* Deny beats allow, and a deny without a port covers every port. */
	expect(p, "gist.github.com", 0, 443, false, WHY_DENY_RULE,
	    "gist.github.com");
	expect(p, "x.evil.corp.test", 0, 443, false, WHY_DENY_RULE,
	    "*.evil.corp.test");
	expect(p, "evil.corp.test", 0, 443, true, WHY_ALLOW_RULE,
	    "*.corp.test");
	expect(p, "localhost", 0, 443, true, WHY_ALLOW_RULE, "localhost");
	policy_free(p);
}

static void
test_bad_names(void **state)
{
	struct policy	*p = load(policy_text);

	(void)state;
	expect(p, "github.com\0.evil.test", 21, 443, false, WHY_BAD_NAME, NULL);
	expect(p, "github.com%00", 0, 443, false, WHY_BAD_NAME, NULL);
	expect(p, "github.com\r\nX: y", 0, 443, false, WHY_BAD_NAME, NULL);
	expect(p, "github.com..", 0, 443, false, WHY_BAD_NAME, NULL);
	expect(p, "", 0, 443, false, WHY_BAD_NAME, NULL);
	policy_free(p);
}

static void
test_literals(void **state)
{
	struct policy	*p = load(policy_text);

	(void)state;
	/* Only the very address listed, in any spelling. */
	expect(p, "10.1.2.3", 0, 443, false, WHY_SPECIAL_ADDR, NULL);
	expect(p, "2606:4700::1111", 0, 443, true, WHY_ALLOW_RULE,
	    "[2606:4700::1111]");
	expect(p, "[2606:4700:0::1111]", 0, 80, true, WHY_ALLOW_RULE, NULL);
	expect(p, "2606:4700::1112", 0, 443, false, WHY_NO_RULE, NULL);
	/* 127.0.0.1:8080 is listed and 127/8 is in allow_cidrs. */
	expect(p, "127.0.0.1", 0, 8080, true, WHY_ALLOW_RULE,
	    "127.0.0.1:8080");
	expect(p, "2130706433", 0, 8080, true, WHY_ALLOW_RULE, NULL);
	expect(p, "0x7f.1", 0, 8080, true, WHY_ALLOW_RULE, NULL);
	expect(p, "0177.0.0.1", 0, 8080, true, WHY_ALLOW_RULE, NULL);
	expect(p, "[::ffff:127.0.0.1]", 0, 8080, true, WHY_ALLOW_RULE, NULL);
	expect(p, "127.0.0.2", 0, 8080, false, WHY_NO_RULE, NULL);
	expect(p, "127.0.0.1", 0, 8081, false, WHY_NO_RULE, NULL);
	/* A name is never an address: "localhost" does not allow ::1. */
	expect(p, "::1", 0, 443, false, WHY_NO_RULE, NULL);
	policy_free(p);
}

/*
 * network.host_ports: the host's own loopback on those ports, in every
 * spelling (a name, 127/8, ::1, IPv4-mapped, the unspecified address a
 * connect turns into the loopback), and nothing else of the host.
 */
static void
test_host_ports(void **state)
{
	struct policy	*p = load("{\"version\": 1, \"network\": {"
	    "\"host_ports\": [\"localhost:5432\", \"localhost:3000-3999\"],"
	    "\"deny\": [\"127.0.0.1:3333\"]}}");
	struct decision	 d;
	struct addr	 a;
	char		*hint;

	(void)state;
	expect(p, "localhost", 0, 5432, true, WHY_ALLOW_RULE, "localhost:5432");
	expect(p, "127.0.0.1", 0, 5432, true, WHY_ALLOW_RULE, NULL);
	expect(p, "127.0.0.2", 0, 3999, true, WHY_ALLOW_RULE,
	    "localhost:3000-3999");
	expect(p, "::1", 0, 3000, true, WHY_ALLOW_RULE, NULL);
	expect(p, "[::ffff:127.0.0.1]", 0, 5432, true, WHY_ALLOW_RULE, NULL);
	expect(p, "0.0.0.0", 0, 5432, true, WHY_ALLOW_RULE, NULL);
	expect(p, "::", 0, 5432, true, WHY_ALLOW_RULE, NULL);
	/* Another port, another address of the host, a deny rule: no. */
	expect(p, "127.0.0.1", 0, 5433, false, WHY_NO_RULE, NULL);
	expect(p, "localhost", 0, 22, false, WHY_NO_RULE, NULL);
	expect(p, "0.0.0.1", 0, 5432, false, WHY_NO_RULE, NULL);
	expect(p, "10.0.0.1", 0, 5432, false, WHY_NO_RULE, NULL);
	expect(p, "db.test", 0, 5432, false, WHY_NO_RULE, NULL);
	expect(p, "127.0.0.1", 0, 3333, false, WHY_DENY_RULE, NULL);
	/* What localhost resolves to passes the address check; not more. */
	assert_true(policy_match_host(p, "localhost", 9, 5432, &d));
	assert_int_equal(addr_parse("127.0.0.1", 9, &a), 0);
	assert_true(policy_match_addr(p, &a, &d));
	assert_int_equal(addr_parse("192.168.1.5", 11, &a), 0);
	assert_false(policy_match_addr(p, &a, &d));
	decision_clear(&d);
	/* The hint for a port not opened names the key. */
	assert_false(policy_match_host(p, "127.0.0.1", 9, 6379, &d));
	hint = decision_hint(&d);
	assert_non_null(strstr(hint, "add \"localhost:6379\" to "
	    "network.host_ports"));
	free(hint);
	decision_clear(&d);
	policy_free(p);
}

static void
test_addresses(void **state)
{
	struct policy	*p = load(policy_text);
	struct decision	 d;
	struct addr	 a;

	(void)state;
	/* An allowed name whose address is private is refused... */
	assert_true(policy_match_host(p, "github.com", 10, 443, &d));
	assert_int_equal(addr_parse("10.0.0.5", 8, &a), 0);
	assert_false(policy_match_addr(p, &a, &d));
	assert_int_equal(d.d_why, WHY_SPECIAL_ADDR);
	assert_contains(d.d_special, "private");
	decision_clear(&d);
	/* ... metadata too, and mapped forms of both ... */
	assert_true(policy_match_host(p, "github.com", 10, 443, &d));
	assert_int_equal(addr_parse("::ffff:169.254.169.254", 22, &a), 0);
	assert_false(policy_match_addr(p, &a, &d));
	decision_clear(&d);
	/* ... unless allow_cidrs covers it, keeping the name's rule ... */
	assert_true(policy_match_host(p, "github.com", 10, 443, &d));
	assert_int_equal(addr_parse("127.0.0.9", 9, &a), 0);
	assert_true(policy_match_addr(p, &a, &d));
	assert_string_equal(d.d_rule->pi_text, "github.com");
	assert_string_equal(d.d_cidr->pi_text, "127.0.0.0/8");
	decision_clear(&d);
	/* ... a public address passes ... */
	assert_true(policy_match_host(p, "github.com", 10, 443, &d));
	assert_int_equal(addr_parse("140.82.112.3", 12, &a), 0);
	assert_true(policy_match_addr(p, &a, &d));
	assert_int_equal(d.d_why, WHY_ALLOW_RULE);
	decision_clear(&d);
	/* ... and a denied literal refuses names that resolve to it. */
	assert_true(policy_match_host(p, "github.com", 10, 443, &d));
	assert_int_equal(addr_parse("203.0.113.9", 11, &a), 0);
	assert_false(policy_match_addr(p, &a, &d));
	assert_int_equal(d.d_why, WHY_DENY_RULE);
	decision_clear(&d);
	policy_free(p);
}

static void
test_modes(void **state)
{
	struct policy	*p;

	(void)state;
	p = load("{\"version\": 1, \"network\": {\"mode\": \"none\", "
	    "\"allow\": [\"a.test\"]}}");
	expect(p, "a.test", 0, 443, false, WHY_MODE_NONE, NULL);
	policy_free(p);
	p = load("{\"version\": 1, \"network\": {\"mode\": \"host\"}}");
	expect(p, "a.test", 0, 443, true, WHY_MODE_HOST, NULL);
	policy_free(p);
	/* An empty allowlist refuses everything. */
	p = load("{\"version\": 1, \"network\": {\"allow\": []}}");
	expect(p, "a.test", 0, 443, false, WHY_NO_RULE, NULL);
	policy_free(p);
}

static void
test_describe(void **state)
{
	struct policy	*p = load(policy_text);
	struct decision	 d;
	char		*s;

	(void)state;
	policy_match_host(p, "evil.test", 9, 443, &d);
	s = decision_describe(&d);
	assert_string_equal(s, "deny evil.test:443: no network.allow entry "
	    "matches (default deny)");
	free(s);
	s = decision_hint(&d);
	assert_string_equal(s, "add \"evil.test\" to network.allow, or pass "
	    "--allow-domain evil.test");
	free(s);
	decision_clear(&d);

	policy_match_host(p, "evil.test", 9, 8443, &d);
	s = decision_hint(&d);
	assert_contains(s, "\"evil.test:8443\"");
	free(s);
	decision_clear(&d);

	policy_match_host(p, "gist.github.com", 15, 443, &d);
	s = decision_describe(&d);
	assert_string_equal(s, "deny gist.github.com:443: by network.deny "
	    "\"gist.github.com\" (from t.json: network.deny[0])");
	free(s);
	decision_clear(&d);

	/* The host's own loopback: the key made for it. */
	policy_match_host(p, "::1", 3, 443, &d);
	s = decision_hint(&d);
	assert_contains(s, "add \"localhost:443\" to network.host_ports");
	free(s);
	decision_clear(&d);

	policy_match_host(p, "10.1.2.3", 8, 443, &d);
	s = decision_describe(&d);
	assert_contains(s, "deny 10.1.2.3:443: the address is private (RFC "
	    "1918), and not in network.allow_cidrs");
	free(s);
	s = decision_hint(&d);
	assert_contains(s, "--allow-cidr 10.1.2.3/32");
	free(s);
	decision_clear(&d);
	policy_free(p);
}

/* A name alone, as the sandbox's resolver asks: on some port, or none. */
static void
test_names_alone(void **state)
{
	struct policy	*p = load("{\"version\": 1, \"network\": {\"allow\": "
	    "[\"github.com\", \"ssh.test:22\", \"*.corp.test\"], \"deny\": "
	    "[\"gist.github.com\", \"x.corp.test:8080\", \"y.corp.test\"]}}");
	struct decision	 d;
	char		*what, *hint;

	(void)state;
	assert_true(policy_match_name(p, "github.com", 10, &d));
	decision_clear(&d);
	/* Allowed on port 22 only: the name resolves. */
	assert_true(policy_match_name(p, "ssh.test", 8, &d));
	decision_clear(&d);
	/* A deny rule on one port leaves the name; one on every port not. */
	assert_true(policy_match_name(p, "x.corp.test", 11, &d));
	decision_clear(&d);
	assert_false(policy_match_name(p, "y.corp.test", 11, &d));
	assert_int_equal(d.d_why, WHY_DENY_RULE);
	decision_clear(&d);
	assert_false(policy_match_name(p, "gist.github.com", 15, &d));
	decision_clear(&d);
	assert_false(policy_match_name(p, "evil.test", 9, &d));
	assert_int_equal(d.d_why, WHY_NO_RULE);
	what = decision_describe(&d);
	hint = decision_hint(&d);
	assert_string_equal(what, "deny evil.test: no network.allow entry "
	    "matches (default deny)");
	assert_string_equal(hint, "add \"evil.test\" to network.allow, or "
	    "pass --allow-domain evil.test");
	free(what);
	free(hint);
	decision_clear(&d);
	/* Port 0 stays a bad port for a connection. */
	assert_false(policy_match_host(p, "github.com", 10, 0, &d));
	assert_int_equal(d.d_why, WHY_BAD_PORT);
	decision_clear(&d);
	policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_host_ports),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_names_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
