/*
 * conn_parts.h: the state each step and protocol keeps in a client
 * connection (struct conn, conn.h, holds one of each): an HTTP exchange,
 * an inspected tunnel, a captured connection's destination, a run's own
 * rules.  Each is read and written by its own file alone.
 */
#ifndef CORDON_CONN_PARTS_H
#define CORDON_CONN_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/x509.h>

#include "lib/addr.h"
#include "lib/host.h"
#include "proxy/proxy.h"
#include "wire/wire.h"

struct event;
struct policy;
struct ppolicy;
struct scrub;
struct signer_req;

/*
 * An HTTP exchange (conn_http.c): the request and its answer being
 * forwarded, and what takes the phantom credentials' real values out of
 * the answers.  hx_reqdone and hx_resphead are two flags beside
 * c_state, one per direction, rather than states of their own: in
 * CS_FORWARD the request's body and the answer move at once (an upstream
 * may answer before the body is all sent), so each side keeps how far it
 * has come.
 */
struct conn_http {
	struct http_request	 hx_req;
	struct http_response	 hx_resp;
	struct http_body	 hx_reqbody;
	struct http_body	 hx_respbody;
	bool			 hx_reqdone;	/* request body all sent */
	bool			 hx_resphead;	/* response head forwarded */
	bool			 hx_keepalive;
	size_t			 hx_headscan;	/* head bytes parsed before */
	struct scrub		*hx_scrub;	/* real values out of answers */
	bool			 hx_websocket;	/* upgraded: CS_PUMP, the */
						/* server's frames scrubbed */
	struct renew		*hx_renew;	/* a login's refresh, read */
						/* whole both ways (renew.c) */
};

/*
 * An inspected tunnel (conn_tls.c): the host it was opened for, the leaf
 * that answers the sandbox, and how the upstream's own handshake went.
 * As the tunnel is opened, c_up becomes a TLS bufferevent on the
 * upstream's socket (which it owns: c_upfd is -1); when the sandbox's
 * handshake begins, c_bev a TLS filter over the client's bufferevent
 * (which it owns; c_fd stays the connection's).
 *
 * ci_tls is a flag beside c_state: once set it holds through reading
 * heads, forwarding and closing, the states a plain connection goes
 * through too, and it says that c_bev is a TLS filter.  ci_up_ready is a
 * flag for the same reason: the leaf and the upstream's handshake come
 * in either order, and the sandbox's handshake starts when both are in
 * (conn_tls_accept).
 *
 * The tunnel's upstream need not be one: an idle one of the same run
 * verified for the host may come from the pool (upool.c) as the tunnel
 * is opened (ci_pooled until its first request); one dialed for it
 * waits for that request as a kept one does (ci_fresh); and a request
 * that finds none (its own went, unused or not) takes one from the pool
 * or dials a new one to the addresses checked for the tunnel (ci_addrs),
 * checked again.
 */
struct conn_inspect {
	char			 ci_host[HOST_NAME_MAX_LEN + 1];
	int			 ci_port;
	char			 ci_addr[ADDR_STRLEN + 8];
	struct signer_req	*ci_sreq;
	X509			*ci_leaf;
	bool			 ci_up_ready;	/* handshake done, or failed */
	char			*ci_upfail;	/* why the upstream's failed */
	bool			 ci_tls;	/* c_bev is a TLS filter */
	struct event		*ci_close_ev;	/* CS_FLUSHING: records out */
	struct addr		 ci_addrs[DNS_MAX_ADDRS]; /* checked */
	size_t			 ci_naddrs;	/* for the tunnel */
	bool			 ci_pooled;	/* c_up from the pool, unused */
	bool			 ci_fresh;	/* c_up dialed for it, unused */
};

/*
 * A connection the capture took (conn_capture.c): where it was going,
 * host and port; cc_port 0 for any other connection.
 */
struct conn_cap {
	char			 cc_host[HOST_NAME_MAX_LEN + 1];
	int			 cc_port;
};

/*
 * The rules a run sent in its PROXY v2 header, and the proxy's policy
 * narrowed by them, made again when the policy it narrows is reloaded
 * (conn_narrow.c).
 */
struct conn_narrow {
	struct policy		*cn_rules;	/* NULL: none sent */
	struct ppolicy		*cn_base;	/* what cn_policy narrows */
	struct ppolicy		*cn_policy;	/* that, narrowed */
	struct ppolicy		*cn_live;	/* the run's live rules in it */
};

#endif /* CORDON_CONN_PARTS_H */
