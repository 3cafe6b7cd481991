/*
 * elog_tail.c: `cordon log tail`, egress log records as readable lines.
 *
 * Without -f the last N records are printed (plain or .gz).  With -f the
 * file is then followed as `tail -F` does: it is polled; when the name
 * points to a new file (logrotate moved the old one away and the proxy
 * made a new one on SIGHUP) what is left in the old one is read, then
 * the new one from its start; a file that shrank (copytruncate) is read
 * again from its start.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/xmalloc.h"
#include "logs/elog.h"

#define TAIL_POLL_USECS		200000

/*
 * One record on one line: time, sandbox (SANDBOX@IDENTITY for a tls:
 * client's: its id is scoped to it), decision, method (or protocol),
 * host:port, status, bytes up and down, and the reason if any.  An open
 * line (sent upstream, not ended yet) says "open" for its decision and
 * has no status or bytes: its end line has them.  Text is made
 * printable, so a line is a line on any terminal.
 */
void
elog_tail_format(const struct elog_record *r, char *buf, size_t size)
{
	char	*sandbox, *method, *host, *reason = NULL, *scoped;
	bool	 v6;

	sandbox = elog_printable(r->er_sandbox != NULL ? r->er_sandbox : "-");
	if (r->er_identity != NULL) {
		xasprintf(&scoped, "%s@%s", sandbox, r->er_identity);
		free(sandbox);
		sandbox = elog_printable(scoped);
		free(scoped);
	}
	method = elog_printable(r->er_method != NULL ? r->er_method :
	    r->er_protocol);
	host = elog_printable(r->er_host[0] != '\0' ? r->er_host : "-");
	if (r->er_reason != NULL)
		reason = elog_printable(r->er_reason);
	v6 = strchr(host, ':') != NULL;
	if (r->er_open)
		snprintf(buf, size, "%s %s open  %s %s%s%s:%d", r->er_time,
		    sandbox, method, v6 ? "[" : "", host, v6 ? "]" : "",
		    r->er_port);
	else
		snprintf(buf, size, "%s %s %s %s %s%s%s:%d %d up %llu down "
		    "%llu%s%s", r->er_time, sandbox, r->er_allow ? "allow" :
		    "deny ", method, v6 ? "[" : "", host, v6 ? "]" : "",
		    r->er_port, r->er_status, (unsigned long long)r->er_up,
		    (unsigned long long)r->er_down, reason != NULL ? ": " : "",
		    reason != NULL ? reason : "");
	free(sandbox);
	free(method);
	free(host);
	free(reason);
}

/* Formats and prints one line, or says on stderr why it is malformed. */
static void
tail_line(const char *path, const char *line, size_t len)
{
	struct elog_record	 r;
	char			 out[2048], *cause, *shown;

	if (len == 0)
		return;
	if (elog_parse(line, len, &r, &cause) == -1) {
		shown = elog_printable(path);
		log_warnx("log tail: %s: a malformed line: %s", shown, cause);
		free(shown);
		free(cause);
		return;
	}
	elog_tail_format(&r, out, sizeof(out));
	elog_record_clear(&r);
	printf("%s\n", out);
}

/* The last n lines of f, kept in a ring (n of them at most). */
static int
tail_last(const char *path, struct elog_file *f, long n)
{
	char	**ring;
	size_t	 *lens, len;
	char	 *line, *cause, *shown;
	long	  next = 0, have = 0, i;
	int	  rc;

	ring = xcalloc((size_t)n + 1, sizeof(*ring));
	lens = xcalloc((size_t)n + 1, sizeof(*lens));
	while ((rc = elog_getline(f, &line, &len, &cause)) == 1) {
		if (n == 0 || len == 0)
			continue;
		free(ring[next]);
		/* A line too long to keep is kept as a marker only. */
		ring[next] = len > ELOG_LINE_MAX ? xstrdup("") : xstrdup(line);
		lens[next] = len;
		next = (next + 1) % n;
		if (have < n)
			have++;
	}
	for (i = 0; i < have; i++) {
		long	 k = (next - have + i + n) % n;

		tail_line(path, ring[k], lens[k]);
	}
	for (i = 0; i < n; i++)
		free(ring[i]);
	free(ring);
	free(lens);
	if (rc == -1) {
		shown = elog_printable(path);
		log_warnx("log tail: %s: %s", shown, cause);
		free(shown);
		free(cause);
		return -1;
	}
	fflush(stdout);
	return 0;
}

/* Prints whatever whole lines f has now. */
static int
tail_more(const char *path, struct elog_file *f)
{
	char	*line, *cause, *shown;
	size_t	 len;
	int	 rc;

	while ((rc = elog_getline(f, &line, &len, &cause)) == 1)
		tail_line(path, line, len);
	fflush(stdout);
	if (rc == -1) {
		shown = elog_printable(path);
		log_warnx("log tail: %s: %s", shown, cause);
		free(shown);
		free(cause);
	}
	return rc;
}

/*
 * Prints the last n records of path, then, with follow, every record
 * added, across rotation, until killed.  Returns the exit status.
 */
int
elog_tail(const char *path, long n, bool follow)
{
	struct elog_file	*f, *nf;
	struct stat		 st, now;
	off_t			 seen = 0;
	char			*cause, *shown;
	int			 fd;

	if ((f = elog_open(path, follow, &cause)) == NULL) {
		shown = elog_printable(cause);
		log_warnx("log tail: %s", shown);
		free(shown);
		free(cause);
		return 1;
	}
	if (tail_last(path, f, n) == -1 || !follow) {
		elog_close(f);
		return follow ? 1 : 0;
	}
	if (strcmp(path, "-") == 0)
		fatalx("log tail: -f needs a file, not standard input");
	for (;;) {
		fd = elog_fd(f);
		if (fstat(fd, &st) == 0) {
			if (st.st_size < seen) {
				shown = elog_printable(path);
				log_warnx("log tail: %s: truncated; reading "
				    "it from its start", shown);
				free(shown);
				elog_rewind(f);
			}
			seen = st.st_size;
		}
		if (tail_more(path, f) == -1)
			break;
		/* A new file by that name: finish the old, then move. */
		if (stat(path, &now) == 0 && fstat(fd, &st) == 0 &&
		    (now.st_ino != st.st_ino || now.st_dev != st.st_dev)) {
			if ((nf = elog_open(path, true, &cause)) == NULL)
				free(cause);	/* not yet: try again */
			else {
				tail_more(path, f);
				elog_close(f);
				f = nf;
				seen = 0;
				continue;	/* read the new one at once */
			}
		}
		usleep(TAIL_POLL_USECS);
	}
	elog_close(f);
	return 0;
}
