/*
 * mount.h: the steps of the sandbox's mounts, shared by the files of
 * PID 1's filesystem view: mount_steps.c lists them from the plan (and
 * the host prints them for --dry-run), mount.c applies them.
 */
#ifndef CORDON_MOUNT_H
#define CORDON_MOUNT_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fs_op;
struct sandbox;
struct scratch_fds;

/* One step of the mount sequence, plan ops and the system's alike. */
enum step_kind {
	STEP_BIND_RW,		/* the source clone, as it was on the host */
	STEP_BIND_RO,
	STEP_HIDE_DIR,		/* empty tmpfs, mode 000, read-only */
	STEP_HIDE_FILE,		/* empty file, mode 000, read-only */
	STEP_PIN_LINK,		/* the symbolic link itself, covered */
	STEP_BLOCK_DIR,		/* empty tmpfs, readable, read-only */
	STEP_BLOCK_FILE,	/* empty file, readable, read-only */
	STEP_TMPFS,		/* empty writable tmpfs (/tmp, /run, ...) */
	STEP_SCRATCH		/* overlay: the clone below, a tmpfs above */
};

struct step {
	const char	*s_path;
	bool		 s_hooks;	/* SCRATCH: a git hooks folder */
	const char	*s_from;	/* BIND_*: the source, if not s_path */
	const char	*s_shown;	/* SCRATCH: its path in the summary */
	const char	*s_premake;	/* SCRATCH: a folder name made root's */
	enum step_kind	 s_kind;
	const char	*s_why;
	int		 s_src;		/* BIND_*: open_tree clone, else -1 */
	mode_t		 s_mode;	/* TMPFS: the root's mode */
	size_t		 s_depth;
	size_t		 s_order;	/* stable sort */
	bool		 s_covers;	/* a tmpfs we made, writable for now */
	const struct fs_op *s_op;	/* the plan's, or NULL (system) */
};

struct mounts {
	const struct sandbox *m_sb;
	struct step	*m_steps;
	size_t		 m_n;
	int		 m_empty;	/* a detached tmpfs: "hidden" (mode 0), */
					/* "blank" (mode 0444), both empty    */
	struct scratch_fds *m_scratch;	/* the scratch layers' folders */
	int		 m_scratch_tmp;	/* the tmpfs they share, or -1 */
};

/* mount_steps.c */
ssize_t	mount_steps_token(const struct sandbox *, const char *);
void	mount_steps(struct mounts *, const struct sandbox *);

#endif
