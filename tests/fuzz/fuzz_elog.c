/*
 * fuzz_elog.c: the egress log reader (`cordon log summary` and `cordon
 * log tail`) on arbitrary bytes.  Log lines hold text that came from
 * sandboxed clients, and a log file may be edited or cut short, so the
 * reader is a parser.  Checks: a line that parses has every field the
 * reader relies on (time of its fixed form, strings where they cannot be
 * null, integers in their ranges); one that does not has a cause and
 * leaves nothing to free; parsing is the same again after
 * elog_record_clear; a record formats (tail) and any text is made
 * printable as one line of printable ASCII.  The whole input, as a log
 * file, goes through elog_summary in both outputs: the JSON one is one
 * JSON object whose counts agree with the lines parsed here, and the
 * text one ends with the same counts.
 */
#include <sys/mman.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "logs/elog.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int	 memfd = -1;
static char	 path[64];
static FILE	*devnull;

/* Only printable ASCII, so a line is a line on any terminal. */
static void
check_printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			abort();
}

static void
check_shown(const char *s)
{
	char	*p;

	p = elog_printable(s);
	check_printable(p);
	if (strlen(p) > 4 * strlen(s) || strlen(p) < strlen(s))
		abort();
	free(p);
}

/* The reader's promises about a record that parsed. */
static void
check_record(const struct elog_record *r)
{
	char	 out[2048];

	if (strlen(r->er_time) != ELOG_TIME_LEN ||
	    strspn(r->er_time, "0123456789-T:.Z") != ELOG_TIME_LEN)
		abort();
	if (r->er_protocol == NULL || r->er_host == NULL)
		abort();	/* not nullable */
	if (r->er_port < 0 || r->er_port > 65535 ||
	    r->er_status < 0 || r->er_status > 999 ||
	    r->er_up > INT64_MAX || r->er_down > INT64_MAX || r->er_ms < -1)
		abort();
	check_shown(r->er_protocol);
	check_shown(r->er_host);
	if (r->er_sandbox != NULL)
		check_shown(r->er_sandbox);
	if (r->er_method != NULL)
		check_shown(r->er_method);
	if (r->er_reason != NULL)
		check_shown(r->er_reason);
	memset(out, 'x', sizeof(out));
	elog_tail_format(r, out, sizeof(out));
	if (memchr(out, '\0', sizeof(out)) == NULL)
		abort();
	check_printable(out);
}

static bool
empty(const struct elog_record *r)
{
	return r->er_sandbox == NULL && r->er_protocol == NULL &&
	    r->er_method == NULL && r->er_host == NULL &&
	    r->er_reason == NULL;
}

/* Parses one line twice, clearing between; returns whether it parsed. */
static bool
check_line(const char *line, size_t len)
{
	struct elog_record	 r, again;
	char			*cause, *cause2;
	int			 rc, rc2;

	rc = elog_parse(line, len, &r, &cause);
	if (rc == -1) {
		if (cause == NULL || cause[0] == '\0' || !empty(&r))
			abort();
		check_shown(cause);
		free(cause);
	} else {
		if (rc != 0 || cause != NULL)
			abort();
		check_record(&r);
	}
	elog_record_clear(&r);
	if (!empty(&r) || r.er_time[0] != '\0')
		abort();	/* not reusable */

	/* The same again into the cleared record, and to the same end. */
	rc2 = elog_parse(line, len, &r, &cause2);
	if (rc2 != rc)
		abort();
	if (rc == 0) {
		again = r;
		if (elog_parse(line, len, &r, &cause) != 0 ||
		    strcmp(r.er_time, again.er_time) != 0 ||
		    strcmp(r.er_host, again.er_host) != 0 ||
		    r.er_port != again.er_port || r.er_allow != again.er_allow ||
		    r.er_up != again.er_up || r.er_ms != again.er_ms)
			abort();
		elog_record_clear(&again);
	}
	free(cause2);
	elog_record_clear(&r);
	return rc == 0;
}

static json_int_t
get_int(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	if (v == NULL || !json_is_integer(v))
		abort();
	return json_integer_value(v);
}

/* The JSON summary: one object, counts that agree with ours. */
static void
check_summary_json(const char *text, size_t size, bool counted,
    json_int_t lines, json_int_t good)
{
	json_error_t	 err;
	json_t		*o, *hosts, *h, *ports;
	json_int_t	 records = 0, allowed, refused, failed;
	size_t		 i;
	const char	*first, *last;

	if ((o = json_loadb(text, size, 0, &err)) == NULL ||
	    !json_is_object(o))
		abort();
	if (counted && (get_int(o, "lines") != lines ||
	    get_int(o, "malformed") != lines - good ||
	    get_int(o, "unreadable_files") != 0))
		abort();
	if (get_int(o, "malformed") > get_int(o, "lines") ||
	    json_array_size(json_object_get(o, "malformed_first")) > 5)
		abort();
	if ((hosts = json_object_get(o, "hosts")) == NULL ||
	    !json_is_array(hosts))
		abort();
	json_array_foreach(hosts, i, h) {
		allowed = get_int(h, "allowed");
		refused = get_int(h, "refused");
		failed = get_int(h, "failed");
		if (allowed < 0 || refused < 0 || failed < 0 ||
		    failed > allowed || allowed + refused == 0)
			abort();
		if (get_int(h, "bytes_up") < 0 || get_int(h, "bytes_down") < 0)
			abort();	/* a count is not negative */
		if ((ports = json_object_get(h, "ports")) == NULL ||
		    json_array_size(ports) == 0 || json_array_size(ports) > 8)
			abort();
		first = json_string_value(json_object_get(h, "first"));
		last = json_string_value(json_object_get(h, "last"));
		if (first == NULL || last == NULL || strcmp(first, last) > 0)
			abort();
		records += allowed + refused;
	}
	if (counted && records != good)
		abort();
	json_decref(o);
}

/* The input as a log file, summarised; stdout and stderr caught. */
static void
check_summary(const uint8_t *data, size_t size, bool json, bool counted,
    json_int_t lines, json_int_t good)
{
	FILE		*out, *saved_out, *saved_err;
	char		*text = NULL, *files[1], *tail, want[128];
	size_t		 len = 0;
	int		 rc;

	if (ftruncate(memfd, 0) == -1 ||
	    pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	if ((out = open_memstream(&text, &len)) == NULL)
		abort();
	saved_out = stdout;
	saved_err = stderr;
	stdout = out;
	stderr = devnull;	/* malformed lines are named there */
	files[0] = path;
	rc = elog_summary(files, 1, json);
	stdout = saved_out;
	stderr = saved_err;
	if (fclose(out) != 0)
		abort();
	if (rc != 0 && rc != 1)
		abort();
	if (counted && rc != 0)
		abort();	/* a plain file reads to its end */
	if (json)
		check_summary_json(text, len, counted, lines, good);
	else {
		if (len == 0 || text[len - 1] != '\n')
			abort();
		text[len - 1] = '\0';
		tail = strrchr(text, '\n');
		tail = tail != NULL ? tail + 1 : text;
		if (counted) {
			snprintf(want, sizeof(want), "%lld line(s), ",
			    (long long)lines);
			if (strncmp(tail, want, strlen(want)) != 0)
				abort();
			snprintf(want, sizeof(want), " host(s), %lld "
			    "malformed", (long long)(lines - good));
			if (strstr(tail, want) == NULL)
				abort();
		}
	}
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*s, *p, *nl;
	json_int_t	 lines = 0, good = 0;
	bool		 counted;

	if (size > 65536)
		return 0;
	if (memfd == -1) {
		if ((memfd = memfd_create("fuzz-elog", MFD_CLOEXEC)) == -1)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
		if ((devnull = fopen("/dev/null", "w")) == NULL)
			abort();
	}
	if ((s = malloc(size + 1)) == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';

	/* The whole input as one line, then line by line. */
	check_line(s, size);
	for (p = s; p < s + size; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(s + size - p))) == NULL)
			nl = s + size;
		if (nl == p)
			continue;	/* blank: the summary skips it */
		lines++;
		*nl = '\0';
		if (check_line(p, (size_t)(nl - p)))
			good++;
	}
	free(s);

	/* zlib reads a gzip stream; anything else is passed through. */
	counted = !(size >= 2 && data[0] == 0x1f && data[1] == 0x8b);
	check_summary(data, size, true, counted, lines, good);
	check_summary(data, size, false, counted, lines, good);
	return 0;
}
