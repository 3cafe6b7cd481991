/*
 * sockdiag.c: the answers of one NETLINK_SOCK_DIAG dump, read until its
 * end, for unixown.c (Unix sockets) and hostport.c (TCP listeners), both
 * asking through the sandbox's diagnostic socket.
 *
 * Runs in: cordon run's connect thread (notify.c).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <linux/netlink.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

#include "sockdiag.h"

#define SOCKDIAG_BUF	32768		/* one read of a dump */

/*
 * Reads the answers to the dump seq on nl until its end, asking match of
 * each (with arg) whether it is the one looked for; answers of an older
 * dump cut short are passed over.  Returns 1 (one matched), 0, or -1
 * with errno set.
 */
int
sockdiag_read(int nl, uint32_t seq, bool (*match)(const struct nlmsghdr *,
    const void *), const void *arg)
{
	char			 buf[SOCKDIAG_BUF];
	const struct nlmsghdr	*nlh;
	ssize_t			 n;
	int			 left, found = 0;

	for (;;) {
		if ((n = recv(nl, buf, sizeof(buf), 0)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		left = (int)n;
		for (nlh = (struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, left);
		    nlh = mnl_nlmsg_next(nlh, &left)) {
			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_DONE)
				return found;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				errno = EPROTO;
				return -1;
			}
			if (!found && match(nlh, arg))
				found = 1;
		}
	}
}
