/*
 * upool.c: the proxy's pool of idle upstream connections, kept across
 * client connections: each under its key, closed when it speaks, ends or
 * waits too long.  It knows no client connection: conn_pool.c puts and
 * takes them for one.  When a client connection ends, or its next
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "lib/xmalloc.h"
#include "proxy/upool.h"

/* One idle upstream, and the key it may be taken for. */
struct upool_ent {
	TAILQ_ENTRY(upool_ent)	 ue_entry;
	struct upool		*ue_pool;
	struct upool_key	 ue_key;	/* its strings: ue_own's */
	char			*ue_own[5];
	struct upool_up		 ue_up;
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

/* Whether two keys are the same: every field. */
static bool
upool_key_same(const struct upool_key *a, const struct upool_key *b)
{
	return upool_same(a->uk_sandbox, b->uk_sandbox) &&
	    a->uk_has_uid == b->uk_has_uid &&
	    (!a->uk_has_uid || a->uk_uid == b->uk_uid) &&
	    upool_same(a->uk_identity, b->uk_identity) &&
	    upool_same(a->uk_origin, b->uk_origin) &&
	    strcmp(a->uk_host, b->uk_host) == 0 &&
	    a->uk_port == b->uk_port && strcmp(a->uk_name, b->uk_name) == 0;
}

/* A copy of s that e owns (slot i), or NULL. */
static const char *
upool_own(struct upool_ent *e, size_t i, const char *s)
{
	return s == NULL ? NULL : (e->ue_own[i] = xstrdup(s));
}

/* A copy of k that e owns. */
static void
upool_key_copy(struct upool_ent *e, const struct upool_key *k)
{
	e->ue_key = *k;
	e->ue_key.uk_sandbox = upool_own(e, 0, k->uk_sandbox);
	e->ue_key.uk_identity = upool_own(e, 1, k->uk_identity);
	e->ue_key.uk_origin = upool_own(e, 2, k->uk_origin);
	e->ue_key.uk_host = upool_own(e, 3, k->uk_host);
	e->ue_key.uk_name = upool_own(e, 4, k->uk_name);
}

/* Takes e out of its pool and frees it; its connection is the caller's. */
static void
upool_unlink(struct upool_ent *e)
{
	size_t	 i;

	TAILQ_REMOVE(&e->ue_pool->up_ents, e, ue_entry);
	e->ue_pool->up_n--;
	for (i = 0; i < sizeof(e->ue_own) / sizeof(e->ue_own[0]); i++)
		free(e->ue_own[i]);
	free(e);
}

/* Closes e's connection and forgets it. */
static void
upool_drop(struct upool_ent *e)
{
	struct upool_up	 up = e->ue_up;

	upool_unlink(e);
	bufferevent_free(up.uu_bev);
	if (up.uu_fd != -1)
		close(up.uu_fd);
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
		if (upool_key_same(&o->ue_key, &e->ue_key) && n++ == 0)
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
const char *
upool_tls_name(SSL *ssl)
{
	const char	*name;

	if (!SSL_is_init_finished(ssl) ||
	    SSL_get_verify_result(ssl) != X509_V_OK ||
	    SSL_get_shutdown(ssl) != 0 || SSL_pending(ssl) > 0 ||
	    SSL_has_pending(ssl) ||
	    (name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)) ==
	    NULL)
		return NULL;
	return name;
}

/*
 * Puts up, idle, in *upp (made if need be) under key, for at most
 * idle_secs: it waits, watched for bytes, its end or its time.  The
 * pool owns its bufferevent and socket from now on.
 */
void
upool_put(struct upool **upp, const struct upool_key *key,
    const struct upool_up *up, int idle_secs)
{
	struct upool_ent	*e;
	struct timeval		 idle = { idle_secs, 0 };

	if (*upp == NULL) {
		*upp = xcalloc(1, sizeof(**upp));
		TAILQ_INIT(&(*upp)->up_ents);
	}
	e = xcalloc(1, sizeof(*e));
	e->ue_pool = *upp;
	upool_key_copy(e, key);
	e->ue_up = *up;
	bufferevent_setcb(up->uu_bev, upool_read_cb, NULL, upool_event_cb, e);
	bufferevent_disable(up->uu_bev, EV_WRITE);
	bufferevent_set_timeouts(up->uu_bev, &idle, NULL);
	bufferevent_enable(up->uu_bev, EV_READ);
	TAILQ_INSERT_TAIL(&e->ue_pool->up_ents, e, ue_entry);
	e->ue_pool->up_n++;
	upool_trim(e->ue_pool, e);
}

/*
 * Takes, into *up, the newest idle upstream under key that reaches one
 * of the naddrs addresses (those just checked for the request): its
 * bufferevent, with no callback and no timeout, is the caller's.
 * Returns false when there is none.
 */
bool
upool_take(struct upool *pool, const struct upool_key *key,
    const struct addr *addrs, size_t naddrs, struct upool_up *up)
{
	struct upool_ent	*e;
	size_t			 i;

	if (pool == NULL)
		return false;
	TAILQ_FOREACH_REVERSE(e, &pool->up_ents, upool_ents, ue_entry) {
		if (!upool_key_same(&e->ue_key, key))
			continue;
		for (i = 0; i < naddrs; i++)
			if (addr_equal(&addrs[i], &e->ue_up.uu_addr))
				break;
		if (i == naddrs)
			continue;
		*up = e->ue_up;
		upool_unlink(e);
		bufferevent_setcb(up->uu_bev, NULL, NULL, NULL, NULL);
		bufferevent_set_timeouts(up->uu_bev, NULL, NULL);
		return true;
	}
	return false;
}

/* Closes every idle upstream and frees the pool (*upp, or NULL). */
void
upool_free(struct upool **upp)
{
	if (*upp == NULL)
		return;
	while (!TAILQ_EMPTY(&(*upp)->up_ents))
		upool_drop(TAILQ_FIRST(&(*upp)->up_ents));
	free(*upp);
	*upp = NULL;
}
