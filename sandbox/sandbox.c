/*
 * sandbox.c: the sandbox's PID 1, and the command's last steps.
 *
 * run.c clones this process into new user, mount, PID, network, IPC, UTS
 * and cgroup namespaces.  It waits for the parent's uid and gid maps,
 * builds the filesystem (mount.c), brings `lo` up, opens the bridge to
 * the proxy and forks the command.  Then it stays, as PID 1: it reaps
 * orphans, passes the signals it gets on to the command, and relays the
 * command's connections to the proxy.  When the command exits, PID 1
 * exits with its status, and the kernel ends whatever is left in the
 * namespace.
 *
 * PID 1 holds the host's environment and a descriptor of the proxy's
 * folder, so it is not dumpable: the command (same uid, no capability)
 * can neither trace it nor read its /proc files.  The command itself
 * gets, in this order: its own session (unless it keeps the terminal),
 * no capability, every inherited descriptor marked close-on-exec,
 * Landlock, and the seccomp filter last, just before exec (with its
 * listener, which judges its Unix sockets' connect(2), handed to cordon
 * run and closed).
 */
#include <sys/types.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <net/if.h>

#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "bridge/bridge.h"
#include "lib/endpoint.h"
#include "lib/fdpass.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "sandbox/capture.h"
#include "sandbox/sandbox.h"
#include "wire/pp2.h"

/* The fix when the capture cannot be set up. */
#define SANDBOX_NOCAPTURE	"to run with the proxy variables alone, set " \
	"\"capture\": \"off\" under \"network\" in a policy (--policy " \
	"FILE, or the user's)"

static pid_t	 command_pid = -1;
static struct scratch_fds scratch;	/* the scratch layers' tmpfs */

/*
 * Fills set with the signals passed on to the command: cordon run reads
 * them from a signalfd and hands them to PID 1, which passes them on.
 */
int
sandbox_sigset(sigset_t *set)
{
	static const int	 sigs[] = RUN_FORWARDED;
	size_t			 i;

	sigemptyset(set);
	for (i = 0; i < nitems(sigs); i++)
		sigaddset(set, sigs[i]);
	return 0;
}

/*
 * A diagnostic socket of this process's network namespace, or -1: PID 1
 * makes the sandbox's (sandbox_diag), the connect thread the host's.
 */
int
sandbox_unixdiag(void)
{
	return socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
}

/* Brings `lo` up: the only interface of the new network namespace. */
static void
loopback_up(const struct sandbox *sb)
{
	struct ifreq	 ifr;
	int		 s;

	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, "lo", sizeof(ifr.ifr_name) - 1);
	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1 ||
	    ioctl(s, SIOCGIFFLAGS, &ifr) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE, "lo: %s",
		    strerror(errno));
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "bringing lo up: %s",
		    strerror(errno));
	close(s);
}

/*
 * The command's Landlock ruleset, built once the mounts are made and
 * while cordon run finishes its part, so that the command only restricts
 * itself with it (landlock_restrict), and the stack it starts on.
 */
static char *
sandbox_command_prep(const struct sandbox *sb, struct sandbox_cmd *cmd)
{
	char	*stack, *cause;

	*cmd = sb->sb_cmd;
	if (landlock_abi() > 0 && (cmd->sc_llfd = landlock_ruleset(
	    cmd->sc_ll, cmd->sc_nll, true, &cause)) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "Landlock: %s", cause);
	if ((stack = command_stack()) == NULL)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "the command's stack: %s", strerror(errno));
	return stack;
}

static int
sandbox_command_child(void *arg)
{
	command_exec(arg);
}

/*
 * The command, once cordon run said go: its seccomp program, which
 * cordon run wrote before that, read here, then its process started
 * (command_spawn: sharing PID 1's memory until its exec).
 */
static void
sandbox_command_start(const struct sandbox *sb, struct sandbox_cmd *cmd,
    char *stack)
{
	static struct sock_fprog	 prog;
	char				*cause;

	if (sysfilter_apply_read(cmd->sc_seccomp, &prog, &cause) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "%s; nothing run", cause);
	cmd->sc_prog = &prog;
	if ((command_pid = command_spawn(sandbox_command_child, cmd,
	    stack)) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "fork: %s", strerror(errno));
}

/* SIGCHLD: reaps every child; the command's end is the sandbox's. */
static void
sandbox_child_cb(evutil_socket_t sig, short what, void *arg)
{
	const struct sandbox	*sb = arg;
	pid_t			 pid;
	int			 status, code;

	(void)sig;
	(void)what;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (sb->sb_pipes.sp_session != -1)
			sandbox_session_reaped(sb, pid, status);
		if (pid != command_pid)
			continue;
		/* A run's (a session's commands are not command_pid). */
		code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
		    WEXITSTATUS(status);
		sandbox_end_alone();
		sandbox_end_tell(sb, &scratch, code);
		_exit(code);
	}
}

/*
 * A signal for the command: from cordon run outside (SI_USER), or from
 * inside.  One the terminal sent (SI_KERNEL) is not passed: the command
 * got it too when it shares the terminal, and cordon run passes it when
 * it does not.
 */
static void
sandbox_signal_cb(evutil_socket_t fd, short what, void *arg)
{
	struct signalfd_siginfo	 si;

	(void)what;
	(void)arg;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (si.ssi_code != SI_KERNEL && command_pid > 0)
			kill(command_pid, (int)si.ssi_signo);
}

/*
 * The bridge to the proxy, on 127.0.0.1 and ::1 (where IPv6 exists); with
 * the capture, it takes the connections the rules send it too.
 */
static void
sandbox_bridge(const struct sandbox *sb, struct event_base *base)
{
	static struct endpoint	 listen4, listen6, target;
	static struct pp2_out	 po;
	struct bridge		*b;
	struct capture		*cp = NULL;
	char			*cause, text[64];

	if (sb->sb_net.sn_capture) {
		if (netcap_setup(RUN_BRIDGE_PORT, sb->sb_net.sn_host_ports,
		    sb->sb_net.sn_nhost_ports, &cause) == -1)
			sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
			    "the capture: %s; "
			    "%s", cause, SANDBOX_NOCAPTURE);
		cp = capture_new();
	}

	if (fchdir(sb->sb_net.sn_proxy_dir) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "the proxy's folder: %s",
		    strerror(errno));
	xasprintf(&cause, "unix:%s", sb->sb_net.sn_proxy_name);
	if (endpoint_parse(cause, &target, &cause) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE, "%s",
		    cause);
	/* What a failure names: the proxy, not a path relative to here. */
	free(target.ep_text);
	xasprintf(&target.ep_text, "the proxy at %s, the sandbox's only way "
	    "out", sb->sb_net.sn_proxy_path);
	snprintf(text, sizeof(text), "tcp:127.0.0.1:%d", RUN_BRIDGE_PORT);
	if (endpoint_parse(text, &listen4, &cause) == -1 ||
	    (b = bridge_new(base, &listen4, &target, BRIDGE_MAX_CONNS,
	    &cause)) == NULL || bridge_proxy_id(b, sb->sb_id,
	    sb->sb_net.sn_narrow,
	    sb->sb_cmd.sc_name[0] != '\0' ? sb->sb_cmd.sc_name : NULL,
	    sb->sb_net.sn_channel ? PP2_WATCH_VERSION : NULL, &cause) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "the bridge: %s", cause);
	if (cp != NULL) {
		bridge_capture(b, capture_target, cp);
		po.po_id = sb->sb_id;
		po.po_narrow = sb->sb_net.sn_narrow;
		po.po_command = sb->sb_cmd.sc_name[0] != '\0' ? sb->sb_cmd.sc_name :
		    NULL;
		po.po_channel = sb->sb_net.sn_channel ? PP2_WATCH_VERSION :
		    NULL;
		if (resolver_new(base, cp, &target, &po, &cause) == NULL)
			sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
			    "the sandbox's "
			    "resolver: %s", cause);
	}
	snprintf(text, sizeof(text), "tcp:[::1]:%d", RUN_BRIDGE_PORT);
	if (endpoint_parse(text, &listen6, &cause) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "the bridge: %s", cause);
	if ((b = bridge_new(base, &listen6, &target, BRIDGE_MAX_CONNS,
	    &cause)) == NULL) {
		/* A kernel without IPv6: 127.0.0.1 is enough. */
		log_debug("%s: %s", __func__, cause);
		free(cause);
	} else if (bridge_proxy_id(b, sb->sb_id, sb->sb_net.sn_narrow,
	    sb->sb_cmd.sc_name[0] != '\0' ? sb->sb_cmd.sc_name : NULL,
	    sb->sb_net.sn_channel ? PP2_WATCH_VERSION : NULL, &cause) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "the bridge: %s", cause);
	else if (cp != NULL)
		bridge_capture(b, capture_target, cp);
}

/*
 * Writes the len bytes of data to a new file at path (from the folder
 * dirfd), read-only: what PID 1 gives the command, before it exists.
 */
static void
sandbox_own_file(const struct sandbox *sb, int dirfd, const char *path,
    const char *data, size_t len)
{
	size_t	 off = 0;
	ssize_t	 n;
	int	 fd;

	if ((fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0444)) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE, "%s: %s",
		    path,
		    strerror(errno));
	while (off < len) {
		if ((n = write(fd, data + off, len - off)) == -1 &&
		    errno == EINTR)
			continue;
		if (n <= 0)
			sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
			    "%s: %s", path,
			    strerror(errno));
		off += (size_t)n;
	}
	if (fchmod(fd, 0444) == -1 || close(fd) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE, "%s: %s",
		    path,
		    strerror(errno));
}

/*
 * cordon's folder on the private /run, for the files of sandbox_files.
 * The user's, so a tool cannot change them by mistake (read-only files).
 */
static void
sandbox_own_dir(const struct sandbox *sb)
{
	if ((mkdir(RUN_OWN_DIR, 0755) == -1 && errno != EEXIST) ||
	    chmod(RUN_OWN_DIR, 0755) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE, "%s: %s",
		    RUN_OWN_DIR,
		    strerror(errno));
}

/* apt's configuration for a run as root: see sandbox_main. */
static const char sandbox_apt[] = "APT::Sandbox::User \"root\";\n";

/* The sandbox's resolv.conf: the resolver inside, and nothing else. */
static const char sandbox_resolv[] =
    "# cordon: the sandbox's resolver. It decides each name by the\n"
    "# policy and looks none up outside; DNS to any other server is\n"
    "# answered by it too.\n"
    "nameserver 127.0.0.1\n";

/*
 * /etc/resolv.conf is a link that leads nowhere in the sandbox (systemd-
 * resolved's, into the host's /run, which the sandbox does not see):
 * makes the file where it leads, if that is a folder made anew for the
 * sandbox (the tree outside is read-only, so anywhere else fails, and
 * then resolvers ask 127.0.0.1 anyway).
 */
static void
sandbox_resolv_link(const struct sandbox *sb)
{
	char	 target[PATH_MAX], *p;
	ssize_t	 n;
	int	 etc;

	if ((n = readlink("/etc/resolv.conf", target, sizeof(target) - 1)) <=
	    0 || (etc = open("/etc", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return;
	target[n] = '\0';
	for (p = strchr(target + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdirat(etc, target, 0755) == -1 && errno != EEXIST) {
			log_debug("%s: %s: %s", __func__, target,
			    strerror(errno));
			close(etc);
			return;
		}
		*p = '/';
	}
	sandbox_own_file(sb, etc, target, sandbox_resolv,
	    sizeof(sandbox_resolv) - 1);
	close(etc);
}

/*
 * With the capture, /etc/resolv.conf names the sandbox's resolver alone:
 * no search domains of the host's (each would be one more refused name,
 * and their names are the host's business).  The file the host has (or
 * a link leads to) is covered with ours, read-only.
 */
static void
sandbox_resolv_conf(const struct sandbox *sb)
{
	struct stat	 st;
	char		*real;

	sandbox_own_file(sb, AT_FDCWD, RUN_RESOLV_CONF, sandbox_resolv,
	    sizeof(sandbox_resolv) - 1);
	if ((real = realpath("/etc/resolv.conf", NULL)) == NULL) {
		if (errno == ENOENT && lstat("/etc/resolv.conf", &st) == 0 &&
		    S_ISLNK(st.st_mode))
			sandbox_resolv_link(sb);
		return;
	}
	if (stat(real, &st) == 0 && S_ISREG(st.st_mode) &&
	    (mount(RUN_RESOLV_CONF, real, NULL, MS_BIND, NULL) == -1 ||
	    mount(NULL, real, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == -1))
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "the capture: covering %s "
		    "with the sandbox's resolv.conf: %s; %s", real,
		    strerror(errno), SANDBOX_NOCAPTURE);
	free(real);
}

/*
 * The sandbox's own network namespace, for the connect thread: a
 * UNIX_DIAG socket made here, where the command's sockets will be,
 * before the command's listener (notify.c).  With the host's network
 * there is nothing of the sandbox's own to tell apart.
 */
static void
sandbox_diag(const struct sandbox *sb)
{
	int	 fd;

	if (sb->sb_cmd.sc_notifyfd == -1 || sb->sb_net.sn_mode == NET_HOST)
		return;
	if ((fd = sandbox_unixdiag()) == -1 ||
	    fdpass_send(sb->sb_cmd.sc_notifyfd, fd, "D", 1, MSG_NOSIGNAL) != 1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "the sandbox's Unix "
		    "sockets, for cordon run: %s", strerror(errno));
	close(fd);
}

/*
 * PID 1, from the clone to the command's end: the filesystem, the
 * network, the bridge, then the command (command_exec) and its wait.
 */
void
sandbox_main(const struct sandbox *sb)
{
	struct event_base	*base;
	struct event		*ev;
	struct sandbox_cmd	 cmd;
	sigset_t		 fwd;
	char			 go, *stack = NULL;
	int			 sfd, spare;

	/*
	 * The parent writes our maps, then one byte; EOF: it is gone.  A
	 * second byte, once its checks are up, comes before the command.
	 */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (read(sb->sb_pipes.sp_sync, &go, 1) != 1)
		_exit(RUN_EXIT_FAILURE);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

	spare = mount_sandbox(sb, &scratch);
	if (sb->sb_view.sv_ca_pem != NULL || sb->sb_net.sn_capture ||
	    sb->sb_view.sv_nsysscratch > 0)
		sandbox_own_dir(sb);
	/*
	 * apt as root drops to its _apt user to fetch; in a sandbox that
	 * maps root alone it cannot, and fails.  Root it stays (APT_CONFIG,
	 * set unless the user passed one).
	 */
	if (sb->sb_view.sv_nsysscratch > 0)
		sandbox_own_file(sb, AT_FDCWD, RUN_APT_CONF, sandbox_apt,
		    sizeof(sandbox_apt) - 1);
	if (sb->sb_view.sv_ca_pem != NULL) {
		sandbox_own_file(sb, AT_FDCWD, RUN_CA_BUNDLE,
		    sb->sb_view.sv_ca_pem,
		    sb->sb_view.sv_ca_len);
		sandbox_own_file(sb, AT_FDCWD, RUN_CA_JAVA,
		    (const char *)sb->sb_view.sv_ca_java,
		    sb->sb_view.sv_ca_java_len);
	}
	if (sb->sb_net.sn_capture)
		sandbox_resolv_conf(sb);
	if (sethostname("cordon", 6) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "sethostname: %s",
		    strerror(errno));
	if (sb->sb_net.sn_mode != NET_HOST)
		loopback_up(sb);
	sandbox_diag(sb);

	if ((base = event_base_new()) == NULL)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "no event loop");
	if (sb->sb_net.sn_mode == NET_PROXY)
		sandbox_bridge(sb, base);
	if (publish_inside(base, sb->sb_pipes.sp_pubfd) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "--publish: no event for "
		    "the published ports");
	signal(SIGPIPE, SIG_IGN);

	/*
	 * The forwarded signals came blocked from cordon run; they stay so
	 * here, read from a signalfd, and the command unblocks them.
	 */
	sandbox_sigset(&fwd);
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	if ((sfd = signalfd(-1, &fwd, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "signalfd: %s",
		    strerror(errno));
	if ((ev = evsignal_new(base, SIGCHLD, sandbox_child_cb,
	    (void *)(uintptr_t)sb)) ==
	    NULL || evsignal_add(ev, NULL) == -1 ||
	    (ev = event_new(base, sfd, EV_READ | EV_PERSIST,
	    sandbox_signal_cb, NULL)) == NULL || event_add(ev, NULL) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "cannot watch signals");
	if (sb->sb_pipes.sp_session == -1)
		stack = sandbox_command_prep(sb, &cmd);
	if (read(sb->sb_pipes.sp_sync, &go, 1) != 1)
		_exit(RUN_EXIT_FAILURE);
	close(sb->sb_pipes.sp_sync);
	if (sb->sb_pipes.sp_session != -1) {
		close(spare);
		sandbox_session(sb, base, &scratch);
	}
	sandbox_command_start(sb, &cmd, stack);
	close(spare);	/* an unmount's wait, while the command runs */
	if (cmd.sc_llfd != -1)
		close(cmd.sc_llfd);
	if (sb->sb_cmd.sc_notifyfd != -1)
		close(sb->sb_cmd.sc_notifyfd);	/* the command's to send on */
	close(sb->sb_pipes.sp_errfd);
	/* A SIGCHLD before the loop runs is seen by the loop: look once. */
	sandbox_child_cb(SIGCHLD, 0, (void *)(uintptr_t)sb);
	event_base_dispatch(base);
	_exit(RUN_EXIT_FAILURE);
}
