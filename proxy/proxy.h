/*
 * proxy.h: the egress proxy.  One block per source file, in the order the
 * files are read; the protocols' bytes it parses are wire.h's.
 */
#ifndef CORDON_PROXY_H
#define CORDON_PROXY_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "policies/policy.h"
#include "proxy/ident.h"
#include "proxy/proxy_policy.h"
#include "wire/pp2.h"
#include "wire/wire.h"

/*
 * dns.c: names resolved with c-ares on the proxy's event loop.  Never
 * getaddrinfo(3) there: it blocks the loop.  --resolve pins come first.
 */
#define DNS_MAX_ADDRS		16

struct dns;
struct dns_query;
struct event_base;
struct addr;

/* Called once per query with the addresses, or n 0 and why set. */
typedef void	(*dns_cb)(const struct addr *, size_t, const char *, void *);

struct dns	*dns_new(struct event_base *, char **);
int		 dns_servers(struct dns *, const char *, char **);
int		 dns_pin(struct dns *, const char *, char **);
struct dns_query *dns_resolve(struct dns *, const char *, dns_cb, void *);
void		 dns_cancel(struct dns_query *);
void		 dns_free(struct dns *);

/*
 * conn.c: one client connection, from its first byte to its log line.
 */
struct bufferevent;
struct egress;
struct signer;
struct jsonl;
struct policy;

#define PROXY_MAX_CONNS		4096
#define PROXY_HEAD_SECS		30	/* a request head or handshake */
#define PROXY_CONNECT_SECS	10	/* each address tried */
#define PROXY_IDLE_SECS		300	/* nothing moved in a tunnel */
#define PROXY_BUFFER_MAX	(256 * 1024)	/* per direction, forwarding */
#define PROXY_TLS_READ		(128 * 1024)	/* inspected: per read, write */

/*
 * What --metrics shows beyond the logged decisions (metrics.c), each
 * counted where it happens.
 */
struct proxy_stats {
	uint64_t		 ps_accepted;		/* proxy_listen.c */
	uint64_t		 ps_dns_failures;	/* conn_dial.c */
	uint64_t		 ps_reloads_ok;		/* proxy_cmd.c */
	uint64_t		 ps_reloads_failed;
	time_t			 ps_loaded;		/* the policy in force */
	uint64_t		 ps_log_refused;	/* conn.c: log failing */
	uint64_t		 ps_reused;		/* conn_http.c: kept */
	uint64_t		 ps_pooled;		/* upool.c: of them, */
							/* from the pool */
	/* "sha256:" and the policy's digest (proxy_cmd.c) */
	char			 ps_digest[7 + 64 + 1];
};

/*
 * A phantom credential (cordon run's own proxy): the sandbox holds
 * ph_placeholder in the variable ph_env, or in the token file ph_file;
 * on inspected requests to a host ph_host matches, the proxy puts the
 * real value in the header ph_header: ph_format with it for %s, or, with
 * ph_user, "Basic " and the base64 of "ph_user:value".  A login's refresh
 * token goes in no header: in the member ph_member of the JSON body of a
 * POST to its token endpoint, ph_path (renew.c).  Anywhere else the
 * placeholder is left as it is and a warning logged.  A login's tokens
 * (ph_member set) are renewed by its token endpoint's answer: ph_value
 * becomes the new real value, the placeholder stays; a JWT's placeholder
 * (ph_jwt: the token's header and claims, a random signature) becomes
 * the new token's, since the agent reads its claims, and the copy's
 * (ph_was) is still filled in: an agent that could not store the new
 * one goes on with it.  ph_value is wiped
 * when freed (proxy_phantoms_free).
 */
struct phantom {
	struct pitem		 ph_host;	/* a name or *.suffix */
	char			*ph_env;	/* NULL: from ph_file */
	char			*ph_file;	/* "~/.npmrc"; NULL: ph_env */
	char			*ph_header;	/* NULL: in ph_path's body */
	char			*ph_format;	/* one "%s"; NULL: ph_user */
	char			*ph_path;	/* a token endpoint; NULL: none */
	char			*ph_member;	/* OAuth's name: "access_token" */
	char			*ph_user;	/* Basic; NULL: ph_format */
	char			*ph_placeholder;
	char			*ph_was;	/* the copy's placeholder, once */
						/* a refresh replaced it; NULL */
	char			*ph_value;	/* the real value */
	bool			 ph_jwt;	/* both JWTs: only the */
						/* signature is secret */
};

#define PHANTOM_PREFIX		"cordon-phantom-"	/* + 32 hex digits */

/* listen.c: a TCP listener of the proxy, that no target may be. */
struct listen_addr {
	struct addr		 la_addr;	/* 0.0.0.0 or ::: any local */
	int			 la_port;
	bool			 la_any_family;	/* :: without IPV6_V6ONLY */
};

#define PROXY_MAX_OWN		32	/* listeners, metrics's too */

/*
 * listen.c: who is at the other end of a client's Unix socket, as the
 * kernel says (SO_PEERCRED, at connect(2)); a TCP client has no such
 * word, and lp_known is false.
 */
struct listen_peer {
	bool			 lp_known;
	uid_t			 lp_uid;
	gid_t			 lp_gid;
	pid_t			 lp_pid;
};


struct conn;
struct metrics;
struct mtls;
struct upool;
struct watch;

/*
 * What the program running a proxy hears from it and is asked by it
 * (cordon run's summary and --ask, cordon proxy's drain), each with
 * px_hooks_arg; any may be NULL.
 */
struct proxy_hooks {
	/*
	 * Each decision as it is logged; for a refusal by the policy, the
	 * fix in words and the network.allow entry that alone would allow
	 * it (either may be NULL).
	 */
	void	(*hk_observe)(const struct egress *, const char *,
		    const char *, void *);
	/*
	 * Before a connection no rule allows is refused: the seconds within
	 * which the answer will come through conn_dial_answer(), or 0: nobody is
	 * asked.
	 */
	int	(*hk_ask)(struct conn *, const struct egress *, void *);
	/* The connection asked about went before its answer. */
	void	(*hk_ask_cancel)(struct conn *, void *);
	/* The last connection went, after proxy_drain(). */
	void	(*hk_drained)(void *);
	/*
	 * A login's token endpoint answered a refresh inside: the phantoms
	 * of the login file named (ph_file) hold the new real values, which
	 * last expires_in seconds (-1: not said).
	 */
	void	(*hk_renewed)(const char *, const struct phantom *, size_t,
		    long long, void *);
};

struct proxy {
	struct event_base	*px_base;
	struct ppolicy		*px_policy;	/* replaced on reload */
	struct dns		*px_dns;
	struct jsonl		*px_log;
	TAILQ_HEAD(, conn)	 px_conns;
	size_t			 px_nconns;
	TAILQ_HEAD(, watch)	 px_watches;	/* runs' channels (watch.c) */
	size_t			 px_nwatches;
	size_t			 px_max;
	int			 px_head_secs;
	int			 px_connect_secs;
	int			 px_idle_secs;
	time_t			 px_warned;	/* rate limit for warnings */
	bool			 px_log_refusing; /* said: the log failed */
	char			 px_idpfx[17];	/* this process's, in log ids */
	uint64_t		 px_nextid;	/* the last decision's */
	const struct proxy_hooks *px_hooks;	/* the program's; may be NULL */
	void			*px_hooks_arg;
	bool			 px_draining;	/* proxy_drain() was called */
	bool			 px_listening;	/* its listeners are up */
	struct metrics		*px_metrics;	/* NULL: not served */
	bool			 px_ask_names;	/* a name without a rule resolves:
						   its connection is asked */
	bool			 px_ssh_watch;	/* tunnels' SSH key exchanges
						   are watched (conn_ssh.c) */
	struct proxy_stats	 px_stats;
	/* TLS inspection (network.inspect): NULL when nothing is inspected. */
	struct signer		*px_signer;
	struct ssl_ctx_st	*px_tls_srv;	/* inspect.c: to the sandbox */
	struct ssl_ctx_st	*px_tls_cli;	/* to upstreams, verified */
	struct phantom		*px_phantoms;	/* owned */
	size_t			 px_nphantoms;
	struct listen_addr	 px_own[PROXY_MAX_OWN];	/* listen_note() */
	size_t			 px_nown;
	struct mtls		*px_mtls;	/* tls: listeners'; NULL: none */
	struct ident_counts	 px_idents;	/* identities' limits */
	struct upool		*px_upool;	/* idle upstreams (upool.c) */
};

/*
 * proxy.c: a proxy made and ended the same way by `cordon proxy` and
 * `cordon run`; its counted policies and phantom credentials.
 */
void	 proxy_init(struct proxy *, struct event_base *, struct policy *);
int	 proxy_dns(struct proxy *, const char *, const char *const *, size_t,
	    char **);
void	 proxy_clear(struct proxy *);
bool	 proxy_observed(const struct proxy *);
void	 proxy_observe(struct proxy *, const struct egress *, const char *,
	    const char *);
bool	 proxy_drain(struct proxy *);
void	 proxy_phantoms_free(struct phantom *, size_t);
const char *proxy_phantom_name(const struct phantom *);
void	 proxy_digest(const struct policy *, char *, size_t);

/* conn.c */
void	 conn_accept(struct proxy *, int, const struct sockaddr *,
	    socklen_t, bool);
void	 conn_accept_tls(struct proxy *, int, const struct sockaddr *);
void	 conn_close_all(struct proxy *);
void	 conn_dial_answer(struct conn *, bool, const char *);
char	*conn_pattern(const struct conn *);

/*
 * conn_ssh.c: which tunnel carried an SSH session, for cordon run's
 * agent: where the proxy connected for it.
 */
struct conn_ssh_dest {
	char		 sd_host[HOST_NAME_MAX_LEN + 1];	/* decided on */
	int		 sd_port;
	char		 sd_addr[ADDR_STRLEN + 8];	/* connected to */
};

bool	 conn_ssh_find(struct proxy *, const char *, const uint8_t *, size_t,
	    const uint8_t *, size_t, struct conn_ssh_dest *);

/*
 * inspect.c: network.inspect's method and path rules and the phantom
 * credentials, on a parsed request; the TLS contexts of inspection.
 */
bool	 inspect_allows(const struct pinspect *, const struct http_request *,
	    int *, char **, char **);
int	 inspect_phantom_apply(struct http_request *, const struct phantom *,
	    size_t, const char *, bool, char **);
char	*inspect_phantom_format(const struct phantom *, const char *);
void	 inspect_phantom_identity(struct http_request *);
int	 inspect_tls_init(struct proxy *, const char *, char **);
void	 inspect_tls_free(struct proxy *);
int	 inspect_setup(struct proxy *, const struct policy *, const char *,
	    char **);
void	 inspect_teardown(struct proxy *);

/*
 * pin.c: account pinning, a host the run holds a credential for gets no
 * other; which credential a request carried, for the log.
 */
enum pin_kind {
	PIN_NONE,
	PIN_PHANTOM,		/* cordon's, filled in */
	PIN_FOREIGN		/* the command's own */
};
extern const char *const pin_kind_names[];

enum pin_kind	 pin_classify(const struct http_request *,
		    const struct phantom *, size_t, const struct policy *,
		    const char *, bool, char **);
const struct phantom *pin_pinned(const struct phantom *, size_t,
		    const struct policy *, const char *);
bool		 pin_allows(const struct http_request *,
		    const struct phantom *, size_t, const struct policy *,
		    const char *, bool, enum pin_kind *, const struct pitem **,
		    char **, char **);

/*
 * scrub.c: the real values of phantom credentials taken out of answers
 * on their way back to the sandbox.
 */
struct scrub;
struct evbuffer;

struct scrub	*scrub_new(const struct phantom *, size_t, bool);
void		 scrub_free(struct scrub *);
int		 scrub_head(struct scrub *, struct http_response *, char **,
		    char **);
ssize_t		 scrub_body(struct scrub *, struct http_body *,
		    struct evbuffer *, struct evbuffer *, size_t, bool *);
void		 scrub_end(struct scrub *, struct evbuffer *);
void		 scrub_stream(struct scrub *, struct evbuffer *,
		    struct evbuffer *);
void		 scrub_warn(struct scrub *, char **);

/*
 * renew.c: a login's token refresh from inside, read whole both ways:
 * the real refresh token put in the request's body, the new real tokens
 * of the answer kept outside.
 */
struct renew;

struct renew	*renew_new(struct proxy *, const struct http_request *,
		    const char *, bool);
void		 renew_free(struct renew *);
int		 renew_collect(struct renew *, bool, struct http_body *,
		    struct evbuffer *, bool *);
void		 renew_request(struct renew *, struct http_request *);
int		 renew_head(struct renew *, const struct http_response *,
		    char **, char **);
int		 renew_answer(struct renew *, struct http_response *, char **,
		    char **);
struct evbuffer	*renew_body(struct renew *, bool);

/* listen.c */
void	 listen_note(struct proxy *, int);
bool	 listen_is_own(const struct proxy *, const struct addr *, int);
void	 listen_peer(int, struct listen_peer *);

/* metrics.c */
struct metrics;

struct metrics_slot;

struct metrics	*metrics_new(struct proxy *, int, char **);
struct metrics	*metrics_attach(struct proxy *, struct metrics_slot *, size_t);
struct metrics_slot *metrics_slots_new(size_t);
void		 metrics_slots_free(struct metrics_slot *, size_t);
struct metrics	*metrics_serve(struct event_base *, int,
		    struct metrics_slot *, size_t, char **);
void		 metrics_retire(struct metrics_slot *, size_t,
		    struct metrics *, bool);
void		 metrics_draining(struct metrics *);
pid_t		 metrics_slot_pid(struct metrics_slot *, size_t);
void		 metrics_sync(struct metrics *);
void		 metrics_count(struct metrics *, const struct egress *);
void		 metrics_free(struct metrics *);

/* watch_msg.c: what a run sends on its channel, read. */
#define WATCH_MSG_MAX		1024	/* a line */
#define WATCH_MSG_TEXT_MAX	300	/* a pattern, "*.NAME:PORT" */
#define WATCH_ASK_ID_MAX	23
#define WATCH_ASK_SECS_MAX	3600	/* as cordon run --ask-secs */

enum watch_msg_kind {
	WM_END,
	WM_ASK,
	WM_ALLOW,
	WM_DENY,
	WM_ANSWER
};

enum watch_msg_decision {
	WMD_ALLOW_ONCE,
	WMD_ALLOW_RUN,
	WMD_DENY
};

struct watch_msg {
	enum watch_msg_kind	 wm_kind;
	int			 wm_secs;	/* WM_ASK */
	long long		 wm_n;		/* WM_ALLOW, WM_DENY */
	enum watch_msg_decision	 wm_decision;	/* WM_ANSWER */
	char			 wm_text[WATCH_MSG_TEXT_MAX + 1]; /* P, ID */
};

int	 watch_msg_parse(const char *, size_t, struct watch_msg *, char **);

/* watch.c: a run's own channel, its preflight and its decisions. */
void	 watch_start(struct conn *);
void	 watch_observe(const struct conn *,
	    const struct egress *, const char *, const char *);
void	 watch_conn_gone(const struct conn *);
struct ppolicy *watch_live(const struct conn *);
bool	 watch_missing(const struct conn *);
#define WATCH_MISSING	"the run has a harness (--control, --ask), and its " \
			"channel is not open on this proxy (it restarted, or " \
			"another replica holds the channel: balance by " \
			"source); its live rules cannot be applied here, so " \
			"its connections are refused until it reopens it"
bool	 watch_asks_name(const struct conn *);
int	 watch_ask(struct conn *, const struct egress *, void *);
void	 watch_ask_cancel(struct conn *, void *);
void	 watch_close_all(struct proxy *);

#endif
