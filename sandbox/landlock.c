/*
 * landlock.c: Landlock, the sandbox's second filesystem layer.
 *
 * The mount namespace is the first layer (read-only binds, hidden
 * paths); Landlock restricts the same process again from the inside, so a
 * mistake in one does not open the other.  The kernel's ABI version is
 * probed and only the rights it knows are asked for (the distribution's
 * headers may be older than the kernel, so the newer constants are
 * defined here).  Where the kernel has them (ABI 6), abstract Unix
 * sockets and signals are scoped to the sandbox: it can neither connect
 * to a host's abstract socket nor signal a host process.
 *
 * Runs in: the command, before exec (command.c); the host only
 *   probes the kernel.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/landlock.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/xmalloc.h"
#include "sandbox/sandbox.h"

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)	/* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)	/* ABI 5 */
#endif
#define LL_SCOPE_ABSTRACT_UNIX		(1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL			(1ULL << 1)	/* ABI 6 */

/* The ruleset attribute as ABI 6 knows it; older ABIs read a prefix. */
struct ll_ruleset_attr {
	uint64_t	 handled_access_fs;
	uint64_t	 handled_access_net;
	uint64_t	 scoped;
};

/* Rights on files (what a rule on a non-directory may hold). */
#define LL_FILE_RIGHTS	(LANDLOCK_ACCESS_FS_EXECUTE | \
			    LANDLOCK_ACCESS_FS_WRITE_FILE | \
			    LANDLOCK_ACCESS_FS_READ_FILE | \
			    LANDLOCK_ACCESS_FS_TRUNCATE | \
			    LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define LL_READ_RIGHTS	(LANDLOCK_ACCESS_FS_EXECUTE | \
			    LANDLOCK_ACCESS_FS_READ_FILE | \
			    LANDLOCK_ACCESS_FS_READ_DIR | \
			    LANDLOCK_ACCESS_FS_IOCTL_DEV)

/*
 * Returns the kernel's Landlock ABI version, or 0 when it has none (or
 * when CORDON_NO_LANDLOCK=1 says to act as if: how the tests check that
 * a kernel without it is refused; it can only take a layer away, and
 * cordon run then refuses unless told --allow-no-landlock).
 */
int
landlock_abi(void)
{
	const char	*off = getenv("CORDON_NO_LANDLOCK");
	long		 abi;

	if (off != NULL && strcmp(off, "1") == 0)
		return 0;
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
}

/* Every filesystem right the given ABI handles. */
static uint64_t
landlock_fs_rights(int abi)
{
	uint64_t	 rights = (1ULL << 13) - 1;	/* ABI 1 */

	if (abi >= 2)
		rights |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return rights;
}

/*
 * A ruleset for the rules: everything is denied but reading below the
 * rules' paths, and writing below those with ll_write.  A path that does
 * not exist is left out (nothing can be done there, which is tighter).
 * With scope, and an ABI that has it, abstract Unix sockets and signals
 * stay inside.  The paths are resolved now: a ruleset built once (a
 * session's PID 1, sandbox_session.c) holds the folders as they were
 * then.  Returns the ruleset's descriptor (close-on-exec), or -1 with
 * *cause set; without Landlock in the kernel, -1 too.
 */
int
landlock_ruleset(const struct landlock_rule *rules, size_t n, bool scope,
    char **cause)
{
	struct ll_ruleset_attr			 attr;
	struct landlock_path_beneath_attr	 pb;
	struct stat				 st;
	uint64_t				 all;
	size_t					 i, attrlen;
	int					 abi, rfd, fd;

	*cause = NULL;
	if ((abi = landlock_abi()) == 0) {
		xasprintf(cause, "this kernel has no Landlock (it needs Linux "
		    "5.13 or later, with lsm=landlock)");
		return -1;
	}
	all = landlock_fs_rights(abi);
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = all;
	attrlen = sizeof(attr.handled_access_fs);
	if (scope && abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		attrlen = sizeof(attr);
	}
	if ((rfd = (int)syscall(SYS_landlock_create_ruleset, &attr, attrlen,
	    0)) == -1) {
		xasprintf(cause, "landlock_create_ruleset: %s",
		    strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		if ((fd = open(rules[i].lr_path, O_PATH | O_CLOEXEC)) == -1) {
			if (errno == ENOENT)
				continue;
			xasprintf(cause, "%s: %s", rules[i].lr_path,
			    strerror(errno));
			goto fail;
		}
		if (fstat(fd, &st) == -1) {
			xasprintf(cause, "%s: %s", rules[i].lr_path,
			    strerror(errno));
			close(fd);
			goto fail;
		}
		pb.allowed_access = rules[i].lr_write ? all :
		    (LL_READ_RIGHTS & all);
		if (!S_ISDIR(st.st_mode))
			pb.allowed_access &= LL_FILE_RIGHTS;
		pb.parent_fd = fd;
		if (syscall(SYS_landlock_add_rule, rfd,
		    LANDLOCK_RULE_PATH_BENEATH, &pb, 0) == -1) {
			xasprintf(cause, "landlock_add_rule %s: %s",
			    rules[i].lr_path, strerror(errno));
			close(fd);
			goto fail;
		}
		close(fd);
	}
	return rfd;
fail:
	close(rfd);
	return -1;
}

/*
 * Restricts this process and its children to the ruleset rfd, with
 * PR_SET_NO_NEW_PRIVS first.  Returns 0, or -1 with *cause set.
 */
int
landlock_restrict(int rfd, char **cause)
{
	*cause = NULL;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		xasprintf(cause, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return -1;
	}
	if (syscall(SYS_landlock_restrict_self, rfd, 0) == -1) {
		xasprintf(cause, "landlock_restrict_self: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Restricts this process and its children to the rules
 * (landlock_ruleset).  Sets PR_SET_NO_NEW_PRIVS.  Returns 0, or -1 with
 * *cause set; without Landlock in the kernel, -1 too: the caller decides
 * whether to go on without it, and says so.
 */
int
landlock_apply(const struct landlock_rule *rules, size_t n, bool scope,
    char **cause)
{
	int	 rfd, rc;

	if ((rfd = landlock_ruleset(rules, n, scope, cause)) == -1)
		return -1;
	rc = landlock_restrict(rfd, cause);
	close(rfd);
	return rc;
}
