/*
 * httpd.c: a small HTTP/1.1 origin server, the far end of the proxy's
 * tests and benchmarks.
 *
 *   httpd --listen EP [--log FILE [--log-header NAME]] [--timeout SECS]
 *	 [--tls-cert FILE --tls-key FILE]
 *	Listens on EP (tcp:127.0.0.1:PORT, tcp:[::1]:PORT or unix:PATH),
 *	prints "listening" once it does and serves until killed.  With
 *	--log, appends one line per request head it parsed, before
 *	answering: method, target and Host (or "-"), bytes outside
 *	printable ASCII written as \xHH; with --log-header NAME, then
 *	" NAME=VALUE" (the first such header, or "-").  A connection idle, or not
 *	reading, for SECS seconds (default 60) is closed.
 *
 * With --tls-cert and --tls-key (both or neither: PEM files, the cert
 * file holding the whole chain, leaf first) every connection is TLS
 * (1.2 or later): the server handshake first, then everything below
 * over it.  ALPN "http/1.1" is accepted when offered, nothing else.  A
 * failed handshake closes that connection, logged (with --log) as
 * "tls-handshake-failed REASON".  The log line of a request over TLS
 * ends in " alpn=PROTO sni=NAME" ("-" for none).  /close/N ends with a
 * close_notify, as does any TLS connection closed without an error.
 *
 * What it answers, whatever the method (HEAD gets the head alone):
 *
 *   /		200, "hello\n" with a Content-Length
 *   /bytes/N	200, N zero bytes with a Content-Length (N up to 2^40)
 *   /chunked/N	200, N zero bytes in chunked encoding (close-delimited
 *		to an HTTP/1.0 client, which cannot read chunks)
 *   /close/N	200, N zero bytes with no length: the end of the body is
 *		the end of the connection
 *   /text/KIND/N
 *		200, N bytes of text (the line "abcdefghijklmnopqrstuvwxyz
 *		0123456789" over and over, as `yes LINE | head -c N` makes
 *		it), framed as KIND says: "length" (a Content-Length),
 *		"chunked" (chunks of 4000 bytes), "ext" (chunks of 4000
 *		bytes, each size line with chunk extensions, a quoted one
 *		among them, and two trailer fields after the last chunk,
 *		announced in a Trailer header), "close" (no length: ended
 *		by the end of the connection, with close_notify over TLS)
 *		or "bare" (the same, but over TLS with no close_notify: a
 *		bare TCP close, as many servers end such answers).  To an
 *		HTTP/1.0 client "chunked" and "ext" are close-delimited.
 *   /echo	200, a body made of the request head exactly as it arrived
 *		(request line, header lines and the empty line) followed by
 *		the request body, de-chunked if it came chunked
 *   /headers	200, each request header line back as a response header
 *		"X-Echo: LINE", and the request head as the body in chunks
 *		of 7 bytes, so that a value is cut across chunks (close-
 *		delimited to an HTTP/1.0 client)
 *   /gzip	200, "hello\n" gzipped, with "Content-Encoding: gzip"
 *		whatever the request accepts
 *   /status/N	status N (200 to 599), empty body
 *   /slow/MS	waits MS milliseconds, then 200 "slow\n"
 *   /bad/KIND	a head that does not parse, holding the value of the
 *		request's Authorization header (empty without one), then
 *		the connection closes: KIND status puts it where the
 *		status code belongs ("HTTP/1.1 VALUE"), field as a header
 *		line with no ':', length as the Content-Length
 *   else	404
 *
 * The query string is ignored; an absolute-form target is served by its
 * path.  Connections persist as HTTP/1.1 says: by default in 1.1 unless
 * "Connection: close", in 1.0 only with "Connection: keep-alive".  A
 * request body is read by Content-Length or chunked (with "100 Continue"
 * sent when asked for), and requests may be pipelined.  A head that does
 * not parse gets 400 and the connection closes.
 *
 * Test code: one thread per connection, blocking sockets, no event loop.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define HEAD_MAX	(64 * 1024)	/* a request head; a chunk-size line */
#define ZEROS_LEN	(256 * 1024)	/* bytes per send of a large body */
#define ECHO_MAX	(64 * 1024 * 1024) /* request body /echo keeps */
#define BODY_MAX	(1ULL << 40)	/* N of /bytes/N and friends */
#define SLOW_MAX	600000		/* ms, for /slow/MS */
#define LINGER_MAX	(1024 * 1024)	/* bytes drained before a close */
#define TLS_OUT		(16 * 1024)	/* small writes gathered per record */
#define TLS_WRITE_MAX	(64 * 1024)	/* bytes per SSL_write of a body */

enum route {
	ROUTE_HELLO,
	ROUTE_BYTES,
	ROUTE_CHUNKED,
	ROUTE_CLOSE,
	ROUTE_ECHO,
	ROUTE_HEADERS,
	ROUTE_GZIP,
	ROUTE_STATUS,
	ROUTE_SLOW,
	ROUTE_BAD_STATUS,
	ROUTE_BAD_FIELD,
	ROUTE_BAD_LENGTH,
	ROUTE_TEXT,
	ROUTE_NONE
};

/* How /text/KIND/N frames its body. */
enum text_kind {
	TEXT_LENGTH,
	TEXT_CHUNKED,
	TEXT_EXT,
	TEXT_CLOSE,
	TEXT_BARE
};

#define TEXT_LINE	"abcdefghijklmnopqrstuvwxyz0123456789\n"
#define TEXT_CHUNK	4000		/* bytes per chunk of /text/ */

/*
 * A connection: its socket, its TLS session when there is one (c_out
 * then gathers small writes into one record), and what was read but not
 * used yet.
 */
struct conn {
	int		 c_fd;
	SSL		*c_ssl;
	bool		 c_failed;	/* a TLS error: no close_notify */
	char		 c_out[TLS_OUT];
	size_t		 c_off;		/* first unused byte in c_buf */
	size_t		 c_len;		/* end of what was read */
	char		 c_buf[HEAD_MAX];
};

/* One parsed request head; the strings point into r_work. */
struct req {
	char		*r_raw;		/* the head as received */
	size_t		 r_rawlen;
	char		*r_work;	/* a copy, cut into strings */
	const char	*r_method;
	const char	*r_target;
	const char	*r_host;	/* the first Host, or NULL */
	const char	*r_logged;	/* the first --log-header, or NULL */
	int		 r_minor;	/* HTTP/1.r_minor */
	bool		 r_close;	/* the client asked to close */
	bool		 r_keepalive;	/* the client asked to keep it */
	bool		 r_te;		/* a Transfer-Encoding was seen */
	bool		 r_chunked;	/* ... and its last coding is chunked */
	bool		 r_haslen;
	uint64_t	 r_length;	/* Content-Length */
	bool		 r_continue;	/* Expect: 100-continue */
};

/* A growing buffer, for the body /echo sends back. */
struct sink {
	char		*s_data;
	size_t		 s_len;
	size_t		 s_cap;
};

static struct sockaddr_storage	 listen_addr;
static socklen_t		 listen_len;
static int			 log_fd = -1;
static const char		*log_header;	/* --log-header */
static int			 opt_timeout = 60;
static const char		 zeros[ZEROS_LEN];
static SSL_CTX			*tls_ctx;

static void	usage(void) __attribute__((noreturn));

static void
usage(void)
{
	fprintf(stderr, "usage: httpd --listen EP [--log FILE [--log-header NAME]] "
	    "[--timeout SECS]\n\t[--tls-cert FILE --tls-key FILE]\n");
	exit(2);
}

static void	die(const char *) __attribute__((noreturn));

static void
die(const char *what)
{
	fprintf(stderr, "httpd: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Fills listen_addr from tcp:HOST:PORT, tcp:[V6]:PORT or unix:PATH. */
static void
parse_ep(const char *text)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)&listen_addr;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&listen_addr;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&listen_addr;
	char			 host[64], *end;
	const char		*colon;
	unsigned long		 port;

	memset(&listen_addr, 0, sizeof(listen_addr));
	if (strncmp(text, "unix:", 5) == 0) {
		if (strlen(text + 5) >= sizeof(sun->sun_path))
			goto bad;
		sun->sun_family = AF_UNIX;
		strcpy(sun->sun_path, text + 5);
		listen_len = sizeof(*sun);
		return;
	}
	if (strncmp(text, "tcp:", 4) != 0 ||
	    (colon = strrchr(text + 4, ':')) == NULL ||
	    (size_t)(colon - text - 4) >= sizeof(host))
		goto bad;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || errno != 0 || port > 65535)
		goto bad;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - text - 4),
	    text + 4);
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		listen_len = sizeof(*sin);
		return;
	}
	if (host[0] != '[' || host[strlen(host) - 1] != ']')
		goto bad;
	host[strlen(host) - 1] = '\0';
	if (inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) != 1)
		goto bad;
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons((uint16_t)port);
	listen_len = sizeof(*sin6);
	return;
bad:
	fprintf(stderr, "httpd: bad endpoint %s\n", text);
	exit(2);
}

/*
 * Sends every byte the vector holds (it is consumed on the way); returns
 * 0, or -1 when the peer is gone or stopped reading for the timeout.
 */
static int
send_iov(int fd, struct iovec *iov, int n)
{
	struct msghdr	 msg;
	ssize_t		 done;

	while (n > 0) {
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.msg_iovlen = (size_t)n;
		if ((done = sendmsg(fd, &msg, MSG_NOSIGNAL)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		while (n > 0 && (size_t)done >= iov->iov_len) {
			done -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + done;
			iov->iov_len -= (size_t)done;
		}
	}
	return 0;
}

/* Writes all of buf over TLS; returns 0 or -1 (c_failed then set). */
static int
tls_write(struct conn *c, const char *buf, size_t len)
{
	size_t	 take;
	int	 n;

	while (len > 0) {
		take = len < TLS_WRITE_MAX ? len : TLS_WRITE_MAX;
		ERR_clear_error();
		if ((n = SSL_write(c->c_ssl, buf, (int)take)) <= 0) {
			if (SSL_get_error(c->c_ssl, n) == SSL_ERROR_SYSCALL &&
			    errno == EINTR)
				continue;
			c->c_failed = true;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Sends every byte the vector holds, as send_iov does: straight to the
 * socket, or over TLS with pieces smaller than c_out gathered into one
 * record and larger ones written as they are.
 */
static int
conn_writev(struct conn *c, struct iovec *iov, int n)
{
	size_t	 used = 0;
	int	 i;

	if (c->c_ssl == NULL)
		return send_iov(c->c_fd, iov, n);
	for (i = 0; i < n; i++) {
		if (iov[i].iov_len <= sizeof(c->c_out) - used) {
			memcpy(c->c_out + used, iov[i].iov_base,
			    iov[i].iov_len);
			used += iov[i].iov_len;
			continue;
		}
		if (used > 0 && tls_write(c, c->c_out, used) == -1)
			return -1;
		used = 0;
		if (iov[i].iov_len <= sizeof(c->c_out)) {
			memcpy(c->c_out, iov[i].iov_base, iov[i].iov_len);
			used = iov[i].iov_len;
		} else if (tls_write(c, iov[i].iov_base, iov[i].iov_len) ==
		    -1)
			return -1;
	}
	return used > 0 ? tls_write(c, c->c_out, used) : 0;
}

static int
send_str(struct conn *c, const char *s)
{
	struct iovec	 iov;

	iov.iov_base = (void *)(uintptr_t)s;
	iov.iov_len = strlen(s);
	return conn_writev(c, &iov, 1);
}

/*
 * Reads up to len bytes from the socket or the TLS stream: returns the
 * count, 0 at the end (a close_notify, or a TCP end without one), -1 on
 * error or timeout.
 */
static ssize_t
conn_read(struct conn *c, char *buf, size_t len)
{
	ssize_t	 n;
	int	 r;

	if (c->c_ssl == NULL) {
		do {
			n = recv(c->c_fd, buf, len, 0);
		} while (n == -1 && errno == EINTR);
		return n;
	}
	for (;;) {
		ERR_clear_error();
		errno = 0;
		if ((r = SSL_read(c->c_ssl, buf, len > INT32_MAX ? INT32_MAX :
		    (int)len)) > 0)
			return r;
		switch (SSL_get_error(c->c_ssl, r)) {
		case SSL_ERROR_ZERO_RETURN:
			return 0;
		case SSL_ERROR_SYSCALL:
			if (errno == EINTR)
				continue;
			c->c_failed = true;
			return ERR_peek_error() == 0 && errno == 0 ? 0 : -1;
		default:
			c->c_failed = true;
			return -1;
		}
	}
}

/*
 * Reads more into c_buf, moving what is unused to its start first when
 * the end is reached.  Returns the count read, 0 at end of file, -1 on
 * error, timeout, or when the buffer is full of unused bytes.
 */
static ssize_t
conn_fill(struct conn *c)
{
	ssize_t	 n;

	if (c->c_off == c->c_len)
		c->c_off = c->c_len = 0;
	if (c->c_off > 0 && c->c_len > sizeof(c->c_buf) / 2) {
		memmove(c->c_buf, c->c_buf + c->c_off, c->c_len - c->c_off);
		c->c_len -= c->c_off;
		c->c_off = 0;
	}
	if (c->c_len == sizeof(c->c_buf))
		return -1;
	n = conn_read(c, c->c_buf + c->c_len, sizeof(c->c_buf) - c->c_len);
	if (n > 0)
		c->c_len += (size_t)n;
	return n;
}

/*
 * Finds a line in what was read, reading more as needed; on success sets
 * *line and *len to it (without the LF or CRLF), consumes it and returns
 * 0.  The line stays valid until the next read.  Returns -1 at end of
 * file, on error, or past HEAD_MAX bytes without a line end.
 */
static int
conn_line(struct conn *c, char **line, size_t *len)
{
	char	*p, *lf;

	for (;;) {
		p = c->c_buf + c->c_off;
		if ((lf = memchr(p, '\n', c->c_len - c->c_off)) != NULL) {
			*line = p;
			*len = (size_t)(lf - p);
			if (*len > 0 && p[*len - 1] == '\r')
				(*len)--;
			c->c_off += (size_t)(lf - p) + 1;
			return 0;
		}
		if (conn_fill(c) <= 0)
			return -1;
	}
}

/*
 * Reads n body bytes, into sink when it is not NULL, else nowhere.
 * Returns 0, or -1 when the connection ended first.
 */
static int
conn_body(struct conn *c, uint64_t n, struct sink *sink)
{
	size_t	 take;

	while (n > 0) {
		if (c->c_off == c->c_len && conn_fill(c) <= 0)
			return -1;
		take = c->c_len - c->c_off;
		if ((uint64_t)take > n)
			take = (size_t)n;
		if (sink != NULL) {
			memcpy(sink->s_data + sink->s_len, c->c_buf + c->c_off,
			    take);
			sink->s_len += take;
		}
		c->c_off += take;
		n -= take;
	}
	return 0;
}

/* Returns the end of the first empty line in p, or NULL. */
static char *
head_end(char *p, size_t len)
{
	char	*lf, *end = p + len;

	for (lf = memchr(p, '\n', len); lf != NULL;
	    lf = memchr(lf + 1, '\n', (size_t)(end - lf - 1))) {
		if (lf + 1 < end && lf[1] == '\n')
			return lf + 2;
		if (lf + 2 < end && lf[1] == '\r' && lf[2] == '\n')
			return lf + 3;
	}
	return NULL;
}

/*
 * Waits for a whole request head.  Returns its length (up to and with
 * the empty line) at c_buf + c_off, 0 when the connection ended cleanly
 * between requests, -1 on error or end of file inside a head, -2 when
 * the head passes HEAD_MAX.
 */
static ssize_t
conn_head(struct conn *c)
{
	char	*p, *end;
	size_t	 len;
	ssize_t	 n;

	for (;;) {
		/* Empty lines before a request line are allowed. */
		while (c->c_off < c->c_len) {
			p = c->c_buf + c->c_off;
			len = c->c_len - c->c_off;
			if (p[0] == '\n')
				c->c_off++;
			else if (len >= 2 && p[0] == '\r' && p[1] == '\n')
				c->c_off += 2;
			else
				break;
		}
		p = c->c_buf + c->c_off;
		len = c->c_len - c->c_off;
		if ((end = head_end(p, len)) != NULL)
			return end - p;
		if (len == sizeof(c->c_buf))
			return -2;
		if ((n = conn_fill(c)) <= 0)
			return n == 0 && len == 0 ? 0 : -1;
	}
}

/* Whether a comma-separated header value lists token (any case). */
static bool
has_token(const char *value, const char *token)
{
	size_t	 tlen = strlen(token), n;

	for (;;) {
		value += strspn(value, " \t,");
		if (*value == '\0')
			return false;
		n = strcspn(value, ",");
		while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t'))
			n--;
		if (n == tlen && strncasecmp(value, token, n) == 0)
			return true;
		value += strcspn(value, ",");
	}
}

/* Whether the last coding in a Transfer-Encoding value is chunked. */
static bool
last_is_chunked(const char *value)
{
	const char	*comma, *p;
	size_t		 n;

	p = (comma = strrchr(value, ',')) != NULL ? comma + 1 : value;
	p += strspn(p, " \t");
	n = strcspn(p, " \t;");
	return n == 7 && strncasecmp(p, "chunked", 7) == 0;
}

/* Parses a decimal number of 1 to 15 digits and nothing else. */
static int
parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t	 v = 0;
	size_t		 i;

	if (len == 0 || len > 15)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

static void
req_free(struct req *r)
{
	free(r->r_raw);
	free(r->r_work);
	memset(r, 0, sizeof(*r));
}

/*
 * Parses the head of len bytes at c_buf + c_off into r (which req_free
 * releases) and consumes it.  Returns the status to answer with when it
 * is not acceptable (400, 501, 505), else 0.
 */
static int
req_parse(struct conn *c, size_t len, struct req *r)
{
	char		*line, *next, *colon, *value, *sp, *end;
	const char	*version;
	uint64_t	 n;

	memset(r, 0, sizeof(*r));
	if ((r->r_raw = malloc(len)) == NULL ||
	    (r->r_work = malloc(len + 1)) == NULL)
		return 500;
	memcpy(r->r_raw, c->c_buf + c->c_off, len);
	memcpy(r->r_work, c->c_buf + c->c_off, len);
	r->r_work[len] = '\0';
	r->r_rawlen = len;
	c->c_off += len;
	/* Every line below ends in '\n', as long as no NUL cuts one short. */
	if (memchr(r->r_work, '\0', len) != NULL)
		return 400;

	/* The request line: METHOD SP TARGET SP HTTP/1.x */
	line = r->r_work;
	next = strchr(line, '\n');
	*next++ = '\0';
	if (next - line >= 2 && next[-2] == '\r')
		next[-2] = '\0';
	if ((sp = strchr(line, ' ')) == NULL || sp == line)
		return 400;
	*sp = '\0';
	r->r_method = line;
	r->r_target = sp + 1;
	if ((sp = strchr(sp + 1, ' ')) == NULL || sp == r->r_target)
		return 400;
	*sp = '\0';
	version = sp + 1;
	if (strncmp(version, "HTTP/", 5) != 0 || version[5] < '0' ||
	    version[5] > '9' || version[6] != '.' || version[7] < '0' ||
	    version[7] > '9' || version[8] != '\0')
		return 400;
	if (version[5] != '1')
		return 505;
	r->r_minor = version[7] - '0';

	/* Header lines, up to the empty one. */
	for (line = next; strcmp(line, "\r\n") != 0 && strcmp(line, "\n") != 0;
	    line = next) {
		next = strchr(line, '\n');
		*next++ = '\0';
		if (next - line >= 2 && next[-2] == '\r')
			next[-2] = '\0';
		/* No folded lines, no space before the colon. */
		if ((colon = strchr(line, ':')) == NULL || colon == line ||
		    strcspn(line, " \t") < (size_t)(colon - line))
			return 400;
		*colon = '\0';
		value = colon + 1 + strspn(colon + 1, " \t");
		end = value + strlen(value);
		while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (log_header != NULL && strcasecmp(line, log_header) == 0 &&
		    r->r_logged == NULL)
			r->r_logged = value;
		if (strcasecmp(line, "Host") == 0) {
			if (r->r_host == NULL)
				r->r_host = value;
		} else if (strcasecmp(line, "Connection") == 0) {
			if (has_token(value, "close"))
				r->r_close = true;
			if (has_token(value, "keep-alive"))
				r->r_keepalive = true;
		} else if (strcasecmp(line, "Transfer-Encoding") == 0) {
			r->r_te = true;
			r->r_chunked = last_is_chunked(value);
		} else if (strcasecmp(line, "Content-Length") == 0) {
			if (parse_u64(value, strlen(value), &n) == -1 ||
			    (r->r_haslen && n != r->r_length))
				return 400;
			r->r_haslen = true;
			r->r_length = n;
		} else if (strcasecmp(line, "Expect") == 0) {
			if (strcasecmp(value, "100-continue") == 0)
				r->r_continue = true;
		}
	}
	if (r->r_te && !r->r_chunked)
		return 501;
	return 0;
}

/* Appends text to out, \xHH for anything not printable ASCII. */
static char *
escape(char *out, const char *text)
{
	const unsigned char	*p;

	for (p = (const unsigned char *)text; *p != '\0'; p++) {
		if (*p > 0x20 && *p < 0x7f && *p != '\\')
			*out++ = (char)*p;
		else
			out += sprintf(out, "\\x%02x", *p);
	}
	return out;
}

/*
 * Appends "METHOD TARGET HOST\n" to the log, in one write; over TLS,
 * "METHOD TARGET HOST alpn=PROTO sni=NAME\n".
 */
static void
log_req(const struct conn *c, const struct req *r)
{
	const unsigned char	*alpn = NULL;
	const char		*sni = NULL;
	char			*line, *p, proto[256];
	unsigned int		 alpnlen = 0;
	size_t			 len;

	if (log_fd == -1)
		return;
	len = 4 * r->r_rawlen + 16 + (log_header != NULL ?
	    strlen(log_header) + 8 : 0);
	if (c->c_ssl != NULL) {
		SSL_get0_alpn_selected(c->c_ssl, &alpn, &alpnlen);
		snprintf(proto, sizeof(proto), "%.*s", (int)alpnlen,
		    alpn != NULL ? (const char *)alpn : "");
		sni = SSL_get_servername(c->c_ssl, TLSEXT_NAMETYPE_host_name);
		len += 4 * (strlen(proto) + (sni != NULL ? strlen(sni) : 0)) +
		    32;
	}
	if ((line = malloc(len)) == NULL)
		return;
	p = escape(line, r->r_method);
	*p++ = ' ';
	p = escape(p, r->r_target);
	*p++ = ' ';
	p = r->r_host != NULL ? escape(p, r->r_host) : stpcpy(p, "-");
	if (log_header != NULL) {
		*p++ = ' ';
		p = stpcpy(p, log_header);
		*p++ = '=';
		p = r->r_logged != NULL ? escape(p, r->r_logged) :
		    stpcpy(p, "-");
	}
	if (c->c_ssl != NULL) {
		p = stpcpy(p, " alpn=");
		p = proto[0] != '\0' ? escape(p, proto) : stpcpy(p, "-");
		p = stpcpy(p, " sni=");
		p = sni != NULL && sni[0] != '\0' ? escape(p, sni) :
		    stpcpy(p, "-");
	}
	*p++ = '\n';
	if (write(log_fd, line, (size_t)(p - line)) == -1)
		fprintf(stderr, "httpd: log: %s\n", strerror(errno));
	free(line);
}

/* Sets *n from the digits after prefix in path, which must end there. */
static bool
path_number(const char *path, size_t len, const char *prefix,
    uint64_t *n)
{
	size_t	 plen = strlen(prefix);

	return len > plen && strncmp(path, prefix, plen) == 0 &&
	    parse_u64(path + plen, len - plen, n) == 0;
}

/* Whether path (len bytes) is /text/KIND/N: sets *kind and *n. */
static bool
route_text(const char *path, size_t len, enum text_kind *kind, uint64_t *n)
{
	static const char *const kinds[] = {
		[TEXT_LENGTH] = "/text/length/",
		[TEXT_CHUNKED] = "/text/chunked/",
		[TEXT_EXT] = "/text/ext/",
		[TEXT_CLOSE] = "/text/close/",
		[TEXT_BARE] = "/text/bare/"
	};
	size_t	 i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (path_number(path, len, kinds[i], n) && *n <= BODY_MAX) {
			*kind = (enum text_kind)i;
			return true;
		}
	return false;
}

/*
 * Which answer a target gets, and its number (N, MS, the status); for
 * /text/, *kind.
 */
static enum route
route(const char *target, uint64_t *n, enum text_kind *kind)
{
	const char	*path = target;
	size_t		 len;

	/* An absolute-form target is served by its path. */
	if (strncasecmp(path, "http://", 7) == 0 ||
	    strncasecmp(path, "https://", 8) == 0) {
		path = strstr(path, "://") + 3;
		path += strcspn(path, "/?#");
		if (*path != '/')
			path = "/";
	}
	len = strcspn(path, "?#");
	*n = 0;
	if (len == 1 && path[0] == '/')
		return ROUTE_HELLO;
	if (len == 5 && strncmp(path, "/echo", 5) == 0)
		return ROUTE_ECHO;
	if (len == 8 && strncmp(path, "/headers", 8) == 0)
		return ROUTE_HEADERS;
	if (len == 5 && strncmp(path, "/gzip", 5) == 0)
		return ROUTE_GZIP;
	if (path_number(path, len, "/bytes/", n) && *n <= BODY_MAX)
		return ROUTE_BYTES;
	if (path_number(path, len, "/chunked/", n) && *n <= BODY_MAX)
		return ROUTE_CHUNKED;
	if (path_number(path, len, "/close/", n) && *n <= BODY_MAX)
		return ROUTE_CLOSE;
	if (path_number(path, len, "/status/", n) && len == 11 &&
	    *n >= 200 && *n <= 599)
		return ROUTE_STATUS;
	if (path_number(path, len, "/slow/", n) && *n <= SLOW_MAX)
		return ROUTE_SLOW;
	if (len == 11 && strncmp(path, "/bad/status", 11) == 0)
		return ROUTE_BAD_STATUS;
	if (len == 10 && strncmp(path, "/bad/field", 10) == 0)
		return ROUTE_BAD_FIELD;
	if (len == 11 && strncmp(path, "/bad/length", 11) == 0)
		return ROUTE_BAD_LENGTH;
	if (route_text(path, len, kind, n))
		return ROUTE_TEXT;
	return ROUTE_NONE;
}

static const char *
reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 407: return "Proxy Authentication Required";
	case 413: return "Content Too Large";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return "Other";
	}
}

/*
 * Formats a response head into buf: the status line, framing (length
 * >= 0 for a Content-Length, -1 for chunked, -2 for none) and the
 * Connection header a client with keep (persists) and minor (HTTP/1.x)
 * needs.
 */
static void
head_format(char *buf, size_t size, int status, int64_t length, bool keep,
    int minor)
{
	char	 framing[64];

	if (length >= 0)
		snprintf(framing, sizeof(framing), "Content-Length: %" PRId64
		    "\r\n", length);
	else if (length == -1)
		snprintf(framing, sizeof(framing),
		    "Transfer-Encoding: chunked\r\n");
	else
		framing[0] = '\0';
	snprintf(buf, size, "HTTP/1.1 %d %s\r\n%s%s\r\n", status,
	    reason(status), framing, !keep ? "Connection: close\r\n" :
	    minor == 0 ? "Connection: keep-alive\r\n" : "");
}

/* Sends a head and a body in memory; head_only for HEAD. */
static int
send_simple(struct conn *c, int status, const char *body, size_t len, bool keep,
    int minor, bool head_only)
{
	struct iovec	 iov[2];
	char		 head[256];

	/* No length with 204 (RFC 9110 8.6); 304 gets one, of nothing. */
	head_format(head, sizeof(head), status, status == 204 ? -2 :
	    (int64_t)len, keep, minor);
	iov[0].iov_base = head;
	iov[0].iov_len = strlen(head);
	iov[1].iov_base = (void *)(uintptr_t)body;
	iov[1].iov_len = head_only ? 0 : len;
	return conn_writev(c, iov, 2);
}

/* Sends n zero bytes after head (which may be ""), chunked or not. */
static int
send_zeros(struct conn *c, const char *head, uint64_t n, bool chunked)
{
	struct iovec	 iov[4];
	char		 size[32];
	size_t		 take;
	int		 i;

	i = 0;
	iov[i].iov_base = (void *)(uintptr_t)head;
	iov[i++].iov_len = strlen(head);
	while (n > 0) {
		take = n < ZEROS_LEN ? (size_t)n : ZEROS_LEN;
		if (chunked) {
			snprintf(size, sizeof(size), "%zx\r\n", take);
			iov[i].iov_base = size;
			iov[i++].iov_len = strlen(size);
		}
		iov[i].iov_base = (void *)(uintptr_t)zeros;
		iov[i++].iov_len = take;
		if (chunked) {
			iov[i].iov_base = (void *)(uintptr_t)"\r\n";
			iov[i++].iov_len = 2;
		}
		if (conn_writev(c, iov, i) == -1)
			return -1;
		n -= take;
		i = 0;
	}
	if (chunked) {
		iov[i].iov_base = (void *)(uintptr_t)"0\r\n\r\n";
		iov[i++].iov_len = 5;
	}
	return conn_writev(c, iov, i);
}

/*
 * /text/KIND/N: N bytes of TEXT_LINE over and over after head, framed as
 * kind says (chunked ones to an HTTP/1.1 client only: chunked is false
 * to a 1.0 one).  A bare ending leaves the TLS session without
 * close_notify.
 */
static int
send_text(struct conn *c, const char *head, uint64_t n, enum text_kind kind,
    bool chunked)
{
	struct iovec	 iov[3];
	char		 buf[TEXT_CHUNK], size[80];
	size_t		 take, i, linelen = strlen(TEXT_LINE);
	uint64_t	 off = 0;
	int		 k;

	if (send_str(c, head) == -1)
		return -1;
	while (off < n) {
		take = n - off < TEXT_CHUNK ? (size_t)(n - off) : TEXT_CHUNK;
		for (i = 0; i < take; i++)
			buf[i] = TEXT_LINE[(off + i) % linelen];
		k = 0;
		if (chunked) {
			/* Extensions: a token, a quoted string, a bare name. */
			snprintf(size, sizeof(size), kind == TEXT_EXT ?
			    "%zx ; n=%" PRIu64 ";q=\"a \\\"b\\\" ;c\";x\r\n" :
			    "%zx\r\n", take, off);
			iov[k].iov_base = size;
			iov[k++].iov_len = strlen(size);
		}
		iov[k].iov_base = buf;
		iov[k++].iov_len = take;
		if (chunked) {
			iov[k].iov_base = (void *)(uintptr_t)"\r\n";
			iov[k++].iov_len = 2;
		}
		if (conn_writev(c, iov, k) == -1)
			return -1;
		off += take;
	}
	if (chunked && send_str(c, kind == TEXT_EXT ? "0;last=yes\r\n"
	    "X-Sum: none\r\nX-Count: 2\r\n\r\n" : "0\r\n\r\n") == -1)
		return -1;
	/* The TLS session ends with no close_notify (conn_main). */
	if (kind == TEXT_BARE)
		c->c_failed = true;
	return 0;
}

/* The head of /text/KIND/N; *chunked says whether the body is. */
static void
text_head(char *head, size_t size, enum text_kind kind, uint64_t n,
    bool *keep, int minor, bool *chunked)
{
	*chunked = (kind == TEXT_CHUNKED || kind == TEXT_EXT) && minor > 0;
	if (kind == TEXT_CLOSE || kind == TEXT_BARE ||
	    ((kind == TEXT_CHUNKED || kind == TEXT_EXT) && !*chunked))
		*keep = false;
	head_format(head, size, 200, kind == TEXT_LENGTH ? (int64_t)n :
	    *chunked ? -1 : -2, *keep, minor);
	/* Before the empty line that ends the head. */
	if (*chunked && kind == TEXT_EXT)
		snprintf(head + strlen(head) - 2, size - strlen(head) + 2,
		    "Trailer: X-Sum, X-Count\r\n\r\n");
}

static int
sink_grow(struct sink *s, uint64_t more)
{
	char	*p;
	size_t	 cap;

	if (more > ECHO_MAX - s->s_len)
		return -1;
	if (s->s_len + more <= s->s_cap)
		return 0;
	cap = s->s_cap == 0 ? 4096 : s->s_cap;
	while (cap < s->s_len + more)
		cap *= 2;
	if ((p = realloc(s->s_data, cap)) == NULL)
		return -1;
	s->s_data = p;
	s->s_cap = cap;
	return 0;
}

/*
 * Reads a chunked body, into sink when not NULL.  Returns 0, -1 when the
 * connection failed or the framing is wrong, -2 when the body passes
 * what sink may hold.
 */
static int
read_chunked(struct conn *c, struct sink *sink)
{
	char		*line, *end;
	size_t		 len, i;
	uint64_t	 n;
	int		 digit;

	for (;;) {
		if (conn_line(c, &line, &len) == -1)
			return -1;
		n = 0;
		for (i = 0; i < len; i++) {
			if (line[i] >= '0' && line[i] <= '9')
				digit = line[i] - '0';
			else if ((line[i] | 0x20) >= 'a' &&
			    (line[i] | 0x20) <= 'f')
				digit = (line[i] | 0x20) - 'a' + 10;
			else
				break;
			if (n > BODY_MAX)
				return -1;
			n = n * 16 + (uint64_t)digit;
		}
		end = line + i;
		if (i == 0 || (end < line + len && *end != ';' &&
		    *end != ' ' && *end != '\t'))
			return -1;
		if (n == 0)
			break;
		if (sink != NULL && sink_grow(sink, n) == -1)
			return -2;
		if (conn_body(c, n, sink) == -1 ||
		    conn_line(c, &line, &len) == -1 || len != 0)
			return -1;
	}
	/* Trailer fields, up to an empty line. */
	do {
		if (conn_line(c, &line, &len) == -1)
			return -1;
	} while (len != 0);
	return 0;
}

/*
 * Reads the request's body, into sink when not NULL.  Returns 0, -1 on
 * failure (the connection must close), -2 when too large for sink.
 */
static int
read_body(struct conn *c, const struct req *r, struct sink *sink)
{
	bool	 body = r->r_chunked || r->r_length > 0;

	if (sink != NULL && !r->r_chunked && sink_grow(sink, r->r_length) ==
	    -1)
		return -2;
	if (body && r->r_continue && r->r_minor >= 1 &&
	    send_str(c, "HTTP/1.1 100 Continue\r\n\r\n") == -1)
		return -1;
	if (r->r_chunked)
		return read_chunked(c, sink);
	return conn_body(c, r->r_length, sink);
}

/*
 * /headers: the request's header lines back as X-Echo headers, and its
 * head as a body in 7-byte chunks (close-delimited when not keep).
 */
static int
send_headers(struct conn *c, const struct req *r, bool keep, bool head_only)
{
	struct sink	 s = { NULL, 0, 0 };
	struct iovec	 iov;
	const char	*p, *eol, *end = r->r_raw + r->r_rawlen;
	char		 line[32];
	size_t		 i, n;
	int		 rc = -1;

#define ADD(text, len) do {						\
	if (sink_grow(&s, (len)) == -1)					\
		goto out;						\
	memcpy(s.s_data + s.s_len, (text), (len));			\
	s.s_len += (len);						\
} while (0)
	ADD("HTTP/1.1 200 OK\r\n", 17);
	/* Header lines: after the request line, up to the empty one. */
	p = (const char *)memchr(r->r_raw, '\n', r->r_rawlen) + 1;
	for (; p < end && (eol = memchr(p, '\r', (size_t)(end - p))) != NULL &&
	    eol > p; p = eol + 2) {
		ADD("X-Echo: ", 8);
		ADD(p, (size_t)(eol - p));
		ADD("\r\n", 2);
	}
	if (keep)
		ADD("Transfer-Encoding: chunked\r\n\r\n", 30);
	else
		ADD("Connection: close\r\n\r\n", 21);
	for (i = 0; !head_only && i < r->r_rawlen; i += n) {
		n = r->r_rawlen - i < 7 ? r->r_rawlen - i : 7;
		if (keep) {
			snprintf(line, sizeof(line), "%zx\r\n", n);
			ADD(line, strlen(line));
		}
		ADD(r->r_raw + i, n);
		if (keep)
			ADD("\r\n", 2);
	}
	if (keep && !head_only)
		ADD("0\r\n\r\n", 5);
#undef ADD
	iov.iov_base = s.s_data;
	iov.iov_len = s.s_len;
	rc = conn_writev(c, &iov, 1);
out:
	free(s.s_data);
	return rc;
}

/*
 * The /bad/ routes: a head that does not parse, with the value of r's
 * Authorization header where kind says.
 */
static int
send_bad(struct conn *c, const struct req *r, enum route kind)
{
	struct iovec	 iov;
	const char	*p, *eol, *end = r->r_raw + r->r_rawlen, *v = "";
	char		*head;
	int		 vlen = 0, rc;

	p = (const char *)memchr(r->r_raw, '\n', r->r_rawlen) + 1;
	for (; p < end && (eol = memchr(p, '\r', (size_t)(end - p))) != NULL &&
	    eol > p; p = eol + 2) {
		if (eol - p > 14 && strncasecmp(p, "Authorization:", 14) == 0) {
			for (v = p + 14; v < eol && *v == ' '; v++)
				;
			vlen = (int)(eol - v);
			break;
		}
	}
	if (kind == ROUTE_BAD_STATUS)
		rc = asprintf(&head, "HTTP/1.1 %.*s\r\n"
		    "Content-Length: 0\r\n\r\n", vlen, v);
	else if (kind == ROUTE_BAD_FIELD)
		rc = asprintf(&head, "HTTP/1.1 200 OK\r\n%.*s\r\n"
		    "Content-Length: 0\r\n\r\n", vlen, v);
	else
		rc = asprintf(&head, "HTTP/1.1 200 OK\r\n"
		    "Content-Length: %.*s\r\n\r\n", vlen, v);
	if (rc == -1)
		return -1;
	iov.iov_base = head;
	iov.iov_len = strlen(head);
	rc = conn_writev(c, &iov, 1);
	free(head);
	return rc;
}

/*
 * Answers one parsed request.  Returns 0 when the connection may carry
 * another, -1 when it must close.
 */
static int
answer(struct conn *c, struct req *r)
{
	static const unsigned char gz_hello[] = {	/* gzip -n: "hello\n" */
		0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
		0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0xe7, 0x02, 0x00, 0x20, 0x30,
		0x3a, 0x36, 0x06, 0x00, 0x00, 0x00
	};
	struct sink	 sink = { NULL, 0, 0 };
	struct iovec	 iov[2];
	struct timespec	 ts;
	enum route	 rt;
	enum text_kind	 kind = TEXT_LENGTH;
	uint64_t	 n;
	char		 head[256];
	bool		 keep, head_only, chunked;
	int		 rc;

	log_req(c, r);
	rt = route(r->r_target, &n, &kind);
	head_only = strcmp(r->r_method, "HEAD") == 0;
	keep = r->r_minor == 0 ? r->r_keepalive && !r->r_close : !r->r_close;
	/* Both framings at once is how requests are smuggled: close after. */
	if (r->r_te && r->r_haslen)
		keep = false;

	if (rt == ROUTE_ECHO) {
		if (sink_grow(&sink, r->r_rawlen) == -1) {
			free(sink.s_data);
			return -1;
		}
		memcpy(sink.s_data, r->r_raw, r->r_rawlen);
		sink.s_len = r->r_rawlen;
	}
	rc = read_body(c, r, rt == ROUTE_ECHO ? &sink : NULL);
	if (rc == -2) {
		free(sink.s_data);
		send_simple(c, 413, "", 0, false, r->r_minor, head_only);
		return -1;
	}
	if (rc == -1) {
		free(sink.s_data);
		send_simple(c, 400, "", 0, false, r->r_minor, head_only);
		return -1;
	}

	switch (rt) {
	case ROUTE_HELLO:
		rc = send_simple(c, 200, "hello\n", 6, keep, r->r_minor,
		    head_only);
		break;
	case ROUTE_ECHO:
		rc = send_simple(c, 200, sink.s_data, sink.s_len, keep,
		    r->r_minor, head_only);
		break;
	case ROUTE_HEADERS:
		/* An HTTP/1.0 client cannot read chunks: close-delimited. */
		if (r->r_minor == 0)
			keep = false;
		rc = send_headers(c, r, keep, head_only);
		break;
	case ROUTE_GZIP:
		head_format(head, sizeof(head), 200, sizeof(gz_hello), keep,
		    r->r_minor);
		/* Before the empty line that ends the head. */
		snprintf(head + strlen(head) - 2, sizeof(head) - strlen(head)
		    + 2, "Content-Encoding: gzip\r\n\r\n");
		iov[0].iov_base = head;
		iov[0].iov_len = strlen(head);
		iov[1].iov_base = (void *)(uintptr_t)gz_hello;
		iov[1].iov_len = head_only ? 0 : sizeof(gz_hello);
		rc = conn_writev(c, iov, 2);
		break;
	case ROUTE_STATUS:
		rc = send_simple(c, (int)n, "", 0, keep, r->r_minor,
		    head_only);
		break;
	case ROUTE_SLOW:
		ts.tv_sec = (time_t)(n / 1000);
		ts.tv_nsec = (long)(n % 1000) * 1000000;
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
		rc = send_simple(c, 200, "slow\n", 5, keep, r->r_minor,
		    head_only);
		break;
	case ROUTE_BYTES:
		head_format(head, sizeof(head), 200, (int64_t)n, keep,
		    r->r_minor);
		rc = send_zeros(c, head, head_only ? 0 : n, false);
		break;
	case ROUTE_CHUNKED:
		/* An HTTP/1.0 client cannot read chunks: close-delimited. */
		if (r->r_minor == 0)
			keep = false;
		head_format(head, sizeof(head), 200, keep ? -1 : -2, keep,
		    r->r_minor);
		rc = send_zeros(c, head, head_only ? 0 : n, keep &&
		    !head_only);
		break;
	case ROUTE_CLOSE:
		keep = false;
		head_format(head, sizeof(head), 200, -2, false, r->r_minor);
		rc = send_zeros(c, head, head_only ? 0 : n, false);
		break;
	case ROUTE_BAD_STATUS:
	case ROUTE_BAD_FIELD:
	case ROUTE_BAD_LENGTH:
		keep = false;
		rc = send_bad(c, r, rt);
		break;
	case ROUTE_TEXT:
		text_head(head, sizeof(head), kind, n, &keep, r->r_minor,
		    &chunked);
		rc = send_text(c, head, head_only ? 0 : n, kind, chunked &&
		    !head_only);
		break;
	case ROUTE_NONE:
		rc = send_simple(c, 404, "", 0, keep, r->r_minor, head_only);
		break;
	}
	free(sink.s_data);
	return rc == 0 && keep ? 0 : -1;
}

/*
 * Closes after the last response without losing its tail: shuts the
 * write side, then reads (a little, briefly) what the client still
 * sends, so the kernel has no unread data to answer with a reset.
 */
static void
linger_close(int fd)
{
	struct timeval	 tv = { 1, 0 };
	char		 buf[16384];
	size_t		 total = 0;
	ssize_t		 n;

	if (shutdown(fd, SHUT_WR) == 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		while (total < LINGER_MAX &&
		    ((n = recv(fd, buf, sizeof(buf), 0)) > 0 ||
		    (n == -1 && errno == EINTR)))
			total += n > 0 ? (size_t)n : 0;
	}
	close(fd);
}

/* Appends "tls-handshake-failed REASON\n" to the log. */
static void
log_handshake(SSL *ssl, int ret)
{
	char		 line[300];
	const char	*why;
	unsigned long	 e;
	int		 err, len;

	if (log_fd == -1)
		return;
	err = SSL_get_error(ssl, ret);
	why = (e = ERR_peek_error()) != 0 ? ERR_reason_error_string(e) : NULL;
	if (why == NULL)
		why = err == SSL_ERROR_SYSCALL && errno != 0 ? strerror(errno) :
		    err == SSL_ERROR_SYSCALL || err == SSL_ERROR_ZERO_RETURN ?
		    "eof" : "error";
	len = snprintf(line, sizeof(line), "tls-handshake-failed %s\n", why);
	if (len >= (int)sizeof(line))
		len = (int)sizeof(line) - 1;
	line[len - 1] = '\n';
	if (write(log_fd, line, (size_t)len) == -1)
		fprintf(stderr, "httpd: log: %s\n", strerror(errno));
}

/* The server's side of the handshake; returns 0 or -1 (logged). */
static int
tls_accept(struct conn *c)
{
	int	 ret;

	if ((c->c_ssl = SSL_new(tls_ctx)) == NULL ||
	    SSL_set_fd(c->c_ssl, c->c_fd) != 1)
		return -1;
	do {
		ERR_clear_error();
		errno = 0;
		ret = SSL_accept(c->c_ssl);
	} while (ret <= 0 && SSL_get_error(c->c_ssl, ret) ==
	    SSL_ERROR_SYSCALL && errno == EINTR);
	if (ret == 1)
		return 0;
	log_handshake(c->c_ssl, ret);
	return -1;
}

/* Picks "http/1.1" when the client offers it; no ALPN otherwise. */
static int
alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	static const unsigned char	 ours[] = "\x08http/1.1";
	unsigned char			*sel;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&sel, outlen, ours, sizeof(ours) - 1, in,
	    inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

/* Makes tls_ctx from PEM files, or exits saying why. */
static void
tls_init(const char *cert, const char *key)
{
	if ((tls_ctx = SSL_CTX_new(TLS_server_method())) == NULL ||
	    SSL_CTX_set_min_proto_version(tls_ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_use_certificate_chain_file(tls_ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(tls_ctx, key, SSL_FILETYPE_PEM) !=
	    1 || SSL_CTX_check_private_key(tls_ctx) != 1) {
		fprintf(stderr, "httpd: TLS set-up from %s and %s failed\n",
		    cert, key);
		ERR_print_errors_fp(stderr);
		exit(2);
	}
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
	SSL_CTX_set_options(tls_ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
	SSL_CTX_set_alpn_select_cb(tls_ctx, alpn_select, NULL);
}

static void *
conn_main(void *arg)
{
	struct conn	*c = arg;
	struct req	 r;
	ssize_t		 len;
	int		 status;

	if (tls_ctx != NULL && tls_accept(c) == -1) {
		SSL_free(c->c_ssl);
		close(c->c_fd);
		free(c);
		return NULL;
	}
	for (;;) {
		if ((len = conn_head(c)) == 0)
			break;
		if (len == -2) {
			send_simple(c, 431, "", 0, false, 1, false);
			break;
		}
		if (len == -1)
			break;
		if ((status = req_parse(c, (size_t)len, &r)) != 0) {
			send_simple(c, status, "", 0, false, 1, false);
			req_free(&r);
			break;
		}
		status = answer(c, &r);
		req_free(&r);
		if (status == -1)
			break;
	}
	if (c->c_ssl != NULL) {
		/* close_notify, unless the session already failed. */
		if (!c->c_failed)
			SSL_shutdown(c->c_ssl);
		SSL_free(c->c_ssl);
	}
	linger_close(c->c_fd);
	free(c);
	return NULL;
}

static void	serve(void) __attribute__((noreturn));

static void
serve(void)
{
	struct timeval	 tv = { opt_timeout, 0 };
	pthread_attr_t	 attr;
	pthread_t	 t;
	struct conn	*c;
	int		 lfd, fd, one = 1;

	if ((lfd = socket(listen_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC,
	    0)) == -1)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (listen_addr.ss_family == AF_UNIX)
		unlink(((struct sockaddr_un *)&listen_addr)->sun_path);
	if (bind(lfd, (struct sockaddr *)&listen_addr, listen_len) == -1)
		die("bind");
	if (listen(lfd, 4096) == -1)
		die("listen");
	printf("listening\n");
	fflush(stdout);

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* OpenSSL's handshake wants more stack than the plain path. */
	pthread_attr_setstacksize(&attr, tls_ctx != NULL ? 512 * 1024 :
	    128 * 1024);
	for (;;) {
		if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1) {
			if (errno == EBADF || errno == EINVAL ||
			    errno == ENOTSOCK || errno == EFAULT)
				die("accept");
			/* Out of descriptors or memory: wait, retry. */
			if (errno != EINTR && errno != ECONNABORTED)
				usleep(10000);
			continue;
		}
		/* Heads and bodies go out in pieces: no Nagle delays. */
		if (listen_addr.ss_family != AF_UNIX)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			    sizeof(one));
		if (opt_timeout > 0) {
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
			    sizeof(tv));
			setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
			    sizeof(tv));
		}
		if ((c = malloc(sizeof(*c))) == NULL) {
			close(fd);
			continue;
		}
		c->c_fd = fd;
		c->c_ssl = NULL;
		c->c_failed = false;
		c->c_off = c->c_len = 0;
		if (pthread_create(&t, &attr, conn_main, c) != 0) {
			fprintf(stderr, "httpd: too many threads\n");
			close(fd);
			free(c);
		}
	}
}

int
main(int argc, char **argv)
{
	const char	*ep = NULL, *log_path = NULL, *cert = NULL;
	const char	*key = NULL;
	char		*end;
	int		 i;

	for (i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--listen") == 0)
			ep = argv[i + 1];
		else if (strcmp(argv[i], "--tls-cert") == 0)
			cert = argv[i + 1];
		else if (strcmp(argv[i], "--tls-key") == 0)
			key = argv[i + 1];
		else if (strcmp(argv[i], "--log") == 0)
			log_path = argv[i + 1];
		else if (strcmp(argv[i], "--log-header") == 0)
			log_header = argv[i + 1];
		else if (strcmp(argv[i], "--timeout") == 0) {
			opt_timeout = (int)strtol(argv[i + 1], &end, 10);
			if (*end != '\0' || opt_timeout < 0)
				usage();
		} else
			usage();
	}
	if (ep == NULL || (cert == NULL) != (key == NULL))
		usage();
	parse_ep(ep);
	signal(SIGPIPE, SIG_IGN);
	if (log_path != NULL && (log_fd = open(log_path,
	    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) == -1)
		die(log_path);
	if (cert != NULL)
		tls_init(cert, key);
	serve();
}
