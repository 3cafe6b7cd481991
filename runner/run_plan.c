/*
 * run_plan.c: a run's mount plan (fsplan.c) and what follows from it:
 * the read-only paths brought back under the private /tmp and /run, the
 * scratch layers, the token files the plan hides, --keep's folders
 * (keepdir.c) and Landlock's rules.  Decided outside, before the clone;
 * nothing is mounted here.  Every path is resolved through the plan's
 * cache (fscache.c, fspath_real): as the plan saw the tree, and each
 * lstat and readlink asked once.
 *
 * Runs in: cordon run on the host, before the clone.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fscache.h"
#include "plan/fspath.h"
#include "policies/policy.h"
#include "runner/run_prep.h"
#include "runner/runner.h"
#include "session/sess.h"

/*
 * The private /tmp, /var/tmp, /run and $XDG_RUNTIME_DIR cover the host's;
 * a read_only path of a trusted layer below one of them (tools in /tmp,
 * say) is brought back in, read-only.  The planner leaves read-only
 * paths outside writable roots out (the root is read-only already), so
 * they are added here.  The workspace layer cannot do this: what it
 * names stays under the cover.
 */
static void
run_plan_reveal(const struct run *run, struct fsplan *plan, struct fscache *fc)
{
	const char		*covers[] = { "/tmp", "/var/tmp", "/run",
				    run->r_sb.sb_view.sv_runtime_dir };
	const struct pitem	*it;
	struct fs_op		*op;
	struct stat		 st;
	char			 real[PATH_MAX];
	size_t			 i, j, c;
	bool			 done;

	for (i = 0; i < run->r_policy->p_read_only.pl_n; i++) {
		it = &run->r_policy->p_read_only.pl_v[i];
		/* real holds no link: its lstat is its stat. */
		if (it->pi_untrusted || fspath_real(fc, it->pi_text, real) ==
		    NULL || fscache_lstat(fc, real, &st) == -1)
			continue;
		for (c = 0; c < nitems(covers); c++)
			if (covers[c] != NULL && path_is_below(real, covers[c]))
				break;
		if (c == nitems(covers))
			continue;
		for (done = false, j = 0; j < plan->fp_nops && !done; j++)
			done = path_is_below(real, plan->fp_ops[j].fo_path);
		if (done)
			continue;	/* below an op already: planned */
		plan->fp_ops = xreallocarray(plan->fp_ops, plan->fp_nops + 1,
		    sizeof(*plan->fp_ops));
		op = &plan->fp_ops[plan->fp_nops++];
		memset(op, 0, sizeof(*op));
		op->fo_path = xstrdup(real);
		op->fo_why = xstrdup(it->pi_from);
		op->fo_kind = FS_RO;
		op->fo_dir = S_ISDIR(st.st_mode);
	}
}

/* An op kind as a bit, for run_plan_over. */
#define RUN_OP(kind)	(1U << (kind))

/* The plan's op at or above path of one of the kinds, or NULL. */
static const struct fs_op *
run_plan_over(const struct fsplan *plan, const char *path, unsigned int kinds)
{
	size_t	 i;

	for (i = 0; i < plan->fp_nops; i++)
		if ((kinds & RUN_OP(plan->fp_ops[i].fo_kind)) &&
		    path_is_below(path, plan->fp_ops[i].fo_path))
			return &plan->fp_ops[i];
	return NULL;
}

/* HOME resolved into home (PATH_MAX bytes), or NULL. */
static char *
run_plan_home(struct fscache *fc, char *home)
{
	const char	*h = getenv("HOME");

	if (h == NULL || h[0] != '/')
		return NULL;
	return fspath_real(fc, h, home);
}

/*
 * The folder the scratch layer covers (mount.c, scratch.c): the home
 * folder, resolved into home, unless a writable root already covers it,
 * a read_only rule keeps it so or a deny rule hides it; NULL when there
 * is none.
 */
static const char *
run_plan_scratch(const struct fsplan *plan, char *home, struct fscache *fc)
{
	struct stat	 st;

	if (run_plan_home(fc, home) == NULL ||
	    strcmp(home, "/") == 0 || fscache_lstat(fc, home, &st) == -1 ||
	    !S_ISDIR(st.st_mode) || run_plan_over(plan, home,
	    RUN_OP(FS_RW) | RUN_OP(FS_RO) | RUN_OP(FS_HIDE_DIR)) != NULL)
		return NULL;
	return home;
}

/*
 * The folders that may be scratch layers, for the plan (fi_scratch):
 * the home folder, resolved into home, and for root the system's
 * (scratch_system_dirs).  cand holds at most 5.
 */
static void
run_plan_candidates(struct run *run, char *home, const char **cand,
    struct fsplan_in *fin)
{
	size_t		 i, n = 0;

	if (run_plan_home(fin->fi_cache, home) != NULL &&
	    strcmp(home, "/") != 0)
		cand[n++] = home;
	scratch_system_dirs(run->r_sysdirs, &run->r_nsysdirs);
	for (i = 0; i < run->r_nsysdirs; i++)
		cand[n++] = run->r_sysdirs[i];
	fin->fi_scratch = cand;
	fin->fi_nscratch = n;
}

/*
 * A run as root: apt's folders are scratch layers too (apt-get update
 * and download write there, and the host's stay as they were), unless a
 * rule of the plan covers them; and so are the system's folders
 * (scratch_system).
 */
static void
run_plan_sysscratch(struct run *run, const struct fsplan *plan)
{
	static const char *const apt[] = { "/var/lib/apt", "/var/cache/apt" };
	struct stat	 st;
	size_t		 i, j;
	bool		 covered;

	if (run->r_sb.sb_cmd.sc_uid != 0)
		return;
	for (i = 0; i < nitems(apt); i++) {
		if (lstat(apt[i], &st) == -1 || !S_ISDIR(st.st_mode))
			continue;
		for (covered = false, j = 0; j < plan->fp_nops && !covered;
		    j++)
			covered = plan->fp_ops[j].fo_kind != FS_SKIP &&
			    (path_is_below(apt[i], plan->fp_ops[j].fo_path) ||
			    path_is_below(plan->fp_ops[j].fo_path, apt[i]));
		if (!covered)
			run->r_sb.sb_view.sv_sysscratch[
			    run->r_sb.sb_view.sv_nsysscratch++] = apt[i];
	}
	scratch_system(plan, run->r_sysdirs, run->r_nsysdirs,
	    run->r_sb.sb_view.sv_syslayer,
	    &run->r_sb.sb_view.sv_nsyslayer);
}

/*
 * The tools' token files of the home: those run_secrets_prepare() copied
 * are bound over the plan's hiding of them (tf_bound); the others that exist
 * and that the plan hides are said in the summary (tally_hidden):
 * "~/.npmrc (npm)".
 */
static void
run_plan_hidden(struct run *run, const struct fsplan *plan, struct fscache *fc)
{
	static const char *const cfg[][2] = {
		{ ".npmrc", "~/.npmrc (npm)" },
		{ ".pypirc", "~/.pypirc (twine)" },
		{ ".netrc", "~/.netrc (curl, git, pip)" },
		{ ".git-credentials", "~/.git-credentials (git)" },
		{ ".docker/config.json", "~/.docker/config.json (docker)" },
		{ ".cargo/credentials.toml", "~/.cargo/credentials.toml "
		    "(cargo)" },
	};
	const struct fs_op *op;
	struct secret_file *tf;
	struct stat	 st;
	char		 home[PATH_MAX], path[PATH_MAX], real[PATH_MAX];
	size_t		 i, j;

	for (i = 0; i < run->r_sb.sb_view.sv_nsecrets; i++) {
		tf = &run->r_sb.sb_view.sv_secrets[i];
		op = run_plan_over(plan, tf->tf_path, RUN_OP(FS_HIDE_FILE));
		tf->tf_bound = op != NULL && strcmp(op->fo_path,
		    tf->tf_path) == 0;
	}
	if (run_plan_home(fc, home) == NULL)
		return;
	for (i = 0; i < nitems(cfg); i++) {
		if (snprintf(path, sizeof(path), "%s/%s", home, cfg[i][0]) >=
		    (int)sizeof(path) || fscache_lstat(fc, path, &st) == -1 ||
		    run_plan_over(plan, path, RUN_OP(FS_HIDE_FILE) |
		    RUN_OP(FS_HIDE_DIR)) == NULL ||
		    run->r_nhidden_cfg >= nitems(run->r_hidden_cfg))
			continue;
		for (j = 0; j < run->r_sb.sb_view.sv_nsecrets; j++)
			if (run->r_sb.sb_view.sv_secrets[j].tf_bound &&
			    fspath_real(fc, path, real) != NULL &&
			    strcmp(real,
			    run->r_sb.sb_view.sv_secrets[j].tf_path) == 0)
				break;
		if (j == run->r_sb.sb_view.sv_nsecrets)
			run->r_hidden_cfg[run->r_nhidden_cfg++] = cfg[i][1];
	}
}

/*
 * Whether top would show inside: under the workspace or a path of the
 * policy's write or read_only lists (--write /tmp).
 */
static bool
run_plan_shows(const struct policy *p, const char *ws, const char *top,
    struct fscache *fc)
{
	const struct plist	*lists[] = { &p->p_write, &p->p_read_only };
	const char		*path;
	char			 real[PATH_MAX];
	size_t			 i, j;
	bool			 shown;

	shown = ws != NULL && path_is_below(top, ws);
	for (i = 0; i < nitems(lists) && !shown; i++)
		for (j = 0; j < lists[i]->pl_n && !shown; j++) {
			path = lists[i]->pl_v[j].pi_text;
			shown = (fspath_real(fc, path, real) != NULL &&
			    path_is_below(top, real)) || path_is_below(top,
			    path);
		}
	return shown;
}

/*
 * A writable path inside top, the folder of the user's sessions: it
 * cannot be hidden under what it shows.  Says which, why and the fix;
 * returns -1.  Else 0.
 */
static int
run_plan_inside(const struct policy *p, const char *ws, const char *top,
    struct fscache *fc)
{
	const char	*path, *from;
	char		 real[PATH_MAX];
	size_t		 j;

	for (j = 0; j <= p->p_write.pl_n; j++) {
		path = j < p->p_write.pl_n ? p->p_write.pl_v[j].pi_text : ws;
		from = j < p->p_write.pl_n ? p->p_write.pl_v[j].pi_from :
		    "the workspace";
		if (path == NULL || !((fspath_real(fc, path, real) != NULL &&
		    path_is_below(real, top)) || path_is_below(path, top)))
			continue;
		log_warnx("run: %s (%s) is inside %s, the folder of cordon's "
		    "sessions: a command that may write there could put a "
		    "socket of its own in a session's place; nothing was run",
		    path, from != NULL ? from : "--write", top);
		log_warnx("hint: write elsewhere: a sandbox needs nothing of "
		    "that folder");
		return -1;
	}
	return 0;
}

/*
 * The folders of the user's sessions (sessdir.c), hidden when the host's
 * would show inside (run_plan_shows).  A command that could write there
 * could put a socket of its own in place of a session's (or rename the
 * folder and make another), and the owner's next client would pass it
 * the environment before the policy's scrubbing, the client's stdio,
 * and take a forged exit status from it: its uid is the owner's.  Both
 * places a client may use are hidden, $XDG_RUNTIME_DIR's and /tmp's: a
 * client's environment need not be this run's (sessdir_tops).  Each is
 * made first if missing, so that the command cannot make it, and hidden
 * whole: a mount point cannot be renamed.  Elsewhere the private /tmp
 * and $XDG_RUNTIME_DIR cover them.  A writable path inside one would
 * show it under the hiding: the run is refused (run_plan_inside).
 * Paths are resolved through the cache fc.  Returns 0, or -1 having
 * said why.
 */
static int
run_plan_sessions(struct policy *p, const char *ws, struct fscache *fc)
{
	struct pitem	*it;
	char		 tops[2][256], dir[PATH_MAX], cause[1024];
	int		 i, n;

	n = sessdir_tops(tops);
	for (i = 0; i < n; i++) {
		if (run_plan_inside(p, ws, tops[i], fc) == -1)
			return -1;
		if (!run_plan_shows(p, ws, tops[i], fc))
			continue;
		/* It may make folders: what fc knew may hold no more. */
		fscache_clear(fc);
		/* Not the user's (another's, squatted): none of theirs. */
		if (sessdir_in(tops[i], dir, sizeof(dir), true, cause,
		    sizeof(cause)) == -1)
			continue;
		it = policy_plist_add(&p->p_hide);
		it->pi_text = xstrdup(tops[i]);
		it->pi_from = xstrdup("protected: cordon's sessions");
	}
	return 0;
}

/*
 * cordon's ssh-agent is on when the user has a working one and the
 * policy allows some host: returns the user's SSH_AUTH_SOCK, and the
 * known_hosts files to show inside in known (NULL when off).
 */
static const char *
run_plan_agent(char *known[2], struct fscache *fc)
{
	const char	*sock = getenv("SSH_AUTH_SOCK");
	char		 home[PATH_MAX], *cause;

	if (sock == NULL || run_plan_home(fc, home) == NULL)
		return NULL;
	if (!agent_usable(sock, &cause)) {
		log_info("run: no ssh-agent for the sandbox: %s", cause);
		free(cause);
		return NULL;
	}
	xasprintf(&known[0], "%s/.ssh/known_hosts", home);
	xasprintf(&known[1], "%s/.ssh/known_hosts2", home);
	return sock;
}

/* Landlock's rules: read everywhere, write below the writable places. */
static void
run_plan_landlock(struct run *run)
{
	static const char *const writable[] = {
		"/tmp", "/var/tmp", "/dev", "/run", "/var/run"
	};
	const struct sandbox_view *sv = &run->r_sb.sb_view;
	const struct fsplan	*plan = sv->sv_plan;
	struct landlock_rule	*ll;
	size_t			 i, n = 0;

	ll = xcalloc(plan->fp_nops + nitems(writable) + 3 +
	    nitems(sv->sv_sysscratch) + nitems(sv->sv_syslayer), sizeof(*ll));
	ll[n++].lr_path = "/";
	for (i = 0; i < nitems(writable); i++) {
		ll[n].lr_path = writable[i];
		ll[n++].lr_write = true;
	}
	if (sv->sv_runtime_dir != NULL) {
		ll[n].lr_path = sv->sv_runtime_dir;
		ll[n++].lr_write = true;
	}
	/* Writes there land in the scratch layer, not on the host. */
	if (sv->sv_scratch != NULL) {
		ll[n].lr_path = sv->sv_scratch;
		ll[n++].lr_write = true;
	}
	for (i = 0; i < sv->sv_nsysscratch; i++) {
		ll[n].lr_path = sv->sv_sysscratch[i];
		ll[n++].lr_write = true;
	}
	for (i = 0; i < sv->sv_nsyslayer; i++) {
		ll[n].lr_path = sv->sv_syslayer[i];
		ll[n++].lr_write = true;
	}
	for (i = 0; i < plan->fp_nops; i++)
		if (plan->fp_ops[i].fo_kind == FS_RW) {
			ll[n].lr_path = plan->fp_ops[i].fo_path;
			ll[n++].lr_write = true;
		}
	run->r_sb.sb_cmd.sc_ll = ll;
	run->r_sb.sb_cmd.sc_nll = n;
}

/*
 * The plan, from the policy's filesystem lists and what is on disk, and
 * what follows from it; the agent's known_hosts files are shown inside
 * when cordon's ssh-agent is on.  What it makes rp owns; the cache fc
 * holds what was learnt of the tree on the way.  Returns 0, or -1 having
 * said why.
 */
static int
run_plan_cached(struct run_prep *rp, const struct run_opts *o,
    struct fscache *fc)
{
	struct run		*run = &rp->rp_run;
	struct policy		*p = rp->rp_policy;
	struct fsplan_in	 fin;
	const char		*cand[5];
	char			*cause, *msg;

	run_secrets_prepare(run, p, run->r_sb.sb_net.sn_mode == NET_PROXY &&
	    rp->rp_net.net_socket == NULL);
	trust_hide_ca(p);
	if (run_plan_sessions(p, rp->rp_workspace, fc) == -1)
		return -1;
	memset(&fin, 0, sizeof(fin));
	fin.fi_policy = p;
	fin.fi_workspace = rp->rp_workspace;
	fin.fi_path = getenv("PATH");
	fin.fi_cache = fc;
	run_plan_candidates(run, rp->rp_home, cand, &fin);
	if (run->r_sb.sb_net.sn_mode == NET_PROXY &&
	    rp->rp_net.net_socket == NULL && p->p_allow.pl_n > 0 &&
	    (run->r_sb.sb_view.sv_agent_real =
	    run_plan_agent(rp->rp_known, fc)) != NULL) {
		fin.fi_show = (const char *const *)rp->rp_known;
		fin.fi_nshow = 2;
		rp->rp_ep.ep_agent_sock = RUN_AGENT_SOCK;
	}
	if (fsplan_build(&fin, &rp->rp_plan, &cause) == -1) {
		xasprintf(&msg, "run: %s", cause);
		free(cause);
		log_warnx_lines(msg);
		return -1;
	}
	run->r_sb.sb_view.sv_plan = &rp->rp_plan;
	run_plan_reveal(run, &rp->rp_plan, fc);
	run->r_sb.sb_view.sv_scratch = run_plan_scratch(&rp->rp_plan,
	    rp->rp_home, fc);
	run_plan_sysscratch(run, &rp->rp_plan);
	run_plan_hidden(run, &rp->rp_plan, fc);
	if (keepdir_plan(run, o, rp->rp_workspace, &rp->rp_agent, fc) == -1)
		return -1;
	run_plan_landlock(run);
	return 0;
}

/*
 * The plan and what follows from it (run_plan_cached), through a cache
 * of the tree that lives as long as the plan is made (fscache.c).
 */
int
run_plan(struct run_prep *rp, const struct run_opts *o)
{
	struct fscache	*fc = fscache_new();
	int		 rc;

	rc = run_plan_cached(rp, o, fc);
	fscache_free(fc);
	return rc;
}
