/*
 * sessmsg.c: the messages of a session, on SOCK_SEQPACKET sockets (the
 * client's to the keeper, the keeper's pair with PID 1): a fixed header,
 * an optional text (why something was refused) and up to SESS_FDS_MAX
 * descriptors (SCM_RIGHTS).  What a command is (folder, argv, env) goes
 * as a memfd, the blob, so that no size of a socket's buffer limits it.
 * Libc alone: the small client links it.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/sess.h"

union sessmsg_ctl {
	char		 buf[CMSG_SPACE(sizeof(int) * SESS_FDS_MAX)];
	struct cmsghdr	 align;
};

/*
 * Sends m, then text (NULL: none), with the nfds descriptors of fds.
 * Returns the bytes sent, or -1 with errno set.
 */
ssize_t
sessmsg_send(int sock, const struct sessmsg *m, const char *text,
    const int *fds, int nfds)
{
	union sessmsg_ctl	 ctl;
	struct sessmsg		 h = *m;
	struct msghdr		 msg;
	struct cmsghdr		*c;
	struct iovec		 iov[2];
	ssize_t			 n;

	h.sm_magic = SESS_MAGIC;
	memset(&msg, 0, sizeof(msg));
	memset(&ctl, 0, sizeof(ctl));
	iov[0].iov_base = &h;
	iov[0].iov_len = sizeof(h);
	iov[1].iov_base = (void *)(uintptr_t)(text != NULL ? text : "");
	iov[1].iov_len = text != NULL ? strnlen(text, SESS_TEXT_MAX - 1) : 0;
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	if (nfds > 0) {
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) == -1 && errno == EINTR)
		;
	return n;
}

/*
 * Sends a message of type for request id, with arg and flags (SESS_F_*)
 * and nothing else.  Returns 0, or -1 with errno set.
 */
int
sessmsg_tell(int sock, uint32_t type, uint32_t id, int arg, uint32_t flags)
{
	struct sessmsg	 m;

	memset(&m, 0, sizeof(m));
	m.sm_type = type;
	m.sm_id = id;
	m.sm_arg = arg;
	m.sm_flags = flags;
	return sessmsg_send(sock, &m, NULL, NULL, 0) == -1 ? -1 : 0;
}

/*
 * Receives one message into m and text (terminated; textlen > 0), and
 * its descriptors (close-on-exec) into fds, *nfds of them (at most
 * SESS_FDS_MAX).  Returns the bytes read, 0 at the end, or -1 (errno;
 * EBADMSG: not a session message, its descriptors closed).
 */
ssize_t
sessmsg_recv(int sock, struct sessmsg *m, char *text, size_t textlen,
    int *fds, int *nfds)
{
	union sessmsg_ctl	 ctl;
	struct msghdr		 msg;
	struct cmsghdr		*c;
	struct iovec		 iov[2];
	ssize_t			 n;
	size_t			 got;

	*nfds = 0;
	memset(&msg, 0, sizeof(msg));
	iov[0].iov_base = m;
	iov[0].iov_len = sizeof(*m);
	iov[1].iov_base = text;
	iov[1].iov_len = textlen - 1;
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) == -1 &&
	    errno == EINTR)
		;
	if (n <= 0)
		return n;
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		got = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (got > (size_t)(SESS_FDS_MAX - *nfds))
			got = SESS_FDS_MAX - *nfds;
		memcpy(fds + *nfds, CMSG_DATA(c), got * sizeof(int));
		*nfds += (int)got;
	}
	text[(size_t)n > sizeof(*m) ? (size_t)n - sizeof(*m) : 0] = '\0';
	if ((size_t)n < sizeof(*m) || m->sm_magic != SESS_MAGIC ||
	    (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
		sessmsg_close(fds, *nfds);
		*nfds = 0;
		errno = EBADMSG;
		return -1;
	}
	return n;
}

/* Closes the n descriptors of fds that are not -1. */
void
sessmsg_close(int *fds, int n)
{
	int	 i;

	for (i = 0; i < n; i++)
		if (fds[i] != -1) {
			close(fds[i]);
			fds[i] = -1;
		}
}

/* Appends s and its terminator at *off in buf (sized by the caller). */
static void
sessmsg_put(char *buf, size_t *off, const char *s)
{
	size_t	 len = strlen(s) + 1;

	memcpy(buf + *off, s, len);
	*off += len;
}

/*
 * A blob: a memfd holding cwd, argv and env, each string terminated,
 * written in one write(2) (one for each string was a tenth of the
 * client's time).  Returns the memfd, its counts in *argc and *envc, or
 * -1 (errno).
 */
int
sessmsg_blob(const char *cwd, char *const *argv, char *const *env,
    uint32_t *argc, uint32_t *envc)
{
	char	*buf;
	size_t	 len, off = 0;
	ssize_t	 n;
	int	 fd = -1, saved;

	len = strlen(cwd) + 1;
	for (*argc = 0; argv[*argc] != NULL; (*argc)++)
		len += strlen(argv[*argc]) + 1;
	for (*envc = 0; env[*envc] != NULL; (*envc)++)
		len += strlen(env[*envc]) + 1;
	if (len > SESS_BLOB_MAX) {
		errno = E2BIG;
		return -1;
	}
	if ((buf = malloc(len)) == NULL)
		return -1;
	sessmsg_put(buf, &off, cwd);
	for (n = 0; n < (ssize_t)*argc; n++)
		sessmsg_put(buf, &off, argv[n]);
	for (n = 0; n < (ssize_t)*envc; n++)
		sessmsg_put(buf, &off, env[n]);
	if ((fd = memfd_create("cordon-request", MFD_CLOEXEC)) == -1)
		goto fail;
	for (off = 0; off < len; off += (size_t)n)
		if ((n = write(fd, buf + off, len - off)) == -1) {
			if (errno == EINTR) {
				n = 0;
				continue;
			}
			goto fail;
		}
	free(buf);
	return fd;
fail:
	saved = errno;
	if (fd != -1)
		close(fd);
	free(buf);
	errno = saved;
	return -1;
}

/*
 * Reads the blob fd (its size bounded by SESS_BLOB_MAX) into sb: one
 * folder, argc (at least one) and envc strings, every one terminated,
 * nothing after.  Returns 0, or -1 (EINVAL: not so).
 */
int
sessmsg_blob_read(int fd, uint32_t argc, uint32_t envc, struct sessblob *sb)
{
	struct stat	 st;
	size_t		 off = 0, i, end;
	ssize_t		 n;
	char		*p;

	memset(sb, 0, sizeof(*sb));
	if (fstat(fd, &st) == -1)
		return -1;
	if (st.st_size <= 0 || st.st_size > SESS_BLOB_MAX || argc == 0 ||
	    argc > SESS_BLOB_MAX / 2 || envc > SESS_BLOB_MAX / 2) {
		errno = EINVAL;
		return -1;
	}
	sb->sb_len = (size_t)st.st_size;
	if ((sb->sb_buf = malloc(sb->sb_len)) == NULL ||
	    (sb->sb_argv = calloc(argc + 1, sizeof(char *))) == NULL ||
	    (sb->sb_env = calloc(envc + 1, sizeof(char *))) == NULL)
		goto fail;
	while (off < sb->sb_len) {
		if ((n = pread(fd, sb->sb_buf + off, sb->sb_len - off,
		    (off_t)off)) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			goto bad;
		off += (size_t)n;
	}
	p = sb->sb_buf;
	end = 0;
	for (i = 0; i < 1 + (size_t)argc + envc; i++) {
		if (end >= sb->sb_len || (p = memchr(sb->sb_buf + end, '\0',
		    sb->sb_len - end)) == NULL)
			goto bad;
		if (i == 0)
			sb->sb_cwd = sb->sb_buf + end;
		else if (i <= argc)
			sb->sb_argv[i - 1] = sb->sb_buf + end;
		else
			sb->sb_env[i - 1 - argc] = sb->sb_buf + end;
		end = (size_t)(p - sb->sb_buf) + 1;
	}
	if (end != sb->sb_len || sb->sb_cwd[0] != '/' ||
	    sb->sb_argv[0][0] == '\0')
		goto bad;
	return 0;
bad:
	errno = EINVAL;
fail:
	sessmsg_blob_clear(sb);
	return -1;
}

void
sessmsg_blob_clear(struct sessblob *sb)
{
	int	 saved = errno;

	free(sb->sb_buf);
	free(sb->sb_argv);
	free(sb->sb_env);
	memset(sb, 0, sizeof(*sb));
	errno = saved;
}
