/*
 * xmalloc.h: allocators that never return NULL.
 *
 * Out of memory is not a state cordon can act on sensibly, so these exit
 * with a message (fatal) instead of returning NULL.  Sizes that come from
 * outside (the network, a workspace, an agent) are capped by the caller
 * before they reach these.
 */
#ifndef CORDON_XMALLOC_H
#define CORDON_XMALLOC_H

#include <stdarg.h>
#include <stddef.h>

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
void	*xmalloc_grow(void *, size_t, size_t *, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
int	 xvasprintf(char **, const char *, va_list)
	    __attribute__((format(printf, 2, 0)));

#endif
