/*
 * env.c: the environment the sandboxed command starts with.
 *
 * Built in six steps, each overriding the one before:
 *
 *   1. host variables whose names env.pass lists, exactly or by a prefix
 *      ending in '*', and those that name a CA bundle (env_ca_vars,
 *      SSL_CERT_DIR): a file of public certificates, no secret, and
 *      without it a tool behind a TLS-inspecting corporate proxy
 *      fails (Node's SELF_SIGNED_CERT_IN_CHAIN);
 *   2. minus those whose names look like secrets (the table below),
 *      unless env.pass names them exactly: a prefix such as "GH_*" is too
 *      easy to write for it to hand over a token by accident;
 *   3. env.set, the policy's own values;
 *   4. in proxy mode, the variables that point tools at the proxy.  They
 *      always win: a host HTTPS_PROXY pointing elsewhere would only make
 *      the tool fail, and one left in place is a way around the log;
 *   5. in proxy mode, the phantom credentials: a variable that a
 *      `credentials` entry names holds a placeholder, never the host's
 *      value, whatever env.pass or env.set say (the proxy puts the real
 *      value in the header on the way out);
 *   6. when the run inspects TLS, the variables that point tools at the
 *      CA bundle holding cordon's CA (env_ca_vars).  They win too: a
 *      bundle without cordon's CA makes every inspected request fail.
 *
 * The result is sorted by name, so the same inputs give the same bytes,
 * and holds each name once.  It is bounded (ENV_MAX_VARS, ENV_MAX_BYTES):
 * a policy with many or long env.set values could otherwise build an
 * environment that execve(2) refuses with E2BIG, or one that crowds out
 * the arguments.  Nothing here needs privileges or touches the kernel.
 *
 * Runs in: cordon run on the host, before the clone.
 */
#include <sys/types.h>

#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "confine/env.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"

/*
 * Names that look like secrets, compared without regard to case.  A name
 * that matches is passed only when env.pass names it exactly; one marked
 * never is not passed at all: it names an agent's socket, which the
 * sandbox cannot reach, and which would hand out keys if it could.
 */
enum secret_kind {
	SECRET_CONTAINS,
	SECRET_SUFFIX,
	SECRET_PREFIX
};

static const struct secret_pattern {
	const char		*sp_text;
	enum secret_kind	 sp_kind;
	bool			 sp_never;
} secret_patterns[] = {
	{ "TOKEN",			SECRET_CONTAINS, false },
	{ "SECRET",			SECRET_CONTAINS, false },
	{ "PASSWORD",			SECRET_CONTAINS, false },
	{ "PASSWD",			SECRET_CONTAINS, false },
	{ "CREDENTIAL",			SECRET_CONTAINS, false },
	{ "PRIVATE",			SECRET_CONTAINS, false },
	{ "_KEY",			SECRET_SUFFIX,	 false },
	{ "_KEYS",			SECRET_SUFFIX,	 false },
	{ "AWS_",			SECRET_PREFIX,	 false },
	{ "AZURE_",			SECRET_PREFIX,	 false },
	{ "GCP_",			SECRET_PREFIX,	 false },
	{ "GOOGLE_APPLICATION_CREDENTIALS", SECRET_PREFIX, false },
	{ "GITHUB_TOKEN",		SECRET_PREFIX,	 false },
	{ "GH_TOKEN",			SECRET_PREFIX,	 false },
	{ "NPM_TOKEN",			SECRET_PREFIX,	 false },
	{ "SSH_AUTH_SOCK",		SECRET_PREFIX,	 true },
	{ "GPG_AGENT_INFO",		SECRET_PREFIX,	 true },
	{ "DBUS_SESSION_BUS_ADDRESS",	SECRET_PREFIX,	 true },
	{ "DBUS_SYSTEM_BUS_ADDRESS",	SECRET_PREFIX,	 true },
};

enum secret_verdict {
	NOT_SECRET,
	SECRET,			/* passed only when named exactly */
	SECRET_NEVER		/* never passed */
};

/* Where the proxy listens; every proxy URL names this address. */
#define ENV_PROXY_HOST	"127.0.0.1"
#define ENV_NO_PROXY	"localhost,127.0.0.1,::1"

/*
 * The variables set in proxy mode.  "%h" is http://HOST:PORT, "%s"
 * socks5h://HOST:PORT (the proxy tells SOCKS5 from HTTP by the first
 * byte, so both go to one port); anything else is taken as it is.
 * JAVA_TOOL_OPTIONS is appended to, see env_put_proxy().
 */
static const struct proxy_var {
	const char	*pv_name;
	const char	*pv_value;
} proxy_vars[] = {
	{ "HTTP_PROXY",			"%h" },	/* Go, Python, Ruby, ... */
	{ "http_proxy",			"%h" },	/* curl, git, wget */
	{ "HTTPS_PROXY",		"%h" },
	{ "https_proxy",		"%h" },
	{ "ALL_PROXY",			"%s" },	/* curl, git (via libcurl) */
	{ "all_proxy",			"%s" },
	{ "NO_PROXY",			ENV_NO_PROXY },
	{ "no_proxy",			ENV_NO_PROXY },
	{ "npm_config_proxy",		"%h" },	/* npm */
	{ "npm_config_https_proxy",	"%h" },
	{ "YARN_HTTP_PROXY",		"%h" },	/* yarn, 1 as well */
	{ "YARN_HTTPS_PROXY",		"%h" },
	{ "PIP_PROXY",			"%h" },	/* pip */
	{ "CARGO_HTTP_PROXY",		"%h" },	/* cargo */
	{ "grpc_proxy",			"%h" },	/* gRPC's C core */
	{ "NODE_USE_ENV_PROXY",		"1" },	/* Node 24 and later */
};

#define ENV_JAVA_VAR	"JAVA_TOOL_OPTIONS"

/*
 * The variables that name a CA bundle file, set to the run's bundle (the
 * system's certificates and cordon's CA) when the run inspects TLS.
 * Each is read by the tools named; a tool that reads none of them and
 * ignores the system's store does not trust cordon's CA.
 */
const struct env_ca_var env_ca_vars[] = {
	{ "SSL_CERT_FILE",	"OpenSSL (and so Python's ssl, Ruby, wget, "
				    "git, curl built on it), Go, Rust's "
				    "rustls-native-certs" },
	{ "CURL_CA_BUNDLE",	"curl, Python requests" },
	{ "REQUESTS_CA_BUNDLE",	"Python requests, pip" },
	{ "NODE_EXTRA_CA_CERTS", "Node.js (added to its own roots)" },
	{ "GIT_SSL_CAINFO",	"git" },
	{ "PIP_CERT",		"pip" },
	{ "AWS_CA_BUNDLE",	"the AWS CLI and SDKs" },
	{ "CARGO_HTTP_CAINFO",	"cargo" },
	{ "NPM_CONFIG_CAFILE",	"npm, yarn 1" },
	{ "YARN_CA_FILE_PATH",	"yarn 2 and later" },
	{ "DENO_CERT",		"Deno" },
	{ "HEX_CACERTS_PATH",	"Hex (Elixir)" },
	{ "BUNDLE_SSL_CA_CERT",	"Bundler" },
	{ "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", "gRPC's C core" },
};
const size_t	env_ca_nvars = nitems(env_ca_vars);

/* One variable of the environment being built; nothing here is owned. */
struct envent {
	const char	*e_name;	/* not NUL-terminated */
	size_t		 e_namelen;
	const char	*e_value;
};

struct envtab {
	struct envent	*et_v;		/* sorted by name */
	size_t		 et_n;
	size_t		 et_cap;
	char		 et_http[64];	/* the proxy's URLs, which */
	char		 et_socks[64];	/* ... et_v borrows */
	char		*et_java;	/* JAVA_TOOL_OPTIONS, owned */
};

/* Says whether the name of n bytes names a CA bundle or folder. */
static bool
env_is_ca(const char *name, size_t n)
{
	size_t	 i;

	if (n == 12 && memcmp(name, "SSL_CERT_DIR", n) == 0)
		return true;
	for (i = 0; i < env_ca_nvars; i++)
		if (strlen(env_ca_vars[i].cv_name) == n &&
		    memcmp(env_ca_vars[i].cv_name, name, n) == 0)
			return true;
	return false;
}

/* Says whether the first n bytes of s start with pat, ignoring case. */
static bool
ci_prefix(const char *s, size_t n, const char *pat)
{
	size_t	 m = strlen(pat);

	return m <= n && strncasecmp(s, pat, m) == 0;
}

static bool
ci_suffix(const char *s, size_t n, const char *pat)
{
	size_t	 m = strlen(pat);

	return m <= n && strncasecmp(s + n - m, pat, m) == 0;
}

static bool
ci_contains(const char *s, size_t n, const char *pat)
{
	size_t	 i, m = strlen(pat);

	for (i = 0; i + m <= n; i++)
		if (strncasecmp(s + i, pat, m) == 0)
			return true;
	return false;
}

/* Judges a name of n bytes against secret_patterns. */
static enum secret_verdict
env_secret(const char *name, size_t n)
{
	const struct secret_pattern	*sp;
	enum secret_verdict		 v = NOT_SECRET;
	bool				 hit;
	size_t				 i;

	for (i = 0; i < nitems(secret_patterns); i++) {
		sp = &secret_patterns[i];
		switch (sp->sp_kind) {
		case SECRET_CONTAINS:
			hit = ci_contains(name, n, sp->sp_text);
			break;
		case SECRET_SUFFIX:
			hit = ci_suffix(name, n, sp->sp_text);
			break;
		case SECRET_PREFIX:
		default:
			hit = ci_prefix(name, n, sp->sp_text);
			break;
		}
		if (!hit)
			continue;
		if (sp->sp_never)
			return SECRET_NEVER;
		v = SECRET;
	}
	return v;
}

/*
 * Says whether env.pass lets through the host variable name (n bytes):
 * named exactly, or by a prefix ending in '*' when it does not look like
 * a secret.
 */
static bool
env_passes(const struct policy *p, const char *name, size_t n)
{
	const char		*t;
	enum secret_verdict	 v;
	size_t			 i, m;
	bool			 exact = false, prefix = false;

	/*
	 * A credentials variable is the proxy's to use, in every network
	 * mode: the sandbox gets a placeholder (env_build) or nothing.
	 */
	for (i = 0; i < p->p_ncreds; i++)
		if (p->p_creds[i].cr_env != NULL &&
		    strlen(p->p_creds[i].cr_env) == n &&
		    memcmp(p->p_creds[i].cr_env, name, n) == 0)
			return false;
	if (env_is_ca(name, n))
		return true;
	for (i = 0; i < p->p_env_pass.pl_n; i++) {
		t = p->p_env_pass.pl_v[i].pi_text;
		m = strlen(t);
		if (m > 0 && t[m - 1] == '*') {
			if (m - 1 <= n && memcmp(name, t, m - 1) == 0)
				prefix = true;
		} else if (m == n && memcmp(name, t, n) == 0)
			exact = true;
	}
	if (!exact && !prefix)
		return false;
	v = env_secret(name, n);
	if (v == SECRET_NEVER)
		return false;
	return v == NOT_SECRET || exact;
}

/* Orders names as strcmp(3) would order the NUL-terminated names. */
static int
env_namecmp(const char *a, size_t an, const char *b, size_t bn)
{
	int	 c;

	if ((c = memcmp(a, b, an < bn ? an : bn)) != 0)
		return c;
	return an < bn ? -1 : an > bn;
}

/*
 * Sets name (n bytes) to value, replacing an earlier setting; borrows
 * both.  Returns -1 with *cause set when a new name would pass
 * ENV_MAX_VARS: the table never grows past the limit, whatever a policy
 * holds.
 */
static int
env_put(struct envtab *et, const char *name, size_t n, const char *value,
    char **cause)
{
	size_t	 lo = 0, hi = et->et_n, mid;
	int	 c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = env_namecmp(et->et_v[mid].e_name, et->et_v[mid].e_namelen,
		    name, n);
		if (c == 0) {
			et->et_v[mid].e_value = value;
			return 0;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (et->et_n == ENV_MAX_VARS) {
		xasprintf(cause, "the sandbox's environment would hold more "
		    "than %d variables", ENV_MAX_VARS);
		return -1;
	}
	et->et_v = xmalloc_grow(et->et_v, et->et_n, &et->et_cap,
	    sizeof(*et->et_v));
	memmove(&et->et_v[lo + 1], &et->et_v[lo],
	    (et->et_n - lo) * sizeof(*et->et_v));
	et->et_v[lo].e_name = name;
	et->et_v[lo].e_namelen = n;
	et->et_v[lo].e_value = value;
	et->et_n++;
	return 0;
}

/* Returns the value set for name, or NULL. */
static const char *
env_get(const struct envtab *et, const char *name)
{
	size_t	 i, n = strlen(name);

	for (i = 0; i < et->et_n; i++)
		if (env_namecmp(et->et_v[i].e_name, et->et_v[i].e_namelen,
		    name, n) == 0)
			return et->et_v[i].e_value;
	return NULL;
}

/* Steps 1 and 2: the host's variables that env.pass lets through. */
static int
env_put_host(struct envtab *et, const struct policy *p,
    char *const *host_env, char **cause)
{
	const char	*s, *eq;
	size_t		 i, n;

	for (i = 0; host_env != NULL && host_env[i] != NULL; i++) {
		s = host_env[i];
		if ((eq = strchr(s, '=')) == NULL || eq == s)
			continue;	/* malformed: no '=' or no name */
		n = eq - s;
		if (!env_passes(p, s, n))
			continue;
		if (env_put(et, s, n, eq + 1, cause) == -1)
			return -1;
	}
	return 0;
}

/* Step 3: env.set. */
static int
env_put_set(struct envtab *et, const struct policy *p, char **cause)
{
	const struct pitem	*it;
	size_t			 i;

	for (i = 0; i < p->p_env_set.pl_n; i++) {
		it = &p->p_env_set.pl_v[i];
		if (env_put(et, it->pi_text, strlen(it->pi_text),
		    it->pi_value != NULL ? it->pi_value : "", cause) == -1)
			return -1;
	}
	return 0;
}

/*
 * Appends the JVM properties text to JAVA_TOOL_OPTIONS, after what was
 * passed or set, so that they win; but not when the user named own
 * already (a "-Dname=", or NULL: always), which is their choice.  The
 * value is kept in et, whose table borrows it.
 */
static int
env_java_add(struct envtab *et, const char *own, const char *text,
    char **cause)
{
	const char	*java = env_get(et, ENV_JAVA_VAR);
	char		*v;
	int		 rc;

	if (own != NULL && java != NULL && strstr(java, own) != NULL)
		return 0;
	xasprintf(&v, "%s%s%s", java != NULL ? java : "",
	    java != NULL && *java != '\0' ? " " : "", text);
	rc = env_put(et, ENV_JAVA_VAR, strlen(ENV_JAVA_VAR), v, cause);
	free(et->et_java);		/* what the table held before */
	et->et_java = v;
	return rc;
}

/*
 * Step 4: the variables that name the proxy px is on, and the JVM's
 * properties; the values are kept in et, which they must outlive.
 */
static int
env_put_proxy(struct envtab *et, const struct env_proxy *px, char **cause)
{
	const char	*s;
	char		*props;
	size_t		 i;
	int		 port = px->ep_port, rc;

	if (port < 1 || port > 65535) {
		xasprintf(cause, "proxy port %d out of range", port);
		return -1;
	}
	snprintf(et->et_http, sizeof(et->et_http), "http://%s:%d",
	    ENV_PROXY_HOST, port);
	snprintf(et->et_socks, sizeof(et->et_socks), "socks5h://%s:%d",
	    ENV_PROXY_HOST, port);
	for (i = 0; i < nitems(proxy_vars); i++) {
		s = proxy_vars[i].pv_value;
		if (strcmp(s, "%h") == 0)
			s = et->et_http;
		else if (strcmp(s, "%s") == 0)
			s = et->et_socks;
		if (env_put(et, proxy_vars[i].pv_name,
		    strlen(proxy_vars[i].pv_name), s, cause) == -1)
			return -1;
	}

	/*
	 * The JVM reads no proxy variable and no PEM bundle; it takes system
	 * properties, from the command line or this variable.
	 */
	xasprintf(&props, "-Dhttp.proxyHost=%s -Dhttp.proxyPort=%d "
	    "-Dhttps.proxyHost=%s -Dhttps.proxyPort=%d "
	    "-Dhttp.nonProxyHosts=localhost|%s", ENV_PROXY_HOST, port,
	    ENV_PROXY_HOST, port, ENV_PROXY_HOST);
	rc = env_java_add(et, NULL, props, cause);
	free(props);
	if (rc == 0 && px->ep_ca_java != NULL) {
		xasprintf(&props, "-Djavax.net.ssl.trustStore=%s "
		    "-Djavax.net.ssl.trustStoreType=PKCS12", px->ep_ca_java);
		rc = env_java_add(et, "-Djavax.net.ssl.trustStore=", props,
		    cause);
		free(props);
	}
	return rc;
}

/*
 * Steps 5 and 6: the phantom credentials' placeholders, apt's and the
 * agent's settings, and the CA bundle, as px holds them.
 */
static int
env_put_run(struct envtab *et, const struct env_proxy *px, char **cause)
{
	const struct phantom	*ph;
	size_t			 i;

	for (i = 0; i < px->ep_nphantoms; i++) {
		ph = &px->ep_phantoms[i];
		if (ph->ph_env != NULL && env_put(et, ph->ph_env,
		    strlen(ph->ph_env), ph->ph_placeholder, cause) == -1)
			return -1;
	}
	/* apt as root keeps root: it cannot change ids here. */
	if (px->ep_apt_conf != NULL && env_get(et, "APT_CONFIG") == NULL &&
	    env_put(et, "APT_CONFIG", 10, px->ep_apt_conf, cause) == -1)
		return -1;
	/* cordon's agent, not the user's (which is never passed). */
	if (px->ep_agent_sock != NULL && env_put(et, "SSH_AUTH_SOCK", 13,
	    px->ep_agent_sock, cause) == -1)
		return -1;
	for (i = 0; px->ep_ca_bundle != NULL && i < env_ca_nvars; i++)
		if (env_put(et, env_ca_vars[i].cv_name,
		    strlen(env_ca_vars[i].cv_name), px->ep_ca_bundle,
		    cause) == -1)
			return -1;
	return 0;
}

/*
 * Step 7, with the proxy's properties: the JVM takes user.home from the
 * password database, not from HOME.  Where the two differ (a HOME set
 * for the run), the JVM is told HOME, where the home's layer is, or its
 * tools would write their caches (Maven's ~/.m2) where nothing is
 * writable.  Not when the user named user.home already, nor for a HOME
 * the JVM would split (blanks, quotes).
 */
static int
env_put_java_home(struct envtab *et, char **cause)
{
	const struct passwd	*pw;
	const char		*home;
	char			*prop;
	int			 rc;

	home = env_get(et, "HOME");
	if (home == NULL || home[0] != '/' || strpbrk(home, " \t\n\"'") !=
	    NULL || (pw = getpwuid(getuid())) == NULL ||
	    strcmp(pw->pw_dir, home) == 0)
		return 0;
	xasprintf(&prop, "-Duser.home=%s", home);
	rc = env_java_add(et, "-Duser.home=", prop, cause);
	free(prop);
	return rc;
}

/*
 * The table as execve(2) takes it: NULL-terminated "NAME=value" strings
 * (caller frees with env_free()), or NULL with *cause set when they
 * would pass ENV_MAX_BYTES.
 */
static char **
env_join(const struct envtab *et, char **cause)
{
	char	**env, *e;
	size_t	  i, n, vlen, total = 0;

	/* Each string with its '=' and NUL, as execve(2) counts them. */
	for (i = 0; i < et->et_n; i++) {
		total += et->et_v[i].e_namelen + strlen(et->et_v[i].e_value) +
		    2;
		if (total > ENV_MAX_BYTES) {
			xasprintf(cause, "the sandbox's environment would be "
			    "larger than %d bytes", ENV_MAX_BYTES);
			return NULL;
		}
	}
	env = xcalloc(et->et_n + 1, sizeof(*env));
	for (i = 0; i < et->et_n; i++) {
		n = et->et_v[i].e_namelen;
		vlen = strlen(et->et_v[i].e_value);
		e = xmalloc(n + vlen + 2);
		memcpy(e, et->et_v[i].e_name, n);
		e[n] = '=';
		memcpy(e + n + 1, et->et_v[i].e_value, vlen + 1);
		env[i] = e;
	}
	return env;
}

/*
 * Builds the sandboxed command's environment from the host's (host_env,
 * NULL-terminated, may be NULL), the policy's env section and, when px
 * is not NULL, the proxy's port, the phantom credentials' placeholders
 * and the CA bundle's path.  Returns a new NULL-terminated array
 * that the caller frees with env_free(); or NULL with *cause set (caller
 * frees) when the port is out of range or the result would pass
 * ENV_MAX_VARS or ENV_MAX_BYTES.  Borrows everything it is given.
 */
char **
env_build(const struct policy *p, char *const *host_env,
    const struct env_proxy *px, char **cause)
{
	struct envtab	 et;
	char		**env = NULL;

	*cause = NULL;
	memset(&et, 0, sizeof(et));
	if (env_put_host(&et, p, host_env, cause) == -1 ||
	    env_put_set(&et, p, cause) == -1)
		goto out;
	if (px != NULL && (env_put_proxy(&et, px, cause) == -1 ||
	    env_put_run(&et, px, cause) == -1 ||
	    env_put_java_home(&et, cause) == -1))
		goto out;
	env = env_join(&et, cause);
out:
	free(et.et_java);
	free(et.et_v);
	return env;
}

/* Why env_passes() leaves out the host variable name (n bytes). */
static const char *
env_why_dropped(const struct policy *p, const char *name, size_t n)
{
	size_t	 i;

	for (i = 0; i < p->p_ncreds; i++)
		if (p->p_creds[i].cr_env != NULL &&
		    strlen(p->p_creds[i].cr_env) == n &&
		    memcmp(p->p_creds[i].cr_env, name, n) == 0)
			return "a credentials entry's: the sandbox gets a "
			    "placeholder or nothing";
	switch (env_secret(name, n)) {
	case SECRET_NEVER:
		return "an agent's or a bus's socket: never passed";
	case SECRET:
		return "looks like a secret: passed only when env.pass "
		    "names it exactly";
	default:
		return "not in env.pass";
	}
}

/*
 * The host's variables that env_build() leaves out, by name, one a line
 * with the reason ("NAME (why)"), for --dry-run; never a value.  NULL
 * when none is left out; the caller frees.
 */
char *
env_dropped(const struct policy *p, char *const *host_env)
{
	const char	*s, *eq;
	char		*out = NULL, *name, *line;
	size_t		 i, n;

	for (i = 0; host_env != NULL && host_env[i] != NULL; i++) {
		s = host_env[i];
		if ((eq = strchr(s, '=')) == NULL || eq == s)
			continue;
		n = eq - s;
		if (env_passes(p, s, n))
			continue;
		name = str_escape(s, n);
		xasprintf(&line, "%s (%s)", name, env_why_dropped(p, s, n));
		str_append(&out, "\n  ", line);
		free(line);
		free(name);
	}
	return out;
}

/* Frees what env_build() returned; accepts NULL. */
void
env_free(char **env)
{
	size_t	 i;

	if (env == NULL)
		return;
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}
