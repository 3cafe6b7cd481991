/*
 * policy_merge.c: layers, from least to most specific.
 *
 *   built-in defaults (policies/default.json, compiled in)
 *   the system policy, /etc/cordon/policy.json
 *   the user's policy, $XDG_CONFIG_HOME/cordon/policy.json
 *   --policy files, --agent profiles and command-line flags, in the
 *   order given
 *   the workspace's .cordon/policy.json
 *
 * Trusted layers add to lists and override single values.  The workspace
 * layer came with the code (git clone) and is untrusted: it may only
 * tighten.  Its allowlists intersect with what is already allowed, its
 * denylists are added, network.mode and unix_sockets only move toward the
 * stricter value, write roots only shrink, and it may not set variables,
 * name credentials, inspect TLS, choose the CA or open host sockets.
 * Intersections are computed on the rules themselves, so the merged
 * policy is again a plain policy that `policy show` can print.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"

#define SYSTEM_POLICY	"/etc/cordon/policy.json"
#define WORKSPACE_POLICY ".cordon/policy.json"

/* policies/default.json, linked in by the build (see the Makefile). */
extern const char	 policy_default_json[];
extern const char	 policy_default_json_end[];

static void
pscalar_set(struct pscalar *dst, const struct pscalar *src)
{
	if (!src->ps_set)
		return;
	free(dst->ps_from);
	dst->ps_value = src->ps_value;
	dst->ps_from = xstrdup(src->ps_from);
	dst->ps_set = true;
}

/* Adds a trusted layer to dst: lists grow, single values are replaced. */
void
policy_merge(struct policy *dst, const struct policy *layer)
{
	const struct pitem	*it;
	size_t			 i, j;

	pscalar_set(&dst->p_mode, &layer->p_mode);
	pscalar_set(&dst->p_unix, &layer->p_unix);
	pscalar_set(&dst->p_capture, &layer->p_capture);
	policy_plist_append(&dst->p_allow, &layer->p_allow);
	policy_plist_append(&dst->p_deny, &layer->p_deny);
	policy_plist_append(&dst->p_cidrs, &layer->p_cidrs);
	policy_plist_append(&dst->p_host_ports, &layer->p_host_ports);
	policy_plist_append(&dst->p_write, &layer->p_write);
	policy_plist_append(&dst->p_read_only, &layer->p_read_only);
	policy_plist_append(&dst->p_hide, &layer->p_hide);
	policy_plist_append(&dst->p_sockets, &layer->p_sockets);
	policy_plist_append(&dst->p_host_config, &layer->p_host_config);
	policy_plist_append(&dst->p_env_pass, &layer->p_env_pass);

	/* A later value for the same variable replaces the earlier one. */
	for (i = 0; i < layer->p_env_set.pl_n; i++) {
		it = &layer->p_env_set.pl_v[i];
		for (j = 0; j < dst->p_env_set.pl_n; j++)
			if (strcmp(dst->p_env_set.pl_v[j].pi_text,
			    it->pi_text) == 0)
				break;
		if (j < dst->p_env_set.pl_n)
			policy_pitem_clear(&dst->p_env_set.pl_v[j]);
		else
			policy_plist_add(&dst->p_env_set);
		policy_pitem_copy(&dst->p_env_set.pl_v[j], it);
	}
	dst->p_env_set.pl_set |= layer->p_env_set.pl_set;

	/* TLS inspection (issue 7): lists grow, a later CA folder wins. */
	if (layer->p_ninspect != 0)
		dst->p_inspect = xreallocarray(dst->p_inspect,
		    dst->p_ninspect + layer->p_ninspect,
		    sizeof(*dst->p_inspect));
	for (i = 0; i < layer->p_ninspect; i++) {
		memset(&dst->p_inspect[dst->p_ninspect], 0,
		    sizeof(*dst->p_inspect));
		policy_pinspect_copy(&dst->p_inspect[dst->p_ninspect++],
		    &layer->p_inspect[i]);
	}
	if (layer->p_ncreds != 0)
		dst->p_creds = xreallocarray(dst->p_creds,
		    dst->p_ncreds + layer->p_ncreds, sizeof(*dst->p_creds));
	for (i = 0; i < layer->p_ncreds; i++) {
		memset(&dst->p_creds[dst->p_ncreds], 0,
		    sizeof(*dst->p_creds));
		policy_pcred_copy(&dst->p_creds[dst->p_ncreds++],
		    &layer->p_creds[i]);
	}
	if (layer->p_ca_dir.pl_n != 0) {
		for (i = 0; i < dst->p_ca_dir.pl_n; i++)
			policy_pitem_clear(&dst->p_ca_dir.pl_v[i]);
		dst->p_ca_dir.pl_n = 0;
		policy_plist_append(&dst->p_ca_dir, &layer->p_ca_dir);
	}
	/* identities: a later layer's replace an earlier one's whole. */
	if (layer->p_idents != NULL) {
		policy_pidents_unref(dst->p_idents);
		dst->p_idents = policy_pidents_ref(layer->p_idents);
	}
	/* The tier: a later layer that names it names all of it. */
	if (layer->p_tier[POLICY_TIER_PROXY].pl_n != 0)
		for (i = 0; i < POLICY_TIER_N; i++) {
			policy_plist_free(&dst->p_tier[i]);
			policy_plist_append(&dst->p_tier[i], &layer->p_tier[i]);
		}
}

/* A single value moves only toward the stricter (smaller) one. */
static void
pscalar_narrow(struct pscalar *dst, const struct pscalar *ws)
{
	if (ws->ps_set && (!dst->ps_set || ws->ps_value < dst->ps_value))
		pscalar_set(dst, ws);
}

/* Says whether variable pattern a ("LC_*", "HOME") admits all b admits. */
static bool
env_within(const char *b, const char *a)
{
	size_t	 n = strlen(a);

	if (n > 0 && a[n - 1] == '*')
		return strncmp(a, b, n - 1) == 0;
	return strcmp(a, b) == 0;
}

/*
 * Replaces dst with what both dst and ws admit, entry by entry; kind
 * selects how two entries meet.
 */
enum meet {
	MEET_PATTERN,
	MEET_CIDR,
	MEET_PATH,
	MEET_ENV
};

static void
policy_plist_intersect(struct plist *dst, const struct plist *ws, enum meet how)
{
	struct plist		 out = { 0 };
	const struct pitem	*a, *b, *narrow;
	struct pitem		 tmp, *it;
	struct cidr		 c;
	char			 buf[ADDR_STRLEN + 8];
	size_t			 i, j;

	if (!ws->pl_set)
		return;
	for (i = 0; i < dst->pl_n; i++) {
		a = &dst->pl_v[i];
		for (j = 0; j < ws->pl_n; j++) {
			b = &ws->pl_v[j];
			narrow = NULL;
			switch (how) {
			case MEET_PATTERN:
				if (policy_match_intersect(a, b, &tmp))
					*policy_plist_add(&out) = tmp;
				continue;
			case MEET_CIDR:
				if (!addr_cidr_intersect(&a->pi_cidr,
				    &b->pi_cidr, &c))
					continue;
				narrow = a->pi_cidr.c_prefix >=
				    b->pi_cidr.c_prefix ? a : b;
				break;
			case MEET_PATH:
				if (path_is_below(a->pi_text, b->pi_text))
					narrow = a;
				else if (path_is_below(b->pi_text, a->pi_text))
					narrow = b;
				break;
			case MEET_ENV:
				if (env_within(a->pi_text, b->pi_text))
					narrow = a;
				else if (env_within(b->pi_text, a->pi_text))
					narrow = b;
				break;
			}
			if (narrow == NULL)
				continue;
			it = policy_plist_add(&out);
			policy_pitem_copy(it, narrow);
			free(it->pi_from);
			xasprintf(&it->pi_from, "%s, narrowed by %s",
			    a->pi_from, b->pi_from);
			if (how == MEET_CIDR) {
				it->pi_cidr = c;
				free(it->pi_text);
				it->pi_text = xstrdup(addr_cidr_str(&c, buf,
				    sizeof(buf)));
			}
		}
	}
	for (i = 0; i < dst->pl_n; i++)
		policy_pitem_clear(&dst->pl_v[i]);
	free(dst->pl_v);
	out.pl_set = true;
	*dst = out;
}

/*
 * Adds the untrusted workspace layer ws to dst: it can only take away.
 */
void
policy_merge_narrow(struct policy *dst, const struct policy *ws)
{
	size_t	 i;

	pscalar_narrow(&dst->p_mode, &ws->p_mode);
	pscalar_narrow(&dst->p_unix, &ws->p_unix);
	pscalar_narrow(&dst->p_capture, &ws->p_capture);
	policy_plist_intersect(&dst->p_allow, &ws->p_allow, MEET_PATTERN);
	policy_plist_append(&dst->p_deny, &ws->p_deny);
	policy_plist_intersect(&dst->p_cidrs, &ws->p_cidrs, MEET_CIDR);
	policy_plist_intersect(&dst->p_write, &ws->p_write, MEET_PATH);
	i = dst->p_read_only.pl_n;
	policy_plist_append(&dst->p_read_only, &ws->p_read_only);
	for (; i < dst->p_read_only.pl_n; i++)
		dst->p_read_only.pl_v[i].pi_untrusted = true;
	i = dst->p_hide.pl_n;
	policy_plist_append(&dst->p_hide, &ws->p_hide);
	for (; i < dst->p_hide.pl_n; i++)
		dst->p_hide.pl_v[i].pi_untrusted = true;
	/* More of what the host runs is judged; none is judged less. */
	i = dst->p_host_config.pl_n;
	policy_plist_append(&dst->p_host_config, &ws->p_host_config);
	for (; i < dst->p_host_config.pl_n; i++)
		dst->p_host_config.pl_v[i].pi_untrusted = true;
	policy_plist_intersect(&dst->p_env_pass, &ws->p_env_pass, MEET_ENV);
	/*
	 * network.inspect, credentials, tls and filesystem.unix_sockets:
	 * the loader refuses them in the workspace layer, so there is
	 * nothing to narrow.  A layer that has them anyway (built in
	 * memory) adds nothing here.
	 */
}

/*
 * A run's live rules (cordon proxy's run channel: watch.c) on dst, the
 * operator's policy base already narrowed by the run's own rules: each
 * allow entry of live counts only as far as an allow entry of base
 * admits it (their meet), so it can give back what the run's narrowing
 * took, never more than base allows; base's deny entries stay in dst,
 * and live's deny entries join them.
 */
void
policy_merge_live(struct policy *dst, const struct policy *base,
    const struct policy *live)
{
	const struct pitem	*a, *b;
	struct pitem		 tmp, *it;
	size_t			 i, j;

	for (i = 0; i < live->p_allow.pl_n; i++) {
		a = &live->p_allow.pl_v[i];
		for (j = 0; j < base->p_allow.pl_n; j++) {
			b = &base->p_allow.pl_v[j];
			if (!policy_match_intersect(b, a, &tmp))
				continue;
			it = policy_plist_add(&dst->p_allow);
			*it = tmp;
			free(it->pi_from);
			xasprintf(&it->pi_from, "%s, within %s", a->pi_from,
			    b->pi_from);
			dst->p_allow.pl_set = true;
		}
	}
	policy_plist_append(&dst->p_deny, &live->p_deny);
}

/* --network MODE: replaces the mode, like a later trusted layer. */
static int
policy_flag_mode(struct policy *p, const char *arg, char **cause)
{
	int	 mode;

	for (mode = NET_NONE; mode <= NET_HOST; mode++)
		if (strcmp(arg, policy_mode_name(mode)) == 0)
			break;
	if (mode > NET_HOST) {
		xasprintf(cause, "--network \"%s\": the modes are none, "
		    "proxy and host", arg);
		return -1;
	}
	free(p->p_mode.ps_from);
	p->p_mode.ps_value = mode;
	p->p_mode.ps_from = xstrdup("--network");
	p->p_mode.ps_set = true;
	return 0;
}

/* The list of p a policy flag adds to (policy_flag.c). */
static struct plist *
policy_merge_list(struct policy *p, enum policy_flag_adds adds)
{
	switch (adds) {
	case PFLAG_ALLOW:
		return &p->p_allow;
	case PFLAG_DENY:
		return &p->p_deny;
	case PFLAG_CIDR:
		return &p->p_cidrs;
	case PFLAG_WRITE:
		return &p->p_write;
	case PFLAG_READ_ONLY:
		return &p->p_read_only;
	case PFLAG_HIDE:
		return &p->p_hide;
	default:
		fatalx("%s: flag %d adds no list", __func__, (int)adds);
	}
}

/*
 * Adds one command-line rule to p: "--allow-domain", "--deny-domain",
 * "--allow-cidr", "--network", and the paths "--write", "--read-only" and
 * "--deny-path" (relative to ctx's workspace).  Returns 0, or -1 with
 * *cause set.
 */
int
policy_merge_flag(struct policy *p, const char *flag, const char *arg,
    const struct policy_ctx *ctx, char **cause)
{
	const struct policy_flag	*pf;
	struct plist			*pl;
	struct pitem			*it;
	char				*why, buf[ADDR_STRLEN + 8];
	int				 rc;

	*cause = NULL;
	if ((pf = policy_flag_named(flag)) == NULL ||
	    pf->pf_adds == PFLAG_FILE || pf->pf_adds == PFLAG_AGENT) {
		xasprintf(cause, "%s: not a policy flag", flag);
		return -1;
	}
	if (pf->pf_adds == PFLAG_MODE)
		return policy_flag_mode(p, arg, cause);
	pl = policy_merge_list(p, pf->pf_adds);
	it = policy_plist_add(pl);
	it->pi_from = xstrdup(flag);
	if (pf->pf_path)
		rc = policy_parse_path(arg, ctx, it, &why);
	else if (pf->pf_adds == PFLAG_CIDR) {
		if ((rc = addr_cidr_parse(arg, &it->pi_cidr, &why)) == 0)
			it->pi_text = xstrdup(addr_cidr_str(&it->pi_cidr, buf,
			    sizeof(buf)));
	} else
		rc = policy_parse_pattern(arg, it, &why);
	if (rc == -1) {
		char	*shown = str_escape(arg, strlen(arg));

		xasprintf(cause, "%s \"%s\": %s", flag, shown, why);
		free(shown);
		free(why);
		policy_pitem_clear(&pl->pl_v[--pl->pl_n]);
		return -1;
	}
	pl->pl_set = true;
	return 0;
}

/* The built-in defaults, as a layer. */
struct policy *
policy_merge_defaults(const struct policy_ctx *ctx, char **cause)
{
	return policy_load_buffer(policy_default_json,
	    (size_t)(policy_default_json_end - policy_default_json),
	    "built-in defaults", ctx, cause);
}

/*
 * Fills ctx, zeroed, for a run in ws (resolved; taken) and the home
 * folder.  Returns 0, or -1 with *cause set.
 */
static int
policy_merge_ctx_fill(struct policy_ctx *ctx, char *ws, char **cause)
{
	const char	*home;
	struct passwd	*pw;

	if ((home = getenv("HOME")) == NULL || home[0] != '/') {
		if ((pw = getpwuid(getuid())) == NULL || pw->pw_dir == NULL ||
		    pw->pw_dir[0] != '/') {
			free(ws);
			xasprintf(cause, "cannot tell the home folder: set "
			    "HOME to an absolute path");
			return -1;
		}
		home = pw->pw_dir;
	}
	ctx->pc_workspace = ctx->pc_owned[0] = ws;
	ctx->pc_home = ctx->pc_owned[1] = xstrdup(home);
	return 0;
}

/*
 * Fills ctx for a run in workspace (NULL: the current folder), which must
 * exist; it is made absolute.  Returns 0, or -1 with *cause set.
 */
int
policy_merge_ctx_init(struct policy_ctx *ctx, const char *workspace,
    char **cause)
{
	char	*ws;

	*cause = NULL;
	memset(ctx, 0, sizeof(*ctx));
	if ((ws = realpath(workspace != NULL ? workspace : ".", NULL)) ==
	    NULL) {
		xasprintf(cause, "workspace %s: %s",
		    workspace != NULL ? workspace : ".", strerror(errno));
		return -1;
	}
	return policy_merge_ctx_fill(ctx, ws, cause);
}

/*
 * The same for the layers' workspace, resolved again unless the caller
 * resolved it already (ly_real: cordon run).
 */
static int
policy_merge_ctx_layers(struct policy_ctx *ctx, const struct policy_layers *pl,
    char **cause)
{
	if (!pl->ly_real || pl->ly_workspace == NULL)
		return policy_merge_ctx_init(ctx, pl->ly_workspace, cause);
	*cause = NULL;
	memset(ctx, 0, sizeof(*ctx));
	return policy_merge_ctx_fill(ctx, xstrdup(pl->ly_workspace), cause);
}

void
policy_merge_ctx_clear(struct policy_ctx *ctx)
{
	free(ctx->pc_owned[0]);
	free(ctx->pc_owned[1]);
	memset(ctx, 0, sizeof(*ctx));
}

/* Merges the trusted layer at path into p; an error is added to errors. */
static void
policy_merge_file(struct policy *p, const char *path,
    const struct policy_ctx *ctx, struct errlist *errors)
{
	struct policy	*layer;
	char		*why;

	log_info("policy: reading %s", path);
	if ((layer = policy_load_file(path, ctx, &why)) == NULL) {
		errlist_add(errors, "%s", why);
		free(why);
		return;
	}
	policy_merge(p, layer);
	policy_free(layer);
}

/*
 * Merges the trusted layer at path into p when the file exists; any
 * other error is added to errors.
 */
static void
policy_merge_optional(struct policy *p, const char *path,
    const struct policy_ctx *ctx, struct errlist *errors)
{
	struct stat	 st;

	if (lstat(path, &st) == -1 && errno == ENOENT) {
		log_debug("%s: no %s", __func__, path);
		return;
	}
	policy_merge_file(p, path, ctx, errors);
}

/* The system's and the user's policies, when they exist, into p. */
static void
policy_merge_host(struct policy *p, const struct policy_ctx *ctx,
    struct errlist *errors)
{
	const char	*env;
	char		*path;

	if ((env = getenv("CORDON_SYSTEM_POLICY")) == NULL)
		env = SYSTEM_POLICY;
	if (*env != '\0')
		policy_merge_optional(p, env, ctx, errors);
	if ((env = getenv("XDG_CONFIG_HOME")) != NULL && env[0] == '/')
		xasprintf(&path, "%s/cordon/policy.json", env);
	else
		xasprintf(&path, "%s/.config/cordon/policy.json",
		    ctx->pc_home);
	policy_merge_optional(p, path, ctx, errors);
	free(path);
}

/*
 * The policy of agent profile name (policy_agent.c) into p, as a trusted
 * layer; an error, or a second --agent in pl, is added to errors.
 */
static void
policy_merge_agent(struct policy *p, const char *name,
    const struct policy_layers *pl, const struct policy_ctx *ctx,
    struct errlist *errors)
{
	struct policy	*layer;
	char		*why;

	if (strcmp(policy_agent_of(pl), name) != 0) {
		errlist_add(errors, "--agent %s: one --agent per run (%s is "
		    "given too)", name, policy_agent_of(pl));
		return;
	}
	log_info("policy: agent profile %s", name);
	if ((layer = policy_agent_load(name, ctx, NULL, &why)) == NULL) {
		errlist_add(errors, "%s", why);
		free(why);
		return;
	}
	policy_merge(p, layer);
	policy_free(layer);
}

/* The --policy files and flags of pl, in the order given, into p. */
static void
policy_merge_args(struct policy *p, const struct policy_layers *pl,
    const struct policy_ctx *ctx, struct errlist *errors)
{
	const struct policy_flag *pf;
	const char		*flag, *arg;
	char			*why;
	size_t			 i;

	for (i = 0; i + 1 < pl->ly_nargs; i += 2) {
		flag = pl->ly_args[i];
		arg = pl->ly_args[i + 1];
		if ((pf = policy_flag_named(flag)) != NULL &&
		    pf->pf_adds == PFLAG_FILE)
			policy_merge_file(p, arg, ctx, errors);
		else if (pf != NULL && pf->pf_adds == PFLAG_AGENT)
			policy_merge_agent(p, arg, pl, ctx, errors);
		else if (policy_merge_flag(p, flag, arg, ctx, &why) == -1) {
			errlist_add(errors, "%s", why);
			free(why);
		}
	}
}

/*
 * The untrusted workspace layer of ctx's workspace (ctx is marked
 * untrusted), or NULL when it has none or it does not load (the error is
 * added to errors).
 */
static struct policy *
policy_load_workspace(struct policy_ctx *ctx, struct errlist *errors)
{
	struct policy	*layer;
	struct stat	 st;
	char		*path, *why;

	xasprintf(&path, "%s/%s", ctx->pc_workspace, WORKSPACE_POLICY);
	ctx->pc_untrusted = true;
	if (lstat(path, &st) == -1 && errno == ENOENT) {
		log_debug("%s: no %s", __func__, path);
		free(path);
		return NULL;
	}
	log_info("policy: reading %s (the workspace layer: it can only "
	    "tighten)", path);
	if ((layer = policy_load_file(path, ctx, &why)) == NULL) {
		errlist_add(errors, "%s", why);
		free(why);
	}
	free(path);
	return layer;
}

/*
 * Builds the merged policy from every layer (see the top of this file).
 * When trustedp is not NULL it gets the policy before the workspace layer,
 * for explaining what the workspace took away.  Returns the policy, or
 * NULL with every error in *cause (caller frees).
 */
struct policy *
policy_merge_layers(const struct policy_layers *pl, struct policy **trustedp,
    char **cause)
{
	struct policy_ctx	 ctx;
	struct policy		*p = NULL, *layer;
	struct errlist		 errors = { 0 };
	char			*why;

	*cause = NULL;
	if (trustedp != NULL)
		*trustedp = NULL;
	if (policy_merge_ctx_layers(&ctx, pl, cause) == -1)
		return NULL;

	if (pl->ly_only)
		p = policy_new();
	else if ((p = policy_merge_defaults(&ctx, &why)) == NULL) {
		errlist_add(&errors, "%s", why);
		free(why);
		goto out;
	}
	if (!pl->ly_only)
		policy_merge_host(p, &ctx, &errors);
	policy_merge_args(p, pl, &ctx, &errors);
	if (errors.el_count != 0)
		goto out;
	if (trustedp != NULL) {
		*trustedp = policy_new();
		policy_merge(*trustedp, p);
	}

	/* Last, the untrusted workspace layer, which only tightens. */
	if (!pl->ly_only && !pl->ly_no_workspace &&
	    (layer = policy_load_workspace(&ctx, &errors)) != NULL) {
		policy_merge_narrow(p, layer);
		policy_free(layer);
	}
out:
	policy_merge_ctx_clear(&ctx);
	if (errors.el_count != 0) {
		policy_free(p);
		if (trustedp != NULL) {
			policy_free(*trustedp);
			*trustedp = NULL;
		}
		*cause = errlist_steal(&errors);
		return NULL;
	}
	return p;
}

/* As plist_intersect, but a dst no layer set takes ws as it is. */
static void
policy_plist_meet(struct plist *dst, const struct plist *ws, enum meet how)
{
	if (dst->pl_set)
		policy_plist_intersect(dst, ws, how);
	else
		policy_plist_append(dst, ws);
}

/*
 * The rules a run sends to an operator's proxy (cordon run
 * --proxy-socket), which narrows its own policy with them as with a
 * workspace layer.  Deny: every entry of merged (the run's policy from
 * pl), so that what `policy explain` refuses, the proxy refuses.  Allow
 * and allow_cidrs: those of the run's flags (--allow-domain,
 * --allow-cidr) met with the workspace layer's, as that layer meets the
 * trusted ones; the trusted policy files' are left out, the operator's
 * policy stands for them.  Only p_allow, p_deny and p_cidrs are filled,
 * with pl_set where there is something to send (an empty allow list that
 * was set admits nothing).  Returns the policy, or NULL with every error
 * in *cause (caller frees).
 */
struct policy *
policy_merge_layers_narrowing(const struct policy_layers *pl,
    const struct policy *merged, char **cause)
{
	const struct policy_flag *pf;
	struct policy_ctx	 ctx;
	struct policy		*p, *ws = NULL;
	struct errlist		 errors = { 0 };
	char			*why;
	size_t			 i;

	*cause = NULL;
	if (policy_merge_ctx_layers(&ctx, pl, cause) == -1)
		return NULL;
	p = policy_new();
	for (i = 0; i + 1 < pl->ly_nargs; i += 2) {
		pf = policy_flag_named(pl->ly_args[i]);
		if (pf != NULL && (pf->pf_adds == PFLAG_ALLOW ||
		    pf->pf_adds == PFLAG_CIDR) && policy_merge_flag(p,
		    pl->ly_args[i], pl->ly_args[i + 1], &ctx, &why) == -1) {
			errlist_add(&errors, "%s", why);
			free(why);
		}
	}
	if (!pl->ly_only && !pl->ly_no_workspace &&
	    (ws = policy_load_workspace(&ctx, &errors)) != NULL) {
		policy_plist_meet(&p->p_allow, &ws->p_allow, MEET_PATTERN);
		policy_plist_meet(&p->p_cidrs, &ws->p_cidrs, MEET_CIDR);
		policy_free(ws);
	}
	policy_plist_append(&p->p_deny, &merged->p_deny);
	p->p_deny.pl_set = p->p_deny.pl_n > 0;
	policy_merge_ctx_clear(&ctx);
	if (errors.el_count != 0) {
		policy_free(p);
		*cause = errlist_steal(&errors);
		return NULL;
	}
	return p;
}
