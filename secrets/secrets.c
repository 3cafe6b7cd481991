/*
 * secrets.c: the tools' token files (~/.npmrc, ~/.netrc, ...), read
 * outside before the clone and given to the sandbox as copies whose
 * tokens are placeholders.  Each token becomes a phantom credential for
 * the one host the file ties it to, which the proxy fills in over TLS it
 * inspects (inspect_phantom_apply): the command can use the token and
 * never read it.  A token the file ties to no host (npm's unscoped
 * _authToken, netrc's default entry, git's http:// lines) is left out of
 * the copy and said so.  Each format's parser is in tokenfile.c, pure:
 * text in, text and tokens out.  Here is what they fill (secrets_take,
 * secrets_left), the table of formats and secrets_read()'s one open;
 * what a run makes of the tokens is runner/run_secrets.c's.  Nothing
 * here needs privileges.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "secrets/secrets.h"

#define SECRETS_MAX		64		/* tokens of one file */

/* Wipes and frees a string that held a secret (NULL: nothing). */
void
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
void
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
 * Takes a token out: value for host (Basic with user when user is not
 * NULL, else format around it).  Returns the placeholder the copy is to
 * hold (owned by tf), or NULL when the file has too many.
 */
const char *
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

/*
 * Takes a login's token out: value, for host; in a header (format around
 * it) when path is NULL, else in the JSON body of a POST to its token
 * endpoint path.  member is OAuth's name for it, which a refresh's answer
 * renews (proxy/renew.c).  path and member are static.  A token that is
 * a JWT gets a placeholder that is one too, its claims readable and its
 * signature random (str_jwt_placeholder): the agent reads the claims.
 * Returns the placeholder as secrets_take does.
 */
const char *
secrets_take_login(struct secrets_out *so, const char *host,
    const char *format, const char *path, const char *member,
    const char *value, size_t vlen)
{
	struct secret_file	*tf = so->sx_sf;
	struct secret		*se;
	char			*jwt;

	if (secrets_take(so, host, NULL, format, value, vlen) == NULL)
		return NULL;
	se = &tf->tf_secrets[tf->tf_nsecrets - 1];
	se->se_path = path;
	se->se_member = member;
	if ((jwt = str_jwt_placeholder(se->se_value)) != NULL) {
		free(se->se_placeholder);
		se->se_placeholder = jwt;
		se->se_jwt = true;
	}
	return se->se_placeholder;
}

/* --- the files ------------------------------------------------------- */

const struct secret_format secrets_formats[] = {
	{ ".npmrc", "npm", tokenfile_npmrc, NULL },
	{ ".netrc", "curl, git, pip", tokenfile_netrc, NULL },
	{ ".git-credentials", "git", tokenfile_gitcred, NULL },
	{ ".config/git/credentials", "git", tokenfile_gitcred, NULL },
	{ ".pypirc", "twine", tokenfile_pypirc, NULL },
	{ ".cargo/credentials.toml", "cargo", tokenfile_cargo, NULL },
	{ ".cargo/credentials", "cargo", tokenfile_cargo, NULL },
	{ ".claude/.credentials.json", "claude", tokenjson_claude,
	    tokenjson_claude_renew },
	{ ".codex/auth.json", "codex", tokenjson_codex, tokenjson_codex_renew },
};
const size_t secrets_nformats = nitems(secrets_formats);

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
 * Reads the tools' token files of home (secrets_formats) that policy p
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
	for (i = 0; i < secrets_nformats; i++) {
		xasprintf(&path, "%s/%s", home, secrets_formats[i].sk_name);
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
			    secrets_formats[i].sk_name, why);
			free(why);
			free(tf.tf_path);
			free(path);
			continue;
		}
		free(path);
		secrets_parse(&secrets_formats[i], text, len, fn, &tf);
		explicit_bzero(text, len);
		free(text);
		*files = xreallocarray(*files, *n + 1, sizeof(**files));
		(*files)[(*n)++] = tf;
	}
}

/*
 * Writes text (len bytes) over path, atomically: a new file beside it
 * with mode, renamed over it.  Returns 0, or -1 with *cause (the file
 * is as it was).
 */
static int
secrets_replace(const char *path, mode_t mode, const char *text, size_t len,
    char **cause)
{
	char	*tmp;
	int	 fd, saved;

	xasprintf(&tmp, "%s.cordon-XXXXXX", path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1) {
		xasprintf(cause, "cannot make %s: %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	if (fchmod(fd, mode) == -1 || write(fd, text, len) != (ssize_t)len ||
	    fsync(fd) == -1) {
		saved = errno;
		close(fd);
		goto fail;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		saved = errno;
		goto fail;
	}
	free(tmp);
	return 0;
fail:
	unlink(tmp);
	xasprintf(cause, "cannot write %s: %s", path, strerror(saved));
	free(tmp);
	return -1;
}

/*
 * Writes a refresh's new tokens (OAuth's names and values, n of them,
 * lasting expires_in seconds; -1: not said) into the host's login file
 * of tf, its other members kept (the format's sk_renew), atomically and
 * with its mode.  Returns 0, or -1 with *cause (caller frees).
 */
int
secrets_renew(const struct secret_file *tf, const char *const *names,
    const char *const *values, size_t n, long long expires_in, char **cause)
{
	struct stat	 st;
	char		*text, *out, *why;
	size_t		 len;
	int		 rc;

	if (tf->tf_kind->sk_renew == NULL) {
		xasprintf(cause, "%s: cordon cannot write its logins",
		    tf->tf_path);
		return -1;
	}
	if (stat(tf->tf_path, &st) == -1) {
		xasprintf(cause, "%s: %s", tf->tf_path, strerror(errno));
		return -1;
	}
	if ((text = file_read(tf->tf_path, SECRETS_FILE_MAX, NULL, &len,
	    &why)) == NULL) {
		xasprintf(cause, "%s: %s", tf->tf_path, why);
		free(why);
		return -1;
	}
	out = tf->tf_kind->sk_renew(text, len, names, values, n, expires_in,
	    &why);
	explicit_bzero(text, len);
	free(text);
	if (out == NULL) {
		xasprintf(cause, "%s: %s", tf->tf_path, why);
		free(why);
		return -1;
	}
	rc = secrets_replace(tf->tf_path, st.st_mode & 07777, out,
	    strlen(out), cause);
	secrets_wipe(out);
	return rc;
}
