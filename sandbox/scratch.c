/*
 * scratch.c: what the command wrote into the scratch layer, listed when
 * it ends.
 *
 * The home folder, when no writable root covers it, is an overlay in the
 * sandbox (mount.c), and so are apt's folders in a run as root: the
 * host's home below, read as it is; above, a
 * folder on a tmpfs of the run's own that takes every write, so a tool
 * that fills ~/.npm or ~/.cache succeeds and the host's home stays as it
 * was.  The layer goes with the sandbox.  Before it goes, PID 1 walks it
 * and tells cordon run what was written where (files, bytes, removals),
 * grouped by the folder a user would name in --keep: ~/.npm, and one
 * level deeper under ~/.cache, ~/.config, ~/.local and the toolchains'
 * ~/go, ~/.cargo, ~/.gradle and ~/.m2 (~/go/pkg, ~/.cargo/registry).
 *
 * Runs in: the sandbox's PID 1, when the command ends.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/log.h"

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sandbox/sandbox.h"

#define SCRATCH_WALK_MAX	200000	/* entries walked at most */
#define SCRATCH_GROUPS_MAX	32	/* folders listed at most */

struct scratch_group {
	char		*sg_name;	/* relative to the home: ".npm" */
	uint64_t	 sg_files;
	uint64_t	 sg_bytes;
	uint64_t	 sg_removed;	/* whiteouts: host files made absent */
	bool		 sg_folder;	/* the group is a folder, not a file */
	bool		 sg_logs;	/* ~/.npm: held npm's _logs */
	size_t		 sg_layer;	/* in scratch_fds */
};

struct scratch_walk {
	struct scratch_group	 sw_v[SCRATCH_GROUPS_MAX];
	size_t			 sw_n;
	size_t			 sw_seen;
	size_t			 sw_layer;	/* the one being walked */
	bool			 sw_partial;	/* stopped at a bound */
};

/* Folders whose children are what a user would keep, one by one. */
static bool
scratch_deeper(const char *name)
{
	static const char *const deeper[] = {
		".cache", ".config", ".local", ".local/share",
		/* toolchains: caches beside what a user installs (go/bin) */
		"go", ".cargo", ".gradle", ".m2"
	};
	size_t	 i;

	for (i = 0; i < nitems(deeper); i++)
		if (strcmp(name, deeper[i]) == 0)
			return true;
	return false;
}

static struct scratch_group *
scratch_group(struct scratch_walk *w, const char *name)
{
	size_t	 i;

	for (i = 0; i < w->sw_n; i++)
		if (w->sw_v[i].sg_layer == w->sw_layer &&
		    strcmp(w->sw_v[i].sg_name, name) == 0)
			return &w->sw_v[i];
	if (w->sw_n == SCRATCH_GROUPS_MAX) {
		w->sw_partial = true;
		return NULL;
	}
	w->sw_v[w->sw_n].sg_layer = w->sw_layer;
	w->sw_v[w->sw_n].sg_name = xstrdup(name);
	return &w->sw_v[w->sw_n++];
}

/*
 * Counts what is below the folder dfd (named rel in the home) into g, or,
 * while g is NULL, into a group per child.  Closes dfd.
 */
static void
scratch_dir(struct scratch_walk *w, int dfd, const char *rel,
    struct scratch_group *g)
{
	DIR			*d;
	struct dirent		*de;
	struct stat		 st;
	struct scratch_group	*cg;
	char			*crel;
	int			 cfd;

	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (++w->sw_seen > SCRATCH_WALK_MAX) {
			w->sw_partial = true;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    -1)
			continue;
		if (rel[0] == '\0')
			crel = xstrdup(de->d_name);
		else
			xasprintf(&crel, "%s/%s", rel, de->d_name);
		cg = g;
		if (cg == NULL && !(S_ISDIR(st.st_mode) &&
		    scratch_deeper(crel)) &&
		    (cg = scratch_group(w, crel)) != NULL)
			cg->sg_folder = S_ISDIR(st.st_mode);
		/* npm points at its log there ("A complete log ..."). */
		if (cg != NULL && S_ISDIR(st.st_mode) &&
		    strcmp(crel, ".npm/_logs") == 0)
			cg->sg_logs = true;
		if (S_ISDIR(st.st_mode)) {
			if ((cfd = openat(dirfd(d), de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) != -1 &&
			    (cg != NULL || g == NULL))
				scratch_dir(w, cfd, crel, cg);
			else if (cfd != -1)
				close(cfd);
		} else if (cg != NULL && S_ISCHR(st.st_mode) &&
		    st.st_rdev == makedev(0, 0))
			cg->sg_removed++;
		else if (cg != NULL) {
			cg->sg_files++;
			cg->sg_bytes += (uint64_t)st.st_size;
		}
		free(crel);
	}
	closedir(d);
}

static int
scratch_cmp(const void *a0, const void *b0)
{
	const struct scratch_group	*a = a0, *b = b0;

	if (a->sg_bytes != b->sg_bytes)
		return a->sg_bytes > b->sg_bytes ? -1 : 1;
	return strcmp(a->sg_name, b->sg_name);
}

/*
 * What the scratch layers hold (each one's upper folder is "upper" in its
 * tmpfs): {"written": [{"path": "~/.npm", "files", "bytes", "removed",
 * "folder", "hooks", "logs"}, ...], "partial": bool}, biggest first; "logs":
 * the group held npm's _logs folder.  Folders made only to
 * hold a deeper one count with it; a group of folders alone is left out.
 */
json_t *
scratch_list(const struct scratch_fds *sf)
{
	struct scratch_walk	 w;
	json_t			*a;
	char			*name;
	size_t			 i;
	int			 fd;

	memset(&w, 0, sizeof(w));
	for (w.sw_layer = 0; w.sw_layer < sf->sf_n; w.sw_layer++)
		if ((fd = openat(sf->sf_fd[w.sw_layer], "upper", O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) != -1)
			scratch_dir(&w, fd, "", NULL);
	qsort(w.sw_v, w.sw_n, sizeof(w.sw_v[0]), scratch_cmp);
	a = json_array();
	for (i = 0; i < w.sw_n; i++) {
		/* Folders alone (a mount point's, made empty) lose nothing. */
		if (w.sw_v[i].sg_files == 0 && w.sw_v[i].sg_removed == 0) {
			free(w.sw_v[i].sg_name);
			continue;
		}
		/* The command chose the names: escaped, as host names are. */
		name = str_escape(w.sw_v[i].sg_name,
		    strlen(w.sw_v[i].sg_name));
		json_array_append_new(a, json_pack("{s:s++, s:I, s:I, s:I, "
		    "s:b, s:b, s:b}", "path", sf->sf_shown[w.sw_v[i].sg_layer],
		    strcmp(sf->sf_shown[w.sw_v[i].sg_layer], "~/") == 0 ?
		    "" : "/", name,
		    "files", (json_int_t)w.sw_v[i].sg_files,
		    "bytes", (json_int_t)w.sw_v[i].sg_bytes,
		    "removed", (json_int_t)w.sw_v[i].sg_removed,
		    "folder", w.sw_v[i].sg_folder,
		    "hooks", sf->sf_hooks[w.sw_v[i].sg_layer],
		    "logs", w.sw_v[i].sg_logs));
		free(name);
		free(w.sw_v[i].sg_name);
	}
	return json_pack("{s:o, s:b}", "written", a, "partial", w.sw_partial);
}

/*
 * Which of the n folders dirs have a mount strictly below them (below[i]),
 * from one read of the mount table: an overlay's lower layer is one
 * filesystem, and would show the folder beneath such a mount, not the
 * mount (a container's /etc/hosts, a /var/lib on a disk of its own).
 * Unreadable, every folder counts as having one.
 */
static void
scratch_submounts(const char *const *dirs, size_t n, bool *below)
{
	FILE	*f;
	char	*line = NULL, *mp, *s, *d;
	size_t	 cap = 0, i;
	int	 field;

	for (i = 0; i < n; i++)
		below[i] = true;
	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return;
	for (i = 0; i < n; i++)
		below[i] = false;
	while (getline(&line, &cap, f) != -1) {
		/* The fifth field, with spaces and the like as \ooo. */
		for (field = 1, mp = line; field < 5 && mp != NULL; field++)
			if ((mp = strchr(mp, ' ')) != NULL)
				mp++;
		if (mp == NULL || (s = strchr(mp, ' ')) == NULL)
			continue;
		*s = '\0';
		for (s = d = mp; *s != '\0'; d++) {
			if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
			    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
			    s[3] <= '7') {
				*d = (char)((s[1] - '0') << 6 |
				    (s[2] - '0') << 3 | (s[3] - '0'));
				s += 4;
			} else
				*d = *s++;
		}
		*d = '\0';
		for (i = 0; i < n; i++)
			below[i] = below[i] || (strcmp(mp, dirs[i]) != 0 &&
			    path_is_below(mp, dirs[i]));
	}
	free(line);
	fclose(f);
}

/*
 * For root, the system's folders that may be scratch layers, before the
 * plan (which keeps what protects below them, fsorder_keep); not one
 * with a mount below it (scratch_submounts).  Fills v (at most 4) and *n.
 */
void
scratch_system_dirs(const char **v, size_t *n)
{
	static const char *const sys[] = {
		"/usr", "/etc", "/opt", "/var"
	};
	struct stat	 st;
	bool		 below[nitems(sys)];
	size_t		 i;

	*n = 0;
	if (getuid() != 0)
		return;
	scratch_submounts(sys, nitems(sys), below);
	for (i = 0; i < nitems(sys); i++) {
		if (lstat(sys[i], &st) == -1 || !S_ISDIR(st.st_mode))
			continue;
		if (below[i]) {
			log_info("run: %s has a mount below it: no scratch "
			    "layer (writes there fail, read-only)", sys[i]);
			continue;
		}
		v[(*n)++] = sys[i];
	}
}

/*
 * Of the system's folders that may be (scratch_system_dirs), those that
 * are to be scratch layers, so that an install as root (pip, make
 * install) succeeds into the run and the host's stay as they were: each
 * one that no op of the plan covers whole (an op below it goes on top).
 * Fills v (at most 4) and *n.
 */
void
scratch_system(const struct fsplan *plan, const char *const *cand,
    size_t ncand, const char **v, size_t *n)
{
	const struct fs_op	*op;
	size_t			 i, j;

	*n = 0;
	for (i = 0; i < ncand; i++) {
		for (j = 0; j < plan->fp_nops; j++) {
			op = &plan->fp_ops[j];
			if (op->fo_kind != FS_SKIP &&
			    path_is_below(cand[i], op->fo_path))
				break;
		}
		if (j == plan->fp_nops)
			v[(*n)++] = cand[i];
	}
}
