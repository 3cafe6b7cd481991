/*
 * runner.h: `cordon run`, the sandbox.  One block per source file, in the
 * order a run uses them.  Only the system call filter exists so far.
 */
#ifndef CORDON_RUNNER_H
#define CORDON_RUNNER_H

/* sysfilter.c: the seccomp filter, built before fork, loaded last. */
int	sysfilter_new(char **);
int	sysfilter_apply(int, char **);

#endif
