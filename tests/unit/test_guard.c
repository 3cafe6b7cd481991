/*
 * test_guard.c: the check after a run on real trees made in a temporary
 * folder: what the plan protected and what did not change are left
 * alone; a new .git (folder, file, link), .hg or bare layout is renamed
 * out of git's sight, deep or at the root; so is a git directory made
 * in a protected .git's modules (names with '/' too) or worktrees, one
 * a .git file or commondir names, and one whose attributes or
 * alternates changed; a walk cut short by its bound fails, but what
 * the run made cannot bring it there, and git directories are judged
 * past it.
 */
#include "guard/guard.h"
#include "unit.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <grp.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fslist.h"
#include "plan/fspath.h"
#include "runner/runner.h"

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
	fspath_mark(&plan->fp_marks, &plan->fp_nmarks, &st);
	free(path);
}

/* Adds what is at rel to what the plan knows. */
static void
know(struct fsplan *plan, const char *rel)
{
	struct stat	 st;
	char		*path;

	xasprintf(&path, "%s/%s", base, rel);
	if (lstat(path, &st) == -1)
		fail_msg("%s: %s", path, strerror(errno));
	fspath_mark(&plan->fp_marks, &plan->fp_nmarks, &st);
	free(path);
}

/* A git directory's layout at rel: HEAD, objects, refs. */
static void
gitdir(const char *rel)
{
	char	*p;

	xasprintf(&p, "%s/HEAD", rel);
	make(p, "ref: refs/heads/main\n");
	free(p);
	xasprintf(&p, "%s/objects/", rel);
	make(p, NULL);
	free(p);
	xasprintf(&p, "%s/refs/", rel);
	make(p, NULL);
	free(p);
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
	make("ws/src/.git/HEAD", "ref: refs/heads/main\n");
	make("ws/src/.git/logs/HEAD", "x\n");
	make("ws/src/.git/modules/a/b/HEAD", "ref: refs/heads/main\n");
	make("ws/wt/.git", "gitdir: ../elsewhere\n");
	link_at("/tmp", "ws/ln/.git");
	make("ws/a/b/c/.hg/hgrc", "[hooks]\n");
	make("ws/docs/HEAD", "ref: refs/heads/main\n");
	make("ws/docs/objects/", NULL);
	make("ws/docs/refs/", NULL);
	make("ws/docs/config", "[core]\n\tpager = x\n");
	make("ws/HEAD", "ref: refs/heads/main\n");
	make("ws/commondir", "../x\n");
	make("ws/hooks/post-checkout", "x\n");
	assert_int_equal(guard_check(&g, "ID"), 6);
	assert_true(exists("ws/.git"));		/* the plan's */
	assert_true(exists("ws/old/.git"));	/* not changed during */
	assert_true(exists("ws/src/.git.cordon-quarantine-ID"));
	assert_false(exists("ws/src/.git"));
	/* Moved whole: no HEAD left for git run inside it to find. */
	assert_false(exists("ws/src/.git.cordon-quarantine-ID/HEAD"));
	assert_true(exists("ws/src/.git.cordon-quarantine-ID/"
	    "HEAD.cordon-quarantine-ID"));
	assert_false(exists("ws/src/.git.cordon-quarantine-ID/logs/HEAD"));
	assert_false(exists("ws/src/.git.cordon-quarantine-ID/modules/a/b/"
	    "HEAD"));
	assert_true(exists("ws/src/.git.cordon-quarantine-ID/modules/a/b/"
	    "HEAD.cordon-quarantine-ID"));
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

/*
 * A guard over ws (its .git the plan's), and during the run a repository
 * ws/r with core.fsmonitor and a HEAD.
 */
static void
planted_r(struct fsplan *plan, struct guard *g)
{
	char	*cause = NULL;

	make("ws/.git/config", "[core]\n");
	plan_of(plan, "ws/.git");
	assert_int_equal(guard_open(g, plan, &cause), 0);
	g->g_start = next_second();
	make("ws/r/.git/config", "[core]\n\tfsmonitor = x\n");
	make("ws/r/.git/HEAD", "ref: refs/heads/main\n");
}

/*
 * A HEAD that cannot be renamed in a repository moved whole (the name
 * it would take is there already, as a command that knows the id could
 * plant it): counted, so that the run says not to run git inside.
 */
static void
test_disarm_blocked(void **state)
{
	struct fsplan	 plan;
	struct guard	 g;

	(void)state;
	planted_r(&plan, &g);
	make("ws/r/.git/HEAD.cordon-quarantine-ID", "x\n");
	make("ws/r/.git/modules/m/HEAD", "ref: refs/heads/main\n");
	assert_int_equal(guard_check(&g, "ID"), 1);
	assert_true(exists("ws/r/.git.cordon-quarantine-ID/HEAD"));
	assert_false(exists("ws/r/.git.cordon-quarantine-ID/modules/m/HEAD"));
	assert_int_equal(g.g_finds[0].gf_heads, 1);
	assert_int_equal(g.g_finds[0].gf_heads_left, 1);
	guard_clear(&g);
	fsplan_clear(&plan);
}

/*
 * The quarantine's name in the way (a session's later command knows the
 * id from an earlier quarantine): the repository still moves, to a name
 * with a random part, and its HEAD is renamed with the same.
 */
static void
test_rename_blocked(void **state)
{
	struct fsplan	 plan;
	struct guard	 g;
	char		*head;
	const char	*tag;

	(void)state;
	planted_r(&plan, &g);
	make("ws/r/.git.cordon-quarantine-ID/", NULL);
	assert_int_equal(guard_check(&g, "ID"), 1);
	assert_int_equal(g.g_finds[0].gf_error, 0);
	assert_false(exists("ws/r/.git"));
	tag = strstr(g.g_finds[0].gf_moved, "/ws/r/.git.cordon-quarantine-ID-");
	assert_non_null(tag);
	tag += strlen("/ws/r/.git");
	assert_int_equal(strlen(tag), strlen(".cordon-quarantine-ID-") + 8);
	xasprintf(&head, "ws/r/.git%s/HEAD%s", tag, tag);
	assert_true(exists(head));
	assert_int_equal(g.g_finds[0].gf_heads, 1);
	free(head);
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
	g.g_start = next_second();
	g.g_scan_max = 3;
	make("ws/a/b/c/d/e/.git/HEAD", "x\n");
	make("ws/a/b/c/d/e/.git/config", "[core]\n\tfsmonitor = x\n");
	assert_int_equal(guard_check(&g, "ID"), -1);
	guard_clear(&g);
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	assert_int_equal(guard_check(&g, "ID"), 1);
	guard_clear(&g);
	fsplan_clear(&plan);
}

/*
 * Inside the plan's .git: a submodule's git directory it protected is
 * left, its state changed; new ones in modules (a name with '/', one
 * nested in a module) and worktrees go whole when they could run a
 * program, and an inert one stays.
 */
static void
test_modules(void **state)
{
	struct fsplan	 plan;
	struct guard	 g;
	char		*cause = NULL;

	(void)state;
	gitdir("ws/.git");
	gitdir("ws/.git/modules/old");
	make("ws/.git/modules/old/config", "[core]\n");
	plan_of(&plan, "ws/.git");
	know(&plan, "ws/.git/modules/old/config");
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	g.g_start = next_second();
	make("ws/.git/modules/old/HEAD", "0123\n");		/* state */
	make("ws/.git/modules/old/FETCH_HEAD", "0123\n");
	gitdir("ws/.git/modules/evil");
	make("ws/.git/modules/evil/hooks/post-checkout", "touch x\n");
	gitdir("ws/.git/modules/a/b");
	make("ws/.git/modules/a/b/config", "[core]\n\tfsmonitor = x\n");
	gitdir("ws/.git/modules/old/modules/in");
	make("ws/.git/modules/old/modules/in/hooks/pre-commit", "x\n");
	gitdir("ws/.git/modules/old/modules/inert");
	make("ws/.git/modules/old/modules/inert/config",
	    "[core]\n\tbare = false\n\tworktree = ../../../../../x\n");
	make("ws/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n");
	make("ws/.git/worktrees/wt/commondir", "../..\n");
	make("ws/.git/worktrees/wt/config.worktree",
	    "[core]\n\thooksPath = /tmp\n");
	assert_int_equal(guard_check(&g, "ID"), 4);
	assert_true(exists("ws/.git/HEAD"));
	assert_true(exists("ws/.git/modules/old/HEAD"));
	assert_true(exists("ws/.git/modules/evil.cordon-quarantine-ID"));
	assert_true(exists("ws/.git/modules/a/b.cordon-quarantine-ID"));
	assert_true(exists(
	    "ws/.git/modules/old/modules/in.cordon-quarantine-ID"));
	assert_true(exists("ws/.git/modules/old/modules/inert"));
	assert_true(exists("ws/.git/worktrees/wt.cordon-quarantine-ID"));
	assert_false(exists("ws/.git/worktrees/wt"));
	guard_clear(&g);
	fsplan_clear(&plan);
}

/* Waits until what was made until now is older than fslist.c keeps. */
static void
age(void)
{
	time_t	 t = time(NULL);

	while (time(NULL) < t + 4)
		usleep(50000);
}

/*
 * A repository the plan did not protect, there before the run: a new
 * info/attributes, objects/info/alternates, or a link on the way to
 * them, is a change, judged by what the repository holds: with a
 * filter driver in its config it goes; without, it is kept.
 */
static void
test_code(void **state)
{
	static const char *const runs[] = {
		"ws/r/.git/info/attributes",
		"ws/r/.git/objects/info/alternates",
		"ws/r/.git/objects/info/http-alternates"
	};
	struct fsplan	 plan;
	struct guard	 g;
	char		*cause = NULL, *path;
	size_t		 i;

	(void)state;
	for (i = 0; i <= nitems(runs); i++) {
		unit_rmtree(base);
		unit_tmpdir(base, "guard");
		gitdir("ws/r/.git");
		make("ws/r/.git/info/", NULL);
		make("ws/r/.git/objects/info/", NULL);
		make("ws/elsewhere/alternates", "/tmp\n");
		make("ws/r/.git/config", i % 2 == 0 ?
		    "[filter \"x\"]\n\tsmudge = touch x\n" : "[core]\n");
		plan_of(&plan, NULL);
		assert_int_equal(guard_open(&g, &plan, &cause), 0);
		g.g_start = next_second();
		assert_int_equal(guard_check(&g, "ID"), 0); /* unchanged */
		guard_clear(&g);
		assert_int_equal(guard_open(&g, &plan, &cause), 0);
		g.g_start = time(NULL);
		if (i < nitems(runs))
			make(runs[i], "x\n");
		else {
			/* Not the .git's own entries: objects' */
			xasprintf(&path, "%s/ws/r/.git/objects/info", base);
			if (rmdir(path) == -1)
				fail_msg("%s: %s", path, strerror(errno));
			free(path);
			link_at("../../../elsewhere", "ws/r/.git/objects/info");
		}
		assert_int_equal(guard_check(&g, "ID"), i % 2 == 0 ? 1 : 0);
		assert_true(exists(i % 2 == 0 ?
		    "ws/r/.git.cordon-quarantine-ID" : "ws/r/.git"));
		assert_int_equal(g.g_nfinds, 1);
		assert_true(g.g_finds[0].gf_kept == (i % 2 == 1));
		guard_clear(&g);
		fsplan_clear(&plan);
	}
}

/*
 * Pointers: a .git file the plan knows, to a git directory in a place
 * the walk does not enter (inside a .git), changed; a commondir to a
 * folder with no HEAD whose config changed; a .git file to outside.
 */
static void
test_pointers(void **state)
{
	struct fsplan	 plan;
	struct guard	 g;
	char		*cause = NULL;
	char		*line;

	(void)state;
	gitdir("ws/.git");
	gitdir("ws/.git/refs/x");
	make("ws/wt/.git", "gitdir: ../.git/refs/x\n");
	make("ws/store/objects/", NULL);
	make("ws/store/refs/", NULL);
	make("ws/store/config", "[core]\n");
	gitdir("ws/.git/worktrees/w");
	xasprintf(&line, "%s/ws/store\n", base);
	make("ws/.git/worktrees/w/commondir", line);
	free(line);
	plan_of(&plan, "ws/.git");
	know(&plan, "ws/wt/.git");
	know(&plan, "ws/.git/worktrees/w/commondir");
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	g.g_start = next_second();
	assert_int_equal(guard_check(&g, "ID"), 0);	/* nothing new */
	guard_clear(&g);
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	g.g_start = next_second();
	make("ws/.git/refs/x/config", "[core]\n\tfsmonitor = x\n");
	make("ws/store/config", "[core]\n\tfsmonitor = x\n");
	make("ws/out/.git", "gitdir: /nonexistent/.git\n");
	assert_int_equal(guard_check(&g, "ID"), 3);
	assert_true(exists("ws/wt/.git"));
	assert_true(exists("ws/.git/refs/x.cordon-quarantine-ID"));
	assert_true(exists("ws/store.cordon-quarantine-ID"));
	assert_true(exists("ws/.git/worktrees/w"));	/* the plan's */
	assert_true(exists("ws/out/.git.cordon-quarantine-ID"));
	guard_clear(&g);
	fsplan_clear(&plan);
}

/*
 * The bound: entries the run made do not count towards it; past it,
 * reached by what was there before, git directories are still judged.
 */
static void
test_bound_made(void **state)
{
	struct fsplan	 plan;
	struct guard	 g;
	char		*cause = NULL, *rel;
	int		 i;

	(void)state;
	gitdir("ws/.git");
	make("ws/old/a/", NULL);
	make("ws/old/b/", NULL);
	plan_of(&plan, "ws/.git");
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	g.g_start = next_second();
	g.g_scan_max = 8;
	for (i = 0; i < 20; i++) {
		xasprintf(&rel, "ws/pad/%d/", i);
		make(rel, NULL);
		free(rel);
	}
	make("ws/pad/19/deep/.git/HEAD", "x\n");
	make("ws/pad/19/deep/.git/hooks/post-merge", "x\n");
	assert_int_equal(guard_check(&g, "ID"), 1);
	assert_true(exists("ws/pad/19/deep/.git.cordon-quarantine-ID"));
	guard_clear(&g);

	/* What was there before reaches the bound: modules still go. */
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	g.g_scan_max = 1;
	g.g_start = next_second();
	gitdir("ws/.git/modules/evil");
	make("ws/.git/modules/evil/config", "[include]\n\tpath = x\n");
	assert_int_equal(guard_check(&g, "ID"), -1);
	assert_true(exists("ws/.git/modules/evil.cordon-quarantine-ID"));
	guard_clear(&g);
	fsplan_clear(&plan);
}

/*
 * What git init, clone, submodule add and worktree add make is the
 * user's work: inert config, git's sample hooks, a .git file to a git
 * directory in the root.  Kept, listed; a non-sample hook, a config
 * key that runs a program, or one git would not read, is not.
 */
static void
test_inert(void **state)
{
	static const char *const bad[] = {
		"[core]\n\tfsmonitor = touch x\n",
		"[core]\n\thooksPath = .husky\n",
		"[include]\n\tpath = ../x\n",
		"[filter \"lfs\"]\n\tprocess = x\n",
		"[remote \"o\"]\n\turl = ext::sh -c x\n",
		"[alias]\n\tst = !x\n",
		"[core]\n\tpager = \"x\n",	/* git stops there */
	};
	struct fsplan	 plan;
	struct guard	 g;
	char		*cause = NULL, *from, *to;
	size_t		 i;

	(void)state;
	gitdir("ws/.git");
	plan_of(&plan, "ws/.git");
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	g.g_start = next_second();
	gitdir("ws/clone/.git");
	make("ws/clone/.git/config", "[core]\n\trepositoryformatversion = 0\n"
	    "\tbare = false\n[remote \"origin\"]\n\turl = https://h/r.git\n"
	    "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
	    "[branch \"main\"]\n\tremote = origin\n"
	    "\tmerge = refs/heads/main\n");
	make("ws/clone/.git/hooks/pre-commit.sample", "exit 0\n");
	make("ws/clone/.git/hooks/pre-push.sample", "exit 0\n");
	gitdir("ws/.git/modules/sub");
	make("ws/.git/modules/sub/config", "[core]\n\tworktree = ../../../sub\n");
	make("ws/sub/.git", "gitdir: ../.git/modules/sub\n");
	make("ws/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n");
	make("ws/.git/worktrees/wt/commondir", "../..\n");
	make("ws/.git/worktrees/wt/gitdir", "/x/wt/.git\n");
	make("ws/wt/.git", "gitdir: ../.git/worktrees/wt\n");
	assert_int_equal(guard_check(&g, "ID"), 0);
	assert_true(exists("ws/clone/.git") && exists("ws/sub/.git") &&
	    exists("ws/.git/modules/sub") && exists("ws/.git/worktrees/wt"));
	assert_int_equal(g.g_nfinds, 5);
	for (i = 0; i < g.g_nfinds; i++)
		assert_true(g.g_finds[i].gf_kept);
	guard_clear(&g);

	for (i = 0; i < nitems(bad) + 1; i++) {
		assert_int_equal(guard_open(&g, &plan, &cause), 0);
		g.g_start = next_second();
		if (i < nitems(bad))
			make("ws/clone/.git/config", bad[i]);
		else
			make("ws/clone/.git/hooks/pre-commit", "x\n");
		assert_int_equal(guard_check(&g, "ID"), 1);
		assert_true(exists("ws/clone/.git.cordon-quarantine-ID"));
		assert_non_null(g.g_finds[0].gf_why);
		xasprintf(&from, "%s/ws/clone/.git.cordon-quarantine-ID", base);
		xasprintf(&to, "%s/ws/clone/.git", base);
		if (rename(from, to) == -1)
			fail_msg("%s: %s", from, strerror(errno));
		free(from);
		free(to);
		guard_clear(&g);
	}
	fsplan_clear(&plan);
}

/*
 * Pointers whose path holds a line end or a CR (issue 36): git strips
 * only those at the end of the file and keeps the rest, so that
 * "gitdir: decoy\n/../../.git/objects/evil" leads, past a folder named
 * "decoy\n", to a git directory the command made in the protected
 * .git's objects (or refs).  The guard neither cuts the path at the
 * line end (and judges the inert decoy) nor skips objects and refs:
 * the pointer is refused, the .git file quarantined, and the git
 * directory it leads to goes whole.  A commondir the same: the folder
 * it makes a git directory loses its HEAD.
 */
static void
test_pointer_text(void **state)
{
	static const char ptrs[] = { '\n', '\r' };	/* after "decoy" */
	struct fsplan	 plan;
	struct guard	 g;
	char		*cause = NULL, *p, *q;
	size_t		 i, k;

	(void)state;
	gitdir("ws/.git");
	plan_of(&plan, "ws/.git");
	for (i = 0; i < 2 * nitems(ptrs) + 1; i++) {
		assert_int_equal(guard_open(&g, &plan, &cause), 0);
		g.g_start = next_second();
		/* objects and refs, each pointer. */
		xasprintf(&q, "ws/.git/%s/evil%zu", i % 2 ? "refs" : "objects",
		    i);
		gitdir(q);
		xasprintf(&p, "%s/config", q);
		make(p, "[core]\n\tfsmonitor = \"touch MARK; false\"\n");
		free(p);
		xasprintf(&p, "ws/src%zu/decoy/", i);
		make(p, NULL);
		free(p);
		xasprintf(&p, "ws/src%zu/decoy\n/", i);
		make(p, NULL);
		free(p);
		xasprintf(&p, "ws/src%zu/decoy\r/", i);
		make(p, NULL);
		free(p);
		if (i < 2 * nitems(ptrs)) {
			xasprintf(&cause, "gitdir: decoy%c/../../.git/%s/"
			    "evil%zu\n", ptrs[i / 2], i % 2 ? "refs" :
			    "objects", i);
			xasprintf(&p, "ws/src%zu/.git", i);
		} else {
			/* A commondir, in a folder it makes git's. */
			xasprintf(&cause, "decoy\n/../../.git/objects/"
			    "evil%zu\n", i);
			xasprintf(&p, "ws/src%zu/commondir", i);
			make("ws/src4/HEAD", "ref: refs/heads/main\n");
			gitdir("ws/src4/decoy");
		}
		make(p, cause);
		free(p);
		free(cause);
		cause = NULL;
		assert_int_equal(guard_check(&g, "ID"), 2);
		xasprintf(&p, "%s.cordon-quarantine-ID", q);
		assert_true(exists(p));
		assert_false(exists(q));
		free(p);
		xasprintf(&p, "ws/src%zu/%s.cordon-quarantine-ID", i,
		    i < 2 * nitems(ptrs) ? ".git" : "HEAD");
		assert_true(exists(p));
		free(p);
		for (k = 0; k < g.g_nfinds; k++)
			if (!g.g_finds[k].gf_kept &&
			    strstr(g.g_finds[k].gf_path, "/src") != NULL)
				assert_non_null(strstr(g.g_finds[k].gf_why,
				    "control byte"));
		free(q);
		guard_clear(&g);
	}
	fsplan_clear(&plan);
}

/* Makes n folders of 200 'a's below base/rel, and a .git at the bottom. */
static void
deep(const char *rel, int n)
{
	char	*path, name[201];
	int	 fd, sub = -1, i;

	memset(name, 'a', 200);
	name[200] = '\0';
	xasprintf(&path, "%s/%s", base, rel);
	if ((fd = open(path, O_RDONLY | O_DIRECTORY)) == -1)
		fail_msg("%s: %s", path, strerror(errno));
	free(path);
	for (i = 0; i < n; i++) {
		if (mkdirat(fd, name, 0755) == -1 ||
		    (sub = openat(fd, name, O_RDONLY | O_DIRECTORY)) == -1)
			fail_msg("mkdirat: %s", strerror(errno));
		close(fd);
		fd = sub;
	}
	if (mkdirat(fd, ".git", 0755) == -1 || (sub = openat(fd,
	    ".git/config", O_WRONLY | O_CREAT, 0644)) == -1)
		fail_msg(".git: %s", strerror(errno));
	if (write(sub, "[core]\n\tfsmonitor = x\n", 22) != 22)
		fail_msg("write: %s", strerror(errno));
	close(sub);
	close(fd);
}

/*
 * In a child as nobody (the sandbox's files chowned to it): ws/sub,
 * with a .git planted in it, made 0311, which the walk cannot list but
 * git can search.  Exits 0 when the check fails (-1), held ws/sub, and
 * quarantined its .git, looked up by name.
 */
static int
unlistable_as(uid_t uid, struct guard *g)
{
	size_t	 i;
	bool	 held = false;
	pid_t	 pid;
	int	 status;

	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		if (uid != geteuid() && (setgroups(0, NULL) == -1 ||
		    setresgid(uid, uid, uid) == -1 ||
		    setresuid(uid, uid, uid) == -1))
			_exit(10);
		if (guard_check(g, "ID") != -1)
			_exit(11);
		for (i = 0; i < g->g_nfinds; i++) {
			if (g->g_finds[i].gf_held && strcmp(strrchr(
			    g->g_finds[i].gf_path, '/'), "/sub") == 0)
				held = true;
			/* Root's own, which the command could not touch. */
			if (g->g_finds[i].gf_held && uid != 0 &&
			    strstr(g->g_finds[i].gf_path, "/other") != NULL)
				_exit(14);
		}
		if (!held)
			_exit(12);
		_exit(exists("ws/sub/.git.cordon-quarantine-ID") ? 0 : 13);
	}
	while (waitpid(pid, &status, 0) == -1)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

/*
 * Plants ws/sub/.git with core.fsmonitor, gives the tree to uid and
 * makes ws/sub 0311, then runs the shell line more (or nothing): what
 * unlistable_as(uid, g) returns, ws/sub listable again after.
 */
static int
planted_unlistable(uid_t uid, struct guard *g, const char *more)
{
	char	*cmd;
	int	 rc;

	make("ws/sub/.git/config", "[core]\n\tfsmonitor = x\n");
	make("ws/sub/.git/HEAD", "ref: refs/heads/main\n");
	xasprintf(&cmd, "chown -R %u:%u %s && chmod 0311 %s/ws/sub%s%s",
	    (unsigned)uid, (unsigned)uid, base, base, more != NULL ? " && " :
	    "", more != NULL ? more : "");
	assert_int_equal(system(cmd), 0);
	free(cmd);
	rc = unlistable_as(uid, g);
	xasprintf(&cmd, "%s/ws/sub", base);
	assert_int_equal(chmod(cmd, 0755), 0);
	free(cmd);
	return rc;
}

/*
 * A session's checks through the listings kept from one walk to the
 * next (fslist.c), in folders made long enough before: what a command
 * makes deep below folders read unchanged is found, the unchanged ones
 * are given again, and a folder made unreadable is held.
 */
static void
test_recalled(void **state)
{
	struct fsplan		 plan;
	struct guard		 g;
	struct fslist_seen	 s;
	struct stat		 st;
	char			*cause = NULL, *path;
	uid_t			 uid = geteuid() == 0 ? 65534 : geteuid();

	(void)state;
	make("ws/.git/config", "[core]\n");
	make("ws/a/b/c/", NULL);
	make("ws/sub/", NULL);
	plan_of(&plan, "ws/.git");
	plan.fp_lists = fslist_new();
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	age();
	g.g_start = next_second();
	assert_int_equal(guard_check(&g, "ID"), 0);	/* lists them */
	assert_int_equal(guard_check(&g, "ID"), 0);	/* recalls them */
	/* A command: a repository deep in what was listed. */
	make("ws/a/b/c/r/.git/config", "[core]\n\tfsmonitor = x\n");
	make("ws/a/b/c/r/.git/HEAD", "ref: refs/heads/main\n");
	assert_int_equal(guard_check(&g, "ID"), 1);
	assert_true(exists("ws/a/b/c/r/.git.cordon-quarantine-ID"));
	/* The folders no command changed were given again. */
	xasprintf(&path, "%s/ws/a/b", base);
	assert_int_equal(lstat(path, &st), 0);
	free(path);
	memset(&s, 0, sizeof(s));
	assert_true(fslist_get(plan.fp_lists, &st, &s));
	assert_int_equal(s.ls_nsubs, 1);
	assert_string_equal(s.ls_subs[0], "c");
	fslist_seen_clear(&s);
	/* Another: ws/sub, listed before, made unreadable. */
	assert_int_equal(planted_unlistable(uid, &g, NULL), 0);
	guard_clear(&g);
	fsplan_clear(&plan);
}

/*
 * The walk fails closed (issue 36): a folder it cannot list (chmod
 * 0311: git still opens sub/.git by name) has its markers looked up by
 * name and judged, and is held: the check fails.  So is a folder it
 * cannot open at all (a path too long for it).  Another user's folder
 * (root's, 0700, when the test runs as root) is none the command could
 * have made so: not held.
 */
static void
test_unread(void **state)
{
	struct fsplan	 plan;
	struct guard	 g;
	char		*cause = NULL, *path;
	uid_t		 uid = geteuid() == 0 ? 65534 : geteuid();
	size_t		 i;
	bool		 held = false;

	(void)state;
	make("ws/old/", NULL);
	plan_of(&plan, NULL);
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	g.g_start = next_second();
	deep("ws/old", 24);
	assert_int_equal(guard_check(&g, "ID"), -1);
	for (i = 0; i < g.g_nfinds; i++)
		held |= g.g_finds[i].gf_held;
	assert_true(held);
	guard_clear(&g);
	/* Too deep for nftw to remove. */
	xasprintf(&path, "rm -rf %s/ws/old", base);
	assert_int_equal(system(path), 0);
	free(path);
	fsplan_clear(&plan);
	plan_of(&plan, NULL);
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	g.g_start = next_second();
	make("ws/other/x/", NULL);
	xasprintf(&path, "{ [ %u != 0 ] || { chown 0:0 %s/ws/other && "
	    "chmod 0700 %s/ws/other; }; }", (unsigned)geteuid(), base, base);
	assert_int_equal(planted_unlistable(uid, &g, path), 0);
	free(path);
	guard_clear(&g);
	fsplan_clear(&plan);
}

/*
 * A .cordon that was not there (the plan watches it rather than block
 * it): one the command made is moved aside and counts; none, nothing.
 */
static void
test_watched(void **state)
{
	struct fsplan	 plan;
	struct guard	 g;
	char		*cause = NULL;

	(void)state;
	make("ws/", NULL);
	plan_of(&plan, NULL);
	plan.fp_watch = xcalloc(1, sizeof(*plan.fp_watch));
	xasprintf(&plan.fp_watch[0], "%s/ws/.cordon", base);
	plan.fp_nwatch = 1;
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	assert_int_equal(guard_check(&g, "ID"), 0);
	guard_clear(&g);
	assert_int_equal(guard_open(&g, &plan, &cause), 0);
	make("ws/.cordon/policy.json", "{}\n");
	assert_int_equal(guard_check(&g, "ID"), 1);
	assert_false(exists("ws/.cordon"));
	assert_true(exists("ws/.cordon.cordon-quarantine-ID/policy.json"));
	assert_true(g.g_finds[0].gf_policy);
	guard_clear(&g);
	fsplan_clear(&plan);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_quarantine, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_disarm_blocked, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_rename_blocked, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_modules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_code, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pointers, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bound_made, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_inert, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pointer_text, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_unread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recalled, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
