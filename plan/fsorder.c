/*
 * fsorder.c: the last step of the mount plan: candidate ops in, the
 * plan's ops out (fsorder.h), nothing read but the identity of what
 * each bind's source is, as the plan saw it (fscache.c).  The planner (fsplan.c) has gathered candidate
 * ops; here they get the pins that keep a protected path from being
 * renamed away (fsorder_pins), then are
 * ordered most specific last: by depth (components), then by path.  At
 * one path the stricter kind stays (enum fs_kind is in
 * order of strictness; among equals the first rule's fo_why).  An op is
 * kept only where it changes something, judged by the nearest kept op
 * above it (or the read-only root):
 *
 *	below	RW, PIN_DIR	RO	HIDE_DIR
 *	RW	-		kept	kept, listed in the HIDE_DIR's fo_keep
 *	PIN_DIR	kept		-	-
 *	RO	kept		-	-
 *	HIDE_*	kept		kept	-
 *	BLOCK	kept		-	-
 *	PIN	kept		-	-
 *
 * So a write root may reopen a folder inside a hidden or read-only one
 * (write /r, deny /r/a, write /r/a/b: b is writable, the rest of a is
 * hidden), but a read_only or deny rule, which the untrusted workspace
 * layer may add, never shows what a deny hid.  Only cordon itself does,
 * for a file of fsplan_in's fi_show: an RO kept below a HIDE_DIR.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fscache.h"
#include "plan/fsorder.h"
#include "plan/plan.h"

/* For the bsearch of a path among the candidates. */
struct fsorder_key {
	const char	*k_path;
	size_t		 k_i;
};

/* Most specific last: depth, path, the stricter kind, arrival. */
static int
fsorder_cand_cmp(const void *a0, const void *b0)
{
	const struct fsorder_cand	*a = a0, *b = b0;
	int			 c;

	if (a->c_depth != b->c_depth)
		return a->c_depth < b->c_depth ? -1 : 1;
	if ((c = strcmp(a->c_op.fo_path, b->c_op.fo_path)) != 0)
		return c;
	if (a->c_op.fo_kind != b->c_op.fo_kind)
		return a->c_op.fo_kind > b->c_op.fo_kind ? -1 : 1;
	return a->c_seq < b->c_seq ? -1 : a->c_seq > b->c_seq;
}

static int
fsorder_key_cmp(const void *a0, const void *b0)
{
	const struct fsorder_key	*a = a0, *b = b0;

	return strcmp(a->k_path, b->k_path);
}

/* Adds a candidate op; takes path.  Returns it, for the caller to mark. */
struct fsorder_cand *
fsorder_add(struct fsorder *o, char *path, enum fs_kind kind, const char *why,
    bool dir)
{
	struct fsorder_cand	*c;
	const char		*p;

	o->o_v = xreallocarray(o->o_v, o->o_n + 1, sizeof(*o->o_v));
	c = &o->o_v[o->o_n];
	memset(c, 0, sizeof(*c));
	c->c_op.fo_path = path;
	c->c_op.fo_why = xstrdup(why);
	c->c_op.fo_kind = kind;
	c->c_op.fo_dir = dir;
	c->c_seq = o->o_n++;
	c->c_parent = SIZE_MAX;
	for (p = path; *p != '\0'; p++) {
		if (*p == '/' && p[1] != '\0')
			c->c_depth++;
	}
	return c;
}

/* Frees what a candidate holds. */
static void
fsorder_cand_clear(struct fsorder_cand *c)
{
	free(c->c_op.fo_path);
	free(c->c_op.fo_why);
	c->c_op.fo_path = c->c_op.fo_why = NULL;
}

/* Frees the candidates and empties the list. */
void
fsorder_clear(struct fsorder *o)
{
	size_t	 i;

	for (i = 0; i < o->o_n; i++)
		fsorder_cand_clear(&o->o_v[i]);
	free(o->o_v);
	o->o_v = NULL;
	o->o_n = 0;
}

/*
 * Whether an op of kind is kept below the nearest kept op of kind
 * above (FS_RO for the root).  In a scratch layer (no op above, below
 * a folder that may be one), writes succeed, so a protected path that
 * exists is bound read-only on top as below a writable root: a write to
 * ~/.bashrc is refused, not sent into the layer.  One that is missing
 * is not blocked there: a block costs a mount, and what the command
 * makes in its place is discarded with the layer and listed.
 */
static bool
fsorder_keep(enum fs_kind kind, enum fs_kind above, bool scratch)
{
	bool	 rw = above == FS_RW || above == FS_PIN_DIR;

	switch (kind) {
	case FS_RW:
		return above == FS_RO || above == FS_HIDE_DIR;
	case FS_PIN_DIR:
	case FS_BLOCK:
		return rw;
	case FS_RO:
	case FS_PIN_LINK:
		return rw || scratch;
	case FS_HIDE_DIR:
	case FS_HIDE_FILE:
		return rw || above == FS_RO;
	case FS_SKIP:
		break;
	}
	return false;
}

/*
 * Renaming a folder moves the mounts below it along: `mv .github x;
 * mkdir -p .github/workflows` would replace a read-only
 * .github/workflows, and `mv vendor vendor.orig` a protected
 * vendor/lib/.git.  So every folder between a writable root and a path
 * protected in it is pinned: bound onto itself, still writable, but a
 * mount point, which rename(2) and rmdir(2) refuse (EBUSY).  Pruning
 * drops the pins that are not under a writable root.
 */
static void
fsorder_pins(struct fsorder *o, const struct fsorder_in *in)
{
	size_t	 i, j, n = o->o_n;
	char	*up, *slash;
	bool	 below;

	for (i = 0; i < n; i++) {
		if (o->o_v[i].c_op.fo_kind == FS_RW ||
		    o->o_v[i].c_op.fo_kind == FS_PIN_DIR)
			continue;
		up = xstrdup(o->o_v[i].c_op.fo_path);
		while ((slash = strrchr(up, '/')) != NULL && slash != up) {
			*slash = '\0';
			for (below = false, j = 0; j < in->oi_nroots; j++) {
				if (strcmp(up, in->oi_roots[j]) == 0) {
					below = false;
					break;
				}
				below = below || path_is_below(up,
				    in->oi_roots[j]);
			}
			if (below)
				fsorder_add(o, xstrdup(up), FS_PIN_DIR,
				    "pinned: a protected path is below", true);
		}
		free(up);
	}
}

/*
 * What a bind's source is, as the plan saw it (the cache c), so that
 * the mount, which opens the path again in the sandbox, can refuse if
 * something else is there by then (a folder renamed into its place
 * between the plan and the mounts).
 */
static void
fsorder_identify(struct fs_op *op, struct fscache *c)
{
	struct stat	 st;

	if ((op->fo_kind != FS_RW && op->fo_kind != FS_RO &&
	    op->fo_kind != FS_PIN_DIR) ||
	    fscache_lstat(c, op->fo_path, &st) == -1)
		return;
	op->fo_id.fm_dev = st.st_dev;
	op->fo_id.fm_ino = st.st_ino;
	op->fo_has_id = true;
}

/* Whether path is in (below) a folder that may be a scratch layer. */
static bool
fsorder_in_scratch(const struct fsorder_in *in, const char *path)
{
	size_t	 i;

	for (i = 0; i < in->oi_nscratch; i++)
		if (strcmp(path, in->oi_scratch[i]) != 0 &&
		    path_is_below(path, in->oi_scratch[i]))
			return true;
	return false;
}

/* Orders the candidates and keeps, of those on one path, the first. */
static void
fsorder_merge(struct fsorder *o)
{
	struct fsorder_cand	*cands = o->o_v;
	size_t		 i, n = 0;

	qsort(cands, o->o_n, sizeof(*cands), fsorder_cand_cmp);
	for (i = 0; i < o->o_n; i++) {
		if (n > 0 && strcmp(cands[n - 1].c_op.fo_path,
		    cands[i].c_op.fo_path) == 0) {
			fsorder_cand_clear(&cands[i]);
			continue;
		}
		cands[n++] = cands[i];
	}
	o->o_n = n;
}

/*
 * The nearest kept candidate above c, found by path among keys (nkeys,
 * sorted): its kind in *above (FS_RO, the root's, when there is none),
 * and c's c_parent set when it is a HIDE_DIR.  Returns whether there is
 * one.
 */
static bool
fsorder_above(struct fsorder *o, const struct fsorder_key *keys, size_t nkeys,
    struct fsorder_cand *c, enum fs_kind *above)
{
	const struct fsorder_key	*k;
	struct fsorder_key		 key;
	char			*up, *slash;
	bool			 found = false;

	*above = FS_RO;
	up = xstrdup(c->c_op.fo_path);
	while (strcmp(up, "/") != 0) {
		slash = strrchr(up, '/');
		if (slash == up)
			slash[1] = '\0';
		else
			*slash = '\0';
		key.k_path = up;
		k = bsearch(&key, keys, nkeys, sizeof(*keys), fsorder_key_cmp);
		if (k != NULL && o->o_v[k->k_i].c_kept) {
			found = true;
			*above = o->o_v[k->k_i].c_op.fo_kind;
			if (*above == FS_HIDE_DIR)
				c->c_parent = k->k_i;
			break;
		}
	}
	free(up);
	return found;
}

/*
 * Marks the candidates that change something (c_kept) and numbers them
 * (c_new).  Returns how many are kept.
 */
static size_t
fsorder_prune(struct fsorder *o, const struct fsorder_in *in)
{
	struct fsorder_cand	*c;
	struct fsorder_key	*keys;
	enum fs_kind	 above;
	size_t		 i, n = 0;
	bool		 scratch;

	keys = xcalloc(o->o_n, sizeof(*keys));
	for (i = 0; i < o->o_n; i++) {
		keys[i].k_path = o->o_v[i].c_op.fo_path;
		keys[i].k_i = i;
	}
	qsort(keys, o->o_n, sizeof(*keys), fsorder_key_cmp);

	/* Ancestors come first (lower depth): their fate is known. */
	for (i = 0; i < o->o_n; i++) {
		c = &o->o_v[i];
		scratch = !fsorder_above(o, keys, o->o_n, c, &above) &&
		    fsorder_in_scratch(in, c->c_op.fo_path);
		c->c_kept = fsorder_keep(c->c_op.fo_kind, above, scratch) ||
		    (c->c_show && above == FS_HIDE_DIR);
		if (c->c_kept)
			c->c_new = n++;
	}
	free(keys);
	return n;
}

/*
 * Moves the n kept candidates' ops into plan->fp_ops, each kept below a
 * HIDE_DIR listed in that one's fo_keep, identified through the cache
 * fc; frees the others.
 */
static void
fsorder_emit(struct fsorder *o, size_t n, struct fscache *fc,
    struct fsplan *plan)
{
	struct fsorder_cand	*c;
	struct fs_op	*parent;
	size_t		 i;

	plan->fp_ops = xcalloc(n == 0 ? 1 : n, sizeof(*plan->fp_ops));
	for (i = 0; i < o->o_n; i++) {
		c = &o->o_v[i];
		if (!c->c_kept) {
			fsorder_cand_clear(c);
			continue;
		}
		plan->fp_ops[c->c_new] = c->c_op;
		memset(&c->c_op, 0, sizeof(c->c_op));
		fsorder_identify(&plan->fp_ops[c->c_new], fc);
		if (c->c_parent == SIZE_MAX)
			continue;
		parent = &plan->fp_ops[o->o_v[c->c_parent].c_new];
		parent->fo_keep = xreallocarray(parent->fo_keep,
		    parent->fo_nkeep + 1, sizeof(*parent->fo_keep));
		parent->fo_keep[parent->fo_nkeep++] = c->c_new;
	}
	plan->fp_nops = n;
}

/*
 * Orders the candidates, merges those on one path and keeps those that
 * change something, filling plan->fp_ops; empties o.
 */
void
fsorder_run(struct fsorder *o, const struct fsorder_in *in,
    struct fsplan *plan)
{
	struct fscache	*fc;

	if (o->o_n > 0) {
		fc = in->oi_cache != NULL ? in->oi_cache : fscache_new();
		fsorder_pins(o, in);
		fsorder_merge(o);
		fsorder_emit(o, fsorder_prune(o, in), fc, plan);
		if (in->oi_cache == NULL)
			fscache_free(fc);
	}
	fsorder_clear(o);
}
