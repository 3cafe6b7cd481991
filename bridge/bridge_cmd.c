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

struct bridge_run {
	struct event_base	*br_base;
	struct bridge		*br_bridge;
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

int
bridge_cmd(int argc, char **argv)
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
	struct endpoint		 lep, cep;
	struct bridge_run	 run = { .br_drain_secs = BRIDGE_DRAIN_SECS };
	struct event		*sigterm, *sigint;
	const char		*listen_at = NULL, *connect_to = NULL;
	const char		*proxy_id = NULL;
	char			*cause, *end;
	long			 max = BRIDGE_MAX_CONNS, n;
	bool			 remote = false;
	int			 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			listen_at = optarg;
			break;
		case 'c':
			connect_to = optarg;
			break;
		case 'm':
		case 'd':
			n = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || n < 1 ||
			    n > 1000000) {
				log_warnx("bridge: --%s: \"%s\" is not a number "
				    "from 1 to 1000000", ch == 'm' ?
				    "max-conns" : "drain-secs", optarg);
				return 2;
			}
			if (ch == 'm')
				max = n;
			else
				run.br_drain_secs = (int)n;
			break;
		case 'A':
			remote = true;
			break;
		case 'p':
			proxy_id = optarg;
			break;
		case 'h':
			bridge_usage(stdout);
			return 0;
		default:
			bridge_usage(stderr);
			return 2;
		}
	}
	if (listen_at == NULL || connect_to == NULL || optind != argc) {
		bridge_usage(stderr);
		return 2;
	}
	if (endpoint_parse(listen_at, &lep, &cause) == -1 ||
	    endpoint_parse(connect_to, &cep, &cause) == -1)
		fatalx("bridge: %s", cause);
	if (!remote && !endpoint_is_loopback(&lep)) {
		log_warnx("bridge: refusing to listen on %s, which is not a "
		    "loopback address: anyone who can reach it could use "
		    "the connection behind it", lep.ep_text);
		log_warnx("hint: listen on 127.0.0.1 or ::1, or pass "
		    "--allow-non-loopback if that is what you mean");
		endpoint_clear(&lep);
		endpoint_clear(&cep);
		return 1;
	}

	fd_limit_raise();
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);	/* nothing to reload or reopen */
	if ((run.br_base = event_base_new()) == NULL)
		fatalx("bridge: cannot make an event loop");
	if ((run.br_bridge = bridge_new(run.br_base, &lep, &cep, (size_t)max,
	    &cause)) == NULL)
		fatalx("bridge: %s", cause);
	if (proxy_id != NULL && bridge_proxy_id(run.br_bridge, proxy_id, NULL, NULL,
	    &cause) == -1)
		fatalx("bridge: --proxy-id: %s", cause);
	sigterm = evsignal_new(run.br_base, SIGTERM, bridge_signal_cb, &run);
	sigint = evsignal_new(run.br_base, SIGINT, bridge_signal_cb, &run);
	if (sigterm == NULL || sigint == NULL ||
	    evsignal_add(sigterm, NULL) == -1 ||
	    evsignal_add(sigint, NULL) == -1)
		fatalx("bridge: cannot watch signals");
	log_info("bridge: relaying %s to %s", lep.ep_text, cep.ep_text);

	event_base_dispatch(run.br_base);

	bridge_free(run.br_bridge);
	event_free(sigterm);
	event_free(sigint);
	event_base_free(run.br_base);
	endpoint_clear(&lep);
	endpoint_clear(&cep);
	return 0;
}
