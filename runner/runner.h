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

/*
 * fsplan.c: the mount plan of a run, from the policy's filesystem lists
 * and what is on disk.  Pure planning: it reads the tree (lstat,
 * readlink, a bounded scan for repositories) and mounts nothing.
 *
 * The runner applies fp_ops in order on a new root that starts
 * read-only.  Each op's source is the host's tree as it was before the
 * first op (open_tree(2) it first, or bind from the old root as bwrap
 * does); its target is the same path in the tree being built.  Paths
 * are resolved: no component is a symlink, except the last one of an
 * FS_PIN_LINK.  The plan is only as good as the tree it was made from:
 * the runner mounts through descriptors opened without following
 * symlinks (openat2 RESOLVE_NO_SYMLINKS) and refuses if one appears.
 *
 * The enum is in order of strictness: two rules on one path leave the
 * stricter, so a workspace layer's read_only or deny narrows a write.
 */
enum fs_kind {
	FS_RW,		/* bind the path onto itself, writable, recursive */
	FS_RO,		/* bind the path onto itself, read-only, recursive */
	FS_PIN_LINK,	/* a symlink in a writable place on the way to a */
			/* protected path: cover the link itself so it    */
			/* cannot be replaced; if that fails, do not run  */
	FS_BLOCK,	/* a protected path that does not exist: make an */
			/* empty directory here for the run, cover it     */
			/* read-only, remove it after the run             */
	FS_HIDE_DIR,	/* cover a directory with an empty read-only tmpfs */
	FS_HIDE_FILE	/* cover a non-directory with an empty read-only file */
};

/*
 * An FS_HIDE_DIR with fo_nkeep > 0 has write roots below it (always
 * FS_RW, later in fp_ops): before making its tmpfs read-only the runner
 * creates, for each, the mount point in the tmpfs (a directory if its
 * fo_dir, else an empty file; parents as directories).
 */
struct fs_op {
	char		*fo_path;	/* absolute, resolved */
	char		*fo_why;	/* pi_from, or "protected: ..." */
	enum fs_kind	 fo_kind;
	bool		 fo_dir;	/* a directory (FS_BLOCK: to be) */
	size_t		*fo_keep;	/* FS_HIDE_DIR: indices in fp_ops */
	size_t		 fo_nkeep;
};

#define FSPLAN_SCAN_MAX		100000	/* directory entries, in all roots */

struct fsplan {
	struct fs_op	*fp_ops;	/* in the order to apply */
	size_t		 fp_nops;
	char		**fp_notes;	/* for the user: rules left out, the */
	size_t		 fp_nnotes;	/* scan bound; escaped, one line each */
	size_t		 fp_scanned;	/* directory entries read by the scan */
};

struct fsplan_in {
	const struct policy	*fi_policy;	/* the filesystem lists */
	size_t			 fi_scan_max;	/* 0: FSPLAN_SCAN_MAX */
};

int		 fsplan_build(const struct fsplan_in *, struct fsplan *,
		    char **);
void		 fsplan_clear(struct fsplan *);
const char	*fsplan_kind_name(enum fs_kind);

#endif
