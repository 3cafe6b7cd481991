/*
 * bridge_cmd.c: `cordon bridge --listen EP --connect EP`, options only.
 */

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "bridge.h"
#include "endpoint.h"
#include "log.h"
#include "opt.h"
#include "util.h"

static void
bridge_usage(FILE *f)
{
	fprintf(f,
	    "usage: cordon bridge --listen EP --connect EP [--max-conns N]\n"
	    "                     [--drain-secs N] [--proxy-id ID]\n"
	    "                     [--allow-non-loopback]\n"
	    "an endpoint EP is tcp:HOST:PORT or unix:PATH\n");
}

/* `cordon bridge`'s options. */
struct bridge_opts {
	const char	*bo_listen;	/* --listen, as given */
	const char	*bo_connect;	/* --connect, as given */
	const char	*bo_proxy_id;	/* --proxy-id, or NULL */
	long		 bo_max;	/* --max-conns */
	int		 bo_drain_secs;	/* --drain-secs */
	bool		 bo_remote;	/* --allow-non-loopback */
};

struct bridge_run {
	struct event_base	*br_base;
	struct bridge		*br_bridge;
	struct endpoint		 br_listen;
	struct endpoint		 br_connect;
	struct event		*br_sigs[2];	/* TERM, INT */
	int			 br_drain_secs;
	bool			 br_draining;
};

static void
bridge_drained(void *arg)
{
	struct bridge_run	*run = arg;

	event_base_loopexit(run->br_base, NULL);
}

static void
bridge_signal_cb(int sig, short what, void *arg)
{
	struct bridge_run	*run = arg;

	(void)what;
	if (run->br_draining) {
		log_warnx("bridge: %s again: stopping now", strsignal(sig));
		event_base_loopexit(run->br_base, NULL);
		return;
	}
	run->br_draining = true;
	log_info("bridge: %s: no new connections; %zu open", strsignal(sig),
	    bridge_active(run->br_bridge));
	bridge_drain(run->br_bridge, run->br_drain_secs, bridge_drained, run);
}

/* --max-conns or --drain-secs into o.  Returns 0, or -1 having said why. */
static int
bridge_opts_number(struct bridge_opts *o, int ch, const char *arg)
{
	char	*end;
	long	 n;

	n = strtol(arg, &end, 10);
	if (*arg == '\0' || *end != '\0' || n < 1 || n > 1000000) {
		log_warnx("bridge: --%s: \"%s\" is not a number from 1 to "
		    "1000000", ch == 'm' ? "max-conns" : "drain-secs", arg);
		return -1;
	}
	if (ch == 'm')
		o->bo_max = n;
	else
		o->bo_drain_secs = (int)n;
	return 0;
}

/*
 * Reads `cordon bridge`'s options into o.  Returns 0 when the bridge
 * starts, or -1 with *status set to the exit status: 0 after --help, 2
 * for a bad flag or value (said).
 */
static int
bridge_opts_parse(struct bridge_opts *o, int argc, char **argv,
    int *status)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "connect", required_argument, NULL, 'c' },
		{ "max-conns", required_argument, NULL, 'm' },
		{ "drain-secs", required_argument, NULL, 'd' },
		{ "allow-non-loopback", no_argument, NULL, 'A' },
		{ "proxy-id", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch;

	memset(o, 0, sizeof(*o));
	o->bo_max = BRIDGE_MAX_CONNS;
	o->bo_drain_secs = BRIDGE_DRAIN_SECS;
	*status = 2;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			o->bo_listen = optarg;
			break;
		case 'c':
			o->bo_connect = optarg;
			break;
		case 'm':
		case 'd':
			if (bridge_opts_number(o, ch, optarg) == -1)
				return -1;
			break;
		case 'A':
			o->bo_remote = true;
			break;
		case 'p':
			o->bo_proxy_id = optarg;
			break;
		case 'h':
			bridge_usage(stdout);
			*status = 0;
			return -1;
		default:
			opt_refused("bridge", argv, opts, "h");
			return -1;
		}
	}
	if (o->bo_listen == NULL || o->bo_connect == NULL || optind != argc) {
		bridge_usage(stderr);
		return -1;
	}
	return 0;
}

/*
 * The two endpoints of o into run; fatal when one does not parse.
 * Returns 0, or -1 having said why when the listening one is off
 * loopback and o does not allow it.
 */
static int
bridge_endpoints(struct bridge_run *run, const struct bridge_opts *o)
{
	char	*cause;

	if (endpoint_parse(o->bo_listen, &run->br_listen, &cause) == -1 ||
	    endpoint_parse(o->bo_connect, &run->br_connect, &cause) == -1)
		fatalx("bridge: %s", cause);
	if (o->bo_remote || endpoint_is_loopback(&run->br_listen))
		return 0;
	log_warnx("bridge: refusing to listen on %s, which is not a loopback "
	    "address: anyone who can reach it could use the connection "
	    "behind it", run->br_listen.ep_text);
	log_warnx("hint: listen on 127.0.0.1 or ::1, or pass "
	    "--allow-non-loopback if that is what you mean");
	endpoint_clear(&run->br_listen);
	endpoint_clear(&run->br_connect);
	return -1;
}

/*
 * The loop, the bridge on it and the signals that drain it; fatal on
 * any error.
 */
static void
bridge_setup(struct bridge_run *run, const struct bridge_opts *o)
{
	char	*cause;

	file_limit_raise();
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);	/* nothing to reload or reopen */
	if ((run->br_base = event_base_new()) == NULL)
		fatalx("bridge: cannot make an event loop");
	if ((run->br_bridge = bridge_new(run->br_base, &run->br_listen,
	    &run->br_connect, (size_t)o->bo_max, &cause)) == NULL)
		fatalx("bridge: %s", cause);
	if (o->bo_proxy_id != NULL && bridge_proxy_id(run->br_bridge,
	    o->bo_proxy_id, NULL, NULL, &cause) == -1)
		fatalx("bridge: --proxy-id: %s", cause);
	run->br_sigs[0] = evsignal_new(run->br_base, SIGTERM,
	    bridge_signal_cb, run);
	run->br_sigs[1] = evsignal_new(run->br_base, SIGINT,
	    bridge_signal_cb, run);
	if (run->br_sigs[0] == NULL || run->br_sigs[1] == NULL ||
	    evsignal_add(run->br_sigs[0], NULL) == -1 ||
	    evsignal_add(run->br_sigs[1], NULL) == -1)
		fatalx("bridge: cannot watch signals");
}

/* The one end, once the loop is over. */
static void
bridge_stop(struct bridge_run *run)
{
	bridge_free(run->br_bridge);
	event_free(run->br_sigs[0]);
	event_free(run->br_sigs[1]);
	event_base_free(run->br_base);
	endpoint_clear(&run->br_listen);
	endpoint_clear(&run->br_connect);
}

int
bridge_cmd(int argc, char **argv)
{
	struct bridge_opts	 o;
	struct bridge_run	 run;
	int			 status;

	if (bridge_opts_parse(&o, argc, argv, &status) == -1)
		return status;
	memset(&run, 0, sizeof(run));
	run.br_drain_secs = o.bo_drain_secs;
	if (bridge_endpoints(&run, &o) == -1)
		return 1;
	bridge_setup(&run, &o);
	log_info("bridge: relaying %s to %s", run.br_listen.ep_text,
	    run.br_connect.ep_text);
	event_base_dispatch(run.br_base);
	bridge_stop(&run);
	return 0;
}
