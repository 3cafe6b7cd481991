/*
 * plan.h: the mount plan, a library with no process in it.  fsplan.c is
 * its face, below; fspath.h, fsscan.h and fsorder.h are the steps of its
 * pipeline (fspath.c, fsscan.c, fsorder.c), for it and their tests.
 */
#ifndef CORDON_PLAN_H
#define CORDON_PLAN_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

struct fscache;
struct policy;

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
	FS_PIN_DIR,	/* a folder in a writable root on the way to a   */
			/* protected path: bound onto itself, writable,   */
			/* so that it cannot be renamed away (a mount     */
			/* point cannot) and the path replaced            */
	FS_RO,		/* bind the path onto itself, read-only, recursive */
	FS_PIN_LINK,	/* a symlink in a writable place on the way to a */
			/* protected path: cover the link itself so it    */
			/* cannot be replaced; if that fails, do not run  */
	FS_BLOCK,	/* a protected path that does not exist: make an */
			/* empty directory here for the run, cover it     */
			/* read-only, remove it after the run             */
	FS_HIDE_DIR,	/* cover a directory with an empty read-only tmpfs */
	FS_HIDE_FILE,	/* cover a non-directory with an empty read-only file */
	FS_SKIP		/* not made by the planner: an FS_BLOCK the runner */
			/* found needless (a read-only filesystem)         */
};

/* A file the plan found, by identity. */
struct fs_mark {
	dev_t		 fm_dev;
	ino_t		 fm_ino;
};

/*
 * An FS_HIDE_DIR with fo_nkeep > 0 has write roots (FS_RW) or files of
 * fi_show (FS_RO) below it, later in fp_ops: before making its tmpfs
 * read-only the runner creates, for each, the mount point in the tmpfs (a directory if its
 * fo_dir, else an empty file; parents as directories).
 */
struct fs_op {
	char		*fo_path;	/* absolute, resolved */
	char		*fo_why;	/* pi_from, or "protected: ..." */
	enum fs_kind	 fo_kind;
	bool		 fo_dir;	/* a directory (FS_BLOCK: to be) */
	bool		 fo_dot;	/* FS_BLOCK file: reads "./", not empty */
	size_t		*fo_keep;	/* FS_HIDE_DIR: indices in fp_ops */
	size_t		 fo_nkeep;
	struct fs_mark	 fo_id;		/* binds: what the plan saw there, */
	bool		 fo_has_id;	/* which the mount must find again */
};

/*
 * fo_why of the ops that protect what makes git run a program or look
 * elsewhere (fsscan.c): gitwrite.c finds the protected configs by it.
 */
#define FS_WHY_GITCODE	"protected: what makes git run a program or look " \
			    "elsewhere"

#define FSPLAN_SCAN_MAX		100000	/* directory entries, in all roots */

struct fslist;

struct fsplan {
	struct fs_op	*fp_ops;	/* in the order to apply */
	size_t		 fp_nops;
	struct fs_mark	*fp_marks;	/* repositories protected: their */
	size_t		 fp_nmarks;	/* .git, .hg, bare folder, gitdir */
	char		**fp_notes;	/* for the user: rules left out, the */
	size_t		 fp_nnotes;	/* scan bound; escaped, one line each */
	char		**fp_watch;	/* a missing .cordon in a writable */
	size_t		 fp_nwatch;	/* root: not blocked, watched (guard) */
	char		**fp_host;	/* missing host_config paths in a */
	size_t		 fp_nhost;	/* writable root: watched (hostcfg.c) */
	size_t		 fp_scanned;	/* directory entries read by the scan */
	struct fslist	*fp_lists;	/* the folders it listed (fslist.c), */
					/* for the check's walk */
};

struct fsplan_in {
	const struct policy	*fi_policy;	/* the filesystem lists */
	size_t			 fi_scan_max;	/* 0: FSPLAN_SCAN_MAX */
	const char		*fi_workspace;	/* resolved, or NULL */
	const char		*fi_path;	/* the caller's PATH, or NULL */
	const char *const	*fi_show;	/* files shown read-only even */
	size_t			 fi_nshow;	/* in a hidden folder */
	const char *const	*fi_scratch;	/* folders that may be scratch */
	size_t			 fi_nscratch;	/* layers: protect below them */
	struct fscache		*fi_cache;	/* the run's (fscache.c), or */
						/* NULL: the plan's own */
};

int		 fsplan_build(const struct fsplan_in *, struct fsplan *,
		    char **);
void		 fsplan_clear(struct fsplan *);
const char	*fsplan_kind_name(enum fs_kind);

#endif
