/*
 * gwalk.c: the walk of the check after the run (guard.c): every folder
 * of the writable roots, breadth first, through the descriptors opened
 * before the run and following no link, to find each git directory git
 * on the host could take, wherever it lies, and have it judged
 * (guard_judge).
 *
 * Git takes a folder for a git directory by what it holds (a valid
 * HEAD, and objects and refs, or a commondir that names where they
 * are: is_git_directory in git's setup.c), and reaches one through a
 * .git folder, a .git file or link, or a commondir.  So the walk judges
 * each folder with that layout, follows each pointer as git reads it
 * (gitptr.c: a path with a line end inside is refused, never cut at
 * it), and enters every folder of a git directory, not only its
 * modules and worktrees: a command can write a protected .git's
 * objects, refs and logs, and a git directory made there is one a
 * pointer can name.
 *
 * Nothing it could not read is called clean.  Git opens .git, HEAD,
 * objects, refs and commondir by name, which needs only search
 * permission on the folder; so a folder the walk cannot list (chmod
 * 0311) has those names looked up and judged all the same, and is
 * held: named on the terminal and in --report, and the run fails.  So
 * is a folder it cannot open at all (a path too long), and one holding
 * an entry it cannot examine.  A folder that did not change during the
 * run, or that the user neither owns nor may write (another user's, in
 * a shared /tmp given to write), the command could not have made so;
 * it is left as the plan's note before the run said.
 *
 * A folder whose identity and ctime are those it had when the last walk
 * listed it (the plan's scan, or a session's last check) holds the same
 * names (fslist.c): its listing is given again, unread, and only its
 * subfolders are looked at.  One holding a marker is read every time,
 * since what is judged there is the files in it, not its names.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "git/git.h"
#include "guard/guard.h"
#include "lib/dir.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fslist.h"
#include "plan/fspath.h"

/* How the walk reached a folder (guard_item's i_how). */
#define GW_GITDIR	0x1	/* a .git folder its parent judged */
#define GW_NESTED	0x2	/* in a git directory */
#define GW_POINTED	0x4	/* named by a .git file, link, commondir */

/* Where a pointer leads (gwalk_follow). */
enum gwalk_ptr {
	GP_IN,		/* a folder in a writable root: queued */
	GP_OUT,		/* outside them, or nowhere */
	GP_REFUSED	/* not read as git reads it: not inert */
};

/* Was the git directory st judged already?  If not, it is now. */
static bool
gwalk_judged(struct guard_walk *w, const struct stat *st)
{
	size_t	 i;

	for (i = 0; i < w->w_njudged; i++)
		if (w->w_judged[i].fm_dev == st->st_dev &&
		    w->w_judged[i].fm_ino == st->st_ino)
			return true;
	fspath_mark(&w->w_judged, &w->w_njudged, st);
	return false;
}

/* Queues rel (taken) below root i. */
static void
gwalk_push(struct guard_walk *w, size_t i, char *rel, int how)
{
	w->w_q = xmalloc_grow(w->w_q, w->w_nq, &w->w_qcap, sizeof(*w->w_q));
	w->w_q[w->w_nq].i_root = i;
	w->w_q[w->w_nq].i_rel = rel;
	w->w_q[w->w_nq++].i_how = how;
}

/*
 * Could the command have made the folder dfd (st) unreadable to the
 * walk, or written in it?  Only if it changed during the run and the
 * command's uid, which is the user's, owns it (and so could change its
 * mode) or may write in it.  Another user's private folder in a shared
 * writable root (the host's /tmp given to write) is none the command
 * could touch; the plan said before the run that it was not scanned.
 */
static bool
gwalk_touchable(const struct guard *g, int dfd, const struct stat *st)
{
	if (st->st_ctime < g->g_start)
		return false;
	return st->st_uid == geteuid() || faccessat(dfd, "", W_OK,
	    AT_EACCESS | AT_EMPTY_PATH) == 0 || errno != EACCES;
}

/* Holds folder rel of root r: the walk could not read it; takes why. */
static void
gwalk_hold(struct guard_walk *w, const struct guard_root *r,
    const char *rel, char *why)
{
	quarantine_note(w, r, rel, ".", "a folder the check could not read",
	    why)->gf_held = true;
	w->w_g->g_nmoved++;
}

/* The folder rel of root r as a path. */
static char *
gwalk_path(const struct guard_root *r, const char *rel)
{
	char	*p;

	if (*rel == '\0')
		return xstrdup(r->gr_path);
	xasprintf(&p, "%s/%s", strcmp(r->gr_path, "/") == 0 ? "" :
	    r->gr_path, rel);
	return p;
}

/*
 * Queues the folder path leads to (the kernel resolves it, as it does
 * for git) when it lies in a writable root, the same folder by
 * identity.  Returns GP_IN, or GP_OUT: outside them (the command could
 * not write there), or nowhere.
 */
static enum gwalk_ptr
gwalk_queue_path(struct guard_walk *w, const char *path)
{
	const struct guard	*g = w->w_g;
	struct stat		 st, at;
	const char		*root, *t;
	char			 real[PATH_MAX], proc[64];
	ssize_t			 n;
	size_t			 j;
	int			 fd;

	if ((fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return GP_OUT;
	(void)snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = fstat(fd, &st) == -1 ? -1 : readlink(proc, real,
	    sizeof(real) - 1);
	close(fd);
	if (n <= 0)
		return GP_OUT;
	real[n] = '\0';
	for (j = 0; j < g->g_nroots; j++) {
		root = g->g_roots[j].gr_path;
		if (!path_is_below(real, root))
			continue;
		t = real + (strcmp(root, "/") == 0 ? 0 : strlen(root));
		t += strspn(t, "/");
		if (guard_stat(g->g_roots[j].gr_fd, t, &at) == 0 &&
		    at.st_dev == st.st_dev && at.st_ino == st.st_ino) {
			gwalk_push(w, j, xstrdup(t), GW_POINTED);
			return GP_IN;
		}
	}
	return GP_OUT;
}

/*
 * Where the pointer name in folder rel (dfd) of root i leads, as git
 * follows it: a .git link, a .git file's path or a commondir's
 * (gitptr.c), relative to the folder.  The folder it names is queued
 * to be judged when it lies in a writable root.  Returns GP_IN, GP_OUT,
 * or GP_REFUSED with *why set (git would read it otherwise than here,
 * or it cannot be read).
 */
static enum gwalk_ptr
gwalk_follow(struct guard_walk *w, size_t i, const char *rel, int dfd,
    const char *name, char **why)
{
	struct stat		 st;
	enum gwalk_ptr		 p = GP_OUT;
	char			*dir, *text = NULL, *path = NULL;

	*why = NULL;
	dir = gwalk_path(&w->w_g->g_roots[i], rel);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno != ENOENT) {
			xasprintf(why, "its %s cannot be examined (%s)", name,
			    strerror(errno));
			p = GP_REFUSED;
		}
	} else if (S_ISLNK(st.st_mode))
		xasprintf(&path, "%s/%s", dir, name);
	else if (S_ISREG(st.st_mode)) {
		if (gitptr_read(dfd, name, &text, why) == -1)
			p = GP_REFUSED;
		else
			path = gitptr_join(dir, text);
	}
	if (path != NULL)
		p = gwalk_queue_path(w, path);
	free(path);
	free(text);
	free(dir);
	return p;
}

/*
 * Lists one folder (dp): the markers in it, and its other folders.
 * Entries count towards the bound only when counted: a folder the
 * command changed, or one inside a git directory, is read whole, so
 * that what the run made cannot bring the walk to its bound.  Returns
 * 0, or -1 with *why set when an entry could not be examined or the
 * listing failed: the folder is held.
 */
static int
gwalk_list(struct guard *g, int dfd, bool counted, struct fslist_seen *s,
    char **why)
{
	struct dir_reader	 dr;
	const struct dirent64	*de;
	struct stat		 st;
	const char		*n;
	unsigned		 mark;

	dir_begin(&dr, dfd);
	while ((de = dir_next(&dr)) != NULL) {
		n = de->d_name;
		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
			continue;
		if (counted)
			g->g_scanned++;
		s->ls_entries++;
		s->ls_marks |= mark = fslist_mark(n);
		/* A .git or .hg is a marker, judged by itself. */
		if ((mark & (FSLIST_GIT | FSLIST_HG)) ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		/* A folder's type is in its entry: no stat needed. */
		if (de->d_type == DT_DIR) {
			fslist_sub(s, n);
			continue;
		}
		if (fstatat(dfd, n, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			if (errno == ENOENT)
				continue;
			if (*why == NULL)
				xasprintf(why, "an entry in it cannot be "
				    "examined (%s)", strerror(errno));
			continue;
		}
		if (S_ISDIR(st.st_mode))
			fslist_sub(s, n);
	}
	if (errno != 0 && *why == NULL)
		xasprintf(why, "its listing failed (%s)", strerror(errno));
	return *why == NULL ? 0 : -1;
}

/*
 * The names git opens without listing, looked up in a folder that
 * cannot be listed (search permission is enough for git, and for us).
 */
static void
gwalk_lookup(int dfd, struct fslist_seen *s)
{
	static const char *const names[] = {
		".git", ".hg", "HEAD", "objects", "refs", "commondir"
	};
	struct stat	 st;
	size_t		 i;

	for (i = 0; i < nitems(names); i++)
		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
			s->ls_marks |= fslist_mark(names[i]);
}

/*
 * Opens folder rel of root r and reads what it holds into s: listed,
 * or, when it cannot be listed, its markers looked up by name (then
 * *why says why it is held).  Returns the descriptor, or -1: gone
 * (*why NULL), or it cannot be opened at all (*why set).
 */
static int
gwalk_open(struct guard_walk *w, const struct guard_item *it,
    struct fslist_seen *s, struct stat *st, char **why)
{
	const struct guard_root	*r = &w->w_g->g_roots[it->i_root];
	int			 dfd, pfd;

	*why = NULL;
	if ((dfd = guard_openat(r->gr_fd, it->i_rel, O_RDONLY |
	    O_DIRECTORY)) == -1) {
		if (errno == ENOENT)
			return -1;
		xasprintf(why, "it cannot be listed (%s): what git opens in "
		    "it by name was judged, what lies deeper was not",
		    strerror(errno));
		if ((pfd = guard_openat(r->gr_fd, it->i_rel, O_PATH |
		    O_DIRECTORY)) == -1 || fstat(pfd, st) == -1) {
			free(*why);
			xasprintf(why, "it cannot be opened (%s)",
			    strerror(errno));
			if (pfd != -1)
				close(pfd);
			return -1;
		}
		gwalk_lookup(pfd, s);
		return pfd;
	}
	if (fstat(dfd, st) == -1) {
		xasprintf(why, "it cannot be listed (%s)", strerror(errno));
		close(dfd);
		return -1;
	}
	if (gwalk_list(w->w_g, dfd, it->i_how == 0 &&
	    st->st_ctime < w->w_g->g_start, s, why) == 0)
		fslist_put(w->w_g->g_lists, dfd, st, w->w_taken, s);
	return dfd;
}

/*
 * Folder it as the last walk listed it, when it has the identity and
 * ctime it had then (fslist.c), and holds nothing to judge, which would
 * need it open: then true, with s and st filled, and nothing opened.
 * The stat follows the path as the walk made it, from folders it met
 * in this walk; a link a command running meanwhile put on the way (a
 * session's other command) leads it to a folder whose listing is then
 * given for what it is, and that command's own check walks again.
 */
static bool
gwalk_recall(struct guard_walk *w, const struct guard_item *it,
    struct fslist_seen *s, struct stat *st)
{
	struct guard	*g = w->w_g;

	if ((it->i_how & (GW_GITDIR | GW_POINTED)) ||
	    fstatat(g->g_roots[it->i_root].gr_fd, *it->i_rel == '\0' ? "." :
	    it->i_rel, st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !fslist_get(g->g_lists, st, s))
		return false;
	if (s->ls_marks & (FSLIST_GIT | FSLIST_HG | FSLIST_HEAD)) {
		fslist_seen_clear(s);
		return false;
	}
	if (it->i_how == 0 && st->st_ctime < g->g_start)
		g->g_scanned += s->ls_entries;
	return true;
}

/*
 * Renames the git directory rel itself, through its parent: its HEAD
 * at a root, which cannot move.
 */
static void
gwalk_move_self(struct guard_walk *w, size_t i, const char *rel, int dfd,
    char *why)
{
	static const char	 what[] = "a git directory (inside another, "
	    "or named by a .git file or commondir)";
	const struct guard_root	*r = &w->w_g->g_roots[i];

	if (*rel == '\0')
		(void)quarantine_move(w, r, rel, dfd, "HEAD", what, why);
	else
		(void)quarantine_move_rel(w, r, rel, what, why);
}

/*
 * The .git in folder rel (dfd) of root i: where a file or link leads is
 * judged too; one made or changed goes, unless it leads into a
 * writable root, as git reads it; a folder kept is entered.
 */
static void
gwalk_git(struct guard_walk *w, size_t i, const char *rel, int dfd)
{
	static const char	 what[] = "a git repository (.git)";
	struct stat		 st;
	enum guard_verdict	 v;
	enum gwalk_ptr		 p;
	char			*why, *pwhy;

	if (fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOENT)
			return;
		st.st_mode = 0;	/* judged as what it cannot be read as */
	}
	if (S_ISDIR(st.st_mode)) {
		v = guard_judge(w->w_g, dfd, ".git", &why);
		quarantine_act(w, &w->w_g->g_roots[i], rel, dfd, ".git", what,
		    v, why);
		if (v != GV_MOVE)
			gwalk_push(w, i, guard_join(rel, ".git"), GW_GITDIR);
		return;
	}
	/* A .git file or link: where it leads is judged, if we may. */
	p = gwalk_follow(w, i, rel, dfd, ".git", &pwhy);
	if ((v = guard_judge(w->w_g, dfd, ".git", &why)) == GV_MOVE) {
		free(why);
		why = NULL;
		if (p == GP_IN)
			v = GV_KEEP;
		else if (p == GP_REFUSED) {
			why = pwhy;
			pwhy = NULL;
		} else
			why = xstrdup("it points outside the writable "
			    "folders, where the check cannot judge what it "
			    "names");
	}
	free(pwhy);
	quarantine_act(w, &w->w_g->g_roots[i], rel, dfd, ".git", what, v,
	    why);
}

/*
 * A git directory found at folder rel (dfd, st) of root it: judged once,
 * its commondir followed; one git reaches inside another or by a
 * pointer (whole) goes whole, one in the worktree loses its HEAD.
 * Returns whether it went.
 */
static bool
gwalk_gitdir(struct guard_walk *w, const struct guard_item *it, int dfd,
    const struct fslist_seen *s)
{
	const struct guard_root	*r = &w->w_g->g_roots[it->i_root];
	enum guard_verdict	 v;
	char			*why = NULL, *cwhy = NULL;
	bool			 whole = it->i_how != 0;

	v = it->i_how & GW_GITDIR ? GV_LEAVE : guard_judge(w->w_g, dfd, ".",
	    &why);
	if ((s->ls_marks & FSLIST_COMMONDIR) && gwalk_follow(w, it->i_root, it->i_rel, dfd,
	    "commondir", &cwhy) == GP_REFUSED && v == GV_KEEP) {
		v = GV_MOVE;
		free(why);
		why = cwhy;
		cwhy = NULL;
	}
	free(cwhy);
	if (v == GV_MOVE && whole) {
		gwalk_move_self(w, it->i_root, it->i_rel, dfd, why);
		return true;
	}
	if (v != GV_LEAVE)
		quarantine_act(w, r, it->i_rel, dfd, whole ? "." : "HEAD",
		    whole ? "a git directory (inside another, or named by a "
		    ".git file or commondir)" : "a bare repository (HEAD with "
		    "objects and refs, or commondir)", v, why);
	else
		free(why);
	return false;
}

/*
 * Queues the folders in folder it (s): in a git directory (gitdir),
 * each is a part of it.
 */
static void
gwalk_subs(struct guard_walk *w, const struct guard_item *it,
    const struct fslist_seen *s, bool gitdir)
{
	const char	*n;
	size_t		 k;
	int		 how;

	for (k = 0; k < s->ls_nsubs; k++) {
		n = s->ls_subs[k];
		if (gitdir && (it->i_how != 0 || strcmp(n, "modules") == 0 ||
		    strcmp(n, "worktrees") == 0))
			how = GW_NESTED;
		else
			how = it->i_how & GW_NESTED;
		gwalk_push(w, it->i_root, guard_join(it->i_rel, n), how);
	}
}

/*
 * One folder of the walk.  A git directory (a .git folder, a folder
 * with git's layout, one a pointer names) is judged once.  Every folder
 * in a git directory is entered, as a part of it: a git directory
 * found there goes whole.  A folder of the worktree with git's layout
 * loses its HEAD and is entered as any other.  A folder unchanged since
 * the last walk, with nothing in it to judge, is not read again.
 */
static void
gwalk_dir(struct guard_walk *w, const struct guard_item *it)
{
	struct guard		*g = w->w_g;
	const struct guard_root	*r = &g->g_roots[it->i_root];
	const char		*rel = it->i_rel;
	struct fslist_seen	 s;
	struct stat		 st;
	int			 dfd = -1;
	bool			 gitdir, whole = it->i_how != 0;
	enum guard_verdict	 v;
	char			*why;

	memset(&s, 0, sizeof(s));
	if (gwalk_recall(w, it, &s, &st)) {
		gwalk_subs(w, it, &s, false);
		goto done;
	}
	dfd = gwalk_open(w, it, &s, &st, &why);
	if (why != NULL && dfd != -1 && !gwalk_touchable(g, dfd, &st)) {
		log_debug("%s: %s/%s: %s", __func__, r->gr_path, rel, why);
		free(why);
	} else if (why != NULL)
		gwalk_hold(w, r, rel, why);
	if (dfd == -1)
		goto done;
	gitdir = (it->i_how & (GW_GITDIR | GW_POINTED)) ||
	    fslist_gitdir(s.ls_marks);
	if (gitdir && !gwalk_judged(w, &st)) {
		if (gwalk_gitdir(w, it, dfd, &s))
			goto done;
	} else if (gitdir && whole)
		goto done;
	gwalk_subs(w, it, &s, gitdir);
	if (gitdir && whole)
		goto done;
	if (s.ls_marks & FSLIST_GIT)
		gwalk_git(w, it->i_root, rel, dfd);
	if (s.ls_marks & FSLIST_HG) {
		v = guard_judge(g, dfd, ".hg", &why);
		quarantine_act(w, r, rel, dfd, ".hg", "a Mercurial repository "
		    "(.hg)", v, why);
	}
done:
	fslist_seen_clear(&s);
	if (dfd != -1)
		close(dfd);
}

/*
 * Walks every writable root, breadth first.  Folders that were there
 * unchanged before the run are read up to the guard's bound; past it,
 * git directories and what pointers name are still judged.
 */
void
gwalk_run(struct guard_walk *w)
{
	struct guard		*g = w->w_g;
	struct guard_item	 it;
	size_t			 i;

	w->w_taken = time(NULL);
	for (i = 0; i < g->g_nroots; i++)
		gwalk_push(w, i, xstrdup(""), 0);
	while (w->w_head < w->w_nq) {
		it = w->w_q[w->w_head++];
		if (it.i_how != 0 || g->g_scanned <= g->g_scan_max)
			gwalk_dir(w, &it);
		free(it.i_rel);
	}
	fslist_turn(g->g_lists);
}
