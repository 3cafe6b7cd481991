/*
 * tally.c: what the run's proxy decided, counted as it happens, for
 * the summary on stderr at exit and for --report, one JSON document a
 * harness reads instead of scraping text.  The document's fields are
 * documented, with its version, in docs/agents.md.
 *
 * Runs in: cordon run on the host, on its event loop and at the end.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "guard/guard.h"
#include "lib/jsonl.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "runner/runner.h"
#include "runner/tally.h"

#define TALLY_SHOWN	10	/* targets listed in the summary */

/* A refused target, counted, with its fix. */
struct refusal {
	char		*rf_host;	/* escaped: any byte may come */
	int		 rf_port;
	char		*rf_proto;
	char		*rf_reason;
	char		*rf_rule;	/* the deny rule, if one */
	char		*rf_rule_from;
	char		*rf_hint;	/* the fix in words, or NULL */
	char		*rf_pattern;	/* the network.allow entry, or NULL */
	size_t		 rf_count;
};

/* An allowed host: its connections and bytes. */
struct allowed {
	char		*al_host;
	size_t		 al_count;
	uint64_t	 al_up;
	uint64_t	 al_down;
};

struct tally {
	struct refusal	*t_refused;
	size_t		 t_nrefused;
	size_t		 t_refused_total;
	size_t		 t_refused_names;	/* of them, lookups */
	struct allowed	*t_allowed;
	size_t		 t_nallowed;
	struct netcap_drops t_drops;		/* what the capture dropped */
	bool		 t_has_drops;		/* ... read at the end */
	json_t		*t_scratch;		/* scratch_list's, or NULL */
	json_t		*t_private;		/* left in /tmp, or NULL */
	const char *const *t_hidden;		/* tools' token files hidden */
	size_t		 t_nhidden;
	json_t		*t_tokens;		/* run_secrets_json(), owned */
	bool		 t_session;		/* a session's summary */
};

struct tally *
tally_new(void)
{
	return xcalloc(1, sizeof(struct tally));
}

static char *
dup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

/*
 * Counts one decision of the proxy (an observer's call).  Returns
 * whether it is a refusal of a target not refused before.
 */
bool
tally_add(struct tally *t, const struct egress *e, const char *hint,
    const char *pattern)
{
	struct refusal	*rf;
	struct allowed	*al;
	char		*host;
	size_t		 i;

	host = str_escape(e->e_host != NULL ? e->e_host : "",
	    e->e_host != NULL ? e->e_hostlen : 0);
	if (e->e_allow) {
		for (i = 0; i < t->t_nallowed; i++)
			if (strcmp(t->t_allowed[i].al_host, host) == 0)
				break;
		if (i == t->t_nallowed) {
			t->t_allowed = xreallocarray(t->t_allowed,
			    t->t_nallowed + 1, sizeof(*t->t_allowed));
			al = &t->t_allowed[t->t_nallowed++];
			memset(al, 0, sizeof(*al));
			al->al_host = host;
		} else {
			al = &t->t_allowed[i];
			free(host);
		}
		al->al_count++;
		al->al_up += e->e_up;
		al->al_down += e->e_down;
		return false;
	}
	t->t_refused_total++;
	if (e->e_port == 0 && (e->e_proto == NULL ||
	    strcmp(e->e_proto, "unix") != 0))
		t->t_refused_names++;
	for (i = 0; i < t->t_nrefused; i++) {
		rf = &t->t_refused[i];
		if (rf->rf_port == e->e_port && strcmp(rf->rf_host, host) ==
		    0) {
			rf->rf_count++;
			free(host);
			return false;
		}
	}
	t->t_refused = xreallocarray(t->t_refused, t->t_nrefused + 1,
	    sizeof(*t->t_refused));
	rf = &t->t_refused[t->t_nrefused++];
	rf->rf_host = host;
	rf->rf_port = e->e_port;
	rf->rf_proto = xstrdup(e->e_proto != NULL ? e->e_proto : "");
	rf->rf_reason = xstrdup(e->e_reason != NULL ? e->e_reason :
	    "refused");
	rf->rf_rule = dup_or_null(e->e_rule);
	rf->rf_rule_from = dup_or_null(e->e_rule_from);
	rf->rf_hint = dup_or_null(hint);
	rf->rf_pattern = dup_or_null(pattern);
	rf->rf_count = 1;
	return true;
}

/*
 * What PID 1 said at the command's end: "dropped", the capture's
 * counters; "scratch", what the scratch layer held (scratch_list).
 */
void
tally_end(struct tally *t, json_t *doc)
{
	json_t		*s;
	json_int_t	 q = 0, u = 0, o = 0;

	if (json_unpack(doc, "{s:{s:I, s:I, s:I}}", "dropped", "quic", &q,
	    "udp", &u, "other", &o) == 0) {
		t->t_drops.nd_quic = (uint64_t)q;
		t->t_drops.nd_udp = (uint64_t)u;
		t->t_drops.nd_other = (uint64_t)o;
		t->t_has_drops = true;
	}
	if ((s = json_object_get(doc, "scratch")) != NULL &&
	    json_is_array(json_object_get(s, "written")))
		t->t_scratch = json_incref(s);
	if ((s = json_object_get(doc, "private_tmp")) != NULL &&
	    json_is_integer(json_object_get(s, "files")))
		t->t_private = json_incref(s);
}

/*
 * One line, and its hint, for what the command left in the run's own
 * /tmp and /var/tmp: a later run does not find it there.
 */
static void
tally_private_line(const struct tally *t, FILE *f)
{
	json_int_t	 files = 0, bytes = 0;

	if (t->t_private == NULL || json_unpack(t->t_private, "{s:I, s:I}",
	    "files", &files, "bytes", &bytes) != 0 || files == 0)
		return;
	fprintf(f, "cordon: the %s left %lld file%s (%lld bytes) in /tmp "
	    "and /var/tmp, which are this %s own and went with it: a "
	    "later %s does not see them\ncordon: hint: write what a later "
	    "%s needs into the workspace, or a folder --write names\n",
	    t->t_session ? "session's commands" : "command", (long long)files,
	    files == 1 ? "" : "s", (long long)bytes, t->t_session ?
	    "session's" : "run's", t->t_session ? "session" : "run",
	    t->t_session ? "session" : "command");
}

/* The summary is a session's, at its stop: said so. */
void
tally_session(struct tally *t)
{
	t->t_session = true;
}

/*
 * One line for what the capture dropped, if anything: what, and why no
 * setting allows it.
 */
static void
tally_drops_line(const struct tally *t, FILE *f)
{
	const struct netcap_drops	*d = &t->t_drops;
	const char			*sep = "";

	if (d->nd_quic + d->nd_udp + d->nd_other == 0)
		return;
	fprintf(f, "cordon: refused");
	if (d->nd_quic > 0) {
		fprintf(f, " %ju QUIC packet%s (UDP to port 443; clients "
		    "fall back to TCP)", (uintmax_t)d->nd_quic,
		    d->nd_quic == 1 ? "" : "s");
		sep = ",";
	}
	if (d->nd_udp > 0) {
		fprintf(f, "%s %ju UDP datagram%s", sep, (uintmax_t)d->nd_udp,
		    d->nd_udp == 1 ? "" : "s");
		sep = ",";
	}
	if (d->nd_other > 0)
		fprintf(f, "%s %ju other packet%s (ICMP, raw)", sep,
		    (uintmax_t)d->nd_other, d->nd_other == 1 ? "" : "s");
	fprintf(f, ": only TCP connections and DNS lookups leave the "
	    "sandbox, through the proxy; no setting allows more\n");
}

/*
 * The tools' configuration files that exist on the host and that the
 * sandbox hides, as they may hold tokens ("~/.npmrc (npm)"): said once,
 * so that a tool that runs without its settings does not do so silently.
 */
void
tally_hidden(struct tally *t, const char *const *v, size_t n)
{
	t->t_hidden = v;
	t->t_nhidden = n;
}

static void
tally_hidden_line(const struct tally *t, FILE *f)
{
	size_t	 i;

	if (t->t_nhidden == 0)
		return;
	fprintf(f, "cordon: hidden from the command, as they may hold "
	    "tokens:");
	for (i = 0; i < t->t_nhidden; i++)
		fprintf(f, "%s %s", i == 0 ? "" : ",", t->t_hidden[i]);
	fprintf(f, "; a tool that reads its token there runs without it: give "
	    "the token as a credentials entry of your policy (cordon-policy(5)"
	    ", credentials), which the proxy fills in for that host alone\n");
}

/*
 * Takes tokens (run_secrets_json(), may be NULL) for the summary and
 * report.
 */
void
tally_tokens(struct tally *t, json_t *tokens)
{
	json_decref(t->t_tokens);
	t->t_tokens = tokens;
}

/*
 * The token files the command got as copies: whose tokens the proxy fills
 * in, whose it cannot (no CA, or no proxy of the run's own), and what a
 * copy left out.  Said once, so that no tool loses its token silently.
 */
static void
tally_tokens_lines(const struct tally *t, FILE *f)
{
	json_t		*e, *v;
	size_t		 i, j, n;
	const char	*sep;
	int		 filled;

	for (filled = 1; filled >= 0; filled--) {
		n = 0;
		json_array_foreach(t->t_tokens, i, e) {
			if (json_array_size(json_object_get(e, "hosts")) == 0 ||
			    json_is_true(json_object_get(e, "filled")) !=
			    filled)
				continue;
			fprintf(f, "%s %s (%s: ", n++ == 0 ? filled ?
			    "cordon: given to the command with placeholders for "
			    "their tokens, which the proxy fills in for each "
			    "token's host alone, over TLS it inspects:" :
			    "cordon: given to the command with placeholders for "
			    "their tokens, which nothing fills in (the proxy "
			    "needs cordon's CA to inspect TLS: run `cordon ca "
			    "init`):" : ",", json_string_value(json_object_get(e,
			    "file")), json_string_value(json_object_get(e,
			    "tool")));
			sep = "";
			json_array_foreach(json_object_get(e, "hosts"), j, v) {
				fprintf(f, "%s%s", sep, json_string_value(v));
				sep = ", ";
			}
			fprintf(f, ")");
		}
		if (n > 0)
			fprintf(f, "\n");
	}
	json_array_foreach(t->t_tokens, i, e)
		json_array_foreach(json_object_get(e, "left"), j, v)
			fprintf(f, "cordon: left out of %s: %s\n",
			    json_string_value(json_object_get(e, "file")),
			    json_string_value(v));
}

/* n bytes in a few characters: "512 B", "12.0 kB", "48.2 MB". */
static void
tally_bytes(uint64_t n, char *buf, size_t len)
{
	static const char *const unit[] = { "kB", "MB", "GB", "TB" };
	double		 v = (double)n;
	size_t		 i;

	if (n < 1000) {
		snprintf(buf, len, "%ju B", (uintmax_t)n);
		return;
	}
	for (i = 0, v /= 1000; v >= 1000 && i + 1 < nitems(unit); i++)
		v /= 1000;
	snprintf(buf, len, "%.1f %s", v, unit[i]);
}

/*
 * The paths of the scratch layer marked flag ("hooks", "point") on one
 * line after head, then hint; nothing when there are none.
 */
static void
tally_marked(const struct tally *t, FILE *f, const char *flag,
    const char *head, const char *hint)
{
	json_t		*a = json_object_get(t->t_scratch, "written"), *e;
	const char	*path;
	size_t		 i, n = 0;

	json_array_foreach(a, i, e) {
		if (!json_is_true(json_object_get(e, flag)) ||
		    json_unpack(e, "{s:s}", "path", &path) == -1)
			continue;
		fprintf(f, "%s %s", n++ == 0 ? head : ",", path);
	}
	if (n > 0)
		fprintf(f, "\ncordon: hint: %s\n", hint);
}

/*
 * The git hooks the command wrote (a scratch layer over each protected
 * hooks folder, mount.c): never kept, and said, with the way to have
 * them on the host; even under --quiet, since the command was told the
 * write worked.
 */
void
tally_hooks(const struct tally *t, FILE *f)
{
	tally_marked(t, f, "hooks", "cordon: git hooks the command wrote "
	    "were not kept, since git on the host would run them:", "to "
	    "apply them, run what wrote them (pre-commit install, a "
	    "package's install script) again on the host, if you trust it");
}

/*
 * The persistence points (~/.bashrc, ~/.config/autostart...) the
 * command changed in the home's scratch layer: named apart, since what
 * the command meant to do there is one thing never to carry over
 * unread.
 */
static void
tally_points_lines(const struct tally *t, FILE *f)
{
	tally_marked(t, f, "point", "cordon: the command changed files your "
	    "shell, session or git run, in the scratch layer only (never the "
	    "host's):", "to apply such a change, make it on the host "
	    "yourself, once you know what it does; cordon never keeps one "
	    "(--keep refuses them)");
}

/*
 * npm ends a failure with "A complete log of this run can be found in
 * ~/.npm/_logs/...": a path in the scratch layer, gone when the run is.
 */
static void
tally_npm_logs_line(json_t *a, FILE *f)
{
	json_t		*e;
	const char	*path;
	size_t		 i;

	json_array_foreach(a, i, e) {
		if (json_unpack(e, "{s:s}", "path", &path) == -1 ||
		    strcmp(path, "~/.npm") != 0 ||
		    !json_is_true(json_object_get(e, "logs")))
			continue;
		fprintf(f, "cordon: npm's logs (~/.npm/_logs, where npm says "
		    "\"A complete log of this run can be found\") went with "
		    "the scratch layer; to keep them: pass --keep ~/.npm, or "
		    "set npm_config_logs_dir to a folder in the workspace\n");
		break;
	}
}

/*
 * What the scratch layer held, biggest first, and how to keep the
 * biggest that may be kept ("keep", run_end.c): nothing written there is
 * lost silently.
 */
static void
tally_scratch_lines(const struct tally *t, FILE *f)
{
	json_t		*a = json_object_get(t->t_scratch, "written"), *e;
	const char	*path;
	json_int_t	 files, bytes, removed;
	size_t		 i, n = 0, shown = 0;
	char		 size[32];

	tally_points_lines(t, f);
	json_array_foreach(a, i, e)
		n += !json_is_true(json_object_get(e, "hooks")) &&
		    !json_is_true(json_object_get(e, "point"));
	if (n == 0)
		return;
	fprintf(f, "cordon: written outside the writable roots, into the "
	    "scratch layer (discarded at exit):");
	json_array_foreach(a, i, e) {
		if (shown == TALLY_SHOWN)
			break;
		if (json_is_true(json_object_get(e, "hooks")) ||
		    json_is_true(json_object_get(e, "point")) ||
		    json_unpack(e, "{s:s, s:I, s:I, s:I}", "path", &path,
		    "files", &files, "bytes", &bytes, "removed", &removed) ==
		    -1)
			continue;
		tally_bytes((uint64_t)bytes, size, sizeof(size));
		fprintf(f, "%s %s (%jd file%s, %s", shown++ == 0 ? "" : ",",
		    path, (intmax_t)files, files == 1 ? "" : "s", size);
		if (removed > 0)
			fprintf(f, ", %jd removed", (intmax_t)removed);
		fprintf(f, ")");
	}
	if (n > TALLY_SHOWN)
		fprintf(f, ", and %zu more", n - TALLY_SHOWN);
	if (json_is_true(json_object_get(t->t_scratch, "partial")))
		fprintf(f, ", and more not counted");
	fprintf(f, "\n");
	json_array_foreach(a, i, e) {
		/* Never a persistence point, nor what holds one (keepdir.c). */
		if (!json_is_true(json_object_get(e, "keep")) ||
		    json_unpack(e, "{s:s}", "path", &path) == -1 ||
		    strncmp(path, "~/", 2) != 0)
			continue;
		fprintf(f, "cordon: to keep %s between runs: pass --keep %s "
		    "(cordon's own copy; the host's %s stays as it is)\n",
		    path, path, path);
		break;
	}
	tally_npm_logs_line(a, f);
}

/* The target of rf as the summary says it: "host:port", a name alone. */
static void
tally_target(const struct refusal *rf, char *buf, size_t len)
{
	if (rf->rf_port == 0)
		snprintf(buf, len, "%s", rf->rf_host);
	else
		snprintf(buf, len, "%s:%d", rf->rf_host, rf->rf_port);
}

/*
 * At exit: what the run left and held back, and what was refused.  A
 * name the sandbox's resolver asked about has no port.
 */
void
tally_summary(const struct tally *t, FILE *f)
{
	tally_hidden_line(t, f);
	tally_tokens_lines(t, f);
	if (t->t_scratch != NULL)
		tally_scratch_lines(t, f);
	if (t->t_has_drops)
		tally_drops_line(t, f);
	tally_private_line(t, f);
	tally_refusals(t, f);
}

/*
 * What was refused, and the one change that would allow each: the
 * summary's lines, also told at a session command's end.
 */
void
tally_refusals(const struct tally *t, FILE *f)
{
	const struct refusal	*rf;
	size_t			 i, names, conns;
	char			 target[1100];

	if (t->t_refused_total == 0)
		return;
	names = t->t_refused_names;
	conns = t->t_refused_total - names;
	fprintf(f, "cordon: refused");
	if (names > 0)
		fprintf(f, " %zu name%s%s", names, names == 1 ? "" : "s",
		    conns > 0 ? " and" : "");
	if (conns > 0)
		fprintf(f, " %zu connection%s", conns, conns == 1 ? "" : "s");
	fprintf(f, ":");
	for (i = 0; i < t->t_nrefused && i < TALLY_SHOWN; i++) {
		rf = &t->t_refused[i];
		tally_target(rf, target, sizeof(target));
		fprintf(f, "%s %s (%s)", i == 0 ? "" : ",", target,
		    rf->rf_reason);
		if (rf->rf_count > 1)
			fprintf(f, " x%zu", rf->rf_count);
	}
	if (t->t_nrefused > TALLY_SHOWN)
		fprintf(f, ", and %zu more", t->t_nrefused - TALLY_SHOWN);
	fprintf(f, "\n");
	for (i = 0; i < t->t_nrefused && i < TALLY_SHOWN; i++) {
		rf = &t->t_refused[i];
		tally_target(rf, target, sizeof(target));
		if (rf->rf_hint != NULL)
			fprintf(f, "cordon: to allow %s: %s\n", target,
			    rf->rf_hint);
	}
}

/*
 * One refusal as it happens (a run's live line): the target, the
 * reason, and the fix on a hint line.
 */
void
tally_line(const struct egress *e, const char *hint, FILE *f)
{
	char	*host;

	host = str_escape(e->e_host != NULL ? e->e_host : "",
	    e->e_host != NULL ? e->e_hostlen : 0);
	if (e->e_port == 0)
		fprintf(f, "cordon: refused %s (%s)\n", host,
		    e->e_reason != NULL ? e->e_reason : "refused");
	else
		fprintf(f, "cordon: refused %s:%d (%s)\n", host, e->e_port,
		    e->e_reason != NULL ? e->e_reason : "refused");
	if (hint != NULL)
		fprintf(f, "cordon: hint: %s\n", hint);
	fflush(f);
	free(host);
}

static json_t *
str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

/*
 * What the check after the run found: each repository the command made
 * or changed that could run a program, why and where it went; each one
 * kept as inert; each folder it could not read (held); and whether the
 * check saw everything.
 */
static json_t *
report_guard(const struct guard *g)
{
	const struct guard_find	*gf;
	json_t			*a, *k, *h;
	size_t			 i;

	a = json_array();
	k = json_array();
	h = json_array();
	for (i = 0; i < g->g_nfinds; i++) {
		gf = &g->g_finds[i];
		if (gf->gf_held) {
			json_array_append_new(h, json_pack("{s:s, s:s}",
			    "path", gf->gf_path, "why", gf->gf_why));
			continue;
		}
		if (gf->gf_kept) {
			json_array_append_new(k, json_pack("{s:s, s:s, s:o}",
			    "path", gf->gf_path, "what", gf->gf_what, "remotes",
			    gf->gf_why != NULL ? json_string(gf->gf_why) :
			    json_null()));
			continue;
		}
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:o, s:I, "
		    "s:I, s:o}", "path", gf->gf_path, "what", gf->gf_what,
		    "why", gf->gf_why, "moved_to", gf->gf_error == 0 ?
		    json_string(gf->gf_moved) : json_null(), "heads_renamed",
		    (json_int_t)gf->gf_heads, "heads_not_renamed",
		    (json_int_t)gf->gf_heads_left, "error", gf->gf_error != 0 ?
		    json_string(strerror(gf->gf_error)) : json_null()));
	}
	return json_pack("{s:b, s:o, s:o, s:o}", "checked_all",
	    g->g_scanned <= g->g_scan_max && json_array_size(h) == 0,
	    "quarantined", a, "kept", k, "held", h);
}

/* The refused targets, each with its rule, its fix and its count. */
static json_t *
tally_refused_json(const struct tally *t)
{
	const struct refusal	*rf;
	json_t			*a;
	size_t			 i;

	a = json_array();
	for (i = 0; i < t->t_nrefused; i++) {
		rf = &t->t_refused[i];
		json_array_append_new(a, json_pack("{s:s, s:i, s:s, s:s, s:o, "
		    "s:o, s:o, s:o, s:I}",
		    "host", rf->rf_host, "port", rf->rf_port,
		    "protocol", rf->rf_proto, "reason", rf->rf_reason,
		    "rule", str_or_null(rf->rf_rule),
		    "rule_from", str_or_null(rf->rf_rule_from),
		    "fix", str_or_null(rf->rf_hint),
		    "allow", str_or_null(rf->rf_pattern),
		    "count", (json_int_t)rf->rf_count));
	}
	return a;
}

/* The allowed hosts, each with its connections and bytes. */
static json_t *
tally_allowed_json(const struct tally *t)
{
	const struct allowed	*al;
	json_t			*a;
	size_t			 i;

	a = json_array();
	for (i = 0; i < t->t_nallowed; i++) {
		al = &t->t_allowed[i];
		json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:I}",
		    "host", al->al_host,
		    "connections", (json_int_t)al->al_count,
		    "bytes_up", (json_int_t)al->al_up,
		    "bytes_down", (json_int_t)al->al_down));
	}
	return a;
}

/* How the sandbox was set up: network, layers, namespaces, sockets. */
static json_t *
report_setup(const struct report_info *ri)
{
	const struct run	*run = ri->ri_run;
	json_t			*setup, *ns, *a;
	size_t			 i;
	bool			 listed;

	listed = run->r_sb.sb_view.sv_routes != NULL &&
	    run->r_sb.sb_view.sv_routes->ur_n > 0;
	ns = json_pack("[s, s, s, s, s, s]", "user", "mount", "pid", "ipc",
	    "uts", "cgroup");
	if (run->r_sb.sb_net.sn_mode != NET_HOST)
		json_array_append_new(ns, json_string("network"));
	setup = json_pack("{s:s, s:b, s:o, s:i, s:b, s:s, s:o}",
	    "network", policy_mode_name(run->r_sb.sb_net.sn_mode),
	    "own_proxy", ri->ri_own_proxy,
	    "proxy_socket", str_or_null(ri->ri_proxy_socket),
	    "landlock_abi", landlock_abi(),
	    "seccomp", 1,
	    "unix_sockets", run->r_unix ? "allow" : run->r_unix_mode ==
	    SYSF_UNIX_DENY ? "deny" : listed ? "listed" : "own",
	    "namespaces", ns);
	if (!run->r_unix && listed) {
		a = json_array();
		for (i = 0; i < run->r_sb.sb_view.sv_routes->ur_n; i++)
			json_array_append_new(a, json_string(
			    run->r_sb.sb_view.sv_routes->ur_v[i].ur_inside));
		json_object_set_new(setup, "unix_sockets_listed", a);
	}
	return setup;
}

/* The fields of doc that only some runs have. */
static void
tally_json_more(const struct tally *t, const struct report_info *ri,
    json_t *doc)
{
	json_t	*h;
	size_t	 i;

	if (ri->ri_status > 128 && ri->ri_status < 128 + 65)
		json_object_set_new(doc, "signal",
		    json_integer(ri->ri_status - 128));
	if (ri->ri_error != NULL)
		json_object_set_new(doc, "error", json_string(ri->ri_error));
	if (t->t_scratch != NULL)
		json_object_set(doc, "scratch", t->t_scratch);
	if (t->t_private != NULL)
		json_object_set(doc, "private_tmp", t->t_private);
	if (t->t_tokens != NULL)
		json_object_set(doc, "token_files", t->t_tokens);
	if (t->t_nhidden > 0) {
		h = json_array();
		for (i = 0; i < t->t_nhidden; i++)
			json_array_append_new(h, json_string(t->t_hidden[i]));
		json_object_set_new(doc, "hidden", h);
	}
	if (t->t_has_drops)
		json_object_set_new(doc, "dropped", json_pack("{s:I, s:I, "
		    "s:I}", "quic", (json_int_t)t->t_drops.nd_quic,
		    "udp", (json_int_t)t->t_drops.nd_udp,
		    "other", (json_int_t)t->t_drops.nd_other));
	if (ri->ri_guard != NULL) {
		json_object_set_new(doc, "repositories",
		    report_guard(ri->ri_guard));
		json_object_set_new(doc, "host_config",
		    hostcfg_json(ri->ri_guard));
	}
	if (ri->ri_gitwrite != NULL)
		json_object_set_new(doc, "git_config",
		    gitwrite_json(ri->ri_gitwrite, ri->ri_gitwrite_from));
}

/* The run's report, as a JSON document (report format version 1). */
static json_t *
tally_json(const struct tally *t, const struct report_info *ri)
{
	const struct run	*run = ri->ri_run;
	json_t			*doc, *cmd, *refused, *allowed, *setup;
	size_t			 i;

	cmd = json_array();
	for (i = 0; run->r_sb.sb_cmd.sc_argv[i] != NULL; i++)
		json_array_append_new(cmd,
		    json_string(run->r_sb.sb_cmd.sc_argv[i]));
	refused = tally_refused_json(t);
	allowed = tally_allowed_json(t);
	setup = report_setup(ri);
	doc = json_pack("{s:i, s:s, s:o, s:o, s:i, s:I, s:I, s:o, s:o, "
	    "s:o}",
	    "version", REPORT_VERSION, "sandbox", run->r_sb.sb_id,
	    "command", cmd, "cwd", json_string(run->r_sb.sb_cmd.sc_cwd),
	    "exit_status", ri->ri_status,
	    "duration_ms", (json_int_t)ri->ri_duration_ms,
	    "refused_total", (json_int_t)t->t_refused_total,
	    "refused", refused, "allowed", allowed, "setup", setup);
	tally_json_more(t, ri, doc);
	return doc;
}

/*
 * Writes the report to spec: "fd:N" (a descriptor the harness passed),
 * or else the file of at (wspath.c: made anew, mode 0600, through the
 * folder opened before the run).  Returns 0, or -1 with *cause set.
 */
int
tally_report(const struct tally *t, const struct report_info *ri,
    const char *spec, const struct wspath *at, char **cause)
{
	json_t	*doc;
	char	*text, *end;
	size_t	 len, off = 0;
	ssize_t	 n;
	long	 fdn;
	int	 fd = -1, rc = 0;

	*cause = NULL;
	if (strncmp(spec, "fd:", 3) == 0) {
		fdn = strtol(spec + 3, &end, 10);
		if (spec[3] == '\0' || *end != '\0' || fdn < 0 ||
		    fdn > 65535 || fcntl((int)fdn, F_GETFD) == -1) {
			xasprintf(cause, "--report %s: not an open descriptor",
			    spec);
			return -1;
		}
		fd = (int)fdn;
	}
	doc = tally_json(t, ri);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (text == NULL) {
		xasprintf(cause, "--report: cannot encode the report");
		return -1;
	}
	len = strlen(text);
	text[len++] = '\n';	/* json_dumps left room for its NUL */
	if (fd == -1) {
		rc = wspath_replace(at, text, len, cause);
		free(text);
		return rc;
	}
	while (off < len) {
		if ((n = write(fd, text + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			xasprintf(cause, "--report %s: %s", spec,
			    strerror(errno));
			rc = -1;
			break;
		}
		off += (size_t)n;
	}
	free(text);
	return rc;
}

void
tally_free(struct tally *t)
{
	size_t	 i;

	if (t == NULL)
		return;
	json_decref(t->t_scratch);
	json_decref(t->t_private);
	json_decref(t->t_tokens);
	for (i = 0; i < t->t_nrefused; i++) {
		free(t->t_refused[i].rf_host);
		free(t->t_refused[i].rf_proto);
		free(t->t_refused[i].rf_reason);
		free(t->t_refused[i].rf_rule);
		free(t->t_refused[i].rf_rule_from);
		free(t->t_refused[i].rf_hint);
		free(t->t_refused[i].rf_pattern);
	}
	for (i = 0; i < t->t_nallowed; i++)
		free(t->t_allowed[i].al_host);
	free(t->t_refused);
	free(t->t_allowed);
	free(t);
}
