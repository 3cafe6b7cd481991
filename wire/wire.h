/*
 * wire.h: the bytes of the protocols the proxy speaks, parsed and
 * written, a library with no socket and no process in it: HTTP/1.x heads
 * and bodies (http*.c), SOCKS5 (socks5.c), a TLS ClientHello's server
 * name (tls_peek.c), an SSH server's host key (ssh_peek.c).  Each reads
 * a buffer and is unit-tested and fuzzed on buffers.
 */
#ifndef CORDON_WIRE_H
#define CORDON_WIRE_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/policy.h"

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
	bool		 hr_websocket;	/* asks to upgrade to WebSocket */
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
	bool		 hs_websocket;	/* 101, upgraded to WebSocket */
};

/* What the framing headers of a head say. */
struct http_framing {
	bool		 hf_te;		/* Transfer-Encoding present */
	bool		 hf_chunked;	/* ... and chunked is its last coding */
	bool		 hf_unknown;	/* ... one cordon does not know */
	bool		 hf_notlast;	/* ... chunked, then another */
	bool		 hf_cl;		/* Content-Length present */
	uint64_t	 hf_length;
	bool		 hf_close;	/* Connection: close */
	bool		 hf_keepalive;	/* Connection: keep-alive */
	bool		 hf_upgrade;	/* Connection: upgrade */
	bool		 hf_websocket;	/* Upgrade: websocket */
	int		 hf_hosts;	/* Host header lines */
};

int	 http_response_parse(const char *, size_t, const char *,
	    struct http_response *, size_t *, char **);
void	 http_response_clear(struct http_response *);
bool	 http_vbyte(unsigned char);
bool	 http_ws(char);
int	 http_hex(unsigned char);
bool	 http_eq(const char *, size_t, const char *);
bool	 http_name_is(const char *, const char *);
bool	 http_list_next(const char **, const char **, size_t *);
void	 http_cause(char **, bool, const char *, const char *, size_t,
	    const char *);
int	 http_head_find(const char *, size_t, bool, size_t *, size_t *, int *,
	    char **);
int	 http_version(const char *, size_t, bool, int *, int *, char **);
int	 http_fields_parse(const char *, const char *, bool,
	    struct http_header **, size_t *, int *, char **);
int	 http_framing(const struct http_header *, size_t, bool,
	    struct http_framing *, char **);
void	 http_headers_free(struct http_header *, size_t);

/*
 * http_request.c: a request's head, as a forward proxy is sent it or, in
 * an inspected TLS connection, as an origin server would be.
 */
int	 http_request_parse(const char *, size_t, struct http_request *,
	    size_t *, int *, char **);
int	 http_request_parse_origin(const char *, size_t, int,
	    struct http_request *, size_t *, int *, char **);
void	 http_request_clear(struct http_request *);

/*
 * http_target.c: the host, port and path of a request, from its target
 * (or, inside an inspected TLS connection, its Host header).
 */
int	 http_target_parse(struct http_request *, char **);
int	 http_target_origin(struct http_request *, int, char **);

/*
 * http_out.c: the heads sent on, without hop-by-hop headers and with a
 * Connection header of cordon's own.
 */
char	*http_out_request_head(const struct http_request *, bool, size_t *);
char	*http_out_response_head(const struct http_response *, bool, size_t *);

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

#endif
