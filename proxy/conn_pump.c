/*
 * conn_pump.c: the tunnel of a client whose bytes are not its socket's
 * (a tls: listener's client: c_bev decrypts them), which splice(2)
 * cannot carry: both bufferevents stay, and what one reads the other
 * writes, each direction held at PROXY_BUFFER_MAX.  The client's end of
 * its stream is passed on as a half-close of the upstream's socket; the
 * upstream's end closes the tunnel once the client has its last bytes
 * (with close_notify).  Nothing moving either way for --idle-secs ends
 * it, as the relay of a plain tunnel does.  A WebSocket the proxy read
 * the handshake of (conn_http.c) is pumped the same way, its server's
 * frames through the answers' scrubber (scrub_stream).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include "proxy/conn_proto.h"

/* Something moved: the tunnel is not idle. */
static void
conn_pump_alive(struct conn *c)
{
	struct timeval	 tv = { c->c_proxy->px_idle_secs, 0 };

	evtimer_add(c->c_deadline, &tv);
}

/*
 * A tunnel is allowed and its upstream connected: from now on bytes go
 * both ways, those read already first.
 */
void
conn_pump(struct conn *c)
{
	c->c_state = CS_PUMP;
	bufferevent_set_timeouts(c->c_bev, NULL, NULL);
	bufferevent_set_timeouts(c->c_up, NULL, NULL);
	bufferevent_setwatermark(c->c_up, EV_WRITE, PROXY_BUFFER_MAX / 2, 0);
	bufferevent_enable(c->c_bev, EV_READ | EV_WRITE);
	bufferevent_enable(c->c_up, EV_READ | EV_WRITE);
	conn_pump_alive(c);
	conn_pump_down(c);
	conn_pump_up(c);
}

/* The client's bytes, to the upstream. */
void
conn_pump_up(struct conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->c_bev);
	struct evbuffer	*out = bufferevent_get_output(c->c_up);
	size_t		 n = evbuffer_get_length(in);

	if (n == 0)
		return;
	c->c_up_bytes += n;
	evbuffer_add_buffer(out, in);
	conn_pump_alive(c);
	if (evbuffer_get_length(out) >= PROXY_BUFFER_MAX)
		bufferevent_disable(c->c_bev, EV_READ);
}

/* The upstream's bytes, to the client. */
void
conn_pump_down(struct conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->c_up);
	struct evbuffer	*out = bufferevent_get_output(c->c_bev);
	size_t		 n = evbuffer_get_length(in);

	if (n == 0)
		return;
	c->c_down_bytes += n;
	if (c->c_http.hx_websocket)
		scrub_stream(c->c_http.hx_scrub, in, out);
	else
		evbuffer_add_buffer(out, in);
	conn_pump_alive(c);
	if (evbuffer_get_length(out) >= PROXY_BUFFER_MAX)
		conn_up_read(c, false);
}

/* The client's output went down: the upstream may be read again. */
void
conn_pump_wrote(struct conn *c)
{
	conn_up_read(c, true);
}

/*
 * The upstream's output went down: the client may be read again; once
 * the client's end is passed on and all written, the upstream hears it.
 */
void
conn_pump_up_wrote(struct conn *c)
{
	if (!c->c_pump_eof) {
		bufferevent_enable(c->c_bev, EV_READ);
		return;
	}
	if (evbuffer_get_length(bufferevent_get_output(c->c_up)) == 0)
		shutdown(c->c_upfd, SHUT_WR);
}

/* The client's end: half-closed upstream; anything else ends it. */
void
conn_pump_gone(struct conn *c, short what)
{
	if (!(what & BEV_EVENT_EOF) || c->c_pump_eof) {
		conn_gone(c, what);
		return;
	}
	conn_pump_up(c);
	c->c_pump_eof = true;
	bufferevent_disable(c->c_bev, EV_READ);
	bufferevent_setwatermark(c->c_up, EV_WRITE, 0, 0);
	conn_pump_up_wrote(c);
}

/* The upstream's end: the client gets the rest, then close_notify. */
void
conn_pump_up_gone(struct conn *c, short what)
{
	conn_pump_down(c);
	if (!(what & BEV_EVENT_EOF))
		conn_up_reason(c, what);
	if (what & BEV_EVENT_EOF)
		conn_finish(c);
	else
		conn_abort(c);
}
