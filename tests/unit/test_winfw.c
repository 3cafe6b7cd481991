/*
 * test_winfw.c: PowerShell quoting, the refusals (no port, no target,
 * a relative program), the port ranges at the edges, and every case of
 * tests/profiles byte for byte (golden.h), with the removal script.
 */
#include "unit.h"

#include <stdbool.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "profile/profile.h"

#include "golden.h"

static void
test_quote(void **state)
{
	char	*s, *cause;

	(void)state;
	s = winfw_quote("C:\\Program Files\\a.exe", &cause);
	assert_string_equal(s, "'C:\\Program Files\\a.exe'");
	free(s);
	/* $, backticks and double quotes mean nothing in single quotes. */
	s = winfw_quote("it's $(calc) `n \"x\"", &cause);
	assert_string_equal(s, "'it''s $(calc) `n \"x\"'");
	free(s);
	s = winfw_quote("''", &cause);
	assert_string_equal(s, "''''''");
	free(s);
	/* U+2019, which PowerShell also reads as a single quote. */
	assert_null(winfw_quote("C:\\it\xe2\x80\x99s.exe", &cause));
	assert_contains(cause, "typographic quote");
	free(cause);
	assert_null(winfw_quote("C:\\a\r\nb", &cause));
	assert_contains(cause, "control character");
	free(cause);
	/* Other UTF-8 passes. */
	s = winfw_quote("C:\\Users\\Jos\xc3\xa9\\a.exe", &cause);
	assert_non_null(s);
	free(s);
}

static void
test_refusals(void **state)
{
	const char		*prog[] = { "C:\\a.exe" }, *rel[] = { "a.exe" };
	struct winfw_opts	 o = { 0, prog, 1, NULL };
	struct policy		*p;
	char			*cause;

	(void)state;
	p = golden_policy("{\"version\": 1}");
	assert_null(winfw_install(p, &o, &cause));
	assert_contains(cause, "--proxy-port");
	free(cause);
	o.wo_port = 3128;
	o.wo_nprograms = 0;
	assert_null(winfw_install(p, &o, &cause));
	assert_contains(cause, "--program PATH or --user NAME");
	free(cause);
	o.wo_programs = rel;
	o.wo_nprograms = 1;
	assert_null(winfw_install(p, &o, &cause));
	assert_contains(cause, "not a full Windows path");
	free(cause);
	policy_free(p);
}

static void
test_port_edges(void **state)
{
	const char		*prog[] = { "\\\\srv\\share\\a.exe" };
	struct winfw_opts	 o = { 1, prog, 1, NULL };
	struct policy		*p;
	char			*text, *cause;

	(void)state;
	p = golden_policy("{\"version\": 1}");
	text = winfw_install(p, &o, &cause);
	assert_contains(text, "-RemotePort '2-65535' |");
	free(text);
	o.wo_port = 65535;
	text = winfw_install(p, &o, &cause);
	assert_contains(text, "-RemotePort '1-65534' |");
	free(text);
	policy_free(p);
}

static void
golden_one(const struct golden *g)
{
	struct winfw_opts	 o;
	char			*text, *cause;

	memset(&o, 0, sizeof(o));
	o.wo_port = g->g_port;
	o.wo_programs = (const char **)(uintptr_t)g->g_programs;
	o.wo_nprograms = g->g_nprograms;
	o.wo_user = g->g_user;
	if ((text = winfw_install(g->g_policy, &o, &cause)) == NULL) {
		xasprintf(&text, "%s\n", cause);
		free(cause);
		golden_match(g, "expected.ps1.err", text);
		golden_drop(g, "expected.ps1");
	} else {
		golden_match(g, "expected.ps1", text);
		golden_drop(g, "expected.ps1.err");
	}
	free(text);
}

static void
test_golden(void **state)
{
	struct golden	 g;
	char		*text;

	(void)state;
	assert_true(golden_each(golden_one) >= 5);
	memset(&g, 0, sizeof(g));
	g.g_dir = (char *)(uintptr_t)golden_root();
	text = winfw_remove();
	golden_match(&g, "remove.ps1", text);
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_port_edges),
		cmocka_unit_test(test_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
