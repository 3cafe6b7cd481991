/*
 * conn_capture.c: what a sandbox's capture sends the proxy, in fields of
 * cordon's own in the PROXY v2 header (wire/pp2.c):
 *
 * - a name its resolver asks about (PP2_TYPE_CORDON_NAME): decided alone,
 *   before any lookup (policy_match_name), answered with one line,
 *   "allowed" or "refused", and a refusal logged as any other, with its
 *   fix; nothing is looked up here either;
 * - a connection the capture took on its way to host:port
 *   (PP2_TYPE_CORDON_TARGET), where host is the name the resolver gave an
 *   address for, or a literal.  Port 80 is read as HTTP, origin-form
 *   requests whose Host header names the target (conn_http.c), and
 *   decided request by request as a proxy request is; any other port is a
 *   tunnel to host:port, decided as a CONNECT is, and its first bytes
 *   judged (conn_tunnel.c: a ClientHello must name the host) with nothing
 *   answered before: the client believes it is connected already.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "lib/log.h"
#include "lib/xmalloc.h"
#include "proxy/conn_proto.h"
#include "wire/pp2.h"

/* The resolver's question: one line back, a refusal logged. */
static void
conn_capture_name(struct conn *c, const char *name)
{
	struct proxy	*px = c->c_proxy;
	bool		 ok;

	conn_begin(c, PROTO_DNS, NULL, name, strlen(name), 0);
	if (c->c_no_channel) {
		/* Its run's live rules are not here (conn_dial_decide). */
		conn_reason(c, WATCH_MISSING);
		c->c_dec.d_verdict = VERDICT_DENY;
		bufferevent_write(c->c_bev, "refused\n", 8);
		conn_finish(c);
		return;
	}
	c->c_judged = true;
	ok = policy_match_name(c->c_policy->pp_policy, name, strlen(name),
	    &c->c_dec);
	/* With a harness to ask, the connection that follows is asked. */
	if (!ok && c->c_dec.d_why == WHY_NO_RULE && (px->px_ask_names ||
	    (c->c_table->ct_asks_name != NULL && c->c_table->ct_asks_name(c))))
		ok = true;
	if (ok) {
		c->c_record = CR_NONE;	/* the connection is logged, later */
		bufferevent_write(c->c_bev, "allowed\n", 8);
	} else {
		char	*what = decision_describe(&c->c_dec);

		conn_reason(c, strstr(what, ": ") ? strstr(what, ": ") + 2 :
		    what);
		free(what);
		c->c_dec.d_verdict = VERDICT_DENY;
		bufferevent_write(c->c_bev, "refused\n", 8);
	}
	conn_finish(c);
}

/*
 * Splits "host:port" ("[v6]:port") into cc_host and cc_port.
 * Returns 0, or -1 when it is not that.
 */
static int
conn_capture_split(struct conn *c, const char *target)
{
	const char	*colon = strrchr(target, ':'), *host = target;
	char		*end;
	long		 port;
	size_t		 len;

	if (colon == NULL)
		return -1;
	len = (size_t)(colon - target);
	if (len >= 2 && target[0] == '[' && target[len - 1] == ']') {
		host++;
		len -= 2;
	}
	if (len == 0 || len >= sizeof(c->c_cap.cc_host))
		return -1;
	port = strtol(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || port < 1 ||
	    port > 65535)
		return -1;
	c->c_cap.cc_port = (int)port;
	memcpy(c->c_cap.cc_host, host, len);
	c->c_cap.cc_host[len] = '\0';
	return 0;
}

/* A captured connection to target: HTTP on port 80, a tunnel elsewhere. */
static void
conn_capture_target(struct conn *c, const char *target)
{
	if (conn_capture_split(c, target) == -1) {
		conn_begin(c, PROTO_CAPTURE, NULL, "", 0, 0);
		conn_reason(c, "a captured connection without a host:port");
		c->c_dec.d_verdict = VERDICT_DENY;
		conn_finish(c);
		return;
	}
	if (c->c_cap.cc_port == 80) {
		c->c_state = CS_HTTP_HEAD;
		conn_process(c);
		return;
	}
	conn_begin(c, PROTO_CAPTURE, NULL, c->c_cap.cc_host,
	    strlen(c->c_cap.cc_host), c->c_cap.cc_port);
	conn_dial_decide(c);
}

/*
 * Takes c over when its header (used bytes of hdr, still in the input)
 * came from the capture: returns true, and the header must be drained
 * first; false leaves c as an explicit proxy client.
 */
bool
conn_capture(struct conn *c, const uint8_t *hdr, size_t used)
{
	char	 name[PP2_NAME_MAX + 1], target[PP2_TARGET_MAX + 1];
	bool	 isname, istarget;

	isname = pp2_text(hdr, used, PP2_TYPE_CORDON_NAME, name,
	    sizeof(name)) == 0;
	istarget = pp2_text(hdr, used, PP2_TYPE_CORDON_TARGET, target,
	    sizeof(target)) == 0;
	if (!isname && !istarget)
		return false;
	evbuffer_drain(bufferevent_get_input(c->c_bev), used);
	if (isname)
		conn_capture_name(c, name);
	else
		conn_capture_target(c, target);
	return true;
}

/* A captured client expects no answer of a proxy: closing refuses. */
static void
conn_capture_refuse(struct conn *c, enum conn_refusal why, const char *what,
    const char *hint)
{
	(void)why;
	(void)what;
	(void)hint;
	conn_finish(c);
}

const struct conn_ops conn_capture_ops = {
	.co_name = "capture",
	.co_request = conn_dial_decide,
	.co_dial = conn_tls_pooled,
	.co_connected = conn_peek,
	.co_refuse = conn_capture_refuse,
};

const struct conn_ops conn_capture_dns_ops = {
	.co_name = "dns",
	.co_refuse = conn_capture_refuse,
};
