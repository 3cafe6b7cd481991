/*
 * mcp_cmd.c: `cordon mcp [session start's and run's options]`, its
 * options.  All of them are the session's (as `cordon session start`
 * takes them): the server only looks for --ask, to be the session's
 * control channel itself, unless --control names another's.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "mcp/mcp.h"
#include "runner/runner.h"

static void
mcp_usage(FILE *f)
{
	fprintf(f, "usage: cordon mcp [--name NAME] [--idle SECONDS] "
	    "[--run-between] [cordon run's options]\n"
	    "  an MCP server on stdin and stdout; add it to an agent with\n"
	    "  claude mcp add cordon -- cordon mcp\n");
}

int
mcp_cmd(int argc, char **argv)
{
	struct mcp_opts	 o;
	bool		 control = false;
	int		 i;

	memset(&o, 0, sizeof(o));
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			log_warnx("mcp: a command is not given here: each "
			    "tool call brings its own");
			return 2;
		}
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			mcp_usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--ask") == 0)
			o.mo_ask = true;
		if (strcmp(argv[i], "--control") == 0 ||
		    strncmp(argv[i], "--control=", 10) == 0)
			control = true;
	}
	/* Another's channel: its harness answers the questions. */
	if (control)
		o.mo_ask = false;
	o.mo_argc = argc - 1;
	o.mo_argv = argv + 1;
	return mcp_main(&o);
}
