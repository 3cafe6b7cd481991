/*
 * test_fslist.c: folder listings kept by identity (fslist.c), on
 * folders made in a temporary one: given again while a folder's ctime
 * stands still, not once an entry is made in it or its mode changes;
 * not kept when its ctime is within the slack of the walk, nor on a
 * filesystem that does not keep ctime itself (/proc); forgotten by the
 * walk after one that did not meet it.
 */
#include "unit.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "lib/xmalloc.h"
#include "plan/fslist.h"

static char	 base[PATH_MAX];

static int
setup(void **state)
{
	(void)state;
	return unit_tmpdir(base, "fslist");
}

static int
teardown(void **state)
{
	(void)state;
	return unit_rmtree(base);
}

/* Opens folder rel ("@/..."), its stat in *st. */
static int
open_at(const char *rel, struct stat *st)
{
	char	*p = unit_at(base, rel);
	int	 fd;

	if ((fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    fstat(fd, st) == -1)
		fail_msg("%s: %s", p, strerror(errno));
	free(p);
	return fd;
}

/*
 * Makes the folder "@/d" and opens it (its stat in *st), with a
 * listing for it in *s: two subfolders, a .git and a HEAD.
 */
static int
made_d(struct stat *st, struct fslist_seen *s)
{
	char	*p = unit_at(base, "@/d/");

	unit_make(base, p, NULL);
	free(p);
	memset(s, 0, sizeof(*s));
	s->ls_marks = fslist_mark(".git") | fslist_mark("HEAD");
	s->ls_entries = 4;
	fslist_sub(s, "a");
	fslist_sub(s, "b c");
	return open_at("@/d", st);
}

static void
test_mark(void **state)
{
	(void)state;
	assert_int_equal(fslist_mark(".git"), FSLIST_GIT);
	assert_int_equal(fslist_mark(".hg"), FSLIST_HG);
	assert_int_equal(fslist_mark("HEAD"), FSLIST_HEAD);
	assert_int_equal(fslist_mark("objects"), FSLIST_OBJECTS);
	assert_int_equal(fslist_mark("refs"), FSLIST_REFS);
	assert_int_equal(fslist_mark("commondir"), FSLIST_COMMONDIR);
	assert_int_equal(fslist_mark("head"), 0);
	assert_int_equal(fslist_mark(".git2"), 0);
	assert_int_equal(fslist_mark(""), 0);
	assert_int_equal(fslist_mark("readme"), 0);
}

/* Kept while the ctime stands, given whole; not once it moves. */
static void
test_recall(void **state)
{
	struct fslist		*l = fslist_new();
	struct fslist_seen	 s, got;
	struct stat		 st;
	char			*p;
	int			 fd;

	(void)state;
	fd = made_d(&st, &s);
	/* As a walk begun 3 s after the folder's last change. */
	fslist_put(l, fd, &st, st.st_ctim.tv_sec + 3, &s);
	fslist_turn(l);
	memset(&got, 0, sizeof(got));
	assert_true(fslist_get(l, &st, &got));
	assert_int_equal(got.ls_marks, FSLIST_GIT | FSLIST_HEAD);
	assert_int_equal(got.ls_entries, 4);
	assert_int_equal(got.ls_nsubs, 2);
	assert_string_equal(got.ls_subs[0], "a");
	assert_string_equal(got.ls_subs[1], "b c");
	fslist_seen_clear(&got);
	/* Carried into this walk's pass: the next one has it still. */
	fslist_turn(l);
	assert_true(fslist_get(l, &st, &got));
	fslist_seen_clear(&got);
	fslist_turn(l);

	/* An entry made: another ctime, so not given. */
	p = unit_at(base, "@/d/new");
	unit_make(base, p, "x");
	free(p);
	close(fd);
	fd = open_at("@/d", &st);
	assert_false(fslist_get(l, &st, &got));
	assert_int_equal(got.ls_nsubs, 0);

	/* Its mode changed: the same. */
	fslist_put(l, fd, &st, st.st_ctim.tv_sec + 3, &s);
	fslist_turn(l);
	if (fchmod(fd, 0311) == -1)
		fail_msg("fchmod: %s", strerror(errno));
	if (fstat(fd, &st) == -1)
		fail_msg("fstat: %s", strerror(errno));
	assert_false(fslist_get(l, &st, &got));
	(void)fchmod(fd, 0755);
	close(fd);
	fslist_seen_clear(&s);
	fslist_free(l);
}

/*
 * Not kept: a ctime within the slack of the walk; a folder on /proc;
 * one the last walk did not meet, after the next.
 */
static void
test_not_kept(void **state)
{
	struct fslist		*l = fslist_new();
	struct fslist_seen	 s, got;
	struct stat		 st, pst;
	int			 fd, pfd;

	(void)state;
	fd = made_d(&st, &s);
	memset(&got, 0, sizeof(got));
	fslist_put(l, fd, &st, st.st_ctim.tv_sec + 2, &s);
	fslist_turn(l);
	assert_false(fslist_get(l, &st, &got));

	if ((pfd = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1 || fstat(pfd, &pst) == -1)
		fail_msg("/proc/self: %s", strerror(errno));
	fslist_put(l, pfd, &pst, pst.st_ctim.tv_sec + 100, &s);
	fslist_turn(l);
	assert_false(fslist_get(l, &pst, &got));
	close(pfd);

	fslist_put(l, fd, &st, st.st_ctim.tv_sec + 3, &s);
	fslist_turn(l);	/* the walk that listed it ends */
	fslist_turn(l);	/* and one that did not meet it */
	assert_false(fslist_get(l, &st, &got));
	assert_false(fslist_get(NULL, &st, &got));
	fslist_put(NULL, fd, &st, st.st_ctim.tv_sec + 3, &s);
	fslist_turn(NULL);
	close(fd);
	fslist_seen_clear(&s);
	fslist_free(l);
	fslist_free(NULL);
}

/*
 * Many folders, as a session's walks meet them: a walk that met every
 * listing keeps them all, through the table's growth; one that met half
 * forgets the other half.  The folders are one real folder's stat under
 * other inode numbers: the table goes by identity alone.
 */
static void
test_many(void **state)
{
	struct fslist		*l = fslist_new();
	struct fslist_seen	 s, got;
	struct stat		 st, one;
	size_t			 i, n = 3000;
	int			 fd;

	(void)state;
	fd = made_d(&one, &s);
	memset(&got, 0, sizeof(got));
	for (i = 0; i < n; i++) {
		st = one;
		st.st_ino = (ino_t)(1000000 + 7 * i);
		fslist_put(l, fd, &st, st.st_ctim.tv_sec + 3, &s);
	}
	fslist_turn(l);
	for (i = 0; i < n; i++) {
		st = one;
		st.st_ino = (ino_t)(1000000 + 7 * i);
		assert_true(fslist_get(l, &st, &got));
		assert_int_equal(got.ls_nsubs, 2);
		fslist_seen_clear(&got);
	}
	fslist_turn(l);		/* met them all: all kept */
	for (i = 0; i < n; i += 2) {
		st = one;
		st.st_ino = (ino_t)(1000000 + 7 * i);
		assert_true(fslist_get(l, &st, &got));
		fslist_seen_clear(&got);
	}
	fslist_turn(l);		/* met half: the other half goes */
	for (i = 0; i < n; i++) {
		st = one;
		st.st_ino = (ino_t)(1000000 + 7 * i);
		assert_int_equal(fslist_get(l, &st, &got), i % 2 == 0);
		fslist_seen_clear(&got);
	}
	/* Another device, the same inode: another folder. */
	st = one;
	st.st_ino = 1000000;
	st.st_dev = one.st_dev + 1;
	assert_false(fslist_get(l, &st, &got));
	close(fd);
	fslist_seen_clear(&s);
	fslist_free(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mark),
		cmocka_unit_test_setup_teardown(test_recall, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_kept, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_many, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
