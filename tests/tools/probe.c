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
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/netlink.h>
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
 * Files
 */

static void
write_fd(int fd, const char *step)
{
	static const char	 text[] = "cordon probe\n";

	if (write(fd, text, sizeof(text) - 1) != (ssize_t)sizeof(text) - 1)
		held_errno(step);
}

/* Creates or appends to PATH, following symlinks as any tool would. */
static void
probe_write(char **argv)
{
	int	 fd;

	if ((fd = open(argv[0], O_WRONLY | O_CREAT | O_APPEND, 0644)) == -1)
		held_errno("open");
	write_fd(fd, "write");
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
 * but a careless filter compares (CVE-2023-28100).
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
	{ "abstract", 1, 1, probe_abstract, "NAME (stream)" },
	{ "socket", 1, 3, probe_socket, "FAMILY [TYPE [PROTO]]" },
	{ "write", 1, 1, probe_write, "PATH" },
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
