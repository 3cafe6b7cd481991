/*
 * test_seatbelt.c: macOS paths, SBPL strings that no path can break out
 * of, the structural check on good and bad profiles, the refusals, and
 * every case of tests/profiles byte for byte (golden.h), each profile
 * made also passing the check.
 */
#include "unit.h"

#include <stdbool.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "profile/profile.h"

#include "golden.h"

static void
test_paths(void **state)
{
	static const char *const cases[][2] = {
		{ "/var", "/private/var" },
		{ "/var/folders/xy/T", "/private/var/folders/xy/T" },
		{ "/tmp", "/private/tmp" },
		{ "/tmp/a b", "/private/tmp/a b" },
		{ "/etc/hosts", "/private/etc/hosts" },
		{ "/variable", "/variable" },
		{ "/tmpfoo/x", "/tmpfoo/x" },
		{ "/private/tmp", "/private/tmp" },
		{ "/Users/dev", "/Users/dev" },
		{ "/", "/" },
	};
	char	*out, *cause;
	size_t	 i;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		out = seatbelt_path(cases[i][0], &cause);
		assert_non_null(out);
		assert_string_equal(out, cases[i][1]);
		free(out);
	}
	assert_null(seatbelt_path("rel/path", &cause));
	assert_contains(cause, "not an absolute path");
	free(cause);
	assert_null(seatbelt_path("/a\nb", &cause));
	assert_contains(cause, "control character");
	assert_contains(cause, "/a\\x0ab");
	free(cause);
	assert_null(seatbelt_path("/a\x7f", &cause));
	free(cause);
}

static void
test_strings(void **state)
{
	char	*s;

	(void)state;
	s = seatbelt_string("/plain");
	assert_string_equal(s, "\"/plain\"");
	free(s);
	s = seatbelt_string("/a\"b\\c");
	assert_string_equal(s, "\"/a\\\"b\\\\c\"");
	free(s);
	s = seatbelt_string("\\\"");
	assert_string_equal(s, "\"\\\\\\\"\"");
	free(s);
}

static const char good_head[] = "(version 1)\n(deny default)\n";

/* Checks head + body in mode, port 3128; returns the cause or NULL. */
static char *
check(const char *body, int mode)
{
	char	*text, *cause = NULL;

	xasprintf(&text, "%s%s", good_head, body);
	if (seatbelt_check(text, mode, 3128, &cause) == 0)
		assert_null(cause);
	free(text);
	return cause;
}

static void
test_check_good(void **state)
{
	(void)state;
	assert_null(check("", NET_NONE));
	assert_null(check("; a comment (with ( parens\n"
	    "(allow file-read* (subpath \"/a\\\"b)\"))\n", NET_PROXY));
	assert_null(check("(allow network-outbound "
	    "(remote ip \"localhost:3128\"))", NET_PROXY));
	assert_null(check("(allow network-outbound "
	    "(remote tcp \"localhost:3128\"))", NET_PROXY));
	assert_null(check("(allow network*)\n(allow mach-lookup "
	    "(global-name \"com.apple.dnssd.service\"))", NET_HOST));
	assert_null(check("(allow file-write* (require-not "
	    "(regex #\"/[.]git$\")))", NET_NONE));
}

static void
test_check_bad(void **state)
{
	static const struct {
		const char	*body;
		int		 mode;
		const char	*want;
	} cases[] = {
		{ "(allow file-read*", NET_NONE, "not closed" },
		{ "(allow file-read*))", NET_NONE, "unbalanced" },
		{ "(allow file-read* (subpath \"/a))", NET_NONE,
		    "not closed" },
		{ "(allow file-read* (subpath \"/a\\n\"))", NET_NONE,
		    "an escape" },
		{ "(allow file-read* (subpath \"/a\tb\"))", NET_NONE,
		    "control character" },
		{ "(allow file-read* (regex #\"a\\.b\"))", NET_NONE,
		    "an escape" },
		{ "(allow default)", NET_HOST, "(allow default)" },
		{ "(allow network*)", NET_PROXY, "network allowed" },
		{ "(allow network*)", NET_NONE, "network allowed" },
		{ "(allow network-outbound)", NET_PROXY, "network allowed" },
		{ "(allow network-outbound (remote ip \"*:3128\"))",
		    NET_PROXY, "network allowed" },
		{ "(allow network-outbound (remote ip \"localhost:80\"))",
		    NET_PROXY, "localhost:3128" },
		{ "(allow network-outbound (remote ip \"localhost:3128\"))",
		    NET_NONE, "network mode none" },
		{ "(allow network-outbound (remote ip \"localhost:3128\") "
		    "(remote ip \"*:*\"))", NET_PROXY, "network allowed" },
		{ "(allow file-read* network-bind)", NET_PROXY,
		    "network allowed" },
		{ "(allow system-socket)", NET_PROXY, "network allowed" },
		{ "(allow mach-lookup (global-name "
		    "\"com.apple.dnssd.service\"))", NET_PROXY, "DNS" },
		{ "(allow network-outbound (remote unix-socket (path-literal "
		    "\"/private/var/run/mDNSResponder\")))", NET_PROXY,
		    "DNS" },
		{ "(define (f) (allow network*))", NET_PROXY, "top-level" },
		{ "(if #t (allow network*))", NET_PROXY, "top-level" },
		{ "(allow)", NET_NONE, "without an operation" },
	};
	char	*cause;
	size_t	 i;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		cause = check(cases[i].body, cases[i].mode);
		if (cause == NULL)
			fail_msg("passed: %s", cases[i].body);
		assert_contains(cause, cases[i].want);
		free(cause);
	}
	assert_int_equal(seatbelt_check("(deny default)\n", NET_NONE, 0,
	    &cause), -1);
	assert_contains(cause, "(version 1)");
	free(cause);
	assert_int_equal(seatbelt_check("(version 1)\n(allow file-read*)\n"
	    "(deny default)\n", NET_NONE, 0, &cause), -1);
	assert_contains(cause, "(deny default)");
	free(cause);
	assert_int_equal(seatbelt_check("(version 1)\n", NET_NONE, 0,
	    &cause), -1);
	free(cause);
}

/* A profile made from p with the golden options. */
static char *
make(const struct policy *p, int port, char **cause)
{
	struct sb_opts	 o = { port, GOLDEN_HOME, NULL };

	return seatbelt_profile(p, &o, cause);
}

/* A path made of quotes and parentheses stays one string. */
static void
test_quote_path(void **state)
{
	struct policy	*p;
	char		*text, *cause;

	(void)state;
	p = golden_policy("{\"version\": 1, \"filesystem\": {\"write\": "
	    "[\"/tmp/x\\\") (allow network*) (allow default) (\\\"\"]}}");
	text = make(p, 3128, &cause);
	assert_non_null(text);
	assert_contains(text, "(subpath \"/private/tmp/x\\\") (allow "
	    "network*) (allow default) (\\\"\")");
	assert_int_equal(seatbelt_check(text, NET_PROXY, 3128, &cause), 0);
	free(text);
	policy_free(p);

	p = golden_policy("{\"version\": 1, \"filesystem\": {\"deny\": "
	    "[\"/x\\\\\\\") (allow network*) ;\"]}}");
	text = make(p, 3128, &cause);
	assert_non_null(text);
	assert_contains(text, "(subpath \"/x\\\\\\\") (allow network*) ;\")");
	assert_int_equal(seatbelt_check(text, NET_PROXY, 3128, &cause), 0);
	free(text);
	policy_free(p);

	p = golden_policy("{\"version\": 1, \"filesystem\": {\"write\": "
	    "[\"/tmp/a\\nb\"]}}");
	assert_null(make(p, 3128, &cause));
	assert_contains(cause, "control character");
	free(cause);
	policy_free(p);
}

static void
test_refusals(void **state)
{
	struct policy	*p;
	char		*cause;

	(void)state;
	p = golden_policy("{\"version\": 1}");
	assert_null(make(p, 0, &cause));
	assert_contains(cause, "--proxy-port");
	free(cause);
	policy_free(p);

	p = golden_policy("{\"version\": 1, \"filesystem\": {\"write\": [\"/\", "
	    "\"/dev/x\"]}}");
	assert_null(make(p, 3128, &cause));
	assert_contains(cause, "may not be / or under /dev");
	free(cause);
	policy_free(p);

	/* No port needed without the proxy. */
	p = golden_policy("{\"version\": 1, \"network\": {\"mode\": \"none\"}}");
	cause = make(p, 0, &cause);
	assert_non_null(cause);
	assert_null(strstr(cause, "network-"));
	free(cause);
	policy_free(p);
}

static void
golden_one(const struct golden *g)
{
	char	*text, *cause;
	int	 mode = g->g_policy->p_mode.ps_value;

	if ((text = make(g->g_policy, g->g_port, &cause)) == NULL) {
		xasprintf(&text, "%s\n", cause);
		free(cause);
		golden_match(g, "expected.sb.err", text);
		golden_drop(g, "expected.sb");
	} else {
		if (seatbelt_check(text, mode, g->g_port, &cause) == -1)
			fail_msg("%s: %s", g->g_dir, cause);
		golden_match(g, "expected.sb", text);
		golden_drop(g, "expected.sb.err");
	}
	free(text);
}

static void
test_golden(void **state)
{
	(void)state;
	assert_true(golden_each(golden_one) >= 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_check_good),
		cmocka_unit_test(test_check_bad),
		cmocka_unit_test(test_quote_path),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
