/*
 * test_policy_load.c: every loader error, and what a good layer holds.
 */
#include "unit.h"

#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "policies/policy.h"

static struct policy_ctx	 ctx = {
	.pc_workspace = "/srv/space",
	.pc_home = "/home/user",
};

/* Loads text; returns the policy, or NULL with *cause set. */
static struct policy *
load(const char *text, char **cause)
{
	return policy_load_buffer(text, strlen(text), "test.json", &ctx,
	    cause);
}

/* Asserts that text is refused with a message holding want. */
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

static void
test_syntax(void **state)
{
	(void)state;
	refused("{\"version\": 1,\n \"network\": {\"allow\": [\"a.test\",]}}",
	    "test.json:2:");
	refused("{\"version\": 1, \"version\": 1}", "duplicate object key");
	refused("[1]", "a policy is a JSON object, found an array");
	refused("", "test.json:");
	refused("{\"version\": 1, \"network\": {\"allow\": [\"a\\u0000b\"]}}",
	    "test.json:1:");
}

static void
test_version(void **state)
{
	(void)state;
	refused("{}", "missing \"version\": 1");
	refused("{\"version\": 2}", "version: this cordon reads \"version\": "
	    "1");
	refused("{\"version\": \"1\"}", "reads \"version\": 1");
}

static void
test_unknown_keys(void **state)
{
	(void)state;
	refused("{\"version\": 1, \"netwrk\": {}}",
	    "unknown key \"netwrk\" (known here: \"version\", \"network\", "
	    "\"filesystem\", \"env\", \"credentials\", \"tls\", "
	    "\"identities\", \"tier\")");
	refused("{\"version\": 1, \"network\": {\"alow\": []}}",
	    "unknown key \"network.alow\" (known here: \"mode\", \"allow\"");
	refused("{\"version\": 1, \"filesystem\": {\"writable\": []}}",
	    "unknown key \"filesystem.writable\"");
	refused("{\"version\": 1, \"env\": {\"keep\": []}}",
	    "unknown key \"env.keep\"");
}

static void
test_types(void **state)
{
	(void)state;
	refused("{\"version\": 1, \"network\": []}",
	    "test.json: network: expected an object, found an array");
	refused("{\"version\": 1, \"network\": {\"allow\": \"a.test\"}}",
	    "network.allow: expected an array of strings, found a string");
	refused("{\"version\": 1, \"network\": {\"allow\": [1]}}",
	    "network.allow[0]: expected a string, found a number");
	refused("{\"version\": 1, \"network\": {\"mode\": true}}",
	    "network.mode: expected a string, found a boolean");
	refused("{\"version\": 1, \"env\": {\"set\": []}}",
	    "env.set: expected an object of strings, found an array");
	refused("{\"version\": 1, \"env\": {\"set\": {\"A\": null}}}",
	    "env.set.A: expected a string, found null");
}

static void
test_values(void **state)
{
	(void)state;
	refused("{\"version\": 1, \"network\": {\"mode\": \"open\"}}",
	    "network.mode: \"open\": expected \"none\", \"proxy\" or \"host\"");
	refused("{\"version\": 1, \"network\": {\"unix_sockets\": \"yes\"}}",
	    "expected \"deny\" or \"allow\"");
	refused("{\"version\": 1, \"network\": {\"allow\": [\"*\"]}}",
	    "network.allow[0]: \"*\": \"*\" alone would allow every host");
	refused("{\"version\": 1, \"network\": {\"allow\": [\"a.*.test\"]}}",
	    "'*' may only stand as the whole first label");
	refused("{\"version\": 1, \"network\": {\"allow\": [\"*a.test\"]}}",
	    "'*' may only stand");
	refused("{\"version\": 1, \"network\": {\"allow\": [\"a.test:0\"]}}",
	    "bad port \"0\"");
	refused("{\"version\": 1, \"network\": {\"allow\": "
	    "[\"a.test:99999\"]}}",
	    "bad port \"99999\"");
	refused("{\"version\": 1, \"network\": {\"allow\": [\"a.test:\"]}}",
	    "bad port \"\"");
	refused("{\"version\": 1, \"network\": {\"deny\": [\"a%2e.test\"]}}",
	    "network.deny[0]: \"a%2e.test\": '%' in a host");
	refused("{\"version\": 1, \"network\": {\"allow\": [\"*.10.0.0.1\"]}}",
	    "\"*.\" cannot go before an IP address");
	refused("{\"version\": 1, \"network\": {\"allow\": [\"[::1\"]}}",
	    "'[' without ']'");
	refused("{\"version\": 1, \"network\": {\"allow_cidrs\": "
	    "[\"10.0.0.1/8\"]}}",
	    "network.allow_cidrs[0]: \"10.0.0.1/8\": host bits set");
	refused("{\"version\": 1, \"filesystem\": {\"write\": [\"\"]}}",
	    "filesystem.write[0]: \"\": empty path");
	refused("{\"version\": 1, \"filesystem\": {\"deny\": [\"~root/x\"]}}",
	    "\"~user\" paths are not supported");
	refused("{\"version\": 1, \"env\": {\"pass\": [\"A-B\"]}}",
	    "env.pass[0]: \"A-B\": not a variable name");
	refused("{\"version\": 1, \"env\": {\"pass\": [\"*\"]}}",
	    "not a variable name");
	refused("{\"version\": 1, \"env\": {\"set\": {\"1A\": \"x\"}}}",
	    "env.set.1A: \"1A\": not a variable name");
}

static void
test_annotated(void **state)
{
	struct policy	*p;
	char		*cause;

	(void)state;
	p = load("{\"version\": 1, \"network\": {"
	    "\"mode\": {\"value\": \"none\", \"from\": \"ops.json\"},"
	    "\"allow\": [{\"value\": \"A.Test.\", \"from\": "
	    "\"--allow-domain\"},"
	    " {\"value\": \"b.test\"}]}}", &cause);
	if (p == NULL)
		fail_msg("%s", cause);
	assert_int_equal(p->p_mode.ps_value, NET_NONE);
	assert_string_equal(p->p_mode.ps_from, "ops.json");
	assert_int_equal(p->p_allow.pl_n, 2);
	assert_string_equal(p->p_allow.pl_v[0].pi_text, "a.test");
	assert_string_equal(p->p_allow.pl_v[0].pi_from, "--allow-domain");
	assert_string_equal(p->p_allow.pl_v[1].pi_from,
	    "test.json: network.allow[1]");
	policy_free(p);

	refused("{\"version\": 1, \"network\": {\"allow\": [{\"value\": "
	    "\"a.test\", \"from\": 1}]}}", "an annotated value has only");
	refused("{\"version\": 1, \"network\": {\"allow\": [{\"value\": "
	    "\"a.test\", \"why\": \"x\"}]}}", "an annotated value has only");
	refused("{\"version\": 1, \"network\": {\"allow\": [{\"from\": "
	    "\"x\"}]}}", "network.allow[0]: expected a string, found an "
	    "object");
}

static void
test_good(void **state)
{
	struct policy	*p;
	char		*cause;

	(void)state;
	p = load("{\"version\": 1,"
	    " \"network\": {\"mode\": \"proxy\", \"allow\": [\"GitHub.com\","
	    "  \"*.githubusercontent.com\", \"api.test:8443\", \"any.test:*\","
	    "  \"0x7f.1\", \"[::1]:80\"], \"deny\": [\"gist.github.com\"],"
	    "  \"allow_cidrs\": [\"127.0.0.1/32\"], \"unix_sockets\": "
	    "\"deny\"},"
	    " \"filesystem\": {\"write\": [\".\", \"sub/../out\"],"
	    "  \"read_only\": [\".git\"], \"deny\": [\"~/.ssh\", "
	    "\"/a//b/./c/\"]},"
	    " \"env\": {\"pass\": [\"PATH\", \"LC_*\"], \"set\": {\"FOO\": "
	    "\"bar\"}}}", &cause);
	if (p == NULL)
		fail_msg("%s", cause);
	assert_int_equal(p->p_allow.pl_n, 6);
	assert_string_equal(p->p_allow.pl_v[0].pi_text, "github.com");
	assert_int_equal(p->p_allow.pl_v[0].pi_kind, PAT_NAME);
	assert_int_equal(p->p_allow.pl_v[0].pi_port, PORT_UNSET);
	assert_string_equal(p->p_allow.pl_v[1].pi_text,
	    "*.githubusercontent.com");
	assert_int_equal(p->p_allow.pl_v[1].pi_kind, PAT_SUFFIX);
	assert_string_equal(p->p_allow.pl_v[1].pi_host, "githubusercontent.com");
	assert_int_equal(p->p_allow.pl_v[2].pi_port, 8443);
	assert_int_equal(p->p_allow.pl_v[3].pi_port, PORT_ANY);
	assert_string_equal(p->p_allow.pl_v[3].pi_text, "any.test:*");
	assert_string_equal(p->p_allow.pl_v[4].pi_text, "127.0.0.1");
	assert_int_equal(p->p_allow.pl_v[4].pi_kind, PAT_ADDR);
	assert_string_equal(p->p_allow.pl_v[5].pi_text, "[::1]:80");
	assert_string_equal(p->p_write.pl_v[0].pi_text, "/srv/space");
	assert_string_equal(p->p_write.pl_v[1].pi_text, "/srv/space/out");
	assert_string_equal(p->p_read_only.pl_v[0].pi_text,
	    "/srv/space/.git");
	assert_string_equal(p->p_hide.pl_v[0].pi_text, "/home/user/.ssh");
	assert_string_equal(p->p_hide.pl_v[1].pi_text, "/a/b/c");
	assert_string_equal(p->p_env_set.pl_v[0].pi_text, "FOO");
	assert_string_equal(p->p_env_set.pl_v[0].pi_value, "bar");
	assert_true(p->p_allow.pl_set);
	assert_false(p->p_write.pl_set == false);
	policy_free(p);
}

static void
test_all_errors_at_once(void **state)
{
	struct policy	*p;
	char		*cause, *line;
	int		 lines = 0;

	(void)state;
	p = load("{\"version\": 1, \"network\": {\"allow\": [\"ok.test\", "
	    "\"bad test\", \"*\"], \"mode\": \"x\", \"colour\": 1},"
	    " \"filesystem\": {\"write\": [\"\"]}}", &cause);
	assert_null(p);
	for (line = cause; line != NULL; line = strchr(line + 1, '\n'))
		lines++;
	assert_int_equal(lines, 5);
	assert_contains(cause, "network.allow[1]");
	assert_contains(cause, "network.allow[2]");
	assert_contains(cause, "network.mode");
	assert_contains(cause, "unknown key \"network.colour\"");
	assert_contains(cause, "filesystem.write[0]");
	free(cause);
}

#define INSPECT(entry)	"{\"version\": 1, \"network\": {\"inspect\": [" \
			    entry "]}}"
#define CRED(entry)	"{\"version\": 1, \"credentials\": [" entry "]}"
#define GOOD_INSPECT	"\"host\": \"api.test\", \"methods\": [\"GET\"], " \
			    "\"paths\": [\"/a\"]"
#define GOOD_CRED	"\"host\": \"api.test\", \"env\": \"TOKEN\", " \
			    "\"header\": \"Authorization\", \"format\": " \
			    "\"Bearer %s\""

/* network.inspect, credentials and tls (issue 7): what is accepted. */
static void
test_tls_keys_good(void **state)
{
	struct policy	*p;
	char		*cause;

	(void)state;
	p = load("{\"version\": 1, \"network\": {\"inspect\": ["
	    "{\"host\": \"API.GitHub.com.\", \"methods\": [\"get\", "
	    "\"HEAD\", \"M-SEARCH\"], \"paths\": [\"/repos/myorg/*\", "
	    "\"/user\"]},"
	    "{\"value\": {\"host\": \"*.example.test\", \"methods\": "
	    "[\"POST\"], \"paths\": [\"/\"]}, \"from\": \"earlier\"}]},"
	    " \"credentials\": [{\"host\": \"api.github.com\", \"env\": "
	    "\"GITHUB_TOKEN\", \"header\": \"Authorization\", \"format\": "
	    "\"Bearer %s\"}, {\"host\": \"*.example.test\", \"env\": \"K\","
	    " \"header\": \"X-Api-Key\", \"format\": \"%s\"}],"
	    " \"tls\": {\"ca_dir\": \"~/.local/share/cordon/ca\"}}", &cause);
	if (p == NULL)
		fail_msg("%s", cause);
	assert_int_equal(p->p_ninspect, 2);
	assert_string_equal(p->p_inspect[0].in_host.pi_text, "api.github.com");
	assert_int_equal(p->p_inspect[0].in_host.pi_kind, PAT_NAME);
	assert_int_equal(p->p_inspect[0].in_methods.pl_n, 3);
	assert_string_equal(p->p_inspect[0].in_methods.pl_v[0].pi_text, "GET");
	assert_string_equal(p->p_inspect[0].in_methods.pl_v[2].pi_text,
	    "M-SEARCH");
	assert_string_equal(p->p_inspect[0].in_paths.pl_v[0].pi_text,
	    "/repos/myorg/*");
	assert_string_equal(p->p_inspect[0].in_host.pi_from,
	    "test.json: network.inspect[0]");
	assert_int_equal(p->p_inspect[1].in_host.pi_kind, PAT_SUFFIX);
	assert_string_equal(p->p_inspect[1].in_host.pi_from, "earlier");
	assert_int_equal(p->p_ncreds, 2);
	assert_string_equal(p->p_creds[0].cr_env, "GITHUB_TOKEN");
	assert_string_equal(p->p_creds[0].cr_header, "Authorization");
	assert_string_equal(p->p_creds[0].cr_format, "Bearer %s");
	assert_string_equal(p->p_creds[1].cr_host.pi_text, "*.example.test");
	assert_int_equal(p->p_ca_dir.pl_n, 1);
	assert_string_equal(p->p_ca_dir.pl_v[0].pi_text,
	    "/home/user/.local/share/cordon/ca");
	policy_free(p);
}

/* Each check on network.inspect and credentials, one at a time. */
static void
test_tls_keys_refused(void **state)
{
	(void)state;
	refused("{\"version\": 1, \"network\": {\"inspect\": {}}}",
	    "network.inspect: expected an array of objects");
	refused(INSPECT("\"api.test\""),
	    "network.inspect[0]: expected an object, found a string");
	refused(INSPECT("{" GOOD_INSPECT ", \"query\": []}"),
	    "unknown key \"network.inspect[0].query\" (known here: "
	    "\"host\", \"methods\", \"paths\")");
	refused(INSPECT("{\"methods\": [\"GET\"], \"paths\": [\"/\"]}"),
	    "network.inspect[0].host: missing");
	refused(INSPECT("{\"host\": \"*\", \"methods\": [\"GET\"], "
	    "\"paths\": [\"/\"]}"), "\"*\" alone would allow");
	refused(INSPECT("{\"host\": \"a*.test\", \"methods\": [\"GET\"], "
	    "\"paths\": [\"/\"]}"), "'*' may only stand as the whole");
	refused(INSPECT("{\"host\": \"10.0.0.1\", \"methods\": [\"GET\"], "
	    "\"paths\": [\"/\"]}"), "not an address");
	refused(INSPECT("{\"host\": \"a.test:443\", \"methods\": "
	    "[\"GET\"], \"paths\": [\"/\"]}"), "no port here");
	refused(INSPECT("{\"host\": 1, \"methods\": [\"GET\"], "
	    "\"paths\": [\"/\"]}"), "host: expected a string, found a number");
	refused(INSPECT("{\"host\": \"a.test\", \"paths\": [\"/\"]}"),
	    "network.inspect[0].methods: missing");
	refused(INSPECT("{\"host\": \"a.test\", \"methods\": [], "
	    "\"paths\": [\"/\"]}"), "methods: empty");
	refused(INSPECT("{\"host\": \"a.test\", \"methods\": [\"GE T\"], "
	    "\"paths\": [\"/\"]}"), "methods[0]: \"GE T\": not a method");
	refused(INSPECT("{\"host\": \"a.test\", \"methods\": [\"GET\", "
	    "\"G(\"], \"paths\": [\"/\"]}"), "methods[1]");
	refused(INSPECT("{\"host\": \"a.test\", \"methods\": [\"\"], "
	    "\"paths\": [\"/\"]}"), "not a method");
	refused(INSPECT("{\"host\": \"a.test\", \"methods\": [\"GET\"]}"),
	    "paths: missing");
	refused(INSPECT("{\"host\": \"a.test\", \"methods\": [\"GET\"], "
	    "\"paths\": [\"repos\"]}"), "starts with '/'");
	refused(INSPECT("{\"host\": \"a.test\", \"methods\": [\"GET\"], "
	    "\"paths\": [\"/a/*/b\"]}"), "'*' may only end");
	refused(INSPECT("{\"host\": \"a.test\", \"methods\": [\"GET\"], "
	    "\"paths\": [\"/a?x=1\"]}"), "only printable ASCII");
	refused(INSPECT("{\"host\": \"a.test\", \"methods\": [\"GET\"], "
	    "\"paths\": [\"/a b\"]}"), "only printable ASCII");
	refused(INSPECT("{\"host\": \"a.test\", \"methods\": [\"GET\"], "
	    "\"paths\": [\"/a%2fb\"]}"), "only printable ASCII");
	refused(INSPECT("{\"host\": \"a.test\", \"methods\": [\"GET\"], "
	    "\"paths\": [\"/a/../b\"]}"), "no \".\" or \"..\" segments");
	refused(INSPECT("{\"host\": \"a.test\", \"methods\": [\"GET\"], "
	    "\"paths\": [\"/a/.\"]}"), "segments");

	refused("{\"version\": 1, \"credentials\": {}}",
	    "credentials: expected an array of objects");
	refused(CRED("{" GOOD_CRED ", \"value_from\": \"x\"}"),
	    "unknown key \"credentials[0].value_from\" (known here: "
	    "\"host\", \"env\", \"header\", \"format\", \"headers\", "
	    "\"cookies\", \"foreign\")");
	refused(CRED("{\"host\": \"[::1]\", \"env\": \"T\", \"header\": "
	    "\"A\", \"format\": \"%s\"}"), "credentials[0].host");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"1T\", \"header\": "
	    "\"A\", \"format\": \"%s\"}"),
	    "credentials[0].env: \"1T\": not a variable name");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T*\", \"header\": "
	    "\"A\", \"format\": \"%s\"}"), "not a variable name");
	refused(CRED("{\"host\": \"a.test\", \"header\": \"A\", "
	    "\"format\": \"%s\"}"), "credentials[0].env: missing");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"X Key\", \"format\": \"%s\"}"), "not a header name");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"X:Key\", \"format\": \"%s\"}"), "not a header name");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"host\", \"format\": \"%s\"}"), "hop-by-hop or framing");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"Content-Length\", \"format\": \"%s\"}"), "hop-by-hop");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"Transfer-Encoding\", \"format\": \"%s\"}"), "hop-by-hop");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"connection\", \"format\": \"%s\"}"), "hop-by-hop");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"Proxy-Authorization\", \"format\": \"%s\"}"), "hop-by-hop");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"A\", \"format\": \"Bearer\"}"), "exactly one \"%s\"");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"A\", \"format\": \"%s %s\"}"), "exactly one \"%s\"");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"A\", \"format\": \"%d\"}"), "'%' may only stand");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"A\", \"format\": \"100%% %s\"}"), "'%' may only stand");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"A\", \"format\": \"%s%\"}"), "'%' may only stand");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"A\", \"format\": \"%s\\r\\nX-Evil: 1\"}"),
	    "no control characters");
	refused(CRED("{\"host\": \"a.test\", \"env\": \"T\", \"header\": "
	    "\"A\", \"format\": \"%s\\n\"}"), "no control characters");

	refused("{\"version\": 1, \"tls\": {\"ca_dir\": \"\"}}",
	    "tls.ca_dir: \"\": empty path");
	refused("{\"version\": 1, \"tls\": {\"ca_dir\": \"~bob/ca\"}}",
	    "\"~user\" paths are not supported");
	refused("{\"version\": 1, \"tls\": {\"ca_dir\": 1}}",
	    "tls.ca_dir: expected a string");
	refused("{\"version\": 1, \"tls\": {\"ca\": \"x\"}}",
	    "unknown key \"tls.ca\" (known here: \"ca_dir\")");
}

/* The workspace layer may not use any of them, even one that is valid. */
static void
test_tls_keys_workspace(void **state)
{
	struct policy_ctx	 wctx = ctx;
	struct policy		*p;
	char			*cause;
	const char		*texts[] = {
		INSPECT("{" GOOD_INSPECT "}"),
		CRED("{" GOOD_CRED "}"),
		"{\"version\": 1, \"tls\": {\"ca_dir\": \"ca\"}}",
		NULL, NULL, NULL
	};
	const char		*want[] = {
		"network.inspect: a workspace policy may not use \"inspect\"",
		"credentials: a workspace policy may not use \"credentials\"",
		"tls: a workspace policy may not use \"tls\"",
		"network.inspect: a workspace policy may not use",
		"credentials: a workspace policy may not use",
		"tls: a workspace policy may not use",
	};
	size_t			 i;

	(void)state;
	texts[3] = INSPECT("");
	texts[4] = CRED("");
	texts[5] = "{\"version\": 1, \"tls\": {}}";
	wctx.pc_untrusted = true;
	for (i = 0; i < 6; i++) {
		p = policy_load_buffer(texts[i], strlen(texts[i]),
		    ".cordon/policy.json", &wctx, &cause);
		assert_null(p);
		assert_contains(cause, want[i]);
		free(cause);
	}
}

/* tier: read in a trusted layer, checked, refused in the workspace's. */
static void
test_tier_keys(void **state)
{
	struct policy_ctx	 wctx = ctx;
	struct policy		*p;
	char			*cause;
	const char		*text = "{\"version\": 1, \"tier\": "
	    "{\"proxy\": \"tls://tier.test:8443\", \"client_cert\": "
	    "\"/etc/h.crt\", \"client_key\": \"~/h.key\", \"proxy_ca\": "
	    "\"/etc/ca.crt\"}}";

	(void)state;
	if ((p = load(text, &cause)) == NULL)
		fail_msg("%s", cause);
	assert_string_equal(p->p_tier[POLICY_TIER_PROXY].pl_v[0].pi_text,
	    "tls://tier.test:8443");
	assert_string_equal(p->p_tier[POLICY_TIER_KEY].pl_v[0].pi_text,
	    "/home/user/h.key");
	assert_string_equal(p->p_tier[POLICY_TIER_CA].pl_v[0].pi_from,
	    "test.json: tier.proxy_ca");
	policy_free(p);
	refused("{\"version\": 1, \"tier\": {\"proxy\": \"tier.test:1\"}}",
	    "tier.proxy: \"tier.test:1\": not tls://HOST:PORT");
	refused("{\"version\": 1, \"tier\": {\"proxy\": \"tls://t:x\"}}",
	    "not tls://HOST:PORT");
	/* Read as cordon run reads it: refused at load, not at each run. */
	refused("{\"version\": 1, \"tier\": {\"proxy\": \"tls://t:0443\"}}",
	    "not tls://HOST:PORT");
	refused("{\"version\": 1, \"tier\": {\"proxy\": \"tls://::1:443\"}}",
	    "[brackets] for IPv6");
	refused("{\"version\": 1, \"tier\": {\"client_key\": \"\"}}",
	    "tier.client_key: \"\": empty path");
	wctx.pc_untrusted = true;
	p = policy_load_buffer(text, strlen(text), ".cordon/policy.json",
	    &wctx, &cause);
	assert_null(p);
	assert_contains(cause, "a workspace policy may not name the egress "
	    "tier");
	free(cause);
}

/* The documented matching rule of network.inspect paths. */
static void
test_path_match(void **state)
{
	(void)state;
	assert_true(policy_match_path("/user", "/user"));
	assert_false(policy_match_path("/user", "/user/"));
	assert_false(policy_match_path("/user", "/users"));
	assert_false(policy_match_path("/user", "/USER"));
	assert_true(policy_match_path("/repos/myorg/*", "/repos/myorg/"));
	assert_true(policy_match_path("/repos/myorg/*", "/repos/myorg/x/y"));
	assert_false(policy_match_path("/repos/myorg/*", "/repos/myorg"));
	assert_false(policy_match_path("/repos/myorg/*", "/repos/myorgx"));
	assert_true(policy_match_path("/repos*", "/reposx"));
	assert_true(policy_match_path("/*", "/"));
}

/* A final '/' says folder: kept as pi_dir, shown back, not in the text. */
static void
test_path_folder(void **state)
{
	struct pitem	 it;
	char		*cause;

	(void)state;
	memset(&it, 0, sizeof(it));
	assert_int_equal(policy_parse_path("~/.ssh/", &ctx, &it, &cause), 0);
	assert_string_equal(it.pi_text, "/home/user/.ssh");
	assert_true(it.pi_dir);
	assert_int_equal(policy_parse_path("~/.bashrc", &ctx, &it, &cause),
	    0);
	assert_string_equal(it.pi_text, "/home/user/.bashrc");
	assert_false(it.pi_dir);
	assert_int_equal(policy_parse_path("a/b//", &ctx, &it, &cause), 0);
	assert_true(it.pi_dir);
	assert_int_equal(policy_parse_path("/", &ctx, &it, &cause), 0);
	assert_string_equal(it.pi_text, "/");
	assert_false(it.pi_dir);
	free(it.pi_text);
}

/* network.host_ports: localhost and a port or range, nothing else. */
static void
test_host_ports_load(void **state)
{
	struct pitem	 it;
	char		*cause;

	(void)state;
	memset(&it, 0, sizeof(it));
	assert_int_equal(policy_parse_host_port("localhost:5432", &it,
	    &cause), 0);
	assert_int_equal(it.pi_port, 5432);
	assert_int_equal(it.pi_port_hi, 5432);
	assert_string_equal(it.pi_text, "localhost:5432");
	free(it.pi_text);
	assert_int_equal(policy_parse_host_port("localhost:3000-3999", &it,
	    &cause), 0);
	assert_int_equal(it.pi_port_hi, 3999);
	assert_string_equal(it.pi_text, "localhost:3000-3999");
	free(it.pi_text);
	static const char *const bad[] = {
		"localhost", "localhost:", "localhost:0", "localhost:65536",
		"localhost:20-10", "localhost:x", "localhost:1-", "db:5432",
		"127.0.0.1:5432", "localhost:-5", "localhost:5 "
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (policy_parse_host_port(bad[i], &it, &cause) != -1)
			fail_msg("%s: accepted", bad[i]);
		free(cause);
	}
}

/*
 * filesystem.unix_sockets: absolute or "~/" paths that fit sun_path, from
 * a trusted layer only; container engines' sockets are named a risk.
 */
static void
test_unix_sockets_load(void **state)
{
	static const char *const bad[][2] = {
		{ "S.gpg-agent", "absolute path" },
		{ "./run/x.sock", "absolute path" },
		{ "~user/x.sock", "\"~user\" paths" },
		{ "/", "a socket, not a folder" },
		{ "/run/x/", "a socket, not a folder" },
		{ "", "absolute path" },
		{ "/run/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.sock",
		    "(107 bytes)" }
	};
	struct policy_ctx	 wctx = ctx;
	struct policy		*p;
	struct pitem		 it;
	const char		*text;
	char			*cause;
	size_t			 i;

	(void)state;
	memset(&it, 0, sizeof(it));
	assert_int_equal(policy_parse_socket("~/.docker/run/docker.sock",
	    &ctx, &it, &cause), 0);
	assert_string_equal(it.pi_text, "/home/user/.docker/run/docker.sock");
	assert_int_equal(policy_parse_socket("/run//user/./1000/../1000/S.a",
	    &ctx, &it, &cause), 0);
	assert_string_equal(it.pi_text, "/run/user/1000/S.a");
	free(it.pi_text);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&it, 0, sizeof(it));
		if (policy_parse_socket(bad[i][0], &ctx, &it, &cause) != -1)
			fail_msg("%s: accepted", bad[i][0]);
		assert_contains(cause, bad[i][1]);
		free(cause);
		free(it.pi_text);
	}

	text = "{\"version\": 1, \"filesystem\": {\"unix_sockets\": "
	    "[\"/run/user/1000/gnupg/S.gpg-agent\", \"~/d/docker.sock\"]}}";
	p = load(text, &cause);
	assert_non_null(p);
	assert_int_equal(p->p_sockets.pl_n, 2);
	assert_string_equal(p->p_sockets.pl_v[1].pi_text,
	    "/home/user/d/docker.sock");
	assert_string_equal(p->p_sockets.pl_v[0].pi_from,
	    "test.json: filesystem.unix_sockets[0]");
	policy_free(p);
	refused("{\"version\": 1, \"filesystem\": {\"unix_sockets\": "
	    "\"/run/a.sock\"}}", "filesystem.unix_sockets");
	refused("{\"version\": 1, \"filesystem\": {\"unix_sockets\": "
	    "[\"a.sock\"]}}", "filesystem.unix_sockets[0]: \"a.sock\"");

	/* The workspace layer may not add one. */
	wctx.pc_untrusted = true;
	p = policy_load_buffer(text, strlen(text), ".cordon/policy.json",
	    &wctx, &cause);
	assert_null(p);
	assert_contains(cause, "a workspace policy may not open Unix sockets "
	    "of the host (filesystem.unix_sockets)");
	free(cause);

	assert_non_null(policy_parse_socket_risk("/run/docker.sock"));
	assert_contains(
	    policy_parse_socket_risk("/home/u/.docker/run/docker.sock"),
	    "root on the host");
	assert_contains(policy_parse_socket_risk("/run/podman/podman.sock"),
	    "Podman");
	assert_null(
	    policy_parse_socket_risk("/run/user/1000/gnupg/S.gpg-agent"));
	assert_null(policy_parse_socket_risk("/run/not-docker.sock"));
}

/* Writes text to a new file under dir and returns its path. */
static char *
write_file(const char *dir, const char *name, const char *text)
{
	char	*path;
	FILE	*f;

	if (asprintf(&path, "%s/%s", dir, name) == -1)
		fail();
	if ((f = fopen(path, "w")) == NULL)
		fail_msg("%s", path);
	fputs(text, f);
	fclose(f);
	return path;
}

static void
test_list_files(void **state)
{
	struct policy_ctx	 fctx = ctx;
	struct policy		*p;
	char			 dir[] = "/tmp/cordon-unit-XXXXXX";
	char			*list, *pol, *bad, *cause, *ws;
	char			*link1, *link2;

	(void)state;
	if (mkdtemp(dir) == NULL)
		fail();
	list = write_file(dir, "domains.txt",
	    "# registries\n\nregistry.npmjs.org\n  *.pypi.org:443  # x\r\n");
	pol = write_file(dir, "p.json", "{\"version\": 1, \"network\": "
	    "{\"allow_files\": [\"domains.txt\"]}}");
	if ((p = policy_load_file(pol, &fctx, &cause)) == NULL)
		fail_msg("%s", cause);
	assert_int_equal(p->p_allow.pl_n, 2);
	assert_string_equal(p->p_allow.pl_v[1].pi_text, "*.pypi.org:443");
	assert_contains(p->p_allow.pl_v[1].pi_from, "domains.txt:4");
	policy_free(p);

	/* A bad line names FILE:LINE, and nothing half-loads. */
	bad = write_file(dir, "bad.txt", "ok.test\nbad%.test\n\nx..y\n");
	free(pol);
	pol = write_file(dir, "p.json", "{\"version\": 1, \"network\": "
	    "{\"deny_files\": [\"bad.txt\", \"missing.txt\"]}}");
	assert_null(policy_load_file(pol, &fctx, &cause));
	assert_contains(cause, "bad.txt:2: \"bad%.test\"");
	assert_contains(cause, "bad.txt:4: \"x..y\"");
	assert_contains(cause, "missing.txt: No such file");
	free(cause);

	/* The untrusted workspace layer may not reach outside... */
	fctx.pc_untrusted = true;
	fctx.pc_workspace = dir;
	free(pol);
	if (asprintf(&ws, "%s/.cordon", dir) == -1 || mkdir(ws, 0700) == -1)
		fail();
	pol = write_file(ws, "policy.json", "{\"version\": 1, \"network\": "
	    "{\"allow_files\": [\"../../domains.txt\", \"/etc/hosts\"]},"
	    " \"env\": {\"set\": {\"A\": \"b\"}},"
	    " \"filesystem\": {\"write\": [{\"value\": \".\", \"from\": "
	    "\"/etc/cordon/policy.json\"}]}}");
	assert_null(policy_load_file(pol, &fctx, &cause));
	assert_contains(cause, "allow_files[0]: \"../../domains.txt\": ");
	assert_contains(cause, "domains.txt is outside /tmp/cordon-unit-");
	assert_contains(cause, "allow_files[1]: \"/etc/hosts\": a workspace "
	    "policy may only name list files inside");
	assert_contains(cause, "env.set.A: a workspace policy may not set");
	assert_contains(cause, "filesystem.write[0]: a workspace policy may "
	    "not annotate");
	free(cause);

	/* ... through a link to a folder or a file ... */
	free(pol);
	pol = write_file(ws, "policy.json", "{\"version\": 1, \"network\": "
	    "{\"deny_files\": [\"d/bad.txt\", \"f.txt\"]}}");
	if (asprintf(&link1, "%s/d", ws) == -1 || symlink(dir, link1) == -1 ||
	    asprintf(&link2, "%s/f.txt", ws) == -1 ||
	    symlink(bad, link2) == -1)
		fail();
	assert_null(policy_load_file(pol, &fctx, &cause));
	assert_contains(cause, "\"d\" is a symbolic link");
	assert_contains(cause, "\"f.txt\" is a symbolic link");
	assert_true(strstr(cause, "bad%.test") == NULL);	/* not read */
	free(cause);

	/* ... and the policy file itself may not be a link. */
	unlink(pol);
	if (symlink(list, pol) == -1)
		fail();
	assert_null(policy_load_file(pol, &fctx, &cause));
	assert_contains(cause, "\"policy.json\" is a symbolic link");
	free(cause);

	unlink(link1);
	unlink(link2);
	unlink(pol);
	rmdir(ws);
	free(link1);
	free(link2);
	unlink(list);
	unlink(bad);
	unlink(pol);
	rmdir(dir);
	free(ws);
	free(list);
	free(bad);
	free(pol);
}

/*
 * A run's rules for its proxy: network.mode, allow, deny and allow_cidrs
 * only, read as the untrusted layer they stand for.
 */
static void
test_narrowing(void **state)
{
	static const char *const refused_texts[] = {
		"{\"version\": 1, \"filesystem\": {\"write\": [\"/\"]}}",
		"{\"version\": 1, \"network\": {\"allow_list\": \"/etc/x\"}}",
		"{\"version\": 1, \"network\": {\"inspect\": []}}",
		"{\"version\": 1, \"network\": []}",
		"[]",
		"{",
	};
	struct policy	*p;
	char		*cause;
	size_t		 i;

	(void)state;
	for (i = 0; i < nitems(refused_texts); i++) {
		p = policy_load_narrowing(refused_texts[i], "sandbox "
		    "x", &cause);
		if (p != NULL)
			fail_msg("accepted: %s", refused_texts[i]);
		assert_contains(cause, "only network.mode, allow, deny and "
		    "allow_cidrs may be sent");
		free(cause);
	}
	p = policy_load_narrowing("{\"version\": 1, \"network\": "
	    "{\"mode\": \"proxy\", \"allow\": [\"a.test:443\"], "
	    "\"deny\": [\"b.test\"], \"allow_cidrs\": [\"10.0.0.0/8\"]}}",
	    "sandbox x", &cause);
	assert_non_null(p);
	assert_int_equal(p->p_allow.pl_n, 1);
	assert_int_equal(p->p_deny.pl_n, 1);
	assert_int_equal(p->p_cidrs.pl_n, 1);
	policy_free(p);
	/* Loaded as the workspace's layer is: its errors name it. */
	assert_null(policy_load_narrowing("{\"version\": 1, \"network\": "
	    "{\"allow\": [\"a..test\"]}}", "sandbox x", &cause));
	assert_contains(cause, "sandbox x");
	free(cause);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_narrowing),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_annotated),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_all_errors_at_once),
		cmocka_unit_test(test_list_files),
		cmocka_unit_test(test_tls_keys_good),
		cmocka_unit_test(test_tls_keys_refused),
		cmocka_unit_test(test_tls_keys_workspace),
		cmocka_unit_test(test_tier_keys),
		cmocka_unit_test(test_path_match),
		cmocka_unit_test(test_path_folder),
		cmocka_unit_test(test_host_ports_load),
		cmocka_unit_test(test_unix_sockets_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
