/*
 * test_fspath.c: a path of the mount plan resolved by hand, alone, on a
 * tree made in a temporary folder: where it leads, each symlink met in
 * order, the first missing component, a non-folder on the way, and a
 * loop left out with the reason.
 */
#include "unit.h"

#include <limits.h>
#include <stdbool.h>
#include <unistd.h>

#include "lib/xmalloc.h"
#include "plan/fspath.h"

static char	 base[PATH_MAX];

static int
setup(void **state)
{
	(void)state;
	return unit_tmpdir(base, "fspath");
}

static int
teardown(void **state)
{
	(void)state;
	return unit_rmtree(base);
}

/* Resolves "@/rel" and checks the result against "@/want". */
static void
expect(const char *rel, enum fspath_res res, const char *want, bool dir,
    size_t nlinks, struct fspath *pr)
{
	char	*path = unit_at(base, rel), *w = unit_at(base, want);

	fspath_resolve(NULL, path, pr);
	assert_int_equal(pr->pr_res, res);
	assert_string_equal(pr->pr_path, w);
	assert_int_equal(pr->pr_dir, dir);
	assert_int_equal(pr->pr_nlinks, nlinks);
	assert_null(pr->pr_note);
	free(path);
	free(w);
}

static void
test_resolve(void **state)
{
	struct fspath	 pr;
	char		*p;

	(void)state;
	p = unit_at(base, "@/real/sub/");
	unit_make(base, p, NULL);
	free(p);
	p = unit_at(base, "@/file");
	unit_make(base, p, "x");
	free(p);
	unit_link_at(base, "real", "@/in");
	unit_link_at(base, "in/sub", "@/deep");

	/* Two links, in the order met; the target resolved. */
	expect("@/deep/./", FSPATH_FOUND, "@/real/sub", true, 2, &pr);
	p = unit_at(base, "@/deep");
	assert_string_equal(pr.pr_links[0], p);
	free(p);
	fspath_clear(&pr);
	/* The first missing component, and whether more came after it. */
	expect("@/in/no/more", FSPATH_MISSING, "@/real/no", true, 1, &pr);
	fspath_clear(&pr);
	expect("@/in/sub/../last", FSPATH_MISSING, "@/real/last", false, 1,
	    &pr);
	fspath_clear(&pr);
	/* A file with more to come. */
	expect("@/file/x", FSPATH_NOTDIR, "@/file", false, 0, &pr);
	fspath_clear(&pr);
}

/* A loop: left out with the reason, the links met listed. */
static void
test_loop(void **state)
{
	struct fspath	 pr;
	char		*p;

	(void)state;
	unit_link_at(base, "loop", "@/loop");
	p = unit_at(base, "@/loop/x");
	fspath_resolve(NULL, p, &pr);
	assert_int_equal(pr.pr_res, FSPATH_SKIP);
	assert_null(pr.pr_path);
	assert_non_null(pr.pr_note);
	assert_contains(pr.pr_note, "left out of the plan");
	assert_int_equal(pr.pr_nlinks, 41);
	fspath_clear(&pr);
	free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_resolve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
