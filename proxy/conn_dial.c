/*
 * conn_dial.c: from a target to an upstream connection: decided by the
 * policy (or the harness asked), resolved, checked, connected.
 *
 * A name is resolved on the proxy's loop (dns.c) and every address it
 * has is checked (policy_match_addr): one special address refuses the
 * lot; a literal was checked with the decision (policy_match_host).  An
 * address that is the proxy's own listener (listen.c) refuses the
 * target too: a loop.  Then the proxy connects to exactly the addresses
 * it checked, one after the other, and never looks the name up again,
 * so DNS rebinding has nothing to move.  Once connected, the protocol
 * goes on (conn_ops.co_connected): an HTTP request is sent, a tunnel
 * answered.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "lib/endpoint.h"
#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/conn.h"

/* Fills ss with a and port; returns its length. */
static socklen_t
conn_connect_sockaddr(const struct addr *a, int port,
    struct sockaddr_storage *ss)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (a->a_family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		memcpy(&sin->sin_addr, a->a_bytes, 4);
		return sizeof(*sin);
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons((uint16_t)port);
	memcpy(&sin6->sin6_addr, a->a_bytes, 16);
	return sizeof(*sin6);
}

/* Makes the upstream bufferevent; it does not own c_upfd. */
static void
conn_connect_bev(struct conn *c)
{
	if ((c->c_up = bufferevent_socket_new(c->c_proxy->px_base,
	    c->c_upfd, 0)) == NULL)
		fatalx("proxy: bufferevent_socket_new failed");
	bufferevent_setcb(c->c_up, conn_up_read_cb, conn_up_write_cb,
	    conn_up_event_cb, c);
	bufferevent_setwatermark(c->c_up, EV_WRITE, PROXY_BUFFER_MAX / 2, 0);
	bufferevent_enable(c->c_up, EV_READ | EV_WRITE);
}

/*
 * The connection to cd_upaddr is made, or failed (then the next address
 * is tried): HTTP sends the request, a tunnel is answered and its first
 * bytes are awaited.
 */
static void
conn_connect_done_cb(int fd, short what, void *arg)
{
	struct conn	*c = arg;
	socklen_t	 len = sizeof(int);
	int		 error = 0;

	event_free(c->c_dial.cd_ev);
	c->c_dial.cd_ev = NULL;
	if (what & EV_TIMEOUT)
		error = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == -1)
		error = errno;
	if (error != 0) {
		close(c->c_upfd);
		c->c_upfd = -1;
		c->c_dial.cd_error = error;
		conn_dial_next(c);
		return;
	}
	conn_connect_bev(c);
	c->c_ops->co_connected(c);
}

/* Tries the next checked address; when none is left, fails. */
void
conn_dial_next(struct conn *c)
{
	struct sockaddr_storage	 ss;
	struct conn_dial	*d = &c->c_dial;
	struct timeval		 tv = { c->c_proxy->px_connect_secs, 0 };
	const struct addr	*a;
	socklen_t		 len;
	char			 text[ADDR_STRLEN], *msg;
	int			 fd;

	c->c_state = CS_CONNECTING;
	bufferevent_disable(c->c_bev, EV_READ);
	while (d->cd_next < d->cd_naddrs) {
		a = &d->cd_addrs[d->cd_next++];
		len = conn_connect_sockaddr(a, c->c_port, &ss);
		snprintf(c->c_addrtext, sizeof(c->c_addrtext), "%s",
		    addr_str(a, text, sizeof(text)));
		if ((fd = socket(a->a_family, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0)) == -1) {
			d->cd_error = errno;
			continue;
		}
		endpoint_nodelay(fd);
		if (connect(fd, (struct sockaddr *)&ss, len) == -1 &&
		    errno != EINPROGRESS) {
			d->cd_error = errno;
			close(fd);
			continue;
		}
		c->c_upfd = fd;
		d->cd_upaddr = *a;
		if ((d->cd_ev = event_new(c->c_proxy->px_base, fd,
		    EV_WRITE, conn_connect_done_cb, c)) == NULL ||
		    event_add(d->cd_ev, &tv) == -1)
			fatalx("proxy: cannot watch a connection");
		return;
	}
	xasprintf(&msg, "cannot connect to %s: %s", c->c_addrtext,
	    strerror(d->cd_error));
	if (d->cd_error == ETIMEDOUT)
		conn_fail(c, CONN_TIMEDOUT, msg);
	else if (d->cd_error == ECONNREFUSED)
		conn_fail(c, CONN_REFUSED, msg);
	else
		conn_fail(c, CONN_UNREACHABLE, msg);
	free(msg);
}

/*
 * Refuses a target that is the proxy's own listener a (listen.c): the
 * policy may allow its address, but a connection there is a loop.
 */
static void
conn_connect_refuse_loop(struct conn *c, const struct addr *a)
{
	char	 text[ADDR_STRLEN], *what, *why;

	snprintf(c->c_addrtext, sizeof(c->c_addrtext), "%s",
	    addr_str(a, text, sizeof(text)));
	xasprintf(&why, "its address %s, port %d, is the proxy's own "
	    "listener: a loop", text, c->c_port);
	xasprintf(&what, a->a_family == AF_INET6 &&
	    c->c_dec.d_host.h_kind == HOST_ADDR ? "deny [%s]:%d: %s" :
	    "deny %s:%d: %s", c->c_dec.d_host.h_name, c->c_port, why);
	conn_reason(c, why);
	c->c_dec.d_verdict = VERDICT_DENY;
	conn_refuse(c, CONN_DENIED, what, "the proxy does not connect to "
		    "itself; to reach a service on this machine, name its "
		    "own port, not the proxy's");
	free(what);
	free(why);
}

/*
 * Connects to the checked addresses, unless one is the proxy's own
 * listener; the protocol may have an upstream for them already (HTTP's
 * kept from the last request: co_dial).
 */
static void
conn_connect_addrs(struct conn *c)
{
	struct conn_dial	*d = &c->c_dial;
	size_t			 i;

	for (i = 0; i < d->cd_naddrs; i++)
		if (listen_is_own(c->c_proxy, &d->cd_addrs[i], c->c_port)) {
			conn_connect_refuse_loop(c, &d->cd_addrs[i]);
			return;
		}
	if (c->c_ops->co_dial != NULL && c->c_ops->co_dial(c))
		return;
	conn_up_let_go(c);	/* a kept upstream waits for another */
	conn_dial_next(c);
}

/*
 * Checks each of the n addrs by the policy in force (one special
 * address refuses them all: c is denied, and false returned) and makes
 * them the ones c tries, in order.
 */
bool
conn_dial_check(struct conn *c, const struct addr *addrs, size_t n)
{
	struct conn_dial	*d = &c->c_dial;
	struct addr		 a;
	char			 text[ADDR_STRLEN];
	size_t			 i;

	d->cd_naddrs = d->cd_next = 0;
	for (i = 0; i < n; i++) {
		a = addrs[i];
		addr_unmap(&a);
		if (c->c_dec.d_why != WHY_MODE_HOST &&
		    !policy_match_addr(c->c_policy->pp_policy, &a, &c->c_dec)) {
			snprintf(c->c_addrtext, sizeof(c->c_addrtext), "%s",
			    addr_str(&a, text, sizeof(text)));
			conn_deny(c);
			return false;
		}
		d->cd_addrs[d->cd_naddrs++] = a;
	}
	return true;
}

/*
 * The addresses of the name, or none and why: each is checked before
 * any is tried.
 */
static void
conn_connect_resolved_cb(const struct addr *addrs, size_t n, const char *why,
    void *arg)
{
	struct conn		*c = arg;
	struct conn_dial	*d = &c->c_dial;
	char			*msg;

	d->cd_query = NULL;
	if (n == 0) {
		c->c_proxy->px_stats.ps_dns_failures++;
		xasprintf(&msg, "cannot resolve: %s", why);
		conn_fail(c, CONN_UNREACHABLE, msg);
		free(msg);
		return;
	}
	if (conn_dial_check(c, addrs, n))
		conn_connect_addrs(c);
}

/* Resolves the allowed c_host, or connects to the literal. */
void
conn_dial_connect(struct conn *c)
{
	struct proxy		*px = c->c_proxy;
	struct conn_dial	*d = &c->c_dial;

	if (c->c_dec.d_host.h_kind == HOST_ADDR) {
		d->cd_addrs[0] = c->c_dec.d_host.h_ip;
		d->cd_naddrs = 1;
		conn_connect_addrs(c);
		return;
	}
	c->c_state = CS_RESOLVING;
	bufferevent_disable(c->c_bev, EV_READ);
	d->cd_query = dns_resolve(px->px_dns, c->c_dec.d_host.h_name,
	    conn_connect_resolved_cb, c);
}

/* Reaches an allowed target: by the table's way, if it has one. */
static void
conn_reach(struct conn *c)
{
	if (c->c_table->ct_dial != NULL)
		c->c_table->ct_dial(c);
	else
		conn_dial_connect(c);
}

static void
conn_ask_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	(void)fd;
	(void)what;
	conn_ask_cancel(c);
	conn_deny(c);		/* out of CS_ASKING before any conn_free() */
}

/*
 * Holds a connection no rule allows while the harness is asked (cordon
 * run --ask, or its run through the run channel: watch.c); its answer
 * comes through conn_dial_answer(), or the deadline refuses it.  Returns
 * false when nobody is asked.
 */
static bool
conn_ask(struct conn *c)
{
	struct proxy	*px = c->c_proxy;
	struct egress	 e;
	struct timeval	 tv = { 0, 0 };

	if (px->px_hooks == NULL || px->px_hooks->hk_ask == NULL ||
	    c->c_dec.d_why != WHY_NO_RULE)
		return false;
	conn_egress(c, &e);
	if ((tv.tv_sec = px->px_hooks->hk_ask(c, &e, px->px_hooks_arg)) <= 0)
		return false;
	if (c->c_ask_ev == NULL && (c->c_ask_ev = evtimer_new(px->px_base,
	    conn_ask_timeout_cb, c)) == NULL)
		fatalx("proxy: evtimer_new failed");
	c->c_state = CS_ASKING;
	bufferevent_disable(c->c_bev, EV_READ);
	evtimer_add(c->c_ask_ev, &tv);
	return true;
}

/*
 * The harness's answer for a held connection: allowed (once, or because
 * it added a rule), with why for the log, or refused.
 */
void
conn_dial_answer(struct conn *c, bool allow, const char *why)
{
	if (c->c_state != CS_ASKING)
		return;
	evtimer_del(c->c_ask_ev);
	if (!allow) {
		conn_deny(c);
		return;
	}
	c->c_dec.d_verdict = VERDICT_ALLOW;
	c->c_dec.d_why = WHY_ALLOW_RULE;
	conn_reason(c, why);
	conn_reach(c);
}

/* Refuses c for its identity's limit, named; logs the fix. */
static void
conn_dial_limited(struct conn *c, const char *limit)
{
	const struct pident	*rule = c->c_ident->pp_rule;
	char			*what, *why, *hint, *shown;
	unsigned int		 n;

	n = strcmp(limit, "max_tunnels") == 0 ? rule->id_max_tunnels :
	    rule->id_new_per_second;
	shown = str_escape(c->c_identity, strlen(c->c_identity));
	xasprintf(&why, "identity %s is at its limit %s (%u; %s.limits)",
	    shown, limit, n, rule->id_from);
	xasprintf(&what, "%s:%d: %s", c->c_host, c->c_port, why);
	xasprintf(&hint, "retry later, or raise limits.%s of that rule",
	    limit);
	conn_reason(c, why);
	c->c_limit = limit;
	c->c_dec.d_verdict = VERDICT_DENY;
	log_warnx("proxy: %s: refused %s", c->c_client, what);
	log_warnx("hint: %s", hint);
	conn_refuse(c, CONN_LIMITED, what, hint);
	free(shown);
	free(why);
	free(what);
	free(hint);
}

/*
 * Counts c's new decision against its identity's limits (ident.c):
 * false when it is past one, and then c is refused (429 or a SOCKS5
 * failure) and logged.
 */
static bool
conn_dial_admit(struct conn *c)
{
	const char	*limit;

	if (c->c_ident == NULL)
		return true;
	limit = ident_admit(&c->c_proxy->px_idents, c->c_ident->pp_rule,
	    &c->c_ident_hold);
	if (limit != NULL)
		conn_dial_limited(c, limit);
	return limit == NULL;
}

/*
 * Whether c's refusal, just decided, is let through by its identity's
 * rule's "report": then c_dec says allow and c_warning names the rule
 * that refused.  Not when the run's own rules refuse it: a run's
 * narrowing is its own, whatever the rule.
 */
static bool
conn_dial_report(struct conn *c)
{
	const struct pident	*rule;
	struct decision		 d;
	const struct policy	*run = c->c_narrow.cn_rules;
	char			*what;
	bool			 ok;

	if (c->c_ident == NULL || (rule = c->c_ident->pp_rule) == NULL ||
	    rule->id_action != IDENT_REPORT ||
	    !policy_ident_liftable(&c->c_dec))
		return false;
	if (run != NULL && run->p_allow.pl_set) {
		ok = policy_match_host(run, c->c_host, c->c_hostlen,
		    c->c_port, &d);
		decision_clear(&d);
		if (!ok)
			return false;
	}
	what = decision_describe(&c->c_dec);
	free(c->c_warning);
	xasprintf(&c->c_warning, "report: would be refused (%s); allowed, "
	    "as %s has \"action\": \"report\"", what, rule->id_from);
	free(what);
	c->c_dec.d_verdict = VERDICT_ALLOW;
	c->c_dec.d_rule = NULL;		/* the warning names it */
	c->c_report = true;
	return true;
}

/* Decides on c_host:c_port, then resolves or connects. */
void
conn_dial_decide(struct conn *c)
{
	if (!conn_log_ready(c))
		return;
	if (c->c_no_channel) {
		conn_reason(c, WATCH_MISSING);
		c->c_dec.d_verdict = VERDICT_DENY;
		conn_refuse(c, CONN_UNAVAILABLE, WATCH_MISSING, "wait until "
		    "the run has reopened its channel (it says so on its "
		    "stderr, and to its harness), or start the run again; "
		    "behind a load balancer, balance by source address "
		    "(docs/fleet.md, \"One host, one replica\")");
		return;
	}
	c->c_judged = true;
	if (!conn_dial_admit(c))
		return;
	if (!policy_match_host(c->c_policy->pp_policy, c->c_host, c->c_hostlen,
	    c->c_port, &c->c_dec) && !conn_dial_report(c)) {
		if (!conn_ask(c))
			conn_deny(c);
		return;
	}
	if (c->c_ops->co_allowed != NULL && !c->c_ops->co_allowed(c))
		return;
	conn_reach(c);
}

