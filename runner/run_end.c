/*
 * run_end.c: the end of `cordon run`, once the sandbox is gone or could
 * not be made: what it left (why its setup failed, what PID 1 said at
 * the command's end, the guard's check), the agent's and the proxy's
 * last words, the refusal summary and --report, and the one cleanup of
 * what struct runner owns.
 *
 * Runs in: cordon run on the host, after the sandbox ends.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "lib/endpoint.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "runner/control.h"
#include "runner/run_host.h"
#include "runner/runner.h"
#include "runner/tally.h"

/*
 * Copies what the sandbox said about its failure to stderr; returns its
 * first line (without "cordon: run: "), for the report, or NULL.
 */
static char *
run_end_errors(int fd)
{
	char	 buf[4096], *first = NULL, *nl, *text;
	ssize_t	 n;

	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		if (write(2, buf, (size_t)n) == -1)
			break;
		if (first != NULL)
			continue;
		buf[n] = '\0';
		text = buf;
		if (strncmp(text, "cordon: run: ", 13) == 0)
			text += 13;
		if ((nl = strchr(text, '\n')) != NULL)
			*nl = '\0';
		first = xstrdup(text);
	}
	return first;
}

/*
 * Marks each folder the scratch layer held that --keep may keep (keepdir.c:
 * in the home, and neither a persistence point, a folder on PATH or a
 * hidden path nor one that holds one) "keep": true, the others false:
 * the summary suggests --keep only for those; and each that is, or is
 * in, a persistence point "point": true, which the summary names apart.
 */
static void
run_end_keepable(const struct run *run, json_t *doc)
{
	json_t		*a, *e;
	const char	*path;
	size_t		 i;

	a = json_object_get(json_object_get(doc, "scratch"), "written");
	json_array_foreach(a, i, e) {
		if (json_unpack(e, "{s:s}", "path", &path) != 0)
			continue;
		json_object_set_new(e, "keep", json_boolean(
		    json_is_true(json_object_get(e, "folder")) &&
		    keepdir_allowed(run, path)));
		json_object_set_new(e, "point", json_boolean(
		    keepdir_is_point(run, path)));
	}
}

#define RUN_TOLD_MAX	(64 * 1024)	/* what PID 1 says at the end */

/* Reads what PID 1 says at the end; returns false at its EOF or bound. */
static bool
run_told_more(struct runner *rn)
{
	int	 n;

	if (rn->rn_told == NULL && (rn->rn_told = evbuffer_new()) == NULL)
		return false;
	if (evbuffer_get_length(rn->rn_told) >= RUN_TOLD_MAX)
		return false;
	n = evbuffer_read(rn->rn_told, rn->rn_ends[0], RUN_TOLD_MAX);
	return n > 0 || (n == -1 && errno == EINTR);
}

/* What PID 1 said, as one JSON document, or NULL having said why. */
static json_t *
run_told_doc(struct runner *rn)
{
	json_t		*doc;
	json_error_t	 err;
	size_t		 len;

	if (rn->rn_told == NULL ||
	    (len = evbuffer_get_length(rn->rn_told)) == 0)
		return NULL;
	doc = json_loadb((const char *)evbuffer_pullup(rn->rn_told, -1),
	    len, 0, &err);
	if (doc == NULL)
		log_warnx("run: what the sandbox said at its end: %s",
		    err.text);
	return doc;
}

/*
 * PID 1's words at the command's end, read as they come.  With "end" in
 * them PID 1 is alone (sandbox_end_alone): nothing in the sandbox can
 * write any more, so the run is over and its check may begin while
 * PID 1's exit still takes the namespaces down.
 */
void
run_end_told_cb(int fd, short what, void *arg)
{
	struct runner	*rn = arg;
	json_t		*doc;
	int		 status;

	(void)fd;
	(void)what;
	if (run_told_more(rn))
		return;
	event_del(rn->rn_told_ev);
	if ((doc = run_told_doc(rn)) != NULL && json_unpack(doc,
	    "{s:{s:i}}", "end", "status", &status) == 0) {
		rn->rn_status = status;
		rn->rn_alone = rn->rn_done = true;
		event_base_loopexit(rn->rn_base, NULL);
	}
	json_decref(doc);
}

/*
 * What PID 1 said at the command's end (sandbox_end_tell): one JSON
 * document, read in full once PID 1 is alone or gone.
 */
static void
run_end_read(struct runner *rn)
{
	struct run	*run = rn->rn_run;
	json_t		*doc;

	if (rn->rn_ends[0] == -1)
		return;
	while (run_told_more(rn))
		continue;
	if ((doc = run_told_doc(rn)) == NULL)
		return;
	run_end_keepable(run, doc);
	tally_end(rn->rn_tally, doc);
	json_decref(doc);
}

/*
 * PID 1's exit, once it told it was alone: the check ran while the
 * kernel took the sandbox down, and the cleanup waits for it to be done.
 */
static void
run_end_reap(struct runner *rn)
{
	siginfo_t	 si;

	if (!rn->rn_alone)
		return;
	while (waitid(P_PIDFD, (id_t)rn->rn_pidfd, &si, WEXITED) == -1 &&
	    errno == EINTR)
		continue;
}

/*
 * What the sandbox left, read once it is gone: why its setup failed
 * (copied to stderr, its first line kept for the report), what PID 1
 * said at the command's end, and the guard's checks of the writable
 * roots (repositories, and what agents and editors on the host load),
 * which fail the run when they find something.
 */
void
run_end_collect(struct runner *rn)
{
	struct run	*run = rn->rn_run;
	size_t		 told = run->r_guard->g_nhfinds;	/* a session's */

	rn->rn_setup_error = run_end_errors(rn->rn_err[0]);
	close(rn->rn_err[0]);
	rn->rn_err[0] = -1;
	run_end_read(rn);
	/* What it kept may be said too: the remotes a clone adds. */
	if (guard_check(run->r_guard, run->r_sb.sb_id) != 0)
		rn->rn_status = RUN_EXIT_FAILURE;
	guard_print(run->r_guard, stderr);
	if (hostcfg_check(run->r_guard, run->r_sb.sb_id) > 0) {
		hostcfg_print(run->r_guard, told, stderr);
		rn->rn_status = RUN_EXIT_FAILURE;
	}
	sentinel_done(&rn->rn_sentinel);
	run_end_reap(rn);
}

/* The refusal summary on stderr (unless --quiet), and --report. */
static void
run_end_report(struct runner *rn)
{
	struct run		*run = rn->rn_run;
	const struct run_net	*net = rn->rn_net;
	struct report_info	 ri;
	char			*cause;

	tally_hidden(rn->rn_tally, run->r_hidden_cfg, run->r_nhidden_cfg);
	tally_tokens(rn->rn_tally, run_secrets_json(run));
	if (run->r_session_opts != NULL)
		tally_session(rn->rn_tally);
	if (!net->net_quiet)
		tally_summary(rn->rn_tally, stderr);
	/* Held back, it was not done: said even with --quiet. */
	if (run->r_gitwrite != NULL)
		gitwrite_print(run->r_gitwrite, 0, stderr);
	tally_hooks(rn->rn_tally, stderr);
	if (net->net_report == NULL)
		return;
	memset(&ri, 0, sizeof(ri));
	ri.ri_run = run;
	ri.ri_status = rn->rn_status;
	ri.ri_duration_ms = clock_ms_since(&rn->rn_start);
	ri.ri_own_proxy = rn->rn_own_proxy;
	ri.ri_proxy_socket = net->net_socket;
	ri.ri_error = rn->rn_setup_error;
	ri.ri_guard = run->r_guard;
	ri.ri_gitwrite = run->r_gitwrite;
	if (tally_report(rn->rn_tally, &ri, net->net_report,
	    &net->net_report_at, &cause) == -1) {
		log_warnx("run: %s", cause);
		free(cause);
	}
}

/* Closes *fd unless it is -1, and leaves it -1. */
static void
run_end_close(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

/*
 * The one end of every run, from wherever it stopped: the summary, the
 * report and the harness's last event, then all that rn owns is freed
 * or closed (what a step never made is NULL or -1).  Returns the exit
 * status for `cordon run`.
 */
int
run_end(struct runner *rn)
{
	struct run	*run = rn->rn_run;
	int		 i;

	for (i = 0; i < 2; i++)
		run_end_close(&rn->rn_npair[i]);
	run_proxy_end(rn);
	run_end_report(rn);
	control_send(rn->rn_control, json_pack("{s:s, s:i}", "event", "exit",
	    "status", rn->rn_status));
	control_free(rn->rn_control);
	tally_free(rn->rn_tally);
	keeper_end(rn);
	keepdir_login_drop(run);
	policy_free(rn->rn_env_policy);
	free(rn->rn_asks);
	free(rn->rn_setup_error);
	run_end_close(&run->r_sb.sb_net.sn_proxy_dir);
	run_end_close(&run->r_sb.sb_pipes.sp_pubfd);
	publish_close(&rn->rn_pub);
	run_end_close(&rn->rn_pidfd);
	for (i = 0; i < 2; i++) {
		run_end_close(&rn->rn_ends[i]);
		run_end_close(&rn->rn_sync[i]);
		run_end_close(&rn->rn_err[i]);
	}
	run_end_close(&rn->rn_sfd);
	sentinel_end(&rn->rn_sentinel);
	if (rn->rn_told != NULL)
		evbuffer_free(rn->rn_told);
	event_base_free(rn->rn_base);
	return rn->rn_status;
}
