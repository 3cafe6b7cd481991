/*
 * cordon.c: main(), global flags and the table of subcommands: cordon-main,
 * the whole program, which cordon (front.c) execs for what it does not
 * serve itself.
 */
#include <sys/prctl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/bridge.h"
#include "certs/certs.h"
#include "lib/log.h"
#include "lib/util.h"
#include "mcp/mcp.h"
#include "policies/policy.h"
#include "profile/profile.h"
#include "proxyd/proxy_cmd.h"
#include "runner/runner.h"
#include "session/sess.h"

struct subcommand {
	const char	*sc_name;
	int		(*sc_main)(int, char **);
	const char	*sc_usage;
};

static const struct subcommand subcommands[] = {
	{ "run", run_cmd,
	    "run [--network none|proxy|host] [--allow-domain P]... -- CMD..." },
	{ "session", session_cmd,
	    "session start [run's options] [--name N] [--idle S] | stop ID "
	    "| list [--json]" },
	{ "mcp", mcp_cmd,
	    "mcp [session start's and run's options]" },
	{ "policy", policy_cmd,
	    "policy check FILE... | explain HOST[:PORT] | show" },
	{ "proxy", proxy_cmd,
	    "proxy [--listen EP]... [--policy FILE]... [--log FILE|-]" },
	{ "bridge", bridge_cmd,
	    "bridge --listen EP --connect EP [--max-conns N]" },
	{ "profile", profile_cmd,
	    "profile seatbelt | windows-firewall [--policy FILE]... "
	    "[--proxy-port N]" },
	/* cordon-log's (logs/log_main.c), which cordon execs for it. */
	{ "log", NULL,
	    "log summary [--json] FILE... | tail [-f] [-n N] FILE" },
	{ "ca", ca_cmd,
	    "ca init [--dir DIR] [--force] | show [--dir DIR]" },
};

static void
usage(FILE *f)
{
	size_t	 i;

	fprintf(f, "usage: cordon [-v] COMMAND [ARGS...]\n");
	for (i = 0; i < nitems(subcommands); i++)
		fprintf(f, "       cordon %s\n", subcommands[i].sc_usage);
	fprintf(f, "       cordon --version\n"
	    "see cordon(1) and cordon-policy(5)\n");
}

/* The global options other than -v: they end the command line. */
static int
main_option(const char *opt)
{
	if (strcmp(opt, "--version") == 0) {
		printf("cordon %s\n", CORDON_VERSION);
		return 0;
	}
	if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "cordon: unknown option \"%s\"\n", opt);
	usage(stderr);
	return 2;
}

int
main(int argc, char **argv)
{
	int	 i;
	size_t	 n;

	/* Its processes are named cordon, as when it was the one program. */
	(void)prctl(PR_SET_NAME, "cordon", 0, 0, 0);
	i = log_init_args(argc, argv);
	if (i < argc && argv[i][0] == '-')
		return main_option(argv[i]);
	/* Each subcommand says what it refused (opt_refused). */
	opterr = 0;
	if (i == argc) {
		usage(stderr);
		return 2;
	}
	for (n = 0; n < nitems(subcommands); n++) {
		if (strcmp(argv[i], subcommands[n].sc_name) != 0)
			continue;
		if (subcommands[n].sc_main != NULL)
			return subcommands[n].sc_main(argc - i, argv + i);
		fprintf(stderr, "cordon-main: %s is served by cordon-%s, which "
		    "cordon runs for it: run cordon %s\n", argv[i], argv[i],
		    argv[i]);
		return 2;
	}
	fprintf(stderr, "cordon: unknown command \"%s\"\n", argv[i]);
	usage(stderr);
	return 2;
}
