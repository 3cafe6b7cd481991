/*
 * sockpeer.c: the far end of the escape probes (probe.c).
 *
 *   sockpeer EP...
 *
 * Listens on every endpoint given, prints "ready" once all are bound,
 * then one line per thing that reached it, until killed:
 *
 *   tcp:HOST:PORT	stream; prints "accepted EP", writes a line, closes
 *   udp:HOST:PORT	datagrams; prints "datagram EP", echoes each back
 *   unix:PATH		stream on a path
 *   unix-dgram:PATH	datagrams on a path (no echo: senders are unnamed)
 *   abstract:NAME	stream on an abstract name
 *
 * HOST may be [v6].  Path sockets get mode 0666 so another user's probe
 * meets the sandbox, not the file mode.  A test reads the log to know
 * that nothing arrived, beside what the probe itself says.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_EPS	16

struct ep {
	const char	*e_text;
	int		 e_fd;
	int		 e_type;
};

static void	die(const char *, const char *) __attribute__((noreturn));

static void
die(const char *what, const char *ep)
{
	fprintf(stderr, "sockpeer: %s %s: %s\n", what, ep, strerror(errno));
	exit(2);
}

/* Binds (and for streams listens on) one endpoint; dies on failure. */
static void
ep_open(struct ep *e)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_un	*sun = (struct sockaddr_un *)&ss;
	const char		*t = e->e_text, *rest, *colon;
	char			 host[64];
	socklen_t		 len;
	size_t			 n;
	int			 one = 1, path = 0;

	memset(&ss, 0, sizeof(ss));
	e->e_type = SOCK_STREAM;
	if ((rest = strchr(t, ':')) == NULL)
		goto bad;
	rest++;
	if (strncmp(t, "tcp:", 4) == 0 || strncmp(t, "udp:", 4) == 0) {
		if (t[0] == 'u')
			e->e_type = SOCK_DGRAM;
		if ((colon = strrchr(rest, ':')) == NULL)
			goto bad;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - rest),
		    rest);
		if (host[0] == '[')
			memmove(host, host + 1, strlen(host));
		host[strcspn(host, "]")] = '\0';
		if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
			sin->sin_family = AF_INET;
			sin->sin_port = htons((uint16_t)atoi(colon + 1));
			len = sizeof(*sin);
		} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons((uint16_t)atoi(colon + 1));
			len = sizeof(*sin6);
		} else
			goto bad;
	} else {
		if (strncmp(t, "unix-dgram:", 11) == 0)
			e->e_type = SOCK_DGRAM;
		else if (strncmp(t, "unix:", 5) != 0 &&
		    strncmp(t, "abstract:", 9) != 0)
			goto bad;
		path = t[0] == 'u';
		n = strlen(rest);
		if (n + 1 >= sizeof(sun->sun_path))
			goto bad;
		sun->sun_family = AF_UNIX;
		memcpy(sun->sun_path + (path ? 0 : 1), rest, n);
		/* A path's NUL, or an abstract name's leading one. */
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
		    1);
		if (path)
			unlink(rest);
	}
	if ((e->e_fd = socket(ss.ss_family, e->e_type | SOCK_CLOEXEC, 0)) ==
	    -1)
		die("socket", t);
	setsockopt(e->e_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(e->e_fd, (struct sockaddr *)&ss, len) == -1)
		die("bind", t);
	if (path && chmod(rest, 0666) == -1)
		die("chmod", t);
	if (e->e_type == SOCK_STREAM && listen(e->e_fd, 64) == -1)
		die("listen", t);
	return;
bad:
	fprintf(stderr, "sockpeer: bad endpoint %s\n", t);
	exit(2);
}

/* One event on e: a connection or a datagram, logged and answered. */
static void
ep_serve(struct ep *e)
{
	struct sockaddr_storage	 from;
	socklen_t		 flen = sizeof(from);
	char			 buf[2048];
	ssize_t			 n;
	int			 fd;

	if (e->e_type == SOCK_STREAM) {
		if ((fd = accept4(e->e_fd, NULL, NULL, SOCK_CLOEXEC)) == -1)
			return;
		printf("accepted %s\n", e->e_text);
		fflush(stdout);
		(void)send(fd, "sockpeer\n", 9, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return;
	}
	if ((n = recvfrom(e->e_fd, buf, sizeof(buf), 0,
	    (struct sockaddr *)&from, &flen)) == -1)
		return;
	printf("datagram %s %zd bytes\n", e->e_text, n);
	fflush(stdout);
	if (flen > offsetof(struct sockaddr_un, sun_path))
		(void)sendto(e->e_fd, buf, (size_t)n, MSG_DONTWAIT,
		    (struct sockaddr *)&from, flen);
}

int
main(int argc, char **argv)
{
	struct ep	 eps[MAX_EPS];
	struct pollfd	 pfd[MAX_EPS];
	int		 i, n = argc - 1;

	if (n < 1 || n > MAX_EPS) {
		fprintf(stderr, "usage: sockpeer EP... (at most %d)\n",
		    MAX_EPS);
		return 2;
	}
	for (i = 0; i < n; i++) {
		eps[i].e_text = argv[i + 1];
		ep_open(&eps[i]);
		pfd[i].fd = eps[i].e_fd;
		pfd[i].events = POLLIN;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if (poll(pfd, (nfds_t)n, -1) == -1) {
			if (errno == EINTR)
				continue;
			die("poll", "");
		}
		for (i = 0; i < n; i++)
			if (pfd[i].revents & POLLIN)
				ep_serve(&eps[i]);
	}
}
