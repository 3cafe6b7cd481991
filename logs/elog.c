/*
 * elog.c: egress log records, read back.
 *
 * The reader is strict about the fields it uses and lenient about the
 * rest: a line that is not a JSON object, or lacks a field `cordon log`
 * needs, or has it with the wrong type, is malformed, and the caller
 * counts it and goes on; fields it does not know (a later version's) are
 * ignored.  Files are read through zlib, which passes plain files through
 * unchanged, so `egress.log.2.gz` from logrotate reads like `egress.log`.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "logs/elog.h"

struct elog_file {
	gzFile		 ef_gz;		/* NULL: following ef_fd */
	int		 ef_fd;
	char		*ef_buf;
	size_t		 ef_size;
	size_t		 ef_len;	/* bytes in ef_buf */
	size_t		 ef_off;	/* of them, the first not handed out */
	bool		 ef_eof;
	bool		 ef_follow;	/* a line is only whole with its \n */
};

/* A string field, or NULL for null; false when neither (or missing). */
static bool
elog_string(json_t *o, const char *key, bool nullable, char **out)
{
	json_t	*v = json_object_get(o, key);

	*out = NULL;
	if (v != NULL && json_is_string(v)) {
		*out = xstrdup(json_string_value(v));
		return true;
	}
	return nullable && v != NULL && json_is_null(v);
}

static bool
elog_integer(json_t *o, const char *key, json_int_t lo, json_int_t hi,
    json_int_t *out)
{
	json_t	*v = json_object_get(o, key);

	if (v == NULL || !json_is_integer(v))
		return false;
	*out = json_integer_value(v);
	return *out >= lo && *out <= hi;
}

/*
 * Reads one log line (len bytes, without its newline) into *r.  Returns
 * 0, or -1 with *cause saying what is wrong with the line; *r then holds
 * nothing to free.
 */
int
elog_parse(const char *line, size_t len, struct elog_record *r,
    char **cause)
{
	json_error_t	 err;
	json_t		*o, *v;
	json_int_t	 n;
	char		*s = NULL;
	const char	*why = NULL;

	memset(r, 0, sizeof(*r));
	*cause = NULL;
	if (len > ELOG_LINE_MAX) {
		xasprintf(cause, "a line over %d bytes", ELOG_LINE_MAX);
		return -1;
	}
	if ((o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err)) ==
	    NULL) {
		xasprintf(cause, "not JSON: %s (column %d)", err.text,
		    err.column);
		return -1;
	}
	if (!json_is_object(o)) {
		why = "not a JSON object";
		goto bad;
	}
	if ((v = json_object_get(o, "time")) == NULL || !json_is_string(v) ||
	    json_string_length(v) != ELOG_TIME_LEN) {
		why = "no \"time\" like 2026-11-22T01:40:18.029Z";
		goto bad;
	}
	memcpy(r->er_time, json_string_value(v), ELOG_TIME_LEN + 1);
	if (strspn(r->er_time, "0123456789-T:.Z") != ELOG_TIME_LEN) {
		why = "no \"time\" like 2026-11-22T01:40:18.029Z";
		goto bad;
	}
	if (!elog_string(o, "decision", false, &s) ||
	    (strcmp(s, "allow") != 0 && strcmp(s, "deny") != 0)) {
		why = "no \"decision\" of allow or deny";
		goto bad;
	}
	r->er_allow = strcmp(s, "allow") == 0;
	if (!elog_string(o, "host", false, &r->er_host)) {
		why = "no \"host\" string";
		goto bad;
	}
	if (!elog_integer(o, "port", 0, 65535, &n)) {
		why = "no \"port\" from 0 to 65535";
		goto bad;
	}
	r->er_port = (int)n;
	if (!elog_string(o, "protocol", false, &r->er_protocol) ||
	    !elog_string(o, "sandbox", true, &r->er_sandbox) ||
	    !elog_string(o, "method", true, &r->er_method) ||
	    !elog_string(o, "reason", true, &r->er_reason)) {
		why = "\"protocol\", \"sandbox\", \"method\" or \"reason\" "
		    "missing or not text";
		goto bad;
	}
	if (!elog_integer(o, "status", 0, 999, &n)) {
		why = "no \"status\" from 0 to 999";
		goto bad;
	}
	r->er_status = (int)n;
	if (!elog_integer(o, "bytes_up", 0, INT64_MAX, &n)) {
		why = "no \"bytes_up\" count";
		goto bad;
	}
	r->er_up = (uint64_t)n;
	if (!elog_integer(o, "bytes_down", 0, INT64_MAX, &n)) {
		why = "no \"bytes_down\" count";
		goto bad;
	}
	r->er_down = (uint64_t)n;
	/* Added later than the rest: a log without it still reads. */
	r->er_ms = elog_integer(o, "duration_ms", 0, INT64_MAX, &n) ? n : -1;
	/* Later still, and only a tls: listener's lines have one. */
	if (json_object_get(o, "identity") != NULL &&
	    !elog_string(o, "identity", true, &r->er_identity)) {
		why = "\"identity\" not text";
		goto bad;
	}
	/* Later again: a line without them is one exchange's whole line. */
	free(s);
	s = NULL;
	if (json_object_get(o, "event") != NULL &&
	    (!elog_string(o, "event", false, &s) || (strcmp(s, "open") != 0 &&
	    strcmp(s, "end") != 0))) {
		why = "an \"event\" other than open or end";
		goto bad;
	}
	r->er_open = s != NULL && strcmp(s, "open") == 0;
	if (json_object_get(o, "id") != NULL &&
	    !elog_string(o, "id", true, &r->er_id)) {
		why = "\"id\" not text";
		goto bad;
	}
	free(s);
	json_decref(o);
	return 0;
bad:
	free(s);
	json_decref(o);
	elog_record_clear(r);
	*cause = xstrdup(why);
	return -1;
}

void
elog_record_clear(struct elog_record *r)
{
	free(r->er_sandbox);
	free(r->er_protocol);
	free(r->er_method);
	free(r->er_host);
	free(r->er_reason);
	free(r->er_identity);
	free(r->er_id);
	memset(r, 0, sizeof(*r));
}

/*
 * A copy of s for a terminal (caller frees): the log escapes what came
 * from clients already, but a line written by something else may hold
 * control bytes (\u001b in JSON), so anything outside printable ASCII
 * becomes \xNN here too.  The backslash stays: it is the log's own.
 */
char *
elog_printable(const char *s)
{
	return str_escape_as(s, strlen(s), STR_ESC_KEEP);
}

/*
 * Opens a log, plain or gzip ("-": standard input).  With follow, the
 * file is read as it grows (plain files only): the end of the file is
 * not the end of a line.  NULL with *cause.
 */
struct elog_file *
elog_open(const char *path, bool follow, char **cause)
{
	struct elog_file	*f;
	gzFile			 gz = NULL;
	int			 fd;

	*cause = NULL;
	if (strcmp(path, "-") == 0)
		fd = dup(STDIN_FILENO);
	else
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd == -1) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (!follow) {
		if ((gz = gzdopen(fd, "rb")) == NULL) {
			xasprintf(cause, "%s: cannot read through zlib", path);
			close(fd);
			return NULL;
		}
		gzbuffer(gz, 128 * 1024);
	}
	f = xcalloc(1, sizeof(*f));
	f->ef_gz = gz;
	f->ef_fd = fd;
	f->ef_follow = follow;
	/* Room for the longest line kept, and a read past it. */
	f->ef_size = ELOG_LINE_MAX + 64 * 1024 + 1;
	f->ef_buf = xmalloc(f->ef_size);
	return f;
}

/* The descriptor of a followed file, for fstat(2). */
int
elog_fd(const struct elog_file *f)
{
	return f->ef_fd;
}

/* A followed file was truncated: read it again from its start. */
void
elog_rewind(struct elog_file *f)
{
	lseek(f->ef_fd, 0, SEEK_SET);
	f->ef_len = f->ef_off = 0;
}

/*
 * Reads the next line, lent through *line (NUL-terminated, no newline)
 * with its length in *len.  A line over ELOG_LINE_MAX is read to its end
 * but not kept, and *len says it is too long.  Returns 1, 0 at the end,
 * or -1 on a read error (a .gz cut short, say) with *cause set.
 */
int
elog_getline(struct elog_file *f, char **line, size_t *len, char **cause)
{
	const char	*msg;
	char		*nl;
	bool		 over = false;
	int		 n, err;

	*cause = NULL;
	for (;;) {
		if ((nl = memchr(f->ef_buf + f->ef_off, '\n',
		    f->ef_len - f->ef_off)) != NULL || f->ef_eof) {
			if (nl == NULL && (f->ef_off == f->ef_len ||
			    f->ef_follow)) {
				f->ef_eof = false;	/* try again later */
				return 0;
			}
			if (nl == NULL)		/* the last line, unended */
				nl = f->ef_buf + f->ef_len;
			*nl = '\0';
			*line = f->ef_buf + f->ef_off;
			*len = over ? ELOG_LINE_MAX + 1 :
			    (size_t)(nl - *line);
			f->ef_off = (size_t)(nl - f->ef_buf) +
			    (nl < f->ef_buf + f->ef_len);
			return 1;
		}
		memmove(f->ef_buf, f->ef_buf + f->ef_off,
		    f->ef_len - f->ef_off);
		f->ef_len -= f->ef_off;
		f->ef_off = 0;
		if (f->ef_len > ELOG_LINE_MAX) {
			over = true;		/* read on, keep nothing */
			f->ef_len = 0;
		}
		if (f->ef_gz == NULL) {
			if ((n = (int)read(f->ef_fd, f->ef_buf + f->ef_len,
			    f->ef_size - f->ef_len - 1)) == -1) {
				if (errno == EINTR)
					continue;
				xasprintf(cause, "%s", strerror(errno));
				return -1;
			}
		} else if ((n = gzread(f->ef_gz, f->ef_buf + f->ef_len,
		    (unsigned int)(f->ef_size - f->ef_len - 1))) < 0 ||
		    (n == 0 && gzerror(f->ef_gz, &err) != NULL &&
		    err != Z_OK)) {
			msg = gzerror(f->ef_gz, &err);
			if (err == Z_ERRNO)
				msg = strerror(errno);
			else if (err == Z_BUF_ERROR)
				msg = "the compressed data ends early "
				    "(a .gz cut short?)";
			else if (strstr(msg, ": ") != NULL)
				msg = strstr(msg, ": ") + 2;	/* "<fd:3>: " */
			xasprintf(cause, "%s", msg);
			return -1;
		}
		if (n == 0)
			f->ef_eof = true;
		f->ef_len += (size_t)n;
	}
}

void
elog_close(struct elog_file *f)
{
	if (f == NULL)
		return;
	if (f->ef_gz != NULL)
		gzclose(f->ef_gz);		/* closes ef_fd */
	else
		close(f->ef_fd);
	free(f->ef_buf);
	free(f);
}
