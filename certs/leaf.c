/*
 * leaf.c: server certificates minted from the local CA, one per host, for
 * the proxy to present when it terminates the sandbox's TLS.
 *
 * A leaf names exactly one host (a dNSName, or an iPAddress for an IP
 * literal), is valid from an hour ago (clients with a late clock) until
 * LEAF_HOURS from now or the CA's end if sooner, may only serve TLS
 * (serverAuth, digitalSignature) and points at the CA by key identifier.
 *
 * Every leaf of a cache shares one EC P-256 key, made with the cache.
 * Minting then costs one signature, not a key generation, and the key
 * never leaves the process that holds the CA key, so one key per host
 * would buy nothing: whoever can read it could read the CA key as well.
 * A new cache (a proxy restart) makes a new key.
 *
 * The cache is bounded (least recently used goes first) and keyed by the
 * canonical host of lib/host.c, so "Example.COM." and "example.com" share
 * a leaf and a name host_parse() refuses gets none.  Not thread-safe: it
 * belongs to one event loop.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "certs/certs.h"
#include "lib/host.h"
#include "lib/xmalloc.h"

#define LEAF_CN_MAX		64	/* ub-common-name, RFC 5280 */
#define LEAF_CACHE_LIMIT	1000000

struct leaf {
	TAILQ_ENTRY(leaf)	 l_lru;		/* most recently used first */
	LIST_ENTRY(leaf)	 l_hash;
	char			 l_host[HOST_NAME_MAX_LEN + 1];
	X509			*l_cert;
	time_t			 l_renew;	/* mint anew from then on */
};

TAILQ_HEAD(leaflru, leaf);
LIST_HEAD(leafbucket, leaf);

struct leafcache {
	X509			*lc_ca_cert;
	EVP_PKEY		*lc_ca_key;
	time_t			 lc_ca_end;
	EVP_PKEY		*lc_key;	/* shared by every leaf */
	struct leaflru		 lc_lru;
	struct leafbucket	*lc_buckets;
	size_t			 lc_nbuckets;	/* a power of two */
	size_t			 lc_count;
	size_t			 lc_max;
};

static void
leaf_free(struct leaf *l)
{
	if (l == NULL)
		return;
	X509_free(l->l_cert);
	free(l);
}

/* FNV-1a of a canonical host name. */
static size_t
leaf_hash(const char *s)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return (size_t)h;
}

/*
 * Makes a cache of at most max leaves signed by ca_key for ca_cert.  Keeps
 * its own references to both (the caller still frees its own).  Returns
 * NULL with *cause set when max is out of range, the key does not belong
 * to the certificate or the shared leaf key cannot be made.
 */
struct leafcache *
leaf_cache_new(X509 *ca_cert, EVP_PKEY *ca_key, size_t max, char **cause)
{
	struct leafcache	*lc;
	struct tm		 tm;

	*cause = NULL;
	if (max < 1 || max > LEAF_CACHE_LIMIT) {
		xasprintf(cause, "leaf cache size %zu is not from 1 to %d",
		    max, LEAF_CACHE_LIMIT);
		return NULL;
	}
	if (X509_check_private_key(ca_cert, ca_key) != 1) {
		ERR_clear_error();
		xasprintf(cause, "the CA key does not match the CA "
		    "certificate");
		return NULL;
	}
	memset(&tm, 0, sizeof(tm));
	if (ASN1_TIME_to_tm(X509_get0_notAfter(ca_cert), &tm) != 1) {
		xasprintf(cause, "the CA certificate has no valid end date");
		return NULL;
	}

	lc = xcalloc(1, sizeof(*lc));
	lc->lc_ca_end = timegm(&tm);
	lc->lc_max = max;
	TAILQ_INIT(&lc->lc_lru);
	for (lc->lc_nbuckets = 16; lc->lc_nbuckets < max;
	    lc->lc_nbuckets *= 2)
		;
	lc->lc_buckets = xcalloc(lc->lc_nbuckets, sizeof(*lc->lc_buckets));
	if ((lc->lc_key = EVP_EC_gen("P-256")) == NULL) {
		ERR_clear_error();
		xasprintf(cause, "EC P-256 key generation failed");
		leaf_cache_free(lc);
		return NULL;
	}
	X509_up_ref(ca_cert);
	lc->lc_ca_cert = ca_cert;
	EVP_PKEY_up_ref(ca_key);
	lc->lc_ca_key = ca_key;
	return lc;
}

/* Frees every leaf and the cache's references; accepts NULL. */
void
leaf_cache_free(struct leafcache *lc)
{
	struct leaf	*l;

	if (lc == NULL)
		return;
	while ((l = TAILQ_FIRST(&lc->lc_lru)) != NULL) {
		TAILQ_REMOVE(&lc->lc_lru, l, l_lru);
		leaf_free(l);
	}
	free(lc->lc_buckets);
	EVP_PKEY_free(lc->lc_key);	/* OpenSSL wipes key material */
	EVP_PKEY_free(lc->lc_ca_key);
	X509_free(lc->lc_ca_cert);
	free(lc);
}

/* The number of leaves held now. */
size_t
leaf_cache_count(const struct leafcache *lc)
{
	return lc->lc_count;
}

/*
 * The key every leaf of lc holds (borrowed), for the signing process to
 * hand to the proxy once at start.
 */
EVP_PKEY *
leaf_cache_key(const struct leafcache *lc)
{
	return lc->lc_key;
}

/* Adds the subjectAltName naming h, a dNSName or an iPAddress. */
static int
leaf_san_add(X509 *cert, const struct host *h)
{
	GENERAL_NAMES		*gens;
	GENERAL_NAME		*gn = NULL;
	ASN1_IA5STRING		*ia5;
	ASN1_OCTET_STRING	*ip;
	int			 rc = -1;

	if ((gens = sk_GENERAL_NAME_new_null()) == NULL ||
	    (gn = GENERAL_NAME_new()) == NULL)
		goto out;
	if (h->h_kind == HOST_ADDR) {
		if ((ip = a2i_IPADDRESS(h->h_name)) == NULL)
			goto out;
		GENERAL_NAME_set0_value(gn, GEN_IPADD, ip);
	} else {
		if ((ia5 = ASN1_IA5STRING_new()) == NULL)
			goto out;
		if (ASN1_STRING_set(ia5, h->h_name, -1) != 1) {
			ASN1_IA5STRING_free(ia5);
			goto out;
		}
		GENERAL_NAME_set0_value(gn, GEN_DNS, ia5);
	}
	if (sk_GENERAL_NAME_push(gens, gn) == 0)
		goto out;
	gn = NULL;			/* gens owns it now */
	if (X509_add1_ext_i2d(cert, NID_subject_alt_name, gens, 0,
	    X509V3_ADD_DEFAULT) == 1)
		rc = 0;
out:
	GENERAL_NAME_free(gn);
	GENERAL_NAMES_free(gens);
	return rc;
}

/* Mints the leaf for h, valid until end; NULL on failure. */
static X509 *
leaf_mint(struct leafcache *lc, const struct host *h, time_t now,
    time_t end)
{
	X509		*cert;
	X509_NAME	*name;

	if ((cert = X509_new()) == NULL)
		return NULL;
	if (X509_set_version(cert, 2) != 1 || ca_serial_random(cert) == -1)
		goto fail;
	if (X509_time_adj_ex(X509_getm_notBefore(cert), 0,
	    -LEAF_BACKDATE_SECS, &now) == NULL ||
	    ASN1_TIME_set(X509_getm_notAfter(cert), end) == NULL)
		goto fail;
	name = X509_get_subject_name(cert);
	if (strlen(h->h_name) <= LEAF_CN_MAX &&
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	    (const unsigned char *)h->h_name, -1, -1, 0) != 1)
		goto fail;
	if (X509_set_issuer_name(cert,
	    X509_get_subject_name(lc->lc_ca_cert)) != 1 ||
	    X509_set_pubkey(cert, lc->lc_key) != 1)
		goto fail;
	if (ca_ext_add(cert, lc->lc_ca_cert, NID_basic_constraints,
	    "critical,CA:FALSE") == -1 ||
	    ca_ext_add(cert, lc->lc_ca_cert, NID_key_usage,
	    "critical,digitalSignature") == -1 ||
	    ca_ext_add(cert, lc->lc_ca_cert, NID_ext_key_usage,
	    "serverAuth") == -1 ||
	    ca_ext_add(cert, lc->lc_ca_cert, NID_subject_key_identifier,
	    "hash") == -1 ||
	    ca_ext_add(cert, lc->lc_ca_cert, NID_authority_key_identifier,
	    "keyid:always") == -1 ||
	    leaf_san_add(cert, h) == -1)
		goto fail;
	if (X509_sign(cert, lc->lc_ca_key, EVP_sha256()) == 0)
		goto fail;
	return cert;
fail:
	X509_free(cert);
	return NULL;
}

/* Unlinks l from lc and frees it. */
static void
leafcache_remove(struct leafcache *lc, struct leaf *l)
{
	TAILQ_REMOVE(&lc->lc_lru, l, l_lru);
	LIST_REMOVE(l, l_hash);
	lc->lc_count--;
	leaf_free(l);
}

/*
 * Sets *cert and *key to the leaf for name (a host name or IP literal, as
 * host_parse() takes it), minting one if the cache has none still well
 * within its validity.  Unlike most *_get, it returns new references the
 * caller frees (X509_free, EVP_PKEY_free): a leaf may be evicted while a
 * connection still presents it.  Returns 0, or -1 with *cause set when
 * the name is refused, the CA has expired or minting fails.
 */
int
leaf_get(struct leafcache *lc, const char *name, X509 **cert,
    EVP_PKEY **key, char **cause)
{
	struct host		 h;
	struct leafbucket	*b;
	struct leaf		*l;
	time_t			 now = time(NULL), end;

	*cert = NULL;
	*key = NULL;
	if (host_parse(name, strlen(name), &h, cause) == -1)
		return -1;
	b = &lc->lc_buckets[leaf_hash(h.h_name) & (lc->lc_nbuckets - 1)];
	LIST_FOREACH(l, b, l_hash) {
		if (strcmp(l->l_host, h.h_name) == 0)
			break;
	}
	if (l != NULL && now < l->l_renew) {
		TAILQ_REMOVE(&lc->lc_lru, l, l_lru);
		TAILQ_INSERT_HEAD(&lc->lc_lru, l, l_lru);
		goto found;
	}
	if (l != NULL)
		leafcache_remove(lc, l);

	if (now >= lc->lc_ca_end) {
		xasprintf(cause, "the CA has expired");
		return -1;
	}
	end = now + LEAF_HOURS * 3600;
	if (end > lc->lc_ca_end)
		end = lc->lc_ca_end;
	l = xcalloc(1, sizeof(*l));
	if ((l->l_cert = leaf_mint(lc, &h, now, end)) == NULL) {
		ERR_clear_error();
		xasprintf(cause, "minting a certificate failed");
		free(l);
		return -1;
	}
	snprintf(l->l_host, sizeof(l->l_host), "%s", h.h_name);
	/* Renew an hour early; a CA ending sooner keeps it to the end. */
	l->l_renew = end - LEAF_BACKDATE_SECS;
	if (l->l_renew <= now)
		l->l_renew = end;
	if (lc->lc_count == lc->lc_max)
		leafcache_remove(lc, TAILQ_LAST(&lc->lc_lru, leaflru));
	TAILQ_INSERT_HEAD(&lc->lc_lru, l, l_lru);
	LIST_INSERT_HEAD(b, l, l_hash);
	lc->lc_count++;
found:
	X509_up_ref(l->l_cert);
	*cert = l->l_cert;
	EVP_PKEY_up_ref(lc->lc_key);
	*key = lc->lc_key;
	return 0;
}
