/*
 * test_fsscan.c: the first step of the mount plan alone: the scan of
 * writable roots made in a temporary folder, and what it finds, as
 * plain data: each path to protect with where it leads and why, the
 * repositories' identities, its notes and its bound.  Findings are
 * written "res @path [gitdir]" with the temporary folder as "@"; a
 * wide tree is found breadth first, each folder in its listing's order.
 */
#include "unit.h"

#include <sys/stat.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
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

/*
 * A folder git takes for a repository with no .git name (HEAD with
 * objects and refs, or HEAD with commondir) is protected as one; HEAD
 * with objects alone is not such a folder.
 */
static void
test_bare(void **state)
{
	struct fsscan	 s;
	size_t		 i;
	char		*got;

	(void)state;
	make("@/ws/b/HEAD", "ref: refs/heads/main\n");
	make("@/ws/b/objects/", NULL);
	make("@/ws/b/refs/", NULL);
	make("@/ws/w/HEAD", "ref: refs/heads/main\n");
	make("@/ws/w/commondir", "../b\n");
	make("@/ws/n/HEAD", "ref: refs/heads/main\n");
	make("@/ws/n/objects/", NULL);
	scan("@/ws", FSPLAN_SCAN_MAX, &s);
	finding(&s, "found @/ws/b gitdir");
	finding(&s, "found @/ws/w gitdir");
	for (i = 0; i < s.fs_nfinds; i++) {
		got = find_text(&s.fs_finds[i]);
		assert_null(strstr(got, "@/ws/n"));
		free(got);
	}
	fsscan_clear(&s);
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

/* The findings of s that end with tail, as the tests write them. */
static size_t
findings_ending(const struct fsscan *s, const char *tail, char **out,
    size_t max)
{
	char	*t;
	size_t	 i, n = 0, len = strlen(tail);

	for (i = 0; i < s->fs_nfinds; i++) {
		t = find_text(&s->fs_finds[i]);
		if (strlen(t) >= len && strcmp(t + strlen(t) - len, tail) ==
		    0 && n < max)
			out[n++] = t;
		else
			free(t);
	}
	return n;
}

/*
 * A wide tree: what is found comes breadth first, each folder in its
 * listing's order; with the bound reached part way, what is found is
 * the start of that.
 */
static void
test_wide(void **state)
{
	struct fsscan	 s, b;
	struct dirent	*de;
	DIR		*dp;
	char		 rel[64], *path, *want[64], *got[64], *cut[64];
	size_t		 i, nwant = 0, ngot, ncut;
	unsigned	 d;

	(void)state;
	for (d = 0; d < 200; d++) {
		snprintf(rel, sizeof(rel), "@/ws/d%03u/e/", d);
		make(rel, NULL);
		snprintf(rel, sizeof(rel), "@/ws/d%03u/.git/", d);
		if (d % 7 == 0)
			make(rel, NULL);
	}
	xasprintf(&path, "%s/ws", base);
	assert_non_null(dp = opendir(path));
	while ((de = readdir(dp)) != NULL)
		if (sscanf(de->d_name, "d%u", &d) == 1 && d % 7 == 0)
			xasprintf(&want[nwant++], "found @/ws/%s/.git gitdir",
			    de->d_name);
	closedir(dp);
	free(path);
	scan("@/ws", FSPLAN_SCAN_MAX, &s);
	ngot = findings_ending(&s, "/.git gitdir", got, nitems(got));
	assert_int_equal(ngot, nwant);
	for (i = 0; i < ngot; i++)
		assert_string_equal(got[i], want[i]);
	/* ws's 200 entries, then about 70 folders of 1 or 2. */
	scan("@/ws", 300, &b);
	assert_int_equal(b.fs_scanned, 300);
	assert_int_equal(b.fs_nnotes, 1);
	ncut = findings_ending(&b, "/.git gitdir", cut, nitems(cut));
	assert_true(ncut > 0 && ncut < ngot);
	for (i = 0; i < ncut; i++)
		assert_string_equal(cut[i], got[i]);
	for (i = 0; i < nwant; i++)
		free(want[i]);
	for (i = 0; i < ngot; i++)
		free(got[i]);
	for (i = 0; i < ncut; i++)
		free(cut[i]);
	fsscan_clear(&s);
	fsscan_clear(&b);
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
		cmocka_unit_test_setup_teardown(test_bare, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wide, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_roots, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
