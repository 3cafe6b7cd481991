/*
 * endpoint.c: where the bridge and the proxy listen and connect.
 *
 * An endpoint is "tcp:HOST:PORT" (HOST an address or a name looked up
 * once, at start, never on the event loop) or "unix:PATH".  A Unix socket
 * path longer than sun_path is refused, never truncated: a truncated path
 * is another file.  The socket file a listener makes is private to its
 * user (mode 0600), or a group's (--socket-mode and --socket-group,
 * endpoint_perms), and removed on exit; a stale one from a crashed run
 * is replaced only once a connection to it has been refused, so a live
 * listener is never stolen from.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/addr.h"
#include "lib/endpoint.h"
#include "lib/host.h"
#include "lib/log.h"
#include "lib/xmalloc.h"

/*
 * Parses text into ep (endpoint_clear frees it).  Returns 0, or -1 with
 * *cause set (caller frees).
 */
int
endpoint_parse(const char *text, struct endpoint *ep, char **cause)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)&ep->ep_addr;
	struct addrinfo		 hints, *res;
	const char		*rest, *portstr;
	size_t			 hostlen;
	char			*host;
	int			 port, rc;

	*cause = NULL;
	memset(ep, 0, sizeof(*ep));
	if (strncmp(text, "unix:", 5) == 0) {
		rest = text + 5;
		if (*rest == '\0') {
			xasprintf(cause, "%s: empty socket path", text);
			return -1;
		}
		if (strlen(rest) >= sizeof(sun->sun_path)) {
			xasprintf(cause, "%s: the path is %zu bytes, and a Unix "
			    "socket path may have at most %zu; use a shorter "
			    "one (under /tmp or $XDG_RUNTIME_DIR)", text,
			    strlen(rest), sizeof(sun->sun_path) - 1);
			return -1;
		}
		sun->sun_family = AF_UNIX;
		memcpy(sun->sun_path, rest, strlen(rest) + 1);
		ep->ep_family = AF_UNIX;
		ep->ep_len = (socklen_t)sizeof(*sun);
		ep->ep_path = xstrdup(rest);
		ep->ep_text = xstrdup(text);
		return 0;
	}
	if (strncmp(text, "tcp:", 4) != 0) {
		xasprintf(cause, "%s: an endpoint is tcp:HOST:PORT or "
		    "unix:PATH", text);
		return -1;
	}
	rest = text + 4;
	if (host_split(rest, &hostlen, &portstr, cause) == -1)
		return -1;
	if (portstr == NULL || (port = host_port(portstr)) == -1) {
		xasprintf(cause, "%s: a port from 1 to 65535 is needed", text);
		return -1;
	}
	if (hostlen >= 2 && rest[0] == '[')
		host = xstrndup(rest + 1, hostlen - 2);
	else
		host = xstrndup(rest, hostlen);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
	rc = getaddrinfo(host, portstr, &hints, &res);
	free(host);
	if (rc != 0) {
		xasprintf(cause, "%s: %s", text, gai_strerror(rc));
		return -1;
	}
	memcpy(&ep->ep_addr, res->ai_addr, res->ai_addrlen);
	ep->ep_len = res->ai_addrlen;
	ep->ep_family = res->ai_family;
	freeaddrinfo(res);
	ep->ep_text = xstrdup(text);
	return 0;
}

void
endpoint_clear(struct endpoint *ep)
{
	free(ep->ep_text);
	free(ep->ep_path);
	memset(ep, 0, sizeof(*ep));
}

/* Says whether a TCP endpoint is on a loopback address (Unix: true). */
bool
endpoint_is_loopback(const struct endpoint *ep)
{
	struct addr	 a;

	memset(&a, 0, sizeof(a));
	switch (ep->ep_family) {
	case AF_UNIX:
		return true;
	case AF_INET:
		a.a_family = AF_INET;
		memcpy(a.a_bytes, &((const struct sockaddr_in *)
		    &ep->ep_addr)->sin_addr, 4);
		return a.a_bytes[0] == 127;
	case AF_INET6:
		a.a_family = AF_INET6;
		memcpy(a.a_bytes, &((const struct sockaddr_in6 *)
		    &ep->ep_addr)->sin6_addr, 16);
		addr_unmap(&a);
		if (a.a_family == AF_INET)
			return a.a_bytes[0] == 127;
		return memcmp(a.a_bytes, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1",
		    16) == 0;
	}
	return false;
}

/*
 * Says whether a socket file at path has a listener, by connecting to
 * it; a refused connection means a stale file left by a crashed run.
 */
static bool
endpoint_alive(const struct endpoint *ep)
{
	int	 fd, rc;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return true;	/* cannot tell: do not replace it */
	rc = connect(fd, (const struct sockaddr *)&ep->ep_addr, ep->ep_len);
	close(fd);
	return rc == 0 || (errno != ECONNREFUSED && errno != ENOENT);
}

/*
 * Makes a listening, non-blocking socket for ep.  Returns it, or -1 with
 * *cause set.  A Unix socket file is made 0600; an existing path is
 * replaced only when it is a socket nobody listens on.
 */
int
endpoint_listen(struct endpoint *ep, int backlog, char **cause)
{
	struct stat	 st;
	mode_t		 mask;
	int		 fd, one = 1, rc;

	*cause = NULL;
	if (ep->ep_family == AF_UNIX && lstat(ep->ep_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			xasprintf(cause, "%s: exists and is not a socket; "
			    "refusing to replace it", ep->ep_text);
			return -1;
		}
		if (endpoint_alive(ep)) {
			xasprintf(cause, "%s: another process is listening "
			    "there", ep->ep_text);
			return -1;
		}
		if (unlink(ep->ep_path) == -1) {
			xasprintf(cause, "%s: removing the stale socket: %s",
			    ep->ep_text, strerror(errno));
			return -1;
		}
	}
	if ((fd = socket(ep->ep_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1) {
		xasprintf(cause, "%s: socket: %s", ep->ep_text,
		    strerror(errno));
		return -1;
	}
	if (ep->ep_family != AF_UNIX)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ep->ep_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));

	/* The file gets its mode from the umask at bind time. */
	mask = umask(0177);
	rc = bind(fd, (struct sockaddr *)&ep->ep_addr, ep->ep_len);
	umask(mask);
	if (rc == -1) {
		xasprintf(cause, "%s: bind: %s", ep->ep_text, strerror(errno));
		close(fd);
		return -1;
	}
	if (ep->ep_family == AF_UNIX)
		ep->ep_bound = true;
	if (listen(fd, backlog) == -1) {
		xasprintf(cause, "%s: listen: %s", ep->ep_text,
		    strerror(errno));
		close(fd);
		endpoint_unlink(ep);
		return -1;
	}
	return fd;
}

/*
 * Turns Nagle's algorithm off on a TCP socket; on another kind the call
 * fails, and nothing changes.  A relay passes small writes on as they
 * come (a CONNECT answer, each TLS flight): with Nagle on, a small write
 * that follows one not yet acknowledged waits for the peer's delayed
 * ACK, about 40 ms on Linux, at the start of every new connection.
 */
void
endpoint_nodelay(int fd)
{
	int	 one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/*
 * Starts a non-blocking connection to ep.  Returns the socket (the
 * connection may still be in progress: wait for it to be writable and
 * read SO_ERROR), or -1 with the errno value in *error.
 */
int
endpoint_connect(const struct endpoint *ep, int *error)
{
	int	 fd;

	if ((fd = socket(ep->ep_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1) {
		*error = errno;
		return -1;
	}
	if (ep->ep_family != AF_UNIX)
		endpoint_nodelay(fd);
	if (connect(fd, (const struct sockaddr *)&ep->ep_addr, ep->ep_len) ==
	    -1 && errno != EINPROGRESS) {
		*error = errno;
		close(fd);
		return -1;
	}
	return fd;
}

/* Removes the socket file a listener made, once. */
void
endpoint_unlink(struct endpoint *ep)
{
	if (ep->ep_family == AF_UNIX && ep->ep_bound) {
		unlink(ep->ep_path);
		ep->ep_bound = false;
	}
}

/*
 * --socket-mode of who ("proxy", "bridge"): octal permission bits for a
 * Unix listener.  Others may not write (connect) unless remote: anyone
 * on the host could use it.  Returns 0, or -1 having said why.
 */
int
endpoint_mode(const char *who, const char *text, bool remote, mode_t *mode)
{
	char	*end;
	long	 n;

	n = strtol(text, &end, 8);
	if (*text == '\0' || *end != '\0' || n < 0 || n > 0777) {
		log_warnx("%s: --socket-mode: \"%s\" is not an octal mode "
		    "from 0 to 0777", who, text);
		return -1;
	}
	if ((n & 0002) && !remote) {
		log_warnx("%s: --socket-mode %s lets every user on this "
		    "host use the %s", who, text, who);
		log_warnx("hint: give a group access with --socket-group "
		    "GROUP --socket-mode 0660, or pass --allow-non-loopback "
		    "if that is what you mean");
		return -1;
	}
	*mode = (mode_t)n;
	return 0;
}

/*
 * --socket-group of who: a group name or number.  Returns 0, or -1
 * having said why.
 */
int
endpoint_group(const char *who, const char *text, gid_t *gid)
{
	struct group	*gr;
	char		*end;
	long		 n;

	errno = 0;
	if ((gr = getgrnam(text)) != NULL) {
		*gid = gr->gr_gid;
		return 0;
	}
	n = strtol(text, &end, 10);
	if (*text != '\0' && *end == '\0' && n >= 0 && n < 0x7fffffff) {
		*gid = (gid_t)n;
		return 0;
	}
	log_warnx("%s: --socket-group: no group \"%s\"", who, text);
	log_warnx("hint: name a group of this system (getent group lists "
	    "them) or its number; groupadd %s makes one, and usermod -aG "
	    "%s USER puts a user in it", text, text);
	return -1;
}

/*
 * Gives a Unix listener its mode and group (either -1 to leave it), so
 * that the users of a group can connect (connecting needs write
 * permission on the socket file); fatal on an error.
 */
void
endpoint_perms(const struct endpoint *ep, const char *who, mode_t mode,
    gid_t gid)
{
	if (ep->ep_family != AF_UNIX)
		return;
	if (gid != (gid_t)-1 && lchown(ep->ep_path, (uid_t)-1, gid) == -1)
		fatal("%s: --socket-group: chown %s", who, ep->ep_text);
	if (mode != (mode_t)-1 && chmod(ep->ep_path, mode) == -1)
		fatal("%s: --socket-mode: chmod %s", who, ep->ep_text);
}
