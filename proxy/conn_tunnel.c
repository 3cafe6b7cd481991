/*
 * conn_tunnel.c: the first bytes of a tunnel (CS_PEEK).  A CONNECT or
 * SOCKS5 tunnel is answered, a captured one is not (its client believes
 * it is connected already), and then its first bytes are judged before
 * any goes upstream: a TLS ClientHello must name the host decided on
 * (or one the policy allows on its own).  Then both sockets go to the
 * relay (conn_tunnel), a tls: listener's client to the pump
 * (conn_pump.c), or, for a host that network.inspect names, the
 * tunnel is opened (conn_tls.c).  A server that speaks first (SSH, SMTP)
 * is passed on meanwhile.  CONNECT's own operations are here too: to an
 * inspected host, a tunnel may take a verified upstream from the pool
 * rather than dial (conn_tls_pooled), as SOCKS5 and the capture do.
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "lib/log.h"
#include "lib/relay.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "proxy/conn_proto.h"

/* Refuses what was tunnelled, saying why, before a byte goes up. */
static void __attribute__((format(printf, 2, 3)))
conn_tunnel_refuse(struct conn *c, const char *fmt, ...)
{
	va_list	 ap;
	char	*why;

	va_start(ap, fmt);
	if (vasprintf(&why, fmt, ap) == -1)
		fatalx("proxy: out of memory");
	va_end(ap);
	conn_reason(c, why);
	free(why);
	c->c_dec.d_verdict = VERDICT_DENY;
	conn_finish(c);
}

/*
 * Whether a ClientHello's server name, sni, may go up the tunnel: it is
 * the tunnel's host, or neither is inspected (ins is the tunnel's host's
 * rules, or NULL) and the policy allows it on its own.  Refuses the
 * tunnel and returns false when not.
 */
static bool
conn_tunnel_sni(struct conn *c, const struct pinspect *ins, const char *sni,
    size_t snilen)
{
	const struct policy	*pol = c->c_policy->pp_policy;
	struct decision		 d;
	struct host		 h;
	char			*cause, *shown;
	bool			 ok = false;

	if (host_parse(sni, snilen, &h, &cause) == 0 &&
	    strcmp(h.h_name, c->c_dec.d_host.h_name) == 0)
		return true;
	shown = str_escape(sni, snilen);
	if (cause == NULL && (ins != NULL || (h.h_kind == HOST_NAME &&
	    policy_match_inspect(pol, h.h_name) != NULL)))
		/* Inspection is by the tunnel's host, named alike. */
		conn_tunnel_refuse(c, "TLS server name \"%s\" differs "
		    "from the tunnel's host %s, and one of them is "
		    "inspected (network.inspect)", shown,
		    c->c_dec.d_host.h_name);
	else if (cause == NULL && policy_match_host(pol, sni, snilen,
	    c->c_port, &d) && d.d_host.h_kind == HOST_NAME) {
		decision_clear(&d);
		ok = true;
	} else {
		if (cause == NULL)
			decision_clear(&d);
		conn_tunnel_refuse(c, "TLS server name \"%s\" does not "
		    "match the tunnel's host %s, and is not allowed "
		    "itself", shown, c->c_dec.d_host.h_name);
	}
	free(cause);
	free(shown);
	return ok;
}

/*
 * Opens the tunnel to an inspected host, if this proxy can: it needs a
 * CA to sign for it.
 */
static void
conn_tunnel_inspect(struct conn *c)
{
	struct proxy	*px = c->c_proxy;

	if (px->px_signer == NULL || px->px_tls_srv == NULL) {
		conn_tunnel_refuse(c, "%s is to be inspected "
		    "(network.inspect), but this proxy started without a CA "
		    "(restart it with the inspecting policy, after `cordon ca "
		    "init`)", c->c_dec.d_host.h_name);
		return;
	}
	conn_tls_start(c);
}

/*
 * CONNECT, SOCKS5 and a captured tunnel, once answered: the first bytes
 * of the client decide.  A TLS ClientHello must name the host decided
 * on, or one the policy allows on its own; otherwise the tunnel is
 * closed before one byte goes upstream.  A host network.inspect names is
 * opened instead of tunnelled (conn_tls.c), and takes nothing but TLS
 * naming it.
 */
void
conn_tunnel_peek(struct conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->c_bev);
	const struct pinspect	*ins = NULL;
	size_t			 len = evbuffer_get_length(in), snilen;
	char			 sni[256];
	int			 rc;

	if (len == 0)
		return;
	if (len > TLS_PEEK_MAX)
		len = TLS_PEEK_MAX;
	if (c->c_dec.d_host.h_kind == HOST_NAME)
		ins = policy_match_inspect(c->c_policy->pp_policy,
		    c->c_dec.d_host.h_name);
	rc = tls_peek_sni(evbuffer_pullup(in, (ssize_t)len), len, sni,
	    sizeof(sni), &snilen);
	switch (rc) {
	case TLS_PEEK_MORE:
		if (len < TLS_PEEK_MAX)
			return;
		/* FALLTHROUGH */
	case TLS_PEEK_BAD:
		conn_tunnel_refuse(c, "%s", "a malformed TLS ClientHello");
		return;
	case TLS_PEEK_SNI:
		if (!conn_tunnel_sni(c, ins, sni, snilen))
			return;
		break;
	default:		/* not TLS, or TLS without a name */
		break;
	}
	if (ins != NULL) {
		if (rc == TLS_PEEK_NOT_TLS) {
			conn_tunnel_refuse(c, "%s is inspected "
			    "(network.inspect): only TLS may be tunnelled to "
			    "it; send plain HTTP as proxy requests "
			    "(http_proxy), not in a tunnel",
			    c->c_dec.d_host.h_name);
			return;
		}
		conn_tunnel_inspect(c);
		return;
	}
	conn_tunnel(c);
}

/*
 * CS_PEEK: the server speaks first (SSH, SMTP): pass it on, the table's
 * watch (the run's SSH watch) seeing it first, since the tunnel's relay
 * that it watches later will not.  An idle upstream taken from the pool
 * for an inspected host that speaks is dropped instead.
 */
void
conn_tunnel_up_read(struct conn *c)
{
	struct evbuffer	*upin = bufferevent_get_input(c->c_up);
	size_t		 len = evbuffer_get_length(upin);

	/* A pooled upstream (conn_tls_pooled) was asked nothing. */
	if (c->c_dial.cd_up == CU_KEPT) {
		conn_drop_up(c);
		return;
	}
	c->c_down_bytes += len;
	if (c->c_table->ct_early != NULL)
		c->c_table->ct_early(c, evbuffer_pullup(upin, -1), len);
	evbuffer_add_buffer(bufferevent_get_output(c->c_bev), upin);
}

static void
conn_tunnel_done_cb(struct relay *r, const char *why, void *arg)
{
	struct conn	*c = arg;

	c->c_up_bytes += relay_bytes(r, RELAY_UP);
	c->c_down_bytes += relay_bytes(r, RELAY_DOWN);
	if (why != NULL && c->c_reason == NULL)
		conn_reason(c, why);
	conn_free(c);
}

/*
 * Hands both sockets to a relay, with what is already read or not yet
 * written in either direction as its first bytes.
 */
void
conn_tunnel(struct conn *c)
{
	struct timeval	 idle = { c->c_proxy->px_idle_secs, 0 };
	struct evbuffer	*in, *out, *upin;
	struct relay	*r;
	char		*what;

	/* Answered already: a refusal now is a close, as a bad SNI's. */
	if (!conn_log_open(c)) {
		what = conn_log_unwritable(c);
		conn_tunnel_refuse(c, "%s", what);
		free(what);
		return;
	}
	/* A TLS client's bytes are records: no splice. */
	if (c->c_mtls) {
		conn_pump(c);
		return;
	}
	in = bufferevent_get_input(c->c_bev);
	out = bufferevent_get_output(c->c_bev);
	upin = bufferevent_get_input(c->c_up);
	r = relay_new(c->c_proxy->px_base, c->c_fd, c->c_upfd,
	    conn_tunnel_done_cb, c);
	c->c_up_bytes += evbuffer_get_length(in);
	relay_pending(r, RELAY_UP, evbuffer_pullup(in, -1),
	    evbuffer_get_length(in));
	relay_pending(r, RELAY_DOWN, evbuffer_pullup(out, -1),
	    evbuffer_get_length(out));
	c->c_down_bytes += evbuffer_get_length(upin);
	relay_pending(r, RELAY_DOWN, evbuffer_pullup(upin, -1),
	    evbuffer_get_length(upin));
	c->c_relay = r;
	if (c->c_table->ct_tunnel != NULL)
		c->c_table->ct_tunnel(c, evbuffer_pullup(upin, -1),
		    evbuffer_get_length(upin));
	/* The upstream bufferevent never wrote: nothing is lost there. */
	bufferevent_free(c->c_bev);
	bufferevent_free(c->c_up);
	c->c_bev = c->c_up = NULL;
	c->c_fd = c->c_upfd = -1;
	c->c_relay = r;
	c->c_state = CS_TUNNEL;
	relay_idle(r, &idle);
	if (relay_start(r) == -1)
		fatalx("proxy: cannot start a relay");
}

/* CONNECT: the upstream is connected; the tunnel's first bytes next. */
static void
conn_tunnel_connected(struct conn *c)
{
	c->c_status = 200;
	bufferevent_write(c->c_bev, "HTTP/1.1 200 Connection established\r\n"
	    "\r\n", 39);
	conn_peek(c);
}

/*
 * CONNECT, an HTTP request for a tunnel, answered as HTTP refuses; to an
 * inspected host it may take a pooled upstream (conn_tls_pooled).
 */
const struct conn_ops conn_tunnel_connect_ops = {
	.co_name = "connect",
	.co_request = conn_dial_decide,
	.co_dial = conn_tls_pooled,
	.co_connected = conn_tunnel_connected,
	.co_refuse = conn_http_refuse,
};
