/*
 * fscache.c: what one run's plan learnt of the filesystem, lstat(2) and
 * readlink(2) of each path it looked at, asked of the kernel once.  The
 * plan resolves its paths by hand (fspath.c), one component at a time,
 * and they share their prefixes: without it the home folder was looked
 * up once per protected dotfile, and each path of the policy once more
 * by each check after the plan (run_plan.c, keepdir.c).
 *
 * A path is a plain string here: the answer kept is the one the kernel
 * gave for that very string, the first time it was asked.  So a walk
 * through the cache goes as it went the first time, and a change made
 * to the tree since is seen as if it came after the plan.  The plan is
 * racy by nature (the tree may change between it and the mounts), and it
 * is the mounts that close that race, not the plan: each target is
 * opened with RESOLVE_NO_SYMLINKS and a protected path's identity
 * checked (mount.c), so a link that appeared after its path was looked
 * at is refused, not followed.  What the cache adds is that all the
 * paths of one plan are resolved from one view of the tree, where each
 * walk could see another before.  A cache lives for one plan, never
 * across runs, nor after the command ran, nor across a change cordon
 * makes to the tree itself (fscache_clear).
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <search.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/xmalloc.h"
#include "plan/fscache.h"

/*
 * What the kernel said of one path, each question asked once, and
 * where the path leads (fspath_real), worked out once from that.
 */
struct fscache_ent {
	const char	*e_path;	/* e_buf; a lookup's own key */
	struct stat	 e_st;		/* lstat's answer... */
	int		 e_errno;	/* ... or its errno */
	char		*e_link;	/* readlink's answer, or NULL... */
	int		 e_lerrno;	/* ... with its errno */
	char		*e_real;	/* where it leads, or NULL: none */
	bool		 e_stat;	/* lstat asked */
	bool		 e_read;	/* readlink asked */
	bool		 e_resolved;	/* e_real set */
	char		 e_buf[];
};

struct fscache {
	void		*c_root;	/* tsearch(3)'s tree of entries */
};

static int
fscache_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fscache_ent *)a)->e_path,
	    ((const struct fscache_ent *)b)->e_path);
}

static void
fscache_ent_free(void *p)
{
	struct fscache_ent	*e = p;

	free(e->e_link);
	free(e->e_real);
	free(e);
}

struct fscache *
fscache_new(void)
{
	return xcalloc(1, sizeof(struct fscache));
}

/*
 * Forgets all c knows: cordon is about to change the tree itself (a
 * folder made), and what was true of it may be no longer.
 */
void
fscache_clear(struct fscache *c)
{
	tdestroy(c->c_root, fscache_ent_free);
	c->c_root = NULL;
}

void
fscache_free(struct fscache *c)
{
	if (c == NULL)
		return;
	fscache_clear(c);
	free(c);
}

/* The entry of path, made with nothing asked yet if there is none. */
static struct fscache_ent *
fscache_ent(struct fscache *c, const char *path)
{
	struct fscache_ent	 key, *e, **found;
	size_t			 len = strlen(path);

	key.e_path = path;
	if ((found = tfind(&key, &c->c_root, fscache_cmp)) != NULL)
		return *found;
	e = xcalloc(1, sizeof(*e) + len + 1);
	memcpy(e->e_buf, path, len + 1);
	e->e_path = e->e_buf;
	if (tsearch(e, &c->c_root, fscache_cmp) == NULL)
		fatal("fscache");
	return e;
}

/* lstat(2) of path, as the kernel first answered it. */
int
fscache_lstat(struct fscache *c, const char *path, struct stat *st)
{
	struct fscache_ent	*e = fscache_ent(c, path);

	if (!e->e_stat) {
		e->e_errno = lstat(path, &e->e_st) == -1 ? errno : 0;
		e->e_stat = true;
	}
	if (e->e_errno != 0) {
		errno = e->e_errno;
		return -1;
	}
	*st = e->e_st;
	return 0;
}

/* Reads the link at e's path into it, once. */
static void
fscache_read(struct fscache_ent *e)
{
	char	*buf;
	ssize_t	 n;

	e->e_read = true;
	buf = xmalloc(PATH_MAX);
	if ((n = readlink(e->e_path, buf, PATH_MAX)) == -1 || n == 0 ||
	    n == PATH_MAX) {
		e->e_lerrno = n == -1 ? errno : n == 0 ? ENOENT : ENAMETOOLONG;
		free(buf);
		return;
	}
	buf[n] = '\0';
	e->e_link = buf;
}

/*
 * The target of the symlink at path, as the kernel first answered;
 * the cache owns it.  NULL with errno set if it cannot be read (an
 * empty target: ENOENT).
 */
const char *
fscache_readlink(struct fscache *c, const char *path)
{
	struct fscache_ent	*e = fscache_ent(c, path);

	if (!e->e_read)
		fscache_read(e);
	if (e->e_link == NULL)
		errno = e->e_lerrno;
	return e->e_link;
}

/*
 * Where path leads, as fscache_set_real() kept it: *known says whether
 * it did; NULL when it leads nowhere.  What the cache answered once it
 * answers again, so where a path leads does not change either.
 */
const char *
fscache_real(struct fscache *c, const char *path, bool *known)
{
	struct fscache_ent	*e = fscache_ent(c, path);

	*known = e->e_resolved;
	return e->e_real;
}

/* Keeps where path leads (real; NULL: nowhere), for fscache_real(). */
void
fscache_set_real(struct fscache *c, const char *path, const char *real)
{
	struct fscache_ent	*e = fscache_ent(c, path);

	free(e->e_real);
	e->e_real = real != NULL ? xstrdup(real) : NULL;
	e->e_resolved = true;
}
