/*
 * tally.h: the proxy's decisions of a run, counted by cordon run on the
 * host as they are logged (tally.c), for the summary on stderr and the
 * --report JSON document.
 */
#ifndef CORDON_TALLY_H
#define CORDON_TALLY_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

/* tally.c: the proxy's decisions, counted; the summary and --report. */
#define REPORT_VERSION	1

struct egress;
struct gitwrite;
struct guard;
struct run;
struct tally;
struct wspath;

struct report_info {
	const struct run	*ri_run;
	int			 ri_status;	/* cordon run's exit status */
	long long		 ri_duration_ms;
	bool			 ri_own_proxy;
	const char		*ri_proxy_socket;
	const char		*ri_error;	/* why setup failed, or NULL */
	const struct guard	*ri_guard;	/* what it quarantined */
	struct gitwrite		*ri_gitwrite;	/* git config written, held */
	size_t			 ri_gitwrite_from; /* a session's command: */
					/* its first change */
};

struct tally	*tally_new(void);
bool		 tally_add(struct tally *, const struct egress *,
		    const char *, const char *);
void		 tally_end(struct tally *, json_t *);
void		 tally_hidden(struct tally *, const char *const *, size_t);
void		 tally_tokens(struct tally *, json_t *);
void		 tally_summary(const struct tally *, FILE *);
void		 tally_refusals(const struct tally *, FILE *);
void		 tally_line(const struct egress *, const char *, FILE *);
void		 tally_session(struct tally *);
void		 tally_hooks(const struct tally *, FILE *);
int		 tally_report(const struct tally *, const struct report_info *,
		    const char *, const struct wspath *, char **);
void		 tally_free(struct tally *);

#endif
