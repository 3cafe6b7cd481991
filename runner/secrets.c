/*
 * secrets.c: the tools' token files (~/.npmrc, ~/.netrc, ...), read
 * outside before the clone and given to the sandbox as copies whose
 * tokens are placeholders.  Each token becomes a phantom credential for
 * the one host the file ties it to, which the proxy fills in over TLS it
 * inspects (inspect.c, phantom_apply): the command can use the token and
 * never read it.  A token the file ties to no host (npm's unscoped
 * _authToken, netrc's default entry, git's http:// lines) is left out of
 * the copy and said so.  Each format's parser is in tokenfile.c, pure:
 * text in, text and tokens out.  Here is what they fill (secrets_take,
 * secrets_left), the table of formats, secrets_read()'s one open, and
 * what a run makes of the tokens.  Nothing here needs privileges.
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

#include "certs.h"
#include "log.h"
#include "policy.h"
#include "proxy.h"
#include "runner.h"
#include "util.h"
#include "xmalloc.h"

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

/* --- the files ------------------------------------------------------- */

const struct secret_format secret_formats[] = {
	{ ".npmrc", "npm", tokenfile_npmrc },
	{ ".netrc", "curl, git, pip", tokenfile_netrc },
	{ ".git-credentials", "git", tokenfile_gitcred },
	{ ".config/git/credentials", "git", tokenfile_gitcred },
	{ ".pypirc", "twine", tokenfile_pypirc },
	{ ".cargo/credentials.toml", "cargo", tokenfile_cargo },
	{ ".cargo/credentials", "cargo", tokenfile_cargo },
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
