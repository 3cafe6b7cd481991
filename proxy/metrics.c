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
#include <sys/mman.h>
#include <sys/time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "certs/mtls.h"
#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "proxy/proxy.h"

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

/* An identity's decisions, in a slot: names live in the slot itself. */
struct metrics_idc {
	char		 mc_name[MTLS_IDENTITY_MAX + 1];
	uint64_t	 mc_decisions[2];	/* [allow] */
	uint64_t	 mc_report;	/* allowed by "report" */
	uint64_t	 mc_limited[2];	/* [max_tunnels, new_per_second] */
};

/*
 * What one proxy counts, and the gauges it publishes: in the heap for a
 * proxy alone, in a MAP_SHARED region for a worker (workers.c), where
 * the parent reads it at a scrape.  One writer, its worker; ms_seq is
 * odd while it writes, so that a reader copies a whole state or tries
 * again (a sequence lock: the worker never waits for a scrape).
 */
struct metrics_slot {
	unsigned int	 ms_seq;
	pid_t		 ms_pid;	/* the worker's; 0: none yet */
	uint64_t	 ms_decisions[2][MP_COUNT];	/* [allow][protocol] */
	uint64_t	 ms_failed;	/* allowed, but not carried out */
	uint64_t	 ms_up;
	uint64_t	 ms_down;
	struct proxy_stats ms_stats;
	size_t		 ms_nconns;
	size_t		 ms_max;
	int		 ms_why;	/* METRICS_W_*: why not ready */
	bool		 ms_log_failed;
	size_t		 ms_log_held;
	uint64_t	 ms_log_lost;
	bool		 ms_mtls;
	uint64_t	 ms_tls_refused[MTLS_R_COUNT];
	size_t		 ms_nids;	/* the last is METRICS_OTHER's */
	struct metrics_idc ms_ids[METRICS_IDENTITIES_MAX + 1];
};

/* Why a proxy takes no new connections (metrics_why_not_ready). */
enum {
	METRICS_W_READY,
	METRICS_W_DRAINING,
	METRICS_W_NOT_LISTENING,
	METRICS_W_LOG
};

static const char *const metrics_whys[] = {
	NULL,
	"draining: it stops (SIGTERM) and takes no new connections",
	"its listeners are not up yet",
	"the egress log cannot be written: new requests are refused"
};

/*
 * A proxy alone has one slot of its own and serves it; a worker has one
 * in the shared region and serves nothing; the parent of workers has no
 * proxy and serves the sum of every slot and of m_retired, the counts
 * of the workers that died (a counter never goes down).
 */
struct metrics {
	struct proxy	*m_proxy;	/* borrowed; NULL: the parent's */
	struct evhttp	*m_http;	/* NULL: a worker's */
	struct metrics_slot *m_slots;	/* one, or every worker's */
	size_t		 m_nslots;
	bool		 m_shared;	/* m_slots is the workers' region */
	struct metrics_slot *m_retired;	/* the parent's */
	uint64_t	(*m_seats)[2];	/* reloads of each worker's seat */
	uint64_t	 m_restarts;	/* the parent's */
	bool		 m_draining;	/* the parent's */
	time_t		 m_started;
	struct event	*m_tick;	/* a worker's: gauges published */
};

/* The worker starts writing s. */
static void
metrics_begin(struct metrics_slot *s)
{
	__atomic_store_n(&s->ms_seq, s->ms_seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* The worker is done writing s. */
static void
metrics_end(struct metrics_slot *s)
{
	__atomic_store_n(&s->ms_seq, s->ms_seq + 1, __ATOMIC_RELEASE);
}

/*
 * Copies src to dst, whole: again while its worker writes it, a bounded
 * number of times (a worker killed while writing leaves ms_seq odd; its
 * counters, each one aligned word, are still read).
 */
static void
metrics_copy(struct metrics_slot *dst, const struct metrics_slot *src)
{
	unsigned int	 s0, s1;
	int		 tries = 1000;

	do {
		s0 = __atomic_load_n(&src->ms_seq, __ATOMIC_ACQUIRE);
		memcpy(dst, src, sizeof(*dst));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s1 = __atomic_load_n(&src->ms_seq, __ATOMIC_RELAXED);
	} while (((s0 & 1) != 0 || s0 != s1) && --tries > 0);
}

/* The counters of identity id in s: its own, or past the cap, _other's. */
static struct metrics_idc *
metrics_id(struct metrics_slot *s, const char *id)
{
	size_t	 i;

	for (i = 0; i < s->ms_nids; i++)
		if (strcmp(s->ms_ids[i].mc_name, id) == 0)
			return &s->ms_ids[i];
	if (s->ms_nids == METRICS_IDENTITIES_MAX + 1)
		return &s->ms_ids[METRICS_IDENTITIES_MAX];
	snprintf(s->ms_ids[METRICS_IDENTITIES_MAX].mc_name,
	    sizeof(s->ms_ids[0].mc_name), "%s", METRICS_OTHER);
	if (s->ms_nids == METRICS_IDENTITIES_MAX) {
		s->ms_nids++;
		return &s->ms_ids[METRICS_IDENTITIES_MAX];
	}
	snprintf(s->ms_ids[s->ms_nids].mc_name, sizeof(s->ms_ids[0].mc_name),
	    "%s", id);
	return &s->ms_ids[s->ms_nids++];
}

/*
 * Why px takes no new connections now (METRICS_W_*), or 0; log_failed:
 * its egress log cannot be written.
 */
static int
metrics_why_not_ready(struct proxy *px, bool log_failed)
{
	if (px->px_draining)
		return METRICS_W_DRAINING;
	if (!px->px_listening)
		return METRICS_W_NOT_LISTENING;
	if (log_failed)
		return METRICS_W_LOG;
	return METRICS_W_READY;
}

/* Copies what px holds (its stats, its gauges) into its slot. */
static void
metrics_gauges(struct metrics *m, struct metrics_slot *s)
{
	struct proxy	*px = m->m_proxy;
	size_t		 i;

	s->ms_stats = px->px_stats;
	s->ms_nconns = px->px_nconns;
	s->ms_max = px->px_max;
	/* Asked now, the log is tried again (once): it may have room. */
	s->ms_log_failed = px->px_log != NULL && !jsonl_retry(px->px_log);
	s->ms_why = metrics_why_not_ready(px, s->ms_log_failed);
	s->ms_log_held = px->px_log != NULL ? jsonl_held(px->px_log) : 0;
	s->ms_log_lost = px->px_log != NULL ? jsonl_lost(px->px_log) : 0;
	s->ms_mtls = px->px_mtls != NULL;
	if (px->px_mtls != NULL)
		for (i = 0; i < MTLS_R_COUNT; i++)
			s->ms_tls_refused[i] = px->px_mtls->mt_refused[i];
}

/*
 * Publishes px's gauges and stats to its slot (a worker's, read by the
 * parent): after each decision and each accept, and once a second.
 */
void
metrics_sync(struct metrics *m)
{
	if (m == NULL || !m->m_shared || m->m_proxy == NULL)
		return;
	metrics_begin(&m->m_slots[0]);
	metrics_gauges(m, &m->m_slots[0]);
	metrics_end(&m->m_slots[0]);
}

/* Counts one logged decision (proxy_observe). */
void
metrics_count(struct metrics *m, const struct egress *e)
{
	struct metrics_slot	*s = &m->m_slots[0];
	size_t			 p;
	struct metrics_idc	*mi;

	for (p = 0; p < MP_COUNT; p++)
		if (strcmp(e->e_proto, metrics_protos[p]) == 0)
			break;
	if (p == MP_COUNT)
		p = MP_NONE;
	metrics_begin(s);
	s->ms_decisions[e->e_allow][p]++;
	if (e->e_identity != NULL) {
		mi = metrics_id(s, e->e_identity);
		mi->mc_decisions[e->e_allow]++;
		mi->mc_report += e->e_report;
		if (e->e_limit != NULL)
			mi->mc_limited[strcmp(e->e_limit,
			    "max_tunnels") != 0]++;
	}
	if (e->e_allow && e->e_reason != NULL)
		s->ms_failed++;
	s->ms_up += e->e_up;
	s->ms_down += e->e_down;
	if (m->m_shared)
		metrics_gauges(m, s);
	metrics_end(s);
}

static void
metrics_head(struct evbuffer *b, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

/* What a scrape shows: the sum of the slots, and each worker's own. */
struct metrics_view {
	struct metrics_slot	 mv_sum;
	struct metrics_slot	*mv_each;	/* the workers'; NULL alone */
	size_t			 mv_n;
	char			 mv_why[512];	/* "": ready */
};

/* Adds the counters of s to sum; its gauges too when gauges. */
static void
metrics_add(struct metrics_slot *sum, const struct metrics_slot *s,
    bool gauges)
{
	struct proxy_stats	*t = &sum->ms_stats;
	const struct proxy_stats *u = &s->ms_stats;
	struct metrics_idc	*id;
	size_t			 i, a, p;

	for (a = 0; a < 2; a++)
		for (p = 0; p < MP_COUNT; p++)
			sum->ms_decisions[a][p] += s->ms_decisions[a][p];
	sum->ms_failed += s->ms_failed;
	sum->ms_up += s->ms_up;
	sum->ms_down += s->ms_down;
	t->ps_accepted += u->ps_accepted;
	t->ps_dns_failures += u->ps_dns_failures;
	t->ps_log_refused += u->ps_log_refused;
	t->ps_reused += u->ps_reused;
	t->ps_pooled += u->ps_pooled;
	sum->ms_log_lost += s->ms_log_lost;
	for (i = 0; i < MTLS_R_COUNT; i++)
		sum->ms_tls_refused[i] += s->ms_tls_refused[i];
	sum->ms_mtls |= s->ms_mtls;
	for (i = 0; i < s->ms_nids && i <= METRICS_IDENTITIES_MAX; i++) {
		id = metrics_id(sum, s->ms_ids[i].mc_name);
		for (a = 0; a < 2; a++) {
			id->mc_decisions[a] += s->ms_ids[i].mc_decisions[a];
			id->mc_limited[a] += s->ms_ids[i].mc_limited[a];
		}
		id->mc_report += s->ms_ids[i].mc_report;
	}
	if (!gauges)
		return;
	sum->ms_nconns += s->ms_nconns;
	sum->ms_max += s->ms_max;
	sum->ms_log_held += s->ms_log_held;
	sum->ms_log_failed |= s->ms_log_failed;
	if (u->ps_loaded > t->ps_loaded)
		t->ps_loaded = u->ps_loaded;
}

/*
 * Why the workers, together, take no new connections, into mv_why: the
 * parent drains, a worker is not up (restarting) or not ready, or the
 * workers decide with different policies (a reload not yet everywhere).
 */
static void
metrics_why_workers(struct metrics *m, struct metrics_view *v)
{
	const struct metrics_slot *s;
	size_t			 i;

	if (m->m_draining) {
		snprintf(v->mv_why, sizeof(v->mv_why), "%s",
		    metrics_whys[METRICS_W_DRAINING]);
		return;
	}
	for (i = 0; i < v->mv_n && v->mv_why[0] == '\0'; i++) {
		s = &v->mv_each[i];
		if (s->ms_pid == 0)
			snprintf(v->mv_why, sizeof(v->mv_why), "worker %zu of "
			    "%zu is not serving (it starts again)", i, v->mv_n);
		else if (s->ms_why != METRICS_W_READY)
			snprintf(v->mv_why, sizeof(v->mv_why), "worker %zu: %s",
			    i, metrics_whys[s->ms_why]);
		else if (strcmp(s->ms_stats.ps_digest,
		    v->mv_each[0].ms_stats.ps_digest) != 0)
			snprintf(v->mv_why, sizeof(v->mv_why), "the workers "
			    "decide with different policies (%s on worker 0, "
			    "%s on worker %zu): a reload has not reached all",
			    v->mv_each[0].ms_stats.ps_digest,
			    s->ms_stats.ps_digest, i);
	}
}

/*
 * The reloads of the workers' proxy: those every worker made (the
 * fewest of any worker's seat, which keeps the counts of the workers
 * that held it before), not their sum: one SIGHUP is one reload, and
 * it is counted once it has reached them all.
 */
static void
metrics_reloads(struct metrics *m, struct metrics_view *v)
{
	struct proxy_stats	*t = &v->mv_sum.ms_stats;
	uint64_t		 ok, failed;
	size_t			 i;

	for (i = 0; i < v->mv_n; i++) {
		ok = m->m_seats[i][0] + v->mv_each[i].ms_stats.ps_reloads_ok;
		failed = m->m_seats[i][1] +
		    v->mv_each[i].ms_stats.ps_reloads_failed;
		if (i == 0 || ok < t->ps_reloads_ok)
			t->ps_reloads_ok = ok;
		if (i == 0 || failed < t->ps_reloads_failed)
			t->ps_reloads_failed = failed;
	}
}

/* What a scrape shows now (v zeroed by the caller). */
static void
metrics_view(struct metrics *m, struct metrics_view *v)
{
	size_t	 i;

	if (m->m_proxy != NULL) {
		metrics_gauges(m, &m->m_slots[0]);
		v->mv_sum = m->m_slots[0];
		if (v->mv_sum.ms_why != METRICS_W_READY)
			snprintf(v->mv_why, sizeof(v->mv_why), "%s",
			    metrics_whys[v->mv_sum.ms_why]);
		return;
	}
	v->mv_n = m->m_nslots;
	v->mv_each = xcalloc(v->mv_n, sizeof(*v->mv_each));
	metrics_add(&v->mv_sum, m->m_retired, false);
	for (i = 0; i < v->mv_n; i++) {
		metrics_copy(&v->mv_each[i], &m->m_slots[i]);
		if (v->mv_each[i].ms_pid != 0)
			metrics_add(&v->mv_sum, &v->mv_each[i], true);
	}
	metrics_reloads(m, v);
	metrics_why_workers(m, v);
}

/*
 * The digests of the policies in force: one line each, so that
 * replicas, or workers, that disagree show two.
 */
static void
metrics_digests(const struct metrics_view *v, struct evbuffer *b)
{
	const char	*d;
	size_t		 i, j;

	metrics_head(b, "cordon_policy_info", "gauge",
	    "The policy in force, by the digest of its rules; always 1.");
	if (v->mv_each == NULL) {
		evbuffer_add_printf(b, "cordon_policy_info{digest=\"%s\"} 1\n",
		    v->mv_sum.ms_stats.ps_digest);
		return;
	}
	for (i = 0; i < v->mv_n; i++) {
		d = v->mv_each[i].ms_stats.ps_digest;
		for (j = 0; j < i; j++)
			if (v->mv_each[j].ms_pid != 0 &&
			    strcmp(v->mv_each[j].ms_stats.ps_digest, d) == 0)
				break;
		if (v->mv_each[i].ms_pid != 0 && j == i)
			evbuffer_add_printf(b, "cordon_policy_info"
			    "{digest=\"%s\"} 1\n", d);
	}
}

/*
 * The metrics of a fleet's replica: the digest of its policy (replicas
 * that disagree show two), the decisions of each identity (never of a
 * sandbox id, which the client chooses) and the TLS clients refused.
 */
static void
metrics_fleet(const struct metrics_view *v, struct evbuffer *b)
{
	const struct metrics_slot *s = &v->mv_sum;
	size_t			 i, a;

	metrics_digests(v, b);
	if (!s->ms_mtls)
		return;
	metrics_head(b, "cordon_identity_connections_total", "counter",
	    "Decisions logged for TLS clients, by their certificate's "
	    "identity (at most 256 apart; the rest are \"_other\").");
	/* _other, once used, is the last: ms_ids[METRICS_IDENTITIES_MAX]. */
	for (i = 0; i < s->ms_nids; i++)
		for (a = 0; a < 2; a++)
			evbuffer_add_printf(b, "cordon_identity_connections_"
			    "total{identity=\"%s\",decision=\"%s\"} %llu\n",
			    s->ms_ids[i].mc_name, a ? "allow" : "deny",
			    (unsigned long long)s->ms_ids[i].mc_decisions[a]);
	metrics_head(b, "cordon_identity_report_total", "counter",
	    "Connections of an identity whose rule has \"action\": "
	    "\"report\" allowed although its policy refuses them.");
	for (i = 0; i < s->ms_nids; i++)
		evbuffer_add_printf(b, "cordon_identity_report_total"
		    "{identity=\"%s\"} %llu\n", s->ms_ids[i].mc_name,
		    (unsigned long long)s->ms_ids[i].mc_report);
	metrics_head(b, "cordon_identity_limited_total", "counter",
	    "Requests of an identity refused at one of its rule's limits.");
	for (i = 0; i < s->ms_nids; i++)
		for (a = 0; a < 2; a++)
			evbuffer_add_printf(b, "cordon_identity_limited_total"
			    "{identity=\"%s\",limit=\"%s\"} %llu\n",
			    s->ms_ids[i].mc_name, a ? "new_per_second" :
			    "max_tunnels",
			    (unsigned long long)s->ms_ids[i].mc_limited[a]);
	metrics_head(b, "cordon_tls_refused_total", "counter",
	    "TLS clients refused at their handshake, by reason.");
	for (i = 0; i < MTLS_R_COUNT; i++)
		evbuffer_add_printf(b, "cordon_tls_refused_total"
		    "{reason=\"%s\"} %llu\n", mtls_label(i),
		    (unsigned long long)s->ms_tls_refused[i]);
}

/* --workers N: each worker's own, by its number (never its pid). */
static void
metrics_workers(struct metrics *m, const struct metrics_view *v,
    struct evbuffer *b)
{
	size_t	 i;

	if (v->mv_each == NULL)
		return;
	metrics_head(b, "cordon_workers", "gauge",
	    "Worker processes serving (--workers).");
	evbuffer_add_printf(b, "cordon_workers %zu\n", v->mv_n);
	metrics_head(b, "cordon_worker_up", "gauge",
	    "1 while the worker runs; 0 while it is started again.");
	for (i = 0; i < v->mv_n; i++)
		evbuffer_add_printf(b, "cordon_worker_up{worker=\"%zu\"} %d\n",
		    i, v->mv_each[i].ms_pid != 0);
	metrics_head(b, "cordon_worker_accepted_total", "counter",
	    "Client connections accepted by each worker since it started.");
	for (i = 0; i < v->mv_n; i++)
		evbuffer_add_printf(b, "cordon_worker_accepted_total"
		    "{worker=\"%zu\"} %llu\n", i, (unsigned long long)
		    v->mv_each[i].ms_stats.ps_accepted);
	metrics_head(b, "cordon_worker_restarts_total", "counter",
	    "Workers that died and were started again.");
	evbuffer_add_printf(b, "cordon_worker_restarts_total %llu\n",
	    (unsigned long long)m->m_restarts);
}

/* The counters of the connections and of the policy. */
static void
metrics_conns(const struct metrics_view *v, struct evbuffer *b)
{
	const struct metrics_slot *s = &v->mv_sum;
	const struct proxy_stats *ps = &s->ms_stats;
	size_t			 a, p;

	metrics_head(b, "cordon_connections_total", "counter",
	    "Decisions logged, one per HTTP request or tunnel.");
	for (a = 0; a < 2; a++)
		for (p = 0; p < MP_COUNT; p++)
			evbuffer_add_printf(b, "cordon_connections_total"
			    "{decision=\"%s\",protocol=\"%s\"} %llu\n",
			    a ? "allow" : "deny", metrics_protos[p],
			    (unsigned long long)s->ms_decisions[a][p]);
	metrics_head(b, "cordon_failures_total", "counter",
	    "Allowed by the policy but not carried out (DNS, connect, "
	    "upstream).");
	evbuffer_add_printf(b, "cordon_failures_total %llu\n",
	    (unsigned long long)s->ms_failed);
	metrics_head(b, "cordon_bytes_total", "counter",
	    "Bytes relayed, counted when an exchange is logged.");
	evbuffer_add_printf(b, "cordon_bytes_total{direction=\"up\"} %llu\n"
	    "cordon_bytes_total{direction=\"down\"} %llu\n",
	    (unsigned long long)s->ms_up, (unsigned long long)s->ms_down);
	metrics_head(b, "cordon_accepted_total", "counter",
	    "Client connections accepted.");
	evbuffer_add_printf(b, "cordon_accepted_total %llu\n",
	    (unsigned long long)ps->ps_accepted);
	metrics_head(b, "cordon_active_connections", "gauge",
	    "Client connections open now.");
	evbuffer_add_printf(b, "cordon_active_connections %zu\n",
	    s->ms_nconns);
	metrics_head(b, "cordon_max_connections", "gauge",
	    "The --max-conns limit.");
	evbuffer_add_printf(b, "cordon_max_connections %zu\n", s->ms_max);
	metrics_head(b, "cordon_dns_failures_total", "counter",
	    "Allowed names that did not resolve.");
	evbuffer_add_printf(b, "cordon_dns_failures_total %llu\n",
	    (unsigned long long)ps->ps_dns_failures);
	metrics_head(b, "cordon_upstream_reused_total", "counter",
	    "HTTP requests sent on an idle upstream connection instead of a "
	    "new one: kept by their client connection, or from the pool.");
	evbuffer_add_printf(b,
	    "cordon_upstream_reused_total{from=\"connection\"} %llu\n"
	    "cordon_upstream_reused_total{from=\"pool\"} %llu\n",
	    (unsigned long long)(ps->ps_reused - ps->ps_pooled),
	    (unsigned long long)ps->ps_pooled);
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
}

/* Writes every metric, in the text format (version 0.0.4). */
static void
metrics_text(struct metrics *m, const struct metrics_view *v,
    struct evbuffer *b)
{
	const struct metrics_slot *s = &v->mv_sum;

	metrics_conns(v, b);
	metrics_head(b, "cordon_log_write_failed", "gauge",
	    "1 while the egress log cannot be written (new requests are "
	    "refused with 503).");
	evbuffer_add_printf(b, "cordon_log_write_failed %d\n",
	    s->ms_log_failed);
	metrics_head(b, "cordon_log_refused_total", "counter",
	    "Requests refused because the egress log could not be written.");
	evbuffer_add_printf(b, "cordon_log_refused_total %llu\n",
	    (unsigned long long)s->ms_stats.ps_log_refused);
	metrics_head(b, "cordon_log_lines_held", "gauge",
	    "Egress log lines held in memory until the log can be written.");
	evbuffer_add_printf(b, "cordon_log_lines_held %zu\n",
	    s->ms_log_held);
	metrics_head(b, "cordon_log_lines_lost_total", "counter",
	    "Egress log lines lost: more were held back than memory allows.");
	evbuffer_add_printf(b, "cordon_log_lines_lost_total %llu\n",
	    (unsigned long long)s->ms_log_lost);
	metrics_head(b, "cordon_build_info", "gauge",
	    "The version of cordon serving, in its label; always 1.");
	evbuffer_add_printf(b, "cordon_build_info{version=\"%s\"} 1\n",
	    CORDON_VERSION);
	metrics_head(b, "cordon_ready", "gauge",
	    "1 while /readyz answers 200: the proxy takes new connections.");
	evbuffer_add_printf(b, "cordon_ready %d\n", v->mv_why[0] == '\0');
	metrics_head(b, "cordon_start_time_seconds", "gauge",
	    "When the proxy started.");
	evbuffer_add_printf(b, "cordon_start_time_seconds %lld\n",
	    (long long)m->m_started);
	metrics_fleet(v, b);
	metrics_workers(m, v, b);
}

static void
metrics_cb(struct evhttp_request *req, void *arg)
{
	struct metrics		*m = arg;
	struct metrics_view	*v;
	struct evbuffer		*b;

	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	v = xcalloc(1, sizeof(*v));
	metrics_view(m, v);
	metrics_text(m, v, b);
	free(v->mv_each);
	free(v);
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
	struct metrics		*m = arg;
	struct metrics_view	*v;
	char			 line[sizeof(v->mv_why) + 16];

	v = xcalloc(1, sizeof(*v));
	metrics_view(m, v);
	if (v->mv_why[0] == '\0')
		metrics_reply(req, HTTP_OK, "OK", "ready");
	else {
		snprintf(line, sizeof(line), "not ready: %s", v->mv_why);
		metrics_reply(req, 503, "Service Unavailable", line);
	}
	free(v->mv_each);
	free(v);
}

static void
metrics_other_cb(struct evhttp_request *req, void *arg)
{
	(void)arg;
	metrics_reply(req, HTTP_NOTFOUND, "Not Found", "cordon: nothing "
	    "here\nhint: GET /metrics, /healthz or /readyz");
}

/*
 * m's server on fd (a listening socket, taken) on base.  Returns 0, or
 * -1 with *cause set (fd closed).
 */
static int
metrics_http(struct metrics *m, struct event_base *base, int fd,
    char **cause)
{
	if ((m->m_http = evhttp_new(base)) == NULL) {
		close(fd);
		xasprintf(cause, "metrics: cannot make an HTTP server");
		return -1;
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
		close(fd);
		xasprintf(cause, "metrics: cannot accept on the listener");
		return -1;
	}
	return 0;			/* the evhttp owns fd now */
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
	m->m_slots = xcalloc(1, sizeof(*m->m_slots));
	m->m_nslots = 1;
	px->px_metrics = m;
	if (metrics_http(m, px->px_base, fd, cause) == -1) {
		metrics_free(m);
		return NULL;
	}
	return m;
}

/* A worker's gauges, published once a second even when idle. */
static void
metrics_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	metrics_sync(arg);
}

/*
 * Worker i's metrics: px counts into its slot of slots (the region
 * metrics_slots_new() made), which the parent serves.  Never NULL.
 */
struct metrics *
metrics_attach(struct proxy *px, struct metrics_slot *slots, size_t i)
{
	struct metrics_slot *slot = &slots[i];
	struct metrics	*m;
	struct timeval	 tv = { 1, 0 };

	m = xcalloc(1, sizeof(*m));
	m->m_proxy = px;
	m->m_started = time(NULL);
	m->m_slots = slot;
	m->m_nslots = 1;
	m->m_shared = true;
	px->px_metrics = m;
	m->m_tick = event_new(px->px_base, -1, EV_PERSIST, metrics_tick_cb,
	    m);
	if (m->m_tick != NULL)
		event_add(m->m_tick, &tv);
	metrics_begin(slot);
	metrics_gauges(m, slot);
	slot->ms_pid = getpid();	/* it serves: the parent sees it */
	metrics_end(slot);
	return m;
}

/*
 * The region of n workers' slots, shared with the workers forked after
 * (MAP_SHARED), or NULL with errno set.
 */
struct metrics_slot *
metrics_slots_new(size_t n)
{
	void	*p;

	p = mmap(NULL, n * sizeof(struct metrics_slot), PROT_READ |
	    PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void
metrics_slots_free(struct metrics_slot *slots, size_t n)
{
	if (slots != NULL)
		munmap(slots, n * sizeof(*slots));
}

/*
 * The parent's metrics: on fd (taken) on base, the sum of the n slots
 * of its workers.  Returns NULL with *cause set (fd closed).
 */
struct metrics *
metrics_serve(struct event_base *base, int fd, struct metrics_slot *slots,
    size_t n, char **cause)
{
	struct metrics	*m;

	*cause = NULL;
	m = xcalloc(1, sizeof(*m));
	m->m_started = time(NULL);
	m->m_slots = slots;
	m->m_nslots = n;
	m->m_shared = true;
	m->m_retired = xcalloc(1, sizeof(*m->m_retired));
	m->m_seats = xcalloc(n, sizeof(*m->m_seats));
	if (metrics_http(m, base, fd, cause) == -1) {
		metrics_free(m);
		return NULL;
	}
	return m;
}

/*
 * Worker i is gone (or about to be started again): its counters join
 * those of the dead, so that no total goes down, and its slot is
 * emptied for the next.  restarted counts it.
 */
void
metrics_retire(struct metrics_slot *slots, size_t i, struct metrics *m,
    bool restarted)
{
	struct metrics_slot	*s;

	if (m != NULL) {
		s = xcalloc(1, sizeof(*s));
		metrics_copy(s, &slots[i]);
		metrics_add(m->m_retired, s, false);
		m->m_seats[i][0] += s->ms_stats.ps_reloads_ok;
		m->m_seats[i][1] += s->ms_stats.ps_reloads_failed;
		free(s);
		m->m_restarts += restarted;
	}
	memset(&slots[i], 0, sizeof(slots[i]));
}

/* The parent drains: /readyz says so. */
void
metrics_draining(struct metrics *m)
{
	if (m != NULL)
		m->m_draining = true;
}

void
metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	if (m->m_proxy != NULL && m->m_proxy->px_metrics == m)
		m->m_proxy->px_metrics = NULL;
	if (m->m_tick != NULL)
		event_free(m->m_tick);
	if (m->m_http != NULL)
		evhttp_free(m->m_http);		/* closes the listener */
	if (!m->m_shared)
		free(m->m_slots);
	free(m->m_retired);
	free(m->m_seats);
	free(m);
}

/* The pid worker i published in its slot (0: it has not served yet). */
pid_t
metrics_slot_pid(struct metrics_slot *slots, size_t i)
{
	return __atomic_load_n(&slots[i].ms_pid, __ATOMIC_ACQUIRE);
}
