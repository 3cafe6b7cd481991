/*
 * sysfilter_apply.c: the seccomp filter's last step, run by the command
 * in the sandbox just before exec (command.c): the program that
 * sysfilter.c built on the host, loaded from its memfd, and the
 * listener, when there is one, handed to cordon run.
 *
 * Runs in: the command, before exec (command.c).
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fdpass.h"
#include "lib/xmalloc.h"
#include "sandbox/sandbox.h"

/*
 * Reads the program of fd (sysfilter_prog_write) into prog (its filter
 * allocated; sysfilter_apply frees it, a session's PID 1 keeps it for
 * every command).  Returns 0, or -1 with *cause set.
 */
int
sysfilter_apply_read(int fd, struct sock_fprog *prog, char **cause)
{
	struct stat	 st;
	void		*code;
	ssize_t		 n;

	*cause = NULL;
	if (fstat(fd, &st) == -1 || st.st_size <= 0 ||
	    st.st_size % (off_t)sizeof(struct sock_filter) != 0 ||
	    st.st_size > (off_t)(BPF_MAXINSNS * sizeof(struct sock_filter))) {
		xasprintf(cause, "the seccomp program is not usable");
		return -1;
	}
	code = xmalloc((size_t)st.st_size);
	if ((n = pread(fd, code, (size_t)st.st_size, 0)) != st.st_size) {
		xasprintf(cause, "reading the seccomp program: %s",
		    n == -1 ? strerror(errno) : "short read");
		free(code);
		return -1;
	}
	prog->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	prog->filter = code;
	return 0;
}

/*
 * Loads prog into this process, with PR_SET_NO_NEW_PRIVS first.  With
 * listener non-NULL, the filter sends calls to a listener whose
 * descriptor (close-on-exec) is put there; a call the listener has taken
 * then waits for its answer, but for a fatal signal
 * (WAIT_KILLABLE_RECV, Linux 5.19: without it, a signal would restart a
 * connect already made).  Allocates nothing (a session's command runs it
 * on PID 1's memory).  Returns 0, or -1 with *cause set.
 */
int
sysfilter_apply_load(const struct sock_fprog *prog, int *listener,
    char **cause)
{
	unsigned long	 flags;
	long		 rc;

	*cause = NULL;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		xasprintf(cause, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return -1;
	}
	if (listener == NULL)
		rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog);
	else {
		flags = SECCOMP_FILTER_FLAG_NEW_LISTENER |
		    SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
		rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags,
		    prog);
		if (rc == -1 && errno == EINVAL) {
			flags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
			rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    flags, prog);
		}
		*listener = (int)rc;
	}
	if (rc == -1) {
		if (listener != NULL && errno == EBUSY)
			xasprintf(cause, "loading the seccomp filter: another "
			    "seccomp listener is already above this process "
			    "(a container's), and the kernel allows one; run "
			    "cordon outside that container, or drop "
			    "filesystem.unix_sockets");
		else
			xasprintf(cause, "loading the seccomp filter%s: %s",
			    listener != NULL ? " with a listener (Linux 5.0 "
			    "or later)" : "", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Loads the filter from fd (sysfilter_prog_write) into this process
 * (sysfilter_apply_read, then _load).  Runs in the sandbox, last before
 * exec; the caller dies if this fails.  Returns 0, or -1 with *cause
 * set.
 */
int
sysfilter_apply(int fd, int *listener, char **cause)
{
	struct sock_fprog	 prog;
	int			 rc;

	if (sysfilter_apply_read(fd, &prog, cause) == -1)
		return -1;
	rc = sysfilter_apply_load(&prog, listener, cause);
	free(prog.filter);
	return rc;
}

/*
 * Sends the listener's descriptor on sock (SCM_RIGHTS), to cordon run.
 * Returns 0, or -1 with *cause set.
 */
int
sysfilter_apply_send_listener(int sock, int listener, char **cause)
{
	if (fdpass_send(sock, listener, "L", 1, MSG_NOSIGNAL) != 1) {
		xasprintf(cause, "handing the seccomp listener to cordon run: "
		    "%s", strerror(errno));
		return -1;
	}
	return 0;
}
