/*
 * fuzz_gitptr.c: git/gitptr.c against git itself, on the fuzzer's bytes
 * (tests/unit/gitptr_diff.h).  The first byte picks the file: even, a
 * .git file in w; odd, the commondir of the linked git directory l.
 * The rest is its text, each '@' replaced by the layout's absolute
 * path, so that absolute paths can reach it.  Any difference between
 * the guard's reading and `git rev-parse` aborts.  Slow for a fuzzer
 * (git runs once per input); a minute finds what the unit test's
 * generated cases did not.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/gitptr_diff.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct gpd	 layout;
static bool		 ready;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*text, *diff;
	size_t	 i, n = 0, dlen;

	if (size < 1 || size > 512)
		return 0;
	if (!ready) {
		if (gpd_setup(&layout) == -1)
			abort();
		ready = true;
	}
	dlen = strlen(layout.d_dir);
	text = xmalloc(size * dlen + 1);
	for (i = 1; i < size; i++) {
		if (data[i] == '@') {
			memcpy(text + n, layout.d_dir, dlen);
			n += dlen;
		} else
			text[n++] = (char)data[i];
	}
	diff = gpd_case(&layout, data[0] & 1 ? GPD_COMMONDIR : GPD_GITFILE,
	    text, n);
	free(text);
	if (diff != NULL) {
		fprintf(stderr, "fuzz_gitptr: %s\n", diff);
		abort();
	}
	return 0;
}
