/*
 * errlist.c: every error of a check collected
 * before giving up (struct errlist in util.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"

/* Appends one formatted message to el. */
void
errlist_add(struct errlist *el, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;
	size_t	 n;

	va_start(ap, fmt);
	n = (size_t)xvasprintf(&msg, fmt, ap);
	va_end(ap);

	el->el_buf = xreallocarray(el->el_buf, 1, el->el_len + n + 2);
	if (el->el_len != 0)
		el->el_buf[el->el_len++] = '\n';
	memcpy(el->el_buf + el->el_len, msg, n + 1);
	el->el_len += n;
	el->el_count++;
	free(msg);
}

/* Returns the joined messages (caller frees) and empties el. */
char *
errlist_steal(struct errlist *el)
{
	char	*buf = el->el_buf;

	el->el_buf = NULL;
	el->el_len = 0;
	el->el_count = 0;
	return buf;
}
