/*
 * bridge_cmd.c: `cordon bridge --listen EP --connect EP`, options only;
 * and, with --connect tls:HOST:PORT, the node-local originator: the
 * relay of `cordon run --proxy tls://` (tlsup.c) as a daemon holding
 * the host's client key, for users who may not read it.
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "bridge/bridge.h"
#include "bridge/tlsup.h"
#include "lib/endpoint.h"
#include "lib/log.h"
#include "lib/opt.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

static void
bridge_usage(FILE *f)
{
	fprintf(f,
	    "usage: cordon bridge --listen EP --connect EP [--max-conns N]\n"
	    "                     [--drain-secs N] [--proxy-id ID]\n"
	    "                     [--allow-non-loopback]\n"
	    "                     [--socket-mode MODE] [--socket-group GROUP]\n"
	    "       cordon bridge --listen unix:PATH --connect tls:HOST:PORT\n"
	    "                     --client-cert FILE --client-key FILE\n"
	    "                     --proxy-ca FILE\n"
	    "                     [--socket-mode MODE] [--socket-group GROUP]\n"
	    "an endpoint EP is tcp:HOST:PORT or unix:PATH\n");
}

/* `cordon bridge`'s options. */
struct bridge_opts {
	const char	*bo_listen;	/* --listen, as given */
	const char	*bo_connect;	/* --connect, as given */
	const char	*bo_proxy_id;	/* --proxy-id, or NULL */
	const char	*bo_sockmode;	/* --socket-mode, as given */
	const char	*bo_sockgroup;	/* --socket-group, as given */
	mode_t		 bo_mode;	/* the Unix listener's, or -1 */
	gid_t		 bo_gid;	/* the Unix listener's, or -1 */
	long		 bo_max;	/* --max-conns */
	int		 bo_drain_secs;	/* --drain-secs */
	bool		 bo_remote;	/* --allow-non-loopback */
	struct tlsup_files bo_files;	/* --connect tls: */
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
 * The values getopt took as they are: an endpoint left empty (a unit's
 * variable that its environment file does not set), the socket's mode
 * and group.  Returns 0, or -1 having said why.
 */
static int
bridge_opts_check(struct bridge_opts *o)
{
	o->bo_mode = (mode_t)-1;
	o->bo_gid = (gid_t)-1;
	if (*o->bo_listen == '\0' || *o->bo_connect == '\0') {
		log_warnx("bridge: --%s is empty: nothing to %s",
		    *o->bo_listen == '\0' ? "listen" : "connect",
		    *o->bo_listen == '\0' ? "listen on" : "relay to");
		log_warnx("hint: give it tcp:HOST:PORT, unix:PATH or (the "
		    "tier, for --connect) tls:HOST:PORT; "
		    "cordon-originator.service takes the tier from "
		    "CORDON_TIER= in its EnvironmentFile (systemctl cat "
		    "cordon-originator names it)");
		return -1;
	}
	if (o->bo_sockmode != NULL && endpoint_mode("bridge",
	    o->bo_sockmode, o->bo_remote, &o->bo_mode) == -1)
		return -1;
	if (o->bo_sockgroup != NULL && endpoint_group("bridge",
	    o->bo_sockgroup, &o->bo_gid) == -1)
		return -1;
	/* A group alone means its members may connect. */
	if (o->bo_gid != (gid_t)-1 && o->bo_mode == (mode_t)-1)
		o->bo_mode = 0660;
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
		{ "client-cert", required_argument, NULL, 'C' },
		{ "client-key", required_argument, NULL, 'K' },
		{ "proxy-ca", required_argument, NULL, 'P' },
		{ "socket-mode", required_argument, NULL, 'o' },
		{ "socket-group", required_argument, NULL, 'g' },
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
		case 'C':
			o->bo_files.tf_cert = optarg;
			break;
		case 'K':
			o->bo_files.tf_key = optarg;
			break;
		case 'P':
			o->bo_files.tf_ca = optarg;
			break;
		case 'o':
			o->bo_sockmode = optarg;
			break;
		case 'g':
			o->bo_sockgroup = optarg;
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
	return bridge_opts_check(o);
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
	    o->bo_proxy_id, NULL, NULL, NULL, &cause) == -1)
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

static void
bridge_stop_cb(int sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	event_base_loopexit(arg, NULL);
}

/*
 * Checks the tier once (the files, its certificate, ours accepted).
 * Returns 0, or -1 having said why.
 */
static int
bridge_tls_check(struct tlsup *t)
{
	SSL	*ssl;
	char	*cause, *hint;
	int	 fd;

	if ((fd = tlsup_dial(t, TLSUP_DIAL_SECS, &ssl, &cause, &hint)) ==
	    -1) {
		log_warnx("bridge: %s", cause);
		log_warnx("hint: %s", hint);
		free(cause);
		free(hint);
		return -1;
	}
	SSL_free(ssl);
	close(fd);
	return 0;
}

/*
 * The node-local originator: each local user's connection on the Unix
 * socket goes to the tier under this host's certificate, with the
 * user's uid (SO_PEERCRED) in its header, the originator's word that
 * the tier logs and scopes under the certificate's identity.  Returns
 * the exit status.
 */
static int
bridge_tls(const struct bridge_opts *o)
{
	struct event_base	*base;
	struct endpoint		 ep;
	struct tlsup		*t = NULL;
	struct event		*sigs[2];
	char			*cause = NULL;
	int			 fd = -1, rc = 1;

	memset(&ep, 0, sizeof(ep));
	if (o->bo_files.tf_cert == NULL || o->bo_files.tf_key == NULL ||
	    o->bo_files.tf_ca == NULL) {
		log_warnx("bridge: --connect %s needs --client-cert, "
		    "--client-key and --proxy-ca", o->bo_connect);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((base = event_base_new()) == NULL)
		fatalx("bridge: cannot make an event loop");
	if (strncmp(o->bo_listen, "unix:", 5) != 0)
		xasprintf(&cause, "--listen %s: the originator listens on "
		    "unix:PATH only (the tier logs each user's uid)",
		    o->bo_listen);
	else if ((t = tlsup_new(base, o->bo_connect, &o->bo_files,
	    &cause)) != NULL && bridge_tls_check(t) == 0 &&
	    endpoint_parse(o->bo_listen, &ep, &cause) != -1 &&
	    (fd = endpoint_listen(&ep, SOMAXCONN, &cause)) != -1) {
		endpoint_perms(&ep, "bridge", o->bo_mode, o->bo_gid);
		rc = tlsup_listen(t, fd, true, &cause) == -1 ? 1 : 0;
	}
	if (rc == 0) {
		sigs[0] = evsignal_new(base, SIGTERM, bridge_stop_cb, base);
		sigs[1] = evsignal_new(base, SIGINT, bridge_stop_cb, base);
		evsignal_add(sigs[0], NULL);
		evsignal_add(sigs[1], NULL);
		log_info("bridge: relaying %s to the tier %s", ep.ep_text,
		    tlsup_where(t));
		event_base_dispatch(base);
		event_free(sigs[0]);
		event_free(sigs[1]);
	} else if (cause != NULL)
		log_warnx("bridge: %s", cause);
	free(cause);
	tlsup_free(t);
	endpoint_unlink(&ep);
	endpoint_clear(&ep);
	event_base_free(base);
	return rc;
}

int
bridge_cmd(int argc, char **argv)
{
	struct bridge_opts	 o;
	struct bridge_run	 run;
	int			 status;

	if (bridge_opts_parse(&o, argc, argv, &status) == -1)
		return status;
	if (strncmp(o.bo_connect, "tls:", 4) == 0)
		return bridge_tls(&o);
	memset(&run, 0, sizeof(run));
	run.br_drain_secs = o.bo_drain_secs;
	if (bridge_endpoints(&run, &o) == -1)
		return 1;
	bridge_setup(&run, &o);
	endpoint_perms(&run.br_listen, "bridge", o.bo_mode, o.bo_gid);
	log_info("bridge: relaying %s to %s", run.br_listen.ep_text,
	    run.br_connect.ep_text);
	event_base_dispatch(run.br_base);
	bridge_stop(&run);
	return 0;
}
