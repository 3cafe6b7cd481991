/*
 * run_host.h: the process outside, cordon run on the host from run_exec() to
 * run_end(): the proxy, the clone, the wait (run.c), the private folder
 * and its socket (run_sock.c), the harness's side (control_run.c), the
 * operator's proxy's feed (control_feed.c, reopened by
 * control_feed_replay.c), and the end (run_end.c).
 */
#ifndef CORDON_RUN_HOST_H
#define CORDON_RUN_HOST_H

#include <sys/types.h>

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "bridge/tlsup.h"
#include "guard/guard.h"
#include "lib/endpoint.h"
#include "proxy/proxy.h"
#include "runner/runner.h"

struct agent;
struct bufferevent;
struct control;
struct event;
struct evconnlistener;
struct feed_replay;
struct notify;
struct tally;

/*
 * A connection held while the harness is asked (--ask): by the run's own
 * proxy (as_conn), or by the operator's, which asked as as_remote
 * (control_feed.c).
 */
struct ask {
	char		 as_id[24];
	struct conn	*as_conn;
	char		 as_remote[24];
};

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
	struct evbuffer		*rn_told;	/* ... read as it comes */
	struct event		*rn_told_ev;	/* ... until its EOF */
	bool			 rn_alone;	/* PID 1 ends, the last */
	int			 rn_npair[2];	/* the seccomp listener's way */
	struct publish		 rn_pub;	/* --publish */
	struct event		*rn_evs[5];	/* run_watch() to run_wait() */
	size_t			 rn_nev;
	bool			 rn_step_failed; /* after the clone: the run fails */
	struct tally		*rn_tally;
	struct notify		*rn_notify;	/* the sandbox's connects */
	struct event		*rn_poke_ev;	/* ... until its thread runs */
	struct sentinel		 rn_sentinel;	/* checks if we cannot */
	struct agent		*rn_agent;	/* cordon's ssh-agent, or NULL */
	struct control		*rn_control;
	struct ask		*rn_asks;
	size_t			 rn_nasks;
	unsigned long		 rn_seq;	/* ids of events */
	struct bufferevent	*rn_feed;	/* --proxy-socket's channel */
	struct tlsup		*rn_remote;	/* --proxy: run_remote.c */
	bool			 rn_feed_ended;
	struct feed_replay	*rn_replay;	/* control_feed_replay.c */
	struct keeper		*rn_keeper;	/* a session's, or NULL */
	int			 rn_cgroup;	/* its cgroup, or -1 */
	struct policy		*rn_env_policy;	/* a session's, without */
						/* a proxy of its own */
	struct timespec		 rn_live_at;	/* live lines: the window */
	unsigned int		 rn_live_n;	/* ... lines in it */
	unsigned int		 rn_live_held;	/* ... and past its bound */
};

int		run_exec(struct run *, struct policy *, const struct run_net *);

/*
 * run_proxy.c: the proxy's side of a run (offline/run_proxy.c in
 * cordon-offline, which has none).
 */
int	run_proxy_setup(struct runner *, struct policy *);
void	run_proxy_watch(struct runner *);
int	run_proxy_control(struct runner *);
void	run_proxy_end(struct runner *);

/* run_end.c */
void	run_end_told_cb(int, short, void *);

/* run_sock.c: the private folder and the socket the sandbox reaches. */
int	run_sock_open(struct runner *, char **);
void	run_sock_close(struct runner *);

/* run_remote.c: the relay to a remote tier (--proxy tls://). */
int	run_remote_start(struct runner *);
int	run_remote_dial(struct runner *, SSL **, bool);

/* keeper.c: a session's side outside: its socket, its clients. */
int	keeper_open(struct runner *);
void	keeper_start(struct runner *);
void	keeper_signal(struct runner *, int);
void	keeper_tally(struct runner *, const struct egress *, const char *,
	    const char *);
void	keeper_end(struct runner *);

/* freeze.c: a session's cgroup, frozen between commands. */
struct freeze {
	int		 fz_dir;	/* the cgroup's folder, or -1 */
	int		 fz_freeze;	/* its cgroup.freeze */
	int		 fz_events;	/* its cgroup.events */
	bool		 fz_frozen;
	char		 fz_path[PATH_MAX];
};

int	freeze_open(struct freeze *, const char *);
int	freeze_set(struct freeze *, bool, int);
void	freeze_close(struct freeze *);

/* control_run.c: the harness's side (--control, --ask). */
extern const struct proxy_hooks control_run_proxy_hooks;	/* hooks: rn */
int	control_run_start(struct runner *);

/*
 * control_tell.c: what the harness hears: each decision (the proxy's
 * hk_observe), and the operator's proxy's answers and questions.
 */
void	control_tell_observe(const struct egress *, const char *,
	    const char *, void *);
void	control_tell_live(struct runner *, const struct egress *,
	    const char *, bool);
void	control_tell_said(struct runner *, bool, const char *,
	    const char *);
void	control_tell_ask(struct runner *, const char *,
	    const struct egress *, int);
void	control_tell_gone(struct runner *, const char *);

/* control_feed.c: the operator's proxy's preflight and feed. */
int	control_feed_open(struct runner *);
void	control_feed_start(struct runner *);
int	control_feed_dial(struct runner *, const char *, bool);
void	control_feed_end(struct runner *);
void	control_feed_rule(struct runner *, bool, const char *);
void	control_feed_answer(struct runner *, const char *, const char *);
void	control_feed_rule_n(struct runner *, bool, const char *, long long);

/*
 * control_feed_replay.c: a channel lost mid-run reopened, the live rules
 * replayed, the relay's new connections held meanwhile.  It reopens
 * with the feed's own dial and start, which control_feed.c hands it with
 * the loss (so that the replay, below the feed, names nothing of it).
 */
struct feed_ops {
	int	(*fo_dial)(struct runner *, const char *, bool);
	void	(*fo_start)(struct runner *);
};
void	control_feed_replay_keep(struct runner *, bool, const char *,
	    long long);
bool	control_feed_replay_kept(struct runner *, bool, const char *,
	    long long, const char *);
void	control_feed_replay_lost(struct runner *, const char *,
	    const struct feed_ops *);
bool	control_feed_replay_reopening(const struct runner *);
bool	control_feed_replay_full(const struct runner *);
#define FEED_KEPT_MAX	512	/* the proxy's 256 (WATCH_RULES_MAX), and */
				/* the rules it has not answered yet */
void	control_feed_replay_end(struct runner *);

/* run_end.c: what the sandbox left, the summary, the report, the end. */
void	run_end_collect(struct runner *);
int	run_end(struct runner *);

#endif
