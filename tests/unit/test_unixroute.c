/*
 * test_unixroute.c: the routes of the sandbox's Unix sockets
 * (notify/unixroute.c) when one inside path is asked for twice: the same
 * host socket again is the first route, another one is refused.
 */
#include "unit.h"

#include <unistd.h>

#include "notify/unixroute.h"

/* The same route twice: one route, named by the first who asked. */
static void
test_add_same_twice(void **state)
{
	struct unix_routes	 ur = { 0 };
	char			*cause;

	(void)state;
	assert_int_equal(unixroute_add(&ur, "/tmp/a.sock", "/tmp/a.sock",
	    "system: filesystem.unix_sockets[0]", &cause), 0);
	assert_int_equal(unixroute_add(&ur, "/tmp/b.sock", "/tmp/b.sock",
	    "user: filesystem.unix_sockets[0]", &cause), 0);
	assert_int_equal(unixroute_add(&ur, "/tmp/a.sock", "/tmp/a.sock",
	    "user: filesystem.unix_sockets[1]", &cause), 0);
	assert_null(cause);
	assert_int_equal(ur.ur_n, 2);
	assert_string_equal(unixroute_find(&ur, "/tmp/a.sock", 11)->ur_from,
	    "system: filesystem.unix_sockets[0]");
	unixroute_clear(&ur);
}

/*
 * One inside path, two host sockets (as a policy entry at the path where
 * cordon's own ssh-agent answers would be): refused, naming both, never
 * the first kept in silence.
 */
static void
test_add_other_host(void **state)
{
	struct unix_routes	 ur = { 0 };
	char			*cause;

	(void)state;
	assert_int_equal(unixroute_add(&ur, "/tmp/agent.sock",
	    "/tmp/agent.sock", "p.json: filesystem.unix_sockets[0]",
	    &cause), 0);
	assert_int_equal(unixroute_add(&ur, "/tmp/agent.sock",
	    "/tmp/own.sock", "cordon's ssh-agent", &cause), -1);
	assert_contains(cause, "/tmp/agent.sock: the Unix socket "
	    "/tmp/agent.sock (p.json: filesystem.unix_sockets[0]) and "
	    "/tmp/own.sock (cordon's ssh-agent) would both answer there\n"
	    "hint: drop \"/tmp/agent.sock\" (p.json: "
	    "filesystem.unix_sockets[0])");
	assert_int_equal(ur.ur_n, 1);
	free(cause);
	unixroute_clear(&ur);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_same_twice),
		cmocka_unit_test(test_add_other_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
