/*
 * conn.h: the core of a client connection, and its API: what the
 * protocol files use, and nothing else sees (proxy.h has the proxy's own
 * interface).  The core knows no protocol: each protocol is a table of
 * operations (struct conn_ops), and each state's handlers a row of one
 * table (struct conn_table), both given by conn_accept.c, the one file
 * that names every protocol; the core calls a protocol only through
 * them, and a protocol calls only this API (conn_proto.h says what each
 * offers the others above it):
 *
 *   conn.c		the core: callbacks by state, a decision begun,
 *			refused in the protocol's own way, logged; close,
 *			and the one conn_free()
 *   conn_dial.c	decide, ask, resolve, check every address, connect
 *			to them one after the other
 *   conn_narrow.c	a run's own rules from its PROXY v2 header, and
 *			the policy they narrow
 *   upool.c		(upool.h) idle upstreams kept after their client
 *			connection, for the same run's next: a pool that
 *			knows no connection (conn_pool.c, above the core,
 *			puts through the table's ct_let_go and takes)
 *   ident.c		(ident.h) a tls: client's identity's limits,
 *			counted; proxy_policy.c (proxy_policy.h) its
 *			rule's policy
 *
 * and the protocols, each above the core and those it builds on:
 *
 *   conn_ssh.c		a tunnel's SSH key exchange, watched for cordon
 *			run's agent (the table's ct_tunnel)
 *   conn_http.c	HTTP: request and response heads, bodies,
 *			keep-alive
 *   conn_tls.c		TLS inspection, then HTTP inside (HTTPS); an
 *			inspected upstream from the pool
 *   conn_pump.c	a tunnel of a client splice(2) cannot carry (its
 *			bytes are TLS records: a tls: listener's)
 *   conn_tunnel.c	CONNECT's answer; a tunnel's first bytes
 *			(ClientHello), then the relay, the pump or
 *			inspection
 *   conn_socks.c	the SOCKS5 greeting, request and replies
 *   conn_capture.c	what a sandbox's capture sends: its resolver's
 *			names, connections taken on their way out
 *   conn_mtls.c	a tls: listener's handshake, the client's identity
 *   conn_accept.c	accept, PROXY v2, the first byte; the tables
 */
#ifndef CORDON_CONN_H
#define CORDON_CONN_H

#include <sys/queue.h>
#include <sys/time.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/x509.h>

#include "lib/addr.h"
#include "lib/host.h"
#include "policies/policy.h"
#include "proxy/conn_parts.h"
#include "proxy/proxy.h"

struct bufferevent;
struct event;
struct relay;

/*
 * Where a connection is.  The callbacks in conn.c hand each event to the
 * handlers of the state in c_table (conn_accept.c fills it): the core's
 * own for CS_ASKING to CS_CONNECTING, CS_TUNNEL and CS_CLOSING on, a
 * protocol's for the others.
 */
enum conn_state {
	CS_PP2,			/* waiting for a sandbox's PROXY v2 header */
	CS_SNIFF,		/* nothing read yet */
	CS_HTTP_HEAD,		/* reading a request head */
	CS_SOCKS_GREETING,
	CS_SOCKS_REQUEST,
	CS_ASKING,		/* no rule: waiting for the harness's answer */
	CS_RESOLVING,
	CS_CONNECTING,
	CS_PEEK,		/* tunnel answered: judging the first bytes */
	CS_TUNNEL,		/* the relay has both sockets */
	CS_TLS_SETUP,		/* inspected: a leaf and the upstream's TLS */
	CS_TLS_ACCEPT,		/* inspected: the sandbox's handshake */
	CS_FORWARD,		/* HTTP: request out, answer back */
	CS_CLOSING,		/* writing a last answer, then close */
	CS_ABORTING,		/* the same, cut short: no close_notify */
	CS_FLUSHING,		/* TLS: the last records, then close */
	CS_MTLS,		/* a tls: listener's handshake (conn_mtls.c) */
	CS_PUMP,		/* a tunnel of a TLS client (conn_pump.c) */
	CS_COUNT
};

enum conn_proto {
	PROTO_NONE,
	PROTO_HTTP,
	PROTO_CONNECT,
	PROTO_SOCKS5,
	PROTO_HTTPS,		/* a request inside an inspected tunnel */
	PROTO_CAPTURE,		/* a captured connection's tunnel */
	PROTO_DNS,		/* a name the sandbox's resolver asks about */
	PROTO_COUNT
};

/*
 * Why a request is refused, or failed, as each protocol says it in its
 * own way (conn_ops.co_refuse): HTTP by status, SOCKS5 by reply code.
 */
enum conn_refusal {
	CONN_DENIED,		/* by the policy: 403, ruleset */
	CONN_UNAVAILABLE,	/* the egress log is not written: 503 */
	CONN_UNREACHABLE,	/* no address, a bad upstream: 502, host */
	CONN_REFUSED,		/* the upstream refused: 502, refused */
	CONN_TIMEDOUT,		/* the upstream took too long: 504, TTL */
	CONN_LIMITED		/* the identity's limit (ident.c): 429, */
				/* general failure */
};

/* The current decision's one log line. */
enum conn_record {
	CR_NONE,		/* no decision since the last was logged */
	CR_OPEN,		/* begun (conn_begin): conn_log() writes it */
	CR_LOGGED
};

/* What c_up is to the request under way. */
enum conn_up {
	CU_NEW,			/* opened for it, or none */
	CU_KEPT,		/* kept from the last request, idle */
	CU_REUSED		/* kept, and carrying this request */
};

/*
 * Resolving and connecting (conn_dial.c): the addresses checked, the
 * one being tried, and the one c_upfd reaches, which a kept upstream is
 * reused for (cd_up), with the host and port it was decided for (a kept
 * one's: cd_kept_host, cd_kept_port).
 */
struct conn_dial {
	struct dns_query	*cd_query;
	struct addr		 cd_addrs[DNS_MAX_ADDRS];
	size_t			 cd_naddrs;
	size_t			 cd_next;	/* the next to try */
	struct event		*cd_ev;		/* the connect's own */
	int			 cd_error;	/* the last one's errno */
	struct addr		 cd_upaddr;	/* what c_upfd reaches */
	enum conn_up		 cd_up;
	char			 cd_kept_host[HOST_NAME_MAX_LEN + 1];
	int			 cd_kept_port;
};

struct conn;

/*
 * What a state does with what happens on the client's and the
 * upstream's bufferevents.  A state's handlers are looked up at each
 * event rather than set on the bufferevents as the state changes (as
 * httpd does): a state is often entered with its bytes read already
 * (after the PROXY v2 header, a connect, a handshake, a kept-alive
 * answer), so the code that changes it calls conn_process() at once.
 * NULL: nothing, but for on_gone (conn_gone), on_up_read
 * (conn_up_unasked) and on_up_gone (conn_up_gone).  A timeout on the
 * client's side is conn_too_slow() in every state, which logs a client
 * that sent no whole request as proto.
 */
struct conn_handlers {
	void	(*on_read)(struct conn *);
	void	(*on_write)(struct conn *);	/* room to write again */
	void	(*on_connected)(struct conn *);	/* a TLS handshake done */
	void	(*on_gone)(struct conn *, short);
	void	(*on_up_read)(struct conn *);
	void	(*on_up_write)(struct conn *);
	void	(*on_up_gone)(struct conn *, short);
	enum conn_proto	 proto;			/* what it was reading */
};

/*
 * A protocol's operations, the steps of a decision that the core asks
 * of it (chosen by conn_begin(), with the decision's protocol).
 */
struct conn_ops {
	const char	*co_name;		/* in the log: "proto" */
	/* A request's target is read: decide it (conn_dial_decide, mostly). */
	void	(*co_request)(struct conn *);
	/* Allowed at once: false when it answered itself.  NULL: dial. */
	bool	(*co_allowed)(struct conn *);
	/* The addresses are checked: true when it has an upstream. */
	bool	(*co_dial)(struct conn *);
	/* The upstream is connected (c_up made). */
	void	(*co_connected)(struct conn *);
	/* Refused or failed: say so, what and how to fix it, and close. */
	void	(*co_refuse)(struct conn *, enum conn_refusal, const char *,
		    const char *);
};

/*
 * Every state's handlers and every protocol's operations; how an allowed
 * target is reached: NULL is conn_dial_connect() (resolve, check, connect), a
 * test's makes c_up another way and calls co_connected; and who else
 * hears of a decision logged, and of a connection gone, and holds the
 * live rules of a connection's run and says whether it asks about a
 * name (the run channel: watch.c), and watches a tunnel as it starts,
 * its relay made and what the upstream sent before given (conn_ssh.c),
 * or NULL.
 */
struct conn_table {
	struct conn_handlers	 ct_on[CS_COUNT];
	const struct conn_ops	*ct_ops[PROTO_COUNT];
	void			(*ct_dial)(struct conn *);
	void			(*ct_observe)(const struct conn *,
				    const struct egress *, const char *,
				    const char *);
	void			(*ct_gone)(const struct conn *);
	struct ppolicy		*(*ct_live)(const struct conn *);
	bool			(*ct_asks_name)(const struct conn *);
	void			(*ct_tunnel)(struct conn *, const void *,
				    size_t);
	void			(*ct_early)(struct conn *, const void *,
				    size_t);	/* a server's bytes before */
						/* the client's first */
	void			(*ct_let_go)(struct conn *); /* a kept */
						/* upstream: to the pool */
};

/*
 * One client, owned by px_conns.  It owns both bufferevents (or, in a
 * tunnel, the relay that has both sockets), its timers and everything
 * it points to but c_proxy; conn_free() alone frees it.
 */
struct conn {
	TAILQ_ENTRY(conn)	 c_entry;
	struct proxy		*c_proxy;
	const struct conn_table	*c_table;	/* conn_accept.c's */
	enum conn_state		 c_state;
	int			 c_fd;		/* the client */
	struct bufferevent	*c_bev;		/* on c_fd, until a tunnel */
	int			 c_upfd;	/* the upstream, or -1 */
	struct bufferevent	*c_up;		/* on c_upfd */
	struct relay		*c_relay;	/* a tunnel: has both sockets */
	struct event		*c_deadline;	/* for a whole head */
	struct event		*c_eof_ev;	/* the client's end, after */
	short			 c_eof_what;	/* the bytes before it */
	char			 c_client[ADDR_STRLEN + 8];
	char			*c_sandbox;	/* from the PROXY v2 header */
	struct listen_peer	 c_peer;	/* a Unix client's uid */
	char			*c_command;	/* the same: the command */
	char			*c_identity;	/* its certificate's (tls:) */
	struct ppolicy		*c_ident;	/* its rule's join (ident.c) */
	struct ident_hold	 c_ident_hold;	/* its key, a tunnel */
	bool			 c_report;	/* allowed by "report" */
	const char		*c_limit;	/* refused by this limit */
	char			*c_origin_uid;	/* PP2_TYPE_CORDON_ORIGIN's */
	bool			 c_mtls;	/* c_bev is TLS: no splice */
	bool			 c_pump_eof;	/* CS_PUMP: the client's end
						   passed on */

	/*
	 * The request being decided, and the decision.  c_judged is a mark
	 * beside the states: it tells a decision the policy made (whose
	 * refusal has a fix to offer) from one filled in for a request
	 * refused before (a bad head, a slow client), and both end in the
	 * same states.
	 */
	const struct conn_ops	*c_ops;		/* its protocol's */
	struct ppolicy		*c_policy;	/* what decided it */
	char			*c_method;
	char			 c_host[256];	/* as sent, any bytes */
	size_t			 c_hostlen;
	int			 c_port;
	struct decision		 c_dec;
	bool			 c_judged;	/* c_dec is the policy's */
	bool			 c_no_channel;	/* its run's is not open */
	struct event		*c_ask_ev;	/* the answer's deadline */

	/* The egress log record of the current decision. */
	enum conn_record	 c_record;
	char			 c_id[40];	/* pairs its open and end lines */
	bool			 c_early;	/* its open line is written */
	struct timeval		 c_start;
	char			 c_addrtext[ADDR_STRLEN + 8];	/* tried */
	int			 c_status;
	const char		*c_reason;
	char			*c_reason_buf;
	uint64_t		 c_up_bytes;
	uint64_t		 c_down_bytes;
	char			*c_path;	/* HTTP: without the query */
	char			*c_warning;
	char			*c_hint;	/* network.inspect's fix */
	const char		*c_credential;	/* pin_kind_names[]; NULL: */
						/* no request read */

	/* Each step's and protocol's own, above. */
	struct conn_narrow	 c_narrow;	/* the run's rules, if any */
	struct conn_cap		 c_cap;
	struct conn_dial	 c_dial;
	struct conn_http	 c_http;
	struct conn_inspect	 c_ins;
	struct ssh_peek		 c_ssh;		/* a tunnel's, watched */
};

/* conn.c */
struct conn	*conn_new(struct proxy *, struct bufferevent *, int,
		    const struct sockaddr *, const struct conn_table *,
		    enum conn_state);
void	 conn_free(struct conn *);
void	 conn_log(struct conn *);
void	 conn_egress(const struct conn *, struct egress *);
bool	 conn_log_ready(struct conn *);
bool	 conn_log_open(struct conn *);
bool	 conn_log_open_or_refuse(struct conn *);
char	*conn_log_unwritable(struct conn *);
void	 conn_reason(struct conn *, const char *);
void	 conn_up_reason(struct conn *, short);
void	 conn_drop_up(struct conn *);
void	 conn_up_let_go(struct conn *);
void	 conn_up_read(struct conn *, bool);
bool	 conn_up_bare(struct conn *);
void	 conn_finish(struct conn *);
void	 conn_abort(struct conn *);
void	 conn_close(struct conn *);
void	 conn_refuse(struct conn *, enum conn_refusal, const char *,
	    const char *);
void	 conn_deny(struct conn *);
void	 conn_fail(struct conn *, enum conn_refusal, const char *);
void	 conn_begin(struct conn *, enum conn_proto, const char *,
	    const char *, size_t, int);
void	 conn_arm_deadline(struct conn *);
void	 conn_ask_cancel(struct conn *);
void	 conn_peek(struct conn *);
void	 conn_process(struct conn *);
void	 conn_gone(struct conn *, short);
void	 conn_gone_quietly(struct conn *, short);
void	 conn_up_gone(struct conn *, short);
void	 conn_read_cb(struct bufferevent *, void *);
void	 conn_write_cb(struct bufferevent *, void *);
void	 conn_event_cb(struct bufferevent *, short, void *);
void	 conn_up_read_cb(struct bufferevent *, void *);
void	 conn_up_write_cb(struct bufferevent *, void *);
void	 conn_up_event_cb(struct bufferevent *, short, void *);

/* conn_dial.c */
void	 conn_dial_decide(struct conn *);
void	 conn_dial_connect(struct conn *);
void	 conn_dial_next(struct conn *);
bool	 conn_dial_check(struct conn *, const struct addr *, size_t);

/* conn_narrow.c */
struct ppolicy	*conn_narrow_policy(struct conn_narrow *, struct ppolicy *,
		    struct ppolicy *);
int		 conn_narrow_load(struct conn_narrow *, const char *, char *,
		    char **);
void		 conn_narrow_clear(struct conn_narrow *);

#endif
