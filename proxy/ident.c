/*
 * ident.c: the limits of a tls: client's identity at the proxy
 * (policies/policy_ident.c has the rules), counted for each identity
 * apart (two certificates the same rule matches have a count each):
 * tunnels open at once, and new decisions a second (a token bucket
 * holding one second's worth).  One mechanism for a proxy alone and for
 * --workers N: a table in a MAP_SHARED region, made before the fork for
 * the workers (as the metrics' slots are: counted by each worker alone,
 * an identity would get N times its limit), and for a proxy alone at
 * its first use, as the table of one worker.  This file only decides:
 * the connection that is past a limit is refused by its caller
 * (conn_dial.c), which knows how.
 *
 * An entry is keyed by the first 64 bits of the identity's SHA-256
 * (never 0; 0 is an entry never used), computed once per connection
 * when its certificate is verified (conn_mtls.c).  It holds, for all the
 * workers:
 *  - the tunnels open, taken by compare-and-swap only while below
 *    max_tunnels and given back when a connection goes; each worker
 *    also keeps its own count of each entry, which the parent, when it
 *    reaps a dead worker, takes off the totals (its clients went with
 *    it).  A connection remembers the entry its tunnel is in, and gives
 *    it back there; each of its decisions is counted in the entry its
 *    identity has at that moment (a few loads, the key already made);
 *  - new_per_second as a token bucket of a second's worth, kept as the
 *    time it is next empty (GCRA, the "theoretical arrival time"): a
 *    decision at now is let through when max(tat, now) + 1s/rate is at
 *    most now + 1s, and moves tat there, by compare-and-swap.  A full
 *    bucket lets rate decisions through at once, then one every 1/rate s.
 * No lock: a worker killed anywhere blocks no other.
 *
 * Finding an identity's entry: open addressing from the key, at most
 * IDENT_PROBES entries from its home.  Keys are never set back to 0, so
 * an entry never used ends the search: the identity is in none after
 * it.  An identity met for the first time takes the first entry of its
 * window that is free or idle: no tunnel open and its bucket full (tat
 * at most now), which is all that is left of an identity that has gone;
 * an idle entry is taken over by compare-and-swap on its key alone, its
 * counts kept as they are (0 tunnels, a full bucket: nothing to reset).
 * So a tier whose certificates name a new identity for every job keeps
 * counting each apart, however many have come and gone; only while more
 * are active at once than a window holds (a tunnel open or a decision
 * in the last second) is a newcomer counted with the entry at its home,
 * as two identities whose keys meet are: stricter, never looser.
 *
 * Races between workers, each a single thread: worker A has found X's
 * entry and is about to take from it when worker B, which read it idle,
 * gives it to Y.  A's tunnel or token then lands in Y's entry: Y starts
 * with one more tunnel or one fewer token than it had, stricter; A's
 * connection gives its tunnel back to that entry, where it was counted,
 * and its later decisions are counted in X's new one.  X, whose next
 * decision takes a new entry, loses only what was in the old one:
 * nothing (it was idle) but what was in flight at that instant, at most
 * one tunnel and one token per other worker, each time its idle entry
 * is taken.  Two workers claiming entries for a new identity Z at once
 * may each take one; every later search finds the first of Z's window,
 * so the other keeps only what its worker took then: again at most one
 * tunnel and one token per other worker.  An
 * identity counted with another while its window was full may, once it
 * has its own entry, have open the tunnels it opened while sharing as
 * well: at most max_tunnels more, until they close.  A worker killed
 * between its two steps (the total and its own count) leaves one
 * tunnel taken, and its entry never idle, until the proxy ends:
 * stricter, never looser.
 */
#include <sys/types.h>
#include <sys/mman.h>

#include <stdint.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "lib/log.h"
#include "policies/policy.h"
#include "proxy/ident.h"

#define IDENT_CLAIMS	4	/* compare-and-swaps lost, then shared */
#define NSEC		1000000000ULL

struct ident_entry {
	uint64_t	 ie_key;	/* 0: never used */
	uint64_t	 ie_tat;	/* ns, CLOCK_MONOTONIC */
	uint32_t	 ie_tunnels;	/* open, in all the workers */
};

struct ident_table {
	size_t			 it_n;		/* workers */
	struct ident_entry	 it_v[IDENT_ENTRIES];
	uint32_t		 it_held[];	/* [worker][entry] */
};

static size_t
ident_table_size(size_t n)
{
	return sizeof(struct ident_table) +
	    n * IDENT_ENTRIES * sizeof(uint32_t);
}

/* The counts of n workers, or NULL with errno set. */
struct ident_table *
ident_table_new(size_t n)
{
	struct ident_table	*t;

	t = mmap(NULL, ident_table_size(n), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return NULL;
	t->it_n = n;
	return t;
}

void
ident_table_free(struct ident_table *t)
{
	if (t != NULL)
		munmap(t, ident_table_size(t->it_n));
}

/* The key of identity id: 64 bits of its SHA-256, never 0. */
uint64_t
ident_key(const char *id)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen;
	uint64_t	 k;

	if (EVP_Digest(id, strlen(id), md, &mdlen, EVP_sha256(), NULL) != 1)
		fatalx("proxy: identity limits: SHA-256 failed");
	memcpy(&k, md, sizeof(k));
	return k == 0 ? 1 : k;
}

static uint64_t
ident_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

/* Whether entry e is what a gone identity leaves: no tunnel, full. */
static bool
ident_idle(const struct ident_entry *e, uint64_t now)
{
	return __atomic_load_n(&e->ie_tunnels, __ATOMIC_ACQUIRE) == 0 &&
	    __atomic_load_n(&e->ie_tat, __ATOMIC_ACQUIRE) <= now;
}

/*
 * The index of key's entry, taken (free or idle) if it has none; its
 * home, shared, when its window has neither.
 */
static uint32_t
ident_find(struct ident_table *t, uint64_t key, uint64_t now)
{
	uint64_t	 k, was = 0;
	uint32_t	 home = (uint32_t)(key % IDENT_ENTRIES), i, j, take;
	int		 claims;

	for (claims = 0; claims < IDENT_CLAIMS; claims++) {
		take = IDENT_ENTRIES;
		for (j = 0; j < IDENT_PROBES; j++) {
			i = (home + j) % IDENT_ENTRIES;
			k = __atomic_load_n(&t->it_v[i].ie_key,
			    __ATOMIC_ACQUIRE);
			if (k == key)
				return i;
			if (take == IDENT_ENTRIES && (k == 0 ||
			    ident_idle(&t->it_v[i], now))) {
				take = i;
				was = k;
			}
			if (k == 0)
				break;		/* none after it */
		}
		if (take == IDENT_ENTRIES)
			break;
		if (__atomic_compare_exchange_n(&t->it_v[take].ie_key, &was,
		    key, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
		    was == key)
			return take;
		/* Another worker took it first: look again. */
	}
	return home;
}

/* Takes one of entry i's tunnels if fewer than max are open (0: no max). */
static bool
ident_take(struct ident_table *t, uint32_t i, unsigned int max)
{
	uint32_t	*p = &t->it_v[i].ie_tunnels;
	uint32_t	 n = __atomic_load_n(p, __ATOMIC_RELAXED);

	do {
		if (max != 0 && n >= max)
			return false;
	} while (!__atomic_compare_exchange_n(p, &n, n + 1, true,
	    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	return true;
}

/* Gives back k of entry i's tunnels (never below 0). */
static void
ident_give(struct ident_table *t, uint32_t i, uint32_t k)
{
	uint32_t	*p = &t->it_v[i].ie_tunnels;
	uint32_t	 n = __atomic_load_n(p, __ATOMIC_RELAXED);

	do {
		if (n == 0)
			return;
	} while (!__atomic_compare_exchange_n(p, &n, n > k ? n - k : 0,
	    true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
}

/* Whether entry i's bucket has a token for rate a second; takes it. */
static bool
ident_token(struct ident_table *t, uint32_t i, unsigned int rate,
    uint64_t now)
{
	uint64_t	*tat = &t->it_v[i].ie_tat;
	uint64_t	 old, at, step = NSEC / rate;

	old = __atomic_load_n(tat, __ATOMIC_RELAXED);
	do {
		at = old > now ? old : now;
		if (at + step > now + NSEC)
			return false;
	} while (!__atomic_compare_exchange_n(tat, &old, at + step, true,
	    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	return true;
}

static uint32_t *
ident_mine(struct ident_table *t, size_t w, uint32_t i)
{
	return &t->it_held[w * IDENT_ENTRIES + i];
}

/*
 * Counts a new decision of the identity whose key is h->ih_key, whose
 * rule is rule, against the rule's limits: NULL when it is let through,
 * else the name of the limit it is past ("max_tunnels",
 * "new_per_second"), nothing taken, for the caller to refuse.  The
 * connection takes one of its identity's tunnels at its first decision
 * (h->ih_held), until it goes (ident_release).
 */
const char *
ident_admit(struct ident_counts *ics, const struct pident *rule,
    struct ident_hold *h)
{
	struct ident_table	*t;
	uint64_t		 now;
	uint32_t		 i;

	if (rule == NULL ||
	    (rule->id_max_tunnels == 0 && rule->id_new_per_second == 0))
		return NULL;
	if (ics->ic_table == NULL) {
		if ((ics->ic_table = ident_table_new(1)) == NULL)
			fatal("proxy: the identities' limits: mmap");
		ics->ic_own = true;
	}
	t = ics->ic_table;
	now = ident_now();
	i = ident_find(t, h->ih_key, now);
	if (!h->ih_held && !ident_take(t, i, rule->id_max_tunnels))
		return "max_tunnels";
	if (rule->id_new_per_second != 0 &&
	    !ident_token(t, i, rule->id_new_per_second, now)) {
		if (!h->ih_held)
			ident_give(t, i, 1);
		return "new_per_second";
	}
	if (!h->ih_held) {
		__atomic_add_fetch(ident_mine(t, ics->ic_worker, i), 1,
		    __ATOMIC_RELAXED);
		h->ih_entry = i;
		h->ih_held = true;
	}
	return NULL;
}

/* A connection goes: the tunnel it held is its identity's again. */
void
ident_release(struct ident_counts *ics, struct ident_hold *h)
{
	uint32_t	*mine;

	if (!h->ih_held)
		return;
	h->ih_held = false;
	mine = ident_mine(ics->ic_table, ics->ic_worker, h->ih_entry);
	if (__atomic_load_n(mine, __ATOMIC_RELAXED) == 0)
		return;
	/* Its own count first: killed in between, stricter, not looser. */
	__atomic_sub_fetch(mine, 1, __ATOMIC_RELAXED);
	ident_give(ics->ic_table, h->ih_entry, 1);
}

/*
 * Worker w was reaped (the parent): the tunnels it held are given back,
 * and its counts start again at 0 for the worker started in its place.
 */
void
ident_reap(struct ident_table *t, size_t w)
{
	uint32_t	 k, i;

	if (t == NULL)
		return;
	for (i = 0; i < IDENT_ENTRIES; i++) {
		k = __atomic_exchange_n(ident_mine(t, w, i), 0,
		    __ATOMIC_ACQ_REL);
		if (k != 0)
			ident_give(t, i, k);
	}
}

/* Frees the counts (proxy_clear); a worker's table is its parent's. */
void
ident_counts_free(struct ident_counts *ics)
{
	if (ics->ic_own)
		ident_table_free(ics->ic_table);
	memset(ics, 0, sizeof(*ics));
}
