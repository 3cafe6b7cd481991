/*
 * proxy_cmd.c: `cordon proxy`: its options, read into a struct
 * proxy_opts and the run's limits, then its start (the policy, the
 * proxy, the listeners of proxy_listen.c, the metrics, the signals),
 * alone or as --workers, the loop, and one end, proxy_stop().
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "lib/endpoint.h"
#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/opt.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"
#include "proxyd/proxy_cmd.h"

#define PROXY_DRAIN_SECS	10

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
	    "                    [--upstream-ca FILE] [--pid-file FILE]\n"
	    "                    [--workers N]\n");
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
 * whose digest is the one in force is left as it is (no reload is
 * counted), unless on SIGHUP, where the operator asked for one.
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
	metrics_sync(px->px_metrics);
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
		/* The parent's to remove: the other workers still serve. */
		if (!run->pr_worker)
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
	case 'w':
		return workers_parse(arg, &run->pr_workers);
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
		{ "workers", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct option	 all[POLICY_FLAGS_N + nitems(opts)];
	int		 ch, longindex = 0;

	memset(run, 0, sizeof(*run));
	run->pr_drain_secs = PROXY_DRAIN_SECS;
	run->pr_metrics_fd = -1;
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
	if (run->pr_workers == 0)
		run->pr_workers = workers_default();
	if (o->po_sockmode != NULL && endpoint_mode("proxy", o->po_sockmode,
	    o->po_remote, &o->po_mode) == -1)
		return -1;
	if (o->po_sockgroup != NULL && endpoint_group("proxy", o->po_sockgroup,
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
	if (!run->pr_worker)
		endpoint_unlink(&run->pr_metrics_ep);
	endpoint_clear(&run->pr_metrics_ep);
	event_base_free(run->pr_base);
}

/* What proxy_worker() is given: the options, parsed. */
struct proxy_job {
	struct proxy_run	*pj_run;
	const struct proxy_opts	*pj_opts;
};

/*
 * Worker i of --workers N, in its own process: the proxy alone's start
 * (its policy, log, resolver, signals, --policy-watch) on the listeners
 * the parent opened, counting into its slot of slots, and the limits of
 * identities into itab, shared; it ends as the proxy alone does, and
 * exits.
 */
static void
proxy_worker(size_t i, struct metrics_slot *slots, struct ident_table *itab,
    void *arg)
{
	struct proxy_job	*pj = arg;
	struct proxy_run	*run = pj->pj_run;

	proxy_setup(run, pj->pj_opts);
	run->pr_proxy.px_idents.ic_table = itab;
	run->pr_proxy.px_idents.ic_worker = i;
	proxy_listen(run, i);
	if (run->pr_metrics_fd != -1) {
		listen_note(&run->pr_proxy, run->pr_metrics_fd);
		close(run->pr_metrics_fd);
	}
	run->pr_proxy.px_listening = true;
	proxy_signals(run);
	proxy_policy_watch(run);
	proxy_starting_log = NULL;
	run->pr_metrics = metrics_attach(&run->pr_proxy, slots, i);
	event_base_dispatch(run->pr_base);
	proxy_stop(run);
}

/*
 * The parent's copies of the listening sockets closed and the Unix ones
 * removed, at a drain's start (and once more, harmlessly, at the end):
 * with every worker's closed too, a new client is refused at once
 * rather than left in a queue nobody accepts from.
 */
static void
proxy_workers_unlisten(void *arg)
{
	struct proxy_run	*run = ((struct proxy_job *)arg)->pj_run;
	size_t			 i;

	for (i = 0; i < run->pr_nlisten; i++) {
		if (run->pr_fds[i] != -1)
			close(run->pr_fds[i]);
		run->pr_fds[i] = -1;
		endpoint_unlink(&run->pr_eps[i]);
	}
}

/*
 * --workers N, N > 1: the policy checked and the listeners opened here,
 * then workers_run() until they have drained.  Returns the exit status.
 */
static int
proxy_workers(struct proxy_run *run, const struct proxy_opts *o)
{
	struct proxy_job	 pj = { run, o };
	struct policy		*p;
	size_t			 i;
	int			 status, mfd = -1;

	if ((p = proxy_policy(run)) == NULL)
		fatalx("proxy: no policy, not starting");
	policy_free(p);
	proxy_listen_open(run, o);
	if (o->po_metrics != NULL) {
		mfd = proxy_listen_metrics_open(run, o->po_metrics,
		    o->po_remote);
		/* Each worker notes its address, so that none dials it. */
		if ((run->pr_metrics_fd = fcntl(mfd, F_DUPFD_CLOEXEC, 0)) ==
		    -1)
			fatal("proxy: --metrics: dup");
	}
	proxy_pidfile(o->po_pidfile);
	run->pr_worker = true;
	status = workers_run(run->pr_workers, mfd, proxy_worker,
	    proxy_workers_unlisten, &pj);
	proxy_workers_unlisten(&pj);
	for (i = 0; i < run->pr_nlisten; i++)
		endpoint_clear(&run->pr_eps[i]);
	if (run->pr_metrics_fd != -1)
		close(run->pr_metrics_fd);
	endpoint_unlink(&run->pr_metrics_ep);
	endpoint_clear(&run->pr_metrics_ep);
	return status;
}

/* The proxy alone, in this process (--workers 1). */
static void
proxy_alone(struct proxy_run *run, const struct proxy_opts *o)
{
	proxy_setup(run, o);
	proxy_listen_open(run, o);
	proxy_listen(run, 0);
	run->pr_proxy.px_listening = true;
	if (o->po_metrics != NULL)
		proxy_listen_metrics(run, o->po_metrics, o->po_remote);
	proxy_signals(run);
	proxy_policy_watch(run);
	proxy_pidfile(o->po_pidfile);
	proxy_starting_log = NULL;
	event_base_dispatch(run->pr_base);
	proxy_stop(run);
}

int
proxy_cmd(int argc, char **argv)
{
	struct proxy_run	 run;
	struct proxy_opts	 o;
	int			 status;

	if (proxy_opts_parse(&run, &o, argc, argv, &status) == 0) {
		status = 0;
		if (run.pr_workers > 1)
			status = proxy_workers(&run, &o);
		else
			proxy_alone(&run, &o);
		if (o.po_pidfile != NULL)
			unlink(o.po_pidfile);
	}
	proxy_opts_clear(&run, &o);
	return status;
}
