/*
 * run.c: `cordon run`, the process outside the sandbox.
 *
 * It holds what the sandbox must not: the host's network and the proxy.
 * In proxy mode, without --proxy-socket, the proxy runs here, in this
 * process's event loop, with the run's merged policy, listening on a
 * Unix socket in a private folder (mode 0700) that only the sandbox's
 * PID 1 can reach, through a descriptor of that folder (the folder is
 * under the private /tmp's cover inside, so the command cannot see it);
 * its start and end are run_proxy.c's, which cordon-offline replaces.
 * It clones the sandbox, writes its uid and gid maps, lets it go, passes
 * signals on, and when PID 1 exits (run_end.c): ends the proxy, prints
 * why setup failed (if it did) and the refusal summary, removes what it
 * made, and exits with the command's status.  The harness's side of the
 * run, --control and --ask, is in control_run.c.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <linux/sched.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "confine/sysfilter.h"
#include "lib/endpoint.h"
#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "notify/notify.h"
#include "notify/unixroute.h"
#include "policies/policy.h"
#include "proxy/proxy.h"
#include "runner/run_host.h"
#include "runner/runner.h"
#include "runner/tally.h"

/*
 * Whether path (normalised) is the user's own ssh-agent, SSH_AUTH_SOCK
 * outside, spelt so or where it leads.
 */
static bool
run_unix_is_agent(const char *path)
{
	struct policy_ctx	 ctx = { .pc_workspace = "/", .pc_home = "/" };
	struct pitem		 it = { 0 };
	const char		*sock = getenv("SSH_AUTH_SOCK");
	char			*cause, a[PATH_MAX], b[PATH_MAX];
	bool			 same;

	if (sock == NULL || sock[0] != '/')
		return false;
	if (policy_parse_path(sock, &ctx, &it, &cause) == -1) {
		free(cause);
		return false;
	}
	same = strcmp(it.pi_text, path) == 0 || (realpath(sock, a) != NULL &&
	    realpath(path, b) != NULL && strcmp(a, b) == 0);
	policy_pitem_clear(&it);
	return same;
}

/*
 * The fix for a refused socket path, chosen for the path as the kernel
 * reads it (//run/x, /./run/x and /run/x alike), and naming no more than
 * that one socket: the listed spelling, when it is a listed one written
 * otherwise (routes match exactly); for the user's own ssh-agent, cordon's
 * (the real one would hand the command every key); the entry to add,
 * with what the socket gives away.  Returns a new string, and the reason
 * for the log in *reason.
 */
static char *
run_unix_hint(const struct run *run, const char *path, const char **reason)
{
	const struct unix_route	*r;
	struct policy_ctx	 ctx = { .pc_workspace = "/", .pc_home = "/" };
	struct pitem		 it = { 0 };
	const char		*risk;
	char			*cause, *hint;

	if (policy_parse_path(path, &ctx, &it, &cause) == -1) {
		free(cause);
		return xstrdup("name the socket by a plain absolute path");
	}
	if ((r = unixroute_find(run->r_sb.sb_view.sv_routes, it.pi_text,
	    strlen(it.pi_text))) != NULL) {
		*reason = "a listed socket, spelt otherwise";
		xasprintf(&hint, "connect to \"%s\" as listed (%s): a listed "
		    "socket is matched by its exact path", r->ur_inside,
		    r->ur_from);
	} else if (run_unix_is_agent(it.pi_text)) {
		*reason = "the user's ssh-agent, never listed";
		if (run->r_sb.sb_view.sv_agent_real != NULL)
			xasprintf(&hint, "use cordon's ssh-agent, the "
			    "command's SSH_AUTH_SOCK (%s): it signs logins to "
			    "the hosts the policy allows; listing the user's "
			    "agent would hand the command every key",
			    RUN_AGENT_SOCK);
		else
			hint = xstrdup("cordon's ssh-agent stands in for the "
			    "user's when cordon runs its own proxy and "
			    "network.allow names the SSH host (\"HOST:22\"), "
			    "and signs logins to those hosts alone; listing "
			    "the user's agent would hand the command every "
			    "key");
	} else {
		risk = policy_parse_socket_risk(it.pi_text);
		xasprintf(&hint, "add \"%s\" to filesystem.unix_sockets in "
		    "your own policy (--policy FILE, or the user's; a "
		    "workspace policy may not)%s%s", it.pi_text,
		    risk != NULL ? "; mind that it is " : "",
		    risk != NULL ? risk : "");
	}
	policy_pitem_clear(&it);
	return hint;
}

/*
 * A connect to a port of the sandbox's own loopback where nothing
 * listens, and where the host has a server (hostport.c): in the summary,
 * once, with network.host_ports as the way to the host's.
 */
static void
run_host_port_event(struct runner *rn, const struct notify_event *ne)
{
	struct egress	 e;
	char		*hint;

	memset(&e, 0, sizeof(e));
	gettimeofday(&e.e_start, NULL);
	e.e_sandbox = rn->rn_run->r_sb.sb_id;
	e.e_client = "loopback";
	e.e_proto = "tcp";
	e.e_host = "localhost";
	e.e_hostlen = strlen(e.e_host);
	e.e_port = (int)ne->ne_port;
	e.e_reason = "the sandbox's loopback is its own; the host's server "
	    "there is not reached";
	xasprintf(&hint, "add \"localhost:%u\" to network.host_ports",
	    ne->ne_port);
	control_tell_live(rn, &e, hint, tally_add(rn->rn_tally, &e, hint,
	    NULL));
	free(hint);
}

/*
 * A connect(2) of the sandbox on a Unix socket, as notify.c decided it:
 * in the egress log (the run's own proxy's, when it writes one) and in
 * the summary, a refusal with the entry that would allow it.
 */
static void
run_unix_event(struct runner *rn, const struct notify_event *ne)
{
	const struct unix_route	*r = NULL;
	struct egress		 e;
	char			*path, *hint = NULL;

	if (ne->ne_why == NOTIFY_HOST_PORT) {
		run_host_port_event(rn, ne);
		return;
	}
	memset(&e, 0, sizeof(e));
	gettimeofday(&e.e_start, NULL);
	path = str_escape(ne->ne_path, ne->ne_pathlen);
	e.e_sandbox = rn->rn_run->r_sb.sb_id;
	e.e_command = rn->rn_run->r_sb.sb_cmd.sc_name[0] != '\0' ?
	    rn->rn_run->r_sb.sb_cmd.sc_name : NULL;
	e.e_client = "unix";
	e.e_proto = "unix";
	e.e_host = ne->ne_path;
	e.e_hostlen = ne->ne_pathlen;
	switch (ne->ne_why) {
	case NOTIFY_ALLOWED:
		r = &rn->rn_run->r_sb.sb_view.sv_routes->ur_v[ne->ne_route];
		e.e_allow = true;
		e.e_addr = r->ur_host;
		e.e_rule = r->ur_inside;
		e.e_rule_from = r->ur_from;
		e.e_reason = "a listed socket";
		if (ne->ne_errno != 0)
			e.e_warning = strerror(ne->ne_errno);
		break;
	case NOTIFY_UNLISTED:
		e.e_reason = "not in filesystem.unix_sockets";
		hint = run_unix_hint(rn->rn_run, path, &e.e_reason);
		break;
	case NOTIFY_OWN:
	case NOTIFY_NOTHING:
	case NOTIFY_HOST_PORT:
		free(path);
		return;
	case NOTIFY_ABSTRACT:
		e.e_reason = "an abstract socket name of the host's network";
		hint = xstrdup("no setting allows one: with the host's "
		    "network (network mode host), abstract names are the "
		    "host's; name a socket by its path in "
		    "filesystem.unix_sockets");
		break;
	case NOTIFY_RELATIVE:
		e.e_reason = "a host socket by a relative path";
		hint = xstrdup("connect to the socket's absolute path, and "
		    "list that in filesystem.unix_sockets");
		break;
	}
	if (rn->rn_own_proxy && rn->rn_proxy.px_log != NULL)
		jsonl_write(rn->rn_proxy.px_log, &e);
	control_tell_live(rn, &e, hint, tally_add(rn->rn_tally, &e, hint,
	    NULL));
	log_debug("%s: pid %d: %s: %s", __func__, ne->ne_pid, path,
	    e.e_reason);
	free(hint);
	free(path);
}

static void
run_notify_cb(evutil_socket_t fd, short what, void *arg)
{
	struct runner		*rn = arg;
	struct notify_event	 ne;

	(void)fd;
	(void)what;
	while (notify_read(rn->rn_notify, &ne))
		run_unix_event(rn, &ne);
}

/*
 * Ends the connect thread, and logs what it said last.  A connect still
 * waiting (a listed socket's full backlog) is cut short, not waited for:
 * the sandbox is gone by now.
 */
static void
run_notify_end(struct runner *rn)
{
	size_t	 n;

	if (rn->rn_notify == NULL)
		return;
	notify_stop(rn->rn_notify);
	run_notify_cb(-1, 0, rn);
	if ((n = notify_dropped(rn->rn_notify)) > 0)
		log_warnx("run: %zu Unix socket connects were not logged (too "
		    "many at once)", n);
	notify_free(rn->rn_notify);
	rn->rn_notify = NULL;
}

/* Why a user namespace could not be made, and what to do about it. */
static void
run_userns_hint(int err)
{
	char	 buf[32];
	FILE	*f;

	log_warnx("run: cannot make the sandbox's namespaces: %s%s",
	    strerror(err), err == ENOSPC || err == EUSERS ? " (a limit on "
	    "the number of namespaces is reached)" : "");
	if ((f = fopen("/proc/sys/kernel/unprivileged_userns_clone", "r")) !=
	    NULL) {
		if (fgets(buf, sizeof(buf), f) != NULL && buf[0] == '0')
			log_warnx("hint: unprivileged user namespaces are off "
			    "(kernel.unprivileged_userns_clone = 0); an "
			    "administrator can turn them on with: sysctl -w "
			    "kernel.unprivileged_userns_clone=1");
		fclose(f);
	}
	if ((f = fopen("/proc/sys/user/max_user_namespaces", "r")) != NULL) {
		if (fgets(buf, sizeof(buf), f) != NULL && buf[0] == '0')
			log_warnx("hint: user.max_user_namespaces is 0; an "
			    "administrator can raise it: sysctl -w "
			    "user.max_user_namespaces=10000");
		fclose(f);
	}
	if ((f = fopen("/proc/sys/kernel/apparmor_restrict_unprivileged_"
	    "userns", "r")) != NULL) {
		if (fgets(buf, sizeof(buf), f) != NULL && buf[0] == '1')
			log_warnx("hint: AppArmor restricts unprivileged user "
			    "namespaces (kernel.apparmor_restrict_unprivileged_"
			    "userns = 1); give cordon an AppArmor profile "
			    "that allows \"userns,\", or turn the restriction "
			    "off");
		fclose(f);
	}
	if (err == EPERM)
		log_warnx("hint: inside a container, user namespaces are "
		    "often blocked by its seccomp profile; run cordon on the "
		    "host, or allow them in the container");
	log_warnx("nothing was run: cordon does not run a command without "
	    "its sandbox");
}

/* Writes one of the child's map files; returns 0 or -1 (errno). */
static int
run_write_map(pid_t pid, const char *file, const char *text)
{
	char	 path[64];
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static void
run_exited_cb(evutil_socket_t fd, short what, void *arg)
{
	struct runner	*rn = arg;
	siginfo_t	 si;

	(void)fd;
	(void)what;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PIDFD, (id_t)rn->rn_pidfd, &si, WEXITED | WNOHANG) ==
	    -1 || si.si_pid == 0)
		return;
	if (si.si_code == CLD_EXITED)
		rn->rn_status = si.si_status;
	else
		rn->rn_status = 128 + si.si_status;
	rn->rn_done = true;
	event_base_loopexit(rn->rn_base, NULL);
}

/*
 * A signal for the command, passed to PID 1, which passes it on.  One
 * the terminal sent (SI_KERNEL) reached the command itself when it shares
 * the terminal; without one, it has its own session and needs ours.
 */
static void
run_signal_cb(evutil_socket_t fd, short what, void *arg)
{
	struct runner		*rn = arg;
	struct signalfd_siginfo	 si;
	int			 sig;

	(void)what;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		sig = (int)si.ssi_signo;
		if (si.ssi_code == SI_KERNEL && rn->rn_run->r_sb.sb_cmd.sc_tty)
			continue;
		if (rn->rn_keeper != NULL) {
			keeper_signal(rn, sig);
			continue;
		}
		if (syscall(SYS_pidfd_send_signal, rn->rn_pidfd, sig, NULL,
		    0) == -1 && errno != ESRCH)
			log_warn("run: passing %s on", strsignal(sig));
	}
}

/*
 * rn before any step: nothing made but the tally and the event loop,
 * every descriptor -1.  Returns 0, or -1 having said why (no loop).
 */
static int
run_init(struct runner *rn, struct run *run, const struct run_net *net)
{
	memset(rn, 0, sizeof(*rn));
	clock_gettime(CLOCK_MONOTONIC, &rn->rn_start);
	rn->rn_pub.pb_pair = -1;
	rn->rn_tally = tally_new();
	rn->rn_run = run;
	rn->rn_net = net;
	rn->rn_pidfd = rn->rn_sfd = rn->rn_cgroup = -1;
	rn->rn_sentinel.s_pid = rn->rn_sentinel.s_fd = -1;
	rn->rn_sync[0] = rn->rn_sync[1] = rn->rn_err[0] = rn->rn_err[1] = -1;
	rn->rn_ends[0] = rn->rn_ends[1] = -1;
	rn->rn_npair[0] = rn->rn_npair[1] = -1;
	rn->rn_status = RUN_EXIT_FAILURE;
	run->r_sb.sb_net.sn_proxy_dir = -1;
	signal(SIGPIPE, SIG_IGN);
	if ((rn->rn_base = event_base_new()) == NULL) {
		log_warnx("run: no event loop");
		tally_free(rn->rn_tally);
		return -1;
	}
	return 0;
}

/*
 * What the clone needs, made before it: the signals passed on, blocked
 * from now on (the sandbox too) and read from a signalfd; the pipes to
 * and from PID 1; the published ports, taken on the host; the pair the
 * command hands its seccomp listener over.  Returns 0, or -1 having said
 * why.
 */
static int
run_pipes(struct runner *rn)
{
	struct run	*run = rn->rn_run;
	sigset_t	 fwd;
	char		*cause;

	sandbox_sigset(&fwd);
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	if ((rn->rn_sfd = signalfd(-1, &fwd, SFD_NONBLOCK | SFD_CLOEXEC)) ==
	    -1) {
		log_warn("run: signalfd");
		return -1;
	}
	if (pipe2(rn->rn_sync, O_CLOEXEC) == -1 ||
	    pipe2(rn->rn_err, O_CLOEXEC) == -1 ||
	    pipe2(rn->rn_ends, O_CLOEXEC) == -1) {
		log_warn("run: pipe");
		return -1;
	}
	if (publish_open(&rn->rn_pub, run->r_publish, run->r_npublish,
	    &run->r_sb.sb_pipes.sp_pubfd, &cause) == -1) {
		log_warnx("run: %s", cause);
		free(cause);
		return -1;
	}
	if ((run->r_unix_mode == SYSF_UNIX_NOTIFY ||
	    run->r_gitwrite != NULL) &&
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    rn->rn_npair) == -1) {
		log_warn("run: socketpair");
		return -1;
	}
	return 0;
}

/* In the child of the clone: its ends of the pipes, then PID 1's work. */
static void __attribute__((noreturn))
run_child(struct runner *rn)
{
	struct run	*run = rn->rn_run;

	close(rn->rn_sync[1]);
	close(rn->rn_err[0]);
	if (rn->rn_ends[0] != -1)
		close(rn->rn_ends[0]);
	run->r_sb.sb_pipes.sp_sync = rn->rn_sync[0];
	run->r_sb.sb_pipes.sp_errfd = rn->rn_err[1];
	run->r_sb.sb_cmd.sc_errfd = rn->rn_err[1];	/* one pipe for both */
	run->r_sb.sb_pipes.sp_endfd = rn->rn_ends[1];
	publish_forget(&rn->rn_pub);
	sandbox_main(&run->r_sb);
}

/*
 * Clones the sandbox into its new namespaces; the child goes on as its
 * PID 1 and never returns here.  The child's ends of the pipes are then
 * closed here.  Returns 0, or -1 having said why.
 */
static int
run_clone(struct runner *rn)
{
	struct run		*run = rn->rn_run;
	struct clone_args	 ca;
	int			 pidfd = -1, saved;

	run->r_sb.sb_cmd.sc_notifyfd = rn->rn_npair[1];
	keepdir_login_put(run);	/* before: the child binds what it did not put */
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
	    CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_PIDFD;
	if (run->r_sb.sb_net.sn_mode != NET_HOST)
		ca.flags |= CLONE_NEWNET;
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.exit_signal = SIGCHLD;
	/* A session's cgroup (keeper.c): all of the sandbox is in it. */
	if (rn->rn_cgroup != -1) {
		ca.flags |= CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)rn->rn_cgroup;
	}
	fflush(NULL);
	rn->rn_pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (rn->rn_pid == -1 && rn->rn_cgroup != -1) {
		/* Stopped between commands all the same (keeper_start). */
		log_info("session: cloning into its cgroup: %s: its "
		    "processes are stopped between commands, not frozen",
		    strerror(errno));
		rn->rn_cgroup = -1;
		ca.flags &= ~CLONE_INTO_CGROUP;
		ca.cgroup = 0;
		rn->rn_pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	}
	if (rn->rn_pid == 0)
		run_child(rn);
	saved = errno;
	close(rn->rn_sync[0]);
	close(rn->rn_err[1]);
	rn->rn_sync[0] = rn->rn_err[1] = -1;
	if (rn->rn_npair[1] != -1) {
		close(rn->rn_npair[1]);
		rn->rn_npair[1] = run->r_sb.sb_cmd.sc_notifyfd = -1;
	}
	if (run->r_sb.sb_pipes.sp_pubfd != -1) {
		close(run->r_sb.sb_pipes.sp_pubfd);
		run->r_sb.sb_pipes.sp_pubfd = -1;
	}
	if (rn->rn_ends[1] != -1)
		close(rn->rn_ends[1]);
	rn->rn_ends[1] = -1;
	if (rn->rn_pid == -1) {
		if (saved == ENOSYS)
			log_warnx("run: clone3 is not available: it needs Linux "
			    "5.3 or later, and no seccomp filter that hides it "
			    "(inside a cordon sandbox, or a container that "
			    "filters it, cordon cannot make another)");
		else
			run_userns_hint(saved);
		return -1;
	}
	rn->rn_pidfd = pidfd;
	return 0;
}

/* No sentinel, no run: says why (takes cause) and kills the sandbox. */
static void
run_sentinel_failed(struct runner *rn, char *cause)
{
	log_warnx("run: %s; nothing run, since the check of the writable "
	    "folders could not follow a killed run", cause);
	log_warnx("hint: a fork failed: if your process limit (ulimit -u) or "
	    "the system's is reached, end other processes and run again");
	free(cause);
	kill(rn->rn_pid, SIGKILL);
	rn->rn_step_failed = true;
}

/*
 * The sentinel, forked before the sandbox may start (and before the
 * connect thread, so that the fork copies one thread): the guard's check
 * must follow the run however cordon run ends.  Without it nothing runs.
 */
static void
run_sentinel_begin(struct runner *rn)
{
	struct run	*run = rn->rn_run;
	char		*cause;

	if (run->r_guard == NULL)
		return;
	if (sentinel_start(&rn->rn_sentinel, run->r_guard, run->r_sb.sb_id,
	    rn->rn_pidfd, &cause) == -1)
		run_sentinel_failed(rn, cause);
}

/* The sentinel forked, it must say it is ready before the go. */
static void
run_sentinel_ready(struct runner *rn)
{
	char	*cause;

	if (rn->rn_sentinel.s_fd != -1 && !rn->rn_step_failed &&
	    sentinel_ready(&rn->rn_sentinel, &cause) == -1)
		run_sentinel_failed(rn, cause);
}

/*
 * The connect thread's state, made after the clone; the thread itself
 * starts at the sandbox's first call (run_notify_poke_cb), after the
 * sentinel's fork: the child of a process with threads may only call
 * what is async-signal-safe.  Without it the sandbox is killed, and the
 * run fails.
 */
static void
run_notify_begin(struct runner *rn)
{
	char	*cause;

	if (rn->rn_npair[0] == -1)
		return;
	rn->rn_notify = notify_new(rn->rn_run->r_sb.sb_view.sv_routes,
	    rn->rn_run->r_gitwrite, rn->rn_npair[0],
	    &cause);
	rn->rn_npair[0] = -1;
	if (rn->rn_notify == NULL) {
		log_warnx("run: the Unix sockets' connect thread: %s; "
		    "nothing run", cause);
		free(cause);
		kill(rn->rn_pid, SIGKILL);
		rn->rn_step_failed = true;
	}
}

/*
 * What the sandbox sent the connect thread, or a call waiting: the
 * thread starts at the first call, and then watches all itself.  A
 * thread that cannot start kills the sandbox: its calls would wait.
 */
static void
run_notify_poke_cb(evutil_socket_t fd, short what, void *arg)
{
	struct runner	*rn = arg;
	char		*cause;
	int		 rc;

	(void)fd;
	(void)what;
	if ((rc = notify_poke(rn->rn_notify, &cause)) == 0)
		return;
	event_del(rn->rn_poke_ev);
	if (rc == 1)
		return;
	log_warnx("run: the Unix sockets' connect thread: %s; the sandbox "
	    "is ended", cause);
	free(cause);
	kill(rn->rn_pid, SIGKILL);
	rn->rn_step_failed = true;
}

/*
 * Our uid and gid, and only them, inside; then PID 1 may go on with its
 * mounts (one byte); run_go lets it run the command.
 */
static void
run_maps(struct runner *rn)
{
	struct run	*run = rn->rn_run;
	char		 map[64];
	int		 rc;

	snprintf(map, sizeof(map), "%u %u 1\n",
	    (unsigned int)run->r_sb.sb_cmd.sc_uid,
	    (unsigned int)run->r_sb.sb_cmd.sc_uid);
	rc = run_write_map(rn->rn_pid, "uid_map", map);
	if (rc == 0)
		rc = run_write_map(rn->rn_pid, "setgroups", "deny");
	snprintf(map, sizeof(map), "%u %u 1\n",
	    (unsigned int)run->r_sb.sb_cmd.sc_gid,
	    (unsigned int)run->r_sb.sb_cmd.sc_gid);
	if (rc == 0)
		rc = run_write_map(rn->rn_pid, "gid_map", map);
	if (rc == -1 || write(rn->rn_sync[1], "g", 1) != 1) {
		log_warn("run: the sandbox's uid and gid maps");
		kill(rn->rn_pid, SIGKILL);
		close(rn->rn_sync[1]);
		rn->rn_sync[1] = -1;
	}
}

/*
 * The seccomp program, built into the memfd PID 1 holds while PID 1
 * mounts, off the critical path; before the go, so the command never
 * starts without it.  Without it nothing runs.
 */
static void
run_filter(struct runner *rn)
{
	struct run	*run = rn->rn_run;
	char		*cause;
	bool		 paused;

	/* A session that stops its processes between commands: see there. */
	paused = run->r_session_opts != NULL &&
	    !run->r_session_opts->so_run_between;
	if (sysfilter_prog_write(run->r_sb.sb_cmd.sc_seccomp, run->r_unix_mode,
	    run->r_gitwrite != NULL, paused, &cause) == 0)
		return;
	log_warnx("run: %s; nothing run", cause);
	free(cause);
	kill(rn->rn_pid, SIGKILL);
	rn->rn_step_failed = true;
}

/*
 * The sentinel, the connect thread and the seccomp program are up (or
 * the sandbox was killed): a second byte, and PID 1 may run the
 * command.  Without it
 * (EOF) PID 1 runs nothing.
 */
static void
run_go(struct runner *rn)
{
	if (rn->rn_sync[1] == -1)
		return;
	if (!rn->rn_step_failed && write(rn->rn_sync[1], "o", 1) != 1) {
		log_warn("run: telling the sandbox to go on");
		kill(rn->rn_pid, SIGKILL);
	}
	close(rn->rn_sync[1]);
	rn->rn_sync[1] = -1;
}

/*
 * What the loop watches: the published ports, PID 1's end, the signals
 * to pass on and the connect thread's events.  What cannot be watched
 * kills the sandbox, so that the loop still sees its end.
 */
static void
run_watch(struct runner *rn)
{
	size_t	 i;

	if (publish_start(&rn->rn_pub, rn->rn_base) == -1) {
		log_warnx("run: --publish: cannot listen");
		kill(rn->rn_pid, SIGKILL);
	}
	rn->rn_evs[rn->rn_nev++] = event_new(rn->rn_base, rn->rn_pidfd,
	    EV_READ | EV_PERSIST, run_exited_cb, rn);
	rn->rn_evs[rn->rn_nev++] = event_new(rn->rn_base, rn->rn_sfd,
	    EV_READ | EV_PERSIST, run_signal_cb, rn);
	if (rn->rn_ends[0] != -1)
		rn->rn_evs[rn->rn_nev++] = rn->rn_told_ev = event_new(
		    rn->rn_base, rn->rn_ends[0], EV_READ | EV_PERSIST,
		    run_end_told_cb, rn);
	run_proxy_watch(rn);
	if (rn->rn_notify != NULL) {
		rn->rn_evs[rn->rn_nev++] = event_new(rn->rn_base,
		    notify_events_fd(rn->rn_notify), EV_READ | EV_PERSIST,
		    run_notify_cb, rn);
		rn->rn_evs[rn->rn_nev++] = rn->rn_poke_ev = event_new(
		    rn->rn_base, notify_idle_fd(rn->rn_notify), EV_READ |
		    EV_PERSIST, run_notify_poke_cb, rn);
	}
	for (i = 0; i < rn->rn_nev; i++)
		if (rn->rn_evs[i] == NULL || event_add(rn->rn_evs[i], NULL) ==
		    -1) {
			log_warnx("run: cannot watch the sandbox");
			kill(rn->rn_pid, SIGKILL);
			break;
		}
}

/*
 * The loop, until PID 1 is gone (the sandbox is killed if the loop
 * fails); then its events go, before the connect thread and its
 * descriptors do.
 */
static void
run_wait(struct runner *rn)
{
	size_t	 i;

	while (!rn->rn_done)
		if (event_base_dispatch(rn->rn_base) != 0)
			break;
	if (!rn->rn_done) {
		kill(rn->rn_pid, SIGKILL);
		waitpid(rn->rn_pid, NULL, 0);
	}
	for (i = 0; i < rn->rn_nev; i++)
		if (rn->rn_evs[i] != NULL)
			event_free(rn->rn_evs[i]);
	rn->rn_nev = 0;
	rn->rn_told_ev = rn->rn_poke_ev = NULL;
	run_notify_end(rn);
	if (rn->rn_step_failed)
		rn->rn_status = RUN_EXIT_FAILURE;
}

/*
 * Runs the sandbox and waits for it.  Takes the policy (the proxy frees
 * it).  Every step says why it failed; run_end() ends every run, from
 * wherever it stopped.  Returns the exit status for `cordon run`.
 */
int
run_exec(struct run *run, struct policy *policy, const struct run_net *net)
{
	struct runner	 rn;

	if (run_init(&rn, run, net) == -1) {
		policy_free(policy);
		return RUN_EXIT_FAILURE;
	}
	if (run_proxy_setup(&rn, policy) == 0 && run_proxy_control(&rn) ==
	    0 && run_pipes(&rn) == 0 && (run->r_session_opts == NULL ||
	    keeper_open(&rn) == 0) && run_clone(&rn) == 0) {
		/* PID 1 mounts while the sentinel and the thread start. */
		run_maps(&rn);
		run_sentinel_begin(&rn);
		run_notify_begin(&rn);
		run_filter(&rn);
		run_sentinel_ready(&rn);
		run_go(&rn);
		run_watch(&rn);
		if (rn.rn_keeper != NULL)
			keeper_start(&rn);
		run_wait(&rn);
		keeper_end(&rn);
		run_end_collect(&rn);
	}
	return run_end(&rn);
}
