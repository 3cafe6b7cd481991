/*
 * sysfilter_prog.c: the command's seccomp program, as cordon was built
 * with it.
 *
 * libseccomp takes 0.3 ms to build the filter, at every run, on the
 * path to the command.  Its program depends only on the variant (the
 * Unix socket mode, renames judged or not, a paused session or not) and
 * on libseccomp itself, so sysfilter_gen.c builds all twelve when cordon
 * is built (sysfilter_build, sysfilter.c) and writes them into a table;
 * here cordon run copies the one it needs into the memfd the sandbox
 * loads.  test_sysfilter checks that each is what sysfilter_build makes
 * on the machine that runs the tests.
 *
 * Runs in: cordon run on the host, after the clone, while PID 1 mounts.
 */
#include <sys/types.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "confine/sysfilter.h"
#include "lib/xmalloc.h"

/*
 * Writes the program of the variant into fd (sysfilter_memfd), ready for
 * sysfilter_apply(); returns 0, or -1 with *cause set (caller frees).
 */
int
sysfilter_prog_write(int fd, enum sysfilter_unix unix_mode, bool renames,
    bool paused, char **cause)
{
	const struct sysfilter_prog *p;
	ssize_t			 n;

	*cause = NULL;
	p = &sysfilter_progs[SYSFILTER_PROG(unix_mode, renames, paused)];
	if ((n = write(fd, p->sp_bpf, p->sp_len)) == (ssize_t)p->sp_len)
		return 0;
	xasprintf(cause, "writing the seccomp program: %s", n == -1 ?
	    strerror(errno) : "a short write");
	return -1;
}
