/*
 * proxy_cmd.h: what `cordon proxy`'s files share: the run (its proxy,
 * its listeners, its limits) and the options only its start needs, read
 * by proxy_cmd.c; proxy_listen.c opens and watches the listeners,
 * workers.c runs --workers N, pwatch.c watches the policy's files.
 * proxyd/ is the service around the proxy of proxy/ (the connection
 * engine): nothing in proxy/ calls up into it.
 */
#ifndef CORDON_PROXY_CMD_H
#define CORDON_PROXY_CMD_H

#include <sys/types.h>

#include <stdbool.h>

#include "certs/mtls.h"
#include "lib/endpoint.h"
#include "policies/policy.h"
#include "proxy/proxy.h"

#define PROXY_MAX_LISTEN	16

struct proxy_run {
	struct proxy		 pr_proxy;
	struct policy_layers	 pr_layers;
	struct endpoint		 pr_eps[PROXY_MAX_LISTEN];
	struct evconnlistener	*pr_listeners[PROXY_MAX_LISTEN];
	int			 pr_fds[PROXY_MAX_LISTEN];	/* listening */
	bool			 pr_pp2[PROXY_MAX_LISTEN];
	bool			 pr_tls[PROXY_MAX_LISTEN];	/* tls: */
	struct mtls_files	 pr_tls_files;
	bool			 pr_policy_watch;
	struct pwatch		*pr_pwatch;
	size_t			 pr_nlisten;
	/* The limits given (proxy_limits); 0 keeps proxy_init()'s. */
	size_t			 pr_max;
	int			 pr_head_secs;
	int			 pr_connect_secs;
	int			 pr_idle_secs;
	int			 pr_drain_secs;
	struct event		*pr_drain_ev;
	struct endpoint		 pr_metrics_ep;
	int			 pr_metrics_fd;	/* workers: the parent's */
	size_t			 pr_workers;	/* --workers */
	bool			 pr_worker;	/* this is one of them */
	struct metrics		*pr_metrics;
	const char		*pr_upstream_ca;
	struct event_base	*pr_base;
	struct event		*pr_sigs[3];	/* HUP, TERM, INT */
};

/* `cordon proxy`'s options that only its start needs. */
struct proxy_opts {
	const char	 *po_listens[PROXY_MAX_LISTEN];
	char		 *po_tcp[PROXY_MAX_LISTEN];	/* tls:'s, as tcp: */
	size_t		  po_nlisten;
	const char	 *po_log;	/* --log, "-" for stdout */
	const char	**po_pins;	/* --resolve NAME:ADDR */
	size_t		  po_npins;
	char		 *po_dns;	/* --dns, comma-joined */
	const char	 *po_metrics;	/* --metrics, or NULL */
	const char	 *po_sockmode;	/* --socket-mode, as given */
	const char	 *po_sockgroup;	/* --socket-group, as given */
	const char	 *po_pidfile;	/* --pid-file, or NULL */
	mode_t		  po_mode;	/* Unix listeners', or -1 */
	gid_t		  po_gid;	/* Unix listeners', or -1 */
	bool		  po_remote;	/* --allow-non-loopback */
};

/* proxy_listen.c */
int	 proxy_listen_metrics_open(struct proxy_run *, const char *, bool);
void	 proxy_listen_metrics(struct proxy_run *, const char *, bool);
void	 proxy_listen_open(struct proxy_run *, const struct proxy_opts *);
void	 proxy_listen(struct proxy_run *, size_t);

/* pwatch.c: --policy-watch, the folders of the policy's files. */
struct pwatch;

struct pwatch	*pwatch_new(struct event_base *, const char *const *, size_t,
		    void (*)(void *), void *, char **);
void		 pwatch_free(struct pwatch *);

/* workers.c: --workers N, one proxy served by N processes. */
#define WORKERS_MAX		256

typedef void	(*workers_main_fn)(size_t, struct metrics_slot *,
		    struct ident_table *, void *);
/* The parent's part of a drain: its copies of the listeners closed. */
typedef void	(*workers_drain_fn)(void *);

int		 workers_parse(const char *, size_t *);
size_t		 workers_default(void);
int		 workers_run(size_t, int, workers_main_fn, workers_drain_fn,
		    void *);

/* proxy_cmd.c */
int	 proxy_cmd(int, char **);

#endif /* CORDON_PROXY_CMD_H */
