/*
 * notify_parts.h: the connect thread's state, which notify.c (the thread,
 * its workers, the loop's side) and notify_judge.c (what a call is
 * answered) share.  Nothing outside notify/ includes it.
 */
#ifndef CORDON_NOTIFY_PARTS_H
#define CORDON_NOTIFY_PARTS_H

#include <linux/seccomp.h>

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "notify/notify.h"

#define NOTIFY_WORKERS	64		/* calls in hand at once */

struct gitwrite;
struct unix_routes;

/* A command's listener, closed once it hung up and no worker holds it. */
struct notify_lfd {
	int		 nl_fd;
	bool		 nl_hup;
};

struct notify_worker {
	struct notify		*nw_n;
	struct seccomp_notif	 nw_req;	/* the call in hand */
	pthread_t		 nw_thread;
	bool			 nw_busy;	/* started, not yet joined */
	bool			 nw_done;	/* ended: to be joined */
	int			 nw_lfd;	/* the listener it answers */
	int			 nw_sock;	/* the socket taken, while */
						/* it connects */
};

struct notify {
	const struct unix_routes *n_routes;	/* borrowed, read-only */
	struct gitwrite		*n_gitwrite;	/* borrowed, or NULL */
	int			 n_sock;	/* the sandbox's end hands */
						/* the listener over */
	struct notify_lfd	*n_lfds;	/* the listeners: one per */
	size_t			 n_nlfds;	/* command (a session runs */
						/* many), each till POLLHUP */
	bool			 n_sock_open;	/* more may come on n_sock */
	int			 n_idle;	/* epoll of n_sock and the */
						/* listeners, for the loop */
						/* until the thread starts */
	int			 n_diag;	/* UNIX_DIAG of the sandbox's */
						/* network namespace, or -1 */
	int			 n_hostdiag;	/* ... of cordon run's, or -1 */
	int			 n_stop[2];	/* the loop asks the thread */
						/* to end */
	int			 n_events[2];	/* records to the loop */
	pthread_t		 n_thread;
	bool			 n_started;
	struct sigaction	 n_oldsig;	/* NOTIFY_SIG's, before */

	pthread_mutex_t		 n_lock;	/* guards what follows */
	pthread_cond_t		 n_cond;	/* a worker ended; the end */
	bool			 n_stopping;
	size_t			 n_busy;	/* workers not ended */
	size_t			 n_dropped;	/* the pipe was full */
	pthread_mutex_t		 n_diag_lock;	/* one dump at a time */
	uint32_t		 n_seq;		/* the last dump's */
	struct notify_worker	 n_workers[NOTIFY_WORKERS];
};

/* notify.c */
void	notify_tell(struct notify *, const struct notify_event *);

/* notify_judge.c */
int	notify_judge(struct notify_worker *, struct notify_event *);
void	notify_judge_answer(int, uint64_t, int);
void	notify_judge_rename(struct notify *, int, const struct seccomp_notif *);

#endif
