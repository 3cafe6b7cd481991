/*
 * mount.c: the sandbox's view of the filesystem, built by its PID 1 in
 * a new mount namespace, before the command runs, from the steps
 * mount_steps.c lists.
 *
 * The order is the whole design:
 *
 *   1. every mount becomes private: nothing done here reaches the host;
 *   2. the sources of the plan's binds (fsplan.c) and of the device
 *      nodes are cloned first, from the host's tree as it is, so that a
 *      later cover (a private /tmp, a hidden folder) cannot take away
 *      what a deeper rule still needs;
 *   3. the whole tree becomes read-only and nosuid, recursively;
 *   4. the plan and the system's own covers (/tmp, /var/tmp, /run,
 *      $XDG_RUNTIME_DIR, the scratch layer over the home folder:
 *      scratch.c), by depth, most specific last: writable roots
 *      are moved over their paths, protected paths over them read-only,
 *      hidden ones covered by an empty, unreadable tmpfs or file;
 *   5. a minimal /dev and a fresh /proc for the new PID namespace
 *      (mount_sys.c).
 *
 * Every target is opened with openat2(RESOLVE_NO_SYMLINKS) and the
 * mount moved onto that very file: a folder swapped for a symbolic link
 * between the plan and the mount is refused, not followed.  Any failure
 * ends the run (sandbox_fail); nothing here degrades quietly.
 *
 * Runs in: the sandbox's PID 1, before it forks the command.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include <linux/openat2.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "sandbox/sandbox.h"

#include "sandbox/mount.h"
#include "sandbox/mount_fd.h"
#include "sandbox/mount_sys.h"

/*
 * The step's target inside a tmpfs this run mounted (a private /tmp,
 * a hidden folder with a writable folder below it) may not exist yet:
 * makes it, and the folders above it, like the source (folder or file).
 */
static void
mount_make_target(const struct mounts *m, const struct step *s)
{
	const struct step	*cover = NULL;
	struct stat		 st;
	char			 buf[PATH_MAX], *p;
	size_t			 i, n;
	bool			 dir = true;
	int			 fd;

	for (i = 0; i < m->m_n; i++) {
		n = strlen(m->m_steps[i].s_path);
		if (m->m_steps[i].s_covers && &m->m_steps[i] != s &&
		    strncmp(s->s_path, m->m_steps[i].s_path, n) == 0 &&
		    (s->s_path[n] == '/' || n == 1))
			cover = &m->m_steps[i];
	}
	if (cover == NULL)
		sandbox_fail(m->m_sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "%s (%s): it does not "
		    "exist any more; it changed while the sandbox was being "
		    "built: try again", s->s_path, s->s_why);
	if (s->s_src != -1 && fstat(s->s_src, &st) == 0)
		dir = S_ISDIR(st.st_mode);
	else if (s->s_kind == STEP_HIDE_FILE || s->s_kind == STEP_BLOCK_FILE)
		dir = false;
	if (snprintf(buf, sizeof(buf), "%s", s->s_path) >= (int)sizeof(buf))
		sandbox_fail(m->m_sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "%s: path too long",
		    s->s_path);
	for (p = buf + strlen(cover->s_path) + 1; (p = strchr(p, '/')) !=
	    NULL; p++) {
		*p = '\0';
		if (mkdir(buf, 0755) == -1 && errno != EEXIST)
			sandbox_fail(m->m_sb->sb_pipes.sp_errfd,
			    RUN_EXIT_FAILURE, "making %s in "
			    "the sandbox: %s", buf, strerror(errno));
		*p = '/';
	}
	if (dir)
		fd = mkdir(buf, 0755) == -1 && errno != EEXIST ? -1 : 0;
	else if ((fd = open(buf, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) != -1)
		close(fd);
	if (fd == -1)
		sandbox_fail(m->m_sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "making %s in the "
		    "sandbox: %s", buf, strerror(errno));
}

/* mount_scratch's premake: upper/D/name for each folder D/name in lower. */
static int
mount_premake(int lower, int tmp, const char *name)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*dp;
	char		 path[PATH_MAX];
	int		 fd, xfd, rc = 0;

	if ((fd = openat(lower, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return -1;
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while (rc == 0 && (de = readdir(dp)) != NULL) {
		if (de->d_name[0] == '.' || snprintf(path, sizeof(path),
		    "%s/%s", de->d_name, name) >= (int)sizeof(path) ||
		    fstatat(fd, path, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISDIR(st.st_mode))
			continue;
		snprintf(path, sizeof(path), "upper/%s", de->d_name);
		if (mkdirat(tmp, path, 0755) == -1 && errno != EEXIST)
			rc = -1;
		snprintf(path, sizeof(path), "upper/%s/%s", de->d_name, name);
		if (rc == 0 && mkdirat(tmp, path, 0700) == -1)
			rc = -1;
		/*
		 * Opaque: the lower one is not even looked into, which
		 * would take a search right there that nobody here has.
		 * tmpfs takes user.* attributes from Linux 6.6; before, the
		 * folder stays unwritable, as it was.
		 */
		if (rc == 0 && (xfd = openat(tmp, path, O_RDONLY |
		    O_DIRECTORY | O_CLOEXEC)) != -1) {
			if (fsetxattr(xfd, "user.overlay.opaque", "y", 1, 0) ==
			    -1)
				log_debug("%s: %s: opaque: %s", __func__, path,
				    strerror(errno));
			close(xfd);
		}
	}
	closedir(dp);
	return rc;
}

/*
 * The scratch layer over lower (a clone of the home folder, taken before
 * any cover): an overlay whose upper and work folders are in a folder of
 * its own, *tmp, on the tmpfs all the run's layers share (*shared, made
 * by the first); PID 1 keeps *tmp to list what was written (scratch.c).
 * Unprivileged overlayfs: Linux 5.11 or later.  With premake, each
 * folder of that name one level down in lower (apt's "partial", which
 * belongs to _apt, whom the sandbox does not map, so that not even root
 * could write there) is made the sandbox user's in the upper folder
 * first, on the same filesystem as the rest (apt renames out of it).
 * Returns the detached mount, or -1 with errno set.
 */
static int
mount_scratch(int lower, int *shared, int *tmp, const char *premake)
{
	static unsigned int	 layer;
	struct stat		 st;
	char			 lo[32], up[48], wk[48], name[16];
	int			 fs, mnt = -1, saved;

	if (fstat(lower, &st) == -1 || (*shared == -1 && (*shared =
	    mount_fd_tmpfs(0700, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) == -1))
		return -1;
	snprintf(name, sizeof(name), "%u", layer++);
	if (mkdirat(*shared, name, 0700) == -1 ||
	    (*tmp = openat(*shared, name, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return -1;
	if (mkdirat(*tmp, "upper", st.st_mode & 07777) == -1 ||
	    fchmodat(*tmp, "upper", st.st_mode & 07777, 0) == -1 ||
	    mkdirat(*tmp, "work", 0700) == -1 ||
	    (premake != NULL && mount_premake(lower, *tmp, premake) == -1))
		return -1;
	snprintf(lo, sizeof(lo), "/proc/self/fd/%d", lower);
	snprintf(up, sizeof(up), "/proc/self/fd/%d/upper", *tmp);
	snprintf(wk, sizeof(wk), "/proc/self/fd/%d/work", *tmp);
	if ((fs = fsopen("overlay", FSOPEN_CLOEXEC)) == -1)
		return -1;
	if (fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", lo, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", up, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "workdir", wk, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID |
		    MOUNT_ATTR_NODEV);
	saved = errno;
	close(fs);
	errno = saved;
	return mnt;
}

/*
 * Opens the step's target, making it first where a cover of this run
 * left none, and fills *st; ends the run on failure.  Returns the fd.
 */
static int
mount_target(const struct mounts *m, const struct step *s, struct stat *st)
{
	int	 target;

	if ((target = mount_fd_open(s->s_path, s->s_kind == STEP_PIN_LINK)) ==
	    -1 && errno == ENOENT && s->s_kind != STEP_PIN_LINK) {
		mount_make_target(m, s);
		target = mount_fd_open(s->s_path, false);
	}
	if (target == -1)
		sandbox_fail(m->m_sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "%s (%s): %s%s",
		    s->s_path, s->s_why, strerror(errno), errno == ELOOP ?
		    ": a symbolic link appeared in the path while the sandbox "
		    "was being built; refusing to follow it" : "");
	if (fstat(target, st) == -1)
		sandbox_fail(m->m_sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "%s: %s", s->s_path,
		    strerror(errno));
	return target;
}

/* mount_hang's points: "layers", and one per layer, as scratch_fds counts. */
#define MOUNT_LOWER	"lower-%zu"

/*
 * Closing a detached mount that is the root of its tree unmounts it, and
 * an unmount waits for an RCU grace period: 0.3 ms each while the other
 * processor is busy, nine times as root.  So the mounts PID 1 made only
 * to build others (a layer's lower clone, once its overlay holds its
 * own; the layers' tmpfs, at the end) are hung in m_empty, on points
 * made before it turned read-only, and go with it in one unmount, when
 * PID 1 closes it after the command has started (sandbox_main).  A
 * kernel that cannot mount on a detached tree (older ones) gets them
 * closed one by one, as before.  Takes mnt.
 */
static void
mount_hang(const struct mounts *m, int mnt, const char *name)
{
	if (move_mount(mnt, "", m->m_empty, name, MOVE_MOUNT_F_EMPTY_PATH) ==
	    -1)
		log_debug("%s: %s: %s", __func__, name, strerror(errno));
	close(mnt);
}

/*
 * A scratch step's overlay (mount_scratch), its folder kept in the
 * run's scratch_fds, which has room; takes s_src.  Returns the detached
 * mount, or -1 with errno set.
 */
static int
mount_scratch_step(struct mounts *m, struct step *s)
{
	struct scratch_fds	*sf = m->m_scratch;
	char			 name[32];
	int			 src;

	src = mount_scratch(s->s_src, &m->m_scratch_tmp, &sf->sf_fd[sf->sf_n],
	    s->s_premake);
	if (src != -1) {
		snprintf(name, sizeof(name), MOUNT_LOWER, sf->sf_n);
		mount_hang(m, s->s_src, name);
		sf->sf_hooks[sf->sf_n] = s->s_hooks;
		sf->sf_shown[sf->sf_n++] = s->s_shown;
	} else
		close(s->s_src);
	s->s_src = -1;
	return src;
}

/*
 * The file that covers a file step: a tool's token copy, or the empty
 * "hidden", "blank" or "dot" file of m_empty.  Returns its clone, or -1
 * with errno set.
 */
static int
mount_cover_file(const struct mounts *m, const struct step *s)
{
	char	 name[32];
	ssize_t	 tok;
	int	 src, saved;

	tok = s->s_kind == STEP_HIDE_FILE ? mount_steps_token(m->m_sb, s->s_path) :
	    -1;
	snprintf(name, sizeof(name), "token-%zd", tok);
	src = open_tree(m->m_empty, tok != -1 ? name :
	    s->s_kind != STEP_BLOCK_FILE ? "hidden" :
	    s->s_op != NULL && s->s_op->fo_dot ? "dot" : "blank",
	    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	/* A login's copy: writable, this clone alone (mount_tokens). */
	if (src != -1 && tok != -1 &&
	    m->m_sb->sb_view.sv_secrets[tok].tf_kind->sk_renew != NULL &&
	    mount_fd_attrs(src, "", AT_EMPTY_PATH, 0, MOUNT_ATTR_RDONLY) ==
	    -1) {
		saved = errno;
		close(src);
		errno = saved;
		return -1;
	}
	return src;
}

/*
 * The detached mount that step s puts on its target, whose stat is st.
 * Returns it, or -1 with errno set and *what naming the step that
 * failed when it is not the mount as a whole.
 */
static int
mount_source(struct mounts *m, struct step *s, const struct stat *st,
    const char **what)
{
	int	 src = -1;

	switch (s->s_kind) {
	case STEP_BIND_RW:
	case STEP_BIND_RO:
		src = s->s_src;
		s->s_src = -1;
		if (s->s_kind == STEP_BIND_RO && mount_fd_attrs(src, "",
		    AT_EMPTY_PATH | AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0) == -1) {
			*what = "making it read-only";
			return -1;
		}
		break;
	case STEP_HIDE_DIR:
	case STEP_BLOCK_DIR:
	case STEP_TMPFS:
		if (!S_ISDIR(st->st_mode)) {
			errno = ENOTDIR;
			return -1;
		}
		if ((src = mount_fd_tmpfs(s->s_mode, MOUNT_ATTR_NOSUID |
		    MOUNT_ATTR_NODEV)) == -1) {
			*what = "tmpfs";
			return -1;
		}
		s->s_covers = true;
		break;
	case STEP_SCRATCH:
		if (m->m_scratch->sf_n == RUN_SCRATCH_MAX) {
			errno = E2BIG;
			return -1;
		}
		if ((src = mount_scratch_step(m, s)) == -1) {
			*what = "overlayfs (unprivileged: Linux 5.11 or later)";
			return -1;
		}
		s->s_covers = true;	/* a kept folder's target: made here */
		break;
	case STEP_HIDE_FILE:
	case STEP_BLOCK_FILE:
	case STEP_PIN_LINK:
		if (S_ISDIR(st->st_mode)) {
			errno = EISDIR;
			return -1;
		}
		if ((src = mount_cover_file(m, s)) == -1) {
			*what = "open_tree";
			return -1;
		}
		break;
	}
	return src;
}

/* Puts step s on its target; ends the run on failure. */
static void
mount_apply(struct mounts *m, struct step *s)
{
	struct stat	 st;
	const char	*what = "mount";
	int		 target, src;

	target = mount_target(m, s, &st);
	if ((src = mount_source(m, s, &st, &what)) == -1)
		goto fail;
	if (mount_fd_move(src, target) == -1) {
		what = "move_mount";
		goto fail;
	}
	close(src);
	close(target);
	return;
fail:
	sandbox_fail(m->m_sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
	    "%s (%s): %s: %s", s->s_path,
	    s->s_why, what, strerror(errno));
}

/* Clones a bind's source now, from the host's tree as it is. */
static void
mount_clone(struct mounts *m, struct step *s)
{
	struct stat	 st;
	int		 fd;

	if (s->s_kind != STEP_BIND_RW && s->s_kind != STEP_BIND_RO &&
	    s->s_kind != STEP_SCRATCH)
		return;
	if ((fd = mount_fd_open(s->s_from != NULL ? s->s_from : s->s_path,
	    false)) == -1)
		sandbox_fail(m->m_sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "%s (%s): %s%s",
		    s->s_from != NULL ? s->s_from : s->s_path, s->s_why,
		    strerror(errno), errno == ELOOP ?
		    ": a symbolic link appeared in the path; refusing to "
		    "follow it" : "");
	if (s->s_op != NULL && s->s_op->fo_has_id && (fstat(fd, &st) == -1 ||
	    st.st_dev != s->s_op->fo_id.fm_dev ||
	    st.st_ino != s->s_op->fo_id.fm_ino))
		sandbox_fail(m->m_sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "%s (%s): something "
		    "else is there than when the run was planned (moved in "
		    "meanwhile); refusing to mount it: try again", s->s_path,
		    s->s_why);
	s->s_src = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	    AT_RECURSIVE | AT_EMPTY_PATH);
	if (s->s_src == -1)
		sandbox_fail(m->m_sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "%s (%s): open_tree: "
		    "%s", s->s_path, s->s_why, strerror(errno));
	close(fd);
}

/*
 * The copies of the tools' token files (their tokens placeholders), as
 * "token-N" in dir: each covers the host's file where the plan hid it.
 * A login's copy (an agent's, which a refresh renews: sk_renew) is the
 * user's alone and writable (mount_cover_file), so that the agent can
 * store the placeholders a refresh gave it; what it writes stays in
 * this tmpfs and is gone with the run.  One cordon run put in a kept
 * folder (tf_kept) is no mount, so none here.  Any other is readable
 * by all, read-only.  Returns 0, or -1 with errno set.
 */
static int
mount_tokens(const struct sandbox *sb, int dir)
{
	const struct secret_file *tf;
	char			 name[32];
	size_t			 i;
	int			 fd;

	for (i = 0; i < sb->sb_view.sv_nsecrets; i++) {
		tf = &sb->sb_view.sv_secrets[i];
		if (!tf->tf_bound || tf->tf_kept != NULL)
			continue;
		snprintf(name, sizeof(name), "token-%zu", i);
		if ((fd = openat(dir, name, O_CREAT | O_WRONLY | O_CLOEXEC,
		    tf->tf_kind->sk_renew != NULL ? 0600 : 0444)) == -1)
			return -1;
		if (write(fd, tf->tf_text, tf->tf_len) != (ssize_t)tf->tf_len) {
			if (errno == 0)
				errno = EIO;
			close(fd);
			return -1;
		}
		if (close(fd) == -1)
			return -1;
	}
	return 0;
}

/*
 * cordon's ssh-agent socket (run.c), cloned from the host's tree before
 * the covers hide its folder; it must be the socket run.c made.
 */
static int
mount_agent_open(const struct sandbox *sb)
{
	struct stat	 st;
	int		 fd, tree;

	if ((fd = mount_fd_open(sb->sb_view.sv_agent_sock, true)) == -1 ||
	    fstat(fd, &st) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "cordon's ssh-agent %s: %s",
		    sb->sb_view.sv_agent_sock, strerror(errno));
	if (!S_ISSOCK(st.st_mode) ||
	    st.st_dev != sb->sb_view.sv_agent_id.fm_dev ||
	    st.st_ino != sb->sb_view.sv_agent_id.fm_ino)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "cordon's ssh-agent %s: "
		    "not the socket cordon made; refusing to bind it",
		    sb->sb_view.sv_agent_sock);
	if ((tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	    AT_EMPTY_PATH)) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "cordon's ssh-agent: "
		    "open_tree: %s", strerror(errno));
	close(fd);
	return tree;
}

/*
 * Binds the agent's socket at RUN_AGENT_SOCK, on the private /run: read-
 * only, which keeps it from being removed or replaced, not from being
 * connected to.
 */
static void
mount_agent(const struct sandbox *sb, int tree)
{
	int	 fd;

	if ((mkdir(RUN_OWN_DIR, 0755) == -1 && errno != EEXIST) ||
	    (fd = open(RUN_AGENT_SOCK, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0644)) == -1 || close(fd) == -1 ||
	    (fd = mount_fd_open(RUN_AGENT_SOCK, false)) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE, "%s: %s",
		    RUN_AGENT_SOCK,
		    strerror(errno));
	if (mount_fd_attrs(tree, "", AT_EMPTY_PATH, MOUNT_ATTR_RDONLY |
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0) ==
	    -1 || mount_fd_move(tree, fd) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "%s: binding cordon's "
		    "ssh-agent: %s", RUN_AGENT_SOCK, strerror(errno));
	close(fd);
	close(tree);
}

/*
 * m_empty, the files to cover with: empty and unreadable (hidden), empty
 * and readable (blocked), and "./" (a blocked git commondir: the git
 * directory itself, as if it were not there; libgit2, unlike git, no
 * longer finds the repository when it reads "."); the tokens' copies;
 * and mount_hang's points, one per scratch layer and one for their
 * tmpfs.  Read-only once made; fails the run on error.
 */
static void
mount_empty(struct mounts *m)
{
	char	 name[32];
	size_t	 i, n = 0;
	int	 fd;

	if ((m->m_empty = mount_fd_tmpfs(0755, MOUNT_ATTR_NOSUID |
	    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) == -1 ||
	    (fd = openat(m->m_empty, "hidden", O_CREAT | O_WRONLY | O_CLOEXEC,
	    0)) == -1 || close(fd) == -1 ||
	    (fd = openat(m->m_empty, "blank", O_CREAT | O_WRONLY | O_CLOEXEC,
	    0444)) == -1 || close(fd) == -1 ||
	    (fd = openat(m->m_empty, "dot", O_CREAT | O_WRONLY | O_CLOEXEC,
	    0444)) == -1 || write(fd, "./\n", 3) != 3 || close(fd) == -1 ||
	    mount_tokens(m->m_sb, m->m_empty) == -1 ||
	    mkdirat(m->m_empty, "layers", 0700) == -1)
		goto fail;
	for (i = 0; i < m->m_n; i++)
		if (m->m_steps[i].s_kind == STEP_SCRATCH) {
			snprintf(name, sizeof(name), MOUNT_LOWER, n++);
			if (mkdirat(m->m_empty, name, 0700) == -1)
				goto fail;
		}
	if (mount_fd_attrs(m->m_empty, "", AT_EMPTY_PATH, MOUNT_ATTR_RDONLY,
	    0) == 0)
		return;
fail:
	sandbox_fail(m->m_sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE, "tmpfs: %s",
	    strerror(errno));
}

/*
 * Builds the sandbox's filesystem.  Runs as the sandbox's PID 1, with
 * every capability in its own user namespace, before anything of the
 * command's.  Fails the run on any error.  Fills *sf with the scratch
 * layers' tmpfs, for scratch_list.  Returns m_empty, with the mounts
 * mount_hang hung there, for PID 1 to close once the command runs.
 */
int
mount_sandbox(const struct sandbox *sb, struct scratch_fds *sf)
{
	struct mounts	 m;
	int		 nodes[MOUNT_SYS_NODES], agent = -1;
	size_t		 i;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "making the mounts "
		    "private: %s", strerror(errno));

	/* The device nodes and the plan's sources, from the host's tree. */
	mount_sys_nodes(sb, nodes);
	if (sb->sb_view.sv_agent_sock != NULL)
		agent = mount_agent_open(sb);
	mount_steps(&m, sb);
	memset(sf, 0, sizeof(*sf));
	m.m_scratch = sf;
	for (i = 0; i < m.m_n; i++)
		mount_clone(&m, &m.m_steps[i]);

	mount_empty(&m);
	if (mount_fd_attrs(AT_FDCWD, "/", AT_RECURSIVE, MOUNT_ATTR_RDONLY |
	    MOUNT_ATTR_NOSUID, 0) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "making / read-only: %s",
		    strerror(errno));
	for (i = 0; i < m.m_n; i++)
		mount_apply(&m, &m.m_steps[i]);

	/* Covers were writable for what a deeper rule made in them. */
	for (i = 0; i < m.m_n; i++)
		if ((m.m_steps[i].s_kind == STEP_HIDE_DIR ||
		    m.m_steps[i].s_kind == STEP_BLOCK_DIR) && mount_fd_attrs(
		    AT_FDCWD, m.m_steps[i].s_path, 0, MOUNT_ATTR_RDONLY, 0) ==
		    -1)
			sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
			    "%s: read-only: %s",
			    m.m_steps[i].s_path, strerror(errno));
	if (agent != -1)
		mount_agent(sb, agent);
	mount_sys_dev(sb, nodes);
	mount_sys_proc(sb);
	if (m.m_scratch_tmp != -1)
		mount_hang(&m, m.m_scratch_tmp, "layers");
	free(m.m_steps);
	return m.m_empty;
}
