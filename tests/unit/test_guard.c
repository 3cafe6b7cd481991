/*
 * test_guard.c: the check after a run on real trees made in a temporary
 * folder: what the plan protected and what did not change are left
 * alone; a new .git (folder, file, link), .hg or bare layout is renamed
 * out of git's sight, deep or at the root; a walk cut short by its
 * bound fails.
 */
#include "unit.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"
#include "util.h"
#include "xmalloc.h"

static char	 base[PATH_MAX];

static int
setup(void **state)
{
	(void)state;
	return unit_tmpdir(base, "guard");
}

static int
teardown(void **state)
{
	(void)state;
	return unit_rmtree(base);
}

/* Makes "rel/" folders (with parents) or a file with text, below base. */
static void
make(const char *rel, const char *text)
{
	char	*path;

	xasprintf(&path, "%s/%s", base, rel);
	unit_make(base, path, text);
	free(path);
}

static bool
exists(const char *rel)
{
	struct stat	 st;
	char		*path;
	bool		 ok;

	xasprintf(&path, "%s/%s", base, rel);
	ok = lstat(path, &st) == 0;
	free(path);
	return ok;
}

/* A plan of one writable root, base/ws, which knows what is at known. */
static void
plan_of(struct fsplan *plan, const char *known)
{
	struct stat	 st;
	char		*path;

	memset(plan, 0, sizeof(*plan));
	plan->fp_ops = xcalloc(1, sizeof(*plan->fp_ops));
	xasprintf(&plan->fp_ops[0].fo_path, "%s/ws", base);
	plan->fp_ops[0].fo_why = xstrdup("--write");
	plan->fp_ops[0].fo_kind = FS_RW;
	plan->fp_ops[0].fo_dir = true;
	plan->fp_nops = 1;
	if (known == NULL)
		return;
	xasprintf(&path, "%s/%s", base, known);
	if (lstat(path, &st) == -1)
		fail_msg("%s: %s", path, strerror(errno));
	fsplan_mark_add(&plan->fp_marks, &plan->fp_nmarks, &st);
	free(path);
}

/*
 * Waits for the next second and returns it: what is made from then on
 * has a later ctime than what was made before (both clocks are coarse).
 */
static time_t
next_second(void)
{
	time_t	 t = time(NULL);

	while (time(NULL) == t)
		usleep(10000);
	return time(NULL);
}

/* Makes a symbolic link rel -> target below base. */
static void
link_at(const char *target, const char *rel)
{
	char	*path;

	xasprintf(&path, "%s/%s", base, rel);
	if (symlink(target, path) == -1)
		fail_msg("symlink %s: %s", path, strerror(errno));
	free(path);
}

/* Before the run: a protected repository, an old one the plan missed. */
static void
test_quarantine(void **state)
{
	struct fsplan	 plan;
	struct guard	 g;
	char		*cause = NULL;

	(void)state;
	make("ws/.git/config", "[core]\n");
	make("ws/old/.git/config", "[core]\n");
	make("ws/ln/", NULL);
	plan_of(&plan, "ws/.git");
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	g.g_start = next_second();
	/* The run. */
	make("ws/src/.git/config", "[core]\n\tfsmonitor = x\n");
	make("ws/wt/.git", "gitdir: ../elsewhere\n");
	link_at("/tmp", "ws/ln/.git");
	make("ws/a/b/c/.hg/hgrc", "[hooks]\n");
	make("ws/docs/HEAD", "ref: refs/heads/main\n");
	make("ws/docs/objects/", NULL);
	make("ws/docs/refs/", NULL);
	make("ws/HEAD", "ref: refs/heads/main\n");
	make("ws/commondir", "../x\n");
	assert_int_equal(guard_check(&g, "ID"), 6);
	assert_true(exists("ws/.git"));		/* the plan's */
	assert_true(exists("ws/old/.git"));	/* not changed during */
	assert_true(exists("ws/src/.git.cordon-quarantine-ID"));
	assert_false(exists("ws/src/.git"));
	assert_true(exists("ws/wt/.git.cordon-quarantine-ID"));
	assert_true(exists("ws/ln/.git.cordon-quarantine-ID"));
	assert_true(exists("ws/a/b/c/.hg.cordon-quarantine-ID"));
	assert_true(exists("ws/docs/HEAD.cordon-quarantine-ID"));
	assert_false(exists("ws/docs/HEAD"));
	assert_true(exists("ws/HEAD.cordon-quarantine-ID"));	/* the root */
	assert_int_equal(g.g_finds[0].gf_error, 0);
	guard_clear(&g);
	fsplan_clear(&plan);
}

/* A change during the run to a repository the plan did not protect. */
static void
test_changed(void **state)
{
	struct fsplan	 plan;
	struct guard	 g;
	char		*cause = NULL;

	(void)state;
	make("ws/deep/.git/hooks/", NULL);
	make("ws/deep/.git/config", "[core]\n");
	make("ws/deep/.git/hooks/pre-commit", "exit 0\n");
	plan_of(&plan, NULL);
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	g.g_start = next_second();
	assert_int_equal(guard_check(&g, "ID"), 0);	/* nothing new */
	assert_true(exists("ws/deep/.git"));
	guard_clear(&g);

	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	g.g_start = next_second();
	make("ws/deep/.git/hooks/pre-commit", "touch /tmp/marker\n");
	assert_int_equal(guard_check(&g, "ID"), 1);
	assert_true(exists("ws/deep/.git.cordon-quarantine-ID"));
	guard_clear(&g);
	fsplan_clear(&plan);
}

/* The bound: a walk that did not see everything fails. */
static void
test_bound(void **state)
{
	struct fsplan	 plan;
	struct guard	 g;
	char		*cause = NULL;

	(void)state;
	make("ws/a/b/c/d/e/", NULL);
	plan_of(&plan, NULL);
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	g.g_scan_max = 3;
	make("ws/a/b/c/d/e/.git/HEAD", "x\n");
	assert_int_equal(guard_check(&g, "ID"), -1);
	guard_clear(&g);
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	assert_int_equal(guard_check(&g, "ID"), 1);
	guard_clear(&g);
	fsplan_clear(&plan);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_quarantine, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
