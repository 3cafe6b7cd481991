/*
 * quarantine.c: what the check after the run (guard.c) found that
 * could make git on the host run a program, renamed out of git's sight:
 * a .git to .git.cordon-quarantine-ID, a bare layout's HEAD likewise,
 * a git directory git reaches inside another (or by a pointer) moved
 * whole with each HEAD in it renamed, so that git run inside it finds
 * no repository either.  Nothing is deleted.  Each find is noted for
 * the terminal and --report (guard_print, tally.c).
 *
 * Runs in: cordon run on the host after the run, or the sentinel.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard/guard.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fspath.h"

#define QUARANTINE_DISARM_DEPTH 16	/* modules' names nest (a/b/c) */

/* Notes the repository dfd/name (in folder rel of r); takes why. */
struct guard_find *
quarantine_note(struct guard_walk *w, const struct guard_root *r,
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
quarantine_know_moved(struct guard *g, int fd)
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
 * QUARANTINE_DISARM_DEPTH deep.  Returns how many it renamed; counts in
 * *failed those it could not (a name in the way, which the command
 * could have put there), and each folder it could not read or that
 * lies deeper: what is there was not seen, so the run says not to run
 * git inside.
 */
static size_t
quarantine_disarm(int fd, const char *id, int depth, size_t *failed)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	char		*to;
	size_t		 n = 0;
	int		 dfd, sub;

	if (depth > QUARANTINE_DISARM_DEPTH || (dfd = dup(fd)) == -1) {
		(*failed)++;
		return 0;
	}
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		(*failed)++;
		return 0;
	}
	xasprintf(&to, "HEAD%s%s", QUARANTINE_SUFFIX, id);
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
		    strcmp(de->d_name, "..") == 0 || (fstatat(fd, de->d_name,
		    &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)))
			continue;
		if ((sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) == -1) {
			(*failed)++;
			continue;
		}
		n += quarantine_disarm(sub, id, depth + 1, failed);
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
 * errno.  Also hostcfg.c's, for what agents and editors would load.
 */
int
quarantine_rename(int dfd, const char *name, const char *id, char *tag,
    char **to)
{
	char	 rnd[9];
	int	 i;

	snprintf(tag, QUARANTINE_TAG_MAX, "%s", id);
	for (i = 0; i < 4; i++) {
		if (i > 0) {
			if (str_random_hex(rnd, 8) == -1)
				return -1;
			rnd[8] = '\0';
			snprintf(tag, QUARANTINE_TAG_MAX, "%s-%s", id, rnd);
		}
		xasprintf(to, "%s%s%s", name, QUARANTINE_SUFFIX, tag);
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
struct guard_find *
quarantine_move(struct guard_walk *w, const struct guard_root *r,
    const char *rel, int dfd, const char *name, const char *what, char *why)
{
	struct guard_find	*gf;
	char			*to = NULL, *from, tag[QUARANTINE_TAG_MAX];
	int			 fd, ign;

	gf = quarantine_note(w, r, rel, name, what, why);
	w->w_g->g_nmoved++;
	if (quarantine_rename(dfd, name, w->w_id, tag, &to) == -1) {
		gf->gf_error = errno;
		xasprintf(&to, "%s%s%s", name, QUARANTINE_SUFFIX, w->w_id);
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
		gf->gf_heads = quarantine_disarm(fd, tag, 0,
		    &gf->gf_heads_left);
		quarantine_know_moved(w->w_g, fd);
		close(fd);
	}
	free(to);
	return gf;
}

/* Acts on a verdict on dfd/name: moves, or notes as kept; takes why. */
void
quarantine_act(struct guard_walk *w, const struct guard_root *r,
    const char *rel, int dfd, const char *name, const char *what,
    enum guard_verdict v, char *why)
{
	if (v == GV_MOVE)
		quarantine_move(w, r, rel, dfd, name, what, why);
	else if (v == GV_KEEP)
		quarantine_note(w, r, rel, name, what, why)->gf_kept = true;
	else
		free(why);
}

/*
 * Renames rel (not the root itself) below root r, through its parent;
 * takes why.  Returns the note, or NULL when the parent cannot be
 * opened.
 */
struct guard_find *
quarantine_move_rel(struct guard_walk *w, const struct guard_root *r,
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
	if ((pfd = guard_openat(r->gr_fd, parent, O_RDONLY |
	    O_DIRECTORY)) != -1) {
		gf = quarantine_move(w, r, parent, pfd, name, what, why);
		close(pfd);
	} else
		free(why);
	free(parent);
	return gf;
}
