/*
 * notify_addr.h: the address a connect(2) of the command passed, judged
 * from its bytes alone (notify_addr.c), in cordon run's connect thread;
 * pure, so unit-tested and fuzzed alone.
 */
#ifndef CORDON_NOTIFY_ADDR_H
#define CORDON_NOTIFY_ADDR_H

#include <stdbool.h>
#include <stddef.h>

/* sun_path's size: the longest path or abstract name the kernel reads. */
#define NOTIFY_PATH_MAX	108

/*
 * notify_addr.c: the address a connect(2) of the command passed, judged
 * from its bytes alone (the kernel's answer to a malformed one).
 */
#define NOTIFY_ADDR_MAX	128	/* sizeof(struct sockaddr_storage) */

enum notify_addr_kind {
	NOTIFY_ADDR_PATH,	/* a Unix socket's path, in na_path */
	NOTIFY_ADDR_ABSTRACT,	/* an abstract name, after its NUL */
	NOTIFY_ADDR_UNSPEC,	/* AF_UNSPEC: a datagram socket's */
				/* disconnect */
	NOTIFY_ADDR_PASS	/* an Internet or netlink address: */
				/* to the kernel as given */
};

struct notify_addr {
	enum notify_addr_kind	 na_kind;
	size_t			 na_len;	/* of na_path */
	char			 na_path[NOTIFY_PATH_MAX + 1];
						/* terminated */
};

bool	notify_addr_len_ok(int);
int	notify_addr_judge(const void *, int, int, int, struct notify_addr *);

#endif
