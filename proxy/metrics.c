/*
 * metrics.c: `cordon proxy --metrics EP`, Prometheus text at /metrics.
 *
 * A small evhttp server on the proxy's own event loop: a scrape reads
 * counters and answers, nothing more, so it costs the proxy next to
 * nothing and needs no lock.  Decisions and bytes are counted from the
 * same records the egress log gets (proxy_observe), so the two agree: a
 * tunnel's bytes count when it ends, as its log line is written.  What
 * the log does not carry (DNS failures, reloads, accepts) is counted in
 * struct proxy_stats where it happens.
 */
#include <sys/types.h>
#include <sys/time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "jsonl.h"
#include "log.h"
#include "proxy.h"
#include "util.h"
#include "xmalloc.h"

#define METRICS_TIMEOUT_SECS	10	/* a scrape that stalls is dropped */
#define METRICS_HEADERS_MAX	8192
/*
 * Identities counted apart; the connections of any after them count
 * under identity="_other", so that a CA issuing many certificates
 * cannot grow the proxy's memory or the scrape without bound.
 */
#define METRICS_IDENTITIES_MAX	256	/* said in the metric's help */
#define METRICS_OTHER		"_other"

enum {
	MP_NONE,
	MP_HTTP,
	MP_CONNECT,
	MP_SOCKS5,
	MP_HTTPS,
	MP_CAPTURE,
	MP_DNS,
	MP_COUNT
};

static const char *const metrics_protos[MP_COUNT] = {
	"none", "http", "connect", "socks5", "https", "capture", "dns"
};

struct metrics_id {
	char		*mi_name;
	uint64_t	 mi_decisions[2];	/* [allow] */
	uint64_t	 mi_report;	/* allowed by "report" */
	uint64_t	 mi_limited[2];	/* [max_tunnels, new_per_second] */
};

struct metrics {
	struct proxy	*m_proxy;	/* borrowed */
	struct evhttp	*m_http;
	uint64_t	 m_decisions[2][MP_COUNT];	/* [allow][protocol] */
	uint64_t	 m_failed;	/* allowed, but not carried out */
	uint64_t	 m_up;
	uint64_t	 m_down;
	time_t		 m_started;
	struct metrics_id *m_ids;	/* the last is METRICS_OTHER's */
	size_t		 m_nids;
};

/* The counters of identity id: its own, or past the cap, _other's. */
static struct metrics_id *
metrics_id(struct metrics *m, const char *id)
{
	size_t	 i;

	for (i = 0; i < m->m_nids; i++)
		if (strcmp(m->m_ids[i].mi_name, id) == 0)
			return &m->m_ids[i];
	if (m->m_nids == METRICS_IDENTITIES_MAX + 1)
		return &m->m_ids[METRICS_IDENTITIES_MAX];
	if (m->m_ids == NULL) {
		m->m_ids = xcalloc(METRICS_IDENTITIES_MAX + 1,
		    sizeof(*m->m_ids));
		m->m_ids[METRICS_IDENTITIES_MAX].mi_name =
		    xstrdup(METRICS_OTHER);
	}
	if (m->m_nids == METRICS_IDENTITIES_MAX) {
		m->m_nids++;
		return &m->m_ids[METRICS_IDENTITIES_MAX];
	}
	m->m_ids[m->m_nids].mi_name = xstrdup(id);
	return &m->m_ids[m->m_nids++];
}

/* Counts one logged decision (proxy_observe). */
void
metrics_count(struct metrics *m, const struct egress *e)
{
	struct metrics_id *mi;
	size_t		 p;

	for (p = 0; p < MP_COUNT; p++)
		if (strcmp(e->e_proto, metrics_protos[p]) == 0)
			break;
	if (p == MP_COUNT)
		p = MP_NONE;
	m->m_decisions[e->e_allow][p]++;
	if (e->e_identity != NULL) {
		mi = metrics_id(m, e->e_identity);
		mi->mi_decisions[e->e_allow]++;
		mi->mi_report += e->e_report;
		if (e->e_limit != NULL)
			mi->mi_limited[strcmp(e->e_limit,
			    "max_tunnels") != 0]++;
	}
	if (e->e_allow && e->e_reason != NULL)
		m->m_failed++;
	m->m_up += e->e_up;
	m->m_down += e->e_down;
}

static void
metrics_head(struct evbuffer *b, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

/*
 * Why the proxy does not take new connections now, or NULL when it
 * does: its listeners are not up yet (the policy loads before them), it
 * drains (SIGTERM), or the egress log cannot be written (everything new
 * is refused).
 */
static const char *
metrics_why_not_ready(struct metrics *m)
{
	struct proxy	*px = m->m_proxy;

	if (px->px_draining)
		return "draining: it stops (SIGTERM) and takes no new "
		    "connections";
	if (!px->px_listening)
		return "its listeners are not up yet";
	if (px->px_log != NULL && !jsonl_retry(px->px_log))
		return "the egress log cannot be written: new requests are "
		    "refused";
	return NULL;
}

/*
 * The metrics of a fleet's replica: the digest of its policy (replicas
 * that disagree show two), the decisions of each identity (never of a
 * sandbox id, which the client chooses) and the TLS clients refused.
 */
static void
metrics_fleet(struct metrics *m, struct evbuffer *b)
{
	struct proxy	*px = m->m_proxy;
	size_t		 i, a;

	metrics_head(b, "cordon_policy_info", "gauge",
	    "The policy in force, by the digest of its rules; always 1.");
	evbuffer_add_printf(b, "cordon_policy_info{digest=\"%s\"} 1\n",
	    px->px_stats.ps_digest);
	if (px->px_mtls == NULL)
		return;
	metrics_head(b, "cordon_identity_connections_total", "counter",
	    "Decisions logged for TLS clients, by their certificate's "
	    "identity (at most 256 apart; the rest are \"_other\").");
	/* _other, once used, is the last: m_ids[METRICS_IDENTITIES_MAX]. */
	for (i = 0; i < m->m_nids; i++)
		for (a = 0; a < 2; a++)
			evbuffer_add_printf(b, "cordon_identity_connections_"
			    "total{identity=\"%s\",decision=\"%s\"} %llu\n",
			    m->m_ids[i].mi_name, a ? "allow" : "deny",
			    (unsigned long long)m->m_ids[i].mi_decisions[a]);
	metrics_head(b, "cordon_identity_report_total", "counter",
	    "Connections of an identity whose rule has \"action\": "
	    "\"report\" allowed although its policy refuses them.");
	for (i = 0; i < m->m_nids; i++)
		evbuffer_add_printf(b, "cordon_identity_report_total"
		    "{identity=\"%s\"} %llu\n", m->m_ids[i].mi_name,
		    (unsigned long long)m->m_ids[i].mi_report);
	metrics_head(b, "cordon_identity_limited_total", "counter",
	    "Requests of an identity refused at one of its rule's limits.");
	for (i = 0; i < m->m_nids; i++)
		for (a = 0; a < 2; a++)
			evbuffer_add_printf(b, "cordon_identity_limited_total"
			    "{identity=\"%s\",limit=\"%s\"} %llu\n",
			    m->m_ids[i].mi_name, a ? "new_per_second" :
			    "max_tunnels",
			    (unsigned long long)m->m_ids[i].mi_limited[a]);
	metrics_head(b, "cordon_tls_refused_total", "counter",
	    "TLS clients refused at their handshake, by reason.");
	for (i = 0; i < MTLS_R_COUNT; i++)
		evbuffer_add_printf(b, "cordon_tls_refused_total"
		    "{reason=\"%s\"} %llu\n", mtls_label(i),
		    (unsigned long long)px->px_mtls->mt_refused[i]);
}

/* Writes every metric, in the text format (version 0.0.4). */
static void
metrics_text(struct metrics *m, struct evbuffer *b)
{
	struct proxy		*px = m->m_proxy;
	const struct proxy_stats *ps = &px->px_stats;
	size_t			 a, p;

	metrics_head(b, "cordon_connections_total", "counter",
	    "Decisions logged, one per HTTP request or tunnel.");
	for (a = 0; a < 2; a++)
		for (p = 0; p < MP_COUNT; p++)
			evbuffer_add_printf(b, "cordon_connections_total"
			    "{decision=\"%s\",protocol=\"%s\"} %llu\n",
			    a ? "allow" : "deny", metrics_protos[p],
			    (unsigned long long)m->m_decisions[a][p]);
	metrics_head(b, "cordon_failures_total", "counter",
	    "Allowed by the policy but not carried out (DNS, connect, "
	    "upstream).");
	evbuffer_add_printf(b, "cordon_failures_total %llu\n",
	    (unsigned long long)m->m_failed);
	metrics_head(b, "cordon_bytes_total", "counter",
	    "Bytes relayed, counted when an exchange is logged.");
	evbuffer_add_printf(b, "cordon_bytes_total{direction=\"up\"} %llu\n"
	    "cordon_bytes_total{direction=\"down\"} %llu\n",
	    (unsigned long long)m->m_up, (unsigned long long)m->m_down);
	metrics_head(b, "cordon_accepted_total", "counter",
	    "Client connections accepted.");
	evbuffer_add_printf(b, "cordon_accepted_total %llu\n",
	    (unsigned long long)ps->ps_accepted);
	metrics_head(b, "cordon_active_connections", "gauge",
	    "Client connections open now.");
	evbuffer_add_printf(b, "cordon_active_connections %zu\n",
	    px->px_nconns);
	metrics_head(b, "cordon_max_connections", "gauge",
	    "The --max-conns limit.");
	evbuffer_add_printf(b, "cordon_max_connections %zu\n", px->px_max);
	metrics_head(b, "cordon_dns_failures_total", "counter",
	    "Allowed names that did not resolve.");
	evbuffer_add_printf(b, "cordon_dns_failures_total %llu\n",
	    (unsigned long long)ps->ps_dns_failures);
	metrics_head(b, "cordon_policy_reloads_total", "counter",
	    "Policy reloads on SIGHUP, by result.");
	evbuffer_add_printf(b,
	    "cordon_policy_reloads_total{result=\"ok\"} %llu\n"
	    "cordon_policy_reloads_total{result=\"failed\"} %llu\n",
	    (unsigned long long)ps->ps_reloads_ok,
	    (unsigned long long)ps->ps_reloads_failed);
	metrics_head(b, "cordon_policy_loaded_timestamp_seconds", "gauge",
	    "When the policy in force was loaded.");
	evbuffer_add_printf(b, "cordon_policy_loaded_timestamp_seconds %lld\n",
	    (long long)ps->ps_loaded);
	/* Asked now, the log is tried again: it may have room by now. */
	metrics_head(b, "cordon_log_write_failed", "gauge",
	    "1 while the egress log cannot be written (new requests are "
	    "refused with 503).");
	evbuffer_add_printf(b, "cordon_log_write_failed %d\n",
	    px->px_log != NULL && !jsonl_retry(px->px_log));
	metrics_head(b, "cordon_log_refused_total", "counter",
	    "Requests refused because the egress log could not be written.");
	evbuffer_add_printf(b, "cordon_log_refused_total %llu\n",
	    (unsigned long long)ps->ps_log_refused);
	metrics_head(b, "cordon_log_lines_held", "gauge",
	    "Egress log lines held in memory until the log can be written.");
	evbuffer_add_printf(b, "cordon_log_lines_held %zu\n",
	    px->px_log != NULL ? jsonl_held(px->px_log) : 0);
	metrics_head(b, "cordon_log_lines_lost_total", "counter",
	    "Egress log lines lost: more were held back than memory allows.");
	evbuffer_add_printf(b, "cordon_log_lines_lost_total %llu\n",
	    px->px_log != NULL ? (unsigned long long)jsonl_lost(px->px_log) :
	    0ULL);
	metrics_head(b, "cordon_build_info", "gauge",
	    "The version of cordon serving, in its label; always 1.");
	evbuffer_add_printf(b, "cordon_build_info{version=\"%s\"} 1\n",
	    CORDON_VERSION);
	metrics_head(b, "cordon_ready", "gauge",
	    "1 while /readyz answers 200: the proxy takes new connections.");
	evbuffer_add_printf(b, "cordon_ready %d\n", metrics_why_not_ready(m) ==
	    NULL);
	metrics_head(b, "cordon_start_time_seconds", "gauge",
	    "When the proxy started.");
	evbuffer_add_printf(b, "cordon_start_time_seconds %lld\n",
	    (long long)m->m_started);
	metrics_fleet(m, b);
}

static void
metrics_cb(struct evhttp_request *req, void *arg)
{
	struct metrics	*m = arg;
	struct evbuffer	*b;

	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	metrics_text(m, b);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, HTTP_OK, "OK", b);
	evbuffer_free(b);
}

/* Answers req with code, reason and one line of text. */
static void
metrics_reply(struct evhttp_request *req, int code, const char *reason,
    const char *text)
{
	struct evbuffer	*b;

	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	evbuffer_add_printf(b, "%s\n", text);
	evhttp_send_reply(req, code, reason, b);
	evbuffer_free(b);
}

/* /healthz: the proxy's loop answers. */
static void
metrics_health_cb(struct evhttp_request *req, void *arg)
{
	(void)arg;
	metrics_reply(req, HTTP_OK, "OK", "ok");
}

/* /readyz: 200 while new connections are taken, else 503 and why. */
static void
metrics_ready_cb(struct evhttp_request *req, void *arg)
{
	struct metrics	*m = arg;
	const char	*why;
	char		 line[256];

	if ((why = metrics_why_not_ready(m)) == NULL) {
		metrics_reply(req, HTTP_OK, "OK", "ready");
		return;
	}
	snprintf(line, sizeof(line), "not ready: %s", why);
	metrics_reply(req, 503, "Service Unavailable", line);
}

static void
metrics_other_cb(struct evhttp_request *req, void *arg)
{
	(void)arg;
	metrics_reply(req, HTTP_NOTFOUND, "Not Found", "cordon: nothing "
	    "here\nhint: GET /metrics, /healthz or /readyz");
}

/*
 * Serves metrics of px on fd (a listening socket, taken), counting what
 * proxy_observe() tells it.  Returns NULL with *cause set (fd closed).
 */
struct metrics *
metrics_new(struct proxy *px, int fd, char **cause)
{
	struct metrics	*m;

	*cause = NULL;
	m = xcalloc(1, sizeof(*m));
	m->m_proxy = px;
	m->m_started = time(NULL);
	if ((m->m_http = evhttp_new(px->px_base)) == NULL) {
		xasprintf(cause, "metrics: cannot make an HTTP server");
		goto fail;
	}
	evhttp_set_timeout(m->m_http, METRICS_TIMEOUT_SECS);
	evhttp_set_max_headers_size(m->m_http, METRICS_HEADERS_MAX);
	evhttp_set_max_body_size(m->m_http, 0);
	evhttp_set_allowed_methods(m->m_http, EVHTTP_REQ_GET |
	    EVHTTP_REQ_HEAD);
	evhttp_set_cb(m->m_http, "/metrics", metrics_cb, m);
	evhttp_set_cb(m->m_http, "/healthz", metrics_health_cb, m);
	evhttp_set_cb(m->m_http, "/readyz", metrics_ready_cb, m);
	evhttp_set_gencb(m->m_http, metrics_other_cb, m);
	if (evhttp_accept_socket(m->m_http, fd) == -1) {
		xasprintf(cause, "metrics: cannot accept on the listener");
		goto fail;
	}
	fd = -1;			/* the evhttp owns it now */
	px->px_metrics = m;
	return m;
fail:
	if (fd != -1)
		close(fd);
	metrics_free(m);
	return NULL;
}

void
metrics_free(struct metrics *m)
{
	size_t	 i;

	if (m == NULL)
		return;
	if (m->m_proxy->px_metrics == m)
		m->m_proxy->px_metrics = NULL;
	if (m->m_http != NULL)
		evhttp_free(m->m_http);		/* closes the listener */
	if (m->m_ids != NULL)
		for (i = 0; i <= METRICS_IDENTITIES_MAX; i++)
			free(m->m_ids[i].mi_name);
	free(m->m_ids);
	free(m);
}
