/*
 * log_cmd.c: `cordon log summary` and `cordon log tail`, options only.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/opt.h"
#include "logs/elog.h"

static void
log_usage(FILE *f)
{
	fprintf(f,
	    "usage: cordon log summary [--json] FILE...\n"
	    "       cordon log tail [-f] [-n N] FILE\n");
}

static int
log_summary_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool	 json = false;
	int	 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			json = true;
			break;
		case 'h':
			log_usage(stdout);
			return 0;
		default:
			opt_refused("log summary", argv, opts, "h");
			return 2;
		}
	}
	if (optind == argc) {
		log_warnx("log summary: which log?");
		log_warnx("hint: cordon log summary /var/log/cordon/egress.log*");
		return 2;
	}
	return elog_summary(argv + optind, argc - optind, json);
}

static int
log_tail_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "lines", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool	 follow = false;
	long	 n = 10;
	char	*end;
	int	 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "fn:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			follow = true;
			break;
		case 'n':
			n = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || n < 0 ||
			    n > 1000000) {
				log_warnx("log tail: -n: \"%s\" is not a "
				    "number from 0 to 1000000", optarg);
				return 2;
			}
			break;
		case 'h':
			log_usage(stdout);
			return 0;
		default:
			opt_refused("log tail", argv, opts, "fn:h");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		log_usage(stderr);
		return 2;
	}
	return elog_tail(argv[optind], n, follow);
}

int
log_cmd(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "summary") == 0)
		return log_summary_cmd(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "tail") == 0)
		return log_tail_cmd(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0)) {
		log_usage(stdout);
		return 0;
	}
	log_usage(stderr);
	return 2;
}
