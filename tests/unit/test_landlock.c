/*
 * test_landlock.c: Landlock applied for real in a child: writes only
 * below the writable roots, reads elsewhere, and (ABI 6) no abstract
 * Unix socket or signal reaches outside.
 */
#include "unit.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "runner/runner.h"

static char	 dir[] = "/tmp/cordon-landlock-XXXXXX";
static char	 wdir[64];
static char	 abstract[64];
static int	 listener = -1;

enum check {
	CHECK_WRITE_INSIDE,	/* must work */
	CHECK_WRITE_OUTSIDE,	/* EACCES */
	CHECK_READ,		/* must work */
	CHECK_DEV_NULL,		/* must work */
	CHECK_ABSTRACT,		/* EPERM with ABI 6 */
	CHECK_SIGNAL,		/* EPERM with ABI 6 */
	CHECK_COUNT
};

static int
do_check(enum check c)
{
	struct sockaddr_un	 sun;
	char			 path[128];
	int			 fd;

	switch (c) {
	case CHECK_WRITE_INSIDE:
		snprintf(path, sizeof(path), "%s/new", wdir);
		return open(path, O_WRONLY | O_CREAT, 0600) >= 0 ? 0 : errno;
	case CHECK_WRITE_OUTSIDE:
		snprintf(path, sizeof(path), "%s/escape", dir);
		return open(path, O_WRONLY | O_CREAT, 0600) >= 0 ? 0 : errno;
	case CHECK_READ:
		return open("/etc/passwd", O_RDONLY) >= 0 ? 0 : errno;
	case CHECK_DEV_NULL:
		return open("/dev/null", O_WRONLY) >= 0 ? 0 : errno;
	case CHECK_ABSTRACT:
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		memcpy(sun.sun_path, abstract, sizeof(abstract));
		return connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 ?
		    0 : errno;
	case CHECK_SIGNAL:
		return kill(getppid(), 0) == 0 ? 0 : errno;
	default:
		return -1;
	}
}

/* Applies Landlock in a child, runs check c; returns its errno (0: ok). */
static int
in_sandbox(enum check c)
{
	struct landlock_rule	 rules[] = {
		{ "/", false },
		{ wdir, true },
		{ "/dev/null", true },
	};
	char			*cause;
	pid_t			 pid;
	int			 status;

	if ((pid = fork()) == 0) {
		if (landlock_apply(rules, 3, true, &cause) == -1)
			_exit(255);
		_exit(do_check(c) & 0xff);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void
test_outside_first(void **state)
{
	char	 path[128];
	int	 c;

	(void)state;
	/* Every check works without Landlock: the route is open. */
	for (c = 0; c < CHECK_COUNT; c++)
		if (do_check((enum check)c) != 0)
			fail_msg("check %d fails even outside", c);
	/* Inside, the files must be created anew. */
	snprintf(path, sizeof(path), "%s/new", wdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/escape", dir);
	unlink(path);
}

static void
test_inside(void **state)
{
	(void)state;
	assert_int_equal(in_sandbox(CHECK_WRITE_INSIDE), 0);
	assert_int_equal(in_sandbox(CHECK_WRITE_OUTSIDE), EACCES);
	assert_int_equal(in_sandbox(CHECK_READ), 0);
	assert_int_equal(in_sandbox(CHECK_DEV_NULL), 0);
}

/* Scoping (ABI 6, Linux 6.12): skipped, and counted so, before it. */
static void
test_scoped(void **state)
{
	(void)state;
	if (landlock_abi() < 6)
		skip();
	assert_int_equal(in_sandbox(CHECK_ABSTRACT), EPERM);
	assert_int_equal(in_sandbox(CHECK_SIGNAL), EPERM);
}

static int
setup(void **state)
{
	struct sockaddr_un	 sun;

	(void)state;
	if (landlock_abi() == 0) {
		print_error("this kernel has no Landlock\n");
		return -1;
	}
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(wdir, sizeof(wdir), "%s/w", dir);
	if (mkdir(wdir, 0700) == -1)
		return -1;
	/* An abstract socket outside, to try from inside. */
	snprintf(abstract + 1, sizeof(abstract) - 1, "cordon-test-%d",
	    (int)getpid());
	listener = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, abstract, sizeof(abstract));
	if (bind(listener, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(listener, 16) == -1)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	char	 path[128];

	(void)state;
	close(listener);
	snprintf(path, sizeof(path), "%s/new", wdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/escape", dir);
	unlink(path);
	rmdir(wdir);
	rmdir(dir);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outside_first),
		cmocka_unit_test(test_inside),
		cmocka_unit_test(test_scoped),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
