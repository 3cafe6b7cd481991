/*
 * host.h: host names and IP literals as they arrive from outside.
 */
#ifndef CORDON_HOST_H
#define CORDON_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/addr.h"

#define HOST_NAME_MAX_LEN	253	/* without the trailing dot */
#define HOST_LABEL_MAX_LEN	63

enum host_kind {
	HOST_NAME,
	HOST_ADDR
};

struct host {
	enum host_kind	 h_kind;
	char		 h_name[HOST_NAME_MAX_LEN + 1];	/* canonical text */
	struct addr	 h_ip;			/* HOST_ADDR only */
};

int	 host_parse(const char *, size_t, struct host *, char **);
bool	 host_in_suffix(const char *, const char *);
int	 host_split(const char *, size_t *, const char **, char **);
int	 host_port(const char *);
int	 host_tls_url(const char *, char **, char **, char **);
bool	 host_is_loopback(const struct host *);

#endif
