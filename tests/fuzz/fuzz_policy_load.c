/*
 * fuzz_policy_load.c: the policy loader on arbitrary bytes, as a trusted
 * and as a workspace layer; whatever loads must print (policy show) and
 * load back to the same text.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policies/policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_ctx	 ctx = {
		.pc_workspace = "/w",
		.pc_home = "/h",
		.pc_dir = "/nonexistent",
	};
	struct policy		*p, *back, *merged;
	json_t			*j;
	char			*cause, *s1, *s2;

	if (size > 65536)
		return 0;
	ctx.pc_untrusted = size > 0 && (data[0] & 1);
	if ((p = policy_load_buffer((const char *)data, size, "fuzz", &ctx,
	    &cause)) == NULL) {
		free(cause);
		return 0;
	}
	j = policy_show_json(p, true);
	s1 = json_dumps(j, 0);
	json_decref(j);
	ctx.pc_untrusted = false;
	if ((back = policy_load_buffer(s1, strlen(s1), "shown", &ctx,
	    &cause)) == NULL)
		abort();	/* show printed what does not load */
	j = policy_show_json(back, true);
	s2 = json_dumps(j, 0);
	json_decref(j);
	if (strcmp(s1, s2) != 0)
		abort();	/* show does not round-trip */

	/* Merging and narrowing must not crash either. */
	merged = policy_new();
	policy_merge(merged, p);
	policy_merge_narrow(merged, back);
	policy_free(merged);

	free(s1);
	free(s2);
	policy_free(back);
	policy_free(p);
	return 0;
}
