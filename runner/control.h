/*
 * control.h: the harness's channel of --control (control.c), JSON lines
 * each way on cordon run's event loop on the host.
 */
#ifndef CORDON_CONTROL_H
#define CORDON_CONTROL_H

#include <stdbool.h>

#include <jansson.h>

/* control.c: the harness's channel (--control), JSON lines each way. */
struct control;
struct event_base;

struct control_hooks {
	/* {"allow": P} (true) or {"deny": P}: 0, or -1 with *cause */
	int	(*ch_rule)(bool, const char *, void *, char **);
	/* {"answer": ID, "decision": D}, D already checked */
	int	(*ch_answer)(const char *, const char *, void *, char **);
	/* the harness went */
	void	(*ch_closed)(void *);
};

struct control	*control_open(struct event_base *, const char *,
		    const struct control_hooks *, void *, char **);
bool		 control_alive(const struct control *);
void		 control_send(struct control *, json_t *);
void		 control_free(struct control *);

#endif
