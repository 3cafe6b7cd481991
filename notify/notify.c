/*
 * notify.c: the connect(2) calls of a sandbox, made by cordon run on its
 * behalf, so that a Unix socket reaches the sandbox's own sockets and
 * the host sockets listed, and no other.
 *
 * The command's seccomp filter sends every connect(2) to a listener
 * (SECCOMP_RET_USER_NOTIF); the command hands the listener's descriptor
 * to cordon run before exec.  A thread of cordon run, not its event loop
 * (a connect may block, and the loop is the proxy's), receives each call
 * and hands it to a worker thread of its own, so that a connect that
 * waits (a listener's full backlog, a SYN nobody answers) holds only its
 * own caller.  At most NOTIFY_WORKERS calls are in hand at once; past
 * that, the receiving thread takes no more until one ends, and the
 * kernel keeps the next calls waiting, in order: none is refused for
 * it.  Each worker:
 *
 *   - reads the address once, from the caller's memory, and takes the
 *     caller's socket itself (pidfd_getfd: the same open file), checking
 *     after each step that the call is still waiting (NOTIF_ID_VALID), so
 *     that a pid reused in between is never read;
 *   - judges the address from those bytes alone (notify_addr.c): a
 *     malformed one gets the kernel's own answer;
 *   - on a Unix socket, connects the socket to a listed one (a route of
 *     unixroute.c) if the path is exactly a listed inside path; else to
 *     the sandbox's own socket at that path, looked up as the caller
 *     sees it and judged by the network namespace it is bound in
 *     (unixown.c), through the descriptor judged; an abstract name when
 *     the socket was made in the sandbox's namespace; and answers
 *     EACCES to a host socket, the kernel's errno to no socket;
 *   - on an Internet or netlink socket, connects the socket to the
 *     address as given; the socket stays in the sandbox's network
 *     namespace, so routes and the capture's rules are the sandbox's;
 *   - answers the call itself (SECCOMP_IOCTL_NOTIF_SEND).
 *
 * The command's socket is never made non-blocking: it is the command's
 * open file, and the flag would be its too.  A worker still in connect
 * when the run ends (the sandbox's processes dead, the listener of a
 * host socket still not accepting) is woken: its socket is shut down
 * (a TCP connect in SYN_SENT ends) and it gets NOTIFY_SIG, whose handler
 * does nothing but end the wait with EINTR (a Unix connect waiting for
 * room in a backlog), until it has ended.
 *
 * The thread starts at the sandbox's first call (notify_poke): until
 * then the loop takes the listeners in and watches them through one
 * epoll descriptor, and a command that makes no call (true, ls, a
 * compiler) costs no thread.  A call waits in the kernel meanwhile.
 *
 * It never answers "continue": the kernel would then read the address
 * and the descriptor again, after the check, and another thread of the
 * command could have changed either (a Unix socket put in place of the
 * Internet one checked, a path rewritten) in between.
 *
 * What it decided goes to the event loop as fixed-size records on a
 * pipe (one write each, under PIPE_BUF, so writers do not interleave):
 * the loop logs and counts them.  Privileges: cordon run's own, outside
 * the sandbox; it owns the sandbox's user namespace, so it may take
 * descriptors from, and read the memory of, the command even when the
 * command is not dumpable.
 */
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/fdpass.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "notify/notify.h"
#include "notify/notify_parts.h"

#define NOTIFY_STACK	(256 * 1024)	/* a worker's: small frames only */
#define NOTIFY_SIG	SIGURG		/* ends a worker's wait in connect; */
					/* ignored by default, never */
					/* passed on to the command */
#define NOTIFY_WAKE_MS	50		/* how often, at the end */


/* Watches fd for the loop until the thread starts.  Returns 0, or -1. */
static int
notify_idle_add(struct notify *n, int fd)
{
	struct epoll_event	 ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = fd;
	return epoll_ctl(n->n_idle, EPOLL_CTL_ADD, fd, &ev);
}

/*
 * Reads one message the sandbox sent: its PID 1's UNIX_DIAG socket
 * ("D", none with the host's network), or a command's listener ("L"),
 * added to the set (each command of a session sends its own).  Returns
 * 1 when one was read, 0 when none waits, or -1 at the end (no more
 * will come).
 */
static int
notify_listener(struct notify *n)
{
	ssize_t	 got;
	char	 b;
	int	 fd;

	/* At the end errno is not set: an old EAGAIN would read as none. */
	if ((got = fdpass_recv(n->n_sock, &fd, &b, 1, MSG_DONTWAIT)) == 0)
		return -1;
	if (got == -1)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (fd == -1)
		return 1;
	if (b == 'L') {
		pthread_mutex_lock(&n->n_lock);
		n->n_lfds = xreallocarray(n->n_lfds, n->n_nlfds + 1,
		    sizeof(*n->n_lfds));
		n->n_lfds[n->n_nlfds].nl_fd = fd;
		n->n_lfds[n->n_nlfds++].nl_hup = false;
		pthread_mutex_unlock(&n->n_lock);
	} else if (b == 'D' && n->n_diag == -1)
		n->n_diag = fd;
	else
		close(fd);
	return 1;
}

/* Whether a worker still answers on the listener lfd.  Holds n_lock. */
static bool
notify_held(const struct notify *n, int lfd)
{
	const struct notify_worker	*w;
	size_t				 i;

	for (i = 0; i < NOTIFY_WORKERS; i++) {
		w = &n->n_workers[i];
		if (w->nw_busy && !w->nw_done && w->nw_lfd == lfd)
			return true;
	}
	return false;
}

/*
 * Closes the listeners that hung up (their command and all it started
 * are gone) and that no worker still answers on.  Holds n_lock.
 */
static void
notify_prune(struct notify *n)
{
	size_t	 i = 0;

	while (i < n->n_nlfds) {
		if (!n->n_lfds[i].nl_hup || notify_held(n,
		    n->n_lfds[i].nl_fd)) {
			i++;
			continue;
		}
		close(n->n_lfds[i].nl_fd);
		n->n_lfds[i] = n->n_lfds[--n->n_nlfds];
	}
}

/*
 * Passes ne to the loop.  A worker never waits for the loop: with the
 * pipe full, the record is counted instead (notify_dropped).
 */
void
notify_tell(struct notify *n, const struct notify_event *ne)
{
	ssize_t	 w;

	while ((w = write(n->n_events[1], ne, sizeof(*ne))) == -1 &&
	    errno == EINTR)
		;
	if (w != (ssize_t)sizeof(*ne)) {
		pthread_mutex_lock(&n->n_lock);
		n->n_dropped++;
		pthread_mutex_unlock(&n->n_lock);
	}
}

/* NOTIFY_SIG: nothing; its arrival ends a worker's wait in connect. */
static void
notify_wake_cb(int sig)
{
	(void)sig;
}

/*
 * A worker: one call, answered, told to the loop.  All signals but
 * NOTIFY_SIG stay blocked (they are the loop's, through its signalfd).
 */
static void *
notify_work(void *arg)
{
	struct notify_worker	*w = arg;
	struct notify		*n = w->nw_n;
	struct notify_event	 ne;
	sigset_t		 wake;
	int			 err;

	sigemptyset(&wake);
	sigaddset(&wake, NOTIFY_SIG);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	memset(&ne, 0, sizeof(ne));
	err = notify_judge(w, &ne);
	notify_judge_answer(w->nw_lfd, w->nw_req.id, err);
	if ((ne.ne_unix && ne.ne_why != NOTIFY_OWN &&
	    ne.ne_why != NOTIFY_NOTHING) || ne.ne_why == NOTIFY_HOST_PORT)
		notify_tell(n, &ne);
	pthread_mutex_lock(&n->n_lock);
	w->nw_done = true;
	n->n_busy--;
	pthread_cond_broadcast(&n->n_cond);
	pthread_mutex_unlock(&n->n_lock);
	return NULL;
}

/* Joins the workers that ended, freeing their places.  Holds n_lock. */
static void
notify_reap(struct notify *n)
{
	struct notify_worker	*w;
	size_t			 i;

	for (i = 0; i < NOTIFY_WORKERS; i++) {
		w = &n->n_workers[i];
		if (w->nw_busy && w->nw_done) {
			pthread_join(w->nw_thread, NULL);
			w->nw_busy = w->nw_done = false;
		}
	}
}

/*
 * Waits for a free place (NOTIFY_WORKERS calls in hand: the next wait in
 * the kernel meanwhile), and joins the workers that ended.  Returns
 * false when the run ends instead.
 */
static bool
notify_room(struct notify *n)
{
	bool	 ok;

	pthread_mutex_lock(&n->n_lock);
	while (n->n_busy == NOTIFY_WORKERS && !n->n_stopping)
		pthread_cond_wait(&n->n_cond, &n->n_lock);
	notify_reap(n);
	ok = !n->n_stopping;
	pthread_mutex_unlock(&n->n_lock);
	return ok;
}

/*
 * Hands req to a worker in a free place (notify_room made one).  A
 * worker that cannot start gets the call answered EAGAIN, the kernel's
 * word for resources it lacks.
 */
static void
notify_dispatch(struct notify *n, int lfd, const struct seccomp_notif *req)
{
	struct notify_worker	*w = NULL;
	pthread_attr_t		 attr;
	size_t			 i;
	int			 rc;

	pthread_mutex_lock(&n->n_lock);
	for (i = 0; i < NOTIFY_WORKERS && w == NULL; i++)
		if (!n->n_workers[i].nw_busy)
			w = &n->n_workers[i];
	w->nw_n = n;
	w->nw_req = *req;
	w->nw_busy = true;
	w->nw_done = false;
	w->nw_sock = -1;
	w->nw_lfd = lfd;
	n->n_busy++;
	pthread_mutex_unlock(&n->n_lock);

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, NOTIFY_STACK);
	rc = pthread_create(&w->nw_thread, &attr, notify_work, w);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		log_warnx("run: a connect's thread: %s", strerror(rc));
		pthread_mutex_lock(&n->n_lock);
		w->nw_busy = false;
		n->n_busy--;
		pthread_mutex_unlock(&n->n_lock);
		notify_judge_answer(lfd, req->id, EAGAIN);
	}
}

/*
 * The run ends: wakes every worker still at work until none is, then
 * joins them all.  A connect that waits is cut short: its socket shut
 * down, the thread sent NOTIFY_SIG, again each NOTIFY_WAKE_MS in case
 * it had not yet begun to wait.
 */
static void
notify_wake(struct notify *n)
{
	struct notify_worker	*w;
	struct timespec		 ts;
	size_t			 i;

	pthread_mutex_lock(&n->n_lock);
	n->n_stopping = true;
	while (n->n_busy > 0) {
		for (i = 0; i < NOTIFY_WORKERS; i++) {
			w = &n->n_workers[i];
			if (!w->nw_busy || w->nw_done)
				continue;
			if (w->nw_sock != -1)
				shutdown(w->nw_sock, SHUT_RDWR);
			pthread_kill(w->nw_thread, NOTIFY_SIG);
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += NOTIFY_WAKE_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&n->n_cond, &n->n_lock, &ts);
	}
	notify_reap(n);
	pthread_mutex_unlock(&n->n_lock);
}

/*
 * One call waiting on the listener lfd: a rename answered here, a
 * connect handed to a worker.
 */
static void
notify_call(struct notify *n, int lfd)
{
	struct seccomp_notif	 req;

	memset(&req, 0, sizeof(req));	/* the kernel insists */
	if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) == -1)
		return;		/* EINTR, or ENOENT: the caller went */
	if (req.data.nr == SYS_rename || req.data.nr == SYS_renameat ||
	    req.data.nr == SYS_renameat2)
		notify_judge_rename(n, lfd, &req);
	else
		notify_dispatch(n, lfd, &req);
}

/*
 * Fills pfd (room for n_nlfds + 2) with what the thread waits on: the
 * loop's stop, the sandbox's socket while it is open, and the live
 * listeners.  Returns how many.
 */
static nfds_t
notify_pollset(struct notify *n, struct pollfd *pfd)
{
	nfds_t	 k = 0;
	size_t	 i;

	pfd[k].fd = n->n_stop[0];
	pfd[k++].events = POLLIN;
	if (n->n_sock_open) {
		pfd[k].fd = n->n_sock;
		pfd[k++].events = POLLIN;
	}
	pthread_mutex_lock(&n->n_lock);
	for (i = 0; i < n->n_nlfds; i++)
		if (!n->n_lfds[i].nl_hup) {
			pfd[k].fd = n->n_lfds[i].nl_fd;
			pfd[k++].events = POLLIN;
		}
	pthread_mutex_unlock(&n->n_lock);
	return k;
}

/* Marks the listener fd as hung up, and closes what may be. */
static void
notify_hup(struct notify *n, int fd)
{
	size_t	 i;

	pthread_mutex_lock(&n->n_lock);
	for (i = 0; i < n->n_nlfds; i++)
		if (n->n_lfds[i].nl_fd == fd)
			n->n_lfds[i].nl_hup = true;
	pthread_mutex_unlock(&n->n_lock);
}

/* Whether a listener is still live, or more may come. */
static bool
notify_live(struct notify *n)
{
	bool	 live;
	size_t	 i;

	pthread_mutex_lock(&n->n_lock);
	notify_prune(n);
	live = n->n_sock_open;
	for (i = 0; i < n->n_nlfds && !live; i++)
		live = !n->n_lfds[i].nl_hup;
	pthread_mutex_unlock(&n->n_lock);
	return live;
}

/*
 * The receiving thread: the listeners from the sandbox (one per
 * command: a session sends many), then each call, to a worker, until
 * the sandbox is gone or the loop asks it to end; then its workers end.
 * Blocks all signals (they are the loop's, through its signalfd).
 */
static void *
notify_main(void *arg)
{
	struct notify		*n = arg;
	struct pollfd		*pfd = NULL;
	nfds_t			 k, np;

	while (notify_room(n) && notify_live(n)) {
		pfd = xreallocarray(pfd, n->n_nlfds + 2, sizeof(*pfd));
		np = notify_pollset(n, pfd);
		if (poll(pfd, np, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents != 0)
			break;
		for (k = 1; k < np; k++) {
			if (pfd[k].revents == 0)
				continue;
			if (pfd[k].fd == n->n_sock) {
				if ((pfd[k].revents & POLLIN) == 0 ||
				    notify_listener(n) == -1)
					n->n_sock_open = false;
			} else if ((pfd[k].revents & POLLIN) != 0)
				notify_call(n, pfd[k].fd);
			else
				notify_hup(n, pfd[k].fd);
		}
	}
	free(pfd);
	notify_wake(n);
	pthread_mutex_lock(&n->n_lock);
	while (n->n_nlfds > 0)
		close(n->n_lfds[--n->n_nlfds].nl_fd);
	pthread_mutex_unlock(&n->n_lock);
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
 * Makes the notify, without its thread (notify_poke starts it).  Takes
 * sock (cordon run's end of the pair whose other end the sandbox has);
 * borrows routes until notify_stop.  Returns the notify, or NULL with
 * *cause set (sock closed).
 */
struct notify *
notify_new(const struct unix_routes *routes, struct gitwrite *gw, int sock,
    char **cause)
{
	struct notify		*n;
	struct sigaction	 sa;

	n = xcalloc(1, sizeof(*n));
	n->n_routes = routes;
	n->n_gitwrite = gw;
	n->n_sock = sock;
	n->n_sock_open = true;
	n->n_diag = -1;
	/* Bound there: a host socket, or one of --net host's sandbox. */
	n->n_hostdiag = sandbox_unixdiag();
	n->n_stop[0] = n->n_stop[1] = n->n_events[0] = n->n_events[1] = -1;
	n->n_idle = -1;
	pthread_mutex_init(&n->n_lock, NULL);
	pthread_cond_init(&n->n_cond, NULL);
	pthread_mutex_init(&n->n_diag_lock, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = notify_wake_cb;
	sigfillset(&sa.sa_mask);
	/* No SA_RESTART: the wait in connect must end. */
	if (sigaction(NOTIFY_SIG, &sa, &n->n_oldsig) == -1 ||
	    pipe2(n->n_stop, O_CLOEXEC) == -1 ||
	    pipe2(n->n_events, O_CLOEXEC | O_NONBLOCK) == -1 ||
	    (n->n_idle = epoll_create1(EPOLL_CLOEXEC)) == -1 ||
	    notify_idle_add(n, sock) == -1) {
		xasprintf(cause, "pipe, epoll, or %s's handler: %s",
		    strsignal(NOTIFY_SIG), strerror(errno));
		notify_free(n);
		return NULL;
	}
	return n;
}

/* The descriptor the loop watches until the thread starts. */
int
notify_idle_fd(const struct notify *n)
{
	return n->n_idle;
}

/*
 * Starts the thread, which takes over n from the loop.  Returns 1, or -1
 * with *cause set.
 */
static int
notify_thread(struct notify *n, char **cause)
{
	sigset_t	 all, old;
	int		 rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&n->n_thread, NULL, notify_main, n);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		xasprintf(cause, "pthread_create: %s", strerror(rc));
		return -1;
	}
	n->n_started = true;
	return 1;
}

/*
 * In the loop: takes in what waits on the pair, each new listener
 * watched with the rest.  Returns 0, or -1 when one cannot be watched.
 */
static int
notify_take(struct notify *n)
{
	size_t	 had = n->n_nlfds;
	int	 got;

	while ((got = notify_listener(n)) == 1) {
		if (n->n_nlfds > had && notify_idle_add(n,
		    n->n_lfds[had].nl_fd) == -1)
			return -1;
		had = n->n_nlfds;
	}
	if (got == -1) {
		n->n_sock_open = false;
		epoll_ctl(n->n_idle, EPOLL_CTL_DEL, n->n_sock, NULL);
	}
	return 0;
}

/*
 * In the loop, when notify_idle_fd is readable: takes in what the
 * sandbox sent, forgets the listeners that hung up, and starts the
 * thread at the first call waiting (or for a listener it cannot
 * watch).  Returns 1 once the thread runs (the loop stops watching), 0
 * while none is needed, or -1 with *cause set: no thread, and a call
 * would wait forever.
 */
int
notify_poke(struct notify *n, char **cause)
{
	struct epoll_event	 evs[16];
	int			 i, nev;

	if (n->n_started)
		return 1;
	nev = epoll_wait(n->n_idle, evs, (int)nitems(evs), 0);
	for (i = 0; i < nev; i++) {
		if (evs[i].data.fd == n->n_sock) {
			if (notify_take(n) == -1)
				return notify_thread(n, cause);
		} else if ((evs[i].events & EPOLLIN) != 0)
			return notify_thread(n, cause);
		else {
			notify_hup(n, evs[i].data.fd);
			epoll_ctl(n->n_idle, EPOLL_CTL_DEL, evs[i].data.fd,
			    NULL);
		}
	}
	notify_prune(n);
	return 0;
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
 * Ends the thread and its workers; a connect still waiting is cut short
 * (notify_wake): the sandbox's processes are gone or going by now.  The
 * records they sent stay to be read (notify_read), then notify_free.
 */
void
notify_stop(struct notify *n)
{
	if (n == NULL || !n->n_started)
		return;
	pthread_mutex_lock(&n->n_lock);
	n->n_stopping = true;
	pthread_cond_broadcast(&n->n_cond);
	pthread_mutex_unlock(&n->n_lock);
	if (write(n->n_stop[1], "x", 1) == -1)
		log_warn("run: telling the connect thread to end");
	/* The sandbox may never have sent the listener: wake recvmsg. */
	shutdown(n->n_sock, SHUT_RDWR);
	pthread_join(n->n_thread, NULL);
	n->n_started = false;
}

/* Records the workers could not pass on; read after notify_stop. */
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
	if (n->n_diag != -1)
		close(n->n_diag);
	if (n->n_hostdiag != -1)
		close(n->n_hostdiag);
	if (n->n_idle != -1)
		close(n->n_idle);
	while (n->n_nlfds > 0)		/* never started: still ours */
		close(n->n_lfds[--n->n_nlfds].nl_fd);
	sigaction(NOTIFY_SIG, &n->n_oldsig, NULL);
	free(n->n_lfds);
	pthread_cond_destroy(&n->n_cond);
	pthread_mutex_destroy(&n->n_lock);
	pthread_mutex_destroy(&n->n_diag_lock);
	free(n);
}
