/*
 * sigcont.c: the ways a process has the kernel send it SIGCONT later,
 * which would continue it once a session's PID 1 stopped it.
 *
 *   sigcont routes
 *	Tries each way and prints a line for each, "NAME: ok" or
 *	"NAME: ERRNO" (EPERM, ENOSYS, or the number): timer_create with
 *	SIGCONT, prctl PR_SET_PDEATHSIG SIGCONT, fcntl F_SETSIG SIGCONT,
 *	clone with SIGCONT as its exit signal, mq_notify with SIGCONT.
 *	Exits 0.
 *
 *   sigcont plant COMMAND [ARG...]
 *	Prints the timer's line as above and exits; a child it leaves in
 *	the background arms that timer (SIGCONT after 1 s, then every
 *	0.2 s) when it can, and runs COMMAND 1.5 s after the start: a
 *	process stopped between commands meanwhile runs it when the timer
 *	continues it, or at the next command if it has no timer.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *
errname(int e)
{
	static char	 buf[16];

	if (e == 0)
		return "ok";
	if (e == EPERM)
		return "EPERM";
	if (e == ENOSYS)
		return "ENOSYS";
	snprintf(buf, sizeof(buf), "%d", e);
	return buf;
}

/* A timer that sends SIGCONT after first_ms, then every 200 ms. */
static int
timer_cont(long first_ms, int *id)
{
	struct sigevent		 sev;
	struct itimerspec	 its;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGCONT;
	if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, id) == -1)
		return errno;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = first_ms / 1000;
	its.it_value.tv_nsec = (first_ms % 1000) * 1000000;
	its.it_interval.tv_nsec = 200 * 1000000;
	if (first_ms > 0 && syscall(SYS_timer_settime, *id, 0, &its,
	    NULL) == -1)
		return errno;
	return 0;
}

static int
try_timer(void)
{
	int	 id, e;

	if ((e = timer_cont(0, &id)) == 0)
		syscall(SYS_timer_delete, id);
	return e;
}

static int
try_pdeathsig(void)
{
	int	 e;

	e = prctl(PR_SET_PDEATHSIG, SIGCONT) == -1 ? errno : 0;
	prctl(PR_SET_PDEATHSIG, 0);
	return e;
}

static int
try_setsig(void)
{
	int	 p[2], e;

	if (pipe(p) == -1)
		return errno;
	e = fcntl(p[0], F_SETSIG, SIGCONT) == -1 ? errno : 0;
	close(p[0]);
	close(p[1]);
	return e;
}

static int
try_clone(void)
{
	long	 pid;
	int	 status;

	if ((pid = syscall(SYS_clone, SIGCONT, 0, 0, 0, 0)) == -1)
		return errno;
	if (pid == 0)
		_exit(0);
	waitpid((pid_t)pid, &status, __WALL);
	return 0;
}

static int
try_mq_notify(void)
{
	struct sigevent	 sev;
	char		 name[32];
	int		 fd, e;

	snprintf(name, sizeof(name), "sigcont-%d", (int)getpid());
	fd = (int)syscall(SYS_mq_open, name, O_RDWR | O_CREAT | O_EXCL,
	    0600, NULL);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGCONT;
	e = syscall(SYS_mq_notify, fd, &sev) == -1 ? errno : 0;
	if (fd != -1) {
		close(fd);
		syscall(SYS_mq_unlink, name);
	}
	return e;
}

static int
plant(char **argv)
{
	struct timespec	 at;
	int		 id, e, fd;

	e = try_timer();
	printf("timer_create: %s\n", errname(e));
	fflush(stdout);
	if (fork() != 0)
		return 0;
	setsid();
	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	(void)timer_cont(1000, &id);
	clock_gettime(CLOCK_MONOTONIC, &at);
	at.tv_nsec += 500000000;
	at.tv_sec += 1 + at.tv_nsec / 1000000000;
	at.tv_nsec %= 1000000000;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) ==
	    EINTR)
		;
	execvp(argv[0], argv);
	_exit(127);
}

int
main(int argc, char *argv[])
{
	if (argc >= 3 && strcmp(argv[1], "plant") == 0)
		return plant(argv + 2);
	if (argc != 2 || strcmp(argv[1], "routes") != 0) {
		fprintf(stderr, "usage: sigcont routes | plant command "
		    "[arg ...]\n");
		return 2;
	}
	printf("timer_create: %s\n", errname(try_timer()));
	printf("pdeathsig: %s\n", errname(try_pdeathsig()));
	printf("setsig: %s\n", errname(try_setsig()));
	printf("clone: %s\n", errname(try_clone()));
	printf("mq_notify: %s\n", errname(try_mq_notify()));
	return 0;
}
