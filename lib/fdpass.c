/*
 * fdpass.c: one descriptor beside len bytes over a Unix socket, with
 * SCM_RIGHTS (unix(7)).  The bytes are the message's whole payload: a
 * seqpacket or datagram socket keeps them together with the descriptor.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "lib/fdpass.h"

union fdpass_ctl {
	char		 buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr	 align;
};

/*
 * Sends fd with the len bytes at data on sock (sendmsg flags; EINTR is
 * retried).  Returns the bytes sent, or -1 with errno set.
 */
ssize_t
fdpass_send(int sock, int fd, const void *data, size_t len, int flags)
{
	union fdpass_ctl	 ctl;
	struct msghdr		 msg;
	struct cmsghdr		*c;
	struct iovec		 iov;
	ssize_t			 n;

	memset(&msg, 0, sizeof(msg));
	memset(&ctl, 0, sizeof(ctl));
	iov.iov_base = (void *)(uintptr_t)data;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	while ((n = sendmsg(sock, &msg, flags)) == -1 && errno == EINTR)
		;
	return n;
}

/*
 * Receives up to len bytes into data and the one descriptor beside them
 * into *fd (close-on-exec), or -1 in *fd when none came whole.  Returns
 * the bytes read (0 at the end), or -1 with errno set.
 */
ssize_t
fdpass_recv(int sock, int *fd, void *data, size_t len, int flags)
{
	union fdpass_ctl	 ctl;
	struct msghdr		 msg;
	struct cmsghdr		*c;
	struct iovec		 iov;
	ssize_t			 n;

	*fd = -1;
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = data;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	while ((n = recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC)) == -1 &&
	    errno == EINTR)
		;
	if (n == -1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (c != NULL && c->cmsg_level == SOL_SOCKET &&
	    c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	return n;
}
