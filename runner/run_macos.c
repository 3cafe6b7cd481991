/*
 * run_macos.c: `cordon run` on macOS: the command under
 * /usr/bin/sandbox-exec with the policy's Seatbelt profile (seatbelt.c),
 * its network only the proxy on localhost:PORT, a private TMPDIR, and its
 * own session.  Built on macOS only; on Linux `make macos-check` compiles
 * it with -D__APPLE__ -fsyntax-only, which is why it uses POSIX calls
 * alone.  No privilege is held or needed: sandbox-exec applies the
 * profile to itself, then executes the command, which inherits it.
 *
 * Runs in: cordon run on macOS, in place of the clone.
 */
#ifdef __APPLE__

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "profile/profile.h"
#include "runner/runner.h"

#define SANDBOX_EXEC	"/usr/bin/sandbox-exec"

static volatile sig_atomic_t	 run_macos_child;

/* The command has its own session: pass the terminal's signals on. */
static void
run_macos_signal_cb(int sig)
{
	if (run_macos_child > 0)
		(void)kill(run_macos_child, sig);
}

static char *
run_macos_realpath(const char *path)
{
	return realpath(path, NULL);
}

/*
 * sandbox-exec's command line and environment; run_macos_clear() frees
 * them.  The arrays borrow the command's and the environment's strings.
 */
struct macos_run {
	char		 *mr_profile;	/* the Seatbelt profile */
	char		 *mr_tmp;	/* the private TMPDIR, made */
	char		 *mr_dparam;	/* SB_PARAM_TMPDIR=... */
	char		 *mr_tparam;	/* SB_PARAM_TTY=... */
	char		 *mr_tenv;	/* TMPDIR=.../ */
	char		**mr_argv;
	char		**mr_env;
};

/* Makes the private TMPDIR; returns 0, or -1 having said why. */
static int
run_macos_tmpdir(struct macos_run *mr)
{
	char		 tmpl[PATH_MAX];
	const char	*base;

	if ((base = getenv("TMPDIR")) == NULL || base[0] != '/')
		base = "/tmp";
	if (snprintf(tmpl, sizeof(tmpl), "%s/cordon-XXXXXX", base) >=
	    (int)sizeof(tmpl) || mkdtemp(tmpl) == NULL ||
	    (mr->mr_tmp = realpath(tmpl, NULL)) == NULL) {
		log_warn("run: a private TMPDIR in %s", base);
		return -1;
	}
	return 0;
}

/*
 * sandbox-exec's arguments for argv, with the profile and its
 * parameters (the TMPDIR, the terminal), and the environment env with
 * TMPDIR replaced.
 */
static void
run_macos_cmdline(struct macos_run *mr, char **argv, char **env)
{
	const char	*tty = NULL;
	size_t		 i, n, ne;

	for (i = 0; i < 3 && tty == NULL; i++)
		tty = ttyname((int)i);
	xasprintf(&mr->mr_dparam, SB_PARAM_TMPDIR "=%s", mr->mr_tmp);
	xasprintf(&mr->mr_tparam, SB_PARAM_TTY "=%s", tty != NULL ? tty :
	    "/dev/null");
	xasprintf(&mr->mr_tenv, "TMPDIR=%s/", mr->mr_tmp);

	for (n = 0; argv[n] != NULL; n++)
		;
	mr->mr_argv = xcalloc(n + 9, sizeof(*mr->mr_argv));
	mr->mr_argv[0] = (char *)(uintptr_t)SANDBOX_EXEC;
	mr->mr_argv[1] = (char *)(uintptr_t)"-D";
	mr->mr_argv[2] = mr->mr_dparam;
	mr->mr_argv[3] = (char *)(uintptr_t)"-D";
	mr->mr_argv[4] = mr->mr_tparam;
	mr->mr_argv[5] = (char *)(uintptr_t)"-p";
	mr->mr_argv[6] = mr->mr_profile;
	mr->mr_argv[7] = (char *)(uintptr_t)"--";
	for (i = 0; i < n; i++)
		mr->mr_argv[8 + i] = argv[i];
	for (ne = 0; env[ne] != NULL; ne++)
		;
	mr->mr_env = xcalloc(ne + 2, sizeof(*mr->mr_env));
	for (i = 0, n = 0; i < ne; i++)
		if (strncmp(env[i], "TMPDIR=", 7) != 0)
			mr->mr_env[n++] = env[i];
	mr->mr_env[n] = mr->mr_tenv;
}

/*
 * Runs sandbox-exec in a session of its own, the terminal's signals
 * passed on, and waits.  Returns the command's status, 128+n for signal
 * n, or RUN_EXIT_* when the fork or the exec failed.
 */
static int
run_macos_spawn(const struct macos_run *mr)
{
	static const int	 fwd[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM };
	struct sigaction	 sa;
	size_t			 i;
	pid_t			 pid;
	int			 status;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = run_macos_signal_cb;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < nitems(fwd); i++)
		if (sigaction(fwd[i], &sa, NULL) == -1)
			fatal("run: sigaction");
	if ((pid = fork()) == -1) {
		log_warn("run: fork");
		return RUN_EXIT_FAILURE;
	}
	if (pid == 0) {
		/* A session of its own: no TIOCSTI into our terminal. */
		if (setsid() == -1)
			_exit(RUN_EXIT_FAILURE);
		execve(SANDBOX_EXEC, mr->mr_argv, mr->mr_env);
		_exit(errno == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC);
	}
	run_macos_child = pid;
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			fatal("run: waitpid");
	run_macos_child = 0;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return RUN_EXIT_FAILURE;
}

/* Removes the private TMPDIR if it is empty, and frees mr. */
static void
run_macos_clear(struct macos_run *mr)
{
	if (mr->mr_tmp != NULL && rmdir(mr->mr_tmp) == -1 && errno != ENOENT)
		log_warnx("run: the command's TMPDIR %s is left, with what it "
		    "wrote there", mr->mr_tmp);
	free(mr->mr_tmp);
	free(mr->mr_profile);
	free(mr->mr_dparam);
	free(mr->mr_tparam);
	free(mr->mr_tenv);
	free(mr->mr_argv);
	free(mr->mr_env);
}

/*
 * Runs argv (environment env, which already names the proxy) under the
 * profile of p, the proxy on localhost:port; waits and returns the
 * command's status, 128+n for signal n, or RUN_EXIT_* when cordon or
 * sandbox-exec failed.  Nothing is run when the profile cannot be made.
 */
int
run_macos(const struct policy *p, int port, char **argv, char **env)
{
	struct sb_opts		 so = { port, NULL, run_macos_realpath };
	struct macos_run	 mr;
	char			*cause;
	int			 rc = RUN_EXIT_FAILURE;

	memset(&mr, 0, sizeof(mr));
	so.so_home = getenv("HOME");
	if ((mr.mr_profile = seatbelt_profile(p, &so, &cause)) == NULL) {
		log_warnx_lines(cause);
		log_warnx("run: no Seatbelt profile, nothing run");
		return RUN_EXIT_FAILURE;
	}
	if (run_macos_tmpdir(&mr) == 0) {
		run_macos_cmdline(&mr, argv, env);
		rc = run_macos_spawn(&mr);
	}
	run_macos_clear(&mr);
	return rc;
}

#endif /* __APPLE__ */
