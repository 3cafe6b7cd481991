/*
 * test_gitcfg.c: git/gitcfg.c reads a config file as git does (each
 * text is also given to `git config -f FILE -l -z`, and the two lists
 * must be the same, or both must fail; where ours is stricter, the table
 * says so), and holds back every key not known to be inert; gitjudge.c
 * and giturl.c put each key in its class by what it makes git on the
 * host do, where the repository lies.
 */
#include "unit.h"

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <unistd.h>

#include "git/git.h"
#include "lib/xmalloc.h"

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
	    "[core]\n\tbare = false\n[remote \"o\"]\n\turl = https://h/u\n"
	    "[core]\n\tpager = less\n";
	static const char new_text[] =
	    "[core]\n\tbare = false\n[remote \"o\"]\n\turl = https://h/u\n"
	    "\tfetch = +refs/heads/*:refs/remotes/o/*\n"
	    "[branch \"main\"]\n\tremote = o\n\tmerge = refs/heads/main\n"
	    "[core]\n\tpager = less\n";
	static const char moved_text[] =
	    "[core]\n\tbare = false\n[remote \"o\"]\n\turl = https://e/v\n"
	    "[core]\n\tpager = less\n";
	struct gitcfg	 old, cfg, moved, held;
	char		*cause = NULL;

	(void)state;
	assert_int_equal(gitcfg_parse(&old, old_text, sizeof(old_text) - 1,
	    &cause), 0);
	assert_int_equal(gitcfg_parse(&cfg, new_text, sizeof(new_text) - 1,
	    &cause), 0);
	assert_int_equal(gitcfg_parse(&moved, moved_text,
	    sizeof(moved_text) - 1, &cause), 0);
	/* What git push -u adds: inert; the pager was there. */
	assert_int_equal(gitcfg_held(NULL, &old, &cfg, &held), 0);
	gitcfg_clear(&held);
	/* As a new repository, its pager is held back. */
	assert_int_equal(gitcfg_held(NULL, NULL, &cfg, &held), 1);
	assert_string_equal(held.gc_v[0].ge_key, "core.pager");
	gitcfg_clear(&held);
	/* And back again. */
	assert_int_equal(gitcfg_held(NULL, &cfg, &old, &held), 0);
	gitcfg_clear(&held);
	/* git remote set-url on the user's remote: its old URL and new. */
	assert_int_equal(gitcfg_held(NULL, &old, &moved, &held), 2);
	assert_string_equal(held.gc_v[0].ge_key, "remote.o.url");
	gitcfg_clear(&held);
	/* Removing a key that runs a program is a change held back too. */
	gitcfg_clear(&old);
	assert_int_equal(gitcfg_parse(&old, new_text, 66, &cause), 0);
	assert_int_equal(gitcfg_held(NULL, &cfg, &old, &held), 1);
	gitcfg_clear(&held);
	gitcfg_clear(&old);
	gitcfg_clear(&cfg);
	gitcfg_clear(&moved);
}

/* Where the keys below are judged: a workspace /ws, /shown read-only. */
static const char *ws_write[] = { "/nonexistent-ws" };
static const char *ws_show[] = { "/nonexistent-shown" };
static const struct gitcfg_places places = { ws_write, 1, ws_show, 1 };

/*
 * The class of key = value added to the config text cfg (base: the
 * config before the command, NULL for a new repository) of the git
 * directory gitdir; *why, if asked for, the reason (caller frees).
 */
static enum gitcfg_class
judge(const char *base, const char *cfg, const char *gitdir,
    const char *key, const char *value, char **why)
{
	struct gitcfg		 b, c;
	struct gitcfg_ent	 e;
	struct gitcfg_ctx	 cx;
	char			*cause = NULL, *w = NULL;
	enum gitcfg_class	 k;

	memset(&b, 0, sizeof(b));
	if (base != NULL)
		assert_int_equal(gitcfg_parse(&b, base, strlen(base), &cause),
		    0);
	assert_int_equal(gitcfg_parse(&c, cfg, strlen(cfg), &cause), 0);
	cx.gx_gitdir = gitdir;
	cx.gx_base = base != NULL ? &b : NULL;
	cx.gx_places = &places;
	e.ge_key = (char *)(uintptr_t)key;
	e.ge_shown = e.ge_key;
	e.ge_value = (char *)(uintptr_t)value;
	k = gitjudge_class(&cx, &c, &e, false, &w);
	if (gitjudge_held(k))
		assert_non_null(w);
	if (why != NULL)
		*why = w;
	else
		free(w);
	gitcfg_clear(&b);
	gitcfg_clear(&c);
	return k;
}

#define GD	"/nonexistent-ws/.git"
#define ORIGIN	"[remote \"origin\"]\n\turl = https://h.example/r\n"
#define EVIL	ORIGIN "[remote \"evil\"]\n\turl = https://e.example/r\n"

/* Where git writes files, or with what modes. */
static void
test_class_files(void **state)
{
	char	*why;

	(void)state;
	/* A work tree outside: git pull writes there, git clean empties. */
	assert_int_equal(judge(NULL, "", GD, "core.worktree", "/home/u", &why),
	    GITCFG_FILES);
	assert_contains(why, "/home/u");
	free(why);
	assert_int_equal(judge(NULL, "", GD, "core.worktree", "../..", NULL),
	    GITCFG_FILES);
	assert_int_equal(judge(NULL, "", GD, "core.worktree", "../../x",
	    NULL), GITCFG_FILES);
	/* In a git directory: a checkout would write hooks. */
	assert_int_equal(judge(NULL, "", GD, "core.worktree", ".", NULL),
	    GITCFG_FILES);
	assert_int_equal(judge(NULL, "", GD, "core.worktree",
	    "/nonexistent-ws/a/.GIT/b", NULL), GITCFG_FILES);
	/* Its own: git submodule add writes a module's so. */
	assert_int_equal(judge(NULL, "", GD, "core.worktree", "..", NULL),
	    GITCFG_INERT);
	assert_int_equal(judge(NULL, "", GD "/modules/lib", "core.worktree",
	    "../../../lib", NULL), GITCFG_INERT);
	/* Not a shown folder: the command could not write there. */
	assert_int_equal(judge(NULL, "", GD, "core.worktree",
	    "/nonexistent-shown/x", NULL), GITCFG_FILES);
	assert_int_equal(judge(NULL, "", NULL, "core.worktree", "..", NULL),
	    GITCFG_FILES);
	assert_int_equal(judge(NULL, "", GD, "core.sharedrepository", "0666",
	    NULL), GITCFG_FILES);
	assert_int_equal(judge(NULL, "", GD, "core.sharedrepository", "group",
	    NULL), GITCFG_FILES);
	assert_int_equal(judge(NULL, "", GD, "core.sharedrepository", "umask",
	    NULL), GITCFG_INERT);
	assert_int_equal(judge(NULL, "", GD, "core.sharedrepository", "false",
	    NULL), GITCFG_INERT);
}

/* What makes git reach the network by itself. */
static void
test_class_network(void **state)
{
	(void)state;
	assert_int_equal(judge(ORIGIN, ORIGIN, GD, "extensions.partialclone",
	    "origin", NULL), GITCFG_NETWORK);
	assert_int_equal(judge(ORIGIN, ORIGIN, GD, "remote.origin.promisor",
	    "true", NULL), GITCFG_NETWORK);
	assert_int_equal(judge(ORIGIN, ORIGIN, GD,
	    "remote.origin.partialclonefilter", "blob:none", NULL),
	    GITCFG_NETWORK);
	assert_int_equal(judge(ORIGIN, ORIGIN, GD, "remote.origin.promisor",
	    "false", NULL), GITCFG_INERT);
	/* A user's partial clone may change its filter. */
	assert_int_equal(judge(ORIGIN "\tpromisor = true\n", ORIGIN, GD,
	    "remote.origin.partialclonefilter", "blob:limit=1m", NULL),
	    GITCFG_INERT);
}

/*
 * A new repository made partial (git clone --filter): its promisor
 * remote is a remote added when its URL passes the URL check.
 */
static void
test_class_partial(void **state)
{
	static const char *const keys[][2] = {
		{ "extensions.partialclone", "origin" },
		{ "remote.origin.promisor", "true" },
		{ "remote.origin.partialclonefilter", "blob:none" },
	};
	char	*why;
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		assert_int_equal(judge(NULL, ORIGIN, GD, keys[i][0],
		    keys[i][1], NULL), GITCFG_REMOTE);
		assert_int_equal(judge(NULL, "[remote \"origin\"]\n\turl = "
		    "http://127.0.0.1:9/r\n", GD, keys[i][0], keys[i][1],
		    &why), GITCFG_NETWORK);
		assert_contains(why, "loopback");
		free(why);
		assert_int_equal(judge(NULL, "", GD, keys[i][0], keys[i][1],
		    NULL), GITCFG_NETWORK);
		/* The user's repository turning partial is held. */
		assert_int_equal(judge(ORIGIN, ORIGIN, GD, keys[i][0],
		    keys[i][1], NULL), GITCFG_NETWORK);
	}
	/* Named by URL, no remote: git fetches from the name itself. */
	assert_int_equal(judge(NULL, ORIGIN, GD, "extensions.partialclone",
	    "https://h.example/r", NULL), GITCFG_NETWORK);
	assert_int_equal(judge(NULL, ORIGIN, GD, "extensions.partialclone",
	    NULL, NULL), GITCFG_NETWORK);
	assert_int_equal(judge(NULL, ORIGIN, GD, "remote.origin.promisor",
	    "false", NULL), GITCFG_INERT);
	/* git init and clone write these: a new repository may have them. */
	assert_int_equal(judge(NULL, "", GD, "core.repositoryformatversion",
	    "1", NULL), GITCFG_INERT);
	assert_int_equal(judge(NULL, "", GD, "extensions.objectformat",
	    "sha256", NULL), GITCFG_INERT);
	assert_int_equal(judge(NULL, "", GD, "extensions.refstorage",
	    "reftable", NULL), GITCFG_INERT);
	/* One that was there may not change them. */
	assert_int_equal(judge("", "", GD, "core.repositoryformatversion",
	    "1", NULL), GITCFG_NETWORK);
	assert_int_equal(judge("", "", GD, "extensions.objectformat",
	    "sha256", NULL), GITCFG_FILES);
	assert_int_equal(judge("", "", GD, "extensions.x", "y", NULL),
	    GITCFG_RUNS);
}

/* Each URL as git reads it, in a remote the command added. */
static void
test_class_url(void **state)
{
	static const struct {
		const char		*url;
		enum gitcfg_class	 c;
	} urls[] = {
		{ "https://github.com/o/r.git", GITCFG_REMOTE },
		{ "git@github.com:o/r.git", GITCFG_REMOTE },
		{ "ssh://git@h.example:2222/r", GITCFG_REMOTE },
		{ "http://127.0.0.1:9418/r", GITCFG_DEST },
		{ "http://user@127.0.0.1/r", GITCFG_DEST },
		{ "git://0x7f.1/r", GITCFG_DEST },
		{ "http://2130706433/r", GITCFG_DEST },
		{ "https://[::1]:8080/r", GITCFG_DEST },
		{ "https://[::ffff:127.0.0.1]/r", GITCFG_DEST },
		{ "http://localhost:3000/r", GITCFG_DEST },
		{ "http://api.localhost/r", GITCFG_DEST },
		{ "http://10.1.2.3/r", GITCFG_DEST },
		{ "http://169.254.169.254/r", GITCFG_DEST },
		{ "git@192.168.1.1:r", GITCFG_DEST },
		{ "me@localhost:r", GITCFG_DEST },
		{ "http://h%2e/r", GITCFG_DEST },
		{ "/nonexistent-ws/up.git", GITCFG_REMOTE },
		{ "file:///nonexistent-ws/up.git", GITCFG_REMOTE },
		{ "../up.git", GITCFG_DEST },
		{ "sub/up.git", GITCFG_REMOTE },
		{ "/nonexistent-shown/src.git", GITCFG_REMOTE },
		{ "/home/u/private.git", GITCFG_DEST },
		{ "file:///home/u/private.git", GITCFG_DEST },
		{ "/nonexistent-ws/../home/u", GITCFG_DEST },
		{ "ext::sh -c touch% /tmp/x", GITCFG_RUNS },
		{ "fd::3", GITCFG_RUNS },
		{ "gcrypt::https://h/r", GITCFG_RUNS },
		{ "svn://h.example/r", GITCFG_RUNS },
	};
	size_t	 i;
	enum gitcfg_class c;

	(void)state;
	for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		c = judge(ORIGIN, ORIGIN, GD, "remote.new.url", urls[i].url,
		    NULL);
		if (c != urls[i].c)
			fail_msg("%s: %s, not %s", urls[i].url,
			    gitjudge_name(c), gitjudge_name(urls[i].c));
		/* The same as a pushurl, and in a new repository. */
		if (judge(ORIGIN, ORIGIN, GD, "remote.new.pushurl",
		    urls[i].url, NULL) != c || judge(NULL, ORIGIN, GD,
		    "remote.new.url", urls[i].url, NULL) != c)
			fail_msg("%s: not the same everywhere", urls[i].url);
	}
}

/* Where the user's push or fetch goes. */
static void
test_class_dest(void **state)
{
	char	*why;

	(void)state;
	/* An existing remote's URL, pushurl, push, mirror: held. */
	assert_int_equal(judge(ORIGIN, ORIGIN, GD, "remote.origin.url",
	    "https://e.example/r", &why), GITCFG_DEST);
	assert_contains(why, "origin");
	free(why);
	assert_int_equal(judge(ORIGIN, ORIGIN, GD, "remote.origin.pushurl",
	    "https://e.example/r", NULL), GITCFG_DEST);
	assert_int_equal(judge(ORIGIN, ORIGIN, GD, "remote.origin.push",
	    "+refs/*:refs/*", NULL), GITCFG_DEST);
	assert_int_equal(judge(ORIGIN, ORIGIN, GD, "remote.origin.mirror",
	    "true", NULL), GITCFG_DEST);
	/* A remote the command added: applied, and said. */
	assert_int_equal(judge(ORIGIN, EVIL, GD, "remote.evil.url",
	    "https://e.example/r", NULL), GITCFG_REMOTE);
	assert_int_equal(judge(ORIGIN, EVIL, GD, "remote.evil.fetch",
	    "+refs/heads/*:refs/remotes/evil/*", NULL), GITCFG_INERT);
	/* Its refspec after its URL was held: held too, not left alone. */
	assert_int_equal(judge(ORIGIN, ORIGIN, GD, "remote.evil.fetch",
	    "+refs/heads/*:refs/remotes/evil/*", NULL), GITCFG_DEST);
	/* push -u: an upstream where there was none, to a remote it had, */
	/* or in a repository with no remote at all. */
	assert_int_equal(judge(ORIGIN, EVIL, GD, "branch.main.remote",
	    "origin", NULL), GITCFG_INERT);
	assert_int_equal(judge("", EVIL, GD, "branch.main.remote", "evil",
	    NULL), GITCFG_INERT);
	assert_int_equal(judge(NULL, EVIL, GD, "branch.main.remote", "evil",
	    NULL), GITCFG_INERT);
	assert_int_equal(judge(ORIGIN, EVIL, GD, "branch.main.remote", ".",
	    NULL), GITCFG_INERT);
	/* Turned to another remote, or changed: held. */
	assert_int_equal(judge(ORIGIN, EVIL, GD, "branch.main.remote", "evil",
	    NULL), GITCFG_DEST);
	assert_int_equal(judge(ORIGIN, EVIL, GD, "branch.main.pushremote",
	    "evil", NULL), GITCFG_DEST);
	assert_int_equal(judge(ORIGIN, EVIL, GD, "remote.pushdefault", "evil",
	    NULL), GITCFG_DEST);
	assert_int_equal(judge(ORIGIN "[branch \"main\"]\n\tremote = evil\n",
	    EVIL, GD, "branch.main.remote", "origin", NULL), GITCFG_DEST);
	/* A rewrite of every URL, added or removed. */
	assert_int_equal(judge(ORIGIN, ORIGIN, GD,
	    "url.http://127.0.0.1:1/.insteadof", "https://h.example/", NULL),
	    GITCFG_DEST);
	assert_int_equal(judge(NULL, ORIGIN, GD,
	    "url.https://e.example/.pushinsteadof", "https://h.example/",
	    NULL), GITCFG_DEST);
	/* A URL in place of a remote's name is judged as one. */
	assert_int_equal(judge(NULL, "", GD, "branch.main.remote",
	    "ext::sh -c x", NULL), GITCFG_RUNS);
	assert_int_equal(judge(NULL, "", GD, "branch.main.remote",
	    "http://127.0.0.1:1/r", NULL), GITCFG_DEST);
	assert_int_equal(judge("", "", GD, "branch.main.remote",
	    "/home/u/r.git", NULL), GITCFG_DEST);
	/* Submodules: added (submodule add, init), or changed. */
	assert_int_equal(judge(ORIGIN, ORIGIN, GD, "submodule.lib.url",
	    "https://h.example/lib", NULL), GITCFG_REMOTE);
	assert_int_equal(judge(ORIGIN, ORIGIN, GD, "submodule.lib.url",
	    "../lib.git", NULL), GITCFG_REMOTE);
	assert_int_equal(judge(ORIGIN "[submodule \"lib\"]\n\turl = x\n",
	    ORIGIN, GD, "submodule.lib.url", "https://e.example/lib", NULL),
	    GITCFG_DEST);
	assert_int_equal(judge(NULL, "[remote \"origin\"]\n\turl = "
	    "/nonexistent-ws/a/up.git\n", GD, "submodule.lib.url",
	    "../../../../home/u/x", NULL), GITCFG_DEST);
	assert_int_equal(judge(NULL, "[remote \"origin\"]\n\turl = "
	    "/nonexistent-ws/a/up.git\n", GD, "submodule.lib.url",
	    "../lib.git", NULL), GITCFG_REMOTE);
}

/* What the command removes: held when what stays sends work elsewhere. */
static void
test_class_removed(void **state)
{
	static const char both[] = ORIGIN "\tpushurl = https://h.example/p\n"
	    "[branch \"main\"]\n\tremote = origin\n\tmerge = m\n";
	struct gitcfg		 old, cfg, held;
	char			*cause = NULL;

	(void)state;
	assert_int_equal(gitcfg_parse(&old, both, strlen(both), &cause), 0);
	/* The pushurl goes, the remote stays: pushes go to its url. */
	assert_int_equal(gitcfg_parse(&cfg, ORIGIN, strlen(ORIGIN), &cause),
	    0);
	assert_int_equal(gitcfg_held(NULL, &old, &cfg, &held), 1);
	assert_string_equal(held.gc_v[0].ge_key, "remote.origin.pushurl");
	gitcfg_clear(&held);
	gitcfg_clear(&cfg);
	/* git remote remove origin, git branch -D main: nothing goes. */
	assert_int_equal(gitcfg_parse(&cfg, "", 0, &cause), 0);
	assert_int_equal(gitcfg_held(NULL, &old, &cfg, &held), 0);
	gitcfg_clear(&held);
	gitcfg_clear(&cfg);
	gitcfg_clear(&old);
}

/*
 * A git directory git itself made, judged where it lies: git init is
 * inert, a remote it adds is said, a work tree outside is not inert.
 */
static void
test_dir_inert(void **state)
{
	const char		*write[1];
	struct gitcfg_places	 pl;
	char			 tmp[PATH_MAX], *cmd, *gd, *why;
	int			 fd;

	(void)state;
	assert_int_equal(unit_tmpdir(tmp, "test_gitcfg"), 0);
	write[0] = tmp;
	memset(&pl, 0, sizeof(pl));
	pl.gp_write = write;
	pl.gp_nwrite = 1;
	xasprintf(&gd, "%s/r/.git", tmp);
	xasprintf(&cmd, "git init -q '%s/r' && git -C '%s/r' remote add "
	    "origin https://h.example/r.git", tmp, tmp);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_true((fd = open(gd, O_RDONLY | O_DIRECTORY)) != -1);
	assert_true(gitcfg_dir_inert(fd, &pl, &why));
	assert_contains(why, "remote.origin.url = https://h.example/r.git");
	free(why);
	xasprintf(&cmd, "git -C '%s/r' config core.worktree \"$HOME\"", tmp);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_false(gitcfg_dir_inert(fd, &pl, &why));
	assert_contains(why, "core.worktree");
	free(why);
	xasprintf(&cmd, "git -C '%s/r' config core.worktree '%s/r'", tmp,
	    tmp);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_true(gitcfg_dir_inert(fd, &pl, &why));
	free(why);
	close(fd);
	free(gd);
	/* A blobless clone: its promisor remote is said. */
	xasprintf(&gd, "%s/p/.git", tmp);
	xasprintf(&cmd, "git -C '%s/r' -c user.name=a -c user.email=a@b "
	    "commit -q --allow-empty -m a && git -C '%s/r' config "
	    "uploadpack.allowfilter true && git clone -q --filter=blob:none "
	    "'file://%s/r' '%s/p'", tmp, tmp, tmp, tmp);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_true((fd = open(gd, O_RDONLY | O_DIRECTORY)) != -1);
	assert_true(gitcfg_dir_inert(fd, &pl, &why));
	assert_contains(why, "remote.origin.promisor = true");
	free(why);
	close(fd);
	free(gd);
	assert_int_equal(unit_rmtree(tmp), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_git),
		cmocka_unit_test(test_inert),
		cmocka_unit_test(test_held),
		cmocka_unit_test(test_class_files),
		cmocka_unit_test(test_class_network),
		cmocka_unit_test(test_class_partial),
		cmocka_unit_test(test_class_url),
		cmocka_unit_test(test_class_dest),
		cmocka_unit_test(test_class_removed),
		cmocka_unit_test(test_dir_inert),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
