/*
 * wspath.c: the files cordon itself writes where the command may have
 * been: the --report written after the run, the --log written during
 * it.
 *
 * The workspace is the command's, and the command outlives nothing but
 * what it leaves there: a `reports -> ~/victim` link, a FIFO where the
 * report goes.  So the folder of such a file is opened before the run,
 * beneath the workspace when it is in it (openat2 RESOLVE_BENEATH: no
 * link out, no /proc magic link), and everything after goes through
 * that descriptor: the report is written to a new file made there and
 * renamed over the name (rename(2) replaces a link or a FIFO, it does
 * not follow or open it); the log is opened there without following a
 * link, and only if it is a regular file.
 *
 * Runs in: cordon run on the host: opened before the clone, written
 *   during and after the run.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "runner/runner.h"

/* Opens folder dir of the workspace ws beneath it; -1 with errno. */
static int
wspath_beneath(const char *ws, const char *dir)
{
	struct open_how	 how;
	const char	*rel = dir + strlen(ws);
	int		 wfd, fd, saved;

	while (*rel == '/')
		rel++;
	if ((wfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, wfd, *rel == '\0' ? "." : rel, &how,
	    sizeof(how));
	saved = errno;
	close(wfd);
	errno = saved;
	return fd;
}

/*
 * Folds "." and ".." and repeated '/' out of the absolute path abs, in
 * place, as the user reads "../x.log": the file in the parent of the
 * current folder.  Whether it is in the workspace is then a question of
 * its name, and a ".." is never taken for a link out of it.
 */
static void
wspath_fold(char *abs)
{
	char	*in = abs, *out = abs, *seg;
	size_t	 n;

	while (*in != '\0') {
		while (*in == '/')
			in++;
		seg = in;
		n = strcspn(seg, "/");
		in += n;
		if (n == 0 || (n == 1 && seg[0] == '.'))
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			while (out > abs && *--out != '/')
				;
			continue;
		}
		*out++ = '/';
		memmove(out, seg, n);
		out += n;
	}
	if (out == abs)
		*out++ = '/';
	*out = '\0';
}

/*
 * Opens the folder of path (relative to cwd, or absolute) as O_PATH,
 * beneath the workspace ws when it is in it, and fills w.  what names
 * the flag, for messages.  Returns 0, or -1 with *cause set.
 */
int
wspath_open(struct wspath *w, const char *ws, const char *cwd,
    const char *path, const char *what, char **cause)
{
	const char	*base;
	char		*abs, *slash;
	int		 rc = -1;

	memset(w, 0, sizeof(*w));
	w->w_dir = -1;
	base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
	if (base[0] == '\0' || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0) {
		xasprintf(cause, "%s %s: not a file name", what, path);
		return -1;
	}
	if (path[0] == '/')
		abs = xstrdup(path);
	else
		xasprintf(&abs, "%s/%s", cwd, path);
	wspath_fold(abs);
	slash = strrchr(abs, '/');
	w->w_name = xstrdup(slash + 1);
	if (slash == abs)
		slash[1] = '\0';
	else
		*slash = '\0';
	w->w_shown = xstrdup(path);
	if (path_is_below(abs, ws))
		w->w_dir = wspath_beneath(ws, abs);
	else
		w->w_dir = open(abs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->w_dir == -1) {
		if (errno == EXDEV)
			xasprintf(cause, "%s %s: its folder %s leads out of "
			    "the workspace through a symbolic link, which "
			    "cordon does not follow\nhint: remove the link, "
			    "or name a file outside the workspace", what, path,
			    abs);
		else
			xasprintf(cause, "%s %s: its folder %s: %s", what, path,
			    abs, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(abs);
	if (rc == -1)
		wspath_clear(w);
	return rc;
}

/*
 * Opens the file for appending (the egress log), without following a
 * link, without blocking on a FIFO; a regular file only.  Returns the
 * descriptor, or -1 with *cause set.
 */
int
wspath_append(const struct wspath *w, char **cause)
{
	struct stat	 st;
	int		 fd;

	if (fstatat(w->w_dir, w->w_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(st.st_mode)) {
		xasprintf(cause, "%s: not a regular file (%s); cordon writes "
		    "only to one, and follows no link", w->w_shown,
		    S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISFIFO(
		    st.st_mode) ? "a FIFO" : "another kind");
		return -1;
	}
	fd = openat(w->w_dir, w->w_name, O_WRONLY | O_APPEND | O_CREAT |
	    O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0640);
	if (fd == -1) {
		xasprintf(cause, "%s: %s%s", w->w_shown, strerror(errno),
		    errno == ELOOP ? " (a symbolic link; cordon does not "
		    "follow it)" : "");
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		xasprintf(cause, "%s: not a regular file; cordon writes only "
		    "to one", w->w_shown);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Writes len bytes of text as the file, mode 0600: a new file in the
 * folder, renamed over the name, so whatever the command left there (a
 * link, a FIFO) is replaced, never followed.  Returns 0, or -1 with
 * *cause set.
 */
int
wspath_replace(const struct wspath *w, const char *text, size_t len,
    char **cause)
{
	char		 tmp[64], r[9];
	size_t		 off = 0;
	ssize_t		 n = 0;
	int		 fd = -1, tries;

	for (tries = 0; fd == -1 && tries < 8; tries++) {
		if (str_random_hex(r, 8) == -1)
			break;
		snprintf(tmp, sizeof(tmp), ".cordon-report.%s", r);
		fd = openat(w->w_dir, tmp, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd == -1 && errno != EEXIST)
			break;
	}
	if (fd == -1) {
		xasprintf(cause, "%s: a new file beside it: %s", w->w_shown,
		    strerror(errno));
		return -1;
	}
	while (off < len && (n = write(fd, text + off, len - off)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			break;
		off += (size_t)n;
	}
	if (close(fd) == -1 || off < len ||
	    renameat(w->w_dir, tmp, w->w_dir, w->w_name) == -1) {
		xasprintf(cause, "%s: %s", w->w_shown, strerror(n == 0 ?
		    ENOSPC : errno));
		unlinkat(w->w_dir, tmp, 0);
		return -1;
	}
	return 0;
}

void
wspath_clear(struct wspath *w)
{
	if (w->w_dir != -1)
		close(w->w_dir);
	free(w->w_name);
	free(w->w_shown);
	memset(w, 0, sizeof(*w));
	w->w_dir = -1;
}
