/*
 * runner.h: `cordon run`, the sandbox.  One block per source file, in the
 * order a run uses them.  The system call filter, Landlock and the
 * environment exist so far; the run itself (namespaces, mounts,
 * supervision) comes next.
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

/* env.c: the sandboxed command's environment, from host and policy. */
#define ENV_MAX_VARS	4096
#define ENV_MAX_BYTES	(1024 * 1024)	/* "NAME=value" and NUL, summed */

struct policy;

struct env_proxy {
	int	ep_port;	/* the proxy on 127.0.0.1, HTTP and SOCKS5 */
};

char	**env_build(const struct policy *, char *const *,
	    const struct env_proxy *, char **);
void	  env_free(char **);

#endif
