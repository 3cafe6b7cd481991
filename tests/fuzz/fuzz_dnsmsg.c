/*
 * fuzz_dnsmsg.c: the DNS query parser on arbitrary bytes, and every kind
 * of answer to what it accepts.  An accepted question lies within the
 * bytes given, its name is within the limits and in the form promised,
 * each answer has the length its kind implies or none when it cannot fit,
 * and an answer read back as a query asks the same question.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/dnsmsg.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const unsigned char	 ip[16] = { 0x20, 0x01, 0x0d, 0xb8 };

/* Aborts unless the name is lower case labels of the allowed bytes. */
static void
check_name(const char *name)
{
	size_t	 i, len, label = 0;

	if ((len = strlen(name)) > DNSMSG_NAME_MAX)
		abort();
	for (i = 0; i < len; i++) {
		if (name[i] == '.') {
			if (label == 0 || i == len - 1)
				abort();
			label = 0;
			continue;
		}
		if (++label > DNSMSG_LABEL_MAX)
			abort();
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9') ||
		    name[i] == '-' || name[i] == '_'))
			abort();
	}
}

/* The answer of alen address bytes: want long, and 0 one byte short. */
static void
check_answer(const struct dnsmsg_query *q, const uint8_t *msg, int rcode,
    size_t alen, size_t want)
{
	unsigned char	 out[512];
	size_t		 len;

	len = dnsmsg_answer(q, msg, rcode, alen ? ip : NULL, alen, 300, out,
	    sizeof(out));
	if (len != want)
		abort();
	if (len == 0)
		return;
	if (memcmp(out + 12, msg + 12, q->dq_end - 12) != 0 ||
	    (out[2] & 0x80) == 0 || (out[3] & 0x0f) != rcode)
		abort();
	if (dnsmsg_answer(q, msg, rcode, alen ? ip : NULL, alen, 300, out,
	    len - 1) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dnsmsg_query	 q, again;
	unsigned char		 out[512];
	size_t			 len, a, aaaa;
	uint16_t		 id;

	if (dnsmsg_parse_query(data, size, &q) == -1) {
		if (q.dq_end != 0 || q.dq_name[0] != '\0')
			abort();	/* zeroed */
		if (dnsmsg_id(data, size, &id) == 0 &&
		    dnsmsg_error(id, DNSMSG_RCODE_FORMERR, out,
		    sizeof(out)) != 12)
			abort();
		return 0;
	}
	if (q.dq_end > size || q.dq_end < 12 + 5 ||
	    q.dq_end > 12 + DNSMSG_NAME_MAX + 2 + 4)
		abort();
	check_name(q.dq_name);
	if (dnsmsg_id(data, size, &id) != 0 || id != q.dq_id)
		abort();

	a = aaaa = 0;
	if (q.dq_class == DNSMSG_CLASS_IN && q.dq_type == DNSMSG_TYPE_A)
		a = q.dq_end + 16;
	if (q.dq_class == DNSMSG_CLASS_IN && q.dq_type == DNSMSG_TYPE_AAAA)
		aaaa = q.dq_end + 28;
	check_answer(&q, data, DNSMSG_RCODE_NOERROR, 4, a);
	check_answer(&q, data, DNSMSG_RCODE_NOERROR, 16, aaaa);
	check_answer(&q, data, DNSMSG_RCODE_NOERROR, 0, q.dq_end);
	check_answer(&q, data, DNSMSG_RCODE_NXDOMAIN, 0, q.dq_end);
	check_answer(&q, data, DNSMSG_RCODE_REFUSED, 0, q.dq_end);
	check_answer(&q, data, DNSMSG_RCODE_NXDOMAIN, 4, 0);

	/* An answer is never taken for a query; made one, it asks the same. */
	len = dnsmsg_answer(&q, data, DNSMSG_RCODE_NOERROR, NULL, 0, 0, out,
	    sizeof(out));
	if (dnsmsg_parse_query(out, len, &again) != -1)
		abort();
	out[2] &= 0x7f;
	if (dnsmsg_parse_query(out, len, &again) != 0 ||
	    again.dq_end != q.dq_end || again.dq_type != q.dq_type ||
	    again.dq_class != q.dq_class ||
	    strcmp(again.dq_name, q.dq_name) != 0)
		abort();
	return 0;
}
