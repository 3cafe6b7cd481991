/*
 * conn.c: one client of the proxy, from its first byte to its log line.
 *
 * The first byte tells the protocol: 0x05 is SOCKS5, anything else HTTP
 * (a forward request in absolute form, or CONNECT).  Then, for every
 * protocol alike:
 *
 *   1. decide on the name and port (policy_decide): a refused name is
 *      answered at once and never looked up;
 *   2. resolve an allowed name on the loop (dns.c) and check every
 *      address it has (policy_check_addr): one special address refuses
 *      the lot;
 *   3. connect to exactly the addresses checked, one after the other;
 *   4. CONNECT and SOCKS5: answer, then read the client's first bytes
 *      before anything goes upstream; a TLS ClientHello must name the
 *      host decided on (or one the policy allows itself); then splice
 *      both ways (lib/relay.c).  HTTP: send the request upstream with
 *      its Host rewritten and hop-by-hop headers dropped, send the answer
 *      back, and wait for the next request, decided anew.
 *
 * This file has the steps every protocol shares and the callbacks, which
 * hand each event on by the connection's state: steps 2 and 3 are
 * conn_connect.c's, reading an HTTP request and forwarding it
 * conn_http.c's, SOCKS5 conn_socks.c's, a tunnel's first bytes and TLS
 * inspection conn_tls.c's (conn.h).
 *
 * Each decision ends in one egress log line.  Every path ends in
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

#include <openssl/ssl.h>

#include "addr.h"
#include "certs.h"
#include "conn.h"
#include "endpoint.h"
#include "host.h"
#include "jsonl.h"
#include "log.h"
#include "policy.h"
#include "proxy.h"
#include "relay.h"
#include "util.h"
#include "xmalloc.h"

static const char *const proto_names[] = {
	"none", "http", "connect", "socks5", "https", "capture", "dns"
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
static void
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
	e->e_proto = proto_names[c->c_proto];
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
			if ((hint = conn_capture_hint(c)) == NULL)
				hint = decision_hint(&c->c_dec);
			pattern = decision_pattern(&c->c_dec);
		}
		proxy_observe(px, &e, hint, pattern);
		watch_observe(px, c, &e, hint, pattern);
		free(hint);
		free(pattern);
	}
}

/* Tells the program that c, held for its answer (CS_ASKING), goes. */
static void
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
	watch_conn_gone(px, c);
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
	if (c->c_relay != NULL)
		relay_free(c->c_relay);		/* closes both sockets */
	else {
		conn_bev_free(c->c_bev);
		conn_bev_free(c->c_up);
		if (c->c_fd != -1)
			close(c->c_fd);
		if (c->c_upfd != -1)
			close(c->c_upfd);
	}
	decision_clear(&c->c_dec);
	ssh_peek_clear(&c->c_ssh);
	ppolicy_unref(c->c_policy);
	conn_narrow_clear(&c->c_narrow);
	http_request_clear(&c->c_http.hx_req);
	http_response_clear(&c->c_http.hx_resp);
	scrub_free(c->c_http.hx_scrub);
	free(c->c_method);
	free(c->c_path);
	free(c->c_warning);
	free(c->c_hint);
	free(c->c_reason_buf);
	free(c->c_sandbox);
	free(c->c_command);
	free(c);
	if (px->px_draining && px->px_nconns == 0 && px->px_hooks != NULL &&
	    px->px_hooks->hk_drained != NULL)
		px->px_hooks->hk_drained(px->px_hooks_arg);
}

/* Closes every connection at once (the drain time is over). */
void
conn_close_all(struct proxy *px)
{
	while (!TAILQ_EMPTY(&px->px_conns))
		conn_free(TAILQ_FIRST(&px->px_conns));
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

/* Closes the upstream connection, if any. */
void
conn_drop_up(struct conn *c)
{
	conn_bev_free(c->c_up);
	if (c->c_upfd != -1)
		close(c->c_upfd);
	c->c_up = NULL;
	c->c_upfd = -1;
	c->c_http.hx_up = HX_UP_NEW;
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

/* The TLS records under an inspected connection are all written. */
static void
conn_flushed_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct conn	*c = arg;

	(void)info;
	if (evbuffer_get_length(buf) == 0 && c->c_state == CS_FLUSHING)
		event_active(c->c_ins.ci_close_ev, EV_TIMEOUT, 1);
}

/*
 * Everything c had to say is in its output: close.  An inspected client
 * gets close_notify (unless the answer was cut short, when it must not
 * look whole), and the TLS records are flushed first: freeing the filter
 * would drop them.
 */
static void
conn_close(struct conn *c)
{
	struct bufferevent	*u;
	struct evbuffer		*uout;

	if (!c->c_ins.ci_tls) {
		conn_free(c);
		return;
	}
	if (c->c_state != CS_ABORTING)
		SSL_shutdown(bufferevent_openssl_get_ssl(c->c_bev));
	u = bufferevent_get_underlying(c->c_bev);
	uout = bufferevent_get_output(u);
	if (evbuffer_get_length(uout) == 0) {
		conn_free(c);
		return;
	}
	if ((c->c_ins.ci_close_ev = event_new(c->c_proxy->px_base, -1, 0,
	    conn_close_cb, c)) == NULL)
		fatalx("proxy: event_new failed");
	c->c_state = CS_FLUSHING;
	bufferevent_disable(c->c_bev, EV_READ);
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
	conn_drop_up(c);
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
	if ((hint = conn_capture_hint(c)) == NULL)
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
	if (c->c_proto == PROTO_SOCKS5)
		conn_socks_answer(c, SOCKS5_REP_RULESET);
	else if (c->c_state == CS_PEEK || c->c_proto == PROTO_CAPTURE)
		conn_finish(c);		/* answered already, or never */
	else
		conn_http_answer(c, 403, what, hint);
	free(what);
	free(hint);
}

/*
 * The request was allowed but could not be carried out (DNS, connect):
 * 502 or 504, SOCKS5 host unreachable or refused.
 */
void
conn_fail(struct conn *c, int status, uint8_t socks, const char *why)
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
	if (c->c_proto == PROTO_SOCKS5)
		conn_socks_answer(c, socks);
	else if (c->c_proto == PROTO_CAPTURE)
		conn_finish(c);
	else
		conn_http_answer(c, status, what, NULL);
	free(what);
}

/* Starts a new decision on this connection (each HTTP request has one). */
void
conn_begin(struct conn *c, enum conn_proto proto, const char *method,
    const char *host, size_t hostlen, int port)
{
	decision_clear(&c->c_dec);
	memset(&c->c_dec, 0, sizeof(c->c_dec));
	/* The policy in force now decides, even if it is reloaded later. */
	ppolicy_unref(c->c_policy);
	c->c_policy = ppolicy_ref(conn_narrow_policy(&c->c_narrow,
	    c->c_proxy->px_policy));
	free(c->c_method);
	c->c_method = method != NULL ? xstrdup(method) : NULL;
	free(c->c_reason_buf);
	c->c_reason_buf = NULL;
	c->c_reason = NULL;
	free(c->c_path);
	free(c->c_warning);
	free(c->c_hint);
	c->c_path = c->c_warning = c->c_hint = NULL;
	c->c_proto = proto;
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
	c->c_judged = false;
	gettimeofday(&c->c_start, NULL);
	evtimer_del(c->c_deadline);
}

/* What the client was doing when it ran out of time, for the log. */
static enum conn_proto
conn_guess_proto(const struct conn *c)
{
	switch (c->c_state) {
	case CS_HTTP_HEAD:
		return PROTO_HTTP;
	case CS_SOCKS_GREETING:
	case CS_SOCKS_REQUEST:
		return PROTO_SOCKS5;
	default:
		return PROTO_NONE;
	}
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
		conn_begin(c, conn_guess_proto(c), NULL, "", 0, 0);
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

static void
conn_ask_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	(void)fd;
	(void)what;
	conn_ask_cancel(c);
	conn_deny(c);		/* out of CS_ASKING before any conn_free() */
}

/*
 * Holds a connection no rule allows while the harness is asked (cordon
 * run --ask); its answer comes through conn_answer(), or the deadline
 * refuses it.  Returns false when nobody is asked.
 */
static bool
conn_ask(struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	struct egress	 e;
	struct timeval	 tv = { px->px_ask_secs, 0 };

	if (px->px_hooks == NULL || px->px_hooks->hk_ask == NULL ||
	    c->c_dec.d_why != WHY_NO_RULE)
		return false;
	conn_egress(c, &e);
	if (!px->px_hooks->hk_ask(c, &e, px->px_hooks_arg))
		return false;
	if (c->c_ask_ev == NULL && (c->c_ask_ev = evtimer_new(px->px_base,
	    conn_ask_timeout_cb, c)) == NULL)
		fatalx("proxy: evtimer_new failed");
	c->c_state = CS_ASKING;
	bufferevent_disable(c->c_bev, EV_READ);
	evtimer_add(c->c_ask_ev, &tv);
	return true;
}

/*
 * The harness's answer for a held connection: allowed (once, or because
 * it added a rule), with why for the log, or refused.
 */
void
conn_answer(struct conn *c, bool allow, const char *why)
{
	if (c->c_state != CS_ASKING)
		return;
	evtimer_del(c->c_ask_ev);
	if (!allow) {
		conn_deny(c);
		return;
	}
	c->c_dec.d_verdict = VERDICT_ALLOW;
	c->c_dec.d_why = WHY_ALLOW_RULE;
	conn_reason(c, why);
	conn_connect(c);
}

/* The network.allow entry that would allow c's target, or NULL. */
char *
conn_pattern(const struct conn *c)
{
	return decision_pattern(&c->c_dec);
}

/*
 * Whether the egress log can take what c is about to do.  While it
 * cannot be written nothing new goes out (fail closed): c is refused,
 * 503 or a SOCKS5 failure, saying why, and false returned.  Every new
 * exchange tries the log again (jsonl_retry), so service resumes by
 * itself once it can be written; refusing is said once per outage.
 */
bool
conn_log_ready(struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	char		*what;

	if (px->px_log == NULL || jsonl_retry(px->px_log)) {
		px->px_log_refusing = false;
		return true;
	}
	xasprintf(&what, "the egress log cannot be written (%s), and nothing "
	    "goes out unlogged", jsonl_error(px->px_log));
	if (!px->px_log_refusing)
		log_warnx("proxy: %s: refusing new requests until it can; "
		    "tried again at each", what);
	px->px_log_refusing = true;
	px->px_stats.ps_log_refused++;
	conn_reason(c, what);
	c->c_dec.d_verdict = VERDICT_DENY;
	if (c->c_proto == PROTO_SOCKS5)
		conn_socks_answer(c, SOCKS5_REP_FAILURE);
	else if (c->c_proto == PROTO_CAPTURE)
		conn_finish(c);
	else
		conn_http_answer(c, 503, what, "free space where the egress log "
		    "is written (or mend what stops writes to it); the proxy "
		    "serves again by itself once it can write, with the lines "
		    "held back meanwhile");
	free(what);
	return false;
}

/* Decides on c_host:c_port, then resolves or connects. */
void
conn_decide(struct conn *c)
{
	if (!conn_log_ready(c))
		return;
	c->c_judged = true;
	if (!policy_decide(c->c_policy->pp_policy, c->c_host, c->c_hostlen,
	    c->c_port, &c->c_dec)) {
		if (!conn_ask(c))
			conn_deny(c);
		return;
	}
	if (c->c_proto == PROTO_HTTP && !conn_http_inspect(c))
		return;
	conn_connect(c);
}

static void
conn_relay_done_cb(struct relay *r, const char *why, void *arg)
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

	in = bufferevent_get_input(c->c_bev);
	out = bufferevent_get_output(c->c_bev);
	upin = bufferevent_get_input(c->c_up);
	r = relay_new(c->c_proxy->px_base, c->c_fd, c->c_upfd,
	    conn_relay_done_cb, c);
	c->c_up_bytes += evbuffer_get_length(in);
	relay_pending(r, RELAY_UP, evbuffer_pullup(in, -1),
	    evbuffer_get_length(in));
	relay_pending(r, RELAY_DOWN, evbuffer_pullup(out, -1),
	    evbuffer_get_length(out));
	c->c_down_bytes += evbuffer_get_length(upin);
	relay_pending(r, RELAY_DOWN, evbuffer_pullup(upin, -1),
	    evbuffer_get_length(upin));
	c->c_relay = r;
	conn_ssh_watch(c, evbuffer_pullup(upin, -1), evbuffer_get_length(upin));
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

/*
 * A sandbox's listener: the PROXY v2 header with its id comes first, or
 * the connection is refused (and logged, as from no known sandbox).
 */
static void
conn_pp2(struct conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->c_bev);
	size_t		 len = evbuffer_get_length(in), used;
	char		 id[PP2_ID_MAX + 1], *cause, *narrow;
	char		 command[PP2_COMMAND_MAX + 1];
	int		 rc;

	if (len == 0)
		return;
	if (len > PP2_HEADER_MAX)
		len = PP2_HEADER_MAX;
	rc = pp2_parse(evbuffer_pullup(in, (ssize_t)len), len, &used, id,
	    sizeof(id), &narrow, &cause);
	if (rc == PP2_PARSE_OK && narrow != NULL &&
	    conn_narrow_load(&c->c_narrow, id, narrow, &cause) == -1)
		rc = PP2_PARSE_ERROR;
	if (rc == PP2_PARSE_MORE)
		return;
	if (rc == PP2_PARSE_ERROR) {
		conn_begin(c, PROTO_NONE, NULL, "", 0, 0);
		conn_reason(c, cause);
		c->c_dec.d_verdict = VERDICT_DENY;
		free(cause);
		conn_free(c);
		return;
	}
	pp2_command(evbuffer_pullup(in, (ssize_t)used), used, command,
	    sizeof(command));
	if (command[0] != '\0')
		c->c_command = xstrdup(command);
	c->c_sandbox = xstrdup(id);
	if (pp2_field(evbuffer_pullup(in, (ssize_t)used), used,
	    PP2_TYPE_CORDON_WATCH, &len) != NULL) {
		evbuffer_drain(in, used);
		watch_start(c);
		return;
	}
	if (conn_capture(c, evbuffer_pullup(in, (ssize_t)used), used))
		return;
	evbuffer_drain(in, used);
	c->c_state = CS_SNIFF;
	conn_process(c);
}

/* CS_SNIFF: the first byte tells SOCKS from HTTP. */
static void
conn_sniff(struct conn *c)
{
	uint8_t	 first;

	if (evbuffer_copyout(bufferevent_get_input(c->c_bev), &first, 1) != 1)
		return;
	c->c_state = first == SOCKS5_VERSION ? CS_SOCKS_GREETING :
	    CS_HTTP_HEAD;
	conn_process(c);
}

/* CS_PEEK: the server speaks first (SSH, SMTP): pass it on. */
static void
conn_peek_up_read(struct conn *c)
{
	struct evbuffer	*upin = bufferevent_get_input(c->c_up);
	size_t		 len = evbuffer_get_length(upin);

	c->c_down_bytes += len;
	/* The watch sees them first: the tunnel's relay will not. */
	conn_ssh_feed(c, evbuffer_pullup(upin, -1), len);
	evbuffer_add_buffer(bufferevent_get_output(c->c_bev), upin);
}

/* Inspected, before requests: the upstream's bytes wait for them. */
static void
conn_tls_up_hold(struct conn *c)
{
	bufferevent_disable(c->c_up, EV_READ);
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
static void
conn_gone_quietly(struct conn *c, short what)
{
	(void)what;
	conn_free(c);
}

/* Bytes from an upstream that was asked nothing: a kept one is dropped. */
static void
conn_up_unasked(struct conn *c)
{
	if (c->c_http.hx_up == HX_UP_KEPT)
		conn_drop_up(c);
}

/* The upstream's end of file, error or timeout: c ends, but a kept one. */
static void
conn_up_gone(struct conn *c, short what)
{
	if (c->c_http.hx_up == HX_UP_KEPT) {
		conn_http_kept_gone(c);
		return;
	}
	conn_up_reason(c, what);
	conn_abort(c);
}

/*
 * What each state does with what happens on the client's and the
 * upstream's bufferevents.  A state's handlers are looked up here at
 * each event rather than set on the bufferevents as the state changes
 * (as httpd does): a state is often entered with its bytes read already
 * (after the PROXY v2 header, a connect, a handshake, a kept-alive
 * answer), so the code that changes it calls conn_process() at once.
 * NULL: nothing, but for on_gone (conn_gone), on_up_read
 * (conn_up_unasked) and on_up_gone (conn_up_gone).  A timeout on the
 * client's side is conn_too_slow() in every state.
 */
struct conn_handlers {
	void	(*on_read)(struct conn *);
	void	(*on_write)(struct conn *);	/* room to write again */
	void	(*on_connected)(struct conn *);	/* a TLS handshake done */
	void	(*on_gone)(struct conn *, short);
	void	(*on_up_read)(struct conn *);
	void	(*on_up_write)(struct conn *);
	void	(*on_up_gone)(struct conn *, short);
};

static const struct conn_handlers conn_handlers[] = {
	[CS_PP2] = { .on_read = conn_pp2 },
	[CS_SNIFF] = { .on_read = conn_sniff },
	[CS_HTTP_HEAD] = {
		.on_read = conn_http_head,
		.on_gone = conn_http_head_gone,
	},
	[CS_SOCKS_GREETING] = { .on_read = conn_socks_read },
	[CS_SOCKS_REQUEST] = { .on_read = conn_socks_read },
	[CS_ASKING] = { 0 },
	[CS_RESOLVING] = { 0 },
	[CS_CONNECTING] = { 0 },
	[CS_PEEK] = {
		.on_read = conn_tls_peek,
		.on_gone = conn_gone_quietly,
		.on_up_read = conn_peek_up_read,
	},
	[CS_TUNNEL] = { 0 },
	[CS_TLS_SETUP] = {
		.on_up_read = conn_tls_up_hold,
		.on_up_gone = conn_tls_up_done,
	},
	[CS_TLS_ACCEPT] = {
		.on_connected = conn_tls_accepted,
		.on_gone = conn_tls_failed,
		.on_up_read = conn_tls_up_hold,
		.on_up_gone = conn_tls_up_gone,
	},
	[CS_FORWARD] = {
		.on_read = conn_http_forward,
		.on_write = conn_http_forward,
		.on_gone = conn_http_client_gone,
		.on_up_read = conn_http_forward,
		.on_up_write = conn_http_forward,
		.on_up_gone = conn_http_up_event,
	},
	[CS_CLOSING] = { .on_write = conn_close },
	[CS_ABORTING] = { .on_write = conn_close },
	[CS_FLUSHING] = { .on_gone = conn_gone_quietly },
};

/* Moves c on as far as the bytes it has allow. */
void
conn_process(struct conn *c)
{
	if (conn_handlers[c->c_state].on_read != NULL)
		conn_handlers[c->c_state].on_read(c);
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
	if (conn_handlers[c->c_state].on_write != NULL)
		conn_handlers[c->c_state].on_write(c);
}

void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn			*c = arg;
	const struct conn_handlers	*h = &conn_handlers[c->c_state];

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		if (h->on_connected != NULL)
			h->on_connected(c);
	} else if (what & BEV_EVENT_TIMEOUT)
		conn_too_slow(c);
	else
		(h->on_gone != NULL ? h->on_gone : conn_gone)(c, what);
}

void
conn_up_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	(conn_handlers[c->c_state].on_up_read != NULL ?
	    conn_handlers[c->c_state].on_up_read : conn_up_unasked)(c);
}

void
conn_up_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	if (conn_handlers[c->c_state].on_up_write != NULL)
		conn_handlers[c->c_state].on_up_write(c);
}

void
conn_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	(conn_handlers[c->c_state].on_up_gone != NULL ?
	    conn_handlers[c->c_state].on_up_gone : conn_up_gone)(c, what);
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
 * A new client on fd (taken), from sa; with pp2 it must start with a
 * PROXY v2 header naming its sandbox.  On a Unix socket, the kernel says
 * who connected (listen_peer), and each line of the client carries that
 * uid: the sandbox it names is its own word, scoped to that user.
 */
void
conn_accept(struct proxy *px, int fd, const struct sockaddr *sa,
    socklen_t salen, bool pp2)
{
	struct timeval	 tv = { px->px_head_secs, 0 };
	struct conn	*c;

	endpoint_nodelay(fd);
	c = xcalloc(1, sizeof(*c));
	c->c_proxy = px;
	c->c_fd = fd;
	c->c_upfd = -1;
	c->c_state = pp2 ? CS_PP2 : CS_SNIFF;
	conn_client_name(c, sa);
	listen_peer(fd, &c->c_peer);
	(void)salen;
	if ((c->c_bev = bufferevent_socket_new(px->px_base, fd, 0)) == NULL)
		fatalx("proxy: bufferevent_socket_new failed");
	bufferevent_setcb(c->c_bev, conn_read_cb, conn_write_cb,
	    conn_event_cb, c);
	bufferevent_setwatermark(c->c_bev, EV_WRITE, PROXY_BUFFER_MAX / 2, 0);
	bufferevent_set_timeouts(c->c_bev, &tv, NULL);
	if ((c->c_deadline = evtimer_new(px->px_base, conn_deadline_cb, c)) ==
	    NULL)
		fatalx("proxy: evtimer_new failed");
	TAILQ_INSERT_TAIL(&px->px_conns, c, c_entry);
	px->px_nconns++;
	if (px->px_nconns > px->px_max) {
		/* Logged like any refusal, then closed. */
		conn_warn(px, "too many connections (--max-conns); closing "
		    "new ones");
		conn_begin(c, PROTO_NONE, NULL, "", 0, 0);
		c->c_dec.d_verdict = VERDICT_DENY;
		conn_reason(c, "too many connections (--max-conns)");
		conn_free(c);
		return;
	}
	conn_arm_deadline(c);
	bufferevent_enable(c->c_bev, EV_READ | EV_WRITE);
}
