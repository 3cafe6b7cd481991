/*
 * sysfilter.c: the seccomp filter of a sandbox, built with libseccomp.
 *
 * The filter is built with libseccomp when cordon is built, one program
 * per variant (sysfilter_gen.c), and linked in; cordon run writes its
 * program into a memfd (sysfilter_prog.c), and the sandbox's last step
 * before exec loads it, after PR_SET_NO_NEW_PRIVS.  The file is named
 * sysfilter.c, not seccomp.c, so that our prefix does not meet
 * libseccomp's.
 *
 * Default allow, with a deny list: a deny list is short, stays readable,
 * and breaks no tool that uses an ordinary syscall the list forgot.  What
 * it denies returns EPERM (not a kill), so tools can report it:
 *
 *   debugging other processes	ptrace, process_vm_readv/writev
 *   kernel attack surface	io_uring_*, bpf, perf_event_open, userfaultfd,
 *				keyctl, add_key, request_key, kexec_*,
 *				*_module, open_by_handle_at
 *   writes queued in the kernel	io_uring_* and Linux AIO (io_setup,
 *				io_submit, io_getevents, io_pgetevents,
 *				io_cancel, io_destroy): a write queued there
 *				runs on no thread of the command, so no stop
 *				of its threads waits for it (a session's
 *				check after a command, sandbox_session.c);
 *				glibc's POSIX AIO uses threads, and works
 *   changing the sandbox	mount, umount2, pivot_root, move_mount,
 *				open_tree, fsopen, fsconfig, fsmount,
 *				fspick, mount_setattr, setns, chroot,
 *				unshare and clone of new namespaces
 *   terminal injection	ioctl TIOCSTI and TIOCLINUX, compared on the
 *				low 32 bits the kernel reads (TIOCSTI:
 *				CVE-2017-5226; its high-bit variant:
 *				CVE-2019-10063; TIOCLINUX: CVE-2023-28100)
 *   socket families		all but AF_UNIX, AF_INET, AF_INET6 and
 *				AF_NETLINK with NETLINK_ROUTE (int arguments
 *				compared on their low 32 bits, as the kernel
 *				reads them)
 *   other ABIs			x32 and i386 system calls (bad architecture)
 *   renames			with protected git configs: rename(2),
 *				renameat(2), renameat2(2) to cordon run
 *				(SECCOMP_RET_USER_NOTIF, gitwrite.c), which
 *				lets each through but one onto such a config
 *   Unix sockets		unless the policy allows them, on a kernel
 *				without user notification: socket(AF_UNIX)
 *				and every socketpair(AF_UNIX) but stream and
 *				seqpacket ones (datagram and SOCK_RAW pairs,
 *				which the kernel makes datagram, can send to
 *				any path with sendto(2)); stream and seqpacket
 *				pairs, which cannot, stay for tools' own IPC
 *   ... judged ones		by default: socket(AF_UNIX) of stream and
 *				seqpacket type too, and every connect(2) to
 *				cordon run, which connects the sandbox's own
 *				sockets and the listed host ones (SECCOMP_RET_USER_
 *				NOTIF, notify.c).  connect is the one call of
 *				these types that reaches a path: a stream
 *				socket's sendto/sendmsg with an address fails
 *				(EOPNOTSUPP, EISCONN), a seqpacket socket's
 *				ignores it (unix_seqpacket_sendmsg), and
 *				io_uring is denied.  The kernel runs the most
 *				severe action of all filters: an EPERM of
 *				another filter still wins over the notice.
 *
 * clone3 gets ENOSYS instead: its flags are in memory the filter cannot
 * read, and C libraries fall back to clone, whose flags it can.
 *
 * In a session whose processes PID 1 stops between commands (not with
 * --run-between; a run never stops them), the ways a process asks the
 * kernel for a SIGCONT at a time it chose, which would continue it
 * after the stop: EPERM for prctl(PR_SET_PDEATHSIG, SIGCONT),
 * fcntl(F_SETSIG, SIGCONT or SIGKILL), clone with SIGCONT as its exit
 * signal and ioctl(TIOCSCTTY) (a hangup continues the terminal's
 * session leader); ENOSYS, as on a kernel built without POSIX timers or
 * message queues, for timer_create and mq_notify with a sigevent, whose
 * signal is in memory (sysfilter_paused).
 *
 * Runs in: sysfilter-gen, when cordon is built, and the unit tests;
 *   cordon run writes the programs it made (sysfilter_prog.c), and the
 *   command loads one (sandbox/sysfilter_apply.c).
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine/sysfilter.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

#ifndef TIOCLINUX
#define TIOCLINUX	0x541C
#endif

/* Denied outright, by name (names this libseccomp does not know skip). */
static const char *const denied[] = {
	"ptrace", "process_vm_readv", "process_vm_writev",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"io_setup", "io_submit", "io_getevents", "io_pgetevents",
	"io_cancel", "io_destroy",
	"bpf", "perf_event_open", "userfaultfd",
	"keyctl", "add_key", "request_key",
	"kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module",
	"open_by_handle_at", "name_to_handle_at",
	"mount", "umount2", "pivot_root", "chroot", "move_mount",
	"open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
	"mount_setattr", "setns",
	"acct", "swapon", "swapoff", "reboot", "syslog",
	"vhangup", "quotactl", "lookup_dcookie", "nfsservctl",
};

/* Adds one rule; returns 0, or -1 with *cause set. */
static int
sysfilter_rule(scmp_filter_ctx ctx, uint32_t action, const char *name,
    unsigned int n, const struct scmp_arg_cmp *args, char **cause)
{
	int	 nr, rc;

	if ((nr = seccomp_syscall_resolve_name(name)) == __NR_SCMP_ERROR)
		return 0;	/* not on this architecture */
	if ((rc = seccomp_rule_add_array(ctx, action, nr, n, args)) < 0) {
		xasprintf(cause, "seccomp rule for %s: %s", name,
		    strerror(-rc));
		return -1;
	}
	return 0;
}

/*
 * Unix sockets, when the policy denies them: socket(AF_UNIX) of any type,
 * and socketpair(AF_UNIX) of any type but SOCK_STREAM and SOCK_SEQPACKET,
 * whose ends are connected to each other and cannot send to a path.  The
 * type is judged as the kernel will make it: it reads the low 4 bits of
 * an int (SOCK_NONBLOCK and SOCK_CLOEXEC sit above them, as does anything
 * in the upper half of the register), and it makes SOCK_RAW a datagram
 * socket (unix_create()); a rule for SOCK_DGRAM alone let a SOCK_RAW pair
 * sendto(2) any datagram socket it could see.  So every low nibble but 1
 * and 5 is denied, in five masked ranges: 0, 2-3, 4, 6-7, 8-15; a type a
 * later kernel might map to a datagram is then denied already.  Returns 0,
 * or -1 with *cause set.
 */
static int
sysfilter_unix(scmp_filter_ctx ctx, bool routes, char **cause)
{
	static const struct scmp_arg_cmp types[] = {
		SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xf, 0),
		SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xe, 2),
		SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xf, 4),
		SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xe, 6),
		SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0x8, 8)
	};
	struct scmp_arg_cmp	 arg[2];
	const uint32_t		 eperm = SCMP_ACT_ERRNO(EPERM);
	size_t			 i;

	arg[0] = SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, AF_UNIX);
	if (!routes && sysfilter_rule(ctx, eperm, "socket", 1, arg, cause) ==
	    -1)
		return -1;
	for (i = 0; i < nitems(types); i++) {
		arg[1] = types[i];
		if (sysfilter_rule(ctx, eperm, "socketpair", 2, arg, cause) ==
		    -1 || (routes && sysfilter_rule(ctx, eperm, "socket", 2,
		    arg, cause) == -1))
			return -1;
	}
	if (routes && sysfilter_rule(ctx, SCMP_ACT_NOTIFY, "connect", 0, NULL,
	    cause) == -1)
		return -1;
	return 0;
}

/*
 * New namespaces: unshare and clone with any namespace flag; clone3,
 * whose flags the filter cannot read, gets ENOSYS.  Returns 0, or -1
 * with *cause set.
 */
static int
sysfilter_namespaces(scmp_filter_ctx ctx, char **cause)
{
	static const uint64_t	 flags[] = { CLONE_NEWUSER, CLONE_NEWNS,
				    CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWIPC,
				    CLONE_NEWUTS, CLONE_NEWCGROUP };
	struct scmp_arg_cmp	 arg[1];
	const uint32_t		 eperm = SCMP_ACT_ERRNO(EPERM);
	size_t			 i;

	for (i = 0; i < nitems(flags); i++) {
		arg[0] = SCMP_A0_64(SCMP_CMP_MASKED_EQ, flags[i], flags[i]);
		if (sysfilter_rule(ctx, eperm, "unshare", 1, arg, cause) ==
		    -1 || sysfilter_rule(ctx, eperm, "clone", 1, arg,
		    cause) == -1)
			return -1;
	}
	return sysfilter_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL,
	    cause);
}

/*
 * A paused session's commands: no SIGCONT the kernel sends later, and no
 * SIGKILL on I/O from outside (F_SETSIG): a stopped process dies of
 * SIGKILL alone (wants_signal() leaves any other signal pending), and
 * its death can continue others (an orphaned process group that holds
 * a stopped one gets SIGHUP and SIGCONT; a parent-death or exit signal
 * of SIGCONT); a timer's or message queue's SIGKILL is refused with
 * them, a parent-death or exit SIGKILL needs a death first.  The
 * arguments are compared as the kernel reads them: prctl's option and
 * fcntl's command and argument as ints (their low 32 bits),
 * PR_SET_PDEATHSIG's signal as an unsigned long, clone's exit signal in
 * the low byte of its flags (CSIGNAL), ioctl's request as an int.  No
 * controlling terminal either (TIOCSCTTY): its hangup sends SIGHUP and
 * SIGCONT to the session leader it controls, and the client's terminal
 * (a harness's pseudo-terminal, no one's yet) hangs up when the harness
 * closes its master, which it does when it likes, after the check.
 * timer_create and mq_notify take their signal in a struct sigevent the
 * filter cannot read: refused
 * whenever they pass one (a NULL sigevent means SIGALRM for a timer, and
 * no notification for mq_notify).  ENOSYS for those, not EPERM: the
 * runtimes that use a timer when they can (Go's CPU profiler, Ruby's
 * thread timer) take their fallback on any error, and ENOSYS is what a
 * kernel without CONFIG_POSIX_TIMERS or CONFIG_POSIX_MQUEUE answers,
 * which portable code expects.  Returns 0, or -1 with *cause set.
 */
static int
sysfilter_paused(scmp_filter_ctx ctx, char **cause)
{
	struct scmp_arg_cmp	 arg[2];
	const uint32_t		 eperm = SCMP_ACT_ERRNO(EPERM);
	const uint32_t		 enosys = SCMP_ACT_ERRNO(ENOSYS);

	arg[0] = SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL,
	    PR_SET_PDEATHSIG);
	arg[1] = SCMP_A1_64(SCMP_CMP_EQ, SIGCONT);
	if (sysfilter_rule(ctx, eperm, "prctl", 2, arg, cause) == -1)
		return -1;
	arg[0] = SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, F_SETSIG);
	arg[1] = SCMP_A2_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, SIGCONT);
	if (sysfilter_rule(ctx, eperm, "fcntl", 2, arg, cause) == -1)
		return -1;
	arg[1] = SCMP_A2_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, SIGKILL);
	if (sysfilter_rule(ctx, eperm, "fcntl", 2, arg, cause) == -1)
		return -1;
	arg[0] = SCMP_A0_64(SCMP_CMP_MASKED_EQ, CSIGNAL, SIGCONT);
	if (sysfilter_rule(ctx, eperm, "clone", 1, arg, cause) == -1)
		return -1;
	arg[0] = SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCSCTTY);
	if (sysfilter_rule(ctx, eperm, "ioctl", 1, arg, cause) == -1)
		return -1;
	arg[0] = SCMP_A1_64(SCMP_CMP_NE, 0);
	if (sysfilter_rule(ctx, enosys, "timer_create", 1, arg, cause) == -1)
		return -1;
	return sysfilter_rule(ctx, enosys, "mq_notify", 1, arg, cause);
}

/*
 * Terminal injection, on the 32 bits the kernel reads: a mask, as
 * libseccomp's 32-bit comparison still looks at the upper half.
 * Returns 0, or -1 with *cause set.
 */
static int
sysfilter_tty(scmp_filter_ctx ctx, char **cause)
{
	struct scmp_arg_cmp	 arg[1];
	const uint32_t		 eperm = SCMP_ACT_ERRNO(EPERM);

	arg[0] = SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCSTI);
	if (sysfilter_rule(ctx, eperm, "ioctl", 1, arg, cause) == -1)
		return -1;
	arg[0] = SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCLINUX);
	return sysfilter_rule(ctx, eperm, "ioctl", 1, arg, cause);
}

/*
 * Socket families: EPERM for every one but AF_UNIX (1), AF_INET (2),
 * AF_INET6 (10) and AF_NETLINK (16), in a few ranges rather than one
 * rule a family: the filter is built and loaded at every run, and the
 * kernel walks it for each system call number when it loads.  The
 * kernel reads an int; a value with any of the upper 32 bits set is
 * above 16 and denied too.  Netlink: NETLINK_ROUTE (0) only, for the
 * addresses of `lo`.  Returns 0, or -1 with *cause set.
 */
static int
sysfilter_families(scmp_filter_ctx ctx, char **cause)
{
	/* Every family but 1, 2, 10 and 16: 0, 3, 4-7, 8-9, 11, 12-15, 17-. */
	static const struct scmp_arg_cmp family_ranges[] = {
		SCMP_A0_64(SCMP_CMP_EQ, 0),
		SCMP_A0_64(SCMP_CMP_EQ, 3),
		SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xfffffffcULL, 4),
		SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xfffffffeULL, 8),
		SCMP_A0_64(SCMP_CMP_EQ, 11),
		SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xfffffffcULL, 12),
		SCMP_A0_64(SCMP_CMP_GT, 16)
	};
	struct scmp_arg_cmp	 arg[2];
	const uint32_t		 eperm = SCMP_ACT_ERRNO(EPERM);
	size_t			 i;

	for (i = 0; i < nitems(family_ranges); i++) {
		arg[0] = family_ranges[i];
		if (sysfilter_rule(ctx, eperm, "socket", 1, arg, cause) == -1 ||
		    sysfilter_rule(ctx, eperm, "socketpair", 1, arg, cause) ==
		    -1)
			return -1;
	}
	arg[0] = SCMP_A0_64(SCMP_CMP_EQ, AF_NETLINK);
	arg[1] = SCMP_A2_64(SCMP_CMP_NE, NETLINK_ROUTE);
	return sysfilter_rule(ctx, eperm, "socket", 2, arg, cause);
}

/*
 * The memfd that will hold the filter's BPF program
 * (sysfilter_prog_write), made before the clone so that the sandbox
 * inherits it; or -1 with *cause set (caller frees).
 */
int
sysfilter_memfd(char **cause)
{
	int	 fd;

	*cause = NULL;
	if ((fd = memfd_create("cordon-seccomp", MFD_CLOEXEC)) == -1)
		xasprintf(cause, "memfd_create: %s", strerror(errno));
	return fd;
}

/*
 * Builds the filter into fd with libseccomp, ready for sysfilter_apply();
 * returns 0, or -1 with *cause set (caller frees).
 * With SYSF_UNIX_DENY, no Unix socket can reach a path or an abstract
 * name; with SYSF_UNIX_NOTIFY, only through cordon run's connect
 * (notify.c).  With renames, rename(2), renameat(2) and renameat2(2) go
 * to cordon run too, for the protected git configs (gitwrite.c).  With
 * paused (a session whose processes are stopped between commands), no
 * SIGCONT can be arranged for later (sysfilter_paused).  libseccomp
 * takes 0.3 ms for it, so it runs when cordon is built, once per variant
 * (sysfilter_gen.c); cordon run writes the program built then
 * (sysfilter_prog.c).
 */
int
sysfilter_build(int fd, enum sysfilter_unix unix_mode, bool renames,
    bool paused, char **cause)
{
	scmp_filter_ctx		 ctx;
	const uint32_t		 eperm = SCMP_ACT_ERRNO(EPERM);
	size_t			 i;
	int			 rc;

	*cause = NULL;
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		xasprintf(cause, "seccomp_init failed");
		return -1;
	}
	/* Other ABIs (x32, i386 through int 0x80) get EPERM as a whole. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, eperm)) < 0)
		goto fail_rc;
	/*
	 * The rules as a binary tree of syscall numbers, not a list: the
	 * same decisions, and the kernel's load of the program (which runs
	 * it once for each syscall number, for its cache) takes half the
	 * time, at each command.
	 */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0)
		goto fail_rc;

	for (i = 0; i < nitems(denied); i++)
		if (sysfilter_rule(ctx, eperm, denied[i], 0, NULL, cause) == -1)
			goto fail;
	if (sysfilter_namespaces(ctx, cause) == -1 ||
	    sysfilter_tty(ctx, cause) == -1 ||
	    sysfilter_families(ctx, cause) == -1 ||
	    (paused && sysfilter_paused(ctx, cause) == -1))
		goto fail;
	if (unix_mode != SYSF_UNIX_ALLOW && sysfilter_unix(ctx,
	    unix_mode == SYSF_UNIX_NOTIFY, cause) == -1)
		goto fail;
	if (renames && (sysfilter_rule(ctx, SCMP_ACT_NOTIFY, "rename", 0,
	    NULL, cause) == -1 || sysfilter_rule(ctx, SCMP_ACT_NOTIFY,
	    "renameat", 0, NULL, cause) == -1 || sysfilter_rule(ctx,
	    SCMP_ACT_NOTIFY, "renameat2", 0, NULL, cause) == -1))
		goto fail;
	if ((rc = seccomp_export_bpf(ctx, fd)) < 0)
		goto fail_rc;
	seccomp_release(ctx);
	return 0;
fail_rc:
	xasprintf(cause, "building the seccomp filter: %s", strerror(-rc));
fail:
	seccomp_release(ctx);
	return -1;
}
