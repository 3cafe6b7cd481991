/*
 * str.c: strings: escaped for a log or a shell, RFC 9110 tokens,
 * random hex, lists joined by a separator, a JWT's placeholder.
 */
#include <sys/random.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"

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

/* Whether c is of base64url's alphabet (RFC 4648 section 5). */
static bool
str_is_b64url(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/*
 * Where the signature of JWT s begins (RFC 7519, compact JWS: three
 * parts of base64url, unpadded, split by dots, none empty), or 0 when
 * s is not one.  The header and the payload before it are no secret to
 * whoever holds the token; the signature is what lets it be used.
 */
size_t
str_jwt_signature(const char *s)
{
	size_t	 i, dots = 0, sig = 0;

	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] == '.') {
			if (i == 0 || s[i - 1] == '.' || ++dots > 2)
				return 0;
			sig = i + 1;
		} else if (!str_is_b64url((unsigned char)s[i]))
			return 0;
	}
	return dots == 2 && s[sig] != '\0' ? sig : 0;
}

/*
 * A placeholder for JWT s (new string), or NULL when s is not one: its
 * header and payload as they are, so that a program can still read its
 * claims (expiry, account), and in place of its signature as many
 * random base64url characters, so that no server takes it.  Its last
 * character, which may hold unused bits, is one of "AQgw" (no such
 * bits set) when s's length leaves some.
 */
char *
str_jwt_placeholder(const char *s)
{
	static const char	 b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz0123456789-_";
	unsigned char		 r[64];
	size_t			 sig, len, i, j, k = 0;
	char			*out;

	if ((sig = str_jwt_signature(s)) == 0)
		return NULL;
	len = strlen(s);
	out = xstrdup(s);
	for (i = sig; i < len; i += k) {
		k = len - i < sizeof(r) ? len - i : sizeof(r);
		if (getrandom(r, k, 0) != (ssize_t)k) {
			free(out);
			return NULL;
		}
		for (j = 0; j < k; j++)
			out[i + j] = b64[r[j] % 64];
	}
	/* 2 or 3 characters over a whole 4 hold 4 or 2 bits of padding. */
	if ((len - sig) % 4 == 2)
		out[len - 1] = "AQgw"[r[k - 1] % 4];
	else if ((len - sig) % 4 == 3)
		out[len - 1] = b64[(r[k - 1] % 16) * 4];
	return out;
}
