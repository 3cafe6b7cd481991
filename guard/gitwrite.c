/*
 * gitwrite.c: a protected git config written by the command (git config,
 * git remote add, git push -u, git submodule init), applied by cordon run
 * on its behalf when no key it changes is held by what it makes git on
 * the host do (gitjudge.c).
 *
 * The mount plan makes the config of every repository it finds read-only
 * (fsscan.c): a config can make git on the host run a program.  Git
 * writes a config as config.lock, then renames it over config, which the
 * bind mount refuses (EBUSY), so ordinary work failed: `git remote add`,
 * `git push -u`, `git branch --set-upstream-to`, `git config user.name`.
 *
 * So the command's rename(2), renameat(2) and renameat2(2) reach cordon
 * run's connect thread (notify.c) as well.  One whose new name is not
 * "config" goes on untouched (SECCOMP_USER_NOTIF_FLAG_CONTINUE: whatever
 * the command changes in between, the mounts still refuse what they
 * refuse).  One onto a protected config, in the git directory the plan
 * saw (by identity), is judged: the new text is read once, from the
 * file the command named, and compared with the config on the host as
 * git reads both (gitcfg.c), each key by what it makes git on the host
 * do (gitjudge.c): run a program, write files elsewhere, reach the
 * network by itself, send the user's push or fetch elsewhere.  When no
 * key added, changed or removed does, the text is written into the
 * config in place (the bind mount shows the same file, so the command
 * sees it too), under git's own lock (config.lock, the command's file,
 * which is removed after); a remote the command added (one the config
 * did not have before the run) is applied and said on the terminal.
 * Otherwise nothing is written: the change is held back, listed on the
 * terminal and in the report with the commands that apply it, and the
 * call succeeds, so that a tool that installs hooks (husky) does not
 * fail the work around it.
 *
 * Privileges: cordon run's own, outside the sandbox; it reads the
 * command's memory and takes its descriptors as notify.c does.
 *
 * Runs in: cordon run on the host: its connect thread applies a
 *   write; the event loop prints and reports them.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <linux/openat2.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "git/git.h"
#include "guard/guard.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

#ifndef SYS_renameat2
#define SYS_renameat2	316
#endif

/*
 * Which git config op is, if any: a repository's (git code, named
 * "config": its inert changes are applied) or the user's own
 * (~/.gitconfig, ~/.config/git/config, a persistence point every
 * repository of theirs reads: nothing is applied, all is said).
 */
static bool
gitwrite_is_config(const struct fs_op *op, bool *user)
{
	const char	*slash = strrchr(op->fo_path, '/');

	*user = false;
	if (op->fo_kind != FS_RO || op->fo_dir || slash == NULL)
		return false;
	if (strcmp(slash + 1, "config") == 0 &&
	    strcmp(op->fo_why, FS_WHY_GITCODE) == 0)
		return true;
	*user = gitcfg_user_config(op->fo_path);
	return *user;
}

/*
 * The places of the plan a URL or a work tree may name (gitcfg.c):
 * the writable folders, and those the user showed read-only (not what
 * cordon protects).  pl's arrays are the caller's to free
 * (gitcfg_places_clear); the strings are the plan's.
 */
void
gitwrite_places(const struct fsplan *plan, struct gitcfg_places *pl)
{
	const struct fs_op	*op;
	size_t			 i;

	memset(pl, 0, sizeof(*pl));
	pl->gp_write = xcalloc(plan->fp_nops + 1, sizeof(*pl->gp_write));
	pl->gp_show = xcalloc(plan->fp_nops + 1, sizeof(*pl->gp_show));
	for (i = 0; i < plan->fp_nops; i++) {
		op = &plan->fp_ops[i];
		if (!op->fo_dir)
			continue;
		if (op->fo_kind == FS_RW)
			pl->gp_write[pl->gp_nwrite++] = op->fo_path;
		else if (op->fo_kind == FS_RO && (op->fo_why == NULL ||
		    strncmp(op->fo_why, "protected", 9) != 0))
			pl->gp_show[pl->gp_nshow++] = op->fo_path;
	}
}

/* The config at path as git reads it, into cfg; empty if it cannot. */
static void
gitwrite_base(const char *path, struct gitcfg *cfg)
{
	char	*text, *cause = NULL;
	size_t	 len = 0;

	memset(cfg, 0, sizeof(*cfg));
	if ((text = gitcfg_read_text(AT_FDCWD, path, &len)) != NULL &&
	    gitcfg_parse(cfg, text, len, &cause) == -1)
		memset(cfg, 0, sizeof(*cfg));
	free(cause);
	free(text);
}

/*
 * The protected configs of the plan, each with the identity of the
 * file, taken now (the bind mount shows the command that very file),
 * and its keys, to tell a remote the command added from the user's.
 * Returns 0.
 */
int
gitwrite_init(struct gitwrite *gw, const struct fsplan *plan)
{
	const struct fs_op	*op;
	struct gitwrite_cfg	*wc;
	struct stat		 st;
	size_t			 i;
	bool			 user;

	memset(gw, 0, sizeof(*gw));
	pthread_mutex_init(&gw->gw_lock, NULL);
	for (i = 0; i < plan->fp_nops; i++) {
		op = &plan->fp_ops[i];
		if (!gitwrite_is_config(op, &user) ||
		    lstat(op->fo_path, &st) == -1 || !S_ISREG(st.st_mode))
			continue;
		gw->gw_cfgs = xreallocarray(gw->gw_cfgs, gw->gw_ncfgs + 1,
		    sizeof(*gw->gw_cfgs));
		wc = &gw->gw_cfgs[gw->gw_ncfgs++];
		wc->wc_path = xstrdup(op->fo_path);
		wc->wc_file.fm_dev = st.st_dev;
		wc->wc_file.fm_ino = st.st_ino;
		wc->wc_user = user;
		gitwrite_base(wc->wc_path, &wc->wc_base);
	}
	gitwrite_places(plan, &gw->gw_places);
	return 0;
}

void
gitwrite_clear(struct gitwrite *gw)
{
	size_t	 i;

	for (i = 0; i < gw->gw_ncfgs; i++) {
		free(gw->gw_cfgs[i].wc_path);
		gitcfg_clear(&gw->gw_cfgs[i].wc_base);
	}
	free(gw->gw_cfgs);
	for (i = 0; i < gw->gw_nchanges; i++) {
		free(gw->gw_changes[i].ch_key);
		free(gw->gw_changes[i].ch_value);
		free(gw->gw_changes[i].ch_why);
	}
	free(gw->gw_changes);
	gitcfg_places_clear(&gw->gw_places);
	pthread_mutex_destroy(&gw->gw_lock);
	memset(gw, 0, sizeof(*gw));
}

/*
 * Reads a NUL-terminated string at addr in pid's memory into buf (size
 * bytes, PATH_MAX), a page at a time, as the kernel would.  Returns 0,
 * or an errno (EFAULT, ENAMETOOLONG).
 */
static int
gitwrite_str(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	struct iovec	 local, remote;
	size_t		 off = 0, n;
	ssize_t		 got;
	long		 page = sysconf(_SC_PAGESIZE);

	while (off < size) {
		n = (size_t)page - (size_t)((addr + off) % (uint64_t)page);
		if (n > size - off)
			n = size - off;
		local.iov_base = buf + off;
		local.iov_len = n;
		remote.iov_base = (void *)(uintptr_t)(addr + off);
		remote.iov_len = n;
		if ((got = process_vm_readv(pid, &local, 1, &remote, 1, 0)) <=
		    0)
			return EFAULT;
		if (memchr(buf + off, '\0', (size_t)got) != NULL)
			return 0;
		off += (size_t)got;
	}
	return ENAMETOOLONG;
}

/*
 * Opens the folder that holds path, as the caller sees it from dirfd
 * (AT_FDCWD: its working folder), O_PATH; *name is path's last part.
 * Absolute paths and links inside are resolved in the caller's root.
 * Returns the descriptor, or -1.
 */
static int
gitwrite_dir(pid_t pid, int pidfd, int dirfd, char *path, const char **name)
{
	struct open_how	 how;
	char		 proc[64], *slash;
	const char	*dir;
	int		 base, fd;

	if ((slash = strrchr(path, '/')) == NULL) {
		*name = path;
		dir = ".";
	} else {
		*slash = '\0';
		*name = slash + 1;
		dir = slash == path ? "/" : path;
	}
	if (*dir == '/') {
		snprintf(proc, sizeof(proc), "/proc/%d/root", (int)pid);
		base = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else if (dirfd == AT_FDCWD) {
		snprintf(proc, sizeof(proc), "/proc/%d/cwd", (int)pid);
		base = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else
		base = (int)syscall(SYS_pidfd_getfd, pidfd, dirfd, 0);
	if (base == -1)
		return -1;
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_NO_MAGICLINKS | (*dir == '/' ?
	    RESOLVE_IN_ROOT : 0);
	while (*dir == '/')
		dir++;
	fd = (int)syscall(SYS_openat2, base, *dir != '\0' ? dir : ".", &how,
	    sizeof(how));
	close(base);
	return fd;
}

/* The protected config that name in dirfd is, or NULL. */
static struct gitwrite_cfg *
gitwrite_find(struct gitwrite *gw, int dirfd, const char *name)
{
	struct stat	 st;
	size_t		 i;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return NULL;
	for (i = 0; i < gw->gw_ncfgs; i++)
		if (gw->gw_cfgs[i].wc_file.fm_dev == st.st_dev &&
		    gw->gw_cfgs[i].wc_file.fm_ino == st.st_ino)
			return &gw->gw_cfgs[i];
	return NULL;
}

/* Notes one key of a change, applied or held; takes why. */
static void
gitwrite_note(struct gitwrite *gw, const struct gitwrite_cfg *wc,
    const struct gitcfg_ent *e, const struct gitcfg_ent *was, bool removed,
    bool applied, enum gitcfg_class class, char *why)
{
	struct gitwrite_change	*ch;

	if (gw->gw_nchanges >= GITWRITE_CHANGES_MAX) {
		gw->gw_more = true;
		free(why);
		return;
	}
	gw->gw_changes = xreallocarray(gw->gw_changes, gw->gw_nchanges + 1,
	    sizeof(*gw->gw_changes));
	ch = &gw->gw_changes[gw->gw_nchanges++];
	memset(ch, 0, sizeof(*ch));
	ch->ch_cfg = (size_t)(wc - gw->gw_cfgs);
	ch->ch_key = xstrdup(e->ge_shown != NULL ? e->ge_shown : e->ge_key);
	ch->ch_value = e->ge_value != NULL ? xstrdup(e->ge_value) : NULL;
	ch->ch_changed = was != NULL;
	ch->ch_removed = removed;
	ch->ch_applied = applied;
	ch->ch_class = class;
	ch->ch_why = why;
}

/*
 * Notes each key that differs between old and cfg, with its class (in
 * cx): one whose value changed (a key that went with its old value and
 * came with a new one) once, as changed; the rest as added or removed.
 */
static void
gitwrite_notes(struct gitwrite *gw, const struct gitwrite_cfg *wc,
    const struct gitcfg_ctx *cx, const struct gitcfg *old,
    const struct gitcfg *cfg, bool apply)
{
	const struct gitcfg_ent	*e, *was;
	enum gitcfg_class	 c;
	char			*why;
	bool			*gone;
	size_t			 i, j;

	gone = xcalloc(old->gc_n + 1, sizeof(*gone));
	for (j = 0; j < old->gc_n; j++)
		gone[j] = !gitcfg_has(cfg, &old->gc_v[j]);
	for (i = 0; i < cfg->gc_n; i++) {
		e = &cfg->gc_v[i];
		if (gitcfg_has(old, e))
			continue;
		for (was = NULL, j = 0; j < old->gc_n && was == NULL; j++)
			if (gone[j] && strcmp(old->gc_v[j].ge_key,
			    e->ge_key) == 0) {
				was = &old->gc_v[j];
				gone[j] = false;
			}
		c = gitjudge_class(cx, cfg, e, false, &why);
		gitwrite_note(gw, wc, e, was, false, apply, c, why);
	}
	for (j = 0; j < old->gc_n; j++)
		if (gone[j]) {
			c = gitjudge_class(cx, cfg, &old->gc_v[j], true, &why);
			gitwrite_note(gw, wc, &old->gc_v[j], NULL, true, apply,
			    c, why);
		}
	free(gone);
}

/* Writes len bytes of text into the config at path, in place. */
static bool
gitwrite_put(const char *path, const char *text, size_t len)
{
	int	 fd;
	bool	 ok;

	if ((fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		log_warn("run: %s", path);
		return false;
	}
	ok = pwrite(fd, text, len, 0) == (ssize_t)len &&
	    ftruncate(fd, (off_t)len) == 0;
	if (!ok)
		log_warn("run: writing %s", path);
	close(fd);
	return ok;
}

/*
 * Judges the text new (len bytes) for the config wc against the config
 * as it is, and writes it there when every key it adds, changes or
 * removes is inert.  Notes each key that differs, applied or held.
 */
static void
gitwrite_judge(struct gitwrite *gw, struct gitwrite_cfg *wc, const char *new,
    size_t len)
{
	struct gitcfg		 old, cfg, held;
	struct gitcfg_ent	 bad;
	struct gitcfg_ctx	 cx;
	char			*text, *cause = NULL, *dir, *slash;
	size_t			 olen = 0;
	bool			 apply;

	dir = xstrdup(wc->wc_path);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	memset(&cx, 0, sizeof(cx));
	cx.gx_gitdir = dir;
	cx.gx_base = &wc->wc_base;
	cx.gx_places = &gw->gw_places;
	text = gitcfg_read_text(AT_FDCWD, wc->wc_path, &olen);
	if (text == NULL || gitcfg_parse(&old, text, olen, &cause) == -1)
		memset(&old, 0, sizeof(old));
	free(cause);
	free(text);
	cause = NULL;
	pthread_mutex_lock(&gw->gw_lock);
	if (gitcfg_parse(&cfg, new, len, &cause) == -1) {
		bad.ge_key = xstrdup("(the file as written)");
		bad.ge_shown = NULL;
		bad.ge_value = cause;
		gitwrite_note(gw, wc, &bad, NULL, false, false, GITCFG_RUNS,
		    NULL);
		if (gw->gw_nchanges > 0 && !gw->gw_more)
			gw->gw_changes[gw->gw_nchanges - 1].ch_unread = true;
		free(bad.ge_key);
		free(cause);
		goto out;
	}
	apply = !wc->wc_user && gitcfg_held(&cx, &old, &cfg, &held) == 0 &&
	    gitwrite_put(wc->wc_path, new, len);
	gitcfg_clear(&held);
	gitwrite_notes(gw, wc, &cx, &old, &cfg, apply);
	gitcfg_clear(&cfg);
out:
	pthread_mutex_unlock(&gw->gw_lock);
	gitcfg_clear(&old);
	free(dir);
}

/* The call still waits: its task, and so its pid, are still there. */
static bool
gitwrite_valid(int lfd, uint64_t id)
{
	return ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/*
 * A rename(2), renameat(2) or renameat2(2) of the sandbox (req, on the
 * listener lfd).  Returns GITWRITE_CONTINUE for any but one onto a
 * protected config, which it judges (gitwrite_judge) and answers
 * itself: 0, the command's file removed, or an errno.
 */
int
gitwrite_rename(struct gitwrite *gw, int lfd, const struct seccomp_notif *req)
{
	struct gitwrite_cfg	*wc;
	char			 newp[PATH_MAX], oldp[PATH_MAX], *text = NULL;
	const char		*newname, *oldname, *slash;
	uint64_t		 oldaddr, newaddr;
	size_t			 len;
	int			 olddfd, newdfd, pidfd = -1, nd = -1, od = -1;
	int			 rc = GITWRITE_CONTINUE;
	pid_t			 pid = (pid_t)req->pid;

	if (req->data.nr == SYS_rename) {
		olddfd = newdfd = AT_FDCWD;
		oldaddr = req->data.args[0];
		newaddr = req->data.args[1];
	} else {
		olddfd = (int)req->data.args[0];
		oldaddr = req->data.args[1];
		newdfd = (int)req->data.args[2];
		newaddr = req->data.args[3];
		if (req->data.nr == SYS_renameat2 && req->data.args[4] != 0)
			return rc;	/* exchange, whiteout: not git's */
	}
	if (gw->gw_ncfgs == 0 || gitwrite_str(pid, newaddr, newp,
	    sizeof(newp)) != 0)
		return rc;
	slash = strrchr(newp, '/');
	slash = slash != NULL ? slash + 1 : newp;
	if (strcmp(slash, "config") != 0 && strcmp(slash, ".gitconfig") != 0)
		return rc;
	if (gitwrite_str(pid, oldaddr, oldp, sizeof(oldp)) != 0 ||
	    (pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) == -1 ||
	    !gitwrite_valid(lfd, req->id) ||
	    (nd = gitwrite_dir(pid, pidfd, newdfd, newp, &newname)) == -1 ||
	    (wc = gitwrite_find(gw, nd, newname)) == NULL ||
	    (od = gitwrite_dir(pid, pidfd, olddfd, oldp, &oldname)) == -1)
		goto out;
	if ((text = gitcfg_read_text(od, oldname, &len)) == NULL) {
		rc = errno != 0 ? errno : EINVAL;
		goto out;
	}
	if (!gitwrite_valid(lfd, req->id)) {
		rc = ESRCH;
		goto out;
	}
	gitwrite_judge(gw, wc, text, len);
	rc = unlinkat(od, oldname, 0) == -1 ? errno : 0;
out:
	free(text);
	if (od != -1)
		close(od);
	if (nd != -1)
		close(nd);
	if (pidfd != -1)
		close(pidfd);
	return rc;
}

/*
 * The one command that applies a held change, for the user to run once
 * they have read it: git config --file CONFIG [--unset-all] KEY [VALUE],
 * each word quoted for a POSIX shell.
 */
static char *
gitwrite_command(const struct gitwrite *gw, const struct gitwrite_change *ch)
{
	char	*path, *key, *value = NULL, *cmd;

	path = str_shell_quote(gw->gw_cfgs[ch->ch_cfg].wc_path);
	key = str_shell_quote(ch->ch_key);
	if (!ch->ch_removed)
		value = str_shell_quote(ch->ch_value != NULL ? ch->ch_value :
		    "true");
	xasprintf(&cmd, "git config --file %s %s%s%s%s", path,
	    ch->ch_removed ? "--unset-all " : ch->ch_changed ? "" : "--add ",
	    key, value != NULL ? " " : "", value != NULL ? value : "");
	free(path);
	free(key);
	free(value);
	return cmd;
}

/*
 * One change held back, with the command that applies it; a text git
 * would not read has none: the change is for the user to make.
 */
static void
gitwrite_print_one(const struct gitwrite *gw, const struct gitwrite_change *ch,
    FILE *f)
{
	const struct gitwrite_cfg	*wc = &gw->gw_cfgs[ch->ch_cfg];
	char				*k, *v, *p, *cmd, *c;

	k = str_escape(ch->ch_key, strlen(ch->ch_key));
	v = ch->ch_value != NULL ? str_escape(ch->ch_value,
	    strlen(ch->ch_value)) : NULL;
	p = str_escape(wc->wc_path, strlen(wc->wc_path));
	if (ch->ch_unread) {
		fprintf(f, "cordon:   a text for %s that git would not read "
		    "(%s)\ncordon: hint: make the change on the host with git "
		    "config, which writes only what it reads\n", p,
		    v != NULL ? v : "");
		goto out;
	}
	cmd = gitwrite_command(gw, ch);
	c = str_escape(cmd, strlen(cmd));
	fprintf(f, "cordon:   %s %s%s%s in %s%s%s%s\ncordon: hint: after "
	    "reading it, apply it with: %s\n", ch->ch_removed ? "removed" :
	    ch->ch_changed ? "changed" : "set", k, v != NULL ? " = " : "",
	    v != NULL ? v : "", p, wc->wc_user ? " (your own, which every "
	    "repository of yours reads)" : "", ch->ch_why != NULL &&
	    !wc->wc_user ? ": " : "", ch->ch_why != NULL && !wc->wc_user ?
	    ch->ch_why : "", c);
	free(c);
	free(cmd);
out:
	free(k);
	free(v);
	free(p);
}

/* A remote the command added, applied: where git will push, said. */
static void
gitwrite_print_added(const struct gitwrite *gw,
    const struct gitwrite_change *ch, FILE *f)
{
	char	*k, *v, *p;

	k = str_escape(ch->ch_key, strlen(ch->ch_key));
	v = ch->ch_value != NULL ? str_escape(ch->ch_value,
	    strlen(ch->ch_value)) : xstrdup("true");
	p = str_escape(gw->gw_cfgs[ch->ch_cfg].wc_path,
	    strlen(gw->gw_cfgs[ch->ch_cfg].wc_path));
	fprintf(f, "cordon: the command added %s = %s in %s: a remote, "
	    "where git on the host will fetch from and push to\n", k, v, p);
	free(k);
	free(v);
	free(p);
}

/* How many changes are noted so far (a session's command starts). */
size_t
gitwrite_count(struct gitwrite *gw)
{
	size_t	 n;

	pthread_mutex_lock(&gw->gw_lock);
	n = gw->gw_nchanges;
	pthread_mutex_unlock(&gw->gw_lock);
	return n;
}

/*
 * Says which changes to git configs, from the one numbered from on (a
 * session's command: those made while it ran), were held back, with
 * the command that applies each, and the remotes added; the other
 * changes applied are in the report only.
 */
void
gitwrite_print(struct gitwrite *gw, size_t from, FILE *f)
{
	size_t	 i, n = 0;

	pthread_mutex_lock(&gw->gw_lock);
	for (i = from; i < gw->gw_nchanges; i++)
		n += !gw->gw_changes[i].ch_applied;
	for (i = from; i < gw->gw_nchanges; i++)
		if (gw->gw_changes[i].ch_applied &&
		    gw->gw_changes[i].ch_class == GITCFG_REMOTE &&
		    !gw->gw_changes[i].ch_removed)
			gitwrite_print_added(gw, &gw->gw_changes[i], f);
	if (n > 0)
		fprintf(f, "cordon: held back %zu change%s to git config that "
		    "could make git on the host run a program, write files "
		    "elsewhere, reach the network by itself or send your work "
		    "elsewhere, or to your own (the command was told it "
		    "succeeded; nothing was written):\n", n, n == 1 ? "" : "s");
	for (i = from; i < gw->gw_nchanges; i++)
		if (!gw->gw_changes[i].ch_applied)
			gitwrite_print_one(gw, &gw->gw_changes[i], f);
	if (gw->gw_more)
		fprintf(f, "cordon: more changes to git config were made than "
		    "cordon lists (%d)\n", GITWRITE_CHANGES_MAX);
	pthread_mutex_unlock(&gw->gw_lock);
}

/*
 * The report's "git_config": each change from the one numbered from on,
 * applied or held, with its fix.
 */
json_t *
gitwrite_json(struct gitwrite *gw, size_t from)
{
	const struct gitwrite_change	*ch;
	json_t				*a;
	char				*cmd;
	size_t				 i;

	a = json_array();
	pthread_mutex_lock(&gw->gw_lock);
	for (i = from; i < gw->gw_nchanges; i++) {
		ch = &gw->gw_changes[i];
		cmd = ch->ch_applied || ch->ch_unread ? NULL :
		    gitwrite_command(gw, ch);
		json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:b, "
		    "s:b, s:b, s:o, s:s, s:o}", "file",
		    gw->gw_cfgs[ch->ch_cfg].wc_path, "key", ch->ch_key,
		    "value", ch->ch_value != NULL ? json_string(ch->ch_value) :
		    json_null(), "removed", ch->ch_removed, "changed",
		    ch->ch_changed, "applied", ch->ch_applied, "apply",
		    cmd != NULL ? json_string(cmd) : json_null(), "class",
		    ch->ch_unread ? "unread" : gitjudge_name(ch->ch_class),
		    "why", ch->ch_why != NULL ? json_string(ch->ch_why) :
		    json_null()));
		free(cmd);
	}
	pthread_mutex_unlock(&gw->gw_lock);
	return a;
}
