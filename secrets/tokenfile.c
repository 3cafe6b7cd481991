/*
 * tokenfile.c: the formats of the tools' token files, one parser each:
 * ~/.npmrc, ~/.netrc, git's credential store, ~/.pypirc and cargo's
 * credentials.  A parser reads the file's text and writes the copy the
 * sandbox is to see, each token it can tie to one host replaced by the
 * placeholder secrets_take() gives for it; what it cannot is left out,
 * said through secrets_left().  secrets.c holds the table of formats and
 * calls these through secrets_parse().  The parsers are pure: text in,
 * text and tokens out, no file opened.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/base64.h>

#include "lib/xmalloc.h"
#include "secrets/secrets.h"

/*
 * A name the proxy can hold a token to: letters, digits, '-' and '.',
 * as a host's name is written in these files; lower-cased in place.
 * Addresses in brackets and anything else are not.
 */
static bool
tokenfile_host_ok(char *host)
{
	size_t	 i;

	if (host[0] == '\0' || host[0] == '.' || strlen(host) > 253)
		return false;
	for (i = 0; host[i] != '\0'; i++) {
		if (!isalnum((unsigned char)host[i]) && host[i] != '-' &&
		    host[i] != '.')
			return false;
		host[i] = (char)tolower((unsigned char)host[i]);
	}
	return true;
}

/* Base64 of n bytes of s (new string). */
static char *
tokenfile_b64(const char *s, size_t n)
{
	char	*out = xmalloc(BASE64_ENCODE_RAW_LENGTH(n) + 1);

	base64_encode_raw(out, n, (const uint8_t *)s);
	out[BASE64_ENCODE_RAW_LENGTH(n)] = '\0';
	return out;
}

/*
 * The bytes base64 text s stands for (new string), or NULL if s is not
 * base64 (whole groups of four, padding only at the end) or they hold a
 * NUL.
 */
static char *
tokenfile_unb64(const char *s, size_t n)
{
	struct base64_decode_ctx ctx;
	char		*out;
	size_t		 len;

	if (n == 0 || n % 4 != 0 || n > SECRETS_FILE_MAX)
		return NULL;
	/* The decoder skips white space; a token holds none. */
	for (len = 0; len < n; len++)
		if (isspace((unsigned char)s[len]))
			return NULL;
	out = xmalloc(BASE64_DECODE_LENGTH(n) + 1);
	len = BASE64_DECODE_LENGTH(n);
	base64_decode_init(&ctx);
	if (base64_decode_update(&ctx, &len, (uint8_t *)out, n, s) != 1 ||
	    base64_decode_final(&ctx) != 1 ||
	    memchr(out, '\0', len) != NULL) {
		explicit_bzero(out, BASE64_DECODE_LENGTH(n));
		free(out);
		return NULL;
	}
	out[len] = '\0';
	return out;
}

/* The end of the line at line: its newline, or end. */
static const char *
tokenfile_eol(const char *line, const char *end)
{
	const char	*nl = memchr(line, '\n', (size_t)(end - line));

	return nl != NULL ? nl : end;
}

/* The first byte of [s, e) that is not a blank, or e. */
static const char *
tokenfile_skip_blank(const char *s, const char *e)
{
	while (s < e && isblank((unsigned char)*s))
		s++;
	return s;
}

/* [s, e) without blanks at both ends. */
static void
tokenfile_trim(const char **s, const char **e)
{
	*s = tokenfile_skip_blank(*s, *e);
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

/* --- ~/.npmrc -------------------------------------------------------- */

/*
 * npm's per-registry keys, "//HOST[:PORT]/PATH/:FIELD": sets *host
 * (new string) and *field (in key).  Returns false for any other key.
 */
static bool
tokenfile_npm_key(const char *key, size_t klen, char **host,
    const char **field)
{
	const char	*colon, *h, *he;

	*host = NULL;
	if (klen < 4 || strncmp(key, "//", 2) != 0)
		return false;
	colon = memrchr(key, ':', klen);
	if (colon == NULL || colon == key || colon[-1] != '/')
		return false;
	*field = colon + 1;
	h = key + 2;
	he = h + strcspn(h, ":/");
	*host = xstrndup(h, (size_t)(he - h));
	return true;
}

/* The username npm keeps for the same registry prefix, or NULL. */
static char *
tokenfile_npm_user(const char *text, size_t len, const char *prefix,
    size_t plen)
{
	const char	*line, *end, *eq, *v, *ve;
	char		*user = NULL;

	for (line = text; line < text + len; line = end + 1) {
		end = tokenfile_eol(line, text + len);
		line = tokenfile_skip_blank(line, end);
		if ((size_t)(end - line) < plen + 9 ||
		    strncmp(line, prefix, plen) != 0 ||
		    strncmp(line + plen, "username", 8) != 0 ||
		    (eq = memchr(line, '=', (size_t)(end - line))) == NULL)
			continue;
		v = eq + 1;
		ve = end;
		tokenfile_trim(&v, &ve);
		free(user);
		user = xstrndup(v, (size_t)(ve - v));
	}
	return user;
}

/* Whether [k, ke) is the text word. */
static bool
tokenfile_is(const char *k, const char *ke, const char *word)
{
	return (size_t)(ke - k) == strlen(word) &&
	    strncmp(k, word, (size_t)(ke - k)) == 0;
}

/*
 * One "key = value" line of ~/.npmrc: a registry's _authToken, _auth or
 * _password becomes a placeholder; one tied to no registry is left out.
 * Returns whether the line was dealt with (else it is copied as it is).
 */
static bool
tokenfile_npm_line(struct secrets_out *so, const char *text, size_t len,
    const char *line, const char *end)
{
	const char	*eq, *k, *ke, *v, *ve, *field, *ph = NULL;
	char		*host = NULL, *user = NULL, *pw = NULL, *enc = NULL;
	bool		 token, auth, pass;

	if ((eq = memchr(line, '=', (size_t)(end - line))) == NULL)
		return false;
	k = line;
	ke = eq;
	v = eq + 1;
	ve = end;
	tokenfile_trim(&k, &ke);
	tokenfile_trim(&v, &ve);
	if (ve - v >= 2 && (*v == '"' || *v == '\'') && ve[-1] == *v) {
		v++;
		ve--;
	}
	/* ${VAR}: npm reads it from the environment; no token here. */
	if (memmem(v, (size_t)(ve - v), "${", 2) != NULL)
		return false;
	if (!tokenfile_npm_key(k, (size_t)(ke - k), &host, &field))
		field = k;
	token = tokenfile_is(field, ke, "_authToken");
	auth = tokenfile_is(field, ke, "_auth");
	pass = tokenfile_is(field, ke, "_password");
	if (!token && !auth && !pass) {
		free(host);
		return false;
	}
	if (host == NULL)
		secrets_left(so->sx_sf, "%.*s (tied to no registry; npm wants "
		    "//HOST/:%.*s)", (int)(ke - k), k, (int)(ke - k), k);
	else if (!tokenfile_host_ok(host))
		secrets_left(so->sx_sf, "%.*s (not a host name)",
		    (int)(ke - k), k);
	else if (!pass)
		ph = secrets_take(so, host, NULL, token ? "Bearer %s" :
		    "Basic %s", v, (size_t)(ve - v));
	else if ((user = tokenfile_npm_user(text, len, k,
	    (size_t)(field - k))) == NULL)
		secrets_left(so->sx_sf, "%.*s (no username beside it)",
		    (int)(ke - k), k);
	else if ((pw = tokenfile_unb64(v, (size_t)(ve - v))) == NULL)
		secrets_left(so->sx_sf, "%.*s (not base64)", (int)(ke - k), k);
	else if ((ph = secrets_take(so, host, user, NULL, pw,
	    strlen(pw))) != NULL)
		ph = enc = tokenfile_b64(ph, strlen(ph));
	if (ph != NULL)
		fprintf(so->sx_f, "%.*s=%s\n", (int)(ke - k), k, ph);
	secrets_wipe(pw);
	free(enc);
	free(user);
	free(host);
	return true;
}

void
tokenfile_npmrc(struct secrets_out *so, const char *text, size_t len)
{
	const char	*line, *end, *s;

	for (line = text; line < text + len; line = end + 1) {
		end = tokenfile_eol(line, text + len);
		s = tokenfile_skip_blank(line, end);
		if (s == end || *s == ';' || *s == '#' || *s == '[' ||
		    !tokenfile_npm_line(so, text, len, s, end))
			fprintf(so->sx_f, "%.*s\n", (int)(end - line), line);
	}
}

/* --- ~/.netrc -------------------------------------------------------- */

/* One netrc entry as read: "machine NAME" or "default". */
struct tokenfile_netrc {
	char	*nr_machine;	/* NULL: default */
	char	*nr_login;
	char	*nr_password;
	bool	 nr_account;	/* had an account (left out) */
	bool	 nr_bad;	/* a token the copy cannot write back */
};

/*
 * The next word of netrc text at *p (new string; NULL at the end): blank-
 * separated, or in double quotes with backslash escapes (curl 7.84 and
 * later).  A word the copy could not write back unquoted sets *bad.
 */
static char *
tokenfile_netrc_word(const char **p, const char *end, bool *bad)
{
	const char	*s = *p;
	char		*w;
	size_t		 n = 0;

	for (;;) {
		while (s < end && isspace((unsigned char)*s))
			s++;
		if (s < end && *s == '#' && (s == *p || s[-1] == '\n')) {
			while (s < end && *s != '\n')
				s++;
			continue;
		}
		break;
	}
	if (s == end) {
		*p = s;
		return NULL;
	}
	w = xmalloc((size_t)(end - s) + 1);
	if (*s == '"') {
		for (s++; s < end && *s != '"'; s++) {
			if (*s == '\\' && s + 1 < end)
				s++;
			w[n++] = *s;
		}
		if (s < end)
			s++;
	} else
		while (s < end && !isspace((unsigned char)*s))
			w[n++] = *s++;
	w[n] = '\0';
	if (n == 0 || strpbrk(w, " \t\r\n\"\\#") != NULL)
		*bad = true;
	*p = s;
	return w;
}

static void
tokenfile_netrc_clear(struct tokenfile_netrc *e)
{
	free(e->nr_machine);
	free(e->nr_login);
	secrets_wipe(e->nr_password);
	memset(e, 0, sizeof(*e));
}

/* Writes entry e into the copy, its password a placeholder. */
static void
tokenfile_netrc_put(struct secrets_out *so, struct tokenfile_netrc *e)
{
	const char	*ph = NULL;
	const char	*name = e->nr_machine != NULL ? e->nr_machine :
			    "default";

	if (e->nr_bad) {
		secrets_left(so->sx_sf, "the entry for %s (a word with blanks "
		    "or quotes)", name);
		return;
	}
	if (e->nr_machine != NULL && !tokenfile_host_ok(e->nr_machine)) {
		secrets_left(so->sx_sf, "the entry for %s (not a host name)",
		    name);
		return;
	}
	if (e->nr_password != NULL && e->nr_machine == NULL)
		secrets_left(so->sx_sf, "the default entry's password (tied "
		    "to no host)");
	else if (e->nr_password != NULL && (ph = secrets_take(so,
	    e->nr_machine, e->nr_login != NULL ? e->nr_login : "", NULL,
	    e->nr_password, strlen(e->nr_password))) == NULL)
		return;
	if (e->nr_account)
		secrets_left(so->sx_sf, "the account of %s", name);
	if (e->nr_machine != NULL)
		fprintf(so->sx_f, "machine %s", e->nr_machine);
	else
		fprintf(so->sx_f, "default");
	if (e->nr_login != NULL)
		fprintf(so->sx_f, " login %s", e->nr_login);
	if (ph != NULL)
		fprintf(so->sx_f, " password %s", ph);
	fprintf(so->sx_f, "\n");
}

/*
 * ~/.netrc, as curl, git (through curl) and Python read it: "machine",
 * "default", "login", "password", "account" and "macdef", whose macro
 * runs to the next empty line.  The copy is written anew, one entry a
 * line, without accounts and macros.
 */
void
tokenfile_netrc(struct secrets_out *so, const char *text, size_t len)
{
	struct tokenfile_netrc	 e = { 0 };
	const char		*p = text, *end = text + len, *m;
	char			*w, **slot;
	bool			 open = false, bad = false;

	while ((w = tokenfile_netrc_word(&p, end, &bad)) != NULL) {
		slot = NULL;
		if (strcmp(w, "machine") == 0 || strcmp(w, "default") == 0) {
			if (open)
				tokenfile_netrc_put(so, &e);
			tokenfile_netrc_clear(&e);
			open = true;
			if (w[0] == 'm')
				slot = &e.nr_machine;
		} else if (strcmp(w, "login") == 0)
			slot = &e.nr_login;
		else if (strcmp(w, "password") == 0)
			slot = &e.nr_password;
		else if (strcmp(w, "account") == 0) {
			e.nr_account = true;
			free(tokenfile_netrc_word(&p, end, &bad));
		} else if (strcmp(w, "macdef") == 0) {
			free(tokenfile_netrc_word(&p, end, &bad));
			m = memmem(p, (size_t)(end - p), "\n\n", 2);
			p = m != NULL ? m + 2 : end;
			secrets_left(so->sx_sf, "a macdef macro");
		} else if (open) {
			secrets_left(so->sx_sf, "a word netrc does not know");
			e.nr_bad = true;
		}
		secrets_wipe(w);
		if (slot != NULL) {
			bad = false;
			secrets_wipe(*slot);
			*slot = tokenfile_netrc_word(&p, end, &bad);
			if (*slot == NULL || bad)
				e.nr_bad = true;
		}
	}
	if (open)
		tokenfile_netrc_put(so, &e);
	tokenfile_netrc_clear(&e);
}

/* --- ~/.git-credentials --------------------------------------------- */

/* [s, s + n) with %XX decoded (new string), or NULL if that holds a NUL. */
static char *
tokenfile_unpercent(const char *s, size_t n)
{
	char		*out = xmalloc(n + 1), hex[3] = { 0 };
	size_t		 i, o = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1])
		    && isxdigit((unsigned char)s[i + 2])) {
			hex[0] = s[i + 1];
			hex[1] = s[i + 2];
			out[o++] = (char)strtol(hex, NULL, 16);
			i += 2;
		} else
			out[o++] = s[i];
	}
	out[o] = '\0';
	if (strlen(out) != o) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * One line of git's credential store, "https://USER:PASSWORD@HOST[:PORT]
 * [/PATH]" (gitcredentials(7), git-credential-store(1)).  Returns whether
 * it was dealt with (else it is copied as it is: no password in it).
 */
static bool
tokenfile_gitcred_line(struct secrets_out *so, const char *line,
    const char *end)
{
	const char	*auth, *ae, *at, *colon, *hp, *he, *ph = NULL;
	char		*user = NULL, *pw = NULL, *host = NULL;

	if ((auth = memmem(line, (size_t)(end - line), "://", 3)) == NULL)
		return false;
	auth += 3;
	ae = auth + strcspn(auth, "/\n");
	if (ae > end)
		ae = end;
	if ((at = memrchr(auth, '@', (size_t)(ae - auth))) == NULL ||
	    (colon = memchr(auth, ':', (size_t)(at - auth))) == NULL)
		return false;
	hp = at + 1;
	he = hp + strcspn(hp, ":/\n");
	if (he > ae)
		he = ae;
	host = xstrndup(hp, (size_t)(he - hp));
	if (auth - line != 8 || strncmp(line, "https://", 8) != 0)
		secrets_left(so->sx_sf, "the line for %s (not https: no TLS "
		    "to put the token in over)", host);
	else if (!tokenfile_host_ok(host))
		secrets_left(so->sx_sf, "the line for %s (not a host name)",
		    host);
	else if ((user = tokenfile_unpercent(auth, (size_t)(colon - auth))) ==
	    NULL || (pw = tokenfile_unpercent(colon + 1,
	    (size_t)(at - colon - 1))) == NULL)
		secrets_left(so->sx_sf, "the line for %s (a NUL in it)", host);
	else if ((ph = secrets_take(so, host, user, NULL, pw,
	    strlen(pw))) != NULL)
		fprintf(so->sx_f, "%.*s%s%.*s\n", (int)(colon + 1 - line), line,
		    ph, (int)(end - at), at);
	secrets_wipe(pw);
	free(user);
	free(host);
	return true;
}

void
tokenfile_gitcred(struct secrets_out *so, const char *text, size_t len)
{
	const char	*line, *end;

	for (line = text; line < text + len; line = end + 1) {
		end = tokenfile_eol(line, text + len);
		if (!tokenfile_gitcred_line(so, line, end))
			fprintf(so->sx_f, "%.*s\n", (int)(end - line), line);
	}
}

/* --- ~/.pypirc ------------------------------------------------------- */

/* The host of an index's URL (new string), or NULL. */
static char *
tokenfile_url_host(const char *url, size_t n)
{
	const char	*h, *he, *at;

	if (n < 9 || strncmp(url, "https://", 8) != 0)
		return NULL;
	h = url + 8;
	he = h + strcspn(h, "/");
	if (he > url + n)
		he = url + n;
	if ((at = memrchr(h, '@', (size_t)(he - h))) != NULL)
		h = at + 1;
	return xstrndup(h, strcspn(h, ":/") < (size_t)(he - h) ?
	    strcspn(h, ":/") : (size_t)(he - h));
}

/* One section of ~/.pypirc, as twine reads it. */
struct tokenfile_pypi {
	const char	*py_name, *py_name_end;	/* [NAME] */
	const char	*py_start;		/* its first line */
	char		*py_host;		/* from repository = URL */
	char		*py_user;		/* username = */
};

/* The repository's host and the username of the section at sec. */
static void
tokenfile_pypi_scan(struct tokenfile_pypi *sec, const char *end)
{
	const char	*line, *le, *k, *ke, *v, *ve, *eq;

	if (tokenfile_is(sec->py_name, sec->py_name_end, "pypi"))
		sec->py_host = xstrdup("upload.pypi.org");
	else if (tokenfile_is(sec->py_name, sec->py_name_end, "testpypi"))
		sec->py_host = xstrdup("test.pypi.org");
	for (line = sec->py_start; line < end && *line != '['; line = le + 1) {
		le = tokenfile_eol(line, end);
		eq = line + strcspn(line, "=:\n");
		if (eq >= le)
			continue;
		k = line;
		ke = eq;
		v = eq + 1;
		ve = le;
		tokenfile_trim(&k, &ke);
		tokenfile_trim(&v, &ve);
		if (tokenfile_is(k, ke, "repository")) {
			free(sec->py_host);
			sec->py_host = tokenfile_url_host(v, (size_t)(ve - v));
		} else if (tokenfile_is(k, ke, "username")) {
			free(sec->py_user);
			sec->py_user = xstrndup(v, (size_t)(ve - v));
		}
	}
}

/*
 * ~/.pypirc: each section's "password" becomes a placeholder for the
 * host of its repository (upload.pypi.org for [pypi], test.pypi.org for
 * [testpypi]), sent as twine sends it: Basic, with the username.
 */
void
tokenfile_pypirc(struct secrets_out *so, const char *text, size_t len)
{
	struct tokenfile_pypi	 sec = { 0 };
	const char		*line, *le, *s, *k, *ke, *v, *ve, *ph;
	const char		*end = text + len;

	for (line = text; line < end; line = le + 1) {
		le = tokenfile_eol(line, end);
		s = tokenfile_skip_blank(line, le);
		if (s < le && *s == '[') {
			free(sec.py_host);
			free(sec.py_user);
			memset(&sec, 0, sizeof(sec));
			sec.py_name = s + 1;
			sec.py_name_end = s + 1 + strcspn(s + 1, "]\n");
			sec.py_start = le + 1;
			tokenfile_pypi_scan(&sec, end);
		}
		k = s;
		ke = s + strcspn(s, "=:\n");
		if (sec.py_name == NULL || ke >= le || *s == '#' || *s == ';') {
			fprintf(so->sx_f, "%.*s\n", (int)(le - line), line);
			continue;
		}
		v = ke + 1;
		ve = le;
		tokenfile_trim(&k, &ke);
		tokenfile_trim(&v, &ve);
		if (!tokenfile_is(k, ke, "password")) {
			fprintf(so->sx_f, "%.*s\n", (int)(le - line), line);
			continue;
		}
		if (sec.py_host == NULL || !tokenfile_host_ok(sec.py_host))
			secrets_left(so->sx_sf, "the password of [%.*s] (no "
			    "https repository for it)",
			    (int)(sec.py_name_end - sec.py_name), sec.py_name);
		else if ((ph = secrets_take(so, sec.py_host, sec.py_user !=
		    NULL ? sec.py_user : "", NULL, v, (size_t)(ve - v))) !=
		    NULL)
			fprintf(so->sx_f, "password = %s\n", ph);
	}
	free(sec.py_host);
	free(sec.py_user);
}

/* --- ~/.cargo/credentials.toml ----------------------------------------- */

/*
 * cargo's credentials: the token of [registry], crates.io's, which cargo
 * sends as the whole Authorization header (publish, yank, owner).  The
 * token of another registry ([registries.NAME]) is tied to a host only
 * by ~/.cargo/config.toml, which is not read here: left out.  A TOML
 * value is taken when it is one basic or literal string on its line.
 * The file holds nothing but secrets (tokens, asymmetric secret keys),
 * so the copy keeps only its comments, its section heads and the
 * placeholders: any other line is left out.
 */
void
tokenfile_cargo(struct secrets_out *so, const char *text, size_t len)
{
	const char	*line, *le, *s, *k, *ke, *v, *ve, *ph;
	const char	*end = text + len, *sec = NULL, *sece = NULL;
	bool		 other = false;

	for (line = text; line < end; line = le + 1) {
		le = tokenfile_eol(line, end);
		s = tokenfile_skip_blank(line, le);
		if (s < le && *s == '[') {
			sec = s + 1;
			sece = s + 1 + strcspn(s + 1, "]\n");
		}
		k = s;
		ke = s + strcspn(s, "=\n");
		if (s == le || *s == '#' || *s == '[') {
			fprintf(so->sx_f, "%.*s\n", (int)(le - line), line);
			continue;
		}
		v = ke + 1;
		ve = le;
		tokenfile_trim(&k, &ke);
		tokenfile_trim(&v, &ve);
		if (sec == NULL || ke >= le || !tokenfile_is(k, ke, "token")) {
			if (!other)
				secrets_left(so->sx_sf, "every line but the "
				    "[registry] token (secret keys and the "
				    "like)");
			other = true;
			continue;
		}
		if (ve - v >= 2 && (*v == '"' || *v == '\'') && ve[-1] == *v &&
		    memchr(v + 1, *v, (size_t)(ve - v - 2)) == NULL &&
		    memchr(v + 1, '\\', (size_t)(ve - v - 2)) == NULL) {
			v++;
			ve--;
		} else
			v = NULL;
		if (!tokenfile_is(sec, sece, "registry"))
			secrets_left(so->sx_sf, "the token of [%.*s] (its host is "
			    "in ~/.cargo/config.toml)", (int)(sece - sec), sec);
		else if (v == NULL)
			secrets_left(so->sx_sf, "the token of [registry] (not one "
			    "plain string)");
		else if ((ph = secrets_take(so, "crates.io", NULL, "%s", v,
		    (size_t)(ve - v))) != NULL)
			fprintf(so->sx_f, "token = \"%s\"\n", ph);
	}
}
