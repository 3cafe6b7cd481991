/*
 * fuzz_gitcfg.c: git/gitcfg.c on arbitrary bytes.  What it reads has
 * keys of a section, a '.' and a name; what it holds back of a new
 * repository is at least its entries that are not inert by name; each
 * entry judged in a context (gitjudge.c, giturl.c: the URLs) has a
 * reason when held, and one not inert by name is always held.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "git/git.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char	*write[] = { "/nonexistent-ws" };
	static const struct gitcfg_places pl = { write, 1, NULL, 0 };
	struct gitcfg		 cfg, held;
	struct gitcfg_ctx	 cx;
	enum gitcfg_class	 c;
	char			*cause = NULL, *why;
	size_t			 i, n = 0;

	if (gitcfg_parse(&cfg, (const char *)data, size, &cause) == -1) {
		if (cause == NULL)
			abort();
		free(cause);
		return 0;
	}
	for (i = 0; i < cfg.gc_n; i++) {
		if (strchr(cfg.gc_v[i].ge_key, '.') == NULL ||
		    cfg.gc_v[i].ge_key[strlen(cfg.gc_v[i].ge_key) - 1] == '.')
			abort();
		if (!gitcfg_inert(cfg.gc_v[i].ge_key, cfg.gc_v[i].ge_value))
			n++;
		cx.gx_gitdir = "/nonexistent-ws/.git";
		cx.gx_base = i % 2 == 0 ? NULL : &cfg;
		cx.gx_places = &pl;
		c = gitjudge_class(&cx, &cfg, &cfg.gc_v[i], i % 3 == 0, &why);
		if ((gitjudge_held(c) && why == NULL) || (!gitcfg_inert(
		    cfg.gc_v[i].ge_key, cfg.gc_v[i].ge_value) &&
		    !gitjudge_held(c)))
			abort();
		free(why);
	}
	if (gitcfg_held(NULL, NULL, &cfg, &held) < n)
		abort();
	gitcfg_clear(&held);
	if (gitcfg_held(NULL, &cfg, &cfg, &held) != 0)
		abort();
	gitcfg_clear(&held);
	gitcfg_clear(&cfg);
	return 0;
}
