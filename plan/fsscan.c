/*
 * fsscan.c: the mount plan's scan of the writable roots for the
 * repositories in them, and for what makes git run a program there.
 * The first step of the plan: roots in, findings out (fsscan.h), paths
 * to protect with where each leads (fspath.c) and why, and the
 * repositories' identities; the planner (fsplan.c) protects them.
 *
 * Every writable root is scanned, breadth first and bounded, without
 * following symlinks, for `.git` (directory, symlink, or file with
 * `gitdir:`, then that gitdir's `commondir`), `.hg`, and the folders git
 * takes for a repository with no `.git` name at all (HEAD with objects
 * and refs, or with commondir).  Of a git directory, what makes git run
 * a program or read another repository is found to protect
 * (fsscan_gitdir), since a host tool runs hooks and config from there,
 * and the rest left writable, so that commits work; a `.hg` is
 * protected whole.  Each is remembered by identity for the check after
 * the run (guard.c).  Of a git repository, so are the hooks it runs
 * from outside it: the folder core.hooksPath names, and the target of
 * each hook that is a link.  `.git` and `.hg` are not entered by the
 * scan.  node_modules is scanned too, as a nested
 * repository there is as dangerous as anywhere, but after everything
 * else, so that when the bound is reached it is there.  Mount points of
 * other filesystems are entered too: a recursive writable bind makes
 * them writable as well.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/dir.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fscache.h"
#include "plan/fslist.h"
#include "plan/fspath.h"
#include "plan/fsscan.h"
#include "plan/plan.h"

#define FSSCAN_GITFILE_MAX	4096	/* bytes read of a .git or commondir */
#define FSSCAN_CONFIG_MAX	(256 * 1024)	/* of a git config */

#define WHY_GIT		"protected: git repository"
#define WHY_GITDIR	"protected: git directory of a .git file"
#define WHY_COMMONDIR	"protected: git common directory"
#define WHY_HG		"protected: mercurial repository"
#define WHY_BARE	"protected: bare git repository"
#define WHY_HOOKS	"protected: git hooks (core.hooksPath)"
#define WHY_HOOK	"protected: target of a git hook link"
#define WHY_GITCODE	FS_WHY_GITCODE
#define FSSCAN_MODULES_DEPTH	8	/* .git/modules/a/modules/b/... */

/* A folder waiting to be scanned. */
struct fsscan_dir {
	char		*d_path;
	bool		 d_late;	/* under node_modules */
};

struct fsscan_queue {
	struct fsscan_dir	*q_v;
	size_t		 q_n;
	size_t		 q_head;
	size_t		 q_cap;
};

/*
 * Reads at most max bytes of the regular file name in dirpath, not
 * following a symlink, not blocking on a FIFO.  Returns them,
 * NUL-terminated, or NULL.
 */
static char *
fsscan_read(const char *dirpath, const char *name, size_t max)
{
	struct stat	 st;
	char		*path, *buf;
	ssize_t		 n;
	int		 fd;

	xasprintf(&path, "%s/%s", strcmp(dirpath, "/") == 0 ? "" : dirpath,
	    name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(path);
	if (fd == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	buf = xmalloc(max + 1);
	n = read(fd, buf, max);
	close(fd);
	if (n <= 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* The first line of a file (fsscan_read), without its line end. */
static char *
fsscan_read_line(const char *dirpath, const char *name)
{
	char	*buf;

	if ((buf = fsscan_read(dirpath, name, FSSCAN_GITFILE_MAX)) != NULL)
		buf[strcspn(buf, "\r\n")] = '\0';
	return buf;
}

/*
 * core.hooksPath of a git config, or NULL: git runs the hooks there
 * instead of in hooks/ (husky sets it to a folder of the worktree,
 * which the command can write).  A plain reading of the format: a
 * [core] section, a hooksPath key, names in any case, a value perhaps
 * quoted; the last one wins.  Includes are not followed.
 */
static char *
fsscan_hooks_path(const char *gitdir)
{
	char	*text, *line, *next, *k, *v, *found = NULL;
	bool	 core = false;
	size_t	 n;

	if ((text = fsscan_read(gitdir, "config", FSSCAN_CONFIG_MAX)) == NULL)
		return NULL;
	for (line = text; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		line += strspn(line, " \t");
		if (*line == '[') {
			n = strcspn(line + 1, " \t]\"");
			core = n == 4 && line[5] == ']' &&
			    strncasecmp(line + 1, "core", 4) == 0;
			continue;
		}
		if (!core || (v = strchr(line, '=')) == NULL)
			continue;
		*v++ = '\0';
		for (k = v - 1; k > line && (k[-1] == ' ' || k[-1] == '\t');)
			*--k = '\0';
		if (strcasecmp(line, "hookspath") != 0)
			continue;
		v += strspn(v, " \t");
		v[strcspn(v, "\r")] = '\0';
		for (n = strlen(v); n > 0 && (v[n - 1] == ' ' ||
		    v[n - 1] == '\t'); n--)
			v[n - 1] = '\0';
		if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
			v[n - 1] = '\0';
			v++;
		}
		free(found);
		found = *v != '\0' ? xstrdup(v) : NULL;
	}
	free(text);
	return found;
}

/* Joins a path that may be relative to dir; the caller frees it. */
static char *
fsscan_join(const char *dir, const char *path)
{
	char	*s;

	if (path[0] == '/')
		return xstrdup(path);
	xasprintf(&s, "%s/%s", dir, path);
	return s;
}

#define FSSCAN_FILE	0x1	/* fsscan_protect: missing, blocked by a file */
#define FSSCAN_DOT	0x2	/* ... that reads "./" */
#define FSSCAN_GIT	0x4	/* ... a git directory: its code only */

static void	fsscan_gitdir(struct fsscan *, const char *, int);

/*
 * A path to protect for the rule why, as how says: where it leads
 * (fspath.c) kept as a finding, for the planner to protect.  When it
 * exists it is known to the guard by identity, and with FSSCAN_GIT a
 * folder is a git directory: only what makes git run a program or look
 * elsewhere is protected in it (fsscan_gitdir), so that commits work.
 * Returns the resolved path when it exists (the caller frees it), else
 * NULL.
 */
static char *
fsscan_protect(struct fsscan *s, const char *path, int how, const char *why)
{
	struct fsscan_find	*sf;
	struct stat		 st;
	char			*found = NULL;

	s->fs_finds = xreallocarray(s->fs_finds, s->fs_nfinds + 1,
	    sizeof(*s->fs_finds));
	sf = &s->fs_finds[s->fs_nfinds++];
	memset(sf, 0, sizeof(*sf));
	fspath_resolve(s->fs_cache, path, &sf->sf_at);
	sf->sf_why = why;
	sf->sf_file = how & FSSCAN_FILE;
	sf->sf_dot = how & FSSCAN_DOT;
	if (sf->sf_at.pr_note != NULL)
		fspath_note(&s->fs_notes, &s->fs_nnotes, "%s",
		    sf->sf_at.pr_note);
	if (sf->sf_at.pr_res != FSPATH_FOUND)
		return NULL;
	found = xstrdup(sf->sf_at.pr_path);
	if (fscache_lstat(s->fs_cache, found, &st) == 0)
		fspath_mark(&s->fs_marks, &s->fs_nmarks, &st);
	if (sf->sf_at.pr_dir && (how & FSSCAN_GIT)) {
		sf->sf_gitdir = true;
		fsscan_gitdir(s, found, 0);	/* moves s->fs_finds */
	}
	return found;
}

/* Opens a folder to list, following no symlink on the way. */
static int
fsscan_opendir(const char *path)
{
	struct open_how	 how;
	int		 fd;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd == -1 && errno == ENOSYS)
		fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	return fd;
}

/*
 * Calls fn on each entry of the folder dir of type type (S_IFDIR,
 * S_IFLNK; links not followed), with its path and depth; nothing when
 * dir is not a folder.
 */
static void
fsscan_each(struct fsscan *s, const char *dir, mode_t type, int depth,
    void (*fn)(struct fsscan *, const char *, int))
{
	struct dir_reader	 dr;
	const struct dirent64	*de;
	struct stat		 st;
	char			*sub;
	int			 fd;

	if ((fd = fsscan_opendir(dir)) == -1)
		return;
	dir_begin(&dr, fd);
	while ((de = dir_next(&dr)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    (st.st_mode & S_IFMT) != type)
			continue;
		xasprintf(&sub, "%s/%s", dir, de->d_name);
		fn(s, sub, depth);
		free(sub);
	}
	close(fd);
}

/*
 * A link in a hooks folder: its target is protected (a committed
 * `.git/hooks/pre-commit -> ../../scripts/pre-commit` runs a file the
 * command could rewrite).
 */
static void
fsscan_hook_link(struct fsscan *s, const char *link, int depth)
{
	(void)depth;
	free(fsscan_protect(s, link, 0, WHY_HOOK));
}

/* The links in the hooks folder dir (fsscan_hook_link). */
static void
fsscan_hook_links(struct fsscan *s, const char *dir)
{
	fsscan_each(s, dir, S_IFLNK, 0, fsscan_hook_link);
}

/*
 * The hooks git runs for the git directory gitdir of the worktree
 * worktree: those in its hooks folder, and those of the folder
 * core.hooksPath names, which is protected whole (it is often in the
 * worktree: husky's .husky).
 */
static void
fsscan_hooks(struct fsscan *s, const char *gitdir, const char *worktree)
{
	const char	*home;
	char		*hp, *dir, *path;

	xasprintf(&dir, "%s/hooks", gitdir);
	fsscan_hook_links(s, dir);
	free(dir);
	if ((hp = fsscan_hooks_path(gitdir)) == NULL)
		return;
	if (hp[0] == '~' && hp[1] == '/' && (home = getenv("HOME")) != NULL)
		xasprintf(&path, "%s%s", home, hp + 1);
	else
		path = fsscan_join(worktree, hp);
	dir = fsscan_protect(s, path, 0, WHY_HOOKS);
	if (dir != NULL)
		fsscan_hook_links(s, dir);
	free(dir);
	free(path);
	free(hp);
}

/*
 * A `.git` file (a worktree or a submodule) in dir: protects the
 * gitdir it names and, if that has one, the common directory.
 */
static void
fsscan_gitfile(struct fsscan *s, const char *dir)
{
	char	*line, *gitdir, *common, *resolved;

	if ((line = fsscan_read_line(dir, ".git")) == NULL)
		return;
	if (strncmp(line, "gitdir:", 7) != 0) {
		free(line);
		return;
	}
	gitdir = fsscan_join(dir, line + 7 + strspn(line + 7, " \t"));
	free(line);
	resolved = fsscan_protect(s, gitdir, FSSCAN_GIT, WHY_GITDIR);
	free(gitdir);
	if (resolved == NULL)
		return;
	fsscan_hooks(s, resolved, dir);
	if ((line = fsscan_read_line(resolved, "commondir")) != NULL) {
		if (*line != '\0') {
			common = fsscan_join(resolved, line);
			gitdir = fsscan_protect(s, common, FSSCAN_GIT,
			    WHY_COMMONDIR);
			if (gitdir != NULL)
				fsscan_hooks(s, gitdir, dir);
			free(gitdir);
			free(common);
		}
		free(line);
	}
	free(resolved);
}

/*
 * What, in a git directory, makes git run a program or read another
 * repository (git-config(1), githooks(5), gitattributes(5),
 * gitrepository-layout(5)): read-only, and blocked when missing, so the
 * command cannot plant core.fsmonitor, core.sshCommand, a hook, a
 * filter driver's attribute or an alternate object store for the host's
 * git.  A final '/' is a folder; a final '.' (commondir.) a file that,
 * when missing, is blocked by one that reads "./" (git takes an empty
 * one for an error, and "./" for the git directory itself; so does
 * libgit2, which does not for "."), on the host too.
 * A gitdir file is not blocked here: git reads one only in a linked
 * worktree's folder (fsscan_worktree_code), and libgit2 takes a git
 * directory that holds one, beside a commondir, for a linked worktree's,
 * and no longer finds the repository (cargo new then makes one inside).
 * Everything else (objects, refs, packed-refs, the index, logs, HEAD,
 * ORIG_HEAD, FETCH_HEAD, rebase and sequencer state) stays writable:
 * commits, branches, rebases, stashes, fetches and gc work.
 */
static const char *const fsscan_git_code[] = {
	"config", "config.worktree", "commondir.", "hooks/",
	"info/attributes", "objects/info/alternates",
	"objects/info/http-alternates"
};

/* The same in a linked worktree's folder (worktrees/NAME). */
static const char *const fsscan_worktree_code[] = {
	"config.worktree", "commondir", "gitdir"
};

static void
fsscan_protect_all(struct fsscan *s, const char *dir, const char *const *v,
    size_t n)
{
	size_t	 i, len;
	char	*path, last;

	for (i = 0; i < n; i++) {
		len = strlen(v[i]);
		last = v[i][len - 1];
		xasprintf(&path, "%s/%.*s", dir, (int)(last == '/' ||
		    last == '.' ? len - 1 : len), v[i]);
		free(fsscan_protect(s, path, last == '/' ? 0 : last == '.' ?
		    FSSCAN_FILE | FSSCAN_DOT : FSSCAN_FILE, WHY_GITCODE));
		free(path);
	}
}

/* A linked worktree's folder (gitdir/worktrees/NAME). */
static void
fsscan_worktree(struct fsscan *s, const char *dir, int depth)
{
	(void)depth;
	fsscan_protect_all(s, dir, fsscan_worktree_code,
	    nitems(fsscan_worktree_code));
}

/*
 * A folder under gitdir/modules: a submodule's git directory when it
 * holds HEAD, else a folder of a NAME with '/' in it, looked into.
 */
static void
fsscan_module(struct fsscan *s, const char *dir, int depth)
{
	struct stat	 st;
	char		*head;

	if (depth > FSSCAN_MODULES_DEPTH)
		return;
	xasprintf(&head, "%s/HEAD", dir);
	if (lstat(head, &st) == 0)
		fsscan_gitdir(s, dir, depth + 1);
	else
		fsscan_each(s, dir, S_IFDIR, depth + 1, fsscan_module);
	free(head);
}

/*
 * A git directory found in a writable folder (resolved, a folder): its
 * code protected (fsscan_git_code), and so in each linked worktree's
 * folder and each submodule's git directory in it.
 */
static void
fsscan_gitdir(struct fsscan *s, const char *gitdir, int depth)
{
	char	*dir;

	fsscan_protect_all(s, gitdir, fsscan_git_code,
	    nitems(fsscan_git_code));
	xasprintf(&dir, "%s/worktrees", gitdir);
	fsscan_each(s, dir, S_IFDIR, depth, fsscan_worktree);
	free(dir);
	xasprintf(&dir, "%s/modules", gitdir);
	fsscan_each(s, dir, S_IFDIR, depth, fsscan_module);
	free(dir);
}

/* Queues a folder to scan; takes path. */
static void
fsscan_push(struct fsscan_queue *q, char *path, bool late)
{
	q->q_v = xmalloc_grow(q->q_v, q->q_n, &q->q_cap, sizeof(*q->q_v));
	q->q_v[q->q_n].d_path = path;
	q->q_v[q->q_n].d_late = late;
	q->q_n++;
}

/*
 * A .git or .hg met by the scan in dir (st: the entry, not followed):
 * protected whole, known to the guard by identity (a link or a .git
 * file too, not only where it leads), and for git the hooks it runs.
 */
static void
fsscan_repo(struct fsscan *s, const char *dir, const char *child,
    const struct stat *st, bool git)
{
	char		*gitdir;

	fspath_mark(&s->fs_marks, &s->fs_nmarks, st);
	gitdir = fsscan_protect(s, child, git ? FSSCAN_GIT : 0,
	    git ? WHY_GIT : WHY_HG);
	if (git && S_ISREG(st->st_mode))
		fsscan_gitfile(s, dir);
	else if (git && gitdir != NULL)
		fsscan_hooks(s, gitdir, dir);
	free(gitdir);
}

/*
 * Lists one folder: protects the repositories in it and queues its
 * subfolders.  Returns false when the bound is reached.
 */
static bool
fsscan_dir(struct fsscan *s, const struct fsscan_dir *d, size_t max,
    struct fsscan_queue *now, struct fsscan_queue *late)
{
	struct fslist_seen	 seen;
	struct dir_reader	 dr;
	const struct dirent64	*de;
	struct stat		 st;
	char			*child;
	const char		*base;
	bool			 more = true, whole = true, git, hg, isdir;
	unsigned		 mark;
	int			 fd;

	if ((fd = fsscan_opendir(d->d_path)) == -1) {
		if (errno != ENOENT && errno != ELOOP && errno != ENOTDIR)
			fspath_note(&s->fs_notes, &s->fs_nnotes,
			    "%s: %s: not scanned for repositories",
			    d->d_path, strerror(errno));
		return true;
	}
	base = strcmp(d->d_path, "/") == 0 ? "" : d->d_path;
	memset(&seen, 0, sizeof(seen));
	dir_begin(&dr, fd);
	while ((de = dir_next(&dr)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (s->fs_scanned == max) {
			more = whole = false;
			break;
		}
		s->fs_scanned++;
		seen.ls_entries++;
		seen.ls_marks |= mark = fslist_mark(de->d_name);
		git = (mark & FSLIST_GIT) != 0;
		hg = (mark & FSLIST_HG) != 0;
		if (!git && !hg && de->d_type != DT_DIR &&
		    de->d_type != DT_UNKNOWN)
			continue;
		/* A folder's type is in its entry: no stat needed. */
		if (!git && !hg && de->d_type == DT_DIR)
			st.st_mode = S_IFDIR;
		else if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    -1) {
			whole &= errno == ENOENT;
			continue;
		}
		isdir = S_ISDIR(st.st_mode);
		child = path_join(base, de->d_name);
		if ((git || hg) && (isdir || S_ISLNK(st.st_mode) ||
		    (git && S_ISREG(st.st_mode)))) {
			fsscan_repo(s, d->d_path, child, &st, git);
			free(child);
		} else if (isdir && !git && !hg) {
			fslist_sub(&seen, de->d_name);
			if (d->d_late ||
			    strcmp(de->d_name, "node_modules") == 0)
				fsscan_push(late, child, true);
			else
				fsscan_push(now, child, false);
		} else
			free(child);
	}
	/* Read whole: kept for the check after the run (fslist.c). */
	if (whole && de == NULL && errno == 0 && fstat(fd, &st) == 0)
		fslist_put(s->fs_lists, fd, &st, s->fs_taken, &seen);
	mark = seen.ls_marks;
	fslist_seen_clear(&seen);
	close(fd);
	if (fslist_gitdir(mark)) {
		free(fsscan_protect(s, d->d_path, FSSCAN_GIT, WHY_BARE));
		fsscan_hooks(s, d->d_path, d->d_path);
	}
	return more;
}

/*
 * Scans the writable folders for repositories, breadth first, folders
 * under node_modules last, up to f_scan_max entries in all.  A root
 * inside another is scanned with it.  Paths are resolved through the
 * cache c (NULL: the scan's own).
 */
void
fsscan_run(struct fscache *c, struct fslist *l, const char *const *roots,
    size_t nroots, size_t max, struct fsscan *s)
{
	struct fsscan_queue	 now, late;
	struct fsscan_queue	*q;
	struct fsscan_dir		 d;
	size_t			 i, j;
	bool			 inner, more = true;

	memset(s, 0, sizeof(*s));
	s->fs_cache = c != NULL ? c : fscache_new();
	s->fs_lists = l;
	s->fs_taken = time(NULL);
	memset(&now, 0, sizeof(now));
	memset(&late, 0, sizeof(late));
	for (i = 0; i < nroots; i++) {
		inner = false;
		for (j = 0; j < nroots && !inner; j++) {
			if (strcmp(roots[i], roots[j]) == 0)
				inner = j < i;
			else
				inner = path_is_below(roots[i],
				    roots[j]);
		}
		if (!inner)
			fsscan_push(&now, xstrdup(roots[i]), false);
	}
	while (more) {
		q = now.q_head < now.q_n ? &now : &late;
		if (q->q_head == q->q_n)
			break;
		d = q->q_v[q->q_head++];	/* q_v moves as it grows */
		more = fsscan_dir(s, &d, max, &now, &late);
		free(d.d_path);
	}
	if (!more)
		fspath_note(&s->fs_notes, &s->fs_nnotes, "the scan for "
		    "repositories stopped after %zu "
		    "entries, its bound: a .git deeper in the writable "
		    "folders may be writable", s->fs_scanned);
	for (i = now.q_head; i < now.q_n; i++)
		free(now.q_v[i].d_path);
	for (i = late.q_head; i < late.q_n; i++)
		free(late.q_v[i].d_path);
	free(now.q_v);
	free(late.q_v);
	if (c == NULL)
		fscache_free(s->fs_cache);
	s->fs_cache = NULL;
	fslist_turn(l);
	s->fs_lists = NULL;
}

/* Frees what the scan found and empties it. */
void
fsscan_clear(struct fsscan *s)
{
	size_t	 i;

	for (i = 0; i < s->fs_nfinds; i++)
		fspath_clear(&s->fs_finds[i].sf_at);
	free(s->fs_finds);
	free(s->fs_marks);
	for (i = 0; i < s->fs_nnotes; i++)
		free(s->fs_notes[i]);
	free(s->fs_notes);
	memset(s, 0, sizeof(*s));
}
