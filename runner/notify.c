/*
 * notify.c: the connect(2) calls of a sandbox whose policy lists host
 * Unix sockets, made by cordon run on the sandbox's behalf.
 *
 * The command's seccomp filter sends every connect(2) to a listener
 * (SECCOMP_RET_USER_NOTIF); the command hands the listener's descriptor
 * to cordon run before exec.  A thread of cordon run, not its event loop
 * (a connect may block, and the loop is the proxy's), takes each call:
 *
 *   - it reads the address once, from the caller's memory, and takes the
 *     caller's socket itself (pidfd_getfd: the same open file), checking
 *     after each step that the call is still waiting (NOTIF_ID_VALID), so
 *     that a pid reused in between is never read;
 *   - on a Unix socket, it connects the socket to a listed one (a route
 *     of unixroute.c) if the path is exactly a listed inside path, and
 *     answers EACCES to anything else, abstract names and relative paths
 *     included;
 *   - on an Internet or netlink socket, it connects the socket to the
 *     address as given; the socket stays in the sandbox's network
 *     namespace, so routes and the capture's rules are the sandbox's.
 *
 * It never answers "continue": the kernel would then read the address
 * and the descriptor again, after the check, and another thread of the
 * command could have changed either (a Unix socket put in place of the
 * Internet one checked, a path rewritten) in between.
 *
 * What it decided goes to the event loop as fixed-size records on a
 * pipe (one write each, under PIPE_BUF): the loop logs and counts them.
 * Privileges: cordon run's own, outside the sandbox; it owns the
 * sandbox's user namespace, so it may take descriptors from, and read
 * the memory of, the command even when the command is not dumpable.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdpass.h"
#include "log.h"
#include "runner.h"
#include "util.h"
#include "xmalloc.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL		/* Linux 6.9: a thread's pidfd */
#endif

struct notify {
	const struct unix_routes *n_routes;	/* borrowed, read-only */
	int			 n_sock;	/* the sandbox's end hands */
						/* the listener over */
	int			 n_stop[2];	/* the loop asks the thread */
						/* to end */
	int			 n_events[2];	/* records to the loop */
	size_t			 n_dropped;	/* the pipe was full */
	pthread_t		 n_thread;
	bool			 n_started;
};

/* Reads what the sandbox sent: the listener, or -1 (none came). */
static int
notify_listener(int sock)
{
	char	 b;
	int	 fd;

	if (fdpass_recv(sock, &fd, &b, 1, 0) <= 0 && fd != -1) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Passes ne to the loop.  The thread never waits for the loop: with the
 * pipe full, the record is counted instead (notify_dropped).
 */
static void
notify_tell(struct notify *n, const struct notify_event *ne)
{
	ssize_t	 w;

	while ((w = write(n->n_events[1], ne, sizeof(*ne))) == -1 &&
	    errno == EINTR)
		;
	if (w != (ssize_t)sizeof(*ne))
		n->n_dropped++;
}

/*
 * An unlisted path: is there anything to refuse?  A socket of the host
 * (NOTIFY_UNLISTED), a file in the sandbox's own tree, seen through the
 * caller's root with its links resolved inside it (NOTIFY_INSIDE), or
 * nothing at all (NOTIFY_NOTHING: a library looking for a daemon, such
 * as glibc for nscd, which the summary need not repeat at every run).
 * The caller gets EACCES whichever it is.
 */
static enum notify_why
notify_there(pid_t pid, const struct notify_event *ne)
{
	struct open_how	 how;
	struct stat	 st;
	char		 path[sizeof(ne->ne_path) + 1], root[64];
	int		 dir, fd;

	memcpy(path, ne->ne_path, ne->ne_pathlen);
	path[ne->ne_pathlen] = '\0';
	if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		return NOTIFY_UNLISTED;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	if ((dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return NOTIFY_UNLISTED;
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, dir, path + 1, &how, sizeof(how));
	close(dir);
	if (fd == -1)
		return errno == ENOENT || errno == ENOTDIR ? NOTIFY_NOTHING :
		    NOTIFY_UNLISTED;
	close(fd);
	return NOTIFY_INSIDE;
}

/*
 * Judges a connect(2) on a Unix socket s to the address sa of len bytes,
 * and connects s to the listed socket if there is one.  Returns the
 * errno for the command (0: connected), and fills ne.
 */
static int
notify_unix(struct notify *n, pid_t pid, int s, const struct sockaddr_un *sa,
    socklen_t len, struct notify_event *ne)
{
	const struct unix_route	*r;
	struct sockaddr_un	 to;
	size_t			 plen;

	if (len <= offsetof(struct sockaddr_un, sun_path) ||
	    sa->sun_family != AF_UNIX)
		return EINVAL;	/* what the kernel says to these */
	plen = strnlen(sa->sun_path, len - offsetof(struct sockaddr_un,
	    sun_path));
	if (sa->sun_path[0] == '\0') {
		ne->ne_why = NOTIFY_ABSTRACT;
		plen = len - offsetof(struct sockaddr_un, sun_path) - 1;
		memcpy(ne->ne_path, sa->sun_path + 1, plen);
		ne->ne_pathlen = plen;
		return EACCES;
	}
	memcpy(ne->ne_path, sa->sun_path, plen);
	ne->ne_pathlen = plen;
	if (sa->sun_path[0] != '/') {
		ne->ne_why = NOTIFY_RELATIVE;
		return EACCES;
	}
	if ((r = unixroute_find(n->n_routes, sa->sun_path, plen)) == NULL) {
		ne->ne_why = notify_there(pid, ne);
		return EACCES;
	}
	ne->ne_route = (size_t)(r - n->n_routes->ur_v);
	ne->ne_why = NOTIFY_ALLOWED;
	memset(&to, 0, sizeof(to));
	to.sun_family = AF_UNIX;
	memcpy(to.sun_path, r->ur_host, strlen(r->ur_host));
	if (connect(s, (struct sockaddr *)&to, sizeof(to)) == -1)
		ne->ne_errno = errno;
	return ne->ne_errno;
}

/*
 * Connects s, a socket of family domain, to sa as the command asked.
 * Netlink multicast groups are refused: cordon run holds capabilities
 * over the sandbox's namespaces that the command does not, and netlink
 * checks them on the caller.  Returns the errno for the command.
 */
static int
notify_other(int s, int domain, const struct sockaddr_storage *sa,
    socklen_t len)
{
	const struct sockaddr_nl	*nl = (const struct sockaddr_nl *)sa;

	if (domain != AF_INET && domain != AF_INET6 && domain != AF_NETLINK)
		return EPERM;
	if (domain == AF_NETLINK && len >= sizeof(*nl) &&
	    nl->nl_family == AF_NETLINK && nl->nl_groups != 0)
		return EPERM;
	if (connect(s, (const struct sockaddr *)sa, len) == -1)
		return errno;
	return 0;
}

/* Whether the call id still waits (its task, and so its pid, is there). */
static bool
notify_valid(int lfd, uint64_t id)
{
	return ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/*
 * Answers one connect(2): the command's socket taken, its address read
 * once, the decision made.  Returns the errno for the command.
 */
static int
notify_judge(struct notify *n, int lfd, const struct seccomp_notif *req,
    struct notify_event *ne)
{
	struct sockaddr_storage	 sa;
	struct iovec		 local, remote;
	socklen_t		 len = (socklen_t)req->data.args[2];
	socklen_t		 olen = sizeof(int);
	int			 pidfd, s = -1, domain, err;

	ne->ne_pid = (int)req->pid;
	if ((int)len < 0 || len > sizeof(sa))
		return EINVAL;
	if ((pidfd = (int)syscall(SYS_pidfd_open, req->pid, PIDFD_THREAD)) ==
	    -1 && errno == EINVAL)
		pidfd = (int)syscall(SYS_pidfd_open, req->pid, 0);
	if (pidfd == -1 || !notify_valid(lfd, req->id)) {
		err = ESRCH;
		goto out;
	}
	if ((s = (int)syscall(SYS_pidfd_getfd, pidfd,
	    (int)req->data.args[0], 0)) == -1) {
		err = errno == EBADF ? EBADF : EPERM;
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	local.iov_base = &sa;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)req->data.args[1];
	remote.iov_len = len;
	if (len > 0 && process_vm_readv((pid_t)req->pid, &local, 1, &remote,
	    1, 0) != (ssize_t)len) {
		err = EFAULT;
		goto out;
	}
	if (!notify_valid(lfd, req->id)) {
		err = ESRCH;
		goto out;
	}
	if (getsockopt(s, SOL_SOCKET, SO_DOMAIN, &domain, &olen) == -1) {
		err = errno;
		goto out;
	}
	if (domain == AF_UNIX) {
		ne->ne_unix = true;
		err = notify_unix(n, (pid_t)req->pid, s,
		    (struct sockaddr_un *)&sa, len, ne);
	} else
		err = notify_other(s, domain, &sa, len);
out:
	if (s != -1)
		close(s);
	if (pidfd != -1)
		close(pidfd);
	return err;
}

/*
 * The thread: the listener from the sandbox, then each call until the
 * sandbox is gone or the loop asks it to end.  Blocks all signals (they
 * are the loop's, through its signalfd).
 */
static void *
notify_main(void *arg)
{
	struct notify		*n = arg;
	struct seccomp_notif	 req;
	struct seccomp_notif_resp resp;
	struct notify_event	 ne;
	struct pollfd		 pfd[2];
	int			 lfd, err;

	if ((lfd = notify_listener(n->n_sock)) == -1)
		return NULL;
	pfd[0].fd = lfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = n->n_stop[0];
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents != 0 ||
		    (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL)) != 0)
			break;
		memset(&req, 0, sizeof(req));	/* the kernel insists */
		if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) == -1) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			break;
		}
		memset(&ne, 0, sizeof(ne));
		err = notify_judge(n, lfd, &req, &ne);
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.error = err != 0 ? -err : 0;
		/* ENOENT: the caller went (a fatal signal); nothing to do. */
		ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		if (ne.ne_unix)
			notify_tell(n, &ne);
	}
	close(lfd);
	return NULL;
}

/*
 * Probes what the listener needs: seccomp user notification (Linux 5.0),
 * pidfd_open (5.3) and pidfd_getfd (5.6).  Returns 0, or -1 with *cause
 * set.
 */
int
notify_probe(char **cause)
{
	struct seccomp_notif_sizes	 sz;

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) == -1) {
		xasprintf(cause, "this kernel has no seccomp user "
		    "notification (Linux 5.0 or later): %s", strerror(errno));
		return -1;
	}
	if (sz.seccomp_notif > sizeof(struct seccomp_notif) ||
	    sz.seccomp_notif_resp > sizeof(struct seccomp_notif_resp))
		log_debug("%s: the kernel's notification structures are "
		    "larger than ours (read as ours)", __func__);
	if (syscall(SYS_pidfd_getfd, -1, 0, 0) == -1 && errno == ENOSYS) {
		xasprintf(cause, "this kernel has no pidfd_getfd (Linux 5.6 "
		    "or later)");
		return -1;
	}
	return 0;
}

/*
 * Starts the thread.  Takes sock (cordon run's end of the pair whose
 * other end the sandbox has); borrows routes until notify_stop.  Returns
 * the notify, or NULL with *cause set (sock closed).
 */
struct notify *
notify_start(const struct unix_routes *routes, int sock, char **cause)
{
	struct notify	*n;
	sigset_t	 all, old;
	int		 rc;

	n = xcalloc(1, sizeof(*n));
	n->n_routes = routes;
	n->n_sock = sock;
	n->n_stop[0] = n->n_stop[1] = n->n_events[0] = n->n_events[1] = -1;
	if (pipe2(n->n_stop, O_CLOEXEC) == -1 ||
	    pipe2(n->n_events, O_CLOEXEC | O_NONBLOCK) == -1) {
		xasprintf(cause, "pipe: %s", strerror(errno));
		notify_free(n);
		return NULL;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&n->n_thread, NULL, notify_main, n);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		xasprintf(cause, "pthread_create: %s", strerror(rc));
		notify_free(n);
		return NULL;
	}
	n->n_started = true;
	return n;
}

/* The descriptor the loop reads struct notify_event records from. */
int
notify_events_fd(const struct notify *n)
{
	return n->n_events[0];
}

/* Reads one record; returns 1, or 0 when there is none (yet). */
int
notify_read(struct notify *n, struct notify_event *ne)
{
	return read(n->n_events[0], ne, sizeof(*ne)) == (ssize_t)sizeof(*ne);
}

/*
 * Ends the thread; it finishes the call in hand first.  The records it
 * sent stay to be read (notify_read), then notify_free.
 */
void
notify_stop(struct notify *n)
{
	if (n == NULL || !n->n_started)
		return;
	if (write(n->n_stop[1], "x", 1) == -1)
		log_warn("run: telling the connect thread to end");
	/* The sandbox may never have sent the listener: wake recvmsg. */
	shutdown(n->n_sock, SHUT_RDWR);
	pthread_join(n->n_thread, NULL);
	n->n_started = false;
}

/* Records the thread could not pass on; read after notify_stop. */
size_t
notify_dropped(const struct notify *n)
{
	return n->n_dropped;
}

void
notify_free(struct notify *n)
{
	if (n == NULL)
		return;
	notify_stop(n);
	close(n->n_sock);
	if (n->n_stop[0] != -1)
		close(n->n_stop[0]);
	if (n->n_stop[1] != -1)
		close(n->n_stop[1]);
	if (n->n_events[0] != -1)
		close(n->n_events[0]);
	if (n->n_events[1] != -1)
		close(n->n_events[1]);
	free(n);
}
