/*
 * test_sessmsg.c: a session's request blob (session/sessmsg.c), read by
 * the keeper from its client and by PID 1 from the keeper: what is
 * written reads back the same; a blob that is not one folder, argc and
 * envc strings, each terminated, with nothing after, is refused.
 */
#include "unit.h"

#include <sys/mman.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "session/sess.h"

/* A memfd holding the len bytes of data. */
static int
blob_of(const char *data, size_t len)
{
	int	 fd;

	fd = memfd_create("test", MFD_CLOEXEC);
	assert_true(fd != -1);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	return fd;
}

static void
test_blob_roundtrip(void **state)
{
	char		 a0[] = "sh", a1[] = "-c", a2[] = "echo 'a b'";
	char		 e0[] = "A=1", e1[] = "EMPTY=";
	char		*argv[] = { a0, a1, a2, NULL };
	char		*env[] = { e0, e1, NULL };
	struct sessblob	 sb;
	uint32_t	 argc, envc;
	int		 fd;

	(void)state;
	fd = sessmsg_blob("/work", argv, env, &argc, &envc);
	assert_true(fd != -1);
	assert_int_equal(argc, 3);
	assert_int_equal(envc, 2);
	assert_int_equal(sessmsg_blob_read(fd, argc, envc, &sb), 0);
	assert_string_equal(sb.sb_cwd, "/work");
	assert_string_equal(sb.sb_argv[2], "echo 'a b'");
	assert_null(sb.sb_argv[3]);
	assert_string_equal(sb.sb_env[1], "EMPTY=");
	assert_null(sb.sb_env[2]);
	sessmsg_blob_clear(&sb);
	close(fd);
}

struct bad_case {
	const char	*data;
	size_t		 len;
	uint32_t	 argc, envc;
};

static void
test_blob_refused(void **state)
{
	static const struct bad_case cases[] = {
		{ "/w\0sh\0", 6, 2, 0 },	/* fewer strings than said */
		{ "/w\0sh\0X=1\0", 10, 1, 0 },	/* more than said */
		{ "/w\0sh", 5, 1, 0 },		/* the last unterminated */
		{ "w\0sh\0", 5, 1, 0 },		/* a relative folder */
		{ "/w\0\0", 4, 1, 0 },		/* an empty command */
		{ "/w\0", 3, 0, 0 },		/* no command */
		{ "", 0, 1, 0 },		/* nothing */
	};
	struct sessblob	 sb;
	size_t		 i;
	int		 fd;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		fd = blob_of(cases[i].data, cases[i].len);
		errno = 0;
		assert_int_equal(sessmsg_blob_read(fd, cases[i].argc,
		    cases[i].envc, &sb), -1);
		assert_null(sb.sb_buf);
		close(fd);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blob_roundtrip),
		cmocka_unit_test(test_blob_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
