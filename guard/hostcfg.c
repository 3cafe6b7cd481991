/*
 * hostcfg.c: after the run, what agents and editors on the host load or
 * run when the user opens the workspace, made by the command, moved out
 * of their sight.
 *
 * Git is not the only program on the host that runs what the workspace
 * names.  Claude Code runs the hooks of .claude/settings.json when a
 * session starts, and the MCP servers of .mcp.json; VS Code runs a task
 * of .vscode/tasks.json marked runOn folderOpen; direnv runs .envrc on
 * cd; Codex, Gemini CLI, Cursor, Zed, JetBrains IDEs and dev containers
 * have their own.  The policy lists them (filesystem.host_config).  The
 * mount plan (fsplan.c) keeps each one that is there read-only, so the
 * user's own cannot change; each one that is not, in a writable root,
 * it watches (fp_host).  Here, when the sandbox is gone, each watched
 * path is looked up by name, as the host's program opens it: one that
 * exists now was made during the run, and is renamed
 * NAME.cordon-quarantine-ID, which no such program reads, and the run
 * says so and fails.  A link made during the run on the way to one is
 * renamed the same way (the host's program would follow it); a link
 * that was there before is the user's, and followed while it stays in
 * the writable root.  Nothing is deleted: the user looks, and moves it
 * back if it is theirs.
 *
 * Runs in: cordon run on the host after the run (run_end.c), the keeper
 *   after each command of a session (keeper.c), or the sentinel
 *   (sentinel.c) if cordon run ended first.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "guard/guard.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

/* Before the run: the paths the plan watches (borrowed from it). */
void
hostcfg_open(struct guard *g, const struct fsplan *plan)
{
	g->g_host = plan->fp_host;
	g->g_nhost = plan->fp_nhost;
}

/*
 * Opens rel below root (a folder, with dir), following the links that
 * stay below it, as a program on the host follows them.  Returns the
 * descriptor (O_PATH), or -1 with errno (EXDEV: a link out of root).
 */
static int
hostcfg_openat(int root, const char *rel, bool dir)
{
	struct open_how	 how;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | (dir ? O_DIRECTORY : 0) | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, root, *rel == '\0' ? "." : rel, &how,
	    sizeof(how));
}

/*
 * Whether rel's first component is not in root at all (ENOENT), the
 * common case: one look, and no descriptor to open and close.  Any
 * other answer, or a name too long to look at, takes the whole walk.
 */
static bool
hostcfg_absent(int root, const char *rel)
{
	char		 name[NAME_MAX + 1];
	struct stat	 st;
	size_t		 len = strcspn(rel, "/");

	if (len == 0 || len > NAME_MAX)
		return false;
	memcpy(name, rel, len);
	name[len] = '\0';
	return fstatat(root, name, &st, AT_SYMLINK_NOFOLLOW) == -1 &&
	    errno == ENOENT;
}

/* A new find at at (its path on the host); returns it. */
static struct hostcfg_find *
hostcfg_note(struct guard *g, const char *at)
{
	struct hostcfg_find	*hf;

	g->g_hfinds = xreallocarray(g->g_hfinds, g->g_nhfinds + 1,
	    sizeof(*g->g_hfinds));
	hf = &g->g_hfinds[g->g_nhfinds++];
	memset(hf, 0, sizeof(*hf));
	hf->hf_path = xstrdup(at);
	return hf;
}

/*
 * Moves dfd/name aside; at is its path on the host.  Notes what was
 * done, or why not.
 */
static void
hostcfg_move(struct guard *g, const char *id, int dfd, const char *name,
    const char *at, mode_t mode)
{
	struct hostcfg_find	*hf;
	char			*to = NULL, tag[QUARANTINE_TAG_MAX];

	hf = hostcfg_note(g, at);
	hf->hf_link = S_ISLNK(mode);
	hf->hf_dir = S_ISDIR(mode);
	if (quarantine_rename(dfd, name, id, tag, &to) == -1) {
		hf->hf_error = errno;
		return;
	}
	xasprintf(&hf->hf_moved, "%.*s/%s", (int)(strrchr(at, '/') - at), at,
	    to);
	free(to);
}

/* What the check does with one component of a watched path. */
enum hostcfg_step {
	HC_LEAVE,	/* nothing there, or nothing read through it */
	HC_MOVE,	/* made during the run: moved aside */
	HC_ENTER,	/* a folder, or the user's link: followed */
	HC_HELD		/* could not be looked at: said, and the run fails */
};

/*
 * Whether a lookup's errno means there is nothing to judge: nothing
 * there, a file on the way, or the user's link out of the root.  Any
 * other (EACCES from a folder the command made unsearchable, a loop)
 * is held: the check does not call clean what it could not see.
 */
static bool
hostcfg_nothing(int error)
{
	return error == ENOENT || error == ENOTDIR || error == EXDEV;
}

/*
 * The step for the component upto (below root), st its lstat, the last
 * one or not.  A link made during the run (ctime, which no one can
 * set) is moved, wherever it leads: the host's program would follow
 * it.  A link from before is the user's (the plan pinned it): followed
 * while it stays in the root; as the last one, it is moved only when it
 * leads somewhere now, since what it names was missing at the start.
 */
static enum hostcfg_step
hostcfg_step(const struct guard *g, int root, const char *upto,
    const struct stat *st, bool last)
{
	int	 fd;

	if (S_ISLNK(st->st_mode) && st->st_ctime < g->g_start) {
		if (!last)
			return HC_ENTER;
		if ((fd = hostcfg_openat(root, upto, false)) == -1)
			return HC_LEAVE;
		close(fd);
		return HC_MOVE;
	}
	if (last || S_ISLNK(st->st_mode))
		return HC_MOVE;
	return S_ISDIR(st->st_mode) ? HC_ENTER : HC_LEAVE;
}

/*
 * The watched path rel below root r (at, on the host), looked up one
 * component at a time, as the host's program opens it by name: what
 * was made there, or a link made on the way, is moved aside.
 */
static void
hostcfg_one(struct guard *g, const char *id, const struct guard_root *r,
    const char *rel, const char *at)
{
	struct hostcfg_find	*hf;
	struct stat		 st;
	enum hostcfg_step	 step;
	char			*name, *upto, *shown;
	size_t			 off = 0, len, base = strlen(at) - strlen(rel);
	int			 dfd, next, error = 0;
	bool			 last;

	if (hostcfg_absent(r->gr_fd, rel))
		return;
	if ((dfd = hostcfg_openat(r->gr_fd, "", true)) == -1) {
		error = errno;
		hf = hostcfg_note(g, at);
		hf->hf_unread = true;
		hf->hf_error = error;
		return;
	}
	for (;;) {
		len = strcspn(rel + off, "/");
		last = rel[off + len] == '\0';
		name = xstrndup(rel + off, len);
		upto = xstrndup(rel, off + len);
		shown = xstrndup(at, base + off + len);
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			step = hostcfg_step(g, r->gr_fd, upto, &st, last);
		else
			step = hostcfg_nothing(error = errno) ? HC_LEAVE : HC_HELD;
		next = -1;
		if (step == HC_MOVE)
			hostcfg_move(g, id, dfd, name, shown, st.st_mode);
		else if (step == HC_ENTER && (next = hostcfg_openat(r->gr_fd,
		    upto, true)) == -1 && !hostcfg_nothing(error = errno))
			step = HC_HELD;
		if (step == HC_HELD) {
			hf = hostcfg_note(g, shown);
			hf->hf_unread = true;
			hf->hf_error = error;
		}
		free(shown);
		free(name);
		free(upto);
		close(dfd);
		if ((dfd = next) == -1)
			return;
		off += len + 1;
	}
}

/*
 * After the run: each watched path that exists now is moved aside.
 * Returns how many were found (moved or not).  For a session, the
 * count grows command by command; the caller keeps where it was.
 */
int
hostcfg_check(struct guard *g, const char *id)
{
	const struct guard_root	*r;
	const char		*p, *rel;
	size_t			 i, j, before = g->g_nhfinds;

	for (i = 0; i < g->g_nhost; i++) {
		p = g->g_host[i];
		for (j = 0; j < g->g_nroots; j++) {
			r = &g->g_roots[j];
			if (!path_is_below(p, r->gr_path) ||
			    strcmp(p, r->gr_path) == 0)
				continue;
			rel = p + strlen(r->gr_path);
			rel += strspn(rel, "/");
			hostcfg_one(g, id, r, rel, p);
			break;
		}
	}
	return (int)(g->g_nhfinds - before);
}

/*
 * Says what was moved aside from the find from on (those before were
 * told to a session's earlier command), loudly: what it is, by which
 * rule, and the commands to look at it and to take it back.
 */
void
hostcfg_print(const struct guard *g, size_t from, FILE *f)
{
	const struct hostcfg_find	*hf;
	char				*p, *m;
	size_t				 i;

	for (i = from; i < g->g_nhfinds; i++) {
		hf = &g->g_hfinds[i];
		p = str_escape(hf->hf_path, strlen(hf->hf_path));
		if (hf->hf_unread) {
			fprintf(f, "cordon: the check could not look at %s "
			    "(%s), where an agent or editor on the host would "
			    "load configuration made during the run "
			    "(filesystem.host_config), so it is not called "
			    "clean\ncordon: hint: look at it with: ls -la %s; "
			    "and move aside what you did not make before you "
			    "open the workspace in one\n", p,
			    strerror(hf->hf_error), p);
			free(p);
			continue;
		}
		if (hf->hf_error != 0) {
			fprintf(f, "cordon: %s was made during the run, and an "
			    "agent or editor on the host would load or run it "
			    "when the workspace is opened "
			    "(filesystem.host_config), but moving it aside "
			    "failed (%s): look at it before you open the "
			    "workspace in one\n", p, strerror(hf->hf_error));
			free(p);
			continue;
		}
		m = str_escape(hf->hf_moved, strlen(hf->hf_moved));
		fprintf(f, "cordon: moved aside %s, %s made during the run, "
		    "which an agent or editor on the host would load or run "
		    "when the workspace is opened (filesystem.host_config): "
		    "now %s\ncordon: hint: look at it with: %s %s; and only if "
		    "you trust it, take it back with: mv %s %s\n", p,
		    hf->hf_link ? "a symbolic link to configuration" :
		    "configuration", m, hf->hf_link ? "ls -l" : hf->hf_dir ?
		    "ls -laR" : "cat", m, m, p);
		free(p);
		free(m);
	}
}

/* What was moved aside, and what was watched, for --report. */
json_t *
hostcfg_json(const struct guard *g)
{
	const struct hostcfg_find	*hf;
	json_t				*a, *w;
	size_t				 i;

	a = json_array();
	for (i = 0; i < g->g_nhfinds; i++) {
		hf = &g->g_hfinds[i];
		json_array_append_new(a, json_pack("{s:s, s:o, s:b, s:b, s:o}",
		    "path", hf->hf_path, "moved_to", hf->hf_moved != NULL ?
		    json_string(hf->hf_moved) : json_null(), "link",
		    hf->hf_link, "unread", hf->hf_unread, "error",
		    hf->hf_error != 0 ? json_string(strerror(hf->hf_error)) :
		    json_null()));
	}
	w = json_array();
	for (i = 0; i < g->g_nhost; i++)
		json_array_append_new(w, json_string(g->g_host[i]));
	return json_pack("{s:o, s:o}", "moved_aside", a, "watched", w);
}

/* Frees what the check found; the guard's own stays for guard_clear. */
void
hostcfg_clear(struct guard *g)
{
	size_t	 i;

	for (i = 0; i < g->g_nhfinds; i++) {
		free(g->g_hfinds[i].hf_path);
		free(g->g_hfinds[i].hf_moved);
	}
	free(g->g_hfinds);
	g->g_hfinds = NULL;
	g->g_nhfinds = 0;
	g->g_host = NULL;
	g->g_nhost = 0;
}
