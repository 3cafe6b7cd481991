/*
 * jsonl.c: the egress log.
 *
 * Each record is written as JSON into one buffer of the log's, reused,
 * and with one write(2) on a file opened O_APPEND, so lines from several
 * processes never interleave and a line is never left half-written by
 * us.  Text that came from a client (the host, the method) is escaped
 * to printable ASCII first, so the log stays valid JSON and valid UTF-8
 * whatever the client sent; JSON's own escaping then has only '"' and
 * '\\' left to do.  (Built with jansson, a line cost 7 us of CPU, as
 * much as the rest of a kept-alive request; so it is built by hand, and
 * jansson reads every line back in the tests, fuzz_log and cordon log.)
 *
 * A line that cannot be written (a full disk) is not lost: it is held in
 * memory, up to JSONL_HELD_MAX bytes, with every line after it, and all
 * are written, in order, by the first write that succeeds again; a line
 * cut short by a short write is ended there.  Until then the log has
 * failed (jsonl_failed), which the proxy takes as a reason to let
 * nothing new go out; jsonl_retry tries again.  Failing and recovering
 * are each said once on standard error.
 *
 * An exchange that goes upstream has two lines with one id: "open",
 * written before its first byte goes (jsonl_write_open, never held
 * back: an exchange whose open line is not in the kernel's hands is
 * refused), and "end", as every other line.  A write(2) that returned
 * is in the kernel's page cache: a proxy killed at once keeps it.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

#define JSONL_HELD_MAX	(1024 * 1024)	/* bytes of lines held back */

struct jsonl {
	char	*j_path;	/* NULL: not reopened */
	int	 j_fd;
	bool	 j_owned;	/* j_fd is closed with it */
	bool	 j_made;	/* jsonl_open() made the file */
	bool	 j_failed;	/* lines wait in j_held; said once */
	int	 j_errno;	/* why the last write failed */
	char	*j_held;	/* lines not written yet, in order */
	size_t	 j_heldlen;
	size_t	 j_heldlines;	/* line ends in j_held */
	uint64_t j_lost;	/* lines dropped: j_held was full */
	char	*j_line;	/* the line being made (jsonl_line) */
	size_t	 j_linelen;
	size_t	 j_linesize;
};

static int
jsonl_openfd(const char *path, bool *made, char **cause)
{
	const int	 flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
			    O_NOCTTY;
	int		 fd;

	fd = open(path, flags | O_EXCL, 0640);
	*made = fd != -1;
	if (fd == -1 && errno == EEXIST)
		fd = open(path, flags, 0640);
	if (fd == -1)
		xasprintf(cause, "egress log %s: %s", path, strerror(errno));
	return fd;
}

/* Opens the log at path ("-": standard output).  NULL with *cause. */
struct jsonl *
jsonl_open(const char *path, char **cause)
{
	struct jsonl	*j;
	int		 fd = STDOUT_FILENO;
	bool		 made = false;

	*cause = NULL;
	if (strcmp(path, "-") != 0 &&
	    (fd = jsonl_openfd(path, &made, cause)) == -1)
		return NULL;
	j = xcalloc(1, sizeof(*j));
	j->j_fd = fd;
	j->j_made = made;
	if (strcmp(path, "-") != 0) {
		j->j_path = xstrdup(path);
		j->j_owned = true;
	}
	return j;
}

/*
 * Removes the file jsonl_open() made if nothing was written to it: a
 * start that failed after opening the log leaves no empty file behind.
 */
void
jsonl_unmake(struct jsonl *j)
{
	struct stat	 st;

	if (j->j_made && j->j_path != NULL && fstat(j->j_fd, &st) == 0 &&
	    st.st_size == 0)
		unlink(j->j_path);
}

/*
 * A log on a descriptor opened by the caller (takes fd), which no
 * reopen replaces: `cordon run` opens it beneath the workspace.
 */
struct jsonl *
jsonl_fdopen(int fd)
{
	struct jsonl	*j;

	j = xcalloc(1, sizeof(*j));
	j->j_fd = fd;
	j->j_owned = true;
	return j;
}

/*
 * Opens the log's path again (after logrotate moved it); on failure the
 * old file stays in use.  Returns 0, or -1 with *cause set.
 */
int
jsonl_reopen(struct jsonl *j, char **cause)
{
	bool	 made;
	int	 fd;

	*cause = NULL;
	if (j->j_path == NULL)
		return 0;
	if ((fd = jsonl_openfd(j->j_path, &made, cause)) == -1)
		return -1;
	close(j->j_fd);
	j->j_fd = fd;
	jsonl_retry(j);
	return 0;
}

/* Closes the log, after a last try at what is held back; says what is lost. */
void
jsonl_close(struct jsonl *j)
{
	if (j == NULL)
		return;
	if (!jsonl_retry(j) || j->j_lost > 0)
		log_warnx("egress log: %llu line(s) could not be written and "
		    "are lost", (unsigned long long)(j->j_heldlines +
		    j->j_lost));
	if (j->j_owned)
		close(j->j_fd);
	free(j->j_held);
	free(j->j_line);
	free(j->j_path);
	free(j);
}

/* Room for n more bytes of the line being made. */
static char *
jsonl_room(struct jsonl *j, size_t n)
{
	if (n > j->j_linesize - j->j_linelen) {
		while (n > j->j_linesize - j->j_linelen)
			j->j_linesize = j->j_linesize == 0 ? 1024 :
			    j->j_linesize * 2;
		j->j_line = xreallocarray(j->j_line, 1, j->j_linesize);
	}
	return j->j_line + j->j_linelen;
}

/* Starts the next member, key, of the object being made. */
static void
jsonl_key(struct jsonl *j, const char *key)
{
	size_t	 len = strlen(key);
	char	*p = jsonl_room(j, len + 4);

	if (j->j_linelen > 1)		/* after '{', no comma */
		*p++ = ',';
	*p++ = '"';
	memcpy(p, key, len);
	p += len;
	*p++ = '"';
	*p++ = ':';
	j->j_linelen = (size_t)(p - j->j_line);
}

static void
jsonl_raw(struct jsonl *j, const char *key, const char *text)
{
	size_t	 len = strlen(text);

	jsonl_key(j, key);
	memcpy(jsonl_room(j, len), text, len);
	j->j_linelen += len;
}

static void
jsonl_int(struct jsonl *j, const char *key, long long v)
{
	char	 text[24];

	snprintf(text, sizeof(text), "%lld", v);
	jsonl_raw(j, key, text);
}

/*
 * Sets key to len bytes of s, or null.  Bytes outside printable ASCII,
 * and the backslash, become \xNN, so every "\x" in the log stands for
 * one such byte; JSON's own escaping of quotes and backslashes comes on
 * top.  Text that is ours (reasons) had outside bytes escaped when it
 * was made: with ours, its backslashes stay as they are.
 */
static void
jsonl_text_as(struct jsonl *j, const char *key, const char *s, size_t len,
    bool ours)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 ch;
	size_t			 i;
	char			*p;

	if (s == NULL) {
		jsonl_raw(j, key, "null");
		return;
	}
	jsonl_key(j, key);
	/* A byte is at most \\xNN, and the quotes. */
	if (len > (SIZE_MAX - 2) / 5)
		len = (SIZE_MAX - 2) / 5;
	p = jsonl_room(j, len * 5 + 2);
	*p++ = '"';
	for (i = 0; i < len; i++) {
		ch = (unsigned char)s[i];
		if (ch == '"' || (ch == '\\' && ours)) {
			*p++ = '\\';
			*p++ = (char)ch;
		} else if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			*p++ = (char)ch;
		else {
			/* \xNN, its backslash escaped for JSON. */
			*p++ = '\\';
			*p++ = '\\';
			*p++ = 'x';
			*p++ = hex[ch >> 4];
			*p++ = hex[ch & 0xf];
		}
	}
	*p++ = '"';
	j->j_linelen = (size_t)(p - j->j_line);
}

static void
jsonl_text(struct jsonl *j, const char *key, const char *s, size_t len)
{
	jsonl_text_as(j, key, s, len, false);
}

/* Says whether lines wait to be written: the log cannot take them. */
bool
jsonl_failed(const struct jsonl *j)
{
	return j->j_failed;
}

/* Why the last write failed, in words. */
const char *
jsonl_error(const struct jsonl *j)
{
	return j->j_errno != 0 ? strerror(j->j_errno) : "a short write";
}

/* Lines waiting in memory, and lines lost since the start. */
size_t
jsonl_held(const struct jsonl *j)
{
	return j->j_heldlines;
}

uint64_t
jsonl_lost(const struct jsonl *j)
{
	return j->j_lost;
}

/* Keeps the len bytes at p (whole lines, or a line's rest) to write later. */
static void
jsonl_hold(struct jsonl *j, const char *p, size_t len)
{
	size_t	 lines = 0, i;

	for (i = 0; i < len; i++)
		lines += p[i] == '\n';
	if (len > JSONL_HELD_MAX - j->j_heldlen) {
		j->j_lost += lines;
		return;
	}
	j->j_held = xreallocarray(j->j_held, 1, j->j_heldlen + len);
	memcpy(j->j_held + j->j_heldlen, p, len);
	j->j_heldlen += len;
	j->j_heldlines += lines;
}

/*
 * Writes the len bytes at p in one write(2); what is not written is
 * held back, but for a line none of which was written when whole is
 * false (an open line: dropped).  After a short write the rest is tried
 * at once, which says why it was short (ENOSPC).  Returns whether all
 * were written.
 */
static bool
jsonl_put_as(struct jsonl *j, const char *p, size_t len, bool whole)
{
	ssize_t	 n;
	size_t	 done = 0;

	while ((n = write(j->j_fd, p + done, len - done)) > 0 &&
	    (done += (size_t)n) < len)
		;
	if (done == len)
		return true;
	j->j_errno = n == -1 ? errno : 0;
	if (!j->j_failed)
		log_warnx("egress log: write failed: %s; lines are held back "
		    "until it can be written", jsonl_error(j));
	j->j_failed = true;
	if (whole || done > 0)
		jsonl_hold(j, p + done, len - done);
	return false;
}

static bool
jsonl_put(struct jsonl *j, const char *p, size_t len)
{
	return jsonl_put_as(j, p, len, true);
}

/* The log took a line again after failing: said once. */
static void
jsonl_recovered(struct jsonl *j, size_t lines)
{
	j->j_failed = false;
	log_warnx("egress log: it can be written again; %zu line(s) held "
	    "back were written%s", lines, j->j_lost > 0 ?
	    ", some were lost (cordon_log_lines_lost_total)" : "");
}

/*
 * Tries to write what is held back.  Returns true when nothing waits any
 * more: the log may be written.  With nothing held (an open line was
 * dropped) the log stays failed until a write succeeds, so that a
 * failure then is not said again.
 */
bool
jsonl_retry(struct jsonl *j)
{
	char	*held;
	size_t	 len, lines;

	if (!j->j_failed || j->j_heldlen == 0)
		return true;
	held = j->j_held;
	len = j->j_heldlen;
	lines = j->j_heldlines;
	j->j_held = NULL;
	j->j_heldlen = j->j_heldlines = 0;
	/* Still failed while trying: a failure now is not said again. */
	if (jsonl_put(j, held, len))
		jsonl_recovered(j, lines);
	free(held);
	return !j->j_failed;
}

/*
 * Makes the line of record e, with its newline, in j_line (j_linelen
 * bytes), the fields always all there and in this order.
 */
static void
jsonl_line(struct jsonl *j, const struct egress *e)
{
	struct timeval	 now;
	struct tm	 tm;
	char		 when[40];
	long		 ms;

	gettimeofday(&now, NULL);
	gmtime_r(&e->e_start.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%03ldZ",
	    (long)e->e_start.tv_usec / 1000);
	ms = (now.tv_sec - e->e_start.tv_sec) * 1000 +
	    (now.tv_usec - e->e_start.tv_usec) / 1000;

	j->j_linelen = 0;
	*jsonl_room(j, 1) = '{';
	j->j_linelen = 1;
	jsonl_text_as(j, "time", when, strlen(when), true);
	jsonl_text(j, "sandbox", e->e_sandbox, e->e_sandbox ?
	    strlen(e->e_sandbox) : 0);
	/* The id is the client's word; the uid, the kernel's, scopes it. */
	if (e->e_has_uid)
		jsonl_int(j, "uid", (long long)e->e_uid);
	else
		jsonl_raw(j, "uid", "null");
	jsonl_text(j, "command", e->e_command, e->e_command ?
	    strlen(e->e_command) : 0);
	jsonl_text(j, "client", e->e_client, e->e_client ?
	    strlen(e->e_client) : 0);
	jsonl_text_as(j, "protocol", e->e_proto, strlen(e->e_proto), true);
	jsonl_text(j, "method", e->e_method, e->e_method ?
	    strlen(e->e_method) : 0);
	jsonl_text(j, "host", e->e_host, e->e_hostlen);
	jsonl_int(j, "port", e->e_port);
	jsonl_text(j, "path", e->e_path, e->e_path ? strlen(e->e_path) : 0);
	jsonl_text(j, "address", e->e_addr, e->e_addr ?
	    strlen(e->e_addr) : 0);
	jsonl_raw(j, "decision", e->e_allow ? "\"allow\"" : "\"deny\"");
	jsonl_text(j, "rule", e->e_rule, e->e_rule ? strlen(e->e_rule) : 0);
	jsonl_text(j, "rule_from", e->e_rule_from, e->e_rule_from ?
	    strlen(e->e_rule_from) : 0);
	/* Reasons are cordon's own words, outside text in them escaped. */
	jsonl_text_as(j, "reason", e->e_reason, e->e_reason ?
	    strlen(e->e_reason) : 0, true);
	jsonl_text_as(j, "warning", e->e_warning, e->e_warning ?
	    strlen(e->e_warning) : 0, true);
	jsonl_int(j, "status", e->e_status);
	jsonl_int(j, "bytes_up", (long long)e->e_up);
	jsonl_int(j, "bytes_down", (long long)e->e_down);
	jsonl_int(j, "duration_ms", ms < 0 ? 0 : ms);
	/* Last, so that readers of the twenty fields before still read. */
	jsonl_text(j, "identity", e->e_identity, e->e_identity ?
	    strlen(e->e_identity) : 0);
	/* Behind a node-local originator: its word, not the kernel's. */
	jsonl_text(j, "origin_uid", e->e_origin_uid, e->e_origin_uid ?
	    strlen(e->e_origin_uid) : 0);
	/* Whose credential a request read carried (proxy/pin.c). */
	jsonl_text(j, "credential", e->e_credential, e->e_credential ?
	    strlen(e->e_credential) : 0);
	/* After them too: an exchange's two lines, and what pairs them. */
	jsonl_raw(j, "event", e->e_open ? "\"open\"" : "\"end\"");
	jsonl_text(j, "id", e->e_id, e->e_id ? strlen(e->e_id) : 0);
	/* One write: the line and its end, so it is never split. */
	memcpy(jsonl_room(j, 2), "}\n", 2);
	j->j_linelen += 2;
}

/*
 * Writes one record; a failed write is said once, until a reopen.
 * Returns whether the line reached the kernel (else it is held back).
 */
bool
jsonl_write(struct jsonl *j, const struct egress *e)
{
	bool	 done = false;

	jsonl_line(j, e);
	/* After what is held back, never before it. */
	if (!jsonl_retry(j))
		jsonl_hold(j, j->j_line, j->j_linelen);
	else if ((done = jsonl_put(j, j->j_line, j->j_linelen)) &&
	    j->j_failed)
		jsonl_recovered(j, 0);
	return done;
}

/*
 * Writes the open line of an exchange (e_open), before its first byte
 * goes upstream.  It is never held back whole: while lines wait, or
 * when no byte of it is written, it is dropped and false returned, and
 * the caller refuses the exchange instead of sending it.  (The rest of
 * a line cut short is held, so the file stays whole; false still.)
 */
bool
jsonl_write_open(struct jsonl *j, const struct egress *e)
{
	bool	 done;

	if (!jsonl_retry(j))
		return false;
	jsonl_line(j, e);
	if ((done = jsonl_put_as(j, j->j_line, j->j_linelen, false)) &&
	    j->j_failed)
		jsonl_recovered(j, 0);
	return done;
}
