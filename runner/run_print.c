/*
 * run_print.c: --dry-run, what a run would do, in the order it would do
 * it, from what run_prepare() decided; nothing is made or changed.
 *
 * Runs in: cordon run on the host (--dry-run: no clone).
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include "confine/env.h"
#include "confine/trust.h"
#include "notify/unixroute.h"
#include "policies/policy.h"
#include "proxy/proxy.h"
#include "runner/runner.h"

/* The phantom credential whose variable is env's "NAME=...", or NULL. */
static const struct phantom *
run_print_phantom(const struct run *run, const char *env)
{
	size_t	 i, n = strcspn(env, "=");

	for (i = 0; i < run->r_nphantoms; i++)
		if (run->r_phantoms[i].ph_env != NULL &&
		    strlen(run->r_phantoms[i].ph_env) == n &&
		    strncmp(run->r_phantoms[i].ph_env, env, n) == 0)
			return &run->r_phantoms[i];
	return NULL;
}

/* The network: the mode, the proxy and what reaches it. */
static void
run_print_net(const struct run *run, const struct run_net *net)
{
	size_t	 i;

	printf("network: %s\n", policy_mode_name(run->r_sb.sb_net.sn_mode));
	if (run->r_sb.sb_net.sn_mode == NET_PROXY) {
		if (net->net_socket != NULL)
			printf("  proxy: %s (an operator's proxy; its policy "
			    "decides, narrowed by the run's own rules: %s)\n",
			    net->net_socket,
			    run->r_sb.sb_net.sn_narrow != NULL ?
			    run->r_sb.sb_net.sn_narrow : "none");
		else
			printf("  proxy: cordon's own, in the run's process, "
			    "on a private Unix socket\n");
		printf("  bridge: 127.0.0.1:%d and [::1]:%d inside, to the "
		    "proxy\n", RUN_BRIDGE_PORT, RUN_BRIDGE_PORT);
		if (run->r_sb.sb_net.sn_capture)
			printf("  capture: lo with %s and %s, default routes; "
			    "nftables: every TCP connection off the sandbox "
			    "to the bridge, every DNS query to its resolver "
			    "on port 53 (names the policy refuses: NXDOMAIN; "
			    "the others: addresses of its own that the bridge "
			    "maps back), /etc/resolv.conf naming it alone; "
			    "other UDP and ICMP dropped, and counted for the "
			    "summary\n", NETCAP_ADDR4, NETCAP_ADDR6);
		else
			printf("  capture: off (network.capture); only "
			    "programs that read the proxy variables get "
			    "out\n");
		for (i = 0; i < run->r_sb.sb_net.sn_nhost_ports; i++)
			printf("  host ports %u-%u: the sandbox's loopback "
			    "there is the host's, through the proxy "
			    "(network.host_ports)\n",
			    run->r_sb.sb_net.sn_host_ports[i].nr_lo,
			    run->r_sb.sb_net.sn_host_ports[i].nr_hi);
		if (run->r_sb.sb_view.sv_agent_real != NULL)
			printf("  ssh-agent: cordon's, at %s (SSH_AUTH_SOCK): "
			    "signs a login with the keys of %s only for a "
			    "host the policy allows, known by its key in "
			    "~/.ssh/known_hosts; lists keys only to such a "
			    "login; adds, removes, locks nothing\n",
			    RUN_AGENT_SOCK, run->r_sb.sb_view.sv_agent_real);
		if (net->net_log != NULL)
			printf("  egress log: %s\n", net->net_log);
	} else if (run->r_sb.sb_net.sn_mode == NET_NONE)
		printf("  only lo, up; no way out\n");
	else
		printf("  unfiltered: not through the proxy, not logged\n");
	for (i = 0; i < run->r_npublish; i++)
		printf("  published: the host's 127.0.0.1:%u to the "
		    "sandbox's 127.0.0.1:%u (--publish)\n", run->r_publish[i],
		    run->r_publish[i]);
}

/* What the command holds: the CA bundle, tokens, environment, argv. */
static void
run_print_env(const struct run *run, const struct trust_bundle *ib)
{
	const struct phantom	*ph;
	size_t			 i;

	if (ib->ib_pem != NULL) {
		printf("trust: %s inside, written by PID 1 (mode 0444): %s, "
		    "then cordon's CA %s\n", RUN_CA_BUNDLE, ib->ib_base !=
		    NULL ? ib->ib_base : "no base bundle", ib->ib_ca);
		if (ib->ib_extra != NULL)
			printf("  with the host's CA files: %s\n", ib->ib_extra);
		printf("  CA sha256 fingerprint: %s\n", ib->ib_fingerprint);
		printf("  and for the JVM: %s (PKCS#12, %zu bytes), named in "
		    "JAVA_TOOL_OPTIONS\n", RUN_CA_JAVA, ib->ib_java_len);
	}
	for (i = 0; i < run->r_nphantoms; i++)
		if (run->r_phantoms[i].ph_file != NULL)
			printf("token: %s holds %s in place of a "
			    "token; the proxy puts the real one in %s%s for %s"
			    "%s\n", run->r_phantoms[i].ph_file,
			    run->r_phantoms[i].ph_jwt ? "a JWT with its claims "
			    "and a random signature" : PHANTOM_PREFIX
			    "<32 hex digits>",
			    run->r_phantoms[i].ph_header != NULL ?
			    run->r_phantoms[i].ph_header : "the body of POST ",
			    run->r_phantoms[i].ph_header != NULL ? "" :
			    run->r_phantoms[i].ph_path,
			    run->r_phantoms[i].ph_host.pi_text,
			    run->r_phantoms[i].ph_user != NULL ?
			    " (Basic, with its user)" : "");
	printf("environment:\n");
	for (i = 0; run->r_sb.sb_cmd.sc_env[i] != NULL; i++) {
		/* Never the value: a placeholder is new each run anyway. */
		if ((ph = run_print_phantom(run,
		    run->r_sb.sb_cmd.sc_env[i])) != NULL)
			printf("  %s=%s<32 hex digits, new each run> "
			    "(phantom credential: the proxy puts the real "
			    "value in %s for %s)\n", ph->ph_env,
			    PHANTOM_PREFIX, ph->ph_header, ph->ph_host.pi_text);
		else
			printf("  %s\n", run->r_sb.sb_cmd.sc_env[i]);
	}
	if (run->r_env_dropped != NULL)
		printf("dropped from the host's environment (names only):\n"
		    "  %s\n", run->r_env_dropped);
	printf("command:");
	for (i = 0; run->r_sb.sb_cmd.sc_argv[i] != NULL; i++)
		printf(" %s", run->r_sb.sb_cmd.sc_argv[i]);
	printf("\n  in %s\n", run->r_sb.sb_cmd.sc_cwd);
}

/* --dry-run: what the run would do, in the order it would do it. */
void
run_print(const struct run *run, const struct run_net *net,
    const struct trust_bundle *ib)
{
	size_t	 i;
	int	 abi = landlock_abi();

	printf("sandbox %s\n", run->r_sb.sb_id);
	printf("namespaces: user (uid %u, gid %u), mount, pid, ipc, uts, "
	    "cgroup%s\n", (unsigned int)run->r_sb.sb_cmd.sc_uid,
	    (unsigned int)run->r_sb.sb_cmd.sc_gid,
	    run->r_sb.sb_net.sn_mode == NET_HOST ? "; the host's network" :
	    ", network");
	run_print_net(run, net);
	printf("mounts, in order:\n");
	mount_steps_print(&run->r_sb, stdout);
	for (i = 0; i < run->r_sb.sb_view.sv_plan->fp_nnotes; i++)
		printf("  note: %s\n", run->r_sb.sb_view.sv_plan->fp_notes[i]);
	printf("Landlock: ");
	if (abi == 0)
		printf("not in this kernel (the mounts alone limit writes)\n");
	else {
		printf("ABI %d; read everywhere, write below:", abi);
		for (i = 0; i < run->r_sb.sb_cmd.sc_nll; i++)
			if (run->r_sb.sb_cmd.sc_ll[i].lr_write)
				printf(" %s",
				    run->r_sb.sb_cmd.sc_ll[i].lr_path);
		printf("%s\n", abi >= 6 ? "; abstract Unix sockets and "
		    "signals scoped to the sandbox" : "");
	}
	printf("seccomp: EPERM for ptrace, process_vm_*, io_uring, bpf, "
	    "perf_event_open, userfaultfd, keyctl, kexec, modules, mount "
	    "calls, setns, new namespaces, TIOCSTI/TIOCLINUX, socket "
	    "families but unix/inet/inet6/netlink-route%s; other ABIs "
	    "refused\n", run->r_unix_mode == SYSF_UNIX_ALLOW ? "" :
	    run->r_unix_mode == SYSF_UNIX_NOTIFY ? ", Unix sockets but "
	    "stream and seqpacket ones; every connect(2) made by cordon run, "
	    "to the sandbox's own Unix sockets and the listed ones" :
	    ", Unix sockets but stream and seqpacket socketpairs");
	unixroute_print(run->r_sb.sb_view.sv_routes, stdout);
	printf("capabilities: none; no_new_privs; fds above 2 closed\n");
	printf("after the run: a .git, .hg or bare repository made or changed "
	    "in the writable folders that could make git on the host run a "
	    "program, or a .cordon the command made, is renamed NAME%sID, and "
	    "the run exits %d; a repository that runs nothing is kept\n",
	    ".cordon-quarantine-", RUN_EXIT_FAILURE);
	run_print_env(run, ib);
}
