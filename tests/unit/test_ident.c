/*
 * test_ident.c: an identity's limits as proxy/ident.c counts them, for
 * a proxy alone (a table of one worker, made at first use) and for the
 * workers of one table: each identity apart, however many come and go
 * one after the other; a gone identity's entry taken over only once it
 * is idle; a newcomer counted with another while its window is full,
 * and its tunnel given back where it was counted; two workers counting
 * together; a reaped worker's tunnels given back.
 */
#include "unit.h"

#include "policies/policy.h"
#include "proxy/ident.h"

#define MANY	10000

/* A connection of identity id, its key made as conn_mtls.c makes it. */
static void
conn_of(struct ident_hold *h, const char *id)
{
	memset(h, 0, sizeof(*h));
	h->ih_key = ident_key(id);
}

static void
rule_of(struct pident *r, unsigned int tunnels, unsigned int rate)
{
	memset(r, 0, sizeof(*r));
	r->id_max_tunnels = tunnels;
	r->id_new_per_second = rate;
}

/*
 * Names n identities whose keys have the same home in the table (an
 * entry no other identity of the test is in: the first IDENT_PROBES of
 * them fill its window), in ids[i], 64 bytes each.
 */
static void
same_home(char (*ids)[64], int n)
{
	uint64_t	 home = IDENT_ENTRIES - 1;
	int		 i, k;

	for (i = k = 0; i < n; k++) {
		snprintf(ids[i], 64, "spiffe://corp/ci/home/%d", k);
		if (ident_key(ids[i]) % IDENT_ENTRIES == home)
			i++;
	}
}

/* Whether a new decision of h is let through; fails on another limit. */
static bool
admit(struct ident_counts *ics, const struct pident *r,
    struct ident_hold *h, const char *limit)
{
	const char	*got = ident_admit(ics, r, h);

	if (got != NULL && strcmp(got, limit) != 0)
		fail_msg("refused by %s, not %s", got, limit);
	return got == NULL;
}

/* max_tunnels and new_per_second hold, for each identity apart. */
static void
test_ident_apart(void **state)
{
	struct ident_counts	 ics = { 0 };
	struct ident_hold	 a[3], b[3];
	struct pident		 r;
	int			 i;

	(void)state;
	rule_of(&r, 2, 0);
	for (i = 0; i < 3; i++) {
		conn_of(&a[i], "spiffe://corp/ci/a");
		conn_of(&b[i], "spiffe://corp/ci/b");
	}
	assert_true(admit(&ics, &r, &a[0], "max_tunnels"));
	assert_true(admit(&ics, &r, &a[1], "max_tunnels"));
	assert_false(admit(&ics, &r, &a[2], "max_tunnels"));
	assert_false(a[2].ih_held);
	/* a's limit is a's: b has its own two. */
	assert_true(admit(&ics, &r, &b[0], "max_tunnels"));
	assert_true(admit(&ics, &r, &b[1], "max_tunnels"));
	assert_false(admit(&ics, &r, &b[2], "max_tunnels"));
	/* A connection that goes gives its tunnel back to its identity. */
	ident_release(&ics, &a[0]);
	assert_true(admit(&ics, &r, &a[2], "max_tunnels"));
	assert_false(admit(&ics, &r, &a[0], "max_tunnels"));
	for (i = 0; i < 3; i++) {
		ident_release(&ics, &a[i]);
		ident_release(&ics, &b[i]);
	}

	/* new_per_second: a second's worth, then refused; b apart. */
	rule_of(&r, 0, 3);
	for (i = 0; i < 3; i++)
		assert_true(admit(&ics, &r, &a[0], "new_per_second"));
	assert_false(admit(&ics, &r, &a[0], "new_per_second"));
	assert_false(admit(&ics, &r, &a[1], "new_per_second"));
	assert_false(a[1].ih_held);
	for (i = 0; i < 3; i++)
		assert_true(admit(&ics, &r, &b[0], "new_per_second"));
	assert_false(admit(&ics, &r, &b[0], "new_per_second"));
	ident_release(&ics, &a[0]);
	ident_release(&ics, &b[0]);
	ident_counts_free(&ics);
}

/*
 * MANY identities, one after the other (each job's certificate its
 * own), each holding a tunnel until the next has had its limit: every
 * one gets its own two, none counted with another.  Meanwhile one that
 * spent its bucket and went keeps it until it refills: an entry is
 * taken over only when idle.
 */
static void
test_ident_many(void **state)
{
	struct ident_counts	 ics = { 0 };
	struct ident_hold	 prev, h[3], spent;
	struct pident		 r, slow;
	char			 id[64];
	int			 i, j, short_of = -1;

	(void)state;
	rule_of(&r, 2, 0);
	rule_of(&slow, 0, 1);
	conn_of(&spent, "spiffe://corp/ci/spent");
	assert_true(admit(&ics, &slow, &spent, "new_per_second"));
	ident_release(&ics, &spent);
	memset(&prev, 0, sizeof(prev));
	for (i = 0; i < MANY; i++) {
		snprintf(id, sizeof(id), "spiffe://corp/ci/job/%d", i);
		for (j = 0; j < 3; j++)
			conn_of(&h[j], id);
		if ((!admit(&ics, &r, &h[0], "max_tunnels") ||
		    !admit(&ics, &r, &h[1], "max_tunnels") ||
		    admit(&ics, &r, &h[2], "max_tunnels")) && short_of == -1)
			short_of = i;
		ident_release(&ics, &prev);
		prev = h[0];
		ident_release(&ics, &h[1]);
		ident_release(&ics, &h[2]);
	}
	ident_release(&ics, &prev);
	if (short_of != -1)
		fail_msg("identity %d of %d did not get its own limit",
		    short_of, MANY);
	/* Within its second (a bucket of 1): still empty, not a new one. */
	conn_of(&spent, "spiffe://corp/ci/spent");
	assert_false(admit(&ics, &slow, &spent, "new_per_second"));
	ident_counts_free(&ics);
}

/*
 * In one window: an entry whose bucket is not full is not taken over,
 * though no tunnel is open (its identity would come back to a full
 * one); a newcomer whose window is full is counted with the identity at
 * its home (stricter for both), and its tunnel is given back there, not
 * to the entry it has once one is free.
 */
static void
test_ident_window(void **state)
{
	struct ident_counts	 ics = { 0 };
	struct ident_hold	 z[IDENT_PROBES + 1], z0, n[2];
	struct pident		 r, slow;
	char			 ids[IDENT_PROBES + 1][64];
	int			 i;

	(void)state;
	rule_of(&r, 2, 0);
	rule_of(&slow, 0, 1);
	same_home(ids, IDENT_PROBES + 1);
	/* ids[0] spends its bucket and goes; ids[1] comes to its home. */
	conn_of(&z[0], ids[0]);
	assert_true(admit(&ics, &slow, &z[0], "new_per_second"));
	ident_release(&ics, &z[0]);
	conn_of(&z[1], ids[1]);
	assert_true(admit(&ics, &r, &z[1], "max_tunnels"));
	conn_of(&z[0], ids[0]);
	assert_false(admit(&ics, &slow, &z[0], "new_per_second"));
	ident_counts_free(&ics);

	/* A window full of tunnels: the newcomer shares its home's. */
	for (i = 0; i < IDENT_PROBES; i++) {
		conn_of(&z[i], ids[i]);
		assert_true(admit(&ics, &r, &z[i], "max_tunnels"));
	}
	conn_of(&n[0], ids[IDENT_PROBES]);
	conn_of(&n[1], ids[IDENT_PROBES]);
	assert_true(admit(&ics, &r, &n[0], "max_tunnels"));
	conn_of(&z0, ids[0]);
	assert_false(admit(&ics, &r, &z0, "max_tunnels"));
	/* An entry of its window is free: its next connection's own. */
	ident_release(&ics, &z[5]);
	assert_true(admit(&ics, &r, &n[0], "max_tunnels"));
	assert_true(admit(&ics, &r, &n[1], "max_tunnels"));
	ident_release(&ics, &n[0]);
	assert_true(admit(&ics, &r, &z0, "max_tunnels"));
	ident_release(&ics, &z0);
	ident_release(&ics, &n[1]);
	for (i = 0; i < IDENT_PROBES; i++)
		ident_release(&ics, &z[i]);
	ident_counts_free(&ics);
}

/*
 * More identities holding tunnels at once than the table counts apart:
 * the newcomers past it are counted with others, stricter, never
 * looser, and those well within it keep their own limit.
 */
static void
test_ident_full(void **state)
{
	struct ident_counts	 ics = { 0 };
	struct ident_hold	*h;
	struct pident		 r;
	char			 id[64];
	int			 i, j, n, full = 0;

	(void)state;
	rule_of(&r, 2, 0);
	h = calloc(6000 * 3, sizeof(*h));
	assert_non_null(h);
	for (i = 0; i < 6000; i++) {
		snprintf(id, sizeof(id), "spiffe://corp/ci/busy/%d", i);
		for (j = n = 0; j < 3; j++) {
			conn_of(&h[i * 3 + j], id);
			n += admit(&ics, &r, &h[i * 3 + j], "max_tunnels");
		}
		if (n > 2)
			fail_msg("identity %d got %d tunnels of 2", i, n);
		if (i < 2000 && n != 2)
			fail_msg("identity %d got %d tunnels of 2", i, n);
		full += n == 2;
	}
	assert_true(full < 6000);
	for (i = 0; i < 6000 * 3; i++)
		ident_release(&ics, &h[i]);
	free(h);
	ident_counts_free(&ics);
}

/* Two workers of one table count an identity together. */
static void
test_ident_workers(void **state)
{
	struct ident_table	*t;
	struct ident_counts	 w0 = { 0 }, w1 = { 0 };
	struct ident_hold	 a[3], b[2];
	struct pident		 r;
	int			 i;

	(void)state;
	assert_non_null(t = ident_table_new(2));
	w0.ic_table = w1.ic_table = t;
	w1.ic_worker = 1;
	rule_of(&r, 3, 0);
	for (i = 0; i < 3; i++)
		conn_of(&a[i], "spiffe://corp/ci/runner");
	for (i = 0; i < 2; i++)
		conn_of(&b[i], "spiffe://corp/ci/runner");
	assert_true(admit(&w0, &r, &a[0], "max_tunnels"));
	assert_true(admit(&w0, &r, &a[1], "max_tunnels"));
	assert_true(admit(&w1, &r, &b[0], "max_tunnels"));
	assert_false(admit(&w1, &r, &b[1], "max_tunnels"));
	assert_false(admit(&w0, &r, &a[2], "max_tunnels"));
	ident_release(&w0, &a[0]);
	assert_true(admit(&w1, &r, &b[1], "max_tunnels"));
	ident_release(&w0, &a[1]);
	ident_release(&w1, &b[0]);
	ident_release(&w1, &b[1]);

	rule_of(&r, 0, 4);
	conn_of(&a[0], "spiffe://corp/ci/fast");
	conn_of(&b[0], "spiffe://corp/ci/fast");
	assert_true(admit(&w0, &r, &a[0], "new_per_second"));
	assert_true(admit(&w0, &r, &a[0], "new_per_second"));
	assert_true(admit(&w1, &r, &b[0], "new_per_second"));
	assert_true(admit(&w1, &r, &b[0], "new_per_second"));
	assert_false(admit(&w0, &r, &a[0], "new_per_second"));
	assert_false(admit(&w1, &r, &b[0], "new_per_second"));
	ident_release(&w0, &a[0]);
	ident_release(&w1, &b[0]);
	ident_counts_free(&w0);
	ident_counts_free(&w1);
	ident_table_free(t);
}

/* A worker reaped: the tunnels it held are its identities' again. */
static void
test_ident_reap(void **state)
{
	struct ident_table	*t;
	struct ident_counts	 w0 = { 0 }, w1 = { 0 };
	struct ident_hold	 a[3], b[3];
	struct pident		 r;
	int			 i;

	(void)state;
	assert_non_null(t = ident_table_new(2));
	w0.ic_table = w1.ic_table = t;
	w1.ic_worker = 1;
	rule_of(&r, 2, 0);
	for (i = 0; i < 3; i++) {
		conn_of(&a[i], "spiffe://corp/ci/runner");
		conn_of(&b[i], "spiffe://corp/ci/runner");
	}
	assert_true(admit(&w1, &r, &b[0], "max_tunnels"));
	assert_true(admit(&w1, &r, &b[1], "max_tunnels"));
	assert_false(admit(&w0, &r, &a[0], "max_tunnels"));
	ident_reap(t, 1);
	assert_true(admit(&w0, &r, &a[0], "max_tunnels"));
	assert_true(admit(&w0, &r, &a[1], "max_tunnels"));
	assert_false(admit(&w0, &r, &a[2], "max_tunnels"));
	/* The worker in its place starts from 0, under the same limit. */
	assert_false(admit(&w1, &r, &b[2], "max_tunnels"));
	ident_release(&w0, &a[0]);
	assert_true(admit(&w1, &r, &b[2], "max_tunnels"));
	ident_release(&w1, &b[2]);
	ident_release(&w0, &a[1]);
	ident_table_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ident_apart),
		cmocka_unit_test(test_ident_many),
		cmocka_unit_test(test_ident_window),
		cmocka_unit_test(test_ident_full),
		cmocka_unit_test(test_ident_workers),
		cmocka_unit_test(test_ident_reap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
