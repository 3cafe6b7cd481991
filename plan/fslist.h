/*
 * fslist.h: what each folder held when a walk last listed it, kept by
 * identity, so that the next walk lists again only what changed since
 * (fslist.c).  The plan's scan (fsscan.c) fills it before the run; the
 * check's walk (gwalk.c) reads it, and fills it for the check after a
 * session's next command.
 */
#ifndef CORDON_FSLIST_H
#define CORDON_FSLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct stat;

/* The names git opens in a folder to take it for a repository. */
#define FSLIST_GIT		0x01	/* ".git", of any type */
#define FSLIST_HG		0x02
#define FSLIST_HEAD		0x04
#define FSLIST_OBJECTS		0x08
#define FSLIST_REFS		0x10
#define FSLIST_COMMONDIR	0x20

/* One folder as a walk read it. */
struct fslist_seen {
	unsigned	 ls_marks;	/* FSLIST_* */
	size_t		 ls_entries;	/* read, "." and ".." aside */
	char		**ls_subs;	/* its folders, .git and .hg aside */
	size_t		 ls_nsubs;
	size_t		 ls_cap;	/* of ls_subs */
};

struct fslist;

struct fslist	*fslist_new(void);
void		 fslist_free(struct fslist *);
unsigned	 fslist_mark(const char *);
bool		 fslist_gitdir(unsigned);
void		 fslist_sub(struct fslist_seen *, const char *);
void		 fslist_seen_clear(struct fslist_seen *);
void		 fslist_put(struct fslist *, int, const struct stat *, time_t,
		    const struct fslist_seen *);
bool		 fslist_get(struct fslist *, const struct stat *,
		    struct fslist_seen *);
void		 fslist_turn(struct fslist *);

#endif
