/*
 * test_util.c: the small helpers of lib/util.c that several parts share.
 */
#include "unit.h"

#include <stdbool.h>

#include "util.h"

struct below_case {
	const char	*path;
	const char	*dir;
	bool		 below;
};

/* At the folder or under it, compared as text on component bounds. */
static void
test_path_is_below(void **state)
{
	static const struct below_case cases[] = {
		{ "/a/b", "/a/b", true },
		{ "/a/b/c", "/a/b", true },
		{ "/a/b/c/d", "/a/b", true },
		{ "/a/bc", "/a/b", false },
		{ "/a", "/a/b", false },
		{ "/a/", "/a/b", false },
		{ "/b/a/b", "/a/b", false },
		{ "/", "/", true },
		{ "/a", "/", true },
		{ "/a/b", "/", true },
		{ "a/b", "/", false },
		{ "", "/", false },
		{ "/tmp", "/tmp", true },
		{ "/tmpx", "/tmp", false },
		{ "/tmp/x", "/tmp", true },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < nitems(cases); i++)
		if (path_is_below(cases[i].path, cases[i].dir) !=
		    cases[i].below)
			fail_msg("path_is_below(\"%s\", \"%s\") is not %s",
			    cases[i].path, cases[i].dir,
			    cases[i].below ? "true" : "false");
}

/* Asserts that len bytes of in escape to want. */
static void
escaped(const char *in, size_t len, const char *want)
{
	char	*got;

	got = str_escape(in, len);
	assert_string_equal(got, want);
	free(got);
}

/* Printable ASCII stays, '\\' and '"' get a backslash, the rest \xNN. */
static void
test_str_escape(void **state)
{
	(void)state;
	escaped("", 0, "");
	escaped("plain text ~!", 13, "plain text ~!");
	escaped("a\\b\"c", 5, "a\\\\b\\\"c");
	escaped("a\nb\rc\td", 7, "a\\x0ab\\x0dc\\x09d");
	escaped("\x1b[31m", 5, "\\x1b[31m");
	escaped("\x7f\x80\xff", 3, "\\x7f\\x80\\xff");
	escaped("a\0b", 3, "a\\x00b");
	escaped("abc", 2, "ab");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_is_below),
		cmocka_unit_test(test_str_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
