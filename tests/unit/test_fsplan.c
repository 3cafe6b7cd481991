/*
 * test_fsplan.c: the mount plan on real trees made in a temporary
 * folder: order, merging, blocks at the first missing component, git
 * repositories (directories, .git files, commondir), symlinks, the scan
 * bound, and the refusals.  Ops are compared as "kind path" with the
 * temporary folder written "@", in full and in order.
 */
#include "unit.h"

#include <sys/stat.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/plan.h"
#include "policies/policy.h"

static char	 base[PATH_MAX];	/* resolved temporary folder */
static char	*plan_ws;		/* the workspace plan_ok names */

static int
setup(void **state)
{
	(void)state;
	return unit_tmpdir(base, "fsplan");
}

static int
teardown(void **state)
{
	(void)state;
	free(plan_ws);
	plan_ws = NULL;
	return unit_rmtree(base);
}

/* "@/a/b" made absolute under the temporary folder; the caller frees. */
static char *
at(const char *rel)
{
	char	*s;

	if (rel[0] == '@')
		xasprintf(&s, "%s%s", base, rel + 1);
	else
		s = xstrdup(rel);
	return s;
}

/* Makes directories (ending in '/'), or a file with text. */
static void
make(const char *rel, const char *text)
{
	char	*path;

	path = at(rel);
	unit_make(base, path, text);
	free(path);
}

static void
link_to(const char *target, const char *rel)
{
	char	*path, *t;

	path = at(rel);
	t = at(target);
	if (symlink(t, path) == -1)
		fail_msg("symlink %s: %s", path, strerror(errno));
	free(t);
	free(path);
}

static void
add(struct plist *pl, const char *rel, const char *from)
{
	struct pitem	*pi;
	size_t		 n = strlen(rel);

	pi = policy_plist_add(pl);
	pi->pi_text = at(rel);
	/* "@/ws/.git/": a folder, as the loader reads a final '/'. */
	if ((pi->pi_dir = n > 1 && rel[n - 1] == '/'))
		pi->pi_text[strlen(pi->pi_text) - 1] = '\0';
	pi->pi_from = xstrdup(from);
}

/* An op as the tests write it: "kind @path" below base, else "kind path". */
static char *
op_text(const struct fs_op *op)
{
	char	*text;
	size_t	 n = strlen(base);

	if (strncmp(op->fo_path, base, n) == 0)
		xasprintf(&text, "%s @%s", fsplan_kind_name(op->fo_kind),
		    op->fo_path + n);
	else
		xasprintf(&text, "%s %s", fsplan_kind_name(op->fo_kind),
		    op->fo_path);
	return text;
}

/* Is "kind @path" among the plan's ops (in any place)? */
static bool
has_op(const struct fsplan *plan, const char *want)
{
	char	*got;
	size_t	 i;
	bool	 found = false;

	for (i = 0; i < plan->fp_nops && !found; i++) {
		got = op_text(&plan->fp_ops[i]);
		found = strcmp(got, want) == 0;
		free(got);
	}
	return found;
}

/* Fails unless each op given (NULL-terminated) is in the plan. */
static void
expect_has(const struct fsplan *plan, ...)
{
	va_list		 ap;
	const char	*want;

	va_start(ap, plan);
	while ((want = va_arg(ap, const char *)) != NULL)
		if (!has_op(plan, want))
			fail_msg("the plan lacks \"%s\"", want);
	va_end(ap);
}

/* Fails if any op given (NULL-terminated) is in the plan. */
static void
expect_lacks(const struct fsplan *plan, ...)
{
	va_list		 ap;
	const char	*want;

	va_start(ap, plan);
	while ((want = va_arg(ap, const char *)) != NULL)
		if (has_op(plan, want))
			fail_msg("the plan has \"%s\"", want);
	va_end(ap);
}

/* Builds the plan and checks that it worked. */
static void
plan_ok(const struct policy *p, size_t scan_max, struct fsplan *plan)
{
	struct fsplan_in	 in = { .fi_policy = p, .fi_scan_max = scan_max,
	    .fi_workspace = plan_ws };
	char			*cause;

	if (fsplan_build(&in, plan, &cause) == -1)
		fail_msg("fsplan_build: %s", cause);
	assert_null(cause);
}

/* Checks the ops, "kind @/path", all of them, in order. */
static void
expect(const struct fsplan *plan, ...)
{
	va_list		 ap;
	const char	*want;
	char		*got;
	size_t		 i = 0;

	va_start(ap, plan);
	while ((want = va_arg(ap, const char *)) != NULL) {
		if (i >= plan->fp_nops)
			fail_msg("op %zu: want \"%s\", the plan has %zu ops",
			    i, want, plan->fp_nops);
		got = op_text(&plan->fp_ops[i]);
		if (strcmp(got, want) != 0)
			fail_msg("op %zu: want \"%s\", got \"%s\"", i, want,
			    got);
		free(got);
		i++;
	}
	va_end(ap);
	if (i != plan->fp_nops)
		fail_msg("%zu ops expected, the plan has %zu (next: %s %s)",
		    i, plan->fp_nops, fsplan_kind_name(plan->fp_ops[i].fo_kind),
		    plan->fp_ops[i].fo_path);
}

/* write /r, deny /r/a, write /r/a/b: b writable, the rest of a hidden. */
static void
test_nested_order(void **state)
{
	struct policy	*p;
	struct fsplan	 plan;

	(void)state;
	make("@/r/a/b/", NULL);
	make("@/r/a/x/", NULL);
	make("@/r/c/", NULL);
	make("@/r/a/b/f", "x");
	p = policy_new();
	add(&p->p_write, "@/r", "--write");
	add(&p->p_write, "@/r/a/b", "user: filesystem.write[1]");
	add(&p->p_write, "@/r/c", "user: filesystem.write[2]");
	add(&p->p_hide, "@/r/a", "user: filesystem.deny[0]");
	add(&p->p_read_only, "@/r/a/x", "workspace: read_only[0]");
	add(&p->p_read_only, "@/r/c", "workspace: read_only[1]");
	add(&p->p_hide, "@/r/a/b/f", "user: filesystem.deny[1]");
	plan_ok(p, 0, &plan);
	expect(&plan,
	    "rw @/r",
	    "hide-dir @/r/a",
	    "ro @/r/c",
	    "rw @/r/a/b",
	    "hide-file @/r/a/b/f",
	    NULL);
	assert_string_equal(plan.fp_ops[0].fo_why, "--write");
	assert_string_equal(plan.fp_ops[2].fo_why, "workspace: read_only[1]");
	assert_int_equal(plan.fp_ops[1].fo_nkeep, 1);
	assert_int_equal(plan.fp_ops[1].fo_keep[0], 3);
	assert_true(plan.fp_ops[3].fo_dir);
	assert_false(plan.fp_ops[4].fo_dir);
	assert_int_equal(plan.fp_ops[0].fo_nkeep, 0);
	assert_int_equal(plan.fp_nnotes, 0);
	fsplan_clear(&plan);
	policy_free(p);
}

/* Missing protected paths in a writable root: blocked where they start. */
static void
test_missing_blocked(void **state)
{
	struct policy	*p;
	struct fsplan	 plan;

	(void)state;
	make("@/ws/a/", NULL);
	make("@/out/", NULL);
	p = policy_new();
	add(&p->p_write, "@/ws", "default policy: filesystem.write[0]");
	add(&p->p_read_only, "@/ws/.git/", "default policy: read_only[0]");
	add(&p->p_read_only, "@/ws/.cordon/", "default policy: read_only[1]");
	add(&p->p_read_only, "@/ws/.cordon/policy.json", "--read-only");
	add(&p->p_read_only, "@/ws/a/b/c", "user: read_only[0]");
	add(&p->p_read_only, "@/ws/.bashrc", "user: read_only[2]");
	add(&p->p_hide, "@/ws/secret/key", "user: deny[0]");
	add(&p->p_hide, "@/out/missing", "user: deny[1]");
	add(&p->p_read_only, "@/out/gone/.git", "user: read_only[1]");
	plan_ok(p, 0, &plan);
	expect(&plan,
	    "rw @/ws",
	    "block @/ws/.bashrc",
	    "block @/ws/.cordon",
	    "block @/ws/.git",
	    "pin-dir @/ws/a",
	    "block @/ws/a/b",
	    NULL);	/* a missing hidden path has nothing to hide */
	assert_string_equal(plan.fp_ops[2].fo_why,
	    "default policy: read_only[1]");
	assert_string_equal(plan.fp_ops[5].fo_why, "user: read_only[0]");
	/* Folders when said so or when more is missing below; else a file. */
	assert_false(plan.fp_ops[1].fo_dir);
	assert_true(plan.fp_ops[2].fo_dir);
	assert_true(plan.fp_ops[3].fo_dir);
	assert_true(plan.fp_ops[5].fo_dir);
	fsplan_clear(&plan);
	policy_free(p);
}

/*
 * The workspace's own .cordon, missing, is watched (guard.c), not
 * blocked; one below it, or anywhere else, is blocked as before.
 */
static void
test_cordon_watched(void **state)
{
	struct policy	*p;
	struct fsplan	 plan;
	char		*want;

	(void)state;
	make("@/ws/sub/", NULL);
	plan_ws = at("@/ws");
	p = policy_new();
	add(&p->p_write, "@/ws", "default policy: filesystem.write[0]");
	add(&p->p_read_only, "@/ws/.cordon/", "default policy: read_only[0]");
	add(&p->p_read_only, "@/ws/sub/.cordon/", "user: read_only[0]");
	plan_ok(p, 0, &plan);
	expect(&plan,
	    "rw @/ws",
	    "pin-dir @/ws/sub",
	    "block @/ws/sub/.cordon",
	    NULL);
	assert_int_equal(plan.fp_nwatch, 1);
	want = at("@/ws/.cordon");
	assert_string_equal(plan.fp_watch[0], want);
	free(want);
	fsplan_clear(&plan);
	policy_free(p);
}

/*
 * filesystem.host_config: one there is read-only, as a read_only path
 * is; one missing in a writable root is watched (hostcfg.c), never
 * blocked; one outside every writable root, or a workspace layer's
 * outside the workspace, is not watched.
 */
static void
test_host_config(void **state)
{
	struct policy	*p;
	struct fsplan	 plan;
	char		*want;

	(void)state;
	make("@/ws/.vscode/settings.json", "{}\n");
	make("@/other/", NULL);
	make("@/ro/", NULL);
	plan_ws = at("@/ws");
	p = policy_new();
	add(&p->p_write, "@/ws", "default policy: filesystem.write[0]");
	add(&p->p_write, "@/other", "--write");
	add(&p->p_host_config, "@/ws/.vscode/", "default: host_config[0]");
	add(&p->p_host_config, "@/ws/.cursor/mcp.json",
	    "default: host_config[1]");
	add(&p->p_host_config, "@/ro/.envrc", "user: host_config[0]");
	add(&p->p_host_config, "@/other/.envrc", "ws: host_config[0]");
	p->p_host_config.pl_v[3].pi_untrusted = true;
	plan_ok(p, 0, &plan);
	expect(&plan,
	    "rw @/other",
	    "rw @/ws",
	    "ro @/ws/.vscode",
	    NULL);
	assert_int_equal(plan.fp_nhost, 1);
	want = at("@/ws/.cursor/mcp.json");
	assert_string_equal(plan.fp_host[0], want);
	free(want);
	fsplan_clear(&plan);
	policy_free(p);
}

/*
 * Below a folder that may be a scratch layer (fi_scratch), a protected
 * path that exists is bound read-only as below a writable root; a
 * missing one is not blocked (the layer takes it, and is discarded).
 * Without fi_scratch, neither is in the plan.
 */
static void
test_scratch_kept(void **state)
{
	struct policy		*p;
	struct fsplan		 plan;
	struct fsplan_in	 in = { 0 };
	const char		*scratch[1];
	char			*home, *cause;
	int			 pass;

	(void)state;
	make("@/home/.bashrc", "x");
	make("@/home/.config/", NULL);
	home = at("@/home");
	scratch[0] = home;
	p = policy_new();
	add(&p->p_read_only, "@/home/.bashrc", "built-in: read_only[0]");
	add(&p->p_read_only, "@/home/.zshrc", "built-in: read_only[1]");
	add(&p->p_read_only, "@/home/.config/autostart/",
	    "built-in: read_only[2]");
	for (pass = 0; pass < 2; pass++) {
		in.fi_policy = p;
		in.fi_scratch = pass == 0 ? scratch : NULL;
		in.fi_nscratch = pass == 0 ? 1 : 0;
		if (fsplan_build(&in, &plan, &cause) == -1)
			fail_msg("fsplan_build: %s", cause);
		if (pass == 0)
			expect(&plan, "ro @/home/.bashrc", NULL);
		else
			expect(&plan, NULL);
		fsplan_clear(&plan);
	}
	free(home);
	policy_free(p);
}

/* .git directories, a .git file with gitdir: and commondir, nesting. */
static void
test_git_repositories(void **state)
{
	struct policy	*p;
	struct fsplan	 plan;
	char		*abs, *line;

	(void)state;
	make("@/ws/.git/hooks/", NULL);
	make("@/ws/.git/inner/.git/", NULL);	/* not entered */
	make("@/ws/sub/deep/.git/", NULL);
	make("@/ws/node_modules/pkg/.git/", NULL);
	make("@/ws/.hg/", NULL);
	make("@/ws/gd/commondir", "../common\n");
	make("@/ws/common/", NULL);
	make("@/ws/wt/.git", "gitdir: ../gd\n");
	abs = at("@/ws/gd2");
	xasprintf(&line, "gitdir: %s\n", abs);
	make("@/ws/wt2/.git", line);
	make("@/ws/gd2/", NULL);
	make("@/ws/notgit/.git", "something else\n");
	make("@/ws/file", "x");
	p = policy_new();
	add(&p->p_write, "@/ws", "default policy: filesystem.write[0]");
	add(&p->p_read_only, "@/ws/.git", "default policy: read_only[0]");
	add(&p->p_read_only, "@/ws/file/.git", "user: read_only[0]");
	plan_ok(p, 0, &plan);
	/*
	 * A .git in read_only stays whole (the old default, now a choice);
	 * a .hg, a .git file and a path under a file are read-only.
	 */
	expect_has(&plan, "rw @/ws", "ro @/ws/.git", "ro @/ws/.hg",
	    "ro @/ws/file", "ro @/ws/notgit/.git", "ro @/ws/wt/.git",
	    "ro @/ws/wt2/.git", NULL);
	expect_lacks(&plan, "block @/ws/.git/config", NULL);
	/*
	 * Every other git directory (a .git, one a .git file names, its
	 * common directory, however deep) keeps its history writable and
	 * its code read-only or blocked: a missing commondir reads "./".
	 */
	expect_lacks(&plan, "ro @/ws/common", "ro @/ws/gd", "ro @/ws/gd2",
	    "ro @/ws/sub/deep/.git", "ro @/ws/node_modules/pkg/.git", NULL);
	expect_has(&plan,
	    "pin-dir @/ws/sub/deep/.git",
	    "block @/ws/sub/deep/.git/config",
	    "block @/ws/sub/deep/.git/hooks",
	    "block @/ws/sub/deep/.git/commondir",
	    "block @/ws/sub/deep/.git/info",
	    "block @/ws/sub/deep/.git/objects",
	    "block @/ws/node_modules/pkg/.git/config",
	    "ro @/ws/gd/commondir",
	    "block @/ws/gd/config",
	    "block @/ws/common/config",
	    "block @/ws/common/hooks",
	    "block @/ws/gd2/config",
	    NULL);
	for (size_t i = 0; i < plan.fp_nops; i++) {
		const struct fs_op	*op = &plan.fp_ops[i];

		if (strstr(op->fo_path, "/ws/.hg") != NULL)
			assert_string_equal(op->fo_why,
			    "protected: mercurial repository");
		if (strstr(op->fo_path, "/ws/sub/deep/.git/commondir") != NULL) {
			assert_true(op->fo_dot);
			assert_false(op->fo_dir);
		}
		if (strstr(op->fo_path, "/ws/sub/deep/.git/hooks") != NULL)
			assert_true(op->fo_dir);
		if (strstr(op->fo_path, "/ws/sub/deep/.git/config") != NULL) {
			assert_false(op->fo_dir);
			assert_string_equal(op->fo_why, "protected: what "
			    "makes git run a program or look elsewhere");
		}
	}
	assert_int_equal(plan.fp_nnotes, 0);
	free(abs);
	free(line);
	fsplan_clear(&plan);
	policy_free(p);
}

/* ws/.git -> elsewhere: the link is pinned, a target inside protected. */
static void
test_symlinked_git(void **state)
{
	struct policy	*p;
	struct fsplan	 plan;

	(void)state;
	make("@/elsewhere/", NULL);
	make("@/ws/other/", NULL);
	make("@/ws/sub/", NULL);
	make("@/ws/d/", NULL);
	link_to("../elsewhere", "@/ws/.git");
	link_to("../other", "@/ws/sub/.git");
	link_to("d", "@/ws/l");
	p = policy_new();
	add(&p->p_write, "@/ws", "default policy: filesystem.write[0]");
	add(&p->p_read_only, "@/ws/.git", "default policy: read_only[0]");
	add(&p->p_read_only, "@/ws/l/.cordon", "user: read_only[0]");
	plan_ok(p, 0, &plan);
	/*
	 * The links are pinned; where they lead, the read_only .git is
	 * outside the writable root (read-only anyway), and the scan's
	 * sub/.git -> ../other gets its code protected there.
	 */
	expect_has(&plan,
	    "rw @/ws",
	    "pin-link @/ws/.git",
	    "pin-dir @/ws/d",
	    "pin-link @/ws/l",
	    "pin-dir @/ws/sub",
	    "block @/ws/d/.cordon",
	    "pin-link @/ws/sub/.git",
	    "pin-dir @/ws/other",
	    "block @/ws/other/config",
	    NULL);
	expect_lacks(&plan, "ro @/ws/other", NULL);
	assert_string_equal(plan.fp_ops[1].fo_why,
	    "default policy: read_only[0]");
	fsplan_clear(&plan);
	policy_free(p);
}

/* A hidden path that is a symlink: its target is hidden, wherever. */
static void
test_symlinked_hidden(void **state)
{
	struct policy	*p;
	struct fsplan	 plan;

	(void)state;
	make("@/home/", NULL);
	make("@/keys/id", "secret");
	make("@/ws/", NULL);
	make("@/token", "secret");
	link_to("../keys", "@/home/.ssh");
	link_to("@/token", "@/ws/.netrc");
	p = policy_new();
	add(&p->p_write, "@/ws", "default policy: filesystem.write[0]");
	add(&p->p_hide, "@/home/.ssh", "default policy: deny[0]");
	add(&p->p_hide, "@/ws/.netrc", "user: deny[0]");
	plan_ok(p, 0, &plan);
	expect(&plan,
	    "hide-dir @/keys",
	    "hide-file @/token",
	    "rw @/ws",
	    "pin-link @/ws/.netrc",
	    NULL);
	assert_string_equal(plan.fp_ops[0].fo_why, "default policy: deny[0]");
	assert_string_equal(plan.fp_ops[3].fo_why, "user: deny[0]");
	fsplan_clear(&plan);
	policy_free(p);
}

/* The scan stops at its bound, with node_modules last, and says so. */
static void
test_scan_bound(void **state)
{
	struct policy	*p;
	struct fsplan	 plan;

	(void)state;
	make("@/ws/a/.git/", NULL);
	make("@/ws/node_modules/x/.git/", NULL);
	p = policy_new();
	add(&p->p_write, "@/ws", "--write");
	plan_ok(p, 3, &plan);
	expect_has(&plan, "rw @/ws", "pin-dir @/ws/a", "pin-dir @/ws/a/.git",
	    "block @/ws/a/.git/config", NULL);
	expect_lacks(&plan, "pin-dir @/ws/node_modules/x/.git", NULL);
	assert_int_equal(plan.fp_scanned, 3);
	assert_int_equal(plan.fp_nnotes, 1);
	assert_contains(plan.fp_notes[0], "stopped after 3 entries");
	fsplan_clear(&plan);

	plan_ok(p, 5, &plan);
	expect_has(&plan, "rw @/ws", "pin-dir @/ws/a", "pin-dir @/ws/a/.git",
	    "pin-dir @/ws/node_modules", "pin-dir @/ws/node_modules/x/.git",
	    "block @/ws/node_modules/x/.git/config", NULL);
	assert_int_equal(plan.fp_scanned, 5);
	assert_int_equal(plan.fp_nnotes, 0);
	fsplan_clear(&plan);
	policy_free(p);
}

/* A write root that does not exist is left out, with a note. */
static void
test_write_missing(void **state)
{
	struct policy	*p;
	struct fsplan	 plan;

	(void)state;
	make("@/ws/", NULL);
	p = policy_new();
	add(&p->p_write, "@/nope", "--write");
	add(&p->p_read_only, "@/nope/.git", "default policy: read_only[0]");
	plan_ok(p, 0, &plan);
	expect(&plan, NULL);
	assert_int_equal(plan.fp_nnotes, 1);
	assert_contains(plan.fp_notes[0], "--write: ");
	assert_contains(plan.fp_notes[0], "/nope does not exist");
	fsplan_clear(&plan);
	policy_free(p);
}

/*
 * A write root in the workspace, or in another write root, must resolve
 * inside it: `tools -> ..` (committed, or planted by a run before) is
 * refused; a link that stays inside is followed.
 */
static void
test_contained(void **state)
{
	struct policy	*p;
	struct fsplan	 plan;
	char		*cause;
	struct fsplan_in in = { .fi_policy = NULL };

	(void)state;
	make("@/home/ws/sub/", NULL);
	make("@/home/cache/", NULL);
	link_to("..", "@/home/ws/tools");
	link_to("sub", "@/home/ws/inner");
	link_to("..", "@/home/cache/up");
	in.fi_workspace = plan_ws = at("@/home/ws");

	p = policy_new();
	add(&p->p_write, "@/home/ws/tools", "ws: filesystem.write[0]");
	in.fi_policy = p;
	assert_int_equal(fsplan_build(&in, &plan, &cause), -1);
	assert_contains(cause, "ws: filesystem.write[0]: ");
	assert_contains(cause, "outside the workspace");
	assert_contains(cause, "hint: remove the link");
	assert_null(plan.fp_ops);
	free(cause);
	policy_free(p);

	p = policy_new();
	add(&p->p_write, "@/home/cache", "--write");
	add(&p->p_write, "@/home/cache/up", "user: filesystem.write[0]");
	in.fi_policy = p;
	assert_int_equal(fsplan_build(&in, &plan, &cause), -1);
	assert_contains(cause, "user: filesystem.write[0]: ");
	assert_contains(cause, "outside --write");
	free(cause);
	policy_free(p);

	p = policy_new();
	add(&p->p_write, "@/home/ws/inner", "--write");
	plan_ok(p, 0, &plan);
	expect(&plan, "rw @/home/ws/sub", NULL);
	fsplan_clear(&plan);
	policy_free(p);
}

/*
 * The workspace layer's read_only and deny stop at a link that leads
 * out of the workspace: the link is pinned, the target left alone.
 */
static void
test_untrusted_outside(void **state)
{
	struct policy	*p;
	struct fsplan	 plan;
	struct pitem	*pi;

	(void)state;
	make("@/ws/", NULL);
	make("@/usr/bin/", NULL);
	link_to("../usr", "@/ws/u");
	plan_ws = at("@/ws");
	p = policy_new();
	add(&p->p_write, "@/ws", "default policy: filesystem.write[0]");
	add(&p->p_hide, "@/ws/u/bin", "ws: filesystem.deny[0]");
	pi = &p->p_hide.pl_v[0];
	pi->pi_untrusted = true;
	add(&p->p_read_only, "@/ws/u", "ws: filesystem.read_only[0]");
	p->p_read_only.pl_v[0].pi_untrusted = true;
	plan_ok(p, 0, &plan);
	expect(&plan,
	    "rw @/ws",
	    "pin-link @/ws/u",
	    NULL);
	assert_int_equal(plan.fp_nnotes, 2);
	assert_contains(plan.fp_notes[0], "leads out of the workspace");
	fsplan_clear(&plan);
	policy_free(p);
}

/* /, a link to /, and the kernel's trees are never writable. */
static void
test_refusals(void **state)
{
	struct policy	*p;
	struct fsplan	 plan;
	char		*cause;
	struct fsplan_in in = { .fi_policy = NULL };
	static const char *const bad[] = { "/", "/proc/self", "/sys",
	    "/dev/shm", "@/rootlink" };
	static const char *const why[] = { "name folders instead",
	    "under /proc", "under /sys", "under /dev",
	    "is /, and writing to / would make the whole filesystem" };
	size_t		 i;

	(void)state;
	link_to("/", "@/rootlink");
	for (i = 0; i < nitems(bad); i++) {
		p = policy_new();
		add(&p->p_write, bad[i], "--write");
		in.fi_policy = p;
		assert_int_equal(fsplan_build(&in, &plan, &cause), -1);
		assert_contains(cause, "--write: ");
		assert_contains(cause, why[i]);
		assert_int_equal(plan.fp_nops, 0);
		assert_null(plan.fp_ops);
		free(cause);
		policy_free(p);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nested_order, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_host_config, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cordon_watched, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_missing_blocked, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_scratch_kept, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_git_repositories, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_symlinked_git, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_symlinked_hidden, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_scan_bound, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_write_missing, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_contained, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_untrusted_outside, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
