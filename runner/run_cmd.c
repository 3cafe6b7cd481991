/*
 * run_cmd.c: `cordon run`: its options, read into a struct run_opts,
 * and the run's steps in order: run_prepare() decides everything that
 * can fail before the sandbox exists, --dry-run prints it, and
 * run_prepare_exec() runs it; run_prepare_clear() frees it all.
 *
 * Runs in: cordon run on the host, from main().
 */
#include <sys/types.h>

#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bridge/tlsup.h"
#include "lib/host.h"
#include "lib/log.h"
#include "lib/opt.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "runner/run_prep.h"
#include "runner/runner.h"
#include "session/sess.h"

/* Long options without a letter, above every character. */
#define RUN_OPT_PROXY	0x200
#define RUN_OPT_CERT	0x201
#define RUN_OPT_KEY	0x202
#define RUN_OPT_CA	0x203

static void
run_usage(FILE *f)
{
	fprintf(f,
	    "usage: cordon run [--agent NAME] [--policy FILE]...\n"
	    "                  [--allow-domain P]...\n"
	    "                  [--deny-domain P]... [--allow-cidr CIDR]...\n"
	    "                  [--resolve NAME:ADDR]... [--dns HOST[:PORT]]...\n"
	    "                  [--upstream-ca FILE]\n"
	    "                  [--network none|proxy|host] [--workspace DIR]\n"
	    "                  [--write PATH]... [--read-only PATH]...\n"
	    "                  [--deny-path PATH]... [--proxy-socket PATH]\n"
	    "                  [--proxy tls://HOST:PORT --client-cert FILE\n"
	    "                   --client-key FILE --proxy-ca FILE]\n"
	    "                  [--log FILE] [--dry-run] [--quiet]\n"
	    "                  [--allow-no-landlock] [--report PATH|fd:N]\n"
	    "                  [--control PATH|fd:N [--ask [--ask-secs N]]]\n"
	    "                  [--publish PORT]... [--keep PATH]...\n"
	    "                  [--keep-shared PATH]...\n"
	    "                  -- CMD [ARGS...]\n");
}

/* A path flag, made absolute against the current folder. */
static const char *
run_abs(const char *path, const char *cwd, char ***owned, size_t *nowned)
{
	char	*abs;

	if (path[0] == '/' || path[0] == '~')
		return path;
	xasprintf(&abs, "%s/%s", cwd, path);
	*owned = xreallocarray(*owned, *nowned + 1, sizeof(**owned));
	(*owned)[(*nowned)++] = abs;
	return abs;
}

/*
 * --publish PORT: a port a server in the sandbox listens on, reachable
 * from the host's 127.0.0.1 (publish.c).  Returns 0, or -1 having said
 * why.
 */
static int
run_publish_flag(struct run_opts *o, const char *arg)
{
	char	*end;
	long	 n;
	size_t	 i;

	n = strtol(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || *end != '\0' || n < 1 || n > 65535) {
		log_warnx("run: --publish: \"%s\" is not a port (1-65535)",
		    arg);
		return -1;
	}
	if (n == RUN_BRIDGE_PORT || n == 53) {
		log_warnx("run: --publish %ld: the sandbox's own %s listens "
		    "there; serve on another port", n, n == 53 ? "resolver" :
		    "bridge to the proxy");
		return -1;
	}
	for (i = 0; i < o->ro_npublish; i++)
		if (o->ro_publish[i] == n)
			return 0;
	if (o->ro_npublish == PUBLISH_MAX) {
		log_warnx("run: --publish: at most %d ports", PUBLISH_MAX);
		return -1;
	}
	o->ro_publish[o->ro_npublish++] = (uint16_t)n;
	return 0;
}

/*
 * A policy flag (policy_flag.c) into o's layers, a path made absolute
 * against the current folder; false if ch is another flag.
 */
static bool
run_opts_policy(struct run_opts *o, int ch, const char *arg)
{
	const struct policy_flag	*pf;

	if ((pf = policy_flag_find(ch)) == NULL)
		return false;
	if (pf->pf_path)
		arg = run_abs(arg, o->ro_cwd, &o->ro_owned, &o->ro_nowned);
	policy_flag_add(&o->ro_layers, pf->pf_flag, arg);
	return true;
}

/* --ask-secs N: 0, or -1 having said why. */
static int
run_opts_ask_secs(struct run_opts *o, const char *arg)
{
	char	*end;
	long	 n;

	n = strtol(arg, &end, 10);
	if (*arg == '\0' || *end != '\0' || n < 1 || n > 3600) {
		log_warnx("run: --ask-secs: \"%s\" is not a number from 1 to "
		    "3600", arg);
		return -1;
	}
	o->ro_net.net_ask_secs = (int)n;
	return 0;
}

/*
 * Any other flag into o.  Returns 0, or -1 with *status set to the exit
 * status: 0 after --help, 2 for a bad flag or value (said).
 */
static int
run_opts_flag(struct run_opts *o, int ch, char *arg, int *status)
{
	struct run_net	*net = &o->ro_net;

	*status = RUN_EXIT_FAILURE;
	switch (ch) {
	case 'W':
		o->ro_ws = arg;
		break;
	case 'R':
		net->net_pins = xreallocarray(net->net_pins, net->net_npins + 1,
		    sizeof(*net->net_pins));
		net->net_pins[net->net_npins++] = arg;
		break;
	case 'D':
		str_append(&o->ro_dns, ",", arg);
		break;
	case 'U':
		net->net_upstream_ca = arg;
		break;
	case 'S':
	case RUN_OPT_PROXY:
		if (net->net_socket != NULL) {
			log_warnx("run: --proxy and --proxy-socket name one "
			    "proxy: give one of them, once");
			*status = 2;
			return -1;
		}
		net->net_socket = arg;
		if (ch == RUN_OPT_PROXY)
			net->net_remote = arg;
		break;
	case RUN_OPT_CERT:
		net->net_cert = run_abs(arg, o->ro_cwd, &o->ro_owned,
		    &o->ro_nowned);
		break;
	case RUN_OPT_KEY:
		net->net_key = run_abs(arg, o->ro_cwd, &o->ro_owned,
		    &o->ro_nowned);
		break;
	case RUN_OPT_CA:
		net->net_ca = run_abs(arg, o->ro_cwd, &o->ro_owned,
		    &o->ro_nowned);
		break;
	case 'L':
		net->net_log = arg;
		break;
	case 'N':
		o->ro_dry = true;
		break;
	case 'q':
		net->net_quiet = true;
		break;
	case 'A':
		o->ro_no_landlock = true;
		break;
	case 'T':
		net->net_report = arg;
		break;
	case 'C':
		net->net_control = arg;
		break;
	case 'K':
		net->net_ask = true;
		break;
	case 'p':
		return run_publish_flag(o, arg);
	case 'e':
	case 'E':
		if (o->ro_nkeep == nitems(o->ro_keep)) {
			log_warnx("run: --keep: at most %zu folders",
			    nitems(o->ro_keep));
			return -1;
		}
		o->ro_keep_shared[o->ro_nkeep] = ch == 'E';
		o->ro_keep[o->ro_nkeep++] = arg;
		break;
	case 'k':
		return run_opts_ask_secs(o, arg);
	case 'h':
		run_usage(stdout);
		*status = 0;
		return -1;
	default:
		*status = 2;
		return -1;
	}
	return 0;
}

/*
 * --proxy tls:// needs its three files, and they make sense with it
 * only.  Returns 0, or -1 with *status set, having said why.
 */
static int
run_opts_remote(const struct run_net *net, int *status)
{
	char	*host, *port, *cause;

	*status = 2;
	if (net->net_remote == NULL && (net->net_cert != NULL ||
	    net->net_key != NULL || net->net_ca != NULL)) {
		log_warnx("run: --client-cert, --client-key and --proxy-ca "
		    "go with --proxy tls://HOST:PORT");
		return -1;
	}
	if (net->net_remote == NULL)
		return 0;
	if (host_tls_url(net->net_remote, &host, &port, &cause) == -1) {
		log_warnx("run: --proxy %s", cause);
		free(cause);
		return -1;
	}
	free(host);
	free(port);
	if (net->net_cert == NULL || net->net_key == NULL ||
	    net->net_ca == NULL) {
		log_warnx("run: --proxy %s: the tier needs a client "
		    "certificate, and its own CA to be checked; nothing run",
		    net->net_remote);
		log_warnx("hint: add --client-cert FILE --client-key FILE "
		    "--proxy-ca FILE, or, without the key, run with "
		    "--proxy-socket PATH of the host's node-local originator "
		    "(cordon bridge --connect tls:)");
		*status = RUN_EXIT_FAILURE;
		return -1;
	}
	return 0;
}

/*
 * Reads `cordon run`'s options into o, which run_opts_clear() frees
 * after, whatever this returns.  Returns 0 when the run goes on, or -1
 * with *status set to the exit status (0 after --help).
 */
static int
run_opts_parse(struct run_opts *o, int argc, char **argv,
    const struct session_opts *so, int *status)
{
	static char	 session_name[] = "session";
	static char	*session_argv[] = { session_name, NULL };
	static const struct option opts[] = {
		{ "workspace", required_argument, NULL, 'W' },
		{ "resolve", required_argument, NULL, 'R' },
		{ "dns", required_argument, NULL, 'D' },
		{ "upstream-ca", required_argument, NULL, 'U' },
		{ "proxy-socket", required_argument, NULL, 'S' },
		{ "proxy", required_argument, NULL, RUN_OPT_PROXY },
		{ "client-cert", required_argument, NULL, RUN_OPT_CERT },
		{ "client-key", required_argument, NULL, RUN_OPT_KEY },
		{ "proxy-ca", required_argument, NULL, RUN_OPT_CA },
		{ "log", required_argument, NULL, 'L' },
		{ "dry-run", no_argument, NULL, 'N' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "allow-no-landlock", no_argument, NULL, 'A' },
		{ "report", required_argument, NULL, 'T' },
		{ "control", required_argument, NULL, 'C' },
		{ "ask", no_argument, NULL, 'K' },
		{ "ask-secs", required_argument, NULL, 'k' },
		{ "publish", required_argument, NULL, 'p' },
		{ "keep", required_argument, NULL, 'e' },
		{ "keep-shared", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct option	 all[POLICY_FLAGS_N + nitems(opts)];
	int		 ch;

	policy_flag_options(all, nitems(all), opts, POLICY_FLAGS_NET |
	    POLICY_FLAGS_MODE | POLICY_FLAGS_FS);
	memset(o, 0, sizeof(*o));
	o->ro_net.net_report_at.w_dir = o->ro_net.net_log_at.w_dir = -1;
	*status = RUN_EXIT_FAILURE;
	if (getcwd(o->ro_cwd, sizeof(o->ro_cwd)) == NULL) {
		log_warn("run: the current folder");
		return -1;
	}
	optind = 1;
	/* "+": options stop at the command, whatever its arguments. */
	while ((ch = getopt_long(argc, argv, "+hq", all, NULL)) != -1)
		if (ch == '?') {
			opt_refused("run", argv, all, "hq");
			*status = 2;
			return -1;
		} else if (!run_opts_policy(o, ch, optarg) &&
		    run_opts_flag(o, ch, optarg, status) == -1)
			return -1;
	o->ro_session = so;
	if (so != NULL && optind < argc) {
		log_warnx("session start: no command is given to a session "
		    "as it starts; run one in it with: cordon run --session "
		    "ID -- CMD");
		*status = 2;
		return -1;
	}
	if (so != NULL)
		o->ro_argv = session_argv;
	else if (optind == argc) {
		log_warnx("run: no command given; put it after --");
		run_usage(stderr);
		*status = 2;
		return -1;
	} else
		o->ro_argv = argv + optind;
	if (run_opts_remote(&o->ro_net, status) == -1)
		return -1;
	o->ro_net.net_dns = o->ro_dns;
	if (o->ro_net.net_ask_secs == 0)
		o->ro_net.net_ask_secs = RUN_ASK_SECS;
	return 0;
}

/* Frees what run_opts_parse() made; the other strings are argv's. */
static void
run_opts_clear(struct run_opts *o)
{
	size_t	 i;

	for (i = 0; i < o->ro_nowned; i++)
		free(o->ro_owned[i]);
	free(o->ro_owned);
	free(o->ro_layers.ly_args);
	free(o->ro_net.net_pins);
	free(o->ro_dns);
}

int
run_cmd(int argc, char **argv)
{
	if (sessclient_named(argc, argv))
		return sessclient_main(argc, argv, "run");
	return run_cmd_session(argc, argv, NULL);
}

/*
 * `cordon run`, or with so the sandbox of `cordon session start`, which
 * runs no command of its own.  Returns the exit status.
 */
int
run_cmd_session(int argc, char **argv, const struct session_opts *so)
{
	struct run_opts	 o;
	struct run_prep	 rp;
	int		 rc;

	if (run_opts_parse(&o, argc, argv, so, &rc) == -1) {
		run_opts_clear(&o);
		return rc;
	}
	if (run_prepare(&rp, &o) == -1)
		rc = RUN_EXIT_FAILURE;
	else if (o.ro_dry) {
		run_print(&rp.rp_run, &rp.rp_net, &rp.rp_ib);
		rc = 0;
	} else
		rc = run_prepare_exec(&rp, &o);
	run_prepare_clear(&rp);
	run_opts_clear(&o);
	return rc;
}
