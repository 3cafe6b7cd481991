/*
 * file.c: whole files read, without following links below a folder
 * an untrusted workspace names; the limit on open files.
 */
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/xmalloc.h"

/*
 * Opens path for reading, without following any symbolic link below the
 * folder `beneath`, which path must start with (and without "..").
 * This is how files an untrusted workspace names are opened: a cloned
 * repository can hold links (".cordon/lists -> ~/.ssh") that would
 * otherwise make cordon read and print the user's own files.  Returns
 * the descriptor, or -1 with *cause set (caller frees).
 */
static int
file_open_beneath(const char *path, const char *beneath, char **cause)
{
	size_t	 n = strcmp(beneath, "/") == 0 ? 0 : strlen(beneath);
	char	*rel, *seg, *save, *next;
	int	 fd, nfd;

	if (strncmp(path, beneath, n) != 0 || path[n] != '/') {
		xasprintf(cause, "%s is outside %s, where a workspace "
		    "policy may read", path, beneath);
		return -1;
	}
	if ((fd = open(beneath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		xasprintf(cause, "%s: %s", beneath, strerror(errno));
		return -1;
	}
	rel = xstrdup(path + n + 1);
	for (seg = strtok_r(rel, "/", &save); seg != NULL; seg = next) {
		next = strtok_r(NULL, "/", &save);
		if (strcmp(seg, "..") == 0) {
			xasprintf(cause, "%s: \"..\" is refused here", path);
			goto fail;
		}
		nfd = openat(fd, seg, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
		    O_NOCTTY | (next != NULL ? O_DIRECTORY : 0));
		if (nfd == -1) {
			if (errno == ELOOP || (errno == ENOTDIR && next != NULL))
				xasprintf(cause, "%s: \"%s\" is a symbolic link "
				    "or not a folder, and links are not "
				    "followed here", path, seg);
			else
				xasprintf(cause, "%s: %s", path,
				    strerror(errno));
			goto fail;
		}
		close(fd);
		fd = nfd;
	}
	free(rel);
	return fd;
fail:
	free(rel);
	close(fd);
	return -1;
}

/*
 * Reads a whole regular file of at most max bytes.  When beneath is not
 * NULL, path must lie below that folder and is opened without following
 * links (see file_open_beneath).  Returns the contents, NUL-terminated (caller
 * frees), and the length in *lenp; or NULL with *cause set (caller frees).
 */
char *
file_read(const char *path, size_t max, const char *beneath, size_t *lenp,
    char **cause)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 n;
	int		 fd;

	*cause = NULL;
	if (beneath != NULL)
		fd = file_open_beneath(path, beneath, cause);
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		xasprintf(cause, "%s: %s", path, strerror(errno));
	if (fd == -1)
		return NULL;
	if (fstat(fd, &st) == -1) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		xasprintf(cause, "%s: not a regular file", path);
		goto fail;
	}
	if ((size_t)st.st_size > max) {
		xasprintf(cause, "%s: larger than %zu bytes", path, max);
		goto fail;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (len < (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			xasprintf(cause, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd);
	*lenp = len;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

/*
 * Raises the soft limit on open descriptors to the hard one: a relay
 * holds two sockets and two pipes, and the default of 1024 is soon met.
 */
void
file_limit_raise(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}
