/*
 * guard.c: after the run, the repositories the command made or changed
 * in the writable folders, judged by what they hold: those that could
 * make git on the host run a program moved out of git's sight.
 *
 * The mount plan (fsplan.c) protects the code of every repository it
 * finds and pins the folders above it, but it cannot know the names of
 * those the command will make: `git init vendor/lib` in a submodule's empty
 * folder, a new src/.git, a bare layout (HEAD, objects, refs) in docs/,
 * a .git file whose gitdir is a writable folder.  Git on the host finds
 * each of them when run below it, and runs what their config names
 * (core.fsmonitor, core.pager, hooks...).  So when the sandbox is gone,
 * every writable root is walked, without following links, through the
 * descriptor opened before the run; each repository marker that the
 * plan did not protect and that changed during the run is judged
 * (guard_judge).  One whose config holds only keys inert where it lies
 * and whose hooks are git's samples (gitcfg_dir_inert) is what git
 * clone or init makes: kept, listed, its remotes said.  Any other is
 * renamed (.git to
 * .git.cordon-quarantine-ID, a bare layout's HEAD likewise, and each
 * HEAD in a folder moved whole, so that git run inside it finds no
 * repository either), which git does not read, and the run says what
 * could run and fails.  Nothing is deleted: the user looks, and moves
 * it back if it is theirs.
 *
 * Git also reaches git directories with no marker of their own: in a
 * .git's modules (a submodule's, reused by `git submodule update`; a
 * name may hold '/', and a module its own modules) and worktrees, and
 * wherever a .git file or link, or a commondir, points.  So the walk
 * enters the .git folders the plan protected too, there only modules
 * and worktrees, follows each pointer that leads into a writable root,
 * and judges every git directory it meets by the one rule
 * (guard_judge); one inside or named by git goes whole.
 *
 * The walk's bound is for folders that were there unchanged before the
 * run: what the command made is read whole (making it costs more than
 * reading it), so the command cannot bring the walk to its bound; past
 * it, the git directories already found are still judged, and the run
 * fails.
 *
 * The command is dead by then (its PID namespace went with PID 1), so
 * the tree holds still; another run in the same folders could still
 * change it, which the threat model says.
 *
 * Runs in: cordon run on the host after the run, or the sentinel
 *   (sentinel.c) if cordon run ended first.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fspath.h"
#include "git.h"
#include "guard.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

#define GUARD_SUFFIX	".cordon-quarantine-"
#define GUARD_DISARM_DEPTH 16	/* modules' names nest (a/b/c) */
#define GUARD_TAG_MAX	96	/* the id, "-", 8 random hex digits */

/* How the walk reached a folder (guard_item's i_how). */
#define GW_GITDIR	0x1	/* a .git folder its parent judged */
#define GW_NESTED	0x2	/* in a git dir's modules, worktrees */
#define GW_POINTED	0x4	/* named by a .git file, link, commondir */

#define GUARD_POINTER_MAX 4096	/* bytes read of a .git file, commondir */

/* What guard_judge finds of a repository. */
enum guard_verdict {
	GV_LEAVE,	/* not the command's: protected, or unchanged */
	GV_KEEP,	/* made or changed, inert: the user's work, kept */
	GV_MOVE		/* made or changed, and could make git run a */
};			/* program: quarantined */

/* A folder waiting in the walk: i_rel below root i_root. */
struct guard_item {
	size_t		 i_root;
	char		*i_rel;
	int		 i_how;
};

struct guard_walk {
	struct guard	 *w_g;
	const char	 *w_id;
	struct guard_item *w_q;	/* breadth first */
	size_t		  w_nq, w_head;
	struct fs_mark	 *w_judged;	/* git directories judged */
	size_t		  w_njudged;
};

/* What one folder's listing holds, for the markers. */
struct guard_seen {
	bool	 s_git;			/* a ".git" entry, any type */
	bool	 s_hg;			/* a ".hg" */
	bool	 s_head, s_objects, s_refs, s_commondir;
	char	**s_subs;		/* the other folders in it */
	size_t	 s_nsubs;
};

/*
 * What, in a git directory (or a .hg), makes git run a program or look
 * elsewhere: its config, a linked worktree's config and links, the
 * hooks, the attributes that pick filter and diff drivers, the
 * alternates that point git at other objects.  The plan makes them
 * read-only in the repositories it knows (fsscan.c).
 */
static const char *const guard_code[] = {
	"config", "config.worktree", "commondir", "gitdir", "hooks",
	"info/attributes", "objects/info/alternates",
	"objects/info/http-alternates", "hgrc"
};

static bool
guard_known(const struct guard *g, const struct stat *st)
{
	size_t	 i;

	for (i = 0; i < g->g_nknown; i++)
		if (g->g_known[i].fm_dev == st->st_dev &&
		    g->g_known[i].fm_ino == st->st_ino)
			return true;
	return false;
}

/* Adds what fd is to the markers made or protected before the run. */
void
guard_know(struct guard *g, int fd)
{
	struct stat	 st;

	if (fd != -1 && fstat(fd, &st) == 0)
		fspath_mark(&g->g_known, &g->g_nknown, &st);
}

/*
 * Before the run: the writable roots that are not inside another, as
 * descriptors, and the repository markers the plan protected.  Returns
 * 0, or -1 with *cause set.
 */
int
guard_open(struct guard *g, const struct fsplan *plan, char **cause)
{
	const struct fs_op	*op;
	size_t			 i, j;
	bool			 inner;
	int			 fd;

	memset(g, 0, sizeof(*g));
	g->g_start = time(NULL) - 1;	/* ctime is coarse */
	g->g_scan_max = GUARD_SCAN_MAX;
	if (plan->fp_nmarks > 0) {
		g->g_known = xreallocarray(NULL, plan->fp_nmarks,
		    sizeof(*g->g_known));
		memcpy(g->g_known, plan->fp_marks, plan->fp_nmarks *
		    sizeof(*g->g_known));
		g->g_nknown = plan->fp_nmarks;
	}
	for (i = 0; i < plan->fp_nops; i++) {
		op = &plan->fp_ops[i];
		if (op->fo_kind != FS_RW || !op->fo_dir)
			continue;
		for (inner = false, j = 0; j < g->g_nroots && !inner; j++)
			inner = path_is_below(op->fo_path,
			    g->g_roots[j].gr_path);
		if (inner)
			continue;
		if ((fd = open(op->fo_path, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) == -1) {
			xasprintf(cause, "%s: %s", op->fo_path,
			    strerror(errno));
			return -1;
		}
		g->g_roots = xreallocarray(g->g_roots, g->g_nroots + 1,
		    sizeof(*g->g_roots));
		g->g_roots[g->g_nroots].gr_fd = fd;
		g->g_roots[g->g_nroots++].gr_path = op->fo_path;
	}
	g->g_watch = plan->fp_watch;
	g->g_nwatch = plan->fp_nwatch;
	gitwrite_places(plan, &g->g_places);
	return 0;
}


/* Opens rel below dfd (flags: O_PATH or a folder's), following no link. */
static int
guard_openat(int dfd, const char *rel, int flags)
{
	struct open_how	 how;

	memset(&how, 0, sizeof(how));
	how.flags = flags | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, dfd, *rel == '\0' ? "." : rel, &how,
	    sizeof(how));
}

/* Opens rel below root as a folder to list. */
static int
guard_opendir(int root, const char *rel)
{
	return guard_openat(root, rel, O_RDONLY | O_DIRECTORY);
}

/*
 * What path below dfd is, not following links on the way or at its
 * end.  Returns 0, or -1 with errno (ELOOP: a link on the way).
 */
static int
guard_stat(int dfd, const char *path, struct stat *st)
{
	int	 fd, rc;

	if ((fd = guard_openat(dfd, path, O_PATH)) == -1)
		return -1;
	rc = fstat(fd, st);
	close(fd);
	return rc;
}

/*
 * Did path below dfd change during the run (ctime, which no one can
 * set)?  A link on the way counts: git would follow it.
 */
static bool
guard_newer(const struct guard *g, int dfd, const char *path)
{
	struct stat	 st;

	if (guard_stat(dfd, path, &st) == -1)
		return errno == ELOOP;
	return st.st_ctime >= g->g_start;
}

/* Did a hook in the folder dfd/hooks (a link to one followed) change? */
static bool
guard_hooks_newer(const struct guard *g, int dfd)
{
	struct dirent	*de;
	DIR		*dp;
	bool		 changed = false;
	int		 fd;

	if ((fd = openat(dfd, "hooks", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return false;
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		return false;
	}
	while (!changed && (de = readdir(dp)) != NULL)
		changed = de->d_name[0] != '.' && guard_newer(g, fd,
		    de->d_name);
	closedir(dp);
	return changed;
}

/*
 * The verdict on the repository at dfd/name (a .git, a .hg, a git
 * directory, or "." for dfd itself).  Not the command's (GV_LEAVE):
 * the plan protected it (by identity: the marker, or in a folder the
 * code it made read-only there), or nothing in it changed during the
 * run: the marker, or what makes git run a program or look elsewhere
 * (guard_code, each hook).  Else it is judged by what it holds: a git
 * directory whose config holds inert keys only and whose hooks are
 * git's samples is the user's work, kept (GV_KEEP); one that could
 * make git on the host run a program, or a .hg (whose hgrc is not read
 * here), is quarantined (GV_MOVE, *why set).  The one place that says
 * what counts.
 */
static enum guard_verdict
guard_judge(const struct guard *g, int dfd, const char *name, char **why)
{
	struct stat	 st;
	size_t		 i;
	bool		 changed;
	int		 fd;
	enum guard_verdict v;

	*why = NULL;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    guard_known(g, &st))
		return GV_LEAVE;
	changed = st.st_ctime >= g->g_start;
	if (!S_ISDIR(st.st_mode) || (fd = openat(dfd, name, O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (changed)
			*why = xstrdup("it is not a folder git reads as one");
		return changed ? GV_MOVE : GV_LEAVE;
	}
	for (i = 0; i < nitems(guard_code); i++)
		if (guard_stat(fd, guard_code[i], &st) == 0 &&
		    guard_known(g, &st)) {
			close(fd);
			return GV_LEAVE;
		}
	for (i = 0; i < nitems(guard_code) && !changed; i++)
		changed = guard_newer(g, fd, guard_code[i]);
	if (!changed)
		changed = guard_hooks_newer(g, fd);
	if (!changed)
		v = GV_LEAVE;
	else if (strcmp(name, ".hg") == 0) {
		*why = xstrdup("Mercurial's hgrc and hooks are not judged here");
		v = GV_MOVE;
	} else
		v = gitcfg_dir_inert(fd, &g->g_places, why) ? GV_KEEP :
		    GV_MOVE;
	close(fd);
	return v;
}

/* Was the git directory st judged already?  If not, it is now. */
static bool
guard_judged(struct guard_walk *w, const struct stat *st)
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
guard_push(struct guard_walk *w, size_t i, char *rel, int how)
{
	w->w_q = xreallocarray(w->w_q, w->w_nq + 1, sizeof(*w->w_q));
	w->w_q[w->w_nq].i_root = i;
	w->w_q[w->w_nq].i_rel = rel;
	w->w_q[w->w_nq++].i_how = how;
}

/* rel/name, or name at a root. */
static char *
guard_join(const char *rel, const char *name)
{
	char	*p;

	if (*rel == '\0')
		return xstrdup(name);
	xasprintf(&p, "%s/%s", rel, name);
	return p;
}

/* Notes the repository dfd/name (in folder rel of r); takes why. */
static struct guard_find *
guard_note(struct guard_walk *w, const struct guard_root *r,
    const char *rel, const char *name, const char *what, char *why)
{
	struct guard		*g = w->w_g;
	struct guard_find	*gf;
	char			*from;

	g->g_finds = xreallocarray(g->g_finds, g->g_nfinds + 1,
	    sizeof(*g->g_finds));
	gf = &g->g_finds[g->g_nfinds++];
	memset(gf, 0, sizeof(*gf));
	from = strcmp(name, ".") == 0 ? xstrdup(rel) : guard_join(rel, name);
	xasprintf(&gf->gf_path, "%s/%s", r->gr_path, from);
	free(from);
	gf->gf_what = what;
	gf->gf_why = why;
	return gf;
}

/*
 * What the guard moved is its own from then on: the folder fd and what
 * it holds are known, so that a later check (after a session's next
 * command) does not judge the quarantine itself (a bare layout's HEAD
 * in it) again.  It stays under its quarantine name, where git does
 * not look for a repository, whatever a later command writes in it.
 */
static void
guard_know_moved(struct guard *g, int fd)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	int		 dfd;

	guard_know(g, fd);
	if ((dfd = dup(fd)) == -1 || (d = fdopendir(dfd)) == NULL) {
		if (dfd != -1)
			close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 && fstatat(fd, de->d_name,
		    &st, AT_SYMLINK_NOFOLLOW) == 0)
			fspath_mark(&g->g_known, &g->g_nknown, &st);
	closedir(d);
}

/*
 * Renames each HEAD in the moved folder fd, and below it (the git
 * directories of modules and worktrees; logs/HEAD too), to
 * HEAD.cordon-quarantine-ID: git run inside a folder, as a shell prompt
 * runs it on cd, takes that folder or one around it for a repository,
 * and reads its config, only if it has a HEAD.  At most
 * GUARD_DISARM_DEPTH deep.  Returns how many it renamed; counts in
 * *failed those it could not (a name in the way, which the command
 * could have put there).
 */
static size_t
guard_disarm(int fd, const char *id, int depth, size_t *failed)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	char		*to;
	size_t		 n = 0;
	int		 dfd, sub;

	if (depth > GUARD_DISARM_DEPTH || (dfd = dup(fd)) == -1)
		return 0;
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return 0;
	}
	xasprintf(&to, "HEAD%s%s", GUARD_SUFFIX, id);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, "HEAD") == 0) {
			if (syscall(SYS_renameat2, fd, "HEAD", fd, to,
			    RENAME_NOREPLACE) == 0)
				n++;
			else
				(*failed)++;
			continue;
		}
		if ((de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
		    strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 || fstatat(fd, de->d_name,
		    &st, AT_SYMLINK_NOFOLLOW) == -1 || !S_ISDIR(st.st_mode) ||
		    (sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) == -1)
			continue;
		n += guard_disarm(sub, id, depth + 1, failed);
		close(sub);
	}
	free(to);
	closedir(d);
	return n;
}

/*
 * Renames dfd/name to NAME.cordon-quarantine-TAG, TAG the run's id, or
 * when a command put that name in the way (the id shows in a session's
 * earlier quarantines) the id and a random part: a name it cannot
 * foresee.  Returns 0 with tag and *to (caller frees) set, or -1 with
 * errno.
 */
static int
guard_rename(int dfd, const char *name, const char *id, char *tag,
    char **to)
{
	char	 rnd[9];
	int	 i;

	snprintf(tag, GUARD_TAG_MAX, "%s", id);
	for (i = 0; i < 4; i++) {
		if (i > 0) {
			if (str_random_hex(rnd, 8) == -1)
				return -1;
			rnd[8] = '\0';
			snprintf(tag, GUARD_TAG_MAX, "%s-%s", id, rnd);
		}
		xasprintf(to, "%s%s%s", name, GUARD_SUFFIX, tag);
		if (syscall(SYS_renameat2, dfd, name, dfd, *to,
		    RENAME_NOREPLACE) == 0)
			return 0;
		free(*to);
		*to = NULL;
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/*
 * Renames dfd/name (in folder rel) out of git's sight and notes it;
 * takes why; returns the note.  A folder moved gets a .gitignore that
 * ignores it all, so that git status in a repository around it does
 * not list its insides.
 */
static struct guard_find *
guard_move(struct guard_walk *w, const struct guard_root *r,
    const char *rel, int dfd, const char *name, const char *what, char *why)
{
	struct guard_find	*gf;
	char			*to = NULL, *from, tag[GUARD_TAG_MAX];
	int			 fd, ign;

	gf = guard_note(w, r, rel, name, what, why);
	w->w_g->g_nmoved++;
	if (guard_rename(dfd, name, w->w_id, tag, &to) == -1) {
		gf->gf_error = errno;
		xasprintf(&to, "%s%s%s", name, GUARD_SUFFIX, w->w_id);
	}
	from = guard_join(rel, to);
	xasprintf(&gf->gf_moved, "%s/%s", r->gr_path, from);
	free(from);
	if (gf->gf_error == 0 && (fd = openat(dfd, to, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) != -1) {
		if ((ign = openat(fd, ".gitignore", O_WRONLY | O_CREAT |
		    O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) != -1) {
			if (write(ign, "*\n", 2) != 2)
				log_debug("%s: .gitignore", __func__);
			close(ign);
		}
		gf->gf_heads = guard_disarm(fd, tag, 0, &gf->gf_heads_left);
		guard_know_moved(w->w_g, fd);
		close(fd);
	}
	free(to);
	return gf;
}

/* Acts on a verdict on dfd/name: moves, or notes as kept; takes why. */
static void
guard_act(struct guard_walk *w, const struct guard_root *r, const char *rel,
    int dfd, const char *name, const char *what, enum guard_verdict v,
    char *why)
{
	if (v == GV_MOVE)
		guard_move(w, r, rel, dfd, name, what, why);
	else if (v == GV_KEEP)
		guard_note(w, r, rel, name, what, why)->gf_kept = true;
	else
		free(why);
}

/*
 * Renames rel (not the root itself) below root r, through its parent;
 * takes why.  Returns the note, or NULL when the parent cannot be
 * opened.
 */
static struct guard_find *
guard_move_rel(struct guard_walk *w, const struct guard_root *r,
    const char *rel, const char *what, char *why)
{
	struct guard_find	*gf = NULL;
	const char		*name = rel;
	char			*parent, *slash;
	int			 pfd;

	parent = xstrdup(rel);
	if ((slash = strrchr(parent, '/')) != NULL) {
		*slash = '\0';
		name = rel + (slash + 1 - parent);
	} else
		*parent = '\0';
	if ((pfd = guard_opendir(r->gr_fd, parent)) != -1) {
		gf = guard_move(w, r, parent, pfd, name, what, why);
		close(pfd);
	} else
		free(why);
	free(parent);
	return gf;
}

/*
 * Renames the git directory rel itself, through its parent: its HEAD
 * at a root, which cannot move.
 */
static void
guard_move_self(struct guard_walk *w, size_t i, const char *rel, int dfd,
    char *why)
{
	static const char	 what[] = "a git directory (in another's "
	    "modules or worktrees, or named by a .git file or commondir)";
	const struct guard_root	*r = &w->w_g->g_roots[i];

	if (*rel == '\0')
		(void)guard_move(w, r, rel, dfd, "HEAD", what, why);
	else
		(void)guard_move_rel(w, r, rel, what, why);
}

/*
 * Where a pointer in folder rel (dfd) of root i leads, as git follows
 * it: a .git link, a .git file's "gitdir: PATH" or a commondir's PATH,
 * relative to the folder.  The folder it names is queued to be judged
 * when it lies in a writable root; one outside them the command could
 * not write.  Returns whether it lies in one.
 */
static bool
guard_follow(struct guard_walk *w, size_t i, const char *rel, int dfd,
    const char *name)
{
	const struct guard	*g = w->w_g;
	struct stat		 st, at;
	const char		*root, *t;
	char			 buf[GUARD_POINTER_MAX + 1], real[PATH_MAX];
	char			 proc[64], *base, *path = NULL;
	ssize_t			 n = -1;
	size_t			 j;
	int			 fd;
	bool			 in = false;

	base = guard_join(rel, "");
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		goto out;
	if (S_ISLNK(st.st_mode))
		xasprintf(&path, "%s/%s%s", g->g_roots[i].gr_path, base, name);
	else if (S_ISREG(st.st_mode) && (fd = openat(dfd, name, O_RDONLY |
	    O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) != -1) {
		n = read(fd, buf, GUARD_POINTER_MAX);
		close(fd);
	}
	if (n > 0) {
		buf[n] = '\0';
		buf[strcspn(buf, "\r\n")] = '\0';
		t = buf;
		if (strcmp(name, ".git") == 0)
			t = strncmp(t, "gitdir:", 7) == 0 ? t + 7 +
			    strspn(t + 7, " \t") : "";
		if (*t == '/')
			path = xstrdup(t);
		else if (*t != '\0')
			xasprintf(&path, "%s/%s%s", g->g_roots[i].gr_path,
			    base, t);
	}
	if (path == NULL || (fd = open(path, O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		goto out;
	(void)snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = fstat(fd, &st) == -1 ? -1 : readlink(proc, real,
	    sizeof(real) - 1);
	close(fd);
	if (n <= 0)
		goto out;
	real[n] = '\0';
	for (j = 0; j < g->g_nroots; j++) {
		root = g->g_roots[j].gr_path;
		if (!path_is_below(real, root))
			continue;
		t = real + (strcmp(root, "/") == 0 ? 0 : strlen(root));
		t += strspn(t, "/");
		if (guard_stat(g->g_roots[j].gr_fd, t, &at) == 0 &&
		    at.st_dev == st.st_dev && at.st_ino == st.st_ino) {
			guard_push(w, j, xstrdup(t), GW_POINTED);
			in = true;
			break;
		}
	}
out:
	free(path);
	free(base);
	return in;
}

/*
 * Lists one folder (dp): the markers in it, and its other folders.
 * Entries count towards the bound only when counted: a folder the
 * command changed, or one inside a git directory, is read whole, so
 * that what the run made cannot bring the walk to its bound.
 */
static void
guard_list(struct guard *g, DIR *dp, bool counted, struct guard_seen *s)
{
	struct dirent	*de;
	struct stat	 st;
	const char	*n;

	while ((de = readdir(dp)) != NULL) {
		n = de->d_name;
		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
			continue;
		if (counted)
			g->g_scanned++;
		s->s_git |= strcmp(n, ".git") == 0;
		s->s_hg |= strcmp(n, ".hg") == 0;
		s->s_head |= strcmp(n, "HEAD") == 0;
		s->s_objects |= strcmp(n, "objects") == 0;
		s->s_refs |= strcmp(n, "refs") == 0;
		s->s_commondir |= strcmp(n, "commondir") == 0;
		/* A .git or .hg is a marker, judged by itself. */
		if (strcmp(n, ".git") == 0 || strcmp(n, ".hg") == 0 ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
		    fstatat(dirfd(dp), n, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISDIR(st.st_mode))
			continue;
		s->s_subs = xreallocarray(s->s_subs, s->s_nsubs + 1,
		    sizeof(*s->s_subs));
		s->s_subs[s->s_nsubs++] = xstrdup(n);
	}
}

/*
 * The .git in folder rel (dfd) of root i: where a file or link leads is
 * judged too; one made or changed goes; a folder kept is entered.
 */
static void
guard_git(struct guard_walk *w, size_t i, const char *rel, int dfd)
{
	static const char	 what[] = "a git repository (.git)";
	struct stat		 st;
	enum guard_verdict	 v;
	char			*why;
	bool			 in;

	if (fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == -1)
		return;
	if (S_ISDIR(st.st_mode)) {
		v = guard_judge(w->w_g, dfd, ".git", &why);
		guard_act(w, &w->w_g->g_roots[i], rel, dfd, ".git", what, v,
		    why);
		if (v != GV_MOVE)
			guard_push(w, i, guard_join(rel, ".git"), GW_GITDIR);
		return;
	}
	/* A .git file or link: where it leads is judged, if we may. */
	in = guard_follow(w, i, rel, dfd, ".git");
	if ((v = guard_judge(w->w_g, dfd, ".git", &why)) == GV_MOVE && in) {
		free(why);
		why = NULL;
		v = GV_KEEP;
	} else if (v == GV_MOVE) {
		free(why);
		why = xstrdup("it points outside the writable folders, where "
		    "the check cannot judge what it names");
	}
	guard_act(w, &w->w_g->g_roots[i], rel, dfd, ".git", what, v, why);
}

/*
 * One folder of the walk.  A git directory (a .git folder, a folder
 * with git's layout, one a pointer names) is judged once, its
 * commondir followed.  Git reaches into one only through its modules
 * (a submodule's git directory, at any depth, its name may hold '/')
 * and worktrees, so of a git directory inside or named by git only
 * those are entered, and such a git directory, when judged, goes
 * whole; a folder of the worktree with git's layout loses its HEAD and
 * is entered whole, as any other.
 */
static void
guard_dir(struct guard_walk *w, const struct guard_item *it)
{
	struct guard		*g = w->w_g;
	const struct guard_root	*r = &g->g_roots[it->i_root];
	const char		*rel = it->i_rel, *n;
	struct guard_seen	 s;
	struct stat		 st;
	DIR			*dp;
	size_t			 k;
	int			 dfd, how;
	bool			 gitdir, whole = it->i_how != 0;
	enum guard_verdict	 v;
	char			*why;

	memset(&s, 0, sizeof(s));
	if ((dfd = guard_opendir(r->gr_fd, rel)) == -1)
		return;
	if (fstat(dfd, &st) == -1 || (dp = fdopendir(dfd)) == NULL) {
		close(dfd);
		return;
	}
	guard_list(g, dp, it->i_how == 0 && st.st_ctime < g->g_start, &s);
	gitdir = (it->i_how & (GW_GITDIR | GW_POINTED)) || (s.s_head &&
	    ((s.s_objects && s.s_refs) || s.s_commondir));
	if (gitdir && !guard_judged(w, &st)) {
		if (s.s_commondir)
			(void)guard_follow(w, it->i_root, rel, dfd,
			    "commondir");
		v = it->i_how & GW_GITDIR ? GV_LEAVE : guard_judge(g, dfd, ".",
		    &why);
		if (v == GV_MOVE && whole) {
			guard_move_self(w, it->i_root, rel, dfd, why);
			goto done;
		}
		if (v != GV_LEAVE)
			guard_act(w, r, rel, dfd, whole ? "." : "HEAD", whole ?
			    "a git directory (in another's modules or "
			    "worktrees, or named by a .git file or commondir)" :
			    "a bare repository (HEAD with objects and refs, or "
			    "commondir)", v, why);
	} else if (gitdir && whole)
		goto done;
	for (k = 0; k < s.s_nsubs; k++) {
		n = s.s_subs[k];
		if (gitdir && (strcmp(n, "modules") == 0 ||
		    strcmp(n, "worktrees") == 0))
			how = GW_NESTED;
		else if (gitdir && whole)
			continue;
		else
			how = it->i_how & GW_NESTED;
		guard_push(w, it->i_root, guard_join(rel, n), how);
	}
	if (gitdir && whole)
		goto done;
	if (s.s_git)
		guard_git(w, it->i_root, rel, dfd);
	if (s.s_hg) {
		v = guard_judge(g, dfd, ".hg", &why);
		guard_act(w, r, rel, dfd, ".hg", "a Mercurial repository (.hg)",
		    v, why);
	}
done:
	for (k = 0; k < s.s_nsubs; k++)
		free(s.s_subs[k]);
	free(s.s_subs);
	closedir(dp);
}

/*
 * A watched path (a .cordon that was not there: fsplan.c) the command
 * made: moved aside, as a repository is, since a later run would read
 * it as the workspace's policy.
 */
static void
guard_watched(struct guard_walk *w)
{
	const struct guard	*g = w->w_g;
	const struct guard_root	*r;
	struct guard_find	*gf;
	struct stat		 st;
	const char		*rel;
	size_t			 i, j;

	for (i = 0; i < g->g_nwatch; i++)
		for (j = 0; j < g->g_nroots; j++) {
			r = &g->g_roots[j];
			if (!path_is_below(g->g_watch[i], r->gr_path) ||
			    strcmp(g->g_watch[i], r->gr_path) == 0)
				continue;
			rel = g->g_watch[i] + (strcmp(r->gr_path, "/") == 0 ?
			    1 : strlen(r->gr_path) + 1);
			if (guard_stat(r->gr_fd, rel, &st) == -1 &&
			    errno != ELOOP)
				break;
			if ((gf = guard_move_rel(w, r, rel, "cordon's workspace "
			    "policy folder (.cordon)", xstrdup("later runs would "
			    "read it as this workspace's policy"))) != NULL)
				gf->gf_policy = true;
			break;
		}
}

/*
 * After the run: walks every writable root, breadth first, and
 * quarantines what changed.  Folders that were there unchanged before
 * the run are read up to GUARD_SCAN_MAX entries; past that, git
 * directories and what pointers name are still judged, the rest of
 * the tree is not.  Returns the number of repositories found (moved or
 * not), or -1 when the walk was cut short by its bound (then the run
 * must fail: not all was seen).
 */
int
guard_check(struct guard *g, const char *id)
{
	struct guard_walk	 w;
	struct guard_item	 it;
	size_t			 i;

	memset(&w, 0, sizeof(w));
	w.w_g = g;
	w.w_id = id;
	for (i = 0; i < g->g_nroots; i++)
		guard_push(&w, i, xstrdup(""), 0);
	while (w.w_head < w.w_nq) {
		it = w.w_q[w.w_head++];
		if (it.i_how != 0 || g->g_scanned <= g->g_scan_max)
			guard_dir(&w, &it);
		free(it.i_rel);
	}
	guard_watched(&w);
	free(w.w_q);
	free(w.w_judged);
	if (g->g_scanned > g->g_scan_max)
		return -1;
	return (int)g->g_nmoved;
}

/*
 * A folder quarantined whole (p, now m, escaped), its HEADs renamed
 * HEAD.cordon-quarantine-ID as m is (guard_disarm): the way back
 * renames them too.
 */
static void
guard_print_disarmed(FILE *f, const struct guard_find *gf, const char *p,
    const char *m)
{
	const char	*sfx = m, *at;

	while ((at = strstr(sfx + 1, GUARD_SUFFIX)) != NULL)
		sfx = at;
	fprintf(f, "cordon: quarantined %s, %s the command made or changed "
	    "that could make git on the host run a program or act outside "
	    "the workspace (%s): moved to "
	    "%s", p, gf->gf_what, gf->gf_why, m);
	if (gf->gf_heads > 0)
		fprintf(f, ", and its HEAD %s renamed HEAD%s, so that git does "
		    "not read it, even when run inside it", gf->gf_heads == 1 ?
		    "file" : "files", sfx);
	if (gf->gf_heads_left > 0)
		fprintf(f, "; but %zu HEAD %s in it could not be renamed (a "
		    "file of that name in the way): do not run git inside it",
		    gf->gf_heads_left, gf->gf_heads_left == 1 ? "file" :
		    "files");
	fputc('\n', f);
	fprintf(f, "cordon: hint: look at it with: "
	    "cat %s/config; ls -la %s/hooks; and only if you trust it, take "
	    "it back with: find %s -name 'HEAD%s' -execdir mv {} HEAD ';' "
	    "&& mv %s %s\n", m, m, m, sfx, m, p);
}

/*
 * A repository kept that adds remotes: where git on the host will push
 * and fetch from now is said (gf_why, escaped by gitcfg.c).
 */
static void
guard_print_kept(FILE *f, const struct guard_find *gf)
{
	char	*p;

	if (gf->gf_why == NULL)
		return;
	p = str_escape(gf->gf_path, strlen(gf->gf_path));
	fprintf(f, "cordon: kept %s, %s the command made or changed, with "
	    "its remotes, where git on the host will fetch from and push "
	    "to: %s\n", p, gf->gf_what, gf->gf_why);
	free(p);
}

/*
 * Says what was quarantined, loudly: why, and the commands to look at
 * it and to take it back; and the remotes of what was kept.
 */
void
guard_print(const struct guard *g, FILE *f)
{
	const struct guard_find	*gf;
	char			*p, *m;
	size_t			 i;

	if (g->g_scanned > g->g_scan_max)
		fprintf(f, "cordon: the check for repositories the command "
		    "made stopped after %zu entries of folders that were "
		    "there before the run: git directories were all judged, "
		    "but git on the host may run what a repository deeper in "
		    "the writable folders holds; look before running git "
		    "there\ncordon: hint: make fewer "
		    "or smaller folders writable (filesystem.write, --write), "
		    "so that the check sees them all\n", g->g_scan_max);
	for (i = 0; i < g->g_nfinds; i++) {
		gf = &g->g_finds[i];
		if (gf->gf_kept) {
			guard_print_kept(f, gf);
			continue;
		}
		p = str_escape(gf->gf_path, strlen(gf->gf_path));
		m = str_escape(gf->gf_moved, strlen(gf->gf_moved));
		if (gf->gf_policy && gf->gf_error == 0)
			fprintf(f, "cordon: moved aside %s, %s, which the command "
			    "made (%s): now %s\ncordon: hint: look at it with: "
			    "ls -laR %s; and only if you want its rules for later "
			    "runs, take it back with: mv %s %s\n", p, gf->gf_what,
			    gf->gf_why, m, m, m, p);
		else if (gf->gf_error == 0 && gf->gf_heads +
		    gf->gf_heads_left > 0)
			guard_print_disarmed(f, gf, p, m);
		else if (gf->gf_error == 0)
			fprintf(f, "cordon: quarantined %s, %s the command "
			    "made or changed that could make git on the host "
			    "run a program or act outside the workspace (%s): "
			    "moved to %s, where git does "
			    "not read it\ncordon: hint: look at it with: "
			    "cat %s/config; ls -la %s/hooks; and only if you "
			    "trust it, take it back with: mv %s %s\n", p,
			    gf->gf_what, gf->gf_why, m, m, m, m, p);
		else
			fprintf(f, "cordon: %s is %s the command made or "
			    "changed that could make git on the host run a "
			    "program or act outside the workspace (%s), and "
			    "moving it away failed (%s): do "
			    "not run git there before you have looked at it\n",
			    p, gf->gf_what, gf->gf_why, strerror(gf->gf_error));
		free(p);
		free(m);
	}
}

void
guard_clear(struct guard *g)
{
	size_t	 i;

	for (i = 0; i < g->g_nroots; i++)
		close(g->g_roots[i].gr_fd);
	free(g->g_roots);
	for (i = 0; i < g->g_nfinds; i++) {
		free(g->g_finds[i].gf_path);
		free(g->g_finds[i].gf_moved);
		free(g->g_finds[i].gf_why);
	}
	free(g->g_finds);
	free(g->g_known);
	gitcfg_places_clear(&g->g_places);
	memset(g, 0, sizeof(*g));
}
