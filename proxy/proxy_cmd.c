/*
 * proxy_cmd.c: `cordon proxy`, options, listeners and signals.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "endpoint.h"
#include "jsonl.h"
#include "log.h"
#include "policy.h"
#include "proxy.h"
#include "util.h"
#include "xmalloc.h"

#define PROXY_DRAIN_SECS	10
#define PROXY_MAX_LISTEN	16

static void
proxy_usage(FILE *f)
{
	fprintf(f,
	    "usage: cordon proxy [--listen tcp:HOST:PORT|unix:PATH]...\n"
	    "                    [--listen-sandbox tcp:HOST:PORT|unix:PATH]...\n"
	    "                    [--policy FILE]... [--allow-domain P]...\n"
	    "                    [--deny-domain P]... [--allow-cidr CIDR]...\n"
	    "                    [--log FILE|-] [--dns HOST[:PORT]]...\n"
	    "                    [--resolve NAME:ADDR]... [--max-conns N]\n"
	    "                    [--drain-secs N] [--head-secs N]\n"
	    "                    [--connect-secs N] [--idle-secs N]\n"
	    "                    [--only] [--allow-non-loopback]\n"
	    "                    [--metrics tcp:HOST:PORT|unix:PATH]\n"
	    "                    [--socket-mode MODE] [--socket-group GROUP]\n"
	    "                    [--upstream-ca FILE]\n");
}

struct proxy_run {
	struct proxy		 pr_proxy;
	struct policy_layers	 pr_layers;
	struct endpoint		 pr_eps[PROXY_MAX_LISTEN];
	struct evconnlistener	*pr_listeners[PROXY_MAX_LISTEN];
	bool			 pr_pp2[PROXY_MAX_LISTEN];
	size_t			 pr_nlisten;
	/* The limits given (proxy_limits); 0 keeps proxy_init()'s. */
	size_t			 pr_max;
	int			 pr_head_secs;
	int			 pr_connect_secs;
	int			 pr_idle_secs;
	int			 pr_drain_secs;
	bool			 pr_draining;
	struct event		*pr_drain_ev;
	struct endpoint		 pr_metrics_ep;
	struct metrics		*pr_metrics;
	const char		*pr_upstream_ca;
};

static void
proxy_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct proxy_run	*run = arg;
	size_t			 i;

	for (i = 0; i < run->pr_nlisten; i++)
		if (run->pr_listeners[i] == l)
			break;
	run->pr_proxy.px_stats.ps_accepted++;
	conn_accept(&run->pr_proxy, fd, sa, (socklen_t)salen,
	    i < run->pr_nlisten && run->pr_pp2[i]);
}

static void
proxy_accept_error_cb(struct evconnlistener *l, void *arg)
{
	(void)l;
	(void)arg;
	log_warn("proxy: accept");
}

/* Builds the policy from the layers; NULL with every error printed. */
static struct policy *
proxy_policy(struct proxy_run *run)
{
	struct policy	*p;
	char		*cause;

	if ((p = policy_build(&run->pr_layers, NULL, &cause)) != NULL)
		return p;
	log_warnx_lines(cause);
	return NULL;
}

/* SIGHUP: read the policy again and reopen the log; keep the old on error. */
static void
proxy_hup_cb(evutil_socket_t sig, short what, void *arg)
{
	struct proxy_run	*run = arg;
	struct proxy		*px = &run->pr_proxy;
	struct policy		*p;
	char			*cause;

	(void)sig;
	(void)what;
	if ((p = proxy_policy(run)) != NULL &&
	    inspect_setup(px, p, run->pr_upstream_ca, &cause) == -1) {
		log_warnx("proxy: %s", cause);
		free(cause);
		policy_free(p);
		p = NULL;
	}
	if (p == NULL) {
		px->px_stats.ps_reloads_failed++;
		log_warnx("proxy: reload failed; the policy in force stays");
	} else {
		ppolicy_unref(px->px_policy);
		px->px_policy = ppolicy_new(p);
		px->px_stats.ps_reloads_ok++;
		px->px_stats.ps_loaded = time(NULL);
		log_info("proxy: policy reloaded");
	}
	if (px->px_log != NULL && jsonl_reopen(px->px_log, &cause) == -1) {
		log_warnx("proxy: %s; still writing to the old file", cause);
		free(cause);
	}
}

static void
proxy_drained(struct proxy *px)
{
	event_base_loopexit(px->px_base, NULL);
}

static void
proxy_drain_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_run	*run = arg;

	(void)fd;
	(void)what;
	log_warnx("proxy: %zu connection(s) still open after the drain time; "
	    "closing them", run->pr_proxy.px_nconns);
	conn_close_all(&run->pr_proxy);
}

/* SIGTERM, SIGINT: stop accepting, let tunnels drain, then exit. */
static void
proxy_term_cb(evutil_socket_t sig, short what, void *arg)
{
	struct proxy_run	*run = arg;
	struct proxy		*px = &run->pr_proxy;
	struct timeval		 tv = { run->pr_drain_secs, 0 };
	size_t			 i;

	(void)what;
	if (run->pr_draining) {
		event_base_loopexit(px->px_base, NULL);
		return;
	}
	run->pr_draining = true;
	log_info("proxy: %s: no new connections; %zu open",
	    strsignal((int)sig), px->px_nconns);
	for (i = 0; i < run->pr_nlisten; i++)
		evconnlistener_disable(run->pr_listeners[i]);
	if (px->px_nconns == 0) {
		event_base_loopexit(px->px_base, NULL);
		return;
	}
	px->px_drained = proxy_drained;
	run->pr_drain_ev = evtimer_new(px->px_base, proxy_drain_timeout_cb,
	    run);
	if (run->pr_drain_ev != NULL)
		evtimer_add(run->pr_drain_ev, &tv);
}

/*
 * --socket-mode: octal permission bits for Unix listeners.  Others may
 * not write (connect): anyone on the host could use the proxy.
 */
static int
proxy_socket_mode(const char *text, bool remote, mode_t *mode)
{
	char	*end;
	long	 n;

	n = strtol(text, &end, 8);
	if (*text == '\0' || *end != '\0' || n < 0 || n > 0777) {
		log_warnx("proxy: --socket-mode: \"%s\" is not an octal mode "
		    "from 0 to 0777", text);
		return -1;
	}
	if ((n & 0002) && !remote) {
		log_warnx("proxy: --socket-mode %s lets every user on this "
		    "host use the proxy", text);
		log_warnx("hint: give a group access with --socket-group "
		    "GROUP --socket-mode 0660, or pass --allow-non-loopback "
		    "if that is what you mean");
		return -1;
	}
	*mode = (mode_t)n;
	return 0;
}

/* --socket-group: a group name or number. */
static int
proxy_socket_group(const char *text, gid_t *gid)
{
	struct group	*gr;
	char		*end;
	long		 n;

	errno = 0;
	if ((gr = getgrnam(text)) != NULL) {
		*gid = gr->gr_gid;
		return 0;
	}
	n = strtol(text, &end, 10);
	if (*text != '\0' && *end == '\0' && n >= 0 && n < 0x7fffffff) {
		*gid = (gid_t)n;
		return 0;
	}
	log_warnx("proxy: --socket-group: no group \"%s\"", text);
	return -1;
}

/*
 * Gives a Unix listener its mode and group, so that the users of a group
 * can connect (connecting needs write permission on the socket file).
 */
static void
proxy_socket_perms(const struct endpoint *ep, mode_t mode, gid_t gid)
{
	if (ep->ep_family != AF_UNIX)
		return;
	if (gid != (gid_t)-1 && lchown(ep->ep_path, (uid_t)-1, gid) == -1)
		fatal("proxy: --socket-group: chown %s", ep->ep_text);
	if (mode != (mode_t)-1 && chmod(ep->ep_path, mode) == -1)
		fatal("proxy: --socket-mode: chmod %s", ep->ep_text);
}

/* The limits given, in place of proxy_init()'s defaults. */
static void
proxy_limits(struct proxy_run *run)
{
	struct proxy	*px = &run->pr_proxy;

	if (run->pr_max != 0)
		px->px_max = run->pr_max;
	if (run->pr_head_secs != 0)
		px->px_head_secs = run->pr_head_secs;
	if (run->pr_connect_secs != 0)
		px->px_connect_secs = run->pr_connect_secs;
	if (run->pr_idle_secs != 0)
		px->px_idle_secs = run->pr_idle_secs;
}

/* --metrics: a loopback listener for Prometheus; fatal on any error. */
static void
proxy_metrics(struct proxy_run *run, const char *text, bool remote)
{
	struct endpoint	*ep = &run->pr_metrics_ep;
	char		*cause;
	int		 fd;

	if (endpoint_parse(text, ep, &cause) == -1)
		fatalx("proxy: --metrics %s", cause);
	if (!remote && !endpoint_is_loopback(ep))
		fatalx("proxy: refusing to serve metrics on %s, which is not "
		    "a loopback address\ncordon: hint: use 127.0.0.1, ::1 "
		    "or a Unix socket, and let the scraper reach it through "
		    "a tunnel or a local agent", ep->ep_text);
	if ((fd = endpoint_listen(ep, SOMAXCONN, &cause)) == -1)
		fatalx("proxy: --metrics %s", cause);
	listen_note(&run->pr_proxy, fd);
	if ((run->pr_metrics = metrics_new(&run->pr_proxy, fd, &cause)) ==
	    NULL)
		fatalx("proxy: %s", cause);
	log_info("proxy: metrics on %s/metrics", ep->ep_text);
}

int
proxy_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "listen-sandbox", required_argument, NULL, 'S' },
		{ "log", required_argument, NULL, 'L' },
		{ "dns", required_argument, NULL, 'D' },
		{ "resolve", required_argument, NULL, 'r' },
		{ "max-conns", required_argument, NULL, 'm' },
		{ "drain-secs", required_argument, NULL, 's' },
		{ "head-secs", required_argument, NULL, 'H' },
		{ "connect-secs", required_argument, NULL, 'C' },
		{ "idle-secs", required_argument, NULL, 'I' },
		{ "allow-non-loopback", no_argument, NULL, 'A' },
		{ "only", no_argument, NULL, 'O' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "socket-mode", required_argument, NULL, 'o' },
		{ "socket-group", required_argument, NULL, 'g' },
		{ "upstream-ca", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct proxy_run	 run;
	struct proxy		*px = &run.pr_proxy;
	struct event_base	*base;
	struct policy		*p;
	struct event		*sigs[4];
	const char		*listens[PROXY_MAX_LISTEN], *logpath = "-";
	const char		**pins = NULL, *metrics = NULL;
	const char		*sockmode = NULL, *sockgroup = NULL;
	mode_t			 mode = (mode_t)-1;
	gid_t			 gid = (gid_t)-1;
	char			*dns = NULL, *cause, *end;
	size_t			 nlisten = 0, npins = 0, i;
	long			 n;
	bool			 remote = false;
	struct option		 all[POLICY_FLAGS_N + nitems(opts)];
	int			 ch, fd, longindex = 0;

	memset(&run, 0, sizeof(run));
	run.pr_drain_secs = PROXY_DRAIN_SECS;
	run.pr_layers.ly_no_workspace = true;
	policy_flag_options(all, nitems(all), opts, POLICY_FLAGS_NET);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", all, &longindex)) != -1) {
		if (policy_flag_take(&run.pr_layers, ch, optarg))
			continue;
		switch (ch) {
		case 'l':
		case 'S':
			if (nlisten == PROXY_MAX_LISTEN)
				fatalx("proxy: at most %d listeners",
				    PROXY_MAX_LISTEN);
			run.pr_pp2[nlisten] = ch == 'S';
			listens[nlisten++] = optarg;
			break;
		case 'U':
			run.pr_upstream_ca = optarg;
			break;
		case 'L':
			logpath = optarg;
			break;
		case 'D':
			str_append(&dns, ",", optarg);
			break;
		case 'r':
			pins = xreallocarray(pins, npins + 1, sizeof(*pins));
			pins[npins++] = optarg;
			break;
		case 'm':
		case 's':
		case 'H':
		case 'C':
		case 'I':
			n = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || n < 1 ||
			    n > 1000000) {
				log_warnx("proxy: --%s: \"%s\" is not a number "
				    "from 1 to 1000000", all[longindex].name,
				    optarg);
				return 2;
			}
			if (ch == 'm')
				run.pr_max = (size_t)n;
			else if (ch == 's')
				run.pr_drain_secs = (int)n;
			else if (ch == 'H')
				run.pr_head_secs = (int)n;
			else if (ch == 'C')
				run.pr_connect_secs = (int)n;
			else
				run.pr_idle_secs = (int)n;
			break;
		case 'A':
			remote = true;
			break;
		case 'O':
			run.pr_layers.ly_only = true;
			break;
		case 'M':
			metrics = optarg;
			break;
		case 'o':
			sockmode = optarg;
			break;
		case 'g':
			sockgroup = optarg;
			break;
		case 'h':
			proxy_usage(stdout);
			return 0;
		default:
			proxy_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		proxy_usage(stderr);
		return 2;
	}
	if (nlisten == 0)
		listens[nlisten++] = "tcp:127.0.0.1:3128";
	if (sockmode != NULL && proxy_socket_mode(sockmode, remote, &mode) ==
	    -1)
		return 2;
	if (sockgroup != NULL && proxy_socket_group(sockgroup, &gid) == -1)
		return 2;
	/* A group alone means its members may connect. */
	if (gid != (gid_t)-1 && mode == (mode_t)-1)
		mode = 0660;

	/* The policy first: a policy that does not load runs nothing. */
	if ((p = proxy_policy(&run)) == NULL)
		fatalx("proxy: no policy, not starting");

	fd_limit_raise();
	signal(SIGPIPE, SIG_IGN);
	if ((base = event_base_new()) == NULL)
		fatalx("proxy: cannot make an event loop");
	proxy_init(px, base, p);
	proxy_limits(&run);
	if (proxy_dns(px, dns, pins, npins, &cause) == -1)
		fatalx("proxy: %s", cause);
	if ((px->px_log = jsonl_open(logpath, &cause)) == NULL)
		fatalx("proxy: %s", cause);
	if (inspect_setup(px, p, run.pr_upstream_ca, &cause) == -1)
		fatalx("proxy: %s", cause);
	if (p->p_ncreds > 0)
		log_warnx("proxy: credentials are filled in by the proxy of "
		    "`cordon run` only, which knows the run's placeholders; "
		    "this proxy passes placeholders on untouched");

	for (i = 0; i < nlisten; i++) {
		struct endpoint	*ep = &run.pr_eps[i];

		if (endpoint_parse(listens[i], ep, &cause) == -1)
			fatalx("proxy: --listen %s", cause);
		if (!remote && !endpoint_is_loopback(ep))
			fatalx("proxy: refusing to listen on %s, which is not "
			    "a loopback address: anyone who can reach it "
			    "could use the proxy\ncordon: hint: listen on "
			    "127.0.0.1, ::1 or a Unix socket, or pass "
			    "--allow-non-loopback if that is what you mean",
			    ep->ep_text);
		if ((fd = endpoint_listen(ep, SOMAXCONN, &cause)) == -1)
			fatalx("proxy: %s", cause);
		listen_note(px, fd);
		run.pr_nlisten++;
		proxy_socket_perms(ep, mode, gid);
		/* Backlog 0: it listens already. */
		if ((run.pr_listeners[i] = evconnlistener_new(base,
		    proxy_accept_cb, &run, LEV_OPT_CLOSE_ON_FREE |
		    LEV_OPT_CLOSE_ON_EXEC, 0, fd)) == NULL)
			fatalx("proxy: cannot watch %s", ep->ep_text);
		evconnlistener_set_error_cb(run.pr_listeners[i],
		    proxy_accept_error_cb);
		log_info("proxy: listening on %s", ep->ep_text);
	}

	if (metrics != NULL)
		proxy_metrics(&run, metrics, remote);

	sigs[0] = evsignal_new(base, SIGHUP, proxy_hup_cb, &run);
	sigs[1] = evsignal_new(base, SIGTERM, proxy_term_cb, &run);
	sigs[2] = evsignal_new(base, SIGINT, proxy_term_cb, &run);
	sigs[3] = NULL;
	for (i = 0; i < 3; i++)
		if (sigs[i] == NULL || evsignal_add(sigs[i], NULL) == -1)
			fatalx("proxy: cannot watch signals");

	event_base_dispatch(base);

	/* First: the last lines reach the metrics (px_observe) too. */
	proxy_clear(px);
	for (i = 0; i < 3; i++)
		event_free(sigs[i]);
	if (run.pr_drain_ev != NULL)
		event_free(run.pr_drain_ev);
	for (i = 0; i < run.pr_nlisten; i++) {
		evconnlistener_free(run.pr_listeners[i]);
		endpoint_unlink(&run.pr_eps[i]);
		endpoint_clear(&run.pr_eps[i]);
	}
	metrics_free(run.pr_metrics);
	endpoint_unlink(&run.pr_metrics_ep);
	endpoint_clear(&run.pr_metrics_ep);
	event_base_free(base);
	free(run.pr_layers.ly_args);
	free(pins);
	free(dns);
	return 0;
}
