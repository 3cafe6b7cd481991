/*
 * fuzz_addr.c: IP literals (addr_parse, in every inet_aton spelling and
 * IPv6 with or without brackets) and CIDR ranges (addr_cidr_parse) on
 * arbitrary bytes, as they come in host names, SOCKS5 requests and
 * allow_cidrs.  Checks: an accepted literal means what the C library
 * (or, for a bare "0x", a browser) reads in it, and its canonical text parses back to it; a range prints
 * and parses back, holds its own address and is its own intersection;
 * and no loopback, private, link-local or multicast address, nor one
 * hidden in IPv4-mapped, NAT64 or 6to4 form, is called ordinary.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/addr.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Whether an IPv4 address is one a proxy must never reach by default. */
static bool
v4_special(const uint8_t *b)
{
	return b[0] == 0 || b[0] == 10 || b[0] == 127 || b[0] >= 224 ||
	    (b[0] == 169 && b[1] == 254) ||
	    (b[0] == 172 && (b[1] & 0xf0) == 16) ||
	    (b[0] == 192 && b[1] == 168) ||
	    (b[0] == 100 && (b[1] & 0xc0) == 64);
}

/* Aborts if addr_special calls an address that must be special NULL. */
static void
check_special(const struct addr *a)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t zero[12];
	static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };
	const uint8_t	*b = a->a_bytes;
	bool		 must;

	if (a->a_family == AF_INET)
		must = v4_special(b);
	else
		must = memcmp(b, mapped, 12) == 0 ||
		    (memcmp(b, nat64, 12) == 0 && v4_special(b + 12)) ||
		    (b[0] == 0x20 && b[1] == 0x02 && v4_special(b + 2)) ||
		    (b[0] & 0xfe) == 0xfc || b[0] == 0xff ||
		    (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) ||
		    memcmp(b, zero, 12) == 0;	/* ::/96 holds :: and ::1 */
	if (must && addr_special(a) == NULL)
		abort();	/* a private address passes as public */
}

/*
 * Copies len bytes of s to buf as a string, with each part that is a
 * bare "0x" written "0": browsers (the WHATWG URL parser) read it as zero
 * and so do we, where inet_aton refuses it.
 */
static void
bare_hex_zero(char *buf, const char *s, size_t len)
{
	size_t	 i, o = 0;

	for (i = 0; i < len; i++) {
		if ((i == 0 || s[i - 1] == '.') && i + 1 < len &&
		    s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X') &&
		    (i + 2 == len || s[i + 2] == '.')) {
			buf[o++] = '0';
			i++;
			continue;
		}
		buf[o++] = s[i];
	}
	buf[o] = '\0';
}

static void
check_addr(const char *s, size_t len)
{
	struct addr	 a, back, un;
	struct in_addr	 in;
	char		 text[ADDR_STRLEN], buf[300];
	const char	*v6 = s;
	size_t		 v6len = len;

	if (addr_parse(s, len, &a) != 0)
		return;
	if (a.a_family != AF_INET && a.a_family != AF_INET6)
		abort();
	addr_str(&a, text, sizeof(text));
	if (addr_parse(text, strlen(text), &back) != 0 ||
	    !addr_equal(&a, &back))
		abort();	/* canonical text is another address */

	/* The C library reads the same address in the same bytes. */
	if (len >= sizeof(buf))
		abort();	/* the caller keeps inputs shorter */
	if (a.a_family == AF_INET) {
		bare_hex_zero(buf, s, len);
		if (inet_aton(buf, &in) == 0 ||
		    memcmp(&in, a.a_bytes, 4) != 0)
			abort();
	} else {
		if (s[0] == '[') {
			v6++;
			v6len -= 2;
		}
		memcpy(buf, v6, v6len);
		buf[v6len] = '\0';
		if (inet_pton(AF_INET6, buf, back.a_bytes) != 1 ||
		    memcmp(back.a_bytes, a.a_bytes, 16) != 0)
			abort();
	}

	check_special(&a);
	un = a;
	addr_unmap(&un);
	if (un.a_family == AF_INET && a.a_family == AF_INET6 &&
	    memcmp(un.a_bytes, a.a_bytes + 12, 4) != 0)
		abort();
	check_special(&un);
}

static void
check_cidr(const char *s)
{
	struct cidr	 c, back, both;
	char		 text[ADDR_STRLEN + 8], *cause;
	int		 max;

	if (addr_cidr_parse(s, &c, &cause) != 0) {
		if (cause == NULL)
			abort();
		free(cause);
		return;
	}
	max = c.c_addr.a_family == AF_INET ? 32 : 128;
	if (cause != NULL || c.c_prefix < 0 || c.c_prefix > max)
		abort();
	addr_cidr_str(&c, text, sizeof(text));
	if (addr_cidr_parse(text, &back, &cause) != 0 ||
	    back.c_prefix != c.c_prefix ||
	    !addr_equal(&back.c_addr, &c.c_addr))
		abort();	/* a range prints as another */
	if (!addr_cidr_contains(&c, &c.c_addr))
		abort();
	if (!addr_cidr_intersect(&c, &c, &both) ||
	    both.c_prefix != c.c_prefix || !addr_equal(&both.c_addr, &c.c_addr))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*s;

	if (size > 256)
		return 0;
	/* A heap copy, so that ASan sees a read past the end. */
	if ((s = malloc(size + 1)) == NULL)
		abort();
	memcpy(s, data, size);
	check_addr(s, size);
	s[size] = '\0';
	if (strlen(s) == size)
		check_cidr(s);
	free(s);
	return 0;
}
