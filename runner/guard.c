/*
 * guard.c: after the run, the repositories the command made or changed
 * in the writable folders, moved out of git's sight.
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
 * plan did not protect and that changed during the run is renamed
 * (.git to .git.cordon-quarantine-ID, a bare layout's HEAD likewise),
 * which git does not read, and the run says so and fails.  Nothing is
 * deleted: the user looks, and moves it back if it is theirs.
 *
 * The command is dead by then (its PID namespace went with PID 1), so
 * the tree holds still; another run in the same folders could still
 * change it, which the threat model says.
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

#include "log.h"
#include "runner.h"
#include "util.h"
#include "xmalloc.h"

#define GUARD_SUFFIX	".cordon-quarantine-"

/* What one folder's listing holds, for the markers. */
struct guard_seen {
	bool	 s_git;			/* a ".git" entry, any type */
	bool	 s_hg;			/* a ".hg" */
	bool	 s_head, s_objects, s_refs, s_commondir;
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
		fsplan_mark_add(&g->g_known, &g->g_nknown, &st);
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
	return 0;
}

/* Opens rel below root as a folder to list, following no link. */
static int
guard_opendir(int root, const char *rel)
{
	struct open_how	 how;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, root, rel, &how, sizeof(how));
}

/* Did name in dfd change during the run (ctime, which no one can set)? */
static bool
guard_newer(const struct guard *g, int dfd, const char *name)
{
	struct stat	 st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_ctime >= g->g_start;
}

/*
 * Did the repository at dfd/name change during the run: the marker
 * itself, or, in a git directory, what makes git run a program or
 * look elsewhere (config, config.worktree, commondir, gitdir, hooks
 * and each hook).
 */
static bool
guard_changed(const struct guard *g, int dfd, const char *name)
{
	static const char *const files[] = {
		"config", "config.worktree", "commondir", "gitdir", "hooks",
		"hgrc"
	};
	struct dirent	*de;
	DIR		*dp;
	size_t		 i;
	int		 fd, hooks;
	bool		 changed;

	if (guard_newer(g, dfd, name))
		return true;
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return false;
	for (changed = false, i = 0; i < nitems(files) && !changed; i++)
		changed = guard_newer(g, fd, files[i]);
	hooks = openat(fd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	close(fd);
	if (hooks == -1 || (dp = fdopendir(hooks)) == NULL) {
		if (hooks != -1)
			close(hooks);
		return changed;
	}
	while (!changed && (de = readdir(dp)) != NULL)
		changed = de->d_name[0] != '.' && guard_newer(g, hooks,
		    de->d_name);
	closedir(dp);
	return changed;
}

/* Renames dfd/name out of git's sight and notes it. */
static void
guard_move(struct guard *g, const struct guard_root *r, const char *rel,
    int dfd, const char *name, const char *what, const char *id)
{
	struct guard_find	*gf;
	char			*to;

	xasprintf(&to, "%s%s%s", name, GUARD_SUFFIX, id);
	g->g_finds = xreallocarray(g->g_finds, g->g_nfinds + 1,
	    sizeof(*g->g_finds));
	gf = &g->g_finds[g->g_nfinds++];
	memset(gf, 0, sizeof(*gf));
	xasprintf(&gf->gf_path, "%s%s%s/%s", r->gr_path, *rel != '\0' ? "/" :
	    "", rel, name);
	xasprintf(&gf->gf_moved, "%s%s%s/%s", r->gr_path, *rel != '\0' ?
	    "/" : "", rel, to);
	gf->gf_what = what;
	if (syscall(SYS_renameat2, dfd, name, dfd, to, RENAME_NOREPLACE) ==
	    -1)
		gf->gf_error = errno;
	free(to);
}

/* Looks at one folder's markers, and queues its subfolders. */
static void
guard_dir(struct guard *g, const struct guard_root *r, const char *rel,
    const char *id, char ***queue, size_t *nq)
{
	struct guard_seen	 seen;
	struct dirent		*de;
	struct stat		 st;
	DIR			*dp;
	int			 dfd;

	if ((dfd = guard_opendir(r->gr_fd, *rel == '\0' ? "." : rel)) == -1)
		return;
	if ((dp = fdopendir(dfd)) == NULL) {
		close(dfd);
		return;
	}
	memset(&seen, 0, sizeof(seen));
	while ((de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (++g->g_scanned > g->g_scan_max)
			break;
		seen.s_git |= strcmp(de->d_name, ".git") == 0;
		seen.s_hg |= strcmp(de->d_name, ".hg") == 0;
		seen.s_head |= strcmp(de->d_name, "HEAD") == 0;
		seen.s_objects |= strcmp(de->d_name, "objects") == 0;
		seen.s_refs |= strcmp(de->d_name, "refs") == 0;
		seen.s_commondir |= strcmp(de->d_name, "commondir") == 0;
		/*
		 * A .git or .hg is a marker, whole: the plan's are
		 * read-only, a new one goes whole.  Anything else is
		 * entered, a quarantined repository of an earlier run too.
		 */
		if (strcmp(de->d_name, ".git") == 0 ||
		    strcmp(de->d_name, ".hg") == 0 ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISDIR(st.st_mode))
			continue;
		*queue = xreallocarray(*queue, *nq + 1, sizeof(**queue));
		if (*rel == '\0')
			(*queue)[(*nq)++] = xstrdup(de->d_name);
		else
			xasprintf(&(*queue)[(*nq)++], "%s/%s", rel,
			    de->d_name);
	}
	if (seen.s_git && fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) ==
	    0 && !guard_known(g, &st) && guard_changed(g, dfd, ".git"))
		guard_move(g, r, rel, dfd, ".git", "a git repository (.git)",
		    id);
	if (seen.s_hg && fstatat(dfd, ".hg", &st, AT_SYMLINK_NOFOLLOW) ==
	    0 && !guard_known(g, &st) && guard_changed(g, dfd, ".hg"))
		guard_move(g, r, rel, dfd, ".hg", "a Mercurial repository "
		    "(.hg)", id);
	if (seen.s_head && ((seen.s_objects && seen.s_refs) ||
	    seen.s_commondir) && fstat(dfd, &st) == 0 &&
	    !guard_known(g, &st) && guard_changed(g, dfd, "."))
		guard_move(g, r, rel, dfd, "HEAD", "a bare repository (HEAD "
		    "with objects and refs, or commondir)", id);
	closedir(dp);
}

/*
 * After the run: walks every writable root, breadth first, up to
 * GUARD_SCAN_MAX entries, and quarantines what changed.  Returns the
 * number of repositories found (moved or not), or -1 when the walk was
 * cut short by its bound (then the run must fail: not all was seen).
 */
int
guard_check(struct guard *g, const char *id)
{
	char	**queue = NULL;
	size_t	 i, nq, head;

	for (i = 0; i < g->g_nroots; i++) {
		nq = head = 0;
		queue = xreallocarray(queue, 1, sizeof(*queue));
		queue[nq++] = xstrdup("");
		while (head < nq && g->g_scanned <= g->g_scan_max) {
			guard_dir(g, &g->g_roots[i], queue[head], id, &queue,
			    &nq);
			free(queue[head++]);
		}
		for (; head < nq; head++)
			free(queue[head]);
	}
	free(queue);
	if (g->g_scanned > g->g_scan_max)
		return -1;
	return (int)g->g_nfinds;
}

/* Says what was quarantined, loudly, with what to do. */
void
guard_print(const struct guard *g, FILE *f)
{
	const struct guard_find	*gf;
	char			*p, *m;
	size_t			 i;

	if (g->g_scanned > g->g_scan_max)
		fprintf(f, "cordon: the check for repositories the command "
		    "made stopped after %zu entries: git on the host may run "
		    "what a repository deeper in the writable folders holds; "
		    "look before running git there\ncordon: hint: make fewer "
		    "or smaller folders writable (filesystem.write, --write), "
		    "so that the check sees them all\n", g->g_scan_max);
	for (i = 0; i < g->g_nfinds; i++) {
		gf = &g->g_finds[i];
		p = str_escape(gf->gf_path, strlen(gf->gf_path));
		m = str_escape(gf->gf_moved, strlen(gf->gf_moved));
		if (gf->gf_error == 0)
			fprintf(f, "cordon: quarantined %s, %s the command "
			    "made or changed: moved to %s, where git does not "
			    "read it\n", p, gf->gf_what, m);
		else
			fprintf(f, "cordon: %s is %s the command made or "
			    "changed, and moving it away failed (%s): do not "
			    "run git there before you have looked at it\n", p,
			    gf->gf_what, strerror(gf->gf_error));
		free(p);
		free(m);
	}
	if (g->g_nfinds > 0)
		fprintf(f, "cordon: hint: its config and hooks can make git "
		    "on the host run programs; look at them, and move it "
		    "back only if you trust them\n");
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
	}
	free(g->g_finds);
	free(g->g_known);
	memset(g, 0, sizeof(*g));
}
