/*
 * runner.h: `cordon run`, the sandbox.  One block per source file, in the
 * order a run uses them: run_cmd.c reads the options, run_prepare.c and
 * run_plan.c decide the run, run.c is the process outside (the proxy,
 * the clone, the wait), run_end.c its end (the summary, the report),
 * sandbox.c the sandbox's PID 1 and the command's last steps, mount.c
 * the sandbox's view of the files.
 */
#ifndef CORDON_RUNNER_H
#define CORDON_RUNNER_H

#include <sys/types.h>
#include <sys/stat.h>

#include <limits.h>
#include <pthread.h>
#include <signal.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "endpoint.h"
#include "plan.h"
#include "policy.h"
#include "proxy.h"
#include "sandbox.h"
#include "secrets.h"

/* sysfilter.c: the seccomp filter, built before fork, loaded last. */
enum sysfilter_unix {
	SYSF_UNIX_DENY,		/* no Unix socket reaches a path */
	SYSF_UNIX_NOTIFY,	/* stream and seqpacket; connect(2) goes to */
				/* cordon run (notify.c) */
	SYSF_UNIX_ALLOW
};

int	sysfilter_new(enum sysfilter_unix, bool, char **);

/*
 * unixroute.c: the host Unix sockets the sandbox may connect to.  Each
 * route is a path inside, which the command connects to, and a socket
 * of the host that cordon run connects for it; the policy's
 * filesystem.unix_sockets gives routes with the same path on both sides.
 * Another part of cordon may add its own with unixroute_add (a socket in
 * its private folder, answered inside at a path under /run/cordon).
 * struct unix_route is sandbox.h's: mount.c reads the routes too.
 */
struct fsplan;
struct policy;

int	unixroute_add(struct unix_routes *, const char *, const char *,
	    const char *, char **);
int	unixroute_policy(struct unix_routes *, const struct policy *,
	    const struct fsplan *, char **);
const struct unix_route *unixroute_find(const struct unix_routes *,
	    const char *, size_t);
void	unixroute_print(const struct unix_routes *, FILE *);
void	unixroute_clear(struct unix_routes *);

/*
 * notify.c: the sandbox's connect(2) calls, made by a thread of cordon
 * run (SECCOMP_RET_USER_NOTIF).  Each call on a Unix socket is told to
 * the event loop as a record.
 */
enum notify_why {
	NOTIFY_ALLOWED,		/* a route's inside path; ne_errno says */
				/* how the connect went */
	NOTIFY_UNLISTED,	/* a path no route has: a host socket */
	NOTIFY_RELATIVE,	/* ... named by a relative path */
	NOTIFY_OWN,		/* the sandbox's own socket: connected, */
				/* not logged */
	NOTIFY_NOTHING,		/* no socket there: not logged */
	NOTIFY_ABSTRACT,	/* an abstract name of the host's network */
				/* namespace (--net host) */
	NOTIFY_HOST_PORT	/* a loopback port where nothing listens */
				/* inside, and the host has a server */
};

/* sun_path's size: the longest path or abstract name the kernel reads. */
#define NOTIFY_PATH_MAX	108

struct notify_event {
	int		 ne_pid;	/* the caller, in cordon run's view */
	enum notify_why	 ne_why;
	int		 ne_errno;	/* NOTIFY_ALLOWED: the connect's */
	size_t		 ne_route;	/* NOTIFY_ALLOWED: index in routes */
	bool		 ne_unix;	/* a Unix socket's call */
	unsigned int	 ne_port;	/* NOTIFY_HOST_PORT: the port */
	size_t		 ne_pathlen;	/* at most NOTIFY_PATH_MAX */
	char		 ne_path[NOTIFY_PATH_MAX]; /* not terminated */
};

struct notify;

/* hostport.c: whether the host serves a loopback port the sandbox lacks. */
struct nlmsghdr;
int		 sockdiag_read(int, uint32_t, bool (*)(const struct nlmsghdr *,
		    const void *), const void *);
bool		 hostport_listens(unsigned int);
unsigned int	 hostport_loopback(const void *, size_t);
int		 hostport_inside(int, uint32_t *, unsigned int);

int		 notify_probe(char **);
struct gitwrite;
struct notify	*notify_start(const struct unix_routes *, struct gitwrite *, int,
		    char **);
int		 notify_events_fd(const struct notify *);
int		 notify_read(struct notify *, struct notify_event *);
void		 notify_stop(struct notify *);
size_t		 notify_dropped(const struct notify *);
void		 notify_free(struct notify *);

/*
 * unixown.c: a Unix socket path of the command, opened as it sees it,
 * and whether a socket of a network namespace is bound to that inode.
 */
int	unixown_open(pid_t, const char *, int *);
int	unixown_bound(int, uint32_t, const struct stat *);

/*
 * notify_addr.c: the address a connect(2) of the command passed, judged
 * from its bytes alone (the kernel's answer to a malformed one).
 */
#define NOTIFY_ADDR_MAX	128	/* sizeof(struct sockaddr_storage) */

enum notify_addr_kind {
	NOTIFY_ADDR_PATH,	/* a Unix socket's path, in na_path */
	NOTIFY_ADDR_ABSTRACT,	/* an abstract name, after its NUL */
	NOTIFY_ADDR_UNSPEC,	/* AF_UNSPEC: a datagram socket's */
				/* disconnect */
	NOTIFY_ADDR_PASS	/* an Internet or netlink address: */
				/* to the kernel as given */
};

struct notify_addr {
	enum notify_addr_kind	 na_kind;
	size_t			 na_len;	/* of na_path */
	char			 na_path[NOTIFY_PATH_MAX + 1];
						/* terminated */
};

bool	notify_addr_len_ok(int);
int	notify_addr_judge(const void *, int, int, int, struct notify_addr *);

/* env.c: the sandboxed command's environment, from host and policy. */
#define ENV_MAX_VARS	4096
#define ENV_MAX_BYTES	(1024 * 1024)	/* "NAME=value" and NUL, summed */

struct policy;
struct phantom;

struct env_proxy {
	int			 ep_port;	/* the proxy on 127.0.0.1, */
						/* HTTP and SOCKS5 */
	const struct phantom	*ep_phantoms;	/* ph_env gets ph_placeholder: */
						/* it wins over pass and set */
	size_t			 ep_nphantoms;
	const char		*ep_ca_bundle;	/* NULL, or the CA bundle's */
						/* path inside: env_ca_vars */
	const char		*ep_ca_java;	/* NULL, or the same as Java's */
						/* trust store */
	const char		*ep_apt_conf;	/* NULL, or APT_CONFIG, unless */
						/* one is passed */
	const char		*ep_agent_sock;	/* NULL, or SSH_AUTH_SOCK: */
						/* cordon's agent, inside */
};

/* The variables that point tools at a CA bundle, and who reads each. */
struct env_ca_var {
	const char	*cv_name;
	const char	*cv_reader;
};

extern const struct env_ca_var	env_ca_vars[];
extern const size_t		env_ca_nvars;

char	**env_build(const struct policy *, char *const *,
	    const struct env_proxy *, char **);
void	  env_free(char **);
char	 *env_dropped(const struct policy *, char *const *);

/*
 * trust.c: the phantom credentials and the CA bundle of a run that
 * inspects TLS, made outside before the clone.
 */
struct phantom;

struct trust_bundle {
	char		*ib_pem;	/* the base bundle, then cordon's CA */
	size_t		 ib_len;
	char		*ib_base;	/* the base bundle's path, or NULL */
	char		*ib_extra;	/* the host's CA files added, or NULL */
	char		*ib_ca;		/* cordon's ca.crt */
	char		 ib_fingerprint[96];	/* the CA's SHA-256 */
	unsigned char	*ib_java;	/* the same, as Java's trust store */
	size_t		 ib_java_len;	/* (PKCS#12, DER) */
};

char	*trust_placeholder(void);
void	trust_phantoms(const struct policy *, char *const *,
	    struct phantom **, size_t *);
bool	trust_wanted(const struct policy *);
void	trust_hide_ca(struct policy *);
int	trust_bundle(const struct policy *, char *const *,
	    struct trust_bundle *, char **);
void	trust_bundle_clear(struct trust_bundle *);

/*
 * The run, on the host: the sandbox's description (sandbox.h), decided
 * before the clone, and what only cordon run reads: the policy, the
 * guard, the renames' configs, the phantoms, what none may keep.
 */
#define RUN_ASK_SECS		60	/* --ask: how long a connection waits */

/*
 * What no kept folder may be or hold (keep.c): a path below the home
 * ("/.config/fish"), and the rule that protects or hides it.
 */
struct keep_point {
	char		*kp_rel;
	char		*kp_why;
	bool		 kp_hidden;	/* a deny rule's */
};

struct fsplan;

/* `cordon session start`'s own options (session_cmd.c). */
struct session_opts {
	const char	*so_name;	/* --name, or NULL */
	long		 so_idle;	/* --idle SECONDS, or 0 */
	char		 so_id[17];	/* the session's id */
	char		 so_dir[PATH_MAX]; /* the user's sessions' folder */
	int		 so_ready;	/* write end: the id, once ready */
};

struct run {
	struct sandbox		  r_sb;		/* what crosses the clone */
	char			 *r_env_dropped; /* env_dropped(), or NULL */
	const struct policy	 *r_policy;
	bool			  r_unix;	/* Unix sockets allowed */
	enum sysfilter_unix	  r_unix_mode;	/* what seccomp does */
	struct gitwrite		 *r_gitwrite;	/* protected configs the */
						/* command's renames reach, */
						/* or NULL */
	const char		 *r_workspace;
	const char		 *r_sysdirs[4];	/* root: /usr, /etc, ... that */
	size_t			  r_nsysdirs;	/* may be scratch layers */
	bool			  r_secrets_filled; /* the proxy fills them */
	const char		 *r_hidden_cfg[8]; /* tools' token files hidden */
	size_t			  r_nhidden_cfg;
	struct keep_point	 *r_points;	/* what none may be or hold */
	size_t			  r_npoints;
	const uint16_t		 *r_publish;	/* --publish: ports served inside */
	size_t			  r_npublish;
	struct guard		 *r_guard;	/* checks the roots after */
	struct phantom		 *r_phantoms;	/* owned until run_exec() */
	size_t			  r_nphantoms;	/* hands them to the proxy */
	const struct session_opts *r_session_opts; /* a session's, or NULL */
	const struct env_proxy	 *r_ep;		/* what env_build adds */
};


/* publish.c: --publish, the host's 127.0.0.1:PORT to the sandbox's. */
#define PUBLISH_MAX	16

struct publish_port {
	struct evconnlistener	*pp_l;
	int			 pp_fd;		/* until pp_l has it */
	uint16_t		 pp_port;
	int			 pp_pair;	/* borrowed: the publish's */
};

struct publish {
	struct publish_port	*pb_ports;
	size_t			 pb_n;
	int			 pb_pair;	/* outside's end */
};

struct event_base;
int	publish_open(struct publish *, const uint16_t *, size_t, int *,
	    char **);
int	publish_start(struct publish *, struct event_base *);
void	publish_close(struct publish *);
void	publish_forget(struct publish *);

/*
 * run_secrets.c: what a run makes of the tools' token files (secrets.h):
 * the hosts to inspect, the phantoms, the summary's and report's list.
 */
void	run_secrets_prepare(struct run *, struct policy *, bool);
void	run_secrets_phantoms(struct run *);
json_t	*run_secrets_json(const struct run *);

/*
 * guard.c: after the run, the repositories the command made or changed
 * in the writable roots, and the git directories git reaches from them
 * (modules, worktrees, .git files, commondir), renamed out of git's
 * sight and reported.
 */
#define GUARD_SCAN_MAX	1000000		/* entries of folders there before */

struct guard_root {
	int		 gr_fd;		/* O_PATH, opened before the run */
	const char	*gr_path;	/* the plan's */
};

struct guard_find {
	char		*gf_path;	/* the marker: .git, .hg, a HEAD */
	char		*gf_moved;	/* its new name; NULL: kept */
	const char	*gf_what;
	char		*gf_why;	/* what could run; NULL: kept */
	bool		 gf_kept;	/* inert: the user's work */
	bool		 gf_policy;	/* a .cordon the command made */
	int		 gf_error;	/* the rename's errno, or 0 */
};

struct guard {
	struct guard_root *g_roots;
	size_t		 g_nroots;
	struct fs_mark	*g_known;	/* protected or made before the run */
	size_t		 g_nknown;
	time_t		 g_start;	/* changed from then: the command's */
	size_t		 g_scan_max;	/* GUARD_SCAN_MAX, but in tests */
	size_t		 g_scanned;
	struct guard_find *g_finds;	/* kept and moved */
	size_t		 g_nfinds;
	size_t		 g_nmoved;
	char		**g_watch;	/* the plan's fp_watch, borrowed */
	size_t		 g_nwatch;
};

int	guard_open(struct guard *, const struct fsplan *, char **);
void	guard_know(struct guard *, int);
int	guard_check(struct guard *, const char *);
void	guard_print(const struct guard *, FILE *);
void	guard_clear(struct guard *);

/*
 * gitwrite.c: a protected git config the command writes, applied for it
 * when every key it changes is inert, held back and listed otherwise.
 */
#define GITWRITE_CONTINUE	(-1)	/* not ours: the kernel does it */
#define GITWRITE_CHANGES_MAX	256	/* keys noted; past it, gw_more */

struct gitwrite_cfg {
	char		*wc_path;	/* the config, as on the host */
	struct fs_mark	 wc_file;	/* the file itself */
	bool		 wc_user;	/* ~/.gitconfig: nothing applied */
};

struct gitwrite_change {
	size_t		 ch_cfg;	/* in gw_cfgs */
	char		*ch_key;	/* section[.sub].name */
	char		*ch_value;	/* NULL: a bare name */
	bool		 ch_removed;	/* the key went, else it came */
	bool		 ch_changed;	/* it came in place of a value */
	bool		 ch_unread;	/* the text git would not read: */
					/* ch_value says why, no command */
	bool		 ch_applied;	/* written, else held back */
};

struct gitwrite {
	struct gitwrite_cfg	*gw_cfgs;	/* set before the run */
	size_t			 gw_ncfgs;
	pthread_mutex_t		 gw_lock;	/* guards what follows */
	struct gitwrite_change	*gw_changes;
	size_t			 gw_nchanges;
	bool			 gw_more;	/* some not noted */
};

struct seccomp_notif;
int	gitwrite_init(struct gitwrite *, const struct fsplan *);
int	gitwrite_rename(struct gitwrite *, int, const struct seccomp_notif *);
void	gitwrite_print(struct gitwrite *, FILE *);
json_t	*gitwrite_json(struct gitwrite *);
void	gitwrite_clear(struct gitwrite *);

/*
 * sentinel.c: a process outside the run's process group that makes the
 * guard's check when cordon run ends before it could.
 */
struct sentinel {
	pid_t	 s_pid;		/* -1: none */
	int	 s_fd;		/* our end: one byte, the check is made */
};

int	sentinel_start(struct sentinel *, struct guard *, const char *, int,
	    char **);
void	sentinel_done(struct sentinel *);

/*
 * wspath.c: a file cordon writes where the command may have been: its
 * folder opened before the run, beneath the workspace when in it.
 */
struct wspath {
	int	 w_dir;		/* O_PATH, or -1 */
	char	*w_name;	/* the last component */
	char	*w_shown;	/* the path as given, for messages */
};

int	wspath_open(struct wspath *, const char *, const char *,
	    const char *, const char *, char **);
int	wspath_append(const struct wspath *, char **);
int	wspath_replace(const struct wspath *, const char *, size_t,
	    char **);
void	wspath_clear(struct wspath *);

/* report.c: the proxy's decisions, counted; the summary and --report. */
#define REPORT_VERSION	1

struct egress;
struct tally;

struct report_info {
	const struct run	*ri_run;
	int			 ri_status;	/* cordon run's exit status */
	long long		 ri_duration_ms;
	bool			 ri_own_proxy;
	const char		*ri_proxy_socket;
	const char		*ri_error;	/* why setup failed, or NULL */
	const struct guard	*ri_guard;	/* what it quarantined */
	struct gitwrite		*ri_gitwrite;	/* git config written, held */
};

struct tally	*tally_new(void);
void		 tally_add(struct tally *, const struct egress *,
		    const char *, const char *);
void		 tally_end(struct tally *, json_t *);
void		 tally_hidden(struct tally *, const char *const *, size_t);
void		 tally_tokens(struct tally *, json_t *);
void		 tally_summary(const struct tally *, FILE *);
void		 tally_hooks(const struct tally *, FILE *);
int		 tally_report(const struct tally *, const struct report_info *,
		    const char *, const struct wspath *, char **);
void		 tally_free(struct tally *);

/* control.c: the harness's channel (--control), JSON lines each way. */
struct control;
struct event_base;

struct control_hooks {
	/* {"allow": P} (true) or {"deny": P}: 0, or -1 with *cause */
	int	(*ch_rule)(bool, const char *, void *, char **);
	/* {"answer": ID, "decision": D}, D already checked */
	int	(*ch_answer)(const char *, const char *, void *, char **);
	/* the harness went */
	void	(*ch_closed)(void *);
};

struct control	*control_open(struct event_base *, const char *,
		    const struct control_hooks *, void *, char **);
bool		 control_alive(const struct control *);
void		 control_send(struct control *, json_t *);
void		 control_free(struct control *);

/*
 * agent.c: cordon's ssh-agent for the sandbox, in cordon run's loop: it
 * carries to the user's agent only the logins to hosts the policy
 * allows.  Its socket is in the run's private folder; the sandbox sees
 * it at RUN_AGENT_SOCK.
 */
#define AGENT_CONNS_MAX		32

struct agent;
struct proxy;

bool		 agent_usable(const char *, char **);
struct agent	*agent_new(struct proxy *, const char *, const char *,
		    const char *, const char *, char **);
const char	*agent_path(const struct agent *);
void		 agent_summary(const struct agent *, FILE *);
void		 agent_free(struct agent *);

/*
 * block.c: the placeholders of protected paths that do not exist yet,
 * made for the run and removed after it.
 */
struct blocks {
	int	*b_fd;		/* per op: the locked folder, or -1 */
	int	*b_up;		/* per op: the folder it is in, if made */
	bool	*b_made;	/* per op: this run made it */
	size_t	 b_n;
};

int	block_prepare(struct fsplan *, struct blocks *, struct guard *,
	    char **);
void	block_cleanup(struct fsplan *, struct blocks *);

/* run.c: the process outside. */
struct run_net {
	const char	 *net_socket;	/* --proxy-socket, or NULL: our own */
	const char	 *net_dns;	/* servers, comma-separated, or NULL */
	const char	**net_pins;	/* --resolve NAME:ADDR */
	const char	 *net_upstream_ca; /* --upstream-ca FILE */
	size_t		  net_npins;
	const char	 *net_log;	/* --log FILE, or NULL */
	bool		  net_quiet;	/* no summary */
	const char	 *net_report;	/* --report PATH|fd:N */
	struct wspath	  net_report_at;	/* PATH's folder, opened before */
	struct wspath	  net_log_at;	/* --log's, when cordon's proxy */
	const char	 *net_control;	/* --control PATH|fd:N */
	bool		  net_ask;	/* --ask */
	int		  net_ask_secs;	/* --ask-secs */
};

struct ask;
struct bufferevent;
struct event;
struct evconnlistener;

/*
 * A run seen from outside, from run_exec() to run_end(): what a step
 * made is here, and run_end() frees it; what none made is NULL or -1.
 */
struct runner {
	struct run		*rn_run;
	const struct run_net	*rn_net;
	struct event_base	*rn_base;	/* the process's one loop */
	struct proxy		 rn_proxy;	/* made when rn_own_proxy */
	bool			 rn_own_proxy;
	struct endpoint		 rn_ep;
	struct evconnlistener	*rn_listener;
	char			*rn_dir;	/* the socket's private folder */
	pid_t			 rn_pid;
	int			 rn_pidfd;
	int			 rn_status;	/* exit code, once known */
	bool			 rn_done;
	struct timespec		 rn_start;	/* for the report's duration */
	char			*rn_setup_error; /* PID 1's first line */
	int			 rn_sfd;	/* the signalfd */
	int			 rn_sync[2];	/* our go to PID 1 */
	int			 rn_err[2];	/* why its setup failed */
	int			 rn_ends[2];	/* what it said at the end */
	int			 rn_npair[2];	/* the seccomp listener's way */
	struct publish		 rn_pub;	/* --publish */
	struct event		*rn_evs[3];	/* run_watch() to run_wait() */
	size_t			 rn_nev;
	bool			 rn_step_failed; /* after the clone: the run fails */
	struct tally		*rn_tally;
	struct notify		*rn_notify;	/* the sandbox's connects */
	struct sentinel		 rn_sentinel;	/* checks if we cannot */
	struct agent		*rn_agent;	/* cordon's ssh-agent, or NULL */
	struct control		*rn_control;
	struct ask		*rn_asks;
	size_t			 rn_nasks;
	unsigned long		 rn_seq;	/* ids of events */
	struct bufferevent	*rn_feed;	/* --proxy-socket: run_feed.c */
	bool			 rn_feed_ended;
	struct keeper		*rn_keeper;	/* a session's, or NULL */
	struct policy		*rn_env_policy;	/* a session's, without */
						/* a proxy of its own */
};

int		run_exec(struct run *, struct policy *, const struct run_net *);

/* keeper.c: a session's side outside: its socket, its clients. */
struct egress;
int	keeper_open(struct runner *);
void	keeper_start(struct runner *);
void	keeper_signal(struct runner *, int);
void	keeper_tally(struct runner *, const struct egress *, const char *,
	    const char *);
void	keeper_end(struct runner *);

/* run_control.c: the harness's side (--control, --ask). */
extern const struct proxy_hooks run_proxy_hooks;	/* hooks: rn */
int	run_control_start(struct runner *);

/* run_feed.c: the operator's proxy's preflight and feed (--proxy-socket). */
int	run_feed_open(struct runner *);
void	run_feed_start(struct runner *);
void	run_feed_end(struct runner *);

/* run_end.c: what the sandbox left, the summary, the report, the end. */
void	run_end_collect(struct runner *);
int	run_end(struct runner *);

/* run_cmd.c: `cordon run`'s options, as given. */
#define RUN_KEEP_MAX	16	/* --keep folders */

struct run_opts {
	struct policy_layers	  ro_layers;	/* the policy flags, in order */
	struct run_net		  ro_net;	/* the proxy's and the report's */
	char			  ro_cwd[PATH_MAX];
	const char		 *ro_ws;	/* --workspace, or NULL */
	char			**ro_argv;	/* the command */
	char			 *ro_dns;	/* --dns, comma-joined */
	char			**ro_owned;	/* path flags made absolute */
	size_t			  ro_nowned;
	uint16_t		  ro_publish[PUBLISH_MAX];
	size_t			  ro_npublish;
	const char		 *ro_keep[RUN_KEEP_MAX];
	bool			  ro_keep_shared[RUN_KEEP_MAX];
	size_t			  ro_nkeep;
	bool			  ro_dry;	/* --dry-run */
	bool			  ro_no_landlock; /* --allow-no-landlock */
	const struct session_opts *ro_session;	/* session start, or NULL */
};

int	run_cmd(int, char **);
int	run_cmd_session(int, char **, const struct session_opts *);

/*
 * run_prepare.c: a run, decided before the clone.  It owns all it
 * points to, and borrows the options' strings.
 */
struct run_prep {
	struct run		 rp_run;
	struct run_net		 rp_net;	/* the options', with the folders */
						/* of --report and --log opened */
	struct policy_layers	 rp_layers;	/* the options', in the workspace */
	struct policy		*rp_policy;	/* until run_exec() takes it */
	struct fsplan		 rp_plan;
	struct trust_bundle	 rp_ib;
	struct env_proxy	 rp_ep;
	struct unix_routes	 rp_routes;
	struct guard		 rp_guard;
	struct gitwrite		 rp_gitwrite;
	struct blocks		 rp_blocks;
	char			 rp_workspace[PATH_MAX];
	char			 rp_home[PATH_MAX];	/* the scratch layer's */
	char			*rp_known[2];	/* known_hosts, for the agent */
};

int	run_prepare(struct run_prep *, const struct run_opts *);
int	run_prepare_exec(struct run_prep *, const struct run_opts *);
void	run_prepare_clear(struct run_prep *);

/* run_plan.c: the mount plan, and what follows from it. */
int	run_plan(struct run_prep *, const struct run_opts *);

/* keep.c: --keep and --keep-shared, and what may be kept. */
int	keep_plan(struct run *, const struct run_opts *, const char *);
bool	keep_allowed(const struct run *, const char *);
bool	keep_is_point(const struct run *, const char *);
void	keep_clear(struct run *);

/* run_print.c: --dry-run. */
void	run_print(const struct run *, const struct run_net *,
	    const struct trust_bundle *);

/*
 * run_macos.c: macOS only, the command under sandbox-exec with the
 * policy's Seatbelt profile and the proxy on localhost:port.
 */
int	run_macos(const struct policy *, int, char **, char **);

#endif
