/*
 * policy_parse.c: the text of one rule made canonical, as the loader
 * (policy_load.c), the flags (policy_flag.c) and the runner read it: a
 * host pattern, a path, a host port, a Unix socket, an HTTP token.
 * Each returns 0, or -1 with *cause saying what is wrong.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/addr.h"
#include "lib/host.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"

#define MAX_PATTERN	300

/*
 * A URL where a host pattern goes ("https://registry.npmjs.org/"): the
 * cause names the host to write instead, with the URL's port if it
 * has one.  Returns -1 for a URL, else 0.
 */
static int
policy_parse_url(const char *text, char **cause)
{
	const char	*p, *at;
	char		*host;
	size_t		 n;

	if ((p = strstr(text, "://")) == NULL)
		return 0;
	p += 3;
	n = strcspn(p, "/?#");
	/* user:password@ before the host is the userinfo: skipped. */
	if ((at = memchr(p, '@', n)) != NULL) {
		n -= (size_t)(at + 1 - p);
		p = at + 1;
	}
	host = str_escape(p, n);
	if (*host != '\0')
		xasprintf(cause, "a host name, not a URL: write \"%s\"", host);
	else
		xasprintf(cause, "a host name, not a URL: write the host "
		    "alone, as in \"registry.npmjs.org\"");
	free(host);
	return -1;
}

/*
 * Parses a host pattern: NAME, *.SUFFIX or an IP literal ([v6] for IPv6
 * with a port), then an optional :PORT or :*.  Fills it (pi_text is the
 * canonical form).  Returns 0, or -1 with *cause set.
 */
int
policy_parse_pattern(const char *text, struct pitem *it, char **cause)
{
	const char	*host = text, *port;
	size_t		 hostlen = strlen(text);
	bool		 suffix = false, v6;
	struct host	 h;
	char		*shown, portbuf[8] = "";

	*cause = NULL;
	if (policy_parse_url(text, cause) == -1)
		return -1;
	if (hostlen > MAX_PATTERN) {
		xasprintf(cause, "longer than %d bytes", MAX_PATTERN);
		return -1;
	}
	if (host_split(text, &hostlen, &port, cause) == -1)
		return -1;
	if (hostlen == 1 && host[0] == '*') {
		xasprintf(cause, "\"*\" alone would allow every host; list the "
		    "hosts (\"*.example.com\"), or set network.mode to "
		    "\"host\" for no filtering");
		return -1;
	}
	if (hostlen >= 2 && host[0] == '*' && host[1] == '.') {
		suffix = true;
		host += 2;
		hostlen -= 2;
	}
	if (memchr(host, '*', hostlen) != NULL) {
		xasprintf(cause, "'*' may only stand as the whole first label, "
		    "as in \"*.example.com\"");
		return -1;
	}
	if (host_parse(host, hostlen, &h, cause) == -1)
		return -1;
	if (suffix && h.h_kind == HOST_ADDR) {
		xasprintf(cause, "\"*.\" cannot go before an IP address");
		return -1;
	}

	it->pi_port = PORT_UNSET;
	if (port != NULL && strcmp(port, "*") == 0)
		it->pi_port = PORT_ANY;
	else if (port != NULL && (it->pi_port = host_port(port)) == -1) {
		shown = str_escape(port, strlen(port));
		xasprintf(cause, "bad port \"%s\" (1 to 65535, or * for any)",
		    shown);
		free(shown);
		return -1;
	}

	it->pi_kind = h.h_kind == HOST_ADDR ? PAT_ADDR :
	    suffix ? PAT_SUFFIX : PAT_NAME;
	it->pi_addr = h.h_ip;
	free(it->pi_host);
	it->pi_host = xstrdup(h.h_name);
	if (it->pi_port == PORT_ANY)
		snprintf(portbuf, sizeof(portbuf), ":*");
	else if (it->pi_port != PORT_UNSET)
		snprintf(portbuf, sizeof(portbuf), ":%d", it->pi_port);
	v6 = h.h_ip.a_family == AF_INET6;
	free(it->pi_text);
	xasprintf(&it->pi_text, "%s%s%s%s%s", suffix ? "*." : "",
	    v6 ? "[" : "", h.h_name, v6 ? "]" : "", portbuf);
	return 0;
}

/*
 * Resolves a path lexically: "~" and "~/..." against the home folder,
 * relative paths against the workspace; "." and ".." and repeated '/' are
 * folded.  A final '/' says the path is a folder (pi_dir): what blocks a
 * missing one is a folder, not a file.  Symbolic links are not followed here: the runner opens every
 * path itself, without following them where it matters.  Fills
 * it->pi_text.  Returns 0, or -1 with *cause set.
 */
int
policy_parse_path(const char *text, const struct policy_ctx *ctx,
    struct pitem *it, char **cause)
{
	char		*joined, *out, *seg, *save;
	size_t		 len;

	*cause = NULL;
	if (text[0] == '\0') {
		xasprintf(cause, "empty path");
		return -1;
	}
	if (strlen(text) >= PATH_MAX) {
		xasprintf(cause, "longer than %d bytes", PATH_MAX - 1);
		return -1;
	}
	if (text[0] == '~' && text[1] != '\0' && text[1] != '/') {
		xasprintf(cause, "\"~user\" paths are not supported; write "
		    "the path out");
		return -1;
	}
	if (text[0] == '~')
		xasprintf(&joined, "%s/%s", ctx->pc_home, text + 1);
	else if (text[0] != '/')
		xasprintf(&joined, "%s/%s", ctx->pc_workspace, text);
	else
		joined = xstrdup(text);

	out = xcalloc(1, strlen(joined) + 2);
	len = 0;
	for (seg = strtok_r(joined, "/", &save); seg != NULL;
	    seg = strtok_r(NULL, "/", &save)) {
		if (strcmp(seg, ".") == 0)
			continue;
		if (strcmp(seg, "..") == 0) {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
			out[len] = '\0';
			continue;
		}
		out[len++] = '/';
		memcpy(out + len, seg, strlen(seg));
		len += strlen(seg);
		out[len] = '\0';
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	free(joined);
	if (len >= PATH_MAX) {
		free(out);
		xasprintf(cause, "longer than %d bytes once resolved",
		    PATH_MAX - 1);
		return -1;
	}
	free(it->pi_text);
	it->pi_text = out;
	it->pi_dir = strcmp(out, "/") != 0 && text[strlen(text) - 1] == '/';
	return 0;
}

/*
 * "localhost:PORT" or "localhost:FIRST-LAST": ports of the host's own
 * loopback the sandbox may reach (through the proxy).  Returns 0, or -1
 * with *cause set.
 */
int
policy_parse_host_port(const char *text, struct pitem *it, char **cause)
{
	const char	*p;
	char		*end;
	long		 lo, hi;

	*cause = NULL;
	if (strncmp(text, "localhost:", 10) != 0) {
		xasprintf(cause, "not \"localhost:PORT\" or "
		    "\"localhost:FIRST-LAST\": only the host's loopback has "
		    "ports to open here; another host goes in network.allow");
		return -1;
	}
	p = text + 10;
	lo = strtol(p, &end, 10);
	hi = lo;
	if (end != p && *end == '-' && end[1] != '\0')
		hi = strtol(end + 1, &end, 10);
	if (end == p || *end != '\0' || !(*p >= '0' && *p <= '9') ||
	    lo < 1 || hi > 65535 || hi < lo) {
		xasprintf(cause, "bad port or range (1-65535, first to last)");
		return -1;
	}
	it->pi_port = (int)lo;
	it->pi_port_hi = (int)hi;
	if (lo == hi)
		xasprintf(&it->pi_text, "localhost:%ld", lo);
	else
		xasprintf(&it->pi_text, "localhost:%ld-%ld", lo, hi);
	return 0;
}

/*
 * A host Unix socket the sandbox may connect to (filesystem.unix_sockets):
 * an absolute or "~/" path, made canonical as policy_parse_path does,
 * short enough for sun_path.  A relative path is refused: it would be
 * the workspace's, which the command can rewrite.  Returns 0, or -1 with
 * *cause set.
 */
int
policy_parse_socket(const char *text, const struct policy_ctx *ctx,
    struct pitem *it, char **cause)
{
	struct sockaddr_un	 sun;

	*cause = NULL;
	if (text[0] != '/' && text[0] != '~') {
		xasprintf(cause, "a socket is named by an absolute path, or "
		    "one from \"~/\": a relative path would be in the "
		    "workspace, which the command can rewrite");
		return -1;
	}
	if (policy_parse_path(text, ctx, it, cause) == -1)
		return -1;
	if (strcmp(it->pi_text, "/") == 0 || it->pi_dir) {
		xasprintf(cause, "a socket, not a folder");
		return -1;
	}
	if (strlen(it->pi_text) >= sizeof(sun.sun_path)) {
		xasprintf(cause, "longer than a Unix socket's path may be "
		    "(%zu bytes)", sizeof(sun.sun_path) - 1);
		return -1;
	}
	return 0;
}

/*
 * What a listed socket gives away, when it is well known to give the
 * whole host: a container engine's socket starts a container for
 * whoever asks, as the engine's user.  Who that is, the socket's owner
 * says: root's engine (or one not there to ask) is root on the host, a
 * rootless one is its user's whole account, no more.  Returns a
 * sentence, or NULL.
 */
const char *
policy_parse_socket_risk(const char *path)
{
	static const char *const engines[][2] = {
		{ "docker.sock", "Docker" },
		{ "podman.sock", "Podman" },
		{ "containerd.sock", "containerd" }
	};
	static char	 buf[200];
	struct passwd	*pw;
	struct stat	 st;
	const char	*base;
	size_t		 i;
	bool		 there;

	base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
	for (i = 0; i < nitems(engines); i++) {
		if (strcmp(base, engines[i][0]) != 0)
			continue;
		there = stat(path, &st) == 0;
		if (!there || st.st_uid == 0)
			snprintf(buf, sizeof(buf), "%s's socket: whoever "
			    "connects to it is root on the host (a privileged "
			    "container mounting /)%s", engines[i][1],
			    there ? "" : ", when its engine runs as root");
		else if ((pw = getpwuid(st.st_uid)) != NULL)
			snprintf(buf, sizeof(buf), "%s's socket, rootless (of "
			    "%s): whoever connects to it is %s on the host "
			    "(a container mounting their files)",
			    engines[i][1], pw->pw_name, pw->pw_name);
		else
			snprintf(buf, sizeof(buf), "%s's socket, rootless (of "
			    "uid %u): whoever connects to it is that user on "
			    "the host (a container mounting their files)",
			    engines[i][1], (unsigned int)st.st_uid);
		return buf;
	}
	return NULL;
}

/* Says whether s is an RFC 9110 token (tchar, 1 to 64 bytes). */
bool
policy_parse_http_token(const char *s)
{
	size_t	 n = strlen(s);

	return n <= 64 && str_is_token(s, n);
}
