/*
 * str.c: strings: escaped for a log or a shell, RFC 9110 tokens,
 * random hex, lists joined by a separator.
 */
#include <sys/random.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "xmalloc.h"

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
 * Says whether ch is a tchar, a byte of an RFC 9110 token (section
 * 5.6.2): a letter, a digit or one of !#$%&'*+-.^_`|~.  NUL and every
 * byte past 0x7f are not.
 */
bool
str_is_tchar(unsigned char ch)
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
		if (!str_is_tchar((unsigned char)s[i]))
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
str_random_hex(char *out, size_t n)
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
