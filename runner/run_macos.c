/*
 * run_macos.c: `cordon run` on macOS: the command under
 * /usr/bin/sandbox-exec with the policy's Seatbelt profile (seatbelt.c),
 * its network only the proxy on localhost:PORT, a private TMPDIR, and its
 * own session.  Built on macOS only; on Linux `make macos-check` compiles
 * it with -D__APPLE__ -fsyntax-only, which is why it uses POSIX calls
 * alone.  No privilege is held or needed: sandbox-exec applies the
 * profile to itself, then executes the command, which inherits it.
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

#include "log.h"
#include "policy.h"
#include "profile.h"
#include "runner.h"
#include "util.h"
#include "xmalloc.h"

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
 * Runs argv (environment env, which already names the proxy) under the
 * profile of p, the proxy on localhost:port; waits and returns the
 * command's status, 128+n for signal n, or RUN_EXIT_* when cordon or
 * sandbox-exec failed.  Nothing is run when the profile cannot be made.
 */
int
run_macos(const struct policy *p, int port, char **argv, char **env)
{
	static const int	 fwd[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM };
	struct sb_opts		 so = { port, NULL, run_macos_realpath };
	struct sigaction	 sa;
	char			 tmpl[PATH_MAX], *tmp = NULL, *profile, *cause;
	char			*dparam = NULL, *tparam = NULL, *tenv = NULL;
	char			**xargv = NULL, **xenv = NULL;
	const char		*tty = NULL, *base;
	size_t			 i, n, ne;
	pid_t			 pid;
	int			 status, rc = RUN_EXIT_FAILURE;

	so.so_home = getenv("HOME");
	if ((profile = seatbelt_profile(p, &so, &cause)) == NULL) {
		log_warnx_lines(cause);
		log_warnx("run: no Seatbelt profile, nothing run");
		return RUN_EXIT_FAILURE;
	}
	if ((base = getenv("TMPDIR")) == NULL || base[0] != '/')
		base = "/tmp";
	if (snprintf(tmpl, sizeof(tmpl), "%s/cordon-XXXXXX", base) >=
	    (int)sizeof(tmpl) || mkdtemp(tmpl) == NULL ||
	    (tmp = realpath(tmpl, NULL)) == NULL) {
		log_warn("run: a private TMPDIR in %s", base);
		goto out;
	}
	for (i = 0; i < 3 && tty == NULL; i++)
		tty = ttyname((int)i);
	xasprintf(&dparam, SB_PARAM_TMPDIR "=%s", tmp);
	xasprintf(&tparam, SB_PARAM_TTY "=%s", tty != NULL ? tty :
	    "/dev/null");
	xasprintf(&tenv, "TMPDIR=%s/", tmp);

	for (n = 0; argv[n] != NULL; n++)
		;
	xargv = xcalloc(n + 9, sizeof(*xargv));
	xargv[0] = (char *)(uintptr_t)SANDBOX_EXEC;
	xargv[1] = (char *)(uintptr_t)"-D";
	xargv[2] = dparam;
	xargv[3] = (char *)(uintptr_t)"-D";
	xargv[4] = tparam;
	xargv[5] = (char *)(uintptr_t)"-p";
	xargv[6] = profile;
	xargv[7] = (char *)(uintptr_t)"--";
	for (i = 0; i < n; i++)
		xargv[8 + i] = argv[i];
	for (ne = 0; env[ne] != NULL; ne++)
		;
	xenv = xcalloc(ne + 2, sizeof(*xenv));
	for (i = 0, n = 0; i < ne; i++)
		if (strncmp(env[i], "TMPDIR=", 7) != 0)
			xenv[n++] = env[i];
	xenv[n] = tenv;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = run_macos_signal_cb;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < nitems(fwd); i++)
		if (sigaction(fwd[i], &sa, NULL) == -1)
			fatal("run: sigaction");
	if ((pid = fork()) == -1) {
		log_warn("run: fork");
		goto out;
	}
	if (pid == 0) {
		/* A session of its own: no TIOCSTI into our terminal. */
		if (setsid() == -1)
			_exit(RUN_EXIT_FAILURE);
		execve(SANDBOX_EXEC, xargv, xenv);
		_exit(errno == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC);
	}
	run_macos_child = pid;
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			fatal("run: waitpid");
	run_macos_child = 0;
	if (WIFEXITED(status))
		rc = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		rc = 128 + WTERMSIG(status);
out:
	if (tmp != NULL && rmdir(tmp) == -1 && errno != ENOENT)
		log_warnx("run: the command's TMPDIR %s is left, with what it "
		    "wrote there", tmp);
	free(tmp);
	free(profile);
	free(dparam);
	free(tparam);
	free(tenv);
	free(xargv);
	free(xenv);
	return rc;
}

#endif /* __APPLE__ */
