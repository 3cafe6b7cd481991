/*
 * test_dnsmsg.c: DNS queries parsed and answers built, byte by byte.
 */
#include "unit.h"

#include "lib/util.h"
#include "wire/dnsmsg.h"

/* dig +noedns WwW.Example.COM A, as it went on the wire. */
static const unsigned char dig_noedns[] = {
	0xf9, 0x08, 0x01, 0x20,			/* id, RD AD */
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x03, 'W', 'w', 'W', 0x07, 'E', 'x', 'a', 'm', 'p', 'l', 'e',
	0x03, 'C', 'O', 'M', 0x00,
	0x00, 0x01, 0x00, 0x01			/* A IN */
};

/* dig example.org AAAA: EDNS, with a cookie, in one OPT record. */
static const unsigned char dig_edns[] = {
	0xe7, 0x9b, 0x01, 0x20,
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x07, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0x03, 'o', 'r', 'g', 0x00,
	0x00, 0x1c, 0x00, 0x01,			/* AAAA IN */
	0x00, 0x00, 0x29, 0x04, 0xd0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c,
	0x00, 0x0a, 0x00, 0x08, 0x61, 0x22, 0x02, 0xa5, 0x51, 0xba, 0x33, 0x57
};

/*
 * Builds a query for name (dotted, "" the root) into buf, each piece
 * between dots a label as it is, unchecked, so that bad ones can be made.
 * Returns its length.
 */
static size_t
mkquery(unsigned char *buf, uint16_t id, const char *name, uint16_t type)
{
	const char	*dot;
	size_t		 off = 12, n;

	memset(buf, 0, 12);
	buf[0] = (unsigned char)(id >> 8);
	buf[1] = (unsigned char)id;
	buf[2] = 0x01;			/* RD */
	buf[5] = 1;			/* QDCOUNT */
	while (*name != '\0') {
		if ((dot = strchr(name, '.')) == NULL)
			dot = name + strlen(name);
		n = (size_t)(dot - name);
		buf[off++] = (unsigned char)n;
		memcpy(buf + off, name, n);
		off += n;
		name = *dot == '.' ? dot + 1 : dot;
	}
	buf[off++] = 0;
	buf[off++] = (unsigned char)(type >> 8);
	buf[off++] = (unsigned char)type;
	buf[off++] = 0;
	buf[off++] = DNSMSG_CLASS_IN;
	return off;
}

/* A name of labels of 63 'a's and a last one of last bytes. */
static void
mkname(char *out, int full, size_t last)
{
	int	 i;

	for (i = 0; i < full; i++) {
		memset(out, 'a', 63);
		out[63] = '.';
		out += 64;
	}
	memset(out, 'b', last);
	out[last] = '\0';
}

static void
test_dnsmsg_dig(void **state)
{
	struct dnsmsg_query	 q;

	(void)state;
	assert_int_equal(dnsmsg_parse_query(dig_noedns, sizeof(dig_noedns),
	    &q), 0);
	assert_int_equal(q.dq_id, 0xf908);
	assert_int_equal(q.dq_flags, 0x0120);
	assert_int_equal(q.dq_type, DNSMSG_TYPE_A);
	assert_int_equal(q.dq_class, DNSMSG_CLASS_IN);
	assert_string_equal(q.dq_name, "www.example.com");
	assert_int_equal(q.dq_end, sizeof(dig_noedns));

	/* The OPT record is there but not read. */
	assert_int_equal(dnsmsg_parse_query(dig_edns, sizeof(dig_edns), &q),
	    0);
	assert_int_equal(q.dq_id, 0xe79b);
	assert_int_equal(q.dq_type, DNSMSG_TYPE_AAAA);
	assert_string_equal(q.dq_name, "example.org");
	assert_int_equal(q.dq_end, 29);
}

static void
test_dnsmsg_names(void **state)
{
	static const struct {
		const char	*wire;
		const char	*name;	/* NULL: refused */
	} cases[] = {
		{ "", "" },
		{ "x", "x" },
		{ "_dmarc.A-B.c0", "_dmarc.a-b.c0" },
		{ "-.9", "-.9" },
		{ "a b.com", NULL },
		{ "a*.com", NULL },
		{ "a/b.com", NULL },
		{ "\xc3\xa9.com", NULL },
		{ "a\x7f.com", NULL },
		{ "a@.com", NULL },	/* one below 'A' */
		{ "a[.com", NULL },	/* one past 'Z' */
		{ "a`.com", NULL },
		{ "a{.com", NULL },
	};
	struct dnsmsg_query	 q;
	unsigned char		 buf[600];
	char			 name[300];
	size_t			 len, i;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		len = mkquery(buf, 7, cases[i].wire, DNSMSG_TYPE_A);
		if (cases[i].name == NULL) {
			if (dnsmsg_parse_query(buf, len, &q) != -1)
				fail_msg("case %zu accepted", i);
			continue;
		}
		if (dnsmsg_parse_query(buf, len, &q) != 0)
			fail_msg("case %zu refused", i);
		assert_string_equal(q.dq_name, cases[i].name);
		assert_int_equal(q.dq_end, len);
	}
	/* A NUL and a dot inside a label, which mkquery cannot make. */
	len = mkquery(buf, 7, "abc.com", DNSMSG_TYPE_A);
	buf[14] = '\0';
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), -1);
	buf[14] = '.';
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), -1);

	/* Labels of 63 bytes, not 64 (0x40, also an extended label type). */
	mkname(name, 1, 63);
	len = mkquery(buf, 7, name, DNSMSG_TYPE_A);
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), 0);
	assert_string_equal(q.dq_name, name);
	mkname(name, 0, 64);
	len = mkquery(buf, 7, name, DNSMSG_TYPE_A);
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), -1);

	/* 253 characters dotted (255 bytes on the wire), not 254. */
	mkname(name, 3, 61);
	assert_int_equal(strlen(name), 253);
	len = mkquery(buf, 7, name, DNSMSG_TYPE_A);
	assert_int_equal(len, 12 + 255 + 4);
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), 0);
	assert_string_equal(q.dq_name, name);
	assert_int_equal(q.dq_end, len);
	mkname(name, 3, 62);
	len = mkquery(buf, 7, name, DNSMSG_TYPE_A);
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), -1);
	/* Many short labels past the limit. */
	for (i = 0; i < 127; i++)
		memcpy(name + 2 * i, "a.", 2);
	name[253] = '\0';
	assert_int_equal(strlen(name), 253);
	len = mkquery(buf, 7, name, DNSMSG_TYPE_A);
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), 0);
	memcpy(name + 253, ".a", 3);
	len = mkquery(buf, 7, name, DNSMSG_TYPE_A);
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), -1);
}

static void
test_dnsmsg_header(void **state)
{
	static const struct {
		size_t		 off;
		unsigned char	 val;
	} bad[] = {
		{ 2, 0x81 },	/* QR */
		{ 2, 0x09 },	/* opcode 1, IQUERY */
		{ 2, 0x11 },	/* opcode 2, STATUS */
		{ 2, 0x21 },	/* opcode 4, NOTIFY */
		{ 2, 0x29 },	/* opcode 5, UPDATE */
		{ 5, 0 },	/* QDCOUNT 0 */
		{ 5, 2 },	/* QDCOUNT 2 */
		{ 4, 1 },	/* QDCOUNT 257 */
		{ 7, 1 },	/* ANCOUNT */
		{ 6, 1 },
		{ 9, 1 },	/* NSCOUNT */
		{ 11, 2 },	/* ARCOUNT past one OPT */
		{ 10, 1 },
	};
	struct dnsmsg_query	 q;
	unsigned char		 buf[64], save;
	size_t			 len, i;
	uint16_t		 id;

	(void)state;
	len = mkquery(buf, 0x1234, "a.test", DNSMSG_TYPE_A);
	for (i = 0; i < nitems(bad); i++) {
		save = buf[bad[i].off];
		buf[bad[i].off] = bad[i].val;
		if (dnsmsg_parse_query(buf, len, &q) != -1)
			fail_msg("case %zu accepted", i);
		assert_int_equal(q.dq_id, 0);	/* zeroed */
		assert_int_equal(q.dq_end, 0);
		buf[bad[i].off] = save;
	}
	/* What a query may hold: one additional record, TC, CD, AD, Z. */
	buf[11] = 1;
	buf[2] = 0x03;
	buf[3] = 0x70;
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), 0);
	assert_int_equal(q.dq_flags, 0x0370);

	/* The id of what did not parse; none for a response. */
	buf[5] = 2;
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), -1);
	assert_int_equal(dnsmsg_id(buf, len, &id), 0);
	assert_int_equal(id, 0x1234);
	assert_int_equal(dnsmsg_id(buf, 12, &id), 0);
	assert_int_equal(dnsmsg_id(buf, 11, &id), -1);
	buf[2] |= 0x80;
	assert_int_equal(dnsmsg_id(buf, len, &id), -1);
}

/* Every prefix of a query fails, and still gives its id from 12 bytes. */
static void
test_dnsmsg_truncated(void **state)
{
	struct dnsmsg_query	 q;
	unsigned char		 buf[600], *copy;
	char			 name[300];
	size_t			 len, i;
	uint16_t		 id;

	(void)state;
	mkname(name, 3, 61);
	len = mkquery(buf, 0xbeef, name, DNSMSG_TYPE_AAAA);
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), 0);
	for (i = 0; i < len; i++) {
		/* Exactly i bytes, so the sanitizer sees any read past. */
		copy = malloc(i > 0 ? i : 1);
		assert_non_null(copy);
		memcpy(copy, buf, i);
		if (dnsmsg_parse_query(copy, i, &q) != -1)
			fail_msg("prefix of %zu accepted", i);
		if (i >= 12) {
			assert_int_equal(dnsmsg_id(copy, i, &id), 0);
			assert_int_equal(id, 0xbeef);
		} else
			assert_int_equal(dnsmsg_id(copy, i, &id), -1);
		free(copy);
	}
	for (i = 0; i < sizeof(dig_noedns); i++)
		assert_int_equal(dnsmsg_parse_query(dig_noedns, i, &q), -1);
	for (i = 0; i < 29; i++)
		assert_int_equal(dnsmsg_parse_query(dig_edns, i, &q), -1);
}

static void
test_dnsmsg_pointer(void **state)
{
	static const unsigned char	 tails[][8] = {
		{ 0xc0, 0x0c },		/* to itself */
		{ 0x01, 'a', 0xc0, 0x0c },	/* after a label */
		{ 0x01, 'a', 0xc0, 0x00 },
		{ 0x40, 0x00 },		/* extended label type */
		{ 0x80, 0x00 },		/* reserved label type */
	};
	struct dnsmsg_query	 q;
	unsigned char		 buf[64];
	size_t			 i;

	(void)state;
	for (i = 0; i < nitems(tails); i++) {
		memcpy(buf, dig_noedns, 12);
		memcpy(buf + 12, tails[i], 8);
		memcpy(buf + 20, "\x00\x01\x00\x01", 4);
		if (dnsmsg_parse_query(buf, 24, &q) != -1)
			fail_msg("case %zu accepted", i);
	}
}

static void
test_dnsmsg_answer_a(void **state)
{
	static const unsigned char	 want[] = {
		0xf9, 0x08,		/* id */
		0x85, 0x80,		/* QR AA RD RA, NOERROR */
		0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
		0x03, 'W', 'w', 'W', 0x07, 'E', 'x', 'a', 'm', 'p', 'l', 'e',
		0x03, 'C', 'O', 'M', 0x00,	/* as asked, case and all */
		0x00, 0x01, 0x00, 0x01,
		0xc0, 0x0c,		/* the question's name */
		0x00, 0x01, 0x00, 0x01,	/* A IN */
		0x00, 0x01, 0x51, 0x80,	/* 86400 */
		0x00, 0x04, 192, 0, 2, 7
	};
	static const unsigned char	 ip[4] = { 192, 0, 2, 7 };
	struct dnsmsg_query		 q;
	unsigned char			 out[512];
	size_t				 i;

	(void)state;
	assert_int_equal(dnsmsg_parse_query(dig_noedns, sizeof(dig_noedns),
	    &q), 0);
	memset(out, 0xaa, sizeof(out));
	assert_int_equal(dnsmsg_answer(&q, dig_noedns, DNSMSG_RCODE_NOERROR,
	    ip, sizeof(ip), 86400, out, sizeof(out)), sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
	assert_int_equal(out[sizeof(want)], 0xaa);	/* nothing past */

	/* Too small by one byte or more: 0, nothing written past. */
	for (i = 0; i < sizeof(want); i++) {
		memset(out, 0xaa, sizeof(out));
		assert_int_equal(dnsmsg_answer(&q, dig_noedns,
		    DNSMSG_RCODE_NOERROR, ip, sizeof(ip), 86400, out, i), 0);
		assert_int_equal(out[i], 0xaa);
	}
	assert_int_equal(dnsmsg_answer(&q, dig_noedns, DNSMSG_RCODE_NOERROR,
	    ip, sizeof(ip), 86400, out, sizeof(want)), sizeof(want));
}

static void
test_dnsmsg_answer_aaaa(void **state)
{
	static const unsigned char	 want[] = {
		0xe7, 0x9b, 0x85, 0x80,
		0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* no OPT */
		0x07, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0x03, 'o', 'r', 'g',
		0x00, 0x00, 0x1c, 0x00, 0x01,
		0xc0, 0x0c, 0x00, 0x1c, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x3c,	/* 60 */
		0x00, 0x10,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01
	};
	static const unsigned char	 ip6[16] = { 0x20, 0x01, 0x0d, 0xb8,
					    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					    0x01 };
	struct dnsmsg_query		 q;
	unsigned char			 out[512];
	size_t				 i;

	(void)state;
	assert_int_equal(dnsmsg_parse_query(dig_edns, sizeof(dig_edns), &q),
	    0);
	assert_int_equal(dnsmsg_answer(&q, dig_edns, DNSMSG_RCODE_NOERROR,
	    ip6, sizeof(ip6), 60, out, sizeof(out)), sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
	for (i = 0; i < sizeof(want); i++)
		assert_int_equal(dnsmsg_answer(&q, dig_edns,
		    DNSMSG_RCODE_NOERROR, ip6, sizeof(ip6), 60, out, i), 0);
}

/* NXDOMAIN and NODATA: the question, no record; CD is copied. */
static void
test_dnsmsg_answer_empty(void **state)
{
	static const unsigned char	 want[] = {
		0x12, 0x34, 0x85, 0x93,	/* QR AA RD, RA CD NXDOMAIN */
		0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x01, 'x', 0x04, 't', 'e', 's', 't', 0x00,
		0x00, 0x01, 0x00, 0x01
	};
	struct dnsmsg_query		 q;
	unsigned char			 buf[64], out[512];

	(void)state;
	mkquery(buf, 0x1234, "x.test", DNSMSG_TYPE_A);
	buf[3] = 0x30;		/* AD and CD asked; AD is not copied */
	assert_int_equal(dnsmsg_parse_query(buf, sizeof(want), &q), 0);
	assert_int_equal(dnsmsg_answer(&q, buf, DNSMSG_RCODE_NXDOMAIN, NULL,
	    0, 60, out, sizeof(out)), sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
	assert_int_equal(dnsmsg_answer(&q, buf, DNSMSG_RCODE_NXDOMAIN, NULL,
	    0, 60, out, sizeof(want) - 1), 0);

	/* NODATA: NOERROR without a record. */
	assert_int_equal(dnsmsg_answer(&q, buf, DNSMSG_RCODE_NOERROR, NULL,
	    0, 60, out, sizeof(out)), sizeof(want));
	assert_int_equal(out[3], 0x90);
	assert_memory_equal(out + 4, want + 4, sizeof(want) - 4);

	/* REFUSED to the root's NS, RD not asked: not set. */
	mkquery(buf, 0x1234, "", 2);
	buf[2] = 0;
	assert_int_equal(dnsmsg_parse_query(buf, 17, &q), 0);
	assert_int_equal(dnsmsg_answer(&q, buf, DNSMSG_RCODE_REFUSED, NULL,
	    0, 0, out, sizeof(out)), 17);
	assert_memory_equal(out, "\x12\x34\x84\x85\x00\x01\x00\x00\x00\x00"
	    "\x00\x00\x00\x00\x02\x00\x01", 17);
}

/* Arguments that disagree: 0, nothing written. */
static void
test_dnsmsg_answer_disagree(void **state)
{
	static const unsigned char	 ip[16] = { 10, 0, 0, 1 };
	struct dnsmsg_query		 q, zero;
	unsigned char			 buf[64], out[512];
	size_t				 len;

	(void)state;
	len = mkquery(buf, 1, "a.test", DNSMSG_TYPE_A);
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), 0);
	memset(out, 0xaa, sizeof(out));
	/* AAAA bytes to an A question, and lengths that are neither. */
	assert_int_equal(dnsmsg_answer(&q, buf, 0, ip, 16, 1, out,
	    sizeof(out)), 0);
	assert_int_equal(dnsmsg_answer(&q, buf, 0, ip, 5, 1, out,
	    sizeof(out)), 0);
	assert_int_equal(dnsmsg_answer(&q, buf, 0, ip, 0, 1, out,
	    sizeof(out)), 0);
	assert_int_equal(dnsmsg_answer(&q, buf, 0, NULL, 4, 1, out,
	    sizeof(out)), 0);
	/* A record with an error. */
	assert_int_equal(dnsmsg_answer(&q, buf, DNSMSG_RCODE_NXDOMAIN, ip, 4,
	    1, out, sizeof(out)), 0);
	/* rcodes that do not fit the header's four bits. */
	assert_int_equal(dnsmsg_answer(&q, buf, 16, NULL, 0, 1, out,
	    sizeof(out)), 0);
	assert_int_equal(dnsmsg_answer(&q, buf, -1, NULL, 0, 1, out,
	    sizeof(out)), 0);
	/* An IN record to a CHAOS question. */
	q.dq_class = 3;
	assert_int_equal(dnsmsg_answer(&q, buf, 0, ip, 4, 1, out,
	    sizeof(out)), 0);
	/* A query that did not parse. */
	assert_int_equal(dnsmsg_parse_query(buf, 11, &zero), -1);
	assert_int_equal(dnsmsg_answer(&zero, buf, DNSMSG_RCODE_FORMERR, NULL,
	    0, 1, out, sizeof(out)), 0);
	assert_int_equal(out[0], 0xaa);
	/* AAAA bytes to an AAAA question are fine. */
	len = mkquery(buf, 1, "a.test", DNSMSG_TYPE_AAAA);
	assert_int_equal(dnsmsg_parse_query(buf, len, &q), 0);
	assert_int_equal(dnsmsg_answer(&q, buf, 0, ip, 16, 1, out,
	    sizeof(out)), len + 28);
	assert_int_equal(dnsmsg_answer(&q, buf, 0, ip, 4, 1, out,
	    sizeof(out)), 0);
}

static void
test_dnsmsg_error(void **state)
{
	unsigned char	 out[16];

	(void)state;
	memset(out, 0xaa, sizeof(out));
	assert_int_equal(dnsmsg_error(0xabcd, DNSMSG_RCODE_FORMERR, out,
	    sizeof(out)), 12);
	assert_memory_equal(out, "\xab\xcd\x80\x81\x00\x00\x00\x00\x00\x00"
	    "\x00\x00", 12);
	assert_int_equal(out[12], 0xaa);
	assert_int_equal(dnsmsg_error(1, DNSMSG_RCODE_NOTIMP, out, 12), 12);
	assert_int_equal(out[3], 0x84);
	assert_int_equal(dnsmsg_error(1, DNSMSG_RCODE_REFUSED, out, 11), 0);
	assert_int_equal(dnsmsg_error(1, 16, out, sizeof(out)), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dnsmsg_dig),
		cmocka_unit_test(test_dnsmsg_names),
		cmocka_unit_test(test_dnsmsg_header),
		cmocka_unit_test(test_dnsmsg_truncated),
		cmocka_unit_test(test_dnsmsg_pointer),
		cmocka_unit_test(test_dnsmsg_answer_a),
		cmocka_unit_test(test_dnsmsg_answer_aaaa),
		cmocka_unit_test(test_dnsmsg_answer_empty),
		cmocka_unit_test(test_dnsmsg_answer_disagree),
		cmocka_unit_test(test_dnsmsg_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
