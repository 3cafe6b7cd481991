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

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/bufferevent_struct.h>	/* ev_read: conn_up_read() */
#include <event2/event.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "addr.h"
#include "certs.h"
#include "endpoint.h"
#include "host.h"
#include "jsonl.h"
#include "log.h"
#include "policy.h"
#include "proxy.h"
#include "relay.h"
#include "util.h"
#include "xmalloc.h"

enum conn_state {
	CS_PP2,			/* waiting for a sandbox's PROXY v2 header */
	CS_SNIFF,		/* nothing read yet */
	CS_HTTP_HEAD,		/* reading a request head */
	CS_SOCKS_GREETING,
	CS_SOCKS_REQUEST,
	CS_ASKING,		/* no rule: waiting for the harness's answer */
	CS_RESOLVING,
	CS_CONNECTING,
	CS_PEEK,		/* tunnel answered: judging the first bytes */
	CS_TUNNEL,		/* the relay has both sockets */
	CS_TLS_SETUP,		/* inspected: a leaf and the upstream's TLS */
	CS_TLS_ACCEPT,		/* inspected: the sandbox's handshake */
	CS_FORWARD,		/* HTTP: request out, answer back */
	CS_CLOSING,		/* writing a last answer, then close */
	CS_FLUSHING		/* TLS: the last records, then close */
};

enum conn_proto {
	PROTO_NONE,
	PROTO_HTTP,
	PROTO_CONNECT,
	PROTO_SOCKS5,
	PROTO_HTTPS		/* a request inside an inspected tunnel */
};

static const char *const proto_names[] = {
	"none", "http", "connect", "socks5", "https"
};

/* The current decision's one log line. */
enum conn_record {
	CR_NONE,		/* no decision since the last was logged */
	CR_OPEN,		/* begun (conn_begin): conn_log() writes it */
	CR_LOGGED
};

/* What c_up is to the HTTP request under way. */
enum conn_http_up {
	CH_UP_NEW,		/* opened for it, or none */
	CH_UP_KEPT,		/* kept from the last request, idle */
	CH_UP_REUSED		/* kept, and carrying this request */
};

/*
 * An HTTP exchange: the request and its answer being forwarded, and an
 * upstream connection kept between requests with what it reaches.
 */
struct conn_http {
	struct http_request	 ch_req;
	struct http_response	 ch_resp;
	struct http_body	 ch_reqbody;
	struct http_body	 ch_respbody;
	bool			 ch_reqdone;	/* request body all sent */
	bool			 ch_resphead;	/* response head forwarded */
	bool			 ch_keepalive;
	size_t			 ch_headscan;	/* bytes of head parsed before */
	enum conn_http_up	 ch_up;
	char			 ch_kept_host[HOST_NAME_MAX_LEN + 1];
	int			 ch_kept_port;
};

/*
 * An inspected tunnel: the host it was opened for, the leaf that answers
 * the sandbox, and how the upstream's own handshake went.
 */
struct conn_inspect {
	char			 ci_host[HOST_NAME_MAX_LEN + 1];
	int			 ci_port;
	char			 ci_addr[ADDR_STRLEN + 8];
	struct signer_req	*ci_sreq;
	X509			*ci_leaf;
	bool			 ci_up_ready;	/* handshake done, or failed */
	char			*ci_upfail;	/* why the upstream's failed */
};

struct conn {
	TAILQ_ENTRY(conn)	 c_entry;
	struct proxy		*c_proxy;
	int			 c_fd;		/* the client */
	struct bufferevent	*c_bev;		/* on c_fd, until a tunnel */
	int			 c_upfd;	/* the upstream, or -1 */
	struct bufferevent	*c_up;		/* on c_upfd */
	enum conn_state		 c_state;
	enum conn_proto		 c_proto;
	char			 c_client[ADDR_STRLEN + 8];
	char			*c_sandbox;	/* from the PROXY v2 header */
	char			*c_command;	/* the same: the command's name */
	struct policy		*c_narrow;	/* the run's rules, from it too */
	struct ppolicy		*c_narrow_base;	/* what c_narrowed narrows */
	struct ppolicy		*c_narrowed;	/* that, narrowed */

	/* The request being decided, and the decision. */
	struct ppolicy		*c_policy;	/* what decided it */
	char			*c_method;
	char			 c_host[256];	/* as sent, any bytes */
	size_t			 c_hostlen;
	int			 c_port;
	struct decision		 c_dec;
	enum conn_record	 c_record;
	bool			 c_judged;	/* c_dec is the policy's */
	struct event		*c_ask_ev;	/* the answer's deadline */
	struct conn_http	 c_http;

	/* Resolving and connecting. */
	struct dns_query	*c_query;
	struct addr		 c_addrs[DNS_MAX_ADDRS];
	size_t			 c_naddrs;
	size_t			 c_next;
	struct event		*c_connect_ev;
	char			 c_addrtext[ADDR_STRLEN + 8];
	int			 c_connect_error;
	struct addr		 c_upaddr;	/* what c_upfd is connected to */

	struct relay		*c_relay;
	struct event		*c_deadline;	/* for a whole head */

	/* The egress log record of the current decision. */
	struct timeval		 c_start;
	int			 c_status;
	const char		*c_reason;
	char			*c_reason_buf;
	uint64_t		 c_up_bytes;
	uint64_t		 c_down_bytes;
	char			*c_path;	/* HTTP: without the query */
	char			*c_warning;
	char			*c_hint;	/* network.inspect's fix */
	struct scrub		*c_scrub;	/* real values out of answers */

	/*
	 * TLS inspection: c_bev becomes a TLS filter over the client's
	 * bufferevent (which it owns; c_fd stays ours), c_up a TLS
	 * bufferevent on the upstream's socket (which it owns: c_upfd is -1).
	 */
	bool			 c_tls;		/* c_bev is a TLS filter */
	struct conn_inspect	 c_ins;
	bool			 c_abort;	/* no close_notify: cut short */
	struct event		*c_close_ev;
};

static void	conn_read_cb(struct bufferevent *, void *);
static void	conn_write_cb(struct bufferevent *, void *);
static void	conn_event_cb(struct bufferevent *, short, void *);
static void	up_read_cb(struct bufferevent *, void *);
static void	up_write_cb(struct bufferevent *, void *);
static void	up_event_cb(struct bufferevent *, short, void *);
static void	conn_process(struct conn *);
static void	conn_arm_deadline(struct conn *);
static void	conn_bev_free(struct bufferevent *);
static bool	conn_inspect_request(struct conn *);
static void	conn_connect(struct conn *);
static void	conn_connect_next(struct conn *);

/* Says something about the proxy at most once every 10 s. */
static void
proxy_warn(struct proxy *px, const char *msg)
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
static void
conn_log(struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	struct egress	 e;
	char		*hint = NULL, *pattern = NULL;

	if (c->c_record != CR_OPEN ||
	    (px->px_log == NULL && px->px_observe == NULL))
		return;
	c->c_record = CR_LOGGED;
	scrub_warn(c->c_scrub, &c->c_warning);
	conn_egress(c, &e);
	if (px->px_log != NULL)
		jsonl_write(px->px_log, &e);
	if (px->px_observe != NULL) {
		/* A fix only for what the policy itself refused. */
		if (!e.e_allow && c->c_hint != NULL)
			hint = xstrdup(c->c_hint);
		else if (!e.e_allow && c->c_judged) {
			hint = decision_hint(&c->c_dec);
			pattern = decision_pattern(&c->c_dec);
		}
		px->px_observe(&e, hint, pattern, px->px_observe_arg);
		free(hint);
		free(pattern);
	}
}

/* Frees c and everything it holds; logs its decision if not yet done. */
static void
conn_free(struct conn *c)
{
	struct proxy	*px = c->c_proxy;

	conn_log(c);
	if (c->c_state == CS_ASKING && px->px_ask_cancel != NULL)
		px->px_ask_cancel(c, px->px_ask_arg);
	TAILQ_REMOVE(&px->px_conns, c, c_entry);
	px->px_nconns--;
	dns_cancel(c->c_query);
	if (c->c_ins.ci_sreq != NULL)
		signer_cancel(c->c_ins.ci_sreq);
	X509_free(c->c_ins.ci_leaf);
	free(c->c_ins.ci_upfail);
	if (c->c_close_ev != NULL)
		event_free(c->c_close_ev);
	if (c->c_ask_ev != NULL)
		event_free(c->c_ask_ev);
	if (c->c_connect_ev != NULL)
		event_free(c->c_connect_ev);
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
	ppolicy_unref(c->c_policy);
	ppolicy_unref(c->c_narrowed);
	ppolicy_unref(c->c_narrow_base);
	policy_free(c->c_narrow);
	http_request_clear(&c->c_http.ch_req);
	http_response_clear(&c->c_http.ch_resp);
	scrub_free(c->c_scrub);
	free(c->c_method);
	free(c->c_path);
	free(c->c_warning);
	free(c->c_hint);
	free(c->c_reason_buf);
	free(c->c_sandbox);
	free(c->c_command);
	free(c);
	if (px->px_drained != NULL && px->px_nconns == 0)
		px->px_drained(px);
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
static void
conn_drop_up(struct conn *c)
{
	conn_bev_free(c->c_up);
	if (c->c_upfd != -1)
		close(c->c_upfd);
	c->c_up = NULL;
	c->c_upfd = -1;
	c->c_http.ch_up = CH_UP_NEW;
}

/*
 * Reads from the upstream again, or stops.  A TLS bufferevent on a socket
 * goes on only when the socket is readable; what OpenSSL has read ahead
 * or decrypted already would wait for bytes that may never come (the end
 * of an answer), so it is told to read now.
 */
static void
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
static void
conn_reason(struct conn *c, const char *reason)
{
	free(c->c_reason_buf);
	c->c_reason_buf = xstrdup(reason);
	c->c_reason = c->c_reason_buf;
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
		event_active(c->c_close_ev, EV_TIMEOUT, 1);
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

	if (!c->c_tls) {
		conn_free(c);
		return;
	}
	if (!c->c_abort)
		SSL_shutdown(bufferevent_openssl_get_ssl(c->c_bev));
	u = bufferevent_get_underlying(c->c_bev);
	uout = bufferevent_get_output(u);
	if (evbuffer_get_length(uout) == 0) {
		conn_free(c);
		return;
	}
	if ((c->c_close_ev = event_new(c->c_proxy->px_base, -1, 0,
	    conn_close_cb, c)) == NULL)
		fatalx("proxy: event_new failed");
	c->c_state = CS_FLUSHING;
	bufferevent_disable(c->c_bev, EV_READ);
	evbuffer_add_cb(uout, conn_flushed_cb, c);
	/* the deadline still runs: a client that never reads is dropped */
	conn_arm_deadline(c);
}

/* Closes c once what it has to say is written. */
static void
conn_finish(struct conn *c)
{
	c->c_state = CS_CLOSING;
	conn_drop_up(c);
	bufferevent_disable(c->c_bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(c->c_bev)) == 0)
		conn_close(c);
	/* else conn_write_cb closes it once the output is drained */
}

/* The same, for an answer cut short (no close_notify over TLS). */
static void
conn_abort(struct conn *c)
{
	c->c_abort = true;
	conn_finish(c);
}

/* The reason phrase of a status cordon answers with itself. */
static const char *
conn_status_title(int status)
{
	switch (status) {
	case 403:
		return "Forbidden";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Bad Request";
	}
}

/*
 * Answers an HTTP client with status and a short text saying what was
 * refused or failed, why, and how to allow it, then closes.
 */
static void
conn_http_answer(struct conn *c, int status, const char *what,
    const char *hint)
{
	struct evbuffer	*out = bufferevent_get_output(c->c_bev);
	char		*body;
	int		 n;

	c->c_status = status;
	n = xasprintf(&body, "cordon: %s\n%s%s%s", what, hint ? "hint: " : "",
	    hint ? hint : "", hint ? "\n" : "");
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "X-Cordon-Decision: %s\r\n"
	    "Connection: close\r\n"
	    "Content-Length: %d\r\n\r\n%s", status, conn_status_title(status),
	    what, n, body);
	free(body);
	conn_finish(c);
}

/* A SOCKS5 reply with code, then close. */
static void
conn_socks_answer(struct conn *c, uint8_t code)
{
	uint8_t	 buf[SOCKS5_REPLY_MAX];
	size_t	 n;

	c->c_status = code;
	n = socks5_reply(buf, code, NULL);
	bufferevent_write(c->c_bev, buf, n);
	conn_finish(c);
}

/*
 * The policy refused the request: say so in the client's protocol, with
 * the rule and the fix; log it.
 */
static void
conn_deny(struct conn *c)
{
	char	*what, *hint;

	what = decision_describe(&c->c_dec);
	hint = decision_hint(&c->c_dec);
	/* The log has the target in its own fields: keep the why. */
	conn_reason(c, strstr(what, ": ") ? strstr(what, ": ") + 2 : what);
	if (c->c_ask_ev != NULL && c->c_state == CS_CLOSING) {
		/* Asked, and refused or not answered in time. */
		char	*why;

		xasprintf(&why, "%s; the harness did not allow it", c->c_reason);
		conn_reason(c, why);
		free(why);
	}
	c->c_dec.d_verdict = VERDICT_DENY;
	if (c->c_proto == PROTO_SOCKS5)
		conn_socks_answer(c, SOCKS5_REP_RULESET);
	else if (c->c_state == CS_PEEK)
		conn_finish(c);		/* the tunnel was answered already */
	else
		conn_http_answer(c, 403, what, hint);
	free(what);
	free(hint);
}

/*
 * The request was allowed but could not be carried out (DNS, connect):
 * 502 or 504, SOCKS5 host unreachable or refused.
 */
static void
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
	else
		conn_http_answer(c, status, what, NULL);
	free(what);
}

/*
 * Whether a run's rules hold only what a run may send: "version" and
 * "network" with "mode", "allow", "deny" and "allow_cidrs" (no list
 * files: the proxy reads no file a client names).
 */
static bool
conn_narrow_keys_ok(const char *text)
{
	json_t		*doc, *net;
	const char	*key;
	json_t		*v;
	bool		 ok = false;

	if ((doc = json_loads(text, 0, NULL)) == NULL || !json_is_object(doc))
		goto out;
	json_object_foreach(doc, key, v)
		if (strcmp(key, "version") != 0 && strcmp(key, "network") != 0)
			goto out;
	if ((net = json_object_get(doc, "network")) != NULL) {
		if (!json_is_object(net))
			goto out;
		json_object_foreach(net, key, v)
			if (strcmp(key, "mode") != 0 &&
			    strcmp(key, "allow") != 0 &&
			    strcmp(key, "deny") != 0 &&
			    strcmp(key, "allow_cidrs") != 0)
				goto out;
	}
	ok = true;
out:
	json_decref(doc);
	return ok;
}

/*
 * The policy in force for c: the proxy's, or, for a run that sent rules
 * of its own, the proxy's narrowed by them (as a workspace layer narrows:
 * allow lists meet, deny lists join), made again after a reload.
 */
static struct ppolicy *
conn_policy(struct conn *c)
{
	struct ppolicy	*base = c->c_proxy->px_policy;
	struct policy	*p;

	if (c->c_narrow == NULL)
		return base;
	if (c->c_narrowed == NULL || c->c_narrow_base != base) {
		p = policy_new();
		policy_merge(p, base->pp_policy);
		policy_narrow(p, c->c_narrow);
		ppolicy_unref(c->c_narrowed);
		ppolicy_unref(c->c_narrow_base);
		c->c_narrowed = ppolicy_new(p);
		c->c_narrow_base = ppolicy_ref(base);
	}
	return c->c_narrowed;
}

/* Starts a new decision on this connection (each HTTP request has one). */
static void
conn_begin(struct conn *c, enum conn_proto proto, const char *method,
    const char *host, size_t hostlen, int port)
{
	decision_clear(&c->c_dec);
	memset(&c->c_dec, 0, sizeof(c->c_dec));
	/* The policy in force now decides, even if it is reloaded later. */
	ppolicy_unref(c->c_policy);
	c->c_policy = ppolicy_ref(conn_policy(c));
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
	c->c_naddrs = c->c_next = 0;
	c->c_connect_error = 0;
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
static void
conn_arm_deadline(struct conn *c)
{
	struct timeval	 tv = { c->c_proxy->px_head_secs, 0 };

	evtimer_add(c->c_deadline, &tv);
}

static void
conn_resolved_cb(const struct addr *addrs, size_t n, const char *why,
    void *arg)
{
	struct conn	*c = arg;
	struct addr	 a;
	char		 text[ADDR_STRLEN], *msg;
	size_t		 i;

	c->c_query = NULL;
	if (n == 0) {
		c->c_proxy->px_stats.ps_dns_failures++;
		xasprintf(&msg, "cannot resolve: %s", why);
		conn_fail(c, 502, SOCKS5_REP_HOST, msg);
		free(msg);
		return;
	}
	for (i = 0; i < n; i++) {
		a = addrs[i];
		addr_unmap(&a);
		if (c->c_dec.d_why != WHY_MODE_HOST &&
		    !policy_check_addr(c->c_policy->pp_policy, &a, &c->c_dec)) {
			/* One special address refuses them all. */
			snprintf(c->c_addrtext, sizeof(c->c_addrtext), "%s",
			    addr_str(&a, text, sizeof(text)));
			conn_deny(c);
			return;
		}
		c->c_addrs[c->c_naddrs++] = a;
	}
	conn_connect(c);
}

/* Resolves the allowed c_host, or connects to the literal. */
static void
conn_resolve(struct conn *c)
{
	struct proxy	*px = c->c_proxy;

	if (c->c_dec.d_host.h_kind == HOST_ADDR) {
		c->c_addrs[0] = c->c_dec.d_host.h_ip;
		c->c_naddrs = 1;
		conn_connect(c);
		return;
	}
	c->c_state = CS_RESOLVING;
	bufferevent_disable(c->c_bev, EV_READ);
	c->c_query = dns_resolve(px->px_dns, c->c_dec.d_host.h_name,
	    conn_resolved_cb, c);
}

static void
conn_ask_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;
	struct proxy	*px = c->c_proxy;

	(void)fd;
	(void)what;
	if (px->px_ask_cancel != NULL)
		px->px_ask_cancel(c, px->px_ask_arg);
	c->c_state = CS_CLOSING;
	conn_deny(c);
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

	if (px->px_ask == NULL || c->c_dec.d_why != WHY_NO_RULE)
		return false;
	conn_egress(c, &e);
	if (!px->px_ask(c, &e, px->px_ask_arg))
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
		c->c_state = CS_CLOSING;
		conn_deny(c);
		return;
	}
	c->c_dec.d_verdict = VERDICT_ALLOW;
	c->c_dec.d_why = WHY_ALLOW_RULE;
	conn_reason(c, why);
	conn_resolve(c);
}

/* The network.allow entry that would allow c's target, or NULL. */
char *
conn_pattern(const struct conn *c)
{
	return decision_pattern(&c->c_dec);
}

/* Decides on c_host:c_port, then resolves or connects. */
static void
conn_decide(struct conn *c)
{
	c->c_judged = true;
	if (!policy_decide(c->c_policy->pp_policy, c->c_host, c->c_hostlen,
	    c->c_port, &c->c_dec)) {
		if (!conn_ask(c))
			conn_deny(c);
		return;
	}
	if (c->c_proto == PROTO_HTTP && !conn_inspect_request(c))
		return;
	conn_resolve(c);
}

/*
 * Refuses a target that is the proxy's own listener a (listen.c): the
 * policy may allow its address, but a connection there is a loop.
 */
static void
conn_refuse_loop(struct conn *c, const struct addr *a)
{
	char	 text[ADDR_STRLEN], *what, *why;

	snprintf(c->c_addrtext, sizeof(c->c_addrtext), "%s",
	    addr_str(a, text, sizeof(text)));
	xasprintf(&why, "its address %s, port %d, is the proxy's own "
	    "listener: a loop", text, c->c_port);
	xasprintf(&what, a->a_family == AF_INET6 &&
	    c->c_dec.d_host.h_kind == HOST_ADDR ? "deny [%s]:%d: %s" :
	    "deny %s:%d: %s", c->c_dec.d_host.h_name, c->c_port, why);
	conn_reason(c, why);
	c->c_dec.d_verdict = VERDICT_DENY;
	if (c->c_proto == PROTO_SOCKS5)
		conn_socks_answer(c, SOCKS5_REP_RULESET);
	else
		conn_http_answer(c, 403, what, "the proxy does not connect to "
		    "itself; to reach a service on this machine, name its "
		    "own port, not the proxy's");
	free(what);
	free(why);
}

static void	conn_connected_cb(int, short, void *);
static void	conn_forward_start(struct conn *);

/*
 * Connects to the checked addresses, unless one is the proxy's own
 * listener; an HTTP request to the host, port and address an upstream
 * connection kept from the previous request reaches goes on that
 * connection instead.
 */
static void
conn_connect(struct conn *c)
{
	size_t	 i;
	char	 text[ADDR_STRLEN];

	for (i = 0; i < c->c_naddrs; i++)
		if (listen_is_own(c->c_proxy, &c->c_addrs[i], c->c_port)) {
			conn_refuse_loop(c, &c->c_addrs[i]);
			return;
		}
	if (c->c_http.ch_up == CH_UP_KEPT && c->c_proto == PROTO_HTTP &&
	    c->c_port == c->c_http.ch_kept_port &&
	    strcmp(c->c_dec.d_host.h_name, c->c_http.ch_kept_host) == 0) {
		for (i = 0; i < c->c_naddrs; i++) {
			if (!addr_equal(&c->c_addrs[i], &c->c_upaddr))
				continue;
			/* The very address just checked: reuse it. */
			c->c_http.ch_up = CH_UP_REUSED;
			c->c_next = c->c_naddrs;
			snprintf(c->c_addrtext, sizeof(c->c_addrtext), "%s",
			    addr_str(&c->c_upaddr, text, sizeof(text)));
			conn_forward_start(c);
			return;
		}
	}
	conn_drop_up(c);
	conn_connect_next(c);
}

/* Tries the next checked address; when none is left, fails. */
static void
conn_connect_next(struct conn *c)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	struct timeval		 tv = { c->c_proxy->px_connect_secs, 0 };
	const struct addr	*a;
	socklen_t		 len;
	char			 text[ADDR_STRLEN], *msg;
	int			 fd;

	c->c_state = CS_CONNECTING;
	bufferevent_disable(c->c_bev, EV_READ);
	while (c->c_next < c->c_naddrs) {
		a = &c->c_addrs[c->c_next++];
		memset(&ss, 0, sizeof(ss));
		if (a->a_family == AF_INET) {
			sin->sin_family = AF_INET;
			sin->sin_port = htons((uint16_t)c->c_port);
			memcpy(&sin->sin_addr, a->a_bytes, 4);
			len = sizeof(*sin);
		} else {
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons((uint16_t)c->c_port);
			memcpy(&sin6->sin6_addr, a->a_bytes, 16);
			len = sizeof(*sin6);
		}
		snprintf(c->c_addrtext, sizeof(c->c_addrtext), "%s",
		    addr_str(a, text, sizeof(text)));
		if ((fd = socket(a->a_family, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0)) == -1) {
			c->c_connect_error = errno;
			continue;
		}
		endpoint_nodelay(fd);
		if (connect(fd, (struct sockaddr *)&ss, len) == -1 &&
		    errno != EINPROGRESS) {
			c->c_connect_error = errno;
			close(fd);
			continue;
		}
		c->c_upfd = fd;
		c->c_upaddr = *a;
		if ((c->c_connect_ev = event_new(c->c_proxy->px_base, fd,
		    EV_WRITE, conn_connected_cb, c)) == NULL ||
		    event_add(c->c_connect_ev, &tv) == -1)
			fatalx("proxy: cannot watch a connection");
		return;
	}
	xasprintf(&msg, "cannot connect to %s: %s", c->c_addrtext,
	    strerror(c->c_connect_error));
	if (c->c_connect_error == ETIMEDOUT)
		conn_fail(c, 504, SOCKS5_REP_TTL, msg);
	else if (c->c_connect_error == ECONNREFUSED)
		conn_fail(c, 502, SOCKS5_REP_REFUSED, msg);
	else
		conn_fail(c, 502, SOCKS5_REP_HOST, msg);
	free(msg);
}

/* Makes the upstream bufferevent; it does not own c_upfd. */
static void
conn_up_bev(struct conn *c)
{
	if ((c->c_up = bufferevent_socket_new(c->c_proxy->px_base,
	    c->c_upfd, 0)) == NULL)
		fatalx("proxy: bufferevent_socket_new failed");
	bufferevent_setcb(c->c_up, up_read_cb, up_write_cb, up_event_cb, c);
	bufferevent_setwatermark(c->c_up, EV_WRITE, PROXY_BUFFER_MAX / 2, 0);
	bufferevent_enable(c->c_up, EV_READ | EV_WRITE);
}

/* Sends the current request's head upstream and starts forwarding. */
static void
conn_forward_start(struct conn *c)
{
	struct timeval	 idle = { c->c_proxy->px_idle_secs, 0 };
	char		*head, *p;
	size_t		 len;

	c->c_state = CS_FORWARD;
	c->c_http.ch_reqdone = false;
	c->c_http.ch_resphead = false;
	http_body_init(&c->c_http.ch_reqbody, c->c_http.ch_req.hr_body, c->c_http.ch_req.hr_length);
	head = http_request_head(&c->c_http.ch_req, c->c_http.ch_keepalive, &len);
	/*
	 * An HTTP/1.0 client cannot read a chunked answer: ask upstream as
	 * a 1.0 client, so that it does not send one.
	 */
	if (c->c_http.ch_req.hr_minor == 0 && (p = memmem(head, len, " HTTP/1.1\r\n",
	    11)) != NULL)
		p[8] = '0';
	bufferevent_write(c->c_up, head, len);
	free(head);
	/* A client or upstream that stops reading times out too. */
	bufferevent_set_timeouts(c->c_bev, &idle, &idle);
	bufferevent_set_timeouts(c->c_up, &idle, &idle);
	bufferevent_enable(c->c_bev, EV_READ);
	conn_process(c);
}

static void
conn_connected_cb(int fd, short what, void *arg)
{
	struct conn		*c = arg;
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(int);
	uint8_t			 reply[SOCKS5_REPLY_MAX];
	int			 error = 0;

	event_free(c->c_connect_ev);
	c->c_connect_ev = NULL;
	if (what & EV_TIMEOUT)
		error = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == -1)
		error = errno;
	if (error != 0) {
		close(c->c_upfd);
		c->c_upfd = -1;
		c->c_connect_error = error;
		conn_connect_next(c);
		return;
	}
	conn_up_bev(c);
	switch (c->c_proto) {
	case PROTO_HTTP:
		conn_forward_start(c);
		return;
	case PROTO_CONNECT:
		c->c_status = 200;
		bufferevent_write(c->c_bev, "HTTP/1.1 200 Connection "
		    "established\r\n\r\n", 39);
		break;
	case PROTO_SOCKS5:
		c->c_status = SOCKS5_REP_OK;
		len = sizeof(ss);
		if (getsockname(c->c_upfd, (struct sockaddr *)&ss, &len) == -1)
			len = 0;
		bufferevent_write(c->c_bev, reply, socks5_reply(reply,
		    SOCKS5_REP_OK, len ? (struct sockaddr *)&ss : NULL));
		break;
	default:
		break;
	}
	/* Nothing goes upstream until the first bytes are judged. */
	c->c_state = CS_PEEK;
	bufferevent_enable(c->c_bev, EV_READ);
	conn_process(c);
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
static void
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

static void	conn_inspect_start(struct conn *);

/* Refuses what was tunnelled, saying why, before a byte goes up. */
static void __attribute__((format(printf, 2, 3)))
conn_peek_refuse(struct conn *c, const char *fmt, ...)
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
 * CONNECT and SOCKS5, after the answer: the first bytes of the client
 * decide.  A TLS ClientHello must name the host decided on, or one the
 * policy allows on its own; otherwise the tunnel is closed before one
 * byte goes upstream.  A host network.inspect names is opened instead of
 * tunnelled (conn_inspect_start), and takes nothing but TLS naming it.
 */
static void
conn_peek(struct conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->c_bev);
	const struct policy	*pol = c->c_policy->pp_policy;
	const struct pinspect	*ins = NULL;
	struct decision		 d;
	struct host		 h;
	size_t			 len = evbuffer_get_length(in), snilen;
	char			 sni[256], *cause, *shown;
	int			 rc;

	if (len == 0)
		return;
	if (len > TLS_PEEK_MAX)
		len = TLS_PEEK_MAX;
	if (c->c_dec.d_host.h_kind == HOST_NAME)
		ins = policy_inspect(pol, c->c_dec.d_host.h_name);
	rc = tls_peek_sni(evbuffer_pullup(in, (ssize_t)len), len, sni,
	    sizeof(sni), &snilen);
	switch (rc) {
	case TLS_PEEK_MORE:
		if (len < TLS_PEEK_MAX)
			return;
		/* FALLTHROUGH */
	case TLS_PEEK_BAD:
		conn_peek_refuse(c, "%s", "a malformed TLS ClientHello");
		return;
	case TLS_PEEK_SNI:
		if (host_parse(sni, snilen, &h, &cause) == 0 &&
		    strcmp(h.h_name, c->c_dec.d_host.h_name) == 0)
			break;
		shown = str_escape(sni, snilen);
		if (cause == NULL && (ins != NULL || (h.h_kind == HOST_NAME &&
		    policy_inspect(pol, h.h_name) != NULL)))
			/* Inspection is by the tunnel's host, named alike. */
			conn_peek_refuse(c, "TLS server name \"%s\" differs "
			    "from the tunnel's host %s, and one of them is "
			    "inspected (network.inspect)", shown,
			    c->c_dec.d_host.h_name);
		else if (cause == NULL && policy_decide(pol, sni, snilen,
		    c->c_port, &d) && d.d_host.h_kind == HOST_NAME) {
			decision_clear(&d);
			free(shown);
			break;
		} else {
			if (cause == NULL)
				decision_clear(&d);
			conn_peek_refuse(c, "TLS server name \"%s\" does not "
			    "match the tunnel's host %s, and is not allowed "
			    "itself", shown, c->c_dec.d_host.h_name);
		}
		free(cause);
		free(shown);
		return;
	default:		/* not TLS, or TLS without a name */
		break;
	}
	if (ins != NULL) {
		if (rc == TLS_PEEK_NOT_TLS) {
			conn_peek_refuse(c, "%s is inspected (network.inspect): "
			    "only TLS may be tunnelled to it; send plain HTTP "
			    "as proxy requests (http_proxy), not in a tunnel",
			    c->c_dec.d_host.h_name);
			return;
		}
		conn_inspect_start(c);
		return;
	}
	conn_tunnel(c);
}

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
 * Both halves are ready (a leaf, and the upstream's handshake done or
 * failed): answer the sandbox's ClientHello, which is still in c_bev's
 * input, with a TLS filter over c_bev.
 */
static void
conn_inspect_accept(struct conn *c)
{
	struct proxy		*px = c->c_proxy;
	struct bufferevent	*raw = c->c_bev, *tls;
	SSL			*ssl;

	if (c->c_ins.ci_leaf == NULL || !c->c_ins.ci_up_ready)
		return;
	if ((ssl = SSL_new(px->px_tls_srv)) == NULL ||
	    SSL_use_certificate(ssl, c->c_ins.ci_leaf) != 1 ||
	    SSL_use_PrivateKey(ssl, signer_key(px->px_signer)) != 1)
		fatalx("proxy: cannot make a TLS session for inspection");
	if ((tls = bufferevent_openssl_filter_new(px->px_base, raw, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE)) == NULL)
		fatalx("proxy: cannot make a TLS bufferevent");
	/* The filter's own writes stop at the same bound as ours. */
	bufferevent_setwatermark(raw, EV_WRITE, 0, PROXY_BUFFER_MAX);
	bufferevent_set_max_single_write(raw, PROXY_TLS_READ);
	c->c_bev = tls;
	c->c_tls = true;
	c->c_state = CS_TLS_ACCEPT;
	bufferevent_setcb(tls, conn_read_cb, conn_write_cb, conn_event_cb, c);
	bufferevent_setwatermark(tls, EV_WRITE, PROXY_BUFFER_MAX / 2, 0);
	bufferevent_enable(tls, EV_READ | EV_WRITE);
	/* The ClientHello was read already: start on it. */
	bufferevent_trigger(raw, EV_READ, BEV_TRIG_IGNORE_WATERMARKS);
}

static void
conn_leaf_cb(X509 *leaf, const char *why, void *arg)
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
	conn_inspect_accept(c);
}

/* The upstream's TLS handshake ended: what it gave, for the requests. */
static void
conn_inspect_up(struct conn *c, short what)
{
	SSL		*ssl = bufferevent_openssl_get_ssl(c->c_up);
	const char	*err;
	long		 vr;

	c->c_ins.ci_up_ready = true;
	if (what & BEV_EVENT_CONNECTED) {
		conn_inspect_accept(c);
		return;
	}
	if ((vr = SSL_get_verify_result(ssl)) != X509_V_OK)
		xasprintf(&c->c_ins.ci_upfail, "the upstream's certificate does not "
		    "verify for %s: %s (if it is signed by a private CA, "
		    "give that CA to the proxy: --upstream-ca FILE)",
		    c->c_ins.ci_host, X509_verify_cert_error_string(vr));
	else if ((err = conn_tls_error(c->c_up)) != NULL)
		xasprintf(&c->c_ins.ci_upfail, "TLS with the upstream failed: %s",
		    err);
	else
		xasprintf(&c->c_ins.ci_upfail, "the upstream %s",
		    (what & BEV_EVENT_TIMEOUT) ? "did not finish the TLS "
		    "handshake in time" : "closed during the TLS handshake");
	conn_drop_up(c);
	conn_inspect_accept(c);
}

/*
 * Opens an inspected tunnel: a leaf for the host from the signer, and a
 * verified TLS connection to the upstream (by the host's name, ALPN
 * http/1.1), at once; then the sandbox's handshake.  Requests are read
 * from then on like forward ones, each decided (conn_inspect_request).
 */
static void
conn_inspect_start(struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	struct timeval	 tv = { px->px_connect_secs, 0 };
	SSL		*ssl;

	if (px->px_signer == NULL || px->px_tls_srv == NULL) {
		conn_peek_refuse(c, "%s is to be inspected (network.inspect), "
		    "but this proxy started without a CA (restart it with "
		    "the inspecting policy, after `cordon ca init`)",
		    c->c_dec.d_host.h_name);
		return;
	}
	snprintf(c->c_ins.ci_host, sizeof(c->c_ins.ci_host), "%s",
	    c->c_dec.d_host.h_name);
	c->c_ins.ci_port = c->c_port;
	snprintf(c->c_ins.ci_addr, sizeof(c->c_ins.ci_addr), "%s", c->c_addrtext);
	c->c_state = CS_TLS_SETUP;
	bufferevent_disable(c->c_bev, EV_READ);
	conn_arm_deadline(c);

	if ((ssl = SSL_new(px->px_tls_cli)) == NULL ||
	    SSL_set_tlsext_host_name(ssl, c->c_ins.ci_host) != 1 ||
	    SSL_set1_host(ssl, c->c_ins.ci_host) != 1)
		fatalx("proxy: cannot make a TLS session for an upstream");
	/*
	 * A TLS bufferevent on the socket itself: a filter over the socket's
	 * bufferevent would cost twice the processor time per byte (libevent
	 * reads a few KiB per wakeup).  Such a bufferevent, though, goes on
	 * reading only when the socket is readable: conn_up_read() handles
	 * what OpenSSL holds already.
	 */
	bufferevent_free(c->c_up);	/* nothing was written on it */
	if ((c->c_up = bufferevent_openssl_socket_new(px->px_base, c->c_upfd,
	    ssl, BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE)) == NULL)
		fatalx("proxy: cannot make a TLS bufferevent");
	c->c_upfd = -1;			/* c_up's now */
	bufferevent_setcb(c->c_up, up_read_cb, up_write_cb, up_event_cb, c);
	bufferevent_setwatermark(c->c_up, EV_WRITE, PROXY_BUFFER_MAX / 2, 0);
	bufferevent_set_max_single_read(c->c_up, PROXY_TLS_READ);
	bufferevent_set_timeouts(c->c_up, &tv, &tv);
	bufferevent_enable(c->c_up, EV_READ | EV_WRITE);

	c->c_ins.ci_sreq = signer_get(px->px_signer, c->c_ins.ci_host, conn_leaf_cb, c);
}

/* The sandbox's handshake is done: read requests. */
static void
conn_inspect_accepted(struct conn *c)
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

/*
 * Whether a request to an inspected host passes network.inspect, and
 * the phantom credentials filled in (inspected TLS) or looked for
 * (anywhere).  Answers 403 itself and returns false when it does not.
 */
static bool
conn_inspect_request(struct conn *c)
{
	const struct pinspect	*ins;
	struct proxy		*px = c->c_proxy;
	char			*why, *hint, *what;
	int			 status;

	if (c->c_dec.d_host.h_kind == HOST_NAME &&
	    (ins = policy_inspect(c->c_policy->pp_policy,
	    c->c_dec.d_host.h_name)) != NULL &&
	    !inspect_allows(ins, &c->c_http.ch_req, &status, &why, &hint)) {
		xasprintf(&what, "%s %s%s: %s", c->c_http.ch_req.hr_method,
		    c->c_dec.d_host.h_name, c->c_path, why);
		conn_reason(c, why);
		c->c_dec.d_verdict = VERDICT_DENY;
		c->c_dec.d_rule = &ins->in_host;
		c->c_hint = hint;
		conn_http_answer(c, status, what, hint);
		free(what);
		free(why);
		return false;
	}
	scrub_free(c->c_scrub);
	c->c_scrub = NULL;
	if (px->px_nphantoms > 0) {
		status = phantom_apply(&c->c_http.ch_req, px->px_phantoms,
		    px->px_nphantoms, c->c_dec.d_host.h_kind == HOST_NAME ?
		    c->c_dec.d_host.h_name : c->c_host, c->c_tls,
		    &c->c_warning);
		if (c->c_warning != NULL)
			log_warnx("proxy: %s", c->c_warning);
		c->c_scrub = scrub_new(px->px_phantoms, px->px_nphantoms,
		    status > 0);
	}
	return true;
}

/*
 * A request head read inside an inspected tunnel: the policy in force
 * decides on its host again (it may have been reloaded), which must be
 * the tunnel's; then network.inspect's rules; then it goes up the
 * tunnel's one upstream connection.
 */
static void
conn_inspect_head(struct conn *c)
{
	char	*what;

	snprintf(c->c_addrtext, sizeof(c->c_addrtext), "%s", c->c_ins.ci_addr);
	c->c_judged = true;
	if (!policy_decide(c->c_policy->pp_policy, c->c_host, c->c_hostlen,
	    c->c_port, &c->c_dec)) {
		conn_deny(c);
		return;
	}
	if (strcmp(c->c_dec.d_host.h_name, c->c_ins.ci_host) != 0 ||
	    c->c_port != c->c_ins.ci_port) {
		xasprintf(&what, "the Host header names %s:%d inside a TLS "
		    "connection to %s:%d", c->c_dec.d_host.h_name, c->c_port,
		    c->c_ins.ci_host, c->c_ins.ci_port);
		conn_reason(c, what);
		c->c_dec.d_verdict = VERDICT_DENY;
		conn_http_answer(c, 403, what, "open a connection to each "
		    "host; one inspected connection serves one host");
		free(what);
		return;
	}
	if (!conn_inspect_request(c))
		return;
	if (c->c_ins.ci_upfail != NULL) {
		conn_fail(c, 502, 0, c->c_ins.ci_upfail);
		return;
	}
	if (c->c_up == NULL) {
		conn_fail(c, 502, 0, "the upstream closed the connection");
		return;
	}
	c->c_http.ch_up = CH_UP_NEW;
	conn_forward_start(c);
}

/* Reads the SOCKS5 greeting and request. */
static void
conn_socks(struct conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->c_bev);
	struct socks5_request	 req;
	size_t			 len = evbuffer_get_length(in), used;
	uint8_t			 code, *data;
	char			*cause = NULL;
	bool			 noauth;
	int			 rc;

	data = evbuffer_pullup(in, -1);
	if (c->c_state == CS_SOCKS_GREETING) {
		rc = socks5_greeting_parse(data, len, &used, &noauth, &cause);
		if (rc == SOCKS5_PARSE_MORE)
			return;
		if (rc == SOCKS5_PARSE_ERROR || !noauth) {
			/* No method we accept: 0xff, then close. */
			conn_begin(c, PROTO_SOCKS5, NULL, "", 0, 0);
			conn_reason(c, cause != NULL ? cause : "no SOCKS5 "
			    "method without authentication offered");
			c->c_dec.d_verdict = VERDICT_DENY;
			c->c_status = 0xff;
			bufferevent_write(c->c_bev, "\x05\xff", 2);
			free(cause);
			conn_finish(c);
			return;
		}
		evbuffer_drain(in, used);
		bufferevent_write(c->c_bev, "\x05\x00", 2);
		c->c_state = CS_SOCKS_REQUEST;
		len = evbuffer_get_length(in);
		data = evbuffer_pullup(in, -1);
	}
	rc = socks5_request_parse(data, len, &used, &req, &code, &cause);
	if (rc == SOCKS5_PARSE_MORE)
		return;
	if (rc == SOCKS5_PARSE_ERROR) {
		conn_begin(c, PROTO_SOCKS5, NULL, "", 0, 0);
		conn_reason(c, cause);
		c->c_dec.d_verdict = VERDICT_DENY;
		free(cause);
		conn_socks_answer(c, code);
		return;
	}
	evbuffer_drain(in, used);
	conn_begin(c, PROTO_SOCKS5, NULL, req.sr_host, req.sr_hostlen,
	    req.sr_port);
	if (code != SOCKS5_REP_OK) {
		/* BIND and UDP ASSOCIATE are not offered. */
		conn_reason(c, req.sr_cmd == SOCKS5_CMD_BIND ? "SOCKS5 BIND "
		    "is not supported" : req.sr_cmd == SOCKS5_CMD_UDP ?
		    "SOCKS5 UDP ASSOCIATE is not supported" :
		    "unknown SOCKS5 command");
		c->c_dec.d_verdict = VERDICT_DENY;
		conn_socks_answer(c, code);
		return;
	}
	conn_decide(c);
}

/* Reads an HTTP request head and starts its decision. */
static void
conn_http_head(struct conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->c_bev);
	size_t		 len = evbuffer_get_length(in), used;
	const char	*data;
	char		*cause = NULL;
	int		 rc, status = 400;

	if (len > HTTP_HEAD_MAX + 4)
		len = HTTP_HEAD_MAX + 4;
	data = (const char *)evbuffer_pullup(in, (ssize_t)len);
	/*
	 * The parser keeps no state: parse again only when a line ended
	 * since, or a client sending a byte at a time costs quadratic time.
	 */
	if (len > c->c_http.ch_headscan && len <= HTTP_HEAD_MAX &&
	    memchr(data + c->c_http.ch_headscan, '\n', len - c->c_http.ch_headscan) == NULL) {
		c->c_http.ch_headscan = len;
		return;
	}
	c->c_http.ch_headscan = len;
	http_request_clear(&c->c_http.ch_req);
	if (c->c_tls)
		rc = http_origin_request_parse(data, len, 443, &c->c_http.ch_req,
		    &used, &status, &cause);
	else
		rc = http_request_parse(data, len, &c->c_http.ch_req, &used, &status,
		    &cause);
	if (rc == HTTP_PARSE_MORE)
		return;
	c->c_http.ch_headscan = 0;
	if (rc == HTTP_PARSE_ERROR) {
		conn_begin(c, c->c_tls ? PROTO_HTTPS : PROTO_HTTP, NULL,
		    c->c_tls ? c->c_ins.ci_host : "", c->c_tls ?
		    strlen(c->c_ins.ci_host) : 0, c->c_tls ? c->c_ins.ci_port : 0);
		conn_reason(c, cause);
		c->c_dec.d_verdict = VERDICT_DENY;
		conn_http_answer(c, status, cause, NULL);
		free(cause);
		return;
	}
	evbuffer_drain(in, used);
	conn_begin(c, c->c_tls ? PROTO_HTTPS : c->c_http.ch_req.hr_connect ?
	    PROTO_CONNECT : PROTO_HTTP, c->c_http.ch_req.hr_method, c->c_http.ch_req.hr_host,
	    c->c_http.ch_req.hr_hostlen, c->c_http.ch_req.hr_port);
	if (c->c_http.ch_req.hr_path != NULL)
		c->c_path = xstrndup(c->c_http.ch_req.hr_path,
		    strcspn(c->c_http.ch_req.hr_path, "?"));
	c->c_http.ch_keepalive = c->c_http.ch_req.hr_keepalive && !c->c_http.ch_req.hr_connect;
	if (c->c_tls)
		conn_inspect_head(c);
	else
		conn_decide(c);
}

/*
 * HTTP forwarding: moves request body bytes to the upstream and answer
 * bytes to the client, each as far as its framing goes, with at most
 * PROXY_BUFFER_MAX waiting on either side.
 */
static void
conn_forward(struct conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->c_bev);
	struct evbuffer	*upout = bufferevent_get_output(c->c_up);
	struct evbuffer	*upin = bufferevent_get_input(c->c_up);
	struct evbuffer	*out = bufferevent_get_output(c->c_bev);
	size_t		 len, used;
	ssize_t		 n;
	char		*cause = NULL, *head;
	bool		 done;
	int		 rc;

	/* The request body, as far as it goes. */
	while (!c->c_http.ch_reqdone && (len = evbuffer_get_length(in)) > 0 &&
	    evbuffer_get_length(upout) < PROXY_BUFFER_MAX) {
		if (len > 65536)
			len = 65536;
		n = http_body_scan(&c->c_http.ch_reqbody, (const char *)
		    evbuffer_pullup(in, (ssize_t)len), len, &done);
		if (n < 0) {
			conn_reason(c, "malformed request body");
			conn_abort(c);
			return;
		}
		evbuffer_remove_buffer(in, upout, (size_t)n);
		c->c_up_bytes += (uint64_t)n;
		if (done)
			c->c_http.ch_reqdone = true;
		else if (n == 0)
			break;
	}
	if (!c->c_http.ch_reqdone && c->c_http.ch_reqbody.hb_kind == HTTP_BODY_NONE)
		c->c_http.ch_reqdone = true;
	if (evbuffer_get_length(upout) >= PROXY_BUFFER_MAX || c->c_http.ch_reqdone)
		bufferevent_disable(c->c_bev, EV_READ);
	else
		bufferevent_enable(c->c_bev, EV_READ);

	/* The answer's head, then its body. */
	while (!c->c_http.ch_resphead && (len = evbuffer_get_length(upin)) > 0) {
		if (len > HTTP_HEAD_MAX + 4)
			len = HTTP_HEAD_MAX + 4;
		http_response_clear(&c->c_http.ch_resp);
		rc = http_response_parse((const char *)evbuffer_pullup(upin,
		    (ssize_t)len), len, c->c_http.ch_req.hr_method, &c->c_http.ch_resp, &used,
		    &cause);
		if (rc == HTTP_PARSE_MORE)
			return;
		if (rc == HTTP_PARSE_ERROR) {
			char	*msg;

			xasprintf(&msg, "a malformed answer from upstream: %s",
			    cause);
			free(cause);
			if (c->c_down_bytes == 0)
				conn_fail(c, 502, 0, msg);
			else {
				conn_reason(c, msg);
				conn_abort(c);
			}
			free(msg);
			return;
		}
		evbuffer_drain(upin, used);
		c->c_status = c->c_http.ch_resp.hs_status;
		if (scrub_head(c->c_scrub, &c->c_http.ch_resp, &cause, &head) == -1) {
			conn_reason(c, cause);
			conn_http_answer(c, 502, cause, head);
			free(cause);
			free(head);
			return;
		}
		if (c->c_http.ch_resp.hs_status >= 100 && c->c_http.ch_resp.hs_status < 200 &&
		    c->c_http.ch_resp.hs_status != 101) {
			/* An interim answer: pass it on, wait for the next. */
			head = http_response_head(&c->c_http.ch_resp, true, &len);
			evbuffer_add(out, head, len);
			free(head);
			continue;
		}
		if (c->c_http.ch_resp.hs_body == HTTP_BODY_CLOSE ||
		    !c->c_http.ch_resp.hs_keepalive)
			c->c_http.ch_keepalive = c->c_http.ch_keepalive &&
			    c->c_http.ch_resp.hs_body != HTTP_BODY_CLOSE;
		/* An inspected tunnel has one upstream: it ends with it. */
		if (c->c_tls && !c->c_http.ch_resp.hs_keepalive)
			c->c_http.ch_keepalive = false;
		head = http_response_head(&c->c_http.ch_resp, c->c_http.ch_keepalive, &len);
		evbuffer_add(out, head, len);
		free(head);
		c->c_http.ch_resphead = true;
		http_body_init(&c->c_http.ch_respbody, c->c_http.ch_resp.hs_body,
		    c->c_http.ch_resp.hs_length);
		if (c->c_http.ch_resp.hs_body == HTTP_BODY_NONE)
			break;
	}
	if (!c->c_http.ch_resphead)
		return;
	done = c->c_http.ch_respbody.hb_kind == HTTP_BODY_NONE;
	while (!done && (len = evbuffer_get_length(upin)) > 0 &&
	    evbuffer_get_length(out) < PROXY_BUFFER_MAX) {
		if (len > 65536)
			len = 65536;
		n = scrub_body(c->c_scrub, &c->c_http.ch_respbody, upin, out, len,
		    &done);
		if (n < 0) {
			conn_reason(c, "a malformed answer body from upstream");
			conn_abort(c);
			return;
		}
		c->c_down_bytes += (uint64_t)n;
		if (n == 0 && !done)
			break;
	}
	conn_up_read(c, evbuffer_get_length(out) < PROXY_BUFFER_MAX);
	if (!done)
		return;

	/* This exchange is over: keep the upstream if both sides may. */
	conn_log(c);
	if (c->c_http.ch_keepalive && c->c_http.ch_reqdone && c->c_http.ch_resp.hs_keepalive &&
	    c->c_http.ch_respbody.hb_kind != HTTP_BODY_CLOSE &&
	    evbuffer_get_length(upin) == 0) {
		c->c_http.ch_up = CH_UP_KEPT;
		c->c_http.ch_kept_port = c->c_port;
		memcpy(c->c_http.ch_kept_host, c->c_dec.d_host.h_name,
		    sizeof(c->c_http.ch_kept_host));
		conn_up_read(c, true);
	} else
		conn_drop_up(c);
	if (!c->c_http.ch_keepalive || !c->c_http.ch_reqdone) {
		conn_finish(c);
		return;
	}
	c->c_state = CS_HTTP_HEAD;
	c->c_record = CR_NONE;
	conn_arm_deadline(c);
	{
		struct timeval	 tv = { c->c_proxy->px_head_secs, 0 };

		bufferevent_set_timeouts(c->c_bev, &tv, NULL);
	}
	bufferevent_enable(c->c_bev, EV_READ);
	conn_process(c);
}

/*
 * A sandbox's listener: the PROXY v2 header with its id comes first, or
 * the connection is refused (and logged, as from no known sandbox).
 */
static void
conn_pp2(struct conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->c_bev);
	struct policy_ctx	 ctx;
	size_t		 len = evbuffer_get_length(in), used;
	char		 id[PP2_ID_MAX + 1], *cause, *narrow, *from;
	int		 rc;

	if (len > PP2_HEADER_MAX)
		len = PP2_HEADER_MAX;
	rc = pp2_parse(evbuffer_pullup(in, (ssize_t)len), len, &used, id,
	    sizeof(id), &narrow, &cause);
	if (rc == PP2_PARSE_OK && narrow != NULL) {
		/*
		 * The run's own rules: read like a workspace layer (it may
		 * only narrow), and a connection with rules that do not load
		 * is refused, never decided without them.
		 */
		memset(&ctx, 0, sizeof(ctx));
		ctx.pc_workspace = ctx.pc_home = "/";
		ctx.pc_untrusted = true;
		xasprintf(&from, "sandbox %s", id);
		if (!conn_narrow_keys_ok(narrow)) {
			c->c_narrow = NULL;
			cause = xstrdup("only network.mode, allow, deny and "
			    "allow_cidrs may be sent");
		} else
			c->c_narrow = policy_load_buffer(narrow, strlen(narrow),
			    from, &ctx, &cause);
		free(from);
		free(narrow);
		if (c->c_narrow == NULL) {
			char	*why;

			xasprintf(&why, "the run's own rules: %s", cause);
			free(cause);
			cause = why;
			rc = PP2_PARSE_ERROR;
		}
	}
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
	{
		char	 command[PP2_COMMAND_MAX + 1];

		pp2_command(evbuffer_pullup(in, (ssize_t)used), used, command,
		    sizeof(command));
		if (command[0] != '\0')
			c->c_command = xstrdup(command);
	}
	evbuffer_drain(in, used);
	c->c_sandbox = xstrdup(id);
	c->c_state = CS_SNIFF;
	conn_process(c);
}

/* Moves c on as far as the bytes it has allow. */
static void
conn_process(struct conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->c_bev);
	uint8_t		 first;

	switch (c->c_state) {
	case CS_PP2:
		if (evbuffer_get_length(in) > 0)
			conn_pp2(c);
		return;
	case CS_SNIFF:
		if (evbuffer_copyout(in, &first, 1) != 1)
			return;
		c->c_state = first == SOCKS5_VERSION ? CS_SOCKS_GREETING :
		    CS_HTTP_HEAD;
		conn_process(c);
		return;
	case CS_HTTP_HEAD:
		if (evbuffer_get_length(in) > 0)
			conn_http_head(c);
		return;
	case CS_SOCKS_GREETING:
	case CS_SOCKS_REQUEST:
		conn_socks(c);
		return;
	case CS_PEEK:
		conn_peek(c);
		return;
	case CS_FORWARD:
		conn_forward(c);
		return;
	default:
		return;
	}
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_process(arg);
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	if (c->c_state == CS_CLOSING) {
		conn_close(c);
		return;
	}
	if (c->c_state == CS_FORWARD)
		conn_forward(c);	/* room again for the answer */
}

static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		if (c->c_state == CS_TLS_ACCEPT)
			conn_inspect_accepted(c);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		conn_too_slow(c);
		return;
	}
	if (c->c_state == CS_TLS_ACCEPT) {
		const char	*err = conn_tls_error(c->c_bev), *hint = "";
		char		*why;

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
		return;
	}
	/* End of file or error from the client. */
	if (c->c_state == CS_FORWARD && (what & BEV_EVENT_EOF) &&
	    c->c_http.ch_reqdone) {
		/* Half-closed after a whole request: finish the answer. */
		c->c_http.ch_keepalive = false;
		bufferevent_disable(c->c_bev, EV_READ);
		return;
	}
	if (c->c_record == CR_OPEN && c->c_reason == NULL &&
	    c->c_state != CS_PEEK && c->c_state != CS_FLUSHING)
		conn_reason(c, "the client went away");
	conn_free(c);
}

static void
up_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;
	struct evbuffer	*out;

	(void)bev;
	if (c->c_state == CS_PEEK) {
		/* Server speaks first (SSH, SMTP): pass it on. */
		out = bufferevent_get_output(c->c_bev);
		c->c_down_bytes += evbuffer_get_length(
		    bufferevent_get_input(c->c_up));
		evbuffer_add_buffer(out, bufferevent_get_input(c->c_up));
		return;
	}
	if (c->c_state == CS_FORWARD) {
		conn_forward(c);
		return;
	}
	/* A kept upstream that talks between requests is not reused. */
	if (c->c_http.ch_up == CH_UP_KEPT)
		conn_drop_up(c);
	else if (c->c_state == CS_TLS_SETUP || c->c_state == CS_TLS_ACCEPT)
		bufferevent_disable(c->c_up, EV_READ);
}

static void
up_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	if (c->c_state == CS_FORWARD)
		conn_forward(c);	/* room again for the request */
}

static void
up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	if (c->c_state == CS_TLS_SETUP) {
		conn_inspect_up(c, what);
		return;
	}
	if (c->c_state == CS_TLS_ACCEPT) {
		/* Gone before the sandbox's handshake ended. */
		if (c->c_ins.ci_upfail == NULL)
			c->c_ins.ci_upfail = xstrdup("the upstream closed the "
			    "connection");
		conn_drop_up(c);
		return;
	}
	if (c->c_http.ch_up == CH_UP_KEPT && c->c_state != CS_FORWARD) {
		/* A kept upstream closed between requests: forget it. */
		conn_drop_up(c);
		/* Inspected: the tunnel had that one; the client retries. */
		if (c->c_tls && c->c_state == CS_HTTP_HEAD &&
		    evbuffer_get_length(bufferevent_get_input(c->c_bev)) == 0)
			conn_finish(c);
		return;
	}
	if (c->c_state == CS_FORWARD && c->c_http.ch_up == CH_UP_REUSED &&
	    !c->c_tls &&
	    !c->c_http.ch_resphead &&
	    c->c_down_bytes == 0 && c->c_http.ch_req.hr_body == HTTP_BODY_NONE) {
		/*
		 * The reused connection was closed as the request went out
		 * (the upstream's own idle timeout): nothing was answered, and
		 * the request has no body, so send it on a new connection.
		 */
		conn_drop_up(c);		/* CH_UP_NEW */
		c->c_next = 0;
		conn_connect_next(c);
		return;
	}
	if (c->c_state == CS_FORWARD && (what & BEV_EVENT_EOF) &&
	    c->c_http.ch_resphead && c->c_http.ch_respbody.hb_kind == HTTP_BODY_CLOSE) {
		/* The end of a close-delimited answer. */
		c->c_http.ch_keepalive = false;
		scrub_end(c->c_scrub, bufferevent_get_output(c->c_bev));
		conn_log(c);
		conn_finish(c);
		return;
	}
	if (c->c_reason == NULL)
		conn_reason(c, (what & BEV_EVENT_TIMEOUT) ? "upstream timed "
		    "out" : "upstream closed early");
	if (c->c_state == CS_FORWARD && !c->c_http.ch_resphead && c->c_down_bytes == 0)
		conn_fail(c, (what & BEV_EVENT_TIMEOUT) ? 504 : 502, 0,
		    c->c_reason);
	else
		conn_abort(c);
}

/*
 * A new client on fd (taken), from sa; with pp2 it must start with a
 * PROXY v2 header naming its sandbox.
 */
void
conn_accept(struct proxy *px, int fd, const struct sockaddr *sa,
    socklen_t salen, bool pp2)
{
	struct timeval	 tv = { px->px_head_secs, 0 };
	struct conn	*c;
	char		 text[ADDR_STRLEN];

	if (px->px_log != NULL && jsonl_failed(px->px_log)) {
		/* Fail closed: nothing goes out that is not logged. */
		proxy_warn(px, "the egress log cannot be written: refusing "
		    "connections until it can (fix it, then send SIGHUP)");
		close(fd);
		return;
	}
	endpoint_nodelay(fd);
	c = xcalloc(1, sizeof(*c));
	c->c_proxy = px;
	c->c_fd = fd;
	c->c_upfd = -1;
	c->c_state = pp2 ? CS_PP2 : CS_SNIFF;
	if (sa->sa_family == AF_INET)
		snprintf(c->c_client, sizeof(c->c_client), "%s:%u",
		    inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->
		    sin_addr, text, sizeof(text)),
		    ntohs(((const struct sockaddr_in *)sa)->sin_port));
	else if (sa->sa_family == AF_INET6)
		snprintf(c->c_client, sizeof(c->c_client), "[%s]:%u",
		    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->
		    sin6_addr, text, sizeof(text)),
		    ntohs(((const struct sockaddr_in6 *)sa)->sin6_port));
	else
		snprintf(c->c_client, sizeof(c->c_client), "unix");
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
		proxy_warn(px, "too many connections (--max-conns); closing "
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

/* Wraps a policy (taken) for sharing between connections. */
struct ppolicy *
ppolicy_new(struct policy *p)
{
	struct ppolicy	*pp;

	pp = xcalloc(1, sizeof(*pp));
	pp->pp_policy = p;
	pp->pp_refs = 1;
	return pp;
}

struct ppolicy *
ppolicy_ref(struct ppolicy *pp)
{
	pp->pp_refs++;
	return pp;
}

void
ppolicy_unref(struct ppolicy *pp)
{
	if (pp == NULL || --pp->pp_refs > 0)
		return;
	policy_free(pp->pp_policy);
	free(pp);
}

/* Frees n phantom credentials, wiping the real values first. */
void
phantoms_free(struct phantom *ph, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		pitem_clear(&ph[i].ph_host);
		free(ph[i].ph_env);
		free(ph[i].ph_header);
		free(ph[i].ph_format);
		free(ph[i].ph_placeholder);
		if (ph[i].ph_value != NULL) {
			explicit_bzero(ph[i].ph_value, strlen(ph[i].ph_value));
			free(ph[i].ph_value);
		}
	}
	free(ph);
}
