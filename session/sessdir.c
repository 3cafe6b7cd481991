/*
 * sessdir.c: the folder of the user's sessions, where each keeper's
 * socket (ID.sock), log (ID.log), description (ID.json), lock (ID.lock,
 * held while the keeper lives) and, once it ended, the reason (ID.end)
 * are, with the names (NAME.name, holding the id, locked by its keeper):
 * $XDG_RUNTIME_DIR/cordon/sessions, which systemd makes the user's alone
 * and empties at logout; without it (a service, a container, su), in
 * the user's home, ~/.cache/cordon/sessions, which no other user can
 * make first as anyone can in /tmp; and only when the home is not the
 * user's either, /tmp/cordon-UID/sessions.  Every folder of it is the
 * user's and entered by no one else, and its parent is written by no
 * one else (checked, not assumed); a symbolic link is refused.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "session/sess.h"

/*
 * Makes path (when create) and checks it: a folder, not a link, the
 * user's, mode 0700 or stricter.  Returns 0, or -1 with cause written.
 */
static int
sessdir_check(const char *path, bool create, char *cause, size_t clen)
{
	struct stat	 st;

	if (create && mkdir(path, 0700) == -1 && errno != EEXIST) {
		snprintf(cause, clen, "making %s: %s", path, strerror(errno));
		return -1;
	}
	if (lstat(path, &st) == -1) {
		snprintf(cause, clen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077) != 0) {
		snprintf(cause, clen, "%s is not a folder of yours that only "
		    "you can enter (owner %u, mode %03o); a session's socket "
		    "is not kept there\nhint: %s", path,
		    (unsigned int)st.st_uid, (unsigned int)st.st_mode & 0777,
		    st.st_uid == getuid() ? "it is yours: remove it, or make it "
		    "a folder of mode 700" : "another user "
		    "made it: set XDG_RUNTIME_DIR, or HOME, to a folder of "
		    "yours that no one else may write");
		return -1;
	}
	return 0;
}

/*
 * Whether path is a folder no other user may change: the user's or
 * root's, written by no one else (or sticky, as /tmp, where no one else
 * may rename what is the user's).  A link is followed (a home or a
 * ~/.cache on another disk): only its owner could change it.
 */
static bool
sessdir_parent_ok(const char *path)
{
	struct stat	 st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	    (st.st_uid == getuid() || st.st_uid == 0) &&
	    ((st.st_mode & 022) == 0 || (st.st_mode & S_ISVTX) != 0);
}

/*
 * The folder for the sessions when XDG_RUNTIME_DIR is not the user's,
 * into top (256 bytes): ~/.cache/cordon when the home ($HOME) is a
 * folder of the user's that no one else writes, else /tmp/cordon-UID.
 * In /tmp any user may make that name first; in the home no one else
 * can.  A home too long for a socket's path (108 bytes) is passed over.
 */
static void
sessdir_fallback(char *top)
{
	const char	*home = getenv("HOME");
	struct stat	 st;

	if (home != NULL && home[0] == '/' && strlen(home) <= 60 &&
	    stat(home, &st) == 0 && st.st_uid == getuid() &&
	    sessdir_parent_ok(home))
		snprintf(top, 256, "%s%s.cache/cordon", home,
		    home[strlen(home) - 1] == '/' ? "" : "/");
	else
		snprintf(top, 256, "/tmp/cordon-%u", (unsigned int)getuid());
}

/*
 * $XDG_RUNTIME_DIR/cordon into top (256 bytes) when that folder is the
 * user's; false, top untouched, when not.
 */
static bool
sessdir_xdg(char *top)
{
	const char	*xdg = getenv("XDG_RUNTIME_DIR");
	struct stat	 st;

	if (xdg == NULL || xdg[0] != '/' || strlen(xdg) >= 128 ||
	    stat(xdg, &st) == -1 || st.st_uid != getuid())
		return false;
	snprintf(top, 256, "%s/cordon", xdg);
	return true;
}

/*
 * The folder that holds the sessions' folder into top (256 bytes):
 * sessdir_xdg's, else sessdir_fallback's.  Neither made nor checked.
 */
void
sessdir_top(char *top)
{
	if (!sessdir_xdg(top))
		sessdir_fallback(top);
}

/*
 * Every place a client of this user's may look for the sessions, as its
 * environment says, into tops (256 bytes each): sessdir_top's first,
 * then sessdir_fallback's when that is another.  A client without
 * XDG_RUNTIME_DIR (a service, a harness started with a clean
 * environment) uses the second while a login shell uses the first.
 * The fallback is looked at once.  Returns how many: 1 or 2.
 */
int
sessdir_tops(char tops[][256])
{
	sessdir_fallback(tops[1]);
	if (!sessdir_xdg(tops[0]))
		memcpy(tops[0], tops[1], sizeof(tops[1]));
	return strcmp(tops[0], tops[1]) == 0 ? 1 : 2;
}

/*
 * The sessions' folder into buf: made when create, checked always.
 * Returns 0, or -1 with the reason (and a hint line) in cause.
 */
int
sessdir_path(char *buf, size_t len, bool create, char *cause, size_t clen)
{
	char		 top[256];

	sessdir_top(top);
	return sessdir_in(top, buf, len, create, cause, clen);
}

/*
 * The same, in top (one of sessdir_tops).  Top's parent (~/.cache, made
 * when create) must be one no other user may change, or they could
 * rename top and make their own.
 */
int
sessdir_in(const char *top, char *buf, size_t len, bool create, char *cause,
    size_t clen)
{
	char	 parent[256];

	snprintf(parent, sizeof(parent), "%.*s", (int)(strrchr(top, '/') -
	    top), top);
	if (create && parent[0] != '\0')
		(void)mkdir(parent, 0700);
	if (parent[0] != '\0' && !sessdir_parent_ok(parent)) {
		snprintf(cause, clen, "%s is not a folder that only you or "
		    "root may change; a session's socket is not kept below it"
		    "\nhint: it must be yours, written by no one else (chmod "
		    "go-w), or set XDG_RUNTIME_DIR to a folder of yours",
		    parent);
		return -1;
	}
	if (sessdir_check(top, create, cause, clen) == -1)
		return -1;
	if ((size_t)snprintf(buf, len, "%s/sessions", top) >= len) {
		snprintf(cause, clen, "%s: too long", top);
		return -1;
	}
	return sessdir_check(buf, create, cause, clen);
}

/* dir/id.suffix into buf; -1 if it does not fit. */
int
sessdir_file(char *buf, size_t len, const char *dir, const char *id,
    const char *suffix)
{
	return (size_t)snprintf(buf, len, "%s/%s.%s", dir, id, suffix) >= len ?
	    -1 : 0;
}

/*
 * At most max bytes of dir/name.sfx into buf (max + 1 bytes, then
 * terminated).  Returns how many it read, or -1 if no such file opens.
 */
static ssize_t
sessdir_read(const char *dir, const char *name, const char *sfx, char *buf,
    size_t max)
{
	char	 path[PATH_MAX];
	ssize_t	 n;
	int	 fd;

	buf[0] = '\0';
	if (sessdir_file(path, sizeof(path), dir, name, sfx) == -1 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	n = read(fd, buf, max);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/*
 * The id that the name NAME leads to (dir/NAME.name, written by its
 * keeper), into id (SESS_ID_LEN + 1 bytes, terminated).  Returns how
 * many bytes it read (SESS_ID_LEN for an id), or -1 with no such file.
 */
ssize_t
sessdir_name_id(const char *dir, const char *name, char *id)
{
	return sessdir_read(dir, name, "name", id, SESS_ID_LEN);
}

/*
 * The first line of the reason session id ended (dir/ID.end) into buf.
 * Returns how many bytes the file gave (0 if none could be read), or -1
 * if no such file opens.
 */
ssize_t
sessdir_reason(const char *dir, const char *id, char *buf, size_t len)
{
	ssize_t	 n;

	if ((n = sessdir_read(dir, id, "end", buf, len - 1)) == -1)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return n > 0 ? n : 0;
}

/*
 * What session id's lock (ID.lock) says of its keeper, which holds it
 * until its process ends (the kernel releases it then, whatever killed
 * it): KEEPER_LIVES while held, KEEPER_DIED when there and free, and
 * KEEPER_NONE with no lock (never started, or ended and cleaned up).
 */
enum keeper_state
sessdir_keeper(const char *dir, const char *id)
{
	char			 path[PATH_MAX];
	int			 fd;
	enum keeper_state	 st;

	if (sessdir_file(path, sizeof(path), dir, id, "lock") == -1 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return KEEPER_NONE;
	st = flock(fd, LOCK_EX | LOCK_NB) == 0 ? KEEPER_DIED : KEEPER_LIVES;
	close(fd);
	return st;
}

/* Whether dfd/name is a file last changed before t. */
static bool
sessdir_older(int dfd, const char *name, time_t t)
{
	struct stat	 st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode) && st.st_mtime < t;
}

/*
 * The lock of the names in dir (flock of the folder itself), held while
 * one is claimed or removed: a descriptor to close, or -1.
 */
static int
sessdir_names_lock(const char *dir)
{
	int	 dfd;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	while (flock(dfd, LOCK_EX) == -1)
		if (errno != EINTR) {
			close(dfd);
			return -1;
		}
	return dfd;
}

/*
 * Claims the name NAME for session id in dir: dir/NAME.name, holding
 * id, locked (flock) for as long as the descriptor returned is open in
 * any process; the keeper keeps it to its end, when the kernel lets go.
 * The names' lock makes the claims one at a time: a name whose file is
 * locked is refused, one whose session ended (its file unlocked) taken
 * over.  The file is whole before it has the name (ID.claim: written,
 * locked, then renamed), so a start that lost reads the winner's id.
 * Returns the descriptor; -1 with errno EBUSY and the holder's id in
 * holder (SESS_ID_LEN + 1 bytes; "" if unreadable), or another errno.
 */
int
sessdir_name_claim(const char *dir, const char *name, const char *id,
    char *holder)
{
	char	 path[PATH_MAX], tmp[PATH_MAX];
	ssize_t	 n;
	int	 dfd, old, fd = -1, err = 0;

	holder[0] = '\0';
	if (sessdir_file(path, sizeof(path), dir, name, "name") == -1 ||
	    sessdir_file(tmp, sizeof(tmp), dir, id, "claim") == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((dfd = sessdir_names_lock(dir)) == -1)
		return -1;
	if ((old = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) != -1) {
		if (flock(old, LOCK_SH | LOCK_NB) == -1) {
			err = errno == EWOULDBLOCK ? EBUSY : errno;
			n = pread(old, holder, SESS_ID_LEN, 0);
			holder[n == SESS_ID_LEN ? n : 0] = '\0';
		}
		close(old);
	} else if (errno != ENOENT)
		err = errno;
	errno = 0;
	if (err == 0 && ((fd = open(tmp, O_RDWR | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0600)) == -1 || flock(fd, LOCK_EX |
	    LOCK_NB) == -1 || write(fd, id, SESS_ID_LEN) != SESS_ID_LEN ||
	    rename(tmp, path) == -1))
		err = errno != 0 ? errno : EIO;
	if (err != 0 && fd != -1) {
		unlink(tmp);
		close(fd);
		fd = -1;
	}
	close(dfd);
	errno = err;
	return fd;
}

/*
 * Removes dir/NAME.name if it still leads to id and no keeper holds it
 * (one claimed it again since).  Returns whether it was removed.
 */
bool
sessdir_name_drop(const char *dir, const char *name, const char *id)
{
	char	 path[PATH_MAX], got[SESS_ID_LEN + 1];
	bool	 gone = false;
	int	 dfd, fd;

	if (sessdir_file(path, sizeof(path), dir, name, "name") == -1 ||
	    (dfd = sessdir_names_lock(dir)) == -1)
		return false;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) != -1) {
		if (flock(fd, LOCK_SH | LOCK_NB) == 0 &&
		    pread(fd, got, SESS_ID_LEN, 0) == SESS_ID_LEN &&
		    memcmp(got, id, SESS_ID_LEN) == 0)
			gone = unlink(path) == 0;
		close(fd);
	}
	close(dfd);
	return gone;
}

/*
 * Whether s is a session's name: 1 to SESS_NAME_MAX letters, digits,
 * '-', '_', '+' or '@', not beginning with '-', and not an id.  It is a
 * file's name and a word of session list's lines.
 */
bool
sessdir_name_ok(const char *s)
{
	size_t	 i;

	if (s[0] == '\0' || s[0] == '-' || strlen(s) > SESS_NAME_MAX ||
	    sessdir_id_ok(s))
		return false;
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		    s[i] == '_' || s[i] == '+' || s[i] == '@'))
			return false;
	return true;
}

/*
 * A name (file: NAME.name) whose session left nothing (no ID.json, ID.lock
 * or ID.end), last changed before t: removed.  Returns whether it was.
 */
static bool
sessdir_prune_name(const char *dir, int dfd, const char *file, time_t t)
{
	static const char *const	 sfx[] = { "json", "lock", "end" };
	char				 id[SESS_ID_LEN + 1], f[SESS_ID_LEN + 6];
	char				 name[NAME_MAX + 1];
	size_t				 i;

	snprintf(name, sizeof(name), "%.*s", (int)(strlen(file) - 5), file);
	if (!sessdir_older(dfd, file, t) || sessdir_name_id(dir, name, id) !=
	    SESS_ID_LEN || !sessdir_id_ok(id))
		return false;
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(f, sizeof(f), "%s.%s", id, sfx[i]);
		if (faccessat(dfd, f, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			return false;
	}
	return sessdir_name_drop(dir, name, id);
}

/*
 * What sessions that ended before t left in dir: each one's reason
 * (ID.end, by its time) and log, and names whose session left nothing.
 * A folder that an agent fills with a session a task would otherwise
 * only grow until a reboot.  A keeper that holds its lock keeps all.
 * Returns how many sessions' files it removed.
 */
size_t
sessdir_prune(const char *dir, time_t t)
{
	struct dirent	*de;
	DIR		*d;
	char		 id[SESS_ID_LEN + 1], f[SESS_ID_LEN + 6];
	size_t		 n = 0, len;
	int		 dfd;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return 0;
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len > 5 && strcmp(de->d_name + len - 5, ".name") == 0) {
			(void)sessdir_prune_name(dir, dfd, de->d_name, t);
			continue;
		}
		if (len != SESS_ID_LEN + 4 ||
		    strcmp(de->d_name + SESS_ID_LEN, ".end") != 0)
			continue;
		snprintf(id, sizeof(id), "%.*s", SESS_ID_LEN, de->d_name);
		if (!sessdir_id_ok(id) || !sessdir_older(dfd, de->d_name, t) ||
		    sessdir_keeper(dir, id) == KEEPER_LIVES)
			continue;
		snprintf(f, sizeof(f), "%s.log", id);
		(void)unlinkat(dfd, f, 0);
		if (unlinkat(dfd, de->d_name, 0) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* Whether s is a session's id: SESS_ID_LEN hex digits. */
bool
sessdir_id_ok(const char *s)
{
	size_t	 i;

	for (i = 0; i < SESS_ID_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[i] == '\0';
}
