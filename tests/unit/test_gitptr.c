/*
 * test_gitptr.c: git/gitptr.c against git itself (gitptr_diff.h): .git
 * files and commondirs made of prefixes, paths and endings that differ
 * from what git writes in the ways a command could choose (a line end
 * or a CR inside the path, spaces, a tab, no space after "gitdir:",
 * slashes, absolute and relative, a NUL, nothing), each read by the
 * guard's reader and by `git rev-parse`; any difference fails.  And the
 * pure readers on their own: the attack's file is refused, not cut.
 */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git/git.h"
#include "gitptr_diff.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

/* A .git file's text from its parts; "@" in a path is the layout. */
static size_t
compose(char *buf, size_t size, const struct gpd *d, const char *pre,
    size_t prelen, const char *path, size_t pathlen, const char *end,
    size_t endlen)
{
	size_t	 n = 0, i;

	memcpy(buf, pre, prelen);
	n = prelen;
	for (i = 0; i < pathlen; i++) {
		if (path[i] == '@') {
			n += (size_t)snprintf(buf + n, size - n, "%s",
			    d->d_dir);
			continue;
		}
		buf[n++] = path[i];
	}
	memcpy(buf + n, end, endlen);
	return n + endlen;
}

/* A string literal with its length, NULs in it counted. */
struct lit {
	const char	*l_s;
	size_t		 l_len;
};
#define L(s)	{ s, sizeof(s) - 1 }

/* What may follow a path: git strips only the line ends at the end. */
static const struct lit ends[] = {
	L(""), L("\n"), L("\r\n"), L("\n\r"), L(" \n"), L("\nx\n"), L("\0"),
};

/*
 * Each prefix with each path and each of the first nends endings, as
 * kind; any difference with git is printed, and fails.
 */
static void
run(struct gpd *d, int kind, const struct lit *pre, size_t npre,
    const struct lit *paths, size_t npaths, size_t nends)
{
	char	 buf[8192], *diff;
	size_t	 i, j, k, n;
	int	 bad = 0;

	for (i = 0; i < npre; i++)
		for (j = 0; j < npaths; j++)
			for (k = 0; k < nends; k++) {
				n = compose(buf, sizeof(buf), d, pre[i].l_s,
				    pre[i].l_len, paths[j].l_s,
				    paths[j].l_len, ends[k].l_s,
				    ends[k].l_len);
				if ((diff = gpd_case(d, kind, buf, n)) ==
				    NULL)
					continue;
				print_error("case %zu/%zu/%zu: %s\n", i, j, k,
				    diff);
				free(diff);
				bad++;
			}
	assert_int_equal(bad, 0);
}

/* .git files: git's own reading, case by case. */
static void
test_gitfile_as_git(void **state)
{
	static const struct lit pre[] = { L("gitdir: ") };
	static const struct lit odd[] = {
		L("gitdir:"), L("gitdir:  "), L("gitdir:\t"), L("Gitdir: "),
		L(" gitdir: "), L(""), L("\xef\xbb\xbfgitdir: "),
	};
	static const struct lit paths[] = {
		L("g"), L("g/"), L("g//"), L("./g"), L("sub/g"), L("d\n/../g"),
		L("d\r/../g"), L("d/../g"), L(" g"), L("g "), L("g\t"),
		L("@/g"), L("@/w/g/"), L("@/g2"), L(""), L("nowhere"),
		L("../g"), L("g\0x"), L("../l"), L("d"), L("d\n/x/../../g"),
		L("e"),
	};
	static const struct lit few[] = { L("g"), L("@/g"), L(" g") };
	struct gpd	 d;

	(void)state;
	assert_int_equal(gpd_setup(&d), 0);
	run(&d, GPD_GITFILE, pre, nitems(pre), paths, nitems(paths),
	    nitems(ends));
	run(&d, GPD_GITFILE, odd, nitems(odd), few, nitems(few), 2);
	print_message("# .git files: %zu agreed with git, %zu refused for a "
	    "control byte\n", d.d_same, d.d_refused);
	assert_true(d.d_refused > 0);
	gpd_teardown(&d);
}

/* commondir: the same, the file relative to the git directory l. */
static void
test_commondir_as_git(void **state)
{
	static const struct lit pre[] = { L("") };
	static const struct lit paths[] = {
		L("../c"), L("cd"), L("@/c"), L("c"), L(""), L("../c/"),
		L("d\n/../../c"), L("d\r/../../c"), L("d/../../c"), L(" cd"),
		L("cd "), L("../c\0x"), L("."), L(".."), L("../g"),
		L("../w/g\t"),
	};
	struct gpd	 d;

	(void)state;
	assert_int_equal(gpd_setup(&d), 0);
	run(&d, GPD_COMMONDIR, pre, nitems(pre), paths, nitems(paths),
	    nitems(ends));
	print_message("# commondirs: %zu agreed with git, %zu refused for a "
	    "control byte\n", d.d_same, d.d_refused);
	gpd_teardown(&d);
}

/* The attack's pointer is refused; git's own form is read whole. */
static void
test_readers(void **state)
{
	static const char attack[] = "gitdir: decoy\n/../../.git/objects/"
	    "evil\n";
	char	*path, *cause = NULL;

	(void)state;
	assert_int_equal(gitptr_gitfile(attack, sizeof(attack) - 1, &path,
	    &cause), -1);
	assert_int_equal(errno, EILSEQ);
	assert_non_null(strstr(cause, "control byte"));
	free(cause);
	assert_int_equal(gitptr_gitfile("gitdir: a b \r\n\n", 15, &path,
	    &cause), 0);
	assert_string_equal(path, "a b ");
	free(path);
	assert_int_equal(gitptr_gitfile("gitdir:a\n", 9, &path, &cause), -1);
	assert_int_equal(errno, EINVAL);
	free(cause);
	assert_int_equal(gitptr_commondir("../..\n", 6, &path, &cause), 0);
	assert_string_equal(path, "../..");
	free(path);
	assert_int_equal(gitptr_commondir("\n", 1, &path, &cause), 0);
	assert_string_equal(path, "");
	free(path);
	assert_int_equal(gitptr_commondir("", 0, &path, &cause), -1);
	free(cause);
	path = gitptr_join("/a", "/b");
	assert_string_equal(path, "/b");
	free(path);
	path = gitptr_join("/a", "b");
	assert_string_equal(path, "/a/b");
	free(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readers),
		cmocka_unit_test(test_gitfile_as_git),
		cmocka_unit_test(test_commondir_as_git),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
