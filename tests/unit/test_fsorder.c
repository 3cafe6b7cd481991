/*
 * test_fsorder.c: the last step of the mount plan alone: candidate ops,
 * made by hand, ordered, merged, pinned and pruned into the plan's ops.
 * Nothing is read from disk but the identity of a bind's source; the
 * paths here do not exist.  Ops are compared as "kind path", in full
 * and in order.
 */
#include "unit.h"

#include <stdbool.h>
#include <stdint.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fsorder.h"
#include "plan/plan.h"

static void
add(struct fsorder *o, const char *path, enum fs_kind kind, const char *why)
{
	fsorder_add(o, xstrdup(path), kind, why, true);
}

/* Orders o into a plan, with roots and scratch folders given. */
static void
order(struct fsorder *o, const char *const *roots, size_t nroots,
    const char *const *scratch, size_t nscratch, struct fsplan *plan)
{
	struct fsorder_in	 in = { roots, nroots, scratch, nscratch, NULL };

	memset(plan, 0, sizeof(*plan));
	fsorder_run(o, &in, plan);
	assert_int_equal(o->o_n, 0);
}

/* Fails unless the plan's ops are want (NULL-terminated), in order. */
static void
expect_ops(const struct fsplan *plan, ...)
{
	va_list		 ap;
	const char	*want;
	char		*got;
	size_t		 i = 0;

	va_start(ap, plan);
	while ((want = va_arg(ap, const char *)) != NULL) {
		if (i >= plan->fp_nops)
			fail_msg("the plan ends before \"%s\"", want);
		xasprintf(&got, "%s %s",
		    fsplan_kind_name(plan->fp_ops[i].fo_kind),
		    plan->fp_ops[i].fo_path);
		if (strcmp(got, want) != 0)
			fail_msg("op %zu is \"%s\", not \"%s\"", i, got, want);
		free(got);
		i++;
	}
	va_end(ap);
	assert_int_equal(plan->fp_nops, i);
}

/*
 * Most specific last; at one path the stricter kind stays, among
 * equals the first's reason; a folder between a root and a protected
 * path is pinned, and nothing is pinned outside the roots.
 */
static void
test_order_merge_pins(void **state)
{
	static const char *const roots[] = { "/r" };
	struct fsorder	 o = { NULL, 0 };
	struct fsplan	 plan;

	(void)state;
	add(&o, "/r", FS_RW, "write");
	add(&o, "/r/a/b/c", FS_RO, "first");
	add(&o, "/r/a/b/c", FS_RO, "second");
	add(&o, "/r/d", FS_RO, "ro");
	add(&o, "/r/d", FS_HIDE_DIR, "deny");
	add(&o, "/elsewhere/x", FS_BLOCK, "outside");
	order(&o, roots, nitems(roots), NULL, 0, &plan);
	expect_ops(&plan, "rw /r", "pin-dir /r/a", "hide-dir /r/d",
	    "pin-dir /r/a/b", "ro /r/a/b/c", NULL);
	assert_string_equal(plan.fp_ops[4].fo_why, "first");
	assert_string_equal(plan.fp_ops[2].fo_why, "deny");
	fsplan_clear(&plan);
}

/*
 * Below a hidden folder a write root is kept, and listed in its
 * fo_keep, and so is a file shown (c_show); a read_only rule is not:
 * it would show what the deny hid.  Below the read-only root only what
 * changes something stays.
 */
static void
test_prune(void **state)
{
	static const char *const roots[] = { "/r", "/r/h/w" };
	struct fsorder	 o = { NULL, 0 };
	struct fsplan	 plan;

	(void)state;
	add(&o, "/r", FS_RW, "write");
	add(&o, "/r/h", FS_HIDE_DIR, "deny");
	add(&o, "/r/h/w", FS_RW, "write inside");
	add(&o, "/r/h/ro", FS_RO, "read_only inside");
	fsorder_add(&o, xstrdup("/r/h/known"), FS_RO, "shown",
	    false)->c_show = true;
	add(&o, "/usr", FS_RO, "ro under the ro root");
	add(&o, "/opt/x", FS_BLOCK, "block under the ro root");
	order(&o, roots, nitems(roots), NULL, 0, &plan);
	expect_ops(&plan, "rw /r", "hide-dir /r/h", "ro /r/h/known",
	    "rw /r/h/w", NULL);
	assert_int_equal(plan.fp_ops[1].fo_nkeep, 2);
	assert_int_equal(plan.fp_ops[1].fo_keep[0], 2);
	assert_int_equal(plan.fp_ops[1].fo_keep[1], 3);
	fsplan_clear(&plan);
}

/*
 * In a folder that may be a scratch layer, with no op above, a
 * protected path that exists is bound read-only; a missing one is not
 * blocked (what the command makes there is discarded with the layer).
 */
static void
test_scratch(void **state)
{
	static const char *const scratch[] = { "/home/u" };
	struct fsorder	 o = { NULL, 0 };
	struct fsplan	 plan;

	(void)state;
	add(&o, "/home/u/.bashrc", FS_RO, "ro");
	add(&o, "/home/u/.zshrc", FS_BLOCK, "block");
	add(&o, "/home/u", FS_RO, "the folder itself");
	order(&o, NULL, 0, scratch, nitems(scratch), &plan);
	expect_ops(&plan, "ro /home/u/.bashrc", NULL);
	fsplan_clear(&plan);
}

/* No candidates: no ops. */
static void
test_empty(void **state)
{
	struct fsorder	 o = { NULL, 0 };
	struct fsplan	 plan;

	(void)state;
	order(&o, NULL, 0, NULL, 0, &plan);
	assert_int_equal(plan.fp_nops, 0);
	fsplan_clear(&plan);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_merge_pins),
		cmocka_unit_test(test_prune),
		cmocka_unit_test(test_scratch),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
