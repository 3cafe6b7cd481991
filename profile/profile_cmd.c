/*
 * profile_cmd.c: `cordon profile seatbelt | windows-firewall`, options
 * only.  The policy is merged as `cordon run` merges it (policy_merge_layers);
 * the text comes from seatbelt.c and winfw.c and goes to stdout.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/opt.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "profile/profile.h"

#define EXIT_USAGE	2

static void
profile_usage(FILE *f)
{
	fprintf(f,
	    "usage: cordon profile seatbelt [LAYER OPTIONS] [--proxy-port N]\n"
	    "       cordon profile windows-firewall [LAYER OPTIONS] "
	    "[--proxy-port N]\n"
	    "           [--program PATH]... [--user NAME] | --remove\n"
	    "layer options, applied in order after the system and user "
	    "policies:\n"
	    "  --policy FILE  --allow-domain PATTERN  --deny-domain PATTERN\n"
	    "  --allow-cidr CIDR  --network none|proxy|host  --workspace DIR\n"
	    "  --only (no built-in, system, user or workspace layer)\n");
}

enum {
	OPT_WORKSPACE = 256,
	OPT_ONLY,
	OPT_PORT,
	OPT_PROGRAM,
	OPT_USER,
	OPT_REMOVE
};

struct profile_args {
	struct policy_layers	 pa_layers;
	int			 pa_port;
	const char		**pa_programs;
	size_t			 pa_nprograms;
	const char		*pa_user;
	bool			 pa_remove;
};

/* Reads a port, 1 to 65535; -1 when it is not one. */
static int
profile_port(const char *s)
{
	char	*end;
	long	 v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtol(s, &end, 10);
	if (*end != '\0' || v < 1 || v > 65535)
		return -1;
	return (int)v;
}

/*
 * Reads the options of `profile KIND`; the Windows ones only when winfw.
 * Returns 0, 1 for --help (printed), or -1 (usage printed).
 */
static int
profile_opts(int argc, char **argv, bool winfw, struct profile_args *pa)
{
	static const struct option opts[] = {
		{ "workspace", required_argument, NULL, OPT_WORKSPACE },
		{ "only", no_argument, NULL, OPT_ONLY },
		{ "proxy-port", required_argument, NULL, OPT_PORT },
		{ "program", required_argument, NULL, OPT_PROGRAM },
		{ "user", required_argument, NULL, OPT_USER },
		{ "remove", no_argument, NULL, OPT_REMOVE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct option	 all[POLICY_FLAGS_N + nitems(opts)];
	int		 ch;

	policy_flag_options(all, nitems(all), opts, POLICY_FLAGS_NET |
	    POLICY_FLAGS_MODE);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", all, NULL)) != -1) {
		if (!winfw && ch >= OPT_PROGRAM && ch <= OPT_REMOVE) {
			log_warnx("profile seatbelt: %s is for "
			    "windows-firewall", argv[optind - 1]);
			profile_usage(stderr);
			return -1;
		}
		if (policy_flag_take(&pa->pa_layers, ch, optarg))
			continue;
		switch (ch) {
		case OPT_WORKSPACE:
			pa->pa_layers.ly_workspace = optarg;
			break;
		case OPT_ONLY:
			pa->pa_layers.ly_only = true;
			break;
		case OPT_PORT:
			if ((pa->pa_port = profile_port(optarg)) == -1) {
				log_warnx("profile: --proxy-port \"%s\": a port "
				    "is 1 to 65535", optarg);
				return -1;
			}
			break;
		case OPT_PROGRAM:
			pa->pa_programs = xreallocarray(pa->pa_programs,
			    pa->pa_nprograms + 1, sizeof(*pa->pa_programs));
			pa->pa_programs[pa->pa_nprograms++] = optarg;
			break;
		case OPT_USER:
			pa->pa_user = optarg;
			break;
		case OPT_REMOVE:
			pa->pa_remove = true;
			break;
		case 'h':
			profile_usage(stdout);
			return 1;
		default:
			opt_refused(winfw ? "profile windows-firewall" :
			    "profile seatbelt", argv, all, "h");
			return -1;
		}
	}
	if (optind != argc) {
		log_warnx("profile: unexpected \"%s\"", argv[optind]);
		profile_usage(stderr);
		return -1;
	}
	return 0;
}

#ifdef __APPLE__
/* On the Mac the profile is for, links on the way are resolved. */
static char *
profile_realpath(const char *path)
{
	return realpath(path, NULL);
}
#endif

/* Builds the policy and writes the text of the kind asked for. */
static int
profile_make(struct profile_args *pa, bool winfw)
{
	struct policy		*p;
	struct sb_opts		 so;
	struct winfw_opts	 wo;
	const char		*home;
	char			*cause, *text;

	if (winfw && pa->pa_remove) {
		text = winfw_remove();
		goto print;
	}
	if ((p = policy_merge_layers(&pa->pa_layers, NULL, &cause)) == NULL) {
		log_warnx_lines(cause);
		return EXIT_USAGE;
	}
	if (pa->pa_port != 0 && p->p_mode.ps_value != NET_PROXY)
		log_warnx("profile: --proxy-port ignored: network mode %s",
		    policy_mode_name(p->p_mode.ps_value));
	if (p->p_mode.ps_value == NET_HOST)
		log_warnx("profile: network mode host: the %s leaves the "
		    "network unfiltered and unlogged", winfw ? "script" :
		    "profile");
	if (!winfw && p->p_unix.ps_value == UNIX_ALLOW)
		log_warnx("profile: unix_sockets allow is not carried over: "
		    "the profile allows no Unix socket connection");
	if (winfw) {
		memset(&wo, 0, sizeof(wo));
		wo.wo_port = pa->pa_port;
		wo.wo_programs = pa->pa_programs;
		wo.wo_nprograms = pa->pa_nprograms;
		wo.wo_user = pa->pa_user;
		text = winfw_install(p, &wo, &cause);
	} else {
		memset(&so, 0, sizeof(so));
		so.so_port = pa->pa_port;
		home = getenv("HOME");
		so.so_home = home != NULL && home[0] == '/' ? home : NULL;
#ifdef __APPLE__
		so.so_resolve = profile_realpath;
#endif
		text = seatbelt_profile(p, &so, &cause);
	}
	policy_free(p);
	if (text == NULL) {
		log_warnx_lines(cause);
		return EXIT_USAGE;
	}
print:
	fputs(text, stdout);
	free(text);
	return fflush(stdout) == 0 ? 0 : EXIT_USAGE;
}

/* `cordon profile KIND ...`; argv[0] is "profile". */
int
profile_cmd(int argc, char **argv)
{
	struct profile_args	 pa;
	bool			 winfw;
	int			 rc;

	if (argc < 2) {
		profile_usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		profile_usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "seatbelt") == 0)
		winfw = false;
	else if (strcmp(argv[1], "windows-firewall") == 0)
		winfw = true;
	else {
		log_warnx("profile: unknown kind \"%s\" (seatbelt, "
		    "windows-firewall)", argv[1]);
		profile_usage(stderr);
		return EXIT_USAGE;
	}
	memset(&pa, 0, sizeof(pa));
	if ((rc = profile_opts(argc - 1, argv + 1, winfw, &pa)) == 0)
		rc = profile_make(&pa, winfw);
	else
		rc = rc == 1 ? 0 : EXIT_USAGE;
	free(pa.pa_layers.ly_args);
	free(pa.pa_programs);
	return rc;
}
