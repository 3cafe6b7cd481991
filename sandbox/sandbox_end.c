/*
 * sandbox_end.c: what PID 1 tells cordon run when the command (or, in a
 * session, the session) ends: what the capture dropped, what the scratch
 * layers hold and the files left in the private /tmp, one JSON document
 * for the summary.
 *
 * Runs in: the sandbox's PID 1, at the end.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/util.h"
#include "sandbox/sandbox.h"

/* What sandbox_end_private counts. */
static struct {
	json_int_t	 pv_files, pv_bytes, pv_seen;
} private_left;

#define PRIVATE_WALK_MAX	100000	/* entries walked at most */

static int
sandbox_end_private_cb(const char *path, const struct stat *st, int type,
    struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode)) {
		private_left.pv_files++;
		private_left.pv_bytes += st->st_size;
	}
	return ++private_left.pv_seen > PRIVATE_WALK_MAX;
}

/*
 * Whether dir is still the run's private tmpfs: no bind of the plan's
 * (a workspace or a --write folder that is /tmp, or holds it) covers it.
 * Folders bound below it are other mounts, which the walk skips.
 */
static bool
sandbox_end_is_private(const struct sandbox *sb, const char *dir)
{
	const struct fsplan	*plan = sb->sb_view.sv_plan;
	size_t			 i;

	for (i = 0; i < plan->fp_nops; i++)
		if ((plan->fp_ops[i].fo_kind == FS_RW ||
		    plan->fp_ops[i].fo_kind == FS_RO) &&
		    path_is_below(dir, plan->fp_ops[i].fo_path))
			return false;
	return true;
}

/*
 * The files the command left in the run's private /tmp and /var/tmp,
 * which go with the sandbox: a later run does not see them, and the
 * summary says so.  Returns them as {"files", "bytes", "all"}, or NULL
 * when there are none.
 */
static json_t *
sandbox_end_private(const struct sandbox *sb)
{
	static const char *const dirs[] = { "/tmp", "/var/tmp" };
	size_t	 i;

	for (i = 0; i < nitems(dirs); i++)
		if (sandbox_end_is_private(sb, dirs[i]))
			(void)nftw(dirs[i], sandbox_end_private_cb, 16,
			    FTW_PHYS | FTW_MOUNT);
	if (private_left.pv_files == 0)
		return NULL;
	return json_pack("{s:I, s:I, s:b}", "files", private_left.pv_files,
	    "bytes", private_left.pv_bytes, "all", private_left.pv_seen <=
	    PRIVATE_WALK_MAX);
}

/*
 * Ends every other process of the sandbox and reaps each, so that PID 1
 * is the last one left: nothing in the sandbox can write any more, and
 * cordon run may make its check while the kernel takes the namespaces
 * down after PID 1 (sandbox_end_tell says so with "end").  What the
 * kernel would kill at PID 1's exit is killed a moment earlier.
 */
void
sandbox_end_alone(void)
{
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		continue;
}

/*
 * At the command's end: tells cordon run, in one JSON document, what the
 * capture dropped ("dropped") and what the scratch layer holds
 * ("scratch"), for the summary, and, once PID 1 is alone
 * (sandbox_end_alone), "end": the status it exits with, which cordon run
 * may act on before the exit is done.  A failure is said, not hidden.
 */
void
sandbox_end_tell(const struct sandbox *sb, const struct scratch_fds *scratch,
    int status)
{
	struct netcap_drops	 d;
	json_t			*doc, *priv;
	char			*text;
	size_t			 len;

	if (sb->sb_pipes.sp_endfd == -1)
		return;
	doc = json_object();
	if (sb->sb_net.sn_capture && netcap_drops(&d) == -1)
		dprintf(2, "cordon: run: the capture's counters could not be "
		    "read (%s): what it dropped is not in the summary\n",
		    strerror(errno));
	else if (sb->sb_net.sn_capture)
		json_object_set_new(doc, "dropped", json_pack("{s:I, s:I, "
		    "s:I}", "quic", (json_int_t)d.nd_quic,
		    "udp", (json_int_t)d.nd_udp,
		    "other", (json_int_t)d.nd_other));
	if (scratch->sf_n > 0)
		json_object_set_new(doc, "scratch", scratch_list(scratch));
	if ((priv = sandbox_end_private(sb)) != NULL)
		json_object_set_new(doc, "private_tmp", priv);
	if (status != -1)
		json_object_set_new(doc, "end", json_pack("{s:i}", "status",
		    status));
	text = json_dumps(doc, JSON_COMPACT);
	len = text != NULL ? strlen(text) : 0;
	if (text == NULL || write(sb->sb_pipes.sp_endfd, text,
	    len) != (ssize_t)len)
		dprintf(2, "cordon: run: what the capture dropped and the "
		    "scratch layer holds could not be passed on: %s\n",
		    strerror(errno));
	if (status != -1)
		close(sb->sb_pipes.sp_endfd);	/* its EOF: PID 1 is alone */
	free(text);
	json_decref(doc);
}
