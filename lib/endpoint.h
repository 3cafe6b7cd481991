/*
 * endpoint.h: "tcp:HOST:PORT" and "unix:PATH", to listen on or connect to.
 */
#ifndef CORDON_ENDPOINT_H
#define CORDON_ENDPOINT_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stdbool.h>

struct endpoint {
	char			*ep_text;	/* as given, for messages */
	int			 ep_family;	/* AF_INET, AF_INET6, AF_UNIX */
	struct sockaddr_storage	 ep_addr;
	socklen_t		 ep_len;
	char			*ep_path;	/* AF_UNIX */
	bool			 ep_bound;	/* we made ep_path */
};

int	 endpoint_parse(const char *, struct endpoint *, char **);
void	 endpoint_clear(struct endpoint *);
bool	 endpoint_is_loopback(const struct endpoint *);
int	 endpoint_listen(struct endpoint *, int, char **);
int	 endpoint_connect(const struct endpoint *, int *);
void	 endpoint_nodelay(int);
void	 endpoint_unlink(struct endpoint *);
int	 endpoint_mode(const char *, const char *, bool, mode_t *);
int	 endpoint_group(const char *, const char *, gid_t *);
void	 endpoint_perms(const struct endpoint *, const char *, mode_t, gid_t);

#endif
