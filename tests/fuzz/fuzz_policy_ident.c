/*
 * fuzz_policy_ident.c: the identities loader and its glob matcher.  The
 * input is a glob, a newline, an identity, a newline, and the value of
 * "identities" (its policy files name nothing that exists: the loader's
 * errors are what is fuzzed, and a loaded value must print and load
 * back to itself).  Checks that an accepted glob written without '*'
 * matches itself, and that "**" matches every identity but "".
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policies/policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_glob(const char *g, const char *id)
{
	char	*cause;

	if (!policy_ident_match("**", id) != (*id == '\0'))
		abort();
	if (policy_ident_glob_ok(g, &cause) == -1) {
		free(cause);
		return;
	}
	(void)policy_ident_match(g, id);
	if (strchr(g, '*') == NULL && !policy_ident_match(g, g))
		abort();
}

static void
fuzz_load(const char *value)
{
	struct policy_ctx	 ctx = { .pc_workspace = "/nonexistent",
				    .pc_home = "/nonexistent",
				    .pc_dir = "/nonexistent" };
	struct policy		*p, *q;
	json_t			*j;
	char			*text, *again, *cause;

	if (asprintf(&text, "{\"version\": 1, \"identities\": %s}", value) ==
	    -1)
		abort();
	p = policy_load_buffer(text, strlen(text), "fuzz", &ctx, &cause);
	free(text);
	if (p == NULL) {
		free(cause);
		return;
	}
	j = policy_show_json(p, false);
	text = json_dumps(j, JSON_SORT_KEYS);
	json_decref(j);
	if ((q = policy_load_buffer(text, strlen(text), "fuzz", &ctx,
	    &cause)) == NULL)
		abort();	/* what show printed does not load */
	j = policy_show_json(q, false);
	again = json_dumps(j, JSON_SORT_KEYS);
	json_decref(j);
	if (strcmp(text, again) != 0)
		abort();
	free(text);
	free(again);
	policy_free(p);
	policy_free(q);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*buf, *id, *rest;

	if (size > 65536)
		return 0;
	buf = malloc(size + 1);
	memcpy(buf, data, size);
	buf[size] = '\0';
	if ((id = strchr(buf, '\n')) == NULL) {
		free(buf);
		return 0;
	}
	*id++ = '\0';
	if ((rest = strchr(id, '\n')) != NULL)
		*rest++ = '\0';
	fuzz_glob(buf, id);
	if (rest != NULL)
		fuzz_load(rest);
	free(buf);
	return 0;
}
