/*
 * test_tls_peek.c: the ClientHello reader on real hellos, made by OpenSSL
 * at test time, and on hellos built here field by field to break them.
 */
#include <stdbool.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "unit.h"

#include "lib/util.h"
#include "proxy/proxy.h"

#define BIG	(TLS_PEEK_MAX * 8)	/* room for any framing below */

struct msg {
	uint8_t		 m_buf[BIG];
	size_t		 m_len;
};

/* Appends n bytes of v, big-endian. */
static void
put(struct msg *m, size_t n, size_t v)
{
	assert_true(m->m_len + n <= sizeof(m->m_buf));
	while (n-- > 0)
		m->m_buf[m->m_len++] = (uint8_t)(v >> (8 * n));
}

static void
put_bytes(struct msg *m, const void *p, size_t n)
{
	assert_true(m->m_len + n <= sizeof(m->m_buf));
	memcpy(m->m_buf + m->m_len, p, n);
	m->m_len += n;
}

/* Writes v over the n bytes at off. */
static void
patch(struct msg *m, size_t off, size_t n, size_t v)
{
	while (n-- > 0)
		m->m_buf[off++] = (uint8_t)(v >> (8 * n));
}

/* Reads the n big-endian bytes at off. */
static size_t
get(const uint8_t *p, size_t off, size_t n)
{
	size_t	 v = 0;

	while (n-- > 0)
		v = v << 8 | p[off++];
	return v;
}

/*
 * Has OpenSSL write the ClientHello it would send for name (NULL: no
 * server_name) with TLS 1.2 at most or 1.3, and returns its bytes.
 */
static void
openssl_hello(struct msg *m, const char *name, bool tls13)
{
	SSL_CTX		*ctx;
	SSL		*ssl;
	BIO		*rbio, *wbio;
	int		 n;

	assert_non_null(ctx = SSL_CTX_new(TLS_client_method()));
	assert_int_equal(SSL_CTX_set_max_proto_version(ctx, tls13 ?
	    TLS1_3_VERSION : TLS1_2_VERSION), 1);
	assert_non_null(ssl = SSL_new(ctx));
	assert_non_null(rbio = BIO_new(BIO_s_mem()));
	assert_non_null(wbio = BIO_new(BIO_s_mem()));
	SSL_set_bio(ssl, rbio, wbio);
	if (name != NULL)
		assert_int_equal(SSL_set_tlsext_host_name(ssl, name), 1);
	SSL_set_connect_state(ssl);
	assert_int_equal(SSL_do_handshake(ssl), -1);
	assert_int_equal(SSL_get_error(ssl, -1), SSL_ERROR_WANT_READ);
	n = BIO_read(wbio, m->m_buf, sizeof(m->m_buf));
	assert_true(n > 9);
	m->m_len = (size_t)n;
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	ERR_clear_error();

	/* One record holding one handshake message, nothing after. */
	assert_int_equal(m->m_buf[0], 22);
	assert_int_equal(get(m->m_buf, 3, 2) + 5, m->m_len);
	assert_int_equal(get(m->m_buf, 6, 3) + 9, m->m_len);
}

/* What to put in a hello built by build_hello. */
struct hello_opts {
	const char	*ho_name;	/* NULL: no server_name */
	size_t		 ho_namelen;	/* 0: strlen(ho_name) */
	int		 ho_nnames;	/* host_name entries */
	int		 ho_nametype;	/* name_type of the first entry */
	bool		 ho_twice;	/* a second server_name extension */
	bool		 ho_noext;	/* no extensions block at all */
	bool		 ho_ech;	/* an encrypted_client_hello before */
	size_t		 ho_sidlen;	/* legacy_session_id length */
	size_t		 ho_ciphers;	/* cipher_suites bytes */
	size_t		 ho_comp;	/* compression methods */
	size_t		 ho_padding;	/* padding extension bytes, 0: none */
	size_t		 ho_snitrail;	/* bytes after the ServerNameList */
	size_t		 ho_trailing;	/* bytes after the hello, in it */
};

/* What a TLS 1.3 client sends for name. */
static void
hello_opts_init(struct hello_opts *o, const char *name)
{
	memset(o, 0, sizeof(*o));
	o->ho_name = name;
	o->ho_nnames = 1;
	o->ho_ciphers = 4;
	o->ho_comp = 1;
}

/* Builds a ClientHello in one record, as a TLS 1.3 client would. */
static void
build_hello(struct msg *m, const struct hello_opts *o)
{
	size_t	 rec, hs, ext, sni, list, i, namelen;
	int	 n, k;

	m->m_len = 0;
	put(m, 1, 22);
	put(m, 2, 0x0301);
	rec = m->m_len;
	put(m, 2, 0);
	put(m, 1, 1);
	hs = m->m_len;
	put(m, 3, 0);
	put(m, 2, 0x0303);
	for (i = 0; i < 32; i++)
		put(m, 1, i);
	put(m, 1, o->ho_sidlen);
	for (i = 0; i < o->ho_sidlen; i++)
		put(m, 1, 0xa0);
	put(m, 2, o->ho_ciphers);
	for (i = 0; i < o->ho_ciphers; i++)
		put(m, 1, i % 2 ? 0x01 : 0x13);
	put(m, 1, o->ho_comp);
	for (i = 0; i < o->ho_comp; i++)
		put(m, 1, 0);

	if (!o->ho_noext) {
		ext = m->m_len;
		put(m, 2, 0);
		put(m, 2, 43);			/* supported_versions */
		put(m, 2, 3);
		put(m, 1, 2);
		put(m, 2, 0x0304);
		if (o->ho_ech) {
			put(m, 2, 0xfe0d);
			put(m, 2, 8);
			put_bytes(m, "\0\0\1\0\1\x2a\0\0", 8);
		}
		for (k = 0; o->ho_name != NULL && k < (o->ho_twice ? 2 : 1);
		    k++) {
			namelen = o->ho_namelen ? o->ho_namelen :
			    strlen(o->ho_name);
			put(m, 2, 0);		/* server_name */
			sni = m->m_len;
			put(m, 2, 0);
			list = m->m_len;
			put(m, 2, 0);
			for (n = 0; n < o->ho_nnames; n++) {
				put(m, 1, n == 0 ? (size_t)o->ho_nametype : 0);
				put(m, 2, namelen);
				put_bytes(m, o->ho_name, namelen);
			}
			patch(m, list, 2, m->m_len - list - 2);
			for (i = 0; i < o->ho_snitrail; i++)
				put(m, 1, 0);
			patch(m, sni, 2, m->m_len - sni - 2);
		}
		put(m, 2, 10);			/* supported_groups */
		put(m, 2, 4);
		put(m, 2, 2);
		put(m, 2, 0x001d);
		if (o->ho_padding > 0) {
			put(m, 2, 21);
			put(m, 2, o->ho_padding);
			for (i = 0; i < o->ho_padding; i++)
				put(m, 1, 0);
		}
		patch(m, ext, 2, m->m_len - ext - 2);
	}
	patch(m, hs, 3, m->m_len - hs - 3);
	for (i = 0; i < o->ho_trailing; i++)
		put(m, 1, 0);
	patch(m, rec, 2, m->m_len - rec - 2);
}

/*
 * Frames the handshake message of a one-record hello anew, in records of
 * size bytes (the last may be shorter).
 */
static void
reframe(struct msg *out, const struct msg *in, size_t size)
{
	size_t	 off, n;

	out->m_len = 0;
	for (off = 5; off < in->m_len; off += n) {
		n = in->m_len - off < size ? in->m_len - off : size;
		put(out, 1, 22);
		put(out, 2, 0x0303);
		put(out, 2, n);
		put_bytes(out, in->m_buf + off, n);
	}
}

/* Runs tls_peek_sni on len bytes of buf with a roomy sni buffer. */
static int
peek(const uint8_t *buf, size_t len, char *sni, size_t *snilen)
{
	int	 rc;

	memset(sni, 0x5a, 300);
	rc = tls_peek_sni(buf, len, sni, 300, snilen);
	if (rc != TLS_PEEK_SNI) {
		assert_int_equal(*snilen, 0);
		assert_int_equal(sni[0], '\0');
	} else {
		assert_true(*snilen > 0 && *snilen < 300);
		assert_int_equal(sni[*snilen], '\0');
	}
	return rc;
}

/*
 * Checks that every proper prefix of m gives MORE (or, when want is BAD,
 * MORE then BAD) and all of it want, with the name's namelen bytes for
 * TLS_PEEK_SNI.
 */
static void
check_whole(const struct msg *m, int want, const char *name, size_t namelen)
{
	char	 sni[300];
	size_t	 k, snilen;
	int	 rc, last;

	for (k = 0, last = TLS_PEEK_MORE; k < m->m_len; k++) {
		rc = peek(m->m_buf, k, sni, &snilen);
		if (rc == TLS_PEEK_MORE && last == TLS_PEEK_MORE)
			continue;
		/* A bad hello may show it early, and stays bad. */
		if (want != TLS_PEEK_BAD || rc != TLS_PEEK_BAD)
			fail_msg("cut at %zu of %zu: %d after %d", k,
			    m->m_len, rc, last);
		last = rc;
	}
	rc = peek(m->m_buf, m->m_len, sni, &snilen);
	if (rc != want)
		fail_msg("whole (%zu bytes): %d, not %d", m->m_len, rc, want);
	if (want == TLS_PEEK_SNI) {
		assert_int_equal(snilen, namelen);
		assert_memory_equal(sni, name, namelen);
	}
}

static const char *names[] = {
	"example.com",
	"a",
	"xn--bcher-kva.example",
	"very.long.label.name.under.a.deep.tree.of.sub.domains.example.org",
	"127.0.0.1",
};

static void
test_openssl_hellos(void **state)
{
	struct msg	*m, *framed;
	char		 sni[300];
	size_t		 i, snilen, v, sizes[] = { 1, 2, 3, 100, 16384 };
	size_t		 j;

	(void)state;
	assert_non_null(m = malloc(sizeof(*m)));
	assert_non_null(framed = malloc(sizeof(*framed)));
	for (v = 0; v < 2; v++) {
		for (i = 0; i < nitems(names); i++) {
			openssl_hello(m, names[i], v == 1);
			check_whole(m, TLS_PEEK_SNI, names[i],
			    strlen(names[i]));

			/* What follows the hello does not matter. */
			put_bytes(m, "\x14\x03\x03\x00\x01\x01", 6);
			assert_int_equal(peek(m->m_buf, m->m_len, sni,
			    &snilen), TLS_PEEK_SNI);
			m->m_len -= 6;

			for (j = 0; j < nitems(sizes); j++) {
				reframe(framed, m, sizes[j]);
				assert_true(framed->m_len <= TLS_PEEK_MAX);
				check_whole(framed, TLS_PEEK_SNI, names[i],
				    strlen(names[i]));
			}
		}
		openssl_hello(m, NULL, v == 1);
		check_whole(m, TLS_PEEK_NO_SNI, NULL, 0);
		reframe(framed, m, 3);
		check_whole(framed, TLS_PEEK_NO_SNI, NULL, 0);
	}
	free(framed);
	free(m);
}

/* A length field of a one-record hello: where, how wide, how far. */
struct field {
	size_t		 f_off;
	size_t		 f_size;
	bool		 f_outer;	/* record or handshake: MORE is fine */
};

/* Lists the length fields of a one-record hello; returns how many. */
static size_t
hello_fields(const struct msg *m, struct field *f, size_t max)
{
	const uint8_t	*p = m->m_buf;
	size_t		 n = 0, off, end, type, len;

#define FIELD(o, s, outer) do {						\
	assert_true(n < max);						\
	f[n].f_off = (o);						\
	f[n].f_size = (s);						\
	f[n++].f_outer = (outer);					\
} while (0)
	FIELD(3, 2, true);
	FIELD(6, 3, true);
	off = 9 + 2 + 32;
	FIELD(off, 1, false);			/* legacy_session_id */
	off += 1 + p[off];
	FIELD(off, 2, false);			/* cipher_suites */
	off += 2 + get(p, off, 2);
	FIELD(off, 1, false);			/* compression methods */
	off += 1 + p[off];
	if (off == m->m_len)
		return n;
	FIELD(off, 2, false);			/* extensions */
	off += 2;
	end = m->m_len;
	while (off < end) {
		type = get(p, off, 2);
		len = get(p, off + 2, 2);
		FIELD(off + 2, 2, false);
		if (type == 0) {
			FIELD(off + 4, 2, false);	/* server_name_list */
			FIELD(off + 7, 2, false);	/* HostName */
		}
		off += 4 + len;
	}
	assert_int_equal(off, end);
	return n;
#undef FIELD
}

/*
 * Sets each length field of m in turn one up, one down, to 0 and to all
 * ones: the result is BAD (or MORE for the outer lengths, which then
 * promise bytes not there yet), never a name.
 */
static void
corrupt_lengths(const struct msg *m, const char *what)
{
	struct field	 f[64];
	struct msg	*c;
	char		 sni[300];
	size_t		 i, j, nf, v, vals[4], snilen;
	int		 rc;

	assert_non_null(c = malloc(sizeof(*c)));
	nf = hello_fields(m, f, nitems(f));
	assert_true(nf >= 6);
	for (i = 0; i < nf; i++) {
		v = get(m->m_buf, f[i].f_off, f[i].f_size);
		vals[0] = v + 1;
		vals[1] = v - 1;
		vals[2] = 0;
		vals[3] = ~(size_t)0;
		for (j = 0; j < nitems(vals); j++) {
			memcpy(c, m, sizeof(*c));
			patch(c, f[i].f_off, f[i].f_size, vals[j]);
			if (get(c->m_buf, f[i].f_off, f[i].f_size) == v)
				continue;
			rc = peek(c->m_buf, c->m_len, sni, &snilen);
			if (rc == TLS_PEEK_BAD)
				continue;
			if (rc == TLS_PEEK_MORE && f[i].f_outer)
				continue;
			fail_msg("%s: length at %zu set to %zx gives %d", what,
			    f[i].f_off, get(c->m_buf, f[i].f_off,
			    f[i].f_size), rc);
		}
	}
	free(c);
}

static void
test_corrupt_lengths(void **state)
{
	struct hello_opts	 o;
	struct msg		*m;
	size_t			 i;

	(void)state;
	assert_non_null(m = malloc(sizeof(*m)));
	for (i = 0; i < nitems(names); i++) {
		openssl_hello(m, names[i], false);
		corrupt_lengths(m, names[i]);
		openssl_hello(m, names[i], true);
		corrupt_lengths(m, names[i]);
	}
	openssl_hello(m, NULL, true);
	corrupt_lengths(m, "no name");

	hello_opts_init(&o, "example.com");
	o.ho_ech = true;
	o.ho_sidlen = 32;
	build_hello(m, &o);
	corrupt_lengths(m, "built");
	free(m);
}

/* Builds a hello from o and expects want (and o's name for SNI). */
static void
check_built(const struct hello_opts *o, int want)
{
	struct msg	*m;
	size_t		 namelen;

	assert_non_null(m = malloc(sizeof(*m)));
	build_hello(m, o);
	namelen = o->ho_name == NULL ? 0 :
	    o->ho_namelen ? o->ho_namelen : strlen(o->ho_name);
	check_whole(m, want, o->ho_name, namelen);
	free(m);
}

static void
test_built_hellos(void **state)
{
	struct hello_opts	 o;
	char			 name[300];

	(void)state;
	hello_opts_init(&o, NULL);
	check_built(&o, TLS_PEEK_NO_SNI);
	o.ho_noext = true;
	check_built(&o, TLS_PEEK_NO_SNI);
	o.ho_name = "example.com";
	check_built(&o, TLS_PEEK_NO_SNI);	/* no extensions: no name */

	hello_opts_init(&o, "example.com");
	check_built(&o, TLS_PEEK_SNI);
	o.ho_ech = true;			/* the outer name counts */
	check_built(&o, TLS_PEEK_SNI);
	o.ho_sidlen = 32;
	o.ho_ciphers = 2;
	o.ho_comp = 255;
	check_built(&o, TLS_PEEK_SNI);
	o.ho_ciphers = 65534;
	check_built(&o, TLS_PEEK_BAD);		/* longer than the limit */

	/* Lengths that are consistent but out of bounds. */
	hello_opts_init(&o, "example.com");
	o.ho_sidlen = 33;
	check_built(&o, TLS_PEEK_BAD);
	o.ho_sidlen = 0;
	o.ho_ciphers = 3;
	check_built(&o, TLS_PEEK_BAD);
	o.ho_ciphers = 0;
	check_built(&o, TLS_PEEK_BAD);
	o.ho_ciphers = 4;
	o.ho_comp = 0;
	check_built(&o, TLS_PEEK_BAD);

	/* One server_name, one entry, of type host_name. */
	hello_opts_init(&o, "example.com");
	o.ho_twice = true;
	check_built(&o, TLS_PEEK_BAD);
	o.ho_twice = false;
	o.ho_nnames = 2;
	check_built(&o, TLS_PEEK_BAD);
	o.ho_nnames = 0;
	check_built(&o, TLS_PEEK_BAD);
	o.ho_nnames = 1;
	o.ho_nametype = 1;
	check_built(&o, TLS_PEEK_BAD);
	o.ho_nametype = 0;
	o.ho_snitrail = 1;
	check_built(&o, TLS_PEEK_BAD);

	/* Trailing bytes in the record after the hello. */
	hello_opts_init(&o, "example.com");
	o.ho_trailing = 1;
	check_built(&o, TLS_PEEK_BAD);

	/* Names are raw bytes, 1 to 255 of them. */
	hello_opts_init(&o, "evil.test\0.github.com");
	o.ho_namelen = 21;
	check_built(&o, TLS_PEEK_SNI);
	o.ho_name = "\r\n\x1b[0m\xff";
	o.ho_namelen = 0;
	check_built(&o, TLS_PEEK_SNI);
	o.ho_name = "";
	check_built(&o, TLS_PEEK_BAD);
	memset(name, 'a', sizeof(name));
	name[255] = '\0';
	o.ho_name = name;
	check_built(&o, TLS_PEEK_SNI);
	name[255] = 'a';
	name[256] = '\0';
	check_built(&o, TLS_PEEK_BAD);
}

static void
test_sni_size(void **state)
{
	struct hello_opts	 o;
	struct msg		*m;
	char			 sni[12];
	size_t			 snilen;

	(void)state;
	assert_non_null(m = malloc(sizeof(*m)));
	hello_opts_init(&o, "example.com");	/* 11 bytes */
	build_hello(m, &o);
	assert_int_equal(tls_peek_sni(m->m_buf, m->m_len, sni, 12, &snilen),
	    TLS_PEEK_SNI);
	assert_int_equal(snilen, 11);
	assert_string_equal(sni, "example.com");
	memset(sni, 'x', sizeof(sni));
	assert_int_equal(tls_peek_sni(m->m_buf, m->m_len, sni, 11, &snilen),
	    TLS_PEEK_BAD);
	assert_int_equal(snilen, 0);
	assert_int_equal(sni[0], '\0');
	assert_int_equal(sni[1], 'x');
	assert_int_equal(tls_peek_sni(m->m_buf, m->m_len, NULL, 0, &snilen),
	    TLS_PEEK_BAD);
	free(m);
}

/* Expects want from the len bytes of p; says which line did not. */
static void
check_bytes_at(int line, const void *p, size_t len, int want)
{
	char	 sni[300];
	size_t	 snilen;
	int	 rc;

	if ((rc = peek(p, len, sni, &snilen)) != want)
		fail_msg("line %d: %zu bytes: %d, not %d", line, len, rc,
		    want);
}
#define check_bytes(p, len, want) check_bytes_at(__LINE__, p, len, want)

static void
test_not_tls(void **state)
{
	(void)state;
	check_bytes("", 0, TLS_PEEK_MORE);
	check_bytes("\x16", 1, TLS_PEEK_MORE);
	check_bytes("\x16\x03", 2, TLS_PEEK_MORE);
	check_bytes("\x16\x03\x01\x00", 4, TLS_PEEK_MORE);
	check_bytes("GET / HTTP/1.1\r\n", 16, TLS_PEEK_NOT_TLS);
	check_bytes("G", 1, TLS_PEEK_NOT_TLS);
	check_bytes("\x05\x01\x00", 3, TLS_PEEK_NOT_TLS);
	check_bytes("\x80\x2e\x01\x03\x01", 5, TLS_PEEK_NOT_TLS);
	check_bytes("\x17\x03\x03\x00\x10", 5, TLS_PEEK_NOT_TLS);
	check_bytes("\x16\x02", 2, TLS_PEEK_NOT_TLS);
	check_bytes("\x16\x04\x01\x00\x10", 5, TLS_PEEK_NOT_TLS);
	check_bytes("\x16\x00", 2, TLS_PEEK_NOT_TLS);
}

static void
test_bad_records(void **state)
{
	struct msg	*m, *framed;
	char		 sni[300];
	size_t		 snilen, off;

	(void)state;
	assert_non_null(m = malloc(sizeof(*m)));
	assert_non_null(framed = malloc(sizeof(*framed)));

	/* Record lengths: none empty, none over 2^14. */
	check_bytes("\x16\x03\x01\x00\x00", 5, TLS_PEEK_BAD);
	check_bytes("\x16\x03\x01\x40\x01", 5, TLS_PEEK_BAD);
	check_bytes("\x16\x03\x01\xff\xff", 5, TLS_PEEK_BAD);
	check_bytes("\x16\x03\x01\x40\x00", 5, TLS_PEEK_MORE);
	/* A handshake message other than ClientHello. */
	check_bytes("\x16\x03\x03\x00\x04\x02", 6, TLS_PEEK_BAD);
	check_bytes("\x16\x03\x03\x00\x04\x00", 6, TLS_PEEK_BAD);
	check_bytes("\x16\x03\x03\x00\x04\x01", 6, TLS_PEEK_MORE);
	/* A ClientHello too long to fit, known from its header. */
	check_bytes("\x16\x03\x03\x00\x04\x01\x00\x40\x02", 9, TLS_PEEK_BAD);
	check_bytes("\x16\x03\x03\x00\x04\x01\xff\xff\xff", 9, TLS_PEEK_BAD);
	check_bytes("\x16\x03\x03\x00\x04\x01\x00\x40\x01", 9, TLS_PEEK_MORE);
	check_bytes("\x16\x03\x03\x40\x00\x01\x00\x40\x06", 9, TLS_PEEK_MORE);
	check_bytes("\x16\x03\x03\x40\x00\x01\x00\x40\x07", 9, TLS_PEEK_BAD);
	/* Too short for its own fields. */
	check_bytes("\x16\x03\x03\x00\x04\x01\x00\x00\x00", 9, TLS_PEEK_BAD);

	/* Another record type, or version, before the hello is whole. */
	openssl_hello(m, "example.com", true);
	reframe(framed, m, 100);
	off = 5 + 100;
	assert_int_equal(framed->m_buf[off], 22);
	framed->m_buf[off] = 21;		/* an alert */
	check_bytes(framed->m_buf, framed->m_len, TLS_PEEK_BAD);
	check_bytes(framed->m_buf, off + 1, TLS_PEEK_BAD);
	check_bytes(framed->m_buf, off, TLS_PEEK_MORE);
	framed->m_buf[off] = 20;		/* change_cipher_spec */
	check_bytes(framed->m_buf, framed->m_len, TLS_PEEK_BAD);
	framed->m_buf[off] = 22;
	framed->m_buf[off + 1] = 2;
	check_bytes(framed->m_buf, framed->m_len, TLS_PEEK_BAD);
	framed->m_buf[off + 1] = 3;
	assert_int_equal(peek(framed->m_buf, framed->m_len, sni, &snilen),
	    TLS_PEEK_SNI);

	/*
	 * A full first record of a hello that needs 10 bytes more, then a
	 * full record: BAD, and nothing copied past TLS_PEEK_MAX.
	 */
	framed->m_len = 0;
	put(framed, 1, 22);
	put(framed, 2, 0x0303);
	put(framed, 2, 16384);
	put(framed, 1, 1);
	put(framed, 3, 16384 - 4 + 10);
	for (off = 4; off < 16384; off++)
		put(framed, 1, 0);
	check_bytes(framed->m_buf, framed->m_len, TLS_PEEK_MORE);
	put(framed, 1, 22);
	put(framed, 2, 0x0303);
	put(framed, 2, 16384);
	for (off = 0; off < 16384; off++)
		put(framed, 1, 0);
	check_bytes(framed->m_buf, framed->m_len, TLS_PEEK_BAD);

	/* The last record running one byte past the hello's end. */
	reframe(framed, m, 100);
	off = 5 + 100;
	while (off + 5 + 100 < framed->m_len)
		off += 5 + 100;
	patch(framed, off + 3, 2, get(framed->m_buf, off + 3, 2) + 1);
	put(framed, 1, 0);
	check_bytes(framed->m_buf, framed->m_len, TLS_PEEK_BAD);
	check_bytes(framed->m_buf, off + 5, TLS_PEEK_BAD);
	check_bytes(framed->m_buf, off + 4, TLS_PEEK_MORE);
	free(framed);
	free(m);
}

static void
test_limit(void **state)
{
	struct hello_opts	 o;
	struct msg		*m, *framed;
	char			 sni[300];
	size_t			 snilen, hslen, k;
	int			 rc, last;

	(void)state;
	assert_non_null(m = malloc(sizeof(*m)));
	assert_non_null(framed = malloc(sizeof(*framed)));
	hello_opts_init(&o, "example.com");

	/* The largest one-record hello: 2^14 bytes of handshake. */
	build_hello(m, &o);
	o.ho_padding = 16384 - (m->m_len - 5) - 4;
	build_hello(m, &o);
	assert_int_equal(m->m_len, 5 + 16384);
	check_whole(m, TLS_PEEK_SNI, "example.com", 11);
	o.ho_padding++;
	build_hello(m, &o);
	assert_int_equal(peek(m->m_buf, m->m_len, sni, &snilen),
	    TLS_PEEK_BAD);

	/* Two records: what fits in TLS_PEEK_MAX bytes and one more. */
	hslen = TLS_PEEK_MAX - 2 * 5;
	o.ho_padding = 0;
	build_hello(m, &o);
	o.ho_padding = hslen - (m->m_len - 5) - 4;
	build_hello(m, &o);
	reframe(framed, m, 16384);
	assert_int_equal(framed->m_len, TLS_PEEK_MAX);
	check_whole(framed, TLS_PEEK_SNI, "example.com", 11);
	o.ho_padding++;
	build_hello(m, &o);
	reframe(framed, m, 16384);
	assert_int_equal(peek(framed->m_buf, framed->m_len, sni, &snilen),
	    TLS_PEEK_BAD);
	/* Known from the first record's header and the message header. */
	assert_int_equal(peek(framed->m_buf, 9, sni, &snilen), TLS_PEEK_BAD);

	/*
	 * One-byte records of a 3000-byte hello cannot fit: MORE, then BAD
	 * from some point on, and BAD before TLS_PEEK_MAX bytes.
	 */
	o.ho_padding = 0;
	build_hello(m, &o);
	o.ho_padding = 3000 - (m->m_len - 5) - 4;
	build_hello(m, &o);
	reframe(framed, m, 1);
	assert_true(framed->m_len > TLS_PEEK_MAX);
	last = TLS_PEEK_MORE;
	for (k = 0; k <= TLS_PEEK_MAX; k++) {
		rc = peek(framed->m_buf, k, sni, &snilen);
		if (rc != TLS_PEEK_BAD && (rc != TLS_PEEK_MORE ||
		    last == TLS_PEEK_BAD))
			fail_msg("one-byte records cut at %zu: %d after %d",
			    k, rc, last);
		last = rc;
	}
	assert_int_equal(last, TLS_PEEK_BAD);
	free(framed);
	free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_openssl_hellos),
		cmocka_unit_test(test_corrupt_lengths),
		cmocka_unit_test(test_built_hellos),
		cmocka_unit_test(test_sni_size),
		cmocka_unit_test(test_not_tls),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
