/*
 * fsplan.c: the mount plan of `cordon run`, made before anything is
 * mounted: a one-way pipeline over plain data, each step in its own
 * file, none calling back into the one before.
 *
 *	policy --fsp_roots--> write roots --fsscan_run--> findings
 *	policy + findings --(here)--> candidate ops --fsorder_run--> plan
 *
 * Every path is resolved by hand, component by component (fspath.c),
 * so each symlink met is seen.  Here the policy's write, read_only and
 * deny lists, the folders on PATH, and the scan's findings become
 * candidate ops (fsorder.h):
 *
 * - A mount target never goes through a symlink.  A symlink met on the
 *   way to a protected or hidden path is pinned (FS_PIN_LINK; pruning
 *   drops those not in a writable place), and its target gets the
 *   protection.
 * - A protected path that does not exist, inside a writable root, is
 *   blocked at its first missing component (FS_BLOCK), so the command
 *   cannot create a `.git` with hooks for the
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
 * - What agents and editors on the host run from the workspace
 *   (filesystem.host_config) is read-only when it is there, and
 *   watched, for the check after the run, when it is not (fsp_host).
 * - The writable roots are scanned for repositories (fsscan.c), whose
 *   findings are protected as the policy's rules are.
 *
 * Then the ordering (fsorder.c) pins every folder between a writable
 * root and a protected path (FS_PIN_DIR: a mount point cannot be
 * renamed), orders, merges and prunes the candidates into the plan.
 *
 * Paths the runner mounts itself (/tmp, /dev, /proc, /run) are not
 * special here, except that a write root may not be /, nor under /proc,
 * /sys or /dev.  The plan is racy by nature (the tree may change before
 * the mounts); runner.h says how the runner closes that.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fscache.h"
#include "plan/fslist.h"
#include "plan/fsorder.h"
#include "plan/fspath.h"
#include "plan/fsscan.h"
#include "plan/plan.h"
#include "policies/policy.h"

#define FSP_HIDE	0x1	/* fsp_protect: hidden, not read-only */
#define FSP_FILE	0x2	/* ... if missing, blocked by a file */
#define FSP_DOT		0x4	/* ... that reads "./" */

/* The planner's state during one fsplan_build(); nobody else sees it. */
struct fsp {
	struct fsplan	*f_plan;	/* its notes and marks */
	struct fscache	*f_cache;	/* what is known of the paths */
	struct fsorder	 f_cands;
	char		**f_roots;	/* existing writable folders */
	size_t		 f_nroots;
	char		**f_rootv;	/* per write item: resolved, or NULL */
	const char	*f_ws;		/* the workspace, resolved, or NULL */
	const char	*f_within;	/* fsp_protect: only inside this */
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

/* Resolves path (fspath.c); a note says why if it cannot be. */
static void
fsp_resolve(struct fsp *f, const char *path, struct fspath *pr)
{
	fspath_resolve(f->f_cache, path, pr);
	if (pr->pr_note != NULL)
		fspath_note(&f->f_plan->fp_notes, &f->f_plan->fp_nnotes, "%s",
		    pr->pr_note);
}

/* Pins the symlinks met on the way to a path protected for why. */
static void
fsp_pins(struct fsp *f, struct fspath *pr, const char *why)
{
	size_t	 i;

	for (i = 0; i < pr->pr_nlinks; i++) {
		fsorder_add(&f->f_cands, pr->pr_links[i], FS_PIN_LINK, why,
		    false);
		pr->pr_links[i] = NULL;
	}
}

/*
 * A missing .cordon at the workspace's root, in a writable root (the
 * workspace's own policy folder, read by later runs) is not blocked: a placeholder there is a
 * mount the command sees, which `git clean -fdx` cannot remove, and git
 * on the host lists during the run.  What a later run reads from it can
 * only narrow its policy; and the check after the run (guard.c) moves
 * aside one the command made, and says so.
 */
static bool
fsp_watched(const struct fsp *f, const char *path)
{
	const char	*slash = strrchr(path, '/');
	size_t		 i;

	if (f->f_ws == NULL || slash == NULL ||
	    strcmp(slash + 1, ".cordon") != 0 ||
	    (size_t)(slash - path) != strlen(f->f_ws) ||
	    strncmp(path, f->f_ws, (size_t)(slash - path)) != 0)
		return false;
	for (i = 0; i < f->f_nroots; i++)
		if (path_is_below(path, f->f_roots[i]))
			return true;
	return false;
}

/*
 * The op that protects the path pr leads to (taken) for the rule why,
 * read-only or hidden (FSP_HIDE).  A missing path is blocked by an
 * empty folder at its first missing component, or, with FSP_FILE and
 * only its last one missing, by an empty file (~/.bashrc: a shell reads
 * it), or one that reads "./" with FSP_DOT.
 */
static void
fsp_op(struct fsp *f, struct fspath *pr, int how, const char *why)
{
	struct fsorder_cand	*c;
	char			*r = pr->pr_path;
	bool			 dir = pr->pr_dir, hide = how & FSP_HIDE;

	pr->pr_path = NULL;
	switch (pr->pr_res) {
	case FSPATH_FOUND:
		if (!hide)
			fsorder_add(&f->f_cands, r, FS_RO, why, dir);
		else
			fsorder_add(&f->f_cands, r, dir ? FS_HIDE_DIR :
			    FS_HIDE_FILE, why, dir);
		break;
	case FSPATH_MISSING:
		/*
		 * A hidden path that does not exist has nothing to hide;
		 * blocking it would keep the command from making, say,
		 * ~/.config in a writable home.  A protected one is blocked.
		 */
		if (hide)
			free(r);
		else if (fsp_watched(f, r)) {
			f->f_plan->fp_watch = xreallocarray(f->f_plan->fp_watch,
			    f->f_plan->fp_nwatch + 1,
			    sizeof(*f->f_plan->fp_watch));
			f->f_plan->fp_watch[f->f_plan->fp_nwatch++] = r;
		} else {
			c = fsorder_add(&f->f_cands, r, FS_BLOCK, why,
			    dir || !(how & FSP_FILE));
			c->c_op.fo_dot = !dir && (how & FSP_DOT);
		}
		break;
	case FSPATH_NOTDIR:
		fsorder_add(&f->f_cands, r, FS_RO, why, false);
		break;
	case FSPATH_SKIP:
		break;
	}
}

/*
 * Protects path (read-only, or hidden with FSP_HIDE) for the rule why,
 * and remembers what it is for the guard (guard.c), which after the
 * run leaves alone what the plan protected.
 */
static void
fsp_protect(struct fsp *f, const char *path, int how, const char *why)
{
	struct fspath	 pr;
	struct stat	 st;

	fsp_resolve(f, path, &pr);
	fsp_pins(f, &pr, why);
	if (pr.pr_res != FSPATH_SKIP && f->f_within != NULL &&
	    !path_is_below(pr.pr_path, f->f_within)) {
		fspath_note(&f->f_plan->fp_notes, &f->f_plan->fp_nnotes,
		    "%s: %s leads out of the workspace, to %s; a workspace "
		    "policy names only what is inside it, so the rule stops "
		    "at the link", why, path, pr.pr_path);
		fspath_clear(&pr);
		return;
	}
	if (pr.pr_res == FSPATH_FOUND &&
	    fscache_lstat(f->f_cache, pr.pr_path, &st) == 0)
		fspath_mark(&f->f_plan->fp_marks, &f->f_plan->fp_nmarks, &st);
	fsp_op(f, &pr, how, why);
	fspath_clear(&pr);
}

/*
 * The read_only or deny rules of the policy.  Those of the untrusted
 * workspace layer name only what is inside the workspace: where a link
 * there leads out, the link itself is pinned (fsp_pins) and the rule
 * goes no further, so a repository cannot hide /usr or protect /etc.
 */
static void
fsp_protect_list(struct fsp *f, const struct plist *pl, bool hide)
{
	size_t	 i;

	for (i = 0; i < pl->pl_n; i++) {
		f->f_within = pl->pl_v[i].pi_untrusted ? f->f_ws : NULL;
		fsp_protect(f, pl->pl_v[i].pi_text, (hide ? FSP_HIDE : 0) |
		    (pl->pl_v[i].pi_dir ? 0 : FSP_FILE), pl->pl_v[i].pi_from);
	}
	f->f_within = NULL;
}

/*
 * What agents and editors on the host load or run when the user opens
 * the workspace (filesystem.host_config).  One that is there is the
 * user's: kept read-only, as a read_only rule keeps a path, so the
 * command can neither change nor replace it.  One that is not, in a
 * writable root, is not blocked (a placeholder would be a folder the
 * editor on the host sees during the run, and one `git clean` cannot
 * remove) but watched: the check after the run (hostcfg.c) moves aside
 * what was made there.  The links met on the way are pinned either way.
 * A workspace layer's entry counts only inside the workspace.
 */
static void
fsp_host(struct fsp *f, const struct plist *pl)
{
	struct fsplan		*plan = f->f_plan;
	const struct pitem	*pi;
	struct fspath		 pr;
	size_t			 i, j;
	bool			 in;

	for (i = 0; i < pl->pl_n; i++) {
		pi = &pl->pl_v[i];
		f->f_within = pi->pi_untrusted ? f->f_ws : NULL;
		fspath_resolve(f->f_cache, pi->pi_text, &pr);
		if (pr.pr_res != FSPATH_MISSING) {
			fspath_clear(&pr);
			fsp_protect(f, pi->pi_text, 0, pi->pi_from);
			continue;
		}
		fsp_pins(f, &pr, pi->pi_from);
		fspath_clear(&pr);
		for (in = false, j = 0; j < f->f_nroots && !in; j++)
			in = path_is_below(pi->pi_text, f->f_roots[j]) &&
			    strcmp(pi->pi_text, f->f_roots[j]) != 0;
		if (!in || (f->f_within != NULL &&
		    !path_is_below(pi->pi_text, f->f_within)))
			continue;
		plan->fp_host = xreallocarray(plan->fp_host, plan->fp_nhost + 1,
		    sizeof(*plan->fp_host));
		plan->fp_host[plan->fp_nhost++] = xstrdup(pi->pi_text);
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
	char		*copy, *dir, *save = NULL, real[PATH_MAX];
	bool		 project;

	if (path == NULL)
		return;
	project = f->f_ws != NULL && (home == NULL || home[0] != '/' ||
	    !path_is_below(home, f->f_ws));
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir != NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		/* stat(2) of dir, as the plan sees the tree. */
		if (dir[0] != '/' || fspath_real(f->f_cache, dir, real) ==
		    NULL || fscache_lstat(f->f_cache, real, &st) == -1 ||
		    !S_ISDIR(st.st_mode) || (project &&
		    path_is_below(dir, f->f_ws)))
			continue;
		fsp_protect(f, dir, 0, "protected: a folder on PATH, "
		    "what it holds runs on the host");
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
	struct fspath	 pr;
	struct stat	 st;

	fsp_resolve(f, path, &pr);
	if (pr.pr_res != FSPATH_FOUND) {
		fspath_clear(&pr);
		return;
	}
	if (pr.pr_dir || fscache_lstat(f->f_cache, path, &st) == -1 ||
	    !S_ISREG(st.st_mode)) {
		fspath_note(&f->f_plan->fp_notes, &f->f_plan->fp_nnotes,
		    "%s is not shown inside: not a file (a symbolic link is "
		    "not followed)", path);
		fspath_clear(&pr);
		return;
	}
	fsorder_add(&f->f_cands, pr.pr_path, FS_RO,
	    "shown: cordon's ssh-agent needs it", false)->c_show = true;
	pr.pr_path = NULL;
	fspath_clear(&pr);
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
 * One write root, resolved to pr's path (kept): refused when that is /
 * or under /proc, /sys or /dev, else an FS_RW candidate.  Returns 0, or
 * -1 with *cause set.
 */
static int
fsp_root(struct fsp *f, const struct pitem *pi, const struct fspath *pr,
    char **cause)
{
	const char	*sys, *r = pr->pr_path;

	if (strcmp(r, "/") == 0) {
		xasprintf(cause, "%s: %s is /, and writing to / would "
		    "make the whole filesystem writable; name folders "
		    "instead", pi->pi_from, pi->pi_text);
		return -1;
	}
	if (path_system(r, &sys)) {
		xasprintf(cause, "%s: %s resolves to %s, under %s, "
		    "which the sandbox has its own of and never makes "
		    "writable", pi->pi_from, pi->pi_text, r, sys);
		return -1;
	}
	if (pr->pr_dir) {
		f->f_roots = xreallocarray(f->f_roots, f->f_nroots + 1,
		    sizeof(*f->f_roots));
		f->f_roots[f->f_nroots++] = xstrdup(r);
	}
	fsorder_add(&f->f_cands, xstrdup(r), FS_RW, pi->pi_from, pr->pr_dir);
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
	struct fspath		 pr;
	const char		*sys;
	size_t			 i;

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
		fsp_resolve(f, pi->pi_text, &pr);
		if (pr.pr_res == FSPATH_MISSING || pr.pr_res == FSPATH_NOTDIR)
			fspath_note(&f->f_plan->fp_notes,
			    &f->f_plan->fp_nnotes, "%s: %s does not exist, so "
			    "it is not writable; create it first",
			    pi->pi_from, pi->pi_text);
		if (pr.pr_res != FSPATH_FOUND) {
			fspath_clear(&pr);
			continue;
		}
		if (fsp_root(f, pi, &pr, cause) == -1) {
			fspath_clear(&pr);
			return -1;
		}
		f->f_rootv[i] = pr.pr_path;
		pr.pr_path = NULL;
		fspath_clear(&pr);
	}
	return fsp_contain(f, pl, cause);
}

/*
 * The scan's findings, protected as a rule of the policy is, after the
 * policy's: each link met pinned, and the path read-only or blocked, but
 * for a git directory, whose code its own findings protect.  Its notes
 * and marks follow the policy's.
 */
static void
fsp_findings(struct fsp *f, struct fsscan *s)
{
	struct fsplan		*plan = f->f_plan;
	struct fsscan_find	*sf;
	size_t			 i;

	for (i = 0; i < s->fs_nfinds; i++) {
		sf = &s->fs_finds[i];
		fsp_pins(f, &sf->sf_at, sf->sf_why);
		if (!sf->sf_gitdir)
			fsp_op(f, &sf->sf_at, (sf->sf_file ? FSP_FILE : 0) |
			    (sf->sf_dot ? FSP_DOT : 0), sf->sf_why);
	}
	for (i = 0; i < s->fs_nnotes; i++) {
		plan->fp_notes = xreallocarray(plan->fp_notes,
		    plan->fp_nnotes + 1, sizeof(*plan->fp_notes));
		plan->fp_notes[plan->fp_nnotes++] = s->fs_notes[i];
	}
	s->fs_nnotes = 0;
	plan->fp_marks = xreallocarray(plan->fp_marks, plan->fp_nmarks +
	    s->fs_nmarks + 1, sizeof(*plan->fp_marks));
	for (i = 0; i < s->fs_nmarks; i++)
		plan->fp_marks[plan->fp_nmarks++] = s->fs_marks[i];
	plan->fp_scanned = s->fs_scanned;
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
	struct fsorder_in	 oi;
	struct fsscan		 scan;
	struct fsp		 f;
	size_t			 i;
	int			 rc = -1;

	*cause = NULL;
	memset(plan, 0, sizeof(*plan));
	memset(&f, 0, sizeof(f));
	f.f_plan = plan;
	f.f_cache = in->fi_cache != NULL ? in->fi_cache : fscache_new();
	f.f_ws = in->fi_workspace;

	if (fsp_roots(&f, &p->p_write, cause) == -1)
		goto out;
	fsp_protect_list(&f, &p->p_read_only, false);
	fsp_protect_list(&f, &p->p_hide, true);
	fsp_host(&f, &p->p_host_config);
	fsp_protect_path(&f, in->fi_path);
	for (i = 0; i < in->fi_nshow; i++)
		fsp_show(&f, in->fi_show[i]);
	plan->fp_lists = fslist_new();
	fsscan_run(f.f_cache, plan->fp_lists, (const char *const *)f.f_roots,
	    f.f_nroots, in->fi_scan_max == 0 ? FSPLAN_SCAN_MAX :
	    in->fi_scan_max, &scan);
	fsp_findings(&f, &scan);
	fsscan_clear(&scan);
	oi.oi_roots = (const char *const *)f.f_roots;
	oi.oi_nroots = f.f_nroots;
	oi.oi_scratch = in->fi_scratch;
	oi.oi_nscratch = in->fi_nscratch;
	oi.oi_cache = f.f_cache;
	fsorder_run(&f.f_cands, &oi, plan);
	rc = 0;
out:
	if (in->fi_cache == NULL)
		fscache_free(f.f_cache);
	fsorder_clear(&f.f_cands);
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
	for (i = 0; i < plan->fp_nwatch; i++)
		free(plan->fp_watch[i]);
	free(plan->fp_watch);
	for (i = 0; i < plan->fp_nhost; i++)
		free(plan->fp_host[i]);
	free(plan->fp_host);
	fslist_free(plan->fp_lists);
	memset(plan, 0, sizeof(*plan));
}
