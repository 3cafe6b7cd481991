/*
 * gitptr_diff.h: git's pointer files read by gitptr.c and by git itself,
 * compared; shared by tests/unit/test_gitptr.c (generated cases) and
 * tests/fuzz/fuzz_gitptr.c (the fuzzer's).  No cmocka here.
 *
 * A scratch layout holds git directories (HEAD, objects, refs) at
 * names a pointer may reach by odd paths (" g", "g ", "g\t", through a
 * folder "d\n"), empty decoys, and a linked git directory l (HEAD, and
 * the commondir under test).  One case writes w/.git (kind GPD_GITFILE)
 * or l/commondir (GPD_COMMONDIR), reads it as the guard does (gitptr_read,
 * gitptr_join, the kernel's resolution), and runs `git rev-parse
 * --absolute-git-dir --git-common-dir` in w with no config of the
 * user's (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null, an empty
 * HOME) and a ceiling above it.  They must agree: where the guard takes
 * a path, git takes the same git directory, or fails because there is
 * none; where the guard refuses a file git would not read (EINVAL),
 * git fails; a control byte the guard refuses (EILSEQ) whatever git
 * does, since that refusal quarantines.
 */
#ifndef CORDON_GITPTR_DIFF_H
#define CORDON_GITPTR_DIFF_H

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "git/git.h"
#include "lib/xmalloc.h"

#define GPD_GITFILE	0
#define GPD_COMMONDIR	1

struct gpd {
	char	 d_dir[PATH_MAX];	/* the layout, resolved */
	size_t	 d_refused;		/* cases refused for a control byte */
	size_t	 d_same;		/* cases read alike by both */
};

/* git directories, and decoys (a trailing '/'), below the layout. */
static const char *const gpd_gitdirs[] = {
	"g", "w/g", "w/g ", "w/ g", "w/g\t", "w/sub/g", "c", "l/cd", "g2",
};
static const char *const gpd_decoys[] = {
	"w/d/", "w/d\n/", "w/d\r/", "w/d\n/x/", "l/d\n/", "l/d/", "w/e/",
};

static inline int
gpd_write(const char *path, const char *text, size_t len)
{
	int	 fd;
	bool	 ok;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1)
		return -1;
	ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	return ok ? 0 : -1;
}

static inline int
gpd_mkdirs(const char *dir, const char *rel)
{
	char	*p, *s;
	int	 rc = 0;

	xasprintf(&p, "%s/%s", dir, rel);
	for (s = p + strlen(dir) + 1; rc == 0 && *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) == -1 && errno != EEXIST)
			rc = -1;
		*s = '/';
	}
	if (rc == 0 && mkdir(p, 0755) == -1 && errno != EEXIST)
		rc = -1;
	free(p);
	return rc;
}

/* A git directory's layout at dir/rel. */
static inline int
gpd_gitdir(const char *dir, const char *rel)
{
	char	*p;
	int	 rc;

	xasprintf(&p, "%s/objects", rel);
	rc = gpd_mkdirs(dir, p);
	free(p);
	xasprintf(&p, "%s/refs", rel);
	rc |= gpd_mkdirs(dir, p);
	free(p);
	xasprintf(&p, "%s/%s/HEAD", dir, rel);
	rc |= gpd_write(p, "ref: refs/heads/main\n", 21);
	free(p);
	return rc;
}

/* Makes the layout in a new scratch folder.  Returns 0 or -1. */
static inline int
gpd_setup(struct gpd *d)
{
	const char	*tmp;
	char		 tmpl[PATH_MAX], *p;
	size_t		 i;
	int		 rc = 0;

	memset(d, 0, sizeof(*d));
	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(tmpl, sizeof(tmpl), "%s/gitptr.XXXXXX", tmp);
	if (mkdtemp(tmpl) == NULL || realpath(tmpl, d->d_dir) == NULL)
		return -1;
	rc |= gpd_mkdirs(d->d_dir, "home");
	rc |= gpd_mkdirs(d->d_dir, "w");
	for (i = 0; i < sizeof(gpd_gitdirs) / sizeof(gpd_gitdirs[0]); i++)
		rc |= gpd_gitdir(d->d_dir, gpd_gitdirs[i]);
	for (i = 0; i < sizeof(gpd_decoys) / sizeof(gpd_decoys[0]); i++)
		rc |= gpd_mkdirs(d->d_dir, gpd_decoys[i]);
	rc |= gpd_mkdirs(d->d_dir, "l");
	xasprintf(&p, "%s/l/HEAD", d->d_dir);
	rc |= gpd_write(p, "ref: refs/heads/main\n", 21);
	free(p);
	return rc == 0 ? 0 : -1;
}

static inline int
gpd_rm_cb(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void
gpd_teardown(struct gpd *d)
{
	if (d->d_dir[0] != '\0')
		(void)nftw(d->d_dir, gpd_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * git rev-parse in dir/w: its two lines in out (size bytes).  Returns
 * 0, or -1 when git failed (no repository, or a file it refused).
 */
static inline int
gpd_git(const struct gpd *d, char *out, size_t size)
{
	char	*argv[8], *env[8];
	size_t	 n = 0, i;
	ssize_t	 r;
	posix_spawn_file_actions_t fa;
	pid_t	 pid;
	int	 p[2], status;

	argv[0] = xstrdup("git");
	argv[1] = xstrdup("-C");
	xasprintf(&argv[2], "%s/w", d->d_dir);
	argv[3] = xstrdup("rev-parse");
	argv[4] = xstrdup("--path-format=absolute");
	argv[5] = xstrdup("--absolute-git-dir");
	argv[6] = xstrdup("--git-common-dir");
	argv[7] = NULL;
	env[0] = xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
	xasprintf(&env[1], "HOME=%s/home", d->d_dir);
	env[2] = xstrdup("GIT_CONFIG_NOSYSTEM=1");
	env[3] = xstrdup("GIT_CONFIG_GLOBAL=/dev/null");
	xasprintf(&env[4], "GIT_CEILING_DIRECTORIES=%s", d->d_dir);
	env[5] = xstrdup("LC_ALL=C");
	env[6] = xstrdup("GIT_TERMINAL_PROMPT=0");
	env[7] = NULL;
	/* posix_spawn: no copy of a fuzzer's large address space. */
	if (pipe2(p, O_CLOEXEC) == -1 ||
	    posix_spawn_file_actions_init(&fa) != 0 ||
	    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY,
	    0) != 0 || posix_spawn_file_actions_addopen(&fa, 2, "/dev/null",
	    O_WRONLY, 0) != 0 || posix_spawn_file_actions_adddup2(&fa, p[1],
	    1) != 0 || posix_spawnp(&pid, "git", &fa, NULL, argv, env) != 0)
		abort();
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	while (n < size - 1 && (r = read(p[0], out + n, size - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = '\0';
	close(p[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	for (i = 0; i < 7; i++) {
		free(argv[i]);
		free(env[i]);
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Where path leads, resolved by the kernel as the guard does, or NULL. */
static inline char *
gpd_resolve(const char *path)
{
	char	 proc[64], real[PATH_MAX];
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return NULL;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, real, sizeof(real) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	real[n] = '\0';
	return xstrdup(real);
}

/* Does the folder real hold git's layout (objects, refs; HEAD if head)? */
static inline bool
gpd_layout(const char *real, bool head)
{
	char	*p;
	bool	 ok;

	xasprintf(&p, "%s/objects", real);
	ok = access(p, X_OK) == 0;
	free(p);
	xasprintf(&p, "%s/refs", real);
	ok = ok && access(p, X_OK) == 0;
	free(p);
	if (head) {
		xasprintf(&p, "%s/HEAD", real);
		ok = ok && access(p, F_OK) == 0;
		free(p);
	}
	return ok;
}

/*
 * One case: text (len bytes, kind GPD_*) as w/.git or l/commondir.
 * Returns NULL when the guard's reading and git's agree, or what
 * differs (caller frees).
 */
static inline char *
gpd_case(struct gpd *d, int kind, const char *text, size_t len)
{
	char	*file, *folder, *path = NULL, *cause = NULL, *want = NULL;
	char	*real = NULL, *gitdir = NULL, *diff = NULL, out[2 * PATH_MAX];
	int	 dfd, rc, saved, git;
	bool	 ok;

	xasprintf(&file, "%s/w/.git", d->d_dir);
	if (kind == GPD_GITFILE)
		rc = gpd_write(file, text, len);
	else
		rc = gpd_write(file, "gitdir: ../l\n", 13);
	free(file);
	xasprintf(&file, "%s/l/commondir", d->d_dir);
	if (kind == GPD_COMMONDIR)
		rc |= gpd_write(file, text, len);
	else if (unlink(file) == -1 && errno != ENOENT)
		rc = -1;
	free(file);
	if (rc == -1)
		abort();
	xasprintf(&folder, "%s/%s", d->d_dir, kind == GPD_GITFILE ? "w" : "l");
	if ((dfd = open(folder, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		abort();
	rc = gitptr_read(dfd, kind == GPD_GITFILE ? ".git" : "commondir",
	    &path, &cause);
	saved = errno;
	close(dfd);
	git = gpd_git(d, out, sizeof(out));
	if (rc == -1 && saved == EILSEQ) {
		d->d_refused++;
		goto out;
	}
	if (rc == -1) {
		if (git == 0)
			xasprintf(&diff, "the guard refused (%s), git read it "
			    "as: %s", cause, out);
		goto out;
	}
	want = gitptr_join(folder, path);
	real = gpd_resolve(want);
	if (kind == GPD_GITFILE) {
		ok = real != NULL && gpd_layout(real, true);
		if (ok)
			xasprintf(&gitdir, "%s\n%s\n", real, real);
	} else {
		ok = real != NULL && gpd_layout(real, false);
		if (ok)
			xasprintf(&gitdir, "%s/l\n%s\n", d->d_dir, real);
	}
	if (!ok && git == 0)
		xasprintf(&diff, "the guard's path %s is no git directory, "
		    "git read: %s", want, out);
	else if (ok && git == -1)
		xasprintf(&diff, "the guard's path %s is a git directory, "
		    "git failed", want);
	else if (ok && strcmp(out, gitdir) != 0)
		xasprintf(&diff, "the guard's path %s, git's %s", gitdir, out);
out:
	if (diff == NULL && !(rc == -1 && saved == EILSEQ))
		d->d_same++;
	free(folder);
	free(path);
	free(cause);
	free(want);
	free(real);
	free(gitdir);
	return diff;
}

#endif
