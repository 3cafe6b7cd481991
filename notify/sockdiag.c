/*
 * sockdiag.c: one NETLINK_SOCK_DIAG dump, asked for and its answers read
 * until its end, for unixown.c (Unix sockets) and hostport.c (TCP
 * listeners), both asking through the sandbox's diagnostic socket.
 *
 * Runs in: cordon run's connect thread (notify.c).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <libmnl/libmnl.h>

#include "notify/sockdiag.h"

#define SOCKDIAG_BUF	32768		/* one read of a dump */

/*
 * Asks nl for the dump seq: req is a family's request (len bytes, an
 * inet_diag_req_v2 or a unix_diag_req).  Returns 0, or -1.
 */
int
sockdiag_ask(int nl, uint32_t seq, const void *req, size_t len)
{
	char			 buf[256];	/* a header and the request */
	struct nlmsghdr		*nlh;
	struct sockaddr_nl	 to;

	if (len > sizeof(buf) - MNL_NLMSG_HDRLEN)
		return -1;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	memcpy(mnl_nlmsg_put_extra_header(nlh, len), req, len);
	memset(&to, 0, sizeof(to));
	to.nl_family = AF_NETLINK;
	return sendto(nl, nlh, nlh->nlmsg_len, 0, (struct sockaddr *)&to,
	    sizeof(to)) == (ssize_t)nlh->nlmsg_len ? 0 : -1;
}

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
