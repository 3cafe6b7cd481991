/*
 * relay.c: a byte relay between two sockets, both ways.
 *
 * Each direction moves bytes from its source to its destination through a
 * pipe with splice(2), so they never enter user space; where splice is
 * refused (EINVAL: a socket type without splice support) that direction
 * falls back to read and send through a small buffer.  A direction holds
 * a pipe only while bytes are in it: an empty one goes back to a small
 * pool of the process, so an idle relay costs its two sockets and no
 * more (10,000 idle tunnels would otherwise hold 40,000 pipe ends).  The
 * pool is emptied when the last relay ends, so a process with no relay
 * is back at its baseline of descriptors.  At most one pipe
 * (or buffer) of data waits in each direction: when the destination is
 * slow the source is no longer read, and the kernel's socket buffers push
 * back on the sender.  End of file in one direction becomes shutdown
 * (SHUT_WR) of the other socket once everything before it has been
 * written, and the other direction keeps flowing until it ends too.  A
 * reset or an error on either side resets the other and ends the relay.
 * A direction can be watched (relay_watch): its bytes then go through
 * the buffer, where a watcher sees them, until it has seen enough (an
 * SSH server's first key exchange, for cordon run's agent).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/log.h"
#include "lib/relay.h"
#include "lib/xmalloc.h"

#define RELAY_PIPE_SIZE	(256 * 1024)	/* asked for; the kernel decides */
#define RELAY_BUF_SIZE	(64 * 1024)	/* the copy fallback */
#define RELAY_POOL_MAX	32		/* empty pipes kept for reuse */

struct relay_dir {
	struct relay	*d_relay;
	int		 d_src;
	int		 d_dst;
	struct event	*d_rev;		/* d_src readable */
	struct event	*d_wev;		/* d_dst writable */
	int		 d_pipe[2];	/* -1: none held now */
	size_t		 d_pipesize;
	bool		 d_nosplice;	/* the copy fallback, for good */
	size_t		 d_inpipe;	/* bytes waiting in the pipe */
	char		*d_buf;		/* pending or fallback bytes */
	size_t		 d_cap;		/* of d_buf */
	size_t		 d_off;
	size_t		 d_len;
	bool		 d_eof;		/* the source ended */
	bool		 d_shut;	/* and the destination was told */
	uint64_t	 d_bytes;
	relay_watch_cb	 d_watch;	/* NULL: not watched (any more) */
	void		*d_watch_arg;
};

struct relay {
	int		 r_fd[2];
	struct relay_dir r_dir[2];
	struct event	*r_idle;
	struct timeval	 r_idle_tv;
	bool		 r_has_idle;
	bool		 r_done;
	relay_done_cb	 r_cb;
	void		*r_arg;
};

/* Empty pipes, shared by every relay of the process (one thread). */
static struct {
	int		 rp_fd[2];
	size_t		 rp_size;
} relay_pool[RELAY_POOL_MAX];
static size_t		 relay_npool;
static size_t		 relay_nlive;	/* relays not yet freed */

static void	relay_read_cb(int, short, void *);
static void	relay_write_cb(int, short, void *);
static void	relay_idle_cb(int, short, void *);

/*
 * Takes the two connected, non-blocking sockets a and b; cb is called
 * with arg when the relay ends.  Nothing moves before relay_start().
 */
struct relay *
relay_new(struct event_base *base, int a, int b, relay_done_cb cb, void *arg)
{
	struct relay	*r;
	int		 i;

	r = xcalloc(1, sizeof(*r));
	relay_nlive++;
	r->r_fd[0] = a;
	r->r_fd[1] = b;
	r->r_cb = cb;
	r->r_arg = arg;
	for (i = 0; i < 2; i++) {
		struct relay_dir	*d = &r->r_dir[i];

		d->d_relay = r;
		d->d_src = r->r_fd[i];
		d->d_dst = r->r_fd[1 - i];
		d->d_pipe[0] = d->d_pipe[1] = -1;
		d->d_rev = event_new(base, d->d_src, EV_READ | EV_PERSIST,
		    relay_read_cb, d);
		d->d_wev = event_new(base, d->d_dst, EV_WRITE | EV_PERSIST,
		    relay_write_cb, d);
		if (d->d_rev == NULL || d->d_wev == NULL)
			fatalx("relay: event_new failed");
	}
	if ((r->r_idle = evtimer_new(base, relay_idle_cb, r)) == NULL)
		fatalx("relay: evtimer_new failed");
	return r;
}

/*
 * Queues len bytes to send in direction dir before anything relayed (what
 * a proxy read past a request head, say).  Before relay_start() only.
 */
void
relay_pending(struct relay *r, int dir, const void *data, size_t len)
{
	struct relay_dir	*d = &r->r_dir[dir];

	if (len == 0)
		return;
	d->d_buf = xreallocarray(d->d_buf, 1, d->d_len + len);
	memcpy(d->d_buf + d->d_len, data, len);
	d->d_len += len;
	d->d_cap = d->d_len;
}

/* Ends the relay when nothing moved either way for tv. */
void
relay_idle(struct relay *r, const struct timeval *tv)
{
	r->r_idle_tv = *tv;
	r->r_has_idle = true;
}

/*
 * Gives direction d a pipe, from the pool or new; without one (EMFILE,
 * say) this round copies through d_buf instead.
 */
static void
relay_pipe_get(struct relay_dir *d)
{
	int	 size;

	if (relay_npool > 0) {
		relay_npool--;
		d->d_pipe[0] = relay_pool[relay_npool].rp_fd[0];
		d->d_pipe[1] = relay_pool[relay_npool].rp_fd[1];
		d->d_pipesize = relay_pool[relay_npool].rp_size;
		return;
	}
	if (pipe2(d->d_pipe, O_CLOEXEC | O_NONBLOCK) == -1) {
		d->d_pipe[0] = d->d_pipe[1] = -1;
		return;
	}
	/* A larger pipe means fewer wake-ups; the kernel may say no. */
	(void)fcntl(d->d_pipe[1], F_SETPIPE_SZ, RELAY_PIPE_SIZE);
	if ((size = fcntl(d->d_pipe[1], F_GETPIPE_SZ)) <= 0)
		size = 65536;
	d->d_pipesize = (size_t)size;
}

/* Gives back d's pipe: to the pool when empty, else closed. */
static void
relay_pipe_put(struct relay_dir *d)
{
	if (d->d_pipe[0] == -1)
		return;
	if (d->d_inpipe == 0 && relay_npool < RELAY_POOL_MAX) {
		relay_pool[relay_npool].rp_fd[0] = d->d_pipe[0];
		relay_pool[relay_npool].rp_fd[1] = d->d_pipe[1];
		relay_pool[relay_npool].rp_size = d->d_pipesize;
		relay_npool++;
	} else {
		close(d->d_pipe[0]);
		close(d->d_pipe[1]);
	}
	d->d_pipe[0] = d->d_pipe[1] = -1;
	d->d_inpipe = 0;
}

/* Starts moving bytes.  Returns 0, or -1 if an event could not be added. */
int
relay_start(struct relay *r)
{
	int	 i;

	for (i = 0; i < 2; i++) {
		struct relay_dir	*d = &r->r_dir[i];

		/* Pending bytes go first: wait for the destination. */
		if (event_add(d->d_len != 0 ? d->d_wev : d->d_rev, NULL) == -1)
			return -1;
	}
	if (r->r_has_idle && evtimer_add(r->r_idle, &r->r_idle_tv) == -1)
		return -1;
	return 0;
}

/* Frees r and closes both sockets. */
void
relay_free(struct relay *r)
{
	int	 i;

	if (r == NULL)
		return;
	for (i = 0; i < 2; i++) {
		struct relay_dir	*d = &r->r_dir[i];

		event_free(d->d_rev);
		event_free(d->d_wev);
		relay_pipe_put(d);
		free(d->d_buf);
		if (r->r_fd[i] != -1)
			close(r->r_fd[i]);
	}
	event_free(r->r_idle);
	free(r);
	if (--relay_nlive == 0) {
		while (relay_npool > 0) {
			relay_npool--;
			close(relay_pool[relay_npool].rp_fd[0]);
			close(relay_pool[relay_npool].rp_fd[1]);
		}
	}
}

uint64_t
relay_bytes(const struct relay *r, int dir)
{
	return r->r_dir[dir].d_bytes;
}

/*
 * Ends the relay: on error (why not NULL) the sockets are reset, so each
 * peer learns that its data may not have arrived, rather than reading a
 * clean end of file.  Calls the callback, which frees r.
 */
static void
relay_end(struct relay *r, const char *why)
{
	struct linger	 lg = { 1, 0 };
	int		 i;

	if (r->r_done)
		return;
	r->r_done = true;
	for (i = 0; i < 2; i++) {
		event_del(r->r_dir[i].d_rev);
		event_del(r->r_dir[i].d_wev);
		if (why != NULL)
			(void)setsockopt(r->r_fd[i], SOL_SOCKET, SO_LINGER,
			    &lg, sizeof(lg));
	}
	event_del(r->r_idle);
	r->r_cb(r, why, r->r_arg);
}

/* Ends the relay if both directions have ended. */
static void
relay_check_done(struct relay *r)
{
	if (r->r_dir[0].d_shut && r->r_dir[1].d_shut)
		relay_end(r, NULL);
}

/*
 * Writes what waits in direction d.  Returns 1 when nothing is left, 0
 * when the destination would block, -1 on error (errno set).
 */
static int
relay_flush(struct relay_dir *d)
{
	ssize_t	 n;

	while (d->d_off < d->d_len) {
		n = send(d->d_dst, d->d_buf + d->d_off, d->d_len - d->d_off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return errno == EAGAIN ? 0 : -1;
		d->d_off += (size_t)n;
	}
	d->d_off = d->d_len = 0;
	while (d->d_inpipe > 0) {
		n = splice(d->d_pipe[0], NULL, d->d_dst, NULL, d->d_inpipe,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return errno == EAGAIN ? 0 : -1;
		if (n == 0) {
			errno = EPIPE;
			return -1;
		}
		d->d_inpipe -= (size_t)n;
	}
	relay_pipe_put(d);	/* empty: an idle relay holds no pipe */
	return 1;
}

/*
 * Shows the bytes of direction dir to cb, with arg, until it has seen
 * enough: they go through the copy buffer, not splice(2), until then.
 * Before relay_start() only; what relay_pending() queued is not shown.
 */
void
relay_watch(struct relay *r, int dir, relay_watch_cb cb, void *arg)
{
	r->r_dir[dir].d_watch = cb;
	r->r_dir[dir].d_watch_arg = arg;
}

/*
 * Reads from the source of d into its pipe or buffer.  Returns the bytes
 * read, 0 at end of file, -1 on error (errno set; EAGAIN: nothing yet).
 */
static ssize_t
relay_fill(struct relay_dir *d)
{
	ssize_t	 n;

	if (d->d_pipe[0] == -1 && !d->d_nosplice && d->d_watch == NULL)
		relay_pipe_get(d);
	if (d->d_pipe[0] != -1) {
		n = splice(d->d_src, NULL, d->d_pipe[1], NULL,
		    d->d_pipesize - d->d_inpipe,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0)
			d->d_inpipe += (size_t)n;
		if (n != -1 || errno != EINVAL) {
			int	 saved = errno;

			if (n <= 0)	/* a wake-up for nothing keeps none */
				relay_pipe_put(d);
			errno = saved;
			return n;
		}
		/* This socket cannot splice: copy through a buffer. */
		relay_pipe_put(d);
		d->d_nosplice = true;
	}
	if (d->d_cap < RELAY_BUF_SIZE) {
		free(d->d_buf);
		d->d_buf = xmalloc(RELAY_BUF_SIZE);
		d->d_cap = RELAY_BUF_SIZE;
	}
	n = recv(d->d_src, d->d_buf, d->d_cap, MSG_DONTWAIT);
	if (n > 0) {
		d->d_off = 0;
		d->d_len = (size_t)n;
		if (d->d_watch != NULL && !d->d_watch(d->d_buf, (size_t)n,
		    d->d_watch_arg))
			d->d_watch = NULL;
	}
	return n;
}

/* Tells the destination of d that no more will come, once all is sent. */
static void
relay_dir_eof(struct relay_dir *d)
{
	event_del(d->d_rev);
	event_del(d->d_wev);
	/* ENOTCONN: the peer is already gone; the other side will tell. */
	(void)shutdown(d->d_dst, SHUT_WR);
	d->d_shut = true;
	relay_check_done(d->d_relay);
}

static void
relay_activity(struct relay *r)
{
	if (r->r_has_idle)
		evtimer_add(r->r_idle, &r->r_idle_tv);
}

static void
relay_read_cb(int fd, short what, void *arg)
{
	struct relay_dir	*d = arg;
	struct relay		*r = d->d_relay;
	ssize_t			 n;
	int			 rc;

	(void)fd;
	(void)what;
	n = relay_fill(d);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == -1) {
		relay_end(r, strerror(errno));
		return;
	}
	relay_activity(r);
	if (n == 0)
		d->d_eof = true;
	else
		d->d_bytes += (uint64_t)n;
	if ((rc = relay_flush(d)) == -1) {
		relay_end(r, strerror(errno));
		return;
	}
	if (rc == 0) {
		/* The destination is full: stop reading until it drains. */
		event_del(d->d_rev);
		event_add(d->d_wev, NULL);
		return;
	}
	if (d->d_eof)
		relay_dir_eof(d);
}

static void
relay_write_cb(int fd, short what, void *arg)
{
	struct relay_dir	*d = arg;
	struct relay		*r = d->d_relay;
	int			 rc;

	(void)fd;
	(void)what;
	if ((rc = relay_flush(d)) == -1) {
		relay_end(r, strerror(errno));
		return;
	}
	if (rc == 0)
		return;
	relay_activity(r);
	event_del(d->d_wev);
	if (d->d_eof)
		relay_dir_eof(d);
	else
		event_add(d->d_rev, NULL);
}

static void
relay_idle_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	relay_end(arg, "idle timeout");
}
