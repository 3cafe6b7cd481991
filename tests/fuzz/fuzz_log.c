/*
 * fuzz_log.c: how text from the sandbox reaches logs.  Host names,
 * methods and the like are chosen by the sandboxed program, so they must
 * not forge a log line or a field.  Checks: str_escape gives printable
 * ASCII only and reads back to the exact bytes; an egress log record
 * (jsonl_write) with such text in every field is one line of JSON, and
 * its host field reads back, through \xNN, to the exact bytes sent.
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

#include "lib/jsonl.h"
#include "lib/util.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int		 memfd = -1;
static struct jsonl	*log_file;

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * Reads back text escaped with \xNN (and, if quotes, \\ and \") into
 * out; returns its length, or -1 if it is not such text.
 */
static ssize_t
unescape(const char *s, char *out, bool quotes)
{
	size_t	 o = 0;
	int	 hi, lo;

	while (*s != '\0') {
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return -1;	/* a raw byte got through */
		if (*s != '\\') {
			if (quotes && *s == '"')
				return -1;
			out[o++] = *s++;
			continue;
		}
		if (quotes && (s[1] == '\\' || s[1] == '"')) {
			out[o++] = s[1];
			s += 2;
			continue;
		}
		if (s[1] != 'x' || (hi = hexval(s[2])) == -1 ||
		    (lo = hexval(s[3])) == -1)
			return -1;
		out[o++] = (char)(hi << 4 | lo);
		s += 4;
	}
	return (ssize_t)o;
}

static void
check_escape(const char *s, size_t len)
{
	char	*e, *back;
	ssize_t	 n;

	e = str_escape(s, len);
	if (strlen(e) > 4 * len)
		abort();
	if ((back = malloc(len + 1)) == NULL)
		abort();
	if ((n = unescape(e, back, true)) == -1 || (size_t)n != len ||
	    memcmp(back, s, len) != 0)
		abort();	/* escaped text does not read back */
	free(back);
	free(e);
}

static void
check_jsonl(const char *s, size_t len)
{
	struct egress	 e;
	json_error_t	 err;
	json_t		*o, *v;
	char		*line, *back, *str, path[64], *cause;
	off_t		 end;
	ssize_t		 n;

	if (memfd == -1) {
		if ((memfd = memfd_create("fuzz-log", MFD_CLOEXEC)) == -1)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
		if ((log_file = jsonl_open(path, &cause)) == NULL)
			abort();
	}
	if (ftruncate(memfd, 0) == -1)
		abort();
	/* Every field the sandbox may choose, as a C string or counted. */
	if ((str = strndup(s, len)) == NULL)
		abort();
	memset(&e, 0, sizeof(e));
	e.e_sandbox = str;
	e.e_client = str;
	e.e_proto = "http";
	e.e_method = str;
	e.e_host = s;
	e.e_hostlen = len;
	e.e_port = 443;
	e.e_path = str;
	e.e_rule = str;
	e.e_rule_from = str;
	e.e_reason = str;
	e.e_warning = str;
	e.e_identity = str;
	e.e_origin_uid = str;
	jsonl_write(log_file, &e);
	free(str);
	if (jsonl_failed(log_file))
		abort();

	end = lseek(memfd, 0, SEEK_END);
	if ((line = malloc((size_t)end + 1)) == NULL ||
	    (back = malloc(len + 1)) == NULL)
		abort();
	if (pread(memfd, line, (size_t)end, 0) != end)
		abort();
	line[end] = '\0';
	if (end < 2 || line[end - 1] != '\n' ||
	    memchr(line, '\n', (size_t)end - 1) != NULL ||
	    strlen(line) != (size_t)end)
		abort();	/* not exactly one line */
	if ((o = json_loads(line, JSON_REJECT_DUPLICATES, &err)) == NULL ||
	    !json_is_object(o) || json_object_size(o) != 25)
		abort();	/* not one record with its own fields */
	if ((v = json_object_get(o, "host")) == NULL || !json_is_string(v) ||
	    (n = unescape(json_string_value(v), back, false)) == -1 ||
	    (size_t)n != len || memcmp(back, s, len) != 0)
		abort();	/* the host as logged is not the host sent */
	if ((v = json_object_get(o, "decision")) == NULL ||
	    strcmp(json_string_value(v), "deny") != 0)
		abort();
	json_decref(o);
	free(back);
	free(line);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*s;

	if (size > 4096)
		return 0;
	if ((s = malloc(size ? size : 1)) == NULL)
		abort();
	memcpy(s, data, size);
	check_escape(s, size);
	check_jsonl(s, size);
	free(s);
	return 0;
}
