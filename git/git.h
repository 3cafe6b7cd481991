/*
 * git.h: what cordon knows of git's own files, a library with no process
 * in it: a config file read as git reads it (gitcfg.c), the pointer
 * files that name a git directory (gitptr.c).
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

int	gitcfg_parse(struct gitcfg *, const char *, size_t, char **);
void	gitcfg_clear(struct gitcfg *);
bool	gitcfg_inert(const char *, const char *);
size_t	gitcfg_held(const struct gitcfg *, const struct gitcfg *,
	    struct gitcfg *);
bool	gitcfg_dir_inert(int, char **);
char	*gitcfg_read_text(int, const char *, size_t *);
bool	gitcfg_has(const struct gitcfg *, const struct gitcfg_ent *);
bool	gitcfg_user_config(const char *);

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
