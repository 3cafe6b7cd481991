/*
 * test_mtls.c: the identity a tls: listener's client certificate names
 * (certs/mtls.c): its one URI subjectAltName, else its one CN; none
 * for what would be ambiguous or unsafe as a label, or would let a CN
 * name what a URI names.
 */
#include "unit.h"

#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "certs/mtls.h"
#include "proxy/proxy.h"

/*
 * A certificate (unsigned: only its names are read) with the subject
 * CNs cns (NULL-ended, may be empty) and the subjectAltName san in
 * OpenSSL's config syntax, or NULL.
 */
static X509 *
cert(const char *const *cns, const char *san)
{
	X509		*x;
	X509_NAME	*name;
	X509_EXTENSION	*ext;

	assert_non_null(x = X509_new());
	name = X509_get_subject_name(x);
	for (; *cns != NULL; cns++)
		assert_int_equal(X509_NAME_add_entry_by_txt(name, "CN",
		    MBSTRING_UTF8, (const unsigned char *)*cns, -1, -1, 0), 1);
	if (san != NULL) {
		assert_non_null(ext = X509V3_EXT_conf_nid(NULL, NULL,
		    NID_subject_alt_name, san));
		assert_int_equal(X509_add_ext(x, ext, -1), 1);
		X509_EXTENSION_free(ext);
	}
	return x;
}

/*
 * Asserts that a certificate of cns and san names want, or none, for
 * the reason why (a part of it; NULL: any).
 */
static void
refused(const char *const *cns, const char *san, const char *why)
{
	X509	*x = cert(cns, san);
	char	*cause, *id = mtls_identity(x, &cause);

	if (id != NULL)
		fail_msg("\"%s\" from CN and SAN %s: want none", id,
		    san ? san : "(none)");
	assert_non_null(cause);
	if (why != NULL)
		assert_contains(cause, why);
	free(cause);
	X509_free(x);
}

static void
check(const char *const *cns, const char *san, const char *want)
{
	X509	*x;
	char	*cause, *id;

	if (want == NULL) {
		refused(cns, san, NULL);
		return;
	}
	x = cert(cns, san);
	id = mtls_identity(x, &cause);
	assert_non_null(id);
	assert_null(cause);
	assert_string_equal(id, want);
	free(id);
	X509_free(x);
}

static void
test_mtls_uri_first(void **state)
{
	const char	*cn[] = { "runner-17", NULL };

	(void)state;
	/* The URI wins over the CN. */
	check(cn, "URI:spiffe://corp/ci/runner", "spiffe://corp/ci/runner");
	check(cn, "DNS:runner.corp,URI:spiffe://corp/ci/a",
	    "spiffe://corp/ci/a");
	/* No URI: the CN, whatever other names there are. */
	check(cn, "DNS:runner.corp,email:a@corp", "runner-17");
	check(cn, NULL, "runner-17");
}

static void
test_mtls_refused(void **state)
{
	const char	*none[] = { NULL };
	const char	*two[] = { "a", "b", NULL };
	const char	*cn[] = { "runner-17", NULL };
	const char	*quote[] = { "run\"ner", NULL };
	const char	*space[] = { "run ner", NULL };
	const char	*utf8[] = { "r\xc3\xa9seau", NULL };
	char		*cause;

	(void)state;
	check(none, NULL, NULL);
	check(none, "DNS:runner.corp", NULL);
	/* Two CNs: which one is meant is not ours to guess. */
	refused(two, NULL, "two CNs");
	/* Label-unsafe bytes refuse, rather than be escaped in each place. */
	check(quote, NULL, NULL);
	check(space, NULL, NULL);
	check(utf8, NULL, NULL);
	/* A URI there but unusable is not passed over for the CN. */
	check(cn, "URI:spiffe://corp/a\\\\b", NULL);
	check(cn, "URI:spiffe://corp/a\"b", NULL);
	check(none, "DNS:x,URI:spiffe://corp/a b", NULL);
	/* No certificate, no identity. */
	assert_null(mtls_identity(NULL, &cause));
	assert_null(cause);
}

/*
 * One name space: a CN never names what a URI subjectAltName does, and
 * a certificate with two URIs names neither.
 */
static void
test_mtls_one_space(void **state)
{
	const char	*none[] = { NULL };
	const char	*uri[] = { "spiffe://corp/ci/runner", NULL };
	const char	*colon[] = { "dev:laptop", NULL };
	const char	*cn[] = { "dev-laptop", NULL };

	(void)state;
	/* A CN a person chose cannot claim a URI identity. */
	refused(uri, NULL, "its CN holds ':'");
	refused(colon, "DNS:dev.corp", "its CN holds ':'");
	/* Nor a URI without a scheme the CN's text. */
	refused(cn, "URI:dev-laptop", "does not begin with a scheme");
	refused(none, "URI:1x://corp/a", "does not begin with a scheme");
	/* Two URIs: refused, as two CNs are, whatever their order. */
	refused(cn, "URI:spiffe://corp/ci/a,URI:spiffe://x/b",
	    "2 URI subjectAltNames");
	refused(none, "URI:spiffe://corp/a,DNS:x,URI:spiffe://corp/a",
	    "2 URI subjectAltNames");
	/* What stays: a plain CN, and a URI of any scheme. */
	check(cn, NULL, "dev-laptop");
	check(cn, "URI:urn:corp:ci", "urn:corp:ci");
}

static void
test_mtls_long(void **state)
{
	char		 uri[4 + MTLS_IDENTITY_MAX + 2];
	const char	*none[] = { NULL };

	(void)state;
	/* "URI:" and the longest identity, then one byte too many. */
	memset(uri, 'a', sizeof(uri) - 1);
	memcpy(uri, "URI:s://", 8);
	uri[4 + MTLS_IDENTITY_MAX] = '\0';
	check(none, uri, uri + 4);
	uri[4 + MTLS_IDENTITY_MAX] = 'a';
	uri[sizeof(uri) - 1] = '\0';
	check(none, uri, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mtls_uri_first),
		cmocka_unit_test(test_mtls_refused),
		cmocka_unit_test(test_mtls_one_space),
		cmocka_unit_test(test_mtls_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
