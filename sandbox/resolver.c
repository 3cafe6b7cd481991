/*
 * resolver.c: the sandbox's DNS server, on PID 1's event loop, on port 53
 * of 127.0.0.1 and ::1 over UDP and TCP; the capture's rules send it every
 * query the sandbox makes, to whatever server.  It never looks a name up:
 * it asks the proxy whether the policy allows the name (a connection to
 * the proxy whose PROXY v2 header carries the name; the proxy answers
 * "allowed" or "refused" and logs a refusal as it logs any), then answers
 * an allowed name with the pool's addresses for it (capture.c), which the
 * bridge maps back to the name, and a refused one with NXDOMAIN.  The
 * proxy resolves the real name when a connection comes.
 *
 * Asked about locally, never sent: "localhost" and names under it, and
 * the sandbox's own host name (tools look it up: git for its ident, Java
 * and Python's getfqdn), all loopback; and reverse lookups (".arpa"),
 * which get NXDOMAIN.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "lib/endpoint.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sandbox/capture.h"
#include "wire/dnsmsg.h"
#include "wire/pp2.h"

#define RESOLVER_MSG_MAX	4096	/* a query; answers are smaller */
#define RESOLVER_ASK_SECS	10	/* the proxy's answer */
#define RESOLVER_TCP_SECS	10	/* a TCP client's next query */
#define RESOLVER_ASKS_MAX	256	/* queries waiting at once */
#define RESOLVER_TTL		60

struct resolver;

/* A query waiting for the proxy's word. */
struct rask {
	TAILQ_ENTRY(rask)	 ra_entry;
	struct resolver		*ra_rs;
	unsigned char		 ra_msg[RESOLVER_MSG_MAX];
	size_t			 ra_len;
	struct dnsmsg_query	 ra_q;
	struct bufferevent	*ra_proxy;
	int			 ra_udp;	/* answer by datagram, or */
	struct sockaddr_storage	 ra_peer;
	socklen_t		 ra_peerlen;
	struct bufferevent	*ra_tcp;	/* on this TCP client */
};

TAILQ_HEAD(rasks, rask);

struct resolver {
	struct event_base	*rs_base;
	struct capture		*rs_pool;
	const struct endpoint	*rs_proxy;
	struct pp2_out		 rs_pp2;
	int			 rs_udp[2];
	struct event		*rs_uev[2];
	struct evconnlistener	*rs_tcp[2];
	struct rasks		 rs_asks;
	size_t			 rs_nasks;
	char			 rs_host[HOST_NAME_MAX + 1];	/* ours */
};

static void	rs_tcp_read_cb(struct bufferevent *, void *);

static void
rask_free(struct rask *ra)
{
	struct resolver	*rs = ra->ra_rs;

	TAILQ_REMOVE(&rs->rs_asks, ra, ra_entry);
	rs->rs_nasks--;
	if (ra->ra_proxy != NULL)
		bufferevent_free(ra->ra_proxy);
	free(ra);
}

/* Sends len bytes of an answer to whoever asked. */
static void
rs_send(struct rask *ra, const unsigned char *a, size_t len)
{
	uint8_t	 n[2] = { (uint8_t)(len >> 8), (uint8_t)len };

	if (ra->ra_tcp == NULL && ra->ra_udp == -1)
		return;
	if (ra->ra_tcp == NULL) {
		(void)sendto(ra->ra_udp, a, len, MSG_DONTWAIT,
		    (struct sockaddr *)&ra->ra_peer, ra->ra_peerlen);
		return;
	}
	bufferevent_write(ra->ra_tcp, n, sizeof(n));
	bufferevent_write(ra->ra_tcp, a, len);
	/* The next query, and one the client sent before this answer. */
	bufferevent_enable(ra->ra_tcp, EV_READ);
	bufferevent_trigger(ra->ra_tcp, EV_READ, BEV_TRIG_DEFER_CALLBACKS);
}

/* Answers ra with rcode and, when addr is not NULL, that address. */
static void
rs_reply(struct rask *ra, int rcode, const void *addr, size_t alen)
{
	unsigned char	 out[RESOLVER_MSG_MAX];
	size_t		 n;

	if ((n = dnsmsg_answer(&ra->ra_q, ra->ra_msg, rcode, addr, alen,
	    RESOLVER_TTL, out, sizeof(out))) > 0)
		rs_send(ra, out, n);
	rask_free(ra);
}

/*
 * Answers an allowed name: the pool's address of the family asked, none
 * for another type (NODATA).
 */
static void
rs_allowed(struct rask *ra)
{
	uint8_t		 a4[4], a6[16];
	uint32_t	 i;
	bool		 v4 = ra->ra_q.dq_type == DNSMSG_TYPE_A;

	if (!v4 && ra->ra_q.dq_type != DNSMSG_TYPE_AAAA) {
		rs_reply(ra, DNSMSG_RCODE_NOERROR, NULL, 0);
		return;
	}
	if ((i = capture_index(ra->ra_rs->rs_pool, ra->ra_q.dq_name)) == 0) {
		log_warnx("resolver: more than %u names in one run; %s not "
		    "answered", CAPTURE_NAMES, ra->ra_q.dq_name);
		rs_reply(ra, DNSMSG_RCODE_SERVFAIL, NULL, 0);
		return;
	}
	capture_addrs(i, a4, a6);
	rs_reply(ra, DNSMSG_RCODE_NOERROR, v4 ? (void *)a4 : (void *)a6,
	    v4 ? 4 : 16);
}

/* The proxy's word: a line, "allowed" or "refused". */
static void
rs_proxy_read_cb(struct bufferevent *bev, void *arg)
{
	struct rask	*ra = arg;
	char		*line;

	if ((line = evbuffer_readln(bufferevent_get_input(bev), NULL,
	    EVBUFFER_EOL_LF)) == NULL)
		return;
	if (strcmp(line, "allowed") == 0)
		rs_allowed(ra);
	else
		rs_reply(ra, strcmp(line, "refused") == 0 ?
		    DNSMSG_RCODE_NXDOMAIN : DNSMSG_RCODE_SERVFAIL, NULL, 0);
	free(line);
}

static void
rs_proxy_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct rask	*ra = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED)
		return;
	log_debug("resolver: the proxy did not answer about %s",
	    ra->ra_q.dq_name);
	rs_reply(ra, DNSMSG_RCODE_SERVFAIL, NULL, 0);
}

/* Asks the proxy about ra's name. */
static void
rs_ask(struct rask *ra)
{
	struct resolver	*rs = ra->ra_rs;
	struct pp2_out	 po = rs->rs_pp2;
	struct sockaddr_storage	 ss = rs->rs_proxy->ep_addr;
	struct timeval	 tv = { RESOLVER_ASK_SECS, 0 };
	char		*h, *cause;
	size_t		 len;

	po.po_name = ra->ra_q.dq_name;
	if ((h = pp2_header(&po, &len, &cause)) == NULL) {
		log_debug("resolver: %s", cause);
		free(cause);
		rs_reply(ra, DNSMSG_RCODE_REFUSED, NULL, 0);
		return;
	}
	ra->ra_proxy = bufferevent_socket_new(rs->rs_base, -1,
	    BEV_OPT_CLOSE_ON_FREE);
	if (ra->ra_proxy == NULL || bufferevent_socket_connect(ra->ra_proxy,
	    (struct sockaddr *)&ss, (int)rs->rs_proxy->ep_len) == -1) {
		free(h);
		rs_reply(ra, DNSMSG_RCODE_SERVFAIL, NULL, 0);
		return;
	}
	bufferevent_setcb(ra->ra_proxy, rs_proxy_read_cb, NULL,
	    rs_proxy_event_cb, ra);
	bufferevent_set_timeouts(ra->ra_proxy, &tv, &tv);
	bufferevent_write(ra->ra_proxy, h, len);
	bufferevent_enable(ra->ra_proxy, EV_READ);
	free(h);
}

/*
 * Says whether name is "localhost" or under it, or the sandbox's own
 * host name, which is the loopback's as on a host without a network.
 */
static bool
rs_localhost(const struct resolver *rs, const char *name)
{
	size_t	 n = strlen(name);

	return strcmp(name, "localhost") == 0 ||
	    (n > 10 && strcmp(name + n - 10, ".localhost") == 0) ||
	    (rs->rs_host[0] != '\0' && strcasecmp(name, rs->rs_host) == 0);
}

/*
 * A query of len bytes, from a datagram (udp, peer) or a TCP client
 * (tcp): answered here, or asked about.
 */
static void
rs_query(struct resolver *rs, const unsigned char *msg, size_t len,
    int udp, const struct sockaddr_storage *peer, socklen_t peerlen,
    struct bufferevent *tcp)
{
	static const uint8_t	 lo4[4] = { 127, 0, 0, 1 };
	static const uint8_t	 lo6[16] = { [15] = 1 };
	struct rask		*ra;
	unsigned char		 out[64];
	size_t			 n, tl;
	uint16_t		 id;

	ra = xcalloc(1, sizeof(*ra));
	ra->ra_rs = rs;
	ra->ra_udp = udp;
	ra->ra_tcp = tcp;
	if (peer != NULL)
		memcpy(&ra->ra_peer, peer, peerlen);
	ra->ra_peerlen = peerlen;
	TAILQ_INSERT_TAIL(&rs->rs_asks, ra, ra_entry);
	rs->rs_nasks++;
	if (len > sizeof(ra->ra_msg) ||
	    dnsmsg_parse_query(msg, len, &ra->ra_q) == -1) {
		if (dnsmsg_id(msg, len, &id) == 0) {
			if ((n = dnsmsg_error(id, DNSMSG_RCODE_FORMERR, out,
			    sizeof(out))) > 0)
				rs_send(ra, out, n);
		}
		rask_free(ra);
		return;
	}
	memcpy(ra->ra_msg, msg, len);
	ra->ra_len = len;
	tl = strlen(ra->ra_q.dq_name);
	if (ra->ra_q.dq_class != DNSMSG_CLASS_IN || tl == 0)
		rs_reply(ra, DNSMSG_RCODE_REFUSED, NULL, 0);
	else if (rs_localhost(rs, ra->ra_q.dq_name)) {
		if (ra->ra_q.dq_type == DNSMSG_TYPE_A)
			rs_reply(ra, DNSMSG_RCODE_NOERROR, lo4, 4);
		else if (ra->ra_q.dq_type == DNSMSG_TYPE_AAAA)
			rs_reply(ra, DNSMSG_RCODE_NOERROR, lo6, 16);
		else
			rs_reply(ra, DNSMSG_RCODE_NOERROR, NULL, 0);
	} else if (tl > 5 && strcmp(ra->ra_q.dq_name + tl - 5, ".arpa") == 0)
		rs_reply(ra, DNSMSG_RCODE_NXDOMAIN, NULL, 0);
	else if (rs->rs_nasks > RESOLVER_ASKS_MAX)
		rs_reply(ra, DNSMSG_RCODE_SERVFAIL, NULL, 0);
	else
		rs_ask(ra);
}

/* A datagram on one of the UDP sockets. */
static void
rs_udp_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver		*rs = arg;
	struct sockaddr_storage	 peer;
	socklen_t		 plen;
	unsigned char		 msg[RESOLVER_MSG_MAX];
	ssize_t			 n;
	int			 i;

	(void)what;
	for (i = 0; i < 16; i++) {		/* a few, then others' turn */
		plen = sizeof(peer);
		if ((n = recvfrom(fd, msg, sizeof(msg), MSG_DONTWAIT,
		    (struct sockaddr *)&peer, &plen)) == -1)
			return;
		rs_query(rs, msg, (size_t)n, fd, &peer, plen, NULL);
	}
}

/* A TCP client's queries: a length of two bytes, then the message. */
static void
rs_tcp_read_cb(struct bufferevent *bev, void *arg)
{
	struct resolver	*rs = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	unsigned char	*p, msg[RESOLVER_MSG_MAX];
	size_t		 len;

	if ((p = evbuffer_pullup(in, 2)) == NULL)
		return;
	len = (size_t)p[0] << 8 | p[1];
	if (len > sizeof(msg)) {
		bufferevent_free(bev);
		return;
	}
	if (evbuffer_get_length(in) < 2 + len)
		return;
	evbuffer_drain(in, 2);
	evbuffer_remove(in, msg, len);
	/* One query at a time: the next is read once this one is answered. */
	bufferevent_disable(bev, EV_READ);
	rs_query(rs, msg, len, -1, NULL, 0, bev);
}

static void
rs_tcp_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct resolver	*rs = arg;
	struct rask	*ra;

	(void)what;
	/* A query still asked about is answered to no one. */
	TAILQ_FOREACH(ra, &rs->rs_asks, ra_entry)
		if (ra->ra_tcp == bev) {
			ra->ra_tcp = NULL;
			ra->ra_udp = -1;
		}
	bufferevent_free(bev);
}

static void
rs_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct resolver		*rs = arg;
	struct bufferevent	*bev;
	struct timeval		 tv = { RESOLVER_TCP_SECS, 0 };

	(void)l;
	(void)sa;
	(void)salen;
	if ((bev = bufferevent_socket_new(rs->rs_base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		return;
	}
	bufferevent_setcb(bev, rs_tcp_read_cb, NULL, rs_tcp_event_cb, rs);
	bufferevent_set_timeouts(bev, &tv, NULL);
	bufferevent_enable(bev, EV_READ);
}

/* Binds port 53 of address text (family af) for UDP and TCP. */
static int
rs_bind(struct resolver *rs, int i, int af, const char *text, char **cause)
{
	struct endpoint	 ep;
	int		 fd, on = 1;

	memset(&ep, 0, sizeof(ep));
	if (endpoint_parse(text, &ep, cause) == -1)
		return -1;
	if ((fd = socket(af, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1 || (af == AF_INET6 && setsockopt(fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, &on, sizeof(on)) == -1) ||
	    bind(fd, (struct sockaddr *)&ep.ep_addr, ep.ep_len) == -1) {
		xasprintf(cause, "%s (UDP): %s", ep.ep_text, strerror(errno));
		if (fd != -1)
			close(fd);
		endpoint_clear(&ep);
		return -1;
	}
	rs->rs_udp[i] = fd;
	rs->rs_uev[i] = event_new(rs->rs_base, fd, EV_READ | EV_PERSIST,
	    rs_udp_cb, rs);
	if (rs->rs_uev[i] == NULL || event_add(rs->rs_uev[i], NULL) == -1 ||
	    (fd = endpoint_listen(&ep, SOMAXCONN, cause)) == -1) {
		if (*cause == NULL)
			xasprintf(cause, "cannot watch %s", ep.ep_text);
		endpoint_clear(&ep);
		return -1;
	}
	rs->rs_tcp[i] = evconnlistener_new(rs->rs_base, rs_accept_cb, rs,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	endpoint_clear(&ep);
	if (rs->rs_tcp[i] == NULL) {
		close(fd);
		xasprintf(cause, "cannot watch %s", text);
		return -1;
	}
	return 0;
}

/*
 * Starts the resolver on port 53 of 127.0.0.1 and, where IPv6 is, ::1:
 * names asked about to the proxy at proxy (borrowed), each in a header
 * with po's id, rules and command (borrowed); allowed names answered from
 * pool (borrowed).  Returns it, or NULL with *cause set.
 */
struct resolver *
resolver_new(struct event_base *base, struct capture *pool,
    const struct endpoint *proxy, const struct pp2_out *po, char **cause)
{
	struct resolver	*rs;
	char		*why = NULL;

	rs = xcalloc(1, sizeof(*rs));
	if (gethostname(rs->rs_host, sizeof(rs->rs_host) - 1) == -1)
		rs->rs_host[0] = '\0';
	rs->rs_base = base;
	rs->rs_pool = pool;
	rs->rs_proxy = proxy;
	rs->rs_pp2 = *po;
	rs->rs_udp[0] = rs->rs_udp[1] = -1;
	TAILQ_INIT(&rs->rs_asks);
	*cause = NULL;
	if (rs_bind(rs, 0, AF_INET, "tcp:127.0.0.1:53", cause) == -1) {
		resolver_free(rs);
		return NULL;
	}
	if (rs_bind(rs, 1, AF_INET6, "tcp:[::1]:53", &why) == -1) {
		log_debug("%s: no IPv6: %s", __func__, why);
		free(why);
	}
	return rs;
}

void
resolver_free(struct resolver *rs)
{
	int	 i;

	if (rs == NULL)
		return;
	while (!TAILQ_EMPTY(&rs->rs_asks))
		rask_free(TAILQ_FIRST(&rs->rs_asks));
	for (i = 0; i < 2; i++) {
		if (rs->rs_uev[i] != NULL)
			event_free(rs->rs_uev[i]);
		if (rs->rs_udp[i] != -1)
			close(rs->rs_udp[i]);
		if (rs->rs_tcp[i] != NULL)
			evconnlistener_free(rs->rs_tcp[i]);
	}
	free(rs);
}
