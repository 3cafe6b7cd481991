/*
 * relay.h: copy bytes both ways between two connected sockets, on an
 * event loop, with splice(2) where the kernel allows it.
 */
#ifndef CORDON_RELAY_H
#define CORDON_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct relay;
struct timeval;

#define RELAY_UP	0	/* from the first socket to the second */
#define RELAY_DOWN	1	/* from the second socket to the first */

/*
 * Called once when the relay has ended: why is NULL when both sides
 * closed in order, or what went wrong.  The callback owns the relay and
 * must relay_free() it; nothing else touches it afterwards.
 */
typedef void	(*relay_done_cb)(struct relay *, const char *, void *);

/*
 * Shown each chunk of bytes read in a watched direction, before it is
 * sent on; returns false when it has seen enough (splice(2) resumes).
 * It must not free the relay.
 */
typedef bool	(*relay_watch_cb)(const void *, size_t, void *);

struct relay	*relay_new(struct event_base *, int, int, relay_done_cb,
		    void *);
void		 relay_pending(struct relay *, int, const void *, size_t);
void		 relay_idle(struct relay *, const struct timeval *);
void		 relay_watch(struct relay *, int, relay_watch_cb, void *);
int		 relay_start(struct relay *);
void		 relay_free(struct relay *);
uint64_t	 relay_bytes(const struct relay *, int);

#endif
