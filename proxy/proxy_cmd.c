/*
 * proxy_cmd.c: `cordon proxy`: its options, read into a struct
 * proxy_opts and the run's limits, then its start (the policy, the
 * proxy, the listeners, the metrics, the signals), the loop, and one
 * end, proxy_stop().
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
#include "opt.h"
#include "util.h"
#include "xmalloc.h"

#define PROXY_DRAIN_SECS	10
#define PROXY_MAX_LISTEN	16

static void
proxy_usage(FILE *f)
{
	fprintf(f,
	    "usage: cordon proxy [--listen tcp:HOST:PORT|unix:PATH]...\n"
	    "                    [--listen-sandbox tcp:HOST:PORT|unix:PATH|"
	    "tls:HOST:PORT]...\n"
	    "                    [--tls-cert FILE --tls-key FILE "
	    "--client-ca FILE\n"
	    "                    [--crl FILE]] [--policy-watch]\n"
	    "                    [--policy FILE]... [--allow-domain P]...\n"
	    "                    [--deny-domain P]... [--allow-cidr CIDR]...\n"
	    "                    [--log FILE|-] [--dns HOST[:PORT]]...\n"
	    "                    [--resolve NAME:ADDR]... [--max-conns N]\n"
	    "                    [--drain-secs N] [--head-secs N]\n"
	    "                    [--connect-secs N] [--idle-secs N]\n"
	    "                    [--only] [--allow-non-loopback]\n"
	    "                    [--metrics tcp:HOST:PORT|unix:PATH]\n"
	    "                    [--socket-mode MODE] [--socket-group GROUP]\n"
	    "                    [--upstream-ca FILE] [--pid-file FILE]\n");
}

struct proxy_run {
	struct proxy		 pr_proxy;
	struct policy_layers	 pr_layers;
	struct endpoint		 pr_eps[PROXY_MAX_LISTEN];
	struct evconnlistener	*pr_listeners[PROXY_MAX_LISTEN];
	bool			 pr_pp2[PROXY_MAX_LISTEN];
	bool			 pr_tls[PROXY_MAX_LISTEN];	/* tls: */
	struct mtls_files	 pr_tls_files;
	bool			 pr_policy_watch;
	struct pwatch		*pr_pwatch;
	size_t			 pr_nlisten;
	/* The limits given (proxy_limits); 0 keeps proxy_init()'s. */
	size_t			 pr_max;
	int			 pr_head_secs;
	int			 pr_connect_secs;
	int			 pr_idle_secs;
	int			 pr_drain_secs;
	struct event		*pr_drain_ev;
	struct endpoint		 pr_metrics_ep;
	struct metrics		*pr_metrics;
	const char		*pr_upstream_ca;
	struct event_base	*pr_base;
	struct event		*pr_sigs[3];	/* HUP, TERM, INT */
};

/* `cordon proxy`'s options that only its start needs. */
struct proxy_opts {
	const char	 *po_listens[PROXY_MAX_LISTEN];
	char		 *po_tcp[PROXY_MAX_LISTEN];	/* tls:'s, as tcp: */
	size_t		  po_nlisten;
	const char	 *po_log;	/* --log, "-" for stdout */
	const char	**po_pins;	/* --resolve NAME:ADDR */
	size_t		  po_npins;
	char		 *po_dns;	/* --dns, comma-joined */
	const char	 *po_metrics;	/* --metrics, or NULL */
	const char	 *po_sockmode;	/* --socket-mode, as given */
	const char	 *po_sockgroup;	/* --socket-group, as given */
	const char	 *po_pidfile;	/* --pid-file, or NULL */
	mode_t		  po_mode;	/* Unix listeners', or -1 */
	gid_t		  po_gid;	/* Unix listeners', or -1 */
	bool		  po_remote;	/* --allow-non-loopback */
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
	if (i < run->pr_nlisten && run->pr_tls[i])
		conn_accept_tls(&run->pr_proxy, fd, sa);
	else
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

	if ((p = policy_merge_layers(&run->pr_layers, NULL, &cause)) != NULL)
		return p;
	log_warnx_lines(cause);
	return NULL;
}

/*
 * Reads the policy again (on SIGHUP, or because a file of it was
 * replaced: what says which); keeps the old one on error.  A policy
 * whose digest is the one in force is no reload, unless on SIGHUP.
 */
static void
proxy_reload(struct proxy_run *run, const char *what)
{
	struct proxy		*px = &run->pr_proxy;
	struct policy		*p;
	char			*cause, digest[sizeof(px->px_stats.ps_digest)];

	if ((p = proxy_policy(run)) != NULL && strcmp(what, "SIGHUP") != 0) {
		proxy_digest(p, digest, sizeof(digest));
		if (strcmp(digest, px->px_stats.ps_digest) == 0) {
			policy_free(p);
			return;
		}
	}
	if (p != NULL &&
	    inspect_setup(px, p, run->pr_upstream_ca, &cause) == -1) {
		log_warnx("proxy: %s", cause);
		free(cause);
		policy_free(p);
		p = NULL;
	}
	if (p == NULL) {
		px->px_stats.ps_reloads_failed++;
		log_warnx("proxy: reload failed; the policy in force stays "
		    "(%s; %s)", px->px_stats.ps_digest, what);
		return;
	}
	proxy_digest(p, px->px_stats.ps_digest, sizeof(px->px_stats.ps_digest));
	proxy_policy_unref(px->px_policy);
	px->px_policy = proxy_policy_new(p);
	px->px_stats.ps_reloads_ok++;
	px->px_stats.ps_loaded = time(NULL);
	log_info("proxy: policy reloaded (%s; %s)", px->px_stats.ps_digest,
	    what);
}

/* --policy-watch: a file of the policy was replaced. */
static void
proxy_watched(void *arg)
{
	proxy_reload(arg, "a policy file changed");
}

/*
 * SIGHUP: read the policy, the TLS files and reopen the log; what does
 * not load keeps the old.
 */
static void
proxy_hup_cb(evutil_socket_t sig, short what, void *arg)
{
	struct proxy_run	*run = arg;
	struct proxy		*px = &run->pr_proxy;
	char			*cause;

	(void)sig;
	(void)what;
	proxy_reload(run, "SIGHUP");
	if (px->px_mtls != NULL && mtls_reload(px->px_mtls, &cause) == -1) {
		log_warnx("proxy: %s; the TLS files in force stay", cause);
		free(cause);
	} else if (px->px_mtls != NULL)
		log_info("proxy: TLS files read again");
	if (px->px_log != NULL && jsonl_reopen(px->px_log, &cause) == -1) {
		log_warnx("proxy: %s; still writing to the old file", cause);
		free(cause);
	}
}

/* The last connection went while draining. */
static void
proxy_drained(void *arg)
{
	struct proxy	*px = arg;

	event_base_loopexit(px->px_base, NULL);
}

static const struct proxy_hooks proxy_cmd_hooks = {
	.hk_ask = watch_ask,
	.hk_ask_cancel = watch_ask_cancel,
	.hk_drained = proxy_drained,
};

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

/*
 * Draining: the listeners are closed, not only no longer watched, so a
 * new client is refused at once (ECONNREFUSED) instead of waiting in
 * the listen queue until it gives up; a Unix socket's file goes too (a
 * client finds none: ENOENT), so that a new proxy may take the path
 * while this one drains, and this one's end removes nothing of it.
 */
static void
proxy_unlisten(struct proxy_run *run)
{
	size_t	 i;

	for (i = 0; i < run->pr_nlisten; i++) {
		if (run->pr_listeners[i] != NULL)
			evconnlistener_free(run->pr_listeners[i]);
		run->pr_listeners[i] = NULL;
		endpoint_unlink(&run->pr_eps[i]);
	}
}

/* SIGTERM, SIGINT: stop accepting, let tunnels drain, then exit. */
static void
proxy_term_cb(evutil_socket_t sig, short what, void *arg)
{
	struct proxy_run	*run = arg;
	struct proxy		*px = &run->pr_proxy;
	struct timeval		 tv = { run->pr_drain_secs, 0 };

	(void)what;
	if (px->px_draining) {
		event_base_loopexit(px->px_base, NULL);
		return;
	}
	log_info("proxy: %s: no new connections; %zu open",
	    strsignal((int)sig), px->px_nconns);
	proxy_unlisten(run);
	if (proxy_drain(px)) {
		event_base_loopexit(px->px_base, NULL);
		return;
	}
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
	log_warnx("hint: name a group of this system (getent group lists "
	    "them) or its number; groupadd %s makes one, and usermod -aG "
	    "%s USER puts a user in it", text, text);
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

/*
 * --max-conns, --drain-secs, --head-secs, --connect-secs, --idle-secs
 * (option name) into run.  Returns 0, or -1 having said why.
 */
static int
proxy_opts_number(struct proxy_run *run, int ch, const char *name,
    const char *arg)
{
	char	*end;
	long	 n;

	n = strtol(arg, &end, 10);
	if (*arg == '\0' || *end != '\0' || n < 1 || n > 1000000) {
		log_warnx("proxy: --%s: \"%s\" is not a number from 1 to "
		    "1000000", name, arg);
		return -1;
	}
	if (ch == 'm')
		run->pr_max = (size_t)n;
	else if (ch == 's')
		run->pr_drain_secs = (int)n;
	else if (ch == 'H')
		run->pr_head_secs = (int)n;
	else if (ch == 'C')
		run->pr_connect_secs = (int)n;
	else
		run->pr_idle_secs = (int)n;
	return 0;
}

/*
 * Any flag but a policy flag into run or o.  Returns 0, or -1 with
 * *status set: 0 after --help, 2 for a bad flag or value (said).
 */
static int
proxy_opts_flag(struct proxy_run *run, struct proxy_opts *o, int ch,
    const char *name, char *arg, int *status)
{
	*status = 2;
	switch (ch) {
	case 'l':
	case 'S':
		if (o->po_nlisten == PROXY_MAX_LISTEN)
			fatalx("proxy: at most %d listeners", PROXY_MAX_LISTEN);
		run->pr_pp2[o->po_nlisten] = ch == 'S';
		if (strncmp(arg, "tls:", 4) == 0) {
			if (ch != 'S') {
				log_warnx("proxy: --listen %s: a tls: listener "
				    "reads sandboxes' headers", arg);
				log_warnx("hint: use --listen-sandbox %s", arg);
				return -1;
			}
			run->pr_tls[o->po_nlisten] = true;
			xasprintf(&o->po_tcp[o->po_nlisten], "tcp:%s", arg + 4);
			arg = o->po_tcp[o->po_nlisten];
		}
		o->po_listens[o->po_nlisten++] = arg;
		break;
	case 'T':
		run->pr_tls_files.mf_cert = arg;
		break;
	case 'K':
		run->pr_tls_files.mf_key = arg;
		break;
	case 'Q':
		run->pr_tls_files.mf_ca = arg;
		break;
	case 'R':
		run->pr_tls_files.mf_crl = arg;
		break;
	case 'W':
		run->pr_policy_watch = true;
		break;
	case 'U':
		run->pr_upstream_ca = arg;
		break;
	case 'L':
		o->po_log = arg;
		break;
	case 'D':
		str_append(&o->po_dns, ",", arg);
		break;
	case 'r':
		o->po_pins = xreallocarray(o->po_pins, o->po_npins + 1,
		    sizeof(*o->po_pins));
		o->po_pins[o->po_npins++] = arg;
		break;
	case 'm':
	case 's':
	case 'H':
	case 'C':
	case 'I':
		return proxy_opts_number(run, ch, name, arg);
	case 'A':
		o->po_remote = true;
		break;
	case 'O':
		run->pr_layers.ly_only = true;
		break;
	case 'M':
		o->po_metrics = arg;
		break;
	case 'o':
		o->po_sockmode = arg;
		break;
	case 'g':
		o->po_sockgroup = arg;
		break;
	case 'P':
		o->po_pidfile = arg;
		break;
	case 'h':
		proxy_usage(stdout);
		*status = 0;
		return -1;
	default:
		proxy_usage(stderr);
		return -1;
	}
	return 0;
}

/*
 * The TLS files go with a tls: listener, --policy-watch with a --policy
 * file; said and -1 if not.
 */
static int
proxy_opts_tls(struct proxy_run *run, const struct proxy_opts *o)
{
	const struct mtls_files	*mf = &run->pr_tls_files;
	size_t			 i;
	bool			 tls = false, files = false;

	for (i = 0; i < o->po_nlisten; i++)
		tls |= run->pr_tls[i];
	if (!tls && (mf->mf_cert != NULL || mf->mf_key != NULL ||
	    mf->mf_ca != NULL || mf->mf_crl != NULL)) {
		log_warnx("proxy: --tls-cert, --tls-key, --client-ca and --crl "
		    "are a tls: listener's, and there is none");
		log_warnx("hint: add --listen-sandbox tls:HOST:PORT");
		return -1;
	}
	for (i = 0; i + 1 < run->pr_layers.ly_nargs; i += 2)
		files |= strcmp(run->pr_layers.ly_args[i], "--policy") == 0;
	if (run->pr_policy_watch && !files) {
		log_warnx("proxy: --policy-watch: no --policy FILE to watch");
		log_warnx("hint: name the policy with --policy FILE");
		return -1;
	}
	return 0;
}

/*
 * Reads `cordon proxy`'s options into run (its policy flags and limits)
 * and o, which proxy_opts_clear() frees after, whatever this returns.
 * Returns 0 when the proxy starts, or -1 with *status set to the exit
 * status (0 after --help).
 */
static int
proxy_opts_parse(struct proxy_run *run, struct proxy_opts *o, int argc,
    char **argv, int *status)
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
		{ "pid-file", required_argument, NULL, 'P' },
		{ "tls-cert", required_argument, NULL, 'T' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "client-ca", required_argument, NULL, 'Q' },
		{ "crl", required_argument, NULL, 'R' },
		{ "policy-watch", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct option	 all[POLICY_FLAGS_N + nitems(opts)];
	int		 ch, longindex = 0;

	memset(run, 0, sizeof(*run));
	run->pr_drain_secs = PROXY_DRAIN_SECS;
	run->pr_layers.ly_no_workspace = true;
	memset(o, 0, sizeof(*o));
	o->po_log = "-";
	o->po_mode = (mode_t)-1;
	o->po_gid = (gid_t)-1;
	*status = 2;
	policy_flag_options(all, nitems(all), opts, POLICY_FLAGS_NET);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", all, &longindex)) != -1)
		if (ch == '?') {
			opt_refused("proxy", argv, all, "h");
			return -1;
		} else if (!policy_flag_take(&run->pr_layers, ch, optarg) &&
		    proxy_opts_flag(run, o, ch, all[longindex].name, optarg,
		    status) == -1)
			return -1;
	if (optind != argc) {
		proxy_usage(stderr);
		return -1;
	}
	if (o->po_nlisten == 0)
		o->po_listens[o->po_nlisten++] = "tcp:127.0.0.1:3128";
	if (o->po_sockmode != NULL && proxy_socket_mode(o->po_sockmode,
	    o->po_remote, &o->po_mode) == -1)
		return -1;
	if (o->po_sockgroup != NULL && proxy_socket_group(o->po_sockgroup,
	    &o->po_gid) == -1)
		return -1;
	if (proxy_opts_tls(run, o) == -1)
		return -1;
	/* A group alone means its members may connect. */
	if (o->po_gid != (gid_t)-1 && o->po_mode == (mode_t)-1)
		o->po_mode = 0660;
	return 0;
}

/* Frees what proxy_opts_parse() made; the other strings are argv's. */
static void
proxy_opts_clear(struct proxy_run *run, struct proxy_opts *o)
{
	size_t	 i;

	free(run->pr_layers.ly_args);
	free(o->po_pins);
	free(o->po_dns);
	for (i = 0; i < PROXY_MAX_LISTEN; i++)
		free(o->po_tcp[i]);
}

/*
 * A tls: listener that cannot be served: said, with the fix, and the
 * proxy does not start (125: cordon's own failure, as `cordon run`'s).
 */
static void __attribute__((noreturn))
proxy_tls_refuse(const char *what, const char *hint)
{
	log_warnx("proxy: %s", what);
	log_warnx("hint: %s", hint);
	exit(125);
}

/* The TLS of the tls: listeners, if any; exits 125 when it cannot be. */
static void
proxy_tls(struct proxy_run *run, const struct proxy_opts *o)
{
	const struct mtls_files	*mf = &run->pr_tls_files;
	char			*cause;
	size_t			 i;
	bool			 tls = false;

	for (i = 0; i < o->po_nlisten; i++)
		tls |= run->pr_tls[i];
	if (!tls)
		return;
	if (mf->mf_cert == NULL || mf->mf_key == NULL || mf->mf_ca == NULL)
		proxy_tls_refuse("a tls: listener needs --tls-cert, --tls-key "
		    "and --client-ca", "give the server's certificate and key, "
		    "and the CA that issues its clients' certificates "
		    "(--crl FILE adds that CA's revocation list)");
	if ((run->pr_proxy.px_mtls = mtls_new(mf, &cause)) == NULL)
		proxy_tls_refuse(cause, "each file must be readable by this "
		    "user and in PEM: openssl x509 -in CERT -noout, openssl "
		    "pkey -in KEY -noout and openssl crl -in CRL -noout read "
		    "them; the key must be the certificate's");
}

/*
 * --policy-watch: the folders of the --policy files; fatal if they
 * cannot be watched.
 */
static void
proxy_policy_watch(struct proxy_run *run)
{
	const struct policy_layers	*pl = &run->pr_layers;
	const struct pidents		*is;
	const char			**files, *f;
	char				*cause;
	size_t				 i, n = 0;

	if (!run->pr_policy_watch)
		return;
	is = run->pr_proxy.px_policy->pp_policy->p_idents;
	files = xcalloc(pl->ly_nargs + (is != NULL ? is->is_n + 1 : 0),
	    sizeof(*files));
	for (i = 0; i + 1 < pl->ly_nargs; i += 2)
		if (strcmp(pl->ly_args[i], "--policy") == 0)
			files[n++] = pl->ly_args[i + 1];
	/* The identities' layers at start: their folders are watched too. */
	for (i = 0; is != NULL && i <= is->is_n; i++)
		if ((f = (i < is->is_n ? is->is_v[i].id_file :
		    is->is_default.id_file)) != NULL)
			files[n++] = f;
	run->pr_pwatch = pwatch_new(run->pr_base, files, n, proxy_watched,
	    run, &cause);
	free(files);
	if (run->pr_pwatch == NULL)
		fatalx("proxy: %s", cause);
}

/* The egress log while the proxy starts: removed if made and empty. */
static struct jsonl	*proxy_starting_log;

/* At exit: a start that failed (fatalx) leaves no empty log. */
static void
proxy_start_failed(void)
{
	if (proxy_starting_log != NULL)
		jsonl_unmake(proxy_starting_log);
}

/*
 * The loop and the proxy on it, with the policy, the limits, the
 * resolver, the egress log and what inspection needs; fatal on any
 * error.  The policy first: a policy that does not load runs nothing.
 */
static void
proxy_setup(struct proxy_run *run, const struct proxy_opts *o)
{
	struct proxy	*px = &run->pr_proxy;
	struct policy	*p;
	char		*cause;

	if ((p = proxy_policy(run)) == NULL)
		fatalx("proxy: no policy, not starting");

	file_limit_raise();
	signal(SIGPIPE, SIG_IGN);
	if ((run->pr_base = event_base_new()) == NULL)
		fatalx("proxy: cannot make an event loop");
	proxy_init(px, run->pr_base, p);
	px->px_hooks = &proxy_cmd_hooks;
	px->px_hooks_arg = px;
	proxy_limits(run);
	if (proxy_dns(px, o->po_dns, o->po_pins, o->po_npins, &cause) == -1)
		fatalx("proxy: %s", cause);
	if ((px->px_log = jsonl_open(o->po_log, &cause)) == NULL)
		fatalx("proxy: %s", cause);
	proxy_starting_log = px->px_log;
	atexit(proxy_start_failed);
	if (inspect_setup(px, p, run->pr_upstream_ca, &cause) == -1)
		fatalx("proxy: %s", cause);
	proxy_digest(p, px->px_stats.ps_digest, sizeof(px->px_stats.ps_digest));
	proxy_tls(run, o);
	if (p->p_ncreds > 0)
		log_warnx("proxy: credentials are filled in by the proxy of "
		    "`cordon run` only, which knows the run's placeholders; "
		    "this proxy passes placeholders on untouched");
}

/*
 * A sandbox listener on TCP: the kernel says nothing of who connected,
 * so the sandbox id its clients name is their word alone, scoped to no
 * user.  Said at start, since nothing in the log can say it later.
 */
static void
proxy_listen_tcp_sandbox(const struct endpoint *ep)
{
	log_warnx("proxy: --listen-sandbox %s: TCP carries no peer "
	    "credentials: any process that can connect to it may name any "
	    "sandbox id, and its lines have no uid", ep->ep_text);
	log_warnx("hint: use --listen-sandbox unix:PATH, whose clients' "
	    "uids are logged; keep a TCP one on loopback, on a host whose "
	    "users are all trusted");
}

/* The listeners (--listen, --listen-sandbox); fatal on any error. */
static void
proxy_listen(struct proxy_run *run, const struct proxy_opts *o)
{
	struct endpoint	*ep;
	char		*cause;
	size_t		 i;
	int		 fd;

	for (i = 0; i < o->po_nlisten; i++) {
		ep = &run->pr_eps[i];
		if (endpoint_parse(o->po_listens[i], ep, &cause) == -1)
			fatalx("proxy: --listen %s", cause);
		/* A tls: client proves who it is: it may come from afar. */
		if (!o->po_remote && !run->pr_tls[i] &&
		    !endpoint_is_loopback(ep))
			fatalx("proxy: refusing to listen on %s, which is not "
			    "a loopback address: anyone who can reach it "
			    "could use the proxy\ncordon: hint: listen on "
			    "127.0.0.1, ::1 or a Unix socket, or pass "
			    "--allow-non-loopback if that is what you mean",
			    ep->ep_text);
		if (run->pr_pp2[i] && !run->pr_tls[i] &&
		    ep->ep_family != AF_UNIX)
			proxy_listen_tcp_sandbox(ep);
		if ((fd = endpoint_listen(ep, SOMAXCONN, &cause)) == -1)
			fatalx("proxy: %s", cause);
		listen_note(&run->pr_proxy, fd);
		run->pr_nlisten++;
		proxy_socket_perms(ep, o->po_mode, o->po_gid);
		/* Backlog 0: it listens already. */
		if ((run->pr_listeners[i] = evconnlistener_new(run->pr_base,
		    proxy_accept_cb, run, LEV_OPT_CLOSE_ON_FREE |
		    LEV_OPT_CLOSE_ON_EXEC, 0, fd)) == NULL)
			fatalx("proxy: cannot watch %s", ep->ep_text);
		evconnlistener_set_error_cb(run->pr_listeners[i],
		    proxy_accept_error_cb);
		log_info("proxy: listening on %s", ep->ep_text);
	}
}

/*
 * --pid-file: where logrotate's postrotate (and any script) finds whom
 * to send SIGHUP without systemd; written once the listeners are up,
 * removed at the end.  Fatal if it cannot be written.
 */
static void
proxy_pidfile(const char *path)
{
	FILE	*f;

	if (path == NULL)
		return;
	if ((f = fopen(path, "we")) == NULL ||
	    fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) == EOF)
		fatal("proxy: --pid-file %s", path);
}

/* SIGHUP reloads, SIGTERM and SIGINT drain; fatal on any error. */
static void
proxy_signals(struct proxy_run *run)
{
	size_t	 i;

	run->pr_sigs[0] = evsignal_new(run->pr_base, SIGHUP, proxy_hup_cb,
	    run);
	run->pr_sigs[1] = evsignal_new(run->pr_base, SIGTERM, proxy_term_cb,
	    run);
	run->pr_sigs[2] = evsignal_new(run->pr_base, SIGINT, proxy_term_cb,
	    run);
	for (i = 0; i < nitems(run->pr_sigs); i++)
		if (run->pr_sigs[i] == NULL ||
		    evsignal_add(run->pr_sigs[i], NULL) == -1)
			fatalx("proxy: cannot watch signals");
}

/*
 * The one end, once the loop is over: the proxy first, so that the last
 * lines reach the metrics too, then what serves it.
 */
static void
proxy_stop(struct proxy_run *run)
{
	size_t	 i;

	run->pr_proxy.px_draining = false;
	conn_close_all(&run->pr_proxy);
	watch_close_all(&run->pr_proxy);
	inspect_teardown(&run->pr_proxy);
	mtls_free(run->pr_proxy.px_mtls);
	run->pr_proxy.px_mtls = NULL;
	pwatch_free(run->pr_pwatch);
	proxy_clear(&run->pr_proxy);
	for (i = 0; i < nitems(run->pr_sigs); i++)
		event_free(run->pr_sigs[i]);
	if (run->pr_drain_ev != NULL)
		event_free(run->pr_drain_ev);
	proxy_unlisten(run);
	for (i = 0; i < run->pr_nlisten; i++)
		endpoint_clear(&run->pr_eps[i]);
	metrics_free(run->pr_metrics);
	endpoint_unlink(&run->pr_metrics_ep);
	endpoint_clear(&run->pr_metrics_ep);
	event_base_free(run->pr_base);
}

int
proxy_cmd(int argc, char **argv)
{
	struct proxy_run	 run;
	struct proxy_opts	 o;
	int			 status;

	if (proxy_opts_parse(&run, &o, argc, argv, &status) == 0) {
		proxy_setup(&run, &o);
		proxy_listen(&run, &o);
		run.pr_proxy.px_listening = true;
		if (o.po_metrics != NULL)
			proxy_metrics(&run, o.po_metrics, o.po_remote);
		proxy_signals(&run);
		proxy_policy_watch(&run);
		proxy_pidfile(o.po_pidfile);
		proxy_starting_log = NULL;
		event_base_dispatch(run.pr_base);
		proxy_stop(&run);
		if (o.po_pidfile != NULL)
			unlink(o.po_pidfile);
		status = 0;
	}
	proxy_opts_clear(&run, &o);
	return status;
}
