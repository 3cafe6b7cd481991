/*
 * publish.c: `cordon run --publish PORT`, a server the command runs in
 * the sandbox, reachable from the host at 127.0.0.1:PORT.
 *
 * The sandbox's network namespace has only its own lo, which the host
 * cannot reach, and cordon run, outside, cannot enter it (that takes a
 * capability in the user namespace that owns the host's).  So cordon run
 * listens on the host's 127.0.0.1:PORT and hands each connection it
 * accepts, as a descriptor over a socket pair made before the sandbox
 * (SCM_RIGHTS), to PID 1, which connects to 127.0.0.1:PORT inside and
 * relays the two.  Nothing else crosses: the pair carries descriptors of
 * connections to the published ports only, from outside in.
 *
 * Runs in: cordon run on the host, on its event loop.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "lib/fdpass.h"
#include "lib/log.h"
#include "lib/relay.h"
#include "lib/xmalloc.h"
#include "runner/runner.h"

/* One accepted connection's descriptor, for PID 1, with its port. */
static void
publish_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct publish_port	*pp = arg;

	(void)l;
	(void)sa;
	(void)salen;
	/* The pair's one message: the port, and the descriptor beside it. */
	if (fdpass_send(pp->pp_pair, fd, &pp->pp_port, sizeof(pp->pp_port),
	    MSG_NOSIGNAL | MSG_DONTWAIT) == -1)
		log_debug("%s: %d: %s", __func__, pp->pp_port, strerror(errno));
	close(fd);
}

/*
 * Outside, before the sandbox: a listener on the host's 127.0.0.1 for
 * each of the n ports, and the socket pair, whose other end PID 1 keeps
 * (*inside).  Returns 0, or -1 with *cause set and nothing left open.
 */
int
publish_open(struct publish *pb, const uint16_t *ports, size_t n,
    int *inside, char **cause)
{
	struct sockaddr_in	 sin;
	int			 pair[2], fd, one = 1;
	size_t			 i;

	memset(pb, 0, sizeof(*pb));
	pb->pb_pair = *inside = -1;
	if (n == 0)
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) ==
	    -1) {
		xasprintf(cause, "--publish: socketpair: %s", strerror(errno));
		return -1;
	}
	pb->pb_pair = pair[0];
	*inside = pair[1];
	pb->pb_ports = xcalloc(n, sizeof(*pb->pb_ports));
	for (i = 0; i < n; i++) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons(ports[i]);
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0)) == -1 || setsockopt(fd, SOL_SOCKET,
		    SO_REUSEADDR, &one, sizeof(one)) == -1 || bind(fd,
		    (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
		    listen(fd, 128) == -1) {
			xasprintf(cause, "--publish %u: 127.0.0.1:%u on the "
			    "host: %s%s", ports[i], ports[i], strerror(errno),
			    errno == EADDRINUSE ? " (something on the host "
			    "listens there already: stop it, or publish "
			    "another port)" : "");
			if (fd != -1)
				close(fd);
			close(*inside);
			*inside = -1;
			publish_close(pb);
			return -1;
		}
		pb->pb_ports[i].pp_fd = fd;
		pb->pb_ports[i].pp_port = ports[i];
		pb->pb_ports[i].pp_pair = pb->pb_pair;
		pb->pb_n++;
	}
	return 0;
}

/*
 * PID 1, just made: the outside's descriptors it got with the rest of
 * cordon run's (the host's listeners, the pair's other end) are not the
 * sandbox's: closed.
 */
void
publish_forget(struct publish *pb)
{
	size_t	 i;

	for (i = 0; i < pb->pb_n; i++)
		if (pb->pb_ports[i].pp_fd != -1)
			close(pb->pb_ports[i].pp_fd);
	if (pb->pb_pair != -1)
		close(pb->pb_pair);
	free(pb->pb_ports);
	memset(pb, 0, sizeof(*pb));
	pb->pb_pair = -1;
}

/* Outside, once the sandbox runs: the listeners on the loop. */
int
publish_start(struct publish *pb, struct event_base *base)
{
	struct publish_port	*pp;
	size_t			 i;

	for (i = 0; i < pb->pb_n; i++) {
		pp = &pb->pb_ports[i];
		if ((pp->pp_l = evconnlistener_new(base, publish_accept_cb, pp,
		    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1,
		    pp->pp_fd)) == NULL)
			return -1;
		pp->pp_fd = -1;	/* the listener's now */
	}
	return 0;
}

void
publish_close(struct publish *pb)
{
	size_t	 i;

	for (i = 0; i < pb->pb_n; i++) {
		if (pb->pb_ports[i].pp_l != NULL)
			evconnlistener_free(pb->pb_ports[i].pp_l);
		else if (pb->pb_ports[i].pp_fd != -1)
			close(pb->pb_ports[i].pp_fd);
	}
	free(pb->pb_ports);
	if (pb->pb_pair != -1)
		close(pb->pb_pair);
	memset(pb, 0, sizeof(*pb));
	pb->pb_pair = -1;
}
