/*
 * harness.c: a stand-in for an agent harness, for the tests of
 * `cordon run --control`.  It listens on a Unix socket, takes one
 * connection, prints every line cordon sends (one JSON event a line),
 * and answers as told:
 *
 *   harness --listen PATH [--send JSON]... [--after EVENT JSON]...
 *           [--answer allow-once|allow-run|deny|none]...
 *
 * --send lines go out at once; --after sends JSON after the first event
 * of that name; each "ask" event takes the next --answer ("none": no
 * answer; when they run out, none).  It exits when cordon closes.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RULES	32

struct after {
	const char	*af_event;
	const char	*af_json;
	int		 af_done;
};

static void
send_line(int fd, const char *json)
{
	size_t	 len = strlen(json);

	if (write(fd, json, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
		perror("harness: write");
}

/* The string value of "key" in a flat JSON line, or NULL. */
static char *
field(const char *line, const char *key, char *buf, size_t len)
{
	char		 pat[64];
	const char	*p, *end;

	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	if ((p = strstr(line, pat)) == NULL)
		return NULL;
	p += strlen(pat);
	if ((end = strchr(p, '"')) == NULL || (size_t)(end - p) >= len)
		return NULL;
	memcpy(buf, p, (size_t)(end - p));
	buf[end - p] = '\0';
	return buf;
}

int
main(int argc, char **argv)
{
	struct sockaddr_un	 sun;
	struct after		 afters[MAX_RULES];
	const char		*path = NULL, *sends[MAX_RULES];
	const char		*answers[MAX_RULES];
	char			 line[65536], ev[64], id[64], msg[256];
	size_t			 nsends = 0, nafters = 0, nanswers = 0, next = 0;
	size_t			 len = 0, i;
	ssize_t			 n;
	char			*nl;
	int			 s, c, a;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--listen") == 0 && a + 1 < argc)
			path = argv[++a];
		else if (strcmp(argv[a], "--send") == 0 && a + 1 < argc &&
		    nsends < MAX_RULES)
			sends[nsends++] = argv[++a];
		else if (strcmp(argv[a], "--answer") == 0 && a + 1 < argc &&
		    nanswers < MAX_RULES)
			answers[nanswers++] = argv[++a];
		else if (strcmp(argv[a], "--after") == 0 && a + 2 < argc &&
		    nafters < MAX_RULES) {
			afters[nafters].af_event = argv[++a];
			afters[nafters].af_json = argv[++a];
			afters[nafters++].af_done = 0;
		} else {
			fprintf(stderr, "usage: harness --listen PATH "
			    "[--send JSON]... [--after EVENT JSON]... "
			    "[--answer D]...\n");
			return 2;
		}
	}
	if (path == NULL || strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "harness: --listen PATH (short) is needed\n");
		return 2;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	unlink(path);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    bind(s, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(s, 1) == -1 || (c = accept(s, NULL, NULL)) == -1) {
		perror("harness");
		return 1;
	}
	close(s);
	for (i = 0; i < nsends; i++)
		send_line(c, sends[i]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((n = read(c, line + len, sizeof(line) - 1 - len)) > 0) {
		len += (size_t)n;
		line[len] = '\0';
		while ((nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			printf("%s\n", line);
			if (field(line, "event", ev, sizeof(ev)) != NULL) {
				for (i = 0; i < nafters; i++)
					if (!afters[i].af_done &&
					    strcmp(afters[i].af_event, ev) == 0) {
						afters[i].af_done = 1;
						send_line(c, afters[i].af_json);
					}
				if (strcmp(ev, "ask") == 0 && next < nanswers &&
				    strcmp(answers[next], "none") != 0 &&
				    field(line, "id", id, sizeof(id)) != NULL) {
					snprintf(msg, sizeof(msg), "{\"answer\": "
					    "\"%s\", \"decision\": \"%s\"}", id,
					    answers[next]);
					send_line(c, msg);
				}
				if (strcmp(ev, "ask") == 0)
					next++;
			}
			len -= (size_t)(nl + 1 - line);
			memmove(line, nl + 1, len + 1);
		}
		if (len == sizeof(line) - 1)
			len = 0;	/* a line too long: dropped */
	}
	close(c);
	unlink(path);
	return 0;
}
