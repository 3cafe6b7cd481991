/*
 * guard.h: what keeps the host's git repositories and protected files
 * safe from what the command wrote.  guard.c checks the writable roots
 * after the run (cordon run on the host, or the sentinel if cordon run
 * died: sentinel.c), and hostcfg.c what agents and editors on the host
 * would load from them; gitwrite.c applies or holds back the command's
 * renames onto protected git configs (cordon run's connect thread);
 * block.c makes the placeholders of protected paths before the clone.
 */
#ifndef CORDON_GUARD_H
#define CORDON_GUARD_H

#include <sys/types.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "git/git.h"
#include "plan/plan.h"

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
	char		*gf_why;	/* what could run; kept: the */
					/* remotes it adds, or NULL */
	bool		 gf_kept;	/* inert: the user's work */
	bool		 gf_held;	/* a folder the walk could not read */
	bool		 gf_policy;	/* a .cordon the command made */
	int		 gf_error;	/* the rename's errno, or 0 */
	size_t		 gf_heads;	/* HEADs renamed in what moved */
	size_t		 gf_heads_left;	/* and those that could not be */
};

struct hostcfg_find;

struct guard {
	struct guard_root *g_roots;
	size_t		 g_nroots;
	struct fs_mark	*g_known;	/* protected or made before the run */
	size_t		 g_nknown;
	time_t		 g_start;	/* changed from then: the command's */
	size_t		 g_scan_max;	/* GUARD_SCAN_MAX, but in tests */
	size_t		 g_scanned;
	struct guard_find *g_finds;	/* kept, moved and held */
	size_t		 g_nfinds;
	size_t		 g_nmoved;	/* moved, and folders held */
	char		**g_watch;	/* the plan's fp_watch, borrowed */
	size_t		 g_nwatch;
	struct gitcfg_places g_places;	/* the plan's, for gitcfg.c */
	struct fslist	*g_lists;	/* the plan's fp_lists, borrowed */
	char		**g_host;	/* the plan's fp_host, borrowed */
	size_t		 g_nhost;
	struct hostcfg_find *g_hfinds;	/* hostcfg.c's: moved aside */
	size_t		 g_nhfinds;
};

int	guard_open(struct guard *, const struct fsplan *, char **);
void	guard_know(struct guard *, int);
int	guard_check(struct guard *, const char *);
void	guard_print(const struct guard *, FILE *);
void	guard_clear(struct guard *);

/* What the guard's files share: the verdict, the walk's state. */
enum guard_verdict {
	GV_LEAVE,	/* not the command's: protected, or unchanged */
	GV_KEEP,	/* made or changed, inert: the user's work, kept */
	GV_MOVE		/* made or changed, and could make git run a */
};			/* program: quarantined */

/* A folder waiting in the walk: i_rel below root i_root. */
struct guard_item {
	size_t		 i_root;
	char		*i_rel;
	int		 i_how;		/* GW_* */
};

struct guard_walk {
	struct guard	 *w_g;
	const char	 *w_id;
	struct guard_item *w_q;		/* breadth first */
	size_t		  w_nq, w_head, w_qcap;
	struct fs_mark	 *w_judged;	/* git directories judged */
	size_t		  w_njudged;
	time_t		  w_taken;	/* when it began (fslist.c) */
};

struct stat;
int	guard_openat(int, const char *, int);
int	guard_stat(int, const char *, struct stat *);
enum guard_verdict guard_judge(const struct guard *, int, const char *,
	    char **);
char	*guard_join(const char *, const char *);

/*
 * gwalk.c: the walk of the writable roots, breadth first, that finds
 * every git directory git could take, reading pointers as git does.
 */
void	gwalk_run(struct guard_walk *);

/*
 * quarantine.c: a repository renamed out of git's sight, its HEADs
 * with it; a find noted for the terminal and --report.
 */
#define QUARANTINE_SUFFIX	".cordon-quarantine-"
#define QUARANTINE_TAG_MAX	96	/* the id, "-", 8 random hex digits */

int	quarantine_rename(int, const char *, const char *, char *, char **);

struct guard_find *quarantine_note(struct guard_walk *,
	    const struct guard_root *, const char *, const char *,
	    const char *, char *);
struct guard_find *quarantine_move(struct guard_walk *,
	    const struct guard_root *, const char *, int, const char *,
	    const char *, char *);
struct guard_find *quarantine_move_rel(struct guard_walk *,
	    const struct guard_root *, const char *, const char *, char *);
void	quarantine_act(struct guard_walk *, const struct guard_root *,
	    const char *, int, const char *, const char *,
	    enum guard_verdict, char *);

/*
 * hostcfg.c: after the run, what agents and editors on the host load or
 * run when the user opens the workspace (filesystem.host_config) that
 * was not there before the run and is now, moved aside and reported.
 */
struct hostcfg_find {
	char		*hf_path;	/* as on the host */
	char		*hf_moved;	/* its new name */
	bool		 hf_link;	/* a link, there or on the way */
	bool		 hf_dir;	/* a folder */
	bool		 hf_unread;	/* could not be looked at: held */
	int		 hf_error;	/* the lookup's or rename's errno */
};

void	hostcfg_open(struct guard *, const struct fsplan *);
int	hostcfg_check(struct guard *, const char *);
void	hostcfg_print(const struct guard *, size_t, FILE *);
json_t	*hostcfg_json(const struct guard *);
void	hostcfg_clear(struct guard *);

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
	struct gitcfg	 wc_base;	/* as before the run: which remotes */
					/* were the user's (gitjudge.c) */
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
	enum gitcfg_class ch_class;	/* what it makes git do */
	char		*ch_why;	/* held back: why; else NULL */
};

struct gitwrite {
	struct gitwrite_cfg	*gw_cfgs;	/* set before the run */
	size_t			 gw_ncfgs;
	struct gitcfg_places	 gw_places;	/* the plan's */
	pthread_mutex_t		 gw_lock;	/* guards what follows */
	struct gitwrite_change	*gw_changes;
	size_t			 gw_nchanges;
	bool			 gw_more;	/* some not noted */
};

struct seccomp_notif;
int	gitwrite_init(struct gitwrite *, const struct fsplan *);
void	gitwrite_places(const struct fsplan *, struct gitcfg_places *);
int	gitwrite_rename(struct gitwrite *, int, const struct seccomp_notif *);
void	gitwrite_print(struct gitwrite *, size_t, FILE *);
size_t	gitwrite_count(struct gitwrite *);
json_t	*gitwrite_json(struct gitwrite *, size_t);
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
int	sentinel_ready(struct sentinel *, char **);
void	sentinel_done(struct sentinel *);
void	sentinel_end(struct sentinel *);

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

#endif
