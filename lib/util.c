/*
 * util.c: small helpers shared by every part of cordon.
 */
#include <sys/random.h>
#include <sys/resource.h>
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

/*
 * s as one word for a POSIX shell: in single quotes, each ' as '\''.
 * For commands cordon suggests; escape the result before printing it.
 */
char *
str_shell_quote(const char *s)
{
	char	*q, *p;
	size_t	 n = 3;
	const char *c;

	for (c = s; *c != '\0'; c++)
		n += *c == '\'' ? 4 : 1;
	q = p = xmalloc(n);
	*p++ = '\'';
	for (c = s; *c != '\0'; c++) {
		if (*c == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else
			*p++ = *c;
	}
	*p++ = '\'';
	*p = '\0';
	return q;
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
	return str_escape_as(s, len, STR_ESC_QUOTE);
}

/*
 * Returns a copy of len bytes of s (caller frees) in which no byte is
 * outside printable ASCII: each such byte, NUL included, becomes \xNN
 * (lower-case hex), and mode says what happens to '\\' and '"'.  The
 * copy is at most four times as long, plus the NUL.
 */
char *
str_escape_as(const char *s, size_t len, enum str_esc mode)
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
		if (mode == STR_ESC_QUOTE && (ch == '\\' || ch == '"')) {
			*p++ = '\\';
			*p++ = (char)ch;
		} else if (ch >= 0x20 && ch < 0x7f &&
		    (mode != STR_ESC_HEX_BACKSLASH || ch != '\\'))
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

/*
 * Opens path for reading, without following any symbolic link below the
 * folder `beneath`, which path must start with (and without "..").
 * This is how files an untrusted workspace names are opened: a cloned
 * repository can hold links (".cordon/lists -> ~/.ssh") that would
 * otherwise make cordon read and print the user's own files.  Returns
 * the descriptor, or -1 with *cause set (caller frees).
 */
static int
util_open_beneath(const char *path, const char *beneath, char **cause)
{
	size_t	 n = strcmp(beneath, "/") == 0 ? 0 : strlen(beneath);
	char	*rel, *seg, *save, *next;
	int	 fd, nfd;

	if (strncmp(path, beneath, n) != 0 || path[n] != '/') {
		xasprintf(cause, "%s is outside %s, where a workspace "
		    "policy may read", path, beneath);
		return -1;
	}
	if ((fd = open(beneath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		xasprintf(cause, "%s: %s", beneath, strerror(errno));
		return -1;
	}
	rel = xstrdup(path + n + 1);
	for (seg = strtok_r(rel, "/", &save); seg != NULL; seg = next) {
		next = strtok_r(NULL, "/", &save);
		if (strcmp(seg, "..") == 0) {
			xasprintf(cause, "%s: \"..\" is refused here", path);
			goto fail;
		}
		nfd = openat(fd, seg, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
		    O_NOCTTY | (next != NULL ? O_DIRECTORY : 0));
		if (nfd == -1) {
			if (errno == ELOOP || (errno == ENOTDIR && next != NULL))
				xasprintf(cause, "%s: \"%s\" is a symbolic link "
				    "or not a folder, and links are not "
				    "followed here", path, seg);
			else
				xasprintf(cause, "%s: %s", path,
				    strerror(errno));
			goto fail;
		}
		close(fd);
		fd = nfd;
	}
	free(rel);
	return fd;
fail:
	free(rel);
	close(fd);
	return -1;
}

/*
 * Reads a whole regular file of at most max bytes.  When beneath is not
 * NULL, path must lie below that folder and is opened without following
 * links (see util_open_beneath).  Returns the contents, NUL-terminated (caller
 * frees), and the length in *lenp; or NULL with *cause set (caller frees).
 */
char *
file_read(const char *path, size_t max, const char *beneath, size_t *lenp,
    char **cause)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 n;
	int		 fd;

	*cause = NULL;
	if (beneath != NULL)
		fd = util_open_beneath(path, beneath, cause);
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		xasprintf(cause, "%s: %s", path, strerror(errno));
	if (fd == -1)
		return NULL;
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

/*
 * Raises the soft limit on open descriptors to the hard one: a relay
 * holds two sockets and two pipes, and the default of 1024 is soon met.
 */
void
fd_limit_raise(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

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
 * Says whether ch is a tchar, a byte of an RFC 9110 token (section
 * 5.6.2): a letter, a digit or one of !#$%&'*+-.^_`|~.  NUL and every
 * byte past 0x7f are not.
 */
bool
char_is_tchar(unsigned char ch)
{
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9'))
		return true;
	return ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

/*
 * Says whether the len bytes of s are an RFC 9110 token: at least one
 * byte, each a tchar.  HTTP methods and header names are tokens.
 */
bool
str_is_token(const char *s, size_t len)
{
	size_t	 i;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++)
		if (!char_is_tchar((unsigned char)s[i]))
			return false;
	return true;
}

/*
 * Fills out with n random lower-case hex digits and a NUL (out holds
 * n + 1 bytes), for ids and names nobody may guess.  The bytes come from
 * getrandom(2), which waits until the kernel's generator is seeded; each
 * gives two digits, high half first.  Returns 0, or -1 with errno set.
 */
int
hex_random(char *out, size_t n)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 b[64];
	size_t			 i = 0, j, want;
	ssize_t			 got;

	while (i < n) {
		want = (n - i + 1) / 2;
		if (want > sizeof(b))
			want = sizeof(b);
		if ((got = getrandom(b, want, 0)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (j = 0; j < (size_t)got && i < n; j++) {
			out[i++] = hex[b[j] >> 4];
			if (i < n)
				out[i++] = hex[b[j] & 0xf];
		}
	}
	out[n] = '\0';
	return 0;
}

/* Appends item to the list *list (NULL: empty), separated by sep. */
void
str_append(char **list, const char *sep, const char *item)
{
	char	*joined;

	if (*list == NULL) {
		*list = xstrdup(item);
		return;
	}
	xasprintf(&joined, "%s%s%s", *list, sep, item);
	free(*list);
	*list = joined;
}
