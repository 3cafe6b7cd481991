/*
 * notify_addr.c: what the command's connect(2) asked for, read from the
 * bytes the connect thread (notify.c) copied out of its memory, with no
 * system call: the part of that thread a unit test and a fuzzer reach.
 *
 * Everything here comes from the command, which may be hostile: the
 * address's bytes, the length it gave (any int), and its socket's domain
 * and type.  A malformed address gets the answer the kernel gives to it
 * (measured on Linux 6.x, connect(2) on a fresh socket; the unit test's
 * table, tests/unit/test_notify.c, holds each case):
 *
 *   any socket		length < 0 or > sizeof(struct sockaddr_storage)
 *			(move_addr_to_kernel): EINVAL
 *   Unix		length <= offsetof(sun_path), or > sizeof(struct
 *			sockaddr_un) (110), or a family not AF_UNIX:
 *			EINVAL; but AF_UNSPEC on a datagram socket, with
 *			at least the family's two bytes, is a disconnect
 *   ... a path		ends at its first NUL, or at sun_path's end: the
 *			kernel writes a NUL past the bytes given, so a
 *			path of 108 bytes without one is taken whole
 *   ... an abstract	name: every byte given after the leading NUL
 *   netlink		shorter than struct sockaddr_nl with the family
 *			AF_NETLINK: EINVAL (the kernel would read the
 *			groups past what was given)
 *
 * An Internet or netlink socket's address goes to the kernel as given,
 * from cordon run's copy: the kernel answers a short one itself.
 *
 * Runs in: cordon run's connect thread (notify.c); pure.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <linux/netlink.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "notify/notify_addr.h"

/* Whether the length a command gave could be an address at all. */
bool
notify_addr_len_ok(int len)
{
	return len >= 0 && (size_t)len <= NOTIFY_ADDR_MAX;
}

/*
 * A Unix socket's address: its path or abstract name into na, bounded
 * and terminated.  Returns 0 or the kernel's errno.
 */
static int
notify_addr_unix(const uint8_t *addr, int len, int type,
    struct notify_addr *na)
{
	const size_t	 off = offsetof(struct sockaddr_un, sun_path);
	sa_family_t	 family;
	const char	*path;
	size_t		 n;

	if (len < (int)sizeof(family))
		return EINVAL;
	memcpy(&family, addr, sizeof(family));
	if (family == AF_UNSPEC && type == SOCK_DGRAM) {
		na->na_kind = NOTIFY_ADDR_UNSPEC;
		return 0;
	}
	if ((size_t)len <= off || (size_t)len > sizeof(struct sockaddr_un) ||
	    family != AF_UNIX)
		return EINVAL;
	path = (const char *)addr + off;
	n = (size_t)len - off;		/* 1 to NOTIFY_PATH_MAX */
	if (path[0] == '\0') {
		na->na_kind = NOTIFY_ADDR_ABSTRACT;
		na->na_len = n - 1;
		memcpy(na->na_path, path + 1, na->na_len);
	} else {
		na->na_kind = NOTIFY_ADDR_PATH;
		na->na_len = strnlen(path, n);
		memcpy(na->na_path, path, na->na_len);
	}
	na->na_path[na->na_len] = '\0';
	return 0;
}

/*
 * A netlink socket's address.  Multicast groups and a peer's port are
 * refused: netlink checks the capability for them on whoever connects,
 * which would be cordon run, holding capabilities over the sandbox's
 * namespaces that the command does not.  Returns 0 or an errno.
 */
static int
notify_addr_netlink(const uint8_t *addr, int len, struct notify_addr *na)
{
	struct sockaddr_nl	 nl;

	na->na_kind = NOTIFY_ADDR_PASS;
	if (len < (int)sizeof(sa_family_t))
		return 0;		/* the kernel's EINVAL */
	memset(&nl, 0, sizeof(nl));
	memcpy(&nl, addr, (size_t)len < sizeof(nl) ? (size_t)len :
	    sizeof(nl));
	if (nl.nl_family != AF_NETLINK)
		return 0;		/* AF_UNSPEC, or the kernel's EINVAL */
	if ((size_t)len < sizeof(nl))
		return EINVAL;
	if (nl.nl_groups != 0 || nl.nl_pid != 0)
		return EPERM;
	return 0;
}

/*
 * Judges the address of len bytes at addr that the command passed to
 * connect(2) on a socket of this domain and type.  addr holds len bytes
 * when notify_addr_len_ok(len); otherwise it is not read.  Returns 0
 * with na filled (na_kind says what to do), or the errno to answer:
 * the kernel's for a malformed address, EPERM for a domain cordon run
 * does not connect for.
 */
int
notify_addr_judge(const void *addr, int len, int domain, int type,
    struct notify_addr *na)
{
	memset(na, 0, sizeof(*na));
	if (!notify_addr_len_ok(len))
		return EINVAL;
	switch (domain) {
	case AF_UNIX:
		return notify_addr_unix(addr, len, type, na);
	case AF_NETLINK:
		return notify_addr_netlink(addr, len, na);
	case AF_INET:
	case AF_INET6:
		na->na_kind = NOTIFY_ADDR_PASS;
		return 0;
	default:
		return EPERM;
	}
}
