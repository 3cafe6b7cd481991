/*
 * probe.c: one escape attempt per run, for the escape tests.
 *
 *   probe KIND [ARGS...]
 *
 * Tries one way out of a sandbox and prints exactly one line on stdout:
 *
 *   escaped KIND: what happened		exit 0: the route worked
 *   held KIND: ERRNO (step) or a reason	exit 1: it did not
 *
 * A usage error goes to stderr with exit 2; `probe list` prints the kinds.
 * The probe does not know whether it is sandboxed: a test runs it outside
 * first, where the route must work (or the test proves nothing), then
 * inside, where it must be held.  "escaped" always means the thing was
 * done, not merely that a first system call passed: a datagram came back,
 * bytes were read or written, a descriptor was made.
 *
 * Peers for the network kinds come from sockpeer.c.  Test code: blocking
 * calls with short timeouts, no cleverness, one attempt and exit.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <linux/aio_abi.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <linux/vm_sockets.h>
#include <netinet/in.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))
#define WAIT_MS		2000	/* for a connection or an answer */

/* Not in every libc's headers. */
#ifndef AF_VSOCK
#define AF_VSOCK	40
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY	1
#endif
#ifndef KEYCTL_GET_KEYRING_ID
#define KEYCTL_GET_KEYRING_ID	0
#endif
#ifndef KEY_SPEC_USER_KEYRING
#define KEY_SPEC_USER_KEYRING	(-4)
#endif
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC	0x00000001
#endif

static const char	*kind;		/* argv[1], for every line printed */

static void	 held(const char *, ...)
		    __attribute__((noreturn, format(printf, 1, 2)));
static void	 escaped(const char *, ...)
		    __attribute__((noreturn, format(printf, 1, 2)));
static void	 held_errno(const char *) __attribute__((noreturn));
static void	 usage(void) __attribute__((noreturn));

static void
line(const char *verdict, const char *fmt, va_list ap)
{
	printf("%s %s: ", verdict, kind);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

static void
held(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	line("held", fmt, ap);
	va_end(ap);
	exit(1);
}

static void
escaped(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	line("escaped", fmt, ap);
	va_end(ap);
	exit(0);
}

/* "held KIND: EACCES (open)": the errno's name, then the step it ended. */
static void
held_errno(const char *step)
{
	const char	*name = strerrorname_np(errno);

	if (name == NULL)
		held("errno %d (%s)", errno, step);
	held("%s (%s)", name, step);
}

static void
usage(void)
{
	fprintf(stderr, "usage: probe KIND [ARGS...]; probe list\n");
	exit(2);
}

static long
number(const char *text)
{
	char	*end;
	long	 n;

	errno = 0;
	n = strtol(text, &end, 0);
	if (errno != 0 || end == text || *end != '\0') {
		fprintf(stderr, "probe: not a number: %s\n", text);
		exit(2);
	}
	return n;
}

/*
 * Network
 */

/* HOST (v4, v6, or [v6]) and PORT into *ss; exits 2 on a bad address. */
static socklen_t
inet_address(const char *host, const char *port, struct sockaddr_storage *ss)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;
	char			 h[INET6_ADDRSTRLEN + 2];

	memset(ss, 0, sizeof(*ss));
	snprintf(h, sizeof(h), "%s", host[0] == '[' ? host + 1 : host);
	h[strcspn(h, "]")] = '\0';
	if (inet_pton(AF_INET, h, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)number(port));
		return sizeof(*sin);
	}
	if (inet_pton(AF_INET6, h, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)number(port));
		return sizeof(*sin6);
	}
	fprintf(stderr, "probe: not an address: %s\n", host);
	exit(2);
}

/* Waits for events on fd; returns poll's answer, 0 on timeout. */
static int
wait_fd(int fd, short events)
{
	struct pollfd	 pfd = { .fd = fd, .events = events };
	int		 n;

	while ((n = poll(&pfd, 1, WAIT_MS)) == -1 && errno == EINTR)
		;
	return n;
}

static void
probe_tcp(char **argv)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = inet_address(argv[0], argv[1], &ss);
	socklen_t		 elen = sizeof(int);
	int			 fd, err = 0;

	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1)
		held_errno("socket");
	if (connect(fd, (struct sockaddr *)&ss, len) == -1) {
		if (errno != EINPROGRESS)
			held_errno("connect");
		if (wait_fd(fd, POLLOUT) == 0)
			held("no answer within %d ms", WAIT_MS);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == -1)
			held_errno("getsockopt");
		if (err != 0) {
			errno = err;
			held_errno("connect");
		}
	}
	escaped("connected to %s port %s", argv[0], argv[1]);
}

/* A datagram out and its echo back: sendto alone proves nothing. */
static void
probe_udp(char **argv)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = inet_address(argv[0], argv[1], &ss);
	char			 buf[64];
	ssize_t			 n;
	int			 fd;

	if ((fd = socket(ss.ss_family, SOCK_DGRAM, 0)) == -1)
		held_errno("socket");
	if (connect(fd, (struct sockaddr *)&ss, len) == -1)
		held_errno("connect");
	if (send(fd, "probe udp\n", 10, 0) == -1)
		held_errno("send");
	if (wait_fd(fd, POLLIN) == 0)
		held("sent, no answer within %d ms", WAIT_MS);
	if ((n = recv(fd, buf, sizeof(buf), 0)) == -1)
		held_errno("recv");
	escaped("answer of %zd bytes from %s port %s", n, argv[0], argv[1]);
}

/* PATH, or NAME in the abstract namespace when abstract is set. */
static socklen_t
unix_address(const char *name, int abstract, struct sockaddr_un *sun)
{
	size_t	 len = strlen(name);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (len + 1 > sizeof(sun->sun_path)) {
		fprintf(stderr, "probe: too long: %s\n", name);
		exit(2);
	}
	memcpy(sun->sun_path + (abstract ? 1 : 0), name, len);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
	    (abstract ? 1 : 0));
}

static void
probe_unix_stream(const char *name, int abstract)
{
	struct sockaddr_un	 sun;
	socklen_t		 len = unix_address(name, abstract, &sun);
	int			 fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		held_errno("socket");
	if (connect(fd, (struct sockaddr *)&sun, len) == -1)
		held_errno("connect");
	escaped("connected to %s%s", abstract ? "@" : "", name);
}

static void
probe_unix(char **argv)
{
	probe_unix_stream(argv[0], 0);
}

static void
probe_abstract(char **argv)
{
	probe_unix_stream(argv[0], 1);
}

/* A datagram that sendto queued is in the peer's buffer: delivered. */
static void
probe_unix_dgram(char **argv)
{
	struct sockaddr_un	 sun;
	socklen_t		 len = unix_address(argv[0], 0, &sun);
	int			 fd;

	if ((fd = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1)
		held_errno("socket");
	if (sendto(fd, "probe unix-dgram\n", 17, 0, (struct sockaddr *)&sun,
	    len) == -1)
		held_errno("sendto");
	escaped("datagram delivered to %s", argv[0]);
}

/*
 * sandbox-runtime's hole: a filter that denies socket(AF_UNIX) but lets
 * socketpair(AF_UNIX, SOCK_DGRAM) through hands out a datagram socket
 * that can still sendto any path it can see.
 */
static void
probe_unix_dgram_pair(char **argv)
{
	struct sockaddr_un	 sun;
	socklen_t		 len = unix_address(argv[0], 0, &sun);
	int			 sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == -1)
		held_errno("socketpair");
	if (sendto(sv[0], "probe unix-dgram-pair\n", 22, 0,
	    (struct sockaddr *)&sun, len) == -1)
		held_errno("sendto");
	escaped("datagram from a socketpair delivered to %s", argv[0]);
}

/*
 * TYPE for unix-pair and unix-sock: stream, dgram, raw or seqpacket, with
 * "+nonblock", "+cloexec" and "+high" (bit 32 set: the kernel reads an
 * int, a filter reads the whole register).
 */
static uint64_t
unix_type(const char *spec)
{
	static const struct {
		const char	*u_name;
		uint64_t	 u_bits;
	} words[] = {
		{ "stream", SOCK_STREAM }, { "dgram", SOCK_DGRAM },
		{ "raw", SOCK_RAW }, { "seqpacket", SOCK_SEQPACKET },
		{ "nonblock", SOCK_NONBLOCK }, { "cloexec", SOCK_CLOEXEC },
		{ "high", 1ULL << 32 },
	};
	char		*copy, *word, *rest;
	uint64_t	 type = 0;
	size_t		 i;

	if ((copy = strdup(spec)) == NULL)
		exit(2);
	for (rest = copy; (word = strsep(&rest, "+")) != NULL;) {
		for (i = 0; i < nitems(words); i++)
			if (strcmp(word, words[i].u_name) == 0)
				break;
		if (i == nitems(words)) {
			fprintf(stderr, "probe: unknown socket type %s\n",
			    word);
			exit(2);
		}
		type |= words[i].u_bits;
	}
	free(copy);
	return type;
}

/*
 * Sends a datagram from fd to PATH; escaped only if it left for PATH:
 * a connected pair's seqpacket end ignores the address and sends to its
 * own peer (other, -1 for none), which is checked.
 */
static void
unix_send_path(int fd, int other, const char *path, const char *what)
{
	struct sockaddr_un	 sun;
	socklen_t		 len = unix_address(path, 0, &sun);
	char			 buf[64];
	int			 so_type;
	socklen_t		 olen = sizeof(so_type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &so_type, &olen) == -1)
		held_errno("getsockopt");
	if (sendto(fd, "probe unix-type\n", 16, 0, (struct sockaddr *)&sun,
	    len) == -1)
		held_errno("sendto");
	if (other != -1 && recv(other, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		held("%s (SO_TYPE %d) sent to its own peer, not %s", what,
		    so_type, path);
	escaped("datagram from %s (SO_TYPE %d) delivered to %s", what,
	    so_type, path);
}

/*
 * unix-pair TYPE [PATH]: socketpair(AF_UNIX, TYPE), through syscall(2)
 * so that "+high" reaches the filter; then a datagram to PATH.  Without
 * PATH, escaped means the pair was made (a positive control).
 */
static void
probe_unix_pair(char **argv)
{
	uint64_t	 type = unix_type(argv[0]);
	int		 sv[2], so_type;
	socklen_t	 olen = sizeof(so_type);

	if (syscall(SYS_socketpair, (long)AF_UNIX, type, 0L, sv) == -1)
		held_errno("socketpair");
	if (argv[1] != NULL)
		unix_send_path(sv[0], sv[1], argv[1], "a socketpair");
	if (getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &so_type, &olen) == -1)
		held_errno("getsockopt");
	escaped("socketpair of type %s made (SO_TYPE %d)", argv[0], so_type);
}

/* unix-sock TYPE PATH: socket(AF_UNIX, TYPE), then a datagram to PATH. */
static void
probe_unix_sock(char **argv)
{
	uint64_t	 type = unix_type(argv[0]);
	long		 fd;

	if ((fd = syscall(SYS_socket, (long)AF_UNIX, type, 0L)) == -1)
		held_errno("socket");
	unix_send_path((int)fd, -1, argv[1], "a socket");
}

struct family {
	const char	*f_name;
	int		 f_domain, f_type, f_proto;
};

/* Names for `socket`; TYPE and PROTO on the command line override. */
static const struct family families[] = {
	{ "unix", AF_UNIX, SOCK_STREAM, 0 },
	{ "inet", AF_INET, SOCK_STREAM, 0 },
	{ "inet6", AF_INET6, SOCK_STREAM, 0 },
	{ "raw", AF_INET, SOCK_RAW, IPPROTO_ICMP },
	{ "raw6", AF_INET6, SOCK_RAW, IPPROTO_ICMPV6 },
	{ "icmp", AF_INET, SOCK_DGRAM, IPPROTO_ICMP },
	{ "icmp6", AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6 },
	{ "packet", AF_PACKET, SOCK_RAW, 0 },
	{ "vsock", AF_VSOCK, SOCK_STREAM, 0 },
	{ "bluetooth", AF_BLUETOOTH, SOCK_RAW, 1 },	/* BTPROTO_HCI */
	{ "can", AF_CAN, SOCK_RAW, 1 },			/* CAN_RAW */
	{ "alg", AF_ALG, SOCK_SEQPACKET, 0 },
	{ "key", AF_KEY, SOCK_RAW, 2 },			/* PF_KEY_V2 */
	{ "tipc", AF_TIPC, SOCK_RDM, 0 },
	{ "rds", AF_RDS, SOCK_SEQPACKET, 0 },
	{ "xdp", AF_XDP, SOCK_RAW, 0 },
	{ "appletalk", AF_APPLETALK, SOCK_DGRAM, 0 },
	{ "x25", AF_X25, SOCK_SEQPACKET, 0 },
	{ "llc", AF_LLC, SOCK_DGRAM, 0 },
	{ "netlink-route", AF_NETLINK, SOCK_RAW, NETLINK_ROUTE },
	{ "netlink-sock_diag", AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG },
	{ "netlink-audit", AF_NETLINK, SOCK_RAW, NETLINK_AUDIT },
	{ "netlink-xfrm", AF_NETLINK, SOCK_RAW, NETLINK_XFRM },
	{ "netlink-netfilter", AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER },
	{ "netlink-kobject_uevent", AF_NETLINK, SOCK_RAW,
	    NETLINK_KOBJECT_UEVENT },
	{ "netlink-generic", AF_NETLINK, SOCK_RAW, NETLINK_GENERIC },
	{ "netlink-connector", AF_NETLINK, SOCK_RAW, NETLINK_CONNECTOR },
	{ "netlink-crypto", AF_NETLINK, SOCK_RAW, NETLINK_CRYPTO },
};

static const struct {
	const char	*t_name;
	int		 t_type;
} socket_types[] = {
	{ "stream", SOCK_STREAM }, { "dgram", SOCK_DGRAM },
	{ "raw", SOCK_RAW }, { "seqpacket", SOCK_SEQPACKET },
	{ "rdm", SOCK_RDM }, { "packet", SOCK_PACKET },
};

/* socket FAMILY [TYPE [PROTO]]: FAMILY a name above or a number. */
static void
probe_socket(char **argv)
{
	struct family	 f = { argv[0], -1, SOCK_STREAM, 0 };
	size_t		 i;
	int		 fd;

	for (i = 0; i < nitems(families); i++)
		if (strcmp(argv[0], families[i].f_name) == 0)
			f = families[i];
	if (f.f_domain == -1)
		f.f_domain = (int)number(argv[0]);
	if (argv[1] != NULL) {
		f.f_type = -1;
		for (i = 0; i < nitems(socket_types); i++)
			if (strcmp(argv[1], socket_types[i].t_name) == 0)
				f.f_type = socket_types[i].t_type;
		if (f.f_type == -1)
			f.f_type = (int)number(argv[1]);
		if (argv[2] != NULL)
			f.f_proto = (int)number(argv[2]);
	}
	if ((fd = socket(f.f_domain, f.f_type, f.f_proto)) == -1)
		held_errno("socket");
	escaped("socket(%d, %d, %d) is fd %d", f.f_domain, f.f_type,
	    f.f_proto, fd);
}

/*
 * The proxy, as a client meets it
 */

/* Connects to HOST PORT (a blocking socket with timeouts), or exits held. */
static int
tcp_connect(const char *host, const char *port)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = inet_address(host, port, &ss);
	struct timeval		 tv = { WAIT_MS / 1000, 0 };
	int			 fd;

	if ((fd = socket(ss.ss_family, SOCK_STREAM, 0)) == -1)
		held_errno("socket");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&ss, len) == -1)
		held_errno("connect");
	return fd;
}

/* Reads exactly len bytes, or exits held. */
static void
read_full(int fd, void *buf, size_t len, const char *step)
{
	size_t	 off = 0;
	ssize_t	 n;

	while (off < len) {
		if ((n = read(fd, (char *)buf + off, len - off)) == -1) {
			if (errno == EAGAIN)
				held("no answer within %d ms (%s)", WAIT_MS,
				    step);
			held_errno(step);
		}
		if (n == 0)
			held("closed after %zu bytes (%s)", off, step);
		off += (size_t)n;
	}
}

/*
 * http-raw HOST PORT FILE: sends FILE's bytes as they are (a request in
 * any shape, to a proxy or straight to an origin) and reads the status
 * line: escaped on a 2xx answer (the request went through, or a tunnel
 * was opened), held with the status line on any other.
 */
static void
probe_http_raw(char **argv)
{
	char	 req[65536], line[256];
	size_t	 off = 0;
	ssize_t	 n;
	int	 fd, in;

	if ((in = open(argv[2], O_RDONLY)) == -1) {
		fprintf(stderr, "probe: %s: %s\n", argv[2], strerror(errno));
		exit(2);
	}
	if ((n = read(in, req, sizeof(req))) <= 0) {
		fprintf(stderr, "probe: %s: nothing to send\n", argv[2]);
		exit(2);
	}
	close(in);
	fd = tcp_connect(argv[0], argv[1]);
	if (write(fd, req, (size_t)n) != n)
		held_errno("write");
	while (off < sizeof(line) - 1) {
		if ((n = read(fd, line + off, 1)) == -1) {
			if (errno == EAGAIN)
				held("no answer within %d ms", WAIT_MS);
			held_errno("read");
		}
		if (n == 0 || line[off] == '\n')
			break;
		off++;
	}
	line[off] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (off == 0)
		held("closed without an answer");
	if (strncmp(line, "HTTP/1.", 7) == 0 && line[8] == ' ' &&
	    line[9] == '2')
		escaped("%s", line);
	held("%s", line);
}

/*
 * socks5 HOST PORT TARGET TPORT: a SOCKS5 CONNECT to TARGET (an IPv4 or
 * IPv6 literal, else a name) through the proxy at HOST PORT: escaped when
 * the reply is 0 (succeeded), held with the reply code otherwise.
 */
static void
probe_socks5(char **argv)
{
	unsigned char	 buf[300], *p = buf;
	struct in_addr	 a4;
	struct in6_addr	 a6;
	size_t		 len;
	uint16_t	 port = htons((uint16_t)number(argv[3]));
	int		 fd = tcp_connect(argv[0], argv[1]);

	if (write(fd, "\x05\x01\x00", 3) != 3)
		held_errno("write greeting");
	read_full(fd, buf, 2, "read method");
	if (buf[0] != 5 || buf[1] != 0)
		held("method %u refused", buf[1]);
	*p++ = 5;
	*p++ = 1;	/* CONNECT */
	*p++ = 0;
	if (inet_pton(AF_INET, argv[2], &a4) == 1) {
		*p++ = 1;
		memcpy(p, &a4, 4);
		p += 4;
	} else if (inet_pton(AF_INET6, argv[2], &a6) == 1) {
		*p++ = 4;
		memcpy(p, &a6, 16);
		p += 16;
	} else {
		if ((len = strlen(argv[2])) > 255) {
			fprintf(stderr, "probe: too long: %s\n", argv[2]);
			exit(2);
		}
		*p++ = 3;
		*p++ = (unsigned char)len;
		memcpy(p, argv[2], len);
		p += len;
	}
	memcpy(p, &port, 2);
	p += 2;
	if (write(fd, buf, (size_t)(p - buf)) != p - buf)
		held_errno("write request");
	read_full(fd, buf, 2, "read reply");
	if (buf[1] != 0)
		held("SOCKS5 reply %u", buf[1]);
	escaped("SOCKS5 reply 0: connected to %s port %s", argv[2], argv[3]);
}

/*
 * dns HOST PORT udp|tcp NAME: an A query for NAME; escaped when an
 * answer with our id comes back (any rcode: a resolver was reached).
 */
static void
probe_dns(char **argv)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = inet_address(argv[0], argv[1], &ss);
	unsigned char		 q[300], a[512];
	const char		*s = argv[3], *dot;
	size_t			 n = 2, l;
	ssize_t			 r;
	int			 tcp = strcmp(argv[2], "tcp") == 0, fd;

	/* Two bytes of length first (TCP), then the header: id 0xc0d0, RD. */
	memcpy(q + n, "\xc0\xd0\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12);
	n += 12;
	while (*s != '\0') {
		dot = strchr(s, '.');
		l = dot != NULL ? (size_t)(dot - s) : strlen(s);
		if (l == 0 || l > 63 || n + l + 7 > sizeof(q)) {
			fprintf(stderr, "probe: bad name: %s\n", argv[3]);
			exit(2);
		}
		q[n++] = (unsigned char)l;
		memcpy(q + n, s, l);
		n += l;
		s += l + (dot != NULL);
	}
	memcpy(q + n, "\x00\x00\x01\x00\x01", 5);	/* root, A, IN */
	n += 5;
	q[0] = (unsigned char)((n - 2) >> 8);
	q[1] = (unsigned char)(n - 2);

	if ((fd = socket(ss.ss_family, (tcp ? SOCK_STREAM : SOCK_DGRAM) |
	    SOCK_NONBLOCK, 0)) == -1)
		held_errno("socket");
	if (connect(fd, (struct sockaddr *)&ss, len) == -1) {
		if (errno != EINPROGRESS)
			held_errno("connect");
		if (wait_fd(fd, POLLOUT) == 0)
			held("no answer within %d ms (connect)", WAIT_MS);
	}
	if ((r = send(fd, tcp ? q : q + 2, tcp ? n : n - 2, 0)) == -1)
		held_errno("send");
	if (wait_fd(fd, POLLIN) == 0)
		held("sent, no answer within %d ms", WAIT_MS);
	if ((r = recv(fd, a, sizeof(a), 0)) == -1)
		held_errno("recv");
	if (tcp && r >= 2)
		memmove(a, a + 2, (size_t)(r -= 2));
	if (r < 12 || a[0] != 0xc0 || a[1] != 0xd0 || (a[2] & 0x80) == 0)
		held("no DNS answer (%zd bytes)", r);
	escaped("DNS answer over %s, rcode %d, %d answer(s)", argv[2],
	    a[3] & 0xf, a[6] << 8 | a[7]);
}

/*
 * Files
 */

static void
write_fd(int fd, const char *step)
{
	static const char	 text[] = "cordon probe\n";

	if (write(fd, text, sizeof(text) - 1) != (ssize_t)sizeof(text) - 1)
		held_errno(step);
}

/*
 * write PATH [TEXT]: creates or appends to PATH, following symlinks as
 * any tool would; TEXT (with \n and \t) instead of the probe's line.
 */
static void
probe_write(char **argv)
{
	char	 text[1024];
	size_t	 n = 0;
	int	 fd;

	if ((fd = open(argv[0], O_WRONLY | O_CREAT | O_APPEND, 0644)) == -1)
		held_errno("open");
	if (argv[1] == NULL)
		write_fd(fd, "write");
	else {
		for (const char *s = argv[1]; *s != '\0' &&
		    n < sizeof(text); s++) {
			if (s[0] == '\\' && (s[1] == 'n' || s[1] == 't')) {
				text[n++] = s[1] == 'n' ? '\n' : '\t';
				s++;
			} else
				text[n++] = *s;
		}
		if (write(fd, text, n) != (ssize_t)n)
			held_errno("write");
	}
	escaped("wrote %s", argv[0]);
}

/* Reads PATH: escaped only when a byte came (a hidden file may be empty). */
static void
probe_read(char **argv)
{
	char	 buf[4096];
	ssize_t	 n;
	int	 fd;

	if ((fd = open(argv[0], O_RDONLY)) == -1)
		held_errno("open");
	if ((n = read(fd, buf, sizeof(buf))) == -1)
		held_errno("read");
	if (n == 0)
		held("empty (0 bytes read)");
	escaped("read %zd bytes of %s", n, argv[0]);
}

/* Reads DIR: escaped only when it has an entry (hidden may mean empty). */
static void
probe_readdir(char **argv)
{
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	if ((d = opendir(argv[0])) == NULL)
		held_errno("opendir");
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	if (n == 0)
		held("empty directory");
	escaped("%d entries in %s", n, argv[0]);
}

static void
probe_mkdir(char **argv)
{
	if (mkdir(argv[0], 0755) == -1)
		held_errno("mkdir");
	escaped("made %s", argv[0]);
}

static void
probe_unlink(char **argv)
{
	if (unlink(argv[0]) == -1)
		held_errno("unlink");
	escaped("removed %s", argv[0]);
}

static void
probe_rename(char **argv)
{
	if (rename(argv[0], argv[1]) == -1)
		held_errno("rename");
	escaped("renamed %s to %s", argv[0], argv[1]);
}

static void
probe_chmod(char **argv)
{
	if (chmod(argv[0], (mode_t)number(argv[1])) == -1)
		held_errno("chmod");
	escaped("changed the mode of %s", argv[0]);
}

/* symlink TARGET LINK, then a write through LINK (an old link is reused). */
static void
probe_symlink(char **argv)
{
	struct stat	 st;
	int		 fd;

	if (symlink(argv[0], argv[1]) == -1 && (errno != EEXIST ||
	    lstat(argv[1], &st) == -1 || !S_ISLNK(st.st_mode)))
		held_errno("symlink");
	if ((fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644)) == -1)
		held_errno("open through the link");
	write_fd(fd, "write through the link");
	escaped("wrote %s through %s", argv[0], argv[1]);
}

/* hardlink TARGET LINK, then a write through LINK. */
static void
probe_hardlink(char **argv)
{
	int	 fd;

	if (link(argv[0], argv[1]) == -1)
		held_errno("link");
	if ((fd = open(argv[1], O_WRONLY | O_APPEND)) == -1)
		held_errno("open the link");
	write_fd(fd, "write through the link");
	escaped("wrote %s through the hard link %s", argv[0], argv[1]);
}

/*
 * Processes
 */

static int	 marker = 0x70726f62;	/* what vmread reads in its child */
static pid_t	 child = -1;

/*
 * At exit: the target child goes with us.  It must not outlive the probe:
 * it would hold the caller's stdout open (a test waiting for end of file
 * would wait for ever).
 */
static void
child_kill(void)
{
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, __WALL);
	}
}

/* PID, or "child": a child of ours that waits to be a target. */
static pid_t
target(const char *arg)
{
	pid_t	 parent = getpid();

	if (strcmp(arg, "child") != 0)
		return (pid_t)number(arg);
	if ((child = fork()) == -1)
		held_errno("fork");
	if (child == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
		    getppid() != parent)
			_exit(0);
		for (;;)
			pause();
	}
	atexit(child_kill);
	return child;
}

static void
probe_ptrace(char **argv)
{
	pid_t	 pid = target(argv[0]);

	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) == -1)
		held_errno("ptrace");
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	escaped("attached to pid %ld", (long)pid);
}

/* process_vm_readv: our own child's marker, or a word at PID's first map. */
static void
probe_vmread(char **argv)
{
	struct iovec	 local, remote;
	unsigned long	 addr = (unsigned long)&marker;
	char		 path[64];
	int		 word = 0;
	pid_t		 pid = target(argv[0]);
	FILE		*f;

	if (strcmp(argv[0], "child") != 0) {
		snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
		if ((f = fopen(path, "r")) == NULL)
			held_errno("open maps");
		if (fscanf(f, "%lx", &addr) != 1)
			held("no mapping in %s", path);
		fclose(f);
	}
	local.iov_base = &word;
	local.iov_len = sizeof(word);
	remote.iov_base = (void *)addr;
	remote.iov_len = sizeof(word);
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == -1)
		held_errno("process_vm_readv");
	escaped("read %zu bytes of pid %ld", sizeof(word), (long)pid);
}

static const struct {
	const char	*s_name;
	int		 s_sig;
} signals[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "KILL", SIGKILL },
	{ "TERM", SIGTERM }, { "STOP", SIGSTOP }, { "CONT", SIGCONT },
	{ "USR1", SIGUSR1 },
};

/* kill PID SIG: SIG a number or a name without SIG; 0 only checks. */
static void
probe_kill(char **argv)
{
	const char	*name = argv[1];
	size_t		 i;
	int		 sig = -1;

	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	for (i = 0; i < nitems(signals); i++)
		if (strcmp(name, signals[i].s_name) == 0)
			sig = signals[i].s_sig;
	if (sig == -1)
		sig = (int)number(name);
	if (kill((pid_t)number(argv[0]), sig) == -1)
		held_errno("kill");
	escaped("signal %d sent to pid %s", sig, argv[0]);
}

static void
probe_fd(char **argv)
{
	char	 path[64], to[PATH_MAX];
	ssize_t	 n;
	int	 fd = (int)number(argv[0]);

	if (fcntl(fd, F_GETFD) == -1)
		held_errno("fcntl");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if ((n = readlink(path, to, sizeof(to) - 1)) == -1)
		n = 0;
	to[n] = '\0';
	escaped("fd %d is open (%s)", fd, n > 0 ? to : "?");
}

/* Says that NAME is set and how long, never the value (it may be secret). */
static void
probe_env(char **argv)
{
	const char	*v;

	if ((v = getenv(argv[0])) == NULL)
		held("not set");
	escaped("%s is set (%zu bytes)", argv[0], strlen(v));
}

/*
 * Kernel attack surface
 */

static void
probe_io_uring(char **argv)
{
	unsigned char	 params[120];	/* struct io_uring_params */
	long		 fd;

	(void)argv;
	memset(params, 0, sizeof(params));
	if ((fd = syscall(SYS_io_uring_setup, 1, params)) == -1)
		held_errno("io_uring_setup");
	escaped("io_uring fd %ld", fd);
}

/*
 * Linux AIO: a context, then one write queued on it (to /dev/null), as a
 * command would queue writes that land after it ended.
 */
static void
probe_aio(char **argv)
{
	aio_context_t	 ctx = 0;
	struct iocb	 cb, *cbs[1] = { &cb };
	int		 fd;

	(void)argv;
	if (syscall(SYS_io_setup, 1, &ctx) == -1)
		held_errno("io_setup");
	if ((fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		held_errno("open /dev/null");
	memset(&cb, 0, sizeof(cb));
	cb.aio_lio_opcode = IOCB_CMD_PWRITE;
	cb.aio_fildes = (uint32_t)fd;
	cb.aio_buf = (uint64_t)(uintptr_t)"x";
	cb.aio_nbytes = 1;
	if (syscall(SYS_io_submit, ctx, 1, cbs) != 1)
		held_errno("io_submit");
	escaped("a write queued on AIO context %#lx", (unsigned long)ctx);
}

/* Loads "return 0" as a socket filter: the least a program can be. */
static void
probe_bpf(char **argv)
{
	struct bpf_insn	 insns[2];
	union bpf_attr	 attr;
	long		 fd;

	(void)argv;
	memset(insns, 0, sizeof(insns));
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;	/* r0 = 0 */
	insns[1].code = BPF_JMP | BPF_EXIT;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = nitems(insns);
	attr.license = (uint64_t)(uintptr_t)"GPL";
	if ((fd = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr))) == -1)
		held_errno("bpf");
	escaped("loaded a program, fd %ld", fd);
}

/* The user's keyring holds the host's secrets, if anything does. */
static void
probe_keyctl(char **argv)
{
	long	 id;

	(void)argv;
	if ((id = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID,
	    KEY_SPEC_USER_KEYRING, 0)) == -1)
		held_errno("keyctl");
	escaped("user keyring %ld", id);
}

static void
probe_userfaultfd(char **argv)
{
	long	 fd;

	(void)argv;
	/* User-mode only is what an unprivileged process may ask for. */
	if ((fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY)) ==
	    -1 && errno == EINVAL)
		fd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (fd == -1)
		held_errno("userfaultfd");
	escaped("userfaultfd %ld", fd);
}

static void
probe_unshare(int flags)
{
	if (unshare(flags) == -1)
		held_errno("unshare");
	escaped("in a new namespace");
}

static void
probe_unshare_user(char **argv)
{
	(void)argv;
	probe_unshare(CLONE_NEWUSER);
}

static void
probe_unshare_net(char **argv)
{
	(void)argv;
	probe_unshare(CLONE_NEWNET);
}

/* clone(2) itself, which a filter must check apart from unshare. */
static void
probe_clone_user(char **argv)
{
	long	 pid;
	int	 status;

	(void)argv;
	if ((pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)) ==
	    -1)
		held_errno("clone");
	if (pid == 0)
		_exit(0);
	waitpid((pid_t)pid, &status, 0);
	escaped("child %ld in a new user namespace", pid);
}

/* clone3: flags in memory, so a filter can only refuse it whole. */
static void
probe_clone3_user(char **argv)
{
	uint64_t	 args[11];	/* struct clone_args, version 2 */
	long		 pid;
	int		 status;

	(void)argv;
	memset(args, 0, sizeof(args));
	args[0] = CLONE_NEWUSER;	/* flags */
	args[4] = SIGCHLD;		/* exit_signal */
	if ((pid = syscall(SYS_clone3, args, sizeof(args))) == -1)
		held_errno("clone3");
	if (pid == 0)
		_exit(0);
	waitpid((pid_t)pid, &status, 0);
	escaped("child %ld in a new user namespace", pid);
}

static void
probe_setns(char **argv)
{
	int	 fd;

	if ((fd = open(argv[0], O_RDONLY)) == -1)
		held_errno("open");
	if (setns(fd, 0) == -1)
		held_errno("setns");
	escaped("joined %s", argv[0]);
}

/* Mounts a tmpfs on PATH and takes it away again at once. */
static void
probe_mount_tmpfs(char **argv)
{
	if (mount("cordon-probe", argv[0], "tmpfs", 0, "size=64k") == -1)
		held_errno("mount");
	umount2(argv[0], MNT_DETACH);
	escaped("mounted a tmpfs on %s (and unmounted it)", argv[0]);
}

/* The new mount API, which a filter must refuse beside mount(2). */
static void
probe_fsopen(char **argv)
{
	long	 fd;

	(void)argv;
	if ((fd = syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC)) == -1)
		held_errno("fsopen");
	escaped("fs context fd %ld", fd);
}

/* The terminal: fd 0 if it is one, else the controlling one. */
static int
tty_fd(void)
{
	int	 fd;

	if (isatty(0))
		return 0;
	if ((fd = open("/dev/tty", O_RDWR | O_NOCTTY)) == -1)
		held_errno("no terminal: open /dev/tty");
	return fd;
}

/*
 * Pushes a space into the terminal's input (CVE-2017-5226), then flushes
 * the input again so nothing reaches whoever reads the terminal next.
 * With high set, the command has bits above 32 that the kernel ignores
 * but a careless filter compares (CVE-2019-10063, flatpak).
 */
static void
probe_tiocsti_cmd(int high)
{
	unsigned long	 cmd = TIOCSTI;
	char		 c = ' ';
	int		 fd = tty_fd();

	/* As a background job, the flush would stop us (or spin): ignore. */
	signal(SIGTTOU, SIG_IGN);
	if (high)
		cmd |= (unsigned long)1 << 32;
	if (syscall(SYS_ioctl, fd, cmd, &c) == -1)
		held_errno("ioctl");
	tcflush(fd, TCIFLUSH);
	escaped("pushed a byte into the terminal's input");
}

static void
probe_tiocsti(char **argv)
{
	(void)argv;
	probe_tiocsti_cmd(0);
}

static void
probe_tiocsti_high(char **argv)
{
	(void)argv;
	probe_tiocsti_cmd(1);
}

/*
 * sysctl-rewrite PATH: writes a /proc/sys knob's own value back, so the
 * outside control changes nothing; escaped when the write was taken.
 */
static void
probe_sysctl_rewrite(char **argv)
{
	char	 buf[4096];
	ssize_t	 n;
	int	 fd;

	if ((fd = open(argv[0], O_RDONLY)) == -1)
		held_errno("open to read");
	if ((n = read(fd, buf, sizeof(buf))) <= 0)
		held("nothing to write back (read %zd)", n);
	close(fd);
	if ((fd = open(argv[0], O_WRONLY)) == -1)
		held_errno("open to write");
	if (write(fd, buf, (size_t)n) != n)
		held_errno("write");
	escaped("wrote %s back into %s", n > 1 ? "its value" : "a byte",
	    argv[0]);
}

/* procmem PID|child: a word at the first mapping, through /proc/PID/mem. */
static void
probe_procmem(char **argv)
{
	unsigned long	 addr;
	char		 path[64];
	int		 word, fd;
	pid_t		 pid = target(argv[0]);
	FILE		*f;

	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		held_errno("open maps");
	if (fscanf(f, "%lx", &addr) != 1)
		held("no mapping readable in %s", path);
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%ld/mem", (long)pid);
	if ((fd = open(path, O_RDONLY)) == -1)
		held_errno("open mem");
	if (pread(fd, &word, sizeof(word), (off_t)addr) != sizeof(word))
		held_errno("pread mem");
	escaped("read %zu bytes of %s", sizeof(word), path);
}

/*
 * no-new-privs: escaped when the flag is off (setuid programs can raise
 * privileges), or when clearing it worked (the kernel has never allowed
 * it; a held line says so with the errno).
 */
static void
probe_no_new_privs(char **argv)
{
	(void)argv;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0)
		escaped("no_new_privs is off");
	if (prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0) == -1)
		held_errno("prctl PR_SET_NO_NEW_PRIVS 0");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0)
		escaped("no_new_privs cleared");
	held("no_new_privs still set");
}

/*
 * seccomp-stack PID|child: a filter cannot be taken away (there is no
 * mode to turn seccomp off), only another stacked on it; stack one that
 * allows everything, then ptrace.  Escaped when the attach worked.
 */
static void
probe_seccomp_stack(char **argv)
{
	struct sock_filter	 allow[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
	};
	struct sock_fprog	 prog = { nitems(allow), allow };
	pid_t			 pid = target(argv[0]);

	/* Mode 0 (disabled) is not a mode one can ask for. */
	if (prctl(PR_SET_SECCOMP, 0, 0, 0, 0) == 0)
		escaped("PR_SET_SECCOMP 0 was taken");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		held_errno("prctl PR_SET_NO_NEW_PRIVS 1");
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == -1)
		held_errno("prctl PR_SET_SECCOMP");
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) == -1)
		held_errno("ptrace under the stacked filter");
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	escaped("attached to pid %ld under a stacked allow-all filter",
	    (long)pid);
}

/*
 * TIOCLINUX (CVE-2023-28100: selection and paste into a virtual
 * console).  The subcode asked is the harmless shift state: a terminal
 * that answers it would answer the paste.  A pty answers ENOTTY.
 */
static void
probe_tioclinux_cmd(int high)
{
	unsigned long	 cmd = TIOCLINUX;
	char		 sub = 6;	/* TIOCL_GETSHIFTSTATE */
	int		 fd = tty_fd();

	if (high)
		cmd |= (unsigned long)1 << 32;
	if (syscall(SYS_ioctl, fd, cmd, &sub) == -1)
		held_errno("ioctl");
	escaped("TIOCLINUX answered (shift state %d)", sub);
}

static void
probe_tioclinux(char **argv)
{
	(void)argv;
	probe_tioclinux_cmd(0);
}

static void
probe_tioclinux_high(char **argv)
{
	(void)argv;
	probe_tioclinux_cmd(1);
}

/*
 * pivot-root DIR: DIR bound on itself (a mount point; the bind may fail
 * inside, which is no answer yet), then pivot_root(".", ".") in it, the
 * shape runc uses.  Run it outside only in a mount namespace of its own
 * (unshare -m).
 */
static void
probe_pivot_root(char **argv)
{
	(void)mount(argv[0], argv[0], NULL, MS_BIND, NULL);
	if (chdir(argv[0]) == -1)
		held_errno("chdir");
	if (syscall(SYS_pivot_root, ".", ".") == -1)
		held_errno("pivot_root");
	escaped("pivot_root(\".\", \".\") in %s", argv[0]);
}

static void
probe_chroot(char **argv)
{
	if (chroot(argv[0]) == -1)
		held_errno("chroot");
	escaped("chrooted to %s", argv[0]);
}

/*
 * open-by-handle PATH: a handle for PATH, then the file opened by handle
 * alone, which skips every path check (the "shocker" escape from Docker,
 * 2014); escaped when a byte was read.
 */
static void
probe_open_by_handle(char **argv)
{
	union {
		struct file_handle	fh;
		char			buf[sizeof(struct file_handle) +
					    MAX_HANDLE_SZ];
	}		 h;
	char		 c;
	int		 mount_id, mfd, fd;

	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, argv[0], &h.fh, &mount_id, 0) == -1)
		held_errno("name_to_handle_at");
	/* Any descriptor on the same filesystem names it. */
	if ((mfd = open(argv[0], O_RDONLY)) == -1)
		held_errno("open");
	if ((fd = open_by_handle_at(mfd, &h.fh, O_RDONLY)) == -1)
		held_errno("open_by_handle_at");
	if (read(fd, &c, 1) != 1)
		held_errno("read");
	escaped("opened %s by its handle", argv[0]);
}

/* NSpid's count of numbers: how deep in PID namespaces PID is. */
static int
pid_depth(const char *pid)
{
	char	 path[64], buf[256];
	int	 n = 0;
	char	*p;
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(buf, sizeof(buf), f) != NULL)
		if (strncmp(buf, "NSpid:", 6) == 0)
			for (p = strtok(buf + 6, " \t\n"); p != NULL;
			    p = strtok(NULL, " \t\n"))
				n++;
	fclose(f);
	return n;
}

/*
 * kill-all SIG: SIG to every process /proc lists but ourselves (never
 * run it outside).  Escaped when a process of an outer PID namespace
 * (fewer NSpid numbers than ours) took it; held otherwise, with counts.
 */
static void
probe_kill_all(char **argv)
{
	struct dirent	*de;
	DIR		*d;
	char		 self[32];
	int		 sig = (int)number(argv[0]), depth, outer;
	int		 seen = 0, sent = 0;

	snprintf(self, sizeof(self), "%ld", (long)getpid());
	if ((depth = pid_depth(self)) <= 0)
		held("no NSpid in /proc/self/status");
	if ((d = opendir("/proc")) == NULL)
		held_errno("opendir /proc");
	while ((de = readdir(d)) != NULL) {
		if (strspn(de->d_name, "0123456789") != strlen(de->d_name) ||
		    strcmp(de->d_name, self) == 0)
			continue;
		seen++;
		/* Before the signal: a killed process leaves no status. */
		outer = pid_depth(de->d_name);
		if (kill((pid_t)number(de->d_name), sig) == -1)
			continue;
		sent++;
		if (outer != -1 && outer < depth)
			escaped("signal %d reached pid %s of an outer PID "
			    "namespace", sig, de->d_name);
	}
	held("%d of %d other pids took signal %d, all in this PID namespace",
	    sent, seen, sig);
}

#if defined(__x86_64__)
static void
segv_cb(int sig)
{
	static const char	 msg[] = "held i386: SIGSEGV (int 0x80)\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) == -1)
		_exit(2);
	_exit(1);
}

/* getpid through the i386 entry point (int 0x80: eax 20 is getpid). */
static void
probe_i386(char **argv)
{
	long	 ret;

	(void)argv;
	signal(SIGSEGV, segv_cb);
	__asm__ volatile ("int $0x80" : "=a" (ret) : "a" (20L)
	    : "rcx", "r8", "r9", "r10", "r11", "memory");
	if (ret < 0) {
		errno = (int)-ret;
		held_errno("int 0x80");
	}
	escaped("getpid through int 0x80 gave %ld", ret);
}

/* getpid with the x32 bit set (0x40000000). */
static void
probe_x32(char **argv)
{
	long	 ret;

	(void)argv;
	if ((ret = syscall(0x40000000L | SYS_getpid)) == -1)
		held_errno("x32 getpid");
	escaped("x32 getpid gave %ld", ret);
}
#else
static void
probe_i386(char **argv)
{
	(void)argv;
	held("no i386 entry point on this architecture");
}

static void
probe_x32(char **argv)
{
	(void)argv;
	held("no x32 ABI on this architecture");
}
#endif

struct probe {
	const char	*p_kind;
	int		 p_min, p_max;	/* arguments */
	void		(*p_fn)(char **);
	const char	*p_args;
};

static const struct probe probes[] = {
	{ "tcp", 2, 2, probe_tcp, "HOST PORT" },
	{ "udp", 2, 2, probe_udp, "HOST PORT (expects an echo)" },
	{ "unix", 1, 1, probe_unix, "PATH (stream)" },
	{ "unix-dgram", 1, 1, probe_unix_dgram, "PATH" },
	{ "unix-dgram-pair", 1, 1, probe_unix_dgram_pair, "PATH" },
	{ "unix-pair", 1, 2, probe_unix_pair, "TYPE[+FLAG...] [PATH]" },
	{ "unix-sock", 2, 2, probe_unix_sock, "TYPE[+FLAG...] PATH" },
	{ "abstract", 1, 1, probe_abstract, "NAME (stream)" },
	{ "socket", 1, 3, probe_socket, "FAMILY [TYPE [PROTO]]" },
	{ "http-raw", 3, 3, probe_http_raw, "HOST PORT FILE (2xx escapes)" },
	{ "socks5", 4, 4, probe_socks5, "HOST PORT TARGET TPORT" },
	{ "dns", 4, 4, probe_dns, "HOST PORT udp|tcp NAME" },
	{ "write", 1, 2, probe_write, "PATH [TEXT]" },
	{ "read", 1, 1, probe_read, "PATH" },
	{ "readdir", 1, 1, probe_readdir, "DIR" },
	{ "mkdir", 1, 1, probe_mkdir, "PATH" },
	{ "unlink", 1, 1, probe_unlink, "PATH" },
	{ "rename", 2, 2, probe_rename, "FROM TO" },
	{ "chmod", 2, 2, probe_chmod, "PATH MODE" },
	{ "symlink", 2, 2, probe_symlink, "TARGET LINK (then writes)" },
	{ "hardlink", 2, 2, probe_hardlink, "TARGET LINK (then writes)" },
	{ "ptrace", 1, 1, probe_ptrace, "PID|child" },
	{ "vmread", 1, 1, probe_vmread, "PID|child" },
	{ "kill", 2, 2, probe_kill, "PID SIG" },
	{ "fd", 1, 1, probe_fd, "N" },
	{ "env", 1, 1, probe_env, "NAME" },
	{ "io_uring", 0, 0, probe_io_uring, "" },
	{ "aio", 0, 0, probe_aio, "" },
	{ "bpf", 0, 0, probe_bpf, "" },
	{ "keyctl", 0, 0, probe_keyctl, "" },
	{ "userfaultfd", 0, 0, probe_userfaultfd, "" },
	{ "unshare-user", 0, 0, probe_unshare_user, "" },
	{ "unshare-net", 0, 0, probe_unshare_net, "" },
	{ "clone-user", 0, 0, probe_clone_user, "" },
	{ "clone3-user", 0, 0, probe_clone3_user, "" },
	{ "setns", 1, 1, probe_setns, "NSFILE" },
	{ "mount-tmpfs", 1, 1, probe_mount_tmpfs, "PATH" },
	{ "fsopen", 0, 0, probe_fsopen, "" },
	{ "tiocsti", 0, 0, probe_tiocsti, "" },
	{ "tiocsti-high", 0, 0, probe_tiocsti_high, "" },
	{ "sysctl-rewrite", 1, 1, probe_sysctl_rewrite, "PATH" },
	{ "procmem", 1, 1, probe_procmem, "PID|child" },
	{ "no-new-privs", 0, 0, probe_no_new_privs, "" },
	{ "seccomp-stack", 1, 1, probe_seccomp_stack, "PID|child" },
	{ "tioclinux", 0, 0, probe_tioclinux, "" },
	{ "tioclinux-high", 0, 0, probe_tioclinux_high, "" },
	{ "pivot-root", 1, 1, probe_pivot_root, "DIR (outside: unshare -m)" },
	{ "chroot", 1, 1, probe_chroot, "DIR" },
	{ "open-by-handle", 1, 1, probe_open_by_handle, "PATH" },
	{ "kill-all", 1, 1, probe_kill_all, "SIG (inside only)" },
	{ "i386", 0, 0, probe_i386, "" },
	{ "x32", 0, 0, probe_x32, "" },
};

int
main(int argc, char **argv)
{
	size_t	 i;
	int	 n;

	if (argc < 2)
		usage();
	kind = argv[1];
	n = argc - 2;
	if (strcmp(kind, "list") == 0) {
		for (i = 0; i < nitems(probes); i++)
			printf("%s %s\n", probes[i].p_kind, probes[i].p_args);
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < nitems(probes); i++) {
		if (strcmp(kind, probes[i].p_kind) != 0)
			continue;
		if (n < probes[i].p_min || n > probes[i].p_max) {
			fprintf(stderr, "usage: probe %s %s\n", kind,
			    probes[i].p_args);
			return 2;
		}
		probes[i].p_fn(argv + 2);
		return 2;		/* every probe ends in held or escaped */
	}
	fprintf(stderr, "probe: unknown kind %s (try probe list)\n", kind);
	return 2;
}
