/*
 * test_sysfilter.c: the sandbox's seccomp filter, loaded for real in a
 * child process; each denied call must fail with its errno, and the
 * ordinary ones must still work.
 */
#include "unit.h"

#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/netlink.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "lib/fdpass.h"
#include "runner/runner.h"

#ifndef TIOCLINUX
#define TIOCLINUX	0x541C
#endif
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT	0x40000000
#endif

static int	 filter_fd = -1;

/* A memfd holding a filter's program, as cordon run makes it. */
static int
filter_new(enum sysfilter_unix mode, bool renames, bool paused, char **cause)
{
	int	 fd;

	if ((fd = sysfilter_memfd(cause)) == -1)
		return -1;
	if (sysfilter_prog_write(fd, mode, renames, paused, cause) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A call to try, and the errno it must fail with (0: it must work). */
struct probe {
	const char	*name;
	long		(*call)(void);
	int		 want;
};

static long p_ptrace(void) { return syscall(SYS_ptrace, 0 /* TRACEME */, 0, 0, 0); }
static long p_vm_readv(void) { return syscall(SYS_process_vm_readv, getppid(), NULL, 0, NULL, 0, 0); }
static long p_io_uring(void) { return syscall(SYS_io_uring_setup, 1, NULL); }
/* Linux AIO: a context of queued writes, as io_uring's ring (bad ids:
 * EINVAL without the filter). */
static long p_io_setup(void) { unsigned long ctx = 0; long r = syscall(SYS_io_setup, 1, &ctx); if (r == 0) syscall(SYS_io_destroy, ctx); return r; }
static long p_io_submit(void) { return syscall(SYS_io_submit, 0, 0, NULL); }
static long p_io_getevents(void) { return syscall(SYS_io_getevents, 0, 0, 0, NULL, NULL); }
static long p_io_pgetevents(void) { return syscall(SYS_io_pgetevents, 0, 0, 0, NULL, NULL, NULL); }
static long p_io_cancel(void) { return syscall(SYS_io_cancel, 0, NULL, NULL); }
static long p_io_destroy(void) { return syscall(SYS_io_destroy, 0); }
static long p_bpf(void) { return syscall(SYS_bpf, 0, NULL, 0); }
static long p_perf(void) { return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0); }
static long p_keyctl(void) { return syscall(SYS_keyctl, 0, 0, 0, 0, 0); }
static long p_add_key(void) { return syscall(SYS_add_key, "user", "x", "y", 1, 0); }
static long p_userfaultfd(void) { return syscall(SYS_userfaultfd, 0); }
static long p_kexec(void) { return syscall(SYS_kexec_load, 0, 0, NULL, 0); }
static long p_init_module(void) { return syscall(SYS_init_module, NULL, 0, ""); }
static long p_mount(void) { return syscall(SYS_mount, "none", "/", "tmpfs", 0, NULL); }
static long p_umount(void) { return syscall(SYS_umount2, "/", 0); }
static long p_pivot_root(void) { return syscall(SYS_pivot_root, "/", "/"); }
static long p_setns(void) { return syscall(SYS_setns, 0, 0); }
static long p_unshare_user(void) { return syscall(SYS_unshare, CLONE_NEWUSER); }
static long p_unshare_net(void) { return syscall(SYS_unshare, CLONE_NEWNET); }
static long p_clone_user(void) { return syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0); }
static long p_clone3(void) { return syscall(SYS_clone3, NULL, 0); }
static long p_tiocsti(void) { char c = 'x'; return syscall(SYS_ioctl, 0, TIOCSTI, &c); }
static long p_tiocsti_hi(void) { char c = 'x'; return syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI | (1UL << 32), &c); }
static long p_tiocsctty(void) { return syscall(SYS_ioctl, -1, TIOCSCTTY, 0); }
static long p_tiocsctty_hi(void) { return syscall(SYS_ioctl, -1, (unsigned long)TIOCSCTTY | (1UL << 32), 0); }
static long p_tioclinux(void) { char c = 2; return syscall(SYS_ioctl, 0, TIOCLINUX, &c); }
static long p_packet(void) { return socket(AF_PACKET, SOCK_RAW, 0); }
static long p_vsock(void) { return socket(40 /* AF_VSOCK */, SOCK_STREAM, 0); }
static long p_bluetooth(void) { return socket(31 /* AF_BLUETOOTH */, SOCK_STREAM, 0); }
static long p_netlink_audit(void) { return socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT); }
static long p_packet_hi(void) { return syscall(SYS_socket, (1UL << 32) | AF_PACKET, SOCK_RAW, 0); }
static long p_netlink_audit_hi(void) { return syscall(SYS_socket, AF_NETLINK, SOCK_RAW, (1UL << 32) | NETLINK_AUDIT); }
static long p_netlink_hi(void) { return syscall(SYS_socket, (1UL << 32) | AF_NETLINK, SOCK_RAW, NETLINK_AUDIT); }
static long p_socketpair_packet(void) { int sv[2]; return syscall(SYS_socketpair, AF_PACKET, SOCK_RAW, 0, sv); }
static long p_x32_getpid(void) { return syscall(__X32_SYSCALL_BIT | SYS_getpid); }

/* What must still work. */
static long p_getpid(void) { return syscall(SYS_getpid); }
static long p_unix(void) { return socket(AF_UNIX, SOCK_STREAM, 0); }
static long p_inet(void) { return socket(AF_INET, SOCK_STREAM, 0); }
static long p_inet6(void) { return socket(AF_INET6, SOCK_DGRAM, 0); }
static long p_netlink_route(void) { return socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE); }
static long p_socketpair(void) { int sv[2]; return socketpair(AF_UNIX, SOCK_STREAM, 0, sv); }
static long p_fork(void) { pid_t p = fork(); if (p == 0) _exit(0); return p > 0 ? 0 : -1; }
static long p_ioctl_fionread(void) { int n; return ioctl(0, FIONREAD, &n) == -1 && errno == EPERM ? -1 : 0; }

/* With Unix sockets denied: no socket that can name a path or an
 * abstract address; pairs that cannot send to one stay. */
static long p_unix_dgram(void) { return socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0); }
static long p_unix_hi(void) { return syscall(SYS_socket, (1UL << 32) | AF_UNIX, SOCK_STREAM, 0); }
static long p_pair_dgram(void) { int sv[2]; return socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv); }
static long p_pair_dgram_hi(void) { int sv[2]; return syscall(SYS_socketpair, AF_UNIX, (1UL << 32) | SOCK_DGRAM, 0, sv); }
static long p_pair_seqpacket(void) { int sv[2]; return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv); }
/* SOCK_RAW: the kernel makes it a datagram pair (unix_create()). */
static long p_pair_raw(void) { int sv[2]; return socketpair(AF_UNIX, SOCK_RAW, 0, sv); }
static long p_pair_raw_flags(void) { int sv[2]; return socketpair(AF_UNIX, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv); }
static long p_pair_raw_hi(void) { int sv[2]; return syscall(SYS_socketpair, AF_UNIX, (1UL << 32) | SOCK_RAW, 0, sv); }
static long p_pair_stream_hi(void) { int sv[2]; return syscall(SYS_socketpair, AF_UNIX, (1UL << 32) | SOCK_STREAM | SOCK_CLOEXEC, 0, sv); }
static long p_pair_seqpacket_nb(void) { int sv[2]; return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv); }

/* A paused session's: no SIGCONT the kernel would send later. */
static long p_pdeath_cont(void) { return prctl(PR_SET_PDEATHSIG, SIGCONT); }
static long p_pdeath_cont_hi(void) { return syscall(SYS_prctl, (1UL << 32) | PR_SET_PDEATHSIG, SIGCONT, 0, 0, 0); }
static long p_pdeath_term(void) { return prctl(PR_SET_PDEATHSIG, SIGTERM); }
static long p_setsig_cont(void) { return fcntl(0, F_SETSIG, SIGCONT); }
static long p_setsig_cont_hi(void) { return syscall(SYS_fcntl, 0, (1UL << 32) | F_SETSIG, (1UL << 32) | SIGCONT); }
static long p_setsig_kill(void) { return fcntl(0, F_SETSIG, SIGKILL); }
static long p_setsig_io(void) { return fcntl(0, F_SETSIG, SIGIO); }
static long p_clone_cont(void) { long r = syscall(SYS_clone, SIGCONT, 0, 0, 0, 0); if (r == 0) _exit(0); return r; }
static long p_clone_chld(void) { long r = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0); if (r == 0) _exit(0); return r; }
static long p_timer_cont(void) { struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGCONT }; int id; return syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &id); }
static long p_timer_null(void) { int id; return syscall(SYS_timer_create, CLOCK_MONOTONIC, NULL, &id); }
static long p_mq_notify(void) { struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGCONT }; return syscall(SYS_mq_notify, -1, &sev); }
static long p_mq_notify_null(void) { return syscall(SYS_mq_notify, -1, NULL); }

static const struct probe probes[] = {
	{ "ptrace", p_ptrace, EPERM },
	{ "process_vm_readv", p_vm_readv, EPERM },
	{ "io_uring_setup", p_io_uring, EPERM },
	{ "io_setup", p_io_setup, EPERM },
	{ "io_submit", p_io_submit, EPERM },
	{ "io_getevents", p_io_getevents, EPERM },
	{ "io_pgetevents", p_io_pgetevents, EPERM },
	{ "io_cancel", p_io_cancel, EPERM },
	{ "io_destroy", p_io_destroy, EPERM },
	{ "bpf", p_bpf, EPERM },
	{ "perf_event_open", p_perf, EPERM },
	{ "keyctl", p_keyctl, EPERM },
	{ "add_key", p_add_key, EPERM },
	{ "userfaultfd", p_userfaultfd, EPERM },
	{ "kexec_load", p_kexec, EPERM },
	{ "init_module", p_init_module, EPERM },
	{ "mount", p_mount, EPERM },
	{ "umount2", p_umount, EPERM },
	{ "pivot_root", p_pivot_root, EPERM },
	{ "setns", p_setns, EPERM },
	{ "unshare(CLONE_NEWUSER)", p_unshare_user, EPERM },
	{ "unshare(CLONE_NEWNET)", p_unshare_net, EPERM },
	{ "clone(CLONE_NEWUSER)", p_clone_user, EPERM },
	{ "clone3", p_clone3, ENOSYS },
	{ "ioctl TIOCSTI", p_tiocsti, EPERM },
	{ "ioctl TIOCSTI, high bits set", p_tiocsti_hi, EPERM },
	{ "ioctl TIOCLINUX", p_tioclinux, EPERM },
	{ "socket AF_PACKET", p_packet, EPERM },
	{ "socket AF_VSOCK", p_vsock, EPERM },
	{ "socket AF_BLUETOOTH", p_bluetooth, EPERM },
	{ "socket AF_NETLINK audit", p_netlink_audit, EPERM },
	{ "socket AF_PACKET, high bits set", p_packet_hi, EPERM },
	{ "socket AF_NETLINK audit, high bits in protocol", p_netlink_audit_hi,
	    EPERM },
	{ "socket AF_NETLINK audit, high bits in family", p_netlink_hi, EPERM },
	{ "socketpair AF_PACKET", p_socketpair_packet, EPERM },
	{ "x32 getpid", p_x32_getpid, EPERM },
	{ "getpid", p_getpid, 0 },
	{ "socket AF_UNIX", p_unix, 0 },
	{ "socket AF_INET", p_inet, 0 },
	{ "socket AF_INET6", p_inet6, 0 },
	{ "socket AF_NETLINK route", p_netlink_route, 0 },
	{ "socketpair AF_UNIX", p_socketpair, 0 },
	{ "fork", p_fork, 0 },
	{ "ioctl FIONREAD", p_ioctl_fionread, 0 },
	{ "prctl PR_SET_PDEATHSIG SIGCONT", p_pdeath_cont, 0 },
	{ "fcntl F_SETSIG SIGCONT", p_setsig_cont, 0 },
	{ "clone, exit signal SIGCONT", p_clone_cont, 0 },
	{ "timer_create SIGCONT", p_timer_cont, 0 },
	{ "mq_notify SIGCONT (no queue)", p_mq_notify, EBADF },
	{ "ioctl TIOCSCTTY (no descriptor)", p_tiocsctty, EBADF },
};

static const struct probe paused_probes[] = {
	{ "prctl PR_SET_PDEATHSIG SIGCONT", p_pdeath_cont, EPERM },
	{ "prctl PR_SET_PDEATHSIG SIGCONT, high bits in option",
	    p_pdeath_cont_hi, EPERM },
	{ "prctl PR_SET_PDEATHSIG SIGTERM", p_pdeath_term, 0 },
	{ "fcntl F_SETSIG SIGCONT", p_setsig_cont, EPERM },
	{ "fcntl F_SETSIG SIGCONT, high bits set", p_setsig_cont_hi, EPERM },
	{ "fcntl F_SETSIG SIGKILL", p_setsig_kill, EPERM },
	{ "fcntl F_SETSIG SIGIO", p_setsig_io, 0 },
	{ "clone, exit signal SIGCONT", p_clone_cont, EPERM },
	{ "clone, exit signal SIGCHLD", p_clone_chld, 0 },
	{ "fork", p_fork, 0 },
	{ "timer_create SIGCONT", p_timer_cont, ENOSYS },
	{ "timer_create, no sigevent (SIGALRM)", p_timer_null, 0 },
	{ "mq_notify SIGCONT", p_mq_notify, ENOSYS },
	{ "mq_notify, no sigevent", p_mq_notify_null, EBADF },
	{ "ioctl TIOCSCTTY", p_tiocsctty, EPERM },
	{ "ioctl TIOCSCTTY, high bits set", p_tiocsctty_hi, EPERM },
	{ "ptrace", p_ptrace, EPERM },
	{ "io_setup", p_io_setup, EPERM },
	{ "io_submit", p_io_submit, EPERM },
};

static const struct probe unix_probes[] = {
	{ "socket AF_UNIX", p_unix, EPERM },
	{ "socket AF_UNIX datagram", p_unix_dgram, EPERM },
	{ "socket AF_UNIX, high bits set", p_unix_hi, EPERM },
	{ "socketpair AF_UNIX datagram", p_pair_dgram, EPERM },
	{ "socketpair AF_UNIX datagram, high bits set", p_pair_dgram_hi,
	    EPERM },
	{ "socketpair AF_UNIX raw (a datagram pair)", p_pair_raw, EPERM },
	{ "socketpair AF_UNIX raw, nonblock and cloexec", p_pair_raw_flags,
	    EPERM },
	{ "socketpair AF_UNIX raw, high bits set", p_pair_raw_hi, EPERM },
	{ "socketpair AF_UNIX stream", p_socketpair, 0 },
	{ "socketpair AF_UNIX stream, cloexec, high bits set",
	    p_pair_stream_hi, 0 },
	{ "socketpair AF_UNIX seqpacket", p_pair_seqpacket, 0 },
	{ "socketpair AF_UNIX seqpacket, nonblock", p_pair_seqpacket_nb, 0 },
	{ "socket AF_INET", p_inet, 0 },
	{ "ptrace", p_ptrace, EPERM },
};

/*
 * Runs probe p in a child that loaded the filter; returns 0 when it
 * behaved as wanted, else the errno it got plus 1000 (or 999: it worked).
 */
static int
run_probe(const struct probe *p)
{
	char	*cause;
	pid_t	 pid;
	long	 rc;
	int	 status;

	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		if (sysfilter_apply(filter_fd, NULL, &cause) == -1)
			_exit(2);
		errno = 0;
		rc = p->call();
		if (p->want == 0)
			_exit(rc == -1 ? 100 + (errno & 0xff) : 0);
		_exit(rc == -1 && errno == p->want ? 0 :
		    rc == -1 ? 100 + (errno & 0xff) : 99);
	}
	if (waitpid(pid, &status, 0) == -1 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Runs n probes; returns how many did not behave. */
static int
run_probes(const struct probe *v, size_t n)
{
	size_t	 i;
	int	 rc, bad = 0;

	for (i = 0; i < n; i++) {
		if ((rc = run_probe(&v[i])) == 0)
			continue;
		bad++;
		if (rc == 99)
			print_message("escaped: %s worked\n", v[i].name);
		else if (rc >= 100)
			print_message("%s: %s, not %s\n", v[i].name,
			    strerror(rc - 100), v[i].want ?
			    strerror(v[i].want) : "success");
		else
			print_message("%s: the child failed (%d)\n",
			    v[i].name, rc);
	}
	return bad;
}

static void
test_probes(void **state)
{
	(void)state;
	assert_int_equal(run_probes(probes, sizeof(probes) /
	    sizeof(probes[0])), 0);
}

/* The probes v[n] under a filter of mode and paused, not the suite's. */
static void
probes_under(enum sysfilter_unix mode, bool paused, const struct probe *v,
    size_t n)
{
	char	*cause;
	int	 fd = filter_fd;

	if ((filter_fd = filter_new(mode, false, paused, &cause)) == -1)
		fail_msg("%s", cause);
	assert_int_equal(run_probes(v, n), 0);
	close(filter_fd);
	filter_fd = fd;
}

static void
test_unix_denied(void **state)
{
	(void)state;
	probes_under(SYSF_UNIX_DENY, false, unix_probes, sizeof(unix_probes) /
	    sizeof(unix_probes[0]));
}

/* A paused session's filter: the SIGCONT routes refused, the rest not. */
static void
test_paused(void **state)
{
	(void)state;
	probes_under(SYSF_UNIX_ALLOW, true, paused_probes,
	    sizeof(paused_probes) / sizeof(paused_probes[0]));
}

/* Without the filter, the same probes are not all refused (the test
 * would otherwise prove nothing): ptrace(TRACEME) works. */
static void
test_unfiltered(void **state)
{
	pid_t	 pid;
	int	 status;

	(void)state;
	if ((pid = fork()) == 0)
		_exit(p_ptrace() == 0 ? 0 : 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * Each program cordon was built with (sysfilter_gen.c, at make) is byte
 * for byte what libseccomp builds here, now, for its variant; and the
 * twelve differ, so that an index taken wrong would show.
 */
static void
test_built_in(void **state)
{
	static unsigned char	 buf[65536];
	const struct sysfilter_prog *p;
	char			*cause = NULL;
	ssize_t			 len;
	size_t			 n, m;
	int			 fd;

	(void)state;
	for (n = 0; n < SYSFILTER_NPROGS; n++) {
		p = &sysfilter_progs[n];
		assert_int_not_equal(fd = sysfilter_memfd(&cause), -1);
		assert_int_equal(sysfilter_build(fd, (enum sysfilter_unix)(n /
		    4), (n & 2) != 0, (n & 1) != 0, &cause), 0);
		len = pread(fd, buf, sizeof(buf), 0);
		close(fd);
		assert_int_equal(len, (ssize_t)p->sp_len);
		assert_memory_equal(buf, p->sp_bpf, p->sp_len);
		for (m = 0; m < n; m++)
			assert_false(sysfilter_progs[m].sp_len == p->sp_len &&
			    memcmp(sysfilter_progs[m].sp_bpf, p->sp_bpf,
			    p->sp_len) == 0);
	}
	assert_ptr_equal(&sysfilter_progs[SYSFILTER_PROG(SYSF_UNIX_NOTIFY,
	    true, false)], &sysfilter_progs[6]);
}

/*
 * With renames, rename, renameat and renameat2 reach the listener (for
 * gitwrite.c), which answers here EXDEV for each; without, the kernel
 * answers (ENOENT: no such file).
 */
static void
test_renames(void **state)
{
	struct seccomp_notif		 req;
	struct seccomp_notif_resp	 resp;
	char				*cause, b;
	int				 fd, sv[2], lfd = -1, status, i;
	long				 nrs[] = { SYS_rename, SYS_renameat,
					    SYS_renameat2 };
	pid_t				 pid;

	(void)state;
	for (i = 0; i < 2; i++) {
		if ((fd = filter_new(SYSF_UNIX_ALLOW, i == 1, false,
		    &cause)) ==
		    -1)
			fail_msg("%s", cause);
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv),
		    0);
		if ((pid = fork()) == 0) {
			close(sv[0]);
			if (sysfilter_apply(fd, &lfd, &cause) == -1 ||
			    fdpass_send(sv[1], lfd, "l", 1, 0) != 1)
				_exit(2);
			close(lfd);
			_exit(rename("/nonexistent/a", "/nonexistent/b") ==
			    -1 && errno == (i == 1 ? EXDEV : ENOENT) &&
			    renameat(AT_FDCWD, "/nonexistent/a", AT_FDCWD,
			    "b") == -1 && errno == (i == 1 ? EXDEV : ENOENT) &&
			    syscall(SYS_renameat2, AT_FDCWD, "/nonexistent/a",
			    AT_FDCWD, "b", 0) == -1 && errno == (i == 1 ?
			    EXDEV : ENOENT) ? 0 : 1);
		}
		close(sv[1]);
		assert_true(fdpass_recv(sv[0], &lfd, &b, 1, 0) == 1);
		while (i == 1 && lfd != -1) {
			memset(&req, 0, sizeof(req));
			if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) == -1)
				break;
			assert_true(req.data.nr == nrs[0] || req.data.nr ==
			    nrs[1] || req.data.nr == nrs[2]);
			memset(&resp, 0, sizeof(resp));
			resp.id = req.id;
			resp.error = -EXDEV;
			ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
			if (req.data.nr == nrs[2])
				break;
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		if (lfd != -1)
			close(lfd);
		close(sv[0]);
		close(fd);
	}
}

static int
setup(void **state)
{
	char	*cause;

	(void)state;
	if ((filter_fd = filter_new(SYSF_UNIX_ALLOW, false, false,
	    &cause)) == -1) {
		print_error("%s\n", cause);
		return -1;
	}
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unfiltered),
		cmocka_unit_test(test_probes),
		cmocka_unit_test(test_unix_denied),
		cmocka_unit_test(test_paused),
		cmocka_unit_test(test_renames),
		cmocka_unit_test(test_built_in),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
