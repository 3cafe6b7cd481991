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
 *   would keep a writable home from getting a `~/.config`.  A
 *   protected path under a regular file (`ws/file/.git`) pins that file
 *   read-only: else the command could replace the file by a directory
 *   holding the path.
 * - A write root inside the workspace, or inside another write root,
 *   must resolve inside it: the workspace and the writable roots are
 *   the command's (and the repository's), and a link there decides
 *   nothing (fsp_contain).  A read_only or deny rule of the untrusted
 *   workspace layer stops at a link that leads out of the workspace.
 * - The writable roots are scanned for repositories (fsscan.c).
 * - Every folder between a writable root and a protected path is pinned
 *   (FS_PIN_DIR): a mount point cannot be renamed, so the protected
 *   path cannot be replaced by renaming a folder above it (fsorder.c).
 *
 * Then the ops are ordered, merged and pruned (fsorder.c).
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
	case FS_PIN_DIR:
		return "pin-dir";
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
void
fsplan_note(struct fsp *f, const char *fmt, ...)
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
void
fsplan_add(struct fsp *f, char *path, enum fs_kind kind, const char *why,
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

/* True if path is /proc, /sys or /dev, or below one of them. */
static bool
path_system(const char *path, const char **which)
{
	static const char *const sys[] = { "/proc", "/sys", "/dev" };
	size_t			 i;

	for (i = 0; i < nitems(sys); i++) {
		if (path_is_below(path, sys[i])) {
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

/* A walk of fsp_resolve: what is resolved, and what is left of the path. */
struct fsp_walk {
	char		*w_done;	/* resolved so far; "" stands for "/" */
	char		*w_todo;	/* the path being walked */
	const char	*w_p;		/* what is left of it */
	size_t		 w_links;	/* symlinks followed */
};

/*
 * The next component to look up, *len bytes long, or NULL at the end:
 * "." is passed over and ".." goes up from what is resolved so far, as
 * the kernel does (*dir: a folder, "/" at worst).
 */
static const char *
fsp_walk_next(struct fsp_walk *w, size_t *len, bool *dir)
{
	const char	*comp;

	for (;;) {
		while (*w->w_p == '/')
			w->w_p++;
		if (*w->w_p == '\0')
			return NULL;
		comp = w->w_p;
		*len = strcspn(comp, "/");
		w->w_p += *len;
		if (*len == 1 && comp[0] == '.')
			continue;
		if (*len == 2 && comp[0] == '.' && comp[1] == '.') {
			if (*w->w_done != '\0')
				*strrchr(w->w_done, '/') = '\0';
			*dir = true;
			continue;
		}
		return comp;
	}
}

/*
 * The walk meets the symlink cand (taken): with pin_why set it becomes
 * an FS_PIN_LINK candidate, and the walk goes on through its target.
 * Returns 0, or -1 with a note saying why it cannot be followed.
 */
static int
fsp_walk_link(struct fsp *f, struct fsp_walk *w, char *cand,
    const char *pin_why)
{
	char	*link, *next;

	link = ++w->w_links > FSPLAN_MAX_LINKS ? NULL : fsp_readlink(cand);
	if (link == NULL)
		fsplan_note(f, "%s: %s: left out of the plan", cand,
		    w->w_links > FSPLAN_MAX_LINKS ? strerror(ELOOP) :
		    strerror(errno));
	if (pin_why != NULL)
		fsplan_add(f, cand, FS_PIN_LINK, pin_why, false);
	else
		free(cand);
	if (link == NULL)
		return -1;
	if (link[0] == '/')
		*w->w_done = '\0';
	xasprintf(&next, "%s%s", link, w->w_p);
	free(link);
	free(w->w_todo);
	w->w_todo = next;
	w->w_p = next;
	return 0;
}

/*
 * Resolves the absolute path one component at a time, as realpath(3)
 * does, but by hand so that each symlink met is seen: with pin_why set,
 * each becomes an FS_PIN_LINK candidate (pruning drops those not in a
 * writable place).  ".." goes up from what is resolved so far, as the
 * kernel does.  On RES_FOUND, *out is the resolved path and *dir says if
 * it is a directory; on RES_MISSING, *out is the first missing
 * component and *dir says if more come after it; on RES_NOTDIR, the
 * non-directory met.  The caller frees *out.  On RES_SKIP a note says
 * why and *out is NULL.
 */
static enum fsp_res
fsp_resolve(struct fsp *f, const char *path, const char *pin_why,
    char **out, bool *dir)
{
	struct fsp_walk	 w;
	struct stat	 st;
	enum fsp_res	 res;
	const char	*comp;
	char		*cand;
	size_t		 len;

	*out = NULL;
	*dir = true;			/* "/" */
	w.w_done = xstrdup("");
	w.w_todo = xstrdup(path);
	w.w_p = w.w_todo;
	w.w_links = 0;
	while ((comp = fsp_walk_next(&w, &len, dir)) != NULL) {
		xasprintf(&cand, "%s/%.*s", w.w_done, (int)len, comp);
		if (lstat(cand, &st) == -1) {
			if (errno == ENOENT) {
				*out = cand;
				*dir = more_components(w.w_p);
				res = RES_MISSING;
				goto out;
			}
			fsplan_note(f, "%s: %s: left out of the plan", cand,
			    strerror(errno));
			free(cand);
			res = RES_SKIP;
			goto out;
		}
		if (S_ISLNK(st.st_mode)) {
			if (fsp_walk_link(f, &w, cand, pin_why) == -1) {
				res = RES_SKIP;
				goto out;
			}
			continue;
		}
		free(w.w_done);
		w.w_done = cand;
		*dir = S_ISDIR(st.st_mode);
		if (!*dir && more_components(w.w_p)) {
			*out = w.w_done;
			w.w_done = NULL;
			res = RES_NOTDIR;
			goto out;
		}
	}
	if (*w.w_done == '\0') {
		free(w.w_done);
		w.w_done = xstrdup("/");
	}
	*out = w.w_done;
	w.w_done = NULL;
	res = RES_FOUND;
out:
	free(w.w_done);
	free(w.w_todo);
	return res;
}

/*
 * Remembers what is at path (not following a link) for the guard
 * (guard.c), which after the run leaves alone the repositories the
 * plan protected.
 */
static void
fsp_mark(struct fsp *f, const char *path)
{
	struct stat	 st;

	if (lstat(path, &st) == 0)
		fsplan_mark_add(&f->f_plan->fp_marks, &f->f_plan->fp_nmarks, &st);
}

/* Appends what st is to the list *v of *n identities. */
void
fsplan_mark_add(struct fs_mark **v, size_t *n, const struct stat *st)
{
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[*n].fm_dev = st->st_dev;
	(*v)[(*n)++].fm_ino = st->st_ino;
}

/*
 * Protects path (read-only, or hidden with FSP_HIDE) for the rule why.
 * On RES_FOUND and with found set, returns the resolved path in *found
 * (the caller frees it).  With FSP_GIT, a folder is a git directory:
 * only what makes git run a program or look elsewhere is protected in
 * it (fsscan_gitdir), so that commits work.  A missing path is blocked by an empty folder at
 * its first missing component, or, with FSP_FILE and only its last one
 * missing, by an empty file (~/.bashrc: a shell reads it).
 */
void
fsplan_protect(struct fsp *f, const char *path, int how, const char *why,
    char **found)
{
	enum fsp_res	 res;
	char		*r;
	bool		 dir, hide = how & FSP_HIDE;

	if (found != NULL)
		*found = NULL;
	res = fsp_resolve(f, path, why, &r, &dir);
	if (res != RES_SKIP && f->f_within != NULL &&
	    !path_is_below(r, f->f_within)) {
		fsplan_note(f, "%s: %s leads out of the workspace, to %s; a "
		    "workspace policy names only what is inside it, so the "
		    "rule stops at the link", why, path, r);
		free(r);
		return;
	}
	switch (res) {
	case RES_FOUND:
		fsp_mark(f, r);
		if (found != NULL)
			*found = xstrdup(r);
		if (!hide && dir && (how & FSP_GIT)) {
			fsscan_gitdir(f, r, 0);
			free(r);
		} else if (!hide)
			fsplan_add(f, r, FS_RO, why, dir);
		else
			fsplan_add(f, r, dir ? FS_HIDE_DIR : FS_HIDE_FILE, why,
			    dir);
		break;
	case RES_MISSING:
		/*
		 * A hidden path that does not exist has nothing to hide;
		 * blocking it would keep the command from making, say,
		 * ~/.config in a writable home.  A protected one is blocked.
		 */
		if (!hide) {
			fsplan_add(f, r, FS_BLOCK, why, dir || !(how & FSP_FILE));
			f->f_cands[f->f_ncands - 1].c_op.fo_dot = !dir &&
			    (how & FSP_DOT);
		} else
			free(r);
		break;
	case RES_NOTDIR:
		fsplan_add(f, r, FS_RO, why, false);
		break;
	case RES_SKIP:
		break;
	}
}

/*
 * The read_only or deny rules of the policy.  Those of the untrusted
 * workspace layer name only what is inside the workspace: where a link
 * there leads out, the link itself is pinned (fsp_resolve) and the rule
 * goes no further, so a repository cannot hide /usr or protect /etc.
 */
static void
fsp_protect_list(struct fsp *f, const struct plist *pl, bool hide)
{
	size_t	 i;

	for (i = 0; i < pl->pl_n; i++) {
		f->f_within = pl->pl_v[i].pi_untrusted ? f->f_ws : NULL;
		fsplan_protect(f, pl->pl_v[i].pi_text, (hide ? FSP_HIDE : 0) |
		    (pl->pl_v[i].pi_dir ? 0 : FSP_FILE), pl->pl_v[i].pi_from,
		    NULL);
	}
	f->f_within = NULL;
}

/*
 * The folders on the caller's PATH that exist: what the command leaves
 * there runs on the host when someone types its name.  Left alone:
 * relative entries; those in a project's workspace (its contents are the
 * command's anyway, and a project's bin/ is often both), but not in a
 * workspace that holds the home folder; and a folder that does not exist
 * yet (blocking ~/.cargo for a stale ~/.cargo/bin would break the tool
 * that makes it).
 */
static void
fsp_protect_path(struct fsp *f, const char *path)
{
	struct stat	 st;
	const char	*home = getenv("HOME");
	char		*copy, *dir, *save = NULL;
	bool		 project;

	if (path == NULL)
		return;
	project = f->f_ws != NULL && (home == NULL || home[0] != '/' ||
	    !path_is_below(home, f->f_ws));
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir != NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		if (dir[0] != '/' || stat(dir, &st) == -1 ||
		    !S_ISDIR(st.st_mode) || (project &&
		    path_is_below(dir, f->f_ws)))
			continue;
		fsplan_protect(f, dir, 0, "protected: a folder on PATH, "
		    "what it holds runs on the host", NULL);
	}
	free(copy);
}

/*
 * A file cordon itself shows, read-only, inside a folder a deny hides
 * (fi_show: ~/.ssh/known_hosts for its ssh-agent).  Only an existing
 * file reached without a link; the hidden folder becomes traversable,
 * not listable, and nothing else in it appears.
 */
static void
fsp_show(struct fsp *f, const char *path)
{
	struct stat	 st;
	char		*r;
	bool		 dir;

	if (fsp_resolve(f, path, NULL, &r, &dir) != RES_FOUND) {
		free(r);		/* RES_MISSING, RES_NOTDIR: a path */
		return;
	}
	if (dir || lstat(path, &st) == -1 || !S_ISREG(st.st_mode)) {
		fsplan_note(f, "%s is not shown inside: not a file (a "
		    "symbolic link is not followed)", path);
		free(r);
		return;
	}
	fsplan_add(f, r, FS_RO, "shown: cordon's ssh-agent needs it", false);
	f->f_cands[f->f_ncands - 1].c_show = true;
}

/*
 * The place a write root text lies in that the command may have shaped:
 * the workspace (the repository came with it), or another write root (a
 * run before wrote there).  The deepest one, as its resolved path, or
 * NULL.  Paths are compared as text: both are absolute and normalised.
 */
static const char *
fsp_place(const struct fsp *f, const struct plist *pl, size_t k,
    const char **what)
{
	const char	*text = pl->pl_v[k].pi_text, *best = NULL, *t;
	size_t		 i, len = 0;

	if (f->f_ws != NULL && strcmp(text, f->f_ws) != 0 &&
	    path_is_below(text, f->f_ws)) {
		best = f->f_ws;
		len = strlen(f->f_ws);
		*what = "the workspace";
	}
	for (i = 0; i < pl->pl_n; i++) {
		t = pl->pl_v[i].pi_text;
		if (i == k || f->f_rootv[i] == NULL || strcmp(text, t) == 0 ||
		    !path_is_below(text, t) || strlen(t) <= len)
			continue;
		best = f->f_rootv[i];
		len = strlen(t);
		*what = pl->pl_v[i].pi_from;
	}
	return best;
}

/*
 * Every write root inside a place the command may have shaped must
 * resolve inside that place.  A link there decides nothing: the attack
 * is a committed `tools -> ..` with a workspace layer's write "tools",
 * or a command that swaps a trusted --write folder for `out -> ..` in
 * one run, to get the home in the next.  Such a root is refused with
 * the reason, never followed.  Returns 0, or -1 with *cause set.
 */
static int
fsp_contain(struct fsp *f, const struct plist *pl, char **cause)
{
	const char	*place, *what = NULL;
	size_t		 i;

	for (i = 0; i < pl->pl_n; i++) {
		if (f->f_rootv[i] == NULL ||
		    (place = fsp_place(f, pl, i, &what)) == NULL ||
		    path_is_below(f->f_rootv[i], place))
			continue;
		xasprintf(cause, "%s: %s resolves to %s, outside %s (%s), "
		    "through a symbolic link there; a link in a folder the "
		    "command or the repository shapes cannot widen a write, "
		    "so nothing is run\nhint: remove the link, or name the "
		    "folder it points to itself", pl->pl_v[i].pi_from,
		    pl->pl_v[i].pi_text, f->f_rootv[i], what, place);
		return -1;
	}
	return 0;
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

	f->f_rootv = xcalloc(pl->pl_n + 1, sizeof(*f->f_rootv));

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
			fsplan_note(f, "%s: %s does not exist, so it is not "
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
		f->f_rootv[i] = xstrdup(r);
		fsplan_add(f, r, FS_RW, pi->pi_from, dir);
	}
	return fsp_contain(f, pl, cause);
}

/* Frees what a candidate holds. */
void
fsplan_cand_clear(struct fsp_cand *c)
{
	free(c->c_op.fo_path);
	free(c->c_op.fo_why);
	c->c_op.fo_path = c->c_op.fo_why = NULL;
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
	f.f_ws = in->fi_workspace;
	f.f_scratch = in->fi_scratch;
	f.f_nscratch = in->fi_nscratch;
	f.f_scan_max = in->fi_scan_max == 0 ? FSPLAN_SCAN_MAX :
	    in->fi_scan_max;

	if (fsp_roots(&f, &p->p_write, cause) == -1)
		goto out;
	fsp_protect_list(&f, &p->p_read_only, false);
	fsp_protect_list(&f, &p->p_hide, true);
	fsp_protect_path(&f, in->fi_path);
	for (i = 0; i < in->fi_nshow; i++)
		fsp_show(&f, in->fi_show[i]);
	fsscan_run(&f);
	fsorder_finish(&f);
	rc = 0;
out:
	for (i = 0; i < f.f_ncands; i++)
		fsplan_cand_clear(&f.f_cands[i]);
	free(f.f_cands);
	for (i = 0; i < f.f_nroots; i++)
		free(f.f_roots[i]);
	free(f.f_roots);
	for (i = 0; f.f_rootv != NULL && i < p->p_write.pl_n; i++)
		free(f.f_rootv[i]);
	free(f.f_rootv);
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
	free(plan->fp_marks);
	for (i = 0; i < plan->fp_nnotes; i++)
		free(plan->fp_notes[i]);
	free(plan->fp_notes);
	memset(plan, 0, sizeof(*plan));
}
