/*
 * publish_inside.c: --publish inside the sandbox, run by PID 1: each
 * connection cordon run accepted on the host's 127.0.0.1:PORT (publish.c)
 * comes over a socket pair and is relayed to 127.0.0.1:PORT inside.
 *
 * Runs in: the sandbox's PID 1, on its event loop.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/fdpass.h"
#include "lib/log.h"
#include "lib/relay.h"
#include "sandbox/sandbox.h"

/* PID 1: a relay has ended. */
static void
publish_done_cb(struct relay *r, const char *why, void *arg)
{
	(void)arg;
	if (why != NULL)
		log_debug("%s: %s", __func__, why);
	relay_free(r);
}

/*
 * PID 1: receives one connection from outside and relays it to its
 * port on the sandbox's 127.0.0.1; one nothing listens on is closed (the
 * client outside sees its connection end).
 */
static void
publish_inside_cb(evutil_socket_t pair, short what, void *arg)
{
	struct event_base	*base = arg;
	struct sockaddr_in	 sin;
	struct relay		*r;
	uint16_t		 port;
	int			 fd = -1, up;

	(void)what;
	if (fdpass_recv(pair, &fd, &port, sizeof(port), MSG_DONTWAIT) !=
	    (ssize_t)sizeof(port) || fd == -1) {
		if (fd != -1)
			close(fd);
		return;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* The loopback answers at once: a blocking connect is brief. */
	if ((up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(up, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    evutil_make_socket_nonblocking(up) == -1 ||
	    evutil_make_socket_nonblocking(fd) == -1 ||
	    (r = relay_new(base, fd, up, publish_done_cb, NULL)) == NULL) {
		log_debug("%s: 127.0.0.1:%u inside: %s", __func__, port,
		    strerror(errno));
		if (up != -1)
			close(up);
		close(fd);
		return;
	}
	if (relay_start(r) == -1)
		relay_free(r);
}

/* PID 1: takes the connections cordon run hands over on pair. */
int
publish_inside(struct event_base *base, int pair)
{
	struct event	*ev;

	if (pair == -1)
		return 0;
	if ((ev = event_new(base, pair, EV_READ | EV_PERSIST,
	    publish_inside_cb, base)) == NULL || event_add(ev, NULL) == -1)
		return -1;
	return 0;
}
