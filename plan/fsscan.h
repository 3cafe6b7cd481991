/*
 * fsscan.h: the scan of the writable roots for repositories and for
 * what makes git run a program there (fsscan.c).  Its findings are plain
 * data: the planner (fsplan.c) turns them into candidate ops.
 */
#ifndef CORDON_FSSCAN_H
#define CORDON_FSSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "plan/fslist.h"
#include "plan/fspath.h"

/*
 * A path to protect (read-only, or blocked when missing), and where it
 * leads: each link met is to be pinned.
 */
struct fsscan_find {
	struct fspath	 sf_at;
	const char	*sf_why;	/* the op's fo_why; static */
	bool		 sf_file;	/* missing: blocked by a file */
	bool		 sf_dot;	/* ... that reads "./" */
	bool		 sf_gitdir;	/* a git directory: only its code, */
					/* found after it, is protected */
};

struct fsscan {
	struct fsscan_find *fs_finds;	/* in the order found */
	size_t		 fs_nfinds;
	struct fs_mark	*fs_marks;	/* repositories found, by identity */
	size_t		 fs_nmarks;
	char		**fs_notes;	/* for the user; escaped */
	size_t		 fs_nnotes;
	size_t		 fs_scanned;	/* directory entries read */
	struct fscache	*fs_cache;	/* during fsscan_run() only */
	struct fslist	*fs_lists;	/* ... and what it listed, or NULL */
	time_t		 fs_taken;	/* when it began */
};

void	fsscan_run(struct fscache *, struct fslist *, const char *const *,
	    size_t, size_t, struct fsscan *);
void	fsscan_clear(struct fsscan *);

#endif
