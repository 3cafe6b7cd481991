/*
 * giturl.c: a URL or path in a git config (a remote's url or pushurl,
 * a submodule's url, a branch's remote named by URL), judged by where
 * the host's git would go with it.
 *
 * The command chooses these, and the host's git, not the sandbox, uses
 * them: the user's git push, or the git fetch an editor runs by itself,
 * goes there from the host, with the user's credentials and none of
 * the proxy's rules.  So a URL is read the way git reads it
 * (transport.c, connect.c: "helper::address", "scheme://", scp-like
 * "host:path", else a local path) and held when it names a remote
 * helper (git-remote-NAME, a program), an address of the host itself
 * or of its networks (loopback, private, link-local...: lib/addr.c), a
 * name the host's own /etc/hosts gives such an address, or a local
 * path outside the folders the command could write or was shown.
 * Names are not looked up: what DNS says now need not be what it says
 * when the user fetches (docs/threat-model.md says so).
 */
#include <sys/types.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "git/git.h"
#include "lib/addr.h"
#include "lib/host.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

/* git's is_urlschemechar(). */
static bool
giturl_schemechar(bool first, int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (!first && ((c >= '0' && c <= '9') || c == '+' || c == '.' ||
	    c == '-'));
}

/* The length of the scheme url begins with ("helper" in helper::), or 0. */
static size_t
giturl_scheme(const char *url)
{
	size_t	 n = 0;

	while (giturl_schemechar(n == 0, (unsigned char)url[n]))
		n++;
	return n;
}

/*
 * path, absolute or relative to top, as one absolute path without ".",
 * ".." or repeated '/' (the text only: no link followed).  Returns it,
 * or NULL when path is relative and top is NULL.
 */
char *
giturl_join(const char *top, const char *path)
{
	char	*raw, *out, *p, *next;
	size_t	 n = 0;

	if (*path == '/')
		raw = xstrdup(path);
	else if (top == NULL)
		return NULL;
	else
		xasprintf(&raw, "%s/%s", top, path);
	out = xmalloc(strlen(raw) + 2);
	for (p = raw; p != NULL; p = next) {
		if ((next = strchr(p, '/')) != NULL)
			*next++ = '\0';
		if (*p == '\0' || strcmp(p, ".") == 0)
			continue;
		if (strcmp(p, "..") == 0) {
			while (n > 0 && out[--n] != '/')
				;
			continue;
		}
		out[n++] = '/';
		memcpy(out + n, p, strlen(p));
		n += strlen(p);
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	free(raw);
	return out;
}

/*
 * path (absolute) as the kernel resolves it now: the longest part of it
 * that exists, its links followed, and the rest as written.
 */
static char *
giturl_real(const char *path)
{
	char	 buf[PATH_MAX], *cut, *real, *rest;

	if (strlen(path) >= sizeof(buf))
		return NULL;
	memcpy(buf, path, strlen(path) + 1);
	while ((real = realpath(buf, NULL)) == NULL) {
		if ((cut = strrchr(buf, '/')) == NULL || cut == buf)
			return xstrdup(path);
		*cut = '\0';
	}
	xasprintf(&rest, "%s%s", real, path + strlen(buf));
	free(real);
	real = giturl_join(NULL, rest);
	free(rest);
	return real;
}

/*
 * Is path (absolute) below one of roots, both as written and as the
 * kernel resolves it now?  *why set when not.
 */
bool
giturl_path_in(const char *path, const char *const *roots, size_t n,
    char **why)
{
	char	*lex, *real, *e;
	size_t	 i;
	bool	 a = false, b = false;

	lex = giturl_join(NULL, path);
	real = giturl_real(lex);
	for (i = 0; i < n; i++) {
		a |= path_is_below(lex, roots[i]);
		b |= real != NULL && path_is_below(real, roots[i]);
	}
	if (!a || !b) {
		e = str_escape(path, strlen(path));
		xasprintf(why, "%s%s lies outside the folders the command "
		    "could write", e, a ? " (through a link)" : "");
		free(e);
	}
	free(lex);
	free(real);
	return a && b;
}

/*
 * Does /etc/hosts give the name h an address of the host or its
 * networks?  Returns what it is, or NULL.
 */
static const char *
giturl_hosts(const struct host *h)
{
	FILE		*f;
	struct host	 a;
	char		 line[1024], *save, *w, *cause;
	const char	*what = NULL;

	if ((f = fopen("/etc/hosts", "re")) == NULL)
		return NULL;
	while (what == NULL && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "#\n")] = '\0';
		if ((w = strtok_r(line, " \t", &save)) == NULL)
			continue;
		cause = NULL;
		if (host_parse(w, strlen(w), &a, &cause) == -1 ||
		    a.h_kind != HOST_ADDR) {
			free(cause);
			continue;
		}
		while (what == NULL && (w = strtok_r(NULL, " \t", &save)) !=
		    NULL)
			if (strcasecmp(w, h->h_name) == 0)
				what = host_is_loopback(&a) ? "loopback" :
				    addr_special(&a.h_ip);
	}
	fclose(f);
	return what;
}

/*
 * The host of a network URL (len bytes at s, brackets and all), judged.
 * Returns GITCFG_INERT, or GITCFG_DEST with *why set.
 */
static enum gitcfg_class
giturl_host(const char *s, size_t len, char **why)
{
	struct host	 h;
	const char	*what = NULL;
	char		*cause = NULL, *e;

	if (host_parse(s, len, &h, &cause) == -1) {
		e = str_escape(s, len);
		xasprintf(why, "its host %s is one cordon does not read (%s)",
		    e, cause);
		free(e);
		free(cause);
		return GITCFG_DEST;
	}
	if (host_is_loopback(&h) || (h.h_kind == HOST_NAME &&
	    host_in_suffix(h.h_name, "localhost")))
		what = "loopback";
	else if (h.h_kind == HOST_ADDR)
		what = addr_special(&h.h_ip);
	else
		what = giturl_hosts(&h);
	if (what == NULL)
		return GITCFG_INERT;
	xasprintf(why, "its host %s is a %s address: git on the host would "
	    "reach what the sandbox cannot (the host's own services, its "
	    "networks)", h.h_name, what);
	return GITCFG_DEST;
}

/*
 * The authority of "scheme://AUTH/...": the host in it, without user
 * and port, judged.
 */
static enum gitcfg_class
giturl_authority(const char *auth, char **why)
{
	const char	*end, *at, *h, *colon;

	end = auth + strcspn(auth, "/?#");
	for (h = auth; (at = memchr(h, '@', (size_t)(end - h))) != NULL;)
		h = at + 1;
	if (*h == '[') {
		if ((colon = memchr(h, ']', (size_t)(end - h))) == NULL)
			return giturl_host(h, (size_t)(end - h), why);
		return giturl_host(h, (size_t)(colon + 1 - h), why);
	}
	if ((colon = memchr(h, ':', (size_t)(end - h))) != NULL)
		end = colon;
	return giturl_host(h, (size_t)(end - h), why);
}

/* A local path (relative to top), judged against the places. */
static enum gitcfg_class
giturl_local(const char *path, const char *top,
    const struct gitcfg_places *pl, char **why)
{
	const char	**roots;
	char		 *abs, *w = NULL;
	size_t		  n = 0;
	bool		  in;

	if ((abs = giturl_join(top, path)) == NULL) {
		xasprintf(why, "a relative path, read from a folder "
		    "cordon does not know");
		return GITCFG_DEST;
	}
	if (pl != NULL) {
		n = pl->gp_nwrite + pl->gp_nshow;
		roots = xcalloc(n + 1, sizeof(*roots));
		if (pl->gp_nwrite > 0)
			memcpy(roots, pl->gp_write, pl->gp_nwrite *
			    sizeof(*roots));
		if (pl->gp_nshow > 0)
			memcpy(roots + pl->gp_nwrite, pl->gp_show,
			    pl->gp_nshow * sizeof(*roots));
	} else
		roots = xcalloc(1, sizeof(*roots));
	in = giturl_path_in(abs, roots, n, &w);
	free(roots);
	free(abs);
	if (in)
		return GITCFG_INERT;
	xasprintf(why, "a local path neither writable nor shown to the "
	    "command (--write, --read-only): %s", w);
	free(w);
	return GITCFG_DEST;
}

/*
 * Judges url as the host's git would reach it; a relative path is read
 * from top (NULL: unknown).  Returns GITCFG_INERT (a name or a public
 * address on the network, or a local path in the places), GITCFG_RUNS
 * (a remote helper: a program), or GITCFG_DEST (the host itself, its
 * networks, a path outside the places, or what cannot be read), with
 * *why set for the last two.
 */
enum gitcfg_class
giturl_judge(const char *url, const char *top,
    const struct gitcfg_places *pl, char **why)
{
	const char	*colon, *slash;
	char		*name, *host;
	size_t		 n;
	enum gitcfg_class c;

	*why = NULL;
	if (url == NULL || *url == '\0') {
		xasprintf(why, "an empty URL");
		return GITCFG_DEST;
	}
	n = giturl_scheme(url);
	if (n > 0 && strncmp(url + n, "::", 2) == 0) {
		name = str_escape(url, n);
		xasprintf(why, "git would run the remote helper "
		    "git-remote-%s, a program", name);
		free(name);
		return GITCFG_RUNS;
	}
	if (n > 0 && strncmp(url + n, "://", 3) == 0) {
		if (n == 4 && strncasecmp(url, "file", 4) == 0)
			return giturl_local(url + 7, top, pl, why);
		name = xstrndup(url, n);
		if (strcasecmp(name, "http") == 0 ||
		    strcasecmp(name, "https") == 0 ||
		    strcasecmp(name, "ftp") == 0 ||
		    strcasecmp(name, "ftps") == 0 ||
		    strcasecmp(name, "git") == 0 ||
		    strcasecmp(name, "ssh") == 0 ||
		    strcasecmp(name, "git+ssh") == 0 ||
		    strcasecmp(name, "ssh+git") == 0)
			c = giturl_authority(url + n + 3, why);
		else {
			host = str_escape(name, n);
			xasprintf(why, "git would run the remote helper "
			    "git-remote-%s, a program", host);
			free(host);
			c = GITCFG_RUNS;
		}
		free(name);
		return c;
	}
	/* scp-like "[user@]host:path", as git's url_is_local_not_ssh. */
	colon = strchr(url, ':');
	slash = strchr(url, '/');
	if (colon != NULL && (slash == NULL || colon < slash)) {
		if (*url == '[' && (slash = strchr(url, ']')) != NULL &&
		    slash[1] == ':')
			return giturl_host(url, (size_t)(slash + 1 - url), why);
		host = xstrndup(url, (size_t)(colon - url));
		name = strrchr(host, '@') != NULL ? strrchr(host, '@') + 1 :
		    host;
		c = giturl_host(name, strlen(name), why);
		free(host);
		return c;
	}
	return giturl_local(url, top, pl, why);
}
