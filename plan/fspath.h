/*
 * fspath.h: a path of the mount plan resolved by hand (fspath.c), the
 * first step of both the scan (fsscan.c) and the planner (fsplan.c).
 */
#ifndef CORDON_FSPATH_H
#define CORDON_FSPATH_H

#include <stdbool.h>
#include <stddef.h>

struct fs_mark;
struct fscache;
struct stat;

enum fspath_res {
	FSPATH_FOUND,		/* the path exists: the resolved path */
	FSPATH_MISSING,		/* the first missing component */
	FSPATH_NOTDIR,		/* a non-directory with more to come */
	FSPATH_SKIP		/* cannot be resolved: pr_note says why */
};

/* Where a path leads; fspath_clear() frees it. */
struct fspath {
	enum fspath_res	 pr_res;
	char		*pr_path;	/* as pr_res says; NULL on SKIP */
	bool		 pr_dir;	/* FOUND: a directory; MISSING: */
					/* more components come after it */
	bool		 pr_slash;	/* FOUND: not a directory, and a */
					/* '/' came after it ("file/.") */
	char		**pr_links;	/* the symlinks met, in order */
	size_t		 pr_nlinks;
	char		*pr_note;	/* why it was left out, or NULL */
};

void	fspath_resolve(struct fscache *, const char *, struct fspath *);
char	*fspath_real(struct fscache *, const char *, char *);
void	fspath_clear(struct fspath *);
void	fspath_mark(struct fs_mark **, size_t *, const struct stat *);
void	fspath_note(char ***, size_t *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));

#endif
