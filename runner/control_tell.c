/*
 * control_tell.c: what the harness hears of a run's decisions, on the
 * control channel (--control): each refusal as a "refused" event (and
 * every decision counted for the summary), and, with --proxy-socket, the
 * operator's proxy's questions and its answers to the harness's live
 * rules (control_feed.c reads them off the run's channel).
 *
 * Runs in: cordon run on the host, on its event loop.
 */
#include <sys/types.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "proxy/proxy.h"
#include "runner/control.h"
#include "runner/run_host.h"
#include "runner/runner.h"
#include "runner/tally.h"

#define RUN_LIVE_MAX	5	/* live lines in a window, at most */
#define RUN_LIVE_MS	10000	/* ... of this long */

/*
 * Does a program hold the terminal that is cordon's stderr, reading
 * each key as it comes (ICANON off: a full-screen program such as an
 * agent's, or a shell at its prompt)?  A line written now would land in
 * the middle of its screen.
 */
static bool
control_tell_tty_held(void)
{
	struct termios	 t;

	return tcgetattr(STDERR_FILENO, &t) == 0 && !(t.c_lflag & ICANON);
}

/*
 * A target refused for the first time in a whole run (fresh): said on
 * stderr at once, so that the user sees it while the agent works, not
 * only in the summary at its end.  At most RUN_LIVE_MAX in RUN_LIVE_MS:
 * a command that tries hundreds of hosts does not flood the terminal,
 * and the next line says how many were left out.  Not in a session
 * (each command's stderr hears its own at its end) nor with --quiet;
 * held back, and counted the same way, while a program holds the
 * terminal.
 */
void
control_tell_live(struct runner *rn, const struct egress *e,
    const char *hint, bool fresh)
{
	if (!fresh || rn->rn_net->net_quiet ||
	    rn->rn_run->r_session_opts != NULL)
		return;
	if (control_tell_tty_held()) {
		rn->rn_live_held++;
		return;
	}
	if (rn->rn_live_n == 0 || clock_ms_since(&rn->rn_live_at) >=
	    RUN_LIVE_MS) {
		clock_gettime(CLOCK_MONOTONIC, &rn->rn_live_at);
		rn->rn_live_n = 0;
	}
	if (rn->rn_live_n >= RUN_LIVE_MAX) {
		rn->rn_live_held++;
		return;
	}
	rn->rn_live_n++;
	if (rn->rn_live_held > 0) {
		fprintf(stderr, "cordon: refused %u more target%s meanwhile "
		    "(the summary at the end lists them)\n", rn->rn_live_held,
		    rn->rn_live_held == 1 ? "" : "s");
		rn->rn_live_held = 0;
	}
	tally_line(e, hint, stderr);
}

/* Each decision of the run's proxy: counted, and told to the harness. */
void
control_tell_observe(const struct egress *e, const char *hint,
    const char *pattern, void *arg)
{
	struct runner	*rn = arg;
	char		*host, id[24];

	control_tell_live(rn, e, hint, tally_add(rn->rn_tally, e, hint,
	    pattern));
	keeper_tally(rn, e, hint, pattern);
	if (e->e_allow || !control_alive(rn->rn_control))
		return;
	host = str_escape(e->e_host != NULL ? e->e_host : "",
	    e->e_host != NULL ? e->e_hostlen : 0);
	snprintf(id, sizeof(id), "r%lu", ++rn->rn_seq);
	control_send(rn->rn_control, json_pack("{s:s, s:s, s:s, s:i, s:s, "
	    "s:s, s:o, s:o, s:o}", "event", "refused", "id", id,
	    "host", host, "port", e->e_port,
	    "protocol", e->e_proto != NULL ? e->e_proto : "",
	    "reason", e->e_reason != NULL ? e->e_reason : "refused",
	    "rule", e->e_rule != NULL ? json_string(e->e_rule) : json_null(),
	    "fix", hint != NULL ? json_string(hint) : json_null(),
	    "allow", pattern != NULL ? json_string(pattern) : json_null()));
	free(host);
}

/* The operator's proxy applied the run's rule, or refused it (why). */
void
control_tell_said(struct runner *rn, bool allow, const char *pattern,
    const char *why)
{
	json_t	*line;
	char	*text;

	if (why == NULL) {
		log_info("run: %s %s, from the control channel, in the "
		    "operator's proxy", allow ? "allow" : "deny", pattern);
		control_send(rn->rn_control, json_pack("{s:s, s:s}", "event",
		    "applied", allow ? "allow" : "deny", pattern));
		return;
	}
	line = json_pack("{s:s}", allow ? "allow" : "deny", pattern);
	text = json_dumps(line, JSON_COMPACT);
	json_decref(line);
	control_send(rn->rn_control, json_pack("{s:s, s:s, s:s}", "event",
	    "error", "message", why, "line", text != NULL ? text : ""));
	free(text);
}

/* The operator's proxy holds a connection and asks (as id). */
void
control_tell_ask(struct runner *rn, const char *id,
    const struct egress *e, int secs)
{
	struct ask	*as;

	rn->rn_asks = xreallocarray(rn->rn_asks, rn->rn_nasks + 1,
	    sizeof(*rn->rn_asks));
	as = &rn->rn_asks[rn->rn_nasks++];
	memset(as, 0, sizeof(*as));
	snprintf(as->as_id, sizeof(as->as_id), "a%lu", ++rn->rn_seq);
	snprintf(as->as_remote, sizeof(as->as_remote), "%s", id);
	control_send(rn->rn_control, json_pack("{s:s, s:s, s:s, s:i, s:s, "
	    "s:i}", "event", "ask", "id", as->as_id, "host", e->e_host,
	    "port", e->e_port, "protocol", e->e_proto != NULL ?
	    e->e_proto : "", "timeout_secs", secs));
}

/* The operator's proxy no longer holds what it asked as id. */
void
control_tell_gone(struct runner *rn, const char *id)
{
	size_t	 i;

	for (i = 0; i < rn->rn_nasks; i++)
		if (rn->rn_asks[i].as_conn == NULL &&
		    strcmp(rn->rn_asks[i].as_remote, id) == 0) {
			rn->rn_asks[i] = rn->rn_asks[--rn->rn_nasks];
			return;
		}
}
