/*
 * fsplan.c: the mount plan of `cordon run`, made before anything is
 * mounted.
 *
 * From the policy's write, read_only and deny lists and the tree on disk
 * it makes an ordered list of operations (runner.h, struct fs_op):
 *
 * - Every path is resolved by hand, component by component, so each
 *   symlink met is seen.  A mount target never goes through a symlink
 *   (the attack: `ws/.git -> /elsewhere`, so a read-only bind of ws/.git
 *   lands elsewhere and the real name stays writable).  A symlink met in
 *   a writable place on the way to a protected or hidden path is pinned
 *   (FS_PIN_LINK), and its target gets the protection.
 * - A protected path that does not exist, inside a writable root, is
 *   blocked at its first missing component (FS_BLOCK), so the command
 *   cannot create `.cordon/policy.json` or a `.git` with hooks for the
 *   host's git to run later.  A hidden one that does not exist is left
 *   alone: there is nothing to hide, and blocking `~/.config/gcloud`
 *   would keep a writable home from getting a `~/.config`.  A protected path under a regular
 *   file (`ws/file/.git`) pins that file read-only: else the command
 *   could replace the file by a directory holding the path.
 * - Every writable root is scanned, breadth first and bounded, without
 *   following symlinks, for `.git` (directory, symlink, or file with
 *   `gitdir:`, then that gitdir's `commondir`) and `.hg`: each is made
 *   read-only, since a host tool runs hooks from them.  `.git` and `.hg`
 *   are not entered (they are read-only whole).  node_modules is scanned
 *   too, as a nested repository there is as dangerous as anywhere, but
 *   after everything else, so that when the bound is reached it is
 *   there.  Mount points of other filesystems are entered too: a
 *   recursive writable bind makes them writable as well.
 *
 * Then the ops are ordered most specific last: by depth (components),
 * then by path.  At one path the stricter kind stays (enum fs_kind is in
 * order of strictness; among equals the first rule's fo_why).  An op is
 * kept only where it changes something, judged by the nearest kept op
 * above it (or the read-only root):
 *
 *	below	RW	RO	HIDE_DIR
 *	RW	-	kept	kept, listed in the HIDE_DIR's fo_keep
 *	RO	kept	-	-
 *	HIDE_*	kept	kept	-
 *	BLOCK	kept	-	-
 *	PIN	kept	-	-
 *
 * So a write root may reopen a folder inside a hidden or read-only one
 * (write /r, deny /r/a, write /r/a/b: b is writable, the rest of a is
 * hidden), but a read_only or deny rule, which the untrusted workspace
 * layer may add, never shows what a deny hid.
 *
 * Paths the runner mounts itself (/tmp, /dev, /proc, /run) are not
 * special here, except that a write root may not be /, nor under /proc,
 * /sys or /dev.  The plan is racy by nature (the tree may change before
 * the mounts); runner.h says how the runner closes that.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "runner.h"
#include "util.h"
#include "xmalloc.h"

#define FSPLAN_MAX_LINKS	40	/* symlinks in a path, as the kernel */
#define FSPLAN_GITFILE_MAX	4096	/* bytes read of a .git or commondir */

#define WHY_GIT		"protected: git repository"
#define WHY_GITDIR	"protected: git directory of a .git file"
#define WHY_COMMONDIR	"protected: git common directory"
#define WHY_HG		"protected: mercurial repository"

/* A candidate op, before ordering and pruning. */
struct fsp_cand {
	struct fs_op	 c_op;
	size_t		 c_seq;		/* order of arrival */
	size_t		 c_depth;	/* components in the path */
	bool		 c_kept;
	size_t		 c_parent;	/* kept HIDE_DIR above, or SIZE_MAX */
	size_t		 c_new;		/* index in fp_ops */
};

/* A folder waiting to be scanned. */
struct fsp_dir {
	char		*d_path;
	bool		 d_late;	/* under node_modules */
};

struct fsp_queue {
	struct fsp_dir	*q_v;
	size_t		 q_n;
	size_t		 q_head;
};

/* The planner's state during one fsplan_build(). */
struct fsp {
	struct fsplan	*f_plan;
	struct fsp_cand	*f_cands;
	size_t		 f_ncands;
	char		**f_roots;	/* existing writable folders */
	size_t		 f_nroots;
	size_t		 f_scan_max;
};

/* For the bsearch of a path among the candidates. */
struct fsp_key {
	const char	*k_path;
	size_t		 k_i;
};

enum fsp_res {
	RES_FOUND,		/* the path exists: the resolved path */
	RES_MISSING,		/* the first missing component */
	RES_NOTDIR,		/* a non-directory with more to come */
	RES_SKIP		/* cannot be resolved; a note says why */
};

const char *
fsplan_kind_name(enum fs_kind kind)
{
	switch (kind) {
	case FS_RW:
		return "rw";
	case FS_RO:
		return "ro";
	case FS_PIN_LINK:
		return "pin-link";
	case FS_BLOCK:
		return "block";
	case FS_HIDE_DIR:
		return "hide-dir";
	case FS_HIDE_FILE:
		return "hide-file";
	case FS_SKIP:
		return "skip";
	}
	return "?";
}

/* Adds a note for the user; the text is escaped, as it holds paths. */
static void __attribute__((format(printf, 2, 3)))
fsp_note(struct fsp *f, const char *fmt, ...)
{
	struct fsplan	*plan = f->f_plan;
	va_list		 ap;
	char		*s;

	va_start(ap, fmt);
	xvasprintf(&s, fmt, ap);
	va_end(ap);
	plan->fp_notes = xreallocarray(plan->fp_notes, plan->fp_nnotes + 1,
	    sizeof(*plan->fp_notes));
	plan->fp_notes[plan->fp_nnotes++] = str_escape(s, strlen(s));
	free(s);
}

/* Adds a candidate op; takes path. */
static void
fsp_add(struct fsp *f, char *path, enum fs_kind kind, const char *why,
    bool dir)
{
	struct fsp_cand	*c;
	const char	*p;

	f->f_cands = xreallocarray(f->f_cands, f->f_ncands + 1,
	    sizeof(*f->f_cands));
	c = &f->f_cands[f->f_ncands];
	memset(c, 0, sizeof(*c));
	c->c_op.fo_path = path;
	c->c_op.fo_why = xstrdup(why);
	c->c_op.fo_kind = kind;
	c->c_op.fo_dir = dir;
	c->c_seq = f->f_ncands++;
	c->c_parent = SIZE_MAX;
	for (p = path; *p != '\0'; p++) {
		if (*p == '/' && p[1] != '\0')
			c->c_depth++;
	}
}

/* True if path is base or below it (both resolved, absolute). */
static bool
path_within(const char *path, const char *base)
{
	size_t	 n = strlen(base);

	if (strcmp(base, "/") == 0)
		return true;
	return strncmp(path, base, n) == 0 &&
	    (path[n] == '\0' || path[n] == '/');
}

/* True if path is /proc, /sys or /dev, or below one of them. */
static bool
path_system(const char *path, const char **which)
{
	static const char *const sys[] = { "/proc", "/sys", "/dev" };
	size_t			 i;

	for (i = 0; i < nitems(sys); i++) {
		if (path_within(path, sys[i])) {
			*which = sys[i];
			return true;
		}
	}
	return false;
}

/* Returns the target of the symlink at path, or NULL with errno set. */
static char *
fsp_readlink(const char *path)
{
	char	*buf;
	ssize_t	 n;

	buf = xmalloc(PATH_MAX);
	if ((n = readlink(path, buf, PATH_MAX)) == -1) {
		free(buf);
		return NULL;
	}
	if (n == PATH_MAX || n == 0) {
		free(buf);
		errno = n == 0 ? ENOENT : ENAMETOOLONG;
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* True if s holds a component other than "." (what is left to walk). */
static bool
more_components(const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '/')
			continue;
		if (s[0] == '.' && (s[1] == '/' || s[1] == '\0'))
			continue;
		return true;
	}
	return false;
}

/*
 * Resolves the absolute path one component at a time, as realpath(3)
 * does, but by hand so that each symlink met is seen: with pin_why set,
 * each becomes an FS_PIN_LINK candidate (pruning drops those not in a
 * writable place).  ".." goes up from what is resolved so far, as the
 * kernel does.  On RES_FOUND, *out is the resolved path and *dir says if
 * it is a directory; on RES_MISSING, *out is the first missing
 * component; on RES_NOTDIR, the non-directory met.  The caller frees
 * *out.  On RES_SKIP a note says why and *out is NULL.
 */
static enum fsp_res
fsp_resolve(struct fsp *f, const char *path, const char *pin_why,
    char **out, bool *dir)
{
	struct stat	 st;
	enum fsp_res	 res;
	char		*done, *todo, *next, *cand, *link;
	const char	*p, *comp;
	size_t		 len, links = 0;

	*out = NULL;
	*dir = true;			/* "/" */
	done = xstrdup("");		/* "" stands for "/" */
	todo = xstrdup(path);
	p = todo;
	for (;;) {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		comp = p;
		len = strcspn(p, "/");
		p += len;
		if (len == 1 && comp[0] == '.')
			continue;
		if (len == 2 && comp[0] == '.' && comp[1] == '.') {
			if (*done != '\0')
				*strrchr(done, '/') = '\0';
			*dir = true;
			continue;
		}
		xasprintf(&cand, "%s/%.*s", done, (int)len, comp);
		if (lstat(cand, &st) == -1) {
			if (errno == ENOENT) {
				*out = cand;
				res = RES_MISSING;
				goto out;
			}
			fsp_note(f, "%s: %s: left out of the plan", cand,
			    strerror(errno));
			free(cand);
			res = RES_SKIP;
			goto out;
		}
		if (S_ISLNK(st.st_mode)) {
			if (++links > FSPLAN_MAX_LINKS ||
			    (link = fsp_readlink(cand)) == NULL) {
				fsp_note(f, "%s: %s: left out of the plan",
				    cand, links > FSPLAN_MAX_LINKS ?
				    strerror(ELOOP) : strerror(errno));
				if (pin_why != NULL)
					fsp_add(f, cand, FS_PIN_LINK, pin_why,
					    false);
				else
					free(cand);
				res = RES_SKIP;
				goto out;
			}
			if (pin_why != NULL)
				fsp_add(f, cand, FS_PIN_LINK, pin_why, false);
			else
				free(cand);
			if (link[0] == '/')
				*done = '\0';
			xasprintf(&next, "%s%s", link, p);
			free(link);
			free(todo);
			todo = next;
			p = todo;
			continue;
		}
		free(done);
		done = cand;
		*dir = S_ISDIR(st.st_mode);
		if (!*dir && more_components(p)) {
			*out = done;
			done = NULL;
			res = RES_NOTDIR;
			goto out;
		}
	}
	if (*done == '\0') {
		free(done);
		done = xstrdup("/");
	}
	*out = done;
	done = NULL;
	res = RES_FOUND;
out:
	free(done);
	free(todo);
	return res;
}

/*
 * Protects path (read-only, or hidden with hide) for the rule why.  On
 * RES_FOUND and with found set, returns the resolved path in *found
 * (the caller frees it).
 */
static void
fsp_protect(struct fsp *f, const char *path, bool hide, const char *why,
    char **found)
{
	char	*r;
	bool	 dir;

	if (found != NULL)
		*found = NULL;
	switch (fsp_resolve(f, path, why, &r, &dir)) {
	case RES_FOUND:
		if (found != NULL)
			*found = xstrdup(r);
		if (!hide)
			fsp_add(f, r, FS_RO, why, dir);
		else
			fsp_add(f, r, dir ? FS_HIDE_DIR : FS_HIDE_FILE, why,
			    dir);
		break;
	case RES_MISSING:
		/*
		 * A hidden path that does not exist has nothing to hide;
		 * blocking it would keep the command from making, say,
		 * ~/.config in a writable home.  A protected one is blocked.
		 */
		if (!hide)
			fsp_add(f, r, FS_BLOCK, why, true);
		else
			free(r);
		break;
	case RES_NOTDIR:
		fsp_add(f, r, FS_RO, why, false);
		break;
	case RES_SKIP:
		break;
	}
}

/*
 * Resolves the write roots into FS_RW candidates.  Refuses / and the
 * kernel's own trees; leaves out, with a note, a root that does not
 * exist.  Returns 0, or -1 with *cause set.
 */
static int
fsp_roots(struct fsp *f, const struct plist *pl, char **cause)
{
	const struct pitem	*pi;
	const char		*sys;
	char			*r;
	size_t			 i;
	bool			 dir;

	for (i = 0; i < pl->pl_n; i++) {
		pi = &pl->pl_v[i];
		if (pi->pi_text[0] != '/') {
			xasprintf(cause, "%s: %s is not an absolute path",
			    pi->pi_from, pi->pi_text);
			return -1;
		}
		if (strcmp(pi->pi_text, "/") == 0) {
			xasprintf(cause, "%s: writing to / would make the "
			    "whole filesystem writable; name folders instead",
			    pi->pi_from);
			return -1;
		}
		if (path_system(pi->pi_text, &sys)) {
			xasprintf(cause, "%s: %s is under %s, which the "
			    "sandbox has its own of and never makes writable",
			    pi->pi_from, pi->pi_text, sys);
			return -1;
		}
		switch (fsp_resolve(f, pi->pi_text, NULL, &r, &dir)) {
		case RES_FOUND:
			break;
		case RES_MISSING:
		case RES_NOTDIR:
			fsp_note(f, "%s: %s does not exist, so it is not "
			    "writable; create it first", pi->pi_from,
			    pi->pi_text);
			free(r);
			continue;
		case RES_SKIP:
			continue;
		}
		if (strcmp(r, "/") == 0) {
			xasprintf(cause, "%s: %s is /, and writing to / would "
			    "make the whole filesystem writable; name folders "
			    "instead", pi->pi_from, pi->pi_text);
			free(r);
			return -1;
		}
		if (path_system(r, &sys)) {
			xasprintf(cause, "%s: %s resolves to %s, under %s, "
			    "which the sandbox has its own of and never makes "
			    "writable", pi->pi_from, pi->pi_text, r, sys);
			free(r);
			return -1;
		}
		if (dir) {
			f->f_roots = xreallocarray(f->f_roots, f->f_nroots + 1,
			    sizeof(*f->f_roots));
			f->f_roots[f->f_nroots++] = xstrdup(r);
		}
		fsp_add(f, r, FS_RW, pi->pi_from, dir);
	}
	return 0;
}

/*
 * Reads the first line of the regular file name in dirpath, at most
 * FSPLAN_GITFILE_MAX bytes, not following a symlink.  Returns it
 * (without the line end) or NULL.
 */
static char *
fsp_read_line(const char *dirpath, const char *name)
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
	buf = xmalloc(FSPLAN_GITFILE_MAX + 1);
	n = read(fd, buf, FSPLAN_GITFILE_MAX);
	close(fd);
	if (n <= 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return buf;
}

/* Joins a path that may be relative to dir; the caller frees it. */
static char *
fsp_join(const char *dir, const char *path)
{
	char	*s;

	if (path[0] == '/')
		return xstrdup(path);
	xasprintf(&s, "%s/%s", dir, path);
	return s;
}

/*
 * A `.git` file (a worktree or a submodule) in dir: protects the
 * gitdir it names and, if that has one, the common directory.
 */
static void
fsp_gitfile(struct fsp *f, const char *dir)
{
	char	*line, *gitdir, *common, *resolved;

	if ((line = fsp_read_line(dir, ".git")) == NULL)
		return;
	if (strncmp(line, "gitdir:", 7) != 0) {
		free(line);
		return;
	}
	gitdir = fsp_join(dir, line + 7 + strspn(line + 7, " \t"));
	free(line);
	fsp_protect(f, gitdir, false, WHY_GITDIR, &resolved);
	free(gitdir);
	if (resolved == NULL)
		return;
	if ((line = fsp_read_line(resolved, "commondir")) != NULL) {
		if (*line != '\0') {
			common = fsp_join(resolved, line);
			fsp_protect(f, common, false, WHY_COMMONDIR, NULL);
			free(common);
		}
		free(line);
	}
	free(resolved);
}

/* Queues a folder to scan; takes path. */
static void
fsp_push(struct fsp_queue *q, char *path, bool late)
{
	q->q_v = xreallocarray(q->q_v, q->q_n + 1, sizeof(*q->q_v));
	q->q_v[q->q_n].d_path = path;
	q->q_v[q->q_n].d_late = late;
	q->q_n++;
}

/* Opens a folder to list, following no symlink on the way. */
static int
fsp_opendir(const char *path)
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
 * Lists one folder: protects the repositories in it and queues its
 * subfolders.  Returns false when the bound is reached.
 */
static bool
fsp_scan_dir(struct fsp *f, const struct fsp_dir *d, struct fsp_queue *now,
    struct fsp_queue *late)
{
	struct fsplan	*plan = f->f_plan;
	struct dirent	*de;
	struct stat	 st;
	DIR		*dp;
	char		*child;
	const char	*base;
	bool		 more = true, git, hg, isdir;
	int		 fd;

	if ((fd = fsp_opendir(d->d_path)) == -1) {
		if (errno != ENOENT && errno != ELOOP && errno != ENOTDIR)
			fsp_note(f, "%s: %s: not scanned for repositories",
			    d->d_path, strerror(errno));
		return true;
	}
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		return true;
	}
	base = strcmp(d->d_path, "/") == 0 ? "" : d->d_path;
	while ((de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (plan->fp_scanned == f->f_scan_max) {
			more = false;
			break;
		}
		plan->fp_scanned++;
		git = strcmp(de->d_name, ".git") == 0;
		hg = strcmp(de->d_name, ".hg") == 0;
		if (!git && !hg && de->d_type != DT_DIR &&
		    de->d_type != DT_UNKNOWN)
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		isdir = S_ISDIR(st.st_mode);
		xasprintf(&child, "%s/%s", base, de->d_name);
		if ((git || hg) && (isdir || S_ISLNK(st.st_mode) ||
		    (git && S_ISREG(st.st_mode)))) {
			fsp_protect(f, child, false, git ? WHY_GIT : WHY_HG,
			    NULL);
			if (git && S_ISREG(st.st_mode))
				fsp_gitfile(f, d->d_path);
			free(child);
		} else if (isdir && !git && !hg) {
			if (d->d_late ||
			    strcmp(de->d_name, "node_modules") == 0)
				fsp_push(late, child, true);
			else
				fsp_push(now, child, false);
		} else
			free(child);
	}
	closedir(dp);
	return more;
}

/*
 * Scans the writable folders for repositories, breadth first, folders
 * under node_modules last, up to f_scan_max entries in all.  A root
 * inside another is scanned with it.
 */
static void
fsp_scan(struct fsp *f)
{
	struct fsp_queue	 now, late;
	struct fsp_queue	*q;
	struct fsp_dir		 d;
	size_t			 i, j;
	bool			 inner, more = true;

	memset(&now, 0, sizeof(now));
	memset(&late, 0, sizeof(late));
	for (i = 0; i < f->f_nroots; i++) {
		inner = false;
		for (j = 0; j < f->f_nroots && !inner; j++) {
			if (strcmp(f->f_roots[i], f->f_roots[j]) == 0)
				inner = j < i;
			else
				inner = path_within(f->f_roots[i],
				    f->f_roots[j]);
		}
		if (!inner)
			fsp_push(&now, xstrdup(f->f_roots[i]), false);
	}
	while (more) {
		q = now.q_head < now.q_n ? &now : &late;
		if (q->q_head == q->q_n)
			break;
		d = q->q_v[q->q_head++];	/* q_v moves as it grows */
		more = fsp_scan_dir(f, &d, &now, &late);
		free(d.d_path);
	}
	if (!more)
		fsp_note(f, "the scan for repositories stopped after %zu "
		    "entries, its bound: a .git deeper in the writable "
		    "folders may be writable", f->f_plan->fp_scanned);
	for (i = now.q_head; i < now.q_n; i++)
		free(now.q_v[i].d_path);
	for (i = late.q_head; i < late.q_n; i++)
		free(late.q_v[i].d_path);
	free(now.q_v);
	free(late.q_v);
}

/* Most specific last: depth, path, the stricter kind, arrival. */
static int
fsp_cand_cmp(const void *a0, const void *b0)
{
	const struct fsp_cand	*a = a0, *b = b0;
	int			 c;

	if (a->c_depth != b->c_depth)
		return a->c_depth < b->c_depth ? -1 : 1;
	if ((c = strcmp(a->c_op.fo_path, b->c_op.fo_path)) != 0)
		return c;
	if (a->c_op.fo_kind != b->c_op.fo_kind)
		return a->c_op.fo_kind > b->c_op.fo_kind ? -1 : 1;
	return a->c_seq < b->c_seq ? -1 : a->c_seq > b->c_seq;
}

static int
fsp_key_cmp(const void *a0, const void *b0)
{
	const struct fsp_key	*a = a0, *b = b0;

	return strcmp(a->k_path, b->k_path);
}

/* Frees what a candidate holds. */
static void
fsp_cand_clear(struct fsp_cand *c)
{
	free(c->c_op.fo_path);
	free(c->c_op.fo_why);
	c->c_op.fo_path = c->c_op.fo_why = NULL;
}

/*
 * Whether an op of kind is kept below the nearest kept op of kind
 * above (FS_RO for the root).
 */
static bool
fsp_keep(enum fs_kind kind, enum fs_kind above)
{
	switch (kind) {
	case FS_RW:
		return above == FS_RO || above == FS_HIDE_DIR;
	case FS_RO:
	case FS_BLOCK:
	case FS_PIN_LINK:
		return above == FS_RW;
	case FS_HIDE_DIR:
	case FS_HIDE_FILE:
		return above == FS_RW || above == FS_RO;
	case FS_SKIP:
		break;
	}
	return false;
}

/*
 * Orders the candidates, merges those on one path and keeps those that
 * change something, filling plan->fp_ops.
 */
static void
fsp_finish(struct fsp *f)
{
	struct fsplan	*plan = f->f_plan;
	struct fsp_cand	*c, *cands = f->f_cands;
	struct fsp_key	*keys, key, *k;
	struct fs_op	*parent;
	enum fs_kind	 above;
	size_t		 i, n = 0, nkeys;
	char		*up, *slash;

	if (f->f_ncands == 0)
		return;
	qsort(cands, f->f_ncands, sizeof(*cands), fsp_cand_cmp);
	for (i = 0; i < f->f_ncands; i++) {
		if (n > 0 && strcmp(cands[n - 1].c_op.fo_path,
		    cands[i].c_op.fo_path) == 0) {
			fsp_cand_clear(&cands[i]);
			continue;
		}
		cands[n++] = cands[i];
	}
	f->f_ncands = n;

	nkeys = n;
	keys = xcalloc(nkeys, sizeof(*keys));
	for (i = 0; i < n; i++) {
		keys[i].k_path = cands[i].c_op.fo_path;
		keys[i].k_i = i;
	}
	qsort(keys, nkeys, sizeof(*keys), fsp_key_cmp);

	/* Ancestors come first (lower depth): their fate is known. */
	n = 0;
	for (i = 0; i < f->f_ncands; i++) {
		c = &cands[i];
		above = FS_RO;
		up = xstrdup(c->c_op.fo_path);
		while (strcmp(up, "/") != 0) {
			slash = strrchr(up, '/');
			if (slash == up)
				slash[1] = '\0';
			else
				*slash = '\0';
			key.k_path = up;
			k = bsearch(&key, keys, nkeys, sizeof(*keys),
			    fsp_key_cmp);
			if (k != NULL && cands[k->k_i].c_kept) {
				above = cands[k->k_i].c_op.fo_kind;
				if (above == FS_HIDE_DIR)
					c->c_parent = k->k_i;
				break;
			}
		}
		free(up);
		if ((c->c_kept = fsp_keep(c->c_op.fo_kind, above)))
			c->c_new = n++;
	}
	free(keys);

	plan->fp_ops = xcalloc(n == 0 ? 1 : n, sizeof(*plan->fp_ops));
	for (i = 0; i < f->f_ncands; i++) {
		c = &cands[i];
		if (!c->c_kept) {
			fsp_cand_clear(c);
			continue;
		}
		plan->fp_ops[c->c_new] = c->c_op;
		memset(&c->c_op, 0, sizeof(c->c_op));
		if (c->c_parent == SIZE_MAX)
			continue;
		parent = &plan->fp_ops[cands[c->c_parent].c_new];
		parent->fo_keep = xreallocarray(parent->fo_keep,
		    parent->fo_nkeep + 1, sizeof(*parent->fo_keep));
		parent->fo_keep[parent->fo_nkeep++] = c->c_new;
	}
	plan->fp_nops = n;
}

/*
 * Makes the mount plan of in->fi_policy from the tree as it is now.
 * Runs with the caller's privileges, before any namespace; reads, never
 * writes.  Returns 0 with *plan filled (free it with fsplan_clear()),
 * or -1 with *cause set (a write root that is /, or under /proc, /sys,
 * /dev) and *plan empty.
 */
int
fsplan_build(const struct fsplan_in *in, struct fsplan *plan, char **cause)
{
	const struct policy	*p = in->fi_policy;
	struct fsp		 f;
	size_t			 i;
	int			 rc = -1;

	*cause = NULL;
	memset(plan, 0, sizeof(*plan));
	memset(&f, 0, sizeof(f));
	f.f_plan = plan;
	f.f_scan_max = in->fi_scan_max == 0 ? FSPLAN_SCAN_MAX :
	    in->fi_scan_max;

	if (fsp_roots(&f, &p->p_write, cause) == -1)
		goto out;
	for (i = 0; i < p->p_read_only.pl_n; i++)
		fsp_protect(&f, p->p_read_only.pl_v[i].pi_text, false,
		    p->p_read_only.pl_v[i].pi_from, NULL);
	for (i = 0; i < p->p_hide.pl_n; i++)
		fsp_protect(&f, p->p_hide.pl_v[i].pi_text, true,
		    p->p_hide.pl_v[i].pi_from, NULL);
	fsp_scan(&f);
	fsp_finish(&f);
	rc = 0;
out:
	for (i = 0; i < f.f_ncands; i++)
		fsp_cand_clear(&f.f_cands[i]);
	free(f.f_cands);
	for (i = 0; i < f.f_nroots; i++)
		free(f.f_roots[i]);
	free(f.f_roots);
	if (rc == -1)
		fsplan_clear(plan);
	return rc;
}

/* Frees what the plan holds and empties it. */
void
fsplan_clear(struct fsplan *plan)
{
	size_t	 i;

	if (plan == NULL)
		return;
	for (i = 0; i < plan->fp_nops; i++) {
		free(plan->fp_ops[i].fo_path);
		free(plan->fp_ops[i].fo_why);
		free(plan->fp_ops[i].fo_keep);
	}
	free(plan->fp_ops);
	for (i = 0; i < plan->fp_nnotes; i++)
		free(plan->fp_notes[i]);
	free(plan->fp_notes);
	memset(plan, 0, sizeof(*plan));
}
