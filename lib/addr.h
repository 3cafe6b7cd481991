/*
 * addr.h: IP addresses, CIDR ranges and the ranges a proxy must not reach.
 */
#ifndef CORDON_ADDR_H
#define CORDON_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ADDR_STRLEN	46	/* INET6_ADDRSTRLEN */

struct addr {
	int	 a_family;	/* AF_INET or AF_INET6 */
	uint8_t	 a_bytes[16];	/* network order; AF_INET uses 4 */
};

struct cidr {
	struct addr	 c_addr;	/* host bits are zero */
	int		 c_prefix;
};

int		 addr_parse(const char *, size_t, struct addr *);
bool		 addr_looks_numeric(const char *, size_t);
void		 addr_unmap(struct addr *);
bool		 addr_equal(const struct addr *, const struct addr *);
const char	*addr_str(const struct addr *, char *, size_t);
const char	*addr_special(const struct addr *);

int		 addr_cidr_parse(const char *, struct cidr *, char **);
bool		 addr_cidr_contains(const struct cidr *, const struct addr *);
bool		 addr_cidr_intersect(const struct cidr *, const struct cidr *,
		     struct cidr *);
const char	*addr_cidr_str(const struct cidr *, char *, size_t);

#endif
