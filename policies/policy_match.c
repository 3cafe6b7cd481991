/*
 * policy_match.c: pure decisions on a merged policy.
 *
 * The proxy decides on the name and port first (policy_match_host),
 * before any lookup, so that a refused name never reaches a resolver;
 * then on each address it would connect to (policy_match_addr).  Deny
 * beats allow; no match is a refusal.  Nothing here allocates but a bad
 * name's d_cause; what a decision says to a person is decision.c's.
 */
#include <sys/socket.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/addr.h"
#include "lib/host.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"

/*
 * Says whether a rule's port admits port; deny rules without one admit
 * all.  Port 0 is a name's lookup, on no port yet: an allow rule admits it
 * on any port, a deny rule only when it refuses every port.
 */
static bool
port_matches(int rule, int port, bool deny)
{
	if (rule == PORT_ANY)
		return true;
	if (port == 0)
		return !deny || rule == PORT_UNSET;
	if (rule == PORT_UNSET)
		return deny || port == 80 || port == 443;
	return rule == port;
}

/*
 * Whether a name or *.suffix pattern admits name (canonical), whatever
 * its port; an address pattern admits no name.
 */
bool
policy_match_admits_name(const struct pitem *it, const char *name)
{
	switch (it->pi_kind) {
	case PAT_NAME:
		return strcmp(it->pi_host, name) == 0;
	case PAT_SUFFIX:
		return host_in_suffix(name, it->pi_host);
	default:
		return false;
	}
}

static bool
host_matches(const struct pitem *it, const struct host *h)
{
	if (it->pi_kind == PAT_ADDR)
		return h->h_kind == HOST_ADDR &&
		    addr_equal(&it->pi_addr, &h->h_ip);
	return h->h_kind == HOST_NAME &&
	    policy_match_admits_name(it, h->h_name);
}

/*
 * Returns the entry of pl that matches h and port, preferring an exact
 * name to a suffix and a longer suffix to a shorter one, so explain names
 * the rule a reader would expect; NULL when none does.
 */
static const struct pitem *
policy_plist_match(const struct plist *pl, const struct host *h, int port, bool deny)
{
	const struct pitem	*it, *best = NULL;
	size_t			 i;

	for (i = 0; i < pl->pl_n; i++) {
		it = &pl->pl_v[i];
		if (!host_matches(it, h) || !port_matches(it->pi_port, port,
		    deny))
			continue;
		if (it->pi_kind != PAT_SUFFIX)
			return it;
		if (best == NULL || strlen(it->pi_host) > strlen(best->pi_host))
			best = it;
	}
	return best;
}

/* The network.host_ports entry that opens port of the host, or NULL. */
static const struct pitem *
host_port_match(const struct policy *p, int port)
{
	size_t	 i;

	for (i = 0; i < p->p_host_ports.pl_n; i++)
		if (port >= p->p_host_ports.pl_v[i].pi_port &&
		    port <= p->p_host_ports.pl_v[i].pi_port_hi)
			return &p->p_host_ports.pl_v[i];
	return NULL;
}

/* policy_match_host(), and a name alone (port 0) for policy_match_name(). */
static bool
decide(const struct policy *p, const char *host, size_t len, int port,
    bool name, struct decision *d)
{
	const struct pitem	*it;
	char			*cause, *shown;

	memset(d, 0, sizeof(*d));
	d->d_verdict = VERDICT_DENY;
	d->d_port = port;

	if (host_parse(host, len, &d->d_host, &cause) == -1) {
		shown = str_escape(host, len);
		xasprintf(&d->d_cause, "\"%s\": %s", shown, cause);
		free(shown);
		free(cause);
		d->d_why = WHY_BAD_NAME;
		return false;
	}
	if ((name ? port != 0 : port < 1) || port > 65535) {
		d->d_why = WHY_BAD_PORT;
		return false;
	}
	d->d_mode_from = p->p_mode.ps_from;
	if (p->p_mode.ps_set && p->p_mode.ps_value == NET_NONE) {
		d->d_why = WHY_MODE_NONE;
		return false;
	}
	if (p->p_mode.ps_set && p->p_mode.ps_value == NET_HOST) {
		d->d_why = WHY_MODE_HOST;
		d->d_verdict = VERDICT_ALLOW;
		return true;
	}
	if ((it = policy_plist_match(&p->p_deny, &d->d_host, port, true)) != NULL) {
		d->d_why = WHY_DENY_RULE;
		d->d_rule = it;
		d->d_key = "network.deny";
		return false;
	}
	/* The host's loopback, on a port the policy opened. */
	if (port != 0 && host_is_loopback(&d->d_host) &&
	    (it = host_port_match(p, port)) != NULL) {
		d->d_why = WHY_ALLOW_RULE;
		d->d_rule = it;
		d->d_key = "network.host_ports";
		d->d_host_port = true;
		d->d_verdict = VERDICT_ALLOW;
		return true;
	}
	if ((it = policy_plist_match(&p->p_allow, &d->d_host, port, false)) == NULL) {
		d->d_why = WHY_NO_RULE;
		return false;
	}
	d->d_why = WHY_ALLOW_RULE;
	d->d_rule = it;
	d->d_key = "network.allow";
	d->d_verdict = VERDICT_ALLOW;
	if (d->d_host.h_kind == HOST_ADDR)
		return policy_match_addr(p, &d->d_host.h_ip, d);
	return true;
}

/*
 * Decides on len bytes of host (which may hold anything a client sent)
 * and port, before any lookup.  Fills d (decision_clear frees it) and
 * returns whether the connection may go on.  For an IP literal the
 * address check (policy_match_addr) is part of the decision.
 */
bool
policy_match_host(const struct policy *p, const char *host, size_t len,
    int port, struct decision *d)
{
	return decide(p, host, len, port, false, d);
}

/*
 * Decides on a name alone, as the sandbox's resolver asks before any
 * connection: allowed when an allow rule admits it on some port and no
 * deny rule refuses it on every port.  d_port is 0, and d says the name
 * without a port.
 */
bool
policy_match_name(const struct policy *p, const char *host, size_t len,
    struct decision *d)
{
	return decide(p, host, len, 0, true, d);
}

/*
 * Decides on one address an allowed name resolved to (or a literal): a
 * network.deny literal refuses it; a special range (loopback, private,
 * link-local, ...) is refused unless an allow_cidrs entry covers it.
 * Updates d only when the address is refused (or sets d_cidr when it
 * needed allow_cidrs), so the name's rule stays in d.
 */
bool
policy_match_addr(const struct policy *p, const struct addr *a,
    struct decision *d)
{
	struct addr	 u = *a;
	size_t		 i;

	addr_unmap(&u);
	d->d_addr = u;
	d->d_addr_set = true;
	for (i = 0; i < p->p_deny.pl_n; i++) {
		const struct pitem	*it = &p->p_deny.pl_v[i];

		if (it->pi_kind == PAT_ADDR && addr_equal(&it->pi_addr, &u) &&
		    port_matches(it->pi_port, d->d_port, true)) {
			d->d_verdict = VERDICT_DENY;
			d->d_why = WHY_DENY_RULE;
			d->d_rule = it;
			d->d_key = "network.deny";
			return false;
		}
	}
	if ((d->d_special = addr_special(a)) == NULL)
		return d->d_verdict == VERDICT_ALLOW;
	/* A network.host_ports connection goes to the loopback, only. */
	if (d->d_host_port) {
		struct host	 h = { .h_kind = HOST_ADDR, .h_ip = u };

		if (host_is_loopback(&h))
			return d->d_verdict == VERDICT_ALLOW;
	}
	for (i = 0; i < p->p_cidrs.pl_n; i++) {
		if (addr_cidr_contains(&p->p_cidrs.pl_v[i].pi_cidr, &u)) {
			d->d_cidr = &p->p_cidrs.pl_v[i];
			return d->d_verdict == VERDICT_ALLOW;
		}
	}
	d->d_verdict = VERDICT_DENY;
	d->d_why = WHY_SPECIAL_ADDR;
	d->d_rule = NULL;
	d->d_key = NULL;
	return false;
}

/* The ports both rules admit, as a rule port; false if none (allow lists). */
static bool
port_intersect(int a, int b, int *out)
{
	if (a == PORT_ANY || a == b) {
		*out = b;
		return true;
	}
	if (b == PORT_ANY) {
		*out = a;
		return true;
	}
	if (a == PORT_UNSET && (b == 80 || b == 443)) {
		*out = b;
		return true;
	}
	if (b == PORT_UNSET && (a == 80 || a == 443)) {
		*out = a;
		return true;
	}
	return false;
}

/*
 * The allow rule that admits exactly what both a and b admit, when it is
 * not empty; out gets a fresh item (policy_pitem_clear frees it) whose origin
 * names both.  Returns whether the intersection is non-empty.
 */
/*
 * Says whether a network.inspect path rule admits the request path:
 * "/a/b" admits "/a/b" only; "/a/" then '*' admits "/a/" and everything
 * that starts with it, not "/a".  Byte for byte, case-sensitive, on the path
 * without its query, once the proxy has decoded and normalised it.
 */
bool
policy_match_path(const char *rule, const char *path)
{
	size_t	 n = strlen(rule);

	if (n > 0 && rule[n - 1] == '*')
		return strncmp(rule, path, n - 1) == 0;
	return strcmp(rule, path) == 0;
}

bool
policy_match_intersect(const struct pitem *a, const struct pitem *b,
    struct pitem *out)
{
	const struct pitem	*narrow;
	char			*text, *cause, *host;
	int			 port;
	bool			 v6;

	if (!port_intersect(a->pi_port, b->pi_port, &port))
		return false;
	if (a->pi_kind == PAT_ADDR || b->pi_kind == PAT_ADDR) {
		if (a->pi_kind != b->pi_kind ||
		    !addr_equal(&a->pi_addr, &b->pi_addr))
			return false;
		narrow = a;
	} else if (a->pi_kind == PAT_NAME && b->pi_kind == PAT_NAME) {
		if (strcmp(a->pi_host, b->pi_host) != 0)
			return false;
		narrow = a;
	} else if (a->pi_kind == PAT_NAME) {
		if (!host_in_suffix(a->pi_host, b->pi_host))
			return false;
		narrow = a;
	} else if (b->pi_kind == PAT_NAME) {
		if (!host_in_suffix(b->pi_host, a->pi_host))
			return false;
		narrow = b;
	} else if (strcmp(a->pi_host, b->pi_host) == 0 ||
	    host_in_suffix(a->pi_host, b->pi_host))
		narrow = a;
	else if (host_in_suffix(b->pi_host, a->pi_host))
		narrow = b;
	else
		return false;

	v6 = narrow->pi_kind == PAT_ADDR &&
	    narrow->pi_addr.a_family == AF_INET6;
	xasprintf(&host, "%s%s%s%s", narrow->pi_kind == PAT_SUFFIX ? "*." : "",
	    v6 ? "[" : "", narrow->pi_host, v6 ? "]" : "");
	if (port == PORT_UNSET)
		text = xstrdup(host);
	else if (port == PORT_ANY)
		xasprintf(&text, "%s:*", host);
	else
		xasprintf(&text, "%s:%d", host, port);
	free(host);

	memset(out, 0, sizeof(*out));
	if (policy_parse_pattern(text, out, &cause) == -1)
		abort();	/* made from two valid patterns */
	free(text);
	xasprintf(&out->pi_from, "%s, narrowed by %s", a->pi_from, b->pi_from);
	return true;
}

/*
 * The network.inspect entry for host (a canonical name): an exact name
 * before the longest *.suffix; NULL when the host is not inspected.
 */
const struct pinspect *
policy_match_inspect(const struct policy *p, const char *host)
{
	const struct pinspect	*in, *best = NULL;
	size_t			 i;

	for (i = 0; i < p->p_ninspect; i++) {
		in = &p->p_inspect[i];
		if (!policy_match_admits_name(&in->in_host, host))
			continue;
		if (in->in_host.pi_kind == PAT_NAME)
			return in;	/* an exact name wins */
		if (best == NULL || strlen(in->in_host.pi_host) >
		    strlen(best->in_host.pi_host))
			best = in;
	}
	return best;
}
