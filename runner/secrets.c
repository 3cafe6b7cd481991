/*
 * secrets.c: the tools' token files (~/.npmrc, ~/.netrc, ...), read
 * outside before the clone and given to the sandbox as copies whose
 * tokens are placeholders.  Each token becomes a phantom credential for
 * the one host the file ties it to, which the proxy fills in over TLS it
 * inspects (inspect.c, phantom_apply): the command can use the token and
 * never read it.  A token the file ties to no host (npm's unscoped
 * _authToken, netrc's default entry, git's http:// lines) is left out of
 * the copy and said so.  The parsers are pure: text in, text and tokens
 * out; secrets_read() does the one open.  Nothing here needs privileges.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "certs.h"
#include "log.h"
#include "policy.h"
#include "proxy.h"
#include "runner.h"
#include "util.h"
#include "xmalloc.h"

#define SECRETS_FILE_MAX	(1024 * 1024)	/* bytes of one token file */
#define SECRETS_MAX		64		/* tokens of one file */

/* What is being built: the copy, and the tokens taken out of it. */
struct secrets_out {
	FILE			*sx_f;		/* open_memstream of tf_text */
	struct secret_file	*sx_sf;
	placeholder_fn		 sx_new;
};

/* Wipes and frees a string that held a secret (NULL: nothing). */
static void
secrets_wipe(char *s)
{
	if (s == NULL)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

/* Wipes and frees one token. */
static void
secrets_clear_one(struct secret *se)
{
	free(se->se_host);
	free(se->se_user);
	free(se->se_placeholder);
	secrets_wipe(se->se_value);
	memset(se, 0, sizeof(*se));
}

/* Frees what secrets_parse() filled. */
void
secrets_clear(struct secret_file *tf)
{
	size_t	 i;

	for (i = 0; i < tf->tf_nsecrets; i++)
		secrets_clear_one(&tf->tf_secrets[i]);
	free(tf->tf_secrets);
	for (i = 0; i < tf->tf_nleft; i++)
		free(tf->tf_left[i]);
	free(tf->tf_left);
	free(tf->tf_path);
	if (tf->tf_text != NULL) {
		explicit_bzero(tf->tf_text, tf->tf_len);
		free(tf->tf_text);
	}
	memset(tf, 0, sizeof(*tf));
}

/* Notes what the copy leaves out, for the summary (printf-like). */
static void __attribute__((format(printf, 2, 3)))
secrets_left(struct secret_file *tf, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	if (tf->tf_nleft >= SECRETS_MAX)
		return;
	va_start(ap, fmt);
	xvasprintf(&s, fmt, ap);
	va_end(ap);
	tf->tf_left = xreallocarray(tf->tf_left, tf->tf_nleft + 1,
	    sizeof(*tf->tf_left));
	tf->tf_left[tf->tf_nleft++] = s;
}

/*
 * A name the proxy can hold a token to: letters, digits, '-' and '.',
 * as a host's name is written in these files; lower-cased in place.
 * Addresses in brackets and anything else are not.
 */
static bool
secrets_host_ok(char *host)
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

/*
 * Takes a token out: value for host (Basic with user when user is not
 * NULL, else format around it).  Returns the placeholder the copy is to
 * hold (owned by tf), or NULL when the file has too many.
 */
static const char *
secrets_take(struct secrets_out *so, const char *host, const char *user,
    const char *format, const char *value, size_t vlen)
{
	struct secret_file	*tf = so->sx_sf;
	struct secret		*se;

	if (tf->tf_nsecrets >= SECRETS_MAX) {
		secrets_left(tf, "a token for %s (more than %d in the file)",
		    host, SECRETS_MAX);
		return NULL;
	}
	tf->tf_secrets = xreallocarray(tf->tf_secrets, tf->tf_nsecrets + 1,
	    sizeof(*tf->tf_secrets));
	se = &tf->tf_secrets[tf->tf_nsecrets++];
	memset(se, 0, sizeof(*se));
	se->se_host = xstrdup(host);
	se->se_user = user != NULL ? xstrdup(user) : NULL;
	se->se_format = format;
	se->se_value = xstrndup(value, vlen);
	se->se_placeholder = so->sx_new();
	return se->se_placeholder;
}

/* Base64 of n bytes of s (new string). */
static char *
secrets_b64(const char *s, size_t n)
{
	char	*out = xmalloc(4 * ((n + 2) / 3) + 1);

	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s,
	    (int)n);
	return out;
}

/*
 * The bytes base64 text s stands for (new string), or NULL if s is not
 * base64 or they hold a NUL.
 */
static char *
secrets_unb64(const char *s, size_t n)
{
	char	*out;
	int	 len;

	if (n == 0 || n % 4 != 0 || n > SECRETS_FILE_MAX)
		return NULL;
	out = xmalloc(n / 4 * 3 + 1);
	if ((len = EVP_DecodeBlock((unsigned char *)out,
	    (const unsigned char *)s, (int)n)) < 0) {
		free(out);
		return NULL;
	}
	/* EVP_DecodeBlock counts the padding's bytes too. */
	if (s[n - 1] == '=')
		len--;
	if (s[n - 2] == '=')
		len--;
	out[len] = '\0';
	if (memchr(out, '\0', (size_t)len) != NULL) {
		explicit_bzero(out, (size_t)len);
		free(out);
		return NULL;
	}
	return out;
}

/* The end of the line at line: its newline, or end. */
static const char *
secrets_eol(const char *line, const char *end)
{
	const char	*nl = memchr(line, '\n', (size_t)(end - line));

	return nl != NULL ? nl : end;
}

/* The first byte of [s, e) that is not a blank, or e. */
static const char *
secrets_skip_blank(const char *s, const char *e)
{
	while (s < e && isblank((unsigned char)*s))
		s++;
	return s;
}

/* [s, e) without blanks at both ends. */
static void
secrets_trim(const char **s, const char **e)
{
	*s = secrets_skip_blank(*s, *e);
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

/* --- ~/.npmrc -------------------------------------------------------- */

/*
 * npm's per-registry keys, "//HOST[:PORT]/PATH/:FIELD": sets *host
 * (new string) and *field (in key).  Returns false for any other key.
 */
static bool
secrets_npm_key(const char *key, size_t klen, char **host,
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
secrets_npm_user(const char *text, size_t len, const char *prefix,
    size_t plen)
{
	const char	*line, *end, *eq, *v, *ve;
	char		*user = NULL;

	for (line = text; line < text + len; line = end + 1) {
		end = secrets_eol(line, text + len);
		line = secrets_skip_blank(line, end);
		if ((size_t)(end - line) < plen + 9 ||
		    strncmp(line, prefix, plen) != 0 ||
		    strncmp(line + plen, "username", 8) != 0 ||
		    (eq = memchr(line, '=', (size_t)(end - line))) == NULL)
			continue;
		v = eq + 1;
		ve = end;
		secrets_trim(&v, &ve);
		free(user);
		user = xstrndup(v, (size_t)(ve - v));
	}
	return user;
}

/* Whether [k, ke) is the text word. */
static bool
secrets_is(const char *k, const char *ke, const char *word)
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
secrets_npm_line(struct secrets_out *so, const char *text, size_t len,
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
	secrets_trim(&k, &ke);
	secrets_trim(&v, &ve);
	if (ve - v >= 2 && (*v == '"' || *v == '\'') && ve[-1] == *v) {
		v++;
		ve--;
	}
	/* ${VAR}: npm reads it from the environment; no token here. */
	if (memmem(v, (size_t)(ve - v), "${", 2) != NULL)
		return false;
	if (!secrets_npm_key(k, (size_t)(ke - k), &host, &field))
		field = k;
	token = secrets_is(field, ke, "_authToken");
	auth = secrets_is(field, ke, "_auth");
	pass = secrets_is(field, ke, "_password");
	if (!token && !auth && !pass) {
		free(host);
		return false;
	}
	if (host == NULL)
		secrets_left(so->sx_sf, "%.*s (tied to no registry; npm wants "
		    "//HOST/:%.*s)", (int)(ke - k), k, (int)(ke - k), k);
	else if (!secrets_host_ok(host))
		secrets_left(so->sx_sf, "%.*s (not a host name)",
		    (int)(ke - k), k);
	else if (!pass)
		ph = secrets_take(so, host, NULL, token ? "Bearer %s" :
		    "Basic %s", v, (size_t)(ve - v));
	else if ((user = secrets_npm_user(text, len, k,
	    (size_t)(field - k))) == NULL)
		secrets_left(so->sx_sf, "%.*s (no username beside it)",
		    (int)(ke - k), k);
	else if ((pw = secrets_unb64(v, (size_t)(ve - v))) == NULL)
		secrets_left(so->sx_sf, "%.*s (not base64)", (int)(ke - k), k);
	else if ((ph = secrets_take(so, host, user, NULL, pw,
	    strlen(pw))) != NULL)
		ph = enc = secrets_b64(ph, strlen(ph));
	if (ph != NULL)
		fprintf(so->sx_f, "%.*s=%s\n", (int)(ke - k), k, ph);
	secrets_wipe(pw);
	free(enc);
	free(user);
	free(host);
	return true;
}

static void
secrets_npmrc(struct secrets_out *so, const char *text, size_t len)
{
	const char	*line, *end, *s;

	for (line = text; line < text + len; line = end + 1) {
		end = secrets_eol(line, text + len);
		s = secrets_skip_blank(line, end);
		if (s == end || *s == ';' || *s == '#' || *s == '[' ||
		    !secrets_npm_line(so, text, len, s, end))
			fprintf(so->sx_f, "%.*s\n", (int)(end - line), line);
	}
}

/* --- ~/.netrc -------------------------------------------------------- */

/* One netrc entry as read: "machine NAME" or "default". */
struct secrets_netrc {
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
secrets_netrc_word(const char **p, const char *end, bool *bad)
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
secrets_netrc_clear(struct secrets_netrc *e)
{
	free(e->nr_machine);
	free(e->nr_login);
	secrets_wipe(e->nr_password);
	memset(e, 0, sizeof(*e));
}

/* Writes entry e into the copy, its password a placeholder. */
static void
secrets_netrc_put(struct secrets_out *so, struct secrets_netrc *e)
{
	const char	*ph = NULL;
	const char	*name = e->nr_machine != NULL ? e->nr_machine :
			    "default";

	if (e->nr_bad) {
		secrets_left(so->sx_sf, "the entry for %s (a word with blanks "
		    "or quotes)", name);
		return;
	}
	if (e->nr_machine != NULL && !secrets_host_ok(e->nr_machine)) {
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
static void
secrets_netrc(struct secrets_out *so, const char *text, size_t len)
{
	struct secrets_netrc	 e = { 0 };
	const char		*p = text, *end = text + len, *m;
	char			*w, **slot;
	bool			 open = false, bad = false;

	while ((w = secrets_netrc_word(&p, end, &bad)) != NULL) {
		slot = NULL;
		if (strcmp(w, "machine") == 0 || strcmp(w, "default") == 0) {
			if (open)
				secrets_netrc_put(so, &e);
			secrets_netrc_clear(&e);
			open = true;
			if (w[0] == 'm')
				slot = &e.nr_machine;
		} else if (strcmp(w, "login") == 0)
			slot = &e.nr_login;
		else if (strcmp(w, "password") == 0)
			slot = &e.nr_password;
		else if (strcmp(w, "account") == 0) {
			e.nr_account = true;
			free(secrets_netrc_word(&p, end, &bad));
		} else if (strcmp(w, "macdef") == 0) {
			free(secrets_netrc_word(&p, end, &bad));
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
			*slot = secrets_netrc_word(&p, end, &bad);
			if (*slot == NULL || bad)
				e.nr_bad = true;
		}
	}
	if (open)
		secrets_netrc_put(so, &e);
	secrets_netrc_clear(&e);
}

/* --- ~/.git-credentials --------------------------------------------- */

/* [s, s + n) with %XX decoded (new string), or NULL if that holds a NUL. */
static char *
secrets_unpercent(const char *s, size_t n)
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
secrets_gitcred_line(struct secrets_out *so, const char *line,
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
	else if (!secrets_host_ok(host))
		secrets_left(so->sx_sf, "the line for %s (not a host name)",
		    host);
	else if ((user = secrets_unpercent(auth, (size_t)(colon - auth))) ==
	    NULL || (pw = secrets_unpercent(colon + 1,
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

static void
secrets_gitcred(struct secrets_out *so, const char *text, size_t len)
{
	const char	*line, *end;

	for (line = text; line < text + len; line = end + 1) {
		end = secrets_eol(line, text + len);
		if (!secrets_gitcred_line(so, line, end))
			fprintf(so->sx_f, "%.*s\n", (int)(end - line), line);
	}
}

/* --- ~/.pypirc ------------------------------------------------------- */

/* The host of an index's URL (new string), or NULL. */
static char *
secrets_url_host(const char *url, size_t n)
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
struct secrets_pypi {
	const char	*py_name, *py_name_end;	/* [NAME] */
	const char	*py_start;		/* its first line */
	char		*py_host;		/* from repository = URL */
	char		*py_user;		/* username = */
};

/* The repository's host and the username of the section at sec. */
static void
secrets_pypi_scan(struct secrets_pypi *sec, const char *end)
{
	const char	*line, *le, *k, *ke, *v, *ve, *eq;

	if (secrets_is(sec->py_name, sec->py_name_end, "pypi"))
		sec->py_host = xstrdup("upload.pypi.org");
	else if (secrets_is(sec->py_name, sec->py_name_end, "testpypi"))
		sec->py_host = xstrdup("test.pypi.org");
	for (line = sec->py_start; line < end && *line != '['; line = le + 1) {
		le = secrets_eol(line, end);
		eq = line + strcspn(line, "=:\n");
		if (eq >= le)
			continue;
		k = line;
		ke = eq;
		v = eq + 1;
		ve = le;
		secrets_trim(&k, &ke);
		secrets_trim(&v, &ve);
		if (secrets_is(k, ke, "repository")) {
			free(sec->py_host);
			sec->py_host = secrets_url_host(v, (size_t)(ve - v));
		} else if (secrets_is(k, ke, "username")) {
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
static void
secrets_pypirc(struct secrets_out *so, const char *text, size_t len)
{
	struct secrets_pypi	 sec = { 0 };
	const char		*line, *le, *s, *k, *ke, *v, *ve, *ph;
	const char		*end = text + len;

	for (line = text; line < end; line = le + 1) {
		le = secrets_eol(line, end);
		s = secrets_skip_blank(line, le);
		if (s < le && *s == '[') {
			free(sec.py_host);
			free(sec.py_user);
			memset(&sec, 0, sizeof(sec));
			sec.py_name = s + 1;
			sec.py_name_end = s + 1 + strcspn(s + 1, "]\n");
			sec.py_start = le + 1;
			secrets_pypi_scan(&sec, end);
		}
		k = s;
		ke = s + strcspn(s, "=:\n");
		if (sec.py_name == NULL || ke >= le || *s == '#' || *s == ';') {
			fprintf(so->sx_f, "%.*s\n", (int)(le - line), line);
			continue;
		}
		v = ke + 1;
		ve = le;
		secrets_trim(&k, &ke);
		secrets_trim(&v, &ve);
		if (!secrets_is(k, ke, "password")) {
			fprintf(so->sx_f, "%.*s\n", (int)(le - line), line);
			continue;
		}
		if (sec.py_host == NULL || !secrets_host_ok(sec.py_host))
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
static void
secrets_cargo(struct secrets_out *so, const char *text, size_t len)
{
	const char	*line, *le, *s, *k, *ke, *v, *ve, *ph;
	const char	*end = text + len, *sec = NULL, *sece = NULL;
	bool		 other = false;

	for (line = text; line < end; line = le + 1) {
		le = secrets_eol(line, end);
		s = secrets_skip_blank(line, le);
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
		secrets_trim(&k, &ke);
		secrets_trim(&v, &ve);
		if (sec == NULL || ke >= le || !secrets_is(k, ke, "token")) {
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
		if (!secrets_is(sec, sece, "registry"))
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

/* --- the files ------------------------------------------------------- */

const struct secret_format secret_formats[] = {
	{ ".npmrc", "npm", secrets_npmrc },
	{ ".netrc", "curl, git, pip", secrets_netrc },
	{ ".git-credentials", "git", secrets_gitcred },
	{ ".config/git/credentials", "git", secrets_gitcred },
	{ ".pypirc", "twine", secrets_pypirc },
	{ ".cargo/credentials.toml", "cargo", secrets_cargo },
	{ ".cargo/credentials", "cargo", secrets_cargo },
};
const size_t secret_nformats = nitems(secret_formats);

/*
 * Parses text (len bytes, a file of format k) into tf: the copy the
 * sandbox is to read (tf_text), the tokens taken out of it with a new
 * placeholder each from fn, and what was left out.  tf's other members
 * are the caller's.
 */
void
secrets_parse(const struct secret_format *k, const char *text, size_t len,
    placeholder_fn fn, struct secret_file *tf)
{
	struct secrets_out	 so;
	char			*copy;

	so.sx_sf = tf;
	so.sx_new = fn;
	tf->tf_kind = k;
	/* The parsers use str*(3): a NUL after the end bounds them all. */
	copy = xmalloc(len + 1);
	memcpy(copy, text, len);
	copy[len] = '\0';
	if ((so.sx_f = open_memstream(&tf->tf_text, &tf->tf_len)) == NULL)
		fatal("open_memstream");
	k->sk_parse(&so, copy, len);
	if (fclose(so.sx_f) != 0)
		fatal("open_memstream");
	explicit_bzero(copy, len);
	free(copy);
}

/*
 * Whether policy p hides path by its built-in defaults alone: a folder
 * or a file the user's own layers hide stays hidden whole.
 */
static bool
secrets_hidden_by_default(const struct policy *p, const char *path)
{
	const struct pitem	*it;
	bool			 dflt = false;
	size_t			 i;

	for (i = 0; i < p->p_hide.pl_n; i++) {
		it = &p->p_hide.pl_v[i];
		if (!path_is_below(path, it->pi_text))
			continue;
		if (it->pi_from == NULL || strncmp(it->pi_from,
		    "built-in defaults", 17) != 0)
			return false;
		dflt = true;
	}
	return dflt;
}

/*
 * Reads the tools' token files of home (secret_formats) that policy p
 * hides by its built-in defaults, and parses each into a copy with
 * placeholders from fn.  Sets *files (the caller frees each with
 * secrets_clear, then the array) and *n.  A file that cannot be read is
 * left hidden, said with -v.
 */
void
secrets_read(const char *home, const struct policy *p, placeholder_fn fn,
    struct secret_file **files, size_t *n)
{
	struct secret_file	 tf;
	struct stat		 st;
	char			*path, *text, *why;
	size_t			 i, len;

	*files = NULL;
	*n = 0;
	for (i = 0; i < secret_nformats; i++) {
		xasprintf(&path, "%s/%s", home, secret_formats[i].sk_name);
		if (lstat(path, &st) == -1 ||
		    !secrets_hidden_by_default(p, path)) {
			free(path);
			continue;
		}
		memset(&tf, 0, sizeof(tf));
		if ((tf.tf_path = realpath(path, NULL)) == NULL ||
		    (text = file_read(tf.tf_path, SECRETS_FILE_MAX, NULL, &len,
		    &why)) == NULL) {
			if (tf.tf_path == NULL)
				xasprintf(&why, "%s", strerror(errno));
			log_info("run: ~/%s stays hidden: %s",
			    secret_formats[i].sk_name, why);
			free(why);
			free(tf.tf_path);
			free(path);
			continue;
		}
		free(path);
		secrets_parse(&secret_formats[i], text, len, fn, &tf);
		explicit_bzero(text, len);
		free(text);
		*files = xreallocarray(*files, *n + 1, sizeof(**files));
		(*files)[(*n)++] = tf;
	}
}

/* An inspect entry for host, from file name, unless p inspects it. */
static void
secrets_inspect(struct policy *p, const char *host, const char *name)
{
	struct pinspect	 in = { 0 };
	char		*cause;

	if (policy_inspect(p, host) != NULL)
		return;
	if (policy_parse_pattern(host, &in.in_host, &cause) == -1) {
		log_info("run: %s: %s", name, cause);
		free(cause);
		return;
	}
	xasprintf(&in.in_host.pi_from, "%s (a token for it)", name);
	in.in_any = true;
	p->p_inspect = xreallocarray(p->p_inspect, p->p_ninspect + 1,
	    sizeof(in));
	p->p_inspect[p->p_ninspect++] = in;
}

/*
 * Before the plan: the token files of the caller's home (secrets_read)
 * into run->r_secrets.  With fill (the run's own proxy) and cordon's CA
 * there to inspect TLS with, the proxy is to fill their tokens in: each
 * token's host is inspected (an entry added to p unless p has one), and
 * the CA is hidden as for any inspection (trust_hide_ca, after this).
 */
void
secrets_prepare(struct run *run, struct policy *p, bool fill)
{
	const char	*home = getenv("HOME");
	char		*dir, *ca, *cause, name[PATH_MAX];
	size_t		 i, j;

	if (home == NULL || home[0] != '/')
		return;
	secrets_read(home, p, trust_placeholder, &run->r_secrets,
	    &run->r_nsecrets);
	if (run->r_nsecrets == 0)
		return;
	if ((dir = ca_dir_policy(p, &cause)) == NULL) {
		free(cause);
		return;
	}
	xasprintf(&ca, "%s/%s", dir, CA_CERT_FILE);
	run->r_secrets_filled = fill && access(ca, R_OK) == 0;
	free(ca);
	free(dir);
	for (i = 0; run->r_secrets_filled && i < run->r_nsecrets; i++) {
		snprintf(name, sizeof(name), "~/%s",
		    run->r_secrets[i].tf_kind->sk_name);
		for (j = 0; j < run->r_secrets[i].tf_nsecrets; j++)
			secrets_inspect(p, run->r_secrets[i].tf_secrets[j].se_host,
			    name);
	}
}

/*
 * The phantom credentials of the tokens secrets_prepare() found, added
 * to run->r_phantoms, when the proxy fills them in.
 */
void
secrets_phantoms(struct run *run)
{
	const struct secret_file *tf;
	const struct secret	*se;
	struct phantom		*ph;
	char			*cause;
	size_t			 i, j;

	for (i = 0; run->r_secrets_filled && i < run->r_nsecrets; i++) {
		tf = &run->r_secrets[i];
		for (j = 0; j < tf->tf_nsecrets; j++) {
			se = &tf->tf_secrets[j];
			run->r_phantoms = xreallocarray(run->r_phantoms,
			    run->r_nphantoms + 1, sizeof(*run->r_phantoms));
			ph = &run->r_phantoms[run->r_nphantoms];
			memset(ph, 0, sizeof(*ph));
			if (policy_parse_pattern(se->se_host, &ph->ph_host,
			    &cause) == -1) {
				free(cause);
				continue;
			}
			run->r_nphantoms++;
			xasprintf(&ph->ph_file, "~/%s", tf->tf_kind->sk_name);
			ph->ph_header = xstrdup("Authorization");
			if (se->se_user != NULL)
				ph->ph_user = xstrdup(se->se_user);
			else
				ph->ph_format = xstrdup(se->se_format);
			ph->ph_placeholder = xstrdup(se->se_placeholder);
			ph->ph_value = xstrdup(se->se_value);
		}
	}
}

/*
 * The token files copied into the sandbox, for the summary and the
 * report (tally_tokens): [{"file", "tool", "hosts", "filled", "left"}]
 * for each that held a token or lost a line; NULL when none did.
 */
json_t *
secrets_json(const struct run *run)
{
	const struct secret_file *tf;
	json_t			*a = NULL, *hosts, *left, *h;
	char			 name[PATH_MAX];
	size_t			 i, j, k;

	for (i = 0; i < run->r_nsecrets; i++) {
		tf = &run->r_secrets[i];
		if (!tf->tf_bound || (tf->tf_nsecrets == 0 &&
		    tf->tf_nleft == 0))
			continue;
		hosts = json_array();
		for (j = 0; j < tf->tf_nsecrets; j++) {
			json_array_foreach(hosts, k, h)
				if (strcmp(json_string_value(h),
				    tf->tf_secrets[j].se_host) == 0)
					break;
			if (k == json_array_size(hosts))
				json_array_append_new(hosts, json_string(
				    tf->tf_secrets[j].se_host));
		}
		left = json_array();
		for (j = 0; j < tf->tf_nleft; j++)
			json_array_append_new(left, json_string(tf->tf_left[j]));
		snprintf(name, sizeof(name), "~/%s", tf->tf_kind->sk_name);
		if (a == NULL)
			a = json_array();
		json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:b, s:o}",
		    "file", name, "tool", tf->tf_kind->sk_tool, "hosts", hosts,
		    "filled", run->r_secrets_filled && tf->tf_nsecrets > 0,
		    "left", left));
	}
	return a;
}
