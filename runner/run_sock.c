/*
 * run_sock.c: the run's private folder (0700) and the Unix socket in it
 * that the sandbox's PID 1 reaches, made before the clone and removed at
 * the end.  The run's own proxy listens on it (run.c), and so does the
 * relay to a remote tier (run_remote.c); only PID 1 can reach the folder,
 * through a descriptor of it, so that the command cannot.
 *
 * Runs in: cordon run on the host, before the clone and at the end.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/endpoint.h"
#include "lib/xmalloc.h"
#include "runner/run_host.h"

/*
 * The socket the sandbox reaches (rn_ep), in a private folder (rn_dir,
 * 0700), listening.  Returns it, or -1 with *cause set.
 */
int
run_sock_open(struct runner *rn, char **cause)
{
	const char	*base;
	char		*text;
	int		 fd;

	base = getenv("XDG_RUNTIME_DIR");
	if (base == NULL || base[0] != '/' || access(base, W_OK | X_OK) == -1 ||
	    strlen(base) > 64)
		base = "/tmp";
	xasprintf(&rn->rn_dir, "%s/cordon-XXXXXX", base);
	if (mkdtemp(rn->rn_dir) == NULL) {
		xasprintf(cause, "making %s: %s", rn->rn_dir, strerror(errno));
		free(rn->rn_dir);
		rn->rn_dir = NULL;
		return -1;
	}
	xasprintf(&text, "unix:%s/proxy.sock", rn->rn_dir);
	fd = endpoint_parse(text, &rn->rn_ep, cause);
	free(text);
	if (fd == -1)
		return -1;
	return endpoint_listen(&rn->rn_ep, SOMAXCONN, cause);
}

/* The socket and its folder gone, whether or not they were made. */
void
run_sock_close(struct runner *rn)
{
	if (rn->rn_dir != NULL) {
		endpoint_unlink(&rn->rn_ep);
		rmdir(rn->rn_dir);
		free(rn->rn_dir);
		rn->rn_dir = NULL;
	}
	endpoint_clear(&rn->rn_ep);
}
