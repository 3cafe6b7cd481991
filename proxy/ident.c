/*
 * ident.c: the limits of a tls: client's identity at the proxy
 * (policies/policy_ident.c has the rules), counted for each identity
 * apart (two certificates the same rule matches have a count each):
 * tunnels open at once, and new decisions a second (a token bucket
 * holding one second's worth).  The counts are this process's; a worker
 * of --workers N counts in the region all the workers share
 * (ident_shm.c).  This file only decides: the connection that is past a
 * limit is refused by its caller (conn_dial.c), which knows how.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ident.h"
#include "policy.h"
#include "xmalloc.h"

/*
 * The identities counted apart; past them, one that has no tunnel open
 * and a full bucket gives its place, and if none does the newcomer is
 * counted with the last (stricter, never looser).
 */
#define IDENT_COUNTS_MAX	4096

struct ident_count {
	char		*ic_id;		/* NULL: free */
	unsigned int	 ic_tunnels;
	double		 ic_tokens;
	struct timespec	 ic_last;	/* of the last refill */
	unsigned int	 ic_rate;	/* the bucket's size, a second's */
};

/* The count of identity id, made or taken over if need be. */
static struct ident_count *
ident_count(struct ident_counts *ics, const char *id, unsigned int rate)
{
	struct ident_count	*ic, *idle = NULL;
	size_t			 i;

	if (ics->ic_v == NULL)
		ics->ic_v = xcalloc(IDENT_COUNTS_MAX, sizeof(*ics->ic_v));
	for (i = 0; i < ics->ic_n; i++) {
		ic = &ics->ic_v[i];
		if (strcmp(ic->ic_id, id) == 0)
			return ic;
		if (idle == NULL && ic->ic_tunnels == 0 &&
		    ic->ic_tokens >= ic->ic_rate)
			idle = ic;
	}
	if (ics->ic_n < IDENT_COUNTS_MAX)
		ic = &ics->ic_v[ics->ic_n++];
	else if ((ic = idle) == NULL)
		return &ics->ic_v[IDENT_COUNTS_MAX - 1];
	free(ic->ic_id);
	memset(ic, 0, sizeof(*ic));
	ic->ic_id = xstrdup(id);
	ic->ic_tokens = rate;
	ic->ic_rate = rate;
	clock_gettime(CLOCK_MONOTONIC, &ic->ic_last);
	return ic;
}

/* Refills ic's bucket for the time gone by, up to a second's worth. */
static void
ident_refill(struct ident_count *ic, unsigned int rate)
{
	struct timespec	 now;
	double		 secs;

	clock_gettime(CLOCK_MONOTONIC, &now);
	secs = (double)(now.tv_sec - ic->ic_last.tv_sec) +
	    (double)(now.tv_nsec - ic->ic_last.tv_nsec) / 1e9;
	ic->ic_last = now;
	ic->ic_rate = rate;
	ic->ic_tokens += secs * rate;
	if (ic->ic_tokens > rate)
		ic->ic_tokens = rate;
}

/*
 * Counts a new decision of identity id, whose rule is rule, against the
 * rule's limits: NULL when it is let through, else the name of the
 * limit it is past ("max_tunnels", "new_per_second"), for the caller to
 * refuse.  The connection takes one of its identity's tunnels at its
 * first decision (*held), until it goes (ident_release).
 */
const char *
ident_admit(struct ident_counts *ics, const struct pident *rule,
    const char *id, bool *held)
{
	struct ident_count	*ic;

	if (rule == NULL ||
	    (rule->id_max_tunnels == 0 && rule->id_new_per_second == 0))
		return NULL;
	if (ics->ic_shm != NULL)
		/* A worker's: counted for all the workers (ident_shm.c). */
		return ident_shm_admit(ics->ic_shm, ics->ic_worker, id, rule,
		    held);
	ic = ident_count(ics, id, rule->id_new_per_second);
	if (!*held && rule->id_max_tunnels != 0 &&
	    ic->ic_tunnels >= rule->id_max_tunnels)
		return "max_tunnels";
	if (rule->id_new_per_second != 0) {
		ident_refill(ic, rule->id_new_per_second);
		if (ic->ic_tokens < 1)
			return "new_per_second";
		ic->ic_tokens -= 1;
	}
	if (!*held) {
		ic->ic_tunnels++;
		*held = true;
	}
	return NULL;
}

/* A connection of identity id goes: the tunnel it held is id's again. */
void
ident_release(struct ident_counts *ics, const char *id, bool *held)
{
	size_t	 i;

	if (!*held)
		return;
	if (ics->ic_shm != NULL)
		ident_shm_release(ics->ic_shm, ics->ic_worker, id);
	for (i = 0; ics->ic_shm == NULL && i < ics->ic_n; i++)
		if (strcmp(ics->ic_v[i].ic_id, id) == 0) {
			if (ics->ic_v[i].ic_tunnels > 0)
				ics->ic_v[i].ic_tunnels--;
			break;
		}
	*held = false;
}

/* Frees the counts (proxy_clear). */
void
ident_counts_free(struct ident_counts *ics)
{
	size_t	 i;

	for (i = 0; i < ics->ic_n; i++)
		free(ics->ic_v[i].ic_id);
	free(ics->ic_v);
	ics->ic_v = NULL;
	ics->ic_n = 0;
}
