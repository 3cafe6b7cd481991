/*
 * fscache.h: what one run's plan learnt of the filesystem, each lstat(2)
 * and readlink(2) of a path asked once (fscache.c).
 */
#ifndef CORDON_FSCACHE_H
#define CORDON_FSCACHE_H

#include <stdbool.h>

struct fscache;
struct stat;

struct fscache	*fscache_new(void);
void		 fscache_free(struct fscache *);
void		 fscache_clear(struct fscache *);
int		 fscache_lstat(struct fscache *, const char *, struct stat *);
const char	*fscache_readlink(struct fscache *, const char *);
const char	*fscache_real(struct fscache *, const char *, bool *);
void		 fscache_set_real(struct fscache *, const char *,
		    const char *);

#endif
