/*
 * dnsmsg.c: the few DNS messages a stub resolver inside the sandbox needs.
 * It reads one plain query and writes its answer from policy; nothing is
 * forwarded, so nothing here has to understand more than a question.
 *
 * The parser is strict on purpose: what it accepts is one question whose
 * name is letters, digits, '-' and '_' in uncompressed labels, and what it
 * hands back is that name lower case, the form host_parse() gives, so a
 * policy decision sees the same name whatever the client's spelling
 * (0x20 case randomisation included).  The answer copies the question's
 * bytes as received, since a client that randomised case checks them.
 *
 * An answer is at most 12 + 259 + 28 bytes, under the 512 of plain UDP,
 * so it never needs TC.  EDNS is not spoken: the query's OPT record is
 * not echoed, which RFC 6891 7 allows; the client falls back.
 */
#include <string.h>

#include "wire/dnsmsg.h"

static uint16_t
dnsmsg_get16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
dnsmsg_put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

/* Writes a header: the id, flags and the four counts. */
static void
dnsmsg_header(unsigned char *p, uint16_t id, uint16_t flags, uint16_t qd,
    uint16_t an)
{
	dnsmsg_put16(p, id);
	dnsmsg_put16(p + 2, flags);
	dnsmsg_put16(p + 4, qd);
	dnsmsg_put16(p + 6, an);
	dnsmsg_put16(p + 8, 0);
	dnsmsg_put16(p + 10, 0);
}

/* Returns the byte lower case if it may stand in a label, else 0. */
static char
dnsmsg_label_byte(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return (char)(ch - 'A' + 'a');
	if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	    ch == '-' || ch == '_')
		return (char)ch;
	return 0;
}

/*
 * Puts the id of the len bytes at msg in *id, for an error answer to a
 * message dnsmsg_parse_query() refused.  Returns 0, or -1 when there is
 * nothing to answer: no whole header, or a response (answering those
 * would let two servers answer each other for ever).
 */
int
dnsmsg_id(const unsigned char *msg, size_t len, uint16_t *id)
{
	if (len < DNSMSG_HEADER_LEN ||
	    (dnsmsg_get16(msg + 2) & DNSMSG_F_QR) != 0)
		return -1;
	*id = dnsmsg_get16(msg);
	return 0;
}

/*
 * Parses the len bytes at msg as a standard query with one question into
 * q.  Returns 0, or -1 with q zeroed for anything else: a response, an
 * opcode other than QUERY, other than one question, records in the answer
 * or authority section, more than DNSMSG_ARCOUNT_MAX additional records,
 * a compression pointer or another label type, a label over 63 bytes or
 * with a byte other than letters, digits, '-' and '_', a name over 253
 * characters dotted, or a message that ends inside the question.  Bytes
 * past the question (the OPT record) are not read.
 */
int
dnsmsg_parse_query(const unsigned char *msg, size_t len,
    struct dnsmsg_query *q)
{
	size_t		 off, n, i, namelen = 0;
	char		 ch;

	memset(q, 0, sizeof(*q));
	if (len < DNSMSG_HEADER_LEN)
		return -1;
	q->dq_id = dnsmsg_get16(msg);
	q->dq_flags = dnsmsg_get16(msg + 2);
	if ((q->dq_flags & (DNSMSG_F_QR | DNSMSG_F_OPCODE)) != 0)
		goto fail;
	if (dnsmsg_get16(msg + 4) != 1 || dnsmsg_get16(msg + 6) != 0 ||
	    dnsmsg_get16(msg + 8) != 0 ||
	    dnsmsg_get16(msg + 10) > DNSMSG_ARCOUNT_MAX)
		goto fail;

	off = DNSMSG_HEADER_LEN;
	for (;;) {
		if (off >= len)
			goto fail;
		n = msg[off++];
		if (n == 0)
			break;
		/* 0xc0 is a pointer, 0x40 and 0x80 are other label types. */
		if (n > DNSMSG_LABEL_MAX || n > len - off)
			goto fail;
		if (namelen + (namelen > 0) + n > DNSMSG_NAME_MAX)
			goto fail;
		if (namelen > 0)
			q->dq_name[namelen++] = '.';
		for (i = 0; i < n; i++) {
			if ((ch = dnsmsg_label_byte(msg[off + i])) == 0)
				goto fail;
			q->dq_name[namelen++] = ch;
		}
		off += n;
	}
	q->dq_name[namelen] = '\0';
	if (len - off < 4)
		goto fail;
	q->dq_type = dnsmsg_get16(msg + off);
	q->dq_class = dnsmsg_get16(msg + off + 2);
	q->dq_end = off + 4;
	return 0;
fail:
	memset(q, 0, sizeof(*q));
	return -1;
}

/*
 * Writes into out (outlen bytes) the answer to q, parsed from msg: the
 * header with QR, AA, RA, rcode and the query's opcode, RD and CD (RFC
 * 4035 3.2.2 wants CD copied); the question as received; and when addr is
 * not NULL one record, named by a pointer to the question, of type A
 * (alen 4) or AAAA (alen 16), class IN, with ttl.  The record must match
 * the question's type and class IN, and comes with NOERROR only.  Returns
 * the length written, or 0 when it does not fit or the arguments disagree.
 */
size_t
dnsmsg_answer(const struct dnsmsg_query *q, const unsigned char *msg,
    int rcode, const void *addr, size_t alen, uint32_t ttl,
    unsigned char *out, size_t outlen)
{
	size_t		 need;
	uint16_t	 flags, type;

	/* The shortest question is the root (1) with type and class (4). */
	if (q->dq_end < DNSMSG_HEADER_LEN + 5 ||
	    q->dq_end > DNSMSG_HEADER_LEN + DNSMSG_NAME_MAX + 2 + 4)
		return 0;
	if (rcode < 0 || rcode > DNSMSG_F_RCODE)
		return 0;
	if (addr == NULL && alen != 0)
		return 0;
	need = q->dq_end;
	if (addr != NULL) {
		if (alen == 4)
			type = DNSMSG_TYPE_A;
		else if (alen == 16)
			type = DNSMSG_TYPE_AAAA;
		else
			return 0;
		if (q->dq_type != type || q->dq_class != DNSMSG_CLASS_IN ||
		    rcode != DNSMSG_RCODE_NOERROR)
			return 0;
		need += 2 + 2 + 2 + 4 + 2 + alen;
	}
	if (need > outlen)
		return 0;

	flags = DNSMSG_F_QR | DNSMSG_F_AA | DNSMSG_F_RA | (uint16_t)rcode |
	    (q->dq_flags & (DNSMSG_F_OPCODE | DNSMSG_F_RD | DNSMSG_F_CD));
	dnsmsg_header(out, q->dq_id, flags, 1, addr != NULL);
	memcpy(out + DNSMSG_HEADER_LEN, msg + DNSMSG_HEADER_LEN,
	    q->dq_end - DNSMSG_HEADER_LEN);
	if (addr == NULL)
		return need;

	out += q->dq_end;
	dnsmsg_put16(out, 0xc000 | DNSMSG_HEADER_LEN);	/* the question */
	dnsmsg_put16(out + 2, type);
	dnsmsg_put16(out + 4, DNSMSG_CLASS_IN);
	dnsmsg_put16(out + 6, (uint16_t)(ttl >> 16));
	dnsmsg_put16(out + 8, (uint16_t)ttl);
	dnsmsg_put16(out + 10, (uint16_t)alen);
	memcpy(out + 12, addr, alen);
	return need;
}

/*
 * Writes into out (outlen bytes) an answer with rcode to a message that
 * did not parse and whose id dnsmsg_id() gave: a header with QR, RA and
 * rcode, no question.  Returns its length, or 0 when it does not fit or
 * rcode is not one.
 */
size_t
dnsmsg_error(uint16_t id, int rcode, unsigned char *out, size_t outlen)
{
	if (rcode < 0 || rcode > DNSMSG_F_RCODE ||
	    outlen < DNSMSG_HEADER_LEN)
		return 0;
	dnsmsg_header(out, id, DNSMSG_F_QR | DNSMSG_F_RA | (uint16_t)rcode,
	    0, 0);
	return DNSMSG_HEADER_LEN;
}
