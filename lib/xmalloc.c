/*
 * xmalloc.c: allocators that exit on failure.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/xmalloc.h"

void *
xmalloc(size_t size)
{
	void	*p;

	if (size == 0)
		fatalx("xmalloc: zero size");
	if ((p = malloc(size)) == NULL)
		fatal("xmalloc: allocating %zu bytes", size);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void	*p;

	if (nmemb == 0 || size == 0)
		fatalx("xcalloc: zero size");
	if ((p = calloc(nmemb, size)) == NULL)
		fatal("xcalloc: allocating %zu * %zu bytes", nmemb, size);
	return p;
}

void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void	*p;

	if (nmemb == 0 || size == 0)
		fatalx("xreallocarray: zero size");
	if (SIZE_MAX / nmemb < size)
		fatalx("xreallocarray: %zu * %zu overflows", nmemb, size);
	if ((p = realloc(ptr, nmemb * size)) == NULL)
		fatal("xreallocarray: allocating %zu * %zu bytes", nmemb,
		    size);
	return p;
}

/*
 * p, an array of *cap elements of size holding n, with room for one
 * more: its capacity doubled (16 at first) when it is full.
 */
void *
xmalloc_grow(void *p, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap == 0 ? 16 : 2 * *cap;
	return xreallocarray(p, *cap, size);
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("xstrdup");
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char	*p;

	if ((p = strndup(s, n)) == NULL)
		fatal("xstrndup");
	return p;
}

int
xvasprintf(char **ret, const char *fmt, va_list ap)
{
	int	 n;

	if ((n = vasprintf(ret, fmt, ap)) == -1)
		fatal("xvasprintf");
	return n;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = xvasprintf(ret, fmt, ap);
	va_end(ap);
	return n;
}
