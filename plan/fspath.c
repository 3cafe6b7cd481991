/*
 * fspath.c: a path of the mount plan resolved one component at a time,
 * as realpath(3) does, but by hand, so that each symlink met is seen:
 * the planner pins those met in a writable place (FS_PIN_LINK), so a
 * mount target never goes through one (the attack: `ws/.git ->
 * /elsewhere`, so a read-only bind of ws/.git lands elsewhere and the
 * real name stays writable).  Plain data out: the scan (fsscan.c), the
 * planner (fsplan.c) and the runner's checks after it (run_plan.c) all
 * start here.  What the kernel says of each path is kept for the plan
 * (fscache.c), so a prefix the paths share is looked up once.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fscache.h"
#include "plan/fspath.h"
#include "plan/plan.h"

#define FSPATH_MAX_LINKS	40	/* symlinks in a path, as the kernel */

/* A walk of fspath_resolve: what is resolved, and what is left. */
struct fspath_walk {
	struct fscache	*w_cache;	/* what is known of the paths */
	char		*w_done;	/* resolved so far; "" stands for "/" */
	char		*w_todo;	/* the path being walked */
	const char	*w_p;		/* what is left of it */
	size_t		 w_links;	/* symlinks followed */
};

/* True if s holds a component other than "." (what is left to walk). */
static bool
fspath_more(const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '/')
			continue;
		if (s[0] == '.' && (s[1] == '/' || s[1] == '\0'))
			continue;
		return true;
	}
	return false;
}

/*
 * The next component to look up, *len bytes long, or NULL at the end:
 * "." is passed over and ".." goes up from what is resolved so far, as
 * the kernel does (*dir: a folder, "/" at worst).
 */
static const char *
fspath_next(struct fspath_walk *w, size_t *len, bool *dir)
{
	const char	*comp;

	for (;;) {
		while (*w->w_p == '/')
			w->w_p++;
		if (*w->w_p == '\0')
			return NULL;
		comp = w->w_p;
		*len = strcspn(comp, "/");
		w->w_p += *len;
		if (*len == 1 && comp[0] == '.')
			continue;
		if (*len == 2 && comp[0] == '.' && comp[1] == '.') {
			if (*w->w_done != '\0')
				*strrchr(w->w_done, '/') = '\0';
			*dir = true;
			continue;
		}
		return comp;
	}
}

/* done, '/' and the len bytes of comp: the next path to look at. */
static char *
fspath_join(const char *done, const char *comp, size_t len)
{
	size_t	 n = strlen(done);
	char	*s = xmalloc(n + len + 2);

	memcpy(s, done, n);
	s[n] = '/';
	memcpy(s + n + 1, comp, len);
	s[n + len + 1] = '\0';
	return s;
}

/*
 * The walk meets the symlink link (taken): it is listed in pr, and the
 * walk goes on through its target.  Returns 0, or -1 with pr_note
 * saying why it cannot be followed.
 */
static int
fspath_link(struct fspath *pr, struct fspath_walk *w, char *link)
{
	const char	*target;
	char		*next;

	target = ++w->w_links > FSPATH_MAX_LINKS ? NULL :
	    fscache_readlink(w->w_cache, link);
	if (target == NULL)
		xasprintf(&pr->pr_note, "%s: %s: left out of the plan", link,
		    w->w_links > FSPATH_MAX_LINKS ? strerror(ELOOP) :
		    strerror(errno));
	pr->pr_links = xreallocarray(pr->pr_links, pr->pr_nlinks + 1,
	    sizeof(*pr->pr_links));
	pr->pr_links[pr->pr_nlinks++] = link;
	if (target == NULL)
		return -1;
	if (target[0] == '/')
		*w->w_done = '\0';
	xasprintf(&next, "%s%s", target, w->w_p);
	free(w->w_todo);
	w->w_todo = next;
	w->w_p = next;
	return 0;
}

/*
 * One component, cand, looked up: -1 when the walk ends there (pr
 * filled), 0 when it goes on.
 */
static int
fspath_step(struct fspath *pr, struct fspath_walk *w, char *cand)
{
	struct stat	 st;

	if (fscache_lstat(w->w_cache, cand, &st) == -1) {
		if (errno == ENOENT) {
			pr->pr_path = cand;
			pr->pr_dir = fspath_more(w->w_p);
			pr->pr_res = FSPATH_MISSING;
		} else {
			xasprintf(&pr->pr_note, "%s: %s: left out of the plan",
			    cand, strerror(errno));
			free(cand);
			pr->pr_res = FSPATH_SKIP;
		}
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		if (fspath_link(pr, w, cand) == -1) {
			pr->pr_res = FSPATH_SKIP;
			return -1;
		}
		return 0;
	}
	free(w->w_done);
	w->w_done = cand;
	pr->pr_dir = S_ISDIR(st.st_mode);
	pr->pr_slash = !pr->pr_dir && *w->w_p != '\0';
	if (!pr->pr_dir && fspath_more(w->w_p)) {
		pr->pr_path = w->w_done;
		w->w_done = NULL;
		pr->pr_res = FSPATH_NOTDIR;
		return -1;
	}
	return 0;
}

/*
 * Resolves the absolute path into pr (fspath.h): each symlink met is
 * listed, ".." goes up from what is resolved so far, as the kernel
 * does.  What the kernel said is asked of the cache c, and kept there;
 * with none, of one for this path alone.  Free pr with fspath_clear().
 */
void
fspath_resolve(struct fscache *c, const char *path, struct fspath *pr)
{
	struct fspath_walk	 w;
	const char		*comp;
	char			*cand;
	size_t			 len;

	memset(pr, 0, sizeof(*pr));
	pr->pr_dir = true;		/* "/" */
	w.w_cache = c != NULL ? c : fscache_new();
	w.w_done = xstrdup("");
	w.w_todo = xstrdup(path);
	w.w_p = w.w_todo;
	w.w_links = 0;
	while ((comp = fspath_next(&w, &len, &pr->pr_dir)) != NULL) {
		cand = fspath_join(w.w_done, comp, len);
		if (fspath_step(pr, &w, cand) == -1)
			goto out;
	}
	if (*w.w_done == '\0') {
		free(w.w_done);
		w.w_done = xstrdup("/");
	}
	pr->pr_path = w.w_done;
	w.w_done = NULL;
	pr->pr_res = FSPATH_FOUND;
out:
	if (c == NULL)
		fscache_free(w.w_cache);
	free(w.w_done);
	free(w.w_todo);
}

/* fspath_real() of the absolute path, resolved by hand. */
static char *
fspath_real_walk(struct fscache *c, const char *path, char *real)
{
	struct fspath	 pr;
	char		*out = NULL;

	fspath_resolve(c, path, &pr);
	/* realpath(3) takes no '/' after a file: "f/", "f/.". */
	if (pr.pr_res == FSPATH_FOUND && !pr.pr_slash &&
	    strlen(pr.pr_path) < PATH_MAX)
		out = strcpy(real, pr.pr_path);
	fspath_clear(&pr);
	return out;
}

/*
 * realpath(3) of path into real (PATH_MAX bytes), or NULL where it
 * would fail: an absolute path resolved by fspath_resolve() through
 * the cache c (NULL: none), so that the runner's checks see the tree as
 * the plan saw it, and look at it no more; a path asked again is
 * answered as the first time.  A relative one goes to realpath(3).
 */
char *
fspath_real(struct fscache *c, const char *path, char *real)
{
	const char	*known;
	char		*out;
	bool		 asked;

	if (path[0] != '/')
		return realpath(path, real);
	if (c == NULL)
		return fspath_real_walk(c, path, real);
	if ((known = fscache_real(c, path, &asked)) != NULL)
		return strcpy(real, known);
	if (asked)
		return NULL;
	out = fspath_real_walk(c, path, real);
	fscache_set_real(c, path, out);
	return out;
}

/* Frees what pr holds. */
void
fspath_clear(struct fspath *pr)
{
	size_t	 i;

	free(pr->pr_path);
	for (i = 0; i < pr->pr_nlinks; i++)
		free(pr->pr_links[i]);
	free(pr->pr_links);
	free(pr->pr_note);
	memset(pr, 0, sizeof(*pr));
}

/* Appends what st is to the list *v of *n identities. */
void
fspath_mark(struct fs_mark **v, size_t *n, const struct stat *st)
{
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[*n].fm_dev = st->st_dev;
	(*v)[(*n)++].fm_ino = st->st_ino;
}

/* Appends a note for the user to *v; escaped, as it holds paths. */
void
fspath_note(char ***v, size_t *n, const char *fmt, ...)
{
	va_list		 ap;
	char		*s;

	va_start(ap, fmt);
	xvasprintf(&s, fmt, ap);
	va_end(ap);
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = str_escape(s, strlen(s));
	free(s);
}
