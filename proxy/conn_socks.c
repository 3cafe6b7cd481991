/*
 * conn_socks.c: a SOCKS5 client (RFC 1928) of the proxy.  The greeting
 * must offer "no authentication"; the request must be CONNECT, whose
 * host and port are then decided like any other (conn_dial_decide).  The
 * reply comes once the upstream is connected, or with the refusal.  The
 * parsing is socks5.c's; this file only moves bytes and states.  Once
 * answered, a tunnel's first bytes are judged (conn_tunnel.c).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "proxy/conn_proto.h"

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
 * Reads the greeting: on to CS_SOCKS_REQUEST if it offers a method
 * without authentication, else 0xff and close.  Returns false when c
 * waits for more bytes or was refused.
 */
static bool
conn_socks_greeting(struct conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->c_bev);
	size_t		 used;
	char		*cause = NULL;
	bool		 noauth;
	int		 rc;

	rc = socks5_greeting_parse(evbuffer_pullup(in, -1),
	    evbuffer_get_length(in), &used, &noauth, &cause);
	if (rc == SOCKS5_PARSE_MORE)
		return false;
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
		return false;
	}
	evbuffer_drain(in, used);
	bufferevent_write(c->c_bev, "\x05\x00", 2);
	c->c_state = CS_SOCKS_REQUEST;
	return true;
}

/* Reads the SOCKS5 greeting and request, then decides on its target. */
void
conn_socks_read(struct conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->c_bev);
	struct socks5_request	 req;
	size_t			 len, used;
	uint8_t			 code, *data;
	char			*cause = NULL;
	int			 rc;

	if (c->c_state == CS_SOCKS_GREETING && !conn_socks_greeting(c))
		return;
	len = evbuffer_get_length(in);
	data = evbuffer_pullup(in, -1);
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
	conn_dial_decide(c);
}

/* Says a refusal or failure as SOCKS5 does: a reply code. */
static void
conn_socks_refuse(struct conn *c, enum conn_refusal why, const char *what,
    const char *hint)
{
	static const uint8_t	 code[] = {
		[CONN_DENIED] = SOCKS5_REP_RULESET,
		[CONN_UNAVAILABLE] = SOCKS5_REP_FAILURE,
		[CONN_UNREACHABLE] = SOCKS5_REP_HOST,
		[CONN_REFUSED] = SOCKS5_REP_REFUSED,
		[CONN_TIMEDOUT] = SOCKS5_REP_TTL,
		[CONN_LIMITED] = SOCKS5_REP_FAILURE
	};

	(void)what;
	(void)hint;
	conn_socks_answer(c, code[why]);
}

/*
 * The upstream is connected: success, with the address the proxy
 * connected from, as RFC 1928 asks (none if it cannot be had).
 */
static void
conn_socks_connected(struct conn *c)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	uint8_t			 reply[SOCKS5_REPLY_MAX];

	c->c_status = SOCKS5_REP_OK;
	/* A pooled TLS upstream's socket is its bufferevent's. */
	if (getsockname(c->c_upfd != -1 ? c->c_upfd :
	    bufferevent_getfd(c->c_up), (struct sockaddr *)&ss, &len) == -1)
		len = 0;
	bufferevent_write(c->c_bev, reply, socks5_reply(reply,
	    SOCKS5_REP_OK, len ? (struct sockaddr *)&ss : NULL));
	conn_peek(c);
}

const struct conn_ops conn_socks_ops = {
	.co_name = "socks5",
	.co_request = conn_dial_decide,
	.co_dial = conn_tls_pooled,
	.co_connected = conn_socks_connected,
	.co_refuse = conn_socks_refuse,
};
