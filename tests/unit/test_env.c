/*
 * test_env.c: the sandboxed command's environment: what passes, what is
 * refused as a secret, what the policy and the proxy set, and the limits.
 */
#include "confine/env.h"
#include "confine/trust.h"
#include "unit.h"

#include <sys/types.h>

#include <pwd.h>
#include <stdbool.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"
#include "runner/runner.h"

static struct policy_ctx	 ctx = {
	.pc_workspace = "/w",
	.pc_home = "/h",
};

/* Loads a policy from its "env" section, in JSON. */
static struct policy *
env_policy(const char *env_json)
{
	struct policy	*p;
	char		*text, *cause;

	xasprintf(&text, "{\"version\": 1, \"env\": %s}", env_json);
	if ((p = policy_load_buffer(text, strlen(text), "t.json", &ctx,
	    &cause)) == NULL)
		fail_msg("%s", cause);
	free(text);
	return p;
}

/* A host environment: a copy of v, freed with env_free(). */
static char **
strv_dup(const char *const *v)
{
	char	**d;
	size_t	 i, n = 0;

	while (v[n] != NULL)
		n++;
	d = xcalloc(n + 1, sizeof(*d));
	for (i = 0; i < n; i++)
		d[i] = xstrdup(v[i]);
	return d;
}

/* Orders two "NAME=value" strings by name, as the result must be. */
static int
namecmp(const char *a, const char *b)
{
	size_t	 an = strcspn(a, "="), bn = strcspn(b, "=");
	int	 c;

	if ((c = memcmp(a, b, an < bn ? an : bn)) != 0)
		return c;
	return an < bn ? -1 : an > bn;
}

/* Builds and checks that it worked. */
static char **
build(const struct policy *p, char *const *host, int port)
{
	struct env_proxy	 px = { .ep_port = port };
	char			**env, *cause;

	env = env_build(p, host, port != 0 ? &px : NULL, &cause);
	if (env == NULL)
		fail_msg("env_build: %s", cause);
	assert_null(cause);
	return env;
}

/* Returns the value of name in env, or NULL. */
static const char *
find(char **env, const char *name)
{
	size_t	 i, n = strlen(name);

	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

static size_t
count(char **env)
{
	size_t	 n = 0;

	while (env[n] != NULL)
		n++;
	return n;
}

static void
test_pass_exact_and_prefix(void **state)
{
	struct policy	*p;
	char		**env, **host;
	const char	*hostv[] = { "PATH=/bin", "PATHX=1", "LC_ALL=C",
			    "LC_=x", "LANG=en", "lc_all=lower", "HOME=/h",
			    NULL };

	(void)state;
	host = strv_dup(hostv);
	p = env_policy("{\"pass\": [\"PATH\", \"LC_*\", \"HOME\"]}");
	env = build(p, host, 0);
	assert_string_equal(find(env, "PATH"), "/bin");
	assert_string_equal(find(env, "LC_ALL"), "C");
	assert_string_equal(find(env, "LC_"), "x");
	assert_string_equal(find(env, "HOME"), "/h");
	assert_null(find(env, "PATHX"));	/* exact means exact */
	assert_null(find(env, "LANG"));
	assert_null(find(env, "lc_all"));	/* names keep their case */
	assert_int_equal(count(env), 4);
	env_free(env);
	env_free(host);
	policy_free(p);
}

/* One name per pattern of the secret table. */
static const char *const secret_names[] = {
	"X_TOKEN", "x_secret_thing", "X_PASSWORD", "X_PASSWD",
	"X_CREDENTIALS", "X_PRIVATE_DIR", "X_API_KEY", "x_deploy_keys",
	"AWS_REGION", "AZURE_TENANT", "GCP_PROJECT", "aws_profile",
	"GOOGLE_APPLICATION_CREDENTIALS", "GITHUB_TOKEN", "GH_TOKEN",
	"NPM_TOKEN",
};

static void
test_secrets(void **state)
{
	struct policy	*p;
	char		**env, *host[nitems(secret_names) + 4], *json, *t;
	size_t		 i;

	(void)state;
	for (i = 0; i < nitems(secret_names); i++)
		xasprintf(&host[i], "%s=s3cr3t", secret_names[i]);
	host[i++] = xstrdup("X_MONKEY=1");	/* not "_KEY" at the end */
	host[i++] = xstrdup("GH_HOST=github.com");
	host[i++] = xstrdup("X_KEYS_DIR=/k");
	host[i] = NULL;

	/* Under prefixes: none of the secrets, the rest. */
	p = env_policy("{\"pass\": [\"X*\", \"x*\", \"A*\", \"a*\", \"G*\","
	    " \"N*\"]}");
	env = build(p, host, 0);
	for (i = 0; i < nitems(secret_names); i++)
		if (find(env, secret_names[i]) != NULL)
			fail_msg("%s passed under a prefix", secret_names[i]);
	assert_string_equal(find(env, "X_MONKEY"), "1");
	assert_string_equal(find(env, "GH_HOST"), "github.com");
	assert_string_equal(find(env, "X_KEYS_DIR"), "/k");
	assert_int_equal(count(env), 3);
	env_free(env);
	policy_free(p);

	/* Named exactly: each one passes. */
	json = xstrdup("{\"pass\": [\"UNUSED\"");
	for (i = 0; i < nitems(secret_names); i++) {
		xasprintf(&t, "%s, \"%s\"", json, secret_names[i]);
		free(json);
		json = t;
	}
	xasprintf(&t, "%s]}", json);
	free(json);
	p = env_policy(t);
	free(t);
	env = build(p, host, 0);
	for (i = 0; i < nitems(secret_names); i++)
		if (find(env, secret_names[i]) == NULL)
			fail_msg("%s named exactly but refused",
			    secret_names[i]);
	assert_int_equal(count(env), nitems(secret_names));
	env_free(env);
	for (i = 0; host[i] != NULL; i++)
		free(host[i]);
	policy_free(p);
}

static void
test_agent_sockets_never(void **state)
{
	struct policy	*p;
	char		**env, **host;
	const char	*hostv[] = { "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1",
			    "GPG_AGENT_INFO=/run/gpg:0:1",
			    "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/bus",
			    "ssh_auth_sock=/tmp/s", "SSH_CONNECTION=1 2 3 4",
			    NULL };

	(void)state;
	host = strv_dup(hostv);
	p = env_policy("{\"pass\": [\"SSH_AUTH_SOCK\", \"SSH_*\", \"ssh*\","
	    " \"GPG_AGENT_INFO\", \"DBUS_SESSION_BUS_ADDRESS\"]}");
	env = build(p, host, 0);
	assert_null(find(env, "SSH_AUTH_SOCK"));
	assert_null(find(env, "ssh_auth_sock"));
	assert_null(find(env, "GPG_AGENT_INFO"));
	assert_null(find(env, "DBUS_SESSION_BUS_ADDRESS"));
	assert_string_equal(find(env, "SSH_CONNECTION"), "1 2 3 4");
	assert_int_equal(count(env), 1);
	env_free(env);
	env_free(host);
	policy_free(p);
}

static void
test_defaults(void **state)
{
	struct policy	*p;
	char		**env, **host, *cause;
	const char	*hostv[] = { "PATH=/usr/bin", "HOME=/home/u",
			    "LC_ALL=C.UTF-8", "GITHUB_TOKEN=ghp_x",
			    "AWS_SECRET_ACCESS_KEY=x", "SSH_AUTH_SOCK=/s",
			    "OPENAI_API_KEY=sk", "LD_PRELOAD=/evil.so", NULL };

	(void)state;
	host = strv_dup(hostv);
	if ((p = policy_merge_defaults(&ctx, &cause)) == NULL)
		fail_msg("%s", cause);
	env = build(p, host, 0);
	assert_int_equal(count(env), 3);
	assert_string_equal(find(env, "PATH"), "/usr/bin");
	assert_string_equal(find(env, "HOME"), "/home/u");
	assert_string_equal(find(env, "LC_ALL"), "C.UTF-8");
	env_free(env);
	env_free(host);
	policy_free(p);
}

static void
test_set_overrides_pass(void **state)
{
	struct policy	*p;
	char		**env, **host;
	const char	*hostv[] = { "EDITOR=emacs", "PAGER=less", NULL };

	(void)state;
	host = strv_dup(hostv);
	p = env_policy("{\"pass\": [\"EDITOR\", \"PAGER\"],"
	    " \"set\": {\"EDITOR\": \"vi\", \"NEW\": \"1\", \"E\": \"\"}}");
	env = build(p, host, 0);
	assert_string_equal(find(env, "EDITOR"), "vi");
	assert_string_equal(find(env, "PAGER"), "less");
	assert_string_equal(find(env, "NEW"), "1");
	assert_string_equal(find(env, "E"), "");
	assert_int_equal(count(env), 4);
	env_free(env);
	env_free(host);
	policy_free(p);
}

static void
test_proxy_wins(void **state)
{
	static const char *const want[][2] = {
		{ "HTTP_PROXY", "http://127.0.0.1:8123" },
		{ "HTTPS_PROXY", "http://127.0.0.1:8123" },
		{ "ALL_PROXY", "socks5h://127.0.0.1:8123" },
		{ "NO_PROXY", "localhost,127.0.0.1,::1" },
		{ "npm_config_proxy", "http://127.0.0.1:8123" },
		{ "npm_config_https_proxy", "http://127.0.0.1:8123" },
		{ "YARN_HTTP_PROXY", "http://127.0.0.1:8123" },
		{ "YARN_HTTPS_PROXY", "http://127.0.0.1:8123" },
		{ "PIP_PROXY", "http://127.0.0.1:8123" },
		{ "CARGO_HTTP_PROXY", "http://127.0.0.1:8123" },
		{ "grpc_proxy", "http://127.0.0.1:8123" },
		{ "NODE_USE_ENV_PROXY", "1" },
	};
	struct policy	*p;
	char		**env, **host;
	const char	*hostv[] = { "HTTPS_PROXY=http://corp.example:3128",
			    "https_proxy=http://corp.example:3128",
			    "NO_PROXY=*", "GOPROXY=https://proxy.golang.org",
			    NULL };
	size_t		 i;

	(void)state;
	host = strv_dup(hostv);
	p = env_policy("{\"pass\": [\"HTTPS_PROXY\", \"https_proxy\","
	    " \"NO_PROXY\", \"GOPROXY\"], \"set\": {\"HTTP_PROXY\":"
	    " \"http://elsewhere:1\", \"PIP_PROXY\": \"http://elsewhere:2\"}}");

	/* Without the proxy, what the host and the policy say. */
	env = build(p, host, 0);
	assert_string_equal(find(env, "HTTPS_PROXY"),
	    "http://corp.example:3128");
	assert_string_equal(find(env, "HTTP_PROXY"), "http://elsewhere:1");
	assert_null(find(env, "NODE_USE_ENV_PROXY"));
	assert_null(find(env, "JAVA_TOOL_OPTIONS"));
	env_free(env);

	env = build(p, host, 8123);
	for (i = 0; i < nitems(want); i++) {
		if (find(env, want[i][0]) == NULL)
			fail_msg("%s not set", want[i][0]);
		assert_string_equal(find(env, want[i][0]), want[i][1]);
	}
	/* GOPROXY is a module mirror, not a proxy: left as it was. */
	assert_string_equal(find(env, "GOPROXY"), "https://proxy.golang.org");
	env_free(env);
	env_free(host);
	policy_free(p);
}

static void
test_lowercase_twins(void **state)
{
	static const char *const twins[][2] = {
		{ "HTTP_PROXY", "http_proxy" },
		{ "HTTPS_PROXY", "https_proxy" },
		{ "ALL_PROXY", "all_proxy" },
		{ "NO_PROXY", "no_proxy" },
	};
	struct policy	*p;
	char		**env, **host;
	const char	*hostv[] = { "http_proxy=http://corp:1", NULL };
	size_t		 i;

	(void)state;
	host = strv_dup(hostv);
	p = env_policy("{\"pass\": [\"http_proxy\"]}");
	env = build(p, host, 40000);
	for (i = 0; i < nitems(twins); i++) {
		assert_non_null(find(env, twins[i][0]));
		assert_non_null(find(env, twins[i][1]));
		assert_string_equal(find(env, twins[i][0]),
		    find(env, twins[i][1]));
	}
	assert_string_equal(find(env, "http_proxy"), "http://127.0.0.1:40000");
	env_free(env);
	env_free(host);
	policy_free(p);
}

#define JAVA_OPTS "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 " \
    "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 " \
    "-Dhttp.nonProxyHosts=localhost|127.0.0.1"

static void
test_java_appended(void **state)
{
	struct policy	*p;
	char		**env, **host;
	const char	*hostv[] = { "JAVA_TOOL_OPTIONS=-Xmx1g", NULL };

	(void)state;
	host = strv_dup(hostv);
	p = env_policy("{\"pass\": [\"JAVA_TOOL_OPTIONS\"]}");
	env = build(p, host, 3128);
	assert_string_equal(find(env, "JAVA_TOOL_OPTIONS"), "-Xmx1g "
	    JAVA_OPTS);
	env_free(env);
	env = build(p, NULL, 3128);		/* nothing to append to */
	assert_string_equal(find(env, "JAVA_TOOL_OPTIONS"), JAVA_OPTS);
	env_free(env);
	env = build(p, host, 0);		/* no proxy: untouched */
	assert_string_equal(find(env, "JAVA_TOOL_OPTIONS"), "-Xmx1g");
	env_free(env);
	policy_free(p);

	/* env.set's value is the one appended to. */
	p = env_policy("{\"pass\": [\"JAVA_TOOL_OPTIONS\"],"
	    " \"set\": {\"JAVA_TOOL_OPTIONS\": \"-Dfile.encoding=UTF-8\"}}");
	env = build(p, host, 3128);
	assert_string_equal(find(env, "JAVA_TOOL_OPTIONS"),
	    "-Dfile.encoding=UTF-8 " JAVA_OPTS);
	env_free(env);
	env_free(host);
	policy_free(p);
}

/*
 * A run that inspects names its trust store to the JVM, last; a trust
 * store the user named stays, and cordon's is not added.
 */
static void
test_java_trust_store(void **state)
{
	struct policy		*p;
	struct env_proxy	 px = { .ep_port = 3128,
				    .ep_ca_bundle = "/run/cordon/b.pem",
				    .ep_ca_java = "/run/cordon/b.p12" };
	char			**env, **host, *cause;
	const char		*hostv[] = { "JAVA_TOOL_OPTIONS="
				    "-Djavax.net.ssl.trustStore=/mine.p12",
				    NULL };

	(void)state;
	p = env_policy("{\"pass\": [\"JAVA_TOOL_OPTIONS\"]}");
	env = env_build(p, NULL, &px, &cause);
	assert_non_null(env);
	assert_string_equal(find(env, "JAVA_TOOL_OPTIONS"), JAVA_OPTS
	    " -Djavax.net.ssl.trustStore=/run/cordon/b.p12"
	    " -Djavax.net.ssl.trustStoreType=PKCS12");
	env_free(env);
	host = strv_dup(hostv);
	env = env_build(p, host, &px, &cause);
	assert_non_null(env);
	assert_string_equal(find(env, "JAVA_TOOL_OPTIONS"),
	    "-Djavax.net.ssl.trustStore=/mine.p12 " JAVA_OPTS);
	env_free(env);
	env_free(host);
	policy_free(p);
}

/*
 * The JVM takes user.home from the password database: told HOME where
 * that differs, unless the user named one.
 */
static void
test_java_user_home(void **state)
{
	struct policy		*p;
	struct env_proxy	 px = { .ep_port = 3128 };
	struct passwd		*pw;
	char			**env, **host, *cause, *own;
	const char		*other[] = { "HOME=/srv/a-home", NULL };
	const char		*named[] = { "HOME=/srv/a-home",
				    "JAVA_TOOL_OPTIONS=-Duser.home=/x", NULL };
	const char		*blank[] = { "HOME=/srv/a home", NULL };

	(void)state;
	assert_non_null(pw = getpwuid(getuid()));
	p = env_policy("{\"pass\": [\"HOME\", \"JAVA_TOOL_OPTIONS\"]}");
	host = strv_dup(other);
	env = env_build(p, host, &px, &cause);
	assert_string_equal(find(env, "JAVA_TOOL_OPTIONS"), JAVA_OPTS
	    " -Duser.home=/srv/a-home");
	env_free(env);
	env = env_build(p, host, NULL, &cause);	/* no proxy: untouched */
	assert_null(find(env, "JAVA_TOOL_OPTIONS"));
	env_free(env);
	env_free(host);
	host = strv_dup(named);
	env = env_build(p, host, &px, &cause);
	assert_string_equal(find(env, "JAVA_TOOL_OPTIONS"),
	    "-Duser.home=/x " JAVA_OPTS);
	env_free(env);
	env_free(host);
	host = strv_dup(blank);
	env = env_build(p, host, &px, &cause);
	assert_string_equal(find(env, "JAVA_TOOL_OPTIONS"), JAVA_OPTS);
	env_free(env);
	env_free(host);
	xasprintf(&own, "HOME=%s", pw->pw_dir);	/* the database's: nothing */
	host = xcalloc(2, sizeof(*host));
	host[0] = own;
	env = env_build(p, host, &px, &cause);
	assert_string_equal(find(env, "JAVA_TOOL_OPTIONS"), JAVA_OPTS);
	env_free(env);
	env_free(host);
	policy_free(p);
}

/* Names in strcmp order: "A" before "A0", though "A=" sorts after "A0". */
static void
test_sorted(void **state)
{
	struct policy	*p;
	char		**env, **host, **again;
	const char	*hostv[] = { "Z=1", "A0=2", "B=3", "A=4", "a=5",
			    "A_=6", NULL };
	const char	*order[] = { "A", "A0", "A_", "B", "Z", "a" };
	size_t		 i, n;

	(void)state;
	host = strv_dup(hostv);
	p = env_policy("{\"pass\": [\"A*\", \"B\", \"Z\", \"a\"]}");
	env = build(p, host, 0);
	assert_int_equal(count(env), nitems(order));
	for (i = 0; i < nitems(order); i++) {
		n = strlen(order[i]);
		if (strncmp(env[i], order[i], n) != 0 || env[i][n] != '=')
			fail_msg("env[%zu] is %s, not %s", i, env[i],
			    order[i]);
	}
	env_free(env);

	/* With the proxy too, and the same bytes twice. */
	env = build(p, host, 1080);
	again = build(p, host, 1080);
	assert_int_equal(count(env), count(again));
	for (i = 0; env[i] != NULL; i++) {
		assert_string_equal(env[i], again[i]);
		if (i > 0 && namecmp(env[i - 1], env[i]) >= 0)
			fail_msg("%s before %s", env[i - 1], env[i]);
	}
	env_free(env);
	env_free(again);
	env_free(host);
	policy_free(p);
}

static void
test_duplicates(void **state)
{
	struct policy	*p;
	char		**env, **host;
	const char	*hostv[] = { "X=1", "Y=a", "X=2", "X=3", NULL };

	(void)state;
	host = strv_dup(hostv);
	p = env_policy("{\"pass\": [\"X\", \"Y\"]}");
	env = build(p, host, 0);
	assert_int_equal(count(env), 2);
	assert_string_equal(env[0], "X=3");
	assert_string_equal(env[1], "Y=a");
	env_free(env);
	env_free(host);
	policy_free(p);
}

static void
test_malformed(void **state)
{
	struct policy	*p;
	char		**env, **host;
	const char	*hostv[] = { "NOEQUALS", "=value", "=", "", "GOOD=1",
			    "EMPTY=", "EQ==x=", NULL };

	(void)state;
	host = strv_dup(hostv);
	p = env_policy("{\"pass\": [\"NOEQUALS\", \"GOOD\", \"EMPTY\","
	    " \"EQ\"]}");
	env = build(p, host, 0);
	assert_int_equal(count(env), 3);
	assert_string_equal(env[0], "EMPTY=");
	assert_string_equal(env[1], "EQ==x=");	/* the first '=' splits */
	assert_string_equal(env[2], "GOOD=1");
	env_free(env);
	env = build(p, NULL, 0);		/* no host environment */
	assert_int_equal(count(env), 0);
	env_free(env);
	policy_free(p);

	/*
	 * A pass list of "*" (the loader refuses it; plain data need not
	 * come from the loader) still skips the name-less entries.
	 */
	p = policy_new();
	policy_plist_add(&p->p_env_pass)->pi_text = xstrdup("*");
	env = build(p, host, 0);
	assert_int_equal(count(env), 3);
	assert_string_equal(env[0], "EMPTY=");
	env_free(env);
	env_free(host);
	policy_free(p);
}

/* A host environment of n variables V0000=x, ... */
static char **
many(size_t n)
{
	char	**v;
	size_t	 i;

	v = xcalloc(n + 1, sizeof(*v));
	for (i = 0; i < n; i++)
		xasprintf(&v[i], "V%04zu=x", i);
	return v;
}

static void
test_limit_count(void **state)
{
	struct policy		*p;
	struct env_proxy	 px = { .ep_port = 8080 };
	char			**host, **env, *cause, *json, *t;
	size_t			 i;

	(void)state;
	p = env_policy("{\"pass\": [\"V*\"]}");
	host = many(ENV_MAX_VARS + 1);
	free(host[ENV_MAX_VARS]);
	host[ENV_MAX_VARS] = NULL;
	env = build(p, host, 0);		/* exactly the limit */
	assert_int_equal(count(env), ENV_MAX_VARS);
	env_free(env);
	assert_null(env_build(p, host, &px, &cause));	/* and the proxy's */
	assert_contains(cause, "more than 4096 variables");
	free(cause);
	env_free(host);

	host = many(ENV_MAX_VARS + 1);
	assert_null(env_build(p, host, NULL, &cause));
	assert_contains(cause, "4096");
	free(cause);
	env_free(host);
	policy_free(p);

	/* From env.set alone. */
	json = xstrdup("{\"set\": {\"S\": \"0\"");
	for (i = 0; i < ENV_MAX_VARS; i++) {
		xasprintf(&t, "%s, \"S%zu\": \"x\"", json, i);
		free(json);
		json = t;
	}
	xasprintf(&t, "%s}}", json);
	free(json);
	p = env_policy(t);
	free(t);
	assert_null(env_build(p, NULL, NULL, &cause));
	assert_contains(cause, "4096");
	free(cause);
	policy_free(p);
}

static void
test_limit_bytes(void **state)
{
	struct policy		*p;
	struct env_proxy	 px = { .ep_port = 8080 };
	char			**env, *cause, *big, *host[2] = { NULL, NULL };
	size_t			 n;

	(void)state;
	p = env_policy("{\"pass\": [\"BIG\"]}");
	/* "BIG=" value NUL: exactly ENV_MAX_BYTES. */
	n = ENV_MAX_BYTES;
	big = xmalloc(n);
	memcpy(big, "BIG=", 4);
	memset(big + 4, 'x', n - 5);
	big[n - 1] = '\0';
	host[0] = big;
	env = build(p, host, 0);
	assert_int_equal(strlen(env[0]), ENV_MAX_BYTES - 1);
	env_free(env);

	/* The proxy's variables tip it over. */
	assert_null(env_build(p, host, &px, &cause));
	assert_contains(cause, "larger than 1048576 bytes");
	free(cause);

	/* One byte more. */
	big = xreallocarray(big, n + 1, 1);
	host[0] = big;
	big[n - 1] = 'x';
	big[n] = '\0';
	assert_null(env_build(p, host, NULL, &cause));
	assert_contains(cause, "1048576");
	free(cause);
	free(big);
	policy_free(p);
}

static void
test_bad_port(void **state)
{
	struct policy		*p;
	struct env_proxy	 px = { 0 };
	char			*cause;

	(void)state;
	p = env_policy("{\"pass\": []}");
	assert_null(env_build(p, NULL, &px, &cause));
	assert_contains(cause, "port");
	free(cause);
	px.ep_port = 65536;
	assert_null(env_build(p, NULL, &px, &cause));
	free(cause);
	policy_free(p);
}

/* A credentials policy whose variable env.pass passes too. */
#define CRED_POLICY "{\"version\": 1, \"env\": {\"pass\": [\"GITHUB_TOKEN\", " \
	"\"K\", \"PATH\"]}, \"credentials\": [" \
	"{\"host\": \"api.github.com\", \"env\": \"GITHUB_TOKEN\", " \
	"\"header\": \"Authorization\", \"format\": \"Bearer %s\"}, " \
	"{\"host\": \"uploads.github.com\", \"env\": \"GITHUB_TOKEN\", " \
	"\"header\": \"Authorization\", \"format\": \"token %s\"}, " \
	"{\"host\": \"x.test\", \"env\": \"ABSENT\", \"header\": \"K\", " \
	"\"format\": \"%s\"}]}"

/* Whether s is PHANTOM_PREFIX and 32 lower-case hex digits. */
static bool
is_placeholder(const char *s)
{
	size_t	 i, n = strlen(PHANTOM_PREFIX);

	if (strncmp(s, PHANTOM_PREFIX, n) != 0 || strlen(s) != n + 32)
		return false;
	for (i = n; s[i] != '\0'; i++)
		if (strchr("0123456789abcdef", s[i]) == NULL)
			return false;
	return true;
}

static void
test_phantoms(void **state)
{
	struct policy		*p;
	struct phantom		*ph;
	struct env_proxy	 px = { .ep_port = 3128 };
	char			**env, **host, *cause;
	const char		*hostv[] = { "GITHUB_TOKEN=realsecret",
				    "PATH=/bin", NULL };
	size_t			 n, i;

	(void)state;
	host = strv_dup(hostv);
	if ((p = policy_load_buffer(CRED_POLICY, strlen(CRED_POLICY),
	    "t.json", &ctx, &cause)) == NULL)
		fail_msg("%s", cause);
	trust_phantoms(p, host, &ph, &n);
	/* ABSENT is not set: no placeholder, nothing to swap. */
	assert_int_equal(n, 2);
	assert_string_equal(ph[0].ph_env, "GITHUB_TOKEN");
	assert_string_equal(ph[0].ph_value, "realsecret");
	assert_string_equal(ph[0].ph_host.pi_text, "api.github.com");
	assert_string_equal(ph[1].ph_format, "token %s");
	assert_true(is_placeholder(ph[0].ph_placeholder));
	/* One variable, one placeholder. */
	assert_string_equal(ph[0].ph_placeholder, ph[1].ph_placeholder);
	px.ep_phantoms = ph;
	px.ep_nphantoms = n;
	env = env_build(p, host, &px, &cause);
	assert_non_null(env);
	/* env.pass names it exactly; the placeholder wins all the same. */
	assert_string_equal(find(env, "GITHUB_TOKEN"), ph[0].ph_placeholder);
	assert_null(find(env, "ABSENT"));
	for (i = 0; env[i] != NULL; i++)
		assert_null(strstr(env[i], "realsecret"));
	assert_null(find(env, "SSL_CERT_FILE"));	/* no inspection */
	env_free(env);

	/* Another run: another placeholder. */
	{
		struct phantom	*ph2;
		size_t		 n2;

		trust_phantoms(p, host, &ph2, &n2);
		assert_int_equal(n2, 2);
		assert_string_not_equal(ph2[0].ph_placeholder,
		    ph[0].ph_placeholder);
		proxy_phantoms_free(ph2, n2);
	}
	proxy_phantoms_free(ph, n);
	env_free(host);
	policy_free(p);
}

static void
test_ca_vars_win(void **state)
{
	struct policy		*p;
	struct env_proxy	 px = { .ep_port = 3128,
				    .ep_ca_bundle = "/run/cordon/b.pem" };
	char			**env, **host, *cause;
	const char		*hostv[] = { "SSL_CERT_FILE=/etc/mine.pem",
				    "CURL_CA_BUNDLE=/etc/mine.pem", NULL };
	size_t			 i;

	(void)state;
	host = strv_dup(hostv);
	p = env_policy("{\"pass\": [\"SSL_CERT_FILE\", \"CURL_CA_BUNDLE\"], "
	    "\"set\": {\"GIT_SSL_CAINFO\": \"/x.pem\"}}");
	env = env_build(p, host, &px, &cause);
	assert_non_null(env);
	assert_true(env_ca_nvars > 0);
	for (i = 0; i < env_ca_nvars; i++)
		assert_string_equal(find(env, env_ca_vars[i].cv_name),
		    "/run/cordon/b.pem");
	env_free(env);
	/* Without a bundle, what was passed stays. */
	px.ep_ca_bundle = NULL;
	env = env_build(p, host, &px, &cause);
	assert_string_equal(find(env, "SSL_CERT_FILE"), "/etc/mine.pem");
	assert_string_equal(find(env, "GIT_SSL_CAINFO"), "/x.pem");
	assert_null(find(env, "NODE_EXTRA_CA_CERTS"));
	env_free(env);
	env_free(host);
	policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_exact_and_prefix),
		cmocka_unit_test(test_secrets),
		cmocka_unit_test(test_agent_sockets_never),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_set_overrides_pass),
		cmocka_unit_test(test_proxy_wins),
		cmocka_unit_test(test_lowercase_twins),
		cmocka_unit_test(test_java_appended),
		cmocka_unit_test(test_java_trust_store),
		cmocka_unit_test(test_java_user_home),
		cmocka_unit_test(test_sorted),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_limit_count),
		cmocka_unit_test(test_limit_bytes),
		cmocka_unit_test(test_bad_port),
		cmocka_unit_test(test_phantoms),
		cmocka_unit_test(test_ca_vars_win),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
