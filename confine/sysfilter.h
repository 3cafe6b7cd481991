/*
 * sysfilter.h: the command's seccomp program (sysfilter.c), built by
 * cordon run on the host before the clone; the sandbox loads it last
 * (sandbox/sysfilter_apply.c).
 */
#ifndef CORDON_SYSFILTER_H
#define CORDON_SYSFILTER_H

#include <stdbool.h>

/* sysfilter.c: the seccomp filter, built before fork, loaded last. */
enum sysfilter_unix {
	SYSF_UNIX_DENY,		/* no Unix socket reaches a path */
	SYSF_UNIX_NOTIFY,	/* stream and seqpacket; connect(2) goes to */
				/* cordon run (notify.c) */
	SYSF_UNIX_ALLOW
};

int	sysfilter_memfd(char **);
int	sysfilter_write(int, enum sysfilter_unix, bool, bool, char **);

#endif
