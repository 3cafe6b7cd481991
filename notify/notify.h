/*
 * notify.h: the sandbox's connect(2) calls, answered in cordon run's
 * connect thread (notify.c) and told to cordon run's event loop as
 * records.  What the thread looks at has headers of its own: the
 * address's bytes (notify_addr.h), the sockets of the host and of the
 * sandbox (sockdiag.h).
 */
#ifndef CORDON_NOTIFY_H
#define CORDON_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "notify/notify_addr.h"
#include "sandbox/sandbox.h"

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

int		 notify_probe(char **);
struct gitwrite;
struct notify	*notify_new(const struct unix_routes *, struct gitwrite *, int,
		    char **);
int		 notify_idle_fd(const struct notify *);
int		 notify_poke(struct notify *, char **);
int		 notify_events_fd(const struct notify *);
int		 notify_read(struct notify *, struct notify_event *);
void		 notify_stop(struct notify *);
size_t		 notify_dropped(const struct notify *);
void		 notify_free(struct notify *);

#endif
