/*
 * git.h: what cordon knows of git's own files, a library with no process
 * in it: a config file read as git reads it (gitcfg.c), each key judged
 * by what it makes git on the host do (gitjudge.c), the URLs git would
 * reach (giturl.c), and the pointer files that name a git directory
 * (gitptr.c).
 */
#ifndef CORDON_GIT_H
#define CORDON_GIT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * gitcfg.c: a git config file read as git reads it; which keys are
 * inert (make git run no program).
 */
#define GITCFG_MAX	4096	/* entries: more is an error */
#define GITCFG_FILE_MAX	(256 * 1024)	/* bytes of a config file read */

struct gitcfg_ent {
	char	*ge_key;	/* section[.sub].name; section, name lower */
	char	*ge_shown;	/* the same, the name as written */
	char	*ge_value;	/* as git reads it; NULL: a bare name */
};

struct gitcfg {
	struct gitcfg_ent	*gc_v;
	size_t			 gc_n;
};

/*
 * What a key makes git on the host do, by effect.  Every class but
 * GITCFG_INERT and GITCFG_REMOTE is held back (gitjudge_held).
 */
enum gitcfg_class {
	GITCFG_INERT,	/* nothing outside the repository */
	GITCFG_REMOTE,	/* a remote the command added: applied, said */
	GITCFG_RUNS,	/* may run a program, or is not known */
	GITCFG_FILES,	/* where git writes files, with what modes */
	GITCFG_NETWORK,	/* git reaches the network by itself */
	GITCFG_DEST	/* where the user's push or fetch goes */
};

/* The folders the command could write, and those shown it read-only. */
struct gitcfg_places {
	const char	**gp_write;	/* borrowed strings: resolved */
	size_t		  gp_nwrite;
	const char	**gp_show;
	size_t		  gp_nshow;
};

/* Where a config is judged. */
struct gitcfg_ctx {
	const char		*gx_gitdir;	/* absolute, or NULL */
	const struct gitcfg	*gx_base;	/* before the command, */
						/* NULL: a new repository */
	const struct gitcfg_places *gx_places;	/* NULL: none */
};

int	gitcfg_parse(struct gitcfg *, const char *, size_t, char **);
void	gitcfg_clear(struct gitcfg *);
bool	gitcfg_inert(const char *, const char *);
size_t	gitcfg_held(const struct gitcfg_ctx *, const struct gitcfg *,
	    const struct gitcfg *, struct gitcfg *);
bool	gitcfg_dir_inert(int, const struct gitcfg_places *, char **);
char	*gitcfg_read_text(int, const char *, size_t *);
bool	gitcfg_has(const struct gitcfg *, const struct gitcfg_ent *);
bool	gitcfg_user_config(const char *);
void	gitcfg_places_clear(struct gitcfg_places *);

/*
 * gitjudge.c: the class of one key added to or removed from a config,
 * in its context.
 */
enum gitcfg_class gitjudge_class(const struct gitcfg_ctx *,
	    const struct gitcfg *, const struct gitcfg_ent *, bool, char **);
bool	gitjudge_held(enum gitcfg_class);
const char *gitjudge_name(enum gitcfg_class);
bool	gitjudge_section(const struct gitcfg *, const char *, const char *,
	    size_t);

/*
 * giturl.c: a URL or path git would fetch from or push to, judged:
 * a remote helper runs a program; loopback, a private address or a
 * path outside the places is held.
 */
enum gitcfg_class giturl_judge(const char *, const char *,
	    const struct gitcfg_places *, char **);
bool	giturl_path_in(const char *, const char *const *, size_t, char **);
char	*giturl_join(const char *, const char *);

/*
 * gitptr.c: a .git file and a commondir read as git reads them, to the
 * path git would use, or refused.
 */
#define GITPTR_FILE_MAX	(1 << 20)	/* git's own bound for a .git file */

int	gitptr_gitfile(const char *, size_t, char **, char **);
int	gitptr_commondir(const char *, size_t, char **, char **);
char	*gitptr_join(const char *, const char *);
int	gitptr_read(int, const char *, char **, char **);

#endif
