/*
 * watch.c: a run's own channel on a sandbox listener (cordon run
 * --proxy-socket).  A run opens one connection whose PROXY v2 header
 * carries its id and PP2_TYPE_CORDON_WATCH; the proxy answers
 * PP2_WATCH_HELLO at once (the run's preflight: a listener that does
 * not read sandbox headers answers something else) and then sends, one
 * JSON line each, the decisions of that run's connections, so that its
 * report, summary and harness see them as with its own proxy.  The run
 * writes "end" once its sandbox is gone; the proxy answers
 * {"event":"end"} once none of the run's connections is open, their
 * lines sent.
 *
 * A run is its uid and id together (listen.c): the id is the client's
 * word, the uid the kernel's.  A channel hears only the connections of
 * its own (uid, id), so naming another user's id shows nothing of
 * theirs.  On a tls: listener the certificate's identity stands for the
 * uid, with the local uid a node-local originator adds
 * (PP2_TYPE_CORDON_ORIGIN: its word, scoped under its identity): a
 * channel hears (identity, origin uid, id).  On TCP there is neither:
 * such a channel is answered, then closed.  A channel that does not
 * read has its lines dropped past WATCH_BUFFER_MAX, never the proxy's
 * memory.
 *
 * The channel carries the run's harness too (cordon run --control,
 * --ask): the run's live allow and deny rules (w_live), which narrow
 * the operator's policy for that run's connections alone and can give
 * back only what the run's own narrowing took (policy_merge_live), and its
 * answers to the questions asked of it about a connection the run's
 * narrowing refused and the operator's policy allows.  What a run sends
 * is read by watch_msg.c; a malformed line closes its channel, and the
 * connections held for its answers are refused.  A run with a harness
 * says so in each connection's header (PP2_TYPE_CORDON_CHANNEL): such a
 * connection is refused while no channel of its run is open here (this
 * proxy restarted, or the run's channel is on another replica), so that
 * it is never decided without the run's live rules; the run reopens its
 * channel and replays them (runner/control_feed_replay.c).
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <jansson.h>

#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/conn.h"
#include "proxy/proxy.h"
#include "wire/pp2.h"

#define WATCH_BUFFER_MAX	(1024 * 1024)	/* unread lines held */
#define WATCH_ASKS_MAX		64		/* connections held per run */
#define WATCH_RULES_MAX		256		/* live rules per run */

struct watch_ask {
	char			 wa_id[WATCH_ASK_ID_MAX + 1];
	struct conn		*wa_conn;
};

struct watch {
	TAILQ_ENTRY(watch)	 w_entry;
	struct proxy		*w_proxy;
	struct bufferevent	*w_bev;
	int			 w_fd;
	bool			 w_listed;	/* in px_watches */
	bool			 w_closing;	/* freed once written */
	bool			 w_ending;	/* "end" asked, not answered */
	uid_t			 w_uid;
	char			*w_identity;	/* tls:, or NULL: w_uid */
	char			*w_origin;	/* tls: the originator's uid */
	char			 w_id[PP2_ID_MAX + 1];
	uint64_t		 w_dropped;
	int			 w_ask_secs;	/* 0: the run does not ask */
	struct watch_ask	 w_asks[WATCH_ASKS_MAX];
	size_t			 w_nasks;
	unsigned long		 w_seq;		/* ids of questions */
	struct ppolicy		*w_live;	/* the run's live rules */
};

static void	watch_message(struct watch *, const struct watch_msg *);

/* Leaves px_watches: nothing new reaches w. */
static void
watch_unlist(struct watch *w)
{
	if (!w->w_listed)
		return;
	TAILQ_REMOVE(&w->w_proxy->px_watches, w, w_entry);
	w->w_proxy->px_nwatches--;
	w->w_listed = false;
}

/* The connections held for w's answers are refused (w unlisted first). */
static void
watch_refuse_asks(struct watch *w)
{
	struct conn	*c;

	while (w->w_nasks > 0) {
		c = w->w_asks[--w->w_nasks].wa_conn;
		conn_dial_answer(c, false, NULL);
	}
}

static void
watch_free(struct watch *w)
{
	watch_unlist(w);
	watch_refuse_asks(w);
	proxy_policy_unref(w->w_live);
	free(w->w_identity);
	free(w->w_origin);
	bufferevent_free(w->w_bev);
	close(w->w_fd);
	free(w);
}

/* Sends doc (taken) as one line, or drops it when too much waits. */
static void
watch_send(struct watch *w, json_t *doc)
{
	struct evbuffer	*out = bufferevent_get_output(w->w_bev);
	char		*text;

	if (doc == NULL)
		return;
	if (evbuffer_get_length(out) > WATCH_BUFFER_MAX) {
		w->w_dropped++;
		json_decref(doc);
		return;
	}
	if (w->w_dropped > 0) {
		json_object_set_new(doc, "dropped_before",
		    json_integer((json_int_t)w->w_dropped));
		w->w_dropped = 0;
	}
	if ((text = json_dumps(doc, JSON_COMPACT)) != NULL) {
		evbuffer_add_printf(out, "%s\n", text);
		free(text);
	}
	json_decref(doc);
}

/* Whether two strings, either NULL, are the same. */
static bool
watch_same(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/*
 * Whether the connection or record (its egress record e: the uid the
 * kernel gave, or the identity its certificate named and the origin uid
 * its originator said, and its id) is of w's run.
 */
static bool
watch_is_run(const struct watch *w, const struct egress *e)
{
	if (e->e_sandbox == NULL || strcmp(w->w_id, e->e_sandbox) != 0)
		return false;
	if (w->w_identity != NULL)
		return watch_same(w->w_identity, e->e_identity) &&
		    watch_same(w->w_origin, e->e_origin_uid);
	return e->e_has_uid && e->e_identity == NULL && w->w_uid == e->e_uid;
}

/* The run key of c, as an egress record (borrowing from c). */
static void
watch_key(const struct conn *c, struct egress *e)
{
	memset(e, 0, sizeof(*e));
	e->e_sandbox = c->c_sandbox;
	e->e_has_uid = c->c_peer.lp_known;
	e->e_uid = c->c_peer.lp_uid;
	e->e_identity = c->c_identity;
	e->e_origin_uid = c->c_origin_uid;
}

/* The channel of the run with key e, or NULL. */
static struct watch *
watch_find(struct proxy *px, const struct egress *e)
{
	struct watch	*w;

	TAILQ_FOREACH(w, &px->px_watches, w_entry)
		if (watch_is_run(w, e))
			return w;
	return NULL;
}

/* The channel of c's run, or NULL. */
static struct watch *
watch_of(const struct conn *c)
{
	struct egress	 e;

	if (c->c_proxy->px_nwatches == 0 || c->c_sandbox == NULL)
		return NULL;
	watch_key(c, &e);
	return watch_find(c->c_proxy, &e);
}

/* Says whether a connection of w's run is still open. */
static bool
watch_busy(const struct watch *w)
{
	const struct conn	*c;
	struct egress		 e;

	TAILQ_FOREACH(c, &w->w_proxy->px_conns, c_entry) {
		watch_key(c, &e);
		if (watch_is_run(w, &e))
			return true;
	}
	return false;
}

/*
 * Who w's run is, for the proxy's messages (caller frees): its id and
 * uid, or identity and the originator's uid.
 */
static char *
watch_who(const struct watch *w)
{
	char	*id = str_escape(w->w_id, strlen(w->w_id)), *who;

	if (w->w_identity != NULL)
		xasprintf(&who, "sandbox %s (identity %s%s%s)", id,
		    w->w_identity, w->w_origin != NULL ? ", origin uid " : "",
		    w->w_origin != NULL ? w->w_origin : "");
	else
		xasprintf(&who, "sandbox %s (uid %u)", id,
		    (unsigned int)w->w_uid);
	free(id);
	return who;
}

/* "end" is answered once the run's connections are gone. */
static void
watch_try_end(struct watch *w)
{
	if (!w->w_ending || watch_busy(w))
		return;
	w->w_ending = false;
	watch_send(w, json_pack("{s:s}", "event", "end"));
}

/*
 * A malformed line from w's run (why): its channel is closed, logged,
 * and the connections held for its answers refused; its live rules go
 * with it.
 */
static void
watch_bad(struct watch *w, const char *why)
{
	char	*who = watch_who(w);

	log_warnx("proxy: the run channel of %s: %s; closed", who, why);
	free(who);
	watch_unlist(w);
	watch_refuse_asks(w);
	bufferevent_disable(w->w_bev, EV_READ);
	watch_send(w, json_pack("{s:s, s:s}", "event", "closed", "reason",
	    why));
	w->w_closing = true;
}

static void
watch_read_cb(struct bufferevent *bev, void *arg)
{
	struct watch		*w = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct watch_msg	 m;
	char			*line, *cause;
	size_t			 len;

	while (w->w_listed && (line = evbuffer_readln(in, &len,
	    EVBUFFER_EOL_LF)) != NULL) {
		if (watch_msg_parse(line, len, &m, &cause) == -1) {
			watch_bad(w, cause);
			free(cause);
		} else
			watch_message(w, &m);
		free(line);
	}
	if (w->w_listed && evbuffer_get_length(in) > WATCH_MSG_MAX)
		watch_bad(w, "a line longer than the longest message");
	if (!w->w_listed)
		evbuffer_drain(in, evbuffer_get_length(in));
}

static void
watch_write_cb(struct bufferevent *bev, void *arg)
{
	struct watch	*w = arg;

	(void)bev;
	if (w->w_closing)
		watch_free(w);
}

static void
watch_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	watch_free(arg);
}

/*
 * Takes over c's client (its header read, naming the run's id) as the
 * run's channel, and frees c, which logs nothing: it went nowhere.
 */
void
watch_start(struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	struct watch	*w;
	struct egress	 e;
	const char	*why = NULL;

	watch_key(c, &e);
	if (!c->c_peer.lp_known && c->c_identity == NULL)
		why = "this listener gives no peer credentials (TCP): a run's "
		    "channel needs its uid or a client certificate; use "
		    "--listen-sandbox unix:PATH or tls:HOST:PORT";
	else if (px->px_nwatches >= px->px_max)
		why = "too many runs' channels (--max-conns)";
	else if (watch_find(px, &e) != NULL)
		why = "this run (its uid or identity, and id) has its channel "
		    "open already";
	w = xcalloc(1, sizeof(*w));
	w->w_proxy = px;
	w->w_bev = c->c_bev;
	w->w_fd = c->c_fd;
	w->w_uid = c->c_peer.lp_uid;
	if (c->c_identity != NULL) {
		w->w_identity = xstrdup(c->c_identity);
		if (c->c_origin_uid != NULL)
			w->w_origin = xstrdup(c->c_origin_uid);
	}
	snprintf(w->w_id, sizeof(w->w_id), "%s", c->c_sandbox);
	c->c_bev = NULL;
	c->c_fd = -1;
	conn_free(c);

	bufferevent_setcb(w->w_bev, watch_read_cb, watch_write_cb,
	    watch_event_cb, w);
	bufferevent_set_timeouts(w->w_bev, NULL, NULL);
	bufferevent_setwatermark(w->w_bev, EV_WRITE, 0, 0);
	evbuffer_add(bufferevent_get_output(w->w_bev), PP2_WATCH_HELLO,
	    strlen(PP2_WATCH_HELLO));
	if (why != NULL) {
		watch_send(w, json_pack("{s:s, s:s}", "event", "closed",
		    "reason", why));
		w->w_closing = true;
	} else {
		TAILQ_INSERT_TAIL(&px->px_watches, w, w_entry);
		px->px_nwatches++;
		w->w_listed = true;
	}
	bufferevent_enable(w->w_bev, EV_READ | EV_WRITE);
	/* What came with the header ({"ask": SECS}) is read now. */
	if (w->w_listed)
		watch_read_cb(w->w_bev, w);
}

/* A string for JSON: NULL as null, bytes JSON cannot take escaped. */
static json_t *
watch_str(const char *s)
{
	json_t	*j;
	char	*e;

	if (s == NULL)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	e = str_escape(s, strlen(s));
	j = json_string(e);
	free(e);
	return j != NULL ? j : json_null();
}

/*
 * Whether the proxy's own policy would have allowed what c's run
 * refused itself with its own rules (conn_narrow.c): then the run can
 * change it; otherwise only the operator can.
 */
static bool
watch_by_run(const struct conn *c)
{
	struct decision	 d;
	bool		 ok;

	if ((c->c_narrow.cn_rules == NULL && c->c_narrow.cn_live == NULL) ||
	    c->c_narrow.cn_base == NULL || !c->c_judged)
		return false;
	memset(&d, 0, sizeof(d));
	ok = policy_match_host(c->c_narrow.cn_base->pp_policy, c->c_host,
	    c->c_hostlen, c->c_port, &d);
	decision_clear(&d);
	return ok;
}

/*
 * Tells the channels of c's run (its uid and id) of its decision e, as
 * logged; hint and pattern as for hk_observe.
 */
void
watch_observe(const struct conn *c, const struct egress *e, const char *hint,
    const char *pattern)
{
	struct proxy	*px = c->c_proxy;
	struct watch	*w;
	char		*host;
	bool		 by_run = false, decided = false;

	if (px->px_nwatches == 0 || e->e_sandbox == NULL)
		return;
	host = str_escape(e->e_host != NULL ? e->e_host : "",
	    e->e_host != NULL ? e->e_hostlen : 0);
	TAILQ_FOREACH(w, &px->px_watches, w_entry) {
		if (!watch_is_run(w, e))
			continue;
		if (!decided && !e->e_allow)
			by_run = watch_by_run(c);
		decided = true;
		watch_send(w, json_pack("{s:s, s:s, s:i, s:o, s:o, s:b, s:o, "
		    "s:o, s:o, s:o, s:o, s:b, s:I, s:I}", "event", "decision",
		    "host", host, "port", e->e_port,
		    "protocol", watch_str(e->e_proto),
		    "method", watch_str(e->e_method), "allow", e->e_allow,
		    "reason", watch_str(e->e_reason),
		    "rule", watch_str(e->e_rule),
		    "rule_from", watch_str(e->e_rule_from),
		    "fix", watch_str(hint), "pattern", watch_str(pattern),
		    "by_run", by_run, "up", (json_int_t)e->e_up,
		    "down", (json_int_t)e->e_down));
	}
	free(host);
}

/* c of a run is gone: a channel waiting for its end may be answered. */
void
watch_conn_gone(const struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	struct watch	*w;
	struct egress	 e;

	if (px->px_nwatches == 0 || c->c_sandbox == NULL)
		return;
	watch_key(c, &e);
	TAILQ_FOREACH(w, &px->px_watches, w_entry)
		if (w->w_ending && watch_is_run(w, &e))
			watch_try_end(w);
}

/* Answers the run's rule message n (-1: none) with error why or ok. */
static void
watch_rule_said(struct watch *w, bool allow, const char *pattern,
    long long n, const char *why)
{
	json_t	*doc;

	doc = json_pack("{s:s, s:s, s:o}", "event", "rule",
	    allow ? "allow" : "deny", pattern, "error", why != NULL ?
	    json_string(why) : json_null());
	if (n >= 0)
		json_object_set_new(doc, "n", json_integer((json_int_t)n));
	watch_send(w, doc);
}

/*
 * Why the operator's policy base does not allow pattern it (a run's
 * live allow), as a new string, or NULL: some of it is allowed.  Only
 * the meet with base's allow entries counts (policy_merge_live), and an exact
 * name is decided as base would decide it, naming base's rule.
 */
static char *
watch_rule_outside(const struct policy *base, const struct pitem *it)
{
	struct decision	 d;
	struct pitem	 tmp;
	char		*what = NULL, *why;
	size_t		 i;
	bool		 any = false;

	for (i = 0; i < base->p_allow.pl_n && !any; i++)
		if ((any = policy_match_intersect(&base->p_allow.pl_v[i], it, &tmp)))
			policy_pitem_clear(&tmp);
	if (it->pi_kind == PAT_NAME || it->pi_kind == PAT_ADDR) {
		memset(&d, 0, sizeof(d));
		if (!policy_match_host(base, it->pi_host, strlen(it->pi_host),
		    it->pi_port > 0 ? it->pi_port : 443, &d))
			what = decision_describe(&d);
		decision_clear(&d);
	}
	if (what == NULL && !any)
		xasprintf(&what, "deny %s: no network.allow entry admits any "
		    "of it (default deny)", it->pi_text);
	if (what == NULL)
		return NULL;
	xasprintf(&why, "the operator's proxy refuses it (%s): only its "
	    "operator can allow it; a run's rules only narrow the operator's "
	    "policy", what);
	free(what);
	return why;
}

/* Removes the entries written as text from pl. */
static void
watch_rule_drop(struct plist *pl, const char *text)
{
	size_t	 i;

	for (i = 0; i < pl->pl_n; )
		if (strcmp(pl->pl_v[i].pi_text, text) == 0) {
			policy_pitem_clear(&pl->pl_v[i]);
			pl->pl_v[i] = pl->pl_v[--pl->pl_n];
		} else
			i++;
}

/*
 * A live rule of w's run: allow or deny pattern from now on, for its
 * connections alone (the latest rule for the same pattern wins).  An
 * allow outside the operator's policy is refused.  Returns 0, or -1
 * having answered why (n: the run's number for it, or -1).
 */
static int
watch_rule(struct watch *w, bool allow, const char *pattern, long long n)
{
	const struct policy	*base = w->w_proxy->px_policy->pp_policy;
	struct policy		*p;
	struct pitem		 it;
	char			*why = NULL, *id;

	memset(&it, 0, sizeof(it));
	if (policy_parse_pattern(pattern, &it, &why) == -1)
		;
	else if (allow)
		why = watch_rule_outside(base, &it);
	if (why == NULL && w->w_live != NULL &&
	    w->w_live->pp_policy->p_allow.pl_n +
	    w->w_live->pp_policy->p_deny.pl_n >= WATCH_RULES_MAX)
		xasprintf(&why, "more than %d live rules", WATCH_RULES_MAX);
	if (why != NULL) {
		watch_rule_said(w, allow, pattern, n, why);
		free(why);
		policy_pitem_clear(&it);
		return -1;
	}
	p = policy_new();
	if (w->w_live != NULL)
		policy_merge(p, w->w_live->pp_policy);
	watch_rule_drop(&p->p_allow, it.pi_text);
	watch_rule_drop(&p->p_deny, it.pi_text);
	it.pi_from = xstrdup("the run's control channel");
	*policy_plist_add(allow ? &p->p_allow : &p->p_deny) = it;
	proxy_policy_unref(w->w_live);
	w->w_live = proxy_policy_new(p);
	id = watch_who(w);
	log_info("proxy: %s: %s %s, from its run", id, allow ? "allow" :
	    "deny", it.pi_text);
	free(id);
	watch_rule_said(w, allow, it.pi_text, n, NULL);
	return 0;
}

/* The run's answer for the connection held as id (late ones dropped). */
static void
watch_answer(struct watch *w, const struct watch_msg *m)
{
	struct conn	*c;
	char		*pattern;
	size_t		 i;
	bool		 ok;

	for (i = 0; i < w->w_nasks; i++)
		if (strcmp(w->w_asks[i].wa_id, m->wm_text) == 0)
			break;
	if (i == w->w_nasks)
		return;		/* timed out, or its client went */
	c = w->w_asks[i].wa_conn;
	w->w_asks[i] = w->w_asks[--w->w_nasks];
	switch (m->wm_decision) {
	case WMD_ALLOW_ONCE:
		conn_dial_answer(c, true, "allowed once by the run's harness "
		    "(--ask)");
		break;
	case WMD_ALLOW_RUN:
		pattern = conn_pattern(c);
		ok = pattern != NULL && watch_rule(w, true, pattern, -1) == 0;
		free(pattern);
		conn_dial_answer(c, ok, "allowed for the run by its harness "
		    "(--ask)");
		break;
	default:
		conn_dial_answer(c, false, NULL);
		break;
	}
}

/* One message of w's run, read. */
static void
watch_message(struct watch *w, const struct watch_msg *m)
{
	switch (m->wm_kind) {
	case WM_END:
		w->w_ending = true;
		watch_try_end(w);
		break;
	case WM_ASK:
		w->w_ask_secs = m->wm_secs;
		watch_send(w, json_pack("{s:s, s:i}", "event", "asking",
		    "secs", m->wm_secs));
		break;
	case WM_ALLOW:
	case WM_DENY:
		watch_rule(w, m->wm_kind == WM_ALLOW, m->wm_text, m->wm_n);
		break;
	case WM_ANSWER:
		watch_answer(w, m);
		break;
	}
}

/*
 * Whether c's run said that it keeps a channel (PP2_TYPE_CORDON_CHANNEL)
 * and none is open here: its live rules unknown, c is refused.
 */
bool
watch_missing(const struct conn *c)
{
	return watch_of(c) == NULL;
}

/* The live rules of c's run (conn_accept_table's ct_live), or NULL. */
struct ppolicy *
watch_live(const struct conn *c)
{
	struct watch	*w = watch_of(c);

	return w != NULL ? w->w_live : NULL;
}

/*
 * Whether a name c's run refused by its own narrowing (no rule of the
 * run's admits it) resolves, so that the connection that follows can be
 * asked about: the run asks, and the operator's policy allows the name.
 */
bool
watch_asks_name(const struct conn *c)
{
	struct watch	*w = watch_of(c);
	struct decision	 d;
	bool		 ok;

	if (w == NULL || w->w_ask_secs == 0 || c->c_narrow.cn_base == NULL)
		return false;
	memset(&d, 0, sizeof(d));
	ok = policy_match_name(c->c_narrow.cn_base->pp_policy, c->c_host,
	    c->c_hostlen, &d);
	decision_clear(&d);
	return ok;
}

/*
 * cordon proxy's hk_ask: a connection that c's run refused by its own
 * narrowing, and that the operator's policy allows, is held while that
 * run is asked, if it asks (--ask).  Returns the seconds it is held, or
 * 0: refused now.
 */
int
watch_ask(struct conn *c, const struct egress *e, void *arg)
{
	struct watch		*w = watch_of(c);
	struct watch_ask	*wa;
	char			*host;

	(void)arg;
	if (w == NULL || w->w_ask_secs == 0 || w->w_nasks >= WATCH_ASKS_MAX ||
	    !watch_by_run(c))
		return 0;
	wa = &w->w_asks[w->w_nasks++];
	snprintf(wa->wa_id, sizeof(wa->wa_id), "p%lu", ++w->w_seq);
	wa->wa_conn = c;
	host = str_escape(e->e_host != NULL ? e->e_host : "",
	    e->e_host != NULL ? e->e_hostlen : 0);
	watch_send(w, json_pack("{s:s, s:s, s:s, s:i, s:o, s:i}", "event",
	    "ask", "id", wa->wa_id, "host", host, "port", e->e_port,
	    "protocol", watch_str(e->e_proto), "timeout_secs",
	    w->w_ask_secs));
	free(host);
	return w->w_ask_secs;
}

/* cordon proxy's hk_ask_cancel: c, held, went or timed out. */
void
watch_ask_cancel(struct conn *c, void *arg)
{
	struct watch	*w = watch_of(c);
	size_t		 i;

	(void)arg;
	if (w == NULL)
		return;
	for (i = 0; i < w->w_nasks; i++)
		if (w->w_asks[i].wa_conn == c) {
			watch_send(w, json_pack("{s:s, s:s}", "event",
			    "unasked", "id", w->w_asks[i].wa_id));
			w->w_asks[i] = w->w_asks[--w->w_nasks];
			return;
		}
}

/* Closes every channel (the proxy ends). */
void
watch_close_all(struct proxy *px)
{
	while (px->px_nwatches > 0)
		watch_free(TAILQ_FIRST(&px->px_watches));
}
