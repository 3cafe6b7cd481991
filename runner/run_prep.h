/*
 * run_prep.h: a run as cordon run decides it on the host before the
 * clone (run_prepare.c, the mount plan's part in run_plan.c), for
 * run_cmd.c to hand to run_exec().
 */
#ifndef CORDON_RUN_PREP_H
#define CORDON_RUN_PREP_H

#include <limits.h>

#include "confine/env.h"
#include "confine/trust.h"
#include "guard/guard.h"
#include "runner/runner.h"

/*
 * run_prepare.c: a run, decided before the clone.  It owns all it
 * points to, and borrows the options' strings.
 */
struct run_prep {
	struct run		 rp_run;
	struct run_net		 rp_net;	/* the options', with the folders */
						/* of --report and --log opened */
	struct policy_layers	 rp_layers;	/* the options', in the workspace */
	struct policy		*rp_policy;	/* until run_exec() takes it */
	struct fsplan		 rp_plan;
	struct trust_bundle	 rp_ib;
	struct env_proxy	 rp_ep;
	struct unix_routes	 rp_routes;
	struct guard		 rp_guard;
	struct gitwrite		 rp_gitwrite;
	struct blocks		 rp_blocks;
	char			 rp_workspace[PATH_MAX];
	char			 rp_home[PATH_MAX];	/* the scratch layer's */
	char			*rp_known[2];	/* known_hosts, for the agent */
	char			*rp_tier[POLICY_TIER_N]; /* the policy's tier */
	struct pagent		 rp_agent;	/* --agent's profile, or zeroes */
};

int	run_prepare(struct run_prep *, const struct run_opts *);
int	run_prepare_exec(struct run_prep *, const struct run_opts *);
void	run_prepare_clear(struct run_prep *);

/* run_agent.c: --agent's CA and hints, before the plan. */
int	run_agent_prepare(struct run_prep *, const struct run_opts *);

/*
 * run_proxy.c: whether this program serves the run (cordon-offline
 * hands a run with the proxy to cordon-main), what the command holds of
 * the proxy (the phantom credentials, the CA bundle), and cordon's CA
 * for an agent's key.
 */
int	run_proxy_served(const struct run_prep *);
int	run_proxy_env(struct run_prep *);
void	run_proxy_env_clear(struct run_prep *);
int	run_proxy_agent_ca(const struct policy *, const char *);

/* run_plan.c: the mount plan, and what follows from it. */
int	run_plan(struct run_prep *, const struct run_opts *);

#endif
