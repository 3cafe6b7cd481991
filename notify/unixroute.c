/*
 * unixroute.c: the host Unix sockets a sandbox may connect to, each a
 * path inside (what the command passes to connect(2)) and the socket on
 * the host that cordon run connects for it (notify.c).  The policy's
 * filesystem.unix_sockets gives routes whose two paths are the same; a
 * part of cordon may add one of its own, such as a socket in its private
 * folder answered at a path under /run/cordon.
 *
 * The host side is resolved once, before the run.  In a folder the
 * command can write, it could remove the socket and leave a symlink to
 * another one, which a connect made outside by path would follow: such
 * a socket is pinned when the run starts (unixroute_pin), and connected
 * through its descriptor.
 *
 * Runs in: cordon run on the host: made before the clone, read by
 *   the connect thread.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "notify/unixroute.h"
#include "policies/policy.h"

/*
 * The host path of a socket, resolved: the whole path if it exists, else
 * its folder (the socket may come later).  Returns a new string, or NULL
 * with *cause set.
 */
static char *
unixroute_resolve(const char *host, char **cause)
{
	char	*real, *dir, *slash, *out;

	if ((real = realpath(host, NULL)) != NULL)
		return real;
	if (errno != ENOENT) {
		xasprintf(cause, "%s: %s", host, strerror(errno));
		return NULL;
	}
	dir = xstrdup(host);
	slash = strrchr(dir, '/');
	*slash = '\0';
	if ((real = realpath(dir[0] != '\0' ? dir : "/", NULL)) == NULL) {
		xasprintf(cause, "%s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	xasprintf(&out, "%s/%s", strcmp(real, "/") == 0 ? "" : real,
	    slash + 1);
	free(real);
	free(dir);
	return out;
}

/*
 * Adds a route: connect(2) to inside, in the sandbox, connects to host,
 * resolved now.  from says who asked ("FILE: filesystem.unix_sockets[0]").
 * Both paths are absolute.  The same route twice is one, named by the
 * first (a list entry repeated by another layer adds nothing, as in every
 * list); one inside path to two host sockets is refused, as no rule says
 * which one a connect should reach.  Returns 0, or -1 with *cause set.
 */
int
unixroute_add(struct unix_routes *ur, const char *inside, const char *host,
    const char *from, char **cause)
{
	struct sockaddr_un	 sun;
	const struct unix_route	*old;
	struct unix_route	*r;
	char			*real;

	*cause = NULL;
	if (inside[0] != '/' || host[0] != '/' ||
	    strlen(inside) >= sizeof(sun.sun_path)) {
		xasprintf(cause, "%s: not an absolute path that fits a Unix "
		    "socket's address", inside);
		return -1;
	}
	if ((real = unixroute_resolve(host, cause)) == NULL)
		return -1;
	if (strlen(real) >= sizeof(sun.sun_path)) {
		xasprintf(cause, "%s: resolved to %s, longer than a Unix "
		    "socket's address may be", host, real);
		free(real);
		return -1;
	}
	if ((old = unixroute_find(ur, inside, strlen(inside))) != NULL) {
		if (strcmp(old->ur_host, real) != 0)
			xasprintf(cause, "%s: the Unix socket %s (%s) and "
			    "%s (%s) would both answer there\nhint: drop "
			    "\"%s\" (%s): a path inside reaches one socket",
			    inside, old->ur_host, old->ur_from, real, from,
			    inside, old->ur_from);
		free(real);
		return *cause != NULL ? -1 : 0;
	}
	ur->ur_v = xreallocarray(ur->ur_v, ur->ur_n + 1, sizeof(*ur->ur_v));
	r = &ur->ur_v[ur->ur_n++];
	r->ur_inside = xstrdup(inside);
	r->ur_host = real;
	r->ur_from = xstrdup(from);
	r->ur_pin = -1;
	return 0;
}

/*
 * A listed socket in a folder the command can write (dir), where the
 * command could put a link to another socket in its place: the socket
 * there now is pinned (O_PATH), and the command's connect goes to that
 * one alone, whatever the path holds later.  One not there yet cannot
 * be.  Returns 0, or -1 with *cause set.
 */
static int
unixroute_pin(struct unix_route *r, const struct pitem *it, const char *dir,
    char **cause)
{
	struct stat	 st;

	r->ur_pin = open(r->ur_host, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (r->ur_pin != -1 && fstat(r->ur_pin, &st) == 0 &&
	    S_ISSOCK(st.st_mode))
		return 0;
	xasprintf(cause, "filesystem.unix_sockets: %s (%s) is in %s, which "
	    "the command can write, and %s: a socket there is taken as it "
	    "is when the run starts; start its server first, or move the "
	    "socket out of the writable folders", it->pi_text, it->pi_from,
	    dir, r->ur_pin == -1 ? strerror(errno) : "not a socket");
	return -1;
}

/*
 * The routes of filesystem.unix_sockets, checked against the plan's
 * writable folders.  A socket that is not there yet is said, not
 * refused (a daemon may start later).  Returns 0, or -1 with *cause set.
 */
int
unixroute_policy(struct unix_routes *ur, const struct policy *p,
    const struct fsplan *plan, char **cause)
{
	const struct pitem	*it;
	struct unix_route	*r;
	const struct fs_op	*op;
	struct stat		 st;
	size_t			 i, j;

	for (i = 0; i < p->p_sockets.pl_n; i++) {
		it = &p->p_sockets.pl_v[i];
		/* Listed before (by another layer): checked as it was. */
		if (unixroute_find(ur, it->pi_text, strlen(it->pi_text)) !=
		    NULL)
			continue;
		if (unixroute_add(ur, it->pi_text, it->pi_text, it->pi_from,
		    cause) == -1)
			return -1;
		r = &ur->ur_v[ur->ur_n - 1];
		for (j = 0; j < plan->fp_nops && r->ur_pin == -1; j++) {
			op = &plan->fp_ops[j];
			if (op->fo_kind != FS_RW ||
			    !path_is_below(r->ur_host, op->fo_path))
				continue;
			if (unixroute_pin(r, it, op->fo_path, cause) == -1)
				return -1;
		}
		if (stat(r->ur_host, &st) == -1)
			log_warnx("run: filesystem.unix_sockets: %s: %s; the "
			    "command's connect(2) to it fails until a "
			    "socket is there", it->pi_text, strerror(errno));
		else if (!S_ISSOCK(st.st_mode)) {
			xasprintf(cause, "filesystem.unix_sockets: %s (%s) is "
			    "not a socket; drop it from the policy",
			    it->pi_text, it->pi_from);
			return -1;
		}
	}
	return 0;
}

/* The route whose inside path is the len bytes of path, or NULL. */
const struct unix_route *
unixroute_find(const struct unix_routes *ur, const char *path, size_t len)
{
	size_t	 i;

	for (i = 0; i < ur->ur_n; i++)
		if (strlen(ur->ur_v[i].ur_inside) == len &&
		    memcmp(ur->ur_v[i].ur_inside, path, len) == 0)
			return &ur->ur_v[i];
	return NULL;
}

/* --dry-run: each route, and what a container engine's socket means. */
void
unixroute_print(const struct unix_routes *ur, FILE *f)
{
	const struct unix_route	*r;
	const char		*risk;
	size_t			 i;

	if (ur->ur_n == 0)
		return;
	fprintf(f, "unix sockets: connect(2) of the sandbox is made by "
	    "cordon run, outside, to these alone (others: EACCES, and "
	    "logged):\n");
	for (i = 0; i < ur->ur_n; i++) {
		r = &ur->ur_v[i];
		if (strcmp(r->ur_inside, r->ur_host) == 0)
			fprintf(f, "  %s (%s)\n", r->ur_inside, r->ur_from);
		else
			fprintf(f, "  %s: the host's %s (%s)\n", r->ur_inside,
			    r->ur_host, r->ur_from);
		if ((risk = policy_parse_socket_risk(r->ur_host)) != NULL)
			fprintf(f, "    warning: %s\n", risk);
	}
}

void
unixroute_clear(struct unix_routes *ur)
{
	size_t	 i;

	for (i = 0; i < ur->ur_n; i++) {
		free(ur->ur_v[i].ur_inside);
		free(ur->ur_v[i].ur_host);
		free(ur->ur_v[i].ur_from);
		if (ur->ur_v[i].ur_pin != -1)
			close(ur->ur_v[i].ur_pin);
	}
	free(ur->ur_v);
	ur->ur_v = NULL;
	ur->ur_n = 0;
}
