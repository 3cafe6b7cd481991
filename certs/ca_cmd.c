/*
 * ca_cmd.c: `cordon ca init` and `cordon ca show`, options only.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certs/certs.h"
#include "lib/log.h"
#include "lib/opt.h"
#include "lib/xmalloc.h"

static void
ca_usage(FILE *f)
{
	fprintf(f,
	    "usage: cordon ca init [--dir DIR] [--force]\n"
	    "       cordon ca show [--dir DIR]\n");
}

/* Parses --dir, --force (when force is not NULL) and --help. */
static int
ca_opts(int argc, char **argv, const char **dir, bool *force)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			*dir = optarg;
			break;
		case 'f':
			if (force == NULL) {
				ca_usage(stderr);
				return 2;
			}
			*force = true;
			break;
		case 'h':
			ca_usage(stdout);
			return 0;
		default:
			opt_refused(force != NULL ? "ca init" : "ca show", argv,
			    opts, "h");
			return 2;
		}
	}
	if (optind != argc) {
		ca_usage(stderr);
		return 2;
	}
	return -1;
}

int
ca_cmd(int argc, char **argv)
{
	const char	*dir = NULL;
	char		*cause, *msg, *def = NULL;
	bool		 force = false, init;
	int		 rc;

	if (argc < 2) {
		ca_usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		ca_usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "init") == 0)
		init = true;
	else if (strcmp(argv[1], "show") == 0)
		init = false;
	else {
		log_warnx("ca: unknown command \"%s\"", argv[1]);
		ca_usage(stderr);
		return 2;
	}
	if ((rc = ca_opts(argc - 1, argv + 1, &dir, init ? &force : NULL)) !=
	    -1)
		return rc;
	if (dir == NULL) {
		if ((def = ca_dir_default(&cause)) == NULL) {
			log_warnx("ca: %s", cause);
			log_warnx("hint: name the directory with --dir DIR");
			free(cause);
			return 1;
		}
		dir = def;
	}

	if (init) {
		if (ca_init(dir, force, &cause) == -1) {
			xasprintf(&msg, "ca init: %s", cause);
			log_warnx_lines(msg);
			if (strstr(cause, "already holds") != NULL)
				log_warnx("hint: cordon ca init --force "
				    "replaces it");
			free(cause);
			free(def);
			return 1;
		}
	}
	rc = ca_show(dir, stdout, &cause);
	if (rc == -1) {
		xasprintf(&msg, "ca show: %s", cause);
		log_warnx_lines(msg);
		if (strstr(cause, "\nhint: ") == NULL)
			log_warnx("hint: cordon ca init%s%s makes one",
			    def == NULL ? " --dir " : "", def == NULL ? dir :
			    "");
		free(cause);
	}
	free(def);
	return rc == -1 ? 1 : 0;
}
