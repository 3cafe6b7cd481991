/*
 * sysfilter.h: the command's seccomp program, built with libseccomp when
 * cordon is built (sysfilter.c, sysfilter_gen.c) and written by cordon
 * run on the host before the clone (sysfilter_prog.c); the sandbox loads
 * it last (sandbox/sysfilter_apply.c).
 */
#ifndef CORDON_SYSFILTER_H
#define CORDON_SYSFILTER_H

#include <stdbool.h>
#include <stddef.h>

/* sysfilter.c: the seccomp filter, built with libseccomp, loaded last. */
enum sysfilter_unix {
	SYSF_UNIX_DENY,		/* no Unix socket reaches a path */
	SYSF_UNIX_NOTIFY,	/* stream and seqpacket; connect(2) goes to */
				/* cordon run (notify.c) */
	SYSF_UNIX_ALLOW
};

int	sysfilter_memfd(char **);
int	sysfilter_build(int, enum sysfilter_unix, bool, bool, char **);

/*
 * sysfilter_prog.c: the programs sysfilter_build made when cordon was
 * built, one per variant (unix mode, renames, paused), in
 * SYSFILTER_PROG's order (sysfilter_gen.c writes the table).
 */
#define SYSFILTER_NPROGS	12
#define SYSFILTER_PROG(unix, renames, paused) \
	((size_t)(unix) * 4 + ((renames) ? 2 : 0) + ((paused) ? 1 : 0))
struct sysfilter_prog {
	const unsigned char	*sp_bpf;
	size_t			 sp_len;
};
extern const struct sysfilter_prog sysfilter_progs[SYSFILTER_NPROGS];

int	sysfilter_prog_write(int, enum sysfilter_unix, bool, bool, char **);

#endif
