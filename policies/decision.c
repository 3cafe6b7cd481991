/*
 * decision.c: what a decision of policy_match.c says to a person: one
 * line for the log and the refusal (decision_describe), the
 * network.allow entry that would allow it (decision_pattern), and how to
 * (decision_hint).  Each text is allocated; decision_clear frees what a
 * decision holds.
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

void
decision_clear(struct decision *d)
{
	free(d->d_cause);
	d->d_cause = NULL;
}

/* The host:port of d as a person writes it ("[::1]:443"; a name alone). */
static void
decision_target(const struct decision *d, char *buf, size_t len)
{
	if (d->d_port == 0)
		snprintf(buf, len, "%s", d->d_host.h_name);
	else if (d->d_host.h_kind == HOST_ADDR &&
	    d->d_host.h_ip.a_family == AF_INET6)
		snprintf(buf, len, "[%s]:%d", d->d_host.h_name, d->d_port);
	else
		snprintf(buf, len, "%s:%d", d->d_host.h_name, d->d_port);
}

/*
 * One line: the verdict, the target, the rule and where it came from.
 * Caller frees.
 */
char *
decision_describe(const struct decision *d)
{
	const char	*verdict = d->d_verdict == VERDICT_ALLOW ?
			    "allow" : "deny";
	char		 target[HOST_NAME_MAX_LEN + 16], *out, *tmp;
	char		 text[ADDR_STRLEN];

	decision_target(d, target, sizeof(target));
	switch (d->d_why) {
	case WHY_BAD_NAME:
		xasprintf(&out, "deny: bad host name: %s", d->d_cause);
		break;
	case WHY_BAD_PORT:
		xasprintf(&out, "deny %s: bad port %d", d->d_host.h_name,
		    d->d_port);
		break;
	case WHY_MODE_NONE:
		xasprintf(&out, "deny %s: network.mode is \"none\" (from %s)",
		    target, d->d_mode_from);
		break;
	case WHY_MODE_HOST:
		xasprintf(&out, "allow %s: network.mode is \"host\", no "
		    "filtering (from %s)", target, d->d_mode_from);
		break;
	case WHY_NO_RULE:
		xasprintf(&out, "deny %s: no network.allow entry matches "
		    "(default deny)", target);
		break;
	case WHY_SPECIAL_ADDR:
		if (d->d_host.h_kind == HOST_NAME && d->d_addr_set)
			xasprintf(&out, "deny %s: its address %s is %s, and "
			    "not in network.allow_cidrs", target,
			    addr_str(&d->d_addr, text, sizeof(text)),
			    d->d_special);
		else
			xasprintf(&out, "deny %s: the address is %s, and not "
			    "in network.allow_cidrs", target, d->d_special);
		break;
	case WHY_DENY_RULE:
	case WHY_ALLOW_RULE:
	default:
		xasprintf(&out, "%s %s: by %s \"%s\" (from %s)", verdict,
		    target, d->d_key, d->d_rule->pi_text, d->d_rule->pi_from);
		if (d->d_cidr != NULL) {
			xasprintf(&tmp, "%s; the address is %s, allowed by "
			    "network.allow_cidrs \"%s\" (from %s)", out,
			    d->d_special, d->d_cidr->pi_text,
			    d->d_cidr->pi_from);
			free(out);
			out = tmp;
		}
		break;
	}
	return out;
}

/* The network.allow pattern naming d's target: the port only if unusual. */
static void
decision_pattern_fill(const struct decision *d, char *buf, size_t len)
{
	bool	 v6 = d->d_host.h_kind == HOST_ADDR &&
		    d->d_host.h_ip.a_family == AF_INET6;

	if (d->d_port == 0 || d->d_port == 80 || d->d_port == 443)
		snprintf(buf, len, "%s%s%s", v6 ? "[" : "", d->d_host.h_name,
		    v6 ? "]" : "");
	else
		decision_target(d, buf, len);
}

/*
 * The network.allow entry that alone would allow what d refused, or NULL
 * when one entry would not (a deny rule, a special address, mode none, a
 * bad name).  Caller frees.
 */
char *
decision_pattern(const struct decision *d)
{
	char	 pattern[HOST_NAME_MAX_LEN + 16];

	if (d->d_verdict == VERDICT_ALLOW || d->d_why != WHY_NO_RULE ||
	    (d->d_host.h_kind == HOST_ADDR &&
	    addr_special(&d->d_host.h_ip) != NULL))
		return NULL;
	decision_pattern_fill(d, pattern, sizeof(pattern));
	return xstrdup(pattern);
}

/*
 * How to allow what d refused, as one line, or NULL when there is no
 * simple way (a bad name) or nothing was refused.  Caller frees.
 */
char *
decision_hint(const struct decision *d)
{
	char	 pattern[HOST_NAME_MAX_LEN + 16], text[HOST_NAME_MAX_LEN + 1];
	char	*out = NULL;
	bool	 v6 = d->d_host.h_kind == HOST_ADDR &&
		    d->d_host.h_ip.a_family == AF_INET6;

	if (d->d_verdict == VERDICT_ALLOW)
		return NULL;
	decision_pattern_fill(d, pattern, sizeof(pattern));
	/*
	 * The host's loopback that no rule names: the key made for it.  One
	 * an allow rule names, refused for its range, keeps the range's fix.
	 */
	if (d->d_port != 0 && d->d_why == WHY_NO_RULE &&
	    host_is_loopback(&d->d_host)) {
		xasprintf(&out, "to reach port %d of the host's own loopback "
		    "(a database, a dev server), add \"localhost:%d\" to "
		    "network.host_ports in your policy (a workspace policy "
		    "may not)", d->d_port, d->d_port);
		return out;
	}

	switch (d->d_why) {
	case WHY_NO_RULE:
		if (d->d_host.h_kind == HOST_ADDR &&
		    addr_special(&d->d_host.h_ip) != NULL)
			xasprintf(&out, "add \"%s\" to network.allow and "
			    "\"%s/%d\" to network.allow_cidrs, or pass "
			    "--allow-domain %s --allow-cidr %s/%d", pattern,
			    d->d_host.h_name, v6 ? 128 : 32, pattern,
			    d->d_host.h_name, v6 ? 128 : 32);
		else
			xasprintf(&out, "add \"%s\" to network.allow, or pass "
			    "--allow-domain %s", pattern, pattern);
		break;
	case WHY_DENY_RULE:
		xasprintf(&out, "\"%s\" is refused on purpose by %s; remove "
		    "it there if that is wrong", d->d_rule->pi_text,
		    d->d_rule->pi_from);
		break;
	case WHY_SPECIAL_ADDR:
		/* The address judged: the literal, or what the name gave. */
		if (d->d_addr_set) {
			addr_str(&d->d_addr, text, sizeof(text));
			v6 = d->d_addr.a_family == AF_INET6;
		} else
			snprintf(text, sizeof(text), "%s", d->d_host.h_name);
		xasprintf(&out, "to reach it on purpose, add \"%s/%d\" to "
		    "network.allow_cidrs, or pass --allow-cidr %s/%d", text,
		    v6 ? 128 : 32, text, v6 ? 128 : 32);
		break;
	case WHY_MODE_NONE:
		xasprintf(&out, "network.mode \"none\" refuses every "
		    "connection; change it to \"proxy\" where it is set (%s)",
		    d->d_mode_from);
		break;
	case WHY_BAD_NAME:
		xasprintf(&out, "no rule can allow a malformed name: it is "
		    "refused before any rule or lookup");
		break;
	default:
		break;
	}
	return out;
}
