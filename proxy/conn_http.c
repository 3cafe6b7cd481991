/*
 * conn_http.c: HTTP/1.x on a client connection, forward requests and
 * those inside an inspected tunnel alike.
 *
 * A request head is read whole (bounded by HTTP_HEAD_MAX and the head
 * deadline) and parsed by http.c; its protocol's co_request decides on
 * it (conn_dial_decide; inside an inspected tunnel, conn_tls.c's).  Then the
 * head is written anew for the upstream (http_out.c), and the bodies go
 * both ways as they come, through one pump, each only as far as its framing
 * says (http_body.c) and with at most PROXY_BUFFER_MAX waiting on either
 * side.  When the answer is over the exchange is logged, and if both
 * sides may, the next request on the connection is read and decided
 * anew; the upstream connection is kept for it, and reused when the
 * next request goes to the same host, port and address.  When the
 * client's connection ends, or its next request goes elsewhere, the
 * kept upstream waits in the proxy's pool (upool.c) for another client
 * connection of the same run.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "lib/log.h"
#include "lib/xmalloc.h"
#include "proxy/conn_proto.h"

#define CONN_HTTP_SLICE		(64 * 1024)	/* body bytes per step */

/* The reason phrase of a status cordon answers with itself. */
static const char *
conn_http_title(int status)
{
	switch (status) {
	case 403:
		return "Forbidden";
	case 429:
		return "Too Many Requests";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
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
void
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
	    "Content-Length: %d\r\n\r\n%s", status, conn_http_title(status),
	    what, n, body);
	free(body);
	conn_finish(c);
}

/* Says a refusal or failure as HTTP does: a status and a short text. */
void
conn_http_refuse(struct conn *c, enum conn_refusal why, const char *what,
    const char *hint)
{
	static const int	 status[] = {
		[CONN_DENIED] = 403,
		[CONN_UNAVAILABLE] = 503,
		[CONN_UNREACHABLE] = 502,
		[CONN_REFUSED] = 502,
		[CONN_TIMEDOUT] = 504,
		[CONN_LIMITED] = 429
	};

	conn_http_answer(c, status[why], what, hint);
}

/*
 * Whether the request carries no credential but cordon's to a host the
 * run holds one for (pin.c); the log says which it carried.  Answers 403
 * itself and returns false when it does not.
 */
static bool
conn_http_pin(struct conn *c, const char *host)
{
	struct proxy		*px = c->c_proxy;
	const struct pitem	*rule;
	enum pin_kind		 kind;
	char			*why, *hint, *what;
	bool			 ok;

	ok = pin_allows(&c->c_http.hx_req, px->px_phantoms, px->px_nphantoms,
	    c->c_policy->pp_policy, host, c->c_ins.ci_tls, &kind, &rule, &why,
	    &hint);
	c->c_credential = pin_kind_names[kind];
	if (ok)
		return true;
	xasprintf(&what, "%s %s%s: %s", c->c_http.hx_req.hr_method, host,
	    c->c_path != NULL ? c->c_path : "", why);
	conn_reason(c, why);
	c->c_dec.d_verdict = VERDICT_DENY;
	c->c_dec.d_rule = rule;
	c->c_hint = hint;
	conn_http_answer(c, 403, what, hint);
	free(what);
	free(why);
	return false;
}

/*
 * Whether a request passes account pinning (conn_http_pin) and, to an
 * inspected host, network.inspect, and the phantom credentials filled
 * in (inspected TLS) or looked for (anywhere).  Answers 403 itself and
 * returns false when it does not.
 */
bool
conn_http_inspect(struct conn *c)
{
	const struct pinspect	*ins;
	struct proxy		*px = c->c_proxy;
	struct conn_http	*h = &c->c_http;
	struct http_request	*req = &h->hx_req;
	char			*why, *hint, *what;
	int			 status;

	if (!conn_http_pin(c, c->c_dec.d_host.h_kind == HOST_NAME ?
	    c->c_dec.d_host.h_name : c->c_host))
		return false;
	if (c->c_dec.d_host.h_kind == HOST_NAME &&
	    (ins = policy_match_inspect(c->c_policy->pp_policy,
	    c->c_dec.d_host.h_name)) != NULL &&
	    !inspect_allows(ins, req, &status, &why, &hint)) {
		xasprintf(&what, "%s %s%s: %s", req->hr_method,
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
	scrub_free(h->hx_scrub);
	h->hx_scrub = NULL;
	if (px->px_nphantoms > 0) {
		status = inspect_phantom_apply(req, px->px_phantoms,
		    px->px_nphantoms, c->c_dec.d_host.h_kind == HOST_NAME ?
		    c->c_dec.d_host.h_name : c->c_host, c->c_ins.ci_tls,
		    &c->c_warning);
		if (c->c_warning != NULL)
			log_warnx("proxy: %s", c->c_warning);
		h->hx_scrub = scrub_new(px->px_phantoms, px->px_nphantoms,
		    status > 0);
	}
	renew_free(h->hx_renew);
	h->hx_renew = px->px_nphantoms == 0 ||
	    c->c_dec.d_host.h_kind != HOST_NAME ? NULL : renew_new(px, req,
	    c->c_dec.d_host.h_name, c->c_ins.ci_tls);
	return true;
}

/*
 * A request head that does not parse: answered with the status the
 * parser gave, logged as a refusal of the target as far as it is known.
 */
static void
conn_http_bad_head(struct conn *c, int status, char *cause)
{
	if (c->c_ins.ci_tls)
		conn_begin(c, PROTO_HTTPS, NULL, c->c_ins.ci_host,
		    strlen(c->c_ins.ci_host), c->c_ins.ci_port);
	else
		conn_begin(c, PROTO_HTTP, NULL, "", 0, 0);
	conn_reason(c, cause);
	c->c_dec.d_verdict = VERDICT_DENY;
	conn_http_answer(c, status, cause, NULL);
	free(cause);
}

/* Reads an HTTP request head and starts its decision. */
void
conn_http_head(struct conn *c)
{
	struct conn_http	*h = &c->c_http;
	struct evbuffer		*in = bufferevent_get_input(c->c_bev);
	size_t			 len = evbuffer_get_length(in), used;
	const char		*data;
	char			*cause = NULL;
	int			 rc, status = 400;
	bool			 tls = c->c_ins.ci_tls;

	if (len == 0)
		return;
	if (len > HTTP_HEAD_MAX + 4)
		len = HTTP_HEAD_MAX + 4;
	data = (const char *)evbuffer_pullup(in, (ssize_t)len);
	/*
	 * The parser reads the head from its first byte on each call (it
	 * keeps nothing between calls), so it runs again only when a line
	 * has ended since the last try (hx_headscan): otherwise a client
	 * sending a byte at a time would cost quadratic time.
	 */
	if (len > h->hx_headscan && len <= HTTP_HEAD_MAX &&
	    memchr(data + h->hx_headscan, '\n', len - h->hx_headscan) ==
	    NULL) {
		h->hx_headscan = len;
		return;
	}
	h->hx_headscan = len;
	http_request_clear(&h->hx_req);
	if (tls || c->c_cap.cc_port != 0)
		rc = http_request_parse_origin(data, len, tls ? 443 :
		    c->c_cap.cc_port, &h->hx_req, &used, &status, &cause);
	else
		rc = http_request_parse(data, len, &h->hx_req, &used, &status,
		    &cause);
	if (rc == HTTP_PARSE_MORE)
		return;
	h->hx_headscan = 0;
	if (rc == HTTP_PARSE_ERROR) {
		conn_http_bad_head(c, status, cause);
		return;
	}
	evbuffer_drain(in, used);
	conn_begin(c, tls ? PROTO_HTTPS : h->hx_req.hr_connect ?
	    PROTO_CONNECT : PROTO_HTTP, h->hx_req.hr_method,
	    h->hx_req.hr_host, h->hx_req.hr_hostlen, h->hx_req.hr_port);
	if (h->hx_req.hr_path != NULL)
		c->c_path = xstrndup(h->hx_req.hr_path,
		    strcspn(h->hx_req.hr_path, "?"));
	h->hx_keepalive = h->hx_req.hr_keepalive && !h->hx_req.hr_connect;
	c->c_ops->co_request(c);
}

/*
 * Whether the upstream c kept reaches the host and port decided on, at
 * an address just checked.
 */
static bool
conn_http_kept_fits(const struct conn *c)
{
	const struct conn_dial	*d = &c->c_dial;
	size_t			 i;

	if (d->cd_up != CU_KEPT || c->c_port != d->cd_kept_port ||
	    strcmp(c->c_dec.d_host.h_name, d->cd_kept_host) != 0)
		return false;
	for (i = 0; i < d->cd_naddrs; i++)
		if (addr_equal(&d->cd_addrs[i], &d->cd_upaddr))
			return true;
	return false;
}

/*
 * Sends the request on an upstream connection kept idle, when one
 * reaches the host and port decided on, at an address just checked:
 * the one kept from the last request, or one of the same run's from the
 * proxy's pool (upool.c).  Returns false, and does nothing, when none
 * does.
 */
static bool
conn_http_reuse(struct conn *c)
{
	struct conn_dial	*d = &c->c_dial;
	char			 text[ADDR_STRLEN];

	if (conn_http_kept_fits(c))
		;
	else if (conn_pool_take(c, false))
		c->c_proxy->px_stats.ps_pooled++;
	else
		return false;
	d->cd_up = CU_REUSED;
	d->cd_next = d->cd_naddrs;
	c->c_proxy->px_stats.ps_reused++;
	snprintf(c->c_addrtext, sizeof(c->c_addrtext), "%s",
	    addr_str(&d->cd_upaddr, text, sizeof(text)));
	conn_http_start(c);
	return true;
}

/* Sends the current request's head upstream. */
static void
conn_http_send_request(struct conn *c)
{
	struct conn_http	*h = &c->c_http;
	char			*head, *p;
	size_t			 len;

	head = http_out_request_head(&h->hx_req, h->hx_keepalive, &len);
	/*
	 * An HTTP/1.0 client cannot read a chunked answer: ask upstream as
	 * a 1.0 client, so that it does not send one.
	 */
	if (h->hx_req.hr_minor == 0 && (p = memmem(head, len,
	    " HTTP/1.1\r\n", 11)) != NULL)
		p[8] = '0';
	bufferevent_write(c->c_up, head, len);
	free(head);
}

/* Sends the current request's head upstream and starts forwarding. */
void
conn_http_start(struct conn *c)
{
	struct conn_http	*h = &c->c_http;
	struct timeval		 idle = { c->c_proxy->px_idle_secs, 0 };

	if (!conn_log_open_or_refuse(c))
		return;
	c->c_state = CS_FORWARD;
	h->hx_reqdone = false;
	h->hx_resphead = false;
	http_body_init(&h->hx_reqbody, h->hx_req.hr_body,
	    h->hx_req.hr_length);
	/* A refresh's head waits for its body: renew_request frames it. */
	if (h->hx_renew == NULL)
		conn_http_send_request(c);
	/* A client or upstream that stops reading times out too. */
	bufferevent_set_timeouts(c->c_bev, &idle, &idle);
	bufferevent_set_timeouts(c->c_up, &idle, &idle);
	bufferevent_enable(c->c_bev, EV_READ);
	conn_http_forward(c);
}

/*
 * The one body pump, for requests and answers: moves the bytes of the
 * body hb from src to dst as far as its framing goes, while dst holds
 * less than max, through s (NULL for requests: real values are taken
 * out of answers only), adding what it moved to *count.  *done is set
 * when the body has ended.  Returns 0, or -1 for a malformed body.
 */
static int
conn_http_pump(struct http_body *hb, struct scrub *s, struct evbuffer *src,
    struct evbuffer *dst, size_t max, uint64_t *count, bool *done)
{
	size_t	 len;
	ssize_t	 n;

	while (!*done && (len = evbuffer_get_length(src)) > 0 &&
	    evbuffer_get_length(dst) < max) {
		if (len > CONN_HTTP_SLICE)
			len = CONN_HTTP_SLICE;
		if ((n = scrub_body(s, hb, src, dst, len, done)) < 0)
			return -1;
		*count += (uint64_t)n;
		if (n == 0 && !*done)
			break;
	}
	return 0;
}

/*
 * A refresh's request body, read whole (renew.c), then sent with its
 * head once it is in.  Returns -1 when c was closed.
 */
static int
conn_http_renew_request(struct conn *c)
{
	struct conn_http	*h = &c->c_http;
	struct evbuffer		*body = renew_body(h->hx_renew, false);

	if (renew_collect(h->hx_renew, false, &h->hx_reqbody,
	    bufferevent_get_input(c->c_bev), &h->hx_reqdone) == -1) {
		conn_reason(c, "a malformed or too long request body to a "
		    "token endpoint");
		conn_http_answer(c, 400, c->c_reason, NULL);
		return -1;
	}
	if (!h->hx_reqdone)
		return 0;
	renew_request(h->hx_renew, &h->hx_req);
	conn_http_send_request(c);
	c->c_up_bytes += evbuffer_get_length(body);
	bufferevent_write_buffer(c->c_up, body);
	return 0;
}

/*
 * The request body, as far as it goes; the client is read again only
 * while the body goes on and the upstream takes it.  Returns -1 when c
 * was closed.
 */
static int
conn_http_request_body(struct conn *c)
{
	struct conn_http	*h = &c->c_http;
	struct evbuffer		*upout = bufferevent_get_output(c->c_up);

	if (h->hx_renew != NULL && !h->hx_reqdone) {
		if (conn_http_renew_request(c) == -1)
			return -1;
	} else if (conn_http_pump(&h->hx_reqbody, NULL,
	    bufferevent_get_input(c->c_bev), upout, PROXY_BUFFER_MAX,
	    &c->c_up_bytes, &h->hx_reqdone) == -1) {
		conn_reason(c, "malformed request body");
		conn_abort(c);
		return -1;
	}
	if (!h->hx_reqdone && h->hx_reqbody.hb_kind == HTTP_BODY_NONE)
		h->hx_reqdone = true;
	if (evbuffer_get_length(upout) >= PROXY_BUFFER_MAX || h->hx_reqdone)
		bufferevent_disable(c->c_bev, EV_READ);
	else
		bufferevent_enable(c->c_bev, EV_READ);
	return 0;
}

/* Sends the client the answer's head, saying keepalive. */
static void
conn_http_send_head(struct conn *c, bool keepalive)
{
	char	*head;
	size_t	 len;

	head = http_out_response_head(&c->c_http.hx_resp, keepalive, &len);
	evbuffer_add(bufferevent_get_output(c->c_bev), head, len);
	free(head);
}

/*
 * An answer head that does not parse: 502 if nothing was sent back yet,
 * else the answer is cut short.  Takes cause.
 */
static void
conn_http_bad_answer(struct conn *c, char *cause)
{
	char	*msg;

	xasprintf(&msg, "a malformed answer from upstream: %s", cause);
	free(cause);
	if (c->c_down_bytes == 0)
		conn_fail(c, CONN_UNREACHABLE, msg);
	else {
		conn_reason(c, msg);
		conn_abort(c);
	}
	free(msg);
}

/*
 * A refresh's answer that must not reach the sandbox: 502 in its place,
 * saying why.  Takes cause and hint.
 */
static void
conn_http_renew_fail(struct conn *c, char *cause, char *hint)
{
	conn_reason(c, cause);
	log_warnx("proxy: %s", cause);
	conn_http_answer(c, 502, cause, hint);
	free(cause);
	free(hint);
}

/*
 * Reads the answer's head and sends it on; interim answers (1xx but
 * 101) are passed on as they come.  Returns -1 when c was closed, else
 * 0, with hx_resphead set once the final head is through.
 */
static int
conn_http_response_head(struct conn *c)
{
	struct conn_http	*h = &c->c_http;
	struct evbuffer		*upin = bufferevent_get_input(c->c_up);
	size_t			 len, used;
	char			*cause = NULL, *head;
	int			 rc;

	while (!h->hx_resphead && (len = evbuffer_get_length(upin)) > 0) {
		if (len > HTTP_HEAD_MAX + 4)
			len = HTTP_HEAD_MAX + 4;
		http_response_clear(&h->hx_resp);
		rc = http_response_parse((const char *)evbuffer_pullup(upin,
		    (ssize_t)len), len, h->hx_req.hr_method, &h->hx_resp,
		    &used, &cause);
		if (rc == HTTP_PARSE_MORE)
			return 0;
		if (rc == HTTP_PARSE_ERROR) {
			conn_http_bad_answer(c, cause);
			return -1;
		}
		evbuffer_drain(upin, used);
		c->c_status = h->hx_resp.hs_status;
		if (scrub_head(h->hx_scrub, &h->hx_resp, &cause, &head) == -1) {
			conn_reason(c, cause);
			conn_http_answer(c, 502, cause, head);
			free(cause);
			free(head);
			return -1;
		}
		if (h->hx_resp.hs_status == 101 && (!h->hx_req.hr_websocket ||
		    !h->hx_resp.hs_websocket)) {
			conn_http_bad_answer(c, xstrdup("101 Switching "
			    "Protocols without the WebSocket upgrade asked"));
			return -1;
		}
		if (h->hx_resp.hs_status >= 100 && h->hx_resp.hs_status < 200 &&
		    h->hx_resp.hs_status != 101) {
			/* An interim answer: pass it on, wait for the next. */
			conn_http_send_head(c, true);
			continue;
		}
		/* A close-delimited answer ends the client's connection. */
		if (h->hx_resp.hs_body == HTTP_BODY_CLOSE)
			h->hx_keepalive = false;
		/* A refresh's head waits for its body: renew_answer. */
		if (h->hx_renew == NULL)
			conn_http_send_head(c, h->hx_keepalive);
		else if (renew_head(h->hx_renew, &h->hx_resp, &cause,
		    &head) == -1) {
			conn_http_renew_fail(c, cause, head);
			return -1;
		}
		h->hx_resphead = true;
		http_body_init(&h->hx_respbody, h->hx_resp.hs_body,
		    h->hx_resp.hs_length);
	}
	return 0;
}

/*
 * The upstream took the WebSocket handshake (its 101 is sent on): from
 * now on frames go both ways as in a tunnel (conn_pump.c), the server's
 * through the scrubber, until either side ends.  The exchange is logged
 * once, as the connection closes, with the bytes each way.
 */
static void
conn_http_websocket(struct conn *c)
{
	c->c_http.hx_keepalive = false;
	c->c_http.hx_websocket = true;
	conn_pump(c);
}

/*
 * A refresh's answer body, read whole (renew.c); once it is in, its
 * head and the body renew_answer made are sent.  Returns -1 when c was
 * closed, else 0 with *done set when the answer went.
 */
static int
conn_http_renew_answer(struct conn *c, bool *done)
{
	struct conn_http	*h = &c->c_http;
	struct evbuffer		*body = renew_body(h->hx_renew, true);
	char			*cause, *hint;

	if (renew_collect(h->hx_renew, true, &h->hx_respbody,
	    bufferevent_get_input(c->c_up), done) == -1) {
		conn_http_renew_fail(c, xstrdup("a malformed or too long "
		    "answer from a token endpoint"), NULL);
		return -1;
	}
	if (!*done)
		return 0;
	if (renew_answer(h->hx_renew, &h->hx_resp, &cause, &hint) == -1) {
		conn_http_renew_fail(c, cause, hint);
		return -1;
	}
	conn_http_send_head(c, h->hx_keepalive);
	c->c_down_bytes += evbuffer_get_length(body);
	evbuffer_add_buffer(bufferevent_get_output(c->c_bev), body);
	return 0;
}

/*
 * The answer's body, as far as it goes, to the client while it holds
 * less than max.  Returns -1 when c was closed, else 0 with *done set
 * when the body has ended.
 */
static int
conn_http_answer_body(struct conn *c, size_t max, bool *done)
{
	struct conn_http	*h = &c->c_http;

	if (h->hx_renew != NULL)
		return conn_http_renew_answer(c, done);
	*done = h->hx_respbody.hb_kind == HTTP_BODY_NONE;
	if (conn_http_pump(&h->hx_respbody, h->hx_scrub,
	    bufferevent_get_input(c->c_up), bufferevent_get_output(c->c_bev),
	    max, &c->c_down_bytes, done) == -1) {
		conn_reason(c, "a malformed answer body from upstream");
		conn_abort(c);
		return -1;
	}
	return 0;
}

/*
 * The exchange is over: logged, the upstream kept if both sides may,
 * and the next request read, or c closed.
 */
static void
conn_http_done(struct conn *c)
{
	struct conn_http	*h = &c->c_http;
	struct timeval		 tv = { c->c_proxy->px_head_secs, 0 };

	conn_log(c);
	if (h->hx_keepalive && h->hx_reqdone && h->hx_resp.hs_keepalive &&
	    h->hx_respbody.hb_kind != HTTP_BODY_CLOSE &&
	    evbuffer_get_length(bufferevent_get_input(c->c_up)) == 0) {
		c->c_dial.cd_up = CU_KEPT;
		c->c_dial.cd_kept_port = c->c_port;
		memcpy(c->c_dial.cd_kept_host, c->c_dec.d_host.h_name,
		    sizeof(c->c_dial.cd_kept_host));
		conn_up_read(c, true);
	} else
		conn_drop_up(c);
	if (!h->hx_keepalive || !h->hx_reqdone) {
		conn_finish(c);
		return;
	}
	c->c_state = CS_HTTP_HEAD;
	c->c_record = CR_NONE;
	conn_arm_deadline(c);
	bufferevent_set_timeouts(c->c_bev, &tv, NULL);
	bufferevent_enable(c->c_bev, EV_READ);
	conn_process(c);
}

/*
 * HTTP forwarding (CS_FORWARD): moves request body bytes to the upstream
 * and answer bytes to the client, each as far as its framing goes, with
 * at most PROXY_BUFFER_MAX waiting on either side.
 */
void
conn_http_forward(struct conn *c)
{
	struct conn_http	*h = &c->c_http;
	struct evbuffer		*out = bufferevent_get_output(c->c_bev);
	bool			 done;

	if (conn_http_request_body(c) == -1 ||
	    conn_http_response_head(c) == -1 || !h->hx_resphead)
		return;
	if (h->hx_resp.hs_websocket) {
		conn_http_websocket(c);
		return;
	}
	if (conn_http_answer_body(c, PROXY_BUFFER_MAX, &done) == -1)
		return;
	conn_up_read(c, evbuffer_get_length(out) < PROXY_BUFFER_MAX);
	if (done)
		conn_http_done(c);
}

/*
 * The upstream ended while forwarding: what it sent before its end is
 * read already, and may hold the end of the answer (a TLS upstream's
 * last records come with its close), so it is all passed on first,
 * whatever waits for the client: the bytes are in memory anyway.
 * Returns -1 when c was closed, else 0 with *done set if the answer
 * ended among them.
 */
static int
conn_http_up_rest(struct conn *c, bool *done)
{
	struct conn_http	*h = &c->c_http;

	*done = false;
	if (conn_http_response_head(c) == -1)
		return -1;
	if (!h->hx_resphead)
		return 0;
	return conn_http_answer_body(c, SIZE_MAX, done);
}

/*
 * The end of a close-delimited answer: what the scrubber held back goes
 * out, and the client's connection ends as the upstream's did.  A bare
 * close over TLS (no close_notify, as many servers end such answers) is
 * passed on as one, so that a client that tells it from a whole answer
 * still can; the log says so.
 */
static void
conn_http_close_end(struct conn *c, bool bare)
{
	struct conn_http	*h = &c->c_http;

	h->hx_keepalive = false;
	scrub_end(h->hx_scrub, bufferevent_get_output(c->c_bev));
	if (bare)
		conn_reason(c, "the upstream ended its close-delimited answer "
		    "without TLS close_notify; passed on ended the same way");
	conn_log(c);
	if (bare)
		conn_abort(c);
	else
		conn_finish(c);
}

/*
 * Whether a request of method m may be sent again after its connection
 * closed unanswered: the upstream may have acted on it, so only an
 * idempotent one (RFC 9110, 9.2.2; a proxy must not retry any other:
 * RFC 9112, 9.3.1).
 */
static bool
conn_http_idempotent(const char *m)
{
	static const char *const	 ok[] = { "GET", "HEAD", "OPTIONS",
	    "TRACE", "PUT", "DELETE" };
	size_t				 i;

	for (i = 0; m != NULL && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(m, ok[i]) == 0)
			return true;
	return false;
}

/*
 * The upstream closed, failed or timed out while forwarding.  A reused
 * connection that closed as the request went out is retried on a new
 * one, for an idempotent request without a body; an answer whose end
 * had come is finished (a WebSocket's 101 passes on what came after
 * it, then the end, as the pump does); a close-delimited one ends there; otherwise the
 * client gets 502 or 504 if nothing was answered yet, or an answer cut
 * short.
 */
void
conn_http_up_event(struct conn *c, short what)
{
	struct conn_http	*h = &c->c_http;
	bool			 done;

	if (c->c_dial.cd_up == CU_REUSED && !h->hx_resphead &&
	    c->c_down_bytes == 0 && h->hx_req.hr_body == HTTP_BODY_NONE &&
	    conn_http_idempotent(h->hx_req.hr_method) &&
	    evbuffer_get_length(bufferevent_get_input(c->c_up)) == 0) {
		/*
		 * The reused connection was closed as the request went out
		 * (the upstream's own idle timeout): nothing was answered, and
		 * the request has no body and may be sent twice, so send it on
		 * a new connection (in an inspected tunnel, to the tunnel's
		 * addresses, checked for this request, and verified anew:
		 * conn_tls.c).
		 */
		conn_drop_up(c);		/* CU_NEW */
		c->c_dial.cd_next = 0;
		conn_dial_next(c);
		return;
	}
	if (conn_http_up_rest(c, &done) == -1)
		return;
	if (h->hx_resphead && h->hx_resp.hs_websocket) {
		/* Upgraded, then ended: its last frames, then the end. */
		conn_http_websocket(c);
		conn_pump_up_gone(c, what);
		return;
	}
	if (done) {
		/* Whole: the upstream only cannot carry another one. */
		h->hx_resp.hs_keepalive = false;
		conn_http_done(c);
		return;
	}
	if (h->hx_resphead && h->hx_respbody.hb_kind == HTTP_BODY_CLOSE) {
		if (what & BEV_EVENT_EOF) {
			conn_http_close_end(c, false);
			return;
		}
		if ((what & BEV_EVENT_ERROR) && conn_up_bare(c)) {
			conn_http_close_end(c, true);
			return;
		}
	}
	conn_up_reason(c, what);
	if (!h->hx_resphead && c->c_down_bytes == 0)
		conn_fail(c, (what & BEV_EVENT_TIMEOUT) ? CONN_TIMEDOUT :
		    CONN_UNREACHABLE, c->c_reason);
	else
		conn_abort(c);
}

/*
 * The client's end of file or error while forwarding: after a whole
 * request, a half-close, and the answer is finished; else c ends.
 */
void
conn_http_client_gone(struct conn *c, short what)
{
	if ((what & BEV_EVENT_EOF) && c->c_http.hx_reqdone) {
		c->c_http.hx_keepalive = false;
		bufferevent_disable(c->c_bev, EV_READ);
		return;
	}
	conn_gone(c, what);
}

/*
 * The client's end of file between requests: the last answer's end, if
 * still waiting in the output, is written before c closes.
 */
void
conn_http_head_gone(struct conn *c, short what)
{
	if ((what & BEV_EVENT_EOF) &&
	    evbuffer_get_length(bufferevent_get_output(c->c_bev)) > 0) {
		conn_finish(c);
		return;
	}
	conn_gone(c, what);
}


const struct conn_ops conn_http_ops = {
	.co_name = "http",
	.co_request = conn_dial_decide,
	.co_allowed = conn_http_inspect,
	.co_dial = conn_http_reuse,
	.co_connected = conn_http_start,
	.co_refuse = conn_http_refuse,
};
