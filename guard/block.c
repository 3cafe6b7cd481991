/*
 * block.c: a protected path that does not exist yet (FS_BLOCK) needs
 * something to mount on: an empty folder or file (or one that reads
 * "./", fo_dot), made here for the run and removed after it.
 *
 * Runs in one workspace may overlap, and removing a folder that another
 * run has mounted over would lift its cover there; so every run holds a
 * shared lock on each protected folder it mounts, and the run that made
 * a placeholder removes it only when it can take the lock alone.
 *
 * Runs in: cordon run on the host, before the clone and after the run.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard/guard.h"
#include "lib/xmalloc.h"

#define BLOCK_DOT	"./\n"		/* as mount.c's cover */

/* Does the placeholder file fd (st) still hold what block_make wrote? */
static bool
block_as_made(int fd, const struct stat *st)
{
	char	 buf[sizeof(BLOCK_DOT)];

	if (st->st_size == 0)
		return true;
	return st->st_size == (off_t)sizeof(BLOCK_DOT) - 1 &&
	    pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(BLOCK_DOT) - 1 &&
	    memcmp(buf, BLOCK_DOT, sizeof(BLOCK_DOT) - 1) == 0;
}

/*
 * Removes a placeholder this run made, through the descriptor of its
 * folder opened before the run and only if the name still holds the
 * very folder made: the command may have swapped a folder above it for
 * a link, and rmdir by path would follow it.
 */
static void
block_remove(const struct blocks *b, size_t i, const char *path)
{
	struct stat	 made, now;
	const char	*name = strrchr(path, '/') + 1;

	if (b->b_up[i] == -1 || fstat(b->b_fd[i], &made) == -1 ||
	    fstatat(b->b_up[i], name, &now, AT_SYMLINK_NOFOLLOW) == -1 ||
	    made.st_dev != now.st_dev || made.st_ino != now.st_ino)
		return;
	/* A file someone on the host wrote meanwhile is theirs now. */
	if (S_ISDIR(now.st_mode))
		unlinkat(b->b_up[i], name, AT_REMOVEDIR);
	else if (block_as_made(b->b_fd[i], &now))
		unlinkat(b->b_up[i], name, 0);
}

/*
 * The folder a placeholder just made (open as fd) is in: for a folder,
 * its "..", so the very one; for a file, by name, checked to hold it.
 */
static int
block_up(const char *path, int fd)
{
	struct stat	 st, in;
	char		*dir;
	int		 up;

	if (fstat(fd, &st) == -1)
		return -1;
	if (S_ISDIR(st.st_mode))
		return openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	dir = xstrndup(path, (size_t)(strrchr(path, '/') - path));
	up = open(dir[0] != '\0' ? dir : "/", O_PATH | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	free(dir);
	if (up != -1 && (fstatat(up, strrchr(path, '/') + 1, &in,
	    AT_SYMLINK_NOFOLLOW) == -1 || in.st_dev != st.st_dev ||
	    in.st_ino != st.st_ino)) {
		close(up);
		up = -1;
	}
	return up;
}

/*
 * Makes the placeholder of op, a folder, an empty file, or one that
 * reads "./" (fo_dot: a git commondir, which git on the host reads as
 * the git directory itself during the run, as the sandbox does; an
 * empty one would stop it), unless it is there.  Returns 1 if made, 0
 * if there, -1 with errno set.
 */
static int
block_make(const struct fs_op *op)
{
	int	 fd, rc = 1;

	if (op->fo_dir)
		return mkdir(op->fo_path, 0755) == 0 ? 1 :
		    errno == EEXIST ? 0 : -1;
	if ((fd = open(op->fo_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1)
		return errno == EEXIST ? 0 : -1;
	if (op->fo_dot && write(fd, BLOCK_DOT, sizeof(BLOCK_DOT) - 1) !=
	    (ssize_t)sizeof(BLOCK_DOT) - 1) {
		unlink(op->fo_path);
		rc = -1;
	}
	close(fd);
	return rc;
}

/*
 * Makes the placeholders of the plan's FS_BLOCK ops and takes a shared
 * lock on each, and on each read-only folder it mounts; tells g of them,
 * so that the check after the run knows them for ours.  An op that
 * cannot be made, for want of rights, becomes FS_SKIP.  Returns 0, or
 * -1 with *cause set; block_cleanup() undoes it either way.
 */
int
block_prepare(struct fsplan *plan, struct blocks *b, struct guard *g,
    char **cause)
{
	struct fs_op	*op;
	size_t		 i;
	int		 fd, made;

	b->b_n = plan->fp_nops;
	b->b_fd = xreallocarray(NULL, b->b_n + 1, sizeof(*b->b_fd));
	b->b_up = xreallocarray(NULL, b->b_n + 1, sizeof(*b->b_up));
	b->b_made = xcalloc(b->b_n + 1, sizeof(*b->b_made));
	for (i = 0; i < b->b_n; i++)
		b->b_fd[i] = b->b_up[i] = -1;
	for (i = 0; i < b->b_n; i++) {
		op = &plan->fp_ops[i];
		if (op->fo_kind != FS_BLOCK &&
		    (op->fo_kind != FS_RO || !op->fo_dir))
			continue;
		if (op->fo_kind == FS_BLOCK) {
			if ((made = block_make(op)) == 1)
				b->b_made[i] = true;
			else if (made == -1 && (errno == EROFS ||
			    errno == EACCES)) {
				/*
				 * What we cannot make, the command (same user,
				 * fewer rights) cannot either: nothing to block.
				 */
				op->fo_kind = FS_SKIP;
				continue;
			} else if (made == -1) {
				xasprintf(cause, "%s (%s) does not exist, and "
				    "cordon needs an empty %s there for the run, "
				    "to stop the command from making it: %s",
				    op->fo_path, op->fo_why, op->fo_dir ?
				    "folder" : "file", strerror(errno));
				return -1;
			}
		}
		fd = open(op->fo_path, (op->fo_dir ? O_RDONLY | O_DIRECTORY :
		    O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
		if (fd != -1 && flock(fd, LOCK_SH) == 0)
			b->b_fd[i] = fd;
		else if (fd != -1)
			close(fd);
		/*
		 * Covered for the whole run, so not the command's: ours, or
		 * another run's placeholder in the same workspace.
		 */
		guard_know(g, b->b_fd[i]);
		if (b->b_made[i] && b->b_fd[i] != -1)
			b->b_up[i] = block_up(op->fo_path, b->b_fd[i]);
	}
	return 0;
}

/* After the run: removes what this run made, if no other run holds it. */
void
block_cleanup(struct fsplan *plan, struct blocks *b)
{
	size_t	 i;

	for (i = 0; i < b->b_n; i++) {
		if (b->b_made[i] && b->b_fd[i] != -1 &&
		    flock(b->b_fd[i], LOCK_EX | LOCK_NB) == 0)
			block_remove(b, i, plan->fp_ops[i].fo_path);
		if (b->b_fd[i] != -1)
			close(b->b_fd[i]);
		if (b->b_up[i] != -1)
			close(b->b_up[i]);
	}
	free(b->b_fd);
	free(b->b_up);
	free(b->b_made);
	memset(b, 0, sizeof(*b));
}
