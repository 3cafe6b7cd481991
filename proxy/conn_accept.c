/*
 * conn_accept.c: a new client of the proxy, and the one table of what
 * it may become.  On a sandbox's listener its PROXY v2 header comes
 * first: the run channel (watch.c), what the capture took
 * (conn_capture.c), or the sandbox's id and rules; then the first byte
 * tells the protocol: 0x05 is SOCKS5, anything else HTTP (a forward
 * request in absolute form, or CONNECT).
 *
 * This is the one file that names every protocol: the core (conn.c)
 * looks each state's handlers and each protocol's operations up in
 * conn_accept_table, and names none of them.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "lib/xmalloc.h"
#include "proxy/conn_proto.h"
#include "wire/pp2.h"

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
	char		 origin[PP2_ORIGIN_MAX + 1];
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
	/* An originator's word on its local user: behind a certificate only. */
	if (c->c_identity != NULL && pp2_text(evbuffer_pullup(in,
	    (ssize_t)used), used, PP2_TYPE_CORDON_ORIGIN, origin,
	    sizeof(origin)) == 0)
		c->c_origin_uid = xstrdup(origin);
	/*
	 * A run with a harness: never decided without its live rules; its
	 * request is read, and refused with why (conn_dial_decide).
	 */
	if (pp2_field(evbuffer_pullup(in, (ssize_t)used), used,
	    PP2_TYPE_CORDON_CHANNEL, &len) != NULL && pp2_field(
	    evbuffer_pullup(in, (ssize_t)used), used, PP2_TYPE_CORDON_WATCH,
	    &len) == NULL && watch_missing(c))
		c->c_no_channel = true;
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

/*
 * What each state does with what happens on the client's and the
 * upstream's bufferevents (struct conn_handlers), and what each protocol
 * does for its decisions (struct conn_ops).  The tests drive the
 * protocols through it, with a dial of their own.
 */
const struct conn_table conn_accept_table = {
	.ct_on = {
		[CS_PP2] = { .on_read = conn_pp2 },
		[CS_SNIFF] = { .on_read = conn_sniff },
		[CS_HTTP_HEAD] = {
			.on_read = conn_http_head,
			.on_gone = conn_http_head_gone,
			.proto = PROTO_HTTP,
		},
		[CS_SOCKS_GREETING] = {
			.on_read = conn_socks_read,
			.proto = PROTO_SOCKS5,
		},
		[CS_SOCKS_REQUEST] = {
			.on_read = conn_socks_read,
			.proto = PROTO_SOCKS5,
		},
		[CS_ASKING] = { 0 },
		[CS_RESOLVING] = { 0 },
		[CS_CONNECTING] = { 0 },
		[CS_PEEK] = {
			.on_read = conn_tunnel_peek,
			.on_gone = conn_gone_quietly,
			.on_up_read = conn_tunnel_up_read,
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
		[CS_MTLS] = {
			.on_connected = conn_mtls_verified,
			.on_gone = conn_mtls_failed,
		},
		[CS_PUMP] = {
			.on_read = conn_pump_up,
			.on_write = conn_pump_wrote,
			.on_gone = conn_pump_gone,
			.on_up_read = conn_pump_down,
			.on_up_write = conn_pump_up_wrote,
			.on_up_gone = conn_pump_up_gone,
		},
	},
	.ct_ops = {
		[PROTO_HTTP] = &conn_http_ops,
		[PROTO_CONNECT] = &conn_tunnel_connect_ops,
		[PROTO_SOCKS5] = &conn_socks_ops,
		[PROTO_HTTPS] = &conn_tls_ops,
		[PROTO_CAPTURE] = &conn_capture_ops,
		[PROTO_DNS] = &conn_capture_dns_ops,
	},
	.ct_observe = watch_observe,
	.ct_gone = watch_conn_gone,
	.ct_live = watch_live,
	.ct_asks_name = watch_asks_name,
	.ct_tunnel = conn_ssh_watch,
	.ct_early = conn_ssh_feed,
	.ct_let_go = conn_pool_let_go,
};

/*
 * A new client on fd (taken), from sa; with pp2 it must start with a
 * PROXY v2 header naming its sandbox.  On a Unix socket the sandbox it
 * names is its own word, scoped to the uid the kernel says connected.
 */
void
conn_accept(struct proxy *px, int fd, const struct sockaddr *sa,
    socklen_t salen, bool pp2)
{
	(void)salen;
	(void)conn_new(px, NULL, fd, sa, &conn_accept_table, pp2 ? CS_PP2 :
	    CS_SNIFF);
}

/*
 * A new client of a tls: listener on fd (taken), from sa: its handshake
 * first (conn_mtls.c), then its PROXY v2 header inside the TLS stream.
 */
void
conn_accept_tls(struct proxy *px, int fd, const struct sockaddr *sa)
{
	struct conn	*c;

	if ((c = conn_new(px, NULL, fd, sa, &conn_accept_table, CS_MTLS)) !=
	    NULL)
		conn_mtls_start(c);
}
