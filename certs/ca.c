/*
 * ca.c: the local certificate authority behind TLS inspection.
 *
 * `cordon ca init` makes an EC P-256 key and a self-signed certificate
 * valid for CA_DAYS, able to sign leaves only (pathlen:0, no intermediate
 * below it).  The key is written 0600 from the first byte: the file is
 * created with O_EXCL and that mode, never widened afterwards, and the
 * directory that holds it is 0700 and ours.  A CA that lived for months
 * in a home directory is a CA anyone who ever read that directory can
 * impersonate every site with, so it is short-lived and re-made often.
 *
 * OpenSSL's convention (1 is success) is translated here and in leaf.c
 * only; everything returns 0 / -1 with a cause.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "certs/certs.h"
#include "certs/ssl_error.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"

#define CA_CN_PREFIX	"cordon local CA "
#define CA_CN_MAX	64		/* ub-common-name, RFC 5280 */

/* Appends OpenSSL's last error, if any, to what; returns a new string. */
static char *
ca_ssl_cause(const char *what)
{
	char	*s;

	if (ERR_peek_last_error() == 0)
		xasprintf(&s, "%s", what);
	else
		xasprintf(&s, "%s: %s", what, ssl_error_last());
	return s;
}

/*
 * Makes dir and its missing parents, each 0700.  An existing dir must be
 * ours, and others may at most pass through it: a key written into a
 * folder others can write to can be swapped or read before we check.
 */
static int
ca_dir_make(const char *dir, char **cause)
{
	struct stat	 st;
	char		*p, *slash;

	p = xstrdup(dir);
	for (slash = p + 1; (slash = strchr(slash, '/')) != NULL; slash++) {
		*slash = '\0';
		if (mkdir(p, 0700) == -1 && errno != EEXIST) {
			xasprintf(cause, "mkdir %s: %s", p, strerror(errno));
			free(p);
			return -1;
		}
		*slash = '/';
	}
	free(p);
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		xasprintf(cause, "mkdir %s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) == -1) {
		xasprintf(cause, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		xasprintf(cause, "%s is not a directory", dir);
		return -1;
	}
	/*
	 * Others may only pass through (0711: runs of a managed proxy read
	 * ca.crt by name); reading the list or writing is theirs never.
	 */
	if (st.st_uid != geteuid()) {
		xasprintf(cause, "%s must be a directory of ours with mode "
		    "0700, or 0711 (it is uid %u's)\nhint: name a folder of "
		    "your own, or a new one: cordon makes it, mode 0700", dir,
		    (unsigned)st.st_uid);
		return -1;
	}
	if ((st.st_mode & 066) != 0) {
		xasprintf(cause, "%s must be a directory of ours with mode "
		    "0700, or 0711 (it is %04o)\nhint: chmod 700 %s: others "
		    "must not list or write the folder of the CA's key", dir,
		    (unsigned)(st.st_mode & 07777), dir);
		return -1;
	}
	return 0;
}

/* Gives cert a random, positive 128-bit serial number. */
int
ca_serial_random(X509 *cert)
{
	BIGNUM		*bn;
	int		 rc = -1;

	if ((bn = BN_new()) == NULL)
		return -1;
	do {
		if (BN_rand(bn, 128, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1)
			goto out;
	} while (BN_is_zero(bn));
	if (BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) == NULL)
		goto out;
	rc = 0;
out:
	BN_free(bn);
	return rc;
}

/*
 * Adds the extension nid, in openssl-x509v3(5) syntax, to cert issued by
 * issuer (cert itself when self-signed).
 */
int
ca_ext_add(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX	 ctx;
	X509_EXTENSION	*ext;
	int		 rc;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	if ((ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)) == NULL)
		return -1;
	rc = X509_add_ext(cert, ext, -1) == 1 ? 0 : -1;
	X509_EXTENSION_free(ext);
	return rc;
}

/* "cordon local CA <hostname> <YYYY-MM-DD>", host name bytes filtered. */
static void
ca_common_name(char *buf, size_t len, time_t now)
{
	char		 host[256], date[16];
	struct tm	 tm;
	size_t		 i, max;

	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	for (i = 0; host[i] != '\0'; i++) {
		if (host[i] != '-' && host[i] != '.' && host[i] != '_' &&
		    !(host[i] >= 'a' && host[i] <= 'z') &&
		    !(host[i] >= 'A' && host[i] <= 'Z') &&
		    !(host[i] >= '0' && host[i] <= '9'))
			host[i] = '_';
	}
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d", &tm);
	max = CA_CN_MAX - strlen(CA_CN_PREFIX) - 1 - strlen(date);
	snprintf(buf, len, "%s%.*s %.10s", CA_CN_PREFIX, (int)max, host, date);
}

/* Makes the self-signed CA certificate for key; NULL on failure. */
static X509 *
ca_cert_make(EVP_PKEY *key)
{
	X509		*cert;
	X509_NAME	*name;
	char		 cn[CA_CN_MAX + 1];
	time_t		 now = time(NULL);

	if ((cert = X509_new()) == NULL)
		return NULL;
	ca_common_name(cn, sizeof(cn), now);
	if (X509_set_version(cert, 2) != 1 || ca_serial_random(cert) == -1)
		goto fail;
	if (X509_time_adj_ex(X509_getm_notBefore(cert), 0,
	    -LEAF_BACKDATE_SECS, &now) == NULL ||
	    X509_time_adj_ex(X509_getm_notAfter(cert), CA_DAYS, 0,
	    &now) == NULL)
		goto fail;
	name = X509_get_subject_name(cert);
	if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	    (const unsigned char *)cn, -1, -1, 0) != 1 ||
	    X509_set_issuer_name(cert, name) != 1 ||
	    X509_set_pubkey(cert, key) != 1)
		goto fail;
	if (ca_ext_add(cert, cert, NID_basic_constraints,
	    "critical,CA:TRUE,pathlen:0") == -1 ||
	    ca_ext_add(cert, cert, NID_key_usage,
	    "critical,keyCertSign,cRLSign") == -1 ||
	    ca_ext_add(cert, cert, NID_subject_key_identifier,
	    "hash") == -1)
		goto fail;
	if (X509_sign(cert, key, EVP_sha256()) == 0)
		goto fail;
	return cert;
fail:
	X509_free(cert);
	return NULL;
}

/*
 * Writes the len bytes of buf to name in dirfd, created with O_EXCL and
 * mode (so no wider mode ever exists, whatever the umask), then fsyncs.
 */
static int
ca_file_write(int dirfd, const char *name, mode_t mode, const char *buf,
    size_t len)
{
	ssize_t	 n;
	int	 fd, saved;

	if ((fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, mode)) == -1)
		return -1;
	if (fchmod(fd, mode) == -1)	/* the umask may have narrowed it */
		goto fail;
	while (len > 0) {
		if ((n = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		buf += n;
		len -= (size_t)n;
	}
	if (fsync(fd) == -1)
		goto fail;
	return close(fd);
fail:
	saved = errno;
	close(fd);
	unlinkat(dirfd, name, 0);
	errno = saved;
	return -1;
}

/*
 * Makes a new CA in dir (created 0700 if missing).  Without force, refuses
 * when dir already holds a key or a certificate.  The new files are
 * written beside the old ones and renamed over them, so a failure halfway
 * leaves the old CA in place.  Returns 0, or -1 with *cause set.
 */
int
ca_init(const char *dir, bool force, char **cause)
{
	EVP_PKEY	*key = NULL;
	X509		*cert = NULL;
	BIO		*kbio = NULL, *cbio = NULL;
	char		*kbuf, *cbuf;
	long		 klen, clen;
	struct stat	 st;
	int		 dirfd = -1, rc = -1;

	*cause = NULL;
	if (ca_dir_make(dir, cause) == -1)
		return -1;
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		xasprintf(cause, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!force && (fstatat(dirfd, CA_KEY_FILE, &st,
	    AT_SYMLINK_NOFOLLOW) == 0 || fstatat(dirfd, CA_CERT_FILE, &st,
	    AT_SYMLINK_NOFOLLOW) == 0)) {
		xasprintf(cause, "%s already holds a CA", dir);
		goto out;
	}

	if ((key = EVP_EC_gen("P-256")) == NULL) {
		*cause = ca_ssl_cause("EC P-256 key generation");
		goto out;
	}
	if ((cert = ca_cert_make(key)) == NULL) {
		*cause = ca_ssl_cause("CA certificate");
		goto out;
	}
	/* secmem: the PEM copy of the key is wiped when the BIO is freed. */
	if ((kbio = BIO_new(BIO_s_secmem())) == NULL ||
	    (cbio = BIO_new(BIO_s_mem())) == NULL ||
	    PEM_write_bio_PrivateKey(kbio, key, NULL, NULL, 0, NULL,
	    NULL) != 1 || PEM_write_bio_X509(cbio, cert) != 1) {
		*cause = ca_ssl_cause("PEM encoding");
		goto out;
	}
	klen = BIO_get_mem_data(kbio, &kbuf);
	clen = BIO_get_mem_data(cbio, &cbuf);

	/* Leftovers of an earlier run that died between the two steps. */
	unlinkat(dirfd, CA_KEY_FILE ".new", 0);
	unlinkat(dirfd, CA_CERT_FILE ".new", 0);
	if (ca_file_write(dirfd, CA_KEY_FILE ".new", 0600, kbuf,
	    (size_t)klen) == -1 ||
	    ca_file_write(dirfd, CA_CERT_FILE ".new", 0644, cbuf,
	    (size_t)clen) == -1) {
		xasprintf(cause, "writing in %s: %s", dir, strerror(errno));
		unlinkat(dirfd, CA_KEY_FILE ".new", 0);
		goto out;
	}
	if (renameat(dirfd, CA_KEY_FILE ".new", dirfd, CA_KEY_FILE) == -1 ||
	    renameat(dirfd, CA_CERT_FILE ".new", dirfd, CA_CERT_FILE) == -1) {
		xasprintf(cause, "rename in %s: %s", dir, strerror(errno));
		goto out;
	}
	if (fsync(dirfd) == -1) {
		xasprintf(cause, "fsync %s: %s", dir, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	BIO_free(cbio);
	BIO_free(kbio);
	X509_free(cert);
	EVP_PKEY_free(key);
	if (dirfd != -1)
		close(dirfd);
	return rc;
}

/* Reads the CA certificate of dir; NULL with *cause set on failure. */
static X509 *
ca_cert_read(const char *dir, char **cause)
{
	FILE	*f;
	X509	*cert;
	char	*path;

	xasprintf(&path, "%s/%s", dir, CA_CERT_FILE);
	if ((f = fopen(path, "re")) == NULL) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	if ((cert = PEM_read_X509(f, NULL, NULL, NULL)) == NULL) {
		char	*what;

		xasprintf(&what, "%s: not a PEM certificate", path);
		*cause = ca_ssl_cause(what);
		free(what);
	}
	fclose(f);
	free(path);
	return cert;
}

/*
 * Loads the CA of dir into *cert and *key (caller frees both).  Refuses a
 * key file that group or others may read or that is not ours, as ssh
 * does, and a key that does not belong to the certificate.  Returns 0, or
 * -1 with *cause set.
 */
int
ca_load(const char *dir, X509 **cert, EVP_PKEY **key, char **cause)
{
	struct stat	 st;
	FILE		*f = NULL;
	char		*path;
	int		 fd;

	*cause = NULL;
	*cert = NULL;
	*key = NULL;
	xasprintf(&path, "%s/%s", dir, CA_KEY_FILE);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		xasprintf(cause, "%s: mode %04o, or not ours; a CA key must "
		    "be 0600", path, (unsigned)(st.st_mode & 07777));
		goto fail;
	}
	if ((f = fdopen(fd, "r")) == NULL) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		goto fail;
	}
	fd = -1;
	if ((*key = PEM_read_PrivateKey(f, NULL, NULL, NULL)) == NULL) {
		*cause = ca_ssl_cause("CA key");
		goto fail;
	}
	fclose(f);
	f = NULL;
	if ((*cert = ca_cert_read(dir, cause)) == NULL)
		goto fail;
	if (X509_check_private_key(*cert, *key) != 1) {
		ERR_clear_error();
		xasprintf(cause, "%s: the key does not match %s", path,
		    CA_CERT_FILE);
		goto fail;
	}
	free(path);
	return 0;
fail:
	if (f != NULL)
		fclose(f);
	if (fd != -1)
		close(fd);
	X509_free(*cert);
	EVP_PKEY_free(*key);
	*cert = NULL;
	*key = NULL;
	free(path);
	return -1;
}

/* Writes the SHA-256 fingerprint of cert as "AB:CD:..." into buf. */
int
ca_fingerprint(X509 *cert, char *buf, size_t len)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 n, i;

	if (X509_digest(cert, EVP_sha256(), md, &n) != 1 || len < n * 3)
		return -1;
	for (i = 0; i < n; i++)
		snprintf(buf + i * 3, len - i * 3, "%02X%s", md[i],
		    i + 1 < n ? ":" : "");
	return 0;
}

/* Prints an ASN1_TIME as openssl x509 does ("Nov 22 04:11:14 2026 GMT"). */
static void
ca_time_print(FILE *out, const char *label, const ASN1_TIME *t)
{
	BIO	*b;
	char	*s;
	long	 n;

	fprintf(out, "%s", label);
	if ((b = BIO_new(BIO_s_mem())) != NULL && ASN1_TIME_print(b, t) == 1) {
		n = BIO_get_mem_data(b, &s);
		fprintf(out, "%.*s", (int)n, s);
	}
	BIO_free(b);
	fputc('\n', out);
}

/*
 * `cordon ca show`: prints dir, the CA's subject, validity and SHA-256
 * fingerprint to out; warns (standard error) when the key file is open to
 * group or others or the CA ends within CA_WARN_DAYS.  Returns 0, or -1
 * with *cause set when there is no readable CA certificate.
 */
int
ca_show(const char *dir, FILE *out, char **cause)
{
	X509		*cert;
	BIO		*b;
	struct stat	 st;
	char		 fp[EVP_MAX_MD_SIZE * 3], *path, *s;
	long		 n;
	int		 days, secs;

	*cause = NULL;
	if ((cert = ca_cert_read(dir, cause)) == NULL)
		return -1;
	fprintf(out, "directory: %s\n", dir);
	if ((b = BIO_new(BIO_s_mem())) != NULL &&
	    X509_NAME_print_ex(b, X509_get_subject_name(cert), 0,
	    XN_FLAG_RFC2253) >= 0) {
		n = BIO_get_mem_data(b, &s);
		fprintf(out, "subject: %.*s\n", (int)n, s);
	}
	BIO_free(b);
	ca_time_print(out, "not before: ", X509_get0_notBefore(cert));
	ca_time_print(out, "not after: ", X509_get0_notAfter(cert));
	if (ca_fingerprint(cert, fp, sizeof(fp)) == 0)
		fprintf(out, "sha256 fingerprint: %s\n", fp);

	xasprintf(&path, "%s/%s", dir, CA_KEY_FILE);
	if (lstat(path, &st) == -1)
		log_warn("ca show: %s", path);
	else if (!S_ISREG(st.st_mode) || (st.st_mode & 077) != 0) {
		log_warnx("ca show: %s has mode %04o: others may read the CA "
		    "key", path, (unsigned)(st.st_mode & 07777));
		log_warnx("hint: chmod 600 %s, or better, cordon ca init "
		    "--force (it may have been copied)", path);
	}
	free(path);

	if (ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(cert)) ==
	    1) {
		if (days < 0 || secs < 0) {
			log_warnx("ca show: the CA has expired");
			log_warnx("hint: cordon ca init --force");
		} else if (days < CA_WARN_DAYS) {
			log_warnx("ca show: the CA expires in %d day(s)", days);
			log_warnx("hint: cordon ca init --force");
		}
	}
	X509_free(cert);
	return 0;
}
