/*
 * pwatch.c: `cordon proxy --policy-watch`: the policy is read again
 * when one of its files is replaced, as well as on SIGHUP.
 *
 * Each file's folder is watched with inotify(7), not the file itself:
 * a file replaced by rename(2) (`mv`, an editor's save, configuration
 * management) is a new inode that a watch on the old one never sees,
 * and a Kubernetes ConfigMap mounted as a volume swaps a whole folder
 * by renaming its "..data" symbolic link, leaving the file's own link
 * untouched.  So an event on the file's name, or on a name starting
 * with "..", in its folder counts; events come in bursts (a write, a
 * rename, a chmod), so the reload waits PWATCH_SETTLE_MS after the
 * last one.  What to do then is the caller's (proxy_cmd.c): build the
 * policy, keep the old one if the new one does not load.
 */
#include <sys/types.h>
#include <sys/inotify.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "proxy/proxy.h"
#include "proxyd/proxy_cmd.h"

#define PWATCH_SETTLE_MS	200
#define PWATCH_MASK		(IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | \
				    IN_DELETE | IN_MOVED_FROM | IN_ATTRIB)

struct pwatch_file {
	int		 pf_wd;		/* its folder's watch */
	char		*pf_dir;
	char		*pf_base;
};

struct pwatch {
	int			 pw_fd;
	struct event		*pw_ev;
	struct event		*pw_settle;
	struct pwatch_file	*pw_files;
	size_t			 pw_nfiles;
	void			(*pw_cb)(void *);
	void			*pw_arg;
};

/* Whether the event ie, in a watched folder, may have replaced a file. */
static bool
pwatch_concerns(const struct pwatch *pw, const struct inotify_event *ie)
{
	size_t	 i;

	if (ie->len == 0)
		return false;
	if (strncmp(ie->name, "..", 2) == 0)
		return true;
	for (i = 0; i < pw->pw_nfiles; i++)
		if (pw->pw_files[i].pf_wd == ie->wd &&
		    strcmp(pw->pw_files[i].pf_base, ie->name) == 0)
			return true;
	return false;
}

static void
pwatch_settled_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pwatch	*pw = arg;

	(void)fd;
	(void)what;
	pw->pw_cb(pw->pw_arg);
}

static void
pwatch_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pwatch			*pw = arg;
	struct timeval			 tv = { 0, PWATCH_SETTLE_MS * 1000 };
	char				 buf[16 * (sizeof(struct inotify_event)
					    + NAME_MAX + 1)]
					    __attribute__((aligned(8)));
	const struct inotify_event	*ie;
	ssize_t				 n;
	size_t				 off;
	bool				 hit = false;

	(void)what;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (off = 0; off + sizeof(*ie) <= (size_t)n;
		    off += sizeof(*ie) + ie->len) {
			ie = (const struct inotify_event *)(buf + off);
			/* A queue overflow may hide any event. */
			hit |= (ie->mask & IN_Q_OVERFLOW) != 0 ||
			    pwatch_concerns(pw, ie);
		}
	if (hit)
		evtimer_add(pw->pw_settle, &tv);
}

/* The folder and the last name of path, as given (no link followed). */
static void
pwatch_split(const char *path, char **dir, char **base)
{
	const char	*slash = strrchr(path, '/');

	if (slash == NULL) {
		*dir = xstrdup(".");
		*base = xstrdup(path);
	} else {
		*dir = slash == path ? xstrdup("/") :
		    xstrndup(path, (size_t)(slash - path));
		*base = xstrdup(slash + 1);
	}
}

/*
 * Watches the folders of the n files, calling cb(arg) once a burst of
 * changes to any of them has settled.  NULL with *cause set.
 */
struct pwatch *
pwatch_new(struct event_base *base, const char *const *files, size_t n,
    void (*cb)(void *), void *arg, char **cause)
{
	struct pwatch	*pw;
	size_t		 i;

	*cause = NULL;
	pw = xcalloc(1, sizeof(*pw));
	pw->pw_cb = cb;
	pw->pw_arg = arg;
	pw->pw_files = xcalloc(n, sizeof(*pw->pw_files));
	if ((pw->pw_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1) {
		xasprintf(cause, "--policy-watch: inotify: %s",
		    strerror(errno));
		goto fail;
	}
	for (i = 0; i < n; i++, pw->pw_nfiles++) {
		pwatch_split(files[i], &pw->pw_files[i].pf_dir,
		    &pw->pw_files[i].pf_base);
		if ((pw->pw_files[i].pf_wd = inotify_add_watch(pw->pw_fd,
		    pw->pw_files[i].pf_dir, PWATCH_MASK)) == -1) {
			xasprintf(cause, "--policy-watch: cannot watch %s: %s",
			    pw->pw_files[i].pf_dir, strerror(errno));
			pw->pw_nfiles++;
			goto fail;
		}
	}
	if ((pw->pw_ev = event_new(base, pw->pw_fd, EV_READ | EV_PERSIST,
	    pwatch_read_cb, pw)) == NULL || event_add(pw->pw_ev, NULL) ==
	    -1 || (pw->pw_settle = evtimer_new(base, pwatch_settled_cb, pw)) ==
	    NULL) {
		xasprintf(cause, "--policy-watch: cannot watch its events");
		goto fail;
	}
	return pw;
fail:
	pwatch_free(pw);
	return NULL;
}

void
pwatch_free(struct pwatch *pw)
{
	size_t	 i;

	if (pw == NULL)
		return;
	if (pw->pw_ev != NULL)
		event_free(pw->pw_ev);
	if (pw->pw_settle != NULL)
		event_free(pw->pw_settle);
	if (pw->pw_fd != -1)
		close(pw->pw_fd);
	for (i = 0; i < pw->pw_nfiles; i++) {
		free(pw->pw_files[i].pf_dir);
		free(pw->pw_files[i].pf_base);
	}
	free(pw->pw_files);
	free(pw);
}
