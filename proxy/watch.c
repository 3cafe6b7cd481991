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
 * theirs.  On TCP there is no uid: such a channel is answered, then
 * closed.  A channel that does not read has its lines dropped past
 * WATCH_BUFFER_MAX, never the proxy's memory.
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

#include "conn.h"
#include "jsonl.h"
#include "log.h"
#include "policy.h"
#include "pp2.h"
#include "proxy.h"
#include "util.h"
#include "xmalloc.h"

#define WATCH_BUFFER_MAX	(1024 * 1024)	/* unread lines held */
#define WATCH_INPUT_MAX		256		/* "end\n" is all it reads */

struct watch {
	TAILQ_ENTRY(watch)	 w_entry;
	struct proxy		*w_proxy;
	struct bufferevent	*w_bev;
	int			 w_fd;
	bool			 w_listed;	/* in px_watches */
	bool			 w_closing;	/* freed once written */
	bool			 w_ending;	/* "end" asked, not answered */
	uid_t			 w_uid;
	char			 w_id[PP2_ID_MAX + 1];
	uint64_t		 w_dropped;
};

static void
watch_free(struct watch *w)
{
	struct proxy	*px = w->w_proxy;

	if (w->w_listed) {
		TAILQ_REMOVE(&px->px_watches, w, w_entry);
		px->px_nwatches--;
	}
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

/* Says whether a connection of w's run is still open. */
static bool
watch_busy(const struct watch *w)
{
	const struct conn	*c;

	TAILQ_FOREACH(c, &w->w_proxy->px_conns, c_entry)
		if (c->c_sandbox != NULL && c->c_peer.lp_known &&
		    c->c_peer.lp_uid == w->w_uid &&
		    strcmp(c->c_sandbox, w->w_id) == 0)
			return true;
	return false;
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

static void
watch_read_cb(struct bufferevent *bev, void *arg)
{
	struct watch	*w = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	char		*line;
	size_t		 len;

	while ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		if (strcmp(line, "end") == 0 && w->w_listed) {
			w->w_ending = true;
			watch_try_end(w);
		}
		free(line);
	}
	if (evbuffer_get_length(in) > WATCH_INPUT_MAX)
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
	const char	*why = NULL;

	if (!c->c_peer.lp_known)
		why = "this listener gives no peer credentials (TCP): a run's "
		    "channel needs its uid; use --listen-sandbox unix:PATH";
	else if (px->px_nwatches >= px->px_max)
		why = "too many runs' channels (--max-conns)";
	w = xcalloc(1, sizeof(*w));
	w->w_proxy = px;
	w->w_bev = c->c_bev;
	w->w_fd = c->c_fd;
	w->w_uid = c->c_peer.lp_uid;
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

	if (c->c_narrow.cn_rules == NULL || c->c_narrow.cn_base == NULL ||
	    !c->c_judged)
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

	if (px->px_nwatches == 0 || e->e_sandbox == NULL || !e->e_has_uid)
		return;
	host = str_escape(e->e_host != NULL ? e->e_host : "",
	    e->e_host != NULL ? e->e_hostlen : 0);
	TAILQ_FOREACH(w, &px->px_watches, w_entry) {
		if (w->w_uid != e->e_uid || strcmp(w->w_id, e->e_sandbox) != 0)
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

	if (px->px_nwatches == 0 || c->c_sandbox == NULL)
		return;
	TAILQ_FOREACH(w, &px->px_watches, w_entry)
		if (w->w_ending && c->c_peer.lp_known &&
		    c->c_peer.lp_uid == w->w_uid &&
		    strcmp(c->c_sandbox, w->w_id) == 0)
			watch_try_end(w);
}

/* Closes every channel (the proxy ends). */
void
watch_close_all(struct proxy *px)
{
	while (px->px_nwatches > 0)
		watch_free(TAILQ_FIRST(&px->px_watches));
}
