/*
 * test_policy_ident.c: "identities" (policies/policy_ident.c): every
 * loader error, the glob matcher segment by segment, the first rule
 * winning, the join (what an identity's layer can and cannot add) and
 * what "report" may let through.
 */
#include "unit.h"

#include <limits.h>
#include <unistd.h>

#include "lib/util.h"
#include "policies/policy.h"

static char		 dir[PATH_MAX];
static struct policy_ctx ctx = { .pc_home = "/home/user" };

static int
setup(void **state)
{
	char	 path[PATH_MAX + 32];

	(void)state;
	if (unit_tmpdir(dir, "test_policy_ident") == -1)
		return -1;
	ctx.pc_workspace = ctx.pc_dir = dir;
	snprintf(path, sizeof(path), "%s/ci.json", dir);
	unit_make(dir, path, "{\"version\": 1, \"network\": {\"allow\": "
	    "[\"ci.test\", \"evil.test\"], \"deny\": [\"no.ci.test\"]}}");
	snprintf(path, sizeof(path), "%s/dev.json", dir);
	unit_make(dir, path, "{\"version\": 1, \"network\": {\"deny\": "
	    "[\"blocked.test\"]}}");
	snprintf(path, sizeof(path), "%s/wide.json", dir);
	unit_make(dir, path, "{\"version\": 1, \"network\": {\"allow_cidrs\": "
	    "[\"10.0.0.0/8\"]}}");
	snprintf(path, sizeof(path), "%s/mode.json", dir);
	unit_make(dir, path, "{\"version\": 1, \"network\": {\"mode\": "
	    "\"host\"}}");
	snprintf(path, sizeof(path), "%s/nest.json", dir);
	unit_make(dir, path, "{\"version\": 1, \"identities\": {\"rules\": "
	    "[], \"default\": \"deny\"}}");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	return unit_rmtree(dir);
}

static struct policy *
load(const char *text, char **cause)
{
	return policy_load_buffer(text, strlen(text), "op.json", &ctx, cause);
}

static void
refused(const char *text, const char *want)
{
	struct policy	*p;
	char		*cause;

	if ((p = load(text, &cause)) != NULL) {
		policy_free(p);
		fail_msg("accepted: %s", text);
	}
	assert_contains(cause, want);
	free(cause);
}

#define OP(rules, def)	"{\"version\": 1, \"network\": {\"allow\": " \
	"[\"common.test\"], \"deny\": [\"evil.test\"]}, \"identities\": " \
	"{\"rules\": [" rules "], \"default\": " def "}}"

static void
test_glob(void **state)
{
	static const struct {
		const char	*g, *id;
		bool		 match;
	} t[] = {
		{ "spiffe://corp/ci/*", "spiffe://corp/ci/runner", true },
		{ "spiffe://corp/ci/*", "spiffe://corp/ci/a/b", false },
		{ "spiffe://corp/ci/*", "spiffe://corp/ci/", false },
		{ "spiffe://corp/ci/*", "spiffe://corp/ci", false },
		{ "spiffe://corp/ci/*", "spiffe://corp/cid/x", false },
		{ "spiffe://corp/*/runner", "spiffe://corp/ci/runner", true },
		{ "spiffe://corp/*/runner", "spiffe://corp/ci/other", false },
		{ "spiffe://corp/**", "spiffe://corp/ci/a/b", true },
		{ "spiffe://corp/**", "spiffe://corp/x", true },
		{ "spiffe://corp/**", "spiffe://corp/", false },
		{ "spiffe://corp/**", "spiffe://corp", false },
		{ "spiffe://corp/**", "spiffe://corpx/y", false },
		{ "**", "dev-laptop", true },
		{ "**", "spiffe://any/thing", true },
		{ "*", "dev-laptop", true },
		{ "*", "spiffe://x", false },
		{ "dev-laptop", "dev-laptop", true },
		{ "dev-laptop", "Dev-laptop", false },
		{ "dev-laptop", "dev-laptop2", false },
		{ "spiffe://corp/ci/runner", "spiffe://corp/ci/runner", true },
	};
	static const char *const bad[] = {
		"", "ci-*", "spiffe://corp/**/x", "spiffe://corp/***", "a*b",
		"*x/y", "a\tb", "spiffe://corp/c*", "a*",
	};
	char	*cause;
	size_t	 i;

	(void)state;
	for (i = 0; i < nitems(t); i++) {
		assert_int_equal(policy_ident_glob_ok(t[i].g, &cause), 0);
		if (policy_ident_match(t[i].g, t[i].id) != t[i].match)
			fail_msg("%s against %s: not %d", t[i].g, t[i].id,
			    t[i].match);
	}
	for (i = 0; i < nitems(bad); i++) {
		if (policy_ident_glob_ok(bad[i], &cause) == 0)
			fail_msg("accepted glob \"%s\"", bad[i]);
		free(cause);
	}
}

static void
test_errors(void **state)
{
	(void)state;
	refused("{\"version\": 1, \"identities\": []}",
	    "identities: expected an object");
	refused("{\"version\": 1, \"identities\": {\"rules\": []}}",
	    "identities.default: missing");
	refused("{\"version\": 1, \"identities\": {\"default\": \"deny\"}}",
	    "identities.rules: expected an array");
	refused(OP("", "\"deny\", \"x\": 1"), "identities.x: unknown key "
	    "(known here: \"rules\", \"default\")");
	refused(OP("{\"match\": \"a\", \"policy\": \"ci.json\", "
	    "\"acton\": \"report\"}", "\"deny\""), "identities.rules[0]."
	    "acton: unknown key");
	refused(OP("{\"policy\": \"ci.json\"}", "\"deny\""),
	    "rules[0].match: expected a glob");
	refused(OP("{\"match\": \"ci-*\", \"policy\": \"ci.json\"}",
	    "\"deny\""), "rules[0].match: \"ci-*\": '*' may only be");
	refused(OP("{\"match\": \"a\"}", "\"deny\""),
	    "rules[0].policy: expected a policy file");
	refused(OP("{\"match\": \"a\", \"policy\": \"none.json\"}",
	    "\"deny\""), "rules[0].policy: \"none.json\"");
	refused(OP("{\"match\": \"a\", \"policy\": \"wide.json\"}",
	    "\"deny\""), "an identity's policy may hold only");
	refused(OP("{\"match\": \"a\", \"policy\": \"mode.json\"}",
	    "\"deny\""), "an identity's policy may hold only");
	refused(OP("{\"match\": \"a\", \"policy\": \"nest.json\"}",
	    "\"deny\""), "an identity's policy may hold only");
	refused(OP("{\"match\": \"a\", \"policy\": \"ci.json\", "
	    "\"action\": \"open\"}", "\"deny\""),
	    "rules[0].action: expected \"enforce\" or \"report\"");
	refused(OP("{\"match\": \"a\", \"policy\": \"ci.json\", "
	    "\"limits\": {\"max_tunnels\": 0}}", "\"deny\""),
	    "limits.max_tunnels: expected a whole number");
	refused(OP("{\"match\": \"a\", \"policy\": \"ci.json\", "
	    "\"limits\": {\"new_per_second\": \"5\"}}", "\"deny\""),
	    "limits.new_per_second: expected a whole number");
	refused(OP("{\"match\": \"a\", \"policy\": \"ci.json\", "
	    "\"limits\": {\"max\": 1}}", "\"deny\""),
	    "limits.max: unknown key");
	refused(OP("", "3"), "identities.default: expected \"deny\"");
	refused(OP("", "{\"match\": \"a\", \"policy\": \"ci.json\"}"),
	    "identities.default.match: unknown key");
	refused(OP("7", "\"deny\""), "rules[0]: expected an object");
}

/* A workspace policy may not choose identities. */
static void
test_workspace(void **state)
{
	struct policy_ctx	 ws = ctx;
	struct policy		*p;
	char			*cause;
	const char		*text = OP("", "\"deny\"");

	(void)state;
	ws.pc_untrusted = true;
	p = policy_load_buffer(text, strlen(text), "ws.json", &ws, &cause);
	assert_null(p);
	assert_contains(cause, "a workspace policy may not use "
	    "\"identities\"");
	free(cause);
}

/* The first rule that matches wins; the default takes the rest. */
static void
test_find(void **state)
{
	struct policy		*p;
	const struct pident	*r;
	char			*cause = NULL;

	(void)state;
	p = load(OP("{\"match\": \"spiffe://corp/ci/*\", \"policy\": "
	    "\"ci.json\", \"limits\": {\"max_tunnels\": 3, "
	    "\"new_per_second\": 7}}, {\"match\": \"**\", \"policy\": "
	    "\"dev.json\", \"action\": \"report\"}", "\"ci.json\""), &cause);
	if (p == NULL)
		fail_msg("%s", cause);
	r = policy_ident_find(p, "spiffe://corp/ci/runner");
	assert_ptr_equal(r, &p->p_idents->is_v[0]);
	assert_int_equal(r->id_max_tunnels, 3);
	assert_int_equal(r->id_new_per_second, 7);
	assert_int_equal(r->id_action, IDENT_ENFORCE);
	assert_contains(r->id_from, "op.json: identities.rules[0]");
	r = policy_ident_find(p, "dev-laptop");
	assert_ptr_equal(r, &p->p_idents->is_v[1]);
	assert_int_equal(r->id_action, IDENT_REPORT);
	policy_free(p);

	p = load(OP("{\"match\": \"spiffe://corp/ci/*\", \"policy\": "
	    "\"ci.json\"}", "\"deny\""), &cause);
	r = policy_ident_find(p, "dev-laptop");
	assert_ptr_equal(r, &p->p_idents->is_default);
	assert_null(r->id_layer);
	policy_free(p);
}

/* Decides host for identity id under p; returns the verdict. */
static bool
decide(const struct policy *p, const char *id, const char *host,
    struct decision *d)
{
	struct policy	*j;
	bool		 ok;

	j = policy_ident_join(p, policy_ident_find(p, id), id);
	assert_null(j->p_idents);
	ok = policy_match_host(j, host, strlen(host), 443, d);
	/* What report may lift is read before j goes. */
	d->d_host_port = d->d_rule != NULL && d->d_rule->pi_ident;
	d->d_rule = NULL;
	if (d->d_why == WHY_MODE_NONE)
		assert_contains(d->d_mode_from, "identities.default is "
		    "\"deny\", and no rule matches the identity");
	d->d_mode_from = NULL;
	policy_free(j);
	return ok;
}

/*
 * The join: an identity's allow entries join the operator's; its deny
 * entries too; the operator's deny entries refuse whatever the layer
 * allows; the default "deny" refuses everything; another identity
 * keeps only the operator's.
 */
static void
test_join(void **state)
{
	struct policy	*p;
	struct decision	 d;
	char		*cause = NULL;

	(void)state;
	p = load(OP("{\"match\": \"spiffe://corp/ci/*\", \"policy\": "
	    "\"ci.json\"}, {\"match\": \"dev-laptop\", \"policy\": "
	    "\"dev.json\", \"action\": \"report\"}", "\"deny\""), &cause);
	if (p == NULL)
		fail_msg("%s", cause);
	assert_true(decide(p, "spiffe://corp/ci/runner", "ci.test", &d));
	decision_clear(&d);
	assert_true(decide(p, "spiffe://corp/ci/runner", "common.test", &d));
	decision_clear(&d);
	assert_false(decide(p, "spiffe://corp/ci/runner", "evil.test", &d));
	assert_int_equal(d.d_why, WHY_DENY_RULE);
	assert_false(d.d_host_port);	/* the operator's: not liftable */
	decision_clear(&d);
	assert_false(decide(p, "spiffe://corp/ci/runner", "no.ci.test", &d));
	assert_true(d.d_host_port);	/* the layer's own deny */
	decision_clear(&d);
	assert_false(decide(p, "dev-laptop", "ci.test", &d));
	assert_int_equal(d.d_why, WHY_NO_RULE);
	assert_true(policy_ident_liftable(&d));
	decision_clear(&d);
	assert_true(decide(p, "dev-laptop", "common.test", &d));
	assert_false(policy_ident_liftable(&d));
	decision_clear(&d);
	assert_false(decide(p, "stranger", "common.test", &d));
	assert_int_equal(d.d_why, WHY_MODE_NONE);
	assert_false(policy_ident_liftable(&d));
	decision_clear(&d);
	policy_free(p);
}

/* What report may lift: no rule, or the layer's own deny; never else. */
static void
test_liftable(void **state)
{
	struct pitem	 own = { .pi_ident = true }, op = { 0 };
	struct decision	 d = { 0 };

	(void)state;
	d.d_verdict = VERDICT_DENY;
	d.d_why = WHY_NO_RULE;
	assert_true(policy_ident_liftable(&d));
	d.d_why = WHY_DENY_RULE;
	d.d_rule = &own;
	assert_true(policy_ident_liftable(&d));
	d.d_rule = &op;
	assert_false(policy_ident_liftable(&d));
	d.d_why = WHY_SPECIAL_ADDR;
	assert_false(policy_ident_liftable(&d));
	d.d_why = WHY_MODE_NONE;
	assert_false(policy_ident_liftable(&d));
	d.d_why = WHY_BAD_NAME;
	assert_false(policy_ident_liftable(&d));
	d.d_verdict = VERDICT_ALLOW;
	d.d_why = WHY_NO_RULE;
	assert_false(policy_ident_liftable(&d));
}

/*
 * policy show prints identities so that they load back the same; a
 * later layer's replace an earlier one's.
 */
static void
test_show_merge(void **state)
{
	struct policy	*p, *q, *m;
	json_t		*j;
	char		*text, *again, *cause = NULL;

	(void)state;
	p = load(OP("{\"match\": \"spiffe://corp/ci/*\", \"policy\": "
	    "\"ci.json\", \"action\": \"report\", \"limits\": "
	    "{\"new_per_second\": 4}}", "{\"policy\": \"dev.json\"}"), &cause);
	if (p == NULL)
		fail_msg("%s", cause);
	j = policy_show_json(p, true);
	text = json_dumps(j, JSON_SORT_KEYS);
	json_decref(j);
	if ((q = load(text, &cause)) == NULL)
		fail_msg("%s: %s", text, cause);
	j = policy_show_json(q, true);
	again = json_dumps(j, JSON_SORT_KEYS);
	json_decref(j);
	assert_string_equal(text, again);
	assert_contains(text, "\"new_per_second\": 4");
	assert_contains(text, "\"default\": {\"action\": \"enforce\"");
	free(text);
	free(again);

	m = policy_new();
	policy_merge(m, p);
	policy_merge(m, q);
	assert_ptr_equal(m->p_idents, q->p_idents);
	policy_free(p);
	policy_free(q);
	assert_int_equal(m->p_idents->is_n, 1);	/* kept by m */
	policy_free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_workspace),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_liftable),
		cmocka_unit_test(test_show_merge),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
