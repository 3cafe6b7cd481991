/*
 * proxy.h: the egress proxy.  One block per source file, in the order the
 * files are read: the pure parsers first (http.c, http_body.c,
 * http_out.c, socks5.c, tls_peek.c, ssh_peek.c), which touch no socket and are
 * unit-tested and fuzzed on buffers.
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

#include "policy.h"
#include "pp2.h"

/*
 * http.c: strict HTTP/1.x heads (RFC 9112).
 *
 * A request or response head is parsed from a buffer that holds at least
 * the head; the parser never looks past it.  Anything a strict reading
 * refuses (bare CR, obs-fold, bad token characters, Content-Length with
 * Transfer-Encoding, differing Content-Length values, a Transfer-Encoding
 * whose last coding is not chunked, a head over HTTP_HEAD_MAX) is an
 * error with a status to answer and a reason, never a guess.
 */
#define HTTP_HEAD_MAX		(64 * 1024)	/* request line + headers */
#define HTTP_HEADERS_MAX	100

enum http_parse {
	HTTP_PARSE_OK,		/* a whole head; *used is its length */
	HTTP_PARSE_MORE,	/* no end of head yet, and under the limit */
	HTTP_PARSE_ERROR	/* *status and *cause say why */
};

enum http_body_kind {
	HTTP_BODY_NONE,
	HTTP_BODY_LENGTH,	/* Content-Length bytes */
	HTTP_BODY_CHUNKED,
	HTTP_BODY_CLOSE		/* responses only: until the upstream closes */
};

struct http_header {
	char		*hh_name;	/* as sent */
	char		*hh_value;	/* without surrounding white space */
};

struct http_request {
	char		*hr_method;	/* "GET", "CONNECT", ... */
	char		*hr_target;	/* the request target as sent */
	int		 hr_minor;	/* HTTP/1.hr_minor: 0 or 1 */
	bool		 hr_connect;	/* CONNECT host:port */
	char		*hr_host;	/* from the target; IPv6 without [] */
	size_t		 hr_hostlen;	/* hr_host may hold any byte but NUL */
	int		 hr_port;	/* from the target, or 80 */
	int		 hr_defport;	/* the scheme's: 80, or 443 inspected */
	char		*hr_path;	/* path?query or "/"; CONNECT: NULL */
	struct http_header *hr_headers;	/* in order, as sent */
	size_t		 hr_nheaders;
	enum http_body_kind hr_body;
	uint64_t	 hr_length;	/* HTTP_BODY_LENGTH */
	bool		 hr_keepalive;	/* the client may send another */
};

struct http_response {
	int		 hs_status;
	int		 hs_minor;
	char		*hs_reason;
	struct http_header *hs_headers;
	size_t		 hs_nheaders;
	enum http_body_kind hs_body;
	uint64_t	 hs_length;
	bool		 hs_keepalive;	/* the upstream keeps the connection */
};

int	 http_request_parse(const char *, size_t, struct http_request *,
	    size_t *, int *, char **);
int	 http_origin_request_parse(const char *, size_t, int,
	    struct http_request *, size_t *, int *, char **);
void	 http_request_clear(struct http_request *);
int	 http_response_parse(const char *, size_t, const char *,
	    struct http_response *, size_t *, char **);
void	 http_response_clear(struct http_response *);
bool	 http_vbyte(unsigned char);
bool	 http_ws(char);
int	 http_hex(unsigned char);
bool	 http_eq(const char *, size_t, const char *);
bool	 http_name_is(const char *, const char *);
bool	 http_list_next(const char **, const char **, size_t *);

/*
 * http_out.c: the heads sent on, without hop-by-hop headers and with a
 * Connection header of cordon's own.
 */
char	*http_request_head(const struct http_request *, bool, size_t *);
char	*http_response_head(const struct http_response *, bool, size_t *);

/*
 * http_body.c: where a body ends.  Chunked and length-delimited bodies
 * are passed through unchanged; this only finds where they end.
 */
struct http_body {
	enum http_body_kind hb_kind;
	uint64_t	 hb_left;	/* bytes left in the body or chunk */
	int		 hb_state;	/* chunked parser state */
	size_t		 hb_linelen;	/* bytes of chunk line or trailers */
};

void	 http_body_init(struct http_body *, enum http_body_kind, uint64_t);
ssize_t	 http_body_scan(struct http_body *, const char *, size_t, bool *);
ssize_t	 http_body_part(struct http_body *, const char *, size_t, bool *,
	    bool *);

/*
 * http_path.c: the path of a request as network.inspect's rules see it,
 * or why it cannot be judged.
 */
int	 http_path_normalise(const char *, char **, char **);

/*
 * socks5.c: SOCKS5 (RFC 1928) greeting and request, and replies.
 */
#define SOCKS5_VERSION		0x05
#define SOCKS5_CMD_CONNECT	0x01
#define SOCKS5_CMD_BIND		0x02
#define SOCKS5_CMD_UDP		0x03
#define SOCKS5_ATYP_IPV4	0x01
#define SOCKS5_ATYP_NAME	0x03
#define SOCKS5_ATYP_IPV6	0x04
#define SOCKS5_REP_OK		0x00
#define SOCKS5_REP_FAILURE	0x01
#define SOCKS5_REP_RULESET	0x02	/* not allowed by ruleset */
#define SOCKS5_REP_NETWORK	0x03
#define SOCKS5_REP_HOST		0x04	/* host unreachable */
#define SOCKS5_REP_REFUSED	0x05
#define SOCKS5_REP_TTL		0x06
#define SOCKS5_REP_COMMAND	0x07	/* command not supported */
#define SOCKS5_REP_ATYP		0x08
#define SOCKS5_REPLY_MAX	22

enum socks5_parse {
	SOCKS5_PARSE_OK,
	SOCKS5_PARSE_MORE,
	SOCKS5_PARSE_ERROR
};

struct socks5_request {
	uint8_t		 sr_cmd;
	uint8_t		 sr_atyp;
	char		 sr_host[256];	/* name bytes as sent, or address text */
	size_t		 sr_hostlen;	/* a name may hold any byte, NUL too */
	uint16_t	 sr_port;
};

struct sockaddr;

int	 socks5_greeting_parse(const uint8_t *, size_t, size_t *, bool *,
	    char **);
int	 socks5_request_parse(const uint8_t *, size_t, size_t *,
	    struct socks5_request *, uint8_t *, char **);
size_t	 socks5_reply(uint8_t *, uint8_t, const struct sockaddr *);

/*
 * tls_peek.c: the server name of a TLS ClientHello, from peeked bytes.
 */
#define TLS_PEEK_MAX		(16 * 1024 + 5 * 4)

enum tls_peek {
	TLS_PEEK_MORE,		/* a ClientHello so far; need more bytes */
	TLS_PEEK_NOT_TLS,	/* not a TLS handshake record */
	TLS_PEEK_NO_SNI,	/* a whole ClientHello without server_name */
	TLS_PEEK_SNI,		/* *sni holds the host_name */
	TLS_PEEK_BAD		/* a malformed or oversized ClientHello */
};

int	 tls_peek_sni(const uint8_t *, size_t, char *, size_t, size_t *);

/*
 * ssh_peek.c: the host key and signature an SSH server's first key
 * exchange shows in clear, from the bytes it sends (a tunnel's, watched
 * for cordon run's agent: conn_ssh.c).
 */
#define SSH_PEEK_MAX		(64 * 1024)	/* bytes watched, at most */

enum ssh_peek_rc {
	SSH_PEEK_MORE = 0,	/* an SSH server so far; feed more */
	SSH_PEEK_FOUND,		/* sp_hostkey and sp_sig are set */
	SSH_PEEK_NONE		/* not an SSH server's first exchange */
};

struct ssh_peek {
	uint8_t		*sp_buf;	/* a part not parsed yet */
	size_t		 sp_len;
	size_t		 sp_off;
	size_t		 sp_seen;	/* bytes fed, up to SSH_PEEK_MAX */
	int		 sp_lines;	/* before the version line */
	bool		 sp_banner;	/* the version line is past */
	int		 sp_done;	/* enum ssh_peek_rc, once not MORE */
	uint8_t		*sp_hostkey;	/* K_S, as sent */
	size_t		 sp_hostkeylen;
	uint8_t		*sp_sig;	/* its signature of the session */
	size_t		 sp_siglen;
};

int	 ssh_peek_feed(struct ssh_peek *, const void *, size_t);
void	 ssh_peek_clear(struct ssh_peek *);

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
	uint64_t		 ps_accepted;		/* proxy_cmd.c */
	uint64_t		 ps_dns_failures;	/* conn_dial.c */
	uint64_t		 ps_reloads_ok;		/* proxy_cmd.c */
	uint64_t		 ps_reloads_failed;
	time_t			 ps_loaded;		/* the policy in force */
	uint64_t		 ps_log_refused;	/* conn.c: log failing */
	/* "sha256:" and the policy's digest (proxy_cmd.c) */
	char			 ps_digest[7 + 64 + 1];
};

/*
 * A phantom credential (cordon run's own proxy): the sandbox holds
 * ph_placeholder in the variable ph_env, or in the token file ph_file;
 * on inspected requests to a host ph_host matches, the proxy puts the
 * real value in the header ph_header: ph_format with it for %s, or, with
 * ph_user, "Basic " and the base64 of "ph_user:value".  Anywhere else the
 * placeholder is left as it is and a warning logged.  ph_value is wiped
 * when freed (phantoms_free).
 */
struct phantom {
	struct pitem		 ph_host;	/* a name or *.suffix */
	char			*ph_env;	/* NULL: from ph_file */
	char			*ph_file;	/* "~/.npmrc"; NULL: ph_env */
	char			*ph_header;
	char			*ph_format;	/* one "%s"; NULL: ph_user */
	char			*ph_user;	/* Basic; NULL: ph_format */
	char			*ph_placeholder;
	char			*ph_value;	/* the real value */
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

/* A policy and the connections deciding with it (it outlives a reload). */
struct ppolicy {
	struct policy		*pp_policy;
	unsigned int		 pp_refs;
};

struct conn;
struct metrics;
struct mtls;
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
	 * Before a connection no rule allows is refused: true if the answer
	 * will come through conn_answer() within px_ask_secs.
	 */
	bool	(*hk_ask)(struct conn *, const struct egress *, void *);
	/* The connection asked about went before its answer. */
	void	(*hk_ask_cancel)(struct conn *, void *);
	/* The last connection went, after proxy_drain(). */
	void	(*hk_drained)(void *);
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
	const struct proxy_hooks *px_hooks;	/* the program's; may be NULL */
	void			*px_hooks_arg;
	bool			 px_draining;	/* proxy_drain() was called */
	bool			 px_listening;	/* its listeners are up */
	struct metrics		*px_metrics;	/* NULL: not served */
	int			 px_ask_secs;	/* hk_ask's deadline */
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
struct ppolicy *ppolicy_new(struct policy *);
struct ppolicy *ppolicy_ref(struct ppolicy *);
void	 ppolicy_unref(struct ppolicy *);
void	 phantoms_free(struct phantom *, size_t);
const char *phantom_name(const struct phantom *);
void	 proxy_digest(const struct policy *, char *, size_t);

/* conn.c */
void	 conn_accept(struct proxy *, int, const struct sockaddr *,
	    socklen_t, bool);
void	 conn_accept_tls(struct proxy *, int, const struct sockaddr *);
void	 conn_close_all(struct proxy *);
void	 conn_answer(struct conn *, bool, const char *);
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
int	 phantom_apply(struct http_request *, const struct phantom *, size_t,
	    const char *, bool, char **);
char	*phantom_format(const struct phantom *, const char *);
int	 inspect_tls_init(struct proxy *, const char *, char **);
void	 inspect_tls_free(struct proxy *);
int	 inspect_setup(struct proxy *, const struct policy *, const char *,
	    char **);
void	 inspect_teardown(struct proxy *);

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
void		 scrub_warn(struct scrub *, char **);

/* listen.c */
void	 listen_note(struct proxy *, int);
bool	 listen_is_own(const struct proxy *, const struct addr *, int);
void	 listen_peer(int, struct listen_peer *);

/*
 * mtls.c: a tls: listener's context (--tls-cert, --tls-key, --client-ca,
 * --crl), read again on SIGHUP; the identity of a client's certificate;
 * why a handshake was refused, and how often that is written.
 */
#define MTLS_IDENTITY_MAX	255
#define MTLS_LINES_MAX		5	/* refusals written a second, a reason */

enum mtls_reason {
	MTLS_R_NO_CERT,
	MTLS_R_UNKNOWN_CA,
	MTLS_R_EXPIRED,
	MTLS_R_REVOKED,
	MTLS_R_NOT_YET_VALID,
	MTLS_R_INVALID,		/* any other verification error */
	MTLS_R_NO_IDENTITY,	/* verified, but names no usable identity */
	MTLS_R_HANDSHAKE,	/* not TLS, an old version, no shared cipher */
	MTLS_R_COUNT
};

struct mtls_files {
	const char		*mf_cert;
	const char		*mf_key;
	const char		*mf_ca;
	const char		*mf_crl;	/* NULL: none */
};

struct mtls {
	struct mtls_files	 mt_files;
	struct ssl_ctx_st	*mt_ctx;	/* replaced on reload */
	uint64_t		 mt_refused[MTLS_R_COUNT];
	uint64_t		 mt_quiet[MTLS_R_COUNT];	/* not written */
	time_t			 mt_second[MTLS_R_COUNT];
	unsigned int		 mt_lines[MTLS_R_COUNT];	/* in it */
};

struct ssl_st;
struct x509_st;

struct mtls	*mtls_new(const struct mtls_files *, char **);
int		 mtls_reload(struct mtls *, char **);
void		 mtls_free(struct mtls *);
struct ssl_st	*mtls_session(struct mtls *);
char		*mtls_identity(struct x509_st *);
enum mtls_reason mtls_why(struct ssl_st *, unsigned long, const char **);
const char	*mtls_failed_subject(struct ssl_st *);
const char	*mtls_label(enum mtls_reason);
const char	*mtls_words_of(enum mtls_reason);
const char	*mtls_hint(enum mtls_reason);
bool		 mtls_refusal(struct mtls *, enum mtls_reason, uint64_t *);

/* pwatch.c: --policy-watch, the folders of the policy's files. */
struct pwatch;

struct pwatch	*pwatch_new(struct event_base *, const char *const *, size_t,
		    void (*)(void *), void *, char **);
void		 pwatch_free(struct pwatch *);

/* metrics.c */
struct metrics;

struct metrics	*metrics_new(struct proxy *, int, char **);
void		 metrics_count(struct metrics *, const struct egress *);
void		 metrics_free(struct metrics *);

/* watch.c: a run's own channel, its preflight and its decisions. */
void	 watch_start(struct conn *);
void	 watch_observe(const struct conn *,
	    const struct egress *, const char *, const char *);
void	 watch_conn_gone(const struct conn *);
void	 watch_close_all(struct proxy *);

/* proxy_cmd.c */
int	 proxy_cmd(int, char **);

#endif
