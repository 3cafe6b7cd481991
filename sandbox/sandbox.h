/*
 * sandbox.h: what runs inside the sandbox, after the clone: its PID 1
 * (sandbox.c), the command's last steps (command.c), the filesystem view
 * (mount.c, mount_steps.c), Landlock (landlock.c), the seccomp filter's
 * loading (sysfilter_apply.c), the capture's addresses and rules
 * (netcap.c), the scratch layers (scratch.c), --publish's inside end
 * (publish_inside.c), and how a failed step ends (sandbox_fail.c).
 *
 * What crosses the clone is one struct sandbox, decided by cordon run on
 * the host (runner/) before the clone and read-only after it; nothing
 * inside allocates a policy or parses a file.  Its parts are grouped by
 * who reads them.  Nothing here includes runner.h: the host calls down
 * into this folder, never the other way.
 */
#ifndef CORDON_SANDBOX_H
#define CORDON_SANDBOX_H

#include <sys/types.h>

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "plan/plan.h"
#include "secrets/secrets.h"

/*
 * The run's constants both sides use.  They keep cordon run's RUN_
 * prefix: the host names them in its messages, the report and the
 * command's environment.
 */
#define RUN_ID_LEN		16	/* hex digits */
#define RUN_BRIDGE_PORT		3128	/* inside: 127.0.0.1 and [::1] */
#define RUN_EXIT_FAILURE	125	/* cordon's own failure */
#define RUN_EXIT_NOEXEC		126
#define RUN_EXIT_NOTFOUND	127
#define RUN_OWN_DIR		"/run/cordon"	/* inside: the private /run */
#define RUN_CA_BUNDLE		RUN_OWN_DIR "/ca-bundle.pem"
#define RUN_CA_JAVA		RUN_OWN_DIR "/ca-bundle.p12"
#define RUN_RESOLV_CONF		RUN_OWN_DIR "/resolv.conf"
#define RUN_APT_CONF		RUN_OWN_DIR "/apt.conf"
#define RUN_AGENT_SOCK		RUN_OWN_DIR "/ssh-agent.sock"

/*
 * The signals passed on to the command.  Both cordon run and PID 1 read
 * them from a signalfd(2), which says who sent each: a signal the
 * terminal sent (SI_KERNEL) reached the command's process group itself
 * when the command shares the terminal, and is not passed again.
 */
#define RUN_FORWARDED	{ SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, \
			    SIGUSR2, SIGWINCH }

/*
 * The host Unix sockets the sandbox may connect to (unixroute.c, on the
 * host, makes them).  Each route is a path inside, which the command
 * connects to, and a socket of the host that cordon run connects for
 * it; mount.c leaves each inside path reachable.
 */
struct unix_route {
	char		*ur_inside;	/* absolute, as the command writes it */
	char		*ur_host;	/* absolute, resolved before the run */
	char		*ur_from;	/* the policy entry, or who added it */
	int		 ur_pin;	/* O_PATH of a socket in a writable */
					/* folder, pinned before the run; */
					/* or -1 */
};

struct unix_routes {
	struct unix_route *ur_v;
	size_t		 ur_n;
};

/* --keep: a folder of the home, bound from cordon's own copy of it. */
struct sandbox_keep {
	char		*k_path;	/* in the home, resolved */
	char		*k_from;	/* cordon's copy (keepdir.c) */
	bool		 k_shared;	/* --keep-shared: every workspace's */
};

/* Ports of the host's loopback the sandbox reaches (network.host_ports). */
struct netcap_range {
	uint16_t	 nr_lo;
	uint16_t	 nr_hi;
};

/* landlock.c: the second filesystem layer, and scoping. */
struct landlock_rule {
	const char	*lr_path;
	bool		 lr_write;	/* else read (and execute) only */
};

int	landlock_abi(void);
int	landlock_ruleset(const struct landlock_rule *, size_t, bool, char **);
int	landlock_restrict(int, char **);
int	landlock_apply(const struct landlock_rule *, size_t, bool, char **);

/*
 * The sandbox, as cordon run decided it before the clone.  Read by PID 1
 * and the command, never written by them.
 */

/* The filesystem view: what mount.c builds, and PID 1's own files. */
struct sandbox_view {
	struct fsplan		 *sv_plan;
	struct unix_routes	 *sv_routes;	/* host sockets reachable */
	const char		 *sv_runtime_dir; /* $XDG_RUNTIME_DIR, or NULL */
	const char		 *sv_scratch;	/* the home, overlaid, or NULL */
	const char		 *sv_sysscratch[2]; /* root: apt's, overlaid */
	size_t			  sv_nsysscratch;
	const char		 *sv_syslayer[4]; /* the system's folders */
	size_t			  sv_nsyslayer;	/* overlaid (scratch layers) */
	struct sandbox_keep	 *sv_keep;	/* --keep: in the scratch layer */
	size_t			  sv_nkeep;
	struct secret_file	 *sv_secrets;	/* tools' token files, copied */
	size_t			  sv_nsecrets;
	const char		 *sv_agent_real; /* the user's SSH_AUTH_SOCK, */
						/* when cordon's agent is on */
	const char		 *sv_agent_sock; /* cordon's agent's socket, */
						/* bound at RUN_AGENT_SOCK */
	struct fs_mark		  sv_agent_id;	/* ... and what must be there */
	const char		 *sv_ca_pem;	/* NULL, or the CA bundle */
	size_t			  sv_ca_len;	/* PID 1 writes: RUN_CA_BUNDLE */
	const unsigned char	 *sv_ca_java;	/* the same for Java: */
	size_t			  sv_ca_java_len; /* RUN_CA_JAVA */
};

/* The network: what PID 1 sets up (lo, the capture, the bridge). */
struct sandbox_net {
	int			  sn_mode;	/* enum net_mode */
	bool			  sn_capture;	/* every TCP connection, DNS too */
	struct netcap_range	 *sn_host_ports; /* with the capture */
	size_t			  sn_nhost_ports;
	int			  sn_proxy_dir;	/* O_PATH: the socket's folder */
	const char		 *sn_proxy_name; /* the socket, in that folder */
	const char		 *sn_proxy_path; /* the same, whole, for messages */
	char			 *sn_narrow;	/* --proxy-socket: the run's rules */
	bool			  sn_channel;	/* it has a harness: PP2 says so */
};

/* PID 1's pipes to and from cordon run. */
struct sandbox_pipes {
	int			  sp_sync;	/* read end: the parent's go */
	int			  sp_errfd;	/* write end: why setup failed */
	int			  sp_endfd;	/* write end: the drops, at exit */
	int			  sp_pubfd;	/* --publish: their connections */
	int			  sp_session;	/* a session's pair with the */
						/* keeper, or -1 */
	int			  sp_ready;	/* session start's, to close */
};

/*
 * One command: what its last steps (command_exec) read, and nothing
 * else.  Every command PID 1 starts gets the same Landlock rules and
 * seccomp program.
 */
struct sandbox_cmd {
	char			**sc_argv;
	char			**sc_env;	/* env_build() */
	const char		 *sc_cwd;	/* where the command starts */
	bool			  sc_tty;	/* it keeps the terminal */
	uid_t			  sc_uid;
	gid_t			  sc_gid;
	struct landlock_rule	 *sc_ll;		/* the writable roots */
	size_t			  sc_nll;
	int			  sc_llfd;	/* a ruleset built once, or -1 */
	bool			  sc_bset_empty; /* emptied by PID 1 */
	int			  sc_seccomp;	/* sysfilter_prog_write()'s memfd */
	const struct sock_fprog	 *sc_prog;	/* or read once, or NULL */
	int			  sc_notifyfd;	/* it sends its seccomp listener */
						/* on it, or -1 */
	int			  sc_errfd;	/* write end: why it did not start */
	char			  sc_name[65];	/* argv[0]'s name, for the log */
};

struct sandbox {
	char			  sb_id[RUN_ID_LEN + 1];
	struct sandbox_view	  sb_view;
	struct sandbox_net	  sb_net;
	struct sandbox_pipes	  sb_pipes;
	struct sandbox_cmd	  sb_cmd;
	bool			  sb_pause;	/* a session's: its processes */
						/* stopped between commands */
};

/* sandbox.c: runs in the sandbox as its PID 1; never returns. */
int	sandbox_sigset(sigset_t *);
int	sandbox_unixdiag(void);
void	sandbox_main(const struct sandbox *) __attribute__((noreturn));

/*
 * sandbox_session.c: PID 1 of a session: no command of its own, but
 * each the keeper asks for, forked and reaped here.
 */
struct event_base;
struct scratch_fds;
void	sandbox_session(const struct sandbox *, struct event_base *,
	    const struct scratch_fds *)
	    __attribute__((noreturn));
void	sandbox_session_reaped(const struct sandbox *, pid_t, int);

/* sandbox_fail.c: a step inside failed: the reason to errfd, and exit. */
void	sandbox_fail(int, int, const char *, ...)
	    __attribute__((format(printf, 3, 4), noreturn));

/* command.c: a command's last steps, in its own process; never returns. */
#define COMMAND_STACK	(256 * 1024)	/* command_spawn's stack */
void	command_exec(const struct sandbox_cmd *) __attribute__((noreturn));
void	command_bset_drop(int);
pid_t	command_spawn(int (*)(void *), void *, char *);
char	*command_stack(void);

/* sysfilter_apply.c: the seccomp program (sysfilter.c), loaded last. */
struct sock_fprog;
int	sysfilter_apply(int, int *, char **);
int	sysfilter_apply_read(int, struct sock_fprog *, char **);
int	sysfilter_apply_load(const struct sock_fprog *, int *, char **);
int	sysfilter_apply_send_listener(int, int, char **);

/*
 * netcap.c: the capture's address, routes and nftables rules, set up by
 * PID 1 in the sandbox's network namespace.  The addresses are of ranges
 * no host of the Internet has (RFC 2544's 198.18.0.0/15, RFC 8215's
 * 64:ff9b:1::/48), and only the sandbox sees them.
 */
#define NETCAP_ADDR4	"198.18.0.1"
#define NETCAP_ADDR6	"64:ff9b:1::1"

/* Packets the capture dropped: only TCP and DNS leave the sandbox. */
struct netcap_drops {
	uint64_t	 nd_quic;	/* UDP to port 443 */
	uint64_t	 nd_udp;	/* other UDP (DNS is answered inside) */
	uint64_t	 nd_other;	/* ICMP and the rest */
};

int	netcap_setup(unsigned short, const struct netcap_range *, size_t,
	    char **);
int	netcap_drops(struct netcap_drops *);

/* publish_inside.c: --publish, PID 1's end. */
int	publish_inside(struct event_base *, int);

/*
 * scratch.c: what the scratch layers hold, for the summary (PID 1), and
 * which system folders may be layers (the host, before the clone).
 */
#define RUN_HOOKS_MAX	16	/* git hooks folders layered, at most */
#define RUN_SCRATCH_MAX	(7 + RUN_HOOKS_MAX)	/* the home; for root, */
				/* apt's two and the system's four; hooks */

struct scratch_fds {
	int		 sf_fd[RUN_SCRATCH_MAX];	/* each layer's folder */
	const char	*sf_shown[RUN_SCRATCH_MAX];	/* "~/", "/var/..../" */
	bool		 sf_hooks[RUN_SCRATCH_MAX];	/* a git hooks folder */
	size_t		 sf_n;
};

json_t	*scratch_list(const struct scratch_fds *);
void	 scratch_system_dirs(const char **, size_t *);
void	 scratch_system(const struct fsplan *, const char *const *, size_t,
	    const char **, size_t *);

/*
 * mount.c: the sandbox's filesystem, in its own mount namespace (PID 1);
 * mount_steps.c: the list of its steps, which --dry-run prints.
 */
int	mount_sandbox(const struct sandbox *, struct scratch_fds *);
void	mount_steps_print(const struct sandbox *, FILE *);

/* sandbox_end.c: what PID 1 tells cordon run at the end. */
void	sandbox_end_alone(void);
void	sandbox_end_tell(const struct sandbox *, const struct scratch_fds *,
	    int);

#endif
