/*
 * netcheck.c: a test peer for relays (the bridge, the proxy's tunnels).
 *
 *   netcheck serve EP [--reply N] [--reset-after N]
 *	Accepts on EP.  For each connection: reads until end of file while
 *	hashing, then writes a 16-byte answer (byte count and hash, so the
 *	client can check what arrived), then N bytes of the pattern, then
 *	closes.  With --reset-after N it resets the connection after N
 *	bytes instead.  With --banner N it first writes N pattern bytes
 *	(a server that speaks first), then reads to end of file and closes
 *	without an answer.  Runs until killed.
 *
 *   netcheck client EP --send N --expect M [--conns C] [--parallel P]
 *	Makes C connections, P at a time: each sends N pattern bytes, shuts
 *	its write side (half-close), then reads the answer and checks that
 *	the server saw exactly N bytes with the right hash, then M pattern
 *	bytes and end of file.  Prints one line of counts and the time;
 *	exit 0 when every connection was byte-exact.
 *
 *   netcheck hold EP --conns C --then FILE
 *	Opens C connections and keeps them open until FILE exists, then
 *	closes them; prints "held C" once all are open.
 *
 *   netcheck reset EP
 *	Connects, sends a few bytes and resets the connection.
 *
 *   netcheck dump EP --then FILE
 *	Prints "listening", accepts one connection and writes what it
 *	reads, until end of file, to FILE.
 *
 *   netcheck echo EP [--reset-after N]
 *	Accepts on EP and echoes, one thread and epoll for any number of
 *	connections: what a socket does not take at once is dropped (a
 *	sink past that).  With --reset-after N it resets a connection once
 *	N bytes came in (SO_LINGER 0): an upstream that fails mid-stream.
 *
 *   netcheck tunnels PROXY --target HOST:PORT --conns C [--mode M]
 *	    [--then FILE]
 *	CONNECT tunnels through the HTTP proxy at PROXY to an echo server,
 *	one after the other; each is open when the answer is 200 and a
 *	byte sent comes back.  Modes:
 *	  hold	  opens C and keeps them; prints "open C failed F seconds S",
 *		  waits for FILE (if given), checks each again with a byte
 *		  and prints "alive A dead D seconds S"
 *	  cycle	  opens and closes C, one at a time
 *	  vanish  opens one, sends 64 KiB and resets it unread, C times
 *	  upreset opens one, sends 64 KiB and expects the proxy to end the
 *		  tunnel within 5 s (the upstream, echo --reset-after,
 *		  resets it), C times
 *	The last three print "ok N failed F seconds S conns/s R".
 *
 *   netcheck slowloris EP --conns C --secs S
 *	Opens C connections and sends a request head to each, one byte a
 *	second, for at most S seconds; prints "dropped D of C open O
 *	median M max X" (seconds from the first byte to the close).
 *
 * With --raw 1 (serve and client), the bytes are zeros and only counted,
 * not hashed: for measuring throughput, not for checking it.
 *
 * An endpoint is tcp:HOST:PORT or unix:PATH.  Test code: plain threads,
 * blocking sockets, no event loop.
 */
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK	(256 * 1024)

static struct sockaddr_storage	 ep_addr;
static socklen_t		 ep_len;
static uint64_t			 opt_reply, opt_send, opt_expect;
static int64_t			 opt_reset = -1;
static uint64_t			 opt_banner;
static long			 opt_conns = 1, opt_parallel = 1;
static bool			 opt_raw;
static const char		*opt_target, *opt_mode = "hold";
static long			 opt_secs = 30;

static void	die(const char *) __attribute__((noreturn));

static void
die(const char *what)
{
	fprintf(stderr, "netcheck: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void
parse_ep(const char *text)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)&ep_addr;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ep_addr;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ep_addr;
	char			 host[64];
	const char		*colon;

	memset(&ep_addr, 0, sizeof(ep_addr));
	if (strncmp(text, "unix:", 5) == 0) {
		sun->sun_family = AF_UNIX;
		snprintf(sun->sun_path, sizeof(sun->sun_path), "%s", text + 5);
		ep_len = sizeof(*sun);
		return;
	}
	if (strncmp(text, "tcp:", 4) != 0 ||
	    (colon = strrchr(text + 4, ':')) == NULL ||
	    (size_t)(colon - text - 4) >= sizeof(host)) {
		fprintf(stderr, "netcheck: bad endpoint %s\n", text);
		exit(2);
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - text - 4),
	    text + 4);
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)atoi(colon + 1));
		ep_len = sizeof(*sin);
		return;
	}
	if (host[0] == '[')
		memmove(host, host + 1, strlen(host));
	host[strcspn(host, "]")] = '\0';
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1) {
		fprintf(stderr, "netcheck: bad address %s\n", host);
		exit(2);
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons((uint16_t)atoi(colon + 1));
	ep_len = sizeof(*sin6);
}

/* The pattern: byte i of a stream, not periodic at small strides. */
static void
pattern(uint64_t off, unsigned char *buf, size_t len)
{
	size_t	 i;

	if (opt_raw) {
		memset(buf, 0, len);
		return;
	}
	for (i = 0; i < len; i++) {
		uint64_t	 x = off + i;

		buf[i] = (unsigned char)((x * 2654435761u) >> 13 ^ x >> 20);
	}
}

/* FNV-1a over a stream. */
static uint64_t
hash(uint64_t h, const unsigned char *buf, size_t len)
{
	size_t	 i;

	if (opt_raw)
		return h;
	for (i = 0; i < len; i++)
		h = (h ^ buf[i]) * 1099511628211ULL;
	return h;
}

static int
write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = send(fd, p, len, MSG_NOSIGNAL)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void *
serve_one(void *arg)
{
	int		 fd = (int)(intptr_t)arg;
	unsigned char	*buf = malloc(CHUNK), answer[16];
	uint64_t	 count = 0, h = 1469598103934665603ULL, off;
	ssize_t		 n;
	size_t		 len;

	if (opt_banner > 0) {
		len = opt_banner < CHUNK ? (size_t)opt_banner : CHUNK;
		pattern(0, buf, len);
		if (write_all(fd, buf, len) == -1)
			goto out;
	}
	for (;;) {
		n = recv(fd, buf, CHUNK, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		h = hash(h, buf, (size_t)n);
		count += (uint64_t)n;
		if (opt_reset >= 0 && count >= (uint64_t)opt_reset) {
			struct linger	 lg = { 1, 0 };

			setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			goto out;
		}
	}
	if (n == -1 || opt_banner > 0)
		goto out;
	memcpy(answer, &count, 8);
	memcpy(answer + 8, &h, 8);
	if (write_all(fd, answer, sizeof(answer)) == -1)
		goto out;
	for (off = 0; off < opt_reply; off += len) {
		len = opt_reply - off < CHUNK ? (size_t)(opt_reply - off) :
		    CHUNK;
		pattern(off, buf, len);
		if (write_all(fd, buf, len) == -1)
			goto out;
	}
out:
	close(fd);
	free(buf);
	return NULL;
}

static void	do_serve(void) __attribute__((noreturn));

static void
do_serve(void)
{
	pthread_attr_t	 attr;
	pthread_t	 t;
	int		 lfd, fd, one = 1;

	if ((lfd = socket(ep_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC,
	    0)) == -1)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ep_addr.ss_family == AF_UNIX)
		unlink(((struct sockaddr_un *)&ep_addr)->sun_path);
	if (bind(lfd, (struct sockaddr *)&ep_addr, ep_len) == -1)
		die("bind");
	if (listen(lfd, 4096) == -1)
		die("listen");
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (;;) {
		if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept");
		}
		if (pthread_create(&t, &attr, serve_one,
		    (void *)(intptr_t)fd) != 0) {
			close(fd);
			fprintf(stderr, "netcheck: too many threads\n");
		}
	}
}

static int
dial(void)
{
	int	 fd;

	if ((fd = socket(ep_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&ep_addr, ep_len) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One checked exchange; returns NULL or what went wrong. */
static const char *
client_one(unsigned char *buf, unsigned char *want)
{
	uint64_t	 off, count, h = 1469598103934665603ULL, got = 0;
	unsigned char	 answer[16];
	size_t		 len, have = 0;
	ssize_t		 n;
	int		 fd;

	if ((fd = dial()) == -1)
		return "connect failed";
	for (off = 0; off < opt_send; off += len) {
		len = opt_send - off < CHUNK ? (size_t)(opt_send - off) : CHUNK;
		pattern(off, buf, len);
		h = hash(h, buf, len);
		if (write_all(fd, buf, len) == -1) {
			close(fd);
			return "send failed";
		}
	}
	if (shutdown(fd, SHUT_WR) == -1) {
		close(fd);
		return "shutdown failed";
	}
	while (have < sizeof(answer)) {
		n = recv(fd, answer + have, sizeof(answer) - have, 0);
		if (n <= 0) {
			close(fd);
			return "no answer after half-close";
		}
		have += (size_t)n;
	}
	memcpy(&count, answer, 8);
	if (count != opt_send) {
		close(fd);
		return "the server saw another byte count";
	}
	if (memcmp(answer + 8, &h, 8) != 0) {
		close(fd);
		return "the server saw other bytes";
	}
	for (;;) {
		n = recv(fd, buf, CHUNK, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			close(fd);
			return "read failed";
		}
		if (n == 0)
			break;
		if (got + (uint64_t)n > opt_expect) {
			close(fd);
			return "more bytes than expected";
		}
		pattern(got, want, (size_t)n);
		if (memcmp(buf, want, (size_t)n) != 0) {
			close(fd);
			return "other bytes than expected";
		}
		got += (uint64_t)n;
	}
	close(fd);
	return got == opt_expect ? NULL : "fewer bytes than expected";
}

static pthread_mutex_t	 lock = PTHREAD_MUTEX_INITIALIZER;
static long		 next_conn, n_ok, n_fail;

static void *
client_worker(void *arg)
{
	unsigned char	*buf = malloc(CHUNK), *want = malloc(CHUNK);
	const char	*why;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		if (next_conn >= opt_conns) {
			pthread_mutex_unlock(&lock);
			break;
		}
		next_conn++;
		pthread_mutex_unlock(&lock);
		why = client_one(buf, want);
		pthread_mutex_lock(&lock);
		if (why == NULL)
			n_ok++;
		else {
			if (n_fail++ < 5)
				fprintf(stderr, "netcheck: %s\n", why);
		}
		pthread_mutex_unlock(&lock);
	}
	free(buf);
	free(want);
	return NULL;
}

static int
do_client(void)
{
	pthread_t	*t;
	struct timeval	 t0, t1;
	double		 secs;
	long		 i;

	t = calloc((size_t)opt_parallel, sizeof(*t));
	gettimeofday(&t0, NULL);
	for (i = 0; i < opt_parallel; i++)
		if (pthread_create(&t[i], NULL, client_worker, NULL) != 0)
			die("pthread_create");
	for (i = 0; i < opt_parallel; i++)
		pthread_join(t[i], NULL);
	gettimeofday(&t1, NULL);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_usec - t0.tv_usec) / 1e6;
	printf("ok %ld failed %ld seconds %.6f conns/s %.1f MiB/s %.1f\n",
	    n_ok, n_fail, secs, (double)n_ok / secs,
	    (double)n_ok * (double)(opt_send + opt_expect) / secs / 1048576);
	free(t);
	return n_fail == 0 ? 0 : 1;
}

static int
do_hold(const char *then)
{
	struct stat	 st;
	int		*fds;
	long		 i;

	fds = calloc((size_t)opt_conns, sizeof(*fds));
	for (i = 0; i < opt_conns; i++)
		if ((fds[i] = dial()) == -1)
			die("connect");
	printf("held %ld\n", opt_conns);
	fflush(stdout);
	while (stat(then, &st) == -1)
		usleep(20000);
	for (i = 0; i < opt_conns; i++)
		close(fds[i]);
	free(fds);
	return 0;
}

static int
do_reset(void)
{
	struct linger	 lg = { 1, 0 };
	int		 fd;

	if ((fd = dial()) == -1)
		die("connect");
	if (write_all(fd, "partial", 7) == -1)
		die("send");
	usleep(50000);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
	return 0;
}

static int
do_dump(const char *file)
{
	char	 buf[4096];
	ssize_t	 n;
	FILE	*f;
	int	 lfd, fd, one = 1;

	if ((lfd = socket(ep_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC,
	    0)) == -1)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&ep_addr, ep_len) == -1 ||
	    listen(lfd, 1) == -1)
		die("bind");
	printf("listening\n");
	fflush(stdout);
	if ((fd = accept(lfd, NULL, NULL)) == -1)
		die("accept");
	if ((f = fopen(file, "w")) == NULL)
		die(file);
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		fwrite(buf, 1, (size_t)n, f);
	fclose(f);
	close(fd);
	close(lfd);
	return 0;
}

/* Seconds since t0, as a double. */
static double
since(const struct timeval *t0)
{
	struct timeval	 t1;

	gettimeofday(&t1, NULL);
	return (double)(t1.tv_sec - t0->tv_sec) +
	    (double)(t1.tv_usec - t0->tv_usec) / 1e6;
}

/* As many descriptors as the hard limit allows: load wants thousands. */
static void
raise_nofile(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Closes fd with a reset instead of a FIN. */
static void
close_reset(int fd)
{
	struct linger	 lg = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

static void	do_echo(void) __attribute__((noreturn));

static void
do_echo(void)
{
	struct epoll_event	 ev, evs[256];
	struct rlimit		 rl;
	uint64_t		*seen;
	char			 buf[65536];
	ssize_t			 n;
	int			 lfd, efd, fd, one = 1, i, nev;

	raise_nofile();
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		die("getrlimit");
	if ((seen = calloc((size_t)rl.rlim_cur, sizeof(*seen))) == NULL)
		die("calloc");
	if ((lfd = socket(ep_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ep_addr.ss_family == AF_UNIX)
		unlink(((struct sockaddr_un *)&ep_addr)->sun_path);
	if (bind(lfd, (struct sockaddr *)&ep_addr, ep_len) == -1)
		die("bind");
	if (listen(lfd, 4096) == -1)
		die("listen");
	if ((efd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		die("epoll_create1");
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	if (epoll_ctl(efd, EPOLL_CTL_ADD, lfd, &ev) == -1)
		die("epoll_ctl");
	for (;;) {
		if ((nev = epoll_wait(efd, evs, 256, -1)) == -1) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (i = 0; i < nev; i++) {
			fd = evs[i].data.fd;
			if (fd == lfd) {
				while ((fd = accept4(lfd, NULL, NULL,
				    SOCK_CLOEXEC | SOCK_NONBLOCK)) != -1) {
					if ((rlim_t)fd >= rl.rlim_cur) {
						close(fd);
						continue;
					}
					seen[fd] = 0;
					ev.events = EPOLLIN;
					ev.data.fd = fd;
					if (epoll_ctl(efd, EPOLL_CTL_ADD, fd,
					    &ev) == -1)
						close(fd);
				}
				continue;
			}
			n = recv(fd, buf, sizeof(buf), 0);
			if (n == -1 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n <= 0) {
				close(fd);	/* leaves the epoll set too */
				continue;
			}
			seen[fd] += (uint64_t)n;
			if (opt_reset >= 0 && seen[fd] >= (uint64_t)opt_reset) {
				close_reset(fd);
				continue;
			}
			(void)send(fd, buf, (size_t)n, MSG_NOSIGNAL |
			    MSG_DONTWAIT);
		}
	}
}

/*
 * One CONNECT tunnel to opt_target through the proxy, checked with a
 * byte that comes back; returns the socket, or -1 with *why set.
 */
static int
tunnel_open(const char **why)
{
	struct timeval	 tv = { 10, 0 };
	char		 head[1024], c;
	size_t		 have = 0;
	ssize_t		 n;
	int		 fd, len;

	if ((fd = dial()) == -1) {
		*why = "connect to the proxy failed";
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	len = snprintf(head, sizeof(head), "CONNECT %s HTTP/1.1\r\n"
	    "Host: %s\r\n\r\n", opt_target, opt_target);
	if (write_all(fd, head, (size_t)len) == -1) {
		*why = "sending CONNECT failed";
		goto fail;
	}
	/* The answer head; nothing follows it before our byte. */
	for (;;) {
		if (have == sizeof(head) - 1) {
			*why = "an answer head too long";
			goto fail;
		}
		if ((n = recv(fd, head + have, sizeof(head) - 1 - have,
		    0)) <= 0) {
			*why = "no answer to CONNECT";
			goto fail;
		}
		have += (size_t)n;
		head[have] = '\0';
		if (strstr(head, "\r\n\r\n") != NULL)
			break;
	}
	if (strncmp(head, "HTTP/1.1 200 ", 13) != 0) {
		*why = "CONNECT not answered with 200";
		goto fail;
	}
	if (write_all(fd, "p", 1) == -1 || recv(fd, &c, 1, 0) != 1 ||
	    c != 'p') {
		*why = "no echo through the tunnel";
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* Whether a byte sent on tunnel fd comes back. */
static bool
tunnel_alive(int fd)
{
	char	 c;

	return write_all(fd, "a", 1) == 0 && recv(fd, &c, 1, 0) == 1 &&
	    c == 'a';
}

/* Sends 64 KiB on a tunnel (those of vanish and upreset). */
static int
tunnel_flood(int fd)
{
	static char	 junk[65536];

	return write_all(fd, junk, sizeof(junk));
}

/*
 * upreset: once the upstream resets, the proxy must end the tunnel; the
 * echo may bring some bytes back first.  Returns NULL or what is wrong.
 */
static const char *
tunnel_wait_end(int fd)
{
	char	 buf[65536];
	ssize_t	 n;

	if (tunnel_flood(fd) == -1)
		return errno == EAGAIN ? "send blocked for 10 s" : NULL;
	for (;;) {
		if ((n = recv(fd, buf, sizeof(buf), 0)) == 0)
			return NULL;
		if (n == -1)
			return errno == EAGAIN ? "the proxy kept the tunnel "
			    "open after the upstream reset" : NULL;
	}
}

static int
do_tunnels(const char *then)
{
	struct timeval	 t0;
	struct stat	 st;
	const char	*why;
	int		*fds, fd;
	long		 i, ok = 0, failed = 0, dead = 0;
	bool		 hold = strcmp(opt_mode, "hold") == 0;

	if (opt_target == NULL || (!hold && strcmp(opt_mode, "cycle") != 0 &&
	    strcmp(opt_mode, "vanish") != 0 &&
	    strcmp(opt_mode, "upreset") != 0)) {
		fprintf(stderr, "netcheck: tunnels needs --target and a mode "
		    "of hold, cycle, vanish or upreset\n");
		return 2;
	}
	raise_nofile();
	if ((fds = calloc((size_t)opt_conns, sizeof(*fds))) == NULL)
		die("calloc");
	gettimeofday(&t0, NULL);
	for (i = 0; i < opt_conns; i++) {
		fds[i] = -1;
		why = NULL;
		if ((fd = tunnel_open(&why)) != -1) {
			if (hold)
				fds[i] = fd;
			else if (strcmp(opt_mode, "cycle") == 0)
				close(fd);
			else if (strcmp(opt_mode, "vanish") == 0) {
				if (tunnel_flood(fd) == -1)
					why = "send failed";
				close_reset(fd);
			} else {
				why = tunnel_wait_end(fd);
				close(fd);
			}
		}
		if (why == NULL)
			ok++;
		else if (failed++ < 5)
			fprintf(stderr, "netcheck: tunnel %ld: %s\n", i, why);
	}
	if (!hold) {
		printf("ok %ld failed %ld seconds %.3f conns/s %.1f\n", ok,
		    failed, since(&t0), (double)ok / since(&t0));
		free(fds);
		return failed == 0 ? 0 : 1;
	}
	printf("open %ld failed %ld seconds %.3f\n", ok, failed, since(&t0));
	fflush(stdout);
	while (then != NULL && stat(then, &st) == -1)
		usleep(20000);
	gettimeofday(&t0, NULL);
	for (i = 0; i < opt_conns; i++) {
		if (fds[i] == -1)
			continue;
		if (!tunnel_alive(fds[i]))
			dead++;
		close(fds[i]);
	}
	printf("alive %ld dead %ld seconds %.3f\n", ok - dead, dead,
	    since(&t0));
	free(fds);
	return failed == 0 && dead == 0 ? 0 : 1;
}

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
do_slowloris(void)
{
	static const char head[] = "GET http://127.0.0.1/ HTTP/1.1\r\n"
	    "Host: 127.0.0.1\r\nX-Slow: ";
	struct pollfd	*pfd;
	struct timeval	 t0;
	double		*gone, now, next = 0;
	char		 buf[4096];
	ssize_t		 n;
	size_t		 sent = 0;
	long		 i, open_ = 0, dropped = 0;
	int		 fd;

	raise_nofile();
	pfd = calloc((size_t)opt_conns, sizeof(*pfd));
	gone = calloc((size_t)opt_conns, sizeof(*gone));
	if (pfd == NULL || gone == NULL)
		die("calloc");
	for (i = 0; i < opt_conns; i++) {
		if ((fd = dial()) == -1)
			die("connect");
		fcntl(fd, F_SETFL, O_NONBLOCK);
		pfd[i].fd = fd;
		pfd[i].events = POLLIN;
		open_++;
	}
	gettimeofday(&t0, NULL);
	while (open_ > 0 && (now = since(&t0)) < (double)opt_secs) {
		if (now >= next) {
			/* One more byte to every connection still open. */
			for (i = 0; i < opt_conns; i++)
				if (pfd[i].fd != -1)
					(void)send(pfd[i].fd, sent <
					    sizeof(head) - 1 ? &head[sent] :
					    "a", 1, MSG_NOSIGNAL);
			sent++;
			next += 1;
		}
		if (poll(pfd, (nfds_t)opt_conns, 50) <= 0)
			continue;
		for (i = 0; i < opt_conns; i++) {
			if (pfd[i].fd == -1 || pfd[i].revents == 0)
				continue;
			n = recv(pfd[i].fd, buf, sizeof(buf), 0);
			if (n > 0 || (n == -1 && errno == EAGAIN))
				continue;	/* an answer; the close follows */
			close(pfd[i].fd);
			pfd[i].fd = -1;
			gone[dropped++] = since(&t0);
			open_--;
		}
	}
	qsort(gone, (size_t)dropped, sizeof(*gone), cmp_double);
	printf("dropped %ld of %ld open %ld median %.2f max %.2f\n", dropped,
	    opt_conns, open_, dropped ? gone[(dropped - 1) / 2] : 0.0,
	    dropped ? gone[dropped - 1] : 0.0);
	for (i = 0; i < opt_conns; i++)
		if (pfd[i].fd != -1)
			close(pfd[i].fd);
	free(pfd);
	free(gone);
	return open_ == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	const char	*then = NULL;
	int		 i;

	if (argc < 3) {
		fprintf(stderr, "usage: netcheck serve|client|hold|reset|dump|echo|"
		    "tunnels|slowloris EP "
		    "[options]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	parse_ep(argv[2]);
	for (i = 3; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--reply") == 0)
			opt_reply = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--banner") == 0)
			opt_banner = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--reset-after") == 0)
			opt_reset = strtoll(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--send") == 0)
			opt_send = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--expect") == 0)
			opt_expect = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--conns") == 0)
			opt_conns = strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--parallel") == 0)
			opt_parallel = strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--raw") == 0)
			opt_raw = atoi(argv[i + 1]) != 0;
		else if (strcmp(argv[i], "--then") == 0)
			then = argv[i + 1];
		else if (strcmp(argv[i], "--target") == 0)
			opt_target = argv[i + 1];
		else if (strcmp(argv[i], "--mode") == 0)
			opt_mode = argv[i + 1];
		else if (strcmp(argv[i], "--secs") == 0)
			opt_secs = strtol(argv[i + 1], NULL, 10);
		else {
			fprintf(stderr, "netcheck: unknown option %s\n",
			    argv[i]);
			return 2;
		}
	}
	if (strcmp(argv[1], "serve") == 0)
		do_serve();
	if (strcmp(argv[1], "client") == 0)
		return do_client();
	if (strcmp(argv[1], "hold") == 0 && then != NULL)
		return do_hold(then);
	if (strcmp(argv[1], "reset") == 0)
		return do_reset();
	if (strcmp(argv[1], "dump") == 0 && then != NULL)
		return do_dump(then);
	if (strcmp(argv[1], "echo") == 0)
		do_echo();
	if (strcmp(argv[1], "tunnels") == 0)
		return do_tunnels(then);
	if (strcmp(argv[1], "slowloris") == 0)
		return do_slowloris();
	fprintf(stderr, "netcheck: bad mode %s\n", argv[1]);
	return 2;
}
