/*
 * unixroute.h: the routes of the sandbox's Unix sockets (unixroute.c),
 * made by cordon run before the clone and read by the connect thread.
 */
#ifndef CORDON_UNIXROUTE_H
#define CORDON_UNIXROUTE_H

#include <stddef.h>
#include <stdio.h>

#include "sandbox/sandbox.h"

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

#endif
