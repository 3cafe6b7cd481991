/*
 * gitptr.c: git's pointer files read as git reads them: a .git file
 * ("gitdir: PATH") and a git directory's commondir (PATH).  Git names a
 * git directory with them, and runs what that directory's config
 * names; the check after the run (guard/) follows them to judge it.
 *
 * Git strips only the line ends at the very end of the file (any run
 * of \n and \r) and keeps every other byte: "gitdir: a\n/../../b" is the
 * path "a\n/../../b", which leads where "a" does not.  A reader that
 * stops at the first line end judges the wrong folder.  So these take
 * the bytes as git does (git's setup.c, read_gitfile_gently and
 * get_common_dir_noenv, as of git 2.39), and refuse a path that holds
 * a control byte git would keep: no tool writes one, and a refusal is
 * never inert (the guard quarantines what it cannot follow).
 * tests/unit/test_gitptr.c and tests/fuzz/fuzz_gitptr.c compare this
 * reading with `git rev-parse` on the same files.
 *
 * The other pointers of a git directory are not followed: a linked
 * worktree's gitdir names its work tree and objects/info/alternates
 * other objects, never a config git reads or a program; a change to
 * either makes the git directory judged (guard.c's guard_code).
 */
#include <sys/types.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "git/git.h"
#include "lib/xmalloc.h"

/* The length of text without the \n and \r git strips at its end. */
static size_t
gitptr_strip(const char *text, size_t len)
{
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	return len;
}

/*
 * The path p (len bytes) as a string, or NULL with *cause set and errno
 * EILSEQ when it holds a control byte (NUL, a line end inside it, a
 * tab, DEL): git would keep it, or stop at a NUL, and no tool writes
 * one.
 */
static char *
gitptr_path(const char *p, size_t len, const char *name, char **cause)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) {
			xasprintf(cause, "its %s holds a control byte (0x%02x) "
			    "in the path, which git would keep", name,
			    (unsigned char)p[i]);
			errno = EILSEQ;
			return NULL;
		}
	return xstrndup(p, len);
}

/*
 * The path a .git file's text (len bytes) names, as git reads it: the
 * text must start with "gitdir: " (one space), and the rest, less the
 * line ends at its end, is the path, relative to the .git file's
 * folder unless absolute.  Returns 0 with *path set (caller frees), or
 * -1 with *cause set and errno: EINVAL, git would not read it either;
 * EILSEQ, it holds a control byte.
 */
int
gitptr_gitfile(const char *text, size_t len, char **path, char **cause)
{
	*path = NULL;
	if (len > GITPTR_FILE_MAX) {
		xasprintf(cause, "its .git file is larger than git reads (%d "
		    "bytes)", GITPTR_FILE_MAX);
		errno = EINVAL;
		return -1;
	}
	if (len < 8 || memcmp(text, "gitdir: ", 8) != 0) {
		*cause = xstrdup("its .git file does not start with "
		    "\"gitdir: \", so git would not read it");
		errno = EINVAL;
		return -1;
	}
	if ((len = gitptr_strip(text, len)) < 9) {
		*cause = xstrdup("its .git file names no path");
		errno = EINVAL;
		return -1;
	}
	if ((*path = gitptr_path(text + 8, len - 8, ".git file", cause)) ==
	    NULL)
		return -1;
	return 0;
}

/*
 * The path a commondir's text (len bytes) names, as git reads it: all
 * of it less the line ends at its end, relative to the git directory
 * unless absolute; empty, the git directory itself.  Returns 0 with
 * *path set, or -1 with *cause set and errno: EINVAL, an empty file
 * (git stops there); EILSEQ, a control byte.
 */
int
gitptr_commondir(const char *text, size_t len, char **path, char **cause)
{
	*path = NULL;
	if (len == 0 || len > GITPTR_FILE_MAX) {
		xasprintf(cause, "its commondir is %s", len == 0 ? "empty" :
		    "larger than git reads");
		errno = EINVAL;
		return -1;
	}
	len = gitptr_strip(text, len);
	if ((*path = gitptr_path(text, len, "commondir", cause)) == NULL)
		return -1;
	return 0;
}

/* Where path leads from the folder dir, as git joins them: dir/path. */
char *
gitptr_join(const char *dir, const char *path)
{
	char	*p;

	if (*path == '/')
		return xstrdup(path);
	xasprintf(&p, "%s/%s", dir, path);
	return p;
}

/*
 * Reads the pointer file name below dfd (".git": a .git file; else a
 * commondir), following no link, and gives the path it names as
 * above.  Returns 0 with *path set, or -1 with *cause set and errno:
 * the read's (EINVAL: not a regular file, or too large), or the
 * refusal's.
 */
int
gitptr_read(int dfd, const char *name, char **path, char **cause)
{
	char	*text;
	size_t	 len = 0;
	int	 rc, saved;

	*path = NULL;
	if ((text = gitcfg_read_text(dfd, name, &len)) == NULL) {
		saved = errno;
		xasprintf(cause, "its %s cannot be read (%s)", name,
		    saved == EINVAL ? "not a file, or too large" :
		    strerror(saved));
		errno = saved;
		return -1;
	}
	if (strcmp(name, ".git") == 0)
		rc = gitptr_gitfile(text, len, path, cause);
	else
		rc = gitptr_commondir(text, len, path, cause);
	saved = errno;
	free(text);
	errno = saved;
	return rc;
}
