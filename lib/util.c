/*
 * util.c: small helpers shared by every part of cordon.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "xmalloc.h"

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

void
errlist_free(struct errlist *el)
{
	free(el->el_buf);
	el->el_buf = NULL;
	el->el_len = 0;
	el->el_count = 0;
}

/*
 * Returns a printable copy of len bytes of s (caller frees): printable
 * ASCII stays, backslash and double quote are escaped, anything else
 * becomes \xNN.  Used for every piece of outside text that reaches a
 * terminal or a log, so a name cannot carry escape sequences or fake
 * line breaks.
 */
char *
str_escape(const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char		*out, *p;
	size_t		 i;
	unsigned char	 ch;

	if (len > (((size_t)-1) - 1) / 4)
		len = (((size_t)-1) - 1) / 4;
	out = p = xmalloc(len * 4 + 1);
	for (i = 0; i < len; i++) {
		ch = (unsigned char)s[i];
		if (ch == '\\' || ch == '"') {
			*p++ = '\\';
			*p++ = (char)ch;
		} else if (ch >= 0x20 && ch < 0x7f)
			*p++ = (char)ch;
		else {
			*p++ = '\\';
			*p++ = 'x';
			*p++ = hex[ch >> 4];
			*p++ = hex[ch & 0xf];
		}
	}
	*p = '\0';
	return out;
}

bool
str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * Reads a whole regular file of at most max bytes; nofollow refuses a
 * symbolic link as the last component (for files an untrusted workspace
 * names).  Returns the contents, NUL-terminated (caller frees), and the
 * length in *lenp; or NULL with *cause set (caller frees).
 */
char *
file_read(const char *path, size_t max, bool nofollow, size_t *lenp,
    char **cause)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 n;
	int		 fd, flags = O_RDONLY | O_CLOEXEC | O_NOCTTY;

	*cause = NULL;
	if (nofollow)
		flags |= O_NOFOLLOW;
	if ((fd = open(path, flags)) == -1) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		xasprintf(cause, "%s: not a regular file", path);
		goto fail;
	}
	if ((size_t)st.st_size > max) {
		xasprintf(cause, "%s: larger than %zu bytes", path, max);
		goto fail;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (len < (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			xasprintf(cause, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd);
	*lenp = len;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}
