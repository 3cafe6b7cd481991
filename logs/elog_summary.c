/*
 * elog_summary.c: `cordon log summary`, per host counts over egress logs.
 *
 * Hosts are grouped as the log names them, with ASCII letters lowered
 * (API.Test and api.test are one host); the ports asked for are listed.
 * Hosts with refusals come first, most refused first, then the rest,
 * most used first.  A malformed line is counted and its place reported;
 * it never stops the summary.
 *
 * An exchange that went upstream has two lines, "open" and "end", with
 * one id; it is counted once, by its end, as a line without "event"
 * (an older log's) is.  An open line whose end is in none of the files
 * is counted as allowed and as unended: in flight when the log was
 * read, or the proxy was killed (its end line is never written).  The
 * files may come in any order: an end read before its open waits.
 */
#include <sys/types.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/log.h"
#include "lib/xmalloc.h"
#include "logs/elog.h"

#define SUMMARY_PORTS_MAX	8	/* then "..." */
#define SUMMARY_BAD_SHOWN	5	/* malformed lines named on stderr */

struct summary_host {
	char		*sh_host;	/* lowered; "" for no head */
	uint64_t	 sh_allowed;
	uint64_t	 sh_refused;
	uint64_t	 sh_failed;	/* allowed, but it did not go through */
	uint64_t	 sh_up;
	uint64_t	 sh_down;
	char		 sh_first[ELOG_TIME_LEN + 1];
	char		 sh_last[ELOG_TIME_LEN + 1];
	int		 sh_ports[SUMMARY_PORTS_MAX];
	size_t		 sh_nports;
	bool		 sh_more_ports;
	uint64_t	 sh_unended;	/* opened, with no end line */
};

/* An open line not yet paired with its end, or an end with its open. */
struct summary_pend {
	char			*sp_id;
	struct summary_host	*sp_host;
	bool			 sp_end;	/* the end came first */
	struct summary_pend	*sp_next;
};

struct summary_bad {
	char		*sb_file;
	uint64_t	 sb_line;
	char		*sb_why;
};

struct summary {
	struct summary_host	**s_table;	/* open addressing */
	size_t			  s_size;	/* a power of two */
	size_t			  s_count;
	uint64_t		  s_lines;
	uint64_t		  s_malformed;
	struct summary_bad	  s_bad[SUMMARY_BAD_SHOWN];
	size_t			  s_nbad;
	int			  s_unreadable;	/* files */
	struct summary_pend	**s_pend;	/* chained, by id */
	size_t			  s_pendsize;	/* a power of two */
	size_t			  s_npend;
	uint64_t		  s_unended;
};

static uint64_t
summary_hash(const char *s)
{
	uint64_t	 h = 1469598103934665603ULL;	/* FNV-1a */

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static void
summary_grow(struct summary *s)
{
	struct summary_host	**old = s->s_table, *h;
	size_t			  oldsize = s->s_size, i, j;

	s->s_size = oldsize == 0 ? 256 : oldsize * 2;
	s->s_table = xcalloc(s->s_size, sizeof(*s->s_table));
	for (i = 0; i < oldsize; i++) {
		if ((h = old[i]) == NULL)
			continue;
		j = summary_hash(h->sh_host) & (s->s_size - 1);
		while (s->s_table[j] != NULL)
			j = (j + 1) & (s->s_size - 1);
		s->s_table[j] = h;
	}
	free(old);
}

/* The entry of host (already lowered), made when new. */
static struct summary_host *
summary_host_get(struct summary *s, const char *host)
{
	struct summary_host	*h;
	size_t			 i;

	if ((s->s_count + 1) * 2 > s->s_size)
		summary_grow(s);
	i = summary_hash(host) & (s->s_size - 1);
	while ((h = s->s_table[i]) != NULL) {
		if (strcmp(h->sh_host, host) == 0)
			return h;
		i = (i + 1) & (s->s_size - 1);
	}
	h = xcalloc(1, sizeof(*h));
	h->sh_host = xstrdup(host);
	s->s_table[i] = h;
	s->s_count++;
	return h;
}

static uint64_t
summary_sum(uint64_t a, uint64_t b)
{
	return b > INT64_MAX - a ? INT64_MAX : a + b;
}

static void
summary_pend_grow(struct summary *s)
{
	struct summary_pend	**old = s->s_pend, *p, *next;
	size_t			  oldsize = s->s_pendsize, i, j;

	s->s_pendsize = oldsize == 0 ? 256 : oldsize * 2;
	s->s_pend = xcalloc(s->s_pendsize, sizeof(*s->s_pend));
	for (i = 0; i < oldsize; i++)
		for (p = old[i]; p != NULL; p = next) {
			next = p->sp_next;
			j = summary_hash(p->sp_id) & (s->s_pendsize - 1);
			p->sp_next = s->s_pend[j];
			s->s_pend[j] = p;
		}
	free(old);
}

/*
 * Pairs r (of host h) with the other line of its exchange: the pair
 * found is forgotten, else r waits for it.  Returns false for an open
 * line whose end was read already: the end counted the exchange.
 */
static bool
summary_pair(struct summary *s, const struct elog_record *r,
    struct summary_host *h)
{
	struct summary_pend	**pp, *p;

	if (r->er_id == NULL)
		return true;
	if (s->s_npend + 1 > s->s_pendsize)
		summary_pend_grow(s);
	pp = &s->s_pend[summary_hash(r->er_id) & (s->s_pendsize - 1)];
	for (; (p = *pp) != NULL; pp = &p->sp_next) {
		if (strcmp(p->sp_id, r->er_id) != 0)
			continue;
		if (p->sp_end == !r->er_open)
			return true;	/* a line twice: as any line */
		*pp = p->sp_next;
		free(p->sp_id);
		free(p);
		s->s_npend--;
		return !r->er_open;
	}
	p = xcalloc(1, sizeof(*p));
	p->sp_id = xstrdup(r->er_id);
	p->sp_host = h;
	p->sp_end = !r->er_open;
	p->sp_next = s->s_pend[summary_hash(r->er_id) & (s->s_pendsize - 1)];
	s->s_pend[summary_hash(r->er_id) & (s->s_pendsize - 1)] = p;
	s->s_npend++;
	return true;
}

/*
 * The open lines left unpaired: exchanges with no end, each allowed and
 * unended.  Frees what waits.
 */
static void
summary_unpaired(struct summary *s)
{
	struct summary_pend	*p, *next;
	size_t			 i;

	for (i = 0; i < s->s_pendsize; i++)
		for (p = s->s_pend[i]; p != NULL; p = next) {
			next = p->sp_next;
			if (!p->sp_end) {
				p->sp_host->sh_allowed++;
				p->sp_host->sh_unended++;
				s->s_unended++;
			}
			free(p->sp_id);
			free(p);
		}
	free(s->s_pend);
	s->s_pend = NULL;
	s->s_pendsize = s->s_npend = 0;
}

static void
summary_add(struct summary *s, struct elog_record *r)
{
	struct summary_host	*h;
	char			*p;
	size_t			 i;
	bool			 count;

	for (p = r->er_host; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	h = summary_host_get(s, r->er_host);
	/* An open line is counted by its end, or when none comes. */
	count = summary_pair(s, r, h) && !r->er_open;
	if (count && r->er_allow) {
		h->sh_allowed++;
		if (r->er_reason != NULL)
			h->sh_failed++;
	} else if (count)
		h->sh_refused++;
	/*
	 * A log says at most INT64_MAX per record; an edited one can say it
	 * twice.  Sums stop there, so the JSON (signed) is never negative.
	 */
	h->sh_up = summary_sum(h->sh_up, r->er_up);
	h->sh_down = summary_sum(h->sh_down, r->er_down);
	/* The time has a fixed width: text order is time order. */
	if (h->sh_first[0] == '\0' || strcmp(r->er_time, h->sh_first) < 0)
		memcpy(h->sh_first, r->er_time, sizeof(h->sh_first));
	if (strcmp(r->er_time, h->sh_last) > 0)
		memcpy(h->sh_last, r->er_time, sizeof(h->sh_last));
	for (i = 0; i < h->sh_nports; i++)
		if (h->sh_ports[i] == r->er_port)
			return;
	if (h->sh_nports < SUMMARY_PORTS_MAX)
		h->sh_ports[h->sh_nports++] = r->er_port;
	else
		h->sh_more_ports = true;
}

static void
summary_malformed(struct summary *s, const char *file, uint64_t line,
    char *why)
{
	struct summary_bad	*b;

	s->s_malformed++;
	if (s->s_nbad < SUMMARY_BAD_SHOWN) {
		/* jansson quotes the line near the fault: keep it printable. */
		b = &s->s_bad[s->s_nbad++];
		b->sb_file = elog_printable(file);
		b->sb_line = line;
		b->sb_why = elog_printable(why);
	}
	free(why);
}

/* Reads one file into s; -1 when it could not be read to its end. */
static int
summary_file(struct summary *s, const char *path)
{
	struct elog_file	*f;
	struct elog_record	 r;
	char			*line, *cause, *shown;
	size_t			 len;
	uint64_t		 n = 0;
	int			 rc;

	if ((f = elog_open(path, false, &cause)) == NULL) {
		shown = elog_printable(cause);
		log_warnx("log summary: %s", shown);
		free(shown);
		free(cause);
		return -1;
	}
	while ((rc = elog_getline(f, &line, &len, &cause)) == 1) {
		n++;
		if (len == 0)
			continue;	/* a blank line says nothing */
		s->s_lines++;
		if (elog_parse(line, len, &r, &cause) == -1) {
			summary_malformed(s, path, n, cause);
			continue;
		}
		summary_add(s, &r);
		elog_record_clear(&r);
	}
	elog_close(f);
	if (rc == -1) {
		shown = elog_printable(path);
		log_warnx("log summary: %s: after line %llu: %s", shown,
		    (unsigned long long)n, cause);
		free(shown);
		free(cause);
		return -1;
	}
	return 0;
}

/* Refused first, most refused first; then most used; then by name. */
static int
summary_cmp(const void *a, const void *b)
{
	const struct summary_host	*x = *(const struct summary_host *const *)a;
	const struct summary_host	*y = *(const struct summary_host *const *)b;

	if ((x->sh_refused > 0) != (y->sh_refused > 0))
		return x->sh_refused > 0 ? -1 : 1;
	if (x->sh_refused != y->sh_refused)
		return x->sh_refused > y->sh_refused ? -1 : 1;
	if (x->sh_allowed != y->sh_allowed)
		return x->sh_allowed > y->sh_allowed ? -1 : 1;
	return strcmp(x->sh_host, y->sh_host);
}

static void
summary_ports_text(const struct summary_host *h, char *buf, size_t size)
{
	size_t	 i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < h->sh_nports && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%d",
		    i > 0 ? "," : "", h->sh_ports[i]);
	if (h->sh_more_ports && off < size)
		snprintf(buf + off, size - off, ",...");
}

static void
summary_print_text(FILE *out, struct summary *s, struct summary_host **hosts)
{
	char	 ports[96], *shown;
	size_t	 i;

	fprintf(out, "%-32s %-12s %8s %8s %8s %8s %12s %12s %-24s %s\n",
	    "HOST", "PORTS", "ALLOWED", "REFUSED", "FAILED", "UNENDED",
	    "BYTES_UP", "BYTES_DOWN", "FIRST", "LAST");
	for (i = 0; i < s->s_count; i++) {
		summary_ports_text(hosts[i], ports, sizeof(ports));
		shown = elog_printable(hosts[i]->sh_host);
		fprintf(out, "%-32s %-12s %8llu %8llu %8llu %8llu %12llu "
		    "%12llu %-24s %s\n", shown[0] != '\0' ? shown : "(none)",
		    ports, (unsigned long long)hosts[i]->sh_allowed,
		    (unsigned long long)hosts[i]->sh_refused,
		    (unsigned long long)hosts[i]->sh_failed,
		    (unsigned long long)hosts[i]->sh_unended,
		    (unsigned long long)hosts[i]->sh_up,
		    (unsigned long long)hosts[i]->sh_down,
		    hosts[i]->sh_first, hosts[i]->sh_last);
		free(shown);
	}
	fprintf(out, "%llu line(s), %zu host(s), %llu malformed",
	    (unsigned long long)s->s_lines, s->s_count,
	    (unsigned long long)s->s_malformed);
	/* Said only when there are: a killed proxy leaves them. */
	if (s->s_unended > 0)
		fprintf(out, ", %llu unended (in flight, or the proxy was "
		    "killed)", (unsigned long long)s->s_unended);
	fprintf(out, "\n");
}

static void
summary_print_json(FILE *out, struct summary *s, struct summary_host **hosts)
{
	json_t	*o, *a, *h, *ports, *bad;
	char	*text;
	size_t	 i, j;

	a = json_array();
	for (i = 0; i < s->s_count; i++) {
		ports = json_array();
		for (j = 0; j < hosts[i]->sh_nports; j++)
			json_array_append_new(ports,
			    json_integer(hosts[i]->sh_ports[j]));
		h = json_pack("{s:s, s:o, s:b, s:I, s:I, s:I, s:I, s:I, s:I, "
		    "s:s, s:s}", "host", hosts[i]->sh_host, "ports", ports,
		    "more_ports", hosts[i]->sh_more_ports,
		    "allowed", (json_int_t)hosts[i]->sh_allowed,
		    "refused", (json_int_t)hosts[i]->sh_refused,
		    "failed", (json_int_t)hosts[i]->sh_failed,
		    "unended", (json_int_t)hosts[i]->sh_unended,
		    "bytes_up", (json_int_t)hosts[i]->sh_up,
		    "bytes_down", (json_int_t)hosts[i]->sh_down,
		    "first", hosts[i]->sh_first, "last", hosts[i]->sh_last);
		if (h == NULL)
			fatalx("log summary: cannot encode %zu", i);
		json_array_append_new(a, h);
	}
	bad = json_array();
	for (i = 0; i < s->s_nbad; i++)
		json_array_append_new(bad, json_pack("{s:s, s:I, s:s}",
		    "file", s->s_bad[i].sb_file,
		    "line", (json_int_t)s->s_bad[i].sb_line,
		    "why", s->s_bad[i].sb_why));
	o = json_pack("{s:I, s:I, s:o, s:I, s:I, s:o}",
	    "lines", (json_int_t)s->s_lines,
	    "malformed", (json_int_t)s->s_malformed,
	    "malformed_first", bad,
	    "unreadable_files", (json_int_t)s->s_unreadable,
	    "unended", (json_int_t)s->s_unended,
	    "hosts", a);
	if (o == NULL || (text = json_dumps(o, JSON_INDENT(2) |
	    JSON_PRESERVE_ORDER)) == NULL)
		fatalx("log summary: cannot encode the summary");
	fprintf(out, "%s\n", text);
	free(text);
	json_decref(o);
}

/* The summary on standard output. */
int
elog_summary(char **files, int n, bool json)
{
	return elog_summary_to(stdout, files, n, json);
}

/*
 * Summarises the logs named in files[0..n) on out.  Returns the exit
 * status: 0, or 1 when a file could not be read (the others are still
 * counted).
 */
int
elog_summary_to(FILE *out, char **files, int n, bool json)
{
	struct summary		  s;
	struct summary_host	**hosts;
	size_t			  i, k = 0;
	int			  f;

	memset(&s, 0, sizeof(s));
	for (f = 0; f < n; f++)
		if (summary_file(&s, files[f]) == -1)
			s.s_unreadable++;
	summary_unpaired(&s);
	hosts = xreallocarray(NULL, s.s_count + 1, sizeof(*hosts));
	for (i = 0; i < s.s_size; i++)
		if (s.s_table[i] != NULL)
			hosts[k++] = s.s_table[i];
	qsort(hosts, s.s_count, sizeof(*hosts), summary_cmp);

	for (i = 0; i < s.s_nbad; i++)
		log_warnx("log summary: %s:%llu: malformed: %s",
		    s.s_bad[i].sb_file, (unsigned long long)s.s_bad[i].sb_line,
		    s.s_bad[i].sb_why);
	if (s.s_malformed > s.s_nbad)
		log_warnx("log summary: and %llu more malformed line(s)",
		    (unsigned long long)(s.s_malformed - s.s_nbad));
	if (json)
		summary_print_json(out, &s, hosts);
	else
		summary_print_text(out, &s, hosts);

	for (i = 0; i < s.s_count; i++) {
		free(hosts[i]->sh_host);
		free(hosts[i]);
	}
	for (i = 0; i < s.s_nbad; i++) {
		free(s.s_bad[i].sb_file);
		free(s.s_bad[i].sb_why);
	}
	free(hosts);
	free(s.s_table);
	return s.s_unreadable > 0 ? 1 : 0;
}
