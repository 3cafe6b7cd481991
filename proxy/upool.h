/*
 * upool.h: the proxy's pool of idle upstream connections, kept when a
 * client connection ends and taken by a later one of the same run
 * (upool.c); conn_pool.c puts and takes them for a connection.
 */
#ifndef CORDON_UPOOL_H
#define CORDON_UPOOL_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

#include "lib/addr.h"

struct bufferevent;
struct upool;

#define UPOOL_MAX		32	/* idle upstreams in all */
#define UPOOL_PER_KEY		4	/* per run, host, port */
#define UPOOL_IDLE_SECS		30	/* or --idle-secs, if less */

/* What an idle upstream may be taken for: the run, then the target. */
struct upool_key {
	const char	*uk_sandbox;	/* its PROXY v2 id, or NULL */
	bool		 uk_has_uid;	/* the kernel gave the peer's uid */
	uid_t		 uk_uid;
	const char	*uk_identity;	/* a tls: client's, or NULL */
	const char	*uk_origin;	/* its originator's uid, or NULL */
	const char	*uk_host;	/* the host decided on */
	int		 uk_port;
	const char	*uk_name;	/* TLS: verified for; plain: "" */
};

/* An idle upstream: its bufferevent owns the socket when uu_fd is -1. */
struct upool_up {
	struct bufferevent	*uu_bev;
	int			 uu_fd;
	struct addr		 uu_addr;	/* what it reaches */
};

void		 upool_put(struct upool **, const struct upool_key *,
		    const struct upool_up *, int);
bool		 upool_take(struct upool *, const struct upool_key *,
		    const struct addr *, size_t, struct upool_up *);
const char	*upool_tls_name(SSL *);
void		 upool_free(struct upool **);

#endif
