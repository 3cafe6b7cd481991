/*
 * test_fsscan.c: the first step of the mount plan alone: the scan of
 * writable roots made in a temporary folder, and what it finds, as
 * plain data: each path to protect with where it leads and why, the
 * repositories' identities, its notes and its bound.  Findings are
 * written "res @path [gitdir]" with the temporary folder as "@".
 */
#include "unit.h"

#include <sys/stat.h>

#include <limits.h>
#include <stdbool.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fspath.h"
#include "plan/fsscan.h"
#include "plan/plan.h"

static char	 base[PATH_MAX];

static int
setup(void **state)
{
	(void)state;
	return unit_tmpdir(base, "fsscan");
}

static int
teardown(void **state)
{
	(void)state;
	return unit_rmtree(base);
}

/* Makes "@/a/b/" (folders) or "@/a/file" holding text. */
static void
make(const char *rel, const char *text)
{
	char	*path;

	xasprintf(&path, "%s%s", base, rel + 1);
	unit_make(base, path, text);
	free(path);
}

static void
scan(const char *rel, size_t max, struct fsscan *s)
{
	char		*root;
	const char	*roots[1];

	xasprintf(&root, "%s%s", base, rel + 1);
	roots[0] = root;
	fsscan_run(NULL, NULL, roots, 1, max, s);
	free(root);
}

/* A finding as the tests write it. */
static char *
find_text(const struct fsscan_find *sf)
{
	static const char *const res[] = { "found", "missing", "notdir",
	    "skip" };
	const char	*p = sf->sf_at.pr_path != NULL ? sf->sf_at.pr_path : "";
	char		*text;
	size_t		 n = strlen(base);

	xasprintf(&text, "%s %s%s%s%s%s", res[sf->sf_at.pr_res],
	    strncmp(p, base, n) == 0 ? "@" : "",
	    strncmp(p, base, n) == 0 ? p + n : p,
	    sf->sf_gitdir ? " gitdir" : "", sf->sf_file ? " file" : "",
	    sf->sf_dot ? " dot" : "");
	return text;
}

/* The finding written want, or NULL. */
static const struct fsscan_find *
finding(const struct fsscan *s, const char *want)
{
	char	*got;
	size_t	 i;
	bool	 same;

	for (i = 0; i < s->fs_nfinds; i++) {
		got = find_text(&s->fs_finds[i]);
		same = strcmp(got, want) == 0;
		free(got);
		if (same)
			return &s->fs_finds[i];
	}
	for (i = 0; i < s->fs_nfinds; i++) {
		got = find_text(&s->fs_finds[i]);
		print_message("  found: %s\n", got);
		free(got);
	}
	fail_msg("no finding \"%s\"", want);
	return NULL;
}

/*
 * A .git folder: found as a git directory, and its code found after it
 * (present: read-only; missing: blocked, commondir by a file that reads
 * "./"), the hooks' links with where they lead; known by identity; a
 * .hg whole.  Nothing is planned here: no op, no candidate.
 */
static void
test_repository(void **state)
{
	const struct fsscan_find	*sf;
	struct fsscan			 s;
	char				*l;

	(void)state;
	make("@/ws/.git/config", "[core]\n");
	make("@/ws/.git/hooks/", NULL);
	make("@/ws/scripts/pre-commit", "#!/bin/sh\n");
	make("@/ws/hg/.hg/", NULL);
	xasprintf(&l, "%s/ws/.git/hooks/pre-commit", base);
	assert_int_equal(symlink("../../scripts/pre-commit", l), 0);
	free(l);
	scan("@/ws", FSPLAN_SCAN_MAX, &s);
	finding(&s, "found @/ws/.git gitdir");
	sf = finding(&s, "found @/ws/.git/config file");
	assert_string_equal(sf->sf_why, FS_WHY_GITCODE);
	finding(&s, "missing @/ws/.git/commondir file dot");
	finding(&s, "missing @/ws/.git/info file");
	finding(&s, "found @/ws/.git/hooks");
	finding(&s, "found @/ws/hg/.hg");
	sf = finding(&s, "found @/ws/scripts/pre-commit");
	assert_int_equal(sf->sf_at.pr_nlinks, 1);
	assert_string_equal(sf->sf_why, "protected: target of a git hook "
	    "link");
	/*
	 * Known by identity: .git and .hg, as met and as resolved, and
	 * each path found to protect (config, hooks, the hook's target).
	 */
	assert_int_equal(s.fs_nmarks, 7);
	assert_int_equal(s.fs_nnotes, 0);
	fsscan_clear(&s);
}

/*
 * A .git file names its git directory through a link: the link is in
 * the finding (for the planner to pin), and the git directory's code
 * is found where the link leads.
 */
static void
test_gitfile_link(void **state)
{
	const struct fsscan_find	*sf;
	struct fsscan			 s;
	char				*l, *t;

	(void)state;
	make("@/real/HEAD", "ref: refs/heads/main\n");
	make("@/ws/sub/.git", "gitdir: ../mod\n");
	xasprintf(&l, "%s/ws/mod", base);
	xasprintf(&t, "%s/real", base);
	assert_int_equal(symlink(t, l), 0);
	scan("@/ws", FSPLAN_SCAN_MAX, &s);
	finding(&s, "found @/ws/sub/.git");
	sf = finding(&s, "found @/real gitdir");
	assert_int_equal(sf->sf_at.pr_nlinks, 1);
	assert_string_equal(sf->sf_at.pr_links[0], l);
	finding(&s, "missing @/real/config file");
	fsscan_clear(&s);
	free(l);
	free(t);
}

/* The bound: the scan stops, and says so in a note. */
static void
test_bound(void **state)
{
	struct fsscan	 s;

	(void)state;
	make("@/ws/a/", NULL);
	make("@/ws/b/", NULL);
	make("@/ws/c/.git/", NULL);
	scan("@/ws", 2, &s);
	assert_int_equal(s.fs_scanned, 2);
	assert_int_equal(s.fs_nnotes, 1);
	assert_contains(s.fs_notes[0], "stopped after 2 entries");
	fsscan_clear(&s);
}

/* No roots, nothing found. */
static void
test_no_roots(void **state)
{
	struct fsscan	 s;

	(void)state;
	fsscan_run(NULL, NULL, NULL, 0, 10, &s);
	assert_int_equal(s.fs_nfinds + s.fs_nmarks + s.fs_nnotes +
	    s.fs_scanned, 0);
	fsscan_clear(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_repository, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_gitfile_link, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_roots, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
