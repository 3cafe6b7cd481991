/*
 * agent.h: cordon's ssh-agent for the sandbox (agent.c), on cordon run's
 * event loop on the host.
 */
#ifndef CORDON_AGENT_H
#define CORDON_AGENT_H

#include <stdbool.h>
#include <stdio.h>

/*
 * agent.c: cordon's ssh-agent for the sandbox, in cordon run's loop: it
 * carries to the user's agent only the logins to hosts the policy
 * allows.  Its socket is in the run's private folder; the sandbox sees
 * it at RUN_AGENT_SOCK.
 */
#define AGENT_CONNS_MAX		32

struct agent;
struct proxy;

bool		 agent_usable(const char *, char **);
struct agent	*agent_new(struct proxy *, const char *, const char *,
		    const char *, const char *, char **);
const char	*agent_path(const struct agent *);
void		 agent_summary(const struct agent *, FILE *);
void		 agent_free(struct agent *);

#endif
