/*
 * unixown.c: what a Unix socket path the command connects to is, judged
 * by the connect thread (notify.c) for a path no route lists.
 *
 * The path is resolved once, as the caller sees it: beneath its root
 * (/proc/PID/root, RESOLVE_IN_ROOT, no magic links), a relative path
 * from its folder.  The descriptor that gives (O_PATH) pins the inode:
 * what is judged is what is connected, through /proc/self/fd/N, with no
 * second lookup the command could change.
 *
 * Whose the socket is, is then asked of the kernel, not read from the
 * path: a socket lives in the network namespace it was made in, and
 * UNIX_DIAG (NETLINK_SOCK_DIAG) lists, with UDIAG_SHOW_VFS, the inode
 * each Unix socket of one namespace is bound to.  The sandbox's PID 1,
 * cordon's code, opens such a socket in the sandbox's namespace and
 * hands it to cordon run: a socket bound to the inode there is the
 * sandbox's own.  The kernel binds a socket only to a new inode, so no
 * host socket can take that inode later.
 *
 * The kernel reports a dentry's s_dev, in its own encoding (major << 20
 * | minor), not the encoding stat(2) gives.
 *
 * Runs in: cordon run's connect thread (notify.c).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

#include "notify/notify_addr.h"
#include "notify/sockdiag.h"


/*
 * The absolute form of path as pid sees it, into buf: path itself, or
 * its folder's (the kernel names it from the caller's root) and path.
 * Returns 0 or an errno.
 */
static int
unixown_abs(pid_t pid, const char *path, char *buf, size_t size)
{
	char	 link[64];
	ssize_t	 n;

	if (path[0] == '/') {
		if (strlen(path) >= size)
			return ENAMETOOLONG;
		strcpy(buf, path);
		return 0;
	}
	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	if ((n = readlink(link, buf, size - 1)) == -1)
		return errno == ENOENT ? ESRCH : errno;
	buf[n] = '\0';
	if (buf[0] != '/')
		return ENOENT;	/* a folder the caller cannot name */
	if ((size_t)n + 1 + strlen(path) >= size)
		return ENAMETOOLONG;
	strcat(buf, "/");
	strcat(buf, path);
	return 0;
}

/*
 * Opens path as the caller pid sees it, links followed inside its root.
 * Returns an O_PATH descriptor of a socket, or -1 with *err set to the
 * kernel's answer to a connect there: the lookup's errno, or
 * ECONNREFUSED for a file that is not a socket.
 */
int
unixown_open(pid_t pid, const char *path, int *err)
{
	struct open_how	 how;
	struct stat	 st;
	char		 root[64], abs[PATH_MAX + NOTIFY_PATH_MAX + 2];
	const char	*rel;
	int		 dir, fd;

	if ((*err = unixown_abs(pid, path, abs, sizeof(abs))) != 0)
		return -1;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	if ((dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		*err = ESRCH;
		return -1;
	}
	for (rel = abs; *rel == '/'; rel++)
		;
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	do
		fd = (int)syscall(SYS_openat2, dir, rel[0] != '\0' ? rel :
		    ".", &how, sizeof(how));
	while (fd == -1 && errno == EAGAIN);
	*err = errno;
	close(dir);
	if (fd == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode)) {
		close(fd);
		*err = ECONNREFUSED;
		return -1;
	}
	*err = 0;
	return fd;
}

/* Asks nl for every Unix socket of its namespace, with its inode. */
static int
unixown_ask(int nl, uint32_t seq)
{
	struct unix_diag_req	 req;

	memset(&req, 0, sizeof(req));
	req.sdiag_family = AF_UNIX;
	req.udiag_states = ~0U;
	req.udiag_show = UDIAG_SHOW_VFS;
	return sockdiag_ask(nl, seq, &req, sizeof(req));
}

/* The inode an answer must name: the kernel's dev encoding, and ino. */
struct unixown_vfs {
	uint32_t	 v_kdev;
	uint32_t	 v_ino;
};

/* Whether one answer of the dump names the inode *arg. */
static bool
unixown_match(const struct nlmsghdr *nlh, const void *arg)
{
	const struct unixown_vfs	*want = arg;
	const struct unix_diag_vfs	*vfs;
	const struct nlattr		*a;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(struct unix_diag_msg)))
		return false;
	mnl_attr_for_each(a, nlh, sizeof(struct unix_diag_msg)) {
		if (mnl_attr_get_type(a) != UNIX_DIAG_VFS ||
		    mnl_attr_get_payload_len(a) < sizeof(*vfs))
			continue;
		vfs = mnl_attr_get_payload(a);
		if (vfs->udiag_vfs_ino == want->v_ino &&
		    vfs->udiag_vfs_dev == want->v_kdev)
			return true;
	}
	return false;
}

/*
 * Whether a Unix socket of nl's network namespace is bound to st's
 * inode.  One caller at a time per nl; seq tells this dump's answers
 * from a dump cut short before.  Returns 1, 0, or -1 with errno set.
 */
int
unixown_bound(int nl, uint32_t seq, const struct stat *st)
{
	struct unixown_vfs	 want;

	want.v_kdev = (uint32_t)(major(st->st_dev) << 20 |
	    minor(st->st_dev));
	want.v_ino = (uint32_t)st->st_ino;
	if (unixown_ask(nl, seq) == -1)
		return -1;
	return sockdiag_read(nl, seq, unixown_match, &want);
}
