/*
 * keeper.c: a session's process outside the sandbox, the keeper: cordon
 * run's process (run.c: the proxy, the clone, the wait), which in a
 * session also listens on the session's socket (sessdir.c: a folder
 * only its user can enter) and serves its owner's clients.
 *
 * For each request it checks the peer (SO_PEERCRED: the owner's uid,
 * else refused and logged), builds the command's environment from the
 * client's by the session's policy (env_build, as a run does from its
 * own), and hands PID 1 the command and the client's descriptors on
 * their pair (sandbox_session.c).  PID 1 forks it and says when it
 * ends (the session's other processes stopped by then, unless
 * --run-between); then the guard checks the writable roots, as after a
 * run, before the client hears the status, so that git on the host
 * never meets what the command planted.  Signals from the client go on to the
 * command's process group through PID 1.
 *
 * `cordon session stop`, the --idle limit, or a signal to the keeper ends
 * the session: PID 1 tells what the sandbox holds and exits, and cordon
 * run's end follows (run_end.c: the summary, to the stopper's stderr).
 * The reason a session ended is left in ID.end for the next client.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "confine/env.h"
#include "guard/guard.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"
#include "runner/control.h"
#include "runner/run_host.h"
#include "runner/runner.h"
#include "runner/tally.h"
#include "session/sess.h"

#define KEEPER_SAY_MS		2000	/* a client's stderr, at most */
#define KEEPER_FREEZE_MS	10000	/* for the session's cgroup to freeze */

/* A client's connection: one request (a command, or stop). */
struct kclient {
	TAILQ_ENTRY(kclient)	 kc_entry;
	struct keeper		*kc_k;
	int			 kc_fd;
	struct event		*kc_ev;
	uint32_t		 kc_id;		/* its request to PID 1 */
	bool			 kc_running;	/* sent, not yet ended */
	bool			 kc_stopper;	/* its end is the session's */
	bool			 kc_refused;	/* not the owner's */
	int			 kc_err;	/* the client's stderr */
	int			 kc_report;	/* --report's file, or -1 */
	struct tally		*kc_tally;	/* refused in its time */
	struct sessblob		 kc_req;	/* its argv and folder */
	size_t			 kc_finds;	/* the guard's, before */
	size_t			 kc_moved;
	size_t			 kc_gitchanges;	/* gitwrite's, before */
	size_t			 kc_hfinds;	/* hostcfg.c's, before */
	struct timespec		 kc_start;
};

TAILQ_HEAD(kclients, kclient);

struct keeper {
	struct runner		*k_rn;
	const struct session_opts *k_so;
	int			 k_pair[2];	/* [0] ours, [1] PID 1's */
	int			 k_lfd;		/* the session's socket */
	int			 k_lock;	/* ID.lock, held till the end */
	struct event		*k_pair_ev;
	struct event		*k_lev;
	struct event		*k_idle_ev;
	struct kclients		 k_clients;
	uint32_t		 k_seq;
	bool			 k_ready;
	struct freeze		 k_fz;		/* its cgroup (freeze.c) */
	const char		*k_end;		/* why it ends, or NULL */
	char			 k_sock[PATH_MAX];
	time_t			 k_started;
};

/* The session's own file named suffix, into buf. */
static void
keeper_file(const struct keeper *k, const char *suffix, char *buf,
    size_t len)
{
	if (sessdir_file(buf, len, k->k_so->so_dir, k->k_so->so_id,
	    suffix) == -1)
		fatalx("session: %s: path too long", k->k_so->so_dir);
}

/* Tells client kc a refusal or failure, with the reason and the fix. */
static void
keeper_refuse(int fd, const char *fmt, ...)
{
	struct sessmsg	 m;
	va_list		 ap;
	char		 text[SESS_TEXT_MAX];

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	memset(&m, 0, sizeof(m));
	m.sm_type = SESS_ERROR;
	m.sm_arg = RUN_EXIT_FAILURE;
	(void)sessmsg_send(fd, &m, text, NULL, 0);
}

static void
keeper_client_free(struct kclient *kc)
{
	TAILQ_REMOVE(&kc->kc_k->k_clients, kc, kc_entry);
	if (kc->kc_ev != NULL)
		event_free(kc->kc_ev);
	/* The stopper's: closed as the process ends, after the summary. */
	if (!kc->kc_stopper)
		close(kc->kc_fd);
	if (kc->kc_err != -1)
		close(kc->kc_err);
	if (kc->kc_report != -1)
		close(kc->kc_report);
	tally_free(kc->kc_tally);
	sessmsg_blob_clear(&kc->kc_req);
	free(kc);
}

/* Sends PID 1 a message of type for request id. */
static int
keeper_tell(struct keeper *k, uint32_t type, uint32_t id, int arg)
{
	return sessmsg_tell(k->k_pair[0], type, id, arg, 0);
}

/*
 * The session's cgroup thawed, before PID 1 is asked anything: frozen,
 * it would not read.  A thaw that fails leaves the session unable to
 * serve: it ends.
 */
static int
keeper_thaw(struct keeper *k)
{
	if (freeze_set(&k->k_fz, false, 0) == 0)
		return 0;
	log_warn("session %s: thawing %s", k->k_so->so_id, k->k_fz.fz_path);
	kill(k->k_rn->rn_pid, SIGKILL);
	return -1;
}

/* No request in hand: the --idle clock starts again. */
static void
keeper_idle_arm(struct keeper *k)
{
	struct timeval	 tv = { 0, 0 };
	struct kclient	*kc;

	if (k->k_idle_ev == NULL)
		return;
	TAILQ_FOREACH(kc, &k->k_clients, kc_entry)
		if (kc->kc_running) {
			event_del(k->k_idle_ev);
			return;
		}
	tv.tv_sec = k->k_so->so_idle;
	event_add(k->k_idle_ev, &tv);
}

/* Ends the session: PID 1 says what the sandbox holds, and exits. */
static void
keeper_stop(struct keeper *k, const char *why)
{
	if (k->k_end == NULL)
		k->k_end = why;
	if (k->k_lev != NULL)
		event_del(k->k_lev);
	if (keeper_thaw(k) == -1 || keeper_tell(k, SESS_QUIT, 0, 0) == -1)
		kill(k->k_rn->rn_pid, SIGKILL);
}

static void
keeper_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct keeper	*k = arg;

	(void)fd;
	(void)what;
	log_warnx("session %s: idle for %ld seconds (--idle): ended",
	    k->k_so->so_id, k->k_so->so_idle);
	keeper_stop(k, "it was idle longer than its --idle limit");
}

/*
 * The harness hears each command of the session start and end (--control
 * given to session start), so that what it hears between is placed: the
 * refusals of a command's time come between its two.
 */
static void
keeper_event(struct keeper *k, const struct kclient *kc, int status)
{
	json_t	*argv, *ev;
	size_t	 i;

	ev = json_pack("{s:s, s:s, s:I}", "event", "command", "state",
	    kc->kc_running ? "start" : "exit", "command",
	    (json_int_t)kc->kc_id);
	if (ev == NULL)
		return;
	if (kc->kc_running) {
		argv = json_array();
		for (i = 0; kc->kc_req.sb_argv[i] != NULL; i++)
			json_array_append_new(argv,
			    json_string(kc->kc_req.sb_argv[i]));
		json_object_set_new(ev, "argv", argv);
		json_object_set_new(ev, "cwd", json_string(kc->kc_req.sb_cwd));
	} else
		json_object_set_new(ev, "status", json_integer(status));
	control_send(k->k_rn->rn_control, ev);
}

/*
 * A command's request: the environment built from the client's by the
 * policy, the command and the client's stdin, stdout and stderr to
 * PID 1.  fds: the blob, 0, 1, 2 and maybe --report's file; all are
 * closed here, or kept in kc.
 */
static void
keeper_run(struct kclient *kc, const struct sessmsg *m, int *fds, int nfds)
{
	struct keeper		*k = kc->kc_k;
	struct runner		*rn = k->k_rn;
	const struct policy	*p;
	struct sessblob		 sb;
	struct sessmsg		 out;
	char			**env = NULL, *cause = NULL;
	int			 send[4];

	memset(&sb, 0, sizeof(sb));
	p = rn->rn_own_proxy ? rn->rn_proxy.px_policy->pp_policy :
	    rn->rn_env_policy;
	if (kc->kc_running || nfds < 4 || sessmsg_blob_read(fds[0],
	    m->sm_argc, m->sm_envc, &sb) == -1) {
		keeper_refuse(kc->kc_fd, "cordon: session: a malformed "
		    "request\n");
		goto out;
	}
	if ((env = env_build(p, sb.sb_env, rn->rn_run->r_ep, &cause)) ==
	    NULL) {
		keeper_refuse(kc->kc_fd, "cordon: run: %s\n", cause);
		goto out;
	}
	memset(&out, 0, sizeof(out));
	out.sm_type = SESS_RUN;
	out.sm_id = kc->kc_id = ++k->k_seq;
	if ((send[0] = sessmsg_blob(sb.sb_cwd, sb.sb_argv, env,
	    &out.sm_argc, &out.sm_envc)) == -1) {
		keeper_refuse(kc->kc_fd, "cordon: session: the request: %s\n",
		    strerror(errno));
		goto out;
	}
	memcpy(send + 1, fds + 1, 3 * sizeof(int));
	kc->kc_finds = rn->rn_run->r_guard->g_nfinds;
	kc->kc_moved = rn->rn_run->r_guard->g_nmoved;
	kc->kc_gitchanges = rn->rn_run->r_gitwrite != NULL ?
	    gitwrite_count(rn->rn_run->r_gitwrite) : 0;
	kc->kc_hfinds = rn->rn_run->r_guard->g_nhfinds;
	clock_gettime(CLOCK_MONOTONIC, &kc->kc_start);
	if (keeper_thaw(k) == -1 || sessmsg_send(k->k_pair[0], &out, NULL,
	    send, 4) == -1)
		keeper_refuse(kc->kc_fd, "cordon: session %s: its sandbox is "
		    "gone (%s)\nhint: start another with: cordon session "
		    "start\n", k->k_so->so_id, strerror(errno));
	else {
		kc->kc_running = true;
		kc->kc_err = dup(fds[3]);
		if (nfds == 5) {
			kc->kc_report = fds[4];
			fds[4] = -1;
		}
		kc->kc_tally = tally_new();
		kc->kc_req = sb;	/* for its report */
		memset(&sb, 0, sizeof(sb));
		keeper_event(k, kc, 0);
	}
	close(send[0]);
out:
	free(cause);
	env_free(env);
	sessmsg_blob_clear(&sb);
	sessmsg_close(fds, nfds);
	keeper_idle_arm(k);
}

/* A message from a client; its end while its command runs kills that. */
static void
keeper_client_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kclient	*kc = arg;
	struct keeper	*k = kc->kc_k;
	struct sessmsg	 m;
	char		 text[64];
	int		 fds[SESS_FDS_MAX], nfds;
	ssize_t		 n;

	(void)what;
	if ((n = sessmsg_recv(fd, &m, text, sizeof(text), fds, &nfds)) == -1 &&
	    errno == EAGAIN)
		return;
	if (n <= 0) {
		/* The client went: its command goes too, as with cordon run. */
		if (kc->kc_running) {
			keeper_tell(k, SESS_SIGNAL, kc->kc_id, SIGKILL);
			event_del(kc->kc_ev);
		} else
			keeper_client_free(kc);
		return;
	}
	if (kc->kc_refused) {
		/* Answered once its request is read: unread, it would reset. */
		keeper_refuse(kc->kc_fd, "cordon: session %s is not yours "
		    "(it is uid %u's): refused\nhint: start a session of your "
		    "own with: cordon session start\n", k->k_so->so_id,
		    (unsigned int)getuid());
		sessmsg_close(fds, nfds);
		keeper_client_free(kc);
		return;
	}
	switch (m.sm_type) {
	case SESS_RUN:
		keeper_run(kc, &m, fds, nfds);
		return;
	case SESS_SIGNAL:
		if (kc->kc_running)
			keeper_tell(k, SESS_SIGNAL, kc->kc_id, m.sm_arg);
		break;
	case SESS_STOP:
		/* The summary goes to the stopper. */
		if (nfds == 1 && dup2(fds[0], 2) == -1)
			log_warn("session: the stopper's stderr");
		kc->kc_stopper = true;
		event_del(kc->kc_ev);
		keeper_stop(k, "it was stopped (cordon session stop)");
		break;
	}
	sessmsg_close(fds, nfds);
}

/* A connection to the session's socket: its owner's, or refused. */
static void
keeper_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct keeper	*k = arg;
	struct kclient	*kc;
	struct ucred	 cr;
	socklen_t	 len = sizeof(cr);
	int		 fd;

	(void)what;
	if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
		return;
	kc = xcalloc(1, sizeof(*kc));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == -1 ||
	    cr.uid != getuid()) {
		log_warnx("session %s: refused a client of uid %u (pid %d): "
		    "only the session's owner may use it", k->k_so->so_id,
		    (unsigned int)cr.uid, (int)cr.pid);
		kc->kc_refused = true;
	}
	kc->kc_k = k;
	kc->kc_fd = fd;
	kc->kc_err = kc->kc_report = -1;
	TAILQ_INSERT_TAIL(&k->k_clients, kc, kc_entry);
	if ((kc->kc_ev = event_new(k->k_rn->rn_base, fd, EV_READ | EV_PERSIST,
	    keeper_client_cb, kc)) == NULL || event_add(kc->kc_ev, NULL) ==
	    -1) {
		log_warnx("session: cannot watch a client");
		keeper_client_free(kc);
	}
}

/*
 * Writes text to kc's stderr, waiting at most KEEPER_SAY_MS for room,
 * a pipe's buffer at a time: a client whose stderr nobody reads must
 * not hold the keeper, which serves every client of the session.  What
 * does not fit by then is left out, and the session's log says so.
 */
static void
keeper_say(struct kclient *kc, const char *text, size_t len)
{
	struct pollfd	 pfd = { .fd = kc->kc_err, .events = POLLOUT };
	struct timespec	 start;
	long long	 left;
	size_t		 off = 0;
	ssize_t		 w;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (off < len) {
		if ((left = KEEPER_SAY_MS - clock_ms_since(&start)) <= 0 ||
		    poll(&pfd, 1, (int)left) != 1 ||
		    (pfd.revents & POLLOUT) == 0)
			break;
		w = write(kc->kc_err, text + off, len - off < PIPE_BUF ?
		    len - off : PIPE_BUF);
		if (w == -1 && errno != EINTR && errno != EAGAIN)
			break;
		if (w > 0)
			off += (size_t)w;
	}
	if (off < len)
		log_warnx("session: a client's stderr took nothing for %d ms: "
		    "%zu bytes of what the keeper told it left out",
		    KEEPER_SAY_MS, len - off);
}

/*
 * What kc's command must hear at its end, told on its stderr
 * (keeper_say): the changes to git configs held back or remotes added
 * (gw, or NULL) while it ran, the guard's findings of view, and the
 * connections refused in its time, with the fix of each, so that the
 * agent that ran it reads why, not only the user at the stop.
 */
static void
keeper_say_end(struct kclient *kc, const struct guard *view,
    struct gitwrite *gw)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f;

	if ((f = open_memstream(&buf, &len)) == NULL)
		fatal("session: open_memstream");
	if (gw != NULL)
		gitwrite_print(gw, kc->kc_gitchanges, f);
	guard_print(view, f);
	hostcfg_print(view, 0, f);
	tally_refusals(kc->kc_tally, f);
	if (fclose(f) != 0)
		fatal("session: open_memstream");
	if (len > 0)
		keeper_say(kc, buf, len);
	free(buf);
}

/*
 * The session's cgroup frozen for kc's check, when no other command
 * runs (PID 1 stopped the rest already; a command running at once was
 * sent to run) and PID 1 did not say it was alone (SESS_F_ALONE: no
 * process to freeze, and none made before we ask it to run one; the
 * freeze would cost a command milliseconds for nothing).  Returns 0, or
 * -1 when it does not freeze in KEEPER_FREEZE_MS: kc is told, and the
 * session ends, whose end's check follows every process of it.
 */
static int
keeper_freeze(struct keeper *k, struct kclient *kc, bool alone)
{
	struct kclient	*o;
	char		*line;

	if (alone)
		return 0;
	TAILQ_FOREACH(o, &k->k_clients, kc_entry)
		if (o != kc && o->kc_running)
			return 0;
	if (freeze_set(&k->k_fz, true, KEEPER_FREEZE_MS) == 0)
		return 0;
	xasprintf(&line, "cordon: session %s: its processes did not freeze "
	    "in %d s for the check after this command (%s): the session is "
	    "ended, and its end's check follows them\ncordon: hint: start "
	    "another with: cordon session start\n", k->k_so->so_id,
	    KEEPER_FREEZE_MS / 1000, strerror(errno));
	keeper_say(kc, line, strlen(line));
	free(line);
	keeper_stop(k, "its processes did not freeze for a command's check");
	return -1;
}

/*
 * A command ended: the guard's check of the writable roots, what it
 * moved and what was refused told on the client's stderr, --report
 * written, then the status.
 */
static void
keeper_ended(struct keeper *k, uint32_t id, int status, bool alone)
{
	struct run		*run = k->k_rn->rn_run;
	struct run		 cmd_run;
	struct kclient		*kc;
	struct guard		 view;
	struct report_info	 ri;
	struct sessmsg		 m;
	char			*cause, *line, spec[32];
	int			 rc;

	TAILQ_FOREACH(kc, &k->k_clients, kc_entry)
		if (kc->kc_running && kc->kc_id == id)
			break;
	if (kc == NULL || keeper_freeze(k, kc, alone) == -1)
		return;
	kc->kc_running = false;
	rc = guard_check(run->r_guard, run->r_sb.sb_id);
	(void)hostcfg_check(run->r_guard, run->r_sb.sb_id);
	/* This command's finds alone (the guard's list is the session's). */
	view = *run->r_guard;
	view.g_finds += kc->kc_finds;
	view.g_nfinds -= kc->kc_finds;
	view.g_nmoved -= kc->kc_moved;
	view.g_hfinds += kc->kc_hfinds;
	view.g_nhfinds -= kc->kc_hfinds;
	if (rc == -1 || view.g_nmoved > 0 || view.g_nhfinds > 0)
		status = RUN_EXIT_FAILURE;
	keeper_say_end(kc, &view, run->r_gitwrite);
	if (kc->kc_report != -1) {
		memset(&ri, 0, sizeof(ri));
		/* The session's run, with this command's argv and folder. */
		cmd_run = *run;
		cmd_run.r_sb.sb_cmd.sc_argv = kc->kc_req.sb_argv;
		cmd_run.r_sb.sb_cmd.sc_cwd = kc->kc_req.sb_cwd;
		ri.ri_run = &cmd_run;
		ri.ri_status = status;
		ri.ri_duration_ms = clock_ms_since(&kc->kc_start);
		ri.ri_own_proxy = k->k_rn->rn_own_proxy;
		ri.ri_proxy_socket = k->k_rn->rn_net->net_socket;
		ri.ri_guard = &view;
		ri.ri_gitwrite = run->r_gitwrite;
		ri.ri_gitwrite_from = kc->kc_gitchanges;
		snprintf(spec, sizeof(spec), "fd:%d", kc->kc_report);
		if (tally_report(kc->kc_tally, &ri, spec, NULL, &cause) == -1) {
			xasprintf(&line, "cordon: %s\n", cause);
			keeper_say(kc, line, strlen(line));
			free(line);
			free(cause);
		}
	}
	keeper_event(k, kc, status);
	memset(&m, 0, sizeof(m));
	m.sm_type = SESS_EXIT;
	m.sm_arg = status;
	(void)sessmsg_send(kc->kc_fd, &m, NULL, NULL, 0);
	keeper_client_free(kc);
	keeper_idle_arm(k);
}

/*
 * PID 1 says request id's command ended but its check waits: threads of
 * the session (text: how many, and which) are still in the kernel,
 * where a stop takes effect only when their call ends.  Said on the
 * client's stderr, once, with what ends the wait.
 */
static void
keeper_waits(struct keeper *k, uint32_t id, const char *text)
{
	struct kclient	*kc;
	char		*line;

	TAILQ_FOREACH(kc, &k->k_clients, kc_entry)
		if (kc->kc_running && kc->kc_id == id)
			break;
	if (kc == NULL || kc->kc_err == -1)
		return;
	log_warnx("session %s: a command's check waits for %s still in the "
	    "kernel", k->k_so->so_id, text);
	xasprintf(&line, "cordon: session %s: the command ended, but its "
	    "check waits for %s, still in the kernel, where a stop takes "
	    "effect only as they leave it: a write under way, or one queued "
	    "behind it, would land after the check, so the check and the "
	    "command's status wait until they stop\n"
	    "cordon: hint: to end them with the session: cordon session stop "
	    "%s\n", k->k_so->so_id, text, k->k_so->so_id);
	keeper_say(kc, line, strlen(line));
	free(line);
}

/*
 * The session is ready: its description (ID.json, for session list)
 * and its id to `cordon session start`, which then returns.
 */
static void
keeper_ready(struct keeper *k)
{
	const struct session_opts	*so = k->k_so;
	char				 path[PATH_MAX], line[32];
	json_t				*doc;

	k->k_ready = true;
	doc = json_pack("{s:s, s:s?, s:i, s:I, s:s, s:s, s:I, s:s}", "id",
	    so->so_id, "name", so->so_name, "pid", (int)getpid(),
	    "started", (json_int_t)k->k_started, "workspace",
	    k->k_rn->rn_run->r_workspace, "socket", k->k_sock, "idle",
	    (json_int_t)so->so_idle, "between_commands", so->so_run_between ?
	    "running" : "stopped");
	if (doc != NULL && k->k_fz.fz_path[0] != '\0')
		json_object_set_new(doc, "cgroup",
		    json_string(k->k_fz.fz_path));
	keeper_file(k, "json", path, sizeof(path));
	if (doc == NULL || json_dump_file(doc, path, JSON_COMPACT) == -1)
		log_warnx("session: %s could not be written", path);
	json_decref(doc);
	/* Its name (NAME.name) is written and held since session start. */
	snprintf(line, sizeof(line), "%s\n", so->so_id);
	if (write(so->so_ready, line, strlen(line)) == -1)
		log_warn("session: telling session start");
	close(so->so_ready);
}

/* What PID 1 says: ready, a command started or ended. */
static void
keeper_pair_cb(evutil_socket_t fd, short what, void *arg)
{
	struct keeper	*k = arg;
	struct sessmsg	 m;
	char		 text[1024];
	int		 fds[SESS_FDS_MAX], nfds;
	ssize_t		 n;

	(void)what;
	if ((n = sessmsg_recv(fd, &m, text, sizeof(text), fds, &nfds)) == -1 &&
	    (errno == EAGAIN || errno == EBADMSG))
		return;
	if (n <= 0) {
		/* PID 1 is gone: the loop sees its end (run_exited_cb). */
		event_del(k->k_pair_ev);
		return;
	}
	sessmsg_close(fds, nfds);
	if (m.sm_type == SESS_READY && !k->k_ready)
		keeper_ready(k);
	else if (m.sm_type == SESS_ENDED)
		keeper_ended(k, m.sm_id, m.sm_arg,
		    (m.sm_flags & SESS_F_ALONE) != 0);
	else if (m.sm_type == SESS_WAIT)
		keeper_waits(k, m.sm_id, text);
}

/*
 * Before the clone: the pair with PID 1 (its end, r_session, crosses
 * the clone) and the session's socket, bound in the user's folder.
 * Returns 0, or -1 having said why.
 */
int
keeper_open(struct runner *rn)
{
	const struct session_opts	*so = rn->rn_run->r_session_opts;
	struct keeper			*k;
	struct sockaddr_un		 sun;
	char				 path[PATH_MAX];

	k = rn->rn_keeper = xcalloc(1, sizeof(*k));
	k->k_rn = rn;
	k->k_so = so;
	k->k_lfd = k->k_lock = k->k_pair[0] = k->k_pair[1] = -1;
	k->k_fz.fz_dir = k->k_fz.fz_freeze = k->k_fz.fz_events = -1;
	k->k_started = time(NULL);
	TAILQ_INIT(&k->k_clients);
	/*
	 * Held until this process ends, however: session list and the
	 * client take a free lock for a keeper that died (SIGKILL), not
	 * for one that lives and does not answer.
	 */
	keeper_file(k, "lock", path, sizeof(path));
	if ((k->k_lock = open(path, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1 || flock(k->k_lock, LOCK_EX | LOCK_NB) ==
	    -1) {
		log_warn("session: %s", path);
		return -1;
	}
	keeper_file(k, "sock", k->k_sock, sizeof(k->k_sock));
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(k->k_sock) >= sizeof(sun.sun_path)) {
		log_warnx("session: %s: too long for a socket's path; set "
		    "XDG_RUNTIME_DIR to a shorter folder", k->k_sock);
		return -1;
	}
	memcpy(sun.sun_path, k->k_sock, strlen(k->k_sock));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    k->k_pair) == -1 || (k->k_lfd = socket(AF_UNIX, SOCK_SEQPACKET |
	    SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1 || bind(k->k_lfd,
	    (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(k->k_lfd, SOMAXCONN) == -1) {
		log_warn("session: %s", k->k_sock);
		return -1;
	}
	rn->rn_run->r_sb.sb_pipes.sp_session = k->k_pair[1];
	rn->rn_run->r_sb.sb_pause = !so->so_run_between;
	/* Frozen between commands where it can be; else stopped alone. */
	if (!so->so_run_between && freeze_open(&k->k_fz, so->so_id) == 0)
		rn->rn_cgroup = k->k_fz.fz_dir;
	rn->rn_run->r_sb.sb_pipes.sp_ready = so->so_ready;
	if (rn->rn_run->r_npublish > 0 && !so->so_run_between)
		log_warnx("session: note: a server behind --publish answers "
		    "the host only while a command of the session runs (the "
		    "session's processes are stopped between commands, so "
		    "that nothing plants a repository after a command's "
		    "check); to serve it between commands too: pass "
		    "--run-between to session start");
	return 0;
}

/*
 * After the clone: PID 1's end closed here, and the loop watches PID 1
 * and the socket.  What cannot be watched ends the sandbox.
 */
void
keeper_start(struct runner *rn)
{
	struct keeper	*k = rn->rn_keeper;

	close(k->k_pair[1]);
	k->k_pair[1] = rn->rn_run->r_sb.sb_pipes.sp_session = -1;
	/* Not cloned into it (run_clone said why): not frozen. */
	if (rn->rn_cgroup == -1)
		freeze_close(&k->k_fz);
	rn->rn_cgroup = -1;
	if ((k->k_pair_ev = event_new(rn->rn_base, k->k_pair[0], EV_READ |
	    EV_PERSIST, keeper_pair_cb, k)) == NULL ||
	    event_add(k->k_pair_ev, NULL) == -1 ||
	    (k->k_lev = event_new(rn->rn_base, k->k_lfd, EV_READ |
	    EV_PERSIST, keeper_accept_cb, k)) == NULL ||
	    event_add(k->k_lev, NULL) == -1 ||
	    (k->k_so->so_idle > 0 && (k->k_idle_ev = evtimer_new(rn->rn_base,
	    keeper_idle_cb, k)) == NULL)) {
		log_warnx("session: cannot watch its socket");
		kill(rn->rn_pid, SIGKILL);
		return;
	}
	keeper_idle_arm(k);
}

/* A signal to the keeper itself (SIGTERM, SIGINT, SIGHUP) ends it. */
void
keeper_signal(struct runner *rn, int sig)
{
	if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
		keeper_stop(rn->rn_keeper, sig == SIGTERM ? "its keeper got "
		    "SIGTERM" : sig == SIGINT ? "its keeper got SIGINT" :
		    "its keeper got SIGHUP");
}

/* Each decision of the proxy, counted for each command running too. */
void
keeper_tally(struct runner *rn, const struct egress *e, const char *hint,
    const char *pattern)
{
	struct kclient	*kc;

	if (rn->rn_keeper == NULL)
		return;
	TAILQ_FOREACH(kc, &rn->rn_keeper->k_clients, kc_entry)
		if (kc->kc_running)
			tally_add(kc->kc_tally, e, hint, pattern);
}

/*
 * The session's end, PID 1 gone: its clients told, its socket and
 * files removed, the reason left in ID.end for the next client.
 */
void
keeper_end(struct runner *rn)
{
	struct keeper	*k = rn->rn_keeper;
	struct kclient	*kc;
	char		 path[PATH_MAX], why[256];
	int		 fd;

	if (k == NULL)
		return;
	if (k->k_end == NULL) {
		snprintf(why, sizeof(why), "its sandbox's PID 1 ended (exit "
		    "status %d) without a stop", rn->rn_status);
		k->k_end = why;
	}
	while ((kc = TAILQ_FIRST(&k->k_clients)) != NULL) {
		if (kc->kc_running) {
			keeper_refuse(kc->kc_fd, "cordon: session %s ended "
			    "while the command ran: %s\n", k->k_so->so_id,
			    k->k_end);
			kc->kc_running = false;
			keeper_event(k, kc, RUN_EXIT_FAILURE);
		}
		keeper_client_free(kc);
	}
	if (k->k_ready) {
		keeper_file(k, "end", path, sizeof(path));
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		    O_CLOEXEC, 0600)) != -1) {
			dprintf(fd, "%s\n", k->k_end);
			close(fd);
		}
	}
	unlink(k->k_sock);
	/* NAME.name stays: the next client by name hears why, too. */
	keeper_file(k, "json", path, sizeof(path));
	unlink(path);
	/* Last: a list that finds ID.json finds the lock held. */
	keeper_file(k, "lock", path, sizeof(path));
	unlink(path);
	if (k->k_lock != -1)
		close(k->k_lock);
	freeze_close(&k->k_fz);
	if (k->k_pair_ev != NULL)
		event_free(k->k_pair_ev);
	if (k->k_lev != NULL)
		event_free(k->k_lev);
	if (k->k_idle_ev != NULL)
		event_free(k->k_idle_ev);
	if (k->k_lfd != -1)
		close(k->k_lfd);
	if (k->k_pair[0] != -1)
		close(k->k_pair[0]);
	if (k->k_pair[1] != -1)
		close(k->k_pair[1]);
	free(k);
	rn->rn_keeper = NULL;
}
