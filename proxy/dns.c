/*
 * dns.c: asynchronous name resolution for the proxy, with c-ares on the
 * proxy's libevent loop.
 *
 * c-ares tells which of its sockets it wants watched through the socket
 * state callback; each gets a libevent event, and one timer follows
 * ares_timeout().  A query can be cancelled by its owner (a client that
 * went away): c-ares cannot drop one query, so the query is only
 * disowned, and its answer is thrown away when it comes.
 *
 * --resolve NAME:ADDR pins answer before c-ares is asked; pinned or not,
 * every address still goes through the proxy's address checks.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <ares.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "lib/addr.h"
#include "lib/host.h"
#include "lib/log.h"
#include "lib/xmalloc.h"
#include "proxy/proxy.h"

struct dns_sock {
	LIST_ENTRY(dns_sock)	 ds_entry;
	struct dns		*ds_dns;
	ares_socket_t		 ds_fd;
	struct event		*ds_ev;
	short			 ds_what;
};

struct dns_pin {
	LIST_ENTRY(dns_pin)	 dp_entry;
	char			 dp_name[HOST_NAME_MAX_LEN + 1];
	struct addr		 dp_addr;
};

struct dns {
	struct event_base	*d_base;
	ares_channel		 d_channel;
	struct event		*d_timer;
	LIST_HEAD(, dns_sock)	 d_socks;
	LIST_HEAD(, dns_pin)	 d_pins;
	struct event		*d_pinned;	/* answers pins on the loop */
};

struct dns_query {
	struct dns		*dq_dns;
	dns_cb			 dq_cb;		/* NULL once cancelled */
	void			*dq_arg;
	struct addr		 dq_addrs[DNS_MAX_ADDRS];
	size_t			 dq_naddrs;
	const char		*dq_error;	/* a static c-ares string */
	bool			 dq_inside;	/* within dns_resolve() */
	struct event		*dq_ev;		/* answers given on the loop */
};

static void	dns_reschedule(struct dns *);

static void
dns_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_sock	*ds = arg;
	struct dns	*d = ds->ds_dns;

	ares_process_fd(d->d_channel,
	    (what & EV_READ) ? (ares_socket_t)fd : ARES_SOCKET_BAD,
	    (what & EV_WRITE) ? (ares_socket_t)fd : ARES_SOCKET_BAD);
	dns_reschedule(d);
}

/* c-ares wants fd watched for reading and/or writing, or no more. */
static void
dns_state_cb(void *arg, ares_socket_t fd, int readable, int writable)
{
	struct dns	*d = arg;
	struct dns_sock	*ds;
	short		 what;

	what = (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0);
	LIST_FOREACH(ds, &d->d_socks, ds_entry)
		if (ds->ds_fd == fd)
			break;
	if (ds != NULL) {
		event_free(ds->ds_ev);
		if (what == 0) {
			LIST_REMOVE(ds, ds_entry);
			free(ds);
			return;
		}
	} else {
		if (what == 0)
			return;
		ds = xcalloc(1, sizeof(*ds));
		ds->ds_dns = d;
		ds->ds_fd = fd;
		LIST_INSERT_HEAD(&d->d_socks, ds, ds_entry);
	}
	ds->ds_what = what;
	if ((ds->ds_ev = event_new(d->d_base, fd, what | EV_PERSIST,
	    dns_sock_cb, ds)) == NULL || event_add(ds->ds_ev, NULL) == -1)
		fatalx("dns: cannot watch a resolver socket");
}

static void
dns_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns	*d = arg;

	(void)fd;
	(void)what;
	ares_process_fd(d->d_channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	dns_reschedule(d);
}

/* Arms the one timer for c-ares' next timeout, if it has one. */
static void
dns_reschedule(struct dns *d)
{
	struct timeval	 tv, *tvp;

	if ((tvp = ares_timeout(d->d_channel, NULL, &tv)) != NULL)
		evtimer_add(d->d_timer, tvp);
	else
		evtimer_del(d->d_timer);
}

/*
 * Makes a resolver on base, reading the system's resolver configuration
 * (dns_servers replaces its servers).  Returns it, or NULL with *cause.
 */
struct dns *
dns_new(struct event_base *base, char **cause)
{
	struct ares_options	 opts;
	struct dns		*d;
	int			 rc;

	if ((rc = ares_library_init(ARES_LIB_INIT_ALL)) != ARES_SUCCESS) {
		xasprintf(cause, "c-ares: %s", ares_strerror(rc));
		return NULL;
	}
	d = xcalloc(1, sizeof(*d));
	d->d_base = base;
	LIST_INIT(&d->d_socks);
	LIST_INIT(&d->d_pins);
	memset(&opts, 0, sizeof(opts));
	opts.sock_state_cb = dns_state_cb;
	opts.sock_state_cb_data = d;
	opts.timeout = 2000;		/* ms per try */
	opts.tries = 2;
	if ((rc = ares_init_options(&d->d_channel, &opts,
	    ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES)) !=
	    ARES_SUCCESS) {
		xasprintf(cause, "c-ares: %s", ares_strerror(rc));
		free(d);
		return NULL;
	}
	if ((d->d_timer = evtimer_new(base, dns_timer_cb, d)) == NULL)
		fatalx("dns: evtimer_new failed");
	return d;
}

/*
 * Uses the servers in csv ("127.0.0.1:5353,[::1]:53") instead of the
 * system's.  Returns 0, or -1 with *cause set.
 */
int
dns_servers(struct dns *d, const char *csv, char **cause)
{
	int	 rc;

	if ((rc = ares_set_servers_ports_csv(d->d_channel, csv)) !=
	    ARES_SUCCESS) {
		xasprintf(cause, "--dns %s: %s", csv, ares_strerror(rc));
		return -1;
	}
	return 0;
}

/*
 * Pins NAME:ADDR (ADDR an IP literal, IPv6 in brackets or not): NAME
 * then resolves to its pinned addresses only.  Returns 0, or -1 with
 * *cause set.
 */
int
dns_pin(struct dns *d, const char *text, char **cause)
{
	struct dns_pin	*dp;
	struct host	 h;
	const char	*colon;
	char		*why;

	if ((colon = strchr(text, ':')) == NULL) {
		xasprintf(cause, "--resolve %s: expected NAME:ADDRESS", text);
		return -1;
	}
	dp = xcalloc(1, sizeof(*dp));
	if (host_parse(text, (size_t)(colon - text), &h, &why) == -1 ||
	    h.h_kind != HOST_NAME) {
		xasprintf(cause, "--resolve %s: %s", text,
		    why != NULL ? why : "not a host name");
		free(why);
		free(dp);
		return -1;
	}
	memcpy(dp->dp_name, h.h_name, sizeof(dp->dp_name));
	if (addr_parse(colon + 1, strlen(colon + 1), &dp->dp_addr) == -1) {
		xasprintf(cause, "--resolve %s: \"%s\" is not an IP address",
		    text, colon + 1);
		free(dp);
		return -1;
	}
	addr_unmap(&dp->dp_addr);
	LIST_INSERT_HEAD(&d->d_pins, dp, dp_entry);
	return 0;
}

static void
dns_query_free(struct dns_query *q)
{
	if (q->dq_ev != NULL)
		event_free(q->dq_ev);
	free(q);
}

/* Gives the answer of q to its owner, if it still has one, and frees q. */
static void
dns_deliver(struct dns_query *q)
{
	if (q->dq_cb != NULL)
		q->dq_cb(q->dq_naddrs ? q->dq_addrs : NULL, q->dq_naddrs,
		    q->dq_error, q->dq_arg);
	dns_query_free(q);
}

static void
dns_deliver_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	dns_deliver(arg);
}

/*
 * Answers q from the loop: c-ares may answer inside ares_getaddrinfo()
 * (from /etc/hosts, say), and pins are answered at once, but a caller
 * must never be called back before dns_resolve() returned.
 */
static void
dns_deliver_later(struct dns_query *q)
{
	if ((q->dq_ev = event_new(q->dq_dns->d_base, -1, 0, dns_deliver_cb,
	    q)) == NULL)
		fatalx("dns: event_new failed");
	event_active(q->dq_ev, EV_TIMEOUT, 0);
}

static void
dns_ares_cb(void *arg, int status, int timeouts, struct ares_addrinfo *ai)
{
	struct dns_query		*q = arg;
	struct ares_addrinfo_node	*n;
	struct addr			*a;

	(void)timeouts;
	if (status != ARES_SUCCESS)
		q->dq_error = ares_strerror(status);
	for (n = ai != NULL ? ai->nodes : NULL;
	    n != NULL && q->dq_naddrs < DNS_MAX_ADDRS; n = n->ai_next) {
		a = &q->dq_addrs[q->dq_naddrs];
		memset(a, 0, sizeof(*a));
		if (n->ai_family == AF_INET) {
			a->a_family = AF_INET;
			memcpy(a->a_bytes, &((struct sockaddr_in *)
			    n->ai_addr)->sin_addr, 4);
		} else if (n->ai_family == AF_INET6) {
			a->a_family = AF_INET6;
			memcpy(a->a_bytes, &((struct sockaddr_in6 *)
			    n->ai_addr)->sin6_addr, 16);
		} else
			continue;
		q->dq_naddrs++;
	}
	ares_freeaddrinfo(ai);
	if (q->dq_error == NULL && q->dq_naddrs == 0)
		q->dq_error = "no address";
	if (q->dq_inside)
		dns_deliver_later(q);
	else
		dns_deliver(q);
}

/*
 * Resolves the canonical name (A and AAAA); cb(arg) gets the answer
 * later, from the loop, never before this returns.  Returns the query,
 * which dns_cancel() disowns.
 */
struct dns_query *
dns_resolve(struct dns *d, const char *name, dns_cb cb, void *arg)
{
	struct ares_addrinfo_hints	 hints;
	struct dns_query		*q;
	struct dns_pin			*dp;

	q = xcalloc(1, sizeof(*q));
	q->dq_dns = d;
	q->dq_cb = cb;
	q->dq_arg = arg;
	LIST_FOREACH(dp, &d->d_pins, dp_entry)
		if (strcmp(dp->dp_name, name) == 0 &&
		    q->dq_naddrs < DNS_MAX_ADDRS)
			q->dq_addrs[q->dq_naddrs++] = dp->dp_addr;
	if (q->dq_naddrs != 0) {
		dns_deliver_later(q);
		return q;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_flags = ARES_AI_NOSORT;
	q->dq_inside = true;
	ares_getaddrinfo(d->d_channel, name, NULL, &hints, dns_ares_cb, q);
	/* Still valid: an answer given inside was only scheduled. */
	q->dq_inside = false;
	dns_reschedule(d);
	return q;
}

/* The owner of q goes away: its answer will be dropped. */
void
dns_cancel(struct dns_query *q)
{
	if (q != NULL)
		q->dq_cb = NULL;
}

void
dns_free(struct dns *d)
{
	struct dns_sock	*ds;
	struct dns_pin	*dp;

	if (d == NULL)
		return;
	ares_destroy(d->d_channel);	/* calls back each query, failed */
	while ((ds = LIST_FIRST(&d->d_socks)) != NULL) {
		LIST_REMOVE(ds, ds_entry);
		event_free(ds->ds_ev);
		free(ds);
	}
	while ((dp = LIST_FIRST(&d->d_pins)) != NULL) {
		LIST_REMOVE(dp, dp_entry);
		free(dp);
	}
	event_free(d->d_timer);
	free(d);
	ares_library_cleanup();
}
