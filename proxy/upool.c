/*
 * upool.c: the proxy's pool of idle upstream connections, kept across
 * client connections.  When a client connection ends, or its next
 * request goes elsewhere, while its upstream is kept (CU_KEPT: idle,
 * its answer read whole, keep-alive on both sides, nothing unread), the
 * upstream waits here; a later request of the same run to the same host
 * and port takes it instead of dialing, if the address it reaches is
 * one just checked for that request (conn_http.c's co_dial, conn_tls.c's
 * for an inspected tunnel): every request is decided and its addresses
 * checked first, and reuse skips no decision.  A second `npm install` in
 * a session reuses the first one's connections to a registry, over
 * plain HTTP or, inspected, over TLS.
 *
 * A key is the run (its PROXY v2 id, the uid the kernel gave, a tls:
 * client's identity and its originator's uid: as watch.c tells runs
 * apart), the host decided on, the port, and plain or TLS; a TLS one's
 * also the name its session was opened and verified for (the SNI and
 * the name checked, read back from the session itself), which must be
 * the host taking it.  Never across runs: an upstream may hold what its
 * connection alone carries (a connection-bound authentication, NTLM's)
 * for one run only.  A client with none of these (a TCP client of
 * cordon proxy with no PROXY v2 header) is no run, and its upstreams
 * are not pooled.
 *
 * Bounded: UPOOL_MAX in all and UPOOL_PER_KEY per key (the oldest goes
 * first), each for at most UPOOL_IDLE_SECS (or --idle-secs, if less).
 * An idle one is asked nothing: one that sends a byte, ends (a TLS one's
 * close_notify too) or fails is closed at once.  One that ends just as
 * a request goes out on it is the CU_REUSED case conn_http.c retries on
 * a new connection.  A TLS one waits only with its handshake done and
 * verified, nothing of its session unread and none of its close sent
 * or received.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "conn.h"
#include "upool.h"
#include "xmalloc.h"

/* One idle upstream, and what it may be taken for. */
struct upool_ent {
	TAILQ_ENTRY(upool_ent)	 ue_entry;
	struct upool		*ue_pool;
	char			*ue_sandbox;	/* the run: c_sandbox */
	bool			 ue_has_uid;	/* c_peer.lp_known */
	uid_t			 ue_uid;
	char			*ue_identity;	/* c_identity */
	char			*ue_origin;	/* c_origin_uid */
	char			 ue_host[HOST_NAME_MAX_LEN + 1];
	int			 ue_port;
	bool			 ue_tls;
	char			 ue_name[HOST_NAME_MAX_LEN + 1]; /* TLS: */
						/* verified for */
	struct addr		 ue_addr;	/* what ue_bev reaches */
	int			 ue_fd;		/* -1: ue_bev's own (TLS) */
	struct bufferevent	*ue_bev;
};

TAILQ_HEAD(upool_ents, upool_ent);

struct upool {
	struct upool_ents	 up_ents;	/* the oldest first */
	size_t			 up_n;
};

/* Whether two strings, either NULL, are the same. */
static bool
upool_same(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* Whether c is of a run at all: an id, a uid or an identity. */
static bool
upool_known(const struct conn *c)
{
	return c->c_sandbox != NULL || c->c_peer.lp_known ||
	    c->c_identity != NULL;
}

/* Whether e may be taken by c's run, for host, port and tls. */
static bool
upool_match(const struct upool_ent *e, const struct conn *c,
    const char *host, int port, bool tls)
{
	return upool_same(e->ue_sandbox, c->c_sandbox) &&
	    e->ue_has_uid == c->c_peer.lp_known &&
	    (!e->ue_has_uid || e->ue_uid == c->c_peer.lp_uid) &&
	    upool_same(e->ue_identity, c->c_identity) &&
	    upool_same(e->ue_origin, c->c_origin_uid) &&
	    strcmp(e->ue_host, host) == 0 && e->ue_port == port &&
	    e->ue_tls == tls && (!tls || strcmp(e->ue_name, host) == 0);
}

/* Whether a and b have the same key. */
static bool
upool_same_key(const struct upool_ent *a, const struct upool_ent *b)
{
	return upool_same(a->ue_sandbox, b->ue_sandbox) &&
	    a->ue_has_uid == b->ue_has_uid && a->ue_uid == b->ue_uid &&
	    upool_same(a->ue_identity, b->ue_identity) &&
	    upool_same(a->ue_origin, b->ue_origin) &&
	    strcmp(a->ue_host, b->ue_host) == 0 &&
	    a->ue_port == b->ue_port && a->ue_tls == b->ue_tls &&
	    strcmp(a->ue_name, b->ue_name) == 0;
}

/* Takes e out of its pool; its connection is the caller's now. */
static void
upool_unlink(struct upool_ent *e)
{
	TAILQ_REMOVE(&e->ue_pool->up_ents, e, ue_entry);
	e->ue_pool->up_n--;
	free(e->ue_sandbox);
	free(e->ue_identity);
	free(e->ue_origin);
}

/* Closes e's connection and forgets it. */
static void
upool_drop(struct upool_ent *e)
{
	upool_unlink(e);
	bufferevent_free(e->ue_bev);
	if (e->ue_fd != -1)
		close(e->ue_fd);
	free(e);
}

/* An idle upstream sent something: it was asked nothing, so it goes. */
static void
upool_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	upool_drop(arg);
}

/* Its end, an error, or its idle time is over. */
static void
upool_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	upool_drop(arg);
}

/* Past a bound, the oldest of e's key, or the oldest of all, goes. */
static void
upool_trim(struct upool *up, const struct upool_ent *e)
{
	struct upool_ent	*o, *first = NULL;
	size_t			 n = 0;

	TAILQ_FOREACH(o, &up->up_ents, ue_entry)
		if (upool_same_key(o, e) && n++ == 0)
			first = o;
	if (n > UPOOL_PER_KEY)
		upool_drop(first);
	if (up->up_n > UPOOL_MAX)
		upool_drop(TAILQ_FIRST(&up->up_ents));
}

/*
 * The name a TLS upstream's session was opened and verified for, if it
 * may wait idle: its handshake done, the peer verified, none of its
 * close sent or received and nothing of it unread.  NULL when not.
 */
static const char *
upool_tls_name(SSL *ssl)
{
	const char	*name;

	if (!SSL_is_init_finished(ssl) ||
	    SSL_get_verify_result(ssl) != X509_V_OK ||
	    SSL_get_shutdown(ssl) != 0 || SSL_pending(ssl) > 0 ||
	    SSL_has_pending(ssl) ||
	    (name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)) ==
	    NULL || strlen(name) > HOST_NAME_MAX_LEN)
		return NULL;
	return name;
}

/*
 * Whether c's upstream may wait in the pool: kept, of a run, nothing
 * left to read or write, a TLS one's session fit to wait (its name in
 * *name), and the proxy not ending.
 */
static bool
upool_fits(const struct conn *c, const char **name)
{
	SSL	*ssl;

	*name = "";
	if (c->c_up == NULL || c->c_dial.cd_up != CU_KEPT ||
	    !upool_known(c) || c->c_proxy->px_draining ||
	    evbuffer_get_length(bufferevent_get_input(c->c_up)) != 0 ||
	    evbuffer_get_length(bufferevent_get_output(c->c_up)) != 0)
		return false;
	if ((ssl = bufferevent_openssl_get_ssl(c->c_up)) == NULL)
		return c->c_upfd != -1;
	return (*name = upool_tls_name(ssl)) != NULL;
}

/*
 * Lets go of c's upstream: a kept one waits in the pool, any other is
 * closed (conn_drop_up).  Either way c has none after.
 */
void
upool_put(struct conn *c)
{
	struct proxy		*px = c->c_proxy;
	struct upool_ent	*e;
	struct timeval		 idle = { UPOOL_IDLE_SECS, 0 };
	const char		*name;

	if (!upool_fits(c, &name)) {
		conn_drop_up(c);
		return;
	}
	if (px->px_upool == NULL) {
		px->px_upool = xcalloc(1, sizeof(*px->px_upool));
		TAILQ_INIT(&px->px_upool->up_ents);
	}
	e = xcalloc(1, sizeof(*e));
	e->ue_pool = px->px_upool;
	if (c->c_sandbox != NULL)
		e->ue_sandbox = xstrdup(c->c_sandbox);
	e->ue_has_uid = c->c_peer.lp_known;
	e->ue_uid = e->ue_has_uid ? c->c_peer.lp_uid : 0;
	if (c->c_identity != NULL)
		e->ue_identity = xstrdup(c->c_identity);
	if (c->c_origin_uid != NULL)
		e->ue_origin = xstrdup(c->c_origin_uid);
	memcpy(e->ue_host, c->c_dial.cd_kept_host, sizeof(e->ue_host));
	e->ue_port = c->c_dial.cd_kept_port;
	e->ue_tls = name[0] != '\0';
	snprintf(e->ue_name, sizeof(e->ue_name), "%s", name);
	e->ue_addr = c->c_dial.cd_upaddr;
	e->ue_fd = c->c_upfd;
	e->ue_bev = c->c_up;
	c->c_up = NULL;
	c->c_upfd = -1;
	c->c_dial.cd_up = CU_NEW;
	if (px->px_idle_secs < idle.tv_sec)
		idle.tv_sec = px->px_idle_secs;
	bufferevent_setcb(e->ue_bev, upool_read_cb, NULL, upool_event_cb, e);
	bufferevent_disable(e->ue_bev, EV_WRITE);
	bufferevent_set_timeouts(e->ue_bev, &idle, NULL);
	bufferevent_enable(e->ue_bev, EV_READ);
	TAILQ_INSERT_TAIL(&e->ue_pool->up_ents, e, ue_entry);
	e->ue_pool->up_n++;
	upool_trim(e->ue_pool, e);
}

/*
 * The newest idle upstream, TLS or plain, c may take for its request,
 * or NULL.
 */
static struct upool_ent *
upool_find(const struct conn *c, bool tls)
{
	const struct conn_dial	*d = &c->c_dial;
	struct upool_ent	*e;
	size_t			 i;

	if (c->c_proxy->px_upool == NULL || !upool_known(c))
		return NULL;
	TAILQ_FOREACH_REVERSE(e, &c->c_proxy->px_upool->up_ents, upool_ents,
	    ue_entry) {
		if (!upool_match(e, c, c->c_dec.d_host.h_name, c->c_port,
		    tls))
			continue;
		for (i = 0; i < d->cd_naddrs; i++)
			if (addr_equal(&d->cd_addrs[i], &e->ue_addr))
				return e;
	}
	return NULL;
}

/*
 * Gives c, whose request is decided and its addresses checked, an idle
 * upstream of its run to the host and port decided on, at one of those
 * addresses, TLS (verified for that host) or plain as tls says: c_up,
 * kept (CU_KEPT) for them, as if from its own last request, and c_upfd
 * with it (-1 for TLS, whose bufferevent has the socket).  What c kept
 * before waits in the pool instead.  Returns false, and does nothing,
 * when there is none.
 */
bool
upool_take(struct conn *c, bool tls)
{
	struct conn_dial	*d = &c->c_dial;
	struct upool_ent	*e;

	if ((e = upool_find(c, tls)) == NULL)
		return false;
	upool_unlink(e);
	upool_put(c);
	c->c_up = e->ue_bev;
	c->c_upfd = e->ue_fd;
	d->cd_upaddr = e->ue_addr;
	free(e);
	bufferevent_setcb(c->c_up, conn_up_read_cb, conn_up_write_cb,
	    conn_up_event_cb, c);
	bufferevent_set_timeouts(c->c_up, NULL, NULL);
	bufferevent_enable(c->c_up, EV_READ | EV_WRITE);
	d->cd_up = CU_KEPT;
	memcpy(d->cd_kept_host, c->c_dec.d_host.h_name,
	    sizeof(d->cd_kept_host));
	d->cd_kept_port = c->c_port;
	return true;
}

/* Closes every idle upstream (the proxy ends). */
void
upool_free(struct proxy *px)
{
	if (px->px_upool == NULL)
		return;
	while (!TAILQ_EMPTY(&px->px_upool->up_ents))
		upool_drop(TAILQ_FIRST(&px->px_upool->up_ents));
	free(px->px_upool);
	px->px_upool = NULL;
}
