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

#include "bridge/bridge.h"
#include "lib/endpoint.h"
#include "lib/log.h"
#include "lib/relay.h"
#include "lib/xmalloc.h"
#include "wire/pp2.h"

#define BRIDGE_WARN_SECS	10

struct bconn {
	TAILQ_ENTRY(bconn)	 bc_entry;
	struct bridge		*bc_bridge;
	int			 bc_client;	/* until the relay takes it */
	int			 bc_upstream;
	struct event		*bc_connect;	/* waiting for bc_upstream */
	struct relay		*bc_relay;
	char			*bc_header;	/* a captured one's own */
	size_t			 bc_headerlen;
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
	struct pp2_out		 b_pp2;		/* what b_header says */
	bridge_capture_cb	 b_capture;	/* where a connection went */
	void			*b_capture_arg;
	time_t			 b_warned;	/* last rate-limited warning */
	unsigned long		 b_unsaid;	/* warnings not repeated since */
	void			(*b_drained)(void *);
	void			*b_drained_arg;
};

static void	bridge_accept_cb(struct evconnlistener *, evutil_socket_t,
		    struct sockaddr *, int, void *);
static void	bridge_accept_error_cb(struct evconnlistener *, void *);
static int	bridge_captured(struct bconn *, const char *);

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
	free(c->bc_header);
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
	if (c->bc_header != NULL)
		relay_pending(c->bc_relay, RELAY_UP, c->bc_header,
		    c->bc_headerlen);
	else if (b->b_header != NULL)
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
	char		 target[PP2_TARGET_MAX + 1];
	int		 captured = 0;

	(void)l;
	(void)sa;
	(void)salen;
	if (b->b_capture != NULL && (captured = b->b_capture(fd, target,
	    sizeof(target), b->b_capture_arg)) == -1) {
		close(fd);
		return;
	}
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
	if (captured == 1 && bridge_captured(c, target) == -1)
		bconn_free(c);
	else
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
 * (LOCAL, no addresses) whose PP2_TYPE_UNIQUE_ID field carries id, so the
 * proxy behind can tell which sandbox a connection comes from; and, when
 * not NULL, fields of cordon's own with the rules the run adds for its
 * connections (narrow: a policy in JSON the proxy may only narrow with)
 * and the command's name.  The strings are borrowed for the bridge's
 * life.  Returns 0, or -1 with *cause set (pp2_header() says which
 * field is out of bounds).
 */
int
bridge_proxy_id(struct bridge *b, const char *id, const char *narrow,
    const char *command, const char *channel, char **cause)
{
	struct pp2_out	 po = { id, narrow, command, NULL, NULL, NULL,
			    channel };
	char		*h;
	size_t		 len;

	if ((h = pp2_header(&po, &len, cause)) == NULL)
		return -1;
	free(b->b_header);
	b->b_header = h;
	b->b_headerlen = len;
	b->b_pp2 = po;
	return 0;
}

/*
 * Asks cb, for each connection accepted, where it was going: cb returns
 * 1 and fills target ("host:port") for one the sandbox's capture sent
 * here, 0 for one made to the bridge itself, -1 to refuse it.  A captured
 * connection's header carries its target as well (bridge_proxy_id()
 * first).
 */
void
bridge_capture(struct bridge *b, bridge_capture_cb cb, void *arg)
{
	b->b_capture = cb;
	b->b_capture_arg = arg;
}

/* The header of a connection cb said was captured on its way to target. */
static int
bridge_captured(struct bconn *c, const char *target)
{
	struct bridge	*b = c->bc_bridge;
	struct pp2_out	 po = b->b_pp2;
	char		*cause;

	po.po_target = target;
	if ((c->bc_header = pp2_header(&po, &c->bc_headerlen, &cause)) ==
	    NULL) {
		bridge_warn(b, target, cause);
		free(cause);
		return -1;
	}
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
