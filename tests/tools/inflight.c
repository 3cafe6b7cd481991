/*
 * inflight.c: writes a command leaves in flight in the kernel when it
 * ends, for a session's check after the command (session.bats).
 *
 *   inflight plant FILE MB TEXT
 *	Forks; the child opens FILE and starts three threads on it: one
 *	writes MB megabytes at offset 0, beginning with what FILE holds
 *	now (the kernel holds FILE's inode lock for the whole write, and
 *	no signal but SIGKILL ends it early); once that one is in the
 *	kernel, one writes TEXT at offset 0 and one truncates FILE to
 *	TEXT's length, both queued on the lock.  The parent prints
 *	"in flight:" and each thread's state as /proc shows it (R, D, S,
 *	...) and exits 0 while the writes still run, in the child, whose
 *	standard descriptors are /dev/null: what FILE holds when they
 *	end is TEXT, and until then its first bytes are the old ones.
 *
 *   inflight time FILE MB
 *	The MB-megabyte write alone, in the foreground (FILE made if
 *	need be): prints how long it took, in milliseconds.
 *
 * Test code: no cleverness, exits 1 with a line on stderr on failure.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OLD_MAX		4096	/* FILE's bytes the big write begins with */

static int		 fd = -1;
static char		*big;
static size_t		 bigsz;
static const char	*text;
static volatile pid_t	 tids[3];

static void
die(const char *what)
{
	fprintf(stderr, "inflight: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *
writer(void *arg)
{
	(void)arg;
	tids[0] = (pid_t)syscall(SYS_gettid);
	if (pwrite(fd, big, bigsz, 0) == -1)
		die("the big write");
	return NULL;
}

static void *
rewriter(void *arg)
{
	(void)arg;
	tids[1] = (pid_t)syscall(SYS_gettid);
	if (pwrite(fd, text, strlen(text), 0) == -1)
		die("the rewrite");
	return NULL;
}

static void *
truncater(void *arg)
{
	(void)arg;
	tids[2] = (pid_t)syscall(SYS_gettid);
	if (ftruncate(fd, (off_t)strlen(text)) == -1)
		die("the truncate");
	return NULL;
}

/* Thread tid's state letter, as /proc/self/task/TID/stat says. */
static char
state(pid_t tid)
{
	char	 path[64], buf[512], *p;
	ssize_t	 n;
	int	 sfd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if ((sfd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return '?';
	n = read(sfd, buf, sizeof(buf) - 1);
	close(sfd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] == '\0')
		return '?';
	return p[2];
}

static void
nap_us(long us)
{
	struct timespec	 ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

/* Waits up to 2 s for thread i to have started and to be in the kernel. */
static void
wait_blocked(int i)
{
	int	 n;
	char	 c;

	for (n = 0; n < 2000; n++) {
		if (tids[i] != 0 && ((c = state(tids[i])) == 'D' || c == 'S'))
			return;
		nap_us(1000);
	}
}

/*
 * The big buffer: FILE's first bytes (none when it does not exist),
 * then spaces, then a newline.
 */
static void
fill(const char *file, size_t mb)
{
	ssize_t	 n;
	int	 rfd;

	bigsz = mb * 1024 * 1024;
	if ((big = malloc(bigsz)) == NULL)
		die("malloc");
	memset(big, ' ', bigsz);
	big[bigsz - 1] = '\n';
	if ((rfd = open(file, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno != ENOENT)
			die(file);
		return;
	}
	if ((n = read(rfd, big, OLD_MAX)) == -1)
		die(file);
	close(rfd);
}

static int
plant(const char *file, size_t mb)
{
	pthread_t	 t[3];
	struct stat	 st;
	int		 pfd[2], i;
	char		 line[128];

	fill(file, mb);
	if (pipe(pfd) == -1)
		die("pipe");
	switch (fork()) {
	case -1:
		die("fork");
	case 0:
		break;
	default:
		close(pfd[1]);
		memset(line, 0, sizeof(line));
		if (read(pfd[0], line, sizeof(line) - 1) <= 0)
			return 1;
		printf("in flight:%s\n", line);
		return 0;
	}
	close(pfd[0]);
	if ((fd = open(file, O_WRONLY | O_CLOEXEC)) == -1)
		die(file);
	/* A background process: the command's reader waits for no EOF. */
	if ((i = open("/dev/null", O_RDWR)) == -1 || dup2(i, 0) == -1 ||
	    dup2(i, 1) == -1 || dup2(i, 2) == -1)
		die("/dev/null");
	close(i);
	if (pthread_create(&t[0], NULL, writer, NULL) != 0)
		die("pthread_create");
	/* In the kernel, holding the lock: the file grows. */
	for (i = 0; i < 2000; i++) {
		if (fstat(fd, &st) == 0 && (size_t)st.st_size > OLD_MAX)
			break;
		nap_us(100);
	}
	if (pthread_create(&t[1], NULL, rewriter, NULL) != 0)
		die("pthread_create");
	wait_blocked(1);
	if (pthread_create(&t[2], NULL, truncater, NULL) != 0)
		die("pthread_create");
	wait_blocked(2);
	snprintf(line, sizeof(line), " writer %c, rewrite %c, truncate %c",
	    state(tids[0]), state(tids[1]), state(tids[2]));
	if (write(pfd[1], line, strlen(line)) == -1)
		die("pipe");
	close(pfd[1]);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static int
timed(const char *file, size_t mb)
{
	struct timespec	 a, b;

	fill(file, mb);
	if ((fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) == -1)
		die(file);
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (pwrite(fd, big, bigsz, 0) == -1)
		die("the big write");
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000 +
	    (b.tv_nsec - a.tv_nsec) / 1000000);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "plant") == 0) {
		text = argv[4];
		return plant(argv[2], strtoul(argv[3], NULL, 10));
	}
	if (argc == 4 && strcmp(argv[1], "time") == 0)
		return timed(argv[2], strtoul(argv[3], NULL, 10));
	fprintf(stderr, "usage: inflight plant FILE MB TEXT\n"
	    "       inflight time FILE MB\n");
	return 2;
}
