/*
 * nonft.c: runs a command as on a kernel without nf_tables.
 *
 *   nonft COMMAND [ARG...]
 *	Installs a seccomp filter under which socket(AF_NETLINK, ...,
 *	NETLINK_NETFILTER) fails with EPROTONOSUPPORT, what such a kernel
 *	answers, then executes COMMAND.  The filter is inherited by every
 *	process the command makes, a sandbox's PID 1 included: the tests
 *	use it to see cordon run fail closed when it cannot capture.
 */
#include <sys/prctl.h>
#include <sys/socket.h>

#include <linux/netlink.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

int
main(int argc, char *argv[])
{
	scmp_filter_ctx	 ctx;

	if (argc < 2) {
		fprintf(stderr, "usage: nonft command [arg ...]\n");
		return 2;
	}
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT),
	    SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
	    SCMP_A2(SCMP_CMP_EQ, NETLINK_NETFILTER)) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    seccomp_load(ctx) != 0) {
		fprintf(stderr, "nonft: cannot install the filter\n");
		return 1;
	}
	seccomp_release(ctx);
	execvp(argv[1], argv + 1);
	fprintf(stderr, "nonft: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
