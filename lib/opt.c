/*
 * opt.c: the message for an option getopt_long() refused, with its fix:
 * the option meant when one is close (a typo, a single dash), or where
 * the options are listed.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/opt.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

#define OPT_NAME_MAX	64

/*
 * The edit distance of a and b: insertions, deletions, replacements and
 * swaps of two neighbours (a typed "domian" is one step from "domain").
 * Names longer than OPT_NAME_MAX are far from everything.
 */
int
opt_distance(const char *a, const char *b)
{
	int	 d[OPT_NAME_MAX + 1][OPT_NAME_MAX + 1];
	size_t	 la = strlen(a), lb = strlen(b), i, j;
	int	 c, v;

	if (la > OPT_NAME_MAX || lb > OPT_NAME_MAX)
		return OPT_NAME_MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			c = a[i - 1] != b[j - 1];
			v = d[i - 1][j - 1] + c;
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

/* The long option closest to name, if close enough to be a typo. */
static const char *
opt_near(const char *name, const struct option *opts)
{
	const char	*best = NULL;
	int		 bestd, d;

	/* One slip in a short name, two in a longer one. */
	bestd = strlen(name) < 5 ? 2 : 3;
	for (; opts->name != NULL; opts++)
		if ((d = opt_distance(name, opts->name)) < bestd) {
			bestd = d;
			best = opts->name;
		}
	return best;
}

/* The option named exactly name, or NULL. */
static const struct option *
opt_find(const char *name, const struct option *opts)
{
	for (; opts->name != NULL; opts++)
		if (strcmp(opts->name, name) == 0)
			return opts;
	return NULL;
}

/* "--name[=value]": what is wrong with a long option, and the fix. */
static void
opt_refused_long(const char *cmd, const char *arg,
    const struct option *opts)
{
	const struct option	*o, *a, *b = NULL;
	const char		*near;
	char			*name, *e;

	name = xstrndup(arg + 2, strcspn(arg + 2, "="));
	e = str_escape(name, strlen(name));
	for (a = NULL, o = opts; o->name != NULL && b == NULL; o++)
		if (strncmp(o->name, name, strlen(name)) == 0) {
			if (a == NULL)
				a = o;
			else
				b = o;
		}
	o = opt_find(name, opts);
	if (o != NULL && arg[2 + strlen(name)] == '=') {
		log_warnx("%s: --%s takes no value", cmd, e);
		log_warnx("hint: write --%s alone", e);
	} else if (o != NULL) {
		log_warnx("%s: --%s needs a value", cmd, e);
		log_warnx("hint: write --%s VALUE; cordon %s --help says what "
		    "it takes", e, cmd);
	} else if (b != NULL) {
		log_warnx("%s: --%s is short for more than one option: --%s, "
		    "--%s", cmd, e, a->name, b->name);
		log_warnx("hint: write the option out in full");
	} else if ((near = opt_near(name, opts)) != NULL) {
		log_warnx("%s: unknown option --%s", cmd, e);
		log_warnx("hint: did you mean --%s? (cordon %s --help lists "
		    "the options)", near, cmd);
	} else {
		log_warnx("%s: unknown option --%s", cmd, e);
		log_warnx("hint: cordon %s --help lists the options", cmd);
	}
	free(e);
	free(name);
}

/*
 * Says which option getopt_long() refused (it returned '?', opterr 0)
 * and the fix.  cmd names the subcommand ("policy explain"), argv and
 * opts are what getopt_long() was given, shorts its short options.
 */
void
opt_refused(const char *cmd, char **argv, const struct option *opts,
    const char *shorts)
{
	const char	*arg = argv[optind - 1], *near;
	const char	*sh, *cur = argv[optind];
	char		*e;

	/* A short option amid a cluster leaves optind on its cluster. */
	if (cur != NULL && cur[0] == '-' && cur[1] != '-' && optopt != 0 &&
	    strchr(cur + 1, optopt) != NULL)
		arg = cur;
	if (strncmp(arg, "--", 2) == 0) {
		opt_refused_long(cmd, arg, opts);
		return;
	}
	sh = optopt != 0 && optopt != ':' ? strchr(shorts, optopt) : NULL;
	if (sh != NULL && sh[1] == ':') {
		log_warnx("%s: -%c needs a value", cmd, optopt);
		log_warnx("hint: write -%c VALUE; cordon %s --help says what "
		    "it takes", optopt, cmd);
		return;
	}
	log_warnx("%s: unknown option -%c", cmd, optopt != 0 ? optopt : '?');
	/* A long option typed with one dash: -allow-domain. */
	if (arg[0] == '-' && strlen(arg) > 2 &&
	    (near = opt_near(arg + 1, opts)) != NULL) {
		e = str_escape(arg, strlen(arg));
		log_warnx("hint: long options take two dashes: did you mean "
		    "--%s, not %s?", near, e);
		free(e);
	} else
		log_warnx("hint: cordon %s --help lists the options", cmd);
}
