/*
 * test_policy_merge.c: layering, and that the workspace layer can only
 * take away.
 */
#include "unit.h"

#include <errno.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"

static struct policy_ctx	 ctx = {
	.pc_workspace = "/w",
	.pc_home = "/h",
};

static struct policy *
load_as(const char *text, bool untrusted)
{
	struct policy_ctx	 c = ctx;
	struct policy		*p;
	char			*cause;

	c.pc_untrusted = untrusted;
	if ((p = policy_load_buffer(text, strlen(text),
	    untrusted ? ".cordon/policy.json" : "t.json", &c, &cause)) == NULL)
		fail_msg("%s", cause);
	return p;
}

static bool
allows(const struct policy *p, const char *host, int port)
{
	struct decision	 d;
	bool		 ok;

	ok = policy_match_host(p, host, strlen(host), port, &d);
	decision_clear(&d);
	return ok;
}

static const char *trusted_text =
    "{\"version\": 1, \"network\": {\"mode\": \"proxy\","
    " \"allow\": [\"github.com\", \"*.github.com\", \"*.npmjs.org\","
    " \"api.test:*\", \"pypi.org\", \"127.0.0.1:8080\"],"
    " \"deny\": [\"gist.github.com\"], \"allow_cidrs\": [\"10.0.0.0/8\"],"
    " \"unix_sockets\": \"deny\"},"
    " \"filesystem\": {\"write\": [\".\", \"/var/cache/x\"],"
    " \"read_only\": [\".git\"]},"
    " \"env\": {\"pass\": [\"PATH\", \"LC_*\", \"HOME\"],"
    " \"set\": {\"A\": \"1\"}}}";

static void
test_trusted_layers(void **state)
{
	struct policy	*p = policy_new(), *l1, *l2;

	(void)state;
	l1 = load_as(trusted_text, false);
	l2 = load_as("{\"version\": 1, \"network\": {\"mode\": \"none\","
	    " \"allow\": [\"extra.test\"]}, \"env\": {\"set\": {\"A\": \"2\","
	    " \"B\": \"3\"}}}", false);
	policy_merge(p, l1);
	policy_merge(p, l2);
	assert_int_equal(p->p_mode.ps_value, NET_NONE);	/* later wins */
	assert_string_equal(p->p_mode.ps_from, "t.json: network.mode");
	assert_int_equal(p->p_allow.pl_n, 7);		/* lists grow */
	assert_int_equal(p->p_env_set.pl_n, 2);
	assert_string_equal(p->p_env_set.pl_v[0].pi_value, "2");
	policy_free(l1);
	policy_free(l2);
	policy_free(p);
}

/* The merged policy of trusted_text narrowed by ws_text. */
static struct policy *
narrowed(const char *ws_text)
{
	struct policy	*p = policy_new(), *t, *ws;

	t = load_as(trusted_text, false);
	ws = load_as(ws_text, true);
	policy_merge(p, t);
	policy_merge_narrow(p, ws);
	policy_free(t);
	policy_free(ws);
	return p;
}

static void
test_workspace_cannot_widen(void **state)
{
	struct policy	*trusted, *p;
	static const char *hosts[] = {
		"github.com", "api.github.com", "gist.github.com",
		"registry.npmjs.org", "npmjs.org", "api.test", "pypi.org",
		"evil.test", "127.0.0.1", "10.0.0.1", "x.y.github.com",
	};
	static const int ports[] = { 80, 443, 22, 8080, 8443 };
	size_t		 i, j;

	(void)state;
	trusted = load_as(trusted_text, false);
	p = narrowed("{\"version\": 1, \"network\": {\"mode\": \"host\","
	    " \"allow\": [\"api.github.com\", \"*.github.com:8443\","
	    " \"registry.npmjs.org:443\", \"evil.test\", \"*.test:*\","
	    " \"gist.github.com\", \"127.0.0.1:*\", \"10.0.0.1:*\"],"
	    " \"allow_cidrs\": [\"0.0.0.0/0\", \"10.1.0.0/16\"],"
	    " \"unix_sockets\": \"allow\"},"
	    " \"filesystem\": {\"write\": [\"/\", \"sub\"],"
	    " \"read_only\": [\"docs\"], \"deny\": [\"secrets\"]},"
	    " \"env\": {\"pass\": [\"LC_*\", \"PATH\", \"SECRET_TOKEN\"]}}");
	/* Never allowed when the trusted layers refuse. */
	for (i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++)
		for (j = 0; j < sizeof(ports) / sizeof(ports[0]); j++)
			if (allows(p, hosts[i], ports[j]) &&
			    !allows(trusted, hosts[i], ports[j]))
				fail_msg("workspace widened %s:%d", hosts[i],
				    ports[j]);
	/* What the intersection keeps. */
	assert_true(allows(p, "api.github.com", 443));
	assert_false(allows(p, "github.com", 443));
	assert_true(allows(p, "x.github.com", 8443) == false);
	assert_true(allows(p, "registry.npmjs.org", 443));
	assert_false(allows(p, "registry.npmjs.org", 80));
	assert_true(allows(p, "api.test", 22));
	assert_false(allows(p, "evil.test", 443));
	assert_false(allows(p, "gist.github.com", 443));
	assert_true(allows(p, "127.0.0.1", 8080) == false);	/* no cidr */
	/* Single values only move toward the stricter. */
	assert_int_equal(p->p_mode.ps_value, NET_PROXY);
	assert_int_equal(p->p_unix.ps_value, UNIX_DENY);
	/* allow_cidrs intersect: 0.0.0.0/0 keeps 10.0.0.0/8, no more. */
	assert_int_equal(p->p_cidrs.pl_n, 2);
	assert_string_equal(p->p_cidrs.pl_v[0].pi_text, "10.0.0.0/8");
	assert_string_equal(p->p_cidrs.pl_v[1].pi_text, "10.1.0.0/16");
	/* Write roots shrink: "/" meets "." and /var/cache/x, "sub" is in ".". */
	assert_int_equal(p->p_write.pl_n, 3);
	assert_string_equal(p->p_write.pl_v[0].pi_text, "/w");
	assert_string_equal(p->p_write.pl_v[1].pi_text, "/w/sub");
	assert_string_equal(p->p_write.pl_v[2].pi_text, "/var/cache/x");
	/* read_only and deny grow. */
	assert_int_equal(p->p_read_only.pl_n, 2);
	assert_int_equal(p->p_hide.pl_n, 1);
	/* env.pass intersects: SECRET_TOKEN was never passed. */
	assert_int_equal(p->p_env_pass.pl_n, 2);
	assert_string_equal(p->p_env_pass.pl_v[0].pi_text, "PATH");
	assert_string_equal(p->p_env_pass.pl_v[1].pi_text, "LC_*");
	/* Origins name both layers. */
	assert_contains(p->p_allow.pl_v[0].pi_from, "narrowed by "
	    ".cordon/policy.json");
	policy_free(p);
	policy_free(trusted);
}

/*
 * filesystem.host_config: the workspace layer adds entries (judged
 * inside the workspace only) and takes none away, even written empty.
 */
static void
test_workspace_host_config(void **state)
{
	struct policy	*p = policy_new(), *t, *ws;

	(void)state;
	t = load_as("{\"version\": 1, \"filesystem\": {\"host_config\":"
	    " [\".envrc\", \"~/.tool/\"]}}", false);
	policy_merge(p, t);
	ws = load_as("{\"version\": 1, \"filesystem\": {\"host_config\":"
	    " []}}", true);
	policy_merge_narrow(p, ws);
	policy_free(ws);
	assert_int_equal(p->p_host_config.pl_n, 2);
	ws = load_as("{\"version\": 1, \"filesystem\": {\"host_config\":"
	    " [\"Taskfile.hooks\"]}}", true);
	policy_merge_narrow(p, ws);
	assert_int_equal(p->p_host_config.pl_n, 3);
	assert_string_equal(p->p_host_config.pl_v[0].pi_text, "/w/.envrc");
	assert_false(p->p_host_config.pl_v[0].pi_untrusted);
	assert_string_equal(p->p_host_config.pl_v[1].pi_text, "/h/.tool");
	assert_true(p->p_host_config.pl_v[1].pi_dir);
	assert_string_equal(p->p_host_config.pl_v[2].pi_text,
	    "/w/Taskfile.hooks");
	assert_true(p->p_host_config.pl_v[2].pi_untrusted);
	policy_free(ws);
	policy_free(t);
	policy_free(p);
}

static void
test_workspace_narrows(void **state)
{
	struct policy	*p;

	(void)state;
	/* Without an allow key, the allowlist is untouched. */
	p = narrowed("{\"version\": 1, \"network\": {\"deny\": "
	    "[\"api.github.com\"], \"mode\": \"none\"}}");
	assert_int_equal(p->p_allow.pl_n, 6);
	assert_int_equal(p->p_deny.pl_n, 2);
	assert_int_equal(p->p_mode.ps_value, NET_NONE);
	assert_false(allows(p, "github.com", 443));
	policy_free(p);
	/* An empty allow list empties it. */
	p = narrowed("{\"version\": 1, \"network\": {\"allow\": []}}");
	assert_int_equal(p->p_allow.pl_n, 0);
	assert_false(allows(p, "github.com", 443));
	policy_free(p);
	/* Disjoint write roots leave nothing writable. */
	p = narrowed("{\"version\": 1, \"filesystem\": {\"write\": "
	    "[\"/elsewhere\"]}, \"env\": {\"pass\": [\"LC_ALL\", \"TERM\"]}}");
	assert_int_equal(p->p_write.pl_n, 0);
	assert_int_equal(p->p_env_pass.pl_n, 1);
	assert_string_equal(p->p_env_pass.pl_v[0].pi_text, "LC_ALL");
	policy_free(p);
}

static void
test_pattern_intersect(void **state)
{
	static const struct {
		const char	*a, *b, *want;	/* want NULL: empty */
	} cases[] = {
		{ "github.com", "github.com", "github.com" },
		{ "github.com", "*.github.com", NULL },
		{ "api.github.com", "*.github.com", "api.github.com" },
		{ "*.github.com", "api.github.com", "api.github.com" },
		{ "*.a.test", "*.test", "*.a.test" },
		{ "*.test", "*.a.test", "*.a.test" },
		{ "*.a.test", "*.b.test", NULL },
		{ "a.test", "a.test:443", "a.test:443" },
		{ "a.test", "a.test:8443", NULL },
		{ "a.test:*", "a.test:8443", "a.test:8443" },
		{ "a.test:*", "a.test", "a.test" },
		{ "a.test:*", "a.test:*", "a.test:*" },
		{ "10.0.0.1", "10.0.0.1:443", "10.0.0.1:443" },
		{ "10.0.0.1", "*.test", NULL },
		{ "[::1]:*", "[::1]:80", "[::1]:80" },
	};
	struct pitem	 a, b, out;
	char		*cause;
	size_t		 i;
	bool		 got;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		assert_int_equal(policy_parse_pattern(cases[i].a, &a, &cause),
		    0);
		assert_int_equal(policy_parse_pattern(cases[i].b, &b, &cause),
		    0);
		a.pi_from = strdup("A");
		b.pi_from = strdup("B");
		got = policy_match_intersect(&a, &b, &out);
		if (cases[i].want == NULL && got)
			fail_msg("%s ^ %s = %s", cases[i].a, cases[i].b,
			    out.pi_text);
		if (cases[i].want != NULL) {
			if (!got)
				fail_msg("%s ^ %s is empty", cases[i].a,
				    cases[i].b);
			assert_string_equal(out.pi_text, cases[i].want);
			assert_string_equal(out.pi_from, "A, narrowed by B");
		}
		if (got)
			policy_pitem_clear(&out);
		policy_pitem_clear(&a);
		policy_pitem_clear(&b);
	}
}

static void
test_show_roundtrip(void **state)
{
	struct policy	*p, *back;
	json_t		*j1, *j2;
	char		*s1, *s2, *cause;

	(void)state;
	p = narrowed("{\"version\": 1, \"network\": {\"allow\": "
	    "[\"*.github.com\"]}}");
	j1 = policy_show_json(p, true);
	s1 = json_dumps(j1, JSON_INDENT(2));
	if ((back = policy_load_buffer(s1, strlen(s1), "shown.json", &ctx,
	    &cause)) == NULL)
		fail_msg("%s", cause);
	j2 = policy_show_json(back, true);
	s2 = json_dumps(j2, JSON_INDENT(2));
	assert_string_equal(s1, s2);
	assert_contains(s1, "\"from\": \"t.json: network.allow[1], narrowed "
	    "by .cordon/policy.json: network.allow[0]\"");
	free(s1);
	free(s2);
	json_decref(j1);
	json_decref(j2);
	policy_free(back);
	policy_free(p);
}

static const char *tls_a =
    "{\"version\": 1, \"network\": {\"inspect\": [{\"host\": "
    "\"api.github.com\", \"methods\": [\"GET\", \"HEAD\"], \"paths\": "
    "[\"/repos/myorg/*\"]}]}, \"credentials\": [{\"host\": "
    "\"api.github.com\", \"env\": \"GITHUB_TOKEN\", \"header\": "
    "\"Authorization\", \"format\": \"Bearer %s\"}],"
    " \"tls\": {\"ca_dir\": \"/etc/ca\"}}";
static const char *tls_b =
    "{\"version\": 1, \"network\": {\"inspect\": [{\"host\": "
    "\"*.example.test\", \"methods\": [\"POST\"], \"paths\": "
    "[\"/upload\"]}]}, \"credentials\": [{\"host\": "
    "\"*.example.test\", \"env\": \"KEY\", \"header\": "
    "\"X-Key\", \"format\": \"%s\"}], \"tls\": {\"ca_dir\": \"~/ca\"}}";

/*
 * Trusted layers: inspect and credentials append, a later tls.ca_dir
 * replaces; the workspace layer leaves them as they are; `policy show`
 * prints them and its output loads back to the same.
 */
static void
test_tls_keys_merge(void **state)
{
	struct policy	*p, *a, *b, *ws, *back;
	json_t		*j1, *j2;
	char		*s1, *s2, *cause;

	(void)state;
	p = policy_new();
	a = load_as(tls_a, false);
	b = load_as(tls_b, false);
	policy_merge(p, a);
	policy_merge(p, b);
	assert_int_equal(p->p_ninspect, 2);
	assert_string_equal(p->p_inspect[0].in_host.pi_text, "api.github.com");
	assert_string_equal(p->p_inspect[1].in_host.pi_text, "*.example.test");
	assert_string_equal(p->p_inspect[1].in_paths.pl_v[0].pi_text,
	    "/upload");
	assert_int_equal(p->p_ncreds, 2);
	assert_string_equal(p->p_creds[1].cr_env, "KEY");
	assert_int_equal(p->p_ca_dir.pl_n, 1);
	assert_string_equal(p->p_ca_dir.pl_v[0].pi_text, "/h/ca");
	assert_string_equal(p->p_ca_dir.pl_v[0].pi_from, "t.json: tls.ca_dir");

	/* A later layer without tls.ca_dir keeps the earlier one. */
	ws = load_as("{\"version\": 1, \"network\": {\"deny\": "
	    "[\"x.test\"]}}", false);
	policy_merge(p, ws);
	assert_string_equal(p->p_ca_dir.pl_v[0].pi_text, "/h/ca");
	policy_free(ws);

	/* The workspace layer changes none of them. */
	ws = load_as("{\"version\": 1, \"network\": {\"allow\": "
	    "[\"api.github.com\"]}}", true);
	policy_merge_narrow(p, ws);
	assert_int_equal(p->p_ninspect, 2);
	assert_int_equal(p->p_ncreds, 2);
	assert_int_equal(p->p_ca_dir.pl_n, 1);
	policy_free(ws);

	j1 = policy_show_json(p, true);
	s1 = json_dumps(j1, JSON_INDENT(2));
	if ((back = policy_load_buffer(s1, strlen(s1), "shown.json", &ctx,
	    &cause)) == NULL)
		fail_msg("%s", cause);
	j2 = policy_show_json(back, true);
	s2 = json_dumps(j2, JSON_INDENT(2));
	assert_string_equal(s1, s2);
	assert_contains(s1, "\"format\": \"Bearer %s\"");
	assert_contains(s1, "\"from\": \"t.json: network.inspect[0]\"");
	assert_contains(s1, "\"from\": \"t.json: credentials[0]\"");
	free(s1);
	free(s2);
	json_decref(j1);
	json_decref(j2);

	/* Plain output too, and no keys when none were set. */
	j1 = policy_show_json(back, false);
	s1 = json_dumps(j1, JSON_COMPACT);
	assert_contains(s1, "\"methods\":[\"GET\",\"HEAD\"]");
	assert_contains(s1, "\"tls\":{\"ca_dir\":\"/h/ca\"}");
	free(s1);
	json_decref(j1);
	policy_free(back);
	back = policy_new();
	j1 = policy_show_json(back, false);
	assert_null(json_object_get(j1, "credentials"));
	assert_null(json_object_get(j1, "tls"));
	assert_null(json_object_get(json_object_get(j1, "network"),
	    "inspect"));
	json_decref(j1);
	policy_free(back);
	policy_free(a);
	policy_free(b);
	policy_free(p);
}

/* The built-in defaults are policies/default.json, and mean what it says. */
static void
test_defaults(void **state)
{
	struct policy	*p;
	char		*cause;
	size_t		 i;
	bool		 ssh = false, git = false, cordon = false, bashrc = false;
	bool		 claude = false, envrc = false;

	(void)state;
	if ((p = policy_merge_defaults(&ctx, &cause)) == NULL)
		fail_msg("%s", cause);
	assert_int_equal(p->p_mode.ps_value, NET_PROXY);
	assert_int_equal(p->p_unix.ps_value, UNIX_DENY);
	assert_int_equal(p->p_allow.pl_n, 0);		/* refuses everything */
	assert_false(allows(p, "github.com", 443));
	assert_int_equal(p->p_write.pl_n, 1);
	assert_string_equal(p->p_write.pl_v[0].pi_text, "/w");
	for (i = 0; i < p->p_read_only.pl_n; i++) {
		/* A repository's code is the scan's; its history writable. */
		git |= strcmp(p->p_read_only.pl_v[i].pi_text, "/w/.git") == 0;
		cordon |= strcmp(p->p_read_only.pl_v[i].pi_text,
		    "/w/.cordon") == 0 && p->p_read_only.pl_v[i].pi_dir;
		bashrc |= strcmp(p->p_read_only.pl_v[i].pi_text,
		    "/h/.bashrc") == 0 && !p->p_read_only.pl_v[i].pi_dir;
	}
	for (i = 0; i < p->p_hide.pl_n; i++)
		ssh |= strcmp(p->p_hide.pl_v[i].pi_text, "/h/.ssh") == 0;
	/* What agents and editors run from the workspace: judged. */
	for (i = 0; i < p->p_host_config.pl_n; i++) {
		claude |= strcmp(p->p_host_config.pl_v[i].pi_text,
		    "/w/.claude") == 0 && p->p_host_config.pl_v[i].pi_dir;
		envrc |= strcmp(p->p_host_config.pl_v[i].pi_text,
		    "/w/.envrc") == 0;
	}
	assert_true(claude);
	assert_true(envrc);
	assert_false(git);
	assert_true(cordon);
	assert_true(bashrc);
	assert_true(ssh);
	assert_string_equal(p->p_mode.ps_from, "built-in defaults: "
	    "network.mode");
	policy_free(p);
}

/* Writes text to dir/name. */
static void
put(const char *dir, const char *name, const char *text)
{
	char	*path;
	FILE	*f;

	xasprintf(&path, "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
	free(path);
}

/*
 * What a run in a workspace with .cordon/policy.json ws_text (NULL: none)
 * and flags args sends to an operator's proxy.  A --policy argument
 * "trusted.json" is the file of that name beside .cordon.
 */
static struct policy *
narrowing(const char *ws_text, const char **args, size_t nargs)
{
	struct policy_layers	 pl;
	struct policy		*merged, *p;
	char			 dir[] = "/tmp/test_narrowing.XXXXXX";
	char			*cause, *cmd;

	if (mkdtemp(dir) == NULL)
		fail_msg("mkdtemp: %s", strerror(errno));
	if (chdir(dir) == -1 || mkdir(".cordon", 0755) == -1)
		fail_msg("%s: %s", dir, strerror(errno));
	if (ws_text != NULL)
		put(dir, ".cordon/policy.json", ws_text);
	put(dir, "trusted.json", "{\"version\": 1, \"network\": {\"allow\": "
	    "[\"other.test\"], \"deny\": [\"t.test\"]}}");
	setenv("CORDON_SYSTEM_POLICY", "", 1);
	setenv("XDG_CONFIG_HOME", dir, 1);
	memset(&pl, 0, sizeof(pl));
	pl.ly_args = args;
	pl.ly_nargs = nargs;
	pl.ly_workspace = dir;
	if ((merged = policy_merge_layers(&pl, NULL, &cause)) == NULL)
		fail_msg("%s", cause);
	p = policy_merge_layers_narrowing(&pl, merged, &cause);
	policy_free(merged);
	xasprintf(&cmd, "rm -rf %s", dir);
	if (chdir("/") == -1 || system(cmd) != 0)
		fail_msg("%s failed", cmd);
	free(cmd);
	if (p == NULL)
		fail_msg("%s", cause);
	return p;
}

static void
test_narrowing(void **state)
{
	const char	*flags[] = { "--allow-domain", "api.github.com",
			    "--deny-domain", "x.test", "--write", "/tmp",
			    "--allow-cidr", "10.1.0.0/16",
			    "--policy", "trusted.json" };
	struct policy	*p;

	(void)state;
	/* Nothing to send: no flags, no workspace policy. */
	p = narrowing(NULL, NULL, 0);
	assert_false(p->p_allow.pl_set || p->p_deny.pl_set ||
	    p->p_cidrs.pl_set);
	policy_free(p);
	/* The workspace's lists alone: as written. */
	p = narrowing("{\"version\": 1, \"network\": {\"deny\": "
	    "[\"evil.test\"], \"allow\": [\"*.github.com\"]}}", NULL, 0);
	assert_int_equal(p->p_deny.pl_n, 1);
	assert_string_equal(p->p_deny.pl_v[0].pi_text, "evil.test");
	assert_int_equal(p->p_allow.pl_n, 1);
	assert_false(p->p_cidrs.pl_set);
	policy_free(p);
	/*
	 * With flags and a trusted file: every deny entry, and the allow
	 * lists and CIDRs of the flags met with the workspace's; the
	 * trusted file's allow list is not sent.
	 */
	p = narrowing("{\"version\": 1, \"network\": {\"deny\": "
	    "[\"evil.test\"], \"allow\": [\"*.github.com\", \"a.test\","
	    " \"*.test\"], \"allow_cidrs\": [\"10.0.0.0/8\"]}}", flags,
	    nitems(flags));
	assert_int_equal(p->p_deny.pl_n, 3);
	assert_string_equal(p->p_deny.pl_v[0].pi_text, "x.test");
	assert_string_equal(p->p_deny.pl_v[1].pi_text, "t.test");
	assert_string_equal(p->p_deny.pl_v[2].pi_text, "evil.test");
	assert_int_equal(p->p_allow.pl_n, 1);
	assert_string_equal(p->p_allow.pl_v[0].pi_text, "api.github.com");
	assert_int_equal(p->p_cidrs.pl_n, 1);
	assert_string_equal(p->p_cidrs.pl_v[0].pi_text, "10.1.0.0/16");
	assert_int_equal(p->p_write.pl_n, 0);
	policy_free(p);
	/* An empty allowlist there is sent, and admits nothing. */
	p = narrowing("{\"version\": 1, \"network\": {\"allow\": []}}",
	    flags, 2);
	assert_true(p->p_allow.pl_set);
	assert_int_equal(p->p_allow.pl_n, 0);
	policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trusted_layers),
		cmocka_unit_test(test_workspace_cannot_widen),
		cmocka_unit_test(test_workspace_narrows),
		cmocka_unit_test(test_workspace_host_config),
		cmocka_unit_test(test_pattern_intersect),
		cmocka_unit_test(test_show_roundtrip),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_tls_keys_merge),
		cmocka_unit_test(test_narrowing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
