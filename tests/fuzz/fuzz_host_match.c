/*
 * fuzz_host_match.c: host parsing and the decision on arbitrary names,
 * against a fixed policy.  Checks invariants a proxy relies on: an
 * accepted name is canonical (parsing it again gives itself), and a
 * decision is the same for the canonical name as for the raw one.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/host.h"
#include "policies/policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct policy	*policy;

static const char policy_text[] =
    "{\"version\": 1, \"network\": {\"allow\": [\"github.com\","
    " \"*.githubusercontent.com\", \"api.test:8443\", \"any.test:*\","
    " \"127.0.0.1:8080\", \"[::1]\", \"10.0.0.1\"],"
    " \"deny\": [\"gist.github.com\", \"*.evil.test\", \"1.2.3.4\"],"
    " \"allow_cidrs\": [\"127.0.0.0/8\"]}}";

static void
load_policy(void)
{
	struct policy_ctx	 ctx = { .pc_workspace = "/w", .pc_home = "/h" };
	char			*cause;

	if ((policy = policy_load_buffer(policy_text, strlen(policy_text),
	    "fuzz", &ctx, &cause)) == NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct decision	 d1, d2;
	struct host	 h, again;
	struct pitem	 it;
	char		*cause, *text;
	int		 port;
	bool		 a1, a2;

	if (policy == NULL)
		load_policy();
	if (size < 2)
		return 0;
	port = (data[0] << 8 | data[1]);
	data += 2;
	size -= 2;

	if (host_parse((const char *)data, size, &h, &cause) == 0) {
		if (host_parse(h.h_name, strlen(h.h_name), &again, &cause) != 0)
			abort();	/* canonical form refused */
		if (strcmp(h.h_name, again.h_name) != 0)
			abort();	/* canonical form not a fixed point */
		a1 = policy_match_host(policy, (const char *)data, size, port,
		    &d1);
		a2 = policy_match_host(policy, h.h_name, strlen(h.h_name), port,
		    &d2);
		if (a1 != a2 || d1.d_rule != d2.d_rule)
			abort();	/* spelling changed the decision */
		free(decision_describe(&d1));
		free(decision_hint(&d1));
		decision_clear(&d1);
		decision_clear(&d2);
	} else
		free(cause);

	/* The same bytes as a policy pattern. */
	text = strndup((const char *)data, size);
	memset(&it, 0, sizeof(it));
	if (strlen(text) == size && policy_parse_pattern(text, &it,
	    &cause) == 0) {
		struct pitem	 back = { 0 };

		if (policy_parse_pattern(it.pi_text, &back, &cause) != 0 ||
		    strcmp(it.pi_text, back.pi_text) != 0)
			abort();	/* canonical pattern not stable */
		policy_pitem_clear(&back);
	} else if (strlen(text) == size)
		free(cause);
	policy_pitem_clear(&it);
	free(text);
	return 0;
}
