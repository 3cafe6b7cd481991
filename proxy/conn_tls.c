/*
 * conn_tls.c: TLS inspection.  A tunnel to a host that network.inspect
 * names is not spliced but opened (conn_tunnel.c hands it over): a leaf
 * for it from the signer answers the sandbox's handshake, a verified TLS
 * connection goes to the upstream, and the requests inside are read as
 * forward ones (conn_http.c) of their own protocol, PROTO_HTTPS, whose
 * co_request (conn_tls_head) decides each again.
 *
 * Ownership: c_bev becomes a TLS filter that owns the client's
 * bufferevent (c_fd stays the connection's); c_up becomes a TLS
 * bufferevent that owns the upstream's socket (c_upfd is then -1).
 *
 * The upstream outlives its tunnel: kept idle after an answer, it waits
 * in the proxy's pool (upool.c) when the tunnel ends, for the same
 * run's next tunnel to that host and port, which takes it instead of a
 * new connection and handshake (conn_tls_pooled); a request that finds
 * its tunnel without one takes one from the pool too, or dials a new
 * one (conn_tls_upstream).  A session is reused only for the name it
 * was verified for.
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "certs/certs.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "proxy/conn_proto.h"

/* The last OpenSSL error of a TLS bufferevent, in words (static). */
static const char *
conn_tls_error(struct bufferevent *bev)
{
	static char	 buf[256];
	unsigned long	 e = bufferevent_get_openssl_error(bev);

	if (e == 0)
		return NULL;
	ERR_error_string_n(e, buf, sizeof(buf));
	return buf;
}

/*
 * Puts an accepting TLS filter of ssl over c's client bufferevent and
 * makes it c_bev, with the core's callbacks and write bounds: the
 * filter's own writes to the socket stop at the same bound as ours.
 * Inspection's handshake and a tls: listener's (conn_mtls.c) both
 * start here.
 */
struct bufferevent *
conn_tls_over(struct conn *c, SSL *ssl)
{
	struct bufferevent	*raw = c->c_bev, *tls;

	if ((tls = bufferevent_openssl_filter_new(c->c_proxy->px_base, raw,
	    ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE)) == NULL)
		fatalx("proxy: cannot make a TLS bufferevent");
	bufferevent_setwatermark(raw, EV_WRITE, 0, PROXY_BUFFER_MAX);
	c->c_bev = tls;
	bufferevent_setcb(tls, conn_read_cb, conn_write_cb, conn_event_cb, c);
	bufferevent_setwatermark(tls, EV_WRITE, PROXY_BUFFER_MAX / 2, 0);
	bufferevent_enable(tls, EV_READ | EV_WRITE);
	return tls;
}

/*
 * Both halves are ready (a leaf, and the upstream's handshake done or
 * failed): answer the sandbox's ClientHello, which is still in c_bev's
 * input, with a TLS filter over c_bev.
 */
static void
conn_tls_accept(struct conn *c)
{
	struct proxy		*px = c->c_proxy;
	struct bufferevent	*raw = c->c_bev;
	SSL			*ssl;

	if (c->c_ins.ci_leaf == NULL || !c->c_ins.ci_up_ready)
		return;
	if ((ssl = SSL_new(px->px_tls_srv)) == NULL ||
	    SSL_use_certificate(ssl, c->c_ins.ci_leaf) != 1 ||
	    SSL_use_PrivateKey(ssl, signer_key(px->px_signer)) != 1)
		fatalx("proxy: cannot make a TLS session for inspection");
	bufferevent_set_max_single_write(raw, PROXY_TLS_READ);
	c->c_ins.ci_tls = true;
	c->c_state = CS_TLS_ACCEPT;
	conn_tls_over(c, ssl);
	/* The ClientHello was read already: start on it. */
	bufferevent_trigger(raw, EV_READ, BEV_TRIG_IGNORE_WATERMARKS);
}

/* The signer's answer: a leaf for ci_host (taken), or why there is none. */
static void
conn_tls_leaf_cb(X509 *leaf, const char *why, void *arg)
{
	struct conn	*c = arg;
	char		*what;

	c->c_ins.ci_sreq = NULL;
	if (leaf == NULL) {
		/* Allowed, and not carried out: the verdict stands. */
		xasprintf(&what, "no certificate for %s: %s", c->c_ins.ci_host,
		    why);
		conn_reason(c, what);
		free(what);
		conn_finish(c);
		return;
	}
	c->c_ins.ci_leaf = leaf;
	conn_tls_accept(c);
}

/* Why the upstream's TLS handshake failed, its event what: a new string. */
static char *
conn_tls_up_why(struct conn *c, short what)
{
	SSL		*ssl = bufferevent_openssl_get_ssl(c->c_up);
	const char	*err;
	char		*why;
	long		 vr;

	if ((vr = SSL_get_verify_result(ssl)) != X509_V_OK)
		xasprintf(&why, "the upstream's certificate does not verify "
		    "for %s: %s (if it is signed by a private CA, give that "
		    "CA to the proxy: --upstream-ca FILE)", c->c_ins.ci_host,
		    X509_verify_cert_error_string(vr));
	else if ((err = conn_tls_error(c->c_up)) != NULL)
		xasprintf(&why, "TLS with the upstream failed: %s", err);
	else
		xasprintf(&why, "the upstream %s", (what & BEV_EVENT_TIMEOUT) ?
		    "did not finish the TLS handshake in time" : "closed "
		    "during the TLS handshake");
	return why;
}

/*
 * The upstream's TLS handshake ended (CS_TLS_SETUP).  As the tunnel
 * opens: what it gave, for the requests; a failure is told to each of
 * them (ci_upfail).  A verified one then waits as a kept one does
 * (CU_KEPT, ci_fresh): asked nothing yet, it may end, or speak, before
 * the first request, and is then dropped, as a pooled one is, for that
 * request to find another, rather than end the tunnel.  For a request
 * inside the tunnel (conn_tls_redial): the request goes out, or it
 * alone fails.
 */
void
conn_tls_up_done(struct conn *c, short what)
{
	struct conn_inspect	*ci = &c->c_ins;
	struct conn_dial	*d = &c->c_dial;
	char			*why;

	ci->ci_up_ready = true;
	if (d->cd_up == CU_KEPT) {
		conn_drop_up(c);
		return;
	}
	if (what & BEV_EVENT_CONNECTED) {
		if (ci->ci_tls) {
			conn_http_start(c);
			return;
		}
		d->cd_up = CU_KEPT;
		snprintf(d->cd_kept_host, sizeof(d->cd_kept_host), "%s",
		    ci->ci_host);
		d->cd_kept_port = ci->ci_port;
		ci->ci_fresh = true;
		conn_tls_accept(c);
		return;
	}
	why = conn_tls_up_why(c, what);
	conn_drop_up(c);
	if (ci->ci_tls) {
		conn_fail(c, (what & BEV_EVENT_TIMEOUT) ? CONN_TIMEDOUT :
		    CONN_UNREACHABLE, why);
		free(why);
		return;
	}
	ci->ci_upfail = why;
	conn_tls_accept(c);
}

/*
 * The upstream went before the sandbox's handshake ended (CS_TLS_ACCEPT):
 * a verified one (kept, new or pooled) is dropped, and the first request
 * finds another.
 */
void
conn_tls_up_gone(struct conn *c, short what)
{
	(void)what;
	if (c->c_dial.cd_up != CU_KEPT && c->c_ins.ci_upfail == NULL)
		c->c_ins.ci_upfail = xstrdup("the upstream closed the "
		    "connection");
	conn_drop_up(c);
}

/*
 * Starts a verified TLS connection to the upstream c_upfd reaches, by
 * ci_host (SNI and the name checked), as a TLS bufferevent that takes
 * the socket.
 */
static void
conn_tls_connect(struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	struct timeval	 tv = { px->px_connect_secs, 0 };
	SSL		*ssl;

	if ((ssl = SSL_new(px->px_tls_cli)) == NULL ||
	    SSL_set_tlsext_host_name(ssl, c->c_ins.ci_host) != 1 ||
	    SSL_set1_host(ssl, c->c_ins.ci_host) != 1)
		fatalx("proxy: cannot make a TLS session for an upstream");
	/*
	 * A TLS bufferevent on the socket itself: a filter over the socket's
	 * bufferevent would cost twice the processor time per byte (libevent
	 * reads a few KiB per wakeup).  Such a bufferevent, though, goes on
	 * reading only when the socket is readable: conn_up_read() handles
	 * what OpenSSL holds already.  Its callbacks are deferred: libevent
	 * tells of the session's end from inside the read that met it,
	 * before the records decrypted in that same read are in the input,
	 * and the answer's last bytes would be lost with it; deferred, the
	 * read is told of first.
	 */
	bufferevent_free(c->c_up);	/* nothing was written on it */
	if ((c->c_up = bufferevent_openssl_socket_new(px->px_base, c->c_upfd,
	    ssl, BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS)) == NULL)
		fatalx("proxy: cannot make a TLS bufferevent");
	c->c_upfd = -1;			/* c_up's now */
	bufferevent_setcb(c->c_up, conn_up_read_cb, conn_up_write_cb,
	    conn_up_event_cb, c);
	bufferevent_setwatermark(c->c_up, EV_WRITE, PROXY_BUFFER_MAX / 2, 0);
	bufferevent_set_max_single_read(c->c_up, PROXY_TLS_READ);
	bufferevent_set_timeouts(c->c_up, &tv, &tv);
	bufferevent_enable(c->c_up, EV_READ | EV_WRITE);
}

/*
 * Opens an inspected tunnel (the proxy has a CA: conn_tunnel.c asks): a
 * leaf for the host from the signer, and a verified TLS connection to
 * the upstream (by the host's name, ALPN http/1.1), at once, unless one
 * came from the pool (conn_tls_pooled), ready then, or went since, when
 * the first request finds another; then the sandbox's handshake.
 * Requests are read from then on like forward ones, each decided
 * (conn_tls_head).
 */
void
conn_tls_start(struct conn *c)
{
	struct proxy		*px = c->c_proxy;
	struct conn_inspect	*ci = &c->c_ins;
	struct conn_dial	*d = &c->c_dial;

	snprintf(ci->ci_host, sizeof(ci->ci_host), "%s",
	    c->c_dec.d_host.h_name);
	ci->ci_port = c->c_port;
	snprintf(ci->ci_addr, sizeof(ci->ci_addr), "%s", c->c_addrtext);
	memcpy(ci->ci_addrs, d->cd_addrs, d->cd_naddrs * sizeof(*d->cd_addrs));
	ci->ci_naddrs = d->cd_naddrs;
	c->c_state = CS_TLS_SETUP;
	bufferevent_disable(c->c_bev, EV_READ);
	conn_arm_deadline(c);
	if (c->c_up == NULL || d->cd_up == CU_KEPT)
		ci->ci_up_ready = true;
	else
		conn_tls_connect(c);
	ci->ci_sreq = signer_get(px->px_signer, ci->ci_host, conn_tls_leaf_cb,
	    c);
}

/*
 * A tunnel's addresses are checked (co_dial of CONNECT, SOCKS5 and the
 * capture): to a host network.inspect names, an idle upstream of the
 * same run verified for that host, at one of them, is taken from the
 * pool instead of a new connection, and the tunnel is answered at once.
 * Its first bytes are judged as any tunnel's (conn_tunnel_peek): the
 * ClientHello must name that host.  Returns false when there is none.
 */
bool
conn_tls_pooled(struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	char		 text[ADDR_STRLEN];

	if (px->px_signer == NULL || px->px_tls_srv == NULL ||
	    c->c_dec.d_host.h_kind != HOST_NAME ||
	    policy_match_inspect(c->c_policy->pp_policy,
	    c->c_dec.d_host.h_name) == NULL || !conn_pool_take(c, true))
		return false;
	c->c_ins.ci_pooled = true;
	snprintf(c->c_addrtext, sizeof(c->c_addrtext), "%s",
	    addr_str(&c->c_dial.cd_upaddr, text, sizeof(text)));
	c->c_ops->co_connected(c);
	return true;
}

/* The sandbox's handshake is done: read requests. */
void
conn_tls_accepted(struct conn *c)
{
	struct timeval	 tv = { c->c_proxy->px_head_secs, 0 };

	c->c_state = CS_HTTP_HEAD;
	c->c_record = CR_NONE;
	conn_arm_deadline(c);
	/* From now on the filter's timeouts count, not the socket's. */
	bufferevent_set_timeouts(bufferevent_get_underlying(c->c_bev), NULL,
	    NULL);
	bufferevent_set_timeouts(c->c_bev, &tv, NULL);
	conn_process(c);
}

/* The sandbox's handshake failed: close, saying why and the likely fix. */
void
conn_tls_failed(struct conn *c, short what)
{
	const char	*err = conn_tls_error(c->c_bev), *hint = "";
	char		*why;

	(void)what;
	if (err != NULL && strstr(err, "unknown ca") != NULL)
		hint = " (the client does not trust cordon's CA: `cordon "
		    "run` gives the sandbox a bundle with it; other "
		    "clients need the CA's ca.crt added)";
	else if (err != NULL && strstr(err, "application protocol"))
		hint = " (the client offered no HTTP/1.x by ALPN: an "
		    "inspected host is spoken to in HTTP/1.1)";
	xasprintf(&why, "the TLS handshake with the client failed%s%s%s",
	    err != NULL ? ": " : "", err != NULL ? err : "", hint);
	conn_reason(c, why);
	free(why);
	conn_free(c);
}

/*
 * Sends the request, decided, on an upstream verified for the tunnel's
 * host: the tunnel's own, kept from its last request or taken as it
 * opened; else an idle one of the same run from the pool (upool.c);
 * else a new one, dialed to the tunnel's addresses and verified anew
 * (conn_tls_redial).  A kept or pooled one carries it as CU_REUSED: if
 * it turns out closed as the request goes out, conn_http_up_event sends
 * it again on a new one.
 */
static void
conn_tls_upstream(struct conn *c)
{
	struct proxy		*px = c->c_proxy;
	struct conn_dial	*d = &c->c_dial;
	char			 text[ADDR_STRLEN];
	bool			 pooled = c->c_ins.ci_pooled;
	bool			 fresh = c->c_ins.ci_fresh;

	c->c_ins.ci_pooled = c->c_ins.ci_fresh = false;
	if (c->c_up == NULL) {
		if (!conn_pool_take(c, true)) {
			conn_dial_next(c);
			return;
		}
		pooled = true;
		fresh = false;
	}
	if (d->cd_up == CU_KEPT) {
		/* The tunnel's own new one, idle until now: not a reuse. */
		d->cd_up = CU_REUSED;
		if (!fresh)
			px->px_stats.ps_reused++;
		if (pooled)
			px->px_stats.ps_pooled++;
	}
	snprintf(c->c_addrtext, sizeof(c->c_addrtext), "%s",
	    addr_str(&d->cd_upaddr, text, sizeof(text)));
	conn_http_start(c);
}

/*
 * A request's new connection to the tunnel's upstream is made
 * (conn_tls_upstream, or conn_http_up_event's retry, dialed it): its
 * TLS handshake, then the request (conn_tls_up_done).
 */
static void
conn_tls_redial(struct conn *c)
{
	c->c_state = CS_TLS_SETUP;
	conn_tls_connect(c);
}

/*
 * A request head read inside an inspected tunnel: the policy in force
 * decides on its host again (it may have been reloaded), which must be
 * the tunnel's, and on the tunnel's addresses; then network.inspect's
 * rules; then it goes up an upstream verified for the tunnel's host.
 */
static void
conn_tls_head(struct conn *c)
{
	struct conn_inspect	*ci = &c->c_ins;
	char			*what;

	snprintf(c->c_addrtext, sizeof(c->c_addrtext), "%s", ci->ci_addr);
	if (!conn_log_ready(c))
		return;
	c->c_judged = true;
	if (!policy_match_host(c->c_policy->pp_policy, c->c_host, c->c_hostlen,
	    c->c_port, &c->c_dec)) {
		conn_deny(c);
		return;
	}
	if (strcmp(c->c_dec.d_host.h_name, ci->ci_host) != 0 ||
	    c->c_port != ci->ci_port) {
		xasprintf(&what, "the Host header names %s:%d inside a TLS "
		    "connection to %s:%d", c->c_dec.d_host.h_name, c->c_port,
		    ci->ci_host, ci->ci_port);
		conn_reason(c, what);
		c->c_dec.d_verdict = VERDICT_DENY;
		conn_http_answer(c, 403, what, "open a connection to each "
		    "host; one inspected connection serves one host");
		free(what);
		return;
	}
	/* The tunnel's addresses, checked again by the policy in force. */
	if (!conn_dial_check(c, c->c_ins.ci_addrs, c->c_ins.ci_naddrs) ||
	    !conn_http_inspect(c))
		return;
	if (ci->ci_upfail != NULL) {
		conn_fail(c, CONN_UNREACHABLE, ci->ci_upfail);
		return;
	}
	conn_tls_upstream(c);
}

/*
 * Inspected, before requests: the upstream's bytes wait for them; a
 * pooled one was asked nothing, and is dropped.
 */
void
conn_tls_up_hold(struct conn *c)
{
	if (c->c_dial.cd_up == CU_KEPT)
		conn_drop_up(c);
	else
		bufferevent_disable(c->c_up, EV_READ);
}

const struct conn_ops conn_tls_ops = {
	.co_name = "https",
	.co_request = conn_tls_head,
	.co_connected = conn_tls_redial,
	.co_refuse = conn_http_refuse,
};
