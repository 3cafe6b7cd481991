/*
 * freeze.c: a session's cgroup, which the keeper freezes between
 * commands where cordon may make one (cgroup v2: root, or a subtree
 * systemd delegated to the user).
 *
 * The sandbox's PID 1 stops every process of the session when the last
 * command ends and waits until each thread is stopped (sandbox_session.c)
 * before the check; but a stop is a signal, and a process of the
 * sandbox that still runs during the look (one that was inside a
 * kill(SIGCONT) system call when the stop came) can continue another.
 * The freezer is not a signal: no process of the cgroup can thaw it
 * (the sandbox sees cgroupfs read-only, in a cgroup namespace of its
 * own), and frozen means every thread is out of the kernel, so once
 * cgroup.events says "frozen 1" the check reads what nothing of the
 * session changes any more, until the keeper thaws it for the next
 * command or the stop.
 *
 * The folder is NAME/cordon-ID below the keeper's own cgroup; the sandbox
 * is cloned into it (CLONE_INTO_CGROUP), so everything it forks is in it
 * from its first instruction.  Where the folder cannot be made (a user
 * without a delegated subtree, cgroup v1 alone, a kernel without
 * cgroup.freeze) nothing is frozen, and PID 1's stop is all there is.
 *
 * Runs in: the keeper (keeper.c), on the host, with the user's rights.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "runner/run_host.h"

/*
 * The cgroup v2 folder of this process, into buf: the mount point of
 * cgroup2 (/proc/self/mountinfo, one whose root is "/") joined with
 * the path of the "0::" line of /proc/self/cgroup.  Returns 0, or -1.
 */
static int
freeze_own(char *buf, size_t len)
{
	char	 line[4096], mnt[PATH_MAX] = "", *p, *f[6];
	FILE	*fp;
	int	 i;

	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (*mnt == '\0' && fgets(line, sizeof(line), fp) != NULL) {
		if ((p = strstr(line, " - cgroup2 ")) == NULL)
			continue;
		*p = '\0';
		f[0] = strtok(line, " ");
		for (i = 1; i < 6 && f[i - 1] != NULL; i++)
			f[i] = strtok(NULL, " ");
		if (i == 6 && f[3] != NULL && f[4] != NULL &&
		    strcmp(f[3], "/") == 0)
			(void)snprintf(mnt, sizeof(mnt), "%s", f[4]);
	}
	fclose(fp);
	if (*mnt == '\0' || (fp = fopen("/proc/self/cgroup", "re")) == NULL)
		return -1;
	i = -1;
	while (i == -1 && fgets(line, sizeof(line), fp) != NULL) {
		if (strncmp(line, "0::/", 4) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if ((size_t)snprintf(buf, len, "%s%s", mnt, strcmp(line + 3,
		    "/") == 0 ? "" : line + 3) < len)
			i = 0;
	}
	fclose(fp);
	return i;
}

/*
 * Makes the session's cgroup, id's, below this process's own.  Returns
 * 0 with fz ready (fz_dir for CLONE_INTO_CGROUP), or -1 with fz_dir -1:
 * none here, which is no failure (said in the session's log with -v;
 * session list --json shows the cgroup or none).
 */
int
freeze_open(struct freeze *fz, const char *id)
{
	char	 own[PATH_MAX];

	fz->fz_dir = fz->fz_freeze = fz->fz_events = -1;
	fz->fz_frozen = false;
	fz->fz_path[0] = '\0';
	if (freeze_own(own, sizeof(own)) == -1 || (size_t)snprintf(
	    fz->fz_path, sizeof(fz->fz_path), "%s/cordon-%s", own, id) >=
	    sizeof(fz->fz_path)) {
		log_info("session: no cgroup v2 of this process: its "
		    "processes are stopped between commands, not frozen");
		fz->fz_path[0] = '\0';
		return -1;
	}
	if (mkdir(fz->fz_path, 0700) == -1) {
		log_info("session: %s: %s: its processes are stopped between "
		    "commands, not frozen (the cgroup freezer needs root or a "
		    "cgroup subtree delegated to the user)", fz->fz_path,
		    strerror(errno));
		fz->fz_path[0] = '\0';
		return -1;
	}
	if ((fz->fz_dir = open(fz->fz_path, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1 || (fz->fz_freeze = openat(fz->fz_dir,
	    "cgroup.freeze", O_WRONLY | O_CLOEXEC)) == -1 ||
	    (fz->fz_events = openat(fz->fz_dir, "cgroup.events", O_RDONLY |
	    O_CLOEXEC)) == -1) {
		log_info("session: %s: %s: its processes are stopped between "
		    "commands, not frozen", fz->fz_path, strerror(errno));
		freeze_close(fz);
		return -1;
	}
	log_info("session: its processes are frozen between commands in %s",
	    fz->fz_path);
	return 0;
}

/* Whether cgroup.events says "frozen 1". */
static bool
freeze_is_frozen(const struct freeze *fz)
{
	char	 buf[256];
	ssize_t	 n;

	if ((n = pread(fz->fz_events, buf, sizeof(buf) - 1, 0)) <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "frozen 1\n") != NULL;
}

/*
 * Freezes (on) or thaws the cgroup; a freeze waits until every thread
 * of it is frozen, at most ms.  Returns 0, or -1 (not frozen in time,
 * or the file refused the write) with errno.  With no cgroup, 0.
 */
int
freeze_set(struct freeze *fz, bool on, int ms)
{
	struct pollfd	 pfd = { .fd = fz->fz_events, .events = POLLPRI };
	struct timespec	 start;
	long long	 left;

	if (fz->fz_freeze == -1 || fz->fz_frozen == on)
		return 0;
	if (pwrite(fz->fz_freeze, on ? "1" : "0", 1, 0) != 1)
		return -1;
	fz->fz_frozen = on;
	if (!on)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!freeze_is_frozen(fz)) {
		if ((left = ms - clock_ms_since(&start)) <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		/* A change of cgroup.events wakes POLLPRI. */
		(void)poll(&pfd, 1, left > 100 ? 100 : (int)left);
	}
	return 0;
}

/* Thaws the cgroup, removes its folder (empty once PID 1 is gone). */
void
freeze_close(struct freeze *fz)
{
	(void)freeze_set(fz, false, 0);
	if (fz->fz_events != -1)
		close(fz->fz_events);
	if (fz->fz_freeze != -1)
		close(fz->fz_freeze);
	if (fz->fz_dir != -1)
		close(fz->fz_dir);
	if (fz->fz_path[0] != '\0' && rmdir(fz->fz_path) == -1 &&
	    errno != ENOENT)
		log_warn("session: %s", fz->fz_path);
	fz->fz_dir = fz->fz_freeze = fz->fz_events = -1;
	fz->fz_path[0] = '\0';
}
