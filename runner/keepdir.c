/*
 * keepdir.c: --keep and --keep-shared, folders of the home kept between
 * runs in cordon's own copy of them, the store, and what may be kept.
 *
 * The store is written by the commands it is shown to, so it is the
 * adversary's: a run can leave a symbolic link there (lnk -> ~), and a
 * later --keep of a path through it must not make a folder wherever it
 * points.  Every folder of the store is made and opened one component
 * at a time, beneath the one before, following no link (openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS); the mount opens the copy the
 * same way (mount.c).
 *
 * What is kept is run again: a later sandbox that keeps the same folder
 * finds what this one left.  So no persistence point (a read_only rule
 * of the policy: shell startup files, autostart, ~/.ssh, git's config)
 * or folder on PATH, nor a path a deny rule hides, is kept, nor a
 * folder that holds one.  And a copy is the workspace's own unless the
 * user asks for one shared by every workspace (--keep-shared), where
 * one repository's run leaves what the next repository's runs find.
 *
 * Runs with the caller's privileges, before any namespace.
 *
 * Runs in: cordon run on the host, before the clone and after the run.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fspath.h"
#include "policies/policy.h"
#include "runner/runner.h"
#include "secrets/secrets.h"

#define KEEP_NAME_MAX	32	/* bytes of the workspace's name kept */

/* What keeping a path would give away: the point, and whether it holds it. */
struct keep_clash {
	const struct keep_point	*kc_point;
	bool			 kc_holds;	/* below the kept folder */
	bool			 kc_below;	/* above it */
};

/*
 * The part of path below the home ("/.config/fish"; "" for the home),
 * the home resolved (home) or as HOME spells it (raw, normalised, or
 * NULL); NULL when path is not in the home.
 */
static const char *
keepdir_in_home(const char *path, const char *home, const char *raw)
{
	if (path_is_below(path, home))
		return path + strlen(home);
	if (raw != NULL && path_is_below(path, raw))
		return path + strlen(raw);
	return NULL;
}

/* Adds rel (a path below the home) to the points of run, for why. */
static void
keepdir_point_add(struct run *run, const char *rel, const char *why,
    bool hidden)
{
	struct keep_point	*kp;

	run->r_points = xreallocarray(run->r_points, run->r_npoints + 1,
	    sizeof(*run->r_points));
	kp = &run->r_points[run->r_npoints++];
	kp->kp_rel = xstrdup(rel);
	kp->kp_why = xstrdup(why);
	kp->kp_hidden = hidden;
}

/*
 * The entries of pl in the home, as the policy spells them and where
 * they lead (~/.config a link to ~/dotfiles/config), as the plan saw
 * the tree (the cache fc).
 */
static void
keepdir_points_list(struct run *run, const struct plist *pl, const char *raw,
    bool hidden, struct fscache *fc)
{
	const char	*rel;
	char		 real[PATH_MAX];
	size_t		 i;

	for (i = 0; i < pl->pl_n; i++) {
		if ((rel = keepdir_in_home(pl->pl_v[i].pi_text,
		    run->r_sb.sb_view.sv_scratch,
		    raw)) != NULL)
			keepdir_point_add(run, rel, pl->pl_v[i].pi_from, hidden);
		if (fspath_real(fc, pl->pl_v[i].pi_text, real) != NULL &&
		    (rel = keepdir_in_home(real, run->r_sb.sb_view.sv_scratch,
		    NULL)) != NULL)
			keepdir_point_add(run, rel, pl->pl_v[i].pi_from, hidden);
	}
}

/*
 * What no kept folder may be or hold, as paths below the home: the
 * persistence points (the policy's read_only list), the paths it hides
 * (deny) and the folders on PATH (as fsplan.c protects them), as the
 * home resolved or spelt by HOME names them.  Made while the policy is
 * the run's (the proxy takes it), for keepdir_one() and keepdir_allowed();
 * paths resolved as the plan saw the tree (the cache fc).
 */
static void
keepdir_points(struct run *run, struct fscache *fc)
{
	const struct policy	*p = run->r_policy;
	struct policy_ctx	 ctx = { .pc_workspace = "/" };
	struct pitem		 it = { 0 };
	const char		*path = getenv("PATH"), *rel, *raw = NULL;
	char			*copy, *dir, *save = NULL, *cause;
	char			 real[PATH_MAX];

	/* The policy's "~/..." are HOME's, as HOME spells it. */
	ctx.pc_home = getenv("HOME");
	if (ctx.pc_home != NULL && ctx.pc_home[0] == '/') {
		if (policy_parse_path("~", &ctx, &it, &cause) == -1)
			free(cause);
		else if (strcmp(it.pi_text, "/") != 0)
			raw = it.pi_text;
	}
	keepdir_points_list(run, &p->p_read_only, raw, false, fc);
	keepdir_points_list(run, &p->p_hide, raw, true, fc);
	copy = xstrdup(path != NULL ? path : "");
	for (dir = strtok_r(copy, ":", &save); dir != NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		if (dir[0] != '/')
			continue;
		/* Where it leads, or, not there yet, as PATH spells it. */
		if (fspath_real(fc, dir, real) != NULL)
			rel = keepdir_in_home(real, run->r_sb.sb_view.sv_scratch,
			    NULL);
		else
			rel = keepdir_in_home(dir, run->r_sb.sb_view.sv_scratch,
			    raw);
		if (rel != NULL)
			keepdir_point_add(run, rel, "a folder on PATH, what it "
			    "holds runs when its name is typed", false);
	}
	free(copy);
	free(it.pi_text);
}

/*
 * Whether keeping rel (a folder below the home, "/.npm") would keep one
 * of the run's points, or a folder that holds one; fills kc when so.
 */
static bool
keepdir_clashes(const struct run *run, const char *rel, struct keep_clash *kc)
{
	const char	*prot;
	size_t		 i;

	for (i = 0; i < run->r_npoints; i++) {
		prot = run->r_points[i].kp_rel;
		/*
		 * A hidden path the folder holds stays hidden: its cover is
		 * mounted over the kept copy, deeper, in every run; the
		 * copy's own file there is the sandbox's, never the host's.
		 */
		if (run->r_points[i].kp_hidden && strcmp(rel, prot) != 0 &&
		    path_is_below(prot, rel))
			continue;
		if (path_is_below(rel, prot) || path_is_below(prot, rel)) {
			kc->kc_point = &run->r_points[i];
			kc->kc_holds = !path_is_below(rel, prot);
			kc->kc_below = strcmp(rel, prot) != 0 &&
			    !kc->kc_holds;
			return true;
		}
	}
	return false;
}

/*
 * Whether the summary may suggest --keep for shown, a folder of the
 * scratch layer as the summary names it ("~/.npm"): one in the home
 * that keepdir_clashes() does not refuse.
 */
bool
keepdir_allowed(const struct run *run, const char *shown)
{
	struct keep_clash	 kc;

	if (run->r_sb.sb_view.sv_scratch == NULL || strncmp(shown, "~/",
	    2) != 0 ||
	    strstr(shown, "/../") != NULL || strstr(shown, "/./") != NULL)
		return false;
	return !keepdir_clashes(run, shown + 1, &kc);
}

/*
 * Whether shown, a path of the scratch layer as the summary names it
 * ("~/.bashrc"), is one of the run's persistence points or lies below
 * one (a file in ~/.config/fish): what a shell, a session or git on the
 * host would run.
 */
bool
keepdir_is_point(const struct run *run, const char *shown)
{
	size_t	 i;

	if (strncmp(shown, "~/", 2) != 0)
		return false;
	for (i = 0; i < run->r_npoints; i++)
		if (!run->r_points[i].kp_hidden &&
		    path_is_below(shown + 1, run->r_points[i].kp_rel))
			return true;
	return false;
}

/* Frees the run's points. */
void
keepdir_clear(struct run *run)
{
	size_t	 i;

	for (i = 0; i < run->r_npoints; i++) {
		free(run->r_points[i].kp_rel);
		free(run->r_points[i].kp_why);
	}
	free(run->r_points);
	run->r_points = NULL;
	run->r_npoints = 0;
}

/*
 * Opens the folder rel below the folder dir, making each component that
 * is missing (mode 0700), one at a time, beneath the one before: a
 * symbolic link on the way (a run left it in the store) is never
 * followed.  Returns an O_PATH descriptor, or -1 with errno set (ELOOP:
 * a link) and the first len bytes of rel that were reached in *at.
 */
static int
keepdir_mkdirs(int dir, const char *rel, size_t *at)
{
	struct open_how	 how;
	const char	*p = rel, *end;
	char		 name[NAME_MAX + 1];
	size_t		 len;
	int		 fd = dup(dir), next, saved;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS;
	while (fd != -1 && *p != '\0') {
		while (*p == '/')
			p++;
		if ((len = strcspn(p, "/")) == 0)
			break;
		end = p + len;
		*at = (size_t)(end - rel);
		if (len > NAME_MAX || (len <= 2 && strncmp(p, "..", len) ==
		    0)) {
			close(fd);
			errno = EINVAL;
			return -1;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		if (mkdirat(fd, name, 0700) == -1 && errno != EEXIST)
			next = -1;
		else
			next = (int)syscall(SYS_openat2, fd, name, &how,
			    sizeof(how));
		saved = errno;
		close(fd);
		errno = saved;
		fd = next;
		p = end;
	}
	return fd;
}

/*
 * The workspace's folder of the store: its name (letters, digits, '.',
 * '-' and '_'; others '_') and the first 8 bytes of the SHA-256 of its
 * path, so that two checkouts of one name keep apart.  Returns a new
 * string, "ws/NAME-HEX".
 */
static char *
keepdir_ws_dir(const char *workspace)
{
	const char	*base = strrchr(workspace, '/');
	struct sha256_ctx ctx;
	uint8_t		 md[SHA256_DIGEST_SIZE];
	char		 name[KEEP_NAME_MAX + 1], hex[17], *out;
	size_t		 i;

	base = base != NULL && base[1] != '\0' ? base + 1 : "root";
	for (i = 0; i < KEEP_NAME_MAX && base[i] != '\0'; i++)
		name[i] = (base[i] >= 'a' && base[i] <= 'z') ||
		    (base[i] >= 'A' && base[i] <= 'Z') ||
		    (base[i] >= '0' && base[i] <= '9') || base[i] == '.' ||
		    base[i] == '-' || base[i] == '_' ? base[i] : '_';
	name[i] = '\0';
	if (name[0] == '.')
		name[0] = '_';
	sha256_init(&ctx);
	sha256_update(&ctx, strlen(workspace), (const uint8_t *)workspace);
	sha256_digest(&ctx, sizeof(md), md);
	for (i = 0; i < 8; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	xasprintf(&out, "ws/%s-%s", name, hex);
	return out;
}

/*
 * The folder that holds cordon's data: $XDG_DATA_HOME, resolved, or the
 * home's .local/share, made when missing; opened into *fd, its path in
 * *dir (the caller frees it).  Returns 0, or -1 having said why.
 */
static int
keepdir_data_dir(const struct run *run, int *fd, char **dir)
{
	const char	*data = getenv("XDG_DATA_HOME");
	char		 real[PATH_MAX];
	size_t		 at = 0;
	int		 home;

	*dir = NULL;
	if (data != NULL && data[0] == '/') {
		if (realpath(data, real) == NULL ||
		    (*fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC)) ==
		    -1) {
			log_warn("run: --keep: XDG_DATA_HOME %s", data);
			return -1;
		}
		*dir = xstrdup(real);
		return 0;
	}
	if ((home = open(run->r_sb.sb_view.sv_scratch,
	    O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || (*fd = keepdir_mkdirs(home, ".local/share",
	    &at)) == -1) {
		log_warn("run: --keep: %s/.local/share",
		    run->r_sb.sb_view.sv_scratch);
		if (home != -1)
			close(home);
		return -1;
	}
	close(home);
	xasprintf(dir, "%s/.local/share", run->r_sb.sb_view.sv_scratch);
	return 0;
}

/*
 * Makes cordon's copy of the kept folder k_from names: "cordon/keep/"
 * then the scope and the folder's path in the home (rel) below data.
 * Returns 0, or -1 having said why: a symbolic link on the way is named,
 * with the way to remove it.
 */
static int
keepdir_make(const char *arg, int data, const char *datadir, const char *scope,
    const char *rel)
{
	char	*sub;
	size_t	 at = 0;
	int	 fd;

	xasprintf(&sub, "cordon/keep/%s%s", scope, rel);
	if ((fd = keepdir_mkdirs(data, sub, &at)) != -1) {
		close(fd);
		free(sub);
		return 0;
	}
	sub[at] = '\0';
	if (errno == ELOOP || errno == ENOTDIR) {
		log_warnx("run: %s: on the way to cordon's copy, "
		    "%s/%s is %s (a run left it there): cordon makes its copy "
		    "through no link; nothing run", arg, datadir, sub,
		    errno == ELOOP ? "a symbolic link" : "not a folder");
		log_warnx("hint: remove it (rm %s/%s), or keep another "
		    "folder", datadir, sub);
	} else
		log_warn("run: %s: cordon's copy %s/%s", arg, datadir,
		    sub);
	free(sub);
	return -1;
}

/*
 * Says what --keep arg (rel, below the home) keeps and what it holds
 * back: the hidden paths below it, which each run covers again.
 */
static void
keepdir_say(const struct run *run, const char *arg, const char *rel,
    const char *from, bool shared)
{
	char	*held = NULL, *one;
	size_t	 i;

	for (i = 0; i < run->r_npoints; i++)
		if (run->r_points[i].kp_hidden &&
		    strcmp(rel, run->r_points[i].kp_rel) != 0 &&
		    path_is_below(run->r_points[i].kp_rel, rel)) {
			xasprintf(&one, "~%s", run->r_points[i].kp_rel);
			/* Said once, whether as HOME spells it or resolved. */
			if (held == NULL || strstr(held, one) == NULL)
				str_append(&held, ", ", one);
			free(one);
		}
	log_warnx("run: %s: kept between %s runs in cordon's own copy, %s "
	    "(nothing goes back to the host's)%s%s", arg, shared ?
	    "every workspace's" : "this workspace's", from,
	    held != NULL ? "; held back: " : "", held != NULL ? held : "");
	if (held != NULL)
		log_warnx("run: %s: hidden by the policy (filesystem.deny) "
		    "in every run; a login file cordon reads (Claude Code's, "
		    "Codex's) is a copy there with placeholders", held);
	free(held);
}

/* Says why --keep arg is refused, kc filled by keepdir_clashes(). */
static void
keepdir_refuse(const char *arg, const struct keep_clash *kc)
{
	const struct keep_point	*kp = kc->kc_point;
	const char		*how;

	how = kc->kc_holds ? "it holds" : kc->kc_below ? "it is below" :
	    "it is";
	log_warnx("run: %s: %s ~%s, %s (%s): what a run left in "
	    "cordon's copy would %s; nothing run", arg, how,
	    kp->kp_rel[0] == '\0' ? "/" : kp->kp_rel, kp->kp_hidden ?
	    "a path the policy hides" : "a persistence point", kp->kp_why,
	    kp->kp_hidden ? "be shown where the policy hides it" : "run in "
	    "each later run that keeps it");
	log_warnx("hint: keep a tool's own folder, one that holds no startup "
	    "file, hook, program on PATH nor hidden path (--keep ~/.npm, "
	    "--keep ~/.cache/pip): the summary of a run names the folders it "
	    "wrote");
}

/*
 * One --keep (shared: --keep-shared) into the view's sv_keep: checked,
 * and its copy made below data.  Returns 0, or -1 having said why.
 */
static int
keepdir_one(struct run *run, const char *arg, const char *label, bool shared,
    const char *workspace, int data, const char *datadir, bool *freshp)
{
	struct stat		 st;
	bool			 fresh;
	char			*own = NULL;
	size_t			 i;
	int			 rc = -1;
	struct policy_ctx	 ctx = { .pc_workspace = workspace };
	struct pitem		 it = { 0 };
	struct keep_clash	 kc;
	struct sandbox_keep	*k;
	char			*cause = NULL, *scope;
	const char		*rel;

	if (label == NULL)
		xasprintf(&own, "--keep %s", arg);
	label = label != NULL ? label : own;
	ctx.pc_home = run->r_sb.sb_view.sv_scratch;
	if (policy_parse_path(arg, &ctx, &it, &cause) == -1 ||
	    (rel = keepdir_in_home(it.pi_text, run->r_sb.sb_view.sv_scratch,
	    NULL)) == NULL ||
	    rel[0] == '\0') {
		log_warnx("run: %s: not a folder in the home folder "
		    "(%s); nothing run", label, run->r_sb.sb_view.sv_scratch);
		log_warnx("hint: --keep names a folder below the home, where "
		    "tools keep their caches (--keep ~/.npm); a folder "
		    "elsewhere is written with --write");
		goto out;
	}
	for (i = 0; i < run->r_sb.sb_view.sv_nkeep; i++)
		if (strcmp(run->r_sb.sb_view.sv_keep[i].k_path,
		    it.pi_text) == 0) {
			rc = 0;		/* kept already */
			goto out;
		}
	if (keepdir_clashes(run, rel, &kc)) {
		keepdir_refuse(label, &kc);
		goto out;
	}
	scope = shared ? xstrdup("shared") : keepdir_ws_dir(workspace);
	k = &run->r_sb.sb_view.sv_keep[run->r_sb.sb_view.sv_nkeep++];
	k->k_path = it.pi_text;
	it.pi_text = NULL;
	k->k_shared = shared;
	xasprintf(&k->k_from, "%s/cordon/keep/%s%s", datadir, scope, rel);
	fresh = lstat(k->k_from, &st) == -1;
	if (keepdir_make(label, data, datadir, scope, rel) == 0) {
		if (fresh)
			keepdir_say(run, label, rel, k->k_from, shared);
		if (freshp != NULL)
			*freshp = fresh;
		rc = 0;
	}
	free(scope);
out:
	free(cause);
	free(it.pi_text);
	free(own);
	return rc;
}

/*
 * The profile's seed files of its state folder state into the copy just
 * made (the last of the view's sv_keep): the run made it, so nothing of
 * a run is in it yet; each file is made new, following no link.  A file
 * that cannot be written is said, and the run goes on.
 */
static void
keepdir_seed(const struct run *run, const struct pagent *pa, size_t state)
{
	const char	*from;
	size_t		 i, len;
	int		 dir, fd;

	from = run->r_sb.sb_view.sv_keep[run->r_sb.sb_view.sv_nkeep - 1].k_from;
	if ((dir = open(from, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		log_warn("run: --agent %s: %s", pa->pa_name, from);
		return;
	}
	for (i = 0; i < pa->pa_nseed; i++) {
		if (pa->pa_seed[i].ps_state != state)
			continue;
		len = strlen(pa->pa_seed[i].ps_text);
		if ((fd = openat(dir, pa->pa_seed[i].ps_name, O_WRONLY |
		    O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1 ||
		    write(fd, pa->pa_seed[i].ps_text, len) != (ssize_t)len)
			log_warn("run: --agent %s: %s/%s", pa->pa_name, from,
			    pa->pa_seed[i].ps_name);
		if (fd != -1)
			close(fd);
	}
	close(dir);
}

/*
 * A login's copy (one a refresh renews) whose folder is a kept folder of
 * the run (~/.codex/): marked to be put there as a plain file for the
 * run, not bound over the file (mount_steps.c).  Codex writes its login
 * anew by a rename, which a bound file refuses (EBUSY): it could not
 * store a refresh's placeholders, and refreshed before each request.
 */
static void
keepdir_logins(struct run *run)
{
	struct secret_file	*tf;
	const char		*k;
	size_t			 i, j, len;

	for (i = 0; i < run->r_sb.sb_view.sv_nsecrets; i++) {
		tf = &run->r_sb.sb_view.sv_secrets[i];
		tf->tf_keptfd = -1;
		if (!tf->tf_bound || tf->tf_kind->sk_renew == NULL)
			continue;
		for (j = 0; j < run->r_sb.sb_view.sv_nkeep; j++) {
			k = run->r_sb.sb_view.sv_keep[j].k_path;
			len = strlen(k);
			while (len > 1 && k[len - 1] == '/')
				len--;
			if (strncmp(tf->tf_path, k, len) == 0 &&
			    tf->tf_path[len] == '/' &&
			    strchr(tf->tf_path + len + 1, '/') == NULL)
				tf->tf_kept = run->r_sb.sb_view.sv_keep[j].k_from;
		}
	}
}

/*
 * The copy of tf written anew in the folder dir (what a run left there,
 * a link too, removed, never followed), mode 0600.  Returns 0, or -1
 * with errno set.
 */
static int
keepdir_login_write(int dir, const struct secret_file *tf)
{
	const char	*name = strrchr(tf->tf_path, '/') + 1;
	int		 fd, saved;

	if ((unlinkat(dir, name, 0) == -1 && errno != ENOENT) ||
	    (fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return -1;
	if (write(fd, tf->tf_text, tf->tf_len) != (ssize_t)tf->tf_len) {
		saved = errno != 0 ? errno : EIO;
		close(fd);
		unlinkat(dir, name, 0);
		errno = saved;
		return -1;
	}
	return close(fd);
}

/*
 * Before the clone: each marked login's copy written in its kept folder
 * (keepdir_login_write), and the folder locked (flock) until
 * keepdir_login_drop().  A folder another run holds (one of the same
 * workspace, at once), or a copy that cannot be written there, gets a
 * bound copy instead, as before.
 */
void
keepdir_login_put(struct run *run)
{
	struct secret_file	*tf;
	struct open_how		 how;
	size_t			 i;
	int			 dir;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	for (i = 0; i < run->r_sb.sb_view.sv_nsecrets; i++) {
		tf = &run->r_sb.sb_view.sv_secrets[i];
		if (tf->tf_kept == NULL)
			continue;
		if ((dir = (int)syscall(SYS_openat2, AT_FDCWD, tf->tf_kept,
		    &how, sizeof(how))) != -1 &&
		    flock(dir, LOCK_EX | LOCK_NB) == 0 &&
		    keepdir_login_write(dir, tf) == 0) {
			tf->tf_keptfd = dir;
			continue;
		}
		if (errno == EWOULDBLOCK)
			log_info("run: ~/%s: another run holds %s: its copy is "
			    "bound there", tf->tf_kind->sk_name, tf->tf_kept);
		else
			log_warn("run: ~/%s: its copy in %s (bound there "
			    "instead)", tf->tf_kind->sk_name, tf->tf_kept);
		if (dir != -1)
			close(dir);
		tf->tf_kept = NULL;
	}
}

/*
 * After the run: the copies keepdir_login_put() wrote removed from the kept
 * folders, whatever the run left in their place (a link: itself), so
 * that the next run starts from the host's file.
 */
void
keepdir_login_drop(struct run *run)
{
	struct secret_file	*tf;
	size_t			 i;

	for (i = 0; i < run->r_sb.sb_view.sv_nsecrets; i++) {
		tf = &run->r_sb.sb_view.sv_secrets[i];
		if (tf->tf_kept == NULL || tf->tf_keptfd == -1)
			continue;
		if (unlinkat(tf->tf_keptfd, strrchr(tf->tf_path, '/') + 1,
		    0) == -1 && errno != ENOENT)
			log_warn("run: ~/%s: its copy in %s",
			    tf->tf_kind->sk_name, tf->tf_kept);
		close(tf->tf_keptfd);
		tf->tf_keptfd = -1;
	}
}

/*
 * --keep and --keep-shared: the folders of o, each checked and its copy
 * made, into the view's sv_keep.  The home must be a scratch layer of
 * the run (the view's sv_scratch).  fc is the plan's cache (run_plan.c),
 * asked before any folder is made here.  Returns 0, or -1 having said
 * why.
 */
int
keepdir_plan(struct run *run, const struct run_opts *o, const char *workspace,
    const struct pagent *pa, struct fscache *fc)
{
	char	*datadir, *what;
	size_t	 i;
	int	 data, rc = 0;
	bool	 fresh;

	if (run->r_sb.sb_view.sv_scratch != NULL)
		keepdir_points(run, fc);
	if (o->ro_nkeep == 0 && pa->pa_nstate == 0)
		return 0;
	if (o->ro_nkeep == 0 && run->r_sb.sb_view.sv_scratch == NULL) {
		log_info("run: --agent %s: the home is not a scratch layer: "
		    "its state is the host's", pa->pa_name);
		return 0;
	}
	if (run->r_sb.sb_view.sv_scratch == NULL) {
		log_warnx("run: --keep %s: the home folder is not a scratch layer "
		    "in this run (a write, read_only or deny rule covers it, "
		    "or HOME is not set): nothing to keep; drop --keep",
		    o->ro_keep[0]);
		return -1;
	}
	if (keepdir_data_dir(run, &data, &datadir) == -1)
		return -1;
	run->r_sb.sb_view.sv_keep = xcalloc(o->ro_nkeep + pa->pa_nstate,
	    sizeof(*run->r_sb.sb_view.sv_keep));
	for (i = 0; i < o->ro_nkeep && rc == 0; i++)
		rc = keepdir_one(run, o->ro_keep[i], NULL, o->ro_keep_shared[i],
		    workspace, data, datadir, NULL);
	/* The agent's state, unless a --keep covers it already. */
	for (i = 0; i < pa->pa_nstate && rc == 0; i++) {
		xasprintf(&what, "--agent %s: %s", pa->pa_name,
		    pa->pa_state[i]);
		fresh = false;
		rc = keepdir_one(run, pa->pa_state[i], what, false, workspace,
		    data, datadir, &fresh);
		if (rc == 0 && fresh)
			keepdir_seed(run, pa, i);
		free(what);
	}
	close(data);
	free(datadir);
	if (rc == 0)
		keepdir_logins(run);
	return rc;
}
