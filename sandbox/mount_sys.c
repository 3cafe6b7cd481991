/*
 * mount_sys.c: the kernel's own filesystems of the sandbox, made by its
 * PID 1 in its mount namespace as mount.c's last steps, before the
 * command runs: a minimal /dev (the usual device nodes cloned from the
 * host's, a devpts of its own, a private shm; read-only) and a /proc of
 * the new PID namespace, whose knobs (/proc/sys and its kin) are
 * read-only.  Any failure ends the run (sandbox_fail).
 *
 * Runs in: the sandbox's PID 1, before it forks the command.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "sandbox/sandbox.h"

#include "sandbox/mount_fd.h"
#include "sandbox/mount_sys.h"

static const char *const sys_nodes[MOUNT_SYS_NODES] = {
	"null", "zero", "full", "random", "urandom", "tty"
};

/*
 * Clones the host's device nodes into nodes, before any cover can hide
 * them; a node the host lacks is -1.
 */
void
mount_sys_nodes(const struct sandbox *sb, int *nodes)
{
	size_t	 i;

	for (i = 0; i < nitems(sys_nodes); i++) {
		char	 path[32];

		snprintf(path, sizeof(path), "/dev/%s", sys_nodes[i]);
		nodes[i] = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE |
		    OPEN_TREE_CLOEXEC);
		if (nodes[i] == -1 && errno == ENOSYS)
			sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
			    "this kernel lacks "
			    "the mount API cordon uses (open_tree, "
			    "mount_setattr: Linux 5.12 or later)");
	}
}

/* A minimal /dev: the usual nodes, a private devpts, shm; read-only. */
void
mount_sys_dev(const struct sandbox *sb, const int *nodes)
{
	static const char *const links[][2] = {
		{ "ptmx", "pts/ptmx" }, { "fd", "/proc/self/fd" },
		{ "stdin", "/proc/self/fd/0" }, { "stdout", "/proc/self/fd/1" },
		{ "stderr", "/proc/self/fd/2" }
	};
	size_t	 i;
	int	 dev, fs, mnt, fd;

	if ((dev = mount_fd_tmpfs(0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)) ==
	    -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "/dev: tmpfs: %s",
		    strerror(errno));
	for (i = 0; i < nitems(sys_nodes); i++) {
		if (nodes[i] == -1)
			continue;
		if ((fd = openat(dev, sys_nodes[i], O_CREAT | O_WRONLY |
		    O_CLOEXEC, 0666)) == -1)
			sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
			    "/dev/%s: %s",
			    sys_nodes[i], strerror(errno));
		close(fd);
		if (move_mount(nodes[i], "", dev, sys_nodes[i],
		    MOVE_MOUNT_F_EMPTY_PATH) == -1)
			sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
			    "/dev/%s: "
			    "move_mount: %s", sys_nodes[i], strerror(errno));
		close(nodes[i]);
	}
	for (i = 0; i < nitems(links); i++)
		if (symlinkat(links[i][1], dev, links[i][0]) == -1)
			sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
			    "/dev/%s: %s",
			    links[i][0], strerror(errno));
	if (mkdirat(dev, "pts", 0755) == -1 || mkdirat(dev, "shm", 01777) ==
	    -1 || fchmodat(dev, "shm", 01777, 0) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "/dev: %s",
		    strerror(errno));

	/* A devpts of its own: the host's terminals are not listed. */
	if ((fs = fsopen("devpts", FSOPEN_CLOEXEC)) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_FLAG, "newinstance", NULL, 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0620", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
	    (mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID |
	    MOUNT_ATTR_NOEXEC)) == -1 ||
	    move_mount(mnt, "", dev, "pts", MOVE_MOUNT_F_EMPTY_PATH) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "/dev/pts: devpts: %s",
		    strerror(errno));
	close(fs);
	close(mnt);
	if ((mnt = mount_fd_tmpfs(01777, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) ==
	    -1 || move_mount(mnt, "", dev, "shm", MOVE_MOUNT_F_EMPTY_PATH) ==
	    -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "/dev/shm: %s",
		    strerror(errno));
	close(mnt);

	if (mount_fd_attrs(dev, "", AT_EMPTY_PATH, MOUNT_ATTR_RDONLY, 0) == -1 ||
	    (fd = mount_fd_open("/dev", false)) == -1 || mount_fd_move(dev, fd) ==
	    -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "/dev: %s",
		    strerror(errno));
	close(fd);
	close(dev);
}

/* A fresh /proc: this PID namespace's processes only; knobs read-only. */
void
mount_sys_proc(const struct sandbox *sb)
{
	static const char *const ro[] = {
		"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus",
		"/proc/fs"
	};
	size_t	 i;
	int	 fs, mnt, fd, t;

	if ((fs = fsopen("proc", FSOPEN_CLOEXEC)) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
	    (mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID |
	    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) == -1 ||
	    (fd = mount_fd_open("/proc", false)) == -1 ||
	    mount_fd_move(mnt, fd) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "/proc: %s%s",
		    strerror(errno), errno == EPERM ? " (the kernel refuses "
		    "a new procfs when the host's /proc is partly covered, "
		    "as in some containers; run on the host or in a container "
		    "with an uncovered /proc)" : "");
	close(fs);
	close(mnt);
	close(fd);
	for (i = 0; i < nitems(ro); i++) {
		if ((fd = mount_fd_open(ro[i], false)) == -1)
			continue;
		if ((t = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
		    AT_RECURSIVE | AT_EMPTY_PATH)) == -1 ||
		    mount_fd_attrs(t, "", AT_EMPTY_PATH | AT_RECURSIVE,
		    MOUNT_ATTR_RDONLY, 0) == -1 || mount_fd_move(t, fd) == -1)
			sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
			    "%s: read-only: %s",
			    ro[i], strerror(errno));
		close(t);
		close(fd);
	}
}
