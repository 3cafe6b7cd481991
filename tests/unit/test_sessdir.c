/*
 * test_sessdir.c: a session's name (session/sessdir.c): which names are
 * taken, and its claim: one holder at a time while its descriptor is
 * open, the holder named to the next, taken over once it is closed,
 * removed only by the id it leads to and only when no one holds it.
 */
#include "unit.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/sess.h"

static const char	 A[] = "aaaaaaaaaaaaaaaa";
static const char	 B[] = "bbbbbbbbbbbbbbbb";

static void
test_sessdir_name_ok(void **state)
{
	static const char *const good[] = { "x", "task-1", "Task_1+fix@repo",
	    "a-", "0" };
	static const char *const bad[] = { "", "-x", "a b", "a.b", "a/b",
	    "evil\nffffffffffffffff forged", "a\tb", "caf\xc3\xa9", "a:b",
	    "0123456789abcdef" };
	char		 longest[SESS_NAME_MAX + 2];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!sessdir_name_ok(good[i]))
			fail_msg("\"%s\" refused", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sessdir_name_ok(bad[i]))
			fail_msg("\"%s\" taken", bad[i]);
	memset(longest, 'n', sizeof(longest) - 1);
	longest[SESS_NAME_MAX] = '\0';
	assert_true(sessdir_name_ok(longest));
	longest[SESS_NAME_MAX] = 'n';
	longest[SESS_NAME_MAX + 1] = '\0';
	assert_false(sessdir_name_ok(longest));
}

static void
test_sessdir_claim(void **state)
{
	char	 dir[] = "/tmp/cordon-sessdir-XXXXXX", holder[SESS_ID_LEN + 1];
	char	 id[SESS_ID_LEN + 1], path[PATH_MAX];
	int	 a, b;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* The first claim holds; the second is told by whom. */
	assert_true((a = sessdir_name_claim(dir, "x", A, holder)) != -1);
	assert_int_equal(sessdir_name_claim(dir, "x", B, holder), -1);
	assert_int_equal(errno, EBUSY);
	assert_string_equal(holder, A);
	assert_int_equal(sessdir_name_id(dir, "x", id), SESS_ID_LEN);
	assert_string_equal(id, A);
	/* Held: neither removed nor taken, even by its own id. */
	assert_false(sessdir_name_drop(dir, "x", A));
	/* Its holder gone (the keeper's end): taken over. */
	close(a);
	assert_true((b = sessdir_name_claim(dir, "x", B, holder)) != -1);
	assert_int_equal(sessdir_name_id(dir, "x", id), SESS_ID_LEN);
	assert_string_equal(id, B);
	/* Only the id it leads to removes it, once no one holds it. */
	close(b);
	assert_false(sessdir_name_drop(dir, "x", A));
	assert_true(sessdir_name_drop(dir, "x", B));
	snprintf(path, sizeof(path), "%s/x.name", dir);
	assert_int_equal(access(path, F_OK), -1);
	/* Nothing left behind of the claims. */
	assert_int_equal(rmdir(dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sessdir_name_ok),
		cmocka_unit_test(test_sessdir_claim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
