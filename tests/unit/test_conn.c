/*
 * test_conn.c: the proxy's protocols driven through the core, with no
 * socket: the client is one end of a bufferevent pair, and the upstream
 * another, made by the table's dial (conn.h: ct_dial) in place of DNS and
 * connect.  Each test writes what a client writes, runs the loop, and
 * reads what the client (and the upstream) got, and the decision heard
 * (hk_observe).  What needs sockets (the relay of a tunnel, DNS, the
 * addresses checked, a kept upstream reused) is the e2e tests'.
 */
#include <sys/time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "unit.h"

#include "lib/jsonl.h"
#include "policies/policy.h"
#include "proxy/conn_proto.h"
#include "wire/pp2.h"

/* What a test's dial does. */
enum dial_mode {
	DIAL_OK,		/* a pair, and co_connected */
	DIAL_REFUSED		/* conn_fail(CONN_REFUSED) */
};

static struct {
	struct event_base	*base;
	struct proxy		 px;
	struct proxy_hooks	 hooks;
	struct conn_table	 table;
	struct bufferevent	*client;	/* the client's end */
	struct conn		*conn;		/* the proxy's, the last new */
	struct bufferevent	*up;		/* the upstream's end */
	enum dial_mode		 mode;
	int			 dials;
	int			 heard;		/* decisions observed */
	char			 proto[16];
	int			 status;
	bool			 allow;
	char			 reason[512];
	char			 hint[512];
} t;

static void
test_observe(const struct egress *e, const char *hint, const char *pattern,
    void *arg)
{
	(void)pattern;
	(void)arg;
	t.heard++;
	snprintf(t.proto, sizeof(t.proto), "%s", e->e_proto);
	t.status = e->e_status;
	t.allow = e->e_allow;
	snprintf(t.reason, sizeof(t.reason), "%s",
	    e->e_reason != NULL ? e->e_reason : "");
	snprintf(t.hint, sizeof(t.hint), "%s", hint != NULL ? hint : "");
}

/* The table's dial: the upstream is a pair, or refuses. */
static void
test_dial(struct conn *c)
{
	struct bufferevent	*pair[2];

	t.dials++;
	if (t.up != NULL)
		bufferevent_free(t.up);		/* the last test's upstream */
	t.up = NULL;
	snprintf(c->c_addrtext, sizeof(c->c_addrtext), "pair");
	if (t.mode == DIAL_REFUSED) {
		conn_fail(c, CONN_REFUSED, "cannot connect to pair: "
		    "Connection refused");
		return;
	}
	if (bufferevent_pair_new(t.base, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS, pair) == -1)
		fail_msg("bufferevent_pair_new");
	c->c_up = pair[0];
	t.up = pair[1];
	bufferevent_setcb(c->c_up, conn_up_read_cb, conn_up_write_cb,
	    conn_up_event_cb, c);
	bufferevent_enable(c->c_up, EV_READ | EV_WRITE);
	bufferevent_enable(t.up, EV_READ | EV_WRITE);
	c->c_ops->co_connected(c);
}

static struct policy *
policy_of(const char *text)
{
	struct policy_ctx	 ctx;
	struct policy		*p;
	char			*cause = NULL;

	memset(&ctx, 0, sizeof(ctx));
	ctx.pc_workspace = ctx.pc_home = ctx.pc_dir = "/";
	if ((p = policy_load_buffer(text, strlen(text), "test.json", &ctx,
	    &cause)) == NULL)
		fail_msg("%s", cause);
	return p;
}

/* A proxy allowing up.test, and a client in state, through a pair. */
static int
setup(void **state)
{
	(void)state;
	memset(&t, 0, sizeof(t));
	if ((t.base = event_base_new()) == NULL)
		return -1;
	proxy_init(&t.px, t.base, policy_of("{\"version\": 1, "
	    "\"network\": {\"allow\": [\"up.test\"]}}"));
	t.hooks.hk_observe = test_observe;
	t.px.px_hooks = &t.hooks;
	t.table = conn_accept_table;
	t.table.ct_dial = test_dial;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	conn_close_all(&t.px);
	if (t.client != NULL)
		bufferevent_free(t.client);
	if (t.up != NULL)
		bufferevent_free(t.up);
	proxy_clear(&t.px);
	event_base_free(t.base);
	return 0;
}

/* A new client of the proxy, first in state. */
static void
client_new(enum conn_state state)
{
	struct bufferevent	*pair[2];

	if (bufferevent_pair_new(t.base, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS, pair) == -1)
		fail_msg("bufferevent_pair_new");
	t.conn = conn_new(&t.px, pair[0], -1, NULL, &t.table, state);
	assert_non_null(t.conn);
	t.client = pair[1];
	bufferevent_enable(t.client, EV_READ | EV_WRITE);
}

/* Runs the loop until nothing is left to do at once. */
static void
spin(void)
{
	int	 i;

	for (i = 0; i < 20; i++)
		event_base_loop(t.base, EVLOOP_NONBLOCK);
}

static void
send_text(struct bufferevent *bev, const void *buf, size_t len)
{
	bufferevent_write(bev, buf, len);
	spin();
}

/* What bev has read, as a string (static), drained. */
static const char *
got(struct bufferevent *bev)
{
	static char	 buf[4096];
	size_t		 n;

	n = bufferevent_read(bev, buf, sizeof(buf) - 1);
	buf[n] = '\0';
	return buf;
}

static void
test_http_forward(void **state)
{
	static const char	 req[] = "GET http://up.test/a?b HTTP/1.1\r\n"
	    "Host: up.test\r\nProxy-Connection: keep-alive\r\n\r\n";
	static const char	 resp[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 2\r\n\r\nhi";
	static const char	 denied[] = "GET http://down.test/ HTTP/1.1\r\n"
	    "Host: down.test\r\n\r\n";
	const char		*s;

	(void)state;
	client_new(CS_SNIFF);
	send_text(t.client, req, sizeof(req) - 1);
	assert_int_equal(t.dials, 1);
	s = got(t.up);
	assert_contains(s, "GET /a?b HTTP/1.1\r\n");
	assert_contains(s, "Host: up.test\r\n");
	if (strstr(s, "Proxy-Connection") != NULL)
		fail_msg("a hop-by-hop header went upstream: %s", s);
	send_text(t.up, resp, sizeof(resp) - 1);
	s = got(t.client);
	assert_contains(s, "HTTP/1.1 200 OK\r\n");
	assert_contains(s, "\r\n\r\nhi");
	assert_int_equal(t.heard, 1);
	assert_string_equal(t.proto, "http");
	assert_int_equal(t.status, 200);
	assert_true(t.allow);
	/* Kept alive: the next request is read and decided anew. */
	send_text(t.client, denied, sizeof(denied) - 1);
	assert_contains(got(t.client), "HTTP/1.1 403 Forbidden\r\n");
	assert_int_equal(t.heard, 2);
	assert_int_equal(t.status, 403);
}

/*
 * A TLS client's end that came with its request: the TLS filter reads
 * both at once and says the end before it hands over the bytes (here:
 * the end said by hand, the bytes still to be read).  The request
 * still goes up, and the answer comes back.
 */
static void
test_end_with_request(void **state)
{
	static const char	 req[] = "GET http://up.test/a HTTP/1.1\r\n"
	    "Host: up.test\r\n\r\n";
	static const char	 resp[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 2\r\n\r\nhi";

	(void)state;
	client_new(CS_SNIFF);
	bufferevent_write(t.client, req, sizeof(req) - 1);
	conn_event_cb(t.conn->c_bev, BEV_EVENT_READING | BEV_EVENT_EOF,
	    t.conn);
	spin();
	assert_int_equal(t.dials, 1);
	assert_contains(got(t.up), "GET /a HTTP/1.1\r\n");
	send_text(t.up, resp, sizeof(resp) - 1);
	assert_contains(got(t.client), "\r\n\r\nhi");
	assert_int_equal(t.heard, 1);
	assert_int_equal(t.status, 200);
}

static void
test_http_denied(void **state)
{
	static const char	 req[] = "GET http://down.test/ HTTP/1.1\r\n"
	    "Host: down.test\r\n\r\n";
	const char		*s;

	(void)state;
	client_new(CS_SNIFF);
	send_text(t.client, req, sizeof(req) - 1);
	assert_int_equal(t.dials, 0);
	s = got(t.client);
	assert_contains(s, "HTTP/1.1 403 Forbidden\r\n");
	assert_contains(s, "X-Cordon-Decision: deny down.test:80");
	assert_contains(s, "\r\n\r\ncordon: deny down.test:80");
	assert_contains(s, "\nhint: ");
	assert_int_equal(t.heard, 1);
	assert_string_equal(t.proto, "http");
	assert_int_equal(t.status, 403);
	assert_false(t.allow);
	assert_contains(t.hint, "down.test");
}

/* The same failure, said by each protocol its own way. */
static void
test_refused(void **state)
{
	static const char	 req[] = "CONNECT up.test:443 HTTP/1.1\r\n"
	    "Host: up.test:443\r\n\r\n";
	static const uint8_t	 socks[] = {
		0x05, 0x01, 0x00,
		0x05, 0x01, 0x00, 0x03, 7, 'u', 'p', '.', 't', 'e', 's', 't',
		0x01, 0xbb
	};
	const char		*s;

	(void)state;
	t.mode = DIAL_REFUSED;
	client_new(CS_SNIFF);
	send_text(t.client, req, sizeof(req) - 1);
	s = got(t.client);
	assert_contains(s, "HTTP/1.1 502 Bad Gateway\r\n");
	assert_contains(s, "cordon: up.test:443: cannot connect to pair: "
	    "Connection refused\n");
	assert_string_equal(t.proto, "connect");
	assert_int_equal(t.status, 502);
	assert_true(t.allow);
	bufferevent_free(t.client);

	client_new(CS_SNIFF);
	send_text(t.client, socks, sizeof(socks));
	assert_int_equal(t.dials, 2);
	s = got(t.client);
	assert_memory_equal(s, "\x05\x00\x05\x05", 4);
	assert_string_equal(t.proto, "socks5");
	assert_int_equal(t.status, 5);
	assert_contains(t.reason, "Connection refused");
}

static void
test_connect_peek(void **state)
{
	static const char	 req[] = "CONNECT up.test:443 HTTP/1.1\r\n"
	    "Host: up.test:443\r\n\r\n";
	/* A handshake record whose message is no ClientHello. */
	static const uint8_t	 bad[] = {
		0x16, 0x03, 0x01, 0x00, 0x05, 0x02, 0x00, 0x00, 0x01, 0x00
	};
	char			 c;

	(void)state;
	client_new(CS_SNIFF);
	send_text(t.client, req, sizeof(req) - 1);
	assert_int_equal(t.dials, 1);
	assert_string_equal(got(t.client), "HTTP/1.1 200 Connection "
	    "established\r\n\r\n");
	/* A server that speaks first is passed on before the client. */
	send_text(t.up, "SSH-2.0-x\r\n", 11);
	assert_string_equal(got(t.client), "SSH-2.0-x\r\n");
	send_text(t.client, bad, sizeof(bad));
	/* Refused before a byte went up, and closed. */
	assert_int_equal(bufferevent_read(t.up, &c, 1), 0);
	assert_int_equal(t.heard, 1);
	assert_string_equal(t.proto, "connect");
	assert_false(t.allow);
	assert_string_equal(t.reason, "a malformed TLS ClientHello");
}

static void
test_socks_connected(void **state)
{
	static const uint8_t	 greet[] = { 0x05, 0x02, 0x02, 0x00 };
	static const uint8_t	 req[] = {
		0x05, 0x01, 0x00, 0x03, 9, 'd', 'o', 'w', 'n', '.', 't', 'e',
		's', 't', 0x01, 0xbb
	};
	static const uint8_t	 ok[] = {
		0x05, 0x01, 0x00, 0x03, 7, 'u', 'p', '.', 't', 'e', 's', 't',
		0x01, 0xbb
	};
	const char		*s;

	(void)state;
	client_new(CS_SNIFF);
	send_text(t.client, greet, sizeof(greet));
	assert_memory_equal(got(t.client), "\x05\x00", 2);
	send_text(t.client, req, sizeof(req));
	assert_memory_equal(got(t.client), "\x05\x02", 2);
	assert_string_equal(t.proto, "socks5");
	assert_int_equal(t.status, 2);
	assert_false(t.allow);
	bufferevent_free(t.client);

	client_new(CS_SNIFF);
	send_text(t.client, greet, sizeof(greet));
	send_text(t.client, ok, sizeof(ok));
	s = got(t.client);
	assert_memory_equal(s, "\x05\x00\x05\x00\x00", 5);
	assert_int_equal(t.dials, 1);
	assert_int_equal(t.heard, 1);	/* the tunnel is logged at its end */
}

/* A PROXY v2 header from the capture, with field (name or target). */
static void
send_pp2(const struct pp2_out *po)
{
	char	*hdr, *cause = NULL;
	size_t	 len;

	if ((hdr = pp2_header(po, &len, &cause)) == NULL)
		fail_msg("%s", cause);
	send_text(t.client, hdr, len);
	free(hdr);
}

static void
test_capture(void **state)
{
	struct pp2_out	 po = { .po_id = "run1", .po_name = "up.test" };
	static const char req[] = "GET /x HTTP/1.1\r\nHost: up.test\r\n\r\n";

	(void)state;
	client_new(CS_PP2);
	send_pp2(&po);
	assert_string_equal(got(t.client), "allowed\n");
	assert_int_equal(t.heard, 0);	/* the connection is logged, later */
	bufferevent_free(t.client);

	po.po_name = "down.test";
	client_new(CS_PP2);
	send_pp2(&po);
	assert_string_equal(got(t.client), "refused\n");
	assert_string_equal(t.proto, "dns");
	assert_false(t.allow);
	bufferevent_free(t.client);

	/* Port 80 is HTTP, origin-form, decided as a forward request. */
	po.po_name = NULL;
	po.po_target = "up.test:80";
	client_new(CS_PP2);
	send_pp2(&po);
	send_text(t.client, req, sizeof(req) - 1);
	assert_int_equal(t.dials, 1);
	assert_contains(got(t.up), "GET /x HTTP/1.1\r\n");
	bufferevent_free(t.client);

	/* Elsewhere a tunnel, refused by closing: nothing is answered. */
	po.po_target = "down.test:443";
	client_new(CS_PP2);
	send_pp2(&po);
	assert_string_equal(got(t.client), "");
	assert_string_equal(t.proto, "capture");
	assert_false(t.allow);
	assert_int_equal(t.dials, 1);
}

/* A client that sends no whole request in time is logged as what it began. */
static void
test_too_slow(void **state)
{
	struct timeval	 tv = { 1, 200000 };

	(void)state;
	t.px.px_head_secs = 1;
	client_new(CS_SNIFF);
	send_text(t.client, "\x05\x02", 2);	/* a greeting, cut short */
	assert_int_equal(t.heard, 0);
	event_base_loopexit(t.base, &tv);
	event_base_dispatch(t.base);
	assert_int_equal(t.heard, 1);
	assert_string_equal(t.proto, "socks5");
	assert_false(t.allow);
	assert_string_equal(t.reason, "no whole request within 1 s "
	    "(--head-secs)");
}

/* The egress log cannot be written: refused, each in its own way. */
static void
test_log_refusal(void **state)
{
	static const uint8_t	 socks[] = {
		0x05, 0x01, 0x00,
		0x05, 0x01, 0x00, 0x03, 7, 'u', 'p', '.', 't', 'e', 's', 't',
		0x01, 0xbb
	};
	static const char	 req[] = "GET http://up.test/ HTTP/1.1\r\n"
	    "Host: up.test\r\n\r\n";
	char			*cause = NULL;
	const char		*s;

	(void)state;
	if ((t.px.px_log = jsonl_open("/dev/full", &cause)) == NULL)
		skip();
	jsonl_write(t.px.px_log, &(struct egress){ .e_proto = "http" });
	if (!jsonl_failed(t.px.px_log))
		skip();
	client_new(CS_SNIFF);
	send_text(t.client, req, sizeof(req) - 1);
	s = got(t.client);
	assert_contains(s, "HTTP/1.1 503 Service Unavailable\r\n");
	assert_contains(s, "the egress log cannot be written");
	assert_contains(s, "\nhint: free space where the egress log");
	bufferevent_free(t.client);
	client_new(CS_SNIFF);
	send_text(t.client, socks, sizeof(socks));
	assert_memory_equal(got(t.client), "\x05\x00\x05\x01", 4);
	assert_int_equal(t.dials, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_http_forward, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_end_with_request, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_http_denied, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_peek, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_socks_connected, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_capture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_slow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_refusal, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
