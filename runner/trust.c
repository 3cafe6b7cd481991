/*
 * trust.c: the runner's part of TLS inspection, done outside before
 * the clone: the phantom credentials (a placeholder for the sandbox, the
 * real value for the proxy) and the CA bundle the sandbox trusts (the
 * system's certificates and cordon's CA, as one PEM text that PID 1
 * writes to RUN_CA_BUNDLE).  Only ca.crt is read here, never ca.key.
 * Nothing here needs privileges.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "certs.h"
#include "log.h"
#include "policy.h"
#include "proxy.h"
#include "runner.h"
#include "util.h"
#include "xmalloc.h"

#define INSPECT_BUNDLE_MAX	(16 * 1024 * 1024)	/* base bundle, bytes */
#define PHANTOM_HEX		32

/* Returns the value of name in env (NULL-terminated), or NULL. */
static const char *
trust_getenv(char *const *env, const char *name)
{
	size_t	 i, n = strlen(name);

	for (i = 0; env != NULL && env[i] != NULL; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

/* A new placeholder: PHANTOM_PREFIX and 32 random hex digits. */
char *
trust_placeholder(void)
{
	char	*s;
	size_t	 off = strlen(PHANTOM_PREFIX);

	s = xmalloc(off + PHANTOM_HEX + 1);
	memcpy(s, PHANTOM_PREFIX, off);
	if (hex_random(s + off, PHANTOM_HEX) == -1)
		fatal("run: getrandom");
	return s;
}

/*
 * The phantom credentials of policy p's credentials entries, whose real
 * values are read from env (the runner's own environment).  An entry
 * whose variable env does not hold gets none (said with -v).  Entries
 * naming one variable share one placeholder.  Sets *ph (the caller
 * frees it with phantoms_free) and *n.
 */
void
trust_phantoms(const struct policy *p, char *const *env,
    struct phantom **ph, size_t *n)
{
	const struct pcred	*cr;
	struct phantom		*e;
	const char		*value;
	size_t			 i, j;

	*ph = NULL;
	*n = 0;
	for (i = 0; i < p->p_ncreds; i++) {
		cr = &p->p_creds[i];
		if ((value = trust_getenv(env, cr->cr_env)) == NULL) {
			log_info("run: credentials: %s is not set in cordon's "
			    "environment; no placeholder, nothing swapped for "
			    "%s", cr->cr_env, cr->cr_host.pi_text);
			continue;
		}
		*ph = xreallocarray(*ph, *n + 1, sizeof(**ph));
		e = &(*ph)[(*n)++];
		memset(e, 0, sizeof(*e));
		pitem_copy(&e->ph_host, &cr->cr_host);
		e->ph_env = xstrdup(cr->cr_env);
		e->ph_header = xstrdup(cr->cr_header);
		e->ph_format = xstrdup(cr->cr_format);
		e->ph_value = xstrdup(value);
		for (j = 0; j + 1 < *n; j++)
			if (strcmp((*ph)[j].ph_env, e->ph_env) == 0)
				break;
		e->ph_placeholder = j + 1 < *n ?
		    xstrdup((*ph)[j].ph_placeholder) : trust_placeholder();
	}
}

/* Whether the run is to trust cordon's CA: it inspects some host. */
bool
trust_wanted(const struct policy *p)
{
	return p->p_ninspect > 0;
}

/*
 * The CA bundle for a run that inspects TLS: the base bundle (env's
 * SSL_CERT_FILE if set and readable, else OpenSSL's default file), then
 * cordon's CA certificate from policy p's tls.ca_dir or the default
 * folder.  Fills ib; returns 0, or -1 with *cause (the reason and the
 * fix) when the CA is missing or not a certificate.
 */
int
trust_bundle(const struct policy *p, char *const *env,
    struct trust_bundle *ib, char **cause)
{
	const char	*base;
	char		*dir = NULL, *path = NULL, *ca = NULL, *why;
	size_t		 calen, baselen = 0;
	X509		*cert = NULL;
	BIO		*bio;
	int		 rc = -1;

	memset(ib, 0, sizeof(*ib));
	if ((dir = ca_dir_policy(p, cause)) == NULL)
		return -1;
	xasprintf(&path, "%s/%s", dir, CA_CERT_FILE);
	if ((ca = file_read(path, INSPECT_BUNDLE_MAX, NULL, &calen, &why)) ==
	    NULL) {
		xasprintf(cause, "network.inspect needs cordon's CA, and %s; "
		    "run `cordon ca init%s%s`, or set tls.ca_dir to the "
		    "folder that holds ca.crt", why, p->p_ca_dir.pl_n > 0 ?
		    " --dir " : "", p->p_ca_dir.pl_n > 0 ? dir : "");
		free(why);
		goto out;
	}
	if ((bio = BIO_new_mem_buf(ca, (int)calen)) != NULL)
		cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	BIO_free(bio);
	if (cert == NULL) {
		xasprintf(cause, "%s is not a PEM certificate; make the CA "
		    "again with `cordon ca init --force`", path);
		goto out;
	}
	if (ca_fingerprint(cert, ib->ib_fingerprint,
	    sizeof(ib->ib_fingerprint)) == -1)
		ib->ib_fingerprint[0] = '\0';

	base = trust_getenv(env, "SSL_CERT_FILE");
	if (base == NULL || *base == '\0' || access(base, R_OK) == -1)
		base = X509_get_default_cert_file();
	if ((ib->ib_pem = file_read(base, INSPECT_BUNDLE_MAX, NULL, &baselen,
	    &why)) == NULL) {
		log_info("run: no base CA bundle (%s): the sandbox trusts "
		    "cordon's CA alone", why);
		free(why);
		ib->ib_pem = xstrdup("");
		baselen = 0;
	} else
		ib->ib_base = xstrdup(base);
	ib->ib_pem = xreallocarray(ib->ib_pem, 1, baselen + 1 + calen + 1);
	if (baselen > 0 && ib->ib_pem[baselen - 1] != '\n')
		ib->ib_pem[baselen++] = '\n';
	memcpy(ib->ib_pem + baselen, ca, calen + 1);
	ib->ib_len = baselen + calen;
	ib->ib_ca = path;
	path = NULL;
	rc = 0;
out:
	X509_free(cert);
	free(ca);
	free(path);
	free(dir);
	return rc;
}

/* Frees what trust_bundle() filled. */
void
trust_bundle_clear(struct trust_bundle *ib)
{
	free(ib->ib_pem);
	free(ib->ib_base);
	free(ib->ib_ca);
	memset(ib, 0, sizeof(*ib));
}

/*
 * Hides the folder of the CA that network.inspect uses (tls.ca_dir, or
 * the default) from the sandbox, wherever it is: the command gets the
 * certificate in its bundle and must never read the key.  Adds it to
 * p's filesystem.deny when it exists; a missing one is left to fail
 * where the CA is loaded.
 */
void
trust_hide_ca(struct policy *p)
{
	struct pitem	*it;
	struct stat	 st;
	char		*dir, *cause;

	if (!trust_wanted(p) && p->p_ca_dir.pl_n == 0)
		return;
	if ((dir = ca_dir_policy(p, &cause)) == NULL) {
		free(cause);
		return;
	}
	if (dir[0] == '/' && stat(dir, &st) == 0) {
		it = plist_add(&p->p_hide);
		it->pi_text = dir;
		it->pi_from = xstrdup("protected: the CA of network.inspect");
		return;
	}
	free(dir);
}
