/*
 * policy_flag.c: the policy flags the commands share (--policy,
 * --allow-domain, --write, ...), in one table: their names, what they
 * take, and what each adds to the layers of a run.  A flag only adds
 * an entry to a struct policy_layers, which this file owns and writes
 * (policy_flag_add); policy_merge_layers() in policy_merge.c reads the
 * entries in order, as the layer of the flags (policy_merge_flag), so the
 * calls run one way: the merge asks this table, never the reverse.  As in tmux, where
 * each command's cmd_entry names its flags and args_parse() reads them,
 * a command adds the sets of flags it takes to its own getopt_long
 * table (policy_flag_options) and hands what getopt_long returns to
 * policy_flag_find() or policy_flag_take(); its other flags stay its own.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"

static const struct policy_flag policy_flags[] = {
	{ "--policy", required_argument, POLICY_FLAGS_NET, PFLAG_FILE, true },
	{ "--allow-domain", required_argument, POLICY_FLAGS_NET, PFLAG_ALLOW,
	    false },
	{ "--deny-domain", required_argument, POLICY_FLAGS_NET, PFLAG_DENY,
	    false },
	{ "--allow-cidr", required_argument, POLICY_FLAGS_NET, PFLAG_CIDR,
	    false },
	{ "--network", required_argument, POLICY_FLAGS_MODE, PFLAG_MODE,
	    false },
	{ "--write", required_argument, POLICY_FLAGS_FS, PFLAG_WRITE, true },
	{ "--read-only", required_argument, POLICY_FLAGS_FS, PFLAG_READ_ONLY,
	    true },
	{ "--deny-path", required_argument, POLICY_FLAGS_FS, PFLAG_HIDE, true },
	{ "--agent", required_argument, POLICY_FLAGS_NET, PFLAG_AGENT, false },
};

/* The commands size their getopt_long tables with it. */
_Static_assert(nitems(policy_flags) == POLICY_FLAGS_N, "POLICY_FLAGS_N");

/*
 * Fills all, room for size entries, for getopt_long: the flags of sets
 * first, in the table's order, then own, up to and with its zeroed last
 * entry.  A flag's val is POLICY_FLAG_VAL and its index here, above any
 * command's own.
 */
void
policy_flag_options(struct option *all, size_t size,
    const struct option *own, unsigned int sets)
{
	size_t	 i, n = 0;

	for (i = 0; i < nitems(policy_flags); i++) {
		if ((policy_flags[i].pf_set & sets) == 0)
			continue;
		memset(&all[n], 0, sizeof(all[n]));
		all[n].name = policy_flags[i].pf_flag + 2;
		all[n].has_arg = policy_flags[i].pf_has_arg;
		all[n++].val = POLICY_FLAG_VAL + (int)i;
	}
	do {
		if (n == size)
			fatalx("%s: %zu options are too few", __func__, size);
		all[n++] = *own;
	} while ((own++)->name != NULL);
}

/* The policy flag getopt_long returned as ch, or NULL for another. */
const struct policy_flag *
policy_flag_find(int ch)
{
	if (ch < POLICY_FLAG_VAL || ch - POLICY_FLAG_VAL >=
	    (int)nitems(policy_flags))
		return NULL;
	return &policy_flags[ch - POLICY_FLAG_VAL];
}

/* The policy flag of that name ("--allow-domain"), or NULL. */
const struct policy_flag *
policy_flag_named(const char *flag)
{
	size_t	 i;

	for (i = 0; i < nitems(policy_flags); i++)
		if (strcmp(policy_flags[i].pf_flag, flag) == 0)
			return &policy_flags[i];
	return NULL;
}

/*
 * Appends a flag and its argument to the ordered layer arguments
 * (ly_args grows; the strings are borrowed).
 */
void
policy_flag_add(struct policy_layers *pl, const char *flag,
    const char *arg)
{
	pl->ly_args = xreallocarray(pl->ly_args, pl->ly_nargs + 2,
	    sizeof(*pl->ly_args));
	pl->ly_args[pl->ly_nargs++] = flag;
	pl->ly_args[pl->ly_nargs++] = arg;
}

/*
 * A policy flag into pl, its argument borrowed as it is; false when ch
 * is another flag, left to the command.
 */
bool
policy_flag_take(struct policy_layers *pl, int ch, const char *arg)
{
	const struct policy_flag	*pf;

	if ((pf = policy_flag_find(ch)) == NULL)
		return false;
	policy_flag_add(pl, pf->pf_flag, arg);
	return true;
}
