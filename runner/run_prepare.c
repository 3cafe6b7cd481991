/*
 * run_prepare.c: a run, decided before the sandbox exists: the policy,
 * the mount plan (run_plan.c), the trust bundle, the environment, the
 * host Unix sockets it may reach; then the seccomp program and the
 * placeholders, just before run_exec().  Whatever can fail is done here,
 * where failing is cheap and the message is plain.  A struct run_prep
 * owns all of it, the policy too until run_exec() takes it, and
 * run_prepare_clear() frees it, in one place.
 *
 * Runs in: cordon run on the host, before the clone.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "notify/notify.h"
#include "notify/unixroute.h"
#include "policies/policy.h"
#include "runner/run_host.h"
#include "runner/run_prep.h"
#include "runner/runner.h"

extern char **environ;

/*
 * The current folder as the workspace, when it is / or the home folder:
 * all of it would be writable, dotfiles and all, and that is rarely what
 * running cordon there meant.  Says so, with the flag that means it.
 */
static bool
run_prepare_wide(const char *workspace)
{
	const char	*home = getenv("HOME");
	char		 real[PATH_MAX];
	bool		 is_home;

	is_home = home != NULL && home[0] == '/' && realpath(home, real) !=
	    NULL && strcmp(real, workspace) == 0;
	if (!is_home && strcmp(workspace, "/") != 0)
		return false;
	log_warnx("run: the workspace would be %s, %s, and all of it "
	    "writable; run cordon from a project's folder, or pass "
	    "--workspace %s to mean it (shell startup files, ~/.ssh and "
	    "the other persistence points stay read-only even then)",
	    workspace, is_home ? "your home folder" : "the root folder",
	    workspace);
	return true;
}

/*
 * The folders of --report PATH and of --log FILE (the run's own proxy
 * writes it), opened now, beneath the workspace when they are in it:
 * cordon writes them while or after the command ran, and the command
 * may have reshaped the workspace (wspath.c).  Returns 0, or -1 having
 * said why.
 */
static int
run_prepare_paths(struct run_net *net, const char *ws, const char *cwd)
{
	char	*cause, *msg;

	if (net->net_report != NULL && strncmp(net->net_report, "fd:", 3) !=
	    0 && wspath_open(&net->net_report_at, ws, cwd, net->net_report,
	    "--report", &cause) == -1)
		goto fail;
	if (net->net_log != NULL && strcmp(net->net_log, "-") != 0 &&
	    net->net_socket == NULL && wspath_open(&net->net_log_at, ws, cwd,
	    net->net_log, "--log", &cause) == -1)
		goto fail;
	return 0;
fail:
	xasprintf(&msg, "run: %s", cause);
	free(cause);
	log_warnx_lines(msg);
	log_warnx("run: nothing run");
	return -1;
}

/*
 * network.host_ports, for the capture to take to the proxy: a program
 * reaches them on the sandbox's own loopback, as on the host.  Without
 * the capture they could not be reached: that is an error, not a quiet
 * nothing.  Returns 0, or -1 having said why.
 */
static int
run_prepare_host_ports(struct run *run, const struct policy *p)
{
	const struct plist	*pl = &p->p_host_ports;
	size_t			 i;

	if (pl->pl_n == 0 || run->r_sb.sb_net.sn_mode != NET_PROXY)
		return 0;
	if (!run->r_sb.sb_net.sn_capture) {
		log_warnx("run: network.host_ports (%s, from %s) needs the "
		    "capture, and network.capture is \"off\"; nothing run",
		    pl->pl_v[0].pi_text, pl->pl_v[0].pi_from);
		log_warnx("hint: set \"capture\": \"on\", or drop "
		    "network.host_ports");
		return -1;
	}
	run->r_sb.sb_net.sn_host_ports = xreallocarray(NULL, pl->pl_n,
	    sizeof(*run->r_sb.sb_net.sn_host_ports));
	for (i = 0; i < pl->pl_n; i++) {
		run->r_sb.sb_net.sn_host_ports[i].nr_lo =
		    (uint16_t)pl->pl_v[i].pi_port;
		run->r_sb.sb_net.sn_host_ports[i].nr_hi =
		    (uint16_t)pl->pl_v[i].pi_port_hi;
	}
	run->r_sb.sb_net.sn_nhost_ports = pl->pl_n;
	return 0;
}

/*
 * With --proxy-socket, the run's network rules travel to the operator's
 * proxy with each connection (bridge.c, conn.c), which can only narrow
 * its own policy with them: its deny entries, and the allow lists of its
 * flags and workspace layer (policy_merge_layers_narrowing), as a JSON policy
 * of "allow", "deny" and "allow_cidrs" (no list files: their entries).
 * Sets *text to it, or to NULL when there are none; returns 0, or -1
 * with *cause set.
 */
static int
run_prepare_narrowing(const struct policy_layers *layers,
    const struct policy *merged, char **text, char **cause)
{
	static const char *const keys[] = { "allow", "deny", "allow_cidrs" };
	struct policy		*n;
	const struct plist	*pl;
	json_t			*net, *list, *doc;
	size_t			 i, j;

	*text = NULL;
	if ((n = policy_merge_layers_narrowing(layers, merged, cause)) == NULL)
		return -1;
	net = json_object();
	for (i = 0; i < nitems(keys); i++) {
		pl = i == 0 ? &n->p_allow : i == 1 ? &n->p_deny : &n->p_cidrs;
		if (!pl->pl_set)
			continue;
		list = json_array();
		for (j = 0; j < pl->pl_n; j++)
			json_array_append_new(list,
			    json_string(pl->pl_v[j].pi_text));
		json_object_set_new(net, keys[i], list);
	}
	policy_free(n);
	if (json_object_size(net) == 0) {
		json_decref(net);
		return 0;
	}
	doc = json_pack("{s:i, s:o}", "version", POLICY_VERSION, "network",
	    net);
	*text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return 0;
}

/*
 * The command's name for the egress log: the last part of argv[0], kept
 * to letters, digits, '.', '_', '+' and '-' (others become '_').
 */
static void
run_prepare_name(const char *argv0, char *out, size_t size)
{
	const char	*base = strrchr(argv0, '/');
	size_t		 i;

	base = base != NULL ? base + 1 : argv0;
	for (i = 0; base[i] != '\0' && i + 1 < size; i++)
		out[i] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST"
		    "UVWXYZ0123456789._+-", base[i]) != NULL ? base[i] : '_';
	out[i] = '\0';
}

/* The workspace: given, or where we are; resolved, a folder. */
static int
run_prepare_workspace(struct run_prep *rp, const struct run_opts *o)
{
	const char	*ws = o->ro_ws != NULL ? o->ro_ws : o->ro_cwd;

	if (realpath(ws, rp->rp_workspace) == NULL) {
		log_warn("run: the workspace %s", ws);
		return -1;
	}
	if (o->ro_ws == NULL && run_prepare_wide(rp->rp_workspace))
		return -1;
	rp->rp_layers.ly_workspace = rp->rp_workspace;
	rp->rp_layers.ly_real = true;
	return run_prepare_paths(&rp->rp_net, rp->rp_workspace, o->ro_cwd);
}

/*
 * The policy's tier (the system policy's, as a rule), when no --proxy
 * or --proxy-socket was given: the run goes there as with --proxy, with
 * the files it names.  Returns 0, or -1 having said why.
 */
static int
run_prepare_tier(struct run_prep *rp)
{
	const struct policy	*p = rp->rp_policy;
	struct run_net		*net = &rp->rp_net;
	const struct plist	*pl = &p->p_tier[POLICY_TIER_PROXY];
	int			 i;

	if (net->net_socket != NULL || pl->pl_n == 0 ||
	    rp->rp_run.r_sb.sb_net.sn_mode != NET_PROXY)
		return 0;
	for (i = 0; i < POLICY_TIER_N; i++) {
		if (p->p_tier[i].pl_n == 0) {
			log_warnx("run: the tier %s (from %s) has no "
			    "tier.%s; nothing run", pl->pl_v[0].pi_text,
			    pl->pl_v[0].pi_from, policy_tier_keys[i]);
			log_warnx("hint: the policy that names tier.proxy "
			    "names tier.client_cert, tier.client_key and "
			    "tier.proxy_ca with it");
			return -1;
		}
		rp->rp_tier[i] = xstrdup(p->p_tier[i].pl_v[0].pi_text);
	}
	net->net_socket = net->net_remote = rp->rp_tier[POLICY_TIER_PROXY];
	net->net_cert = rp->rp_tier[POLICY_TIER_CERT];
	net->net_key = rp->rp_tier[POLICY_TIER_KEY];
	net->net_ca = rp->rp_tier[POLICY_TIER_CA];
	return 0;
}

/*
 * The merged policy, owned by rp, and what the run takes from it at
 * once: the network mode, Unix sockets, the capture and its host ports.
 * Returns 0, or -1 having said why.
 */
static int
run_prepare_policy(struct run_prep *rp)
{
	struct run	*run = &rp->rp_run;
	struct policy	*p;
	char		*cause;

	if ((p = rp->rp_policy = policy_merge_layers(&rp->rp_layers, NULL,
	    &cause)) == NULL) {
		log_warnx_lines(cause);
		log_warnx("run: nothing run");
		return -1;
	}
	run->r_sb.sb_net.sn_mode = p->p_mode.ps_value;
	if (run_proxy_served(rp) == -1)
		return -1;
	if (run_prepare_tier(rp) == -1)
		return -1;
	run->r_unix = p->p_unix.ps_value == UNIX_ALLOW;
	run->r_sb.sb_net.sn_capture = run->r_sb.sb_net.sn_mode == NET_PROXY &&
	    policy_capture(p);
	if (run_prepare_host_ports(run, p) == -1)
		return -1;
	if (run->r_npublish > 0 && run->r_sb.sb_net.sn_mode == NET_HOST) {
		log_warnx("run: --publish: with network mode \"host\" the "
		    "command's servers are on the host's network already; "
		    "drop --publish");
		return -1;
	}
	return 0;
}

/*
 * --proxy-socket hands the run to an operator's proxy: what the run's
 * own proxy would have done and that one cannot is refused here.
 * Returns 0, or -1 having said why.
 */
static int
run_prepare_socket(struct run_prep *rp)
{
	const struct run_net	*net = &rp->rp_net;
	struct run		*run = &rp->rp_run;
	const struct policy	*p = rp->rp_policy;
	const struct pcred	*cr;
	char			*cause;
	size_t			 i;

	if (net->net_socket != NULL && run->r_sb.sb_net.sn_mode == NET_PROXY &&
	    run_prepare_narrowing(&rp->rp_layers, p,
	    &run->r_sb.sb_net.sn_narrow,
	    &cause) == -1) {
		log_warnx_lines(cause);
		log_warnx("run: the rules for --proxy-socket do not load, "
		    "nothing run");
		return -1;
	}
	/* Its harness's rules live on the channel: the proxy needs it. */
	run->r_sb.sb_net.sn_channel = net->net_socket != NULL &&
	    run->r_sb.sb_net.sn_mode == NET_PROXY &&
	    (net->net_control != NULL || net->net_ask);
	if (run->r_sb.sb_net.sn_narrow != NULL &&
	    strlen(run->r_sb.sb_net.sn_narrow) > PP2_NARROW_MAX) {
		log_warnx("run: the policy's network.deny entries and the "
		    "allow lists of the flags and the workspace policy come "
		    "to more than %d bytes, more than a connection to "
		    "--proxy-socket can carry; nothing run", PP2_NARROW_MAX);
		log_warnx("hint: move long deny lists to the operator's "
		    "policy, or drop --proxy-socket (the run's own proxy "
		    "reads them all)");
		return -1;
	}
	/* An entry that only pins its host asks the proxy for nothing. */
	for (cr = NULL, i = 0; cr == NULL && i < p->p_ncreds; i++)
		if (p->p_creds[i].cr_env != NULL)
			cr = &p->p_creds[i];
	if (net->net_socket != NULL && run->r_sb.sb_net.sn_mode == NET_PROXY &&
	    cr != NULL) {
		log_warnx("run: the policy has credentials (%s, from %s), but "
		    "--proxy-socket hands the run to an operator's proxy, "
		    "which cannot know their real values; nothing run",
		    cr->cr_env, cr->cr_host.pi_from != NULL ?
		    cr->cr_host.pi_from : "the policy");
		log_warnx("hint: drop --proxy-socket (cordon's own proxy swaps "
		    "them in), or drop the credentials entry");
		return -1;
	}
	if (net->net_socket != NULL && (net->net_dns != NULL ||
	    net->net_npins != 0 || net->net_log != NULL ||
	    net->net_upstream_ca != NULL)) {
		log_warnx("run: --dns, --resolve, --log and --upstream-ca belong "
		    "to the proxy; "
		    "with --proxy-socket, set them on the operator's proxy");
		return -1;
	}
	return 0;
}

/* The run's own fields: the command, who runs it, its id. */
static void
run_prepare_run(struct run_prep *rp, const struct run_opts *o)
{
	struct run	*run = &rp->rp_run;
	const char	*rd;

	run->r_sb.sb_cmd.sc_argv = o->ro_argv;
	run->r_sb.sb_cmd.sc_cwd = o->ro_cwd;
	run->r_workspace = rp->rp_workspace;
	run->r_policy = rp->rp_policy;
	run->r_sb.sb_cmd.sc_uid = getuid();
	run->r_sb.sb_cmd.sc_gid = getgid();
	run->r_sb.sb_cmd.sc_tty = isatty(0) || isatty(1) || isatty(2);
	run->r_session_opts = o->ro_session;
	if (o->ro_session != NULL)
		run->r_sb.sb_cmd.sc_tty = false;	/* each command its own */
	rd = getenv("XDG_RUNTIME_DIR");
	run->r_sb.sb_view.sv_runtime_dir = rd != NULL &&
	    rd[0] == '/' ? rd : NULL;
	/* A random id, in the egress log and the bridge's header. */
	if (str_random_hex(run->r_sb.sb_id, RUN_ID_LEN) == -1)
		fatal("run: getrandom");
	run_prepare_name(run->r_sb.sb_cmd.sc_argv[0], run->r_sb.sb_cmd.sc_name,
	    sizeof(run->r_sb.sb_cmd.sc_name));
}

/*
 * What the command holds: the phantom credentials, the CA bundle when
 * the proxy inspects, and the environment.  Returns 0, or -1 having
 * said why.
 */
static int
run_prepare_env(struct run_prep *rp)
{
	struct run	*run = &rp->rp_run;
	struct policy	*p = rp->rp_policy;
	char		*cause;

	if (run_proxy_env(rp) == -1)
		return -1;
	if (run->r_sb.sb_view.sv_nsysscratch > 0)
		rp->rp_ep.ep_apt_conf = RUN_APT_CONF;
	if ((run->r_sb.sb_cmd.sc_env = env_build(p, environ,
	    run->r_sb.sb_net.sn_mode == NET_PROXY ?
	    &rp->rp_ep : NULL, &cause)) == NULL) {
		log_warnx("run: %s", cause);
		free(cause);
		return -1;
	}
	run->r_env_dropped = env_dropped(p, environ);
	run->r_ep = run->r_sb.sb_net.sn_mode == NET_PROXY ? &rp->rp_ep : NULL;
	return 0;
}

/*
 * Unix sockets: every connect(2) judged by cordon run (notify.c), which
 * connects the sandbox's own sockets and the host's listed ones; moot
 * when every socket is allowed anyway.  cordon's ssh-agent is one more
 * route, added once run.c has made it.  A kernel without what the
 * connect thread needs denies them all, the sandbox's own too, unless
 * the run needs a host socket: then nothing runs.  Returns 0, or -1
 * having said why.
 */
static int
run_prepare_routes(struct run_prep *rp)
{
	struct run	*run = &rp->rp_run;
	char		*cause = NULL;

	run->r_sb.sb_view.sv_routes = &rp->rp_routes;
	run->r_unix_mode = SYSF_UNIX_ALLOW;
	if (run->r_unix)
		return 0;
	run->r_unix_mode = SYSF_UNIX_NOTIFY;
	if (unixroute_policy(&rp->rp_routes, rp->rp_policy, &rp->rp_plan,
	    &cause) == 0 && notify_probe(&cause) == 0)
		return 0;
	if (rp->rp_routes.ur_n == 0 &&
	    run->r_sb.sb_view.sv_agent_real == NULL &&
	    rp->rp_policy->p_sockets.pl_n == 0) {
		log_warnx("run: note: %s: the command's Unix sockets are all "
		    "refused (socket(2): EPERM), its own too", cause);
		free(cause);
		run->r_unix_mode = SYSF_UNIX_DENY;
		return 0;
	}
	log_warnx("run: %s", cause);
	if (rp->rp_routes.ur_n > 0)
		log_warnx("hint: drop filesystem.unix_sockets from the "
		    "policy to run without them");
	log_warnx("run: nothing run");
	free(cause);
	return -1;
}

/*
 * Decides the run of o into rp, which run_prepare_clear() frees after,
 * whatever this returns: 0, or -1 having said why.  Nothing is run yet;
 * --dry-run prints rp (run_print), run_prepare_exec() runs it.
 */
int
run_prepare(struct run_prep *rp, const struct run_opts *o)
{
	struct run	*run = &rp->rp_run;

	memset(rp, 0, sizeof(*rp));
	rp->rp_net = o->ro_net;
	rp->rp_net.net_report_at.w_dir = rp->rp_net.net_log_at.w_dir = -1;
	rp->rp_layers = o->ro_layers;
	rp->rp_ep.ep_port = RUN_BRIDGE_PORT;
	run->r_sb.sb_cmd.sc_seccomp = -1;
	run->r_sb.sb_cmd.sc_llfd = -1;
	run->r_sb.sb_cmd.sc_prog = NULL;
	run->r_sb.sb_pipes.sp_sync = run->r_sb.sb_pipes.sp_errfd = -1;
	run->r_sb.sb_pipes.sp_endfd = run->r_sb.sb_pipes.sp_pubfd = -1;
	run->r_sb.sb_pipes.sp_session = run->r_sb.sb_pipes.sp_ready = -1;
	run->r_sb.sb_cmd.sc_errfd = -1;
	run->r_sb.sb_cmd.sc_notifyfd = -1;
	run->r_npublish = o->ro_npublish;
	run->r_publish = o->ro_npublish > 0 ? o->ro_publish : NULL;

	if (rp->rp_net.net_ask && rp->rp_net.net_control == NULL) {
		log_warnx("run: --ask needs --control: it asks the harness on "
		    "that channel before the proxy refuses");
		return -1;
	}
	if (run_prepare_workspace(rp, o) == -1 ||
	    run_prepare_policy(rp) == -1 || run_prepare_socket(rp) == -1 ||
	    run_agent_prepare(rp, o) == -1)
		return -1;
	run_prepare_run(rp, o);
	if (run_plan(rp, o) == -1 || run_prepare_env(rp) == -1 ||
	    run_prepare_routes(rp) == -1)
		return -1;
	return 0;
}

/*
 * Said every time: these are weaker sandboxes, never quietly.  Returns
 * 0, or -1 when the kernel has no Landlock and no_landlock does not
 * allow that.
 */
static int
run_prepare_weaker(const struct run *run, bool no_landlock)
{
	if (run->r_sb.sb_net.sn_mode == NET_HOST)
		log_warnx("run: network mode host: the command uses the host's "
		    "network directly; its connections are neither filtered "
		    "nor logged");
	if (landlock_abi() == 0) {
		if (!no_landlock) {
			log_warnx("run: this kernel has no Landlock (Linux 5.13 "
			    "or later, with landlock in the lsm= list), the "
			    "sandbox's second filesystem layer; nothing run");
			log_warnx("hint: pass --allow-no-landlock to run with "
			    "the mount namespace alone");
			return -1;
		}
		log_warnx("run: no Landlock (--allow-no-landlock): the mount "
		    "namespace alone keeps writes inside the writable "
		    "folders");
	}
	return 0;
}

/*
 * The protected git configs, whose writes by the command cordon run
 * judges (gitwrite.c): with none, or a kernel without what the connect
 * thread needs, the command's rename over one fails as the mount makes
 * it (EBUSY), and the summary says so.
 */
static void
run_prepare_gitwrite(struct run_prep *rp)
{
	char	*cause;

	gitwrite_init(&rp->rp_gitwrite, &rp->rp_plan);
	if (rp->rp_gitwrite.gw_ncfgs == 0)
		return;
	if (notify_probe(&cause) == -1) {
		log_warnx("run: git config cannot be written inside: %s",
		    cause);
		free(cause);
		return;
	}
	rp->rp_run.r_gitwrite = &rp->rp_gitwrite;
}

/*
 * Runs what run_prepare() decided: the seccomp program's memfd, the
 * placeholders
 * and the guard's view of the writable roots, then run_exec(), which
 * takes the policy.  Returns the exit status for `cordon run`.
 */
int
run_prepare_exec(struct run_prep *rp, const struct run_opts *o)
{
	struct run	*run = &rp->rp_run;
	struct policy	*p;
	char		*cause;
	size_t		 i;

	run_prepare_gitwrite(rp);
	/* Its program is written after the clone (run_filter). */
	if ((run->r_sb.sb_cmd.sc_seccomp = sysfilter_memfd(&cause)) == -1) {
		log_warnx("run: %s", cause);
		free(cause);
		return RUN_EXIT_FAILURE;
	}
	if (run_prepare_weaker(run, o->ro_no_landlock) == -1)
		return RUN_EXIT_FAILURE;
	for (i = 0; i < rp->rp_plan.fp_nnotes; i++)
		log_warnx("run: note: %s", rp->rp_plan.fp_notes[i]);
	log_info("run: sandbox %s", run->r_sb.sb_id);

	if (guard_open(&rp->rp_guard, &rp->rp_plan, &cause) == -1 ||
	    block_prepare(&rp->rp_plan, &rp->rp_blocks, &rp->rp_guard,
	    &cause) == -1) {
		log_warnx("run: %s", cause);
		free(cause);
		return RUN_EXIT_FAILURE;
	}
	hostcfg_open(&rp->rp_guard, &rp->rp_plan);
	run->r_guard = &rp->rp_guard;
	/* The proxy's from here, or freed by run_exec: no longer ours. */
	p = rp->rp_policy;
	rp->rp_policy = NULL;
	return run_exec(run, p, &rp->rp_net);
}

/*
 * Frees what a run owns, the policy too unless run_exec() took it, and
 * removes the placeholders this run made; after run_prepare(), whatever
 * it returned.
 */
void
run_prepare_clear(struct run_prep *rp)
{
	struct run	*run = &rp->rp_run;
	size_t		 i;

	block_cleanup(&rp->rp_plan, &rp->rp_blocks);
	hostcfg_clear(&rp->rp_guard);
	guard_clear(&rp->rp_guard);
	gitwrite_clear(&rp->rp_gitwrite);	/* zeroed if never begun */
	if (run->r_sb.sb_cmd.sc_seccomp != -1)
		close(run->r_sb.sb_cmd.sc_seccomp);
	env_free(run->r_sb.sb_cmd.sc_env);
	free(run->r_env_dropped);
	for (i = 0; i < run->r_sb.sb_view.sv_nsecrets; i++)
		secrets_clear(&run->r_sb.sb_view.sv_secrets[i]);
	free(run->r_sb.sb_view.sv_secrets);
	run_proxy_env_clear(rp);
	free(run->r_sb.sb_cmd.sc_ll);
	free(run->r_sb.sb_net.sn_host_ports);
	unixroute_clear(&rp->rp_routes);
	for (i = 0; i < run->r_sb.sb_view.sv_nkeep; i++) {
		free(run->r_sb.sb_view.sv_keep[i].k_path);
		free(run->r_sb.sb_view.sv_keep[i].k_from);
	}
	free(run->r_sb.sb_view.sv_keep);
	keepdir_clear(run);
	fsplan_clear(&rp->rp_plan);
	free(rp->rp_known[0]);
	free(rp->rp_known[1]);
	free(run->r_sb.sb_net.sn_narrow);
	policy_agent_clear(&rp->rp_agent);
	wspath_clear(&rp->rp_net.net_report_at);
	wspath_clear(&rp->rp_net.net_log_at);
	for (i = 0; i < POLICY_TIER_N; i++)
		free(rp->rp_tier[i]);
	policy_free(rp->rp_policy);
}
