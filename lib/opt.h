/*
 * opt.h: what to say when getopt_long() refuses an option.
 *
 * main() sets opterr to 0, so getopt prints nothing of its own (its
 * messages name the subcommand as if it were the program, and give no
 * fix); each subcommand's '?' case calls opt_refused() instead.
 */
#ifndef CORDON_OPT_H
#define CORDON_OPT_H

#include <getopt.h>

void	opt_refused(const char *, char **, const struct option *,
	    const char *);
int	opt_distance(const char *, const char *);

#endif
