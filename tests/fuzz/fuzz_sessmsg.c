/*
 * fuzz_sessmsg.c: a session's messages (session/sessmsg.c) on arbitrary
 * bytes, as a client that is not cordon's could send them to the keeper.
 * The first 8 bytes are the header's argc and envc, the rest a request's
 * blob (folder, argv, environment): what sessmsg_blob_read accepts is
 * within the blob, terminated, an absolute folder and a command, and
 * sessmsg_blob makes the same blob again from it.  The same bytes also
 * go whole as one message on a SOCK_SEQPACKET pair: sessmsg_recv takes
 * a header and a terminated text, or refuses (EBADMSG) with nothing left.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/sess.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Whether p points inside sb's buffer, at a terminated string. */
static int
fuzz_inside(const struct sessblob *sb, const char *p)
{
	return p >= sb->sb_buf && p < sb->sb_buf + sb->sb_len &&
	    memchr(p, '\0', (size_t)(sb->sb_buf + sb->sb_len - p)) != NULL;
}

static void
fuzz_blob(const uint8_t *data, size_t size)
{
	struct sessblob	 sb, again;
	uint32_t	 argc, envc, c2, e2;
	size_t		 i;
	int		 fd, fd2;

	if (size < 8)
		return;
	memcpy(&argc, data, 4);
	memcpy(&envc, data + 4, 4);
	if ((fd = memfd_create("fuzz", MFD_CLOEXEC)) == -1)
		abort();
	if (size > 8 && write(fd, data + 8, size - 8) != (ssize_t)(size - 8))
		abort();
	if (sessmsg_blob_read(fd, argc, envc, &sb) == -1) {
		if (errno != EINVAL)
			abort();
		close(fd);
		return;
	}
	close(fd);
	if (sb.sb_len != size - 8 || !fuzz_inside(&sb, sb.sb_cwd) ||
	    sb.sb_cwd[0] != '/' || argc == 0 || sb.sb_argv[argc] != NULL ||
	    sb.sb_env[envc] != NULL || sb.sb_argv[0][0] == '\0')
		abort();
	for (i = 0; i < argc; i++)
		if (!fuzz_inside(&sb, sb.sb_argv[i]))
			abort();
	for (i = 0; i < envc; i++)
		if (!fuzz_inside(&sb, sb.sb_env[i]))
			abort();
	/* What the keeper sends PID 1 reads back the same. */
	if ((fd2 = sessmsg_blob(sb.sb_cwd, sb.sb_argv, sb.sb_env, &c2,
	    &e2)) == -1)
		abort();
	if (c2 != argc || e2 != envc || sessmsg_blob_read(fd2, c2, e2,
	    &again) == -1 || again.sb_len != sb.sb_len ||
	    memcmp(again.sb_buf, sb.sb_buf, sb.sb_len) != 0)
		abort();
	close(fd2);
	sessmsg_blob_clear(&again);
	sessmsg_blob_clear(&sb);
}

static void
fuzz_recv(const uint8_t *data, size_t size)
{
	struct sessmsg	 m;
	char		 text[64];
	int		 sp[2], fds[SESS_FDS_MAX], nfds;
	ssize_t		 n;

	if (size == 0 || size > 4096)
		return;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1)
		abort();
	if (send(sp[1], data, size, 0) != (ssize_t)size)
		abort();
	n = sessmsg_recv(sp[0], &m, text, sizeof(text), fds, &nfds);
	if (n == -1) {
		if (errno != EBADMSG || nfds != 0)
			abort();
	} else if (n != (ssize_t)size || size < sizeof(m) ||
	    m.sm_magic != SESS_MAGIC || nfds != 0 ||
	    strlen(text) > sizeof(text) - 1)
		abort();
	close(sp[0]);
	close(sp[1]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_blob(data, size);
	fuzz_recv(data, size);
	return 0;
}
