/*
 * command.c: a command's last steps, in its own process, forked by the
 * sandbox's PID 1 (sandbox.c); it reads the command's part of the
 * sandbox (struct sandbox_cmd) alone.
 *
 * The command gets, in this order: default signal dispositions, its own
 * session (unless it keeps the terminal), its folder, no capability,
 * every inherited descriptor marked close-on-exec, Landlock, and the
 * seccomp filter last, just before exec (with its listener, which judges
 * its Unix sockets' connect(2), handed to cordon run and closed).  A
 * failure goes to the command's error pipe (sandbox_fail): nothing runs.
 */
#include <sys/types.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/close_range.h>

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

extern char **environ;

/*
 * Empties the bounding set: no exec can give a capability back.  A
 * session's PID 1 does it once for all its commands (sc_bset_empty);
 * it keeps the capabilities it has.  Ends the process on failure.
 */
void
command_bset_drop(int errfd)
{
	int	 cap;

	/* Capabilities are numbered from 0; EINVAL: past the last one. */
	for (cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1) {
			if (errno == EINVAL && cap > 0)
				break;
			sandbox_fail(errfd, RUN_EXIT_FAILURE, "dropping "
			    "capability %d: %s", cap, strerror(errno));
		}
}

/* Drops every capability, for now and across exec (root included). */
static void
caps_drop(const struct sandbox_cmd *cmd)
{
	struct __user_cap_header_struct	 hdr;
	struct __user_cap_data_struct	 data[2];

	if (!cmd->sc_bset_empty)
		command_bset_drop(cmd->sc_errfd);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 &&
	    errno != EINVAL)
		sandbox_fail(cmd->sc_errfd, RUN_EXIT_FAILURE,
		    "clearing ambient "
		    "capabilities: %s", strerror(errno));
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capset, &hdr, data) == -1)
		sandbox_fail(cmd->sc_errfd, RUN_EXIT_FAILURE, "capset: %s",
		    strerror(errno));
}

/*
 * Finds argv[0] in PATH as a shell does, by a look at each folder, and
 * runs the first executable file: execvp's way, an execve(2) tried in
 * each folder, copies the whole environment into the kernel each time
 * (a tenth of a command's start with ten folders).  Returns when none
 * is found or it did not run, for execvp to try the same in its way and
 * say why.
 */
static void
command_path(char *const *argv)
{
	struct stat	 st;
	const char	*path, *p, *end;
	char		 file[PATH_MAX];
	size_t		 len;

	if (strchr(argv[0], '/') != NULL || (path = getenv("PATH")) == NULL)
		return;
	for (p = path; ; p = end + 1) {
		if ((end = strchr(p, ':')) == NULL)
			end = p + strlen(p);
		len = (size_t)(end - p);
		if (snprintf(file, sizeof(file), "%.*s/%s", len == 0 ? 1 :
		    (int)len, len == 0 ? "." : p, argv[0]) <
		    (int)sizeof(file) && stat(file, &st) == 0 &&
		    S_ISREG(st.st_mode) &&
		    access(file, X_OK) == 0) {
			execv(file, argv);
			return;
		}
		if (*end == '\0')
			return;
	}
}

/* The command's side of the fork: never returns. */
void
command_exec(const struct sandbox_cmd *cmd)
{
	sigset_t	 none;
	char		*cause;
	int		 err, sig, listener = -1;

	/* Default dispositions and nothing blocked, as a shell would. */
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (!cmd->sc_tty && setsid() == -1)
		sandbox_fail(cmd->sc_errfd, RUN_EXIT_FAILURE, "setsid: %s",
		    strerror(errno));
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (chdir(cmd->sc_cwd) == -1)
		sandbox_fail(cmd->sc_errfd, RUN_EXIT_FAILURE,
		    "the command's folder %s "
		    "is not reachable in the sandbox (%s); run it from the "
		    "workspace or a folder the policy leaves readable",
		    cmd->sc_cwd, strerror(errno));
	caps_drop(cmd);
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) == -1)
		sandbox_fail(cmd->sc_errfd, RUN_EXIT_FAILURE, "close_range: %s",
		    strerror(errno));
	/* A session's PID 1 built the same ruleset once (landlock.c). */
	if (cmd->sc_llfd != -1) {
		if (landlock_restrict(cmd->sc_llfd, &cause) == -1)
			sandbox_fail(cmd->sc_errfd, RUN_EXIT_FAILURE,
			    "Landlock: %s", cause);
	} else if (landlock_abi() > 0 && landlock_apply(cmd->sc_ll,
	    cmd->sc_nll, true, &cause) == -1)
		sandbox_fail(cmd->sc_errfd, RUN_EXIT_FAILURE, "Landlock: %s",
		    cause);
	if ((cmd->sc_prog != NULL ? sysfilter_apply_load(cmd->sc_prog,
	    cmd->sc_notifyfd != -1 ? &listener : NULL, &cause) :
	    sysfilter_apply(cmd->sc_seccomp, cmd->sc_notifyfd != -1 ?
	    &listener : NULL, &cause)) == -1)
		sandbox_fail(cmd->sc_errfd, RUN_EXIT_FAILURE, "%s; nothing run",
		    cause);
	/* The listener is cordon run's alone: the command must not answer. */
	if (cmd->sc_notifyfd != -1) {
		if (sysfilter_apply_send_listener(cmd->sc_notifyfd, listener,
		    &cause) == -1)
			sandbox_fail(cmd->sc_errfd, RUN_EXIT_FAILURE,
			    "%s; nothing run",
			    cause);
		close(listener);
		close(cmd->sc_notifyfd);
	}
	environ = cmd->sc_env;
	command_path(cmd->sc_argv);
	execvp(cmd->sc_argv[0], cmd->sc_argv);
	err = errno;
	sandbox_fail(cmd->sc_errfd,
	    err == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC,
	    "%s: %s%s", cmd->sc_argv[0], strerror(err), err == ENOENT &&
	    strchr(cmd->sc_argv[0], '/') == NULL ? " (not found in the "
	    "sandbox's PATH)" : "");
}

/*
 * Starts a command's process: fn(arg), which ends in command_exec, in a
 * child that shares this process's memory until its exec (CLONE_VM, as
 * posix_spawn does; the caller waits meanwhile, CLONE_VFORK), on stack
 * (COMMAND_STACK bytes): no copy of the caller's pages, and no fault on
 * each one written after.  fn runs cordon's code alone until exec and
 * writes nothing of the caller's but environ, put back here; its
 * descriptors, folder, credentials, Landlock domain and filter are its
 * own (no CLONE_FILES, CLONE_FS, CLONE_SIGHAND), and nothing of the
 * command runs before its exec.  No handler of the caller may run on
 * the clone: every signal stays blocked until command_exec resets them.
 * Returns the child's pid, or -1 with errno.
 */
pid_t
command_spawn(int (*fn)(void *), void *arg, char *stack)
{
	sigset_t	 all, old;
	char		**env = environ;
	pid_t		 pid;
	int		 saved;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
#ifdef __SANITIZE_ADDRESS__
	/*
	 * AddressSanitizer cannot follow a clone onto a stack of our own (it
	 * reports its own bookkeeping there as an overflow): a sanitizer
	 * build forks, with the same last steps.
	 */
	(void)stack;
	if ((pid = fork()) == 0)
		_exit(fn(arg));
#else
	pid = clone(fn, stack + COMMAND_STACK, CLONE_VM | CLONE_VFORK |
	    SIGCHLD, arg);
#endif
	saved = errno;
	environ = env;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return pid;
}

/* The stack command_spawn starts a command on, or NULL with errno. */
char *
command_stack(void)
{
	void	*p;

	p = mmap(NULL, COMMAND_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_STACK, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}
