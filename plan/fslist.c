/*
 * fslist.c: what each folder held when a walk last listed it (the
 * names git looks for, its subfolders), kept by identity, so that the
 * next walk lists again only the folders that changed since.  The scan
 * before the run (fsscan.c) and the check after it (gwalk.c) walk the
 * same writable folders; in a workspace of a thousand folders each walk
 * cost 20 ms, and a session walked again after every command.
 *
 * A folder's ctime moves whenever an entry is made, removed or renamed
 * in it, and when its mode or owner changes; no call sets it back.  So
 * a folder that has the identity (device, inode) and the ctime it had
 * when it was listed holds the same names, and its listing is given
 * again.  Only its names: a subfolder is a folder of its own, stat'ed
 * and judged by the same rule, and a file's content is not kept here.
 *
 * Two guards on that rule.  A listing is kept only when its folder's
 * ctime is FSLIST_SLACK seconds older than the walk: the clock ctime
 * is read from is coarse (a tick, and a whole second where a
 * filesystem keeps no more), so a change in the same tick as the
 * listing could leave ctime as it was; a change made later lands in a
 * later second.  And only on the filesystems that keep ctime in the
 * kernel (fslist_trusted): a network or FUSE filesystem may answer from
 * a cache, or from another machine's clock.  The clock is taken not to
 * go back, as the check already takes it (guard.c: what changed during
 * the run is what has a ctime from the run's start on).
 *
 * Entries live for one walk and the next: a walk marks each listing it
 * used or made, and fslist_turn() forgets the rest (folders removed, or
 * no longer reached).
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/magic.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "plan/fslist.h"

#define FSLIST_SLACK	2	/* seconds: a ctime may count whole ones */
#define FSLIST_MAX	(1 << 18)	/* folders kept (about 40 MB); past */
					/* it, a folder is listed each walk */

/* A folder's listing, by identity. */
struct fslist_dir {
	dev_t		 d_dev;
	ino_t		 d_ino;
	struct timespec	 d_ctim;
	unsigned	 d_pass;	/* the last walk that met it */
	unsigned	 d_marks;
	size_t		 d_entries;
	size_t		 d_nsubs;
	char		*d_names;	/* the subfolders, each NUL-ended */
};

/* A filesystem, and whether its ctime can be trusted. */
struct fslist_fs {
	dev_t		 f_dev;
	bool		 f_trusted;
};

/*
 * A slot of the table: the identity beside the listing, so that a probe
 * reads the table alone, not each listing it passes.
 */
struct fslist_slot {
	dev_t		 s_dev;
	ino_t		 s_ino;
	struct fslist_dir *s_dir;	/* NULL: free */
};

/* The listings, in a table of open addressing by identity. */
struct fslist {
	struct fslist_slot *l_tab;
	size_t		 l_cap;		/* a power of two, or 0 */
	size_t		 l_n;
	size_t		 l_nmet;	/* of l_n, met in this walk */
	unsigned	 l_pass;	/* this walk's */
	struct fslist_fs *l_fs;
	size_t		 l_nfs;
};

/* The slot of (dev, ino) in l (l_cap > 0): its entry, or the free one. */
static struct fslist_slot *
fslist_slot(const struct fslist *l, dev_t dev, ino_t ino)
{
	struct fslist_slot	*t = l->l_tab;
	uint64_t		 h;
	size_t			 i;

	h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev;
	i = (size_t)(h ^ (h >> 29)) & (l->l_cap - 1);
	while (t[i].s_dir != NULL && (t[i].s_ino != ino || t[i].s_dev != dev))
		i = (i + 1) & (l->l_cap - 1);
	return &t[i];
}

/* Puts d in slot, its own (fslist_slot). */
static void
fslist_set(struct fslist_slot *slot, struct fslist_dir *d)
{
	slot->s_dev = d->d_dev;
	slot->s_ino = d->d_ino;
	slot->s_dir = d;
}

/* A table of cap slots holding the entries of l's that pass keep. */
static void
fslist_rehash(struct fslist *l, size_t cap, bool (*keep)(const struct
    fslist *, const struct fslist_dir *))
{
	struct fslist_slot	*old = l->l_tab;
	struct fslist_dir	*d;
	size_t			 i, n = l->l_cap;

	l->l_tab = xcalloc(cap, sizeof(*l->l_tab));
	l->l_cap = cap;
	l->l_n = 0;
	for (i = 0; i < n; i++) {
		if ((d = old[i].s_dir) == NULL)
			continue;
		if (!keep(l, d)) {
			free(d->d_names);
			free(d);
			continue;
		}
		fslist_set(fslist_slot(l, d->d_dev, d->d_ino), d);
		l->l_n++;
	}
	free(old);
}

static bool
fslist_any(const struct fslist *l, const struct fslist_dir *d)
{
	(void)l;
	(void)d;
	return true;
}

static bool
fslist_met(const struct fslist *l, const struct fslist_dir *d)
{
	return d->d_pass == l->l_pass;
}


struct fslist *
fslist_new(void)
{
	return xcalloc(1, sizeof(struct fslist));
}

void
fslist_free(struct fslist *l)
{
	size_t	 i;

	if (l == NULL)
		return;
	for (i = 0; i < l->l_cap; i++)
		if (l->l_tab[i].s_dir != NULL) {
			free(l->l_tab[i].s_dir->d_names);
			free(l->l_tab[i].s_dir);
		}
	free(l->l_tab);
	free(l->l_fs);
	free(l);
}

/*
 * The FSLIST_* bit the entry name sets, or 0.  Every name of a walk
 * comes here: most begin with none of the marks' first letters.
 */
unsigned
fslist_mark(const char *name)
{
	static const char *const names[] = {
		".git", ".hg", "HEAD", "objects", "refs", "commondir"
	};
	size_t	 i;

	if (name[0] == '\0' || strchr(".Horc", name[0]) == NULL)
		return 0;
	for (i = 0; i < nitems(names); i++)
		if (strcmp(name, names[i]) == 0)
			return 1u << i;
	return 0;
}

/*
 * Whether the names a listing met (marks, FSLIST_*) make git take the
 * folder for a git directory with no .git name at all: HEAD with objects
 * and refs, or HEAD with commondir (git's is_git_directory).
 */
bool
fslist_gitdir(unsigned marks)
{
	return (marks & FSLIST_HEAD) && (((marks & FSLIST_OBJECTS) &&
	    (marks & FSLIST_REFS)) || (marks & FSLIST_COMMONDIR));
}

/* Adds a subfolder's name to s. */
void
fslist_sub(struct fslist_seen *s, const char *name)
{
	s->ls_subs = xmalloc_grow(s->ls_subs, s->ls_nsubs, &s->ls_cap,
	    sizeof(*s->ls_subs));
	s->ls_subs[s->ls_nsubs++] = xstrdup(name);
}

void
fslist_seen_clear(struct fslist_seen *s)
{
	size_t	 i;

	for (i = 0; i < s->ls_nsubs; i++)
		free(s->ls_subs[i]);
	free(s->ls_subs);
	memset(s, 0, sizeof(*s));
}

/*
 * Does the filesystem of dfd (st) keep ctime in the kernel, as POSIX
 * says?  Asked once per device.
 */
static bool
fslist_trusted(struct fslist *l, int dfd, const struct stat *st)
{
	struct statfs	 sf;
	size_t		 i;
	bool		 ok;

	for (i = 0; i < l->l_nfs; i++)
		if (l->l_fs[i].f_dev == st->st_dev)
			return l->l_fs[i].f_trusted;
	if (fstatfs(dfd, &sf) == -1)
		return false;
	switch (sf.f_type) {
	case EXT4_SUPER_MAGIC:	/* ext2 and ext3 too */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case F2FS_SUPER_MAGIC:
	case OVERLAYFS_SUPER_MAGIC:
		ok = true;
		break;
	default:
		ok = false;
	}
	l->l_fs = xreallocarray(l->l_fs, l->l_nfs + 1, sizeof(*l->l_fs));
	l->l_fs[l->l_nfs].f_dev = st->st_dev;
	l->l_fs[l->l_nfs++].f_trusted = ok;
	return ok;
}

/* Files d, met in this walk, in place of what was there. */
static void
fslist_keep(struct fslist *l, struct fslist_dir *d)
{
	struct fslist_slot	*slot;

	if (2 * (l->l_n + 1) > l->l_cap)
		fslist_rehash(l, l->l_cap == 0 ? 256 : 2 * l->l_cap,
		    fslist_any);
	d->d_pass = l->l_pass;
	slot = fslist_slot(l, d->d_dev, d->d_ino);
	if (slot->s_dir == NULL) {
		l->l_n++;
		l->l_nmet++;
	} else {
		if (slot->s_dir->d_pass != l->l_pass)
			l->l_nmet++;
		free(slot->s_dir->d_names);
		free(slot->s_dir);
	}
	fslist_set(slot, d);
}

/*
 * Keeps what the folder dfd (st) held, as a walk begun at taken read it
 * whole, when its ctime may be trusted to tell a later change.
 */
void
fslist_put(struct fslist *l, int dfd, const struct stat *st, time_t taken,
    const struct fslist_seen *s)
{
	struct fslist_dir	*d;
	size_t			 i, len, off;

	if (l == NULL || st->st_ctim.tv_sec + FSLIST_SLACK >= taken ||
	    l->l_n >= FSLIST_MAX || !fslist_trusted(l, dfd, st))
		return;
	d = xcalloc(1, sizeof(*d));
	d->d_dev = st->st_dev;
	d->d_ino = st->st_ino;
	d->d_ctim = st->st_ctim;
	d->d_marks = s->ls_marks;
	d->d_entries = s->ls_entries;
	d->d_nsubs = s->ls_nsubs;
	for (len = 0, i = 0; i < s->ls_nsubs; i++)
		len += strlen(s->ls_subs[i]) + 1;
	d->d_names = xmalloc(len + 1);
	for (off = 0, i = 0; i < s->ls_nsubs; i++) {
		len = strlen(s->ls_subs[i]) + 1;
		memcpy(d->d_names + off, s->ls_subs[i], len);
		off += len;
	}
	fslist_keep(l, d);
}

/*
 * What the folder st held when last listed, into s (empty), if it is
 * the same folder with the same ctime: then true, and the listing is
 * met in this walk, kept for the next.
 */
bool
fslist_get(struct fslist *l, const struct stat *st, struct fslist_seen *s)
{
	struct fslist_dir	*d;
	const char		*n;
	size_t			 i;

	if (l == NULL || l->l_cap == 0 ||
	    (d = fslist_slot(l, st->st_dev, st->st_ino)->s_dir) == NULL ||
	    d->d_ctim.tv_sec != st->st_ctim.tv_sec ||
	    d->d_ctim.tv_nsec != st->st_ctim.tv_nsec)
		return false;
	if (d->d_pass != l->l_pass)
		l->l_nmet++;
	d->d_pass = l->l_pass;
	s->ls_marks = d->d_marks;
	s->ls_entries = d->d_entries;
	for (n = d->d_names, i = 0; i < d->d_nsubs; i++, n += strlen(n) + 1)
		fslist_sub(s, n);
	return true;
}

/*
 * Ends a walk: the listings it did not meet are forgotten.  A walk that
 * met them all (a session's, in a workspace that kept its folders)
 * leaves the table as it is.
 */
void
fslist_turn(struct fslist *l)
{
	if (l == NULL)
		return;
	if (l->l_cap > 0 && l->l_nmet < l->l_n)
		fslist_rehash(l, l->l_cap, fslist_met);
	l->l_pass++;
	l->l_nmet = 0;
}
