/*
 * sentinel.c: the guard's check (guard.c) when cordon run cannot make
 * it itself.
 *
 * The check after the run is what keeps the host's git from running
 * what the command planted in the writable folders, and cordon run makes
 * it once the sandbox is gone.  But cordon run may not live that long:
 * a harness kills it on a timeout (often with its whole process group),
 * the OOM killer picks it, the command crashes it.  Its sandbox dies with
 * it (PID 1's parent-death signal), and what the command planted stays.
 *
 * So, once the sandbox is cloned and before it may start, cordon run
 * forks a sentinel: a process in a session of its own, so that nothing
 * sent to the run's process group or terminal reaches it, holding a copy
 * of the guard (the writable roots' descriptors, opened before the run,
 * and the markers known then), the sandbox's pidfd, and the read end of
 * a socket pair whose other end only cordon run holds.  The sandbox never
 * held any of these.  The sentinel says it is ready before the sandbox
 * may start; cordon run says one byte once it has made the check itself,
 * and the sentinel ends.  When the pair ends without it, cordon run is
 * gone: the sentinel waits for the sandbox to be gone
 * too (its PID 1 ends last in its PID namespace), makes the check, says
 * what it found on the run's stderr, and ends.
 *
 * What it does not survive (a kill of every process of the user or of
 * the cgroup, power loss) the threat model names.
 * Privileges: cordon run's own, outside the sandbox.
 *
 * Runs in: cordon run on the host forks the sentinel; the sentinel
 *   process runs the rest.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard/guard.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sandbox/sandbox.h"

#define SENTINEL_READY	'r'
#define SENTINEL_DONE	'd'

static int
sentinel_cmp(const void *a, const void *b)
{
	int	 x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/*
 * In the sentinel: standard input and output from /dev/null (a harness
 * that reads the run's output until its end must not wait for us), the
 * run's stderr kept, and every other descriptor closed but the n in
 * keep.  Returns 0, or -1.
 */
static int
sentinel_fds(int *keep, size_t n)
{
	unsigned int	 from = 3;
	size_t		 i;
	int		 null;

	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
	    dup2(null, 0) == -1 || dup2(null, 1) == -1)
		return -1;
	qsort(keep, n, sizeof(*keep), sentinel_cmp);
	for (i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned int)keep[i] > from && syscall(SYS_close_range,
		    from, (unsigned int)keep[i] - 1, 0) == -1)
			return -1;
		from = (unsigned int)keep[i] + 1;
	}
	return syscall(SYS_close_range, from, ~0U, 0) == -1 ? -1 : 0;
}

/* Waits until the process behind pidfd is gone. */
static void
sentinel_wait(int pidfd)
{
	struct pollfd	 pfd;

	pfd.fd = pidfd;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, -1) == -1 && errno == EINTR)
		;
}

/*
 * The sentinel's life; never returns.  Once ready, it reads one byte:
 * cordon run's word that the check is made.  Anything else means cordon
 * run is gone.
 */
static void __attribute__((noreturn))
sentinel_main(struct guard *g, const char *id, int fd, int pidfd)
{
	sigset_t	 none;
	ssize_t		 n;
	char		 b = SENTINEL_READY;
	int		 rc;

	prctl(PR_SET_NAME, "cordon-sentinel", 0, 0, 0);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (write(fd, &b, 1) != 1)
		_exit(RUN_EXIT_FAILURE);
	while ((n = read(fd, &b, 1)) == -1 && errno == EINTR)
		;
	if (n == 1 && b == SENTINEL_DONE)
		_exit(0);
	sentinel_wait(pidfd);
	rc = guard_check(g, id);
	if (hostcfg_check(g, id) > 0 && rc == 0)
		rc = 1;
	if (rc != 0) {
		fprintf(stderr, "cordon: run %s ended before it could check "
		    "its writable folders (it was killed, or it crashed); its "
		    "sentinel checked them\n", id);
		guard_print(g, stderr);
		hostcfg_print(g, 0, stderr);
		fflush(stderr);
	}
	_exit(rc == 0 ? 0 : RUN_EXIT_FAILURE);
}

/* Closes our end and waits for the sentinel, which then ends. */
static void
sentinel_reap(struct sentinel *s)
{
	close(s->s_fd);
	s->s_fd = -1;
	while (waitpid(s->s_pid, NULL, 0) == -1 && errno == EINTR)
		;
	s->s_pid = -1;
}

/*
 * Forks the sentinel of the run id, which watches the sandbox behind
 * pidfd and holds g's descriptors (g is copied, not taken); the sandbox
 * may start once sentinel_ready says so.  Returns 0 with s filled, or -1
 * with *cause set.
 */
int
sentinel_start(struct sentinel *s, struct guard *g, const char *id,
    int pidfd, char **cause)
{
	int	 p[2], *keep;
	size_t	 i, n;
	pid_t	 pid;

	s->s_pid = -1;
	s->s_fd = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) == -1) {
		xasprintf(cause, "the sentinel's socket pair: %s",
		    strerror(errno));
		return -1;
	}
	n = 0;
	keep = xreallocarray(NULL, g->g_nroots + 3, sizeof(*keep));
	keep[n++] = 2;
	keep[n++] = p[0];
	keep[n++] = pidfd;
	for (i = 0; i < g->g_nroots; i++)
		keep[n++] = g->g_roots[i].gr_fd;
	fflush(NULL);
	if ((pid = fork()) == -1) {
		xasprintf(cause, "forking the sentinel: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		free(keep);
		return -1;
	}
	if (pid == 0) {
		if (setsid() == -1 || sentinel_fds(keep, n) == -1)
			_exit(RUN_EXIT_FAILURE);
		sentinel_main(g, id, p[0], pidfd);
	}
	free(keep);
	close(p[0]);
	s->s_pid = pid;
	s->s_fd = p[1];
	return 0;
}

/*
 * Waits until the sentinel sentinel_start forked says it is ready: in a
 * session of its own, its descriptors in place.  Apart from the fork,
 * so that cordon run does its other steps meanwhile.  Returns 0, or -1
 * with *cause set, the sentinel ended.
 */
int
sentinel_ready(struct sentinel *s, char **cause)
{
	char	 b = 0;

	while (read(s->s_fd, &b, 1) == -1 && errno == EINTR)
		;
	if (b == SENTINEL_READY)
		return 0;
	xasprintf(cause, "the sentinel ended before it was ready");
	/* Dead, as a rule; if not, the byte ends it, unsaid. */
	b = SENTINEL_DONE;
	if (write(s->s_fd, &b, 1) == -1)
		log_debug("%s: the sentinel is gone", __func__);
	sentinel_reap(s);
	return -1;
}

/*
 * cordon run made the check itself: the sentinel ends, while cordon run
 * ends too (sentinel_end waits for it).  Does nothing for a sentinel
 * never started.
 */
void
sentinel_done(struct sentinel *s)
{
	char	 b = SENTINEL_DONE;

	if (s->s_fd != -1 && write(s->s_fd, &b, 1) != 1)
		log_warn("run: telling the sentinel the check is made");
}

/*
 * The sentinel is waited for, so that it holds nothing of the run's once
 * cordon run returns: ended if told (sentinel_done), or once it made the
 * check itself.  Does nothing for a sentinel never started.
 */
void
sentinel_end(struct sentinel *s)
{
	if (s->s_fd != -1)
		sentinel_reap(s);
}
