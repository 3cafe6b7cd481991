/*
 * run.c: `cordon run`, the process outside the sandbox.
 *
 * It holds what the sandbox must not: the host's network and the proxy.
 * In proxy mode, without --proxy-socket, the proxy runs here, in this
 * process's event loop, with the run's merged policy, listening on a
 * Unix socket in a private folder (mode 0700) that only the sandbox's
 * PID 1 can reach, through a descriptor of that folder (the folder is
 * under the private /tmp's cover inside, so the command cannot see it).
 * It clones the sandbox, writes its uid and gid maps, lets it go, passes
 * signals on, and when PID 1 exits: ends the proxy, prints why setup
 * failed (if it did) and the refusal summary, removes what it made, and
 * exits with the command's status.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "endpoint.h"
#include "jsonl.h"
#include "log.h"
#include "policy.h"
#include "proxy.h"
#include "runner.h"
#include "util.h"
#include "xmalloc.h"

#define RUN_REFUSED_SHOWN	10	/* targets listed in the summary */

/* A refused target, counted, with its fix. */
struct refusal {
	char	*rf_target;	/* "host:port" */
	char	*rf_reason;
	char	*rf_hint;
	size_t	 rf_count;
};

struct runner {
	struct run		*rn_run;
	const struct run_net	*rn_net;
	struct proxy		 rn_proxy;
	bool			 rn_own_proxy;
	struct endpoint		 rn_ep;
	struct evconnlistener	*rn_listener;
	char			*rn_dir;	/* the socket's private folder */
	pid_t			 rn_pid;
	int			 rn_pidfd;
	int			 rn_status;	/* exit code, once known */
	bool			 rn_done;
	struct refusal		*rn_refused;
	size_t			 rn_nrefused;
	size_t			 rn_refused_total;
};

static void
run_observe(const struct egress *e, const char *hint, void *arg)
{
	struct runner	*rn = arg;
	struct refusal	*rf;
	char		*host, *target;
	size_t		 i;

	if (e->e_allow)
		return;		/* failed upstream, maybe: not a refusal */
	host = str_escape(e->e_host != NULL ? e->e_host : "",
	    e->e_host != NULL ? e->e_hostlen : 0);
	xasprintf(&target, "%s:%d", host, e->e_port);
	free(host);
	rn->rn_refused_total++;
	for (i = 0; i < rn->rn_nrefused; i++)
		if (strcmp(rn->rn_refused[i].rf_target, target) == 0) {
			rn->rn_refused[i].rf_count++;
			free(target);
			return;
		}
	rn->rn_refused = xreallocarray(rn->rn_refused, rn->rn_nrefused + 1,
	    sizeof(*rn->rn_refused));
	rf = &rn->rn_refused[rn->rn_nrefused++];
	rf->rf_target = target;
	rf->rf_reason = xstrdup(e->e_reason != NULL ? e->e_reason :
	    "refused");
	rf->rf_hint = hint != NULL ? xstrdup(hint) : NULL;
	rf->rf_count = 1;
}

/* At exit: what was refused, and the one change that would allow it. */
static void
run_summary(struct runner *rn)
{
	struct refusal	*rf;
	size_t		 i;

	if (rn->rn_refused_total == 0)
		return;
	fprintf(stderr, "cordon: refused %zu connection%s:", 
	    rn->rn_refused_total, rn->rn_refused_total == 1 ? "" : "s");
	for (i = 0; i < rn->rn_nrefused && i < RUN_REFUSED_SHOWN; i++) {
		rf = &rn->rn_refused[i];
		fprintf(stderr, "%s %s (%s)", i == 0 ? "" : ",", rf->rf_target,
		    rf->rf_reason);
		if (rf->rf_count > 1)
			fprintf(stderr, " x%zu", rf->rf_count);
	}
	if (rn->rn_nrefused > RUN_REFUSED_SHOWN)
		fprintf(stderr, ", and %zu more", rn->rn_nrefused -
		    RUN_REFUSED_SHOWN);
	fprintf(stderr, "\n");
	for (i = 0; i < rn->rn_nrefused && i < RUN_REFUSED_SHOWN; i++) {
		rf = &rn->rn_refused[i];
		if (rf->rf_hint != NULL)
			fprintf(stderr, "cordon: to allow %s: %s\n",
			    rf->rf_target, rf->rf_hint);
	}
}

static void
run_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct runner	*rn = arg;

	(void)l;
	conn_accept(&rn->rn_proxy, fd, sa, (socklen_t)salen, true);
}

/*
 * The run's own proxy: the run's policy, on a Unix socket in a private
 * folder.  Returns 0, or -1 with *cause set.
 */
static int
run_proxy_start(struct runner *rn, struct policy *policy, char **cause)
{
	const struct run_net	*net = rn->rn_net;
	struct proxy		*px = &rn->rn_proxy;
	const char		*base;
	char			*text;
	size_t			 i;
	int			 fd;

	base = getenv("XDG_RUNTIME_DIR");
	if (base == NULL || base[0] != '/' || access(base, W_OK | X_OK) == -1 ||
	    strlen(base) > 64)
		base = "/tmp";
	xasprintf(&rn->rn_dir, "%s/cordon-XXXXXX", base);
	if (mkdtemp(rn->rn_dir) == NULL) {
		xasprintf(cause, "making %s: %s", rn->rn_dir, strerror(errno));
		free(rn->rn_dir);
		rn->rn_dir = NULL;
		return -1;
	}
	xasprintf(&text, "unix:%s/proxy.sock", rn->rn_dir);
	fd = endpoint_parse(text, &rn->rn_ep, cause);
	free(text);
	if (fd == -1 || (fd = endpoint_listen(&rn->rn_ep, SOMAXCONN,
	    cause)) == -1)
		return -1;

	TAILQ_INIT(&px->px_conns);
	px->px_max = PROXY_MAX_CONNS;
	px->px_head_secs = PROXY_HEAD_SECS;
	px->px_connect_secs = PROXY_CONNECT_SECS;
	px->px_idle_secs = PROXY_IDLE_SECS;
	px->px_policy = ppolicy_new(policy);
	px->px_observe = run_observe;
	px->px_observe_arg = rn;
	if ((px->px_dns = dns_new(px->px_base, cause)) == NULL)
		goto fail;
	if (net->rn_dns != NULL && dns_servers(px->px_dns, net->rn_dns,
	    cause) == -1)
		goto fail;
	for (i = 0; i < net->rn_npins; i++)
		if (dns_pin(px->px_dns, net->rn_pins[i], cause) == -1)
			goto fail;
	if (net->rn_log != NULL && (px->px_log = jsonl_open(net->rn_log,
	    cause)) == NULL)
		goto fail;
	if ((rn->rn_listener = evconnlistener_new(px->px_base, run_accept_cb,
	    rn, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd)) ==
	    NULL) {
		xasprintf(cause, "cannot watch the proxy's socket");
		goto fail;
	}
	rn->rn_own_proxy = true;
	return 0;
fail:
	close(fd);
	return -1;
}

/* Points the sandbox at the proxy: a descriptor of its folder. */
static int
run_proxy_dir(struct runner *rn, const char *socket, char **cause)
{
	struct run	*run = rn->rn_run;
	struct stat	 st;
	char		*dir, *slash;

	if (stat(socket, &st) == -1) {
		xasprintf(cause, "the proxy socket %s: %s", socket,
		    strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		xasprintf(cause, "the proxy socket %s: not a socket", socket);
		return -1;
	}
	run->r_proxy_path = socket;
	dir = xstrdup(socket);
	if ((slash = strrchr(dir, '/')) == NULL) {
		free(dir);
		dir = xstrdup(".");
		run->r_proxy_name = socket;
	} else {
		run->r_proxy_name = socket + (slash - dir) + 1;
		slash[slash == dir ? 1 : 0] = '\0';
	}
	run->r_proxy_dir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (run->r_proxy_dir == -1)
		xasprintf(cause, "%s: %s", dir, strerror(errno));
	free(dir);
	return run->r_proxy_dir == -1 ? -1 : 0;
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
	event_base_loopexit(rn->rn_proxy.px_base, NULL);
}

/* Fills set with the signals passed on to the command. */
int
run_sigset(sigset_t *set)
{
	static const int	 sigs[] = RUN_FORWARDED;
	size_t			 i;

	sigemptyset(set);
	for (i = 0; i < nitems(sigs); i++)
		sigaddset(set, sigs[i]);
	return 0;
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
		if (si.ssi_code == SI_KERNEL && rn->rn_run->r_tty)
			continue;
		if (syscall(SYS_pidfd_send_signal, rn->rn_pidfd, sig, NULL,
		    0) == -1 && errno != ESRCH)
			log_warn("run: passing %s on", strsignal(sig));
	}
}

/* Copies what the sandbox said about its failure to stderr. */
static void
run_relay_errors(int fd)
{
	char	 buf[4096];
	ssize_t	 n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(2, buf, (size_t)n) == -1)
			break;
}

/*
 * Runs the sandbox and waits for it.  Takes the policy (the proxy frees
 * it).  Returns the exit status for `cordon run`.
 */
int
run_exec(struct run *run, struct policy *policy, const struct run_net *net)
{
	struct runner		 rn;
	struct clone_args	 ca;
	struct event		*evs[2];
	sigset_t		 fwd;
	size_t			 nev = 0, i;
	char			*cause, map[64];
	int			 sync[2], err[2], pidfd = -1, rc, saved;
	int			 sfd = -1;

	memset(&rn, 0, sizeof(rn));
	rn.rn_run = run;
	rn.rn_net = net;
	rn.rn_pidfd = -1;
	rn.rn_status = RUN_EXIT_FAILURE;
	run->r_proxy_dir = -1;
	signal(SIGPIPE, SIG_IGN);
	if ((rn.rn_proxy.px_base = event_base_new()) == NULL) {
		log_warnx("run: no event loop");
		policy_free(policy);
		return RUN_EXIT_FAILURE;
	}
	if (run->r_mode == NET_PROXY && net->rn_socket == NULL) {
		if (run_proxy_start(&rn, policy, &cause) == -1 ||
		    run_proxy_dir(&rn, rn.rn_ep.ep_path, &cause) == -1)
			goto fail_cause;
	} else {
		policy_free(policy);
		if (run->r_mode == NET_PROXY && run_proxy_dir(&rn,
		    net->rn_socket, &cause) == -1)
			goto fail_cause;
	}
	policy = NULL;
	run->r_policy = NULL;	/* the proxy's now */

	/* Blocked from now on, read from a signalfd; the sandbox too. */
	run_sigset(&fwd);
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	if ((sfd = signalfd(-1, &fwd, SFD_NONBLOCK | SFD_CLOEXEC)) == -1) {
		log_warn("run: signalfd");
		goto out;
	}
	if (pipe2(sync, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1) {
		log_warn("run: pipe");
		goto out;
	}
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
	    CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_PIDFD;
	if (run->r_mode != NET_HOST)
		ca.flags |= CLONE_NEWNET;
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.exit_signal = SIGCHLD;
	fflush(NULL);
	rn.rn_pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (rn.rn_pid == 0) {
		close(sync[1]);
		close(err[0]);
		run->r_sync = sync[0];
		run->r_errfd = err[1];
		sandbox_main(run);
	}
	saved = errno;
	close(sync[0]);
	close(err[1]);
	if (rn.rn_pid == -1) {
		if (saved == ENOSYS)
			log_warnx("run: clone3 is not available: it needs Linux "
			    "5.3 or later, and no seccomp filter that hides it "
			    "(inside a cordon sandbox, or a container that "
			    "filters it, cordon cannot make another)");
		else
			run_userns_hint(saved);
		close(sync[1]);
		close(err[0]);
		goto out;
	}
	rn.rn_pidfd = pidfd;

	/* Our uid and gid, and only them, inside. */
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned int)run->r_uid,
	    (unsigned int)run->r_uid);
	rc = run_write_map(rn.rn_pid, "uid_map", map);
	if (rc == 0)
		rc = run_write_map(rn.rn_pid, "setgroups", "deny");
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned int)run->r_gid,
	    (unsigned int)run->r_gid);
	if (rc == 0)
		rc = run_write_map(rn.rn_pid, "gid_map", map);
	if (rc == -1 || write(sync[1], "g", 1) != 1) {
		log_warn("run: the sandbox's uid and gid maps");
		kill(rn.rn_pid, SIGKILL);
	}
	close(sync[1]);

	evs[nev++] = event_new(rn.rn_proxy.px_base, rn.rn_pidfd, EV_READ |
	    EV_PERSIST, run_exited_cb, &rn);
	evs[nev++] = event_new(rn.rn_proxy.px_base, sfd, EV_READ |
	    EV_PERSIST, run_signal_cb, &rn);
	for (i = 0; i < nev; i++)
		if (evs[i] == NULL || event_add(evs[i], NULL) == -1) {
			log_warnx("run: cannot watch the sandbox");
			kill(rn.rn_pid, SIGKILL);
			break;
		}
	while (!rn.rn_done)
		if (event_base_dispatch(rn.rn_proxy.px_base) != 0)
			break;
	if (!rn.rn_done) {
		kill(rn.rn_pid, SIGKILL);
		waitpid(rn.rn_pid, NULL, 0);
	}
	for (i = 0; i < nev; i++)
		if (evs[i] != NULL)
			event_free(evs[i]);
	run_relay_errors(err[0]);
	close(err[0]);
	goto out;

fail_cause:
	log_warnx("run: %s", cause);
	free(cause);
	policy_free(policy);
out:
	if (rn.rn_own_proxy) {
		evconnlistener_free(rn.rn_listener);
		conn_close_all(&rn.rn_proxy);
		if (rn.rn_proxy.px_log != NULL &&
		    jsonl_failed(rn.rn_proxy.px_log))
			log_warnx("run: the egress log %s could not be "
			    "written in full", net->rn_log);
		jsonl_close(rn.rn_proxy.px_log);
		dns_free(rn.rn_proxy.px_dns);
		ppolicy_unref(rn.rn_proxy.px_policy);
	}
	if (rn.rn_dir != NULL) {
		endpoint_unlink(&rn.rn_ep);
		rmdir(rn.rn_dir);
		free(rn.rn_dir);
	}
	endpoint_clear(&rn.rn_ep);
	if (!net->rn_quiet)
		run_summary(&rn);
	for (i = 0; i < rn.rn_nrefused; i++) {
		free(rn.rn_refused[i].rf_target);
		free(rn.rn_refused[i].rf_reason);
		free(rn.rn_refused[i].rf_hint);
	}
	free(rn.rn_refused);
	if (run->r_proxy_dir != -1)
		close(run->r_proxy_dir);
	if (rn.rn_pidfd != -1)
		close(rn.rn_pidfd);
	if (sfd != -1)
		close(sfd);
	event_base_free(rn.rn_proxy.px_base);
	return rn.rn_status;
}
