/*
 * capture.h: the sandbox's side of the capture: the pool of addresses
 * its resolver answers with (capture.c) and the resolver (resolver.c),
 * both on PID 1's event loop.
 */
#ifndef CORDON_CAPTURE_H
#define CORDON_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The pool: 198.19.0.0/16 (of 198.18.0.0/15, set aside for benchmarks,
 * RFC 2544; no host of the Internet has one) and 64:ff9b:1:1::/96 (of
 * 64:ff9b:1::/48, for local use, RFC 8215), index i at .i in each.
 */
#define CAPTURE_POOL4	0xc6130000U
#define CAPTURE_POOL6	{ 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01, 0x00, 0x01, \
			  0, 0, 0, 0, 0, 0, 0, 0 }
#define CAPTURE_NAMES	65535U		/* names a run can look up */

struct capture;
struct endpoint;
struct event_base;
struct pp2_out;
struct resolver;

struct capture	*capture_new(void);
void		 capture_free(struct capture *);
uint32_t	 capture_index(struct capture *, const char *);
void		 capture_addrs(uint32_t, uint8_t[4], uint8_t[16]);
int		 capture_target(int, char *, size_t, void *);

/* resolver.c */
struct resolver	*resolver_new(struct event_base *, struct capture *,
		    const struct endpoint *, const struct pp2_out *,
		    char **);
void		 resolver_free(struct resolver *);

#endif
