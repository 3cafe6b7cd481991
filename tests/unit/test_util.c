/*
 * test_util.c: the small helpers of util.h (lib/str.c, lib/path.c, lib/file.c,
 * lib/errlist.c) that several parts share, a JWT's placeholder with them.
 */
#include "unit.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "lib/util.h"
#include "lib/xmalloc.h"

struct below_case {
	const char	*path;
	const char	*dir;
	bool		 below;
};

/* At the folder or under it, compared as text on component bounds. */
static void
test_path_is_below(void **state)
{
	static const struct below_case cases[] = {
		{ "/a/b", "/a/b", true },
		{ "/a/b/c", "/a/b", true },
		{ "/a/b/c/d", "/a/b", true },
		{ "/a/bc", "/a/b", false },
		{ "/a", "/a/b", false },
		{ "/a/", "/a/b", false },
		{ "/b/a/b", "/a/b", false },
		{ "/", "/", true },
		{ "/a", "/", true },
		{ "/a/b", "/", true },
		{ "a/b", "/", false },
		{ "", "/", false },
		{ "/tmp", "/tmp", true },
		{ "/tmpx", "/tmp", false },
		{ "/tmp/x", "/tmp", true },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < nitems(cases); i++)
		if (path_is_below(cases[i].path, cases[i].dir) !=
		    cases[i].below)
			fail_msg("path_is_below(\"%s\", \"%s\") is not %s",
			    cases[i].path, cases[i].dir,
			    cases[i].below ? "true" : "false");
}

/* Asserts that len bytes of in escape to want. */
static void
escaped(const char *in, size_t len, const char *want)
{
	char	*got;

	got = str_escape(in, len);
	assert_string_equal(got, want);
	free(got);
}

/* Printable ASCII stays, '\\' and '"' get a backslash, the rest \xNN. */
static void
test_str_escape(void **state)
{
	(void)state;
	escaped("", 0, "");
	escaped("plain text ~!", 13, "plain text ~!");
	escaped("a\\b\"c", 5, "a\\\\b\\\"c");
	escaped("a\nb\rc\td", 7, "a\\x0ab\\x0dc\\x09d");
	escaped("\x1b[31m", 5, "\\x1b[31m");
	escaped("\x7f\x80\xff", 3, "\\x7f\\x80\\xff");
	escaped("a\0b", 3, "a\\x00b");
	escaped("abc", 2, "ab");
}

/* Asserts that len bytes of in escape to want in mode. */
static void
escaped_as(const char *in, size_t len, enum str_esc mode, const char *want)
{
	char	*got;

	got = str_escape_as(in, len, mode);
	assert_string_equal(got, want);
	free(got);
}

/*
 * The egress log's escaping: with STR_ESC_HEX_BACKSLASH every "\x" in
 * the result stands for one byte; with STR_ESC_KEEP a backslash already
 * there stays.  Neither touches the double quote (JSON escapes it).
 */
static void
test_str_escape_as(void **state)
{
	static const char	 all[] = "a\\b\"c\x01\x7f\xe9";
	char			 every[256], *got;
	size_t			 i;

	(void)state;
	escaped_as(all, sizeof(all) - 1, STR_ESC_QUOTE,
	    "a\\\\b\\\"c\\x01\\x7f\\xe9");
	escaped_as(all, sizeof(all) - 1, STR_ESC_HEX_BACKSLASH,
	    "a\\x5cb\"c\\x01\\x7f\\xe9");
	escaped_as(all, sizeof(all) - 1, STR_ESC_KEEP,
	    "a\\b\"c\\x01\\x7f\\xe9");
	escaped_as("a\0b", 3, STR_ESC_KEEP, "a\\x00b");
	escaped_as("", 0, STR_ESC_HEX_BACKSLASH, "");

	/* Every byte: printable ASCII alone stays, the rest is \xNN. */
	for (i = 0; i < sizeof(every); i++)
		every[i] = (char)i;
	got = str_escape_as(every, sizeof(every), STR_ESC_KEEP);
	assert_int_equal(strlen(got), 95 + 161 * 4);
	for (i = 0; got[i] != '\0'; i++)
		assert_true(got[i] >= 0x20 && got[i] < 0x7f);
	assert_non_null(strstr(got, "\\x1f !\"#"));
	assert_non_null(strstr(got, "}~\\x7f\\x80"));
	assert_non_null(strstr(got, "\\xff"));
	free(got);
}

/* Asserts that s is n lower-case hex digits and nothing more. */
static void
all_hex(const char *s, size_t n)
{
	size_t	 i;

	assert_int_equal(strlen(s), n);
	for (i = 0; i < n; i++)
		if (strchr("0123456789abcdef", s[i]) == NULL || s[i] == '\0')
			fail_msg("\"%s\": byte %zu is not a hex digit", s, i);
}

/* Any length, odd ones too, a NUL after; two draws differ. */
static void
test_hex_random(void **state)
{
	char	 a[301], b[301];
	size_t	 n;

	(void)state;
	for (n = 0; n < sizeof(a); n++) {
		memset(a, 'X', sizeof(a));
		assert_int_equal(str_random_hex(a, n), 0);
		all_hex(a, n);
		if (n + 1 < sizeof(a))
			assert_int_equal(a[n + 1], 'X');
	}
	assert_int_equal(str_random_hex(a, 32), 0);
	assert_int_equal(str_random_hex(b, 32), 0);
	assert_string_not_equal(a, b);
}

/* Exactly the tchars of RFC 9110 5.6.2; a token is one or more. */
static void
test_token(void **state)
{
	static const char	 tchars[] = "!#$%&'*+-.^_`|~0123456789"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	unsigned int		 ch;
	size_t			 n = 0;

	(void)state;
	for (ch = 0; ch < 256; ch++) {
		if (str_is_tchar((unsigned char)ch) != (ch != 0 &&
		    strchr(tchars, (int)ch) != NULL))
			fail_msg("byte 0x%02x", ch);
		n += str_is_tchar((unsigned char)ch);
	}
	assert_int_equal(n, sizeof(tchars) - 1);

	assert_true(str_is_token("GET", 3));
	assert_true(str_is_token("X-Custom_Header.1~", 18));
	assert_true(str_is_token(tchars, sizeof(tchars) - 1));
	assert_true(str_is_token("GET /", 3));
	assert_false(str_is_token("", 0));
	assert_false(str_is_token("GET /", 5));
	assert_false(str_is_token("a:b", 3));
	assert_false(str_is_token("a\0b", 3));
	assert_false(str_is_token("\"a\"", 3));
	assert_false(str_is_token("a(b)", 4));
	assert_false(str_is_token("caf\xc3\xa9", 5));
	assert_false(str_is_token("a\tb", 3));
}

/*
 * The bytes base64url text s (n characters, unpadded) stands for, in
 * out (room for n bytes); returns how many, or -1 when s is not
 * base64url or its last character holds bits no byte uses.
 */
static int
unb64url(const char *s, size_t n, unsigned char *out)
{
	char	*t;
	size_t	 i, pad = (4 - n % 4) % 4;
	int	 len;

	if (pad == 3)
		return -1;
	t = xmalloc(n + pad + 1);
	for (i = 0; i < n; i++)
		t[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' :
		    strchr("+/=", s[i]) != NULL ? '!' : s[i];
	memset(t + n, '=', pad);
	t[n + pad] = '\0';
	len = EVP_DecodeBlock(out, (unsigned char *)t, (int)(n + pad));
	free(t);
	if (len < 0)
		return -1;
	len -= (int)pad;
	/* Re-encoded, the same text: no stray bits in the last one. */
	t = xmalloc(4 * ((size_t)len + 2) / 3 + 5);
	EVP_EncodeBlock((unsigned char *)t, out, len);
	for (i = 0; i < n; i++)
		if ((t[i] == '+' ? '-' : t[i] == '/' ? '_' : t[i]) != s[i])
			len = -1;
	free(t);
	return len;
}

/*
 * A JWT's placeholder: its header and claims as they were (they decode
 * alike), its signature as long, base64url, decoding to as many bytes,
 * and another each time; anything but a JWT gets none.
 */
static void
test_jwt(void **state)
{
	static const char *const not[] = { "sk-key", "a.b", "a..c", ".b.c",
	    "a.b.", "a.b.c.d", "a b.c.d", "a.b.c=", "a+b.c.d", "", NULL };
	/* {"alg":"RS256"} . {"exp":1,"email":"a@b.c"} . 256 bytes */
	const char	*head = "eyJhbGciOiJSUzI1NiJ9."
			    "eyJleHAiOjEsImVtYWlsIjoiYUBiLmMifQ.";
	unsigned char	 raw[256], got[300];
	char		*jwt, *ph, *ph2, *sig;
	size_t		 i, sigat;
	int		 n;

	(void)state;
	for (i = 0; not[i] != NULL; i++) {
		assert_int_equal(str_jwt_signature(not[i]), 0);
		assert_null(str_jwt_placeholder(not[i]));
	}
	for (n = 1; n <= 3; n++) {
		/* Signatures of 256, 255 and 254 bytes: each padding. */
		for (i = 0; i < sizeof(raw); i++)
			raw[i] = (unsigned char)(i * 7 + 1);
		sig = xmalloc(4 * sizeof(raw) / 3 + 5);
		EVP_EncodeBlock((unsigned char *)sig, raw,
		    (int)sizeof(raw) - n + 1);
		for (i = 0; sig[i] != '\0'; i++)
			sig[i] = sig[i] == '+' ? '-' : sig[i] == '/' ? '_' :
			    sig[i];
		*strchrnul(sig, '=') = '\0';
		xasprintf(&jwt, "%s%s", head, sig);
		sigat = strlen(head);
		assert_int_equal(str_jwt_signature(jwt), sigat);
		assert_non_null(ph = str_jwt_placeholder(jwt));
		assert_non_null(ph2 = str_jwt_placeholder(jwt));
		assert_int_equal(strlen(ph), strlen(jwt));
		assert_memory_equal(ph, jwt, sigat);
		assert_int_equal(str_jwt_signature(ph), sigat);
		assert_string_not_equal(ph + sigat, jwt + sigat);
		assert_string_not_equal(ph + sigat, ph2 + sigat);
		assert_int_equal(unb64url(ph + sigat, strlen(ph + sigat), got),
		    (int)sizeof(raw) - n + 1);
		assert_int_equal(unb64url(jwt + sigat, strlen(jwt + sigat),
		    got), (int)sizeof(raw) - n + 1);
		/* The claims read alike from both. */
		assert_int_equal(unb64url(ph + 21, sigat - 22, got), 25);
		assert_memory_equal(got, "{\"exp\":1,\"email\":\"a@b.c\"}", 25);
		free(ph);
		free(ph2);
		free(jwt);
		free(sig);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_is_below),
		cmocka_unit_test(test_str_escape),
		cmocka_unit_test(test_str_escape_as),
		cmocka_unit_test(test_hex_random),
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_jwt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
