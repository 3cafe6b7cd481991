/*
 * capture.c: where a captured connection was going.  The sandbox's
 * resolver (resolver.c) answers a name the policy allows with an address
 * of its own, from a pool no real host has (CAPTURE_POOL4, CAPTURE_POOL6:
 * the same index in each); the capture's rules (sandbox/netcap.c) send
 * every TCP connection bound off the sandbox to the bridge; and the
 * bridge asks capture_target() where each one was going: a pool address
 * gives back its name, any other address stays a literal, for the proxy
 * to decide as it decides literals.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/xmalloc.h"
#include "sandbox/capture.h"

#define CAPTURE_SLOTS	(1U << 17)	/* the hash: twice the pool */

struct capture {
	char		**cp_names;	/* by index, 1 to CAPTURE_NAMES */
	uint32_t	 cp_count;
	uint32_t	*cp_slots;	/* open addressing: index, 0 empty */
};

struct capture *
capture_new(void)
{
	struct capture	*cp;

	cp = xcalloc(1, sizeof(*cp));
	cp->cp_names = xcalloc(CAPTURE_NAMES + 1, sizeof(*cp->cp_names));
	cp->cp_slots = xcalloc(CAPTURE_SLOTS, sizeof(*cp->cp_slots));
	return cp;
}

void
capture_free(struct capture *cp)
{
	uint32_t	 i;

	if (cp == NULL)
		return;
	for (i = 1; i <= cp->cp_count; i++)
		free(cp->cp_names[i]);
	free(cp->cp_names);
	free(cp->cp_slots);
	free(cp);
}

/* FNV-1a of a name. */
static uint32_t
capture_hash(const char *name)
{
	uint32_t	 h = 2166136261U;

	for (; *name != '\0'; name++)
		h = (h ^ (uint8_t)*name) * 16777619U;
	return h;
}

/*
 * The index of name (lower case, as the resolver parsed it), given one
 * when it has none.  Returns 1 to CAPTURE_NAMES, or 0 when the pool is
 * full.
 */
uint32_t
capture_index(struct capture *cp, const char *name)
{
	uint32_t	 s = capture_hash(name) & (CAPTURE_SLOTS - 1), i;

	while ((i = cp->cp_slots[s]) != 0) {
		if (strcmp(cp->cp_names[i], name) == 0)
			return i;
		s = (s + 1) & (CAPTURE_SLOTS - 1);
	}
	if (cp->cp_count == CAPTURE_NAMES)
		return 0;
	i = ++cp->cp_count;
	cp->cp_names[i] = xstrdup(name);
	cp->cp_slots[s] = i;
	return i;
}

/* The pool's addresses of index i: 4 bytes in a4, 16 in a6. */
void
capture_addrs(uint32_t i, uint8_t a4[4], uint8_t a6[16])
{
	static const uint8_t	 p6[16] = CAPTURE_POOL6;
	uint32_t		 v4 = CAPTURE_POOL4 + i;

	a4[0] = (uint8_t)(v4 >> 24);
	a4[1] = (uint8_t)(v4 >> 16);
	a4[2] = (uint8_t)(v4 >> 8);
	a4[3] = (uint8_t)v4;
	memcpy(a6, p6, 16);
	a6[12] = (uint8_t)(i >> 24);
	a6[13] = (uint8_t)(i >> 16);
	a6[14] = (uint8_t)(i >> 8);
	a6[15] = (uint8_t)i;
}

/* The name a pool address stands for, or NULL. */
static const char *
capture_name(const struct capture *cp, const struct sockaddr_storage *ss)
{
	static const uint8_t	 p6[16] = CAPTURE_POOL6;
	const uint8_t		*b;
	uint32_t		 i;

	if (ss->ss_family == AF_INET) {
		i = ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr);
		if ((i & 0xffff0000U) != CAPTURE_POOL4)
			return NULL;
		i &= 0xffff;
	} else {
		b = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
		if (memcmp(b, p6, 12) != 0)
			return NULL;
		i = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 |
		    (uint32_t)b[14] << 8 | b[15];
	}
	if (i == 0 || i > cp->cp_count)
		return NULL;
	return cp->cp_names[i];
}

/* Says whether two socket addresses are the same address and port. */
static bool
capture_same(const struct sockaddr_storage *a,
    const struct sockaddr_storage *b)
{
	const struct sockaddr_in	*a4, *b4;
	const struct sockaddr_in6	*a6, *b6;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		a4 = (const struct sockaddr_in *)a;
		b4 = (const struct sockaddr_in *)b;
		return a4->sin_port == b4->sin_port &&
		    a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	}
	a6 = (const struct sockaddr_in6 *)a;
	b6 = (const struct sockaddr_in6 *)b;
	return a6->sin6_port == b6->sin6_port &&
	    memcmp(&a6->sin6_addr, &b6->sin6_addr, 16) == 0;
}

/*
 * The bridge's question (bridge_capture_cb): where the connection on fd
 * was going.  Returns 1 with target "host:port" (a pool name, or the
 * literal address, IPv6 in brackets), 0 when it was made to the bridge
 * itself (or the namespace has no capture), -1 when its destination
 * cannot be read.
 */
int
capture_target(int fd, char *target, size_t size, void *arg)
{
	struct capture		*cp = arg;
	struct sockaddr_storage	 orig, here;
	socklen_t		 len = sizeof(orig), hlen = sizeof(here);
	const char		*name;
	char			 text[INET6_ADDRSTRLEN];
	uint16_t		 port;
	int			 rc;

	if (getsockname(fd, (struct sockaddr *)&here, &hlen) == -1)
		return -1;
	rc = here.ss_family == AF_INET ?
	    getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &orig, &len) :
	    getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &orig, &len);
	if (rc == -1)
		return errno == ENOENT ? 0 : -1;
	if (capture_same(&orig, &here))
		return 0;
	if (orig.ss_family == AF_INET) {
		port = ntohs(((struct sockaddr_in *)&orig)->sin_port);
		inet_ntop(AF_INET, &((struct sockaddr_in *)&orig)->sin_addr,
		    text, sizeof(text));
	} else {
		port = ntohs(((struct sockaddr_in6 *)&orig)->sin6_port);
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&orig)->sin6_addr,
		    text, sizeof(text));
	}
	if ((name = capture_name(cp, &orig)) != NULL)
		rc = snprintf(target, size, "%s:%u", name, port);
	else
		rc = snprintf(target, size, orig.ss_family == AF_INET ?
		    "%s:%u" : "[%s]:%u", text, port);
	if (rc < 0 || (size_t)rc >= size)
		return -1;
	log_debug("%s: to %s", __func__, target);
	return 1;
}
