/*
 * policy_list.c: host lists in plain text, one pattern per line.
 *
 * Operators keep long allowlists in git as text; '#' starts a comment,
 * blank lines are skipped, and each entry remembers FILE:LINE so that
 * `cordon policy explain` can point at it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"

#define MAX_LINE	1024

/*
 * Adds the patterns of len bytes of buf (named name in messages and
 * origins) to pl.  Every bad line is reported; on any error nothing is
 * added and -1 is returned with *cause set (caller frees).
 */
int
policy_list_buffer(const char *buf, size_t len, const char *name,
    struct plist *pl, char **cause)
{
	struct errlist	 errors = { 0 };
	struct pitem	*it;
	const char	*line = buf, *end, *nl;
	char		*text, *pcause, *shown;
	size_t		 lineno = 0, n, first = pl->pl_n;

	*cause = NULL;
	while (line < buf + len) {
		lineno++;
		if ((nl = memchr(line, '\n', (size_t)(buf + len - line))) ==
		    NULL)
			nl = buf + len;
		end = nl;
		if ((n = (size_t)(end - line)) > MAX_LINE) {
			errlist_add(&errors, "%s:%zu: line longer than %d "
			    "bytes", name, lineno, MAX_LINE);
			line = nl + 1;
			continue;
		}
		if ((end = memchr(line, '#', n)) == NULL)
			end = nl;
		while (line < end && (*line == ' ' || *line == '\t'))
			line++;
		while (end > line && (end[-1] == ' ' || end[-1] == '\t' ||
		    end[-1] == '\r'))
			end--;
		if (end == line) {
			line = nl + 1;
			continue;
		}
		text = xstrndup(line, (size_t)(end - line));
		if (strlen(text) != (size_t)(end - line)) {
			errlist_add(&errors, "%s:%zu: NUL byte in line", name,
			    lineno);
		} else if (pl->pl_n >= POLICY_MAX_ITEMS) {
			errlist_add(&errors, "%s:%zu: more than %d entries",
			    name, lineno, POLICY_MAX_ITEMS);
			free(text);
			break;
		} else {
			it = policy_plist_add(pl);
			xasprintf(&it->pi_from, "%s:%zu", name, lineno);
			if (policy_parse_pattern(text, it, &pcause) == -1) {
				shown = str_escape(text, strlen(text));
				errlist_add(&errors, "%s:%zu: \"%s\": %s", name,
				    lineno, shown, pcause);
				free(shown);
				free(pcause);
				policy_pitem_clear(&pl->pl_v[--pl->pl_n]);
			}
		}
		free(text);
		line = nl + 1;
	}
	if (errors.el_count == 0)
		return 0;
	while (pl->pl_n > first)
		policy_pitem_clear(&pl->pl_v[--pl->pl_n]);
	*cause = errlist_steal(&errors);
	return -1;
}

/* Adds the patterns of a list file to pl; see policy_list_buffer. */
int
policy_list_load(const char *path, struct plist *pl,
    const struct policy_ctx *ctx, char **cause)
{
	char	*buf;
	size_t	 len;
	int	 rc;

	if ((buf = file_read(path, POLICY_MAX_FILE,
	    ctx->pc_untrusted ? ctx->pc_workspace : NULL, &len,
	    cause)) == NULL)
		return -1;
	rc = policy_list_buffer(buf, len, path, pl, cause);
	free(buf);
	return rc;
}
