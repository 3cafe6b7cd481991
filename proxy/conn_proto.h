/*
 * conn_proto.h: what each protocol of a client connection offers the
 * files above it (conn.h has the core's API, which is all a protocol
 * calls below it).  From the bottom up: the pool of idle upstreams
 * (the table's ct_let_go), HTTP, TLS inspection, tunnels,
 * a tls: client's pump and handshake, SOCKS5, the capture; conn_accept.c, above them all, puts their
 * handlers and operations in the one table the core reads.
 */
#ifndef CORDON_CONN_PROTO_H
#define CORDON_CONN_PROTO_H

#include "proxy/conn.h"

/* conn_pool.c */
void	 conn_pool_let_go(struct conn *);
bool	 conn_pool_take(struct conn *, bool);

/* conn_http.c */
extern const struct conn_ops	conn_http_ops;		/* PROTO_HTTP */
void	 conn_http_answer(struct conn *, int, const char *, const char *);
void	 conn_http_refuse(struct conn *, enum conn_refusal, const char *,
	    const char *);
bool	 conn_http_inspect(struct conn *);
void	 conn_http_start(struct conn *);
void	 conn_http_head(struct conn *);
void	 conn_http_head_gone(struct conn *, short);
void	 conn_http_forward(struct conn *);
void	 conn_http_client_gone(struct conn *, short);
void	 conn_http_up_event(struct conn *, short);

/* conn_tls.c */
extern const struct conn_ops	conn_tls_ops;		/* PROTO_HTTPS */
struct bufferevent *conn_tls_over(struct conn *, SSL *);
void	 conn_tls_start(struct conn *);
bool	 conn_tls_pooled(struct conn *);
void	 conn_tls_up_hold(struct conn *);
void	 conn_tls_up_done(struct conn *, short);
void	 conn_tls_up_gone(struct conn *, short);
void	 conn_tls_accepted(struct conn *);
void	 conn_tls_failed(struct conn *, short);

/* conn_tunnel.c */
extern const struct conn_ops	conn_tunnel_connect_ops; /* PROTO_CONNECT */
void	 conn_tunnel(struct conn *);
void	 conn_tunnel_peek(struct conn *);
void	 conn_tunnel_up_read(struct conn *);

/* conn_mtls.c */
void	 conn_mtls_start(struct conn *);
void	 conn_mtls_verified(struct conn *);
void	 conn_mtls_failed(struct conn *, short);

/* conn_pump.c */
void	 conn_pump(struct conn *);
void	 conn_pump_up(struct conn *);
void	 conn_pump_down(struct conn *);
void	 conn_pump_wrote(struct conn *);
void	 conn_pump_up_wrote(struct conn *);
void	 conn_pump_gone(struct conn *, short);
void	 conn_pump_up_gone(struct conn *, short);

/* conn_socks.c */
extern const struct conn_ops	conn_socks_ops;		/* PROTO_SOCKS5 */
void	 conn_socks_read(struct conn *);

/* conn_ssh.c */
void	 conn_ssh_feed(struct conn *, const void *, size_t);
void	 conn_ssh_watch(struct conn *, const void *, size_t);

/* conn_capture.c */
extern const struct conn_ops	conn_capture_ops;	/* PROTO_CAPTURE */
extern const struct conn_ops	conn_capture_dns_ops;	/* PROTO_DNS */
bool	 conn_capture(struct conn *, const uint8_t *, size_t);

/* conn_accept.c */
extern const struct conn_table	conn_accept_table;

#endif
