/*
 * trust_bundle.c: the CA bundle a run that inspects TLS gives the
 * sandbox (the system's certificates and cordon's CA, as one PEM text
 * that PID 1 writes to RUN_CA_BUNDLE, and the same as Java's trust
 * store).  Only ca.crt is read here, never ca.key.  The one part of
 * confine/ that needs OpenSSL: a run without the proxy never calls it.
 *
 * Runs in: cordon run on the host, before the clone.
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
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "certs/certs.h"
#include "confine/env.h"
#include "confine/trust.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"

#define INSPECT_BUNDLE_MAX	(16 * 1024 * 1024)	/* base bundle, bytes */
/*
 * The attribute by which Java takes a certificate of a PKCS#12 store as
 * a trusted entry (Oracle's "trusted key usage"), and the use it is
 * trusted for: any (anyExtendedKeyUsage).
 */
#define TRUST_JDK_ATTR		"2.16.840.1.113894.746875.1.1"
#define TRUST_ANY_USE		"2.5.29.37.0"

/*
 * Adds to the bundle ib the files the host's CA variables name (a
 * corporate CA in NODE_EXTRA_CA_CERTS, a bundle in REQUESTS_CA_BUNDLE),
 * each once and not the base: the run sets those variables to its own
 * bundle, which must then trust what they trusted.  A file that cannot
 * be read is left out, and said with -v.
 */
static void
trust_host_cas(struct trust_bundle *ib, char *const *env, size_t *len)
{
	const char	*path;
	char		*pem, *why, *seen = NULL, *item;
	size_t		 i, n;

	for (i = 0; i < env_ca_nvars; i++) {
		path = trust_getenv(env, env_ca_vars[i].cv_name);
		if (path == NULL || *path != '/' || (ib->ib_base != NULL &&
		    strcmp(path, ib->ib_base) == 0))
			continue;
		xasprintf(&item, "\n%s\n", path);
		if (seen != NULL && strstr(seen, item) != NULL) {
			free(item);
			continue;
		}
		str_append(&seen, "", item);
		free(item);
		if ((pem = file_read(path, INSPECT_BUNDLE_MAX, NULL, &n,
		    &why)) == NULL) {
			log_info("run: %s=%s left out of the bundle: %s",
			    env_ca_vars[i].cv_name, path, why);
			free(why);
			continue;
		}
		ib->ib_pem = xreallocarray(ib->ib_pem, 1, *len + n + 2);
		memcpy(ib->ib_pem + *len, pem, n);
		*len += n;
		if (n > 0 && pem[n - 1] != '\n')
			ib->ib_pem[(*len)++] = '\n';
		ib->ib_pem[*len] = '\0';
		xasprintf(&item, "%s (%s)", path, env_ca_vars[i].cv_name);
		str_append(&ib->ib_extra, ", ", item);
		free(item);
		free(pem);
	}
	free(seen);
}

static int	trust_java_store(struct trust_bundle *, char **);


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
	if (baselen > 0 && ib->ib_pem[baselen - 1] != '\n') {
		ib->ib_pem = xreallocarray(ib->ib_pem, 1, baselen + 2);
		ib->ib_pem[baselen++] = '\n';
		ib->ib_pem[baselen] = '\0';
	}
	trust_host_cas(ib, env, &baselen);
	ib->ib_pem = xreallocarray(ib->ib_pem, 1, baselen + 1 + calen + 1);
	memcpy(ib->ib_pem + baselen, ca, calen + 1);
	ib->ib_len = baselen + calen;
	ib->ib_ca = path;
	path = NULL;
	rc = trust_java_store(ib, cause);
out:
	X509_free(cert);
	free(ca);
	free(path);
	free(dir);
	return rc;
}

/*
 * Adds the certificate der (len bytes, DER) to bags as a trusted entry
 * named alias: Java reads such an entry only with its trusted-key-usage
 * attribute.  The bytes go in as they are, never decoded here (OpenSSL
 * takes some 0.1 ms a certificate to decode its key; a bundle has 150).
 * Returns 0, or -1.
 */
static int
trust_java_add(STACK_OF(PKCS12_SAFEBAG) **bags, const unsigned char *der,
    long len, const char *alias, int nid, const ASN1_OBJECT *any)
{
	PKCS12_SAFEBAG	*bag = NULL;
	ASN1_STRING	*raw;
	ASN1_TYPE	*t;
	int		 rc = -1;

	/* An ANY of type SEQUENCE is written out as the bytes it holds. */
	if ((t = ASN1_TYPE_new()) == NULL || (raw = ASN1_STRING_new()) ==
	    NULL)
		goto out;
	ASN1_TYPE_set(t, V_ASN1_SEQUENCE, raw);
	if (!ASN1_STRING_set(raw, der, (int)len) ||
	    (bag = PKCS12_item_pack_safebag(t, ASN1_ITEM_rptr(ASN1_ANY),
	    NID_x509Certificate, NID_certBag)) == NULL ||
	    !PKCS12_add_friendlyname_asc(bag, alias, -1) ||
	    !PKCS12_add1_attr_by_NID(bag, nid, V_ASN1_OBJECT,
	    (const unsigned char *)any, -1) ||
	    (*bags == NULL && (*bags = sk_PKCS12_SAFEBAG_new_null()) ==
	    NULL) || !sk_PKCS12_SAFEBAG_push(*bags, bag))
		goto out;
	bag = NULL;
	rc = 0;
out:
	PKCS12_SAFEBAG_free(bag);
	ASN1_TYPE_free(t);
	return rc;
}

/*
 * Reads each certificate of ib's bundle into bags, *n of them.  A block
 * that does not read is passed over and counted in *skipped: cordon's
 * CA comes last, and must not be lost to a broken block of the base
 * bundle.  Returns 0, or -1.
 */
static int
trust_java_bags(const struct trust_bundle *ib,
    STACK_OF(PKCS12_SAFEBAG) **bags, int nid, const ASN1_OBJECT *any,
    size_t *n, size_t *skipped)
{
	BIO		*bio;
	unsigned char	*data;
	char		*name, *header, alias[32];
	long		 len, left;
	int		 rc = 0;

	if ((bio = BIO_new_mem_buf(ib->ib_pem, (int)ib->ib_len)) == NULL)
		return -1;
	while (rc == 0 && (left = BIO_pending(bio)) > 0) {
		if (!PEM_read_bio(bio, &name, &header, &data, &len)) {
			/* Text with no block left, or nothing read past. */
			if (ERR_GET_REASON(ERR_peek_last_error()) ==
			    PEM_R_NO_START_LINE || BIO_pending(bio) >= left)
				break;
			(*skipped)++;
			ERR_clear_error();
			continue;
		}
		if (strcmp(name, PEM_STRING_X509) == 0) {
			snprintf(alias, sizeof(alias), "cordon-%zu", (*n)++);
			rc = trust_java_add(bags, data, len, alias, nid, any);
		}
		OPENSSL_free(name);
		OPENSSL_free(header);
		OPENSSL_free(data);
	}
	BIO_free(bio);
	return rc;
}

/*
 * The certificates of ib's bundle as a PKCS#12 trust store for Java,
 * which reads no PEM file: each a trusted entry, in clear (a trust store
 * holds nothing secret), no key and no password.  Fills ib_java and
 * ib_java_len; returns 0, or -1 with *cause.
 */
static int
trust_java_store(struct trust_bundle *ib, char **cause)
{
	STACK_OF(PKCS12_SAFEBAG) *bags = NULL;
	STACK_OF(PKCS7)		*safes = NULL;
	PKCS12			*p12 = NULL;
	ASN1_OBJECT		*any;
	unsigned char		*der = NULL;
	size_t			 n = 0, skipped = 0;
	int			 nid, dlen, rc = -1;

	if ((nid = OBJ_txt2nid(TRUST_JDK_ATTR)) == NID_undef)
		nid = OBJ_create(TRUST_JDK_ATTR, NULL, NULL);
	if ((any = OBJ_txt2obj(TRUST_ANY_USE, 1)) == NULL ||
	    nid == NID_undef ||
	    trust_java_bags(ib, &bags, nid, any, &n, &skipped) == -1)
		goto out;
	if (skipped > 0)
		log_warnx("run: %zu block(s) of the CA bundle %s do not read "
		    "as PEM: left out of the JVM's trust store", skipped,
		    ib->ib_base != NULL ? ib->ib_base : "(none)");
	if (n == 0 || !PKCS12_add_safe(&safes, bags, -1, 0, NULL) ||
	    (p12 = PKCS12_add_safes(safes, 0)) == NULL ||
	    (dlen = i2d_PKCS12(p12, &der)) <= 0)
		goto out;
	ib->ib_java = der;
	ib->ib_java_len = (size_t)dlen;
	der = NULL;
	rc = 0;
out:
	if (rc == -1)
		xasprintf(cause, "cannot make the JVM's trust store of the CA "
		    "bundle (%zu certificates read)", n);
	ERR_clear_error();
	OPENSSL_free(der);
	PKCS12_free(p12);
	sk_PKCS7_pop_free(safes, PKCS7_free);
	sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
	ASN1_OBJECT_free(any);
	return rc;
}

/* Frees what trust_bundle() filled. */
void
trust_bundle_clear(struct trust_bundle *ib)
{
	OPENSSL_free(ib->ib_java);
	free(ib->ib_pem);
	free(ib->ib_base);
	free(ib->ib_extra);
	free(ib->ib_ca);
	memset(ib, 0, sizeof(*ib));
}
