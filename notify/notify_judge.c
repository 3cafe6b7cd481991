/*
 * notify_judge.c: what the connect thread's worker (notify.c) answers a
 * call of the sandbox: the address read once from the caller's memory,
 * the caller's socket taken (pidfd_getfd), judged (notify_addr.c) and
 * connected where a route or the sandbox's own socket says; a rename
 * onto a protected git config judged by gitwrite.c.
 * Privileges: cordon run's own, outside the sandbox.
 *
 * Runs in: cordon run, on a worker thread of its connect thread.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <linux/seccomp.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE	71		/* Linux 5.14 */
#endif

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "guard/guard.h"
#include "lib/log.h"
#include "notify/notify.h"
#include "notify/notify_parts.h"
#include "notify/sockdiag.h"
#include "notify/unixroute.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL		/* Linux 6.9: a thread's pidfd */
#endif

/*
 * A TCP connect to a loopback port where nothing listens in the sandbox
 * and the host has a server: noted (NOTIFY_HOST_PORT) for the summary,
 * whether the connect is blocking or not; it goes on as made.
 */
static void
notify_host_port(struct notify *n, int type, const void *sa, int len,
    struct notify_event *ne)
{
	unsigned int	 port;
	int		 in;

	if (type != SOCK_STREAM || n->n_diag == -1 ||
	    (port = hostport_loopback(sa, (size_t)len)) == 0)
		return;
	/*
	 * The sandbox's own listeners first: a short dump, where a server
	 * the command runs is the common case; the host's table, which may
	 * be long, only when none listens inside.
	 */
	pthread_mutex_lock(&n->n_diag_lock);
	in = hostport_inside(n->n_diag, &n->n_seq, port);
	pthread_mutex_unlock(&n->n_diag_lock);
	if (in == 0 && hostport_listens(port)) {
		ne->ne_why = NOTIFY_HOST_PORT;
		ne->ne_port = port;
	}
}

/*
 * Whether a socket of diag's network namespace is bound to st's inode:
 * 1, 0, or -1 (no answer: judged as not).
 */
static int
notify_bound(struct notify *n, int diag, const struct stat *st)
{
	int	 rc;

	if (diag == -1)
		return 0;
	pthread_mutex_lock(&n->n_diag_lock);
	rc = unixown_bound(diag, ++n->n_seq, st);
	pthread_mutex_unlock(&n->n_diag_lock);
	if (rc == -1)
		log_debug("%s: UNIX_DIAG: %s", __func__, strerror(errno));
	return rc;
}

/*
 * A path no route lists (na, terminated), opened as the caller pid sees
 * it (unixown.c): the sandbox's own socket is connected to s through the
 * descriptor judged; a socket of the host is refused; a file bound in
 * neither namespace gets the kernel's answer to a socket nobody holds.
 * Returns the errno for the command, and fills ne.
 */
static int
notify_path(struct notify *n, pid_t pid, int s, const struct notify_addr *na,
    struct notify_event *ne)
{
	struct sockaddr_un	 to;
	struct stat		 st;
	int			 fd, err;

	ne->ne_why = NOTIFY_NOTHING;
	if ((fd = unixown_open(pid, na->na_path, &err)) == -1)
		return err;
	err = 0;
	if (fstat(fd, &st) == -1)
		err = errno;
	else if (notify_bound(n, n->n_diag, &st) == 1) {
		ne->ne_why = NOTIFY_OWN;
		memset(&to, 0, sizeof(to));
		to.sun_family = AF_UNIX;
		snprintf(to.sun_path, sizeof(to.sun_path), "/proc/self/fd/%d",
		    fd);
		if (connect(s, (struct sockaddr *)&to, sizeof(to)) == -1)
			err = errno;
	} else if (n->n_hostdiag != -1 &&
	    notify_bound(n, n->n_hostdiag, &st) == 0)
		err = ECONNREFUSED;
	else {
		ne->ne_why = na->na_path[0] == '/' ? NOTIFY_UNLISTED :
		    NOTIFY_RELATIVE;
		err = EACCES;
	}
	close(fd);
	return err;
}

/*
 * Whether s was made in the sandbox's network namespace, where its
 * abstract names are found: not with the host's network (no n_diag), nor
 * a socket of the host handed in through a listed one (SCM_RIGHTS).  A
 * kernel without SO_NETNS_COOKIE (Linux 5.14) cannot say: not.
 */
static bool
notify_ours(const struct notify *n, int s)
{
	uint64_t	 a, b;
	socklen_t	 alen = sizeof(a), blen = sizeof(b);

	return n->n_diag != -1 &&
	    getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, &a, &alen) == 0 &&
	    getsockopt(n->n_diag, SOL_SOCKET, SO_NETNS_COOKIE, &b, &blen) ==
	    0 && a == b;
}

/*
 * Judges a connect(2) on a Unix socket s to the path or name in na
 * (notify_addr_judge, from the len bytes at sa), and connects s to the
 * listed socket, or the sandbox's own, if there is one.  Returns the
 * errno for the command (0: connected), and fills ne.
 */
static int
notify_unix(struct notify *n, pid_t pid, int s, const void *sa, int len,
    const struct notify_addr *na, struct notify_event *ne)
{
	const struct unix_route	*r;
	struct sockaddr_un	 to;

	_Static_assert(sizeof(ne->ne_path) >= sizeof(na->na_path) - 1,
	    "a judged path fits in a record");
	memcpy(ne->ne_path, na->na_path, na->na_len);
	ne->ne_pathlen = na->na_len;
	if (na->na_kind == NOTIFY_ADDR_ABSTRACT) {
		if (!notify_ours(n, s)) {
			ne->ne_why = NOTIFY_ABSTRACT;
			return EACCES;
		}
		ne->ne_why = NOTIFY_OWN;
		return connect(s, sa, (socklen_t)len) == -1 ? errno : 0;
	}
	if (na->na_path[0] != '/' || (r = unixroute_find(n->n_routes,
	    na->na_path, na->na_len)) == NULL)
		return notify_path(n, pid, s, na, ne);
	ne->ne_route = (size_t)(r - n->n_routes->ur_v);
	ne->ne_why = NOTIFY_ALLOWED;
	memset(&to, 0, sizeof(to));
	to.sun_family = AF_UNIX;
	if (r->ur_pin != -1)
		snprintf(to.sun_path, sizeof(to.sun_path), "/proc/self/fd/%d",
		    r->ur_pin);
	else
		memcpy(to.sun_path, r->ur_host, strlen(r->ur_host));
	if (connect(s, (struct sockaddr *)&to, sizeof(to)) == -1)
		ne->ne_errno = errno;
	return ne->ne_errno;
}

/* Whether the call id still waits (its task, and so its pid, is there). */
static bool
notify_valid(int lfd, uint64_t id)
{
	return ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/*
 * Reads len bytes at the command's addr into sa, once.  Returns 0 or
 * EFAULT, as the kernel's copy from the caller would.
 */
static int
notify_read_addr(pid_t pid, uint64_t addr, void *sa, int len)
{
	struct iovec	 local, remote;

	if (len == 0)
		return 0;
	local.iov_base = sa;
	local.iov_len = (size_t)len;
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = (size_t)len;
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
		return EFAULT;
	return 0;
}

/*
 * Makes the call's connect on s, the command's socket, as judged from
 * the len bytes at sa.  The socket is w's until it returns, for
 * notify_wake to shut down.  Returns the errno for the command.
 */
static int
notify_connect(struct notify_worker *w, int s, const void *sa, int len,
    struct notify_event *ne)
{
	struct notify		*n = w->nw_n;
	struct notify_addr	 na;
	socklen_t		 olen = sizeof(int);
	int			 domain, type, err;

	if (getsockopt(s, SOL_SOCKET, SO_DOMAIN, &domain, &olen) == -1 ||
	    getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &olen) == -1)
		return errno;
	if ((err = notify_addr_judge(sa, len, domain, type, &na)) != 0)
		return err;
	pthread_mutex_lock(&n->n_lock);
	if (!n->n_stopping)
		w->nw_sock = s;
	pthread_mutex_unlock(&n->n_lock);
	if (w->nw_sock == -1)
		return EINTR;		/* the run ends */
	if (na.na_kind == NOTIFY_ADDR_PATH ||
	    na.na_kind == NOTIFY_ADDR_ABSTRACT) {
		ne->ne_unix = true;
		err = notify_unix(n, (pid_t)w->nw_req.pid, s, sa, len, &na,
		    ne);
	} else {
		notify_host_port(n, type, sa, len, ne);
		if (connect(s, sa, (socklen_t)len) == -1)
			err = errno;
	}
	pthread_mutex_lock(&n->n_lock);
	w->nw_sock = -1;
	pthread_mutex_unlock(&n->n_lock);
	return err;
}

/*
 * Answers w's call: the command's socket taken, its address read once,
 * the decision made.  Returns the errno for the command, in the order
 * the kernel finds them: the descriptor, the length, the address.
 */
int
notify_judge(struct notify_worker *w, struct notify_event *ne)
{
	const struct seccomp_notif	*req = &w->nw_req;
	struct sockaddr_storage		 sa;
	int				 lfd = w->nw_lfd;
	int				 len = (int)req->data.args[2];
	int				 pidfd, s = -1, err;

	_Static_assert(sizeof(sa) == NOTIFY_ADDR_MAX, "the kernel's bound");
	ne->ne_pid = (int)req->pid;
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
	if (!notify_addr_len_ok(len)) {
		err = EINVAL;
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	if ((err = notify_read_addr((pid_t)req->pid, req->data.args[1], &sa,
	    len)) != 0)
		goto out;
	if (!notify_valid(lfd, req->id))
		err = ESRCH;
	else
		err = notify_connect(w, s, &sa, len, ne);
out:
	if (s != -1)
		close(s);
	if (pidfd != -1)
		close(pidfd);
	return err;
}

/* Answers the call id with err (0: success). */
void
notify_judge_answer(int lfd, uint64_t id, int err)
{
	struct seccomp_notif_resp	 resp;

	memset(&resp, 0, sizeof(resp));
	resp.id = id;
	resp.error = err != 0 ? -err : 0;
	/* ENOENT: the caller went (a fatal signal); nothing to do. */
	ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/*
 * A rename (gitwrite.c), answered here and at once: nothing in it waits
 * on another process.  All but one onto a protected git config go on as
 * the command made them.
 */
void
notify_judge_rename(struct notify *n, int lfd, const struct seccomp_notif *req)
{
	struct seccomp_notif_resp	 resp;
	int				 rc = GITWRITE_CONTINUE;

	if (n->n_gitwrite != NULL)
		rc = gitwrite_rename(n->n_gitwrite, lfd, req);
	if (rc != GITWRITE_CONTINUE) {
		notify_judge_answer(lfd, req->id, rc);
		return;
	}
	memset(&resp, 0, sizeof(resp));
	resp.id = req->id;
	resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}
