/*
 * ident.h: the limits of a tls: client's identity, counted (ident.c), in
 * this process or, for a worker of --workers N, in the region all the
 * workers share (ident_shm.c).  What an identity may reach is its rule's
 * policy (proxy_policy.h); here is only how much.
 */
#ifndef CORDON_IDENT_H
#define CORDON_IDENT_H

#include <stdbool.h>
#include <stddef.h>

struct ident_count;
struct ident_shm;
struct pident;

/* A proxy's counts, one per identity; zeroed, counted here. */
struct ident_counts {
	struct ident_count	*ic_v;
	size_t			 ic_n;
	struct ident_shm	*ic_shm;	/* a worker's: shared counts */
	size_t			 ic_worker;	/* a worker's number */
};

/* ident.c */
const char	*ident_admit(struct ident_counts *, const struct pident *,
		    const char *, bool *);
void		 ident_release(struct ident_counts *, const char *, bool *);
void		 ident_counts_free(struct ident_counts *);

/* ident_shm.c */
struct ident_shm *ident_shm_new(size_t);
void		 ident_shm_free(struct ident_shm *);
const char	*ident_shm_admit(struct ident_shm *, size_t, const char *,
		    const struct pident *, bool *);
void		 ident_shm_release(struct ident_shm *, size_t, const char *);
void		 ident_shm_reap(struct ident_shm *, size_t);

#endif /* CORDON_IDENT_H */
