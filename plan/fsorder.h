/*
 * fsorder.h: the last step of the mount plan (fsorder.c): the candidate
 * ops the planner gathered (fsplan.c) ordered, merged and pruned into
 * the plan's ops.
 */
#ifndef CORDON_FSORDER_H
#define CORDON_FSORDER_H

#include <stdbool.h>
#include <stddef.h>

#include "plan/plan.h"

/* A candidate op; the planner sets c_op and c_show, the rest is ours. */
struct fsorder_cand {
	struct fs_op	 c_op;
	bool		 c_show;	/* fi_show: kept below a HIDE_DIR */
	size_t		 c_seq;		/* order of arrival */
	size_t		 c_depth;	/* components in the path */
	bool		 c_kept;
	size_t		 c_parent;	/* kept HIDE_DIR above, or SIZE_MAX */
	size_t		 c_new;		/* index in fp_ops */
};

/* The candidates, in the order they came. */
struct fsorder {
	struct fsorder_cand	*o_v;
	size_t			 o_n;
};

/* What the ordering needs besides the candidates. */
struct fsorder_in {
	const char *const	*oi_roots;	/* existing writable folders */
	size_t			 oi_nroots;
	const char *const	*oi_scratch;	/* folders that may be */
	size_t			 oi_nscratch;	/* scratch layers */
	struct fscache		*oi_cache;	/* the plan's, or NULL */
};

struct fsorder_cand *fsorder_add(struct fsorder *, char *, enum fs_kind,
		    const char *, bool);
void		 fsorder_run(struct fsorder *, const struct fsorder_in *,
		    struct fsplan *);
void		 fsorder_clear(struct fsorder *);

#endif
