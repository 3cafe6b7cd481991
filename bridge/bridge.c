/*
 * bridge.c: accept on one endpoint, connect to the other, relay.
 *
 * One event loop, no process or thread per connection: each accepted
 * client gets one non-blocking connection to the target, and once that
 * connection is up, a relay (lib/relay.c) that splices both ways.  When
 * the target is down the client is closed at once and the bridge says so
 * at most once every BRIDGE_WARN_SECS, with a count of what it did not
 * repeat, so a client that retries in a loop cannot flood the log.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "bridge.h"
#include "endpoint.h"
#include "log.h"
#include "relay.h"
#include "xmalloc.h"

#define BRIDGE_WARN_SECS	10

struct bconn {
	TAILQ_ENTRY(bconn)	 bc_entry;
	struct bridge		*bc_bridge;
	int			 bc_client;	/* until the relay takes it */
	int			 bc_upstream;
	struct event		*bc_connect;	/* waiting for bc_upstream */
	struct relay		*bc_relay;
	struct timeval		 bc_since;	/* accepted at */
	int			 bc_retry_ms;	/* next wait for a full backlog */
};

TAILQ_HEAD(bconns, bconn);

struct bridge {
	struct event_base	*b_base;
	struct endpoint		*b_listen;	/* borrowed */
	struct endpoint		*b_target;	/* borrowed */
	struct evconnlistener	*b_listener;
	struct event		*b_resume;	/* accept again after EMFILE */
	struct event		*b_drain;	/* the drain deadline */
	struct bconns		 b_conns;
	size_t			 b_nconns;
	size_t			 b_max;
	char			*b_header;	/* PROXY v2 header, or NULL */
	size_t			 b_headerlen;
	time_t			 b_warned;	/* last rate-limited warning */
	unsigned long		 b_unsaid;	/* warnings not repeated since */
	void			(*b_drained)(void *);
	void			*b_drained_arg;
};

static void	bridge_accept_cb(struct evconnlistener *, evutil_socket_t,
		    struct sockaddr *, int, void *);
static void	bridge_accept_error_cb(struct evconnlistener *, void *);

/*
 * Says why a connection was dropped, at most once every BRIDGE_WARN_SECS;
 * the ones not said are counted and reported with the next.
 */
static void
bridge_warn(struct bridge *b, const char *what, const char *why)
{
	time_t	 now = time(NULL);

	if (b->b_warned != 0 && now - b->b_warned < BRIDGE_WARN_SECS) {
		b->b_unsaid++;
		return;
	}
	if (b->b_unsaid != 0)
		log_warnx("bridge: %s: %s (and %lu more dropped in the last "
		    "%ld s)", what, why, b->b_unsaid, (long)(now - b->b_warned));
	else
		log_warnx("bridge: %s: %s", what, why);
	b->b_warned = now;
	b->b_unsaid = 0;
}

/*
 * Listens on lep and relays each connection to tep (both borrowed, kept
 * for the bridge's life), with at most max at once.  Returns the bridge,
 * or NULL with *cause set.
 */
struct bridge *
bridge_new(struct event_base *base, struct endpoint *lep,
    struct endpoint *tep, size_t max, char **cause)
{
	struct bridge	*b;
	int		 fd;

	if ((fd = endpoint_listen(lep, SOMAXCONN, cause)) == -1)
		return NULL;
	b = xcalloc(1, sizeof(*b));
	b->b_base = base;
	b->b_listen = lep;
	b->b_target = tep;
	b->b_max = max;
	TAILQ_INIT(&b->b_conns);
	/* Backlog 0: it listens already (-1 would listen again with 128). */
	b->b_listener = evconnlistener_new(base, bridge_accept_cb, b,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (b->b_listener == NULL) {
		xasprintf(cause, "%s: cannot watch the listener",
		    lep->ep_text);
		close(fd);
		endpoint_unlink(lep);
		free(b);
		return NULL;
	}
	evconnlistener_set_error_cb(b->b_listener, bridge_accept_error_cb);
	return b;
}

/* Closes a connection and everything it holds. */
static void
bconn_free(struct bconn *c)
{
	struct bridge	*b = c->bc_bridge;

	TAILQ_REMOVE(&b->b_conns, c, bc_entry);
	b->b_nconns--;
	if (c->bc_connect != NULL)
		event_free(c->bc_connect);
	if (c->bc_relay != NULL)
		relay_free(c->bc_relay);	/* closes both sockets */
	else {
		if (c->bc_client != -1)
			close(c->bc_client);
		if (c->bc_upstream != -1)
			close(c->bc_upstream);
	}
	free(c);
	if (b->b_drained != NULL && b->b_nconns == 0)
		b->b_drained(b->b_drained_arg);
}

static void
bridge_relay_done_cb(struct relay *r, const char *why, void *arg)
{
	struct bconn	*c = arg;

	(void)r;
	if (why != NULL)
		log_debug("%s: relay ended: %s", __func__, why);
	bconn_free(c);
}

/* The connection to the target is up (or failed): start relaying. */
static void
bridge_connected_cb(int fd, short what, void *arg)
{
	struct bconn	*c = arg;
	struct bridge	*b = c->bc_bridge;
	socklen_t	 len = sizeof(int);
	int		 error = 0;

	if (what & EV_TIMEOUT)
		error = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == -1)
		error = errno;
	if (error != 0) {
		bridge_warn(b, b->b_target->ep_text, strerror(error));
		bconn_free(c);
		return;
	}
	event_free(c->bc_connect);
	c->bc_connect = NULL;
	c->bc_relay = relay_new(b->b_base, c->bc_client, c->bc_upstream,
	    bridge_relay_done_cb, c);
	c->bc_client = c->bc_upstream = -1;	/* the relay has them */
	if (b->b_header != NULL)
		relay_pending(c->bc_relay, RELAY_UP, b->b_header,
		    b->b_headerlen);
	if (relay_start(c->bc_relay) == -1) {
		log_warnx("bridge: cannot watch a connection");
		bconn_free(c);
	}
}

static void	bridge_try_connect(struct bconn *);

/* A Unix listener's backlog was full: try again after a short wait. */
static void
bridge_retry_cb(int fd, short what, void *arg)
{
	struct bconn	*c = arg;

	(void)fd;
	(void)what;
	event_free(c->bc_connect);
	c->bc_connect = NULL;
	bridge_try_connect(c);
}

/*
 * Starts the connection to the target for c.  A Unix target whose
 * backlog is full answers EAGAIN at once, without a connection in
 * progress: wait a little and try again, until BRIDGE_CONNECT_SECS.
 */
static void
bridge_try_connect(struct bconn *c)
{
	struct bridge	*b = c->bc_bridge;
	struct timeval	 tv = { BRIDGE_CONNECT_SECS, 0 }, now;
	int		 error;

	if ((c->bc_upstream = endpoint_connect(b->b_target, &error)) == -1) {
		gettimeofday(&now, NULL);
		if (error == EAGAIN &&
		    now.tv_sec - c->bc_since.tv_sec < BRIDGE_CONNECT_SECS) {
			tv.tv_sec = 0;
			tv.tv_usec = c->bc_retry_ms * 1000;
			if (c->bc_retry_ms < 100)
				c->bc_retry_ms *= 2;
			if ((c->bc_connect = evtimer_new(b->b_base,
			    bridge_retry_cb, c)) != NULL &&
			    evtimer_add(c->bc_connect, &tv) == 0)
				return;
		}
		bridge_warn(b, b->b_target->ep_text, strerror(error));
		bconn_free(c);
		return;
	}
	if ((c->bc_connect = event_new(b->b_base, c->bc_upstream, EV_WRITE,
	    bridge_connected_cb, c)) == NULL ||
	    event_add(c->bc_connect, &tv) == -1) {
		log_warnx("bridge: cannot watch a connection");
		bconn_free(c);
	}
}

static void
bridge_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct bridge	*b = arg;
	struct bconn	*c;

	(void)l;
	(void)sa;
	(void)salen;
	if (b->b_nconns >= b->b_max) {
		bridge_warn(b, b->b_listen->ep_text, "too many connections "
		    "(--max-conns)");
		close(fd);
		return;
	}
	endpoint_nodelay(fd);
	c = xcalloc(1, sizeof(*c));
	c->bc_bridge = b;
	c->bc_client = fd;
	c->bc_upstream = -1;
	c->bc_retry_ms = 5;
	gettimeofday(&c->bc_since, NULL);
	TAILQ_INSERT_TAIL(&b->b_conns, c, bc_entry);
	b->b_nconns++;
	bridge_try_connect(c);
}

static void
bridge_resume_cb(int fd, short what, void *arg)
{
	struct bridge	*b = arg;

	(void)fd;
	(void)what;
	evconnlistener_enable(b->b_listener);
}

/*
 * accept() failed: out of descriptors most likely.  Stop accepting for a
 * second rather than spin on a listener that stays readable.
 */
static void
bridge_accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct bridge	*b = arg;
	struct timeval	 tv = { 1, 0 };

	bridge_warn(b, b->b_listen->ep_text, strerror(errno));
	if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS &&
	    errno != ENOMEM)
		return;
	evconnlistener_disable(l);
	if (b->b_resume == NULL)
		b->b_resume = evtimer_new(b->b_base, bridge_resume_cb, b);
	if (b->b_resume != NULL)
		evtimer_add(b->b_resume, &tv);
}

/*
 * Makes every upstream connection start with a PROXY protocol v2 header
 * (LOCAL, no addresses) whose PP2_TYPE_UNIQUE_ID TLV carries id, so the
 * proxy behind can tell which sandbox a connection comes from; and, when
 * narrow is not NULL, a field of cordon's own (0xe0) with the rules the
 * run adds for its connections (a policy in JSON the proxy may only
 * narrow with).  Returns 0, or -1 with *cause set when id is not 1-128
 * letters, digits, '.', '_' or '-', or the rules are over 16 KiB.
 */
int
bridge_proxy_id(struct bridge *b, const char *id, const char *narrow,
    const char *command, char **cause)
{
	static const char	 sig[12] = "\r\n\r\n\0\r\nQUIT\n";
	size_t			 n = strlen(id), r = 0, body, k = 0, at;
	unsigned char		*h;

	if (n == 0 || n > 128 || strspn(id, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n) {
		xasprintf(cause, "a sandbox id is 1 to 128 letters, digits, "
		    "'.', '_' or '-'");
		return -1;
	}
	if (narrow != NULL && ((r = strlen(narrow)) == 0 || r > 16 * 1024)) {
		xasprintf(cause, "the run's own rules must be 1 to 16384 "
		    "bytes");
		return -1;
	}
	if (command != NULL && ((k = strlen(command)) == 0 || k > 64)) {
		xasprintf(cause, "a command name is 1 to 64 bytes");
		return -1;
	}
	body = 3 + n + (narrow != NULL ? 3 + r : 0) +
	    (command != NULL ? 3 + k : 0);
	free(b->b_header);
	b->b_headerlen = 16 + body;
	h = xmalloc(b->b_headerlen);
	memcpy(h, sig, sizeof(sig));
	h[12] = 0x20;			/* version 2, LOCAL */
	h[13] = 0x00;			/* AF_UNSPEC: no addresses */
	h[14] = (unsigned char)(body >> 8);
	h[15] = (unsigned char)body;
	h[16] = 0x05;			/* PP2_TYPE_UNIQUE_ID */
	h[17] = (unsigned char)(n >> 8);
	h[18] = (unsigned char)n;
	memcpy(h + 19, id, n);
	if (narrow != NULL) {
		h[19 + n] = 0xe0;	/* PP2_TYPE_MIN_CUSTOM: cordon's */
		h[20 + n] = (unsigned char)(r >> 8);
		h[21 + n] = (unsigned char)r;
		memcpy(h + 22 + n, narrow, r);
	}
	if (command != NULL) {
		at = 19 + n + (narrow != NULL ? 3 + r : 0);
		h[at] = 0xe1;		/* cordon's: the command's name */
		h[at + 1] = (unsigned char)(k >> 8);
		h[at + 2] = (unsigned char)k;
		memcpy(h + at + 3, command, k);
	}
	b->b_header = (char *)h;
	return 0;
}

size_t
bridge_active(const struct bridge *b)
{
	return b->b_nconns;
}

static void
bridge_drain_timeout_cb(int fd, short what, void *arg)
{
	struct bridge	*b = arg;

	(void)fd;
	(void)what;
	log_warnx("bridge: %zu connection(s) still open after the drain "
	    "time; closing them", b->b_nconns);
	while (!TAILQ_EMPTY(&b->b_conns))
		bconn_free(TAILQ_FIRST(&b->b_conns));
}

/*
 * Stops accepting; done(arg) is called once the open connections have
 * ended, or after secs seconds, when they are closed.
 */
void
bridge_drain(struct bridge *b, int secs, void (*done)(void *), void *arg)
{
	struct timeval	 tv = { secs, 0 };

	evconnlistener_disable(b->b_listener);
	if (b->b_resume != NULL)
		evtimer_del(b->b_resume);
	b->b_drained = done;
	b->b_drained_arg = arg;
	if (b->b_nconns == 0) {
		done(arg);
		return;
	}
	if ((b->b_drain = evtimer_new(b->b_base, bridge_drain_timeout_cb,
	    b)) != NULL)
		evtimer_add(b->b_drain, &tv);
}

/* Closes every connection and the listener, and removes its socket file. */
void
bridge_free(struct bridge *b)
{
	if (b == NULL)
		return;
	b->b_drained = NULL;
	while (!TAILQ_EMPTY(&b->b_conns))
		bconn_free(TAILQ_FIRST(&b->b_conns));
	evconnlistener_free(b->b_listener);
	endpoint_unlink(b->b_listen);
	if (b->b_resume != NULL)
		event_free(b->b_resume);
	if (b->b_drain != NULL)
		event_free(b->b_drain);
	free(b->b_header);
	free(b);
}
