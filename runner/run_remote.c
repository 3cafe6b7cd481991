/*
 * run_remote.c: `cordon run --proxy tls://HOST:PORT`, a run whose
 * egress is decided by a remote tier (cordon proxy --listen-sandbox
 * tls:).  The sandbox is as with --proxy-socket: its PID 1 bridge
 * reaches a Unix socket and writes each connection's PROXY v2 header.
 * Only the socket is the run's own, in its private 0700 folder, and
 * this process relays each connection from it to the tier over mutual
 * TLS (bridge/tlsup.c): the key stays out of the sandbox, and PID 1
 * does no TLS.  The run's channel (control_feed.c) is a TLS connection of
 * its own, made by run_remote_dial(); the tier scopes it and the run's
 * connections under the certificate's identity.
 *
 * Runs in: cordon run on the host, on its event loop.
 */
#include <sys/types.h>

#include <stdbool.h>
#include <stdlib.h>

#include "bridge/tlsup.h"
#include "lib/log.h"
#include "runner/run_host.h"
#include "runner/runner.h"

/*
 * The relay: the files read, the socket made.  Returns 0, or -1 having
 * said why and what to do (nothing runs).
 */
int
run_remote_start(struct runner *rn)
{
	const struct run_net	*net = rn->rn_net;
	struct tlsup_files	 f = { net->net_cert, net->net_key,
				    net->net_ca };
	char			*cause;
	int			 fd;

	if ((rn->rn_remote = tlsup_new(rn->rn_base, net->net_remote, &f,
	    &cause)) == NULL) {
		log_warnx("run: --proxy %s: %s", net->net_remote, cause);
		log_warnx("hint: the three files must be readable by you; a "
		    "key you may not hold stays with the host's node-local "
		    "originator: run with --proxy-socket PATH of it (cordon "
		    "bridge --listen unix:PATH --connect tls:HOST:PORT)");
		free(cause);
		return -1;
	}
	if ((fd = run_sock_open(rn, &cause)) == -1 ||
	    tlsup_listen(rn->rn_remote, fd, false, &cause) == -1) {
		log_warnx("run: %s", cause);
		free(cause);
		return -1;
	}
	return 0;
}

/*
 * The preflight's connection to the tier, TLS done.  Returns its socket
 * with *ssl set, or -1 having said why and what to do (unless quiet: a
 * lost channel reopened, control_feed_replay.c, says it once at the end).
 */
int
run_remote_dial(struct runner *rn, SSL **ssl, bool quiet)
{
	char	*cause, *hint;
	int	 fd;

	if ((fd = tlsup_dial(rn->rn_remote, TLSUP_DIAL_SECS, ssl, &cause,
	    &hint)) == -1 && quiet) {
		free(cause);
		free(hint);
	} else if (fd == -1) {
		log_warnx("run: --proxy %s: %s", rn->rn_net->net_remote,
		    cause);
		log_warnx("hint: %s", hint);
		free(cause);
		free(hint);
	}
	return fd;
}
