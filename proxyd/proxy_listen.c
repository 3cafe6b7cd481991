/*
 * proxy_listen.c: `cordon proxy`'s listeners: --listen, --listen-sandbox
 * and --metrics opened (once, by the proxy alone or by the parent of the
 * workers), their sockets' mode and group, and each watched on a loop,
 * where a connection accepted goes to the proxy.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "lib/endpoint.h"
#include "lib/log.h"
#include "proxy/proxy.h"
#include "proxyd/proxy_cmd.h"

/*
 * A connection accepted: counted (this worker's accept counter, which
 * /metrics shows per worker), then the proxy's, as its listener says:
 * TLS first, or a PROXY v2 header first, or neither.
 */
static void
proxy_listen_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct proxy_run	*run = arg;
	size_t			 i;

	for (i = 0; i < run->pr_nlisten; i++)
		if (run->pr_listeners[i] == l)
			break;
	run->pr_proxy.px_stats.ps_accepted++;
	metrics_sync(run->pr_proxy.px_metrics);
	if (i < run->pr_nlisten && run->pr_tls[i])
		conn_accept_tls(&run->pr_proxy, fd, sa);
	else
		conn_accept(&run->pr_proxy, fd, sa, (socklen_t)salen,
		    i < run->pr_nlisten && run->pr_pp2[i]);
}

/* accept(2) failed (out of descriptors): said, and the loop goes on. */
static void
proxy_listen_accept_error_cb(struct evconnlistener *l, void *arg)
{
	(void)l;
	(void)arg;
	log_warn("proxy: accept");
}

/*
 * --metrics: a loopback listener for Prometheus, served by the proxy
 * alone, or by the parent of its workers; fatal on any error.
 */
int
proxy_listen_metrics_open(struct proxy_run *run, const char *text,
    bool remote)
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
	log_info("proxy: metrics on %s/metrics", ep->ep_text);
	return fd;
}

/* --metrics served by the proxy alone. */
void
proxy_listen_metrics(struct proxy_run *run, const char *text, bool remote)
{
	char	*cause;
	int	 fd;

	fd = proxy_listen_metrics_open(run, text, remote);
	listen_note(&run->pr_proxy, fd);
	if ((run->pr_metrics = metrics_new(&run->pr_proxy, fd, &cause)) ==
	    NULL)
		fatalx("proxy: %s", cause);
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

/*
 * The listening sockets (--listen, --listen-sandbox), in pr_fds, opened
 * once, before any worker; fatal on any error.
 */
void
proxy_listen_open(struct proxy_run *run, const struct proxy_opts *o)
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
		run->pr_fds[i] = fd;
		run->pr_nlisten++;
		endpoint_perms(ep, "proxy", o->po_mode, o->po_gid);
		log_info("proxy: listening on %s", ep->ep_text);
	}
}

/*
 * Whether worker i leaves listener l to worker 0: a Unix or tls:
 * sandbox listener carries the runs' channels (watch.c), whose
 * decisions, asks and live rules hold for their sandbox's connections
 * only on the worker that holds the channel; so a run's channel and its
 * sandbox's connections are served by one worker, worker 0.  (A TCP
 * one carries none: a channel there is refused.)
 */
static bool
proxy_listen_pinned(const struct proxy_run *run, size_t i, size_t l)
{
	return run->pr_worker && i != 0 && run->pr_pp2[l] &&
	    (run->pr_eps[l].ep_family == AF_UNIX || run->pr_tls[l]);
}

/* Watches the listeners on the loop (worker i's); fatal on any error. */
void
proxy_listen(struct proxy_run *run, size_t i)
{
	size_t	 l;

	for (l = 0; l < run->pr_nlisten; l++) {
		listen_note(&run->pr_proxy, run->pr_fds[l]);
		if (proxy_listen_pinned(run, i, l)) {
			close(run->pr_fds[l]);
			continue;
		}
		/* Backlog 0: it listens already. */
		if ((run->pr_listeners[l] = evconnlistener_new(run->pr_base,
		    proxy_listen_accept_cb, run, LEV_OPT_CLOSE_ON_FREE |
		    LEV_OPT_CLOSE_ON_EXEC, 0, run->pr_fds[l])) == NULL)
			fatalx("proxy: cannot watch %s",
			    run->pr_eps[l].ep_text);
		evconnlistener_set_error_cb(run->pr_listeners[l],
		    proxy_listen_accept_error_cb);
	}
}
