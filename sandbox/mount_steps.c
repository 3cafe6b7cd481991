/*
 * mount_steps.c: the sandbox's mounts as a list of steps, made from the
 * plan (fsplan.c) and the system's own covers, by depth, most specific
 * last.  PID 1 makes the list and mount.c applies it; cordon run, on the
 * host, makes the same list for --dry-run (mount_steps_print).  Nothing here
 * mounts or changes a file.
 *
 * Runs in: the sandbox's PID 1 (mount.c), and cordon run on the
 *   host for --dry-run.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git/git.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "sandbox/sandbox.h"

#include "sandbox/mount.h"

/*
 * The tools' token file whose copy covers the plan's hiding of path
 * (secrets.c, tf_bound), as its index in r_secrets; -1 if none.
 */
ssize_t
mount_steps_token(const struct sandbox *sb, const char *path)
{
	size_t	 i;

	for (i = 0; i < sb->sb_view.sv_nsecrets; i++)
		if (sb->sb_view.sv_secrets[i].tf_bound &&
		    strcmp(sb->sb_view.sv_secrets[i].tf_path, path) == 0)
			return (ssize_t)i;
	return -1;
}

static size_t
mount_depth(const char *path)
{
	size_t	 n = 0;

	for (; *path != '\0'; path++)
		if (*path == '/' && path[1] != '\0')
			n++;
	return n;
}

static int
mount_cmp(const void *a, const void *b)
{
	const struct step	*x = a, *y = b;

	if (x->s_depth != y->s_depth)
		return x->s_depth < y->s_depth ? -1 : 1;
	return x->s_order < y->s_order ? -1 : x->s_order > y->s_order;
}

/* Adds a step. */
static void
mount_add(struct mounts *m, const char *path, enum step_kind kind,
    const char *why, mode_t mode)
{
	struct step	*s;

	m->m_steps = xreallocarray(m->m_steps, m->m_n + 1,
	    sizeof(*m->m_steps));
	s = &m->m_steps[m->m_n];
	memset(s, 0, sizeof(*s));
	s->s_path = path;
	s->s_kind = kind;
	s->s_why = why;
	s->s_src = -1;
	s->s_mode = mode;
	s->s_depth = mount_depth(path);
	s->s_order = m->m_n++;
}

/* Is path a folder (not a link) on the host? */
static bool
mount_is_dir(const char *path)
{
	struct stat	 st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Maps a plan op to a step, and the mode of a tmpfs it makes. */
static enum step_kind
mount_op_step(const struct fs_op *op, mode_t *mode)
{
	*mode = 0;
	switch (op->fo_kind) {
	case FS_RW:
	case FS_PIN_DIR:
		return STEP_BIND_RW;
	case FS_RO:
		return STEP_BIND_RO;
	case FS_HIDE_FILE:
		return STEP_HIDE_FILE;
	case FS_PIN_LINK:
		return STEP_PIN_LINK;
	case FS_BLOCK:
		*mode = 0555;
		return op->fo_dir ? STEP_BLOCK_DIR : STEP_BLOCK_FILE;
	case FS_SKIP:	/* mount_steps leaves it out */
	case FS_HIDE_DIR:
		/* Folders kept writable below: reachable, not listable. */
		*mode = op->fo_nkeep > 0 ? 0111 : 0;
		break;
	}
	return STEP_HIDE_DIR;
}

static const char *const step_names[] = {
	"bind, writable", "bind, read-only", "hidden (empty, unreadable)",
	"hidden (empty, unreadable)", "link pinned (covered)",
	"blocked (empty folder, read-only)", "blocked (empty file, read-only)",
	"tmpfs, writable", "scratch layer: writes succeed, discarded at exit"
};

/*
 * The host sockets filesystem.unix_sockets lists, bound read-only where
 * they are on the host, so a client that looks before it connects finds
 * them (its connect is made outside anyway: notify.c).  cordon's own
 * (the agent's, on the private /run) has its own step; a listed socket
 * not there yet is left out.
 */
static void
mount_routes(struct mounts *m, const struct sandbox *sb)
{
	const struct unix_route	*r;
	struct stat		 st;
	size_t			 i;

	for (i = 0; sb->sb_view.sv_routes != NULL &&
	    i < sb->sb_view.sv_routes->ur_n; i++) {
		r = &sb->sb_view.sv_routes->ur_v[i];
		if (strncmp(r->ur_inside, RUN_OWN_DIR "/",
		    sizeof(RUN_OWN_DIR)) == 0 || lstat(r->ur_host, &st) == -1 ||
		    !S_ISSOCK(st.st_mode))
			continue;
		mount_add(m, r->ur_host, STEP_BIND_RO, r->ur_from, 0);
	}
}

/*
 * A git hooks folder the plan made read-only: a scratch layer instead,
 * so that a tool that installs hooks (pre-commit install) succeeds, what
 * it wrote never reaches the host (git there would run it), and the run
 * says so (scratch.c).
 */
static bool
mount_hooks(const struct fs_op *op)
{
	const char	*slash = strrchr(op->fo_path, '/');

	return op->fo_kind == FS_RO && op->fo_dir && slash != NULL &&
	    strcmp(slash + 1, "hooks") == 0 &&
	    strcmp(op->fo_why, FS_WHY_GITCODE) == 0;
}

/*
 * Whether op, a read-only path, lies in the home's scratch layer, below
 * no writable root nor kept folder: a write there lands in the layer,
 * which never reaches the host, so no mount is needed to keep it off the
 * host, and the command's write (a line added to ~/.bashrc) works inside
 * and is listed at the end instead of failing unsaid.  The user's own git
 * config stays read-only: git's writes to it reach cordon run
 * (gitwrite.c), which names each key held back with the command that
 * applies it.
 */
static bool
mount_in_layer(const struct sandbox *sb, const struct fs_op *op)
{
	const struct fsplan	*plan = sb->sb_view.sv_plan;
	size_t			 i;

	if (sb->sb_view.sv_scratch == NULL || op->fo_kind != FS_RO ||
	    !path_is_below(op->fo_path, sb->sb_view.sv_scratch) ||
	    strcmp(op->fo_path, sb->sb_view.sv_scratch) == 0 ||
	    gitcfg_user_config(op->fo_path))
		return false;
	/*
	 * Below a writable root the path is the host's; below a hidden or
	 * blocked folder the bind is what shows it (known_hosts in a hidden
	 * ~/.ssh): both keep their mount.
	 */
	for (i = 0; i < plan->fp_nops; i++)
		if ((plan->fp_ops[i].fo_kind == FS_RW ||
		    plan->fp_ops[i].fo_kind == FS_HIDE_DIR ||
		    plan->fp_ops[i].fo_kind == FS_BLOCK) &&
		    path_is_below(op->fo_path, plan->fp_ops[i].fo_path))
			return false;
	for (i = 0; i < sb->sb_view.sv_nkeep; i++)
		if (path_is_below(op->fo_path, sb->sb_view.sv_keep[i].k_path))
			return false;
	return true;
}

/*
 * Whether op hides a login whose copy cordon run put in a kept folder
 * (keepdir.c, tf_kept): a plain file there, so that the agent can rename
 * over it, no mount.
 */
static bool
mount_kept_login(const struct sandbox *sb, const struct fs_op *op)
{
	ssize_t	 tok;

	return op->fo_kind == FS_HIDE_FILE &&
	    (tok = mount_steps_token(sb, op->fo_path)) != -1 &&
	    sb->sb_view.sv_secrets[tok].tf_kept != NULL;
}

/* The system's covers and the plan's ops, in the order they are applied. */
void
mount_steps(struct mounts *m, const struct sandbox *sb)
{
	const char	*rd = sb->sb_view.sv_runtime_dir;
	mode_t		 mode;
	size_t		 i, nhooks = 0;

	memset(m, 0, sizeof(*m));
	m->m_sb = sb;
	m->m_empty = -1;
	m->m_scratch_tmp = -1;
	mount_add(m, "/tmp", STEP_TMPFS, "a private /tmp", 01777);
	if (mount_is_dir("/var/tmp"))
		mount_add(m, "/var/tmp", STEP_TMPFS, "a private /var/tmp",
		    01777);
	if (mount_is_dir("/run"))
		mount_add(m, "/run", STEP_TMPFS, "host sockets hidden", 0755);
	if (mount_is_dir("/var/run"))	/* usually a link to /run */
		mount_add(m, "/var/run", STEP_TMPFS, "host sockets hidden",
		    0755);
	if (rd != NULL && mount_is_dir(rd))
		mount_add(m, rd, STEP_TMPFS, "$XDG_RUNTIME_DIR", 0700);
	if (sb->sb_view.sv_scratch != NULL) {
		mount_add(m, sb->sb_view.sv_scratch, STEP_SCRATCH,
		    "the home folder, "
		    "outside the writable roots", 0);
		m->m_steps[m->m_n - 1].s_shown = "~/";
	}
	for (i = 0; i < sb->sb_view.sv_nsysscratch; i++) {
		mount_add(m, sb->sb_view.sv_sysscratch[i], STEP_SCRATCH,
		    "apt's, for "
		    "root: apt-get update and download work", 0);
		m->m_steps[m->m_n - 1].s_shown = sb->sb_view.sv_sysscratch[i];
		m->m_steps[m->m_n - 1].s_premake = "partial";
	}
	for (i = 0; i < sb->sb_view.sv_nsyslayer; i++) {
		mount_add(m, sb->sb_view.sv_syslayer[i], STEP_SCRATCH,
		    "the system's, "
		    "for root: installs succeed", 0);
		m->m_steps[m->m_n - 1].s_shown = sb->sb_view.sv_syslayer[i];
	}

	for (i = 0; i < sb->sb_view.sv_nkeep; i++) {
		mount_add(m, sb->sb_view.sv_keep[i].k_path, STEP_BIND_RW,
		    sb->sb_view.sv_keep[i].k_shared ? "kept between the runs of every "
		    "workspace (--keep-shared): cordon's own copy" :
		    "kept between this workspace's runs (--keep): cordon's "
		    "own copy", 0);
		m->m_steps[m->m_n - 1].s_from = sb->sb_view.sv_keep[i].k_from;
	}
	for (i = 0; i < sb->sb_view.sv_plan->fp_nops; i++) {
		const struct fs_op	*op = &sb->sb_view.sv_plan->fp_ops[i];
		enum step_kind		 kind = mount_op_step(op, &mode);

		if (op->fo_kind == FS_SKIP || mount_in_layer(sb, op) ||
		    mount_kept_login(sb, op))
			continue;
		if (mount_hooks(op) && nhooks < RUN_HOOKS_MAX) {
			mount_add(m, op->fo_path, STEP_SCRATCH, "git hooks, "
			    "which run on the host: written inside, never kept",
			    0);
			m->m_steps[m->m_n - 1].s_shown = op->fo_path;
			m->m_steps[m->m_n - 1].s_hooks = true;
			nhooks++;
		} else
			mount_add(m, op->fo_path, kind, op->fo_why, mode);
		m->m_steps[m->m_n - 1].s_op = op;
	}
	mount_routes(m, sb);
	qsort(m->m_steps, m->m_n, sizeof(*m->m_steps), mount_cmp);
}

/* --dry-run: the mount steps, one a line. */
void
mount_steps_print(const struct sandbox *sb, FILE *f)
{
	struct mounts	 m;
	size_t		 i;
	ssize_t		 tok;

	fprintf(f, "  /: the host's, read-only, nosuid\n");
	mount_steps(&m, sb);
	for (i = 0; i < m.m_n; i++)
		fprintf(f, "  %s: %s (%s)\n", m.m_steps[i].s_path,
		    m.m_steps[i].s_op != NULL && m.m_steps[i].s_op->fo_dot ?
		    "blocked (a file that reads \"./\", read-only)" :
		    m.m_steps[i].s_kind == STEP_HIDE_FILE &&
		    (tok = mount_steps_token(sb, m.m_steps[i].s_path)) != -1 ?
		    sb->sb_view.sv_secrets[tok].tf_kind->sk_renew != NULL ?
		    "a copy, its tokens placeholders, writable, dropped after "
		    "the run" : "a copy, its tokens placeholders, read-only" :
		    step_names[m.m_steps[i].s_kind], m.m_steps[i].s_why);
	for (i = 0; i < sb->sb_view.sv_nsecrets; i++)
		if (sb->sb_view.sv_secrets[i].tf_kept != NULL)
			fprintf(f, "  %s: a copy, its tokens placeholders, "
			    "a file of the kept folder, writable, removed after "
			    "the run\n", sb->sb_view.sv_secrets[i].tf_path);
	if (sb->sb_view.sv_agent_real != NULL)
		fprintf(f, "  %s: cordon's ssh-agent, bound read-only from "
		    "the run's private folder\n", RUN_AGENT_SOCK);
	for (i = 0; i < sb->sb_view.sv_plan->fp_nwatch; i++)
		fprintf(f, "  %s: not there, and not blocked: one the command "
		    "makes is moved aside after the run\n",
		    sb->sb_view.sv_plan->fp_watch[i]);
	for (i = 0; i < sb->sb_view.sv_plan->fp_nhost; i++)
		fprintf(f, "  %s: not there, and not blocked: what the command "
		    "makes there is moved aside after the run "
		    "(filesystem.host_config)\n",
		    sb->sb_view.sv_plan->fp_host[i]);
	fprintf(f, "  /dev: tmpfs, read-only: null zero full random urandom "
	    "tty, a private pts and shm\n  /proc: this PID namespace's\n");
	free(m.m_steps);
}
