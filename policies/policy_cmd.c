/*
 * policy_cmd.c: `cordon policy check | explain | show`, options only.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "lib/host.h"
#include "lib/log.h"
#include "lib/opt.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"

#define EXIT_ALLOW	0
#define EXIT_DENY	1
#define EXIT_ERROR	2

static void
policy_usage(FILE *f)
{
	fprintf(f,
	    "usage: cordon policy check FILE...\n"
	    "       cordon policy explain [LAYER OPTIONS] [--identity ID] "
	    "HOST[:PORT]\n"
	    "       cordon policy show [LAYER OPTIONS] [--plain]\n"
	    "layer options, applied in order after the system and user "
	    "policies:\n"
	    "  --policy FILE  --allow-domain PATTERN  --deny-domain PATTERN\n"
	    "  --allow-cidr CIDR  --workspace DIR  --only (no built-in, "
	    "system,\n"
	    "  user or workspace layer)\n");
}

/* Prints each line of a multi-line cause as a message. */
static void
print_cause(const char *cause)
{
	const char	*line = cause, *nl;

	while (line != NULL && *line != '\0') {
		nl = strchr(line, '\n');
		log_warnx("%.*s", nl ? (int)(nl - line) : (int)strlen(line),
		    line);
		line = nl ? nl + 1 : NULL;
	}
}

/*
 * A listed socket that gives away the host (policy_parse_socket_risk): said
 * at every check, as it is easy to list one without knowing.
 */
static void
policy_check_sockets(const char *file, const struct policy *p)
{
	const struct pitem	*it;
	const char		*risk;
	size_t			 i;

	for (i = 0; i < p->p_sockets.pl_n; i++) {
		it = &p->p_sockets.pl_v[i];
		if ((risk = policy_parse_socket_risk(it->pi_text)) != NULL)
			printf("%s: warning: %s (%s): %s; the sandbox no "
			    "longer holds a command that can reach it\n",
			    file, it->pi_text, it->pi_from, risk);
	}
}

/*
 * policy check's options: --help only, and -- before a file whose name
 * starts with a dash.  Leaves optind on the first file; returns -1 to
 * go on, or the exit status.
 */
static int
policy_check_opts(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (ch == 'h') {
			policy_usage(stdout);
			return 0;
		}
		opt_refused("policy check", argv, opts, "h");
		return EXIT_ERROR;
	}
	if (optind == argc) {
		log_warnx("policy check: which file?");
		log_warnx("hint: cordon policy check ~/.config/cordon/"
		    "policy.json");
		return EXIT_ERROR;
	}
	return -1;
}

/*
 * Whether p has a credentials entry that fills a header in (an entry
 * that only pins its host, or lets foreign ones through, fills none).
 */
static bool
policy_check_fills(const struct policy *p)
{
	size_t	 i;

	for (i = 0; i < p->p_ncreds; i++)
		if (p->p_creds[i].cr_env != NULL)
			return true;
	return false;
}

/*
 * `policy check FILE...`: loads each file as one layer.  A file at
 * DIR/.cordon/policy.json is checked as the workspace layer of DIR, with
 * the limits that layer has.
 */
static int
policy_check(int argc, char **argv)
{
	static const char	 wsfile[] = "/.cordon/policy.json";
	struct policy_ctx	 ctx, fctx;
	struct policy		*p;
	struct pitem		 abs = { 0 };
	char			*cause, *ws = NULL;
	size_t			 n;
	int			 i, rc = EXIT_ALLOW;

	if ((i = policy_check_opts(argc, argv)) != -1)
		return i;
	if (policy_merge_ctx_init(&ctx, NULL, &cause) == -1) {
		print_cause(cause);
		free(cause);
		return EXIT_ERROR;
	}
	for (i = optind; i < argc; i++) {
		fctx = ctx;
		if (policy_parse_path(argv[i], &ctx, &abs, &cause) == -1) {
			log_warnx("%s: %s", argv[i], cause);
			free(cause);
			rc = EXIT_DENY;
			continue;
		}
		n = strlen(abs.pi_text);
		if (n >= sizeof(wsfile) - 1 && strcmp(abs.pi_text + n -
		    (sizeof(wsfile) - 1), wsfile) == 0) {
			ws = xstrndup(abs.pi_text, n - (sizeof(wsfile) - 1));
			fctx.pc_workspace = *ws != '\0' ? ws : "/";
			fctx.pc_untrusted = true;
		}
		p = policy_load_file(fctx.pc_untrusted ? abs.pi_text : argv[i],
		    &fctx, &cause);
		free(ws);
		ws = NULL;
		if (p == NULL) {
			print_cause(cause);
			free(cause);
			rc = EXIT_DENY;
			continue;
		}
		printf("%s: ok%s\n", argv[i], fctx.pc_untrusted ?
		    " (as a workspace layer)" : "");
		if (policy_check_fills(p) && p->p_ninspect == 0)
			printf("%s: note: credentials are filled in only on "
			    "inspected requests, and nothing here is "
			    "inspected (network.inspect)\n", argv[i]);
		policy_check_sockets(argv[i], p);
		policy_free(p);
	}
	policy_pitem_clear(&abs);
	policy_merge_ctx_clear(&ctx);
	return rc;
}

enum {
	OPT_WORKSPACE = 256,
	OPT_ONLY,
	OPT_PLAIN,
	OPT_IDENTITY
};

static const struct option layer_options[] = {
	{ "workspace", required_argument, NULL, OPT_WORKSPACE },
	{ "only", no_argument, NULL, OPT_ONLY },
	{ "plain", no_argument, NULL, OPT_PLAIN },
	{ "identity", required_argument, NULL, OPT_IDENTITY },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/*
 * Reads layer options into pl (ly_args is a new array, or NULL, the
 * caller frees).  Returns the index of the first operand, or -1.
 */
static int
policy_layer_opts(const char *cmd, int argc, char **argv,
    struct policy_layers *pl, bool *plain, const char **identity)
{
	struct option	 all[POLICY_FLAGS_N + nitems(layer_options)];
	int		 ch;

	memset(pl, 0, sizeof(*pl));
	policy_flag_options(all, nitems(all), layer_options,
	    POLICY_FLAGS_NET);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", all, NULL)) != -1) {
		if (policy_flag_take(pl, ch, optarg))
			continue;
		switch (ch) {
		case OPT_WORKSPACE:
			pl->ly_workspace = optarg;
			break;
		case OPT_ONLY:
			pl->ly_only = true;
			break;
		case OPT_PLAIN:
			*plain = true;
			break;
		case OPT_IDENTITY:
			if (identity == NULL) {
				log_warnx("%s: --identity is explain's alone",
				    cmd);
				return -1;
			}
			*identity = optarg;
			break;
		case 'h':
			policy_usage(stdout);
			exit(0);
		default:
			opt_refused(cmd, argv, all, "h");
			return -1;
		}
	}
	return optind;
}

/*
 * Splits HOST[:PORT] (443 when no port); returns -1 with a message on
 * stderr when malformed.
 */
static int
explain_target(const char *arg, char **host, int *port)
{
	const char	*portstr;
	size_t		 hostlen;
	char		*cause;

	if (host_split(arg, &hostlen, &portstr, &cause) == -1) {
		log_warnx("%s: %s", arg, cause);
		free(cause);
		return -1;
	}
	*port = 443;
	if (portstr != NULL && (*port = host_port(portstr)) == -1) {
		log_warnx("bad port in \"%s\" (1 to 65535)", arg);
		return -1;
	}
	*host = xstrndup(arg, hostlen);
	return 0;
}

/* Prints what network.inspect lets through to an allowed host, if any. */
static void
explain_inspect(const struct policy *p, const char *host)
{
	const struct pinspect	*in;
	size_t			 i;

	if ((in = policy_match_inspect(p, host)) == NULL)
		return;
	printf("inspected: %s (%s): methods", in->in_host.pi_text,
	    in->in_host.pi_from);
	for (i = 0; i < in->in_methods.pl_n; i++)
		printf("%s %s", i ? "," : "", in->in_methods.pl_v[i].pi_text);
	printf("; paths");
	for (i = 0; i < in->in_paths.pl_n; i++)
		printf("%s %s", i ? "," : "", in->in_paths.pl_v[i].pi_text);
	printf("; any other request is refused with 403\n");
}

/* Appends what and name to *list, ", " between two. */
static void
explain_name(char **list, const char *what, const char *name)
{
	char	*tmp;

	xasprintf(&tmp, "%s, %s%s", *list, what, name);
	free(*list);
	*list = tmp;
}

/* Appends the texts of pl to *list, each after what. */
static void
explain_names(char **list, const char *what, const struct plist *pl)
{
	size_t	 i;

	for (i = 0; i < pl->pl_n; i++)
		explain_name(list, what, pl->pl_v[i].pi_text);
}

/*
 * Prints the credentials entries for an allowed host: what the proxy
 * of a run fills in, and whether the host is pinned to it (proxy/pin.c).
 */
static void
explain_creds(const struct policy *p, const char *host)
{
	const struct pcred	*cr;
	const char		*allow = NULL;
	char			*list;
	bool			 fill = false, seen = false;
	size_t			 i;

	list = xstrdup("Authorization");
	for (i = 0; i < p->p_ncreds; i++) {
		cr = &p->p_creds[i];
		if (!policy_match_admits_name(&cr->cr_host, host))
			continue;
		seen = true;
		if (cr->cr_env != NULL) {
			printf("credential: %s (%s): a run's proxy puts %s in "
			    "%s\n", cr->cr_host.pi_text, cr->cr_host.pi_from,
			    cr->cr_env, cr->cr_header);
			if (strcasecmp(cr->cr_header, "Authorization") != 0)
				explain_name(&list, "", cr->cr_header);
			fill = true;
		}
		explain_names(&list, "", &cr->cr_headers);
		explain_names(&list, "cookie ", &cr->cr_cookies);
		if (cr->cr_foreign && allow == NULL)
			allow = cr->cr_host.pi_from;
	}
	if (allow != NULL)
		printf("credential: pinning is off: any other credential "
		    "passes (\"foreign\": \"allow\", %s)\n", allow);
	else if (fill)
		printf("credential: pinned: another credential (in %s) is "
		    "refused with 403; hint: add {\"host\": \"%s\", "
		    "\"foreign\": \"allow\"} to credentials to let it "
		    "pass\n", list, host);
	else if (seen)
		printf("credential: pinned if a run holds a token file's "
		    "credential for it: another (in %s) is then refused with "
		    "403\n", list);
	free(list);
}

/* Prints the decision for one target; returns the exit status. */
static int
explain_print(const struct policy *p, const struct policy *trusted,
    const char *host, int port)
{
	struct decision	 d, t;
	char		*line, *hint;
	int		 rc;

	rc = policy_match_host(p, host, strlen(host), port, &d) ?
	    EXIT_ALLOW : EXIT_DENY;
	if (d.d_why == WHY_NO_RULE && trusted != NULL &&
	    policy_match_host(trusted, host, strlen(host), port, &t)) {
		/* Allowed before the workspace layer took it away. */
		line = decision_describe(&t);
		printf("deny %s:%d: the workspace policy (.cordon/policy.json) "
		    "narrows network.allow to exclude it\n", d.d_host.h_name,
		    port);
		printf("note: without the workspace layer: %s\n", line);
		printf("hint: the workspace policy can only tighten; change "
		    "its network.allow to include it\n");
		free(line);
		decision_clear(&t);
		decision_clear(&d);
		return rc;
	}
	line = decision_describe(&d);
	printf("%s\n", line);
	free(line);
	if ((hint = decision_hint(&d)) != NULL) {
		printf("hint: %s\n", hint);
		free(hint);
	}
	if (rc == EXIT_ALLOW && d.d_host.h_kind == HOST_NAME &&
	    d.d_why != WHY_MODE_HOST)
		printf("note: each address it resolves to must also be public, "
		    "or in network.allow_cidrs\n");
	if (rc == EXIT_ALLOW && d.d_host.h_kind == HOST_NAME &&
	    d.d_why != WHY_MODE_HOST) {
		explain_inspect(p, d.d_host.h_name);
		explain_creds(p, d.d_host.h_name);
	}
	decision_clear(&d);
	return rc;
}

/*
 * The decision for a tls: client of identity id (--identity): which
 * rule of p's identities it gets, and the decision of the operator's
 * policy joined by that rule's layer, as the proxy makes it ("report"
 * lets through what it may, warned).  Returns the exit status.
 */
static int
explain_identity(const struct policy *p, const char *id, const char *host,
    int port)
{
	const struct pident	*rule;
	struct policy		*j;
	struct decision		 d;
	char			*line;
	int			 rc;

	if (p->p_idents == NULL) {
		log_warnx("policy explain: --identity %s: the policy has no "
		    "\"identities\"", id);
		log_warnx("hint: name the proxy's policy with --policy FILE");
		return EXIT_ERROR;
	}
	rule = policy_ident_find(p, id);
	if (rule->id_match != NULL)
		printf("identity %s: %s (\"match\": \"%s\", ", id,
		    rule->id_from, rule->id_match);
	else
		printf("identity %s: no rule matches: %s (", id,
		    rule->id_from);
	printf("\"action\": \"%s\", policy %s)\n", rule->id_action ==
	    IDENT_REPORT ? "report" : "enforce", rule->id_file != NULL ?
	    rule->id_file : "\"deny\"");
	j = policy_ident_join(p, rule, id);
	if (!policy_match_host(j, host, strlen(host), port, &d) &&
	    rule->id_action == IDENT_REPORT && policy_ident_liftable(&d)) {
		line = decision_describe(&d);
		printf("allow %s:%d: %s has \"action\": \"report\"\n",
		    d.d_host.h_name, port, rule->id_from);
		printf("warning: report: would be refused (%s)\n", line);
		free(line);
		decision_clear(&d);
		policy_free(j);
		return EXIT_ALLOW;
	}
	decision_clear(&d);
	rc = explain_print(j, NULL, host, port);
	policy_free(j);
	return rc;
}

static int
policy_explain(int argc, char **argv)
{
	struct policy_layers	 pl;
	struct policy		*p, *trusted;
	const char		*identity = NULL;
	char			*cause, *host = NULL;
	bool			 plain = false;
	int			 first, port, rc;

	if ((first = policy_layer_opts("policy explain", argc, argv, &pl,
	    &plain, &identity)) == -1) {
		free(pl.ly_args);
		return EXIT_ERROR;
	}
	if (argc - first != 1 || plain) {
		policy_usage(stderr);
		free(pl.ly_args);
		return EXIT_ERROR;
	}
	if (explain_target(argv[first], &host, &port) == -1) {
		free(pl.ly_args);
		return EXIT_ERROR;
	}
	if ((p = policy_merge_layers(&pl, &trusted, &cause)) == NULL) {
		print_cause(cause);
		free(cause);
		free(host);
		free(pl.ly_args);
		return EXIT_ERROR;
	}
	if (identity != NULL)
		rc = explain_identity(p, identity, host, port);
	else
		rc = explain_print(p, trusted, host, port);
	policy_free(p);
	policy_free(trusted);
	free(host);
	free(pl.ly_args);
	return rc;
}

static int
policy_show(int argc, char **argv)
{
	struct policy_layers	 pl;
	struct policy		*p;
	json_t			*j;
	char			*cause;
	bool			 plain = false;
	int			 first;

	if ((first = policy_layer_opts("policy show", argc, argv, &pl,
	    &plain, NULL)) == -1 ||
	    first != argc) {
		if (first != -1)
			policy_usage(stderr);
		free(pl.ly_args);
		return EXIT_ERROR;
	}
	if ((p = policy_merge_layers(&pl, NULL, &cause)) == NULL) {
		print_cause(cause);
		free(cause);
		free(pl.ly_args);
		return EXIT_ERROR;
	}
	j = policy_show_json(p, !plain);
	if (json_dumpf(j, stdout, JSON_INDENT(2)) == -1)
		log_warnx("writing the policy failed");
	putchar('\n');
	json_decref(j);
	policy_free(p);
	free(pl.ly_args);
	return fflush(stdout) == 0 ? 0 : EXIT_ERROR;
}

/* `cordon policy SUBCOMMAND ...`; argv[0] is "policy". */
int
policy_cmd(int argc, char **argv)
{
	if (argc < 2) {
		policy_usage(stderr);
		return EXIT_ERROR;
	}
	if (strcmp(argv[1], "check") == 0)
		return policy_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "explain") == 0)
		return policy_explain(argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return policy_show(argc - 1, argv + 1);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		policy_usage(stdout);
		return 0;
	}
	log_warnx("policy: unknown subcommand \"%s\"", argv[1]);
	policy_usage(stderr);
	return EXIT_ERROR;
}
