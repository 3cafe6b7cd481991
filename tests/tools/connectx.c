/*
 * connectx.c: connect(2) calls the C library's wrappers and Python's
 * socket module will not make, for the tests of cordon run's connect
 * thread (notify.c).
 *
 *   connectx raw DOMAIN TYPE BYTES LEN
 *	One connect on a new socket (DOMAIN unix, inet, inet6, netlink;
 *	TYPE stream, dgram, seqpacket, raw) to the address BYTES, of
 *	length LEN, whatever the two say: BYTES is hex, in pieces joined
 *	by commas, a piece HEX*N being HEX N times.  Prints "connect: 0"
 *	or "connect: ERRNO"; exits 0.
 *
 *   connectx full PATH
 *	A Unix stream listener at PATH (mode 0666) with a backlog of 0,
 *	already holding one connection it never accepts: the next
 *	connect to it waits.  Prints "ready", then waits to be killed.
 *
 *   connectx stall FIRST THEN
 *	Connects to FIRST in a child process, which waits there, and once
 *	the child is in connect(2), connects to THEN.  FIRST is
 *	unix:PATH, or tcp-full (a TCP listener made here, on 127.0.0.1,
 *	whose backlog is full: its SYNs go unanswered); THEN is
 *	unix:PATH, tcp (a listener made here), or - (nothing).  Prints
 *	"then: 0" or "then: ERRNO"; exits 0 and leaves the child waiting.
 *
 * Test code: blocking calls, one attempt, exit 2 on a usage error.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void	usage(void) __attribute__((noreturn));
static void	die(const char *) __attribute__((noreturn));
static int	connect_full(const char *) __attribute__((noreturn));

static void
usage(void)
{
	fprintf(stderr, "usage: connectx raw DOMAIN TYPE BYTES LEN | "
	    "full PATH | stall FIRST THEN\n");
	exit(2);
}

static void
die(const char *what)
{
	fprintf(stderr, "connectx: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int
lookup(const char *name, const char *const *names, const int *values)
{
	size_t	 i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(name, names[i]) == 0)
			return values[i];
	usage();
}

/* "0100,00,61*125" into buf; returns the bytes written. */
static size_t
hex_bytes(const char *spec, unsigned char *buf, size_t size)
{
	char		*copy, *piece, *star, *save;
	size_t		 n = 0, i, len;
	unsigned long	 times, t;
	unsigned int	 byte;

	copy = strdup(spec);
	for (piece = strtok_r(copy, ",", &save); piece != NULL;
	    piece = strtok_r(NULL, ",", &save)) {
		times = 1;
		if ((star = strchr(piece, '*')) != NULL) {
			*star = '\0';
			times = strtoul(star + 1, NULL, 10);
		}
		len = strlen(piece);
		if (len % 2 != 0)
			usage();
		for (t = 0; t < times; t++)
			for (i = 0; i < len; i += 2) {
				if (n == size ||
				    sscanf(piece + i, "%2x", &byte) != 1)
					usage();
				buf[n++] = (unsigned char)byte;
			}
	}
	free(copy);
	return n;
}

static void
print_result(const char *what, int rc)
{
	const char	*name = rc == 0 ? "0" : strerrorname_np(errno);

	printf("%s: %s\n", what, name != NULL ? name : "?");
	fflush(stdout);
}

static int
connect_raw(char **argv)
{
	static const char *const domains[] = { "unix", "inet", "inet6",
				    "netlink", NULL };
	static const int	 domain_v[] = { AF_UNIX, AF_INET, AF_INET6,
				    AF_NETLINK };
	static const char *const types[] = { "stream", "dgram", "seqpacket",
				    "raw", NULL };
	static const int	 type_v[] = { SOCK_STREAM, SOCK_DGRAM,
				    SOCK_SEQPACKET, SOCK_RAW };
	unsigned char		 buf[256];
	int			 s;

	memset(buf, 0, sizeof(buf));
	hex_bytes(argv[2], buf, sizeof(buf));
	if ((s = socket(lookup(argv[0], domains, domain_v),
	    lookup(argv[1], types, type_v), 0)) == -1)
		die("socket");
	print_result("connect", connect(s, (struct sockaddr *)buf,
	    (socklen_t)atoi(argv[3])));
	return 0;
}

static int
unix_connect(const char *path)
{
	struct sockaddr_un	 sun;
	int			 s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		usage();
	strcpy(sun.sun_path, path);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		die("socket");
	return connect(s, (struct sockaddr *)&sun, sizeof(sun));
}

static int
connect_full(const char *path)
{
	struct sockaddr_un	 sun;
	int			 l;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		usage();
	strcpy(sun.sun_path, path);
	unlink(path);
	if ((l = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    bind(l, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    chmod(path, 0666) == -1 || listen(l, 0) == -1)
		die(path);
	if (unix_connect(path) == -1)
		die("filling the backlog");
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* A TCP listener on 127.0.0.1 with this backlog; its address in sin. */
static int
tcp_listener(int backlog, struct sockaddr_in *sin)
{
	socklen_t	 len = sizeof(*sin);
	int		 l;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    bind(l, (struct sockaddr *)sin, sizeof(*sin)) == -1 ||
	    listen(l, backlog) == -1 ||
	    getsockname(l, (struct sockaddr *)sin, &len) == -1)
		die("tcp listener");
	return l;
}

static int
tcp_connect(const struct sockaddr_in *sin)
{
	int	 s;

	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		die("socket");
	return connect(s, (const struct sockaddr *)sin, sizeof(*sin));
}

/* Whether pid is in connect(2), by /proc/PID/syscall. */
static int
in_connect(pid_t pid)
{
	char	 path[64], line[64];
	FILE	*f;
	long	 nr = -1;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fgets(line, sizeof(line), f) != NULL)
		nr = strtol(line, NULL, 10);
	fclose(f);
	return nr == SYS_connect;
}

static int
connect_stall(char **argv)
{
	struct sockaddr_in	 full, then;
	struct timespec		 ts = { 0, 20 * 1000 * 1000 };
	pid_t			 pid;
	int			 i;

	if (strcmp(argv[0], "tcp-full") == 0) {
		tcp_listener(0, &full);
		if (tcp_connect(&full) == -1)
			die("filling the backlog");
	} else if (strncmp(argv[0], "unix:", 5) != 0)
		usage();
	if (strcmp(argv[1], "tcp") == 0)
		tcp_listener(16, &then);
	else if (strncmp(argv[1], "unix:", 5) != 0 && strcmp(argv[1], "-"))
		usage();
	if ((pid = fork()) == -1)
		die("fork");
	if (pid == 0) {
		if (argv[0][0] == 'u')
			unix_connect(argv[0] + 5);
		else
			tcp_connect(&full);
		_exit(0);
	}
	for (i = 0; i < 250 && !in_connect(pid); i++)
		nanosleep(&ts, NULL);
	if (i == 250) {
		fprintf(stderr, "connectx: the first connect never waited\n");
		exit(2);
	}
	if (argv[1][0] == '-')
		return 0;
	print_result("then", argv[1][0] == 'u' ? unix_connect(argv[1] + 5) :
	    tcp_connect(&then));
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "raw") == 0)
		return connect_raw(argv + 2);
	if (argc == 3 && strcmp(argv[1], "full") == 0)
		return connect_full(argv[2]);
	if (argc == 4 && strcmp(argv[1], "stall") == 0)
		return connect_stall(argv + 2);
	usage();
}
