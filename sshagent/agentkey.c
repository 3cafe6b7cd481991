/*
 * agentkey.c: an SSH host key's signature, checked with OpenSSL, for the
 * session-bind@openssh.com of cordon's agent (agent.c): the server's
 * host key signed the session identifier, so the connection is bound to
 * the holder of that key.
 *
 * Keys and signatures are in SSH's wire form (RFC 4253 section 6.6, RFC
 * 8332, RFC 5656, RFC 8709).  Taken: ssh-ed25519, ssh-rsa keys signing
 * with rsa-sha2-256 or rsa-sha2-512 (SHA-1's ssh-rsa is refused), and
 * ecdsa-sha2-nistp256, -nistp384 and -nistp521.  Certified host keys
 * and security-key host keys are refused: nothing here checks a CA.
 *
 * OpenSSL's convention (1 for success) stops in this file.
 */
#include <sys/types.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sshagent/sshagent.h"

#define AGENTKEY_RSA_MIN_BITS	1024	/* as OpenSSH */
#define AGENTKEY_RSA_MAX_BITS	16384

/* An EC curve by its SSH name. */
static const struct agentkey_curve {
	const char	*kc_type;	/* the key's type */
	const char	*kc_ssh;	/* the curve, as SSH names it */
	const char	*kc_group;	/* as OpenSSL names it */
	const char	*kc_md;		/* the hash signed */
} agentkey_curves[] = {
	{ "ecdsa-sha2-nistp256", "nistp256", "prime256v1", "SHA256" },
	{ "ecdsa-sha2-nistp384", "nistp384", "secp384r1", "SHA384" },
	{ "ecdsa-sha2-nistp521", "nistp521", "secp521r1", "SHA512" },
};

/* An mpint that must be positive, as a new BIGNUM, or NULL. */
static BIGNUM *
agentkey_mpint(struct agent_rd *r)
{
	const uint8_t	*p;
	size_t		 len;

	if (agentmsg_string(r, &p, &len) == -1 || len == 0 ||
	    len > AGENTKEY_RSA_MAX_BITS / 8 + 1 || (p[0] & 0x80) != 0)
		return NULL;
	return BN_bin2bn(p, (int)len, NULL);
}

/* A public key from its parameters, or NULL. */
static EVP_PKEY *
agentkey_fromdata(const char *alg, OSSL_PARAM_BLD *bld)
{
	EVP_PKEY_CTX	*ctx = NULL;
	OSSL_PARAM	*params = NULL;
	EVP_PKEY	*pkey = NULL;

	if ((params = OSSL_PARAM_BLD_to_param(bld)) == NULL ||
	    (ctx = EVP_PKEY_CTX_new_from_name(NULL, alg, NULL)) == NULL ||
	    EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1)
		pkey = NULL;
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	return pkey;
}

/* ssh-rsa: mpint e, mpint n.  Sets *bytes to the modulus's size. */
static EVP_PKEY *
agentkey_rsa(struct agent_rd *r, size_t *bytes)
{
	OSSL_PARAM_BLD	*bld = NULL;
	BIGNUM		*e = NULL, *n = NULL;
	EVP_PKEY	*pkey = NULL;
	int		 bits;

	if ((e = agentkey_mpint(r)) == NULL || (n = agentkey_mpint(r)) ==
	    NULL || r->ar_len != 0)
		goto out;
	bits = BN_num_bits(n);
	if (bits < AGENTKEY_RSA_MIN_BITS || bits > AGENTKEY_RSA_MAX_BITS)
		goto out;
	*bytes = (size_t)BN_num_bytes(n);
	if ((bld = OSSL_PARAM_BLD_new()) == NULL ||
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) != 1 ||
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) != 1)
		goto out;
	pkey = agentkey_fromdata("RSA", bld);
out:
	OSSL_PARAM_BLD_free(bld);
	BN_free(e);
	BN_free(n);
	return pkey;
}

/* ecdsa-sha2-*: string curve, string point. */
static EVP_PKEY *
agentkey_ec(struct agent_rd *r, const struct agentkey_curve *kc)
{
	OSSL_PARAM_BLD	*bld;
	const uint8_t	*curve, *q;
	size_t		 curvelen, qlen;
	EVP_PKEY	*pkey = NULL;

	if (agentmsg_string(r, &curve, &curvelen) == -1 ||
	    !agentmsg_is(curve, curvelen, kc->kc_ssh) ||
	    agentmsg_string(r, &q, &qlen) == -1 || r->ar_len != 0 ||
	    qlen == 0 || q[0] != 0x04)
		return NULL;
	if ((bld = OSSL_PARAM_BLD_new()) == NULL)
		return NULL;
	if (OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
	    kc->kc_group, 0) == 1 && OSSL_PARAM_BLD_push_octet_string(bld,
	    OSSL_PKEY_PARAM_PUB_KEY, q, qlen) == 1)
		pkey = agentkey_fromdata("EC", bld);
	OSSL_PARAM_BLD_free(bld);
	return pkey;
}

/* An ECDSA signature's blob (mpint r, mpint s) as DER, in *der. */
static int
agentkey_ec_der(const uint8_t *blob, size_t len, unsigned char **der,
    size_t *derlen)
{
	struct agent_rd	 rd = { blob, len };
	ECDSA_SIG	*sig;
	BIGNUM		*r, *s = NULL;
	int		 n;

	if ((r = agentkey_mpint(&rd)) == NULL || (s = agentkey_mpint(&rd)) ==
	    NULL || rd.ar_len != 0 || (sig = ECDSA_SIG_new()) == NULL) {
		BN_free(r);
		BN_free(s);
		return -1;
	}
	ECDSA_SIG_set0(sig, r, s);	/* sig owns them now */
	*der = NULL;
	n = i2d_ECDSA_SIG(sig, der);
	ECDSA_SIG_free(sig);
	if (n <= 0)
		return -1;
	*derlen = (size_t)n;
	return 0;
}

/* Checks sig (the raw signature) over data with pkey and md. */
static bool
agentkey_check(EVP_PKEY *pkey, const char *md, const uint8_t *sig,
    size_t siglen, const uint8_t *data, size_t len)
{
	EVP_MD_CTX	*ctx;
	bool		 ok;

	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return false;
	ok = EVP_DigestVerifyInit_ex(ctx, NULL, md, NULL, NULL, pkey,
	    NULL) == 1 && EVP_DigestVerify(ctx, sig, siglen, data, len) == 1;
	EVP_MD_CTX_free(ctx);
	return ok;
}

/* The key of blob and the hash its signature algorithm sigalg uses. */
static EVP_PKEY *
agentkey_parse(const uint8_t *blob, size_t len, const uint8_t *sigalg,
    size_t sigalglen, const char **md, size_t *rsabytes,
    const struct agentkey_curve **curve, const char **cause)
{
	struct agent_rd	 r = { blob, len };
	const uint8_t	*type, *pk;
	size_t		 typelen, pklen, i;

	*md = NULL;
	*curve = NULL;
	*rsabytes = 0;
	if (agentmsg_string(&r, &type, &typelen) == -1) {
		*cause = "a malformed host key";
		return NULL;
	}
	if (agentmsg_is(type, typelen, "ssh-ed25519")) {
		if (!agentmsg_is(sigalg, sigalglen, "ssh-ed25519") ||
		    agentmsg_string(&r, &pk, &pklen) == -1 || pklen != 32 ||
		    r.ar_len != 0)
			return NULL;
		return EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pk,
		    pklen);
	}
	if (agentmsg_is(type, typelen, "ssh-rsa")) {
		if (agentmsg_is(sigalg, sigalglen, "rsa-sha2-256"))
			*md = "SHA256";
		else if (agentmsg_is(sigalg, sigalglen, "rsa-sha2-512"))
			*md = "SHA512";
		else {
			*cause = "an RSA host key signing with SHA-1";
			return NULL;
		}
		return agentkey_rsa(&r, rsabytes);
	}
	for (i = 0; i < nitems(agentkey_curves); i++)
		if (agentmsg_is(type, typelen, agentkey_curves[i].kc_type)) {
			*curve = &agentkey_curves[i];
			*md = agentkey_curves[i].kc_md;
			if (!agentmsg_is(sigalg, sigalglen, (*curve)->kc_type))
				return NULL;
			return agentkey_ec(&r, *curve);
		}
	*cause = "a host key of a type cordon does not check (a certified "
	    "or security-key host key)";
	return NULL;
}

/*
 * Whether sig (SSH's signature: string algorithm, string blob) is the
 * host key's (SSH's public key blob) over data.  Returns 0, or -1 with
 * *cause (static text).
 */
int
agentkey_verify(const uint8_t *key, size_t keylen, const uint8_t *sig,
    size_t siglen, const uint8_t *data, size_t datalen, const char **cause)
{
	const struct agentkey_curve	*curve;
	struct agent_rd			 r = { sig, siglen };
	const uint8_t			*alg, *blob;
	unsigned char			*der = NULL, *padded = NULL;
	size_t				 alglen, bloblen, derlen, rsabytes;
	const char			*md;
	EVP_PKEY			*pkey;
	bool				 ok = false;

	*cause = NULL;
	if (agentmsg_string(&r, &alg, &alglen) == -1 ||
	    agentmsg_string(&r, &blob, &bloblen) == -1 || r.ar_len != 0) {
		*cause = "a malformed signature";
		return -1;
	}
	if ((pkey = agentkey_parse(key, keylen, alg, alglen, &md, &rsabytes,
	    &curve, cause)) == NULL) {
		if (*cause == NULL)
			*cause = "a malformed host key, or a signature of "
			    "another type";
		return -1;
	}
	if (curve != NULL) {
		if (agentkey_ec_der(blob, bloblen, &der, &derlen) == 0)
			ok = agentkey_check(pkey, md, der, derlen, data,
			    datalen);
	} else if (rsabytes > 0) {
		/* A signature may come without its leading zeros. */
		if (bloblen <= rsabytes) {
			padded = xcalloc(1, rsabytes);
			memcpy(padded + rsabytes - bloblen, blob, bloblen);
			ok = agentkey_check(pkey, md, padded, rsabytes, data,
			    datalen);
		}
	} else
		ok = agentkey_check(pkey, NULL, blob, bloblen, data, datalen);
	OPENSSL_free(der);
	free(padded);
	EVP_PKEY_free(pkey);
	if (!ok)
		*cause = "the host key's signature of the session does not "
		    "verify";
	return ok ? 0 : -1;
}

/* "SHA256:" and the unpadded base64 of the key's SHA-256, as ssh shows. */
void
agentkey_fingerprint(const uint8_t *key, size_t len, char *out,
    size_t outlen)
{
	unsigned char	 md[32], b64[48];
	unsigned int	 mdlen = sizeof(md);
	int		 n;

	if (EVP_Digest(key, len, md, &mdlen, EVP_sha256(), NULL) != 1) {
		snprintf(out, outlen, "SHA256:?");
		return;
	}
	n = EVP_EncodeBlock(b64, md, (int)mdlen);
	while (n > 0 && b64[n - 1] == '=')
		n--;
	snprintf(out, outlen, "SHA256:%.*s", n, (const char *)b64);
}
