/*
 * http_path.c: the path of a request as network.inspect's path rules see
 * it.  The proxy passes the target on as the client sent it, so a path
 * that the server could resolve to something other than what the rule
 * matched must be refused, not guessed at: every spelling below has let
 * a request past a prefix rule on some server (Tomcat's "..;", IIS's
 * double decoding, overlong UTF-8 dots).  Pure, unit-tested and fuzzed.
 */
#include <sys/types.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "wire/wire.h"

/*
 * The length of the UTF-8 sequence at s (n bytes left), or 0 when it is
 * not one: a stray continuation byte, a sequence cut short, an overlong
 * form (C0 AE is '.' to a lax decoder), a surrogate or past U+10FFFF
 * (RFC 3629 section 4).
 */
static size_t
http_path_utf8(const unsigned char *s, size_t n)
{
	unsigned char	 lo = 0x80, hi = 0xbf;
	size_t		 len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;		/* overlong */
		else if (s[0] == 0xed)
			hi = 0x9f;		/* surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90;		/* overlong */
		else if (s[0] == 0xf4)
			hi = 0x8f;		/* past U+10FFFF */
	} else
		return 0;			/* C0, C1, F5-FF, 80-BF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/*
 * Decodes the %XX escapes of the n bytes of path at target into p (at
 * least n + 1 bytes), refusing a bad escape and an escaped '/', '\\' or
 * NUL, which the decoded path could not tell from the real ones.
 * Returns 0, or -1 with *cause.
 */
static int
http_path_decode(const char *target, size_t n, char *p, char **cause)
{
	size_t	 i, o = 0;
	int	 hi, lo, ch;

	for (i = 0; i < n; i++) {
		ch = (unsigned char)target[i];
		if (ch == '%') {
			if (i + 2 >= n || (hi = http_hex((unsigned char)
			    target[i + 1])) == -1 || (lo = http_hex(
			    (unsigned char)target[i + 2])) == -1) {
				xasprintf(cause, "a '%%' that is not followed "
				    "by two hex digits in the path");
				return -1;
			}
			ch = hi * 16 + lo;
			if (ch == '/' || ch == '\\' || ch == 0) {
				xasprintf(cause, "an escaped '/', '\\\\' or NUL "
				    "(%%%c%c) in the path", target[i + 1],
				    target[i + 2]);
				return -1;
			}
			i += 2;
		}
		p[o++] = (char)ch;
	}
	p[o] = '\0';
	return 0;
}

/*
 * What the decoded path p may not hold, or NULL: a "." or ".." segment, a
 * '\\', a ';' (a path parameter: "..;" is ".." to Tomcat and Jetty), a
 * '%' and two hex digits (it was escaped twice: a server that decodes
 * again sees another path) or bytes that are not UTF-8.
 */
static const char *
http_path_check(const char *p)
{
	const char	*s, *seg;
	size_t		 n = strlen(p), i, len;

	for (seg = p + 1; ; seg = s + 1) {
		len = strcspn(seg, "/");
		if ((len == 1 && seg[0] == '.') ||
		    (len == 2 && seg[0] == '.' && seg[1] == '.'))
			return "a \".\" or \"..\" segment in the path";
		if ((s = strchr(seg, '/')) == NULL)
			break;
	}
	if (strchr(p, '\\') != NULL)
		return "a '\\' in the path";
	if (strchr(p, ';') != NULL)
		return "a ';' in the path (a path parameter, which some "
		    "servers strip before they resolve the path)";
	for (s = p; (s = strchr(s, '%')) != NULL; s++)
		if (http_hex((unsigned char)s[1]) != -1 &&
		    http_hex((unsigned char)s[2]) != -1)
			return "an escape escaped twice (%25 and two hex "
			    "digits) in the path";
	for (i = 0; i < n; i += len)
		if ((len = http_path_utf8((const unsigned char *)p + i,
		    n - i)) == 0)
			return "bytes that are not UTF-8 in the path "
			    "(an overlong or invalid sequence)";
	return NULL;
}

/*
 * The path of an origin-form target as network.inspect's path rules see
 * it: the query cut off and %XX escapes decoded once; what two servers
 * could read two ways (http_path_decode, http_path_check) is refused.
 * Returns 0 and *out (caller frees), or -1 with *cause.
 */
int
http_path_normalise(const char *target, char **out, char **cause)
{
	size_t		 n = strcspn(target, "?");
	const char	*why;
	char		*p;

	*out = NULL;
	*cause = NULL;
	if (n == 0 || target[0] != '/') {
		xasprintf(cause, "the path does not start with '/'");
		return -1;
	}
	p = xmalloc(n + 1);
	if (http_path_decode(target, n, p, cause) == -1) {
		free(p);
		return -1;
	}
	if ((why = http_path_check(p)) != NULL) {
		*cause = xstrdup(why);
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}
