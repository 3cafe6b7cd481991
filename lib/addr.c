/*
 * addr.c: IP literals in every spelling, CIDR ranges, special ranges.
 *
 * A host name in a URL or a CONNECT line may be an IPv4 address written as
 * one decimal number (2130706433), in hex (0x7f.1), in octal (0177.0.0.1)
 * or with fewer than four parts (127.1): libc's inet_aton and every
 * browser read them so, hence so must we, or a policy that refuses
 * 127.0.0.1 lets 0x7f000001 through.  addr_parse() reads them all, strictly
 * and without libc's leniency (inet_aton stops at white space and ignores
 * what follows).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/addr.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

/* Reads one part of an IPv4 literal into *val; -1 if it is not a number. */
static int
addr_parse_part(const char *s, size_t len, uint64_t *val)
{
	uint64_t	 v = 0;
	unsigned int	 base = 10, d;
	size_t		 i = 0;

	if (len == 0)
		return -1;
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (len >= 2 && s[0] == '0') {
		base = 8;
		i = 1;
	}
	for (; i < len; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned int)(s[i] - '0');
		else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned int)(s[i] - 'a' + 10);
		else if (base == 16 && s[i] >= 'A' && s[i] <= 'F')
			d = (unsigned int)(s[i] - 'A' + 10);
		else
			return -1;
		if (d >= base)
			return -1;
		v = v * base + d;
		if (v > 0xffffffffULL)
			return -1;
	}
	*val = v;
	return 0;
}

/* Reads an IPv4 literal in any of the inet_aton spellings. */
static int
addr_parse4(const char *s, size_t len, struct addr *a)
{
	uint64_t	 part[4], v;
	size_t		 n = 0, start = 0, i;
	uint32_t	 ip;

	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		if (n == 4)
			return -1;
		if (addr_parse_part(s + start, i - start, &part[n]) == -1)
			return -1;
		n++;
		start = i + 1;
	}
	/* All parts but the last are bytes; the last fills what is left. */
	for (i = 0; i + 1 < n; i++)
		if (part[i] > 0xff)
			return -1;
	v = part[n - 1];
	if (v > (0xffffffffULL >> (8 * (n - 1))))
		return -1;
	ip = (uint32_t)v;
	for (i = 0; i + 1 < n; i++)
		ip |= (uint32_t)part[i] << (8 * (3 - i));

	memset(a, 0, sizeof(*a));
	a->a_family = AF_INET;
	a->a_bytes[0] = (uint8_t)(ip >> 24);
	a->a_bytes[1] = (uint8_t)(ip >> 16);
	a->a_bytes[2] = (uint8_t)(ip >> 8);
	a->a_bytes[3] = (uint8_t)ip;
	return 0;
}

/*
 * Parses len bytes of s as an IP literal: IPv4 in any spelling, or IPv6
 * with or without brackets (no zone).  IPv4-mapped IPv6 stays IPv6 here;
 * callers that compare destinations use addr_unmap().  Returns 0, or -1 if
 * s is not a literal.
 */
int
addr_parse(const char *s, size_t len, struct addr *a)
{
	char	 buf[64];

	if (len == 0 || memchr(s, '\0', len) != NULL)
		return -1;
	if (memchr(s, ':', len) == NULL)
		return addr_parse4(s, len, a);

	if (s[0] == '[') {
		if (len < 2 || s[len - 1] != ']')
			return -1;
		s++;
		len -= 2;
	}
	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET6, buf, a->a_bytes) != 1)
		return -1;
	a->a_family = AF_INET6;
	return 0;
}

/*
 * Says whether a dotted name's last label is a number (decimal, or hex
 * with 0x): such a name is read as an IPv4 literal by URL parsers, so it is
 * either a valid literal or refused, never looked up as a name.
 */
bool
addr_looks_numeric(const char *s, size_t len)
{
	const char	*dot;
	size_t		 i = 0;

	if (len > 0 && s[len - 1] == '.')
		len--;
	if ((dot = memrchr(s, '.', len)) != NULL) {
		len -= (size_t)(dot + 1 - s);
		s = dot + 1;
	}
	if (len == 0)
		return false;
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (i = 2; i < len; i++)
			if (strchr("0123456789abcdefABCDEF", s[i]) == NULL)
				return false;
		return true;
	}
	for (; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static const uint8_t mapped_prefix[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

/* Turns an IPv4-mapped IPv6 address (::ffff:a.b.c.d) into IPv4. */
void
addr_unmap(struct addr *a)
{
	if (a->a_family != AF_INET6 ||
	    memcmp(a->a_bytes, mapped_prefix, sizeof(mapped_prefix)) != 0)
		return;
	memmove(a->a_bytes, a->a_bytes + 12, 4);
	memset(a->a_bytes + 4, 0, 12);
	a->a_family = AF_INET;
}

bool
addr_equal(const struct addr *a, const struct addr *b)
{
	size_t	 n = a->a_family == AF_INET ? 4 : 16;

	return a->a_family == b->a_family &&
	    memcmp(a->a_bytes, b->a_bytes, n) == 0;
}

/* Writes the canonical text form of a into buf; returns buf. */
const char *
addr_str(const struct addr *a, char *buf, size_t len)
{
	if (inet_ntop(a->a_family, a->a_bytes, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
	return buf;
}

/* Ranges a proxy must refuse unless an allow_cidrs entry covers them. */
static const struct special {
	const char	*sp_cidr;
	const char	*sp_what;
	int		 sp_embedded;	/* byte offset of an IPv4 inside, or -1 */
} specials[] = {
	{ "0.0.0.0/8", "\"this network\" (0.0.0.0/8)", -1 },
	{ "10.0.0.0/8", "private (RFC 1918)", -1 },
	{ "100.64.0.0/10", "shared address space, CGNAT (RFC 6598)", -1 },
	{ "127.0.0.0/8", "loopback", -1 },
	{ "169.254.0.0/16", "link-local (incl. cloud metadata)", -1 },
	{ "172.16.0.0/12", "private (RFC 1918)", -1 },
	{ "192.0.0.0/24", "IETF protocol assignments", -1 },
	{ "192.0.2.0/24", "documentation (TEST-NET-1)", -1 },
	{ "192.88.99.0/24", "6to4 relay anycast", -1 },
	{ "192.168.0.0/16", "private (RFC 1918)", -1 },
	{ "198.18.0.0/15", "benchmarking (RFC 2544)", -1 },
	{ "198.51.100.0/24", "documentation (TEST-NET-2)", -1 },
	{ "203.0.113.0/24", "documentation (TEST-NET-3)", -1 },
	{ "224.0.0.0/4", "multicast", -1 },
	{ "255.255.255.255/32", "broadcast", -1 },
	{ "240.0.0.0/4", "reserved (240.0.0.0/4)", -1 },
	{ "::/128", "unspecified", -1 },
	{ "::1/128", "IPv6 loopback", -1 },
	{ "::/96", "IPv4-compatible IPv6", -1 },
	{ "64:ff9b:1::/48", "local-use NAT64 (RFC 8215)", -1 },
	{ "64:ff9b::/96", "NAT64", 12 },
	{ "100::/64", "discard-only (RFC 6666)", -1 },
	{ "2001::/32", "Teredo tunnel", -1 },
	{ "2001:db8::/32", "IPv6 documentation", -1 },
	{ "2002::/16", "6to4", 2 },
	{ "fc00::/7", "unique local (ULA)", -1 },
	{ "fe80::/10", "IPv6 link-local", -1 },
	{ "fec0::/10", "IPv6 site-local (deprecated)", -1 },
	{ "ff00::/8", "IPv6 multicast", -1 },
};

static struct cidr	 addr_table[nitems(specials)];

/* Parses the special ranges once, whichever thread asks first. */
static void
addr_table_make(void)
{
	char	*cause;
	size_t	 i;

	for (i = 0; i < nitems(specials); i++)
		if (addr_cidr_parse(specials[i].sp_cidr, &addr_table[i],
		    &cause) == -1)
			abort();	/* the table is wrong */
}

/*
 * Returns what special range a belongs to ("loopback", "private (RFC
 * 1918)", ...), or NULL for an ordinary public address.  NAT64 and 6to4
 * addresses are judged by the IPv4 address they carry.
 */
const char *
addr_special(const struct addr *a)
{
	static pthread_once_t	 once = PTHREAD_ONCE_INIT;
	struct addr		 inner;
	const char		*what;
	size_t			 i;

	(void)pthread_once(&once, addr_table_make);
	if (a->a_family == AF_INET6 &&
	    memcmp(a->a_bytes, mapped_prefix, sizeof(mapped_prefix)) == 0)
		return "IPv4-mapped IPv6";
	for (i = 0; i < nitems(specials); i++) {
		if (!addr_cidr_contains(&addr_table[i], a))
			continue;
		if (specials[i].sp_embedded < 0)
			return specials[i].sp_what;
		memset(&inner, 0, sizeof(inner));
		inner.a_family = AF_INET;
		memcpy(inner.a_bytes, a->a_bytes + specials[i].sp_embedded, 4);
		if ((what = addr_special(&inner)) != NULL)
			return what;
		return NULL;
	}
	return NULL;
}

/* Clears the bits of a past prefix. */
static void
addr_mask(struct addr *a, int prefix)
{
	int	 i, n = a->a_family == AF_INET ? 4 : 16;

	for (i = 0; i < n; i++) {
		if (prefix >= 8 * (i + 1))
			continue;
		if (prefix <= 8 * i)
			a->a_bytes[i] = 0;
		else
			a->a_bytes[i] &= (uint8_t)(0xff << (8 - (prefix - 8 * i)));
	}
}

/*
 * Parses "ADDR/PREFIX" or a single address (a /32 or /128).  IPv4 must be
 * dotted decimal here, and IPv4-mapped ranges are refused (addresses are
 * unmapped before they are compared).  Host bits must be zero.  On error returns -1 and sets *cause (caller frees).
 */
int
addr_cidr_parse(const char *s, struct cidr *c, char **cause)
{
	char		 buf[64], *slash, *end;
	struct addr	 a, masked;
	long		 prefix;
	int		 max;

	*cause = NULL;
	if (strlen(s) >= sizeof(buf)) {
		xasprintf(cause, "too long");
		return -1;
	}
	memcpy(buf, s, strlen(s) + 1);
	if ((slash = strchr(buf, '/')) != NULL)
		*slash++ = '\0';

	memset(&a, 0, sizeof(a));
	if (inet_pton(AF_INET, buf, a.a_bytes) == 1)
		a.a_family = AF_INET;
	else if (inet_pton(AF_INET6, buf, a.a_bytes) == 1)
		a.a_family = AF_INET6;
	else {
		xasprintf(cause, "not an IP address (IPv4 as a.b.c.d, "
		    "IPv6 as in RFC 4291, then an optional /prefix)");
		return -1;
	}
	max = a.a_family == AF_INET ? 32 : 128;
	prefix = max;
	if (slash != NULL) {
		if (*slash < '0' || *slash > '9' ||
		    (prefix = strtol(slash, &end, 10), *end != '\0') ||
		    prefix > max || (slash[0] == '0' && slash[1] != '\0')) {
			xasprintf(cause, "bad prefix length \"%s\" (0 to %d)",
			    slash, max);
			return -1;
		}
	}
	masked = a;
	addr_mask(&masked, (int)prefix);
	if (!addr_equal(&masked, &a)) {
		char	 text[ADDR_STRLEN];

		xasprintf(cause, "host bits set; did you mean %s/%ld?",
		    addr_str(&masked, text, sizeof(text)), prefix);
		return -1;
	}
	if (a.a_family == AF_INET6 && prefix >= 96 &&
	    memcmp(a.a_bytes, mapped_prefix, sizeof(mapped_prefix)) == 0) {
		/* Mapped addresses are compared as IPv4 everywhere. */
		xasprintf(cause, "an IPv4-mapped range; write it as IPv4");
		return -1;
	}
	c->c_addr = a;
	c->c_prefix = (int)prefix;
	return 0;
}

/* Says whether a lies in c; an IPv4-mapped a is judged as IPv4. */
bool
addr_cidr_contains(const struct cidr *c, const struct addr *a)
{
	struct addr	 b = *a;

	if (c->c_addr.a_family == AF_INET)
		addr_unmap(&b);
	if (b.a_family != c->c_addr.a_family)
		return false;
	addr_mask(&b, c->c_prefix);
	return addr_equal(&b, &c->c_addr);
}

/*
 * The intersection of two ranges is the narrower one when one holds the
 * other, and empty otherwise.  Returns whether it is non-empty.
 */
bool
addr_cidr_intersect(const struct cidr *a, const struct cidr *b,
    struct cidr *out)
{
	if (a->c_addr.a_family != b->c_addr.a_family)
		return false;
	if (a->c_prefix >= b->c_prefix && addr_cidr_contains(b, &a->c_addr)) {
		*out = *a;
		return true;
	}
	if (b->c_prefix >= a->c_prefix && addr_cidr_contains(a, &b->c_addr)) {
		*out = *b;
		return true;
	}
	return false;
}

/* Writes c as "ADDR/PREFIX" into buf; returns buf. */
const char *
addr_cidr_str(const struct cidr *c, char *buf, size_t len)
{
	char	 text[ADDR_STRLEN];

	snprintf(buf, len, "%s/%d", addr_str(&c->c_addr, text, sizeof(text)),
	    c->c_prefix);
	return buf;
}
