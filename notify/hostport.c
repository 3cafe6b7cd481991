/*
 * hostport.c: whether the host has a server on a port of its loopback,
 * for the summary of a connect that found none in the sandbox's own.
 *
 * The sandbox has a loopback of its own, so a command that connects to
 * 127.0.0.1:5432 where the host runs a database gets ECONNREFUSED, as if
 * there were none; network.host_ports is the way to the host's.  cordon
 * run, in the host's network namespace, reads its listening TCP sockets
 * (/proc/net/tcp, tcp6) to tell the user so, once.
 *
 * Runs in: cordon run's connect thread (notify.c).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>

#include "lib/util.h"
#include "notify/sockdiag.h"

#define HOSTPORT_LISTEN	0x0a	/* TCP_LISTEN in /proc/net/tcp's "st" */

/*
 * Whether the address of a /proc/net/tcp line (hex, as the kernel
 * prints it) is one a loopback connect reaches: any, or loopback.
 */
static bool
hostport_reaches(const char *hex, size_t len)
{
	static const char *const v6[] = {
		"00000000000000000000000000000000",	/* :: */
		"00000000000000000000000001000000",	/* ::1 */
	};
	size_t	 i;

	if (len == 8)	/* 127.x.y.z is 7F in its last byte */
		return strncmp(hex, "00000000", 8) == 0 ||
		    strncmp(hex + 6, "7F", 2) == 0;
	if (len != 32)
		return false;
	for (i = 0; i < nitems(v6); i++)
		if (strncmp(hex, v6[i], 32) == 0)
			return true;
	/* ::ffff:127.x.y.z */
	return strncmp(hex, "0000000000000000FFFF0000", 24) == 0 &&
	    strncmp(hex + 30, "7F", 2) == 0;
}

/* Reads one of /proc/net/tcp or tcp6 for a listener on port. */
static bool
hostport_in(const char *file, unsigned int port)
{
	FILE		*f;
	char		*line = NULL, *colon, *sp;
	size_t		 cap = 0;
	unsigned int	 p, st;
	bool		 found = false;

	if ((f = fopen(file, "re")) == NULL)
		return false;
	while (!found && getline(&line, &cap, f) != -1) {
		/* "  0: 0100007F:1538 00000000:0000 0A ..." */
		if ((colon = strchr(line, ':')) == NULL)
			continue;
		sp = colon + 1 + strspn(colon + 1, " ");
		if ((colon = strchr(sp, ':')) == NULL ||
		    sscanf(colon + 1, "%x %*s %x", &p, &st) != 2)
			continue;
		found = p == port && st == HOSTPORT_LISTEN &&
		    hostport_reaches(sp, (size_t)(colon - sp));
	}
	free(line);
	fclose(f);
	return found;
}

/* Does a server listen on TCP port of the host's loopback? */
bool
hostport_listens(unsigned int port)
{
	return hostport_in("/proc/net/tcp", port) ||
	    hostport_in("/proc/net/tcp6", port);
}

/*
 * The loopback port that sa (len bytes) names, or 0 when it names no
 * loopback address (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104, or the
 * unspecified address, which a connect turns into the loopback).
 */
unsigned int
hostport_loopback(const void *sa, size_t len)
{
	const struct sockaddr_in	*in4 = sa;
	const struct sockaddr_in6	*in6 = sa;
	const uint8_t			*b;
	static const uint8_t		 mapped[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
	};

	if (len >= sizeof(*in4) && in4->sin_family == AF_INET) {
		b = (const uint8_t *)&in4->sin_addr;
		return b[0] == 127 || in4->sin_addr.s_addr == INADDR_ANY ?
		    ntohs(in4->sin_port) : 0;
	}
	if (len < sizeof(*in6) || in6->sin6_family != AF_INET6)
		return 0;
	b = in6->sin6_addr.s6_addr;
	if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
	    IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr) ||
	    (memcmp(b, mapped, 12) == 0 && b[12] == 127))
		return ntohs(in6->sin6_port);
	return 0;
}

/* Asks nl for the listening TCP sockets of family af in its namespace. */
static int
hostport_ask(int nl, uint32_t seq, int af)
{
	struct inet_diag_req_v2	 req;

	memset(&req, 0, sizeof(req));
	req.sdiag_family = (uint8_t)af;
	req.sdiag_protocol = IPPROTO_TCP;
	req.idiag_states = 1U << HOSTPORT_LISTEN;
	return sockdiag_ask(nl, seq, &req, sizeof(req));
}

/* Is the answer nlh a socket on the port *arg? */
static bool
hostport_match(const struct nlmsghdr *nlh, const void *arg)
{
	const struct inet_diag_msg	*m = mnl_nlmsg_get_payload(nlh);

	return nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(*m)) &&
	    ntohs(m->id.idiag_sport) == *(const unsigned int *)arg;
}

/*
 * Whether a TCP socket of nl's network namespace (NETLINK_SOCK_DIAG, the
 * sandbox's) listens on port, in family af.  One caller at a time per
 * nl.  Returns 1, 0, or -1 with errno set.
 */
static int
hostport_dump(int nl, uint32_t seq, int af, unsigned int port)
{
	if (hostport_ask(nl, seq, af) == -1)
		return -1;
	return sockdiag_read(nl, seq, hostport_match, &port);
}

/*
 * Whether something listens on TCP port in the namespace of nl, the
 * sandbox's diagnostic socket: 1, 0, or -1 (no answer).  seq is bumped
 * once a dump.
 */
int
hostport_inside(int nl, uint32_t *seq, unsigned int port)
{
	int	 v4, v6;

	if ((v4 = hostport_dump(nl, ++*seq, AF_INET, port)) == 1)
		return 1;
	v6 = hostport_dump(nl, ++*seq, AF_INET6, port);
	return v4 == -1 && v6 == -1 ? -1 : v6 == 1;
}
