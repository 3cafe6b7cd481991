/*
 * test_agentmsg.c: cordon's ssh-agent's parsers (agentmsg.c), its host
 * key check (agentkey.c, against keys OpenSSL makes here) and its
 * known_hosts reader (knownhosts.c).
 */
#include "unit.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sshagent/sshagent.h"

/* A growing SSH wire buffer. */
struct wbuf {
	uint8_t	 b[4096];
	size_t	 n;
};

static void
w_u32(struct wbuf *w, uint32_t v)
{
	w->b[w->n++] = (uint8_t)(v >> 24);
	w->b[w->n++] = (uint8_t)(v >> 16);
	w->b[w->n++] = (uint8_t)(v >> 8);
	w->b[w->n++] = (uint8_t)v;
}

static void
w_u8(struct wbuf *w, uint8_t v)
{
	w->b[w->n++] = v;
}

static void
w_str(struct wbuf *w, const void *s, size_t len)
{
	w_u32(w, (uint32_t)len);
	memcpy(w->b + w->n, s, len);
	w->n += len;
}

static void
w_cstr(struct wbuf *w, const char *s)
{
	w_str(w, s, strlen(s));
}

static void
test_agentmsg_frame(void **state)
{
	struct agent_rd	 body;
	uint8_t		 type, buf[8] = { 0, 0, 0, 1, 11 };
	size_t		 used, i;

	(void)state;
	assert_int_equal(agentmsg_frame(buf, 5, &type, &body, &used), 0);
	assert_int_equal(type, 11);
	assert_int_equal(body.ar_len, 0);
	assert_int_equal(used, 5);
	for (i = 0; i < 5; i++)
		assert_int_equal(agentmsg_frame(buf, i, &type, &body, &used),
		    1);
	/* Empty, and one byte over the limit: refused before any read. */
	memset(buf, 0, 4);
	assert_int_equal(agentmsg_frame(buf, 5, &type, &body, &used), -1);
	buf[1] = 0x04;
	buf[3] = 0x01;		/* 256 KiB + 1 */
	assert_int_equal(agentmsg_frame(buf, 5, &type, &body, &used), -1);
}

/* A login request as ssh signs it; host-bound when hostkey is set. */
static void
userauth(struct wbuf *w, const char *sid, const char *key,
    const char *hostkey)
{
	w->n = 0;
	w_cstr(w, sid);
	w_u8(w, AGENT_USERAUTH_REQUEST);
	w_cstr(w, "git");
	w_cstr(w, "ssh-connection");
	w_cstr(w, hostkey != NULL ? AGENT_HOSTBOUND : "publickey");
	w_u8(w, 1);
	w_cstr(w, "ssh-ed25519");
	w_cstr(w, key);
	if (hostkey != NULL)
		w_cstr(w, hostkey);
}

static void
test_agentmsg_userauth(void **state)
{
	struct agent_auth	 a;
	struct wbuf		 w;
	const char		*cause;

	(void)state;
	userauth(&w, "SID", "KEY", NULL);
	assert_int_equal(agentmsg_userauth(w.b, w.n, &a, &cause), 0);
	assert_memory_equal(a.aa_sid, "SID", 3);
	assert_memory_equal(a.aa_key, "KEY", 3);
	assert_null(a.aa_hostkey);
	userauth(&w, "SID", "KEY", "HOST");
	assert_int_equal(agentmsg_userauth(w.b, w.n, &a, &cause), 0);
	assert_memory_equal(a.aa_hostkey, "HOST", 4);
	/* A byte more, a byte less, another message: not a login. */
	w.b[w.n++] = 0;
	assert_int_equal(agentmsg_userauth(w.b, w.n, &a, &cause), -1);
	assert_int_equal(agentmsg_userauth(w.b, w.n - 2, &a, &cause), -1);
	userauth(&w, "SID", "KEY", NULL);
	w.b[4 + 3] = 51;
	assert_int_equal(agentmsg_userauth(w.b, w.n, &a, &cause), -1);
	/* What git signs a commit with (an SSHSIG blob) is refused. */
	assert_int_equal(agentmsg_userauth((const uint8_t *)"SSHSIG\0\0\0\1",
	    10, &a, &cause), -1);
	assert_string_equal(cause, "the data to sign is not an SSH login");
}

static void
test_agentmsg_sign_bind(void **state)
{
	struct agent_sign	 s;
	struct agent_bind	 b;
	struct agent_rd		 r;
	struct wbuf		 w;
	const char		*cause;

	(void)state;
	w.n = 0;
	w_cstr(&w, "KEY");
	w_cstr(&w, "DATA");
	w_u32(&w, 0x04);
	r.ar_p = w.b;
	r.ar_len = w.n;
	assert_int_equal(agentmsg_sign(&r, &s, &cause), 0);
	assert_int_equal(s.as_flags, 4);
	w.b[w.n - 1] = 0x01;	/* SHA-1's old flag, or any other */
	r.ar_p = w.b;
	r.ar_len = w.n;
	assert_int_equal(agentmsg_sign(&r, &s, &cause), -1);

	w.n = 0;
	w_cstr(&w, "HOSTKEY");
	w_cstr(&w, "SID");
	w_cstr(&w, "SIG");
	w_u8(&w, 1);
	r.ar_p = w.b;
	r.ar_len = w.n;
	assert_int_equal(agentmsg_bind(&r, &b, &cause), 0);
	assert_true(b.ab_forwarding);
	r.ar_p = w.b;
	r.ar_len = w.n - 1;	/* no forwarding flag */
	assert_int_equal(agentmsg_bind(&r, &b, &cause), -1);
	/* A length that runs past the end. */
	w.b[3] = 200;
	r.ar_p = w.b;
	r.ar_len = w.n;
	assert_int_equal(agentmsg_bind(&r, &b, &cause), -1);
}

/* An Ed25519 key's SSH blob and a signature over data, in SSH's form. */
static void
ed25519(struct wbuf *key, struct wbuf *sig, const char *data)
{
	EVP_PKEY_CTX	*kctx;
	EVP_PKEY	*pkey = NULL;
	EVP_MD_CTX	*mctx;
	uint8_t		 pk[32], raw[64];
	size_t		 pklen = sizeof(pk), rawlen = sizeof(raw);

	kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	assert_non_null(kctx);
	assert_int_equal(EVP_PKEY_keygen_init(kctx), 1);
	assert_int_equal(EVP_PKEY_keygen(kctx, &pkey), 1);
	assert_int_equal(EVP_PKEY_get_raw_public_key(pkey, pk, &pklen), 1);
	mctx = EVP_MD_CTX_new();
	assert_int_equal(EVP_DigestSignInit(mctx, NULL, NULL, NULL, pkey), 1);
	assert_int_equal(EVP_DigestSign(mctx, raw, &rawlen,
	    (const uint8_t *)data, strlen(data)), 1);
	key->n = sig->n = 0;
	w_cstr(key, "ssh-ed25519");
	w_str(key, pk, pklen);
	w_cstr(sig, "ssh-ed25519");
	w_str(sig, raw, rawlen);
	EVP_MD_CTX_free(mctx);
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(kctx);
}

static void
test_agentkey_verify(void **state)
{
	struct wbuf	 key, sig, other;
	const char	*cause;
	char		 fp[AGENTKEY_FP_LEN];

	(void)state;
	ed25519(&key, &sig, "session");
	assert_int_equal(agentkey_verify(key.b, key.n, sig.b, sig.n,
	    (const uint8_t *)"session", 7, &cause), 0);
	/* Another session, another key, a flipped bit: refused. */
	assert_int_equal(agentkey_verify(key.b, key.n, sig.b, sig.n,
	    (const uint8_t *)"sessioN", 7, &cause), -1);
	ed25519(&other, &sig, "x");
	ed25519(&key, &sig, "session");
	assert_int_equal(agentkey_verify(other.b, other.n, sig.b, sig.n,
	    (const uint8_t *)"session", 7, &cause), -1);
	sig.b[sig.n - 1] ^= 1;
	assert_int_equal(agentkey_verify(key.b, key.n, sig.b, sig.n,
	    (const uint8_t *)"session", 7, &cause), -1);
	/* A key type it does not check. */
	other.n = 0;
	w_cstr(&other, "ssh-ed25519-cert-v01@openssh.com");
	assert_int_equal(agentkey_verify(other.b, other.n, sig.b, sig.n,
	    (const uint8_t *)"session", 7, &cause), -1);
	assert_non_null(cause);
	agentkey_fingerprint(key.b, key.n, fp, sizeof(fp));
	assert_int_equal(strncmp(fp, "SHA256:", 7), 0);
	assert_int_equal(strlen(fp), 7 + 43);
}

/* known_hosts's base64 of a buffer, into out. */
static void
b64(const uint8_t *p, size_t n, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, p, (int)n);
}

static void
test_knownhosts(void **state)
{
	struct knownhosts	*kh;
	struct wbuf		 key, sig, key2;
	uint8_t			 salt[20], mac[20];
	unsigned int		 maclen;
	char			 k[256], k2[256], s64[64], h64[64], *text;
	char			**names;
	size_t			 n, i;
	const char		*cands[] = { "[hashed.test]:2222", "x.test",
				    "bad.test" };

	(void)state;
	ed25519(&key, &sig, "a");
	ed25519(&key2, &sig, "b");
	b64(key.b, key.n, k);
	b64(key2.b, key2.n, k2);
	memset(salt, 7, sizeof(salt));
	HMAC(EVP_sha1(), salt, 20, (const uint8_t *)"[hashed.test]:2222",
	    18, mac, &maclen);
	b64(salt, 20, s64);
	b64(mac, 20, h64);
	xasprintf(&text, "# a comment\n"
	    "Git.Test,[alt.test]:2222 ssh-ed25519 %s comment\n"
	    "|1|%s|%s ssh-ed25519 %s\r\n"
	    "*.test,!bad.test ssh-ed25519 %s\n"
	    "wrong.test ssh-rsa %s\n"			/* type and blob differ */
	    "@cert-authority ca.test ssh-ed25519 %s\n"
	    "@revoked * ssh-ed25519 %s\n"
	    "broken.test ssh-ed25519 !!!!\n",
	    k, s64, h64, k, k, k, k, k2);
	kh = knownhosts_new();
	knownhosts_parse(kh, text, strlen(text));
	knownhosts_names(kh, key.b, key.n, cands, nitems(cands), &names, &n);
	assert_int_equal(n, 4);
	assert_string_equal(names[0], "git.test");
	assert_string_equal(names[1], "[alt.test]:2222");
	assert_string_equal(names[2], "[hashed.test]:2222");
	assert_string_equal(names[3], "x.test");	/* *.test */
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	/* One name: where the proxy connected. */
	assert_true(knownhosts_known(kh, key.b, key.n, "Git.test"));
	assert_true(knownhosts_known(kh, key.b, key.n, "[alt.test]:2222"));
	assert_true(knownhosts_known(kh, key.b, key.n, "[hashed.test]:2222"));
	assert_true(knownhosts_known(kh, key.b, key.n, "y.test"));
	assert_false(knownhosts_known(kh, key.b, key.n, "[git.test]:2222"));
	assert_false(knownhosts_known(kh, key.b, key.n, "[alt.test]:22"));
	assert_false(knownhosts_known(kh, key.b, key.n, "bad.test"));
	assert_false(knownhosts_known(kh, key.b, key.n, "git.example"));
	assert_false(knownhosts_known(kh, key2.b, key2.n, "x.test"));
	assert_false(knownhosts_revoked(kh, key.b, key.n));
	assert_true(knownhosts_revoked(kh, key2.b, key2.n));
	/* The revoked key is known under no name (only "*"). */
	knownhosts_names(kh, key2.b, key2.n, cands, nitems(cands), &names, &n);
	assert_int_equal(n, 0);
	free(names);
	knownhosts_free(kh);
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agentmsg_frame),
		cmocka_unit_test(test_agentmsg_userauth),
		cmocka_unit_test(test_agentmsg_sign_bind),
		cmocka_unit_test(test_agentkey_verify),
		cmocka_unit_test(test_knownhosts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
