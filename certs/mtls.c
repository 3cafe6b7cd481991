/*
 * mtls.c: the TLS of a `--listen-sandbox tls:HOST:PORT` listener, which
 * asks every client for a certificate of --client-ca (not revoked by
 * --crl), and the identity a verified certificate names.
 *
 * The identity is the certificate's one URI subjectAltName
 * (spiffe://corp/ci/runner), or else its one subject CN, which may
 * not hold ':' (so no CN names what a URI does); it goes into
 * every log line of the connection and scopes the sandbox id the
 * client names in its PROXY v2 header, which comes inside the TLS
 * stream (conn_mtls.c).  An identity is a label in the log and in the
 * metrics: bytes outside printable ASCII, quotes and backslashes refuse
 * the certificate rather than being escaped differently in each.
 *
 * Sessions are never resumed (no cache, no tickets): each connection
 * verifies its certificate against the CA and CRL in force, so a CRL
 * read again on SIGHUP refuses a revoked client at its next connection.
 * A reload builds a whole new context and swaps it in only if every
 * file was read; the connections under way keep the old one, which
 * OpenSSL counts.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "certs/mtls.h"
#include "certs/ssl_error.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

static const char *const mtls_labels[MTLS_R_COUNT] = {
	"no-certificate", "unknown-ca", "expired", "revoked",
	"not-yet-valid", "invalid-certificate", "no-identity", "handshake"
};

static const char *const mtls_words[MTLS_R_COUNT] = {
	"no client certificate",
	"a certificate of an unknown CA",
	"an expired certificate",
	"a revoked certificate",
	"a certificate not valid yet",
	"an invalid certificate",
	"a certificate that names no usable identity",
	"no TLS handshake"
};

static const char *const mtls_hints[MTLS_R_COUNT] = {
	"the client must present a certificate issued by --client-ca",
	"issue the client's certificate from the CA in --client-ca, or add "
	    "its CA there and send SIGHUP",
	"renew the client's certificate",
	"the certificate is on the CRL: issue the client a new one",
	"check the clocks of the client's CA and of this host",
	"issue the client a certificate for TLS client authentication",
	"give the certificate one URI subjectAltName (spiffe://...), or "
	    "none and one CN of printable ASCII without ':', spaces, quotes "
	    "or backslashes",
	"the client must speak TLS 1.2 or later to this listener"
};

/* The label of a reason, for the metrics. */
const char *
mtls_label(enum mtls_reason r)
{
	return mtls_labels[r];
}

/*
 * The subject of the first certificate that failed verification on an
 * SSL, for the refusal's reason: after a failed handshake OpenSSL keeps
 * no peer certificate to ask.
 */
static int	 mtls_subject_idx = -1;

static void
mtls_subject_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx,
    long argl, void *argp)
{
	(void)parent;
	(void)ad;
	(void)idx;
	(void)argl;
	(void)argp;
	OPENSSL_free(ptr);
}

static int
mtls_verify_cb(int ok, X509_STORE_CTX *xs)
{
	SSL	*ssl;
	X509	*x;
	char	*s;

	if (ok || (ssl = X509_STORE_CTX_get_ex_data(xs,
	    SSL_get_ex_data_X509_STORE_CTX_idx())) == NULL ||
	    SSL_get_ex_data(ssl, mtls_subject_idx) != NULL ||
	    (x = X509_STORE_CTX_get_current_cert(xs)) == NULL)
		return ok;
	if ((s = X509_NAME_oneline(X509_get_subject_name(x), NULL, 0)) !=
	    NULL && SSL_set_ex_data(ssl, mtls_subject_idx, s) != 1)
		OPENSSL_free(s);
	return ok;
}

/* The subject of the certificate that failed on ssl (borrowed), or NULL. */
const char *
mtls_failed_subject(SSL *ssl)
{
	return mtls_subject_idx == -1 ? NULL :
	    SSL_get_ex_data(ssl, mtls_subject_idx);
}

/* Reads the key of mf into ctx, checked against its certificate. */
static int
mtls_load_key(SSL_CTX *ctx, const struct mtls_files *mf, char **cause)
{
	EVP_PKEY	*key = NULL;
	BIO		*b;
	int		 rc = -1;

	if ((b = BIO_new_file(mf->mf_key, "r")) == NULL ||
	    (key = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL)) == NULL)
		xasprintf(cause, "--tls-key %s: %s", mf->mf_key,
		    ssl_error_last());
	else if (X509_check_private_key(SSL_CTX_get0_certificate(ctx), key) !=
	    1)
		xasprintf(cause, "--tls-key %s is not the key of --tls-cert %s",
		    mf->mf_key, mf->mf_cert);
	else if (SSL_CTX_use_PrivateKey(ctx, key) != 1)
		xasprintf(cause, "--tls-key %s: %s", mf->mf_key,
		    ssl_error_last());
	else
		rc = 0;
	ERR_clear_error();
	EVP_PKEY_free(key);
	BIO_free(b);
	return rc;
}

/* Loads the CRL file into ctx's store and turns on CRL checks. */
static int
mtls_load_crl(SSL_CTX *ctx, const char *path, char **cause)
{
	X509_STORE	*store = SSL_CTX_get_cert_store(ctx);
	X509_LOOKUP	*lookup;

	if ((lookup = X509_STORE_add_lookup(store, X509_LOOKUP_file())) ==
	    NULL || X509_load_crl_file(lookup, path, X509_FILETYPE_PEM) <= 0) {
		xasprintf(cause, "--crl %s: no CRL could be read from it (%s)",
		    path, ssl_error_last());
		return -1;
	}
	X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
	return 0;
}

/*
 * Whether each file of mf opens for reading, said in the system's words
 * (OpenSSL's would be "system lib").
 */
static int
mtls_readable(const struct mtls_files *mf, char **cause)
{
	const char	*flag[] = { "--tls-cert", "--tls-key", "--client-ca",
			    "--crl" };
	const char	*path[] = { mf->mf_cert, mf->mf_key, mf->mf_ca,
			    mf->mf_crl };
	FILE		*f;
	size_t		 i;

	for (i = 0; i < nitems(path); i++) {
		if (path[i] == NULL)
			continue;
		if ((f = fopen(path[i], "re")) == NULL) {
			xasprintf(cause, "%s %s: %s", flag[i], path[i],
			    strerror(errno));
			return -1;
		}
		fclose(f);
	}
	return 0;
}

/*
 * A server context from the files of mf: TLS 1.2 or later, a client
 * certificate required and verified, no resumption.  NULL with *cause
 * set (which file, and why).
 */
static SSL_CTX *
mtls_ctx_new(const struct mtls_files *mf, char **cause)
{
	STACK_OF(X509_NAME)	*names;
	SSL_CTX			*ctx;

	*cause = NULL;
	ERR_clear_error();
	if (mtls_readable(mf, cause) == -1)
		return NULL;
	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL) {
		xasprintf(cause, "cannot make a TLS context (%s)",
		    ssl_error_last());
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
	if (SSL_CTX_use_certificate_chain_file(ctx, mf->mf_cert) != 1)
		xasprintf(cause, "--tls-cert %s: %s", mf->mf_cert,
		    ssl_error_last());
	else if (mtls_load_key(ctx, mf, cause) == -1)
		;
	else if (SSL_CTX_load_verify_locations(ctx, mf->mf_ca, NULL) != 1 ||
	    (names = SSL_load_client_CA_file(mf->mf_ca)) == NULL)
		xasprintf(cause, "--client-ca %s: %s", mf->mf_ca,
		    ssl_error_last());
	else {
		SSL_CTX_set_client_CA_list(ctx, names);
		if (mf->mf_crl != NULL)
			(void)mtls_load_crl(ctx, mf->mf_crl, cause);
	}
	if (*cause != NULL) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (mtls_subject_idx == -1)
		mtls_subject_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL,
		    mtls_subject_free);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
	    SSL_VERIFY_FAIL_IF_NO_PEER_CERT | SSL_VERIFY_CLIENT_ONCE,
	    mtls_verify_cb);
	return ctx;
}

/*
 * The TLS of a listener, from the files of mf (borrowed: they are read
 * again by mtls_reload).  NULL with *cause set.
 */
struct mtls *
mtls_new(const struct mtls_files *mf, char **cause)
{
	struct mtls	*m;
	SSL_CTX		*ctx;

	if ((ctx = mtls_ctx_new(mf, cause)) == NULL)
		return NULL;
	m = xcalloc(1, sizeof(*m));
	m->mt_files = *mf;
	m->mt_ctx = ctx;
	return m;
}

/*
 * Reads the files again; on any error the context in force stays and
 * -1 is returned with *cause set.
 */
int
mtls_reload(struct mtls *m, char **cause)
{
	SSL_CTX	*ctx;

	if ((ctx = mtls_ctx_new(&m->mt_files, cause)) == NULL)
		return -1;
	SSL_CTX_free(m->mt_ctx);	/* sessions under way hold their own */
	m->mt_ctx = ctx;
	return 0;
}

void
mtls_free(struct mtls *m)
{
	if (m == NULL)
		return;
	SSL_CTX_free(m->mt_ctx);
	free(m);
}

/* A new session of the context in force; fatal if OpenSSL cannot. */
SSL *
mtls_session(struct mtls *m)
{
	SSL	*ssl;

	if ((ssl = SSL_new(m->mt_ctx)) == NULL)
		fatalx("proxy: cannot make a TLS session (%s)",
		    ssl_error_last());
	return ssl;
}

/*
 * Whether len bytes at s make an identity: printable, no " or \.  On
 * false, *cause says why (static).
 */
static bool
mtls_usable(const unsigned char *s, int len, const char **cause)
{
	int	 i;

	*cause = "more than 255 bytes, or none";
	if (len <= 0 || len > MTLS_IDENTITY_MAX)
		return false;
	*cause = "a byte outside printable ASCII, a space, a quote or a "
	    "backslash";
	for (i = 0; i < len; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f || s[i] == '"' ||
		    s[i] == '\\')
			return false;
	return true;
}

/*
 * Whether len bytes at s begin with a URI's scheme and its ':'
 * (RFC 3986: a letter, then letters, digits, '+', '-' or '.').
 */
static bool
mtls_schemed(const unsigned char *s, int len)
{
	int	 i;

	if (len < 2 || !((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z'))
		return false;
	for (i = 1; i < len; i++) {
		if (s[i] == ':')
			return true;
		if (!(((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '+' ||
		    s[i] == '-' || s[i] == '.'))
			return false;
	}
	return false;
}

/*
 * The one URI subjectAltName of x, if usable; NULL otherwise, with
 * *seen when it has any.  Two are refused as two CNs are (an X.509
 * SVID has exactly one): which is meant is not ours to guess.  A URI
 * must begin with its scheme, so that no CN can be the same text.
 */
static char *
mtls_uri(X509 *x, bool *seen, char **cause)
{
	GENERAL_NAMES		*names;
	const GENERAL_NAME	*gn;
	const unsigned char	*v = NULL;
	const char		*why;
	int			 i, len = 0, n = 0;
	char			*id = NULL;

	*seen = false;
	if ((names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL,
	    NULL)) == NULL)
		return NULL;
	for (i = 0; i < sk_GENERAL_NAME_num(names); i++) {
		gn = sk_GENERAL_NAME_value(names, i);
		if (gn->type != GEN_URI || n++ > 0)
			continue;
		v = ASN1_STRING_get0_data(gn->d.ia5);
		len = ASN1_STRING_length(gn->d.ia5);
	}
	*seen = n > 0;
	if (n > 1)
		xasprintf(cause, "%d URI subjectAltNames: an identity is one "
		    "URI", n);
	else if (n == 1 && !mtls_usable(v, len, &why))
		xasprintf(cause, "its URI subjectAltName has %s", why);
	else if (n == 1 && !mtls_schemed(v, len))
		xasprintf(cause, "its URI subjectAltName does not begin "
		    "with a scheme such as spiffe:");
	else if (n == 1)
		id = xstrndup((const char *)v, (size_t)len);
	GENERAL_NAMES_free(names);
	return id;
}

/*
 * The one subject CN of x, if usable; NULL otherwise (none, two, bad).
 * A CN holding ':' is refused: it could read as a URI, and an identity
 * from a CN must never be one a URI subjectAltName names (a CA that
 * lets people choose their CN would let them be spiffe://corp/ci/...).
 */
static char *
mtls_cn(X509 *x, char **cause)
{
	X509_NAME	*name = X509_get_subject_name(x);
	unsigned char	*utf8 = NULL;
	const char	*why;
	char		*id = NULL;
	int		 i, len;

	if ((i = X509_NAME_get_index_by_NID(name, NID_commonName, -1)) < 0) {
		xasprintf(cause, "no URI subjectAltName and no CN");
		return NULL;
	}
	if (X509_NAME_get_index_by_NID(name, NID_commonName, i) >= 0) {
		xasprintf(cause, "no URI subjectAltName and two CNs");
		return NULL;
	}
	len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(
	    X509_NAME_get_entry(name, i)));
	if (len <= 0 || !mtls_usable(utf8, len, &why))
		xasprintf(cause, "its CN has %s", len <= 0 ?
		    "no readable text" : why);
	else if (memchr(utf8, ':', (size_t)len) != NULL)
		xasprintf(cause, "its CN holds ':': an identity from a CN "
		    "never looks like a URI, which only a URI subjectAltName "
		    "names");
	else
		id = xstrndup((const char *)utf8, (size_t)len);
	OPENSSL_free(utf8);
	return id;
}

/*
 * The identity a certificate names (caller frees): its one URI
 * subjectAltName, or, when it has none, its one subject CN.  The two
 * never name the same text: a URI begins with its scheme, a CN holds
 * no ':'.  A URI that is there but unusable is not passed over for the
 * CN: the CA meant the URI.  NULL when no usable identity is named,
 * with *cause saying why (caller frees; none when x is NULL).
 */
char *
mtls_identity(X509 *x, char **cause)
{
	char	*id;
	bool	 seen;

	*cause = NULL;
	if (x == NULL)
		return NULL;
	if ((id = mtls_uri(x, &seen, cause)) != NULL || seen)
		return id;
	return mtls_cn(x, cause);
}

/*
 * Why a handshake on ssl failed: the certificate's verification result,
 * or the TLS error.  *detail is OpenSSL's words (static).
 */
enum mtls_reason
mtls_why(SSL *ssl, unsigned long err, const char **detail)
{
	static char	 buf[256];
	long		 v = SSL_get_verify_result(ssl);

	*detail = v != X509_V_OK ? X509_verify_cert_error_string(v) : NULL;
	switch (v) {
	case X509_V_OK:
		break;
	case X509_V_ERR_CERT_HAS_EXPIRED:
		return MTLS_R_EXPIRED;
	case X509_V_ERR_CERT_NOT_YET_VALID:
		return MTLS_R_NOT_YET_VALID;
	case X509_V_ERR_CERT_REVOKED:
		return MTLS_R_REVOKED;
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
	case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
	case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
	case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
		return MTLS_R_UNKNOWN_CA;
	default:
		return MTLS_R_INVALID;
	}
	if (err != 0) {
		ERR_error_string_n(err, buf, sizeof(buf));
		*detail = buf;
		if (ERR_GET_LIB(err) == ERR_LIB_SSL && ERR_GET_REASON(err) ==
		    SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE)
			return MTLS_R_NO_CERT;
	}
	return MTLS_R_HANDSHAKE;
}

/* What a refusal for r is, in words, and its fix. */
const char *
mtls_words_of(enum mtls_reason r)
{
	return mtls_words[r];
}

const char *
mtls_hint(enum mtls_reason r)
{
	return mtls_hints[r];
}

/*
 * Counts a refusal for r and says whether its line is written: at most
 * MTLS_LINES_MAX a second for each reason, so that a client retrying
 * in a loop fills neither the log nor standard error.  *quiet is how
 * many were not written since the last that was.
 */
bool
mtls_refusal(struct mtls *m, enum mtls_reason r, uint64_t *quiet)
{
	time_t	 now = time(NULL);

	m->mt_refused[r]++;
	if (now != m->mt_second[r]) {
		m->mt_second[r] = now;
		m->mt_lines[r] = 0;
	}
	if (m->mt_lines[r] >= MTLS_LINES_MAX) {
		m->mt_quiet[r]++;
		return false;
	}
	m->mt_lines[r]++;
	*quiet = m->mt_quiet[r];
	m->mt_quiet[r] = 0;
	return true;
}
