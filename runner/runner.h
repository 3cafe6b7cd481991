/*
 * runner.h: `cordon run` on the host, the parts every step of a run
 * shares: struct run (the host's state around the sandbox's description,
 * sandbox.h's struct sandbox, which crosses the clone), the options
 * (run_cmd.c), the Unix
 * socket routes (unixroute.c), the files written where the command was
 * (wspath.c), --publish's listeners (publish.c), --keep (keepdir.c), the
 * token files' part (run_secrets.c), --dry-run (run_print.c) and macOS
 * (run_macos.c).  Each other part has its own header, included where it
 * is used: run_prep.h (the run decided before the clone), run_host.h (the
 * process outside), notify.h, notify_addr.h and sockdiag.h (the connect
 * thread), guard.h (the check after the run, the sentinel, git configs,
 * placeholders), tally.h (the summary and --report), control.h,
 * agent.h, env.h, trust.h.
 */
#ifndef CORDON_RUNNER_H
#define CORDON_RUNNER_H

#include <sys/types.h>
#include <sys/stat.h>

#include <limits.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "plan/plan.h"
#include "policies/policy.h"
#include "sandbox/sandbox.h"
#include "secrets/secrets.h"

#include "confine/sysfilter.h"

/*
 * The run, on the host: the sandbox's description (sandbox.h), decided
 * before the clone, and what only cordon run reads: the policy, the
 * guard, the renames' configs, the phantoms, what none may keep.
 */
#define RUN_ASK_SECS		60	/* --ask: how long a connection waits */

/*
 * What no kept folder may be or hold (keepdir.c): a path below the home
 * ("/.config/fish"), and the rule that protects or hides it.
 */
struct keep_point {
	char		*kp_rel;
	char		*kp_why;
	bool		 kp_hidden;	/* a deny rule's */
};

struct fsplan;
struct gitwrite;
struct guard;
struct phantom;

/* `cordon session start`'s own options (session_cmd.c). */
struct session_opts {
	const char	*so_name;	/* --name, or NULL */
	long		 so_idle;	/* --idle SECONDS, or 0 */
	bool		 so_run_between; /* --run-between: not stopped */
	char		 so_id[17];	/* the session's id */
	char		 so_dir[PATH_MAX]; /* the user's sessions' folder */
	int		 so_ready;	/* write end: the id, once ready */
	int		 so_name_fd;	/* NAME.name, locked, or -1 */
};

/* session_cmd.c: a session started, for session start and cordon mcp. */
int	session_cmd_begin(int, char **, struct session_opts *, bool,
	    pid_t *);

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

struct evconnlistener;
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
void	run_secrets_renewed(struct run *, const char *,
	    const struct phantom *, size_t, long long);
json_t	*run_secrets_json(const struct run *);

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

/* run.c: the proxy's and the report's options, for the process outside. */
struct run_net {
	const char	 *net_socket;	/* --proxy-socket, or NULL: our own */
	const char	 *net_remote;	/* --proxy tls://, also net_socket */
	const char	 *net_cert;	/* --client-cert */
	const char	 *net_key;	/* --client-key */
	const char	 *net_ca;	/* --proxy-ca */
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

/* keepdir.c: --keep and --keep-shared, and what may be kept. */
struct fscache;
int	keepdir_plan(struct run *, const struct run_opts *, const char *,
	    const struct pagent *, struct fscache *);
bool	keepdir_allowed(const struct run *, const char *);
bool	keepdir_is_point(const struct run *, const char *);
void	keepdir_clear(struct run *);
void	keepdir_login_put(struct run *);
void	keepdir_login_drop(struct run *);

/* run_print.c: --dry-run. */
struct trust_bundle;
void	run_print(const struct run *, const struct run_net *,
	    const struct trust_bundle *);

/*
 * run_macos.c: macOS only, the command under sandbox-exec with the
 * policy's Seatbelt profile and the proxy on localhost:port.
 */
int	run_macos(const struct policy *, int, char **, char **);

#endif
