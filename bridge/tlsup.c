/*
 * tlsup.c: the way from a host to a remote egress tier (cordon proxy
 * --listen-sandbox tls:HOST:PORT) over mutual TLS, for `cordon run
 * --proxy tls://` and the node-local originator (`cordon bridge
 * --connect tls:`).  The sandbox never holds the key: its bridge
 * reaches a Unix socket on the host as it would reach a local proxy,
 * and each connection accepted there is relayed here, on the caller's
 * event loop, to the tier in a TLS session of its own: the client
 * certificate and key presented, the tier's certificate verified
 * against the given CA and the tier's name or address, TLS 1.2 at
 * least.  The PROXY v2 header the sandbox's bridge wrote goes through
 * unchanged; an originator serving other users adds their uid
 * (PP2_TYPE_CORDON_ORIGIN, from SO_PEERCRED), refusing a header that
 * names one already.  The tier takes the identity from the certificate
 * and that uid only as the originator's word under it.
 *
 * tlsup_gate() holds new clients (cordon run, while its channel to the
 * tier is reopened) or refuses them (when it cannot be).
 *
 * tlsup_dial() is the blocking one, for the run's preflight: it tells
 * a key that cannot be read, a CA that does not verify the tier, and a
 * listener that does not speak TLS apart, with the fix.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "bridge/tlsup.h"
#include "certs/ssl_error.h"
#include "lib/endpoint.h"
#include "lib/host.h"
#include "lib/log.h"
#include "lib/xmalloc.h"
#include "wire/pp2.h"

#define TLSUP_BUFFER_MAX	(256 * 1024)	/* held for a slow reader */
#define TLSUP_CONNECT_SECS	10		/* to the tier, TLS done */
#define TLSUP_PAIRS_MAX		4096		/* relays at once */
#define TLSUP_PAUSE_SECS	1		/* accept again, out of fds */

struct tlsup {
	struct event_base	*t_base;
	SSL_CTX			*t_ctx;
	struct sockaddr_storage	 t_ss;
	socklen_t		 t_sslen;
	char			*t_host;	/* the tier's name, verified */
	char			*t_where;	/* "HOST:PORT", for messages */
	struct evconnlistener	*t_listener;
	bool			 t_origin;	/* add the client's uid */
	bool			 t_warned;
	enum tlsup_gate		 t_gate;	/* what a new client meets */
	int			*t_held;	/* accepted while TLSUP_HOLD */
	size_t			 t_nheld;
	unsigned long		 t_refused;	/* closed by TLSUP_REFUSE */
	TAILQ_HEAD(, tlsup_pair) t_pairs;
	size_t			 t_npairs;
	struct event		*t_resume;	/* accept again after EMFILE */
};

/* One relayed connection: the Unix client (a) and the tier (b). */
struct tlsup_pair {
	TAILQ_ENTRY(tlsup_pair)	 p_entry;
	struct tlsup		*p_up;
	struct bufferevent	*p_a;
	struct bufferevent	*p_b;
	bool			 p_a_eof;	/* the client's end seen */
	bool			 p_a_gone;	/* it cannot be written to */
	bool			 p_b_eof;	/* the tier's end seen */
	bool			 p_shut;	/* close_notify sent the tier */
	bool			 p_head;	/* the header not yet passed */
	bool			 p_up_ok;	/* the tier's handshake done */
	char			 p_uid[PP2_ORIGIN_MAX + 1];
};

/* The context: our certificate and key, the CA the tier must show. */
static int
tlsup_ctx(struct tlsup *t, const struct tlsup_files *f, char **cause)
{
	if ((t->t_ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
		xasprintf(cause, "no TLS context: %s", ssl_error_last());
		return -1;
	}
	SSL_CTX_set_min_proto_version(t->t_ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(t->t_ctx, SSL_VERIFY_PEER, NULL);
	if (SSL_CTX_use_certificate_chain_file(t->t_ctx, f->tf_cert) != 1) {
		xasprintf(cause, "the client certificate %s cannot be read: "
		    "%s", f->tf_cert, ssl_error_last());
		return -1;
	}
	if (SSL_CTX_use_PrivateKey_file(t->t_ctx, f->tf_key,
	    SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(t->t_ctx) !=
	    1) {
		xasprintf(cause, "the client key %s cannot be read, or is not "
		    "the certificate's: %s (%s)", f->tf_key, access(f->tf_key,
		    R_OK) == -1 ? strerror(errno) : "not its key",
		    ssl_error_last());
		return -1;
	}
	if (SSL_CTX_load_verify_locations(t->t_ctx, f->tf_ca, NULL) != 1) {
		xasprintf(cause, "the tier's CA %s cannot be read: %s",
		    f->tf_ca, ssl_error_last());
		return -1;
	}
	return 0;
}

/*
 * A way to the tier at url with the files f, on base.  Returns it, or
 * NULL with *cause set (the files, the name).
 */
struct tlsup *
tlsup_new(struct event_base *base, const char *url,
    const struct tlsup_files *f, char **cause)
{
	struct tlsup	*t = xcalloc(1, sizeof(*t));
	struct addrinfo	 hints, *res;
	char		*port = NULL;
	int		 rc;

	t->t_base = base;
	TAILQ_INIT(&t->t_pairs);
	if (host_tls_url(url, &t->t_host, &port, cause) == -1 ||
	    tlsup_ctx(t, f, cause) == -1)
		goto fail;
	xasprintf(&t->t_where, "%s:%s", t->t_host, port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(t->t_host, port, &hints, &res)) != 0) {
		xasprintf(cause, "the tier %s: %s", t->t_where,
		    gai_strerror(rc));
		goto fail;
	}
	memcpy(&t->t_ss, res->ai_addr, res->ai_addrlen);
	t->t_sslen = res->ai_addrlen;
	freeaddrinfo(res);
	free(port);
	return t;
fail:
	free(port);
	tlsup_free(t);
	return NULL;
}

/* A session for one connection, checking the tier's name or address. */
static SSL *
tlsup_session(struct tlsup *t)
{
	struct in6_addr	 a6;
	SSL		*ssl;

	if ((ssl = SSL_new(t->t_ctx)) == NULL)
		fatalx("tlsup: SSL_new failed");
	if (inet_pton(AF_INET, t->t_host, &a6) == 1 ||
	    inet_pton(AF_INET6, t->t_host, &a6) == 1)
		X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), t->t_host);
	else {
		SSL_set_tlsext_host_name(ssl, t->t_host);
		SSL_set1_host(ssl, t->t_host);
	}
	return ssl;
}

/* Connects fd to the tier, waiting secs at most.  Returns 0 or -1. */
static int
tlsup_connect(struct tlsup *t, int fd, int secs)
{
	struct pollfd	 pfd = { fd, POLLOUT, 0 };
	socklen_t	 len = sizeof(int);
	int		 err = 0, rc;

	if (connect(fd, (struct sockaddr *)&t->t_ss, t->t_sslen) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -1;
	while ((rc = poll(&pfd, 1, secs * 1000)) == -1 && errno == EINTR)
		;
	if (rc == 0)
		errno = ETIMEDOUT;
	if (rc <= 0)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		return -1;
	errno = err;
	return err == 0 ? 0 : -1;
}

/*
 * The preflight's connection: connected and the handshake done within
 * secs, the socket blocking with secs for each read and write.  Returns
 * the socket with *sslp set, or -1 with *cause and *hint set.
 */
int
tlsup_dial(struct tlsup *t, int secs, SSL **sslp, char **cause, char **hint)
{
	struct timeval	 tv = { secs, 0 };
	SSL		*ssl = NULL;
	long		 v;
	int		 fd;

	*sslp = NULL;
	if ((fd = socket(t->t_ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) != -1)
		endpoint_nodelay(fd);
	if (fd == -1 || tlsup_connect(t, fd, secs) == -1) {
		xasprintf(cause, "cannot connect to the tier %s: %s",
		    t->t_where, strerror(errno));
		xasprintf(hint, "is a cordon proxy listening there "
		    "(--listen-sandbox tls:%s), and may this host reach it?",
		    t->t_where);
		goto fail;
	}
	if (fcntl(fd, F_SETFL, 0) == -1 || setsockopt(fd, SOL_SOCKET,
	    SO_RCVTIMEO, &tv, sizeof(tv)) == -1 || setsockopt(fd,
	    SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1)
		fatal("tlsup: socket options");
	ssl = tlsup_session(t);
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) == 1) {
		*sslp = ssl;
		return fd;
	}
	if ((v = SSL_get_verify_result(ssl)) != X509_V_OK) {
		xasprintf(cause, "the tier %s shows a certificate that does "
		    "not verify against --proxy-ca: %s", t->t_where,
		    X509_verify_cert_error_string(v));
		xasprintf(hint, "--proxy-ca must be the CA that signed the "
		    "tier's certificate, and the certificate must name %s",
		    t->t_host);
	} else {
		xasprintf(cause, "no TLS session with the tier %s: %s",
		    t->t_where, ssl_error_last());
		xasprintf(hint, "the tier must be a cordon proxy listening "
		    "with --listen-sandbox tls:%s and --client-ca the CA of "
		    "your certificate (its log says why it refused)",
		    t->t_where);
	}
fail:
	SSL_free(ssl);
	if (fd != -1)
		close(fd);
	return -1;
}

static void
tlsup_pair_free(struct tlsup_pair *p)
{
	TAILQ_REMOVE(&p->p_up->t_pairs, p, p_entry);
	p->p_up->t_npairs--;
	bufferevent_free(p->p_a);
	bufferevent_free(p->p_b);
	free(p);
}

/*
 * Whether p is done: the tier's end seen and all it sent passed on to a
 * client still there (the client's end alone is passed on as
 * close_notify: the answer still comes).
 */
static bool
tlsup_pair_done(struct tlsup_pair *p)
{
	return p->p_b_eof && (p->p_a_gone || evbuffer_get_length(
	    bufferevent_get_output(p->p_a)) == 0);
}

/* The client ended: once all it sent is passed, tell the tier. */
static void
tlsup_pair_shut(struct tlsup_pair *p)
{
	if (!p->p_a_eof || p->p_shut || !p->p_up_ok || evbuffer_get_length(
	    bufferevent_get_output(p->p_b)) > 0)
		return;
	p->p_shut = true;
	SSL_shutdown(bufferevent_openssl_get_ssl(p->p_b));
}

/*
 * An originator's header: the client's uid added, a header that names
 * one refused.  Returns 1 passed, 0 wait for more, -1 refused.
 */
static int
tlsup_pair_head(struct tlsup_pair *p)
{
	struct evbuffer	*in = bufferevent_get_input(p->p_a);
	uint8_t		*h, tlv[3];
	size_t		 len = evbuffer_get_length(in), used, n;
	char		 id[PP2_ID_MAX + 1], *narrow = NULL, *cause = NULL;
	int		 rc;

	if (len > PP2_HEADER_MAX - 3 - PP2_ORIGIN_MAX)
		len = PP2_HEADER_MAX - 3 - PP2_ORIGIN_MAX;
	h = evbuffer_pullup(in, (ssize_t)len);
	rc = pp2_parse(h, len, &used, id, sizeof(id), &narrow, &cause);
	free(narrow);
	free(cause);
	/* No room for the field in a header as long as the longest. */
	if (rc == PP2_PARSE_MORE && len == PP2_HEADER_MAX - 3 -
	    PP2_ORIGIN_MAX)
		return -1;
	if (rc == PP2_PARSE_MORE)
		return 0;
	if (rc == PP2_PARSE_ERROR || pp2_field(h, used,
	    PP2_TYPE_CORDON_ORIGIN, &n) != NULL)
		return -1;
	n = strlen(p->p_uid);
	tlv[0] = PP2_TYPE_CORDON_ORIGIN;
	tlv[1] = 0;
	tlv[2] = (uint8_t)n;
	/* The header's length (bytes 14 and 15) grows by the field. */
	h[14] = (uint8_t)((used - 16 + 3 + n) >> 8);
	h[15] = (uint8_t)((used - 16 + 3 + n) & 0xff);
	evbuffer_remove_buffer(in, bufferevent_get_output(p->p_b), used);
	bufferevent_write(p->p_b, tlv, sizeof(tlv));
	bufferevent_write(p->p_b, p->p_uid, n);
	p->p_head = false;
	return 1;
}

static void
tlsup_read_cb(struct bufferevent *bev, void *arg)
{
	struct tlsup_pair	*p = arg;
	struct bufferevent	*to = bev == p->p_a ? p->p_b : p->p_a;
	int			 rc;

	if (bev == p->p_a && p->p_head && (rc = tlsup_pair_head(p)) <= 0) {
		if (rc == -1)
			tlsup_pair_free(p);
		return;
	}
	bufferevent_write_buffer(to, bufferevent_get_input(bev));
	/* A slow reader: stop reading until it has caught up. */
	if (evbuffer_get_length(bufferevent_get_output(to)) >=
	    TLSUP_BUFFER_MAX)
		bufferevent_disable(bev, EV_READ);
}

static void
tlsup_write_cb(struct bufferevent *bev, void *arg)
{
	struct tlsup_pair	*p = arg;
	struct bufferevent	*from = bev == p->p_a ? p->p_b : p->p_a;

	if (tlsup_pair_done(p)) {
		tlsup_pair_free(p);
		return;
	}
	if (bev == p->p_b)
		tlsup_pair_shut(p);
	if (!(from == p->p_a ? p->p_a_eof : p->p_b_eof))
		bufferevent_enable(from, EV_READ);
}

static void
tlsup_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct tlsup_pair	*p = arg;
	struct tlsup		*t = p->p_up;
	unsigned long		 e;

	if (what & BEV_EVENT_CONNECTED) {
		/* From now on a tunnel may idle as long as it likes. */
		p->p_up_ok = true;
		bufferevent_set_timeouts(bev, NULL, NULL);
		tlsup_pair_shut(p);
		return;
	}
	/* Once: the preflight said the tier takes us; this is news. */
	if (bev == p->p_b && !p->p_up_ok && !t->t_warned) {
		t->t_warned = true;
		e = bufferevent_get_openssl_error(bev);
		log_warnx("tlsup: no TLS session with the tier %s: %s",
		    t->t_where, e != 0 ? ERR_reason_error_string(e) :
		    "it closed or could not be reached");
	}
	if (bev == p->p_a) {
		p->p_a_eof = true;
		bufferevent_disable(bev, EV_READ);
		if (what & BEV_EVENT_ERROR)
			p->p_a_gone = p->p_b_eof = true; /* nobody to answer */
		tlsup_pair_shut(p);
	} else {
		p->p_b_eof = true;
		bufferevent_disable(bev, EV_READ);
	}
	if (tlsup_pair_done(p))
		tlsup_pair_free(p);
}

/* A client fd (taken): relayed to the tier in a session of its own. */
static void
tlsup_relay(struct tlsup *t, int fd)
{
	struct tlsup_pair	*p;
	struct ucred		 cr;
	socklen_t		 len = sizeof(cr);
	struct timeval		 tv = { TLSUP_CONNECT_SECS, 0 };
	int			 up;

	if (t->t_npairs >= TLSUP_PAIRS_MAX) {
		close(fd);
		return;
	}
	p = xcalloc(1, sizeof(*p));
	p->p_up = t;
	if (t->t_origin) {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ==
		    -1) {
			close(fd);
			free(p);
			return;
		}
		snprintf(p->p_uid, sizeof(p->p_uid), "%u",
		    (unsigned int)cr.uid);
		p->p_head = true;
	}
	/* Each TLS flight goes when written: no delayed-ACK wait. */
	if ((up = socket(t->t_ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		close(fd);
		free(p);
		return;
	}
	endpoint_nodelay(up);
	TAILQ_INSERT_TAIL(&t->t_pairs, p, p_entry);
	t->t_npairs++;
	p->p_a = bufferevent_socket_new(t->t_base, fd, BEV_OPT_CLOSE_ON_FREE);
	p->p_b = bufferevent_openssl_socket_new(t->t_base, up,
	    tlsup_session(t), BUFFEREVENT_SSL_CONNECTING,
	    BEV_OPT_CLOSE_ON_FREE);
	if (p->p_a == NULL || p->p_b == NULL)
		fatalx("tlsup: cannot make bufferevents");
	bufferevent_openssl_set_allow_dirty_shutdown(p->p_b, 1);
	bufferevent_setcb(p->p_a, tlsup_read_cb, tlsup_write_cb,
	    tlsup_event_cb, p);
	bufferevent_setcb(p->p_b, tlsup_read_cb, tlsup_write_cb,
	    tlsup_event_cb, p);
	bufferevent_set_timeouts(p->p_b, &tv, &tv);
	if (bufferevent_socket_connect(p->p_b, (struct sockaddr *)&t->t_ss,
	    (int)t->t_sslen) == -1) {
		tlsup_pair_free(p);
		return;
	}
	bufferevent_enable(p->p_a, EV_READ | EV_WRITE);
	bufferevent_enable(p->p_b, EV_READ | EV_WRITE);
}

/* The listener's client fd: relayed, held or refused, by the gate. */
static void
tlsup_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct tlsup	*t = arg;

	(void)l;
	(void)sa;
	(void)salen;
	if (t->t_gate == TLSUP_REFUSE || (t->t_gate == TLSUP_HOLD &&
	    t->t_nheld >= TLSUP_PAIRS_MAX)) {
		t->t_refused++;
		close(fd);
	} else if (t->t_gate == TLSUP_HOLD) {
		t->t_held = xreallocarray(t->t_held, t->t_nheld + 1,
		    sizeof(*t->t_held));
		t->t_held[t->t_nheld++] = fd;
	} else
		tlsup_relay(t, fd);
}

static void
tlsup_resume_cb(int fd, short what, void *arg)
{
	struct tlsup	*t = arg;

	(void)fd;
	(void)what;
	if (t->t_gate != TLSUP_HOLD)
		evconnlistener_enable(t->t_listener);
}

/*
 * What a new client meets from now on: TLSUP_PASS relays it (and those
 * held), TLSUP_HOLD leaves it waiting (in the socket's backlog, or held
 * here if accepted already), TLSUP_REFUSE closes it (and those held).
 * A caller whose way to the tier lost what the tier must know of its
 * clients (cordon run's channel and its live rules) holds them until
 * that is back.
 */
void
tlsup_gate(struct tlsup *t, enum tlsup_gate gate)
{
	size_t	 i;

	t->t_gate = gate;
	if (t->t_listener == NULL)
		return;
	if (gate == TLSUP_HOLD) {
		evconnlistener_disable(t->t_listener);
		return;
	}
	for (i = 0; i < t->t_nheld; i++)
		if (gate == TLSUP_PASS)
			tlsup_relay(t, t->t_held[i]);
		else {
			t->t_refused++;
			close(t->t_held[i]);
		}
	free(t->t_held);
	t->t_held = NULL;
	t->t_nheld = 0;
	evconnlistener_enable(t->t_listener);
}

/* How many clients TLSUP_REFUSE closed. */
unsigned long
tlsup_refused(const struct tlsup *t)
{
	return t->t_refused;
}

/* Out of descriptors: accept again in a moment, not in a busy loop. */
static void
tlsup_accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct tlsup	*t = arg;
	struct timeval	 tv = { TLSUP_PAUSE_SECS, 0 };

	log_warn("tlsup: accept");
	evconnlistener_disable(l);
	evtimer_add(t->t_resume, &tv);
}

/*
 * Relays each connection accepted on lfd (a listening Unix socket,
 * taken) to the tier; origin: add each client's uid to its header.
 * Returns 0, or -1 with *cause set.
 */
int
tlsup_listen(struct tlsup *t, int lfd, bool origin, char **cause)
{
	t->t_origin = origin;
	if ((t->t_listener = evconnlistener_new(t->t_base, tlsup_accept_cb,
	    t, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, lfd)) ==
	    NULL) {
		close(lfd);
		xasprintf(cause, "cannot watch the relay's socket");
		return -1;
	}
	if ((t->t_resume = evtimer_new(t->t_base, tlsup_resume_cb, t)) ==
	    NULL)
		fatalx("tlsup: cannot make a timer");
	evconnlistener_set_error_cb(t->t_listener, tlsup_accept_error_cb);
	return 0;
}

/* "HOST:PORT" of the tier. */
const char *
tlsup_where(const struct tlsup *t)
{
	return t->t_where;
}

/* Frees t, the relays still open with it (the caller's loop ends). */
void
tlsup_free(struct tlsup *t)
{
	if (t == NULL)
		return;
	while (!TAILQ_EMPTY(&t->t_pairs))
		tlsup_pair_free(TAILQ_FIRST(&t->t_pairs));
	while (t->t_nheld > 0)
		close(t->t_held[--t->t_nheld]);
	free(t->t_held);
	if (t->t_listener != NULL)
		evconnlistener_free(t->t_listener);
	if (t->t_resume != NULL)
		event_free(t->t_resume);
	SSL_CTX_free(t->t_ctx);
	free(t->t_host);
	free(t->t_where);
	free(t);
}
