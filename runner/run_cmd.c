/*
 * run_cmd.c: `cordon run`, its options, and everything decided before
 * the sandbox exists: the policy, the mount plan, the environment, the
 * seccomp program.  Whatever can fail is done here, where failing is
 * cheap and the message is plain; --dry-run prints it and stops.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "policy.h"
#include "proxy.h"
#include "runner.h"
#include "util.h"
#include "xmalloc.h"

extern char **environ;

static void
run_usage(FILE *f)
{
	fprintf(f,
	    "usage: cordon run [--policy FILE]... [--allow-domain P]...\n"
	    "                  [--deny-domain P]... [--allow-cidr CIDR]...\n"
	    "                  [--resolve NAME:ADDR]... [--dns HOST[:PORT]]...\n"
	    "                  [--upstream-ca FILE]\n"
	    "                  [--network none|proxy|host] [--workspace DIR]\n"
	    "                  [--write PATH]... [--read-only PATH]...\n"
	    "                  [--deny-path PATH]... [--proxy-socket PATH]\n"
	    "                  [--log FILE] [--dry-run] [--quiet]\n"
	    "                  [--allow-no-landlock] [--report PATH|fd:N]\n"
	    "                  [--control PATH|fd:N [--ask [--ask-secs N]]]\n"
	    "                  [--publish PORT]... [--keep PATH]...\n"
	    "                  -- CMD [ARGS...]\n");
}

/* A path flag, made absolute against the current folder. */
static const char *
run_abs(const char *path, const char *cwd, char ***owned, size_t *nowned)
{
	char	*abs;

	if (path[0] == '/' || path[0] == '~')
		return path;
	xasprintf(&abs, "%s/%s", cwd, path);
	*owned = xreallocarray(*owned, *nowned + 1, sizeof(**owned));
	(*owned)[(*nowned)++] = abs;
	return abs;
}

/*
 * The private /tmp, /var/tmp, /run and $XDG_RUNTIME_DIR cover the host's;
 * a read_only path of a trusted layer below one of them (tools in /tmp,
 * say) is brought back in, read-only.  The planner leaves read-only
 * paths outside writable roots out (the root is read-only already), so
 * they are added here.  The workspace layer cannot do this: what it
 * names stays under the cover.
 */
static void
plan_reveal(const struct run *run, struct fsplan *plan)
{
	const char		*covers[] = { "/tmp", "/var/tmp", "/run",
				    run->r_runtime_dir };
	const struct pitem	*it;
	struct fs_op		*op;
	struct stat		 st;
	char			 real[PATH_MAX];
	size_t			 i, j, c;
	bool			 done;

	for (i = 0; i < run->r_policy->p_read_only.pl_n; i++) {
		it = &run->r_policy->p_read_only.pl_v[i];
		if (it->pi_untrusted || realpath(it->pi_text, real) == NULL ||
		    stat(real, &st) == -1)
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

/*
 * The command's name for the egress log: the last part of argv[0], kept
 * to letters, digits, '.', '_', '+' and '-' (others become '_').
 */
static void
run_command_name(const char *argv0, char *out, size_t size)
{
	const char	*base = strrchr(argv0, '/');
	size_t		 i;

	base = base != NULL ? base + 1 : argv0;
	for (i = 0; base[i] != '\0' && i + 1 < size; i++)
		out[i] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST"
		    "UVWXYZ0123456789._+-", base[i]) != NULL ? base[i] : '_';
	out[i] = '\0';
}

/* Landlock's rules: read everywhere, write below the writable places. */
static void
run_landlock_rules(struct run *run)
{
	static const char *const writable[] = {
		"/tmp", "/var/tmp", "/dev", "/run", "/var/run"
	};
	const struct fsplan	*plan = run->r_plan;
	size_t			 i, n = 0;

	run->r_ll = xcalloc(plan->fp_nops + nitems(writable) + 3 +
	    nitems(run->r_sysscratch), sizeof(*run->r_ll));
	run->r_ll[n++].lr_path = "/";
	for (i = 0; i < nitems(writable); i++) {
		run->r_ll[n].lr_path = writable[i];
		run->r_ll[n++].lr_write = true;
	}
	if (run->r_runtime_dir != NULL) {
		run->r_ll[n].lr_path = run->r_runtime_dir;
		run->r_ll[n++].lr_write = true;
	}
	/* Writes there land in the scratch layer, not on the host. */
	if (run->r_scratch != NULL) {
		run->r_ll[n].lr_path = run->r_scratch;
		run->r_ll[n++].lr_write = true;
	}
	for (i = 0; i < run->r_nsysscratch; i++) {
		run->r_ll[n].lr_path = run->r_sysscratch[i];
		run->r_ll[n++].lr_write = true;
	}
	for (i = 0; i < plan->fp_nops; i++)
		if (plan->fp_ops[i].fo_kind == FS_RW) {
			run->r_ll[n].lr_path = plan->fp_ops[i].fo_path;
			run->r_ll[n++].lr_write = true;
		}
	run->r_nll = n;
}

/*
 * --publish PORT: a port a server in the sandbox listens on, reachable
 * from the host's 127.0.0.1 (publish.c).  Returns 0, or -1 having said
 * why.
 */
static int
run_publish_flag(struct run *run, uint16_t *ports, const char *arg)
{
	char	*end;
	long	 n;
	size_t	 i;

	n = strtol(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || *end != '\0' || n < 1 || n > 65535) {
		log_warnx("run: --publish: \"%s\" is not a port (1-65535)",
		    arg);
		return -1;
	}
	if (n == RUN_BRIDGE_PORT || n == 53) {
		log_warnx("run: --publish %ld: the sandbox's own %s listens "
		    "there; serve on another port", n, n == 53 ? "resolver" :
		    "bridge to the proxy");
		return -1;
	}
	for (i = 0; i < run->r_npublish; i++)
		if (ports[i] == n)
			return 0;
	if (run->r_npublish == PUBLISH_MAX) {
		log_warnx("run: --publish: at most %d ports", PUBLISH_MAX);
		return -1;
	}
	ports[run->r_npublish++] = (uint16_t)n;
	run->r_publish = ports;
	return 0;
}

/*
 * network.host_ports, for the capture to take to the proxy: a program
 * reaches them on the sandbox's own loopback, as on the host.  Without
 * the capture they could not be reached: that is an error, not a quiet
 * nothing.  Returns 0, or -1 having said why.
 */
static int
run_host_ports(struct run *run, const struct policy *p)
{
	const struct plist	*pl = &p->p_host_ports;
	size_t			 i;

	if (pl->pl_n == 0 || run->r_mode != NET_PROXY)
		return 0;
	if (!run->r_capture) {
		log_warnx("run: network.host_ports (%s, from %s) needs the "
		    "capture, and network.capture is \"off\"; nothing run",
		    pl->pl_v[0].pi_text, pl->pl_v[0].pi_from);
		log_warnx("hint: set \"capture\": \"on\", or drop "
		    "network.host_ports");
		return -1;
	}
	run->r_host_ports = xreallocarray(NULL, pl->pl_n,
	    sizeof(*run->r_host_ports));
	for (i = 0; i < pl->pl_n; i++) {
		run->r_host_ports[i].nr_lo = (uint16_t)pl->pl_v[i].pi_port;
		run->r_host_ports[i].nr_hi = (uint16_t)pl->pl_v[i].pi_port_hi;
	}
	run->r_nhost_ports = pl->pl_n;
	return 0;
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

/*
 * The folder the scratch layer covers (mount.c, scratch.c): the home
 * folder, resolved into home, unless a writable root already covers it,
 * a read_only rule keeps it so or a deny rule hides it; NULL when there
 * is none.
 */
static const char *
run_scratch(const struct fsplan *plan, char *home)
{
	const char	*h = getenv("HOME");
	struct stat	 st;

	if (h == NULL || h[0] != '/' || realpath(h, home) == NULL ||
	    strcmp(home, "/") == 0 || stat(home, &st) == -1 ||
	    !S_ISDIR(st.st_mode) || run_plan_over(plan, home,
	    RUN_OP(FS_RW) | RUN_OP(FS_RO) | RUN_OP(FS_HIDE_DIR)) != NULL)
		return NULL;
	return home;
}

/* Makes path and the folders above it that are missing, mode 0700. */
static int
run_mkdirs(char *path)
{
	char	*p;

	for (p = path + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(path, 0700) == -1 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0700) == -1 && errno != EEXIST ? -1 : 0;
}

/*
 * cordon's ssh-agent is on when the user has a working one and the
 * policy allows some host: returns the user's SSH_AUTH_SOCK, and the
 * known_hosts files to show inside in known (NULL when off).
 */
static const char *
run_agent(char *known[2])
{
	const char	*sock = getenv("SSH_AUTH_SOCK"), *h = getenv("HOME");
	char		 home[PATH_MAX], *cause;

	if (sock == NULL || h == NULL || h[0] != '/' ||
	    realpath(h, home) == NULL)
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

/*
 * --keep PATH: a folder of the home, in the scratch layer, kept between
 * runs: bound from cordon's own copy of it (cordon/keep in the user's
 * data folder), so the next run with --keep sees what this one left.
 * The host's folder of that name is never touched.  Returns 0, or -1
 * having said why.
 */
static int
run_keep(struct run *run, const char *const *keep, size_t n,
    const char *workspace)
{
	struct policy_ctx	 ctx = { .pc_workspace = workspace };
	struct pitem		 it;
	const char		*data = getenv("XDG_DATA_HOME");
	char			*cause, *from;
	size_t			 i;

	if (n == 0)
		return 0;
	if ((ctx.pc_home = run->r_scratch) == NULL) {
		log_warnx("run: --keep %s: the home folder is no scratch layer "
		    "in this run (a write, read_only or deny rule covers it, "
		    "or HOME is not set): nothing to keep; drop --keep",
		    keep[0]);
		return -1;
	}
	run->r_keep = xcalloc(n, sizeof(*run->r_keep));
	for (i = 0; i < n; i++) {
		memset(&it, 0, sizeof(it));
		if (policy_parse_path(keep[i], &ctx, &it, &cause) == -1 ||
		    !path_is_below(it.pi_text, run->r_scratch) ||
		    strcmp(it.pi_text, run->r_scratch) == 0) {
			log_warnx("run: --keep %s: not a folder in the home "
			    "folder (%s)", keep[i], run->r_scratch);
			free(cause);
			free(it.pi_text);
			return -1;
		}
		if (data != NULL && data[0] == '/')
			xasprintf(&from, "%s/cordon/keep%s", data,
			    it.pi_text + strlen(run->r_scratch));
		else
			xasprintf(&from, "%s/.local/share/cordon/keep%s",
			    run->r_scratch, it.pi_text +
			    strlen(run->r_scratch));
		run->r_keep[run->r_nkeep].k_path = it.pi_text;
		run->r_keep[run->r_nkeep++].k_from = from;
		if (run_mkdirs(from) == -1) {
			log_warn("run: --keep %s: cordon's copy %s", keep[i],
			    from);
			return -1;
		}
	}
	return 0;
}

/*
 * The tools' token files of the home: those secrets_prepare() copied are
 * bound over the plan's hiding of them (tf_bound); the others that exist
 * and that the plan hides are said in the summary (tally_hidden):
 * "~/.npmrc (npm)".
 */
static void
run_hidden_cfg(struct run *run, const struct fsplan *plan)
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
	const char	*h = getenv("HOME");
	const struct fs_op *op;
	struct secret_file *tf;
	struct stat	 st;
	char		 home[PATH_MAX], path[PATH_MAX], real[PATH_MAX];
	size_t		 i, j;

	for (i = 0; i < run->r_nsecrets; i++) {
		tf = &run->r_secrets[i];
		op = run_plan_over(plan, tf->tf_path, RUN_OP(FS_HIDE_FILE));
		tf->tf_bound = op != NULL && strcmp(op->fo_path,
		    tf->tf_path) == 0;
	}
	if (h == NULL || h[0] != '/' || realpath(h, home) == NULL)
		return;
	for (i = 0; i < nitems(cfg); i++) {
		if (snprintf(path, sizeof(path), "%s/%s", home, cfg[i][0]) >=
		    (int)sizeof(path) || lstat(path, &st) == -1 ||
		    run_plan_over(plan, path, RUN_OP(FS_HIDE_FILE) |
		    RUN_OP(FS_HIDE_DIR)) == NULL ||
		    run->r_nhidden_cfg >= nitems(run->r_hidden_cfg))
			continue;
		for (j = 0; j < run->r_nsecrets; j++)
			if (run->r_secrets[j].tf_bound &&
			    realpath(path, real) != NULL &&
			    strcmp(real, run->r_secrets[j].tf_path) == 0)
				break;
		if (j == run->r_nsecrets)
			run->r_hidden_cfg[run->r_nhidden_cfg++] = cfg[i][1];
	}
}

/*
 * A run as root: apt's folders are scratch layers too (apt-get update
 * and download write there, and the host's stay as they were), unless a
 * rule of the plan covers them.
 */
static void
run_sysscratch(struct run *run, const struct fsplan *plan)
{
	static const char *const apt[] = { "/var/lib/apt", "/var/cache/apt" };
	struct stat	 st;
	size_t		 i, j;
	bool		 covered;

	if (run->r_uid != 0)
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
			run->r_sysscratch[run->r_nsysscratch++] = apt[i];
	}
}

/*
 * The current folder as the workspace, when it is / or the home folder:
 * all of it would be writable, dotfiles and all, and that is rarely what
 * running cordon there meant.  Says so, with the flag that means it.
 */
static bool
run_ws_too_wide(const char *workspace)
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
 * With --proxy-socket, the run's network rules travel to the operator's
 * proxy with each connection (bridge.c, conn.c), which can only narrow
 * its own policy with them: its deny entries, and the allow lists of its
 * flags and workspace layer (policy_build_narrowing), as a JSON policy of
 * "allow", "deny" and "allow_cidrs" (no list files: their entries).  Sets *text to it, or to
 * NULL when there are none; returns 0, or -1 with *cause set.
 */
static int
run_narrowing(const struct policy_layers *layers, const struct policy *merged,
    char **text, char **cause)
{
	static const char *const keys[] = { "allow", "deny", "allow_cidrs" };
	struct policy		*n;
	const struct plist	*pl;
	json_t			*net, *list, *doc;
	size_t			 i, j;

	*text = NULL;
	if ((n = policy_build_narrowing(layers, merged, cause)) == NULL)
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
 * The folders of --report PATH and of --log FILE (the run's own proxy
 * writes it), opened now, beneath the workspace when they are in it:
 * cordon writes them while or after the command ran, and the command
 * may have reshaped the workspace (wspath.c).  Returns 0, or -1 having
 * said why.
 */
static int
run_paths_open(struct run_net *net, const char *ws, const char *cwd)
{
	char	*cause, *msg;

	if (net->rn_report != NULL && strncmp(net->rn_report, "fd:", 3) !=
	    0 && wspath_open(&net->rn_report_at, ws, cwd, net->rn_report,
	    "--report", &cause) == -1)
		goto fail;
	if (net->rn_log != NULL && strcmp(net->rn_log, "-") != 0 &&
	    net->rn_socket == NULL && wspath_open(&net->rn_log_at, ws, cwd,
	    net->rn_log, "--log", &cause) == -1)
		goto fail;
	return 0;
fail:
	xasprintf(&msg, "run: %s", cause);
	free(cause);
	log_warnx_lines(msg);
	log_warnx("run: nothing run");
	return -1;
}

int
run_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'P' },
		{ "allow-domain", required_argument, NULL, 'a' },
		{ "deny-domain", required_argument, NULL, 'd' },
		{ "allow-cidr", required_argument, NULL, 'c' },
		{ "network", required_argument, NULL, 'n' },
		{ "write", required_argument, NULL, 'w' },
		{ "read-only", required_argument, NULL, 'r' },
		{ "deny-path", required_argument, NULL, 'x' },
		{ "workspace", required_argument, NULL, 'W' },
		{ "resolve", required_argument, NULL, 'R' },
		{ "dns", required_argument, NULL, 'D' },
		{ "upstream-ca", required_argument, NULL, 'U' },
		{ "proxy-socket", required_argument, NULL, 'S' },
		{ "log", required_argument, NULL, 'L' },
		{ "dry-run", no_argument, NULL, 'N' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "allow-no-landlock", no_argument, NULL, 'A' },
		{ "report", required_argument, NULL, 'T' },
		{ "control", required_argument, NULL, 'C' },
		{ "ask", no_argument, NULL, 'K' },
		{ "ask-secs", required_argument, NULL, 'k' },
		{ "publish", required_argument, NULL, 'p' },
		{ "keep", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct policy_layers	 layers;
	struct run		 run;
	struct run_net		 net;
	struct fsplan		 plan;
	struct fsplan_in	 fin;
	struct env_proxy	 ep = { .ep_port = RUN_BRIDGE_PORT };
	struct trust_bundle	 ib;
	struct policy		*policy;
	char			 cwd[PATH_MAX], workspace[PATH_MAX];
	char			 home[PATH_MAX], *known[2] = { NULL, NULL };
	uint16_t		 publish[PUBLISH_MAX];
	const char		*keep[16];
	size_t			 nkeep = 0;
	char			**owned = NULL, *cause, *dns = NULL;
	const char		*ws = NULL, *rd;
	size_t			 nowned = 0, i;
	struct blocks		 blocks = { NULL, NULL, NULL, 0 };
	struct guard		 guard;
	struct unix_routes	 routes = { NULL, 0 };
	bool			 dry = false;
	bool			 no_landlock = false;
	char			*end;
	long			 n;
	int			 ch, rc;

	memset(&layers, 0, sizeof(layers));
	memset(&run, 0, sizeof(run));
	memset(&net, 0, sizeof(net));
	net.rn_report_at.w_dir = net.rn_log_at.w_dir = -1;
	memset(&plan, 0, sizeof(plan));
	memset(&guard, 0, sizeof(guard));
	memset(&ib, 0, sizeof(ib));
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		log_warn("run: the current folder");
		return RUN_EXIT_FAILURE;
	}
	optind = 1;
	/* "+": options stop at the command, whatever its arguments. */
	while ((ch = getopt_long(argc, argv, "+hq", opts, NULL)) != -1) {
		switch (ch) {
		case 'P':
			policy_layers_add(&layers, "--policy",
			    run_abs(optarg, cwd, &owned, &nowned));
			break;
		case 'a':
			policy_layers_add(&layers, "--allow-domain", optarg);
			break;
		case 'd':
			policy_layers_add(&layers, "--deny-domain", optarg);
			break;
		case 'c':
			policy_layers_add(&layers, "--allow-cidr", optarg);
			break;
		case 'n':
			policy_layers_add(&layers, "--network", optarg);
			break;
		case 'w':
			policy_layers_add(&layers, "--write",
			    run_abs(optarg, cwd, &owned, &nowned));
			break;
		case 'r':
			policy_layers_add(&layers, "--read-only",
			    run_abs(optarg, cwd, &owned, &nowned));
			break;
		case 'x':
			policy_layers_add(&layers, "--deny-path",
			    run_abs(optarg, cwd, &owned, &nowned));
			break;
		case 'W':
			ws = optarg;
			break;
		case 'R':
			net.rn_pins = xreallocarray(net.rn_pins,
			    net.rn_npins + 1, sizeof(*net.rn_pins));
			net.rn_pins[net.rn_npins++] = optarg;
			break;
		case 'D':
			str_append(&dns, ",", optarg);
			break;
		case 'U':
			net.rn_upstream_ca = optarg;
			break;
		case 'S':
			net.rn_socket = optarg;
			break;
		case 'L':
			net.rn_log = optarg;
			break;
		case 'N':
			dry = true;
			break;
		case 'q':
			net.rn_quiet = true;
			break;
		case 'A':
			no_landlock = true;
			break;
		case 'T':
			net.rn_report = optarg;
			break;
		case 'C':
			net.rn_control = optarg;
			break;
		case 'K':
			net.rn_ask = true;
			break;
		case 'p':
			if (run_publish_flag(&run, publish, optarg) == -1)
				return 2;
			break;
		case 'e':
			if (nkeep == nitems(keep)) {
				log_warnx("run: --keep: at most %zu folders",
				    nitems(keep));
				return 2;
			}
			keep[nkeep++] = optarg;
			break;
		case 'k':
			n = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || n < 1 ||
			    n > 3600) {
				log_warnx("run: --ask-secs: \"%s\" is not a "
				    "number from 1 to 3600", optarg);
				return 2;
			}
			net.rn_ask_secs = (int)n;
			break;
		case 'h':
			run_usage(stdout);
			return 0;
		default:
			run_usage(stderr);
			return 2;
		}
	}
	if (optind == argc) {
		log_warnx("run: no command given; put it after --");
		run_usage(stderr);
		return 2;
	}
	net.rn_dns = dns;
	rc = RUN_EXIT_FAILURE;
	if (net.rn_ask_secs == 0)
		net.rn_ask_secs = RUN_ASK_SECS;
	if (net.rn_ask && (net.rn_control == NULL || net.rn_socket != NULL)) {
		log_warnx("run: --ask needs --control, and the run's own proxy "
		    "(not --proxy-socket): it asks the harness on that "
		    "channel before its proxy refuses");
		goto out;
	}

	/* The workspace: given, or where we are; resolved, a folder. */
	if (realpath(ws != NULL ? ws : cwd, workspace) == NULL) {
		log_warn("run: the workspace %s", ws != NULL ? ws : cwd);
		goto out;
	}
	if (ws == NULL && run_ws_too_wide(workspace))
		goto out;
	layers.pl_workspace = workspace;
	if (run_paths_open(&net, workspace, cwd) == -1)
		goto out;
	if ((policy = policy_build(&layers, NULL, &cause)) == NULL) {
		log_warnx_lines(cause);
		log_warnx("run: no policy, nothing run");
		goto out;
	}
	run.r_mode = policy->p_mode.ps_value;
	run.r_unix = policy->p_unix.ps_value == UNIX_ALLOW;
	run.r_capture = run.r_mode == NET_PROXY && policy_capture(policy);
	if (run_host_ports(&run, policy) == -1) {
		policy_free(policy);
		goto out;
	}
	if (run.r_npublish > 0 && run.r_mode == NET_HOST) {
		log_warnx("run: --publish: with network mode \"host\" the "
		    "command's servers are on the host's network already; "
		    "drop --publish");
		policy_free(policy);
		goto out;
	}
	if (net.rn_socket != NULL && run.r_mode == NET_PROXY &&
	    run_narrowing(&layers, policy, &run.r_narrow, &cause) == -1) {
		log_warnx_lines(cause);
		log_warnx("run: the rules for --proxy-socket do not load, "
		    "nothing run");
		policy_free(policy);
		goto out;
	}
	if (run.r_narrow != NULL && strlen(run.r_narrow) > PP2_NARROW_MAX) {
		log_warnx("run: the policy's network.deny entries and the "
		    "allow lists of the flags and the workspace policy come "
		    "to more than %d bytes, more than a connection to "
		    "--proxy-socket can carry; nothing run", PP2_NARROW_MAX);
		log_warnx("hint: move long deny lists to the operator's "
		    "policy, or drop --proxy-socket (the run's own proxy "
		    "reads them all)");
		policy_free(policy);
		goto out;
	}
	if (net.rn_socket != NULL && run.r_mode == NET_PROXY &&
	    policy->p_ncreds > 0) {
		const struct pcred	*cr = &policy->p_creds[0];

		log_warnx("run: the policy has credentials (%s, from %s), but "
		    "--proxy-socket hands the run to an operator's proxy, "
		    "which cannot know their real values; nothing run",
		    cr->cr_env, cr->cr_host.pi_from != NULL ?
		    cr->cr_host.pi_from : "the policy");
		log_warnx("hint: drop --proxy-socket (cordon's own proxy swaps "
		    "them in), or drop the credentials entry");
		policy_free(policy);
		goto out;
	}
	if (net.rn_socket != NULL && (net.rn_dns != NULL ||
	    net.rn_npins != 0 || net.rn_log != NULL ||
	    net.rn_upstream_ca != NULL)) {
		log_warnx("run: --dns, --resolve, --log and --upstream-ca belong "
		    "to the proxy; "
		    "with --proxy-socket, set them on the operator's proxy");
		policy_free(policy);
		goto out;
	}

	run.r_argv = argv + optind;
	run.r_cwd = cwd;
	run.r_workspace = workspace;
	run.r_policy = policy;
	run.r_uid = getuid();
	run.r_gid = getgid();
	run.r_tty = isatty(0) || isatty(1) || isatty(2);
	run.r_seccomp = -1;
	run.r_sync = run.r_errfd = run.r_endfd = run.r_pubfd = -1;
	run.r_notifyfd = -1;
	rd = getenv("XDG_RUNTIME_DIR");
	run.r_runtime_dir = rd != NULL && rd[0] == '/' ? rd : NULL;
	/* A random id, in the egress log and the bridge's header. */
	if (hex_random(run.r_id, RUN_ID_LEN) == -1)
		fatal("run: getrandom");
	run_command_name(run.r_argv[0], run.r_command, sizeof(run.r_command));

	secrets_prepare(&run, policy, run.r_mode == NET_PROXY &&
	    net.rn_socket == NULL);
	trust_hide_ca(policy);
	memset(&fin, 0, sizeof(fin));
	fin.fi_policy = policy;
	fin.fi_workspace = workspace;
	fin.fi_path = getenv("PATH");
	if (run.r_mode == NET_PROXY && net.rn_socket == NULL &&
	    policy->p_allow.pl_n > 0 &&
	    (run.r_agent_real = run_agent(known)) != NULL) {
		fin.fi_show = (const char *const *)known;
		fin.fi_nshow = 2;
		ep.ep_agent_sock = RUN_AGENT_SOCK;
	}
	if (fsplan_build(&fin, &plan, &cause) == -1) {
		xasprintf(&end, "run: %s", cause);
		free(cause);
		log_warnx_lines(end);
		policy_free(policy);
		goto out;
	}
	run.r_plan = &plan;
	plan_reveal(&run, &plan);
	run.r_scratch = run_scratch(&plan, home);
	run_sysscratch(&run, &plan);
	run_hidden_cfg(&run, &plan);
	if (run_keep(&run, keep, nkeep, workspace) == -1) {
		policy_free(policy);
		goto out;
	}
	run_landlock_rules(&run);
	if (run.r_mode == NET_PROXY && net.rn_socket == NULL) {
		trust_phantoms(policy, environ, &run.r_phantoms,
		    &run.r_nphantoms);
		secrets_phantoms(&run);
		ep.ep_phantoms = run.r_phantoms;
		ep.ep_nphantoms = run.r_nphantoms;
	}
	/*
	 * An operator's proxy inspects with the CA of the same policy (the
	 * system layer both read): its ca.crt, which the operator makes
	 * readable by leaving the folder 0711.
	 */
	if (run.r_mode == NET_PROXY && trust_wanted(policy)) {
		if (trust_bundle(policy, environ, &ib, &cause) == -1) {
			log_warnx("run: %s", cause);
			if (net.rn_socket != NULL)
				log_warnx("run: hint: with --proxy-socket, the "
				    "operator's CA certificate must be readable "
				    "by you: its folder 0711 and ca.crt 0644 "
				    "(ca.key stays 0600)");
			log_warnx("run: nothing run");
			free(cause);
			policy_free(policy);
			goto out;
		}
		run.r_ca_pem = ib.ib_pem;
		run.r_ca_len = ib.ib_len;
		ep.ep_ca_bundle = RUN_CA_BUNDLE;
	}
	if (run.r_nsysscratch > 0)
		ep.ep_apt_conf = RUN_APT_CONF;
	if ((run.r_env = env_build(policy, environ, run.r_mode == NET_PROXY ?
	    &ep : NULL, &cause)) == NULL) {
		log_warnx("run: %s", cause);
		free(cause);
		policy_free(policy);
		goto out;
	}
	/*
	 * Host Unix sockets: moot when every socket is allowed anyway.
	 * cordon's ssh-agent is one more, routed once run.c has made it.
	 */
	if (!run.r_unix && (unixroute_policy(&routes, policy, &plan,
	    &cause) == -1 || ((routes.ur_n > 0 || run.r_agent_real != NULL) &&
	    notify_probe(&cause) == -1))) {
		log_warnx("run: %s", cause);
		if (routes.ur_n > 0)
			log_warnx("hint: drop filesystem.unix_sockets from the "
			    "policy to run without them");
		log_warnx("run: nothing run");
		free(cause);
		policy_free(policy);
		goto out;
	}
	run.r_routes = &routes;
	if (dry) {
		run_print(&run, &net, &ib);
		policy_free(policy);
		rc = 0;
		goto out;
	}
	if ((run.r_seccomp = sysfilter_new(run.r_unix ? SYSF_UNIX_ALLOW :
	    routes.ur_n > 0 || run.r_agent_real != NULL ? SYSF_UNIX_ROUTES :
	    SYSF_UNIX_DENY, &cause)) ==
	    -1) {
		log_warnx("run: %s", cause);
		free(cause);
		policy_free(policy);
		goto out;
	}

	/* Said every time: these are weaker sandboxes, never quietly. */
	if (run.r_mode == NET_HOST)
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
			policy_free(policy);
			goto out;
		}
		log_warnx("run: no Landlock (--allow-no-landlock): the mount "
		    "namespace alone keeps writes inside the writable "
		    "folders");
	}
	for (i = 0; i < plan.fp_nnotes; i++)
		log_warnx("run: note: %s", plan.fp_notes[i]);
	log_info("run: sandbox %s", run.r_id);

	if (guard_open(&guard, &plan, &cause) == -1 ||
	    block_prepare(&plan, &blocks, &guard, &cause) == -1) {
		log_warnx("run: %s", cause);
		free(cause);
		policy_free(policy);
		block_cleanup(&plan, &blocks);
		goto out;
	}
	run.r_guard = &guard;
	rc = run_exec(&run, policy, &net);
	block_cleanup(&plan, &blocks);
out:
	guard_clear(&guard);
	if (run.r_seccomp != -1)
		close(run.r_seccomp);
	env_free(run.r_env);
	phantoms_free(run.r_phantoms, run.r_nphantoms);
	for (i = 0; i < run.r_nsecrets; i++)
		secrets_clear(&run.r_secrets[i]);
	free(run.r_secrets);
	trust_bundle_clear(&ib);
	free(run.r_ll);
	free(run.r_host_ports);
	unixroute_clear(&routes);
	for (i = 0; i < run.r_nkeep; i++) {
		free(run.r_keep[i].k_path);
		free(run.r_keep[i].k_from);
	}
	free(run.r_keep);
	fsplan_clear(&plan);
	free(known[0]);
	free(known[1]);
	for (i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	free(layers.pl_args);
	free(run.r_narrow);
	free(net.rn_pins);
	free(dns);
	wspath_clear(&net.rn_report_at);
	wspath_clear(&net.rn_log_at);
	return rc;
}
