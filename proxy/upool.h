/*
 * upool.h: the proxy's pool of idle upstream connections, kept when a
 * client connection ends and taken by a later one of the same run
 * (upool.c).
 */
#ifndef CORDON_UPOOL_H
#define CORDON_UPOOL_H

#include <stdbool.h>

struct conn;
struct proxy;

#define UPOOL_MAX		32	/* idle upstreams in all */
#define UPOOL_PER_KEY		4	/* per run, host, port */
#define UPOOL_IDLE_SECS		30	/* or --idle-secs, if less */

void	 upool_put(struct conn *);
bool	 upool_take(struct conn *, bool);
void	 upool_free(struct proxy *);

#endif
