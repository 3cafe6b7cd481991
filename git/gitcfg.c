/*
 * gitcfg.c: a git config file read as git reads it, and which of its
 * keys make git run no program (the allowlist, gitcfg_inert); what
 * the others make git do is judged by effect in gitjudge.c.
 *
 * The check after the run keeps a repository the command made or
 * changed when all it could make the host's git do is what git does
 * with any clone: its config holds only keys that are inert where it
 * lies (gitjudge.c), its hooks are git's samples.  So this reader must
 * never be more lenient than git's: whatever it cannot read as git
 * would (a NUL byte, an escape git does not know, a line git calls
 * bad) is an error, and an error is never inert.
 * tests/unit/test_gitcfg.c compares it with `git config -l -z`.
 *
 * Inert is an allowlist (gitcfg_inert): a key git may run a program
 * for, or one not known here, is held back, whatever its value.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "git/git.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

/* A string that grows, for names and values. */
struct gitcfg_buf {
	char	*b_s;
	size_t	 b_len, b_size;
};

/* The text being read, one character at a time as git reads it. */
struct gitcfg_in {
	const char	*i_p, *i_end;
	bool		 i_eof;
	bool		 i_bad;		/* a NUL byte */
	size_t		 i_line;
};

static void
gitcfg_add(struct gitcfg_buf *b, char c)
{
	if (b->b_len + 2 > b->b_size) {
		b->b_size = b->b_size == 0 ? 32 : b->b_size * 2;
		b->b_s = xreallocarray(b->b_s, b->b_size, 1);
	}
	b->b_s[b->b_len++] = c;
	b->b_s[b->b_len] = '\0';
}

/* Git's own classes (sane_ctype), not the locale's. */
static bool
gitcfg_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool
gitcfg_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
gitcfg_keychar(int c)
{
	return gitcfg_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static int
gitcfg_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/*
 * The next character; "\r\n" reads as "\n", and the end as "\n" with
 * i_eof set, as in git.
 */
static int
gitcfg_next(struct gitcfg_in *in)
{
	int	 c;

	if (in->i_p >= in->i_end) {
		in->i_eof = true;
		return '\n';
	}
	c = (unsigned char)*in->i_p++;
	if (c == '\0')
		in->i_bad = true;
	if (c == '\r' && in->i_p < in->i_end && *in->i_p == '\n')
		c = (unsigned char)*in->i_p++;
	if (c == '\n')
		in->i_line++;
	return c;
}

/*
 * A value, after '=': whitespace outside quotes trimmed at both ends,
 * each inner one a space; '#' and ';' outside quotes begin a comment;
 * the escapes \t \b \n \\ \" and a backslash at the end of a line.
 * Returns 0, or -1 (a line git calls bad).
 */
static int
gitcfg_value(struct gitcfg_in *in, struct gitcfg_buf *v)
{
	bool	 quote = false, comment = false;
	size_t	 space = 0;
	int	 c;

	gitcfg_add(v, 'x');		/* an empty value is "", not NULL */
	v->b_len = 0;
	v->b_s[0] = '\0';
	for (;;) {
		c = gitcfg_next(in);
		if (c == '\n')
			return quote ? -1 : 0;
		if (comment)
			continue;
		if (gitcfg_space(c) && !quote) {
			if (v->b_len > 0)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		for (; space > 0; space--)
			gitcfg_add(v, ' ');
		if (c == '\\') {
			c = gitcfg_next(in);
			if (c == '\n')
				continue;	/* at the end too, as git */
			if (c == 't')
				c = '\t';
			else if (c == 'b')
				c = '\b';
			else if (c == 'n')
				c = '\n';
			else if (c != '\\' && c != '"')
				return -1;
		} else if (c == '"') {
			quote = !quote;
			continue;
		}
		gitcfg_add(v, (char)c);
	}
}

/*
 * A section header, after '[': "name" or "name.sub" (lower case), or
 * name "sub" with a quoted subsection kept as written (\x reads as x).
 * Returns 0 with s set to "name" or "name.sub", or -1.
 */
static int
gitcfg_section(struct gitcfg_in *in, struct gitcfg_buf *s)
{
	int	 c;

	s->b_len = 0;
	for (;;) {
		c = gitcfg_next(in);
		if (in->i_eof)
			return -1;
		if (c == ']')
			return s->b_len > 0 ? 0 : -1;
		if (gitcfg_space(c))
			break;
		if (!gitcfg_keychar(c) && c != '.')
			return -1;
		gitcfg_add(s, (char)gitcfg_lower(c));
	}
	if (s->b_len == 0)
		return -1;
	do {
		if (c == '\n')
			return -1;
		c = gitcfg_next(in);
	} while (gitcfg_space(c));
	if (c != '"')
		return -1;
	gitcfg_add(s, '.');
	for (;;) {
		c = gitcfg_next(in);
		if (c == '\n')
			return -1;
		if (c == '"')
			break;
		if (c == '\\' && (c = gitcfg_next(in)) == '\n')
			return -1;
		gitcfg_add(s, (char)c);
	}
	return gitcfg_next(in) == ']' ? 0 : -1;
}

/*
 * Appends key (section.name) and value (NULL: a bare name) to cfg.
 * Returns 0, or -1 past GITCFG_MAX entries.
 */
static int
gitcfg_push(struct gitcfg *cfg, const struct gitcfg_buf *sec,
    const struct gitcfg_buf *name, const struct gitcfg_buf *raw,
    const struct gitcfg_buf *value)
{
	struct gitcfg_ent	*e;

	if (cfg->gc_n >= GITCFG_MAX)
		return -1;
	cfg->gc_v = xreallocarray(cfg->gc_v, cfg->gc_n + 1,
	    sizeof(*cfg->gc_v));
	e = &cfg->gc_v[cfg->gc_n++];
	xasprintf(&e->ge_key, "%s.%s", sec->b_s, name->b_s);
	xasprintf(&e->ge_shown, "%s.%s", sec->b_s, raw->b_s);
	e->ge_value = value != NULL ? xstrdup(value->b_s) : NULL;
	return 0;
}

/*
 * A name (its first letter c already read) and its value, into cfg.
 * Returns 0, or -1.
 */
static int
gitcfg_entry(struct gitcfg_in *in, int c, struct gitcfg *cfg,
    const struct gitcfg_buf *sec)
{
	struct gitcfg_buf	 name, raw, value;
	int			 rc = -1;

	memset(&name, 0, sizeof(name));
	memset(&raw, 0, sizeof(raw));
	memset(&value, 0, sizeof(value));
	do {
		gitcfg_add(&name, (char)gitcfg_lower(c));
		gitcfg_add(&raw, (char)c);
		c = gitcfg_next(in);
	} while (!in->i_eof && gitcfg_keychar(c));
	while (c == ' ' || c == '\t')
		c = gitcfg_next(in);
	if (sec->b_len == 0)
		goto out;		/* git: a key without a section */
	if (c == '\n')
		rc = gitcfg_push(cfg, sec, &name, &raw, NULL);
	else if (c == '=' && gitcfg_value(in, &value) == 0)
		rc = gitcfg_push(cfg, sec, &name, &raw, &value);
out:
	free(name.b_s);
	free(raw.b_s);
	free(value.b_s);
	return rc;
}

/*
 * Reads len bytes of text as git reads a config file, into cfg (which
 * it clears first).  Returns 0, or -1 with *cause set (cfg cleared):
 * git would stop at that line too, or it holds a NUL byte.
 */
int
gitcfg_parse(struct gitcfg *cfg, const char *text, size_t len, char **cause)
{
	struct gitcfg_in	 in;
	struct gitcfg_buf	 sec;
	bool			 comment = false;
	int			 c, rc = 0;

	memset(cfg, 0, sizeof(*cfg));
	memset(&sec, 0, sizeof(sec));
	gitcfg_add(&sec, 'x');
	sec.b_len = 0;
	sec.b_s[0] = '\0';
	in.i_p = text;
	in.i_end = text + len;
	in.i_eof = in.i_bad = false;
	in.i_line = 1;
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		in.i_p += 3;
	while (rc == 0 && !in.i_bad) {
		c = gitcfg_next(&in);
		if (c == '\n') {
			if (in.i_eof)
				break;
			comment = false;
		} else if (comment || gitcfg_space(c))
			continue;
		else if (c == '#' || c == ';')
			comment = true;
		else if (c == '[')
			rc = gitcfg_section(&in, &sec);
		else if (!gitcfg_alpha(c))
			rc = -1;
		else
			rc = gitcfg_entry(&in, c, cfg, &sec);
	}
	free(sec.b_s);
	if (rc == 0 && !in.i_bad)
		return 0;
	xasprintf(cause, "%s at line %zu", in.i_bad ? "a NUL byte" :
	    "a line git does not read", in.i_line);
	gitcfg_clear(cfg);
	return -1;
}

void
gitcfg_clear(struct gitcfg *cfg)
{
	size_t	 i;

	for (i = 0; i < cfg->gc_n; i++) {
		free(cfg->gc_v[i].ge_key);
		free(cfg->gc_v[i].ge_shown);
		free(cfg->gc_v[i].ge_value);
	}
	free(cfg->gc_v);
	memset(cfg, 0, sizeof(*cfg));
}

/* A remote's URL that runs no program of its own choosing. */
static bool
gitcfg_url(const char *v)
{
	return v != NULL && strncasecmp(v, "ext::", 5) != 0 &&
	    strncasecmp(v, "fd::", 4) != 0;
}

/* submodule.NAME.update, but not "!command". */
static bool
gitcfg_update(const char *v)
{
	return v != NULL && (strcmp(v, "checkout") == 0 ||
	    strcmp(v, "rebase") == 0 || strcmp(v, "merge") == 0 ||
	    strcmp(v, "none") == 0);
}

/*
 * The inert keys: what git init, clone, fetch, push -u, remote add,
 * branch, submodule and worktree write, and the plain settings a person
 * sets by hand, none of which makes git run a program (git-config(1)).
 * "s.*.n" has a subsection; a name "*" is any name.
 */
static const struct {
	const char	*k;
	bool		(*ok)(const char *);	/* NULL: any value */
} gitcfg_rules[] = {
	{ "core.repositoryformatversion", NULL }, { "core.filemode", NULL },
	{ "core.bare", NULL }, { "core.logallrefupdates", NULL },
	{ "core.ignorecase", NULL }, { "core.precomposeunicode", NULL },
	{ "core.symlinks", NULL }, { "core.autocrlf", NULL },
	{ "core.eol", NULL }, { "core.safecrlf", NULL },
	{ "core.checkstat", NULL }, { "core.trustctime", NULL },
	{ "core.untrackedcache", NULL }, { "core.splitindex", NULL },
	{ "core.commitgraph", NULL }, { "core.multipackindex", NULL },
	{ "core.compression", NULL }, { "core.loosecompression", NULL },
	{ "core.abbrev", NULL }, { "core.quotepath", NULL },
	{ "core.whitespace", NULL }, { "core.sharedrepository", NULL },
	{ "core.worktree", NULL }, { "core.preloadindex", NULL },
	{ "extensions.objectformat", NULL },
	{ "extensions.worktreeconfig", NULL },
	{ "extensions.partialclone", NULL },
	{ "extensions.refstorage", NULL }, { "extensions.noop", NULL },
	{ "user.name", NULL }, { "user.email", NULL },
	{ "user.signingkey", NULL }, { "author.name", NULL },
	{ "author.email", NULL }, { "committer.name", NULL },
	{ "committer.email", NULL }, { "init.defaultbranch", NULL },
	{ "pull.rebase", NULL }, { "pull.ff", NULL },
	{ "push.default", NULL }, { "push.autosetupremote", NULL },
	{ "push.followtags", NULL }, { "fetch.prune", NULL },
	{ "fetch.prunetags", NULL }, { "fetch.recursesubmodules", NULL },
	{ "fetch.fsckobjects", NULL }, { "fetch.writecommitgraph", NULL },
	{ "merge.ff", NULL }, { "merge.conflictstyle", NULL },
	{ "rebase.autosquash", NULL }, { "rebase.autostash", NULL },
	{ "rebase.updaterefs", NULL }, { "status.showuntrackedfiles", NULL },
	{ "status.submodulesummary", NULL }, { "diff.renames", NULL },
	{ "diff.algorithm", NULL }, { "diff.submodule", NULL },
	{ "diff.colormoved", NULL }, { "log.date", NULL },
	{ "log.decorate", NULL }, { "color.*", NULL }, { "color.*.*", NULL },
	{ "gc.auto", NULL }, { "gc.autodetach", NULL },
	{ "index.version", NULL }, { "index.skiphash", NULL },
	{ "feature.manyfiles", NULL }, { "advice.*", NULL },
	{ "submodule.recurse", NULL }, { "submodule.active", NULL },
	{ "submodule.fetchjobs", NULL }, { "receive.denycurrentbranch", NULL },
	{ "transfer.fsckobjects", NULL }, { "clone.defaultremotename", NULL },
	{ "lfs.repositoryformatversion", NULL },
	{ "maintenance.auto", NULL }, { "maintenance.strategy", NULL },
	{ "rerere.enabled", NULL }, { "rerere.autoupdate", NULL },
	{ "tag.sort", NULL },
	{ "remote.*.url", gitcfg_url }, { "remote.*.pushurl", gitcfg_url },
	{ "remote.*.fetch", NULL }, { "remote.*.push", NULL },
	{ "remote.*.mirror", NULL }, { "remote.*.tagopt", NULL },
	{ "remote.*.prune", NULL }, { "remote.*.prunetags", NULL },
	{ "remote.*.skipdefaultupdate", NULL },
	{ "remote.*.skipfetchall", NULL }, { "remote.*.promisor", NULL },
	{ "remote.*.partialclonefilter", NULL },
	{ "remote.pushdefault", NULL },
	{ "branch.*.remote", NULL }, { "branch.*.pushremote", NULL },
	{ "branch.*.merge", NULL }, { "branch.*.rebase", NULL },
	{ "branch.*.description", NULL },
	{ "branch.*.vscode-merge-base", NULL },
	{ "submodule.*.url", gitcfg_url }, { "submodule.*.path", NULL },
	{ "submodule.*.active", NULL }, { "submodule.*.branch", NULL },
	{ "submodule.*.update", gitcfg_update },
	{ "submodule.*.fetchrecursesubmodules", NULL },
	{ "submodule.*.ignore", NULL }, { "submodule.*.shallow", NULL }
};

/* Does the part of a key p (len bytes) match the rule's part r? */
static bool
gitcfg_part(const char *r, size_t rlen, const char *p, size_t len)
{
	return (rlen == 1 && *r == '*') || (rlen == len &&
	    memcmp(r, p, len) == 0);
}

/*
 * Is key (section[.sub].name, as gitcfg_parse gives it) with value
 * inert by name: can git, reading it, run no program and read no code
 * from elsewhere?  What it makes git do otherwise (write files, reach
 * the network, push elsewhere) is gitjudge_class's to say.
 */
bool
gitcfg_inert(const char *key, const char *value)
{
	const char	*dot, *last, *r, *rdot, *rlast;
	size_t		 i;

	if ((dot = strchr(key, '.')) == NULL)
		return false;
	last = strrchr(key, '.');
	for (i = 0; i < nitems(gitcfg_rules); i++) {
		r = gitcfg_rules[i].k;
		rdot = strchr(r, '.');
		rlast = strrchr(r, '.');
		if ((rdot == rlast) != (dot == last) ||
		    !gitcfg_part(r, (size_t)(rdot - r), key,
		    (size_t)(dot - key)) ||
		    !gitcfg_part(rlast + 1, strlen(rlast + 1), last + 1,
		    strlen(last + 1)))
			continue;
		return gitcfg_rules[i].ok == NULL || gitcfg_rules[i].ok(value);
	}
	return false;
}

static bool
gitcfg_same(const struct gitcfg_ent *a, const struct gitcfg_ent *b)
{
	if (strcmp(a->ge_key, b->ge_key) != 0)
		return false;
	if (a->ge_value == NULL || b->ge_value == NULL)
		return a->ge_value == b->ge_value;
	return strcmp(a->ge_value, b->ge_value) == 0;
}

/* Does cfg hold e, key and value alike? */
bool
gitcfg_has(const struct gitcfg *cfg, const struct gitcfg_ent *e)
{
	size_t	 i;

	for (i = 0; i < cfg->gc_n; i++)
		if (gitcfg_same(&cfg->gc_v[i], e))
			return true;
	return false;
}

/*
 * Entries of a that b does not have (as multisets) and that cx holds
 * back, to held: added to cfg (removed false), or taken from it.
 */
static void
gitcfg_missing(const struct gitcfg_ctx *cx, const struct gitcfg *a,
    const struct gitcfg *b, const struct gitcfg *cfg, bool removed,
    struct gitcfg *held)
{
	const struct gitcfg_ent	*e;
	bool			*used;
	char			*why;
	size_t			 i, j;
	enum gitcfg_class	 c;

	used = xcalloc(b->gc_n + 1, sizeof(*used));
	for (i = 0; i < a->gc_n; i++) {
		e = &a->gc_v[i];
		for (j = 0; j < b->gc_n; j++)
			if (!used[j] && gitcfg_same(e, &b->gc_v[j]))
				break;
		if (j < b->gc_n) {
			used[j] = true;
			continue;
		}
		c = gitjudge_class(cx, cfg, e, removed, &why);
		free(why);
		if (!gitjudge_held(c))
			continue;
		held->gc_v = xreallocarray(held->gc_v, held->gc_n + 1,
		    sizeof(*held->gc_v));
		held->gc_v[held->gc_n].ge_key = xstrdup(e->ge_key);
		held->gc_v[held->gc_n].ge_shown = xstrdup(e->ge_shown);
		held->gc_v[held->gc_n++].ge_value = e->ge_value != NULL ?
		    xstrdup(e->ge_value) : NULL;
	}
	free(used);
}

/*
 * What of cfg must be held back: with old NULL, its entries that are
 * held where they are (a new repository); else the entries added,
 * changed or removed since old that are.  cx says where (NULL: nowhere
 * known, old the config before).  Fills held (cleared first); returns
 * how many.
 */
size_t
gitcfg_held(const struct gitcfg_ctx *cx, const struct gitcfg *old,
    const struct gitcfg *cfg, struct gitcfg *held)
{
	struct gitcfg		 none;
	struct gitcfg_ctx	 nowhere;

	memset(held, 0, sizeof(*held));
	memset(&none, 0, sizeof(none));
	if (cx == NULL) {
		memset(&nowhere, 0, sizeof(nowhere));
		nowhere.gx_base = old;
		cx = &nowhere;
	}
	gitcfg_missing(cx, cfg, old != NULL ? old : &none, cfg, false, held);
	if (old != NULL)
		gitcfg_missing(cx, old, cfg, cfg, true, held);
	return held->gc_n;
}

/*
 * The text of the regular file name below dfd (AT_FDCWD: a path), at
 * most GITCFG_FILE_MAX bytes, following no link, terminated; *len its
 * length.  Returns it, or NULL with errno set: the open's, EINVAL when
 * it is not a regular file or is too large, EAGAIN when it changed
 * while read.
 */
char *
gitcfg_read_text(int dfd, const char *name, size_t *len)
{
	struct stat	 st;
	char		*text = NULL;
	ssize_t		 n;
	int		 fd, saved;

	if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > GITCFG_FILE_MAX)
		errno = EINVAL;
	else {
		text = xmalloc((size_t)st.st_size + 1);
		if ((n = read(fd, text, (size_t)st.st_size + 1)) !=
		    st.st_size) {
			free(text);
			text = NULL;
			errno = EAGAIN;
		} else {
			text[n] = '\0';
			*len = (size_t)n;
		}
	}
	saved = errno;
	close(fd);
	errno = saved;
	return text;
}

/*
 * Reads the config file name of the git directory dfd into cfg (empty
 * when there is none).  Returns 0, or -1 with *why set: a link, not a
 * file, too large, or not read as git reads it.
 */
static int
gitcfg_read_file(int dfd, const char *name, struct gitcfg *cfg, char **why)
{
	char		*text, *cause;
	size_t		 len = 0;
	int		 rc = 0;

	memset(cfg, 0, sizeof(*cfg));
	if ((text = gitcfg_read_text(dfd, name, &len)) == NULL) {
		if (errno == ENOENT)
			return 0;
		if (errno == EINVAL)
			xasprintf(why, "its %s is not a file git would read as "
			    "one, or is larger than %d bytes", name,
			    GITCFG_FILE_MAX);
		else if (errno == EAGAIN)
			xasprintf(why, "its %s changed while read", name);
		else
			xasprintf(why, "its %s cannot be opened (%s)", name,
			    errno == ELOOP ? "a symbolic link" :
			    strerror(errno));
		return -1;
	}
	if (gitcfg_parse(cfg, text, len, &cause) == -1) {
		xasprintf(why, "its %s is not read as git reads it (%s)", name,
		    cause);
		free(cause);
		rc = -1;
	}
	free(text);
	return rc;
}

/* The hooks folder of dfd holds git's samples only.  Else *why is set. */
static bool
gitcfg_hooks_inert(int dfd, char **why)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*dp;
	size_t		 len;
	int		 fd;
	bool		 ok = true;

	if ((fd = openat(dfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return true;
		xasprintf(why, "its hooks folder is %s", errno == ELOOP ||
		    errno == ENOTDIR ? "a link or a file" : strerror(errno));
		return false;
	}
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		xasprintf(why, "its hooks folder cannot be read");
		return false;
	}
	while (ok && (de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		len = strlen(de->d_name);
		ok = len > 7 && strcmp(de->d_name + len - 7, ".sample") == 0 &&
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode);
		if (!ok)
			xasprintf(why, "the hook %s", de->d_name);
	}
	closedir(dp);
	return ok;
}

/*
 * Judges each entry of cfg (the file name of a new repository, cx) in
 * turn: the first held back sets *why and returns false; the URLs of
 * remotes it adds are appended to *said ("KEY = URL, ...").
 */
static bool
gitcfg_judge_new(const struct gitcfg_ctx *cx, const struct gitcfg *cfg,
    const char *name, char **why, char **said)
{
	const struct gitcfg_ent	*e;
	char			*k, *v, *r, *line;
	size_t			 i;
	enum gitcfg_class	 c;

	for (i = 0; i < cfg->gc_n; i++) {
		e = &cfg->gc_v[i];
		c = gitjudge_class(cx, cfg, e, false, &r);
		if (c != GITCFG_REMOTE && !gitjudge_held(c))
			continue;
		k = str_escape(e->ge_shown, strlen(e->ge_shown));
		v = e->ge_value != NULL ? str_escape(e->ge_value,
		    strlen(e->ge_value)) : xstrdup("(none)");
		if (c == GITCFG_RUNS)	/* its value may be a long program */
			xasprintf(why, "%s in its %s", k, name);
		else if (gitjudge_held(c))
			xasprintf(why, "%s = %s in its %s: %s", k, v, name, r);
		else {
			xasprintf(&line, "%s = %s", k, v);
			str_append(said, ", ", line);
			free(line);
		}
		free(k);
		free(v);
		free(r);
		if (gitjudge_held(c))
			return false;
	}
	return true;
}

/*
 * Is the git directory dfd, which the command made, inert, so that git
 * on the host, in it, does only what git does in any clone: its config
 * and config.worktree hold only keys inert where it lies (gitjudge.c,
 * pl the places the command could write and was shown), and its hooks
 * are git's samples (NAME.sample, which git never runs)?  Returns
 * true, with *why set to the remotes it adds (for the user) or NULL;
 * or false with *why set (what git on the host would do).
 */
bool
gitcfg_dir_inert(int dfd, const struct gitcfg_places *pl, char **why)
{
	static const char *const files[] = { "config", "config.worktree" };
	struct gitcfg_ctx	 cx;
	struct gitcfg		 cfg;
	char			 proc[64], dir[PATH_MAX], *said = NULL;
	ssize_t			 n;
	size_t			 i;
	bool			 ok = true;

	*why = NULL;
	memset(&cx, 0, sizeof(cx));
	cx.gx_places = pl;
	(void)snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dfd);
	if ((n = readlink(proc, dir, sizeof(dir) - 1)) > 0 && dir[0] == '/') {
		dir[n] = '\0';
		cx.gx_gitdir = dir;
	}
	for (i = 0; ok && i < nitems(files); i++) {
		if (gitcfg_read_file(dfd, files[i], &cfg, why) == -1) {
			free(said);
			return false;
		}
		ok = gitcfg_judge_new(&cx, &cfg, files[i], why, &said);
		gitcfg_clear(&cfg);
	}
	if (ok && (ok = gitcfg_hooks_inert(dfd, why)))
		*why = said;
	else
		free(said);
	return ok;
}

/* Frees the arrays of pl (not the strings, which are borrowed). */
void
gitcfg_places_clear(struct gitcfg_places *pl)
{
	free(pl->gp_write);
	free(pl->gp_show);
	memset(pl, 0, sizeof(*pl));
}

/*
 * Whether path is the user's own git config (~/.gitconfig, or
 * ~/.config/git/config), which every repository of theirs reads.
 */
bool
gitcfg_user_config(const char *path)
{
	size_t	 len = strlen(path);

	return (len > 11 && strcmp(path + len - 11, "/.gitconfig") == 0) ||
	    (len > 18 && strcmp(path + len - 18, "/.config/git/config") == 0);
}
