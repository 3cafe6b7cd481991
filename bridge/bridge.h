/*
 * bridge.h: the relay between a listening endpoint and a connecting one,
 * used by `cordon bridge` and, in-process, by the runner.
 */
#ifndef CORDON_BRIDGE_H
#define CORDON_BRIDGE_H

#include <stdbool.h>
#include <stddef.h>

struct bridge;
struct endpoint;
struct event_base;

#define BRIDGE_MAX_CONNS	4096
#define BRIDGE_CONNECT_SECS	10	/* an upstream that does not answer */
#define BRIDGE_DRAIN_SECS	10	/* open relays finish after SIGTERM */

/* Where an accepted connection was going: 1 captured, 0 not, -1 refuse. */
typedef int	(*bridge_capture_cb)(int, char *, size_t, void *);

/* bridge.c */
struct bridge	*bridge_new(struct event_base *, struct endpoint *,
		    struct endpoint *, size_t, char **);
int		 bridge_proxy_id(struct bridge *, const char *, const char *,
		    const char *, const char *, char **);
void		 bridge_capture(struct bridge *, bridge_capture_cb, void *);
void		 bridge_drain(struct bridge *, int, void (*)(void *), void *);
void		 bridge_free(struct bridge *);
size_t		 bridge_active(const struct bridge *);

/* bridge_cmd.c */
int		 bridge_cmd(int, char **);

#endif
