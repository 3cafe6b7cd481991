/*
 * conn_mtls.c: a client of a tls: listener, before its PROXY v2 header.
 * Its socket's bufferevent is wrapped in a TLS filter (c_bev; c_fd
 * stays the connection's) whose handshake asks for a certificate of
 * --client-ca (mtls.c); once verified, the identity it names is the
 * connection's, on every line it logs, and the header is read inside
 * the TLS stream as on any sandbox listener.  A refused handshake is
 * one egress log line and one warning, saying why (no certificate, an
 * unknown CA, expired, revoked, ...), at most MTLS_LINES_MAX a second
 * for each reason; a client that closed before saying anything is
 * gone quietly, as on a plain listener.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "certs/mtls.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "proxy/conn_proto.h"

/*
 * Starts the handshake of c, new on a tls: listener: c_bev becomes a
 * TLS filter over its socket's bufferevent, which it owns.
 */
void
conn_mtls_start(struct conn *c)
{
	struct bufferevent	*raw = c->c_bev, *tls;
	struct timeval		 tv = { c->c_proxy->px_head_secs, 0 };

	bufferevent_set_timeouts(raw, NULL, NULL);
	c->c_mtls = true;
	tls = conn_tls_over(c, mtls_session(c->c_proxy->px_mtls));
	/* A client's bare close ends its stream, as on TCP. */
	bufferevent_openssl_set_allow_dirty_shutdown(tls, 1);
	bufferevent_set_timeouts(tls, &tv, NULL);
}

/*
 * The subject of the certificate that failed, or else of the one ssl
 * was shown, escaped (the client wrote it), or NULL.
 */
static char *
conn_mtls_subject(SSL *ssl)
{
	const char	*failed;
	X509		*x;
	char		*s, *e;

	if ((failed = mtls_failed_subject(ssl)) != NULL)
		return str_escape(failed, strlen(failed));
	if ((x = SSL_get0_peer_certificate(ssl)) == NULL ||
	    (s = X509_NAME_oneline(X509_get_subject_name(x), NULL, 0)) ==
	    NULL)
		return NULL;
	e = str_escape(s, strlen(s));
	OPENSSL_free(s);
	return e;
}

/*
 * Refuses c for r (detail: OpenSSL's words, why no identity, or NULL),
 * logged; frees c.
 */
static void
conn_mtls_refuse(struct conn *c, enum mtls_reason r, const char *detail)
{
	SSL		*ssl = bufferevent_openssl_get_ssl(c->c_bev);
	uint64_t	 quiet;
	char		*why, *subject;

	if (!mtls_refusal(c->c_proxy->px_mtls, r, &quiet)) {
		conn_free(c);
		return;
	}
	subject = conn_mtls_subject(ssl);
	conn_begin(c, PROTO_NONE, NULL, "", 0, 0);
	c->c_dec.d_verdict = VERDICT_DENY;
	xasprintf(&why, "TLS client refused: %s%s%s%s%s%s",
	    mtls_words_of(r), detail != NULL ? " (" : "",
	    detail != NULL ? detail : "", detail != NULL ? ")" : "",
	    subject != NULL ? ", subject " : "",
	    subject != NULL ? subject : "");
	conn_reason(c, why);
	if (quiet > 0)
		xasprintf(&c->c_warning, "%llu more refusal(s) for the same "
		    "reason were not logged (at most %d a second)",
		    (unsigned long long)quiet, MTLS_LINES_MAX);
	log_warnx("proxy: %s: %s", c->c_client, why);
	log_warnx("hint: %s", mtls_hint(r));
	free(subject);
	free(why);
	conn_free(c);
}

/*
 * CS_MTLS, the handshake done, the certificate verified: the identity
 * it names is c's, and its PROXY v2 header is read next.
 */
void
conn_mtls_verified(struct conn *c)
{
	SSL	*ssl = bufferevent_openssl_get_ssl(c->c_bev);
	char	*cause;

	if ((c->c_identity = mtls_identity(SSL_get0_peer_certificate(ssl),
	    &cause)) == NULL) {
		conn_mtls_refuse(c, MTLS_R_NO_IDENTITY, cause);
		free(cause);
		return;
	}
	/* Its limits' key, once: the identity is the connection's. */
	c->c_ident_hold.ih_key = ident_key(c->c_identity);
	c->c_state = CS_PP2;
	conn_process(c);
}

/*
 * CS_MTLS, the handshake failed or the client went: refused with the
 * reason, unless it closed before a byte of TLS went wrong.
 */
void
conn_mtls_failed(struct conn *c, short what)
{
	SSL		*ssl = bufferevent_openssl_get_ssl(c->c_bev);
	unsigned long	 e, err = 0;
	enum mtls_reason r;
	const char	*detail;

	/* libevent puts SSL_get_error()'s code, no library's, first. */
	while ((e = bufferevent_get_openssl_error(c->c_bev)) != 0)
		if (ERR_GET_LIB(e) != 0 && err == 0)
			err = e;
	r = mtls_why(ssl, err, &detail);
	if (r == MTLS_R_HANDSHAKE && err == 0 && (what & BEV_EVENT_EOF)) {
		conn_free(c);
		return;
	}
	conn_mtls_refuse(c, r, detail);
}
