/*
 * test_host_tls.c: the tier's address, "tls://HOST:PORT" (lib/host.c's
 * host_tls_url, which cordon run, the originator and the policy's tier
 * read it with): what each spelling gives, and what each refusal says.
 */
#include "unit.h"

#include "lib/host.h"

struct url_case {
	const char	*url;
	const char	*host;		/* NULL: refused */
	const char	*port;		/* or, when refused, the cause's end */
};

static void
test_host_tls_url(void **state)
{
	static const struct url_case cases[] = {
		{ "tls://tier.test:8443", "tier.test", "8443" },
		{ "tls:tier.test:8443", "tier.test", "8443" },
		{ "tls://127.0.0.1:1", "127.0.0.1", "1" },
		{ "tls://[::1]:65535", "::1", "65535" },
		{ "tls://[fe80::1%eth0]:443", "fe80::1%eth0", "443" },
		{ "tcp://tier.test:8443", NULL, ": not tls://HOST:PORT" },
		{ "tls://tier.test", NULL, ": not tls://HOST:PORT" },
		{ "tls://:443", NULL, ": not tls://HOST:PORT" },
		{ "tls://", NULL, ": not tls://HOST:PORT" },
		{ "tls://[::1]", NULL, ": not tls://[ADDRESS]:PORT" },
		{ "tls://[::1", NULL, ": not tls://[ADDRESS]:PORT" },
		{ "tls://[::1]x:443", NULL, ": not tls://[ADDRESS]:PORT" },
		{ "tls://[]:443", NULL, ": not tls://[ADDRESS]:PORT" },
		/* An IPv6 address and a port, or one address?  Brackets say. */
		{ "tls://::1:443", NULL, ": not tls://[ADDRESS]:PORT" },
		{ "tls://tier.test:", NULL, ": the port is not a number from 1 "
		    "to 65535" },
		{ "tls://tier.test:0", NULL, ": the port is not a number from 1 "
		    "to 65535" },
		{ "tls://tier.test:65536", NULL, ": the port is not a number "
		    "from 1 to 65535" },
		{ "tls://tier.test:99999999999", NULL, ": the port is not a "
		    "number from 1 to 65535" },
		{ "tls://tier.test:0443", NULL, ": the port is not a number "
		    "from 1 to 65535" },
		{ "tls://tier.test:+443", NULL, ": the port is not a number "
		    "from 1 to 65535" },
		{ "tls://[::1]:x", NULL, ": the port is not a number from 1 "
		    "to 65535" },
	};
	char	*host, *port, *cause;
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cause = NULL;
		if (cases[i].host != NULL) {
			if (host_tls_url(cases[i].url, &host, &port, &cause) ==
			    -1)
				fail_msg("%s: %s", cases[i].url, cause);
			assert_string_equal(host, cases[i].host);
			assert_string_equal(port, cases[i].port);
			free(host);
			free(port);
			continue;
		}
		if (host_tls_url(cases[i].url, &host, &port, &cause) != -1)
			fail_msg("%s: taken as %s and %s", cases[i].url, host,
			    port);
		assert_null(host);
		assert_null(port);
		assert_non_null(cause);
		if (strncmp(cause, cases[i].url, strlen(cases[i].url)) != 0 ||
		    strcmp(cause + strlen(cases[i].url), cases[i].port) != 0)
			fail_msg("%s: \"%s\", not \"%s%s\"", cases[i].url,
			    cause, cases[i].url, cases[i].port);
		free(cause);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_tls_url),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
