/*
 * test_gitcfg.c: runner/gitcfg.c reads a config file as git does (each
 * text is also given to `git config -f FILE -l -z`, and the two lists
 * must be the same, or both must fail; where ours is stricter, the table
 * says so), and holds back every key not known to be inert.
 */
#include "unit.h"

#include <limits.h>
#include <stdbool.h>
#include <unistd.h>

#include "git.h"
#include "xmalloc.h"

/* A text, and whether git reads it (ours must agree, or be stricter). */
static const struct {
	const char	*text;
	int		 ours;		/* 0 read, -1 refused */
	int		 git;		/* the same for git */
	size_t		 len;		/* 0: strlen */
} texts[] = {
	{ "[core]\n\tbare = false\n", 0, 0, 0 },
	{ "[core]bare=true\n", 0, 0, 0 },
	{ "[Core]\n\tFSMonitor = touch x\n", 0, 0, 0 },
	{ "[remote \"Origin\"]\n\turl = https://h/r.git\n", 0, 0, 0 },
	{ "[remote \"a\\\"b\\\\c\\x\"]\n\turl = u\n", 0, 0, 0 },
	{ "[a.B]\n\tc = d\n", 0, 0, 0 },
	{ "[a]\n\tb\n\tc =\n\td = \"\"\n", 0, 0, 0 },
	{ "[a]\n\tb = x  y\t z  # c\n", 0, 0, 0 },
	{ "[a]\n\tb = \"x  y # not\" ; c\n", 0, 0, 0 },
	{ "[a]\n\tb = one\\\n two\n", 0, 0, 0 },
	{ "[a]\n\tb = \\t\\n\\b\\\\\\\"\n", 0, 0, 0 },
	{ "[a]\n\tb = x\\\n", 0, 0, 0 },
	{ "[a]\r\n\tb = c\r\n", 0, 0, 0 },
	{ "\xef\xbb\xbf[a]\n\tb = c\n", 0, 0, 0 },
	{ "# c\n; c\n[a] ; c\n\tb = c\n", 0, 0, 0 },
	{ "[a \"b\"] c = d\n", 0, 0, 0 },
	{ "[a \"b\" ]\n", -1, -1, 0 },
	{ "[a]\n\tb = \\q\n", -1, -1, 0 },
	{ "[a]\n\tb = \"open\n", -1, -1, 0 },
	{ "[a]\n\t1b = c\n", -1, -1, 0 },
	{ "[a]\n\tb c = d\n", -1, -1, 0 },
	{ "[a\n", -1, -1, 0 },
	{ "[a \"b\n\"]\n", -1, -1, 0 },
	{ "[a_b]\n", -1, -1, 0 },
	{ "b = c\n", -1, 0, 0 },		/* no section: ours refuses */
	{ "[]\n", -1, -1, 0 },
	{ "[a]\n\tb = c\0d\n", -1, 0, 12 },	/* a NUL: ours refuses */
};

/* Writes len bytes of text to a file; returns its path. */
static char *
put(const char *text, size_t len)
{
	char	*path;
	FILE	*f;

	xasprintf(&path, "%s/test_gitcfg.XXXXXX", P_tmpdir);
	close(mkstemp(path));
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
	return path;
}

/*
 * git's list for the file at path, as "key\nvalue\0" or "key\0" each, in
 * buf; returns its length, or -1 when git refused the file.
 */
static ssize_t
git_list(const char *path, char *buf, size_t size)
{
	char	*cmd;
	FILE	*p;
	size_t	 n;
	int	 rc;

	xasprintf(&cmd, "git config -f '%s' -l -z 2>/dev/null", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(buf, 1, size, p);
	rc = pclose(p);
	free(cmd);
	return rc == 0 ? (ssize_t)n : -1;
}

/* Ours in git's form. */
static size_t
our_list(const struct gitcfg *cfg, char *buf, size_t size)
{
	size_t	 i, n = 0;
	int	 w;

	for (i = 0; i < cfg->gc_n; i++) {
		if (cfg->gc_v[i].ge_value != NULL)
			w = snprintf(buf + n, size - n, "%s\n%s",
			    cfg->gc_v[i].ge_key, cfg->gc_v[i].ge_value);
		else
			w = snprintf(buf + n, size - n, "%s",
			    cfg->gc_v[i].ge_key);
		assert_true(w >= 0 && (size_t)w < size - n);
		n += (size_t)w + 1;	/* the NUL snprintf wrote */
	}
	return n;
}

static void
test_as_git(void **state)
{
	struct gitcfg	 cfg;
	char		 gbuf[4096], obuf[4096], *path, *cause;
	ssize_t		 glen;
	size_t		 i, len, olen;
	int		 rc;

	(void)state;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		len = texts[i].len != 0 ? texts[i].len :
		    strlen(texts[i].text);
		path = put(texts[i].text, len);
		glen = git_list(path, gbuf, sizeof(gbuf));
		unlink(path);
		free(path);
		if ((glen == -1) != (texts[i].git == -1))
			fail_msg("git %s text %zu", glen == -1 ? "refused" :
			    "read", i);
		cause = NULL;
		rc = gitcfg_parse(&cfg, texts[i].text, len, &cause);
		if (rc != texts[i].ours)
			fail_msg("text %zu: ours %d (%s)", i, rc,
			    cause ? cause : "");
		free(cause);
		if (rc == -1 || glen == -1)
			continue;
		olen = our_list(&cfg, obuf, sizeof(obuf));
		if (olen != (size_t)glen || memcmp(obuf, gbuf, olen) != 0)
			fail_msg("text %zu: ours and git's lists differ", i);
		gitcfg_clear(&cfg);
	}
}

static void
test_inert(void **state)
{
	(void)state;
	assert_true(gitcfg_inert("core.bare", "false"));
	assert_true(gitcfg_inert("remote.Origin.url", "git@h:r.git"));
	assert_true(gitcfg_inert("remote.a.b.url", "https://h/r"));
	assert_true(gitcfg_inert("branch.main.merge", "refs/heads/main"));
	assert_true(gitcfg_inert("submodule.lib.update", "rebase"));
	assert_true(gitcfg_inert("user.name", NULL));
	assert_true(gitcfg_inert("color.diff.meta", "blue"));
	assert_false(gitcfg_inert("core.fsmonitor", "touch x"));
	assert_false(gitcfg_inert("core.hookspath", "h"));
	assert_false(gitcfg_inert("core.sshcommand", "x"));
	assert_false(gitcfg_inert("core.pager", "x"));
	assert_false(gitcfg_inert("include.path", "x"));
	assert_false(gitcfg_inert("includeif.gitdir:/.path", "x"));
	assert_false(gitcfg_inert("filter.lfs.process", "x"));
	assert_false(gitcfg_inert("diff.x.textconv", "x"));
	assert_false(gitcfg_inert("merge.x.driver", "x"));
	assert_false(gitcfg_inert("remote.o.uploadpack", "x"));
	assert_false(gitcfg_inert("remote.o.url", "ext::sh -c x"));
	assert_false(gitcfg_inert("remote.o.url", NULL));
	assert_false(gitcfg_inert("credential.helper", "x"));
	assert_false(gitcfg_inert("alias.st", "!x"));
	assert_false(gitcfg_inert("submodule.lib.update", "!x"));
	assert_false(gitcfg_inert("core", "x"));
	assert_false(gitcfg_inert("branch.main", "x"));
	assert_false(gitcfg_inert("user.x.name", "x"));
}

static void
test_held(void **state)
{
	static const char old_text[] =
	    "[core]\n\tbare = false\n[remote \"o\"]\n\turl = u\n"
	    "[core]\n\tpager = less\n";
	static const char new_text[] =
	    "[core]\n\tbare = false\n[remote \"o\"]\n\turl = v\n"
	    "\tfetch = +refs/heads/*:refs/remotes/o/*\n"
	    "[branch \"main\"]\n\tremote = o\n\tmerge = refs/heads/main\n"
	    "[core]\n\tpager = less\n";
	struct gitcfg	 old, cfg, held;
	char		*cause = NULL;

	(void)state;
	assert_int_equal(gitcfg_parse(&old, old_text, sizeof(old_text) - 1,
	    &cause), 0);
	assert_int_equal(gitcfg_parse(&cfg, new_text, sizeof(new_text) - 1,
	    &cause), 0);
	/* What git remote set-url, push -u add: inert; the pager was there. */
	assert_int_equal(gitcfg_held(&old, &cfg, &held), 0);
	gitcfg_clear(&held);
	/* As a new repository, its pager is held back. */
	assert_int_equal(gitcfg_held(NULL, &cfg, &held), 1);
	assert_string_equal(held.gc_v[0].ge_key, "core.pager");
	gitcfg_clear(&held);
	/* And back again. */
	assert_int_equal(gitcfg_held(&cfg, &old, &held), 0);
	gitcfg_clear(&held);
	/* Removing a key that runs a program is a change held back too. */
	gitcfg_clear(&old);
	assert_int_equal(gitcfg_parse(&old, new_text, 60, &cause), 0);
	assert_int_equal(gitcfg_held(&cfg, &old, &held), 1);
	gitcfg_clear(&held);
	gitcfg_clear(&old);
	gitcfg_clear(&cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_git),
		cmocka_unit_test(test_inert),
		cmocka_unit_test(test_held),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
