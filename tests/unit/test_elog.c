/*
 * test_elog.c: an exchange's two egress log lines, "open" and "end",
 * as lib/jsonl.c writes them (an open line is never held back) and as
 * `cordon log summary` pairs them (logs/elog_summary.c), on real files.
 */
#include "unit.h"

#include <sys/time.h>

#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/jsonl.h"
#include "lib/util.h"
#include "logs/elog.h"

#define OPEN_A	"{\"time\":\"2026-11-22T01:40:18.029Z\",\"sandbox\":null," \
	"\"protocol\":\"http\",\"method\":\"GET\",\"host\":\"a.test\"," \
	"\"port\":80,\"decision\":\"allow\",\"reason\":null,\"status\":0," \
	"\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0," \
	"\"event\":\"open\",\"id\":\"00ff-1\"}\n"
#define END_A	"{\"time\":\"2026-11-22T01:40:18.029Z\",\"sandbox\":null," \
	"\"protocol\":\"http\",\"method\":\"GET\",\"host\":\"a.test\"," \
	"\"port\":80,\"decision\":\"allow\",\"reason\":null,\"status\":200," \
	"\"bytes_up\":0,\"bytes_down\":7,\"duration_ms\":3," \
	"\"event\":\"end\",\"id\":\"00ff-1\"}\n"
#define OPEN_B	"{\"time\":\"2026-11-22T01:40:19.000Z\",\"sandbox\":null," \
	"\"protocol\":\"connect\",\"method\":\"CONNECT\",\"host\":\"A.Test\"," \
	"\"port\":443,\"decision\":\"allow\",\"reason\":null,\"status\":0," \
	"\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0," \
	"\"event\":\"open\",\"id\":\"00ff-2\"}\n"
#define DENY_C	"{\"time\":\"2026-11-22T01:40:20.000Z\",\"sandbox\":null," \
	"\"protocol\":\"http\",\"method\":\"GET\",\"host\":\"c.test\"," \
	"\"port\":80,\"decision\":\"deny\",\"reason\":\"no\",\"status\":403," \
	"\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0," \
	"\"event\":\"end\",\"id\":null}\n"
/* An older proxy's line: no event, no id; one exchange whole. */
#define OLD_D	"{\"time\":\"2026-11-22T01:40:21.000Z\",\"sandbox\":null," \
	"\"protocol\":\"http\",\"method\":\"GET\",\"host\":\"a.test\"," \
	"\"port\":80,\"decision\":\"allow\",\"reason\":null,\"status\":200," \
	"\"bytes_up\":0,\"bytes_down\":5,\"duration_ms\":1}\n"

struct files {
	char	 dir[4096];
	char	 a[4200];
	char	 b[4200];
};

static void
files_make(struct files *f, const char *a, const char *b)
{
	assert_int_equal(unit_tmpdir(f->dir, "test_elog"), 0);
	snprintf(f->a, sizeof(f->a), "%s/a.log", f->dir);
	snprintf(f->b, sizeof(f->b), "%s/b.log", f->dir);
	unit_make(f->dir, f->a, a);
	unit_make(f->dir, f->b, b);
}

/* The summary of files (in that order) as JSON; the caller frees it. */
static json_t *
summary_of(char **files, int n)
{
	json_error_t	 err;
	json_t		*o;
	char		*buf = NULL;
	size_t		 len = 0;
	FILE		*out;

	assert_non_null(out = open_memstream(&buf, &len));
	assert_int_equal(elog_summary_to(out, files, n, true), 0);
	fclose(out);
	o = json_loads(buf, 0, &err);
	if (o == NULL)
		fail_msg("not JSON: %s: %s", err.text, buf);
	free(buf);
	return o;
}

/* The host's counts: allowed refused unended bytes_down. */
static void
assert_host(json_t *o, size_t i, const char *host, const char *counts)
{
	json_t	*h = json_array_get(json_object_get(o, "hosts"), i);
	char	 got[128];

	assert_non_null(h);
	assert_string_equal(json_string_value(json_object_get(h, "host")),
	    host);
	snprintf(got, sizeof(got), "%lld %lld %lld %lld",
	    json_integer_value(json_object_get(h, "allowed")),
	    json_integer_value(json_object_get(h, "refused")),
	    json_integer_value(json_object_get(h, "unended")),
	    json_integer_value(json_object_get(h, "bytes_down")));
	assert_string_equal(got, counts);
}

/* Open then end: one exchange, allowed, ended; a refusal alone is one. */
static void
test_pair_in_order(void **state)
{
	struct files	 f;
	char		*files[1];
	json_t		*o;

	(void)state;
	files_make(&f, OPEN_A END_A DENY_C OLD_D, "");
	files[0] = f.a;
	o = summary_of(files, 1);
	assert_int_equal(json_integer_value(json_object_get(o, "lines")), 4);
	assert_int_equal(json_integer_value(json_object_get(o, "unended")),
	    0);
	assert_host(o, 0, "c.test", "0 1 0 0");
	/* The paired exchange and the old line: two allowed. */
	assert_host(o, 1, "a.test", "2 0 0 12");
	json_decref(o);
	unit_rmtree(f.dir);
}

/* The end read first (a live file before its rotated one): the same. */
static void
test_pair_end_first(void **state)
{
	struct files	 f;
	char		*files[2];
	json_t		*o;

	(void)state;
	files_make(&f, OPEN_A, END_A);
	files[0] = f.b;
	files[1] = f.a;
	o = summary_of(files, 2);
	assert_int_equal(json_integer_value(json_object_get(o, "unended")),
	    0);
	assert_host(o, 0, "a.test", "1 0 0 7");
	json_decref(o);
	unit_rmtree(f.dir);
}

/*
 * An open line with no end (the proxy was killed): allowed and unended,
 * once, under its host as any line's; said on the text's last line.
 */
static void
test_unended(void **state)
{
	struct files	 f;
	char		*files[2], *buf = NULL;
	size_t		 len = 0;
	json_t		*o;
	FILE		*out;

	(void)state;
	files_make(&f, OPEN_A OPEN_B, END_A);
	files[0] = f.a;
	files[1] = f.b;
	o = summary_of(files, 2);
	assert_int_equal(json_integer_value(json_object_get(o, "unended")),
	    1);
	assert_host(o, 0, "a.test", "2 0 1 7");
	json_decref(o);

	assert_non_null(out = open_memstream(&buf, &len));
	assert_int_equal(elog_summary_to(out, files, 2, false), 0);
	fclose(out);
	assert_contains(buf, "UNENDED");
	assert_contains(buf, "3 line(s), 1 host(s), 0 malformed, 1 unended "
	    "(in flight, or the proxy was killed)\n");
	free(buf);
	unit_rmtree(f.dir);
}

/* A line's event is open or end, or it is malformed; id is text or null. */
static void
test_parse_event(void **state)
{
	struct elog_record	 r;
	char			*cause;
	const char		*bad = "{\"time\":\"2026-11-22T01:40:18.029Z\","
	    "\"protocol\":\"http\",\"method\":null,\"host\":\"a\",\"port\":1,"
	    "\"decision\":\"allow\",\"reason\":null,\"sandbox\":null,"
	    "\"status\":0,\"bytes_up\":0,\"bytes_down\":0,\"event\":\"begin\"}";

	(void)state;
	assert_int_equal(elog_parse(OPEN_B, strlen(OPEN_B) - 1, &r, &cause),
	    0);
	assert_true(r.er_open);
	assert_string_equal(r.er_id, "00ff-2");
	elog_record_clear(&r);
	assert_int_equal(elog_parse(OLD_D, strlen(OLD_D) - 1, &r, &cause), 0);
	assert_false(r.er_open);
	assert_null(r.er_id);
	elog_record_clear(&r);
	assert_int_equal(elog_parse(bad, strlen(bad), &r, &cause), -1);
	assert_contains(cause, "\"event\" other than open or end");
	free(cause);
}

/*
 * On a full disk (/dev/full: every write is ENOSPC) an open line is
 * dropped, not held: the caller refuses its exchange instead.  The end
 * line of the refusal is held, and with lines held back an open line is
 * not even tried.
 */
static void
test_open_full_disk(void **state)
{
	struct egress	 e = { .e_proto = "http", .e_host = "a.test",
			    .e_hostlen = 6, .e_port = 80, .e_allow = true,
			    .e_open = true, .e_id = "00ff-1" };
	struct jsonl	*j;
	int		 fd;

	(void)state;
	if ((fd = open("/dev/full", O_WRONLY | O_CLOEXEC)) == -1)
		skip();
	j = jsonl_fdopen(fd);
	assert_false(jsonl_write_open(j, &e));
	assert_true(jsonl_failed(j));
	assert_int_equal(jsonl_held(j), 0);
	e.e_open = false;
	assert_false(jsonl_write(j, &e));
	assert_int_equal(jsonl_held(j), 1);
	e.e_open = true;
	assert_false(jsonl_write_open(j, &e));
	assert_int_equal(jsonl_held(j), 1);
	jsonl_close(j);
}

/* What the line's text field holds for s: escaped as the log says. */
static void
assert_text(json_t *o, const char *key, const char *s, size_t len,
    enum str_esc mode)
{
	char	*want = str_escape_as(s, len, mode);

	assert_string_equal(json_string_value(json_object_get(o, key)), want);
	free(want);
}

/*
 * A line made by hand is the JSON jansson reads back: every byte a
 * client may send (quotes, backslashes, control and high bytes) in
 * every text field, the twenty-five keys in their order, numbers and
 * nulls as they were.
 */
static void
test_line_reads_back(void **state)
{
	static const char	 nasty[] = "a\"b\\c\x01" "d\xc3\xa9" "e\x7f}{,:";
	static const char	*keys[] = { "time", "sandbox", "uid", "command",
	    "client", "protocol", "method", "host", "port", "path",
	    "address", "decision", "rule", "rule_from", "reason", "warning",
	    "status", "bytes_up", "bytes_down", "duration_ms", "identity",
	    "origin_uid", "credential", "event", "id" };
	struct egress	 e = { .e_sandbox = nasty, .e_has_uid = true,
			    .e_uid = 4294967294U, .e_command = nasty,
			    .e_client = nasty, .e_proto = "https",
			    .e_method = nasty, .e_host = nasty,
			    .e_hostlen = sizeof(nasty), .e_port = 65535,
			    .e_path = nasty, .e_addr = NULL, .e_allow = false,
			    .e_rule = nasty, .e_rule_from = nasty,
			    .e_reason = nasty, .e_warning = nasty,
			    .e_status = 503, .e_up = 18446744073709551615ULL >> 1,
			    .e_down = 7, .e_identity = nasty,
			    .e_origin_uid = NULL, .e_id = nasty };
	struct files	 f;
	struct jsonl	*j;
	json_error_t	 err;
	json_t		*o;
	const char	*k;
	json_t		*v;
	char		*cause, buf[8192];
	size_t		 i = 0;
	FILE		*fp;

	(void)state;
	files_make(&f, "", "");
	gettimeofday(&e.e_start, NULL);
	assert_non_null(j = jsonl_open(f.a, &cause));
	assert_true(jsonl_write(j, &e));
	jsonl_close(j);
	assert_non_null(fp = fopen(f.a, "r"));
	assert_non_null(fgets(buf, sizeof(buf), fp));
	assert_null(fgets(buf + strlen(buf), 2, fp));	/* one line */
	fclose(fp);
	for (i = 0; buf[i] != '\0'; i++)
		assert_true(buf[i] == '\n' || (buf[i] >= 0x20 && buf[i] < 0x7f));
	if ((o = json_loads(buf, JSON_REJECT_DUPLICATES, &err)) == NULL)
		fail_msg("not JSON: %s: %s", err.text, buf);
	i = 0;
	json_object_foreach(o, k, v) {
		assert_true(i < sizeof(keys) / sizeof(keys[0]));
		assert_string_equal(k, keys[i]);
		i++;
	}
	assert_int_equal(i, sizeof(keys) / sizeof(keys[0]));
	assert_text(o, "host", nasty, sizeof(nasty), STR_ESC_HEX_BACKSLASH);
	assert_text(o, "sandbox", nasty, strlen(nasty), STR_ESC_HEX_BACKSLASH);
	assert_text(o, "id", nasty, strlen(nasty), STR_ESC_HEX_BACKSLASH);
	assert_text(o, "reason", nasty, strlen(nasty), STR_ESC_KEEP);
	assert_text(o, "warning", nasty, strlen(nasty), STR_ESC_KEEP);
	assert_int_equal(json_integer_value(json_object_get(o, "uid")),
	    4294967294LL);
	assert_int_equal(json_integer_value(json_object_get(o, "bytes_up")),
	    INT64_MAX);
	assert_int_equal(json_integer_value(json_object_get(o, "port")),
	    65535);
	assert_true(json_is_null(json_object_get(o, "address")));
	assert_true(json_is_null(json_object_get(o, "origin_uid")));
	assert_string_equal(json_string_value(json_object_get(o,
	    "decision")), "deny");
	assert_string_equal(json_string_value(json_object_get(o, "event")),
	    "end");
	assert_int_equal(strlen(json_string_value(json_object_get(o,
	    "time"))), 24);
	json_decref(o);
	unit_rmtree(f.dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pair_in_order),
		cmocka_unit_test(test_pair_end_first),
		cmocka_unit_test(test_unended),
		cmocka_unit_test(test_parse_event),
		cmocka_unit_test(test_open_full_disk),
		cmocka_unit_test(test_line_reads_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
