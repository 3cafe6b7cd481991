/*
 * listen.c: the proxy's own listening addresses, and whether a target is
 * one of them.
 *
 * A policy that allows loopback (--allow-cidr 127.0.0.1/32, a test
 * origin, a local registry) would otherwise let a client ask the proxy
 * to connect to itself: a CONNECT to the proxy's port is a tunnel into
 * the proxy, which can be asked again, each round holding two
 * descriptors and hiding the client behind the proxy's own address.  So
 * the target addresses a connection would use are compared with every
 * TCP listener of the proxy before it connects (conn.c): the same
 * address and port, or, for a listener on 0.0.0.0 or ::, the port and
 * any address of this machine (any of 127/8 and ::1, the unspecified
 * addresses, which Linux connects to itself, and every interface's).
 *
 * And who is at the other end of a client's Unix socket: the uid the
 * kernel gives (listen_peer), which the log carries beside the sandbox
 * id a client names, so that the id is scoped to its user.  A client
 * chooses its id; it cannot choose its uid.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <ifaddrs.h>
#include <stdbool.h>
#include <string.h>

#include "lib/util.h"
#include "proxy/proxy.h"

/*
 * Notes the address of fd, a listening socket of px, so that no target
 * reaches it; a Unix socket, or one getsockname(2) cannot name, is left
 * out (a target is always TCP).
 */
void
listen_note(struct proxy *px, int fd)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	struct listen_addr	*la;
	socklen_t		 len = sizeof(ss);
	int			 v6only = 0;
	socklen_t		 olen = sizeof(v6only);

	if (px->px_nown == nitems(px->px_own) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		return;
	la = &px->px_own[px->px_nown];
	memset(la, 0, sizeof(*la));
	if (ss.ss_family == AF_INET) {
		la->la_addr.a_family = AF_INET;
		memcpy(la->la_addr.a_bytes, &sin->sin_addr, 4);
		la->la_port = ntohs(sin->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		la->la_addr.a_family = AF_INET6;
		memcpy(la->la_addr.a_bytes, &sin6->sin6_addr, 16);
		la->la_port = ntohs(sin6->sin6_port);
		/* A dual-stack :: listener takes IPv4 too. */
		if (getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only,
		    &olen) == 0 && !v6only)
			la->la_any_family = true;
		addr_unmap(&la->la_addr);
	} else
		return;
	px->px_nown++;
}

/* Says whether a is the unspecified address of its family. */
static bool
listen_unspecified(const struct addr *a)
{
	static const uint8_t	 zero[16];

	return memcmp(a->a_bytes, zero, a->a_family == AF_INET ? 4 : 16) ==
	    0;
}

/* Says whether a is an address of this machine (a, unmapped). */
static bool
listen_local(const struct addr *a)
{
	static const uint8_t	 one6[16] = { [15] = 1 };
	struct ifaddrs		*ifs, *ifa;
	struct addr		 b;
	bool			 found = false;

	if (listen_unspecified(a) || (a->a_family == AF_INET &&
	    a->a_bytes[0] == 127) || (a->a_family == AF_INET6 &&
	    memcmp(a->a_bytes, one6, 16) == 0))
		return true;
	if (getifaddrs(&ifs) == -1)
		return true;	/* cannot tell: take it as ours */
	for (ifa = ifs; ifa != NULL && !found; ifa = ifa->ifa_next) {
		if (ifa->ifa_addr == NULL)
			continue;
		memset(&b, 0, sizeof(b));
		if (ifa->ifa_addr->sa_family == AF_INET) {
			b.a_family = AF_INET;
			memcpy(b.a_bytes, &((struct sockaddr_in *)
			    (void *)ifa->ifa_addr)->sin_addr, 4);
		} else if (ifa->ifa_addr->sa_family == AF_INET6) {
			b.a_family = AF_INET6;
			memcpy(b.a_bytes, &((struct sockaddr_in6 *)
			    (void *)ifa->ifa_addr)->sin6_addr, 16);
		} else
			continue;
		found = addr_equal(&b, a);
	}
	freeifaddrs(ifs);
	return found;
}

/*
 * Says whether a connection to address a, port port would reach one of
 * px's own listeners.  getifaddrs(3) is asked only when the port is a
 * wildcard listener's.
 */
bool
listen_is_own(const struct proxy *px, const struct addr *target, int port)
{
	const struct listen_addr	*la;
	struct addr			 a = *target;
	size_t				 i;

	addr_unmap(&a);
	for (i = 0; i < px->px_nown; i++) {
		la = &px->px_own[i];
		if (la->la_port != port)
			continue;
		if (!listen_unspecified(&la->la_addr)) {
			if (addr_equal(&la->la_addr, &a))
				return true;
			continue;
		}
		if ((la->la_addr.a_family == a.a_family ||
		    la->la_any_family) && listen_local(&a))
			return true;
	}
	return false;
}

/*
 * Fills lp with the credentials of the process that connected fd, when
 * fd is a Unix socket (SO_PEERCRED: as of its connect(2), in the
 * proxy's user and PID namespaces: a uid not mapped there reads as the
 * overflow uid, a pid not seen there as 0); lp_known is false for any
 * other socket, and when the kernel does not say.
 */
void
listen_peer(int fd, struct listen_peer *lp)
{
	struct sockaddr_storage	 ss;
	struct ucred		 cred;
	socklen_t		 len = sizeof(ss);

	memset(lp, 0, sizeof(*lp));
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1 ||
	    ss.ss_family != AF_UNIX)
		return;
	len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    len != sizeof(cred) || cred.uid == (uid_t)-1)
		return;
	lp->lp_known = true;
	lp->lp_uid = cred.uid;
	lp->lp_gid = cred.gid;
	lp->lp_pid = cred.pid;
}
