/*
 * conn.c: one client of the proxy, from its first byte to its log line.
 *
 * The first byte tells the protocol: 0x05 is SOCKS5, anything else HTTP
 * (a forward request in absolute form, or CONNECT).  Then, for every
 * protocol alike:
 *
 *   1. decide on the name and port (policy_match_host): a refused name is
 *      answered at once and never looked up;
 *   2. resolve an allowed name on the loop (dns.c) and check every
 *      address it has (policy_match_addr): one special address refuses
 *      the lot;
 *   3. connect to exactly the addresses checked, one after the other;
 *   4. CONNECT and SOCKS5: answer, then read the client's first bytes
 *      before anything goes upstream; a TLS ClientHello must name the
 *      host decided on (or one the policy allows itself); then splice
 *      both ways (lib/relay.c).  HTTP: send the request upstream with
 *      its Host rewritten and hop-by-hop headers dropped, send the answer
 *      back, and wait for the next request, decided anew.
 *
 * This file is the core every protocol shares: the callbacks, which
 * hand each event to the handlers of the connection's state, a decision
 * begun, refused (in the protocol's own way: conn_ops.co_refuse) and
 * logged, the end of a connection and the tunnel.  Steps 1 to 3 are
 * conn_dial.c's; the protocols are in files of their own, above the core
 * (conn.h), and conn_accept.c chooses among them.
 *
 * Each decision ends in one egress log line; one that goes upstream has
 * an open line too, written before its first byte goes (conn_log_open).
 * Every path ends in
 * conn_free(), which owns and frees everything; a callback that calls it
 * touches nothing after.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/bufferevent_struct.h>	/* ev_read: conn_up_read() */
#include <event2/event.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "certs/certs.h"
#include "lib/addr.h"
#include "lib/endpoint.h"
#include "lib/host.h"
#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/relay.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/conn.h"
#include "proxy/proxy.h"
#include "proxy/upool.h"
#include "sandbox/capture.h"

/* A connection whose protocol is not known yet: refusing is closing. */
static void
conn_none_refuse(struct conn *c, enum conn_refusal why, const char *what,
    const char *hint)
{
	(void)why;
	(void)what;
	(void)hint;
	conn_finish(c);
}

static const struct conn_ops conn_none_ops = {
	.co_name = "none",
	.co_refuse = conn_none_refuse,
};

static void	conn_bev_free(struct bufferevent *);

/* Says something about the proxy at most once every 10 s. */
static void
conn_warn(struct proxy *px, const char *msg)
{
	time_t	 now = time(NULL);

	if (now - px->px_warned < 10)
		return;
	px->px_warned = now;
	log_warnx("proxy: %s", msg);
}

/* The egress record of the current decision, borrowing from c. */
void
conn_egress(const struct conn *c, struct egress *e0)
{
	struct egress	*e = e0;

	memset(e, 0, sizeof(*e));
	e->e_start = c->c_start;
	e->e_client = c->c_client;
	e->e_sandbox = c->c_sandbox;
	e->e_has_uid = c->c_peer.lp_known;
	e->e_uid = c->c_peer.lp_uid;
	e->e_command = c->c_command;
	e->e_identity = c->c_identity;
	e->e_origin_uid = c->c_origin_uid;
	e->e_proto = c->c_ops->co_name;
	e->e_method = c->c_method;
	e->e_host = c->c_host;
	e->e_hostlen = c->c_hostlen;
	e->e_port = c->c_port;
	e->e_addr = c->c_addrtext[0] != '\0' ? c->c_addrtext : NULL;
	/* The policy's verdict; what became of it is in status and reason. */
	e->e_allow = c->c_dec.d_verdict == VERDICT_ALLOW;
	if (c->c_dec.d_rule != NULL) {
		e->e_rule = c->c_dec.d_rule->pi_text;
		e->e_rule_from = c->c_dec.d_rule->pi_from;
	}
	e->e_reason = c->c_reason;
	e->e_status = c->c_status;
	e->e_up = c->c_up_bytes;
	e->e_down = c->c_down_bytes;
	e->e_path = c->c_path;
	e->e_warning = c->c_warning;
	e->e_report = c->c_report;
	e->e_limit = c->c_limit;
	e->e_credential = c->c_credential;
	/* Only an exchange with an open line has an id: its two pair. */
	e->e_id = c->c_early ? c->c_id : NULL;
}

/*
 * The fix for a refused captured connection to an address of the
 * sandbox's pool (capture.h) that its resolver gave no name in this run
 * (one a tool kept from another run or sandbox, or made up): it stands
 * for no host, so the fix is the name, looked up in this run; an
 * allow_cidrs entry for it would open an address of a range no host of
 * the Internet has, and reach nothing meant.  Returns a new string, or
 * NULL when c is not such a connection.  (The core's: a captured HTTP
 * request is refused by HTTP, a tunnel by the capture.)
 */
static char *
conn_pool_hint(const struct conn *c)
{
	static const uint8_t	 p6[16] = CAPTURE_POOL6;
	struct in_addr		 a4;
	struct in6_addr		 a6;
	const char		*host = c->c_cap.cc_host;
	char			*hint;

	if (c->c_cap.cc_port == 0 || strcmp(c->c_dec.d_host.h_name, host) !=
	    0)
		return NULL;
	if (inet_pton(AF_INET, host, &a4) == 1) {
		if ((ntohl(a4.s_addr) & 0xffff0000U) != CAPTURE_POOL4)
			return NULL;
	} else if (inet_pton(AF_INET6, host, &a6) != 1 ||
	    memcmp(a6.s6_addr, p6, 12) != 0)
		return NULL;
	xasprintf(&hint, "%s is an address of the sandbox's own pool "
	    "(198.19.0.0/16, 64:ff9b:1:1::/96), which its resolver gives "
	    "names the policy allows; this run gave it to none (an address "
	    "kept from another run is stale): connect by the host's name, "
	    "looked up in this run, and allow that name if it is refused",
	    host);
	return hint;
}

/* Writes the egress log line of the current decision, once. */
void
conn_log(struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	struct egress	 e;
	char		*hint = NULL, *pattern = NULL;

	if (c->c_record != CR_OPEN ||
	    (px->px_log == NULL && !proxy_observed(px)))
		return;
	c->c_record = CR_LOGGED;
	scrub_warn(c->c_http.hx_scrub, &c->c_warning);
	conn_egress(c, &e);
	if (px->px_log != NULL)
		jsonl_write(px->px_log, &e);
	if (proxy_observed(px)) {
		/* A fix only for what the policy itself refused. */
		if (!e.e_allow && c->c_hint != NULL)
			hint = xstrdup(c->c_hint);
		else if (!e.e_allow && c->c_judged) {
			/* A pool address: the name, never the address. */
			if ((hint = conn_pool_hint(c)) == NULL)
				hint = decision_hint(&c->c_dec);
			pattern = decision_pattern(&c->c_dec);
		}
		proxy_observe(px, &e, hint, pattern);
		if (c->c_table->ct_observe != NULL)
			c->c_table->ct_observe(c, &e, hint, pattern);
		free(hint);
		free(pattern);
	}
}

/* Tells the program that c, held for its answer (CS_ASKING), goes. */
void
conn_ask_cancel(struct conn *c)
{
	struct proxy	*px = c->c_proxy;

	if (px->px_hooks != NULL && px->px_hooks->hk_ask_cancel != NULL)
		px->px_hooks->hk_ask_cancel(c, px->px_hooks_arg);
}

/* Frees c and everything it holds; logs its decision if not yet done. */
void
conn_free(struct conn *c)
{
	struct proxy	*px = c->c_proxy;

	conn_log(c);
	if (c->c_state == CS_ASKING)
		conn_ask_cancel(c);
	TAILQ_REMOVE(&px->px_conns, c, c_entry);
	px->px_nconns--;
	metrics_sync(px->px_metrics);
	if (c->c_table->ct_gone != NULL)
		c->c_table->ct_gone(c);
	dns_cancel(c->c_dial.cd_query);
	if (c->c_ins.ci_sreq != NULL)
		signer_cancel(c->c_ins.ci_sreq);
	X509_free(c->c_ins.ci_leaf);
	free(c->c_ins.ci_upfail);
	if (c->c_ins.ci_close_ev != NULL)
		event_free(c->c_ins.ci_close_ev);
	if (c->c_ask_ev != NULL)
		event_free(c->c_ask_ev);
	if (c->c_dial.cd_ev != NULL)
		event_free(c->c_dial.cd_ev);
	if (c->c_deadline != NULL)
		event_free(c->c_deadline);
	if (c->c_eof_ev != NULL)
		event_free(c->c_eof_ev);
	if (c->c_relay != NULL)
		relay_free(c->c_relay);		/* closes both sockets */
	else {
		conn_up_let_go(c);		/* a kept upstream waits */
		conn_bev_free(c->c_bev);
		conn_bev_free(c->c_up);
		if (c->c_fd != -1)
			close(c->c_fd);
		if (c->c_upfd != -1)
			close(c->c_upfd);
	}
	decision_clear(&c->c_dec);
	ssh_peek_clear(&c->c_ssh);
	proxy_policy_unref(c->c_policy);
	ident_release(&c->c_proxy->px_idents, &c->c_ident_hold);
	proxy_policy_unref(c->c_ident);
	conn_narrow_clear(&c->c_narrow);
	http_request_clear(&c->c_http.hx_req);
	http_response_clear(&c->c_http.hx_resp);
	scrub_free(c->c_http.hx_scrub);
	renew_free(c->c_http.hx_renew);
	free(c->c_method);
	free(c->c_path);
	free(c->c_warning);
	free(c->c_hint);
	free(c->c_reason_buf);
	free(c->c_sandbox);
	free(c->c_command);
	free(c->c_identity);
	free(c->c_origin_uid);
	free(c);
	if (px->px_draining && px->px_nconns == 0 && px->px_hooks != NULL &&
	    px->px_hooks->hk_drained != NULL)
		px->px_hooks->hk_drained(px->px_hooks_arg);
}

/* Closes every connection at once, and the idle upstreams. */
void
conn_close_all(struct proxy *px)
{
	while (!TAILQ_EMPTY(&px->px_conns))
		conn_free(TAILQ_FIRST(&px->px_conns));
	upool_free(&px->px_upool);
}

/*
 * Frees a bufferevent, or NULL.  A TLS filter's underlying one lives on
 * until the filter is finalized, later, so it stops watching the socket
 * now, before the caller closes it.
 */
static void
conn_bev_free(struct bufferevent *bev)
{
	struct bufferevent	*under;

	if (bev == NULL)
		return;
	if ((under = bufferevent_get_underlying(bev)) != NULL)
		bufferevent_disable(under, EV_READ | EV_WRITE);
	bufferevent_free(bev);
}

/*
 * Lets go of c's upstream: a kept one to the table's ct_let_go (the
 * proxy's pool, conn_pool.c), which closes what may not wait; without
 * one, closed.  Either way c has none after.
 */
void
conn_up_let_go(struct conn *c)
{
	if (c->c_table->ct_let_go != NULL)
		c->c_table->ct_let_go(c);
	else
		conn_drop_up(c);
}

/* Closes the upstream connection, if any. */
void
conn_drop_up(struct conn *c)
{
	conn_bev_free(c->c_up);
	if (c->c_upfd != -1)
		close(c->c_upfd);
	c->c_up = NULL;
	c->c_upfd = -1;
	c->c_dial.cd_up = CU_NEW;
}

/*
 * Reads from the upstream again, or stops.  A TLS bufferevent on a socket
 * goes on only when the socket is readable; what OpenSSL has read ahead
 * or decrypted already would wait for bytes that may never come (the end
 * of an answer), so it is told to read now.
 */
void
conn_up_read(struct conn *c, bool on)
{
	SSL	*ssl;

	if (!on) {
		bufferevent_disable(c->c_up, EV_READ);
		return;
	}
	bufferevent_enable(c->c_up, EV_READ);
	if ((ssl = bufferevent_openssl_get_ssl(c->c_up)) != NULL &&
	    (SSL_pending(ssl) > 0 || SSL_has_pending(ssl)))
		event_active(&c->c_up->ev_read, EV_READ, 1);
}

/*
 * Whether the upstream's TLS session ended by a bare close: the socket
 * closed with no close_notify first (OpenSSL's "unexpected eof while
 * reading"), and no other error.  Takes the bufferevent's errors.
 */
bool
conn_up_bare(struct conn *c)
{
	unsigned long	 e;
	bool		 eof = false, other = false;

	if (c->c_up == NULL || bufferevent_openssl_get_ssl(c->c_up) == NULL)
		return false;
	while ((e = bufferevent_get_openssl_error(c->c_up)) != 0) {
		/* libevent puts SSL_get_error()'s code first. */
		if (e == SSL_ERROR_SSL)
			continue;
#ifdef SSL_R_UNEXPECTED_EOF_WHILE_READING
		if (ERR_GET_LIB(e) == ERR_LIB_SSL &&
		    ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
			eof = true;
			continue;
		}
#endif
		other = true;
	}
	return eof && !other;
}

/* Sets the reason of a refusal or failure (copied). */
void
conn_reason(struct conn *c, const char *reason)
{
	free(c->c_reason_buf);
	c->c_reason_buf = xstrdup(reason);
	c->c_reason = c->c_reason_buf;
}

/* The reason, unless one is set: the upstream's event what ended c. */
void
conn_up_reason(struct conn *c, short what)
{
	if (c->c_reason == NULL)
		conn_reason(c, (what & BEV_EVENT_TIMEOUT) ? "upstream timed "
		    "out" : "upstream closed early");
}

static void
conn_close_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_free(arg);
}

/*
 * Bytes not written yet beneath c_bev's TLS: in every bufferevent under
 * it (an inspected tunnel of a tls: listener's client has two TLS
 * layers over its socket).  *bottom is the socket's.
 */
static size_t
conn_unflushed(struct conn *c, struct bufferevent **bottom)
{
	struct bufferevent	*u;
	size_t			 n = 0;

	for (u = bufferevent_get_underlying(c->c_bev); u != NULL;
	    u = bufferevent_get_underlying(u)) {
		n += evbuffer_get_length(bufferevent_get_output(u));
		*bottom = u;
	}
	return n;
}

/* The TLS records under a TLS client are all written. */
static void
conn_flushed_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct conn		*c = arg;
	struct bufferevent	*bottom;

	(void)info;
	if (evbuffer_get_length(buf) == 0 && c->c_state == CS_FLUSHING &&
	    conn_unflushed(c, &bottom) == 0)
		event_active(c->c_ins.ci_close_ev, EV_TIMEOUT, 1);
}

/*
 * Everything c had to say is in its output: close.  A TLS client (an
 * inspected one, or a tls: listener's) gets close_notify (unless the
 * answer was cut short, when it must not look whole), and the TLS
 * records are flushed first, through every layer: freeing the filter
 * would drop them.
 */
void
conn_close(struct conn *c)
{
	struct bufferevent	*bottom = NULL;
	struct evbuffer		*uout;

	if (!c->c_ins.ci_tls && !c->c_mtls) {
		conn_free(c);
		return;
	}
	if (c->c_state != CS_ABORTING)
		SSL_shutdown(bufferevent_openssl_get_ssl(c->c_bev));
	if (conn_unflushed(c, &bottom) == 0 || bottom == NULL) {
		conn_free(c);
		return;
	}
	if ((c->c_ins.ci_close_ev = event_new(c->c_proxy->px_base, -1, 0,
	    conn_close_cb, c)) == NULL)
		fatalx("proxy: event_new failed");
	c->c_state = CS_FLUSHING;
	bufferevent_disable(c->c_bev, EV_READ);
	uout = bufferevent_get_output(bottom);
	evbuffer_add_cb(uout, conn_flushed_cb, c);
	/* the deadline still runs: a client that never reads is dropped */
	conn_arm_deadline(c);
}

/*
 * Closes c once what it has to say is written, in state (CS_CLOSING, or
 * CS_ABORTING for an answer cut short).
 */
static void
conn_end(struct conn *c, enum conn_state state)
{
	c->c_state = state;
	conn_up_let_go(c);		/* a kept upstream waits, else closed */
	bufferevent_disable(c->c_bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(c->c_bev)) == 0) {
		conn_close(c);
		return;
	}
	/*
	 * conn_write_cb closes it once the output is drained: told when it
	 * is empty, not below the forwarding's low mark, or an answer's
	 * last bytes would be dropped.
	 */
	bufferevent_setwatermark(c->c_bev, EV_WRITE, 0, 0);
}

/* Closes c once what it has to say is written. */
void
conn_finish(struct conn *c)
{
	conn_end(c, CS_CLOSING);
}

/* The same, for an answer cut short (no close_notify over TLS). */
void
conn_abort(struct conn *c)
{
	conn_end(c, CS_ABORTING);
}

/*
 * The policy refused the request: say so in the client's protocol, with
 * the rule and the fix; log it.
 */
void
conn_deny(struct conn *c)
{
	char	*what, *hint;

	what = decision_describe(&c->c_dec);
	if ((hint = conn_pool_hint(c)) == NULL)
		hint = decision_hint(&c->c_dec);
	/* The log has the target in its own fields: keep the why. */
	conn_reason(c, strstr(what, ": ") ? strstr(what, ": ") + 2 : what);
	if (c->c_state == CS_ASKING) {
		/* Asked, and refused or not answered in time. */
		char	*why;

		xasprintf(&why, "%s; the harness did not allow it",
		    c->c_reason);
		conn_reason(c, why);
		free(why);
	}
	c->c_dec.d_verdict = VERDICT_DENY;
	conn_refuse(c, CONN_DENIED, what, hint);
	free(what);
	free(hint);
}

/*
 * Says what was refused or why it failed, what is the fix (hint, or
 * NULL), in c's protocol, and closes c.
 */
void
conn_refuse(struct conn *c, enum conn_refusal why, const char *what,
    const char *hint)
{
	c->c_ops->co_refuse(c, why, what, hint);
}

/*
 * The request was allowed but could not be carried out (DNS, connect,
 * the upstream), as kind says: 502 or 504, SOCKS5 host unreachable or
 * refused.
 */
void
conn_fail(struct conn *c, enum conn_refusal kind, const char *why)
{
	char	*what;

	if (c->c_dec.d_host.h_kind == HOST_ADDR &&
	    c->c_dec.d_host.h_ip.a_family == AF_INET6)
		xasprintf(&what, "[%s]:%d: %s", c->c_dec.d_host.h_name,
		    c->c_port, why);
	else
		xasprintf(&what, "%s:%d: %s", c->c_dec.d_host.h_name,
		    c->c_port, why);
	conn_reason(c, what);
	conn_refuse(c, kind, what, NULL);
	free(what);
}

/* Starts a new decision on this connection (each HTTP request has one). */
void
conn_begin(struct conn *c, enum conn_proto proto, const char *method,
    const char *host, size_t hostlen, int port)
{
	struct ppolicy	*base;

	decision_clear(&c->c_dec);
	memset(&c->c_dec, 0, sizeof(c->c_dec));
	/*
	 * The policy in force now decides, even if it is reloaded later:
	 * for a tls: client, the one its identity's rule joins
	 * (proxy_policy.c).
	 */
	base = proxy_policy_ident(c->c_proxy->px_policy, c->c_identity);
	proxy_policy_unref(c->c_ident);
	c->c_ident = base != c->c_proxy->px_policy ? proxy_policy_ref(base) :
	    NULL;
	c->c_report = false;
	c->c_limit = NULL;
	c->c_credential = NULL;
	proxy_policy_unref(c->c_policy);
	c->c_policy = proxy_policy_ref(conn_narrow_policy(&c->c_narrow,
	    base, c->c_table->ct_live != NULL ? c->c_table->ct_live(c) :
	    NULL));
	free(c->c_method);
	c->c_method = method != NULL ? xstrdup(method) : NULL;
	free(c->c_reason_buf);
	c->c_reason_buf = NULL;
	c->c_reason = NULL;
	free(c->c_path);
	free(c->c_warning);
	free(c->c_hint);
	c->c_path = c->c_warning = c->c_hint = NULL;
	if ((c->c_ops = c->c_table->ct_ops[proto]) == NULL)
		c->c_ops = &conn_none_ops;
	if (hostlen >= sizeof(c->c_host))
		hostlen = sizeof(c->c_host) - 1;
	memcpy(c->c_host, host, hostlen);
	c->c_host[hostlen] = '\0';
	c->c_hostlen = hostlen;
	c->c_port = port;
	c->c_addrtext[0] = '\0';
	c->c_dial.cd_naddrs = c->c_dial.cd_next = 0;
	c->c_dial.cd_error = 0;
	c->c_status = 0;
	c->c_up_bytes = c->c_down_bytes = 0;
	c->c_record = CR_OPEN;
	c->c_early = false;
	c->c_judged = false;
	gettimeofday(&c->c_start, NULL);
	evtimer_del(c->c_deadline);
}

/*
 * No whole request in time (a slow or silent client): closed, and
 * logged as a refusal with what was known.
 */
static void
conn_too_slow(struct conn *c)
{
	char	*why;

	if (c->c_record == CR_NONE) {
		conn_begin(c, c->c_table->ct_on[c->c_state].proto, NULL, "",
		    0, 0);
		c->c_dec.d_verdict = VERDICT_DENY;
		xasprintf(&why, "no whole request within %d s (--head-secs)",
		    c->c_proxy->px_head_secs);
		conn_reason(c, why);
		free(why);
	} else if (c->c_reason == NULL)
		conn_reason(c, "timed out");
	conn_free(c);
}

static void
conn_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_too_slow(arg);
}

/* Gives the client px_head_secs in all for its next request head. */
void
conn_arm_deadline(struct conn *c)
{
	struct timeval	 tv = { c->c_proxy->px_head_secs, 0 };

	evtimer_add(c->c_deadline, &tv);
}

/* The network.allow entry that would allow c's target, or NULL. */
char *
conn_pattern(const struct conn *c)
{
	return decision_pattern(&c->c_dec);
}

/*
 * Why c is refused while the egress log cannot be written, in a new
 * string; counted, and said once per outage.  The decision becomes a
 * refusal with that reason.
 */
char *
conn_log_unwritable(struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	char		*what;

	xasprintf(&what, "the egress log cannot be written (%s), and nothing "
	    "goes out unlogged", jsonl_error(px->px_log));
	if (!px->px_log_refusing)
		log_warnx("proxy: %s: refusing new requests until it can; "
		    "tried again at each", what);
	px->px_log_refusing = true;
	px->px_stats.ps_log_refused++;
	conn_reason(c, what);
	c->c_dec.d_verdict = VERDICT_DENY;
	return what;
}

/* Refuses c, 503 or a SOCKS5 failure: the log cannot be written. */
static void
conn_log_refuse(struct conn *c)
{
	char	*what;

	what = conn_log_unwritable(c);
	conn_refuse(c, CONN_UNAVAILABLE, what, "free space where the egress "
	    "log is written (or mend what stops writes to it); the proxy "
	    "serves again by itself once it can write, with the lines held "
	    "back meanwhile");
	free(what);
}

/*
 * Whether the egress log can take what c is about to do.  While it
 * cannot be written nothing new goes out (fail closed): c is refused
 * (conn_log_refuse) and false returned.  Every new exchange tries the
 * log again (jsonl_retry), so service resumes by itself once it can be
 * written.
 */
bool
conn_log_ready(struct conn *c)
{
	struct proxy	*px = c->c_proxy;

	if (px->px_log == NULL || jsonl_retry(px->px_log)) {
		px->px_log_refusing = false;
		return true;
	}
	conn_log_refuse(c);
	return false;
}

/*
 * Writes the open line of c's decision (its id, the address chosen,
 * the rule, who asked), before its first byte goes upstream, once: a
 * proxy killed in the middle of the exchange leaves it in the log.
 * Returns false when it cannot be written: the caller refuses c
 * (conn_log_unwritable), and nothing goes out before its line.
 */
bool
conn_log_open(struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	struct egress	 e;
	size_t		 held;

	if (c->c_early || c->c_record != CR_OPEN || px->px_log == NULL)
		return true;
	snprintf(c->c_id, sizeof(c->c_id), "%s-%llu", px->px_idpfx,
	    (unsigned long long)++px->px_nextid);
	conn_egress(c, &e);
	/* What became of it is the end line's. */
	e.e_status = 0;
	e.e_up = e.e_down = 0;
	e.e_open = true;
	e.e_id = c->c_id;
	held = jsonl_held(px->px_log);
	if (jsonl_write_open(px->px_log, &e)) {
		c->c_early = true;
		return true;
	}
	/* Cut short by a full disk, its rest is held: the end pairs it. */
	c->c_early = jsonl_held(px->px_log) > held;
	return false;
}

/*
 * HTTP: the open line, or the request refused with 503 (it has had no
 * answer yet).  Returns whether it may go upstream.
 */
bool
conn_log_open_or_refuse(struct conn *c)
{
	if (conn_log_open(c))
		return true;
	conn_log_refuse(c);
	return false;
}

/*
 * A tunnel is answered (or, captured, needs no answer): nothing goes
 * upstream until its first bytes are judged (CS_PEEK's handlers).
 */
void
conn_peek(struct conn *c)
{
	c->c_state = CS_PEEK;
	bufferevent_enable(c->c_bev, EV_READ);
	conn_process(c);
}

/* The client's end of file or error: c ends, saying so if need be. */
void
conn_gone(struct conn *c, short what)
{
	(void)what;
	if (c->c_record == CR_OPEN && c->c_reason == NULL)
		conn_reason(c, "the client went away");
	conn_free(c);
}

/* The same, where the client's end says nothing (a peek, a flush). */
void
conn_gone_quietly(struct conn *c, short what)
{
	(void)what;
	conn_free(c);
}

/* Bytes from an upstream that was asked nothing: a kept one is dropped. */
static void
conn_up_unasked(struct conn *c)
{
	if (c->c_dial.cd_up == CU_KEPT)
		conn_drop_up(c);
}

/* The upstream's end of file, error or timeout: c ends, but a kept one. */
void
conn_up_gone(struct conn *c, short what)
{
	if (c->c_dial.cd_up == CU_KEPT) {
		conn_drop_up(c);
		return;
	}
	conn_up_reason(c, what);
	conn_abort(c);
}

/* Moves c on as far as the bytes it has allow. */
void
conn_process(struct conn *c)
{
	if (c->c_table->ct_on[c->c_state].on_read != NULL)
		c->c_table->ct_on[c->c_state].on_read(c);
}

void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_process(arg);
}

void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	if (c->c_table->ct_on[c->c_state].on_write != NULL)
		c->c_table->ct_on[c->c_state].on_write(c);
}

/*
 * The client's end of file, once the bytes read before it are taken:
 * its state's on_gone.  A state with no handler for it is not reading
 * (a decision, a dial, a relay that has the socket, a close): its end is
 * told again when reading resumes, by the socket or the TLS session,
 * which both keep saying it.
 */
static void
conn_eof_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn			*c = arg;
	const struct conn_handlers	*h = &c->c_table->ct_on[c->c_state];

	(void)fd;
	(void)what;
	if (c->c_bev == NULL || (h->on_read == NULL && h->on_gone == NULL))
		return;
	(h->on_gone != NULL ? h->on_gone : conn_gone)(c, c->c_eof_what);
}

/*
 * A client's end comes with the last bytes before it, and a TLS
 * client's (close_notify) even before they are in c_bev's input (the
 * filter reads both at once, and says the end first): it is handled
 * after the read callback, on the loop, or a request or a tunnel's first
 * bytes sent with it would be lost.  An error ends c at once.
 */
void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn			*c = arg;
	const struct conn_handlers	*h = &c->c_table->ct_on[c->c_state];

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		if (h->on_connected != NULL)
			h->on_connected(c);
	} else if (what & BEV_EVENT_TIMEOUT)
		conn_too_slow(c);
	else if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR)) {
		c->c_eof_what = what;
		event_active(c->c_eof_ev, EV_TIMEOUT, 1);
	} else
		(h->on_gone != NULL ? h->on_gone : conn_gone)(c, what);
}

void
conn_up_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	(c->c_table->ct_on[c->c_state].on_up_read != NULL ?
	    c->c_table->ct_on[c->c_state].on_up_read : conn_up_unasked)(c);
}

void
conn_up_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	if (c->c_table->ct_on[c->c_state].on_up_write != NULL)
		c->c_table->ct_on[c->c_state].on_up_write(c);
}

void
conn_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	(c->c_table->ct_on[c->c_state].on_up_gone != NULL ?
	    c->c_table->ct_on[c->c_state].on_up_gone : conn_up_gone)(c, what);
}

/* Names the client for the log: address and port, or "unix". */
static void
conn_client_name(struct conn *c, const struct sockaddr *sa)
{
	const struct sockaddr_in	*sin = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6	*sin6 = (const struct sockaddr_in6 *)sa;
	char				 text[ADDR_STRLEN];

	if (sa->sa_family == AF_INET)
		snprintf(c->c_client, sizeof(c->c_client), "%s:%u",
		    inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text)),
		    ntohs(sin->sin_port));
	else if (sa->sa_family == AF_INET6)
		snprintf(c->c_client, sizeof(c->c_client), "[%s]:%u",
		    inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof(text)),
		    ntohs(sin6->sin6_port));
	else
		snprintf(c->c_client, sizeof(c->c_client), "unix");
}

/*
 * A new client on fd (taken), from sa, in state (CS_PP2 or CS_SNIFF),
 * deciding with table; NULL when there are too many already (closed,
 * and logged like any refusal).  On a Unix socket, the kernel says who
 * connected (listen_peer), and each line of the client carries that
 * uid.  bev is NULL, or one end of a pair (fd -1, sa NULL) for a test
 * with no socket.
 */
struct conn *
conn_new(struct proxy *px, struct bufferevent *bev, int fd,
    const struct sockaddr *sa, const struct conn_table *table,
    enum conn_state state)
{
	struct timeval	 tv = { px->px_head_secs, 0 };
	struct conn	*c;

	if (fd != -1)
		endpoint_nodelay(fd);
	c = xcalloc(1, sizeof(*c));
	c->c_proxy = px;
	c->c_table = table;
	c->c_ops = &conn_none_ops;
	c->c_fd = fd;
	c->c_upfd = -1;
	c->c_state = state;
	if (sa != NULL) {
		conn_client_name(c, sa);
		listen_peer(fd, &c->c_peer);
	}
	if ((c->c_bev = bev) == NULL &&
	    (c->c_bev = bufferevent_socket_new(px->px_base, fd, 0)) == NULL)
		fatalx("proxy: bufferevent_socket_new failed");
	bufferevent_setcb(c->c_bev, conn_read_cb, conn_write_cb,
	    conn_event_cb, c);
	bufferevent_setwatermark(c->c_bev, EV_WRITE, PROXY_BUFFER_MAX / 2, 0);
	bufferevent_set_timeouts(c->c_bev, &tv, NULL);
	if ((c->c_deadline = evtimer_new(px->px_base, conn_deadline_cb, c)) ==
	    NULL || (c->c_eof_ev = event_new(px->px_base, -1, 0, conn_eof_cb,
	    c)) == NULL)
		fatalx("proxy: evtimer_new failed");
	TAILQ_INSERT_TAIL(&px->px_conns, c, c_entry);
	px->px_nconns++;
	metrics_sync(px->px_metrics);
	if (px->px_nconns > px->px_max) {
		conn_warn(px, "too many connections (--max-conns); closing "
		    "new ones");
		conn_begin(c, PROTO_NONE, NULL, "", 0, 0);
		c->c_dec.d_verdict = VERDICT_DENY;
		conn_reason(c, "too many connections (--max-conns)");
		conn_free(c);
		return NULL;
	}
	conn_arm_deadline(c);
	bufferevent_enable(c->c_bev, EV_READ | EV_WRITE);
	return c;
}
