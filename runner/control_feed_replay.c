/*
 * control_feed_replay.c: a run's channel to the operator's proxy that ends
 * before the run does (the replica behind a load balancer killed, the
 * local proxy restarted) is reopened, and the harness's live rules are
 * replayed on it, so that a live deny is never silently lost.  The rules
 * the proxy applied are kept here as they are sent, in order; on a loss
 * the relay to a tier (--proxy tls://, bridge/tlsup.c) holds the
 * sandbox's new connections (when the run has --control or --ask: live
 * rules or questions that the next replica must know), the channel is
 * dialled again with a short backoff for FEED_REOPEN_SECS at most, with
 * the preflight and every kept rule in one write, and the held
 * connections go on once the proxy has answered the last of them.  A
 * replayed rule the proxy refuses is told to the harness; one it applies
 * is not told again.  A channel that cannot be reopened leaves the held
 * and later connections refused (fail closed), and the run says so.
 *
 * With --proxy-socket the sandbox reaches the operator's socket itself,
 * not through this process: there is nothing here to hold, and the
 * proxy refuses a run's connections while the channel of a run that has
 * one is not open (the header says so, proxy/watch.c).
 *
 * Runs in: cordon run on the host, on its event loop.
 */
#include <sys/types.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include <jansson.h>

#include "bridge/tlsup.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "runner/control.h"
#include "runner/run_host.h"
#include "runner/runner.h"

#define FEED_REOPEN_SECS	10	/* all the tries of one loss */
#define FEED_REOPEN_FIRST_MS	100	/* the first wait, doubled */
#define FEED_REOPEN_MAX_MS	2000	/* the longest wait */
#define FEED_LOSSES_MAX		8	/* reopened channels in a run */

/* A live rule the proxy applied (or one waiting to be sent: fresh). */
struct feed_rule {
	bool		 fr_allow;
	char		*fr_pattern;
	long long	 fr_n;		/* its number as last sent, or -1 */
	bool		 fr_fresh;	/* the harness waits for its answer */
};

struct feed_replay {
	struct feed_rule	*fy_v;
	size_t			 fy_n;
	struct event		*fy_timer;
	struct timespec		 fy_since;	/* the loss */
	unsigned int		 fy_wait_ms;
	int			 fy_tries;
	int			 fy_losses;
	long long		 fy_last;	/* n of the last replayed */
	bool			 fy_reopening;
	bool			 fy_held;	/* the relay holds */
	bool			 fy_failed;
	char			*fy_why;	/* why it was lost */
	const struct feed_ops	*fy_ops;	/* the feed's dial, start */
};

static struct feed_replay *
control_feed_replay(struct runner *rn)
{
	if (rn->rn_replay == NULL)
		rn->rn_replay = xcalloc(1, sizeof(*rn->rn_replay));
	return rn->rn_replay;
}

/* Forgets rule i of fy. */
static void
control_feed_forget(struct feed_replay *fy, size_t i)
{
	free(fy->fy_v[i].fr_pattern);
	memmove(&fy->fy_v[i], &fy->fy_v[i + 1], (fy->fy_n - i - 1) *
	    sizeof(*fy->fy_v));
	fy->fy_n--;
}

/*
 * Rule i was applied: the earlier rules for its pattern go, as the
 * proxy's do.  Not before its answer: a rule the proxy refuses (an
 * allow past the operator's policy, one past its 256) leaves the
 * earlier one in force there, so it stays here to be replayed.
 */
static void
control_feed_applied(struct feed_replay *fy, size_t i)
{
	size_t	 j;

	for (j = 0; j < i; )
		if (strcmp(fy->fy_v[j].fr_pattern, fy->fy_v[i].fr_pattern) ==
		    0) {
			control_feed_forget(fy, j);
			i--;
		} else
			j++;
}

/*
 * Whether no rule more can be kept (FEED_KEPT_MAX: the proxy's 256 that
 * it applied and those it has not answered): the harness's next one is
 * refused, not kept at the cost of one in force.
 */
bool
control_feed_replay_full(const struct runner *rn)
{
	return rn->rn_replay != NULL && rn->rn_replay->fy_n >= FEED_KEPT_MAX;
}

/*
 * Keeps a live rule sent as n (0: not sent yet, the channel reopening;
 * -1: the proxy's own, an --ask answer "allow-run"), in order, after
 * the earlier rules for its pattern, which go once the proxy applied it
 * (control_feed_applied).
 */
void
control_feed_replay_keep(struct runner *rn, bool allow, const char *pattern,
    long long n)
{
	struct feed_replay	*fy = control_feed_replay(rn);
	struct feed_rule	*fr;

	fy->fy_v = xreallocarray(fy->fy_v, fy->fy_n + 1, sizeof(*fy->fy_v));
	fr = &fy->fy_v[fy->fy_n++];
	fr->fr_allow = allow;
	fr->fr_pattern = xstrdup(pattern);
	fr->fr_n = n;
	fr->fr_fresh = n >= 0;
}

/* Whether the channel is being reopened (a rule sent now waits). */
bool
control_feed_replay_reopening(const struct runner *rn)
{
	return rn->rn_replay != NULL && rn->rn_replay->fy_reopening;
}

/* The channel is back and has every rule: the held connections go. */
static void
control_feed_restored(struct runner *rn)
{
	struct feed_replay	*fy = rn->rn_replay;
	char			*why;

	fy->fy_last = 0;
	if (fy->fy_held)
		tlsup_gate(rn->rn_remote, TLSUP_PASS);
	fy->fy_held = false;
	xasprintf(&why, "reopened after %d %s, %zu live %s replayed",
	    fy->fy_tries, fy->fy_tries == 1 ? "try" : "tries", fy->fy_n,
	    fy->fy_n == 1 ? "rule" : "rules");
	log_warnx("run: the run's channel to the operator's proxy is open "
	    "again (%s)", why);
	control_send(rn->rn_control, json_pack("{s:s, s:s, s:s}", "event",
	    "channel", "state", "restored", "reason", why));
	free(why);
}

/*
 * The proxy's answer to rule n (-1: its own), refused for why (or NULL):
 * the kept rules follow it.  Returns whether the harness is told; a
 * replayed rule is told only if refused, as a "rule" event.
 */
bool
control_feed_replay_kept(struct runner *rn, bool allow, const char *pattern,
    long long n, const char *why)
{
	struct feed_replay	*fy = control_feed_replay(rn);
	struct feed_rule	*fr = NULL;
	size_t			 i;
	bool			 tell = true;

	for (i = 0; n >= 0 && i < fy->fy_n; i++)
		if (fy->fy_v[i].fr_n == n) {
			fr = &fy->fy_v[i];
			break;
		}
	if (fr == NULL && n < 0 && why == NULL) {
		control_feed_replay_keep(rn, allow, pattern, -1);
		control_feed_applied(fy, fy->fy_n - 1);
	} else if (fr != NULL) {
		tell = fr->fr_fresh;
		fr->fr_fresh = false;
		if (!tell && why != NULL)
			control_send(rn->rn_control, json_pack("{s:s, s:s, "
			    "s:b, s:s}", "event", "rule", allow ? "allow" :
			    "deny", pattern, "replayed", 1, "error", why));
		if (!tell && why != NULL)
			log_warnx("run: the live rule %s %s, replayed on the "
			    "reopened channel, was refused: %s", allow ?
			    "allow" : "deny", pattern, why);
		if (why != NULL)
			control_feed_forget(fy, i);
		else
			control_feed_applied(fy, i);
	}
	if (n > 0 && n == fy->fy_last)
		control_feed_restored(rn);
	return tell;
}

/* Milliseconds since the loss. */
static long long
control_feed_lost_ms(const struct feed_replay *fy)
{
	return clock_ms_since(&fy->fy_since);
}

/*
 * The rules the harness sent that the proxy never answered (the channel
 * could not be reopened, or the run ended first): each told once, as
 * refused with why, since none of them reached a proxy.
 */
static void
control_feed_unanswered(struct runner *rn, const char *why)
{
	struct feed_replay	*fy = rn->rn_replay;
	struct feed_rule	*fr;
	char			*msg;
	size_t			 i;

	for (i = 0; i < fy->fy_n; i++) {
		fr = &fy->fy_v[i];
		if (!fr->fr_fresh)
			continue;
		fr->fr_fresh = false;
		xasprintf(&msg, "%s %s: %s; nothing changed", fr->fr_allow ?
		    "allow" : "deny", fr->fr_pattern, why);
		control_tell_said(rn, fr->fr_allow, fr->fr_pattern, msg);
		free(msg);
	}
}

/* No channel: the held and later connections refused, and said. */
static void
control_feed_failed(struct runner *rn)
{
	struct feed_replay	*fy = rn->rn_replay;
	char			*why;

	fy->fy_reopening = false;
	fy->fy_failed = true;
	if (fy->fy_held)
		tlsup_gate(rn->rn_remote, TLSUP_REFUSE);
	xasprintf(&why, "the run's channel to the operator's proxy (%s) "
	    "could not be reopened (%d tries in %lld ms)%s", fy->fy_why,
	    fy->fy_tries, control_feed_lost_ms(fy), fy->fy_held ? ": the run's "
	    "new connections are refused, since its live rules cannot be "
	    "applied" : "");
	log_warnx("run: %s", why);
	log_warnx("hint: the proxy (%s) must be up and reachable; the "
	    "summary and --report miss what it decided since",
	    rn->rn_net->net_socket);
	control_send(rn->rn_control, json_pack("{s:s, s:s, s:s}", "event",
	    "channel", "state", "failed", "reason", why));
	free(why);
	control_feed_unanswered(rn, "the run's channel to the operator's proxy "
	    "could not be reopened");
}

/* The kept rules, renumbered, as lines for the preflight (caller frees). */
static char *
control_feed_replay_lines(struct runner *rn)
{
	struct feed_replay	*fy = rn->rn_replay;
	struct feed_rule	*fr;
	char			*lines = xstrdup(""), *line, *text;
	json_t			*doc;
	size_t			 i;

	fy->fy_last = 0;
	for (i = 0; i < fy->fy_n; i++) {
		fr = &fy->fy_v[i];
		fr->fr_n = (long long)++rn->rn_seq;
		doc = json_pack("{s:s, s:I}", fr->fr_allow ? "allow" : "deny",
		    fr->fr_pattern, "n", (json_int_t)fr->fr_n);
		if ((text = json_dumps(doc, JSON_COMPACT)) == NULL)
			fatalx("run: cannot write a live rule");
		json_decref(doc);
		xasprintf(&line, "%s%s\n", lines, text);
		free(text);
		free(lines);
		lines = line;
		fy->fy_last = fr->fr_n;
	}
	return lines;
}

/* One try to reopen the channel; the next one later, or give up. */
static void
control_feed_retry_cb(int fd, short what, void *arg)
{
	struct runner		*rn = arg;
	struct feed_replay	*fy = rn->rn_replay;
	struct timeval		 tv;
	char			*lines;
	int			 rc;

	(void)fd;
	(void)what;
	/* Reopened, but the replayed rules were not all answered. */
	if (!rn->rn_done && !fy->fy_reopening && fy->fy_last != 0)
		control_feed_replay_lost(rn, "no answer to the replayed live "
		    "rules", fy->fy_ops);
	if (rn->rn_done || !fy->fy_reopening)
		return;
	fy->fy_tries++;
	lines = control_feed_replay_lines(rn);
	rc = fy->fy_ops->fo_dial(rn, lines, true);
	free(lines);
	if (rc == 0) {
		fy->fy_reopening = false;
		rn->rn_feed_ended = false;
		tv.tv_sec = FEED_REOPEN_SECS;
		tv.tv_usec = 0;
		if (fy->fy_last == 0)
			control_feed_restored(rn);
		else
			evtimer_add(fy->fy_timer, &tv);
		fy->fy_ops->fo_start(rn);
		return;
	}
	if (control_feed_lost_ms(fy) + fy->fy_wait_ms >
	    FEED_REOPEN_SECS * 1000) {
		control_feed_failed(rn);
		return;
	}
	tv.tv_sec = fy->fy_wait_ms / 1000;
	tv.tv_usec = (fy->fy_wait_ms % 1000) * 1000;
	evtimer_add(fy->fy_timer, &tv);
	if ((fy->fy_wait_ms *= 2) > FEED_REOPEN_MAX_MS)
		fy->fy_wait_ms = FEED_REOPEN_MAX_MS;
}

/*
 * The channel ended before the run (why): the relay holds new
 * connections if the run has a harness, and the channel is reopened.
 */
void
control_feed_replay_lost(struct runner *rn, const char *why,
    const struct feed_ops *ops)
{
	struct feed_replay	*fy = control_feed_replay(rn);
	const struct run_net	*net = rn->rn_net;
	struct timeval		 now = { 0, 0 };
	size_t			 i;

	if (rn->rn_feed != NULL)
		bufferevent_free(rn->rn_feed);
	rn->rn_feed = NULL;
	rn->rn_feed_ended = true;
	/* What the lost proxy asked went with it. */
	for (i = 0; i < rn->rn_nasks; )
		if (rn->rn_asks[i].as_conn == NULL)
			rn->rn_asks[i] = rn->rn_asks[--rn->rn_nasks];
		else
			i++;
	if (fy->fy_reopening || fy->fy_failed)
		return;
	fy->fy_ops = ops;
	free(fy->fy_why);
	fy->fy_why = xstrdup(why);
	fy->fy_tries = 0;
	fy->fy_wait_ms = FEED_REOPEN_FIRST_MS;
	clock_gettime(CLOCK_MONOTONIC, &fy->fy_since);
	fy->fy_held = rn->rn_remote != NULL && (net->net_control != NULL ||
	    net->net_ask);
	if (fy->fy_held)
		tlsup_gate(rn->rn_remote, TLSUP_HOLD);
	log_warnx("run: the proxy closed the run's channel (%s); reopening "
	    "it%s", why, fy->fy_held ? ", the run's new connections held "
	    "until its live rules are back" : "");
	control_send(rn->rn_control, json_pack("{s:s, s:s, s:s}", "event",
	    "channel", "state", "lost", "reason", why));
	if (++fy->fy_losses > FEED_LOSSES_MAX) {
		free(fy->fy_why);
		xasprintf(&fy->fy_why, "%s; lost %d times in this run", why,
		    fy->fy_losses);
		control_feed_failed(rn);
		return;
	}
	fy->fy_reopening = true;
	if (fy->fy_timer == NULL && (fy->fy_timer = evtimer_new(rn->rn_base,
	    control_feed_retry_cb, rn)) == NULL)
		fatalx("run: cannot make a timer");
	evtimer_add(fy->fy_timer, &now);
}

/* The run ends: no more tries; what was lost is said with the summary. */
void
control_feed_replay_end(struct runner *rn)
{
	struct feed_replay	*fy = rn->rn_replay;
	size_t			 i;

	if (fy == NULL)
		return;
	if (fy->fy_reopening) {
		log_warnx("run: the run ended while its channel to the "
		    "operator's proxy was being reopened (%s): the summary "
		    "and --report miss what it decided since", fy->fy_why);
		control_feed_unanswered(rn, "the run ended while its channel "
		    "to the operator's proxy was being reopened");
	} else if (fy->fy_failed && rn->rn_remote != NULL &&
	    tlsup_refused(rn->rn_remote) > 0)
		log_warnx("run: %lu connections refused by the run, its "
		    "channel to the operator's proxy lost (%s)",
		    tlsup_refused(rn->rn_remote), fy->fy_why);
	if (fy->fy_timer != NULL)
		event_free(fy->fy_timer);
	for (i = 0; i < fy->fy_n; i++)
		free(fy->fy_v[i].fr_pattern);
	free(fy->fy_v);
	free(fy->fy_why);
	free(fy);
	rn->rn_replay = NULL;
}
