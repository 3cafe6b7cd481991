/*
 * run_proxy.c: the proxy's side of `cordon run`: the run's own proxy and
 * cordon's ssh-agent beside it, or an operator's or a remote tier's;
 * the phantom credentials and the CA bundle the command holds; the
 * harness's side (--control, --ask, control_run.c), which answers the
 * proxy's asks; and their end.  run.c, run_prepare.c and run_end.c call
 * these at their steps.  All of OpenSSL that a run reaches is behind
 * them: cordon-offline (offline/), which serves runs without the proxy,
 * links its own run_proxy.c instead of this one.
 *
 * Runs in: cordon run on the host.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "agent/agent.h"
#include "certs/certs.h"
#include "confine/trust.h"
#include "lib/endpoint.h"
#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "notify/unixroute.h"
#include "policies/policy.h"
#include "proxy/proxy.h"
#include "runner/run_host.h"
#include "runner/run_prep.h"
#include "runner/runner.h"

static void
run_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct runner	*rn = arg;

	(void)l;
	conn_accept(&rn->rn_proxy, fd, sa, (socklen_t)salen, true);
}

/*
 * cordon's ssh-agent, beside the proxy in the run's private folder: the
 * sandbox's PID 1 binds its socket at RUN_AGENT_SOCK, and finds there
 * what was made here (r_agent_id).
 */
static int
run_agent_start(struct runner *rn, char **cause)
{
	struct run	*run = rn->rn_run;
	struct stat	 st;

	if ((rn->rn_agent = agent_new(&rn->rn_proxy, rn->rn_dir,
	    run->r_sb.sb_view.sv_agent_real, run->r_sb.sb_id,
	    run->r_sb.sb_cmd.sc_name[0] != '\0' ?
	    run->r_sb.sb_cmd.sc_name : NULL, cause)) == NULL)
		return -1;
	run->r_sb.sb_view.sv_agent_sock = agent_path(rn->rn_agent);
	/* The agent names a session by the tunnel that carried it. */
	rn->rn_proxy.px_ssh_watch = true;
	if (lstat(run->r_sb.sb_view.sv_agent_sock, &st) == -1) {
		xasprintf(cause, "%s: %s", run->r_sb.sb_view.sv_agent_sock,
		    strerror(errno));
		return -1;
	}
	run->r_sb.sb_view.sv_agent_id.fm_dev = st.st_dev;
	run->r_sb.sb_view.sv_agent_id.fm_ino = st.st_ino;
	/* The command's connect to RUN_AGENT_SOCK, made outside (notify.c). */
	if (!run->r_unix && unixroute_add(run->r_sb.sb_view.sv_routes,
	    RUN_AGENT_SOCK,
	    run->r_sb.sb_view.sv_agent_sock, "cordon's ssh-agent", cause) == -1)
		return -1;
	return 0;
}

/*
 * The run's own proxy: the run's policy, on a Unix socket in a private
 * folder.  Returns 0, or -1 with *cause set.
 */
static int
run_proxy_start(struct runner *rn, struct policy *policy, char **cause)
{
	const struct run_net	*net = rn->rn_net;
	struct proxy		*px = &rn->rn_proxy;
	int			 fd, lfd;

	/* Ours from here, whatever fails: run_end() frees it all. */
	proxy_init(px, rn->rn_base, policy);
	rn->rn_own_proxy = true;
	if ((fd = run_sock_open(rn, cause)) == -1)
		return -1;

	px->px_hooks = &control_run_proxy_hooks;
	px->px_hooks_arg = rn;
	px->px_ask_names = net->net_ask;
	if (proxy_dns(px, net->net_dns, net->net_pins, net->net_npins, cause) ==
	    -1)
		goto fail;
	if (net->net_log_at.w_dir != -1) {
		if ((lfd = wspath_append(&net->net_log_at, cause)) == -1)
			goto fail;
		px->px_log = jsonl_fdopen(lfd);
	} else if (net->net_log != NULL && (px->px_log =
	    jsonl_open(net->net_log, cause)) == NULL)
		goto fail;
	if (inspect_setup(px, policy, net->net_upstream_ca, cause) == -1)
		goto fail;
	if ((rn->rn_listener = evconnlistener_new(rn->rn_base, run_accept_cb,
	    rn, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd)) ==
	    NULL) {
		xasprintf(cause, "cannot watch the proxy's socket");
		goto fail;
	}
	if (rn->rn_run->r_sb.sb_view.sv_agent_real != NULL &&
	    run_agent_start(rn, cause) ==
	    -1)
		return -1;		/* the listener has fd now */
	/* The real values live in the proxy from here on, freed with it. */
	px->px_phantoms = rn->rn_run->r_phantoms;
	px->px_nphantoms = rn->rn_run->r_nphantoms;
	rn->rn_run->r_phantoms = NULL;
	rn->rn_run->r_nphantoms = 0;
	return 0;
fail:
	close(fd);
	return -1;
}

/* Points the sandbox at the proxy: a descriptor of its folder. */
static int
run_proxy_dir(struct runner *rn, const char *socket, char **cause)
{
	struct run	*run = rn->rn_run;
	struct stat	 st;
	char		*dir, *slash;

	if (stat(socket, &st) == -1) {
		xasprintf(cause, "the proxy socket %s: %s", socket,
		    strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		xasprintf(cause, "the proxy socket %s: not a socket", socket);
		return -1;
	}
	run->r_sb.sb_net.sn_proxy_path = socket;
	dir = xstrdup(socket);
	if ((slash = strrchr(dir, '/')) == NULL) {
		free(dir);
		dir = xstrdup(".");
		run->r_sb.sb_net.sn_proxy_name = socket;
	} else {
		run->r_sb.sb_net.sn_proxy_name = socket + (slash - dir) + 1;
		slash[slash == dir ? 1 : 0] = '\0';
	}
	run->r_sb.sb_net.sn_proxy_dir = open(dir,
	    O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (run->r_sb.sb_net.sn_proxy_dir == -1)
		xasprintf(cause, "%s: %s", dir, strerror(errno));
	free(dir);
	return run->r_sb.sb_net.sn_proxy_dir == -1 ? -1 : 0;
}

/*
 * The proxy the sandbox reaches, and a descriptor of its folder: our own
 * (run_proxy_start), or the operator's (--proxy-socket).  Takes the
 * policy: the proxy's from here, or freed, never both.  Returns 0, or -1
 * having said why.
 */
int
run_proxy_setup(struct runner *rn, struct policy *policy)
{
	struct run		*run = rn->rn_run;
	const struct run_net	*net = rn->rn_net;
	char			*cause = NULL;
	int			 rc;

	if (run->r_sb.sb_net.sn_mode == NET_PROXY && net->net_socket == NULL)
		rc = run_proxy_start(rn, policy, &cause) == -1 ||
		    run_proxy_dir(rn, rn->rn_ep.ep_path, &cause) == -1 ? -1 : 0;
	else {
		/* A session builds each command's environment by it. */
		if (run->r_session_opts != NULL)
			rn->rn_env_policy = policy;
		else
			policy_free(policy);
		if (run->r_sb.sb_net.sn_mode == NET_PROXY &&
		    net->net_remote != NULL)
			rc = run_remote_start(rn) == -1 || run_proxy_dir(rn,
			    rn->rn_ep.ep_path, &cause) == -1 ? -1 : 0;
		else
			rc = run->r_sb.sb_net.sn_mode == NET_PROXY &&
			    run_proxy_dir(rn, net->net_socket, &cause) == -1 ?
			    -1 : 0;
	}
	run->r_policy = NULL;
	if (rc == -1 && cause != NULL) {
		log_warnx("run: %s", cause);
		free(cause);
	}
	if (rc == -1)
		return -1;
	/* The operator's proxy must answer as a sandbox listener does. */
	if (run->r_sb.sb_net.sn_mode == NET_PROXY && net->net_socket != NULL &&
	    control_feed_open(rn) == -1) {
		log_warnx("run: nothing run");
		return -1;
	}
	return 0;
}

/*
 * What the command holds of the proxy: the phantom credentials, and the
 * CA bundle when the proxy inspects.  Returns 0, or -1 having said why.
 */
int
run_proxy_env(struct run_prep *rp)
{
	struct run	*run = &rp->rp_run;
	struct policy	*p = rp->rp_policy;
	char		*cause;

	if (run->r_sb.sb_net.sn_mode == NET_PROXY &&
	    rp->rp_net.net_socket == NULL) {
		trust_phantoms(p, environ, &run->r_phantoms,
		    &run->r_nphantoms);
		run_secrets_phantoms(run);
		rp->rp_ep.ep_phantoms = run->r_phantoms;
		rp->rp_ep.ep_nphantoms = run->r_nphantoms;
	}
	/*
	 * An operator's proxy inspects with the CA of the same policy (the
	 * system layer both read): its ca.crt, which the operator makes
	 * readable by leaving the folder 0711.
	 */
	if (run->r_sb.sb_net.sn_mode == NET_PROXY && trust_wanted(p)) {
		if (trust_bundle(p, environ, &rp->rp_ib, &cause) == -1) {
			log_warnx("run: %s", cause);
			if (rp->rp_net.net_socket != NULL)
				log_warnx("run: hint: with --proxy-socket, the "
				    "operator's CA certificate must be readable "
				    "by you: its folder 0711 and ca.crt 0644 "
				    "(ca.key stays 0600)");
			log_warnx("run: nothing run");
			free(cause);
			return -1;
		}
		run->r_sb.sb_view.sv_ca_pem = rp->rp_ib.ib_pem;
		run->r_sb.sb_view.sv_ca_len = rp->rp_ib.ib_len;
		run->r_sb.sb_view.sv_ca_java = rp->rp_ib.ib_java;
		run->r_sb.sb_view.sv_ca_java_len = rp->rp_ib.ib_java_len;
		rp->rp_ep.ep_ca_bundle = RUN_CA_BUNDLE;
		rp->rp_ep.ep_ca_java = RUN_CA_JAVA;
	}
	return 0;
}

/* Frees what run_proxy_env() made. */
void
run_proxy_env_clear(struct run_prep *rp)
{
	proxy_phantoms_free(rp->rp_run.r_phantoms, rp->rp_run.r_nphantoms);
	trust_bundle_clear(&rp->rp_ib);
}

/*
 * Makes cordon's CA where policy p looks for it, when it is not there,
 * and says so (this once: the next run finds it).  Returns 0, or -1
 * having said why.
 */
int
run_proxy_agent_ca(const struct policy *p, const char *name)
{
	char	*dir, *crt, *cause;
	int	 rc = -1;

	if ((dir = ca_dir_policy(p, &cause)) == NULL) {
		log_warnx("run: --agent %s: %s", name, cause);
		free(cause);
		return -1;
	}
	xasprintf(&crt, "%s/%s", dir, CA_CERT_FILE);
	if (access(crt, F_OK) == 0 || errno != ENOENT)
		rc = 0;		/* there, or trust_bundle() says what is wrong */
	else if (ca_init(dir, false, &cause) == -1) {
		log_warnx("run: --agent %s: cordon's CA, which puts the agent's "
		    "key in at its API, could not be made: %s; nothing run",
		    name, cause);
		log_warnx("hint: run `cordon ca init`, or set tls.ca_dir");
		free(cause);
	} else {
		log_warnx("run: --agent %s: made cordon's CA in %s (first "
		    "use), so that the proxy puts the agent's key in at its "
		    "API and the sandbox holds a placeholder; only the "
		    "sandbox trusts it (cordon ca show)", name, dir);
		rc = 0;
	}
	free(crt);
	free(dir);
	return rc;
}

/*
 * The feed to an operator's proxy, the agent and the run's own proxy
 * end, their last lines written, and their folder goes.  Its socket goes
 * before the folder does.
 */
void
run_proxy_end(struct runner *rn)
{
	const struct run_net	*net = rn->rn_net;

	control_feed_end(rn);
	if (!net->net_quiet)
		agent_summary(rn->rn_agent, stderr);
	agent_free(rn->rn_agent);
	rn->rn_agent = NULL;
	rn->rn_run->r_sb.sb_view.sv_agent_sock = NULL;
	if (rn->rn_own_proxy) {
		if (rn->rn_listener != NULL)
			evconnlistener_free(rn->rn_listener);
		rn->rn_listener = NULL;
		/* Their last lines first, then whether the log has them all. */
		conn_close_all(&rn->rn_proxy);
		if (rn->rn_proxy.px_log != NULL &&
		    !jsonl_retry(rn->rn_proxy.px_log))
			log_warnx("run: the egress log %s could not be "
			    "written in full", net->net_log);
		watch_close_all(&rn->rn_proxy);
		inspect_teardown(&rn->rn_proxy);
		proxy_clear(&rn->rn_proxy);
	}
	tlsup_free(rn->rn_remote);
	rn->rn_remote = NULL;
	run_sock_close(rn);
}

/* The feed to an operator's proxy, watched from here (control_feed.c). */
void
run_proxy_watch(struct runner *rn)
{
	control_feed_start(rn);
}

/* The harness's side of the run, --control and --ask (control_run.c). */
int
run_proxy_control(struct runner *rn)
{
	return control_run_start(rn);
}

/* cordon-main serves every run. */
int
run_proxy_served(const struct run_prep *rp)
{
	(void)rp;
	return 0;
}
