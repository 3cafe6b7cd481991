/*
 * dnsmsg.h: DNS queries in, answers out, for a stub that answers from
 * policy and never forwards.
 */
#ifndef CORDON_DNSMSG_H
#define CORDON_DNSMSG_H

#include <stddef.h>
#include <stdint.h>

#define DNSMSG_NAME_MAX		253	/* dotted, no trailing dot */
#define DNSMSG_LABEL_MAX	63
#define DNSMSG_HEADER_LEN	12
#define DNSMSG_ARCOUNT_MAX	1	/* one EDNS OPT record */

#define DNSMSG_TYPE_A		1
#define DNSMSG_TYPE_AAAA	28
#define DNSMSG_CLASS_IN		1

#define DNSMSG_RCODE_NOERROR	0
#define DNSMSG_RCODE_FORMERR	1
#define DNSMSG_RCODE_SERVFAIL	2
#define DNSMSG_RCODE_NXDOMAIN	3
#define DNSMSG_RCODE_NOTIMP	4
#define DNSMSG_RCODE_REFUSED	5

/* Header flag bits (RFC 1035 4.1.1; CD from RFC 4035). */
#define DNSMSG_F_QR		0x8000
#define DNSMSG_F_OPCODE		0x7800
#define DNSMSG_F_AA		0x0400
#define DNSMSG_F_TC		0x0200
#define DNSMSG_F_RD		0x0100
#define DNSMSG_F_RA		0x0080
#define DNSMSG_F_CD		0x0010
#define DNSMSG_F_RCODE		0x000f

struct dnsmsg_query {
	uint16_t	 dq_id;
	uint16_t	 dq_flags;	/* the header's flags as received */
	uint16_t	 dq_type;	/* QTYPE */
	uint16_t	 dq_class;	/* QCLASS */
	/* Lower case, no trailing dot; "" is the root. */
	char		 dq_name[DNSMSG_NAME_MAX + 1];
	size_t		 dq_end;	/* offset past the question */
};

int	 dnsmsg_id(const unsigned char *, size_t, uint16_t *);
int	 dnsmsg_parse_query(const unsigned char *, size_t,
	    struct dnsmsg_query *);
size_t	 dnsmsg_answer(const struct dnsmsg_query *, const unsigned char *,
	    int, const void *, size_t, uint32_t, unsigned char *, size_t);
size_t	 dnsmsg_error(uint16_t, int, unsigned char *, size_t);

#endif
