/*
 * test_watch_msg.c: what a run may send on its channel to the operator's
 * proxy (proxy/watch_msg.c), read whole or refused.
 */
#include "unit.h"

#include "proxy/proxy.h"

/* Parses s; returns the parser's answer, *cause freed. */
static int
parse(const char *s, struct watch_msg *m)
{
	char	*cause;
	int	 rc;

	rc = watch_msg_parse(s, strlen(s), m, &cause);
	if (rc == -1)
		assert_non_null(cause);
	free(cause);
	return rc;
}

static void
test_watch_msg_good(void **state)
{
	struct watch_msg	 m;

	(void)state;
	assert_int_equal(parse("end", &m), 0);
	assert_int_equal(m.wm_kind, WM_END);
	assert_int_equal(parse("{\"ask\": 60}", &m), 0);
	assert_int_equal(m.wm_kind, WM_ASK);
	assert_int_equal(m.wm_secs, 60);
	assert_int_equal(parse("{\"allow\": \"a.test:443\", \"n\": 7}", &m),
	    0);
	assert_int_equal(m.wm_kind, WM_ALLOW);
	assert_string_equal(m.wm_text, "a.test:443");
	assert_int_equal(m.wm_n, 7);
	assert_int_equal(parse("{\"n\": 0, \"deny\": \"*.b.test\"}", &m), 0);
	assert_int_equal(m.wm_kind, WM_DENY);
	assert_string_equal(m.wm_text, "*.b.test");
	assert_int_equal(parse("{\"answer\": \"p3\", \"decision\": "
	    "\"allow-run\"}", &m), 0);
	assert_int_equal(m.wm_kind, WM_ANSWER);
	assert_int_equal(m.wm_decision, WMD_ALLOW_RUN);
	assert_string_equal(m.wm_text, "p3");
	assert_int_equal(parse("{\"answer\": \"p4\", \"decision\": \"deny\"}",
	    &m), 0);
	assert_int_equal(m.wm_decision, WMD_DENY);
}

static void
test_watch_msg_bad(void **state)
{
	static const char *const bad[] = {
		"", "end ", "END", "[]", "\"end\"", "{}", "not json",
		"{\"ask\": 0}", "{\"ask\": 3601}", "{\"ask\": true}",
		"{\"ask\": 5, \"n\": 1}",
		"{\"allow\": \"a.test\"}",			/* no n */
		"{\"allow\": \"a.test\", \"n\": -1}",
		"{\"allow\": \"a.test\", \"n\": \"1\"}",
		"{\"allow\": 42, \"n\": 1}",
		"{\"allow\": \"\", \"n\": 1}",
		"{\"allow\": \"a\\u0000b\", \"n\": 1}",
		"{\"allow\": \"a.test\", \"deny\": \"b.test\"}",
		"{\"allow\": \"a\", \"allow\": \"b\", \"n\": 1}", /* twice */
		"{\"answer\": \"p1\"}",
		"{\"answer\": \"p1\", \"decision\": \"maybe\"}",
		"{\"answer\": \"p1\", \"decision\": \"deny\", \"n\": 1}",
		"{\"answer\": \"p123456789012345678901234\", "
		    "\"decision\": \"deny\"}",
		"{\"sandbox\": \"another\", \"allow\": \"a.test\", \"n\": 1}",
	};
	struct watch_msg	 m;
	char			 line[WATCH_MSG_MAX + 64];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &m) != -1)
			fail_msg("accepted: %s", bad[i]);
	}
	/* A pattern past its bound, and a line past the longest. */
	memset(line, 0, sizeof(line));
	snprintf(line, sizeof(line), "{\"allow\": \"%0*d\", \"n\": 1}",
	    WATCH_MSG_TEXT_MAX + 1, 0);
	assert_int_equal(parse(line, &m), -1);
	snprintf(line, sizeof(line), "{\"ask\": 1%*s}", WATCH_MSG_MAX, "");
	assert_int_equal(parse(line, &m), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watch_msg_good),
		cmocka_unit_test(test_watch_msg_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
