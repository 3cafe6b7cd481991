/*
 * test_hostcfg.c: the check after a run of what agents and editors on
 * the host load (hostcfg.c), on real trees in a temporary folder: what
 * is made at a watched path (file, folder, link) is moved aside, and a
 * link made on the way; the user's old links are followed while they
 * stay in the root, and one still leading nowhere is left; nothing is
 * read through a file or out of the root; a name in the way gets a
 * random part.
 */
#include "guard/guard.h"
#include "unit.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/xmalloc.h"

static char	 base[PATH_MAX];

static int
setup(void **state)
{
	(void)state;
	return unit_tmpdir(base, "hostcfg");
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

/* The first second after now: what changes from then is the run's. */
static time_t
next_second(void)
{
	time_t	 t = time(NULL);

	while (time(NULL) == t)
		usleep(10000);
	return time(NULL);
}

/*
 * A plan of one writable root, base/ws, watching each of the n paths
 * (relative to it); the guard opened on it, the run starting now.
 */
static void
open_on(struct fsplan *plan, struct guard *g, const char *const *rel,
    size_t n)
{
	char	*cause = NULL;
	size_t	 i;

	memset(plan, 0, sizeof(*plan));
	plan->fp_ops = xcalloc(1, sizeof(*plan->fp_ops));
	xasprintf(&plan->fp_ops[0].fo_path, "%s/ws", base);
	plan->fp_ops[0].fo_why = xstrdup("--write");
	plan->fp_ops[0].fo_kind = FS_RW;
	plan->fp_ops[0].fo_dir = true;
	plan->fp_nops = 1;
	plan->fp_host = xcalloc(n, sizeof(*plan->fp_host));
	for (i = 0; i < n; i++)
		xasprintf(&plan->fp_host[i], "%s/ws/%s", base, rel[i]);
	plan->fp_nhost = n;
	if (guard_open(g, plan, &cause) == -1)
		fail_msg("%s", cause);
	hostcfg_open(g, plan);
	g->g_start = next_second();
}

static void
close_on(struct fsplan *plan, struct guard *g)
{
	hostcfg_clear(g);
	guard_clear(g);
	fsplan_clear(plan);
}

/* Nothing made: nothing found.  A file, a folder: each moved aside. */
static void
test_made(void **state)
{
	static const char *const watch[] = { ".envrc", ".claude", ".mcp.json",
	    ".cursor/mcp.json" };
	struct fsplan	 plan;
	struct guard	 g;
	char		*want;

	(void)state;
	make("ws/", NULL);
	open_on(&plan, &g, watch, nitems(watch));
	assert_int_equal(hostcfg_check(&g, "ID"), 0);
	make("ws/.envrc", "touch x\n");
	make("ws/.claude/settings.json", "{}\n");
	make("ws/.cursor/rules/a.mdc", "rule\n");
	assert_int_equal(hostcfg_check(&g, "ID"), 2);
	assert_false(exists("ws/.envrc"));
	assert_true(exists("ws/.envrc.cordon-quarantine-ID"));
	assert_true(exists("ws/.claude.cordon-quarantine-ID/settings.json"));
	/* What is not listed stays where it was made. */
	assert_true(exists("ws/.cursor/rules/a.mdc"));
	xasprintf(&want, "%s/ws/.envrc", base);
	assert_string_equal(g.g_hfinds[0].hf_path, want);
	free(want);
	xasprintf(&want, "%s/ws/.envrc.cordon-quarantine-ID", base);
	assert_string_equal(g.g_hfinds[0].hf_moved, want);
	free(want);
	assert_false(g.g_hfinds[0].hf_link);
	/* Made again (a session's next command): a name of its own. */
	make("ws/.envrc", "touch y\n");
	assert_int_equal(hostcfg_check(&g, "ID"), 1);
	assert_int_equal(g.g_nhfinds, 3);
	assert_non_null(strstr(g.g_hfinds[2].hf_moved,
	    "/ws/.envrc.cordon-quarantine-ID-"));
	assert_int_equal(g.g_hfinds[2].hf_error, 0);
	close_on(&plan, &g);
}

/*
 * Links: one made in the place or on the way is moved, wherever it
 * leads; the user's old one on the way is followed in the root, and
 * what is made behind it moved; one that leads out is not followed; an
 * old one in the place still leading nowhere is left, and moved once
 * what it names was made.
 */
static void
test_links(void **state)
{
	static const char *const watch[] = { ".cursor/mcp.json", ".claude",
	    ".vscode/tasks.json", ".zed/tasks.json", ".envrc" };
	struct fsplan	 plan;
	struct guard	 g;

	(void)state;
	make("ws/shared/", NULL);
	make("out/", NULL);
	link_at("shared", "ws/.vscode");
	link_at("../out", "ws/.zed");
	link_at("env/envrc", "ws/.envrc");
	open_on(&plan, &g, watch, nitems(watch));
	assert_int_equal(hostcfg_check(&g, "ID"), 0);
	make("ws/real/mcp.json", "{}\n");
	link_at("real", "ws/.cursor");
	link_at("real", "ws/.claude");
	make("ws/shared/tasks.json", "{}\n");
	make("out/tasks.json", "{}\n");
	assert_int_equal(hostcfg_check(&g, "ID"), 3);
	assert_true(exists("ws/.cursor.cordon-quarantine-ID"));
	assert_true(g.g_hfinds[0].hf_link);
	assert_true(exists("ws/.claude.cordon-quarantine-ID"));
	assert_true(exists("ws/real/mcp.json"));
	/* Behind the user's link, in the root. */
	assert_true(exists("ws/.vscode"));
	assert_true(exists("ws/shared/tasks.json.cordon-quarantine-ID"));
	assert_false(g.g_hfinds[2].hf_link);
	/* Out of the root: not followed, not judged. */
	assert_true(exists("out/tasks.json"));
	assert_true(exists("ws/.envrc"));
	make("ws/env/envrc", "touch x\n");
	assert_int_equal(hostcfg_check(&g, "ID"), 1);
	assert_true(exists("ws/.envrc.cordon-quarantine-ID"));
	assert_true(g.g_hfinds[3].hf_link);
	close_on(&plan, &g);
}

/* A file on the way: nothing is read through it, nothing moved. */
static void
test_file_on_way(void **state)
{
	static const char *const watch[] = { ".cursor/mcp.json" };
	struct fsplan	 plan;
	struct guard	 g;

	(void)state;
	make("ws/", NULL);
	open_on(&plan, &g, watch, nitems(watch));
	make("ws/.cursor", "a file\n");
	assert_int_equal(hostcfg_check(&g, "ID"), 0);
	assert_true(exists("ws/.cursor"));
	close_on(&plan, &g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_made, setup, teardown),
		cmocka_unit_test_setup_teardown(test_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_on_way, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
