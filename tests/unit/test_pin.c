/*
 * test_pin.c: account pinning (proxy/pin.c): which credential a request
 * carries to a host, and when a foreign one is refused; and the
 * credentials keys that say so (headers, cookies, foreign).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdbool.h>

#include "unit.h"

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"

#define PH	PHANTOM_PREFIX "0123456789abcdef0123456789abcdef"
#define PH2	PHANTOM_PREFIX "fedcba9876543210fedcba9876543210"

static struct policy *
policy_of(const char *text, char **cause)
{
	struct policy_ctx	 ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.pc_workspace = ctx.pc_home = ctx.pc_dir = "/";
	*cause = NULL;
	return policy_load_buffer(text, strlen(text), "t.json", &ctx, cause);
}

static void
phantom_set(struct phantom *ph, const char *host, const char *env,
    const char *header, const char *format, const char *placeholder)
{
	char	*cause;

	memset(ph, 0, sizeof(*ph));
	if (policy_parse_pattern(host, &ph->ph_host, &cause) == -1)
		fail_msg("%s", cause);
	ph->ph_env = xstrdup(env);
	ph->ph_header = xstrdup(header);
	ph->ph_format = xstrdup(format);
	ph->ph_placeholder = xstrdup(placeholder);
	ph->ph_value = xstrdup("real");
}

/* The kind of the request whose headers are hdrs, to host. */
static enum pin_kind
kind_of(const char *hdrs, const struct phantom *ph, size_t n,
    const struct policy *p, const char *host, bool inspected, char **where)
{
	struct http_request	 req;
	enum pin_kind		 k;
	char			*head, *cause = NULL;
	size_t			 used;
	int			 status;

	xasprintf(&head, "GET / HTTP/1.1\r\nHost: %s\r\n%s\r\n", host, hdrs);
	if (http_request_parse_origin(head, strlen(head), 443, &req, &used,
	    &status, &cause) != HTTP_PARSE_OK)
		fail_msg("%s: %s", head, cause ? cause : "more");
	k = pin_classify(&req, ph, n, p, host, inspected, where);
	http_request_clear(&req);
	free(head);
	return k;
}

static void
test_classify(void **state)
{
	static const struct {
		const char	*hdrs;
		const char	*host;
		bool		 inspected;
		enum pin_kind	 kind;
		const char	*where;
	} cases[] = {
		{ "", "api.test", true, PIN_NONE, NULL },
		{ "Accept: */*\r\n", "api.test", true, PIN_NONE, NULL },
		{ "Authorization: Bearer " PH "\r\n", "api.test", true,
		    PIN_PHANTOM, NULL },
		/* Plain HTTP: the placeholder goes unfilled, no credential. */
		{ "Authorization: Bearer " PH "\r\n", "api.test", false,
		    PIN_NONE, NULL },
		{ "Authorization: token ghp_x\r\n", "api.test", true,
		    PIN_FOREIGN, "header Authorization" },
		{ "authorization: token ghp_x\r\n", "api.test", true,
		    PIN_FOREIGN, "header authorization" },
		/* Two, one of them cordon's: still foreign. */
		{ "Authorization: Bearer " PH "\r\nAUTHORIZATION: x\r\n",
		    "api.test", true, PIN_FOREIGN, "header AUTHORIZATION" },
		{ "Authorization: x\r\nAuthorization: Bearer " PH "\r\n",
		    "api.test", true, PIN_FOREIGN, "header Authorization" },
		/* A placeholder with more around it is not the placeholder. */
		{ "Authorization: Bearer " PH " ghp_x\r\n", "api.test", true,
		    PIN_FOREIGN, "header Authorization" },
		/* Another host's placeholder carries nothing. */
		{ "Authorization: Bearer " PH2 "\r\n", "api.test", true,
		    PIN_NONE, NULL },
		{ "Authorization: " PH2 "\r\n", "api.test", true, PIN_NONE,
		    NULL },
		/* Headers and cookies the policy names for the host. */
		{ "x-api-key: k\r\n", "api.test", true, PIN_FOREIGN,
		    "header x-api-key" },
		{ "X-Api-Key: k\r\n", "other.test", true, PIN_NONE, NULL },
		{ "Cookie: theme=dark; sid=abc\r\n", "api.test", true,
		    PIN_FOREIGN, "cookie sid" },
		{ "Cookie: sid =abc\r\n", "api.test", true, PIN_FOREIGN,
		    "cookie sid" },
		{ "Cookie: SID=abc; sidx=1; xsid=2\r\n", "api.test", true,
		    PIN_NONE, NULL },
		{ "Cookie: sid=abc\r\n", "other.test", true, PIN_NONE, NULL },
		/* A host without a credential: told apart all the same. */
		{ "Authorization: token ghp_x\r\n", "other.test", true,
		    PIN_FOREIGN, "header Authorization" },
		{ "Authorization:\r\n", "api.test", true, PIN_NONE, NULL },
	};
	struct phantom	*ph = xcalloc(3, sizeof(*ph));
	struct policy	*p;
	char		*cause, *where;
	size_t		 i;

	(void)state;
	phantom_set(&ph[0], "api.test", "TOKEN", "Authorization", "Bearer %s",
	    PH);
	phantom_set(&ph[1], "npm.test", "NPM", "Authorization", "Bearer %s",
	    PH2);
	/* A login's refresh token goes in a body, in no header. */
	phantom_set(&ph[2], "api.test", "LOGIN", "Authorization", "%s",
	    PHANTOM_PREFIX "ffffffffffffffffffffffffffffffff");
	free(ph[2].ph_header);
	ph[2].ph_header = NULL;
	ph[2].ph_path = xstrdup("/oauth/token");
	if ((p = policy_of("{\"version\": 1, \"credentials\": [{\"host\": "
	    "\"api.test\", \"headers\": [\"X-Api-Key\"], \"cookies\": "
	    "[\"sid\"]}]}", &cause)) == NULL)
		fail_msg("%s", cause);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (kind_of(cases[i].hdrs, ph, 3, p, cases[i].host,
		    cases[i].inspected, &where) != cases[i].kind)
			fail_msg("case %zu: %s", i, cases[i].hdrs);
		if (cases[i].where == NULL)
			assert_null(where);
		else
			assert_string_equal(where, cases[i].where);
		free(where);
	}
	policy_free(p);
	proxy_phantoms_free(ph, 3);
}

/* A request with an Authorization header of value v to host. */
static bool
allows(const char *v, const struct phantom *ph, size_t n,
    const struct policy *p, const char *host, char **why, char **hint)
{
	struct http_request	 req;
	const struct pitem	*rule;
	enum pin_kind		 kind;
	char			*head, *cause = NULL;
	size_t			 used;
	int			 status;
	bool			 ok;

	xasprintf(&head, "GET / HTTP/1.1\r\nHost: %s\r\nAuthorization: %s"
	    "\r\n\r\n", host, v);
	if (http_request_parse_origin(head, strlen(head), 443, &req, &used,
	    &status, &cause) != HTTP_PARSE_OK)
		fail_msg("%s", cause);
	ok = pin_allows(&req, ph, n, p, host, true, &kind, &rule, why, hint);
	assert_true(ok == (rule == NULL));
	http_request_clear(&req);
	free(head);
	return ok;
}

static void
test_allows(void **state)
{
	struct phantom	*ph = xcalloc(1, sizeof(*ph));
	struct policy	*p, *open;
	char		*cause, *why, *hint;

	(void)state;
	phantom_set(ph, "*.github.test", "GITHUB_TOKEN", "Authorization",
	    "token %s", PH);
	if ((p = policy_of("{\"version\": 1}", &cause)) == NULL ||
	    (open = policy_of("{\"version\": 1, \"credentials\": [{\"host\": "
	    "\"api.github.test\", \"foreign\": \"allow\"}]}", &cause)) ==
	    NULL)
		fail_msg("%s", cause);
	assert_false(allows("token ghp_ATTACKER", ph, 1, p, "api.github.test",
	    &why, &hint));
	assert_string_equal(why, "header Authorization carries a credential "
	    "cordon did not put there, and api.github.test is pinned to "
	    "cordon's credential (GITHUB_TOKEN): a command's own credential "
	    "could act as another account");
	assert_contains(hint, "add {\"host\": \"api.github.test\", "
	    "\"foreign\": \"allow\"} to \"credentials\"");
	free(why);
	free(hint);
	/* Cordon's own, a host without a credential, or let through. */
	assert_true(allows("token " PH, ph, 1, p, "api.github.test", &why,
	    &hint));
	assert_null(why);
	assert_true(allows("token ghp_x", ph, 1, p, "github.test", &why,
	    &hint));
	assert_true(allows("token ghp_x", ph, 1, open, "api.github.test",
	    &why, &hint));
	assert_false(allows("token ghp_x", ph, 1, open, "raw.github.test",
	    &why, &hint));
	free(why);
	free(hint);
	assert_true(allows("token ghp_x", ph, 0, p, "api.github.test", &why,
	    &hint));
	policy_free(p);
	policy_free(open);
	proxy_phantoms_free(ph, 1);
}

static void
test_policy_keys(void **state)
{
	static const struct {
		const char	*entry;
		const char	*why;	/* NULL: loads */
	} cases[] = {
		{ "{\"host\": \"a.test\", \"foreign\": \"allow\"}", NULL },
		{ "{\"host\": \"a.test\", \"foreign\": \"deny\", "
		    "\"env\": \"T\", \"header\": \"X-T\", \"format\": \"%s\"}",
		    NULL },
		{ "{\"host\": \"a.test\", \"cookies\": []}", NULL },
		{ "{\"host\": \"a.test\"}", "needs \"env\", \"header\" and "
		    "\"format\"" },
		{ "{\"host\": \"a.test\", \"env\": \"T\", \"foreign\": "
		    "\"allow\"}", "credentials[0].header: missing" },
		{ "{\"host\": \"a.test\", \"foreign\": \"yes\"}",
		    "\"allow\" or \"deny\"" },
		{ "{\"host\": \"a.test\", \"foreign\": true}",
		    "\"allow\" or \"deny\"" },
		{ "{\"host\": \"a.test\", \"headers\": [\"X Y\"]}",
		    "not a name" },
		{ "{\"host\": \"a.test\", \"cookies\": \"sid\"}",
		    "an array of strings" },
	};
	struct policy	*p;
	char		*text, *cause;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		xasprintf(&text, "{\"version\": 1, \"credentials\": [%s]}",
		    cases[i].entry);
		p = policy_of(text, &cause);
		if (cases[i].why == NULL) {
			if (p == NULL)
				fail_msg("%s: %s", text, cause);
			policy_free(p);
		} else {
			if (p != NULL)
				fail_msg("accepted: %s", text);
			assert_contains(cause, cases[i].why);
			free(cause);
		}
		free(text);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_allows),
		cmocka_unit_test(test_policy_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
