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
 * every writable root is walked (gwalk.c), without following links,
 * through the descriptor opened before the run; each repository marker
 * that the plan did not protect and that changed during the run is
 * judged (guard_judge).  One whose config holds only keys inert where
 * it lies and whose hooks are git's samples (gitcfg_dir_inert) is what
 * git clone or init makes: kept, listed, its remotes said.  Any other
 * is renamed
 * (quarantine.c: .git to .git.cordon-quarantine-ID, a bare layout's
 * HEAD likewise, and each HEAD in a folder moved whole, so that git
 * run inside it finds no repository either), which git does not read,
 * and the run says what could run and fails.  Nothing is deleted: the
 * user looks, and moves it back if it is theirs.
 *
 * Git also reaches git directories with no marker of their own: inside
 * a .git (modules, worktrees, and any folder the command can write:
 * objects, refs, logs), and wherever a .git file or link, or a
 * commondir, points, read as git reads it (gitptr.c).  The walk finds
 * each and judges it by the one rule (guard_judge); one inside or
 * named by git goes whole.  What the walk cannot read is held, never
 * called clean: the run fails and names it.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "git/git.h"
#include "guard/guard.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fspath.h"

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
	g->g_lists = plan->fp_lists;
	g->g_nwatch = plan->fp_nwatch;
	gitwrite_places(plan, &g->g_places);
	return 0;
}

/* Opens rel below dfd (flags: O_PATH or a folder's), following no link. */
int
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

/*
 * What path below dfd is, not following links on the way or at its
 * end.  Returns 0, or -1 with errno (ELOOP: a link on the way).
 */
int
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

/*
 * Did a hook in the folder dfd/hooks (a link to one followed) change?
 * A hooks folder that cannot be listed counts as changed: git runs a
 * hook by name, so what it holds is judged (and is not inert).
 */
static bool
guard_hooks_newer(const struct guard *g, int dfd)
{
	struct dirent	*de;
	DIR		*dp;
	bool		 changed = false;
	int		 fd;

	if ((fd = openat(dfd, "hooks", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return errno != ENOENT && errno != ENOTDIR;
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		return true;
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
 * here), is quarantined (GV_MOVE, *why set), and so is one that cannot
 * be examined.  The one place that says what counts.
 */
enum guard_verdict
guard_judge(const struct guard *g, int dfd, const char *name, char **why)
{
	struct stat	 st;
	size_t		 i;
	bool		 changed;
	int		 fd;
	enum guard_verdict v;

	*why = NULL;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOENT)
			return GV_LEAVE;
		xasprintf(why, "it cannot be examined (%s)", strerror(errno));
		return GV_MOVE;
	}
	if (guard_known(g, &st))
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

/* rel/name, or name at a root. */
char *
guard_join(const char *rel, const char *name)
{
	return *rel == '\0' ? xstrdup(name) : path_join(rel, name);
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
			if ((gf = quarantine_move_rel(w, r, rel, "cordon's "
			    "workspace policy folder (.cordon)", xstrdup("later "
			    "runs would read it as this workspace's policy"))) !=
			    NULL)
				gf->gf_policy = true;
			break;
		}
}

/*
 * After the run: walks every writable root, breadth first, and
 * quarantines what changed.  Folders that were there unchanged before
 * the run are read up to GUARD_SCAN_MAX entries; past that, git
 * directories and what pointers name are still judged, the rest of
 * the tree is not (gwalk.c).  Returns the number of repositories
 * moved, or -1 when not all was seen: the walk was cut short by its
 * bound, or held a folder it could not read (then the run must fail).
 */
int
guard_check(struct guard *g, const char *id)
{
	struct guard_walk	 w;
	size_t			 i, first = g->g_nfinds, held = 0;

	memset(&w, 0, sizeof(w));
	w.w_g = g;
	w.w_id = id;
	g->g_scanned = 0;	/* a session checks after each command */
	gwalk_run(&w);
	guard_watched(&w);
	free(w.w_q);
	free(w.w_judged);
	for (i = first; i < g->g_nfinds; i++)
		held += g->g_finds[i].gf_held;
	if (g->g_scanned > g->g_scan_max || held > 0)
		return -1;
	return (int)g->g_nmoved;
}

/*
 * A folder quarantined whole (p, now m, escaped), its HEADs renamed
 * HEAD.cordon-quarantine-ID as m is (quarantine.c): the way back
 * renames them too.
 */
static void
guard_print_disarmed(FILE *f, const struct guard_find *gf, const char *p,
    const char *m)
{
	const char	*sfx = m, *at;

	while ((at = strstr(sfx + 1, QUARANTINE_SUFFIX)) != NULL)
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
		fprintf(f, "; but %zu HEAD %s or %s in it could not be "
		    "renamed or read (a file of that name in the way, a folder "
		    "it cannot list or too deep): do not run git inside it",
		    gf->gf_heads_left, gf->gf_heads_left == 1 ? "file" :
		    "files", gf->gf_heads_left == 1 ? "folder" : "folders");
	fputc('\n', f);
	fprintf(f, "cordon: hint: look at it with: "
	    "cat %s/config; ls -la %s/hooks; and only if you trust it, take "
	    "it back with: find %s -name 'HEAD%s' -execdir mv {} HEAD ';' "
	    "&& mv %s %s\n", m, m, m, sfx, m, p);
}

/*
 * A folder the walk could not read (p, escaped): not called clean.  Git
 * on the host may still find a repository in it.
 */
static void
guard_print_held(FILE *f, const struct guard_find *gf, const char *p)
{
	fprintf(f, "cordon: held %s, %s: %s; git on the host may run what "
	    "a repository in it holds, so the run fails\n"
	    "cordon: hint: look at it before running git there: chmod u+rx "
	    "%s && ls -laR %s\n", p, gf->gf_what, gf->gf_why, p, p);
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
		if (gf->gf_held) {
			guard_print_held(f, gf, p);
			free(p);
			continue;
		}
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
