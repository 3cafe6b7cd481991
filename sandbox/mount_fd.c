/*
 * mount_fd.c: the new mount API's four moves, by descriptor, shared by
 * the files that build the sandbox's view (mount.c, mount_sys.c): open
 * a target refusing symbolic links, make a detached tmpfs, set a
 * mount's attributes, move a detached mount onto an opened target.
 *
 * Runs in: the sandbox's PID 1, before it forks the command.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/mount_fd.h"

/* Opens path as O_PATH, refusing a symbolic link in any component. */
int
mount_fd_open(const char *path, bool link_itself)
{
	struct open_how	 how;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC | (link_itself ? O_NOFOLLOW : 0);
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

/* A detached tmpfs mount, or -1 with errno set. */
int
mount_fd_tmpfs(mode_t mode, unsigned int attrs)
{
	char	 opt[16];
	int	 fs, mnt, saved;

	if ((fs = fsopen("tmpfs", FSOPEN_CLOEXEC)) == -1)
		return -1;
	snprintf(opt, sizeof(opt), "%o", (unsigned int)mode);
	if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", opt, 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "size", "50%", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1) {
		saved = errno;
		close(fs);
		errno = saved;
		return -1;
	}
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	saved = errno;
	close(fs);
	errno = saved;
	return mnt;
}

/* Sets attributes on a mount (fd, or path from AT_FDCWD). */
int
mount_fd_attrs(int fd, const char *path, unsigned int flags, uint64_t set,
    uint64_t clr)
{
	struct mount_attr	 ma;

	memset(&ma, 0, sizeof(ma));
	ma.attr_set = set;
	ma.attr_clr = clr;
	return mount_setattr(fd, path, flags, &ma, sizeof(ma));
}

/* Moves the detached mount src onto the already opened target. */
int
mount_fd_move(int src, int target)
{
	return move_mount(src, "", target, "", MOVE_MOUNT_F_EMPTY_PATH |
	    MOVE_MOUNT_T_EMPTY_PATH);
}
