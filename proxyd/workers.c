/*
 * workers.c: `cordon proxy --workers N`, one proxy served by N worker
 * processes, so that every core of the machine is used.
 *
 * The parent opens every listener (proxy_listen.c), then forks the
 * workers: each inherits the listening sockets and accepts on them
 * (one accept queue per listener, shared: a worker that dies takes no
 * queued connection with it, and the listener outlives it), loads the
 * policy, opens the egress log (O_APPEND, one write(2) a line: lines
 * of several workers never interleave) and runs the single-threaded
 * loop of a proxy alone.  The parent serves no client: it restarts a
 * worker that dies (logged; a second later if it died within a second
 * of its start), passes SIGHUP and SIGTERM on to every worker, and
 * serves --metrics, the sum of the workers' counters, which each
 * publishes in its slot of a MAP_SHARED region (metrics.c); the limits
 * of identities are counted once for all in another (proxy/ident.c), and
 * the parent gives back the tunnels of a worker it reaps.  What is
 * shared, and why so, is docs/architecture.md's "Workers".
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "proxy/proxy.h"
#include "proxyd/proxy_cmd.h"

struct worker {
	pid_t		 wk_pid;	/* 0: not running */
	time_t		 wk_started;
	bool		 wk_seen;	/* it served: its slot had its pid */
};

struct workers {
	struct event_base	*ws_base;
	struct worker		*ws_v;
	size_t			 ws_n;
	struct metrics_slot	*ws_slots;
	struct metrics		*ws_metrics;	/* NULL: no --metrics */
	struct ident_table	*ws_itab;	/* identities' limits */
	struct event		*ws_sigs[4];	/* HUP, TERM, INT, CHLD */
	struct event		*ws_restart;
	bool			 ws_draining;
	int			 ws_status;	/* the parent's exit status */
	workers_main_fn		 ws_main;
	workers_drain_fn	 ws_drain;
	void			*ws_arg;
	pid_t			 ws_parent;
};

/*
 * --workers: a number from 1 to WORKERS_MAX into *n.  Returns 0, or -1
 * having said why.
 */
int
workers_parse(const char *text, size_t *n)
{
	char	*end;
	long	 v;

	v = strtol(text, &end, 10);
	if (*text == '\0' || *end != '\0' || v < 1 || v > WORKERS_MAX) {
		log_warnx("proxy: --workers: \"%s\" is not a number from 1 "
		    "to %d", text, WORKERS_MAX);
		log_warnx("hint: --workers $(nproc) serves from every core; "
		    "--workers 1 from one process");
		return -1;
	}
	*n = (size_t)v;
	return 0;
}

/* The default of --workers: the cores online, within 1..WORKERS_MAX. */
size_t
workers_default(void)
{
	long	 n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > WORKERS_MAX ? WORKERS_MAX : (size_t)n;
}

/*
 * In the child, worker i: the parent's loop, signals and metrics server
 * let go (event_reinit first: the epoll instance is the parent's), then
 * the worker runs, and never comes back.
 */
static void __attribute__((noreturn))
workers_child(struct workers *ws, size_t i)
{
	size_t	 j;

	/*
	 * A worker dies with its parent, at once: a parent killed (kill -9,
	 * the OOM killer) is the proxy killed.  Drained instead, a worker
	 * would serve its tunnels on for --drain-secs with no parent to
	 * restart it or answer /readyz, and hold the port a new proxy
	 * must bind.  getppid() closes the race of a parent dead before
	 * the prctl.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
	    getppid() != ws->ws_parent)
		_exit(1);
	if (event_reinit(ws->ws_base) == -1)
		fatalx("proxy: worker %zu: cannot take over the loop", i);
	for (j = 0; j < nitems(ws->ws_sigs); j++)
		event_free(ws->ws_sigs[j]);
	event_free(ws->ws_restart);
	metrics_free(ws->ws_metrics);
	event_base_free(ws->ws_base);
	ws->ws_main(i, ws->ws_slots, ws->ws_itab, ws->ws_arg);
	exit(0);
}

/* Starts worker i; a fork that fails is tried again a second later. */
static void
workers_fork(struct workers *ws, size_t i)
{
	struct timeval	 tv = { 1, 0 };
	pid_t		 pid;

	metrics_retire(ws->ws_slots, i, NULL, false);
	if ((pid = fork()) == -1) {
		log_warn("proxy: worker %zu: fork", i);
		evtimer_add(ws->ws_restart, &tv);
		return;
	}
	if (pid == 0)
		workers_child(ws, i);
	ws->ws_v[i].wk_pid = pid;
	ws->ws_v[i].wk_started = time(NULL);
	ws->ws_v[i].wk_seen = false;
}

/* The workers not running are started (not while draining). */
static void
workers_restart_cb(evutil_socket_t fd, short what, void *arg)
{
	struct workers	*ws = arg;
	size_t		 i;

	(void)fd;
	(void)what;
	for (i = 0; i < ws->ws_n && !ws->ws_draining; i++)
		if (ws->ws_v[i].wk_pid == 0)
			workers_fork(ws, i);
}

/* Sends sig to every running worker. */
static void
workers_kill(struct workers *ws, int sig)
{
	size_t	 i;

	for (i = 0; i < ws->ws_n; i++)
		if (ws->ws_v[i].wk_pid != 0)
			kill(ws->ws_v[i].wk_pid, sig);
}

/* Whether a worker still runs. */
static bool
workers_any(const struct workers *ws)
{
	size_t	 i;

	for (i = 0; i < ws->ws_n; i++)
		if (ws->ws_v[i].wk_pid != 0)
			return true;
	return false;
}

/*
 * Worker i (pid) ended with status: while draining, as asked; before
 * it ever served, the proxy cannot start (the others are ended, and the
 * parent exits with its status, as a proxy alone would); else it died:
 * logged, and started again.
 */
static void
workers_ended(struct workers *ws, size_t i, pid_t pid, int status)
{
	struct worker	*w = &ws->ws_v[i];
	struct timeval	 tv = { 0, 0 };
	char		 how[64];
	bool		 seen;

	seen = w->wk_seen || metrics_slot_pid(ws->ws_slots, i) == pid;
	w->wk_pid = 0;
	/* Its clients went with it: their tunnels are their identities'. */
	ident_reap(ws->ws_itab, i);
	if (WIFSIGNALED(status))
		snprintf(how, sizeof(how), "was killed by signal %d (%s)",
		    WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(how, sizeof(how), "exited with status %d",
		    WEXITSTATUS(status));
	if (ws->ws_draining) {
		metrics_retire(ws->ws_slots, i, ws->ws_metrics, false);
		if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0)
			log_warnx("proxy: worker %zu (pid %ld) %s while "
			    "draining", i, (long)pid, how);
	} else if (!seen) {
		log_warnx("proxy: worker %zu (pid %ld) %s before it served; "
		    "not starting", i, (long)pid, how);
		ws->ws_status = WIFEXITED(status) && WEXITSTATUS(status) != 0 ?
		    WEXITSTATUS(status) : 1;
		ws->ws_draining = true;
		metrics_draining(ws->ws_metrics);
		workers_kill(ws, SIGTERM);
	} else {
		metrics_retire(ws->ws_slots, i, ws->ws_metrics, true);
		log_warnx("proxy: worker %zu (pid %ld) %s; starting it again",
		    i, (long)pid, how);
		if (time(NULL) - w->wk_started < 1)
			tv.tv_sec = 1;	/* no loop of instant deaths */
		evtimer_add(ws->ws_restart, &tv);
	}
	if (ws->ws_draining && !workers_any(ws))
		event_base_loopexit(ws->ws_base, NULL);
}

/* SIGCHLD: every worker that ended. */
static void
workers_chld_cb(evutil_socket_t sig, short what, void *arg)
{
	struct workers	*ws = arg;
	size_t		 i;
	pid_t		 pid;
	int		 status;

	(void)sig;
	(void)what;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (i = 0; i < ws->ws_n; i++)
			if (ws->ws_v[i].wk_pid == pid)
				workers_ended(ws, i, pid, status);
}

/* SIGHUP: every worker reloads (the policy, the TLS files, the log). */
static void
workers_hup_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	log_info("proxy: SIGHUP: passed on to the workers");
	workers_kill(arg, (int)sig);
}

/*
 * SIGTERM, SIGINT: every worker drains (and, told twice, stops); none
 * is started again; the parent ends with the last.
 */
static void
workers_term_cb(evutil_socket_t sig, short what, void *arg)
{
	struct workers	*ws = arg;
	size_t		 i;

	(void)what;
	if (!ws->ws_draining) {
		log_info("proxy: %s: the workers drain", strsignal((int)sig));
		/* New clients are refused at once, not queued. */
		ws->ws_drain(ws->ws_arg);
	}
	ws->ws_draining = true;
	metrics_draining(ws->ws_metrics);
	evtimer_del(ws->ws_restart);
	for (i = 0; i < ws->ws_n; i++)
		if (ws->ws_v[i].wk_pid == 0)
			metrics_retire(ws->ws_slots, i, ws->ws_metrics, false);
	workers_kill(ws, (int)sig);
	if (!workers_any(ws))
		event_base_loopexit(ws->ws_base, NULL);
}

/* The parent's signals; fatal on any error. */
static void
workers_signals(struct workers *ws)
{
	static const int	 sigs[] = { SIGHUP, SIGTERM, SIGINT, SIGCHLD };
	static const event_callback_fn cbs[] = { workers_hup_cb,
	    workers_term_cb, workers_term_cb, workers_chld_cb };
	size_t			 i;

	for (i = 0; i < nitems(ws->ws_sigs); i++)
		if ((ws->ws_sigs[i] = evsignal_new(ws->ws_base, sigs[i],
		    cbs[i], ws)) == NULL ||
		    evsignal_add(ws->ws_sigs[i], NULL) == -1)
			fatalx("proxy: cannot watch signals");
	if ((ws->ws_restart = evtimer_new(ws->ws_base, workers_restart_cb,
	    ws)) == NULL)
		fatalx("proxy: cannot make a timer");
}

/*
 * Runs n workers, each main(i, the metrics slots, the identities'
 * limits, arg) in a child, with the listeners already open; serves
 * metrics on metrics_fd (taken; -1: none).  Returns once all have
 * drained: the exit status, 0, or a worker's that could not start.
 */
int
workers_run(size_t n, int metrics_fd, workers_main_fn main,
    workers_drain_fn drain, void *arg)
{
	struct workers	 ws;
	char		*cause;
	size_t		 i;

	memset(&ws, 0, sizeof(ws));
	ws.ws_n = n;
	ws.ws_main = main;
	ws.ws_drain = drain;
	ws.ws_arg = arg;
	ws.ws_parent = getpid();
	ws.ws_v = xcalloc(n, sizeof(*ws.ws_v));
	signal(SIGPIPE, SIG_IGN);
	if ((ws.ws_slots = metrics_slots_new(n)) == NULL)
		fatal("proxy: the workers' counters: mmap");
	if ((ws.ws_itab = ident_table_new(n)) == NULL)
		fatal("proxy: the identities' limits: mmap");
	if ((ws.ws_base = event_base_new()) == NULL)
		fatalx("proxy: cannot make an event loop");
	workers_signals(&ws);
	if (metrics_fd != -1 && (ws.ws_metrics = metrics_serve(ws.ws_base,
	    metrics_fd, ws.ws_slots, n, &cause)) == NULL)
		fatalx("proxy: %s", cause);
	for (i = 0; i < n; i++)
		workers_fork(&ws, i);
	log_info("proxy: %zu workers serving", n);
	event_base_dispatch(ws.ws_base);
	for (i = 0; i < nitems(ws.ws_sigs); i++)
		event_free(ws.ws_sigs[i]);
	event_free(ws.ws_restart);
	metrics_free(ws.ws_metrics);
	event_base_free(ws.ws_base);
	metrics_slots_free(ws.ws_slots, n);
	ident_table_free(ws.ws_itab);
	free(ws.ws_v);
	return ws.ws_status;
}
