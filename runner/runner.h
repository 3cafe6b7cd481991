/*
 * runner.h: `cordon run`, the sandbox.  One block per source file, in the
 * order a run uses them.  The system call filter and Landlock exist so
 * far; the run itself (namespaces, mounts, supervision) comes next.
 */
#ifndef CORDON_RUNNER_H
#define CORDON_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

/* sysfilter.c: the seccomp filter, built before fork, loaded last. */
int	sysfilter_new(char **);
int	sysfilter_apply(int, char **);

/* landlock.c: the second filesystem layer, and scoping. */
struct landlock_rule {
	const char	*lr_path;
	bool		 lr_write;	/* else read (and execute) only */
};

int	landlock_abi(void);
int	landlock_apply(const struct landlock_rule *, size_t, bool, char **);

#endif
