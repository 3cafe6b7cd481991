/*
 * ident_shm.c: the limits of an identity (ident.c) counted once for all
 * the workers of --workers N, in a MAP_SHARED region made before the
 * fork, as the metrics' slots are: counted by each worker alone, an
 * identity would get N times its limit.
 *
 * A bounded table, by identity: its key is the first 64 bits of the
 * identity's SHA-256 (never 0), claimed once by compare-and-swap and
 * never given back.  Once it is full, every newcomer shares one entry,
 * and two identities whose keys meet share theirs: stricter, never
 * looser.  An entry holds, for all the workers:
 *  - the tunnels open, taken by compare-and-swap only while below
 *    max_tunnels and given back when a connection goes; each worker
 *    also keeps its own count of each entry, which the parent, when it
 *    reaps a dead worker, takes off the totals (its clients went with
 *    it);
 *  - new_per_second as a token bucket of a second's worth, kept as the
 *    time it is next empty (GCRA, the "theoretical arrival time"): a
 *    decision at now is let through when max(tat, now) + 1s/rate is at
 *    most now + 1s, and moves tat there, by compare-and-swap.  A full
 *    bucket lets rate decisions through at once; then one every
 *    1/rate s: what ident.c's bucket does in one process.
 * A worker killed between its two steps (the total and its own count)
 * leaves one tunnel taken until the proxy ends: stricter, never looser.
 */
#include <sys/types.h>
#include <sys/mman.h>

#include <stdint.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "ident.h"
#include "log.h"
#include "policy.h"

#define IDENT_SHM_MAX	4096	/* identities; one more is shared */
#define NSEC		1000000000ULL

struct ident_shm_entry {
	uint64_t	 ise_key;	/* 0: free */
	uint64_t	 ise_tat;	/* ns, CLOCK_MONOTONIC */
	uint32_t	 ise_tunnels;	/* open, in all the workers */
};

struct ident_shm {
	size_t			 ish_n;		/* workers */
	struct ident_shm_entry	 ish_v[IDENT_SHM_MAX + 1];
	uint32_t		 ish_held[];	/* [worker][entry] */
};

static size_t
ident_shm_size(size_t n)
{
	return sizeof(struct ident_shm) +
	    n * (IDENT_SHM_MAX + 1) * sizeof(uint32_t);
}

/* The counts of n workers, or NULL with errno set. */
struct ident_shm *
ident_shm_new(size_t n)
{
	struct ident_shm	*sh;

	sh = mmap(NULL, ident_shm_size(n), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return NULL;
	sh->ish_n = n;
	return sh;
}

void
ident_shm_free(struct ident_shm *sh)
{
	if (sh != NULL)
		munmap(sh, ident_shm_size(sh->ish_n));
}

/* The key of identity id: 64 bits of its SHA-256, never 0. */
static uint64_t
ident_shm_key(const char *id)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen;
	uint64_t	 k;

	if (EVP_Digest(id, strlen(id), md, &mdlen, EVP_sha256(), NULL) != 1)
		fatalx("proxy: identity limits: SHA-256 failed");
	memcpy(&k, md, sizeof(k));
	return k == 0 ? 1 : k;
}

/* The index of id's entry, claimed if need be; the shared one if full. */
static size_t
ident_shm_find(struct ident_shm *sh, const char *id)
{
	uint64_t	 key = ident_shm_key(id), k;
	size_t		 i, j;

	for (j = 0; j < IDENT_SHM_MAX; j++) {
		i = (size_t)((key + j) % IDENT_SHM_MAX);
		k = __atomic_load_n(&sh->ish_v[i].ise_key, __ATOMIC_ACQUIRE);
		if (k == 0 && __atomic_compare_exchange_n(
		    &sh->ish_v[i].ise_key, &k, key, false, __ATOMIC_ACQ_REL,
		    __ATOMIC_ACQUIRE))
			return i;
		if (k == key)
			return i;
	}
	return IDENT_SHM_MAX;
}

/* Takes one of entry i's tunnels if fewer than max are open (0: no max). */
static bool
ident_shm_take(struct ident_shm *sh, size_t i, unsigned int max)
{
	uint32_t	*t = &sh->ish_v[i].ise_tunnels;
	uint32_t	 n = __atomic_load_n(t, __ATOMIC_RELAXED);

	do {
		if (max != 0 && n >= max)
			return false;
	} while (!__atomic_compare_exchange_n(t, &n, n + 1, true,
	    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	return true;
}

/* Gives back k of entry i's tunnels (never below 0). */
static void
ident_shm_give(struct ident_shm *sh, size_t i, uint32_t k)
{
	uint32_t	*t = &sh->ish_v[i].ise_tunnels;
	uint32_t	 n = __atomic_load_n(t, __ATOMIC_RELAXED);

	do {
		if (n == 0)
			return;
	} while (!__atomic_compare_exchange_n(t, &n, n > k ? n - k : 0,
	    true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
}

/* Whether entry i's bucket has a token for rate a second; takes it. */
static bool
ident_shm_token(struct ident_shm *sh, size_t i, unsigned int rate)
{
	uint64_t	*tat = &sh->ish_v[i].ise_tat;
	uint64_t	 old, t, now, step = NSEC / rate;
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
	old = __atomic_load_n(tat, __ATOMIC_RELAXED);
	do {
		t = old > now ? old : now;
		if (t + step > now + NSEC)
			return false;
	} while (!__atomic_compare_exchange_n(tat, &old, t + step, true,
	    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	return true;
}

/*
 * Counts worker w's new decision for identity id against rule's limits,
 * a tunnel taken unless held already (*held then true).  Returns NULL,
 * or the limit it is past, nothing taken.
 */
const char *
ident_shm_admit(struct ident_shm *sh, size_t w, const char *id,
    const struct pident *rule, bool *held)
{
	uint32_t	*mine;
	size_t		 i = ident_shm_find(sh, id);

	mine = &sh->ish_held[w * (IDENT_SHM_MAX + 1) + i];
	if (!*held && !ident_shm_take(sh, i, rule->id_max_tunnels))
		return "max_tunnels";
	if (rule->id_new_per_second != 0 &&
	    !ident_shm_token(sh, i, rule->id_new_per_second)) {
		if (!*held)
			ident_shm_give(sh, i, 1);
		return "new_per_second";
	}
	if (!*held) {
		__atomic_add_fetch(mine, 1, __ATOMIC_RELAXED);
		*held = true;
	}
	return NULL;
}

/* Worker w's connection of identity id goes: its tunnel is given back. */
void
ident_shm_release(struct ident_shm *sh, size_t w, const char *id)
{
	size_t		 i = ident_shm_find(sh, id);
	uint32_t	*mine = &sh->ish_held[w * (IDENT_SHM_MAX + 1) + i];

	if (__atomic_load_n(mine, __ATOMIC_RELAXED) == 0)
		return;
	/* Its own count first: killed in between, stricter, not looser. */
	__atomic_sub_fetch(mine, 1, __ATOMIC_RELAXED);
	ident_shm_give(sh, i, 1);
}

/*
 * Worker w was reaped (the parent): the tunnels it held are given back,
 * and its counts start again at 0 for the worker started in its place.
 */
void
ident_shm_reap(struct ident_shm *sh, size_t w)
{
	uint32_t	 k;
	size_t		 i;

	if (sh == NULL)
		return;
	for (i = 0; i <= IDENT_SHM_MAX; i++) {
		k = __atomic_exchange_n(&sh->ish_held[w * (IDENT_SHM_MAX + 1) +
		    i], 0, __ATOMIC_ACQ_REL);
		if (k != 0)
			ident_shm_give(sh, i, k);
	}
}
