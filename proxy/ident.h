/*
 * ident.h: the limits of a tls: client's identity, counted (ident.c) in
 * a table of one worker for a proxy alone, or in the one all the
 * workers of --workers N share.  What an identity may reach is its
 * rule's policy (proxy_policy.h); here is only how much.
 */
#ifndef CORDON_IDENT_H
#define CORDON_IDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The identities counted apart at once, and the entries from its key's
 * home (key % IDENT_ENTRIES) that an identity's may be.
 */
#define IDENT_ENTRIES	4096
#define IDENT_PROBES	32

struct ident_table;
struct pident;

/* A proxy's counts: worker ic_worker's of table ic_table. */
struct ident_counts {
	struct ident_table	*ic_table;	/* NULL: made at first use */
	size_t			 ic_worker;
	bool			 ic_own;	/* ic_table is this proxy's */
};

/*
 * A connection's part in its identity's counts: the identity's key,
 * made once when it is known (ident_key), and the entry in which the
 * connection holds one of its identity's tunnels, if it does.
 */
struct ident_hold {
	uint64_t	 ih_key;
	uint32_t	 ih_entry;
	bool		 ih_held;
};

/* ident.c */
uint64_t	 ident_key(const char *);
const char	*ident_admit(struct ident_counts *, const struct pident *,
		    struct ident_hold *);
void		 ident_release(struct ident_counts *, struct ident_hold *);
void		 ident_counts_free(struct ident_counts *);
struct ident_table *ident_table_new(size_t);
void		 ident_table_free(struct ident_table *);
void		 ident_reap(struct ident_table *, size_t);

#endif /* CORDON_IDENT_H */
