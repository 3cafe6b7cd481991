/*
 * agent_usable.c: whether the user's ssh-agent answers, asked when the
 * run is planned (run_plan.c), before cordon's own agent (agent.c) is
 * made: a connect, nothing more, so that a run without the proxy asks
 * it without linking the agent.
 *
 * Runs in: cordon run on the host, before the clone.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "lib/xmalloc.h"

/*
 * Whether path names an agent: a socket that takes a connection now.
 * Called before the loop runs; false with *cause set.
 */
bool
agent_usable(const char *path, char **cause)
{
	struct sockaddr_un	 sun;
	int			 fd;
	bool			 ok;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (path == NULL || path[0] != '/' ||
	    strlen(path) >= sizeof(sun.sun_path)) {
		xasprintf(cause, "SSH_AUTH_SOCK is %s", path == NULL ?
		    "not set" : "not an absolute path that fits a socket");
		return false;
	}
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		xasprintf(cause, "socket: %s", strerror(errno));
		return false;
	}
	ok = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	if (!ok)
		xasprintf(cause, "SSH_AUTH_SOCK %s: %s", path,
		    strerror(errno));
	close(fd);
	return ok;
}
