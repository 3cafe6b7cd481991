/*
 * offline.c: main() of cordon-offline, `cordon run` for the runs that
 * have no proxy (network mode none or host): the same run as
 * cordon-main's, linked without the proxy, the ssh-agent, the CA and
 * OpenSSL, whose loading costs a fresh run about half a millisecond.
 * cordon (front.c) execs it for `run --network none`; a run it finds it
 * cannot serve after all (the policy's mode, --control) it hands to
 * cordon-main, beside it, with the same argv, before anything is made.
 *
 * Runs in: cordon run on the host.
 */
#include <sys/prctl.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "offline/offline.h"
#include "runner/runner.h"

static char	**offline_argv;

/*
 * Execs cordon-main, the program beside this one, with the argv this
 * one was given.  Returns only on failure, having said why.
 */
void
offline_exec_main(void)
{
	char	 self[PATH_MAX], path[PATH_MAX + 16], *slash;
	ssize_t	 n;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) == -1) {
		log_warn("run: /proc/self/exe");
		return;
	}
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		slash[1] = '\0';
	snprintf(path, sizeof(path), "%scordon-main", slash != NULL ? self :
	    "");
	fflush(NULL);
	execv(path, offline_argv);
	log_warn("run: this run needs cordon-main (%s)", path);
	log_warnx("hint: cordon-offline serves runs without the proxy; "
	    "install cordon-main beside it");
}

int
main(int argc, char **argv)
{
	int	 i;

	offline_argv = argv;
	(void)prctl(PR_SET_NAME, "cordon", 0, 0, 0);
	i = log_init_args(argc, argv);
	/* Anything but a run, as cordon-main would take it, is its. */
	if (i == argc || argv[i][0] == '-' || strcmp(argv[i], "run") != 0) {
		offline_exec_main();
		return RUN_EXIT_FAILURE;
	}
	opterr = 0;
	return run_cmd(argc - i, argv + i);
}
