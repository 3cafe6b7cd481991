/*
 * log_main.c: main() of cordon-log, `cordon log` as a program of its own
 * that links jansson and zlib alone, which cordon (front.c) execs for
 * it.  Reading a log needs neither OpenSSL nor the sandbox's libraries,
 * and the loader's work over them would cost more than a short tail
 * does.  The argv is cordon's, unchanged: the global flags (-v), then
 * log and its own.  Only it serves log: cordon-main links neither
 * log_cmd.c nor zlib.
 */
#include <sys/prctl.h>

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "logs/elog.h"

int
main(int argc, char **argv)
{
	int	 i;

	/* Named cordon, as cordon-main's processes are. */
	(void)prctl(PR_SET_NAME, "cordon", 0, 0, 0);
	i = log_init_args(argc, argv);
	if (i == argc || strcmp(argv[i], "log") != 0) {
		fprintf(stderr, "cordon-log: it serves cordon log, for "
		    "cordon: run cordon log\n");
		return 2;
	}
	/* Each subcommand says what it refused (opt_refused). */
	opterr = 0;
	return log_cmd(argc - i, argv + i);
}
