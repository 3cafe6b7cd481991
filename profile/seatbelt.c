/*
 * seatbelt.c: a merged policy as a macOS Seatbelt profile (SBPL), for
 * sandbox-exec(1), and a structural check of such a profile.
 *
 * The profile starts from (deny default) and allows, in this order:
 * what a process needs to run (exec, fork, its own sandbox's signals and
 * process information, sysctl reads, a few system services), reads of
 * every file but the hidden ones, writes below each writable root except
 * the protected paths in it, the run's private temporary folder and
 * terminal, and then the network of the policy's mode: nothing for none,
 * only TCP to localhost:PORT (the proxy) for proxy, everything for host.
 *
 * Only allow rules follow (deny default), and every exception is a
 * require-not inside the allow rule it narrows, so the meaning does not
 * depend on how Seatbelt orders rules that match the same path.  Seatbelt
 * checks the path a file operation resolves to, after symbolic links, so
 * a link in the workspace pointing at .git or at a hidden folder is held
 * by the rule of its target; for that the paths written here must be the
 * real ones: /tmp, /var and /etc are links to /private/... on macOS, and
 * a rule on /var/folders would never match.
 *
 * Nothing here touches the disk; sb_opts.so_resolve lets the macOS runner
 * resolve other links (a home folder on another volume) before writing.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "profile/profile.h"

/* The system's links from / into /private, as macOS ships them. */
static const char *const sb_private[] = { "/etc", "/tmp", "/var" };

/* Where macOS keeps secrets of the kind default.json hides on Linux. */
static const char *const sb_stores[] = {
	"Library/Keychains",
	"Library/Cookies",
	"Library/Mail",
	"Library/Messages",
	"Library/Safari",
	"Library/Application Support/Google/Chrome",
	"Library/Application Support/Firefox",
	"Library/Group Containers"
};

/*
 * The system services a process may look up.  Each is a door out of the
 * sandbox, run by a process that is not in it, so the list is short:
 * users and groups (getpwuid), notifications and logging, preferences
 * (cfprefsd checks the caller's sandbox for writes), and certificate
 * trust.  Left out on purpose: mDNSResponder (DNS, a way out for data),
 * launchservicesd (`open` starts applications outside the sandbox),
 * SecurityServer (the keychain), pasteboard.
 */
static const char *const sb_services[] = {
	"com.apple.system.opendirectoryd.libinfo",
	"com.apple.system.notification_center",
	"com.apple.system.logger",
	"com.apple.cfprefsd.daemon",
	"com.apple.cfprefsd.agent"
};

/* Repositories at any depth: a host tool runs their hooks later. */
static const char *const sb_repo_regex[] = {
	"/[.]git/", "/[.]git$", "/[.]hg/", "/[.]hg$"
};

/* A path of the profile, canonical for macOS, and why it is there. */
struct sb_path {
	char		*sp_path;
	const char	*sp_from;
};

struct sb_list {
	struct sb_path	*sl_v;
	size_t		 sl_n;
};

/*
 * Returns path as macOS resolves it: /etc, /tmp and /var become their
 * targets in /private.  NULL with *cause set when the path cannot be
 * written in a profile: relative, too long, or holding a control byte.
 */
char *
seatbelt_path(const char *path, char **cause)
{
	const unsigned char	*p;
	size_t			 i;
	char			*out, *shown;

	*cause = NULL;
	if (path[0] != '/') {
		xasprintf(cause, "\"%s\" is not an absolute path", path);
		return NULL;
	}
	for (p = (const unsigned char *)path; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f) {
			shown = str_escape(path, strlen(path));
			xasprintf(cause, "\"%s\": a control character in a path "
			    "cannot be written in a Seatbelt profile", shown);
			free(shown);
			return NULL;
		}
	out = NULL;
	for (i = 0; i < nitems(sb_private); i++) {
		if (path_is_below(path, sb_private[i])) {
			xasprintf(&out, "/private%s", path);
			break;
		}
	}
	if (out == NULL)
		out = xstrdup(path);
	if (strlen(out) >= SB_MAX_PATH) {
		xasprintf(cause, "\"%.40s...\": longer than macOS's %d bytes",
		    out, SB_MAX_PATH - 1);
		free(out);
		return NULL;
	}
	return out;
}

/*
 * Returns s as an SBPL string literal, quotes included: a backslash or a
 * double quote is escaped, so no path can end the string early.  The
 * caller has refused control bytes (seatbelt_path).
 */
char *
seatbelt_string(const char *s)
{
	char	*out, *p;

	out = p = xmalloc(strlen(s) * 2 + 3);
	*p++ = '"';
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			*p++ = '\\';
		*p++ = *s;
	}
	*p++ = '"';
	*p = '\0';
	return out;
}

static void
sb_list_free(struct sb_list *l)
{
	size_t	 i;

	for (i = 0; i < l->sl_n; i++)
		free(l->sl_v[i].sp_path);
	free(l->sl_v);
	memset(l, 0, sizeof(*l));
}

/* Adds path, canonical, once; -1 with *cause set when it cannot be. */
static int
sb_list_add(struct sb_list *l, const char *path, const char *from,
    const struct sb_opts *o, char **cause)
{
	char	*real = NULL, *canon;
	size_t	 i;

	if (o->so_resolve != NULL)
		real = o->so_resolve(path);
	canon = seatbelt_path(real != NULL ? real : path, cause);
	free(real);
	if (canon == NULL)
		return -1;
	for (i = 0; i < l->sl_n; i++)
		if (strcmp(l->sl_v[i].sp_path, canon) == 0) {
			free(canon);
			return 0;
		}
	l->sl_v = xreallocarray(l->sl_v, l->sl_n + 1, sizeof(*l->sl_v));
	l->sl_v[l->sl_n].sp_path = canon;
	l->sl_v[l->sl_n++].sp_from = from;
	return 0;
}

static int
sb_list_plist(struct sb_list *l, const struct plist *pl,
    const struct sb_opts *o, struct errlist *errors)
{
	char	*cause;
	size_t	 i;

	for (i = 0; i < pl->pl_n; i++)
		if (sb_list_add(l, pl->pl_v[i].pi_text, pl->pl_v[i].pi_from, o,
		    &cause) == -1) {
			errlist_add(errors, "%s: %s", pl->pl_v[i].pi_from,
			    cause);
			free(cause);
		}
	return errors->el_count == 0 ? 0 : -1;
}

/* Writes "(subpath \"P\")" for a canonical path. */
static void
sb_subpath(FILE *f, const char *path)
{
	char	*q = seatbelt_string(path);

	fprintf(f, "(subpath %s)", q);
	free(q);
}

/* The part every profile has, whatever the policy. */
static void
sb_write_process(FILE *f, int mode)
{
	size_t	 i;

	fprintf(f,
	    ";; Processes: run programs, fork, and see and signal only this "
	    "sandbox.\n"
	    "(allow process-exec)\n"
	    "(allow process-fork)\n"
	    "(allow signal (target same-sandbox))\n"
	    "(allow process-info* (target same-sandbox))\n"
	    "(allow sysctl-read)\n"
	    "(allow user-preference-read)\n"
	    "(allow ipc-posix-sem)\n"
	    "(allow file-map-executable)\n"
	    "(allow mach-lookup");
	for (i = 0; i < nitems(sb_services); i++)
		fprintf(f, "\n    (global-name \"%s\")", sb_services[i]);
	if (mode != NET_NONE)
		/* TLS clients ask trustd; it may fetch what a chain names. */
		fprintf(f, "\n    (global-name \"com.apple.trustd.agent\")");
	fprintf(f, ")\n\n");
}

/* Reads: everywhere but the hidden paths and other terminals. */
static void
sb_write_reads(FILE *f, const struct sb_list *hide, const struct sb_list *w)
{
	size_t	 i, j;

	fprintf(f,
	    ";; Reads: everywhere but the hidden paths (filesystem.deny, and\n"
	    ";; macOS's stores of secrets) and terminals other than the "
	    "run's.\n"
	    "(allow file-read*\n"
	    "    (require-all\n"
	    "        (require-not (regex #\"^/dev/tty[a-z]\"))\n"
	    "        (require-not (regex #\"^/dev/pty\"))");
	for (i = 0; i < hide->sl_n; i++) {
		fprintf(f, "\n        (require-not ");
		sb_subpath(f, hide->sl_v[i].sp_path);
		fprintf(f, ")");
	}
	fprintf(f, "))\n");
	/* A writable root inside a hidden folder is seen again. */
	for (i = 0; i < w->sl_n; i++)
		for (j = 0; j < hide->sl_n; j++)
			if (path_is_below(w->sl_v[i].sp_path,
			    hide->sl_v[j].sp_path)) {
				fprintf(f, "(allow file-read* ");
				sb_subpath(f, w->sl_v[i].sp_path);
				fprintf(f, ")\n");
				break;
			}
	fprintf(f, "\n");
}

/* The require-not lines every writable place has: repositories. */
static void
sb_write_repo_nots(FILE *f)
{
	size_t	 i;

	for (i = 0; i < nitems(sb_repo_regex); i++)
		fprintf(f, "\n        (require-not (regex #\"%s\"))",
		    sb_repo_regex[i]);
}

/*
 * Writes: below each writable root, except the read-only and hidden
 * paths inside it and repositories at any depth.  A root that is itself
 * read-only or hidden is left out (the stricter rule wins, as in
 * fsplan.c); a root inside a hidden or read-only folder opens again.
 */
static void
sb_write_writes(FILE *f, const struct sb_list *w, const struct sb_list *ro,
    const struct sb_list *hide)
{
	const struct sb_list	*outs[] = { ro, hide };
	const char		*wp, *op;
	char			*from;
	size_t			 i, j, k;
	bool			 gone;

	fprintf(f, ";; Writes: below the writable roots, never to a "
	    "protected path.\n");
	for (i = 0; i < w->sl_n; i++) {
		wp = w->sl_v[i].sp_path;
		for (gone = false, k = 0; k < nitems(outs) && !gone; k++)
			for (j = 0; j < outs[k]->sl_n && !gone; j++)
				gone = strcmp(outs[k]->sl_v[j].sp_path, wp) == 0;
		if (gone) {
			/* Escaped: a newline would end the comment. */
			from = str_escape(w->sl_v[i].sp_from,
			    strlen(w->sl_v[i].sp_from));
			fprintf(f, ";; left out, read-only or hidden: %s\n",
			    from);
			free(from);
			continue;
		}
		fprintf(f, "(allow file-write*\n    (require-all\n        ");
		sb_subpath(f, wp);
		for (k = 0; k < nitems(outs); k++)
			for (j = 0; j < outs[k]->sl_n; j++) {
				op = outs[k]->sl_v[j].sp_path;
				if (!path_is_below(op, wp) || strcmp(op, wp) == 0)
					continue;
				fprintf(f, "\n        (require-not ");
				sb_subpath(f, op);
				fprintf(f, ")");
			}
		sb_write_repo_nots(f);
		fprintf(f, "))\n");
	}
	fprintf(f,
	    ";; The run's private temporary folder (TMPDIR), and devices.\n"
	    "(allow file-write*\n"
	    "    (require-all\n"
	    "        (subpath (param \"" SB_PARAM_TMPDIR "\"))");
	sb_write_repo_nots(f);
	fprintf(f, "))\n"
	    "(allow file-write-data\n"
	    "    (literal \"/dev/null\")\n"
	    "    (literal \"/dev/zero\")\n"
	    "    (subpath \"/dev/fd\"))\n"
	    ";; The run's terminal, and no other: another one's keys could be "
	    "read.\n"
	    "(allow file-read* file-write-data file-ioctl\n"
	    "    (literal \"/dev/tty\")\n"
	    "    (literal (param \"" SB_PARAM_TTY "\")))\n\n");
}

static void
sb_write_network(FILE *f, int mode, int port)
{
	switch (mode) {
	case NET_NONE:
		fprintf(f, ";; Network: none (network.mode none).\n");
		break;
	case NET_PROXY:
		fprintf(f, ";; Network: only the proxy, on localhost (127.0.0.1 "
		    "and ::1) port %d;\n"
		    ";; no DNS: the proxy resolves names.\n"
		    "(allow network-outbound (remote ip \"localhost:%d\"))\n",
		    port, port);
		break;
	default:
		fprintf(f, ";; Network: UNFILTERED (network.mode host): any "
		    "address, DNS too;\n"
		    ";; nothing goes through the proxy and nothing is "
		    "logged.\n"
		    "(allow network-outbound (remote ip \"*:*\"))\n"
		    "(allow network-bind (local ip \"*:*\"))\n"
		    "(allow network-inbound (local ip \"*:*\"))\n"
		    "(allow network-outbound (remote unix-socket "
		    "(path-literal \"/private/var/run/mDNSResponder\")))\n");
		break;
	}
}

/*
 * Returns the profile for policy p (caller frees), or NULL with every
 * problem in *cause: in proxy mode the proxy's port must be known, since
 * a profile without it could only allow every port or none.
 */
char *
seatbelt_profile(const struct policy *p, const struct sb_opts *o,
    char **cause)
{
	struct sb_list	 w = { 0 }, ro = { 0 }, hide = { 0 };
	struct errlist	 errors = { 0 };
	FILE		*f;
	char		*text = NULL, *store, *why;
	size_t		 len, i;
	int		 mode = p->p_mode.ps_value;

	*cause = NULL;
	if (mode == NET_PROXY && (o->so_port < 1 || o->so_port > 65535)) {
		xasprintf(cause, "network mode proxy: the proxy's port is "
		    "unknown, and the profile allows only that port; pass "
		    "--proxy-port N (the port of `cordon proxy --listen "
		    "tcp:127.0.0.1:N`)");
		return NULL;
	}
	sb_list_plist(&w, &p->p_write, o, &errors);
	sb_list_plist(&ro, &p->p_read_only, o, &errors);
	/*
	 * What agents and editors run from the workspace: no check follows
	 * a run here to move aside what the command made, so none is
	 * written, there or not.
	 */
	sb_list_plist(&ro, &p->p_host_config, o, &errors);
	sb_list_plist(&hide, &p->p_hide, o, &errors);
	for (i = 0; o->so_home != NULL && i < nitems(sb_stores); i++) {
		xasprintf(&store, "%s/%s", o->so_home, sb_stores[i]);
		if (sb_list_add(&hide, store, "macOS", o, &why) == -1) {
			errlist_add(&errors, "home folder: %s", why);
			free(why);
		}
		free(store);
	}
	for (i = 0; i < w.sl_n; i++)
		if (strcmp(w.sl_v[i].sp_path, "/") == 0 ||
		    path_is_below(w.sl_v[i].sp_path, "/dev"))
			errlist_add(&errors, "%s: a writable root may not be / "
			    "or under /dev", w.sl_v[i].sp_from);
	if (errors.el_count != 0)
		goto out;

	if ((f = open_memstream(&text, &len)) == NULL)
		fatal("open_memstream");
	fprintf(f, "(version 1)\n"
	    ";; cordon: a Seatbelt profile made by `cordon profile seatbelt`;"
	    " do not edit.\n"
	    ";; network: %s\n"
	    ";; sandbox-exec -D " SB_PARAM_TMPDIR "=DIR -D " SB_PARAM_TTY
	    "=TTY -f FILE CMD...\n"
	    ";;   DIR: a new private folder, its real path (pwd -P);\n"
	    ";;   TTY: the run's terminal (tty), or /dev/null.\n"
	    "(deny default)\n\n", mode == NET_NONE ? "none" :
	    mode == NET_PROXY ? "proxy, through localhost only" :
	    "host, UNFILTERED");
	sb_write_process(f, mode);
	sb_write_reads(f, &hide, &w);
	sb_write_writes(f, &w, &ro, &hide);
	sb_write_network(f, mode, o->so_port);
	if (fclose(f) != 0)
		fatal("open_memstream");

	/* What does not pass the check is never printed. */
	if (seatbelt_check(text, mode, o->so_port, &why) == -1) {
		errlist_add(&errors, "internal error: the profile made fails "
		    "its check: %s", why);
		free(why);
		free(text);
		text = NULL;
	}
out:
	sb_list_free(&w);
	sb_list_free(&ro);
	sb_list_free(&hide);
	if (errors.el_count != 0)
		*cause = errlist_steal(&errors);
	return text;
}

/*
 * The check: a reader for the SBPL subset the generator writes, and
 * rules on what was read.  Kept apart from the generator so that it
 * judges the text, not the intent.
 */
enum sbn_kind {
	SBN_LIST,
	SBN_SYMBOL,
	SBN_STRING,	/* "...", unescaped */
	SBN_REGEX	/* #"..." */
};

struct sbn {
	enum sbn_kind	 n_kind;
	char		*n_text;	/* symbols, strings */
	struct sbn	**n_v;		/* lists */
	size_t		 n_n;
	int		 n_line;
};

struct sb_reader {
	const char	*r_p;
	int		 r_line;
	int		 r_depth;
};

#define SB_MAX_DEPTH	16

static void
sbn_free(struct sbn *n)
{
	size_t	 i;

	if (n == NULL)
		return;
	for (i = 0; i < n->n_n; i++)
		sbn_free(n->n_v[i]);
	free(n->n_v);
	free(n->n_text);
	free(n);
}

/* Skips blanks and ";" comments. */
static void
sb_skip(struct sb_reader *r)
{
	for (;;) {
		if (*r->r_p == '\n')
			r->r_line++;
		if (*r->r_p == ' ' || *r->r_p == '\t' || *r->r_p == '\n')
			r->r_p++;
		else if (*r->r_p == ';')
			while (*r->r_p != '\0' && *r->r_p != '\n')
				r->r_p++;
		else
			return;
	}
}

/* Reads a string after its opening quote; only \" and \\ escapes. */
static struct sbn *
sb_read_string(struct sb_reader *r, enum sbn_kind kind, char **cause)
{
	struct sbn	*n;
	char		*out;
	size_t		 len = 0;

	out = xmalloc(strlen(r->r_p) + 1);
	for (;;) {
		if (*r->r_p == '\0') {
			xasprintf(cause, "line %d: a string is not closed",
			    r->r_line);
			free(out);
			return NULL;
		}
		if (*r->r_p == '"')
			break;
		if ((unsigned char)*r->r_p < 0x20 || *r->r_p == 0x7f) {
			xasprintf(cause, "line %d: a control character in a "
			    "string", r->r_line);
			free(out);
			return NULL;
		}
		if (*r->r_p == '\\') {
			if (kind == SBN_REGEX || (r->r_p[1] != '"' &&
			    r->r_p[1] != '\\')) {
				xasprintf(cause, "line %d: an escape other than "
				    "\\\" or \\\\ in a string", r->r_line);
				free(out);
				return NULL;
			}
			r->r_p++;
		}
		out[len++] = *r->r_p++;
	}
	r->r_p++;
	out[len] = '\0';
	n = xcalloc(1, sizeof(*n));
	n->n_kind = kind;
	n->n_text = out;
	n->n_line = r->r_line;
	return n;
}

static struct sbn *
sb_read(struct sb_reader *r, char **cause)
{
	struct sbn	*n, *c;
	const char	*start;

	sb_skip(r);
	if (*r->r_p == '"') {
		r->r_p++;
		return sb_read_string(r, SBN_STRING, cause);
	}
	if (r->r_p[0] == '#' && r->r_p[1] == '"') {
		r->r_p += 2;
		return sb_read_string(r, SBN_REGEX, cause);
	}
	if (*r->r_p == ')') {
		xasprintf(cause, "line %d: unbalanced \")\"", r->r_line);
		return NULL;
	}
	if (*r->r_p == '(') {
		if (++r->r_depth > SB_MAX_DEPTH) {
			xasprintf(cause, "line %d: nested too deep", r->r_line);
			return NULL;
		}
		n = xcalloc(1, sizeof(*n));
		n->n_kind = SBN_LIST;
		n->n_line = r->r_line;
		r->r_p++;
		for (;;) {
			sb_skip(r);
			if (*r->r_p == ')')
				break;
			if (*r->r_p == '\0') {
				xasprintf(cause, "line %d: unbalanced \"(\": "
				    "not closed", n->n_line);
				sbn_free(n);
				return NULL;
			}
			if ((c = sb_read(r, cause)) == NULL) {
				sbn_free(n);
				return NULL;
			}
			n->n_v = xreallocarray(n->n_v, n->n_n + 1,
			    sizeof(*n->n_v));
			n->n_v[n->n_n++] = c;
		}
		r->r_p++;
		r->r_depth--;
		return n;
	}
	start = r->r_p;
	while (*r->r_p != '\0' && strchr(" \t\n();\"", *r->r_p) == NULL) {
		if (!isgraph((unsigned char)*r->r_p)) {
			xasprintf(cause, "line %d: a stray byte", r->r_line);
			return NULL;
		}
		r->r_p++;
	}
	n = xcalloc(1, sizeof(*n));
	n->n_kind = SBN_SYMBOL;
	n->n_text = xstrndup(start, (size_t)(r->r_p - start));
	n->n_line = r->r_line;
	return n;
}

/* Is n the list (HEAD ...) with a symbol head? */
static bool
sbn_head(const struct sbn *n, const char *head)
{
	return n->n_kind == SBN_LIST && n->n_n > 0 &&
	    n->n_v[0]->n_kind == SBN_SYMBOL &&
	    strcmp(n->n_v[0]->n_text, head) == 0;
}

static bool
sbn_is(const struct sbn *n, enum sbn_kind kind, const char *text)
{
	return n->n_kind == kind && strcmp(n->n_text, text) == 0;
}

/* Does any string under n name a DNS service? */
static bool
sbn_names_dns(const struct sbn *n)
{
	size_t	 i;

	if (n->n_kind == SBN_STRING || n->n_kind == SBN_REGEX)
		return strstr(n->n_text, "mDNSResponder") != NULL ||
		    strstr(n->n_text, "dnssd") != NULL;
	for (i = 0; i < n->n_n; i++)
		if (sbn_names_dns(n->n_v[i]))
			return true;
	return false;
}

/*
 * Judges one top-level (allow ...) form: never (allow default); outside
 * host mode, no DNS service, and an operation on the network passes only as (allow network-outbound (remote ip|tcp
 * "localhost:PORT")), in proxy mode, with the proxy's port.
 */
static int
sb_check_allow(const struct sbn *n, int mode, int port, char **cause)
{
	const struct sbn	*op, *flt;
	char			 want[32];
	size_t			 i;
	bool			 net = false;

	for (i = 1; i < n->n_n && n->n_v[i]->n_kind == SBN_SYMBOL; i++) {
		op = n->n_v[i];
		if (strcmp(op->n_text, "default") == 0 ||
		    strcmp(op->n_text, "*") == 0) {
			xasprintf(cause, "line %d: (allow %s)", n->n_line,
			    op->n_text);
			return -1;
		}
		if (strncmp(op->n_text, "network", 7) == 0 ||
		    strcmp(op->n_text, "system-socket") == 0)
			net = true;
	}
	if (i == 1) {
		xasprintf(cause, "line %d: an allow without an operation",
		    n->n_line);
		return -1;
	}
	if (mode == NET_HOST)
		return 0;	/* unfiltered, and said so */
	if (sbn_names_dns(n)) {
		xasprintf(cause, "line %d: DNS allowed outside network mode "
		    "host", n->n_line);
		return -1;
	}
	if (!net)
		return 0;
	(void)snprintf(want, sizeof(want), "localhost:%d", port);
	if (mode != NET_PROXY || n->n_n != 3 ||
	    !sbn_is(n->n_v[1], SBN_SYMBOL, "network-outbound") ||
	    !sbn_head(n->n_v[2], "remote") || (flt = n->n_v[2])->n_n != 3 ||
	    (!sbn_is(flt->n_v[1], SBN_SYMBOL, "ip") &&
	    !sbn_is(flt->n_v[1], SBN_SYMBOL, "tcp")) ||
	    !sbn_is(flt->n_v[2], SBN_STRING, want)) {
		xasprintf(cause, "line %d: network allowed other than "
		    "outbound to %s, in network mode %s", n->n_line,
		    mode == NET_PROXY ? want : "nothing",
		    policy_mode_name(mode));
		return -1;
	}
	return 0;
}

/*
 * Checks a profile's structure: it reads (balanced parentheses, closed
 * strings with only \" and \\ escapes, no control bytes), starts with
 * (version 1) then (deny default), holds only top-level allow and deny
 * forms, never (allow default); and outside network mode host allows no
 * network but TCP to localhost:port (proxy) and looks up no DNS service.
 * Returns 0, or -1 with *cause set.
 */
int
seatbelt_check(const char *text, int mode, int port, char **cause)
{
	struct sb_reader	 r = { text, 1, 0 };
	struct sbn		*n;
	size_t			 count = 0;
	int			 rc = 0;

	*cause = NULL;
	for (;;) {
		sb_skip(&r);
		if (*r.r_p == '\0')
			break;
		if ((n = sb_read(&r, cause)) == NULL)
			return -1;
		count++;
		if (count == 1 && !(n->n_n == 2 && sbn_head(n, "version") &&
		    sbn_is(n->n_v[1], SBN_SYMBOL, "1"))) {
			xasprintf(cause, "line %d: the first form is not "
			    "(version 1)", n->n_line);
			rc = -1;
		} else if (count == 2 && !(n->n_n == 2 && sbn_head(n, "deny") &&
		    sbn_is(n->n_v[1], SBN_SYMBOL, "default"))) {
			xasprintf(cause, "line %d: (deny default) does not "
			    "follow (version 1)", n->n_line);
			rc = -1;
		} else if (count > 2 && !sbn_head(n, "allow") &&
		    !sbn_head(n, "deny")) {
			xasprintf(cause, "line %d: a top-level form other than "
			    "allow or deny", n->n_line);
			rc = -1;
		} else if (count > 2 && sbn_head(n, "allow"))
			rc = sb_check_allow(n, mode, port, cause);
		sbn_free(n);
		if (rc == -1)
			return -1;
	}
	if (count < 2) {
		xasprintf(cause, "no (version 1) and (deny default)");
		return -1;
	}
	return 0;
}
