/*
 * test_fscache.c: the plan's paths resolved through one run's cache of
 * what the kernel said (fscache.c), on a tree made in a temporary
 * folder: the same answers as without it, through symlinks, dangling
 * links, a loop, missing components and files with more to come; the
 * first answer kept when the tree changes after it; and fspath_real()
 * as realpath(3) would answer.
 */
#include "unit.h"

#include <limits.h>
#include <stdbool.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fscache.h"
#include "plan/fspath.h"

static char	 base[PATH_MAX];

/* The paths resolved, "@/" standing for the temporary folder. */
static const char *const paths[] = {
	"@/", "@/real", "@/real/sub/", "@/real/sub/./", "@/real/sub/..",
	"@/in", "@/in/sub", "@/deep", "@/deep/./", "@/deep/../sub/..",
	"@/in/no/more", "@/in/sub/../last", "@/file", "@/file/",
	"@/file/.", "@/file/..", "@/file/x", "@/dangle", "@/dangle/x",
	"@/loop", "@/loop/x", "@/abs/sub", "@/toslash", "@/tofile",
	"@/empty", "@/missing/a/b", "@/real//sub///",
};

static int
setup(void **state)
{
	(void)state;
	return unit_tmpdir(base, "fscache");
}

static int
teardown(void **state)
{
	(void)state;
	return unit_rmtree(base);
}

/*
 * The tree: folders, a file, links relative and absolute, one to a
 * file with a '/' after it, two dangling (one with a '/' after its
 * target), and a loop.
 */
static void
make_tree(void)
{
	char	*p;

	p = unit_at(base, "@/real/sub/");
	unit_make(base, p, NULL);
	free(p);
	p = unit_at(base, "@/file");
	unit_make(base, p, "x");
	free(p);
	unit_link_at(base, "real", "@/in");
	unit_link_at(base, "in/sub", "@/deep");
	unit_link_at(base, "nowhere", "@/dangle");
	unit_link_at(base, "loop", "@/loop");
	p = unit_at(base, "@/real");
	unit_link_at(base, p, "@/abs");
	free(p);
	unit_link_at(base, "file/", "@/toslash");
	unit_link_at(base, "./file", "@/tofile");
	unit_link_at(base, "missing/", "@/empty");
}

/* Asserts that two results of fspath_resolve() are the same. */
static void
same(const struct fspath *a, const struct fspath *b, const char *path)
{
	size_t	 i;

	if (a->pr_res != b->pr_res)
		fail_msg("%s: %d, %d", path, a->pr_res, b->pr_res);
	if (a->pr_path != NULL || b->pr_path != NULL) {
		assert_non_null(a->pr_path);
		assert_non_null(b->pr_path);
		assert_string_equal(a->pr_path, b->pr_path);
	}
	assert_int_equal(a->pr_dir, b->pr_dir);
	assert_int_equal(a->pr_slash, b->pr_slash);
	assert_int_equal(a->pr_nlinks, b->pr_nlinks);
	for (i = 0; i < a->pr_nlinks; i++)
		assert_string_equal(a->pr_links[i], b->pr_links[i]);
	assert_int_equal(a->pr_note == NULL, b->pr_note == NULL);
	if (a->pr_note != NULL)
		assert_string_equal(a->pr_note, b->pr_note);
}

/*
 * Each path resolved alone, through a cache that knows nothing yet, and
 * again through the same cache once it knows it all: the same result.
 */
/* Each path resolved alone and through c: the same answers. */
static void
same_all(struct fscache *c)
{
	struct fspath	 alone, cached;
	char		*p;
	size_t		 i;

	for (i = 0; i < nitems(paths); i++) {
		p = unit_at(base, paths[i]);
		fspath_resolve(NULL, p, &alone);
		fspath_resolve(c, p, &cached);
		same(&alone, &cached, p);
		fspath_clear(&alone);
		fspath_clear(&cached);
		free(p);
	}
}

static void
test_same(void **state)
{
	struct fscache	*c;

	(void)state;
	make_tree();
	c = fscache_new();
	same_all(c);		/* cold: each answer asked of the kernel */
	same_all(c);		/* warm: each from the cache */
	fscache_free(c);
}

/* A link, a dangling link, a loop and a missing component, one by one. */
static void
test_kinds(void **state)
{
	struct fscache	*c;
	struct fspath	 pr;
	char		*p, *w;

	(void)state;
	make_tree();
	c = fscache_new();
	/* A dangling link: its target missing, the link listed. */
	p = unit_at(base, "@/dangle/x");
	w = unit_at(base, "@/nowhere");
	fspath_resolve(c, p, &pr);
	assert_int_equal(pr.pr_res, FSPATH_MISSING);
	assert_string_equal(pr.pr_path, w);
	assert_true(pr.pr_dir);
	assert_int_equal(pr.pr_nlinks, 1);
	fspath_clear(&pr);
	free(p);
	free(w);
	/* A loop, twice: the same 41 links and the reason, both times. */
	p = unit_at(base, "@/loop/x");
	fspath_resolve(c, p, &pr);
	assert_int_equal(pr.pr_res, FSPATH_SKIP);
	assert_int_equal(pr.pr_nlinks, 41);
	assert_contains(pr.pr_note, strerror(ELOOP));
	fspath_clear(&pr);
	fspath_resolve(c, p, &pr);
	assert_int_equal(pr.pr_res, FSPATH_SKIP);
	assert_int_equal(pr.pr_nlinks, 41);
	fspath_clear(&pr);
	free(p);
	/* A missing component: what is below it is missing too. */
	p = unit_at(base, "@/missing/a/b");
	w = unit_at(base, "@/missing");
	fspath_resolve(c, p, &pr);
	assert_int_equal(pr.pr_res, FSPATH_MISSING);
	assert_string_equal(pr.pr_path, w);
	assert_true(pr.pr_dir);
	fspath_clear(&pr);
	free(p);
	free(w);
	fscache_free(c);
}

/*
 * The tree changes after the cache looked: the cache answers as the
 * kernel first did (the plan sees one view of the tree), and once
 * emptied, or a new one, sees the change.
 */
static void
test_kept(void **state)
{
	struct fscache	*c;
	struct fspath	 pr;
	struct stat	 st;
	char		*p, *in, *w, buf[PATH_MAX];

	(void)state;
	make_tree();
	c = fscache_new();
	p = unit_at(base, "@/in/sub/new");
	in = unit_at(base, "@/in");
	w = unit_at(base, "@/real/sub/new");
	fspath_resolve(c, p, &pr);
	assert_int_equal(pr.pr_res, FSPATH_MISSING);
	assert_int_equal(pr.pr_nlinks, 1);
	fspath_clear(&pr);
	/* The link now leads elsewhere, and the missing path is made. */
	assert_int_equal(unlink(in), 0);
	assert_int_equal(symlink("file", in), 0);
	unit_make(base, w, "x");
	fspath_resolve(c, p, &pr);
	assert_int_equal(pr.pr_res, FSPATH_MISSING);
	assert_string_equal(pr.pr_path, w);
	fspath_clear(&pr);
	assert_int_equal(fscache_lstat(c, w, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_null(fspath_real(c, w, buf));
	/* Once emptied, it sees the tree as it is now. */
	fscache_clear(c);
	assert_non_null(fspath_real(c, w, buf));
	assert_string_equal(buf, w);
	/* A new cache sees the tree as it is now. */
	fscache_free(c);
	c = fscache_new();
	fspath_resolve(c, p, &pr);
	assert_int_equal(pr.pr_res, FSPATH_NOTDIR);
	fspath_clear(&pr);
	assert_int_equal(fscache_lstat(c, w, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	fscache_free(c);
	free(p);
	free(in);
	free(w);
}

/* readlink(2) through the cache: a link's target, and a file's EINVAL. */
static void
test_readlink(void **state)
{
	struct fscache	*c;
	const char	*t;
	char		*p;

	(void)state;
	make_tree();
	c = fscache_new();
	p = unit_at(base, "@/deep");
	assert_non_null(t = fscache_readlink(c, p));
	assert_string_equal(t, "in/sub");
	assert_ptr_equal(fscache_readlink(c, p), t);
	free(p);
	p = unit_at(base, "@/file");
	errno = 0;
	assert_null(fscache_readlink(c, p));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(fscache_readlink(c, p));
	assert_int_equal(errno, EINVAL);
	free(p);
	fscache_free(c);
}

/*
 * fspath_real() says what realpath(3) says, of each path, through links,
 * and the same when asked again.
 */
static void
test_real(void **state)
{
	struct fscache	*c;
	char		*p, a[PATH_MAX], b[PATH_MAX], *ra, *rb;
	size_t		 i;

	(void)state;
	make_tree();
	c = fscache_new();
	for (i = 0; i < 2 * nitems(paths); i++) {
		p = unit_at(base, paths[i % nitems(paths)]);
		ra = realpath(p, a);
		rb = fspath_real(c, p, b);
		if ((ra == NULL) != (rb == NULL))
			fail_msg("%s: realpath %s, fspath_real %s", p,
			    ra != NULL ? ra : "NULL", rb != NULL ? rb : "NULL");
		if (ra != NULL)
			assert_string_equal(ra, rb);
		free(p);
	}
	/* A relative path is realpath(3)'s own. */
	assert_non_null(fspath_real(c, ".", b));
	assert_non_null(realpath(".", a));
	assert_string_equal(a, b);
	assert_null(fspath_real(c, "", b));
	fscache_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readlink, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_real, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
