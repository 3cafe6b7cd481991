/*
 * test_ssh_peek.c: an SSH server's first key exchange read from its
 * bytes (wire/ssh_peek.c): the host key and signature found whole or
 * fed a byte at a time, the group exchange's GROUP passed over, and
 * what is no SSH server's ending the watch.
 */
#include "unit.h"

#include "proxy/proxy.h"

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
w_raw(struct wbuf *w, const void *s, size_t len)
{
	memcpy(w->b + w->n, s, len);
	w->n += len;
}

static void
w_str(struct wbuf *w, const char *s)
{
	w_u32(w, (uint32_t)strlen(s));
	w_raw(w, s, strlen(s));
}

/* A binary packet of payload p (type first), with 4 bytes of padding. */
static void
w_packet(struct wbuf *w, const struct wbuf *p)
{
	static const uint8_t	 pad[4];

	w_u32(w, (uint32_t)(1 + p->n + sizeof(pad)));
	w->b[w->n++] = sizeof(pad);
	w_raw(w, p->b, p->n);
	w_raw(w, pad, sizeof(pad));
}

/* A packet of type with the strings of strs (NULL-ended). */
static void
w_msg(struct wbuf *w, uint8_t type, const char *const *strs)
{
	struct wbuf	 p = { .n = 0 };

	p.b[p.n++] = type;
	for (; *strs != NULL; strs++)
		w_str(&p, *strs);
	w_packet(w, &p);
}

/* A server's stream up to its reply of type (31 or 33). */
static void
server(struct wbuf *w, uint8_t type, bool gex)
{
	static const char *const kexinit[] = { "curve25519-sha256", NULL };
	static const char *const group[] = { "p", "g", NULL };
	static const char *const reply[] = { "hostkey", "Q_S", "signature",
	    NULL };
	static const char *const ign[] = { "x", NULL };

	w->n = 0;
	w_raw(w, "a banner line\r\n", 15);
	w_raw(w, "SSH-2.0-OpenSSH_9.6\r\n", 21);
	w_msg(w, 20, kexinit);
	w_msg(w, 2, ign);
	if (gex)
		w_msg(w, 31, group);
	w_msg(w, type, reply);
}

static void
test_ssh_peek_found(void **state)
{
	struct ssh_peek	 sp;
	struct wbuf	 w;
	size_t		 i;
	int		 rc = SSH_PEEK_MORE;

	(void)state;
	server(&w, 31, false);
	memset(&sp, 0, sizeof(sp));
	assert_int_equal(ssh_peek_feed(&sp, w.b, w.n), SSH_PEEK_FOUND);
	assert_int_equal(sp.sp_hostkeylen, 7);
	assert_memory_equal(sp.sp_hostkey, "hostkey", 7);
	assert_int_equal(sp.sp_siglen, 9);
	assert_memory_equal(sp.sp_sig, "signature", 9);
	/* What follows changes nothing. */
	assert_int_equal(ssh_peek_feed(&sp, "junk", 4), SSH_PEEK_FOUND);
	ssh_peek_clear(&sp);
	/* A byte at a time, the group exchange's way. */
	server(&w, 33, true);
	for (i = 0; i < w.n; i++) {
		rc = ssh_peek_feed(&sp, w.b + i, 1);
		if (i + 1 < w.n)
			assert_int_equal(rc, SSH_PEEK_MORE);
	}
	assert_int_equal(rc, SSH_PEEK_FOUND);
	assert_memory_equal(sp.sp_sig, "signature", 9);
	ssh_peek_clear(&sp);
}

static void
test_ssh_peek_none(void **state)
{
	static const char *const newkeys[] = { NULL };
	static const char *const two[] = { "hostkey", "Q_S", NULL };
	struct ssh_peek	 sp;
	struct wbuf	 w;
	uint8_t		 big[SSH_PEEK_MAX + 10];
	static const uint8_t tls[] = { 0x16, 0x03, 0x03, 0x00, 0x30 };

	(void)state;
	memset(&sp, 0, sizeof(sp));
	/* A TLS server ends it at its first byte. */
	assert_int_equal(ssh_peek_feed(&sp, tls, sizeof(tls)), SSH_PEEK_NONE);
	assert_null(sp.sp_buf);
	ssh_peek_clear(&sp);
	/* SSH 1, and a line too long for a banner. */
	assert_int_equal(ssh_peek_feed(&sp, "SSH-1.5-x\r\n", 11),
	    SSH_PEEK_NONE);
	ssh_peek_clear(&sp);
	memset(big, 'a', sizeof(big));
	assert_int_equal(ssh_peek_feed(&sp, big, 300), SSH_PEEK_NONE);
	ssh_peek_clear(&sp);
	/* NEWKEYS before any reply; a GEX reply that is not three strings. */
	w.n = 0;
	w_raw(&w, "SSH-2.0-x\n", 10);
	w_msg(&w, 21, newkeys);
	assert_int_equal(ssh_peek_feed(&sp, w.b, w.n), SSH_PEEK_NONE);
	ssh_peek_clear(&sp);
	w.n = 0;
	w_raw(&w, "SSH-2.0-x\n", 10);
	w_msg(&w, 33, two);
	assert_int_equal(ssh_peek_feed(&sp, w.b, w.n), SSH_PEEK_NONE);
	ssh_peek_clear(&sp);
	/* A packet longer than any, and padding past the packet. */
	w.n = 0;
	w_raw(&w, "SSH-2.0-x\n", 10);
	w_u32(&w, 40000);
	w.b[w.n++] = 4;
	assert_int_equal(ssh_peek_feed(&sp, w.b, w.n), SSH_PEEK_NONE);
	ssh_peek_clear(&sp);
	w.n = 0;
	w_raw(&w, "SSH-2.0-x\n", 10);
	w_u32(&w, 5);
	w.b[w.n++] = 4;
	assert_int_equal(ssh_peek_feed(&sp, w.b, w.n), SSH_PEEK_NONE);
	ssh_peek_clear(&sp);
	/* Lines without end, up to the limit: nothing. */
	memset(big, '\n', sizeof(big));
	assert_int_equal(ssh_peek_feed(&sp, big, sizeof(big)), SSH_PEEK_NONE);
	ssh_peek_clear(&sp);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ssh_peek_found),
		cmocka_unit_test(test_ssh_peek_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
