/*
 * test_certs.c: the local CA (ca.c) and the leaves minted from it
 * (leaf.c), in a scratch directory made for each test.
 */
#include "unit.h"

#include <sys/stat.h>

#include <ftw.h>
#include <unistd.h>

#include <openssl/x509v3.h>

#include "certs/certs.h"

struct fixture {
	char		 dir[64];	/* the mkdtemp folder */
	char		*ca;		/* dir/ca, made by ca_init */
	X509		*cert;
	EVP_PKEY	*key;
};

static int
setup(void **state)
{
	struct fixture	*f;
	char		*cause;

	f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/cordon-certs-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	if (asprintf(&f->ca, "%s/ca", f->dir) == -1)
		return -1;
	if (ca_init(f->ca, false, &cause) == -1 ||
	    ca_load(f->ca, &f->cert, &f->key, &cause) == -1) {
		print_error("%s\n", cause);
		return -1;
	}
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*f = *state;

	X509_free(f->cert);
	EVP_PKEY_free(f->key);
	unit_rmtree(f->dir);
	free(f->ca);
	free(f);
	return 0;
}

static mode_t
file_mode(const char *dir, const char *name)
{
	struct stat	 st;
	char		 path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

static void
test_init_modes(void **state)
{
	struct fixture	*f = *state;
	mode_t		 old;
	char		*cause, *nested;

	assert_int_equal(file_mode(f->ca, "."), 0700);
	assert_int_equal(file_mode(f->ca, CA_KEY_FILE), 0600);
	assert_int_equal(file_mode(f->ca, CA_CERT_FILE), 0644);

	/* A permissive umask widens nothing; missing parents are 0700. */
	old = umask(0);
	assert_int_not_equal(asprintf(&nested, "%s/a/b", f->dir), -1);
	assert_int_equal(ca_init(nested, false, &cause), 0);
	umask(old);
	assert_int_equal(file_mode(f->dir, "a"), 0700);
	assert_int_equal(file_mode(nested, "."), 0700);
	assert_int_equal(file_mode(nested, CA_KEY_FILE), 0600);
	assert_int_equal(file_mode(nested, CA_CERT_FILE), 0644);
	free(nested);
}

static void
test_init_refuses_overwrite(void **state)
{
	struct fixture	*f = *state;
	X509		*cert;
	EVP_PKEY	*key;
	char		*cause;

	assert_int_equal(ca_init(f->ca, false, &cause), -1);
	assert_contains(cause, "already holds a CA");
	free(cause);
	assert_int_equal(ca_load(f->ca, &cert, &key, &cause), 0);
	assert_int_equal(X509_cmp(cert, f->cert), 0);	/* untouched */
	X509_free(cert);
	EVP_PKEY_free(key);

	assert_int_equal(ca_init(f->ca, true, &cause), 0);
	assert_int_equal(ca_load(f->ca, &cert, &key, &cause), 0);
	assert_int_not_equal(X509_cmp(cert, f->cert), 0);
	assert_int_equal(file_mode(f->ca, CA_KEY_FILE), 0600);
	X509_free(cert);
	EVP_PKEY_free(key);
}

static void
test_init_refuses_open_dir(void **state)
{
	struct fixture	*f = *state;
	char		*cause, *open_dir;

	assert_int_not_equal(asprintf(&open_dir, "%s/open", f->dir), -1);
	assert_int_equal(mkdir(open_dir, 0700), 0);
	assert_int_equal(chmod(open_dir, 0755), 0);
	assert_int_equal(ca_init(open_dir, false, &cause), -1);
	assert_contains(cause, "mode 0700");
	free(cause);
	free(open_dir);
}

static void
test_ca_extensions(void **state)
{
	struct fixture	*f = *state;
	char		 cn[128];

	assert_int_equal(X509_check_ca(f->cert), 1);
	assert_int_equal(X509_EXTENSION_get_critical(X509_get_ext(f->cert,
	    X509_get_ext_by_NID(f->cert, NID_basic_constraints, -1))), 1);
	assert_int_equal(X509_EXTENSION_get_critical(X509_get_ext(f->cert,
	    X509_get_ext_by_NID(f->cert, NID_key_usage, -1))), 1);
	assert_int_equal(X509_get_pathlen(f->cert), 0);
	assert_int_equal(X509_get_key_usage(f->cert),
	    KU_KEY_CERT_SIGN | KU_CRL_SIGN);
	assert_non_null(X509_get0_subject_key_id(f->cert));
	assert_int_equal(EVP_PKEY_get_base_id(f->key), EVP_PKEY_EC);
	assert_true(X509_NAME_get_text_by_NID(X509_get_subject_name(f->cert),
	    NID_commonName, cn, sizeof(cn)) > 0);
	assert_contains(cn, "cordon local CA ");
	/* Self-signed and valid for CA_DAYS. */
	assert_int_equal(X509_verify(f->cert, f->key), 1);
	assert_true(X509_cmp_time(X509_get0_notAfter(f->cert), NULL) > 0);
}

static void
test_load_refuses_open_key(void **state)
{
	struct fixture	*f = *state;
	X509		*cert;
	EVP_PKEY	*key;
	char		*cause, path[256];

	snprintf(path, sizeof(path), "%s/%s", f->ca, CA_KEY_FILE);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(ca_load(f->ca, &cert, &key, &cause), -1);
	assert_contains(cause, "must be 0600");
	assert_null(cert);
	assert_null(key);
	free(cause);
}

static void
test_fingerprint(void **state)
{
	struct fixture	*f = *state;
	unsigned char	 md[32];
	unsigned int	 n;
	char		 fp[EVP_MAX_MD_SIZE * 3], want[8];

	assert_int_equal(ca_fingerprint(f->cert, fp, sizeof(fp)), 0);
	assert_int_equal(strlen(fp), 32 * 3 - 1);
	assert_int_equal(X509_digest(f->cert, EVP_sha256(), md, &n), 1);
	snprintf(want, sizeof(want), "%02X:%02X", md[0], md[1]);
	assert_int_equal(strncmp(fp, want, 5), 0);
	assert_int_equal(ca_fingerprint(f->cert, fp, 10), -1);
}

/* Verifies leaf against the fixture's CA alone, as a client would. */
static int
verify(struct fixture *f, X509 *leaf)
{
	X509_STORE	*store;
	X509_STORE_CTX	*ctx;
	int		 rc;

	store = X509_STORE_new();
	ctx = X509_STORE_CTX_new();
	assert_int_equal(X509_STORE_add_cert(store, f->cert), 1);
	assert_int_equal(X509_STORE_CTX_init(ctx, store, leaf, NULL), 1);
	X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
	rc = X509_verify_cert(ctx);
	if (rc != 1)
		print_error("verify: %s\n", X509_verify_cert_error_string(
		    X509_STORE_CTX_get_error(ctx)));
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return rc;
}

static void
test_leaf_name(void **state)
{
	struct fixture		*f = *state;
	struct leafcache	*lc;
	X509			*leaf;
	EVP_PKEY		*key;
	const ASN1_INTEGER	*serial;
	time_t			 now = time(NULL), t;
	char			*cause, cn[128];

	assert_non_null(lc = leaf_cache_new(f->cert, f->key, 4, &cause));
	assert_int_equal(leaf_get(lc, "API.GitHub.com.", &leaf, &key,
	    &cause), 0);
	assert_int_equal(verify(f, leaf), 1);
	assert_int_equal(X509_check_host(leaf, "api.github.com", 0, 0, NULL),
	    1);
	assert_int_not_equal(X509_check_host(leaf, "github.com", 0, 0, NULL),
	    1);
	assert_int_not_equal(X509_check_ip_asc(leaf, "127.0.0.1", 0), 1);
	assert_int_equal(X509_check_private_key(leaf, key), 1);
	assert_true(X509_NAME_get_text_by_NID(X509_get_subject_name(leaf),
	    NID_commonName, cn, sizeof(cn)) > 0);
	assert_string_equal(cn, "api.github.com");

	assert_int_equal(X509_check_ca(leaf), 0);
	assert_int_equal(X509_get_key_usage(leaf), KU_DIGITAL_SIGNATURE);
	assert_int_equal(X509_get_extended_key_usage(leaf), XKU_SSL_SERVER);
	assert_non_null(X509_get0_authority_key_id(leaf));
	assert_int_equal(ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(
	    leaf), X509_get0_subject_key_id(f->cert)), 0);
	serial = X509_get0_serialNumber(leaf);
	assert_true(serial->length >= 8 && serial->length <= 17);

	/* now - 1h .. now + 24h, give or take the test's own run time. */
	t = now - LEAF_BACKDATE_SECS - 5;
	assert_true(X509_cmp_time(X509_get0_notBefore(leaf), &t) > 0);
	t = now - LEAF_BACKDATE_SECS + 5;
	assert_true(X509_cmp_time(X509_get0_notBefore(leaf), &t) < 0);
	t = now + LEAF_HOURS * 3600 + 5;
	assert_true(X509_cmp_time(X509_get0_notAfter(leaf), &t) < 0);
	t = now + LEAF_HOURS * 3600 - 5;
	assert_true(X509_cmp_time(X509_get0_notAfter(leaf), &t) > 0);

	X509_free(leaf);
	EVP_PKEY_free(key);
	leaf_cache_free(lc);
}

static void
test_leaf_ip(void **state)
{
	struct fixture		*f = *state;
	struct leafcache	*lc;
	X509			*leaf, *again;
	EVP_PKEY		*key;
	GENERAL_NAMES		*gens;
	GENERAL_NAME		*gn;
	char			*cause;

	assert_non_null(lc = leaf_cache_new(f->cert, f->key, 4, &cause));
	assert_int_equal(leaf_get(lc, "127.0.0.1", &leaf, &key, &cause), 0);
	assert_int_equal(verify(f, leaf), 1);
	assert_int_equal(X509_check_ip_asc(leaf, "127.0.0.1", 0), 1);
	assert_int_not_equal(X509_check_ip_asc(leaf, "127.0.0.2", 0), 1);
	gens = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL);
	assert_non_null(gens);
	assert_int_equal(sk_GENERAL_NAME_num(gens), 1);
	gn = sk_GENERAL_NAME_value(gens, 0);
	assert_int_equal(gn->type, GEN_IPADD);
	assert_int_equal(ASN1_STRING_length(gn->d.iPAddress), 4);
	GENERAL_NAMES_free(gens);

	/* Another spelling of the same address is the same leaf. */
	EVP_PKEY_free(key);
	assert_int_equal(leaf_get(lc, "2130706433", &again, &key, &cause), 0);
	assert_ptr_equal(again, leaf);
	X509_free(again);
	EVP_PKEY_free(key);
	X509_free(leaf);

	assert_int_equal(leaf_get(lc, "[::1]", &leaf, &key, &cause), 0);
	assert_int_equal(X509_check_ip_asc(leaf, "::1", 0), 1);
	assert_int_equal(verify(f, leaf), 1);
	X509_free(leaf);
	EVP_PKEY_free(key);
	leaf_cache_free(lc);
}

static void
test_leaf_cache(void **state)
{
	struct fixture		*f = *state;
	struct leafcache	*lc;
	X509			*a, *b, *c;
	EVP_PKEY		*ka, *kb;
	char			*cause, name[32];
	int			 i;

	assert_non_null(lc = leaf_cache_new(f->cert, f->key, 2, &cause));
	assert_int_equal(leaf_get(lc, "a.test", &a, &ka, &cause), 0);
	assert_int_equal(leaf_get(lc, "A.TEST.", &b, &kb, &cause), 0);
	assert_ptr_equal(a, b);
	assert_ptr_equal(ka, kb);		/* one key for the cache */
	X509_free(b);
	EVP_PKEY_free(kb);
	assert_int_equal(leaf_cache_count(lc), 1);

	/* b.test then c.test: a.test, least recently used, goes. */
	assert_int_equal(leaf_get(lc, "b.test", &b, &kb, &cause), 0);
	assert_ptr_equal(ka, kb);
	EVP_PKEY_free(kb);
	assert_int_equal(leaf_get(lc, "b.test", &c, &kb, &cause), 0);
	assert_ptr_equal(b, c);
	X509_free(c);
	EVP_PKEY_free(kb);
	assert_int_equal(leaf_get(lc, "c.test", &c, &kb, &cause), 0);
	EVP_PKEY_free(kb);
	X509_free(c);
	assert_int_equal(leaf_cache_count(lc), 2);
	assert_int_equal(leaf_get(lc, "a.test", &c, &kb, &cause), 0);
	assert_ptr_not_equal(a, c);		/* minted anew */
	assert_int_equal(X509_cmp(a, c) != 0, 1);
	/* The evicted leaf is still ours to use: a reference was taken. */
	assert_int_equal(verify(f, a), 1);
	X509_free(c);
	EVP_PKEY_free(kb);
	X509_free(a);
	EVP_PKEY_free(ka);
	X509_free(b);

	for (i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "h%d.test", i);
		assert_int_equal(leaf_get(lc, name, &a, &ka, &cause), 0);
		X509_free(a);
		EVP_PKEY_free(ka);
	}
	assert_int_equal(leaf_cache_count(lc), 2);
	leaf_cache_free(lc);
}

static void
test_leaf_refused(void **state)
{
	static const char *const bad[] = {
		"", "*.example.com", "evil.test/x", "evil%2e.test",
		"a..b", "-x.test", "ex\xc3\xa4mple.com", "evil .test",
		"fe80::1%eth0", "999.1.1.1", "evil.test\n",
	};
	struct fixture		*f = *state;
	struct leafcache	*lc;
	X509			*leaf;
	EVP_PKEY		*key;
	char			*cause;
	size_t			 i;

	assert_non_null(lc = leaf_cache_new(f->cert, f->key, 4, &cause));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cause = NULL;
		assert_int_equal(leaf_get(lc, bad[i], &leaf, &key, &cause),
		    -1);
		assert_non_null(cause);
		assert_null(leaf);
		assert_null(key);
		free(cause);
	}
	assert_int_equal(leaf_cache_count(lc), 0);
	leaf_cache_free(lc);
}

static void
test_leafcache_new_refuses(void **state)
{
	struct fixture	*f = *state;
	EVP_PKEY	*other;
	char		*cause;

	assert_null(leaf_cache_new(f->cert, f->key, 0, &cause));
	assert_contains(cause, "leaf cache size");
	free(cause);
	other = EVP_EC_gen("P-256");
	assert_null(leaf_cache_new(f->cert, other, 4, &cause));
	assert_contains(cause, "does not match");
	free(cause);
	EVP_PKEY_free(other);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_init_modes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_init_refuses_overwrite,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_init_refuses_open_dir,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_ca_extensions, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_load_refuses_open_key,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_fingerprint, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_leaf_name, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_leaf_ip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leaf_cache, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_leaf_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_leafcache_new_refuses,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
