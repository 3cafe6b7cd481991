/*
 * fuzz_notify.c: the connect thread's judge (notify_addr.c) on arbitrary
 * bytes, lengths, domains and types, all of which the command chooses.
 * A path or name handed out lies within sun_path, is terminated, and is
 * the bytes given; a Unix address longer than struct sockaddr_un is
 * EINVAL.
 *
 * Input: a byte for the domain, one for the type, one for the length
 * (below 0xf0: the rest of the input, exactly; else one past the
 * kernel's bounds, the address then unread), then the address.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "notify/notify_addr.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const int	domains[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK,
			    AF_PACKET, AF_UNSPEC, AF_VSOCK, -1 };
static const int	types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET,
			    SOCK_RAW };
static const int	odd_lens[] = { -1, INT_MIN, NOTIFY_ADDR_MAX + 1,
			    INT_MAX, -NOTIFY_ADDR_MAX };

/* A Unix socket's judged path or name, against the bytes it came from. */
static void
check_unix(const uint8_t *addr, int len, const struct notify_addr *na)
{
	const size_t	 off = offsetof(struct sockaddr_un, sun_path);
	size_t		 skip;

	if (na->na_kind == NOTIFY_ADDR_UNSPEC)
		return;
	if ((size_t)len > sizeof(struct sockaddr_un) || (size_t)len <= off)
		abort();
	if (na->na_kind != NOTIFY_ADDR_PATH &&
	    na->na_kind != NOTIFY_ADDR_ABSTRACT)
		abort();
	skip = na->na_kind == NOTIFY_ADDR_ABSTRACT ? 1 : 0;
	if (na->na_len > NOTIFY_PATH_MAX || na->na_path[na->na_len] != '\0' ||
	    off + skip + na->na_len > (size_t)len ||
	    memcmp(na->na_path, addr + off + skip, na->na_len) != 0)
		abort();
	if (na->na_kind == NOTIFY_ADDR_PATH &&
	    (na->na_len == 0 || memchr(na->na_path, '\0', na->na_len) != NULL ||
	    (off + na->na_len < (size_t)len && addr[off + na->na_len] != 0)))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct notify_addr	 na;
	uint8_t			*addr;
	int			 domain, type, len, err;

	if (size < 3)
		return 0;
	domain = domains[data[0] % (sizeof(domains) / sizeof(domains[0]))];
	type = types[data[1] % (sizeof(types) / sizeof(types[0]))];
	if (data[2] < 0xf0)
		len = size - 3 > INT_MAX ? INT_MAX : (int)(size - 3);
	else
		len = odd_lens[data[2] % (sizeof(odd_lens) /
		    sizeof(odd_lens[0]))];
	/* Exactly the bytes given, so that reading past them is caught. */
	addr = malloc(size - 3 > 0 ? size - 3 : 1);
	memcpy(addr, data + 3, size - 3);
	err = notify_addr_judge(addr, len, domain, type, &na);
	if (!notify_addr_len_ok(len) && err != EINVAL)
		abort();
	if (err == 0 && domain == AF_UNIX)
		check_unix(addr, len, &na);
	if (err == 0 && domain != AF_UNIX && na.na_kind != NOTIFY_ADDR_PASS)
		abort();
	free(addr);
	return 0;
}
