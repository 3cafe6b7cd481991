/*
 * sockdiag.h: the sockets of the host and of the sandbox, as cordon run's
 * connect thread sees them from outside: netlink's sock_diag dumps
 * (sockdiag.c), whether the host serves a loopback port the sandbox
 * lacks (hostport.c), and a Unix socket path of the command opened as
 * it sees it, with whether a socket is bound to it (unixown.c).
 */
#ifndef CORDON_SOCKDIAG_H
#define CORDON_SOCKDIAG_H

#include <sys/types.h>
#include <sys/stat.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* sockdiag.c: one dump, asked for and read. */
struct nlmsghdr;
int		 sockdiag_ask(int, uint32_t, const void *, size_t);
int		 sockdiag_read(int, uint32_t, bool (*)(const struct nlmsghdr *,
		    const void *), const void *);

/* hostport.c: whether the host serves a loopback port the sandbox lacks. */
bool		 hostport_listens(unsigned int);
unsigned int	 hostport_loopback(const void *, size_t);
int		 hostport_inside(int, uint32_t *, unsigned int);

/*
 * unixown.c: a Unix socket path of the command, opened as it sees it,
 * and whether a socket of a network namespace is bound to that inode.
 */
int	unixown_open(pid_t, const char *, int *);
int	unixown_bound(int, uint32_t, const struct stat *);

#endif
