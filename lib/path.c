/*
 * path.c: absolute, normalised paths compared as text.
 */
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"

/*
 * Says whether path is dir or lies below it: both absolute and
 * normalised (no "." or ".." component, no repeated or trailing '/'),
 * compared as text, so "/a/bc" is not below "/a/b".
 */
bool
path_is_below(const char *path, const char *dir)
{
	size_t	 n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' ||
	    path[n] == '/');
}

/*
 * dir, a '/' and name, allocated: "/name" when dir is "".  A walk makes
 * one per entry, so no printf.
 */
char *
path_join(const char *dir, const char *name)
{
	size_t	 d = strlen(dir), n = strlen(name);
	char	*p;

	p = xmalloc(d + 1 + n + 1);
	memcpy(p, dir, d);
	p[d] = '/';
	memcpy(p + d + 1, name, n + 1);
	return p;
}
