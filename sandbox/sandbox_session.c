/*
 * sandbox_session.c: the sandbox's PID 1 in a session.  It builds the
 * sandbox as for a run (sandbox.c), then starts no command of its own:
 * it tells the keeper (cordon's process outside) it is ready and waits
 * on their pair for requests.  Each request brings the command (a blob:
 * folder, argv, the environment the keeper built by the policy) and the
 * client's stdin, stdout and stderr; PID 1 forks, and the child takes
 * the same last steps as a run's command (command_exec: its own
 * session and process group, no capability, Landlock, seccomp with a
 * listener of its own sent to the keeper, exec).  PID 1 reaps it and
 * tells the keeper its status; what the command left running stays, in
 * the session.  No process of the host ever joins the sandbox: every
 * command is a child of this PID 1.
 *
 * A signal for a command comes from the keeper as a message and goes to
 * the command's process group.  The keeper's end closing (it died, or
 * the session was stopped) ends PID 1, and with it, the kernel ends
 * every process of the namespace (SIGKILL: stopped ones too).
 *
 * Between commands nothing of the sandbox runs (sb_pause; not with
 * --run-between): when the last command running ends, PID 1 stops every
 * other process of the namespace before it tells the keeper, whose check
 * of the writable roots then reads what no process of the sandbox
 * changes any more, so a background process cannot plant a repository
 * after the check for the host's git to meet before the next one.  A
 * stop takes effect when a thread leaves the kernel: a write under way
 * (a big one holds the file's lock, and only SIGKILL cuts it short) and
 * those queued behind it end first, however long they take, so the
 * keeper hears of the command's end only once every thread is stopped
 * (sbs_settle).  The next command's request continues them all, then
 * starts it: a server keeps its state and answers that command.  A
 * process stopped by its own (SIGSTOP, a job stopped) is continued with
 * them.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/filter.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sandbox/sandbox.h"
#include "session/sess.h"

/* A command of the session, running. */
struct sbs_cmd {
	pid_t		 sc_pid;
	uint32_t	 sc_id;		/* the keeper's request */
	struct stat	 sc_out[2];	/* the client's stdout, stderr */
};

static struct sbs_cmd	*sbs_cmds;
static size_t		 sbs_ncmds;
static int		 sbs_llfd = -1;	/* the Landlock ruleset, built once */
static struct sock_fprog sbs_prog;	/* the seccomp program, read once */
static char		*sbs_stack;	/* the command's until its exec */
static const struct scratch_fds *sbs_scratch;	/* for the end's report */
static bool		 sbs_paused;	/* the others stopped (sbs_pause) */
static struct event_base *sbs_base;

/* A request to run that came while a command's end settled. */
struct sbs_held {
	struct sessmsg	 sh_m;
	int		 sh_fds[SESS_FDS_MAX];
	int		 sh_nfds;
};

/*
 * The end of the last command running, not told to the keeper until
 * every thread of the sandbox is stopped (sbs_settle); requests to run
 * that came meanwhile wait with it.
 */
static struct {
	bool		 se_on;
	uint32_t	 se_id;
	int		 se_status;
	bool		 se_told;	/* the keeper knows it waits */
	struct timespec	 se_start;
	struct event	*se_ev;
	struct sbs_held	*se_runs;	/* requests held meanwhile */
	size_t		 se_nruns;
} sbs_end;

#define SBS_SETTLE_MS	100	/* looked at closely, then said and polled */
#define SBS_LETGO_MS	2000	/* for a running child to let go of its */
				/* command's output, at most */
#define SBS_POLL_MS	10	/* between looks once it was said */
#define SBS_SHOWN	3	/* threads named in what the client is told */

/* What the command's side of the clone reads. */
struct sbs_arg {
	const struct sandbox	*sa_sb;
	const struct sessblob	*sa_req;
	const int		*sa_fds;
};

/* Tells the keeper m; a keeper gone is seen as EOF on the pair. */
static void
sbs_tell(const struct sandbox *sb, uint32_t type, uint32_t id, int arg)
{
	(void)sessmsg_tell(sb->sb_pipes.sp_session, type, id, arg, 0);
}

/*
 * The state in the stat file at path (after the name's last ')'), or
 * '\0' when it cannot be read: errno then says why (ENOENT, ESRCH:
 * the process is gone).
 */
static char
sbs_state(const char *path)
{
	char	 buf[512], *st;
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return '\0';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		if (n == 0)
			errno = 0;
		return '\0';
	}
	buf[n] = '\0';
	if ((st = strrchr(buf, ')')) == NULL || st[1] != ' ' ||
	    st[2] == '\0') {
		errno = 0;
		return '\0';
	}
	return st[2];
}

/*
 * Whether thread tid of process pid (names in /proc) is settled: it
 * changes nothing until it is continued.  Stopped or dead (T, t, Z, X,
 * x in its stat, after the name's last ')'), or a vfork's parent: D in
 * clone or vfork waits for its child's exec or exit, and runs nothing
 * meanwhile (its child, stopped before it, holds it there until the
 * next command).  Any other state is a thread still in the kernel (a
 * write under way is R or D; one queued on the file's lock behind it,
 * D; an interruptible wait, S, stops at once): not settled, and
 * *state and *nr (the system call it is in, or -1) say which.
 */
static bool
sbs_thread_settled(const char *pid, const char *tid, char *state, long *nr)
{
	char	 path[80], buf[512];
	ssize_t	 n;
	int	 fd;

	*state = '?';
	*nr = -1;
	if ((size_t)snprintf(path, sizeof(path), "/proc/%s/task/%s/stat", pid,
	    tid) >= sizeof(path))
		return false;
	if ((*state = sbs_state(path)) == '\0') {
		*state = '?';
		return errno == ENOENT || errno == ESRCH;	/* gone: dead */
	}
	if (strchr("TtZXx", *state) != NULL)
		return true;
	if (*state != 'D')
		return false;
	if ((size_t)snprintf(path, sizeof(path), "/proc/%s/task/%s/syscall",
	    pid, tid) >= sizeof(path) || (fd = open(path, O_RDONLY |
	    O_CLOEXEC)) == -1)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (buf[0] >= '0' && buf[0] <= '9')
		*nr = strtol(buf, NULL, 10);
#ifdef SYS_vfork
	if (*nr == SYS_vfork)
		return true;
#endif
	return *nr == SYS_clone;
}

/*
 * How many threads of the processes but PID 1 are not settled
 * (sbs_thread_settled); the first SBS_SHOWN of them described in what
 * (pid, thread, state, system call).
 */
static size_t
sbs_unsettled(char *what, size_t len)
{
	DIR		*proc, *task;
	struct dirent	*p, *t;
	char		 path[64], state;
	size_t		 n = 0, off = 0;
	long		 nr;
	int		 w;

	*what = '\0';
	if ((proc = opendir("/proc")) == NULL) {
		(void)snprintf(what, len, "/proc cannot be read: %s",
		    strerror(errno));
		return 1;
	}
	while ((p = readdir(proc)) != NULL) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9' ||
		    strcmp(p->d_name, "1") == 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "/proc/%s/task",
		    p->d_name) >= sizeof(path) || (task = opendir(path)) ==
		    NULL)
			continue;	/* gone since */
		while ((t = readdir(task)) != NULL) {
			if (t->d_name[0] == '.' || sbs_thread_settled(p->d_name,
			    t->d_name, &state, &nr))
				continue;
			if (n++ >= SBS_SHOWN || off >= len)
				continue;
			w = snprintf(what + off, len - off, "%spid %s thread "
			    "%s: %c%s", off > 0 ? ", " : "", p->d_name,
			    t->d_name, state, nr >= 0 ? " in system call " :
			    "");
			if (w > 0 && (size_t)w < len - off && nr >= 0)
				w += snprintf(what + off + w, len - off - w,
				    "%ld", nr);
			off += w > 0 ? (size_t)w : 0;
		}
		closedir(task);
	}
	closedir(proc);
	return n;
}

/* Whether st is a pipe or socket, and the same as the file of fd. */
static bool
sbs_same(const struct stat *st, int dfd, const char *fd)
{
	struct stat	 sb;

	return (S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode)) &&
	    fstatat(dfd, fd, &sb, 0) == 0 && sb.st_dev == st->st_dev &&
	    sb.st_ino == st->st_ino;
}

/* Who holds an ended command's output (sbs_holder). */
enum sbs_hold {
	SBS_FREE,	/* no process but PID 1 */
	SBS_HELD,	/* a process waiting on something: a server */
	SBS_RUNNING	/* one running, or waiting for the disk: it goes on */
};

/*
 * Whether process pid (its name in /proc) runs or waits for the disk
 * (R, D): a child the shell forked is so until it has redirected its
 * output and exec'd, however long a loaded machine keeps it waiting.
 */
static bool
sbs_running(const char *pid)
{
	char	 path[64], state;

	if ((size_t)snprintf(path, sizeof(path), "/proc/%s/stat", pid) >=
	    sizeof(path))
		return false;
	state = sbs_state(path);
	return state == 'R' || state == 'D';
}

/*
 * Whether a process but PID 1 still holds the ended command's stdout or
 * stderr, when a pipe or socket (its client's reader, a harness reading
 * to the end, waits for every holder to close it), and whether one of
 * them runs.
 */
static enum sbs_hold
sbs_holder(const struct sbs_cmd *c)
{
	DIR		*proc, *fdir;
	struct dirent	*p, *f;
	char		 path[64];
	enum sbs_hold	 h = SBS_FREE;
	bool		 held;

	/* No process but PID 1 (kill(-1): ESRCH): none holds it. */
	if (kill(-1, 0) == -1 && errno == ESRCH)
		return SBS_FREE;
	if ((proc = opendir("/proc")) == NULL)
		return SBS_FREE;
	while (h != SBS_RUNNING && (p = readdir(proc)) != NULL) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9' ||
		    strcmp(p->d_name, "1") == 0 || (size_t)snprintf(path,
		    sizeof(path), "/proc/%s/fd", p->d_name) >= sizeof(path) ||
		    (fdir = opendir(path)) == NULL)
			continue;
		held = false;
		while (!held && (f = readdir(fdir)) != NULL)
			held = f->d_name[0] != '.' && (sbs_same(&c->sc_out[0],
			    dirfd(fdir), f->d_name) || sbs_same(&c->sc_out[1],
			    dirfd(fdir), f->d_name));
		closedir(fdir);
		if (held)
			h = sbs_running(p->d_name) ? SBS_RUNNING : SBS_HELD;
	}
	closedir(proc);
	return h;
}

/*
 * Stops every process of the sandbox but PID 1; returns whether there
 * was one.
 *
 * kill(-1) from PID 1 reaches every process of the namespace but
 * PID 1 (and those of namespaces below it), and cannot miss one being
 * forked: the kernel signals them all under the lock that fork takes
 * to link a child, and a fork under way in a process it signals either
 * restarts or hands the child the signal too (copy_process: signals
 * "sent to multiple processes that happen during the fork" are
 * delayed to appear after it).  SIGSTOP cannot be caught, blocked or
 * ignored.  Sent again at each look: a process that was continued
 * meanwhile (see threat-model.md: one can be, by the kernel, at a time
 * it chose) is stopped again.
 */
static bool
sbs_stop_all(void)
{
	return !(kill(-1, SIGSTOP) == -1 && errno == ESRCH);
}

static void	sbs_run(const struct sandbox *, const struct sessmsg *,
		    int *, int);

/*
 * The pending end settled: told to the keeper, whose check follows, and
 * the requests held meanwhile run.  Alone: PID 1 had no other process
 * (sbs_stop_all), and makes none before the keeper asks again, so the
 * keeper need not freeze the cgroup for its check (keeper_freeze).
 */
static void
sbs_settled(const struct sandbox *sb, bool alone)
{
	struct sbs_held	*runs = sbs_end.se_runs;
	size_t		 i, n = sbs_end.se_nruns;

	sbs_end.se_on = false;
	sbs_end.se_runs = NULL;
	sbs_end.se_nruns = 0;
	(void)sessmsg_tell(sb->sb_pipes.sp_session, SESS_ENDED, sbs_end.se_id,
	    sbs_end.se_status, alone && n == 0 ? SESS_F_ALONE : 0);
	for (i = 0; i < n; i++) {
		sbs_run(sb, &runs[i].sh_m, runs[i].sh_fds, runs[i].sh_nfds);
		sessmsg_close(runs[i].sh_fds, runs[i].sh_nfds);
	}
	free(runs);
}

/*
 * One look at the pending end: every process stopped again, and if
 * every thread is settled (sbs_unsettled), the end is told.  Else it is
 * looked at again: closely for SBS_SETTLE_MS, then every SBS_POLL_MS,
 * the keeper told once that the check waits and for which threads,
 * for as long as it takes: a thread still in the kernel (a write under
 * way, or queued behind one on the file's lock) would change the
 * workspace after the check.  PID 1 serves the keeper meanwhile: a
 * stop ends the session (the kernel ends the writes with it, and the
 * end's check follows them), a request to run waits with the end.
 */
static void
sbs_settle(evutil_socket_t fd, short what, void *arg)
{
	const struct sandbox	*sb = arg;
	struct timeval		 tv = { 0, SBS_POLL_MS * 1000 };
	struct timespec		 nap = { 0, 50000 };
	struct sessmsg		 m;
	char			 list[512], text[600];
	size_t			 n;

	(void)fd;
	(void)what;
	for (;;) {
		if (!sbs_stop_all()) {
			sbs_settled(sb, true);
			return;
		}
		if ((n = sbs_unsettled(list, sizeof(list))) == 0) {
			sbs_settled(sb, false);
			return;
		}
		if (clock_ms_since(&sbs_end.se_start) >= SBS_SETTLE_MS)
			break;
		nanosleep(&nap, NULL);
	}
	if (!sbs_end.se_told) {
		/* "N threads of its processes (which)": the keeper says the
		 * rest. */
		sbs_end.se_told = true;
		(void)snprintf(text, sizeof(text), "%zu thread%s of its "
		    "processes (%s%s)", n, n == 1 ? "" : "s", list,
		    n > SBS_SHOWN ? ", ..." : "");
		memset(&m, 0, sizeof(m));
		m.sm_type = SESS_WAIT;
		m.sm_id = sbs_end.se_id;
		(void)sessmsg_send(sb->sb_pipes.sp_session, &m, text, NULL, 0);
	}
	if (sbs_end.se_ev == NULL && (sbs_end.se_ev = evtimer_new(sbs_base,
	    sbs_settle, (void *)(uintptr_t)sb)) == NULL)
		_exit(RUN_EXIT_FAILURE);
	evtimer_add(sbs_end.se_ev, &tv);
}

/*
 * The last command running ended (status for request id, which the
 * keeper waits for): the sandbox's other processes stopped, then the
 * end told once they all are (sbs_settle).  c, when not NULL, is that
 * command: first, a moment for what it started in the background to
 * let go of its stdout (`server >log 2>&1 &`: the shell may end before
 * its child redirects): stopped holding it, it would keep the client's
 * reader waiting for the next command.  SBS_SETTLE_MS, and on while a
 * holder runs (a loaded machine can keep the child waiting for a
 * processor that long), up to SBS_LETGO_MS; a holder that waits on
 * something else (a server holding its stdout) is stopped as it is.
 * Without a pause (--run-between, or other commands still running),
 * the end is told at once.
 */
static void
sbs_pause(const struct sandbox *sb, const struct sbs_cmd *c, uint32_t id,
    int status)
{
	struct timespec	 start, nap = { 0, 50000 }, slow = { 0, 1000000 };
	enum sbs_hold	 h;
	long long	 ms;

	if (!sb->sb_pause || sbs_ncmds > 0) {
		sbs_tell(sb, SESS_ENDED, id, status);
		return;
	}
	sbs_paused = true;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (c != NULL && (h = sbs_holder(c)) != SBS_FREE &&
	    (ms = clock_ms_since(&start)) < SBS_LETGO_MS &&
	    (ms < SBS_SETTLE_MS || h == SBS_RUNNING))
		nanosleep(ms < SBS_SETTLE_MS ? &nap : &slow, NULL);
	sbs_end.se_on = true;
	sbs_end.se_id = id;
	sbs_end.se_status = status;
	sbs_end.se_told = false;
	clock_gettime(CLOCK_MONOTONIC, &sbs_end.se_start);
	sbs_settle(-1, 0, (void *)(uintptr_t)sb);
}

/* A command is to start: what was stopped between commands continues. */
static void
sbs_resume(void)
{
	if (sbs_paused)
		(void)kill(-1, SIGCONT);
	sbs_paused = false;
}

/*
 * A child of PID 1 ended: if it is a command of the session, its status
 * to the keeper (128 + the signal's number when one killed it), once the
 * others are stopped if it was the last running.
 */
void
sandbox_session_reaped(const struct sandbox *sb, pid_t pid, int status)
{
	struct sbs_cmd	 c;
	size_t		 i;

	for (i = 0; i < sbs_ncmds; i++) {
		if (sbs_cmds[i].sc_pid != pid)
			continue;
		c = sbs_cmds[i];
		sbs_cmds[i] = sbs_cmds[--sbs_ncmds];
		sbs_pause(sb, &c, c.sc_id, WIFSIGNALED(status) ?
		    128 + WTERMSIG(status) : WEXITSTATUS(status));
		return;
	}
}

/*
 * The command's side of the fork: the client's descriptors as 0, 1, 2,
 * what the request says, then a run's last steps (the same Landlock
 * rules, seccomp program and listener's way out).  A failure goes to
 * the client's stderr (sc_errfd -1).
 */
static int
sbs_child(void *arg)
{
	const struct sbs_arg	*sa = arg;
	const struct sessblob	*req = sa->sa_req;
	const int		*fds = sa->sa_fds;
	struct sandbox_cmd	 cmd = sa->sa_sb->sb_cmd;
	int			 i;

	for (i = 0; i < 3; i++)
		if (dup2(fds[1 + i], i) == -1)
			_exit(RUN_EXIT_FAILURE);
	cmd.sc_argv = req->sb_argv;
	cmd.sc_env = req->sb_env;
	cmd.sc_cwd = req->sb_cwd;
	cmd.sc_tty = false;	/* not in the terminal's session: its own */
	cmd.sc_errfd = -1;
	cmd.sc_llfd = sbs_llfd;
	cmd.sc_bset_empty = true;
	cmd.sc_prog = &sbs_prog;
	command_exec(&cmd);
}

/*
 * A request to run: started (command_spawn: sharing PID 1's memory
 * until its exec, no copy of PID 1's pages, a fifth of what a command
 * in a session added), its pid told to the keeper.
 */
static void
sbs_run(const struct sandbox *sb, const struct sessmsg *m, int *fds,
    int nfds)
{
	struct sessblob	 req;
	struct sbs_arg	 sa;
	pid_t		 pid;

	if (nfds < 4 || sessmsg_blob_read(fds[0], m->sm_argc, m->sm_envc,
	    &req) == -1) {
		sbs_tell(sb, SESS_ENDED, m->sm_id, RUN_EXIT_FAILURE);
		return;
	}
	sa.sa_sb = sb;
	sa.sa_req = &req;
	sa.sa_fds = fds;
	sbs_resume();
	if ((pid = command_spawn(sbs_child, &sa, sbs_stack)) == -1) {
		dprintf(fds[3], "cordon: run: fork in the session: %s\n",
		    strerror(errno));
		sbs_pause(sb, NULL, m->sm_id, RUN_EXIT_FAILURE);
	} else {
		sbs_cmds = xreallocarray(sbs_cmds, sbs_ncmds + 1,
		    sizeof(*sbs_cmds));
		memset(&sbs_cmds[sbs_ncmds], 0, sizeof(*sbs_cmds));
		sbs_cmds[sbs_ncmds].sc_pid = pid;
		sbs_cmds[sbs_ncmds].sc_id = m->sm_id;
		(void)fstat(fds[2], &sbs_cmds[sbs_ncmds].sc_out[0]);
		(void)fstat(fds[3], &sbs_cmds[sbs_ncmds++].sc_out[1]);
		sbs_tell(sb, SESS_STARTED, m->sm_id, (int)pid);
	}
	sessmsg_blob_clear(&req);
}

/* A signal for request id's command: to its process group. */
static void
sbs_signal(uint32_t id, int sig)
{
	size_t	 i;

	if (sig <= 0 || sig >= NSIG)
		return;
	for (i = 0; i < sbs_ncmds; i++)
		if (sbs_cmds[i].sc_id == id && kill(-sbs_cmds[i].sc_pid, sig) ==
		    -1)
			kill(sbs_cmds[i].sc_pid, sig);
}

/* A message from the keeper; its end: PID 1's, and the session's. */
static void
sbs_read_cb(evutil_socket_t fd, short what, void *arg)
{
	const struct sandbox	*sb = arg;
	struct sessmsg		 m;
	char		 text[64];
	int		 fds[SESS_FDS_MAX], nfds;
	ssize_t		 n;

	(void)what;
	if ((n = sessmsg_recv(fd, &m, text, sizeof(text), fds, &nfds)) == -1 &&
	    (errno == EAGAIN || errno == EBADMSG))
		return;
	if (n <= 0)
		_exit(RUN_EXIT_FAILURE);
	switch (m.sm_type) {
	case SESS_RUN:
		if (sbs_end.se_on) {
			/* After the end that settles: held, descriptors too. */
			sbs_end.se_runs = xreallocarray(sbs_end.se_runs,
			    sbs_end.se_nruns + 1, sizeof(*sbs_end.se_runs));
			sbs_end.se_runs[sbs_end.se_nruns].sh_m = m;
			memcpy(sbs_end.se_runs[sbs_end.se_nruns].sh_fds, fds,
			    sizeof(fds));
			sbs_end.se_runs[sbs_end.se_nruns++].sh_nfds = nfds;
			return;
		}
		sbs_run(sb, &m, fds, nfds);
		break;
	case SESS_SIGNAL:
		sbs_signal(m.sm_id, m.sm_arg);
		break;
	case SESS_QUIT:
		sandbox_end_tell(sb, sbs_scratch, -1);
		_exit(0);
	}
	sessmsg_close(fds, nfds);
}

/*
 * PID 1 from here, in a session: tells the keeper it is ready, lets go
 * of the descriptors the session's start had (a harness reading them
 * would wait for the session's end), and serves requests.
 */
void
sandbox_session(const struct sandbox *sb, struct event_base *base,
    const struct scratch_fds *scratch)
{
	struct event	*ev;
	char		*cause;
	int		 fd, i;

	sbs_scratch = scratch;
	sbs_base = base;

	/*
	 * Landlock's ruleset, built once for every command: each restricts
	 * itself with it (landlock_restrict), the rules opened and added
	 * once, not for each command.  Only this PID 1 holds it
	 * (close-on-exec, and a command marks every descriptor so before
	 * exec); PID 1 is not dumpable, so no command can take it through
	 * /proc or ptrace, and one that could would only restrict itself
	 * further, or add rules to it for commands that follow: hence kept
	 * out of reach.  A folder a rule names that is made later is left
	 * out, which is tighter.
	 */
	if (landlock_abi() > 0 && (sbs_llfd = landlock_ruleset(
	    sb->sb_cmd.sc_ll, sb->sb_cmd.sc_nll, true, &cause)) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "Landlock: %s", cause);
	if (sysfilter_apply_read(sb->sb_cmd.sc_seccomp, &sbs_prog,
	    &cause) == -1)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE, "%s",
		    cause);
	/* No command of the session can gain a capability at exec. */
	command_bset_drop(sb->sb_pipes.sp_errfd);
	if ((sbs_stack = command_stack()) == NULL)
		sandbox_fail(sb->sb_pipes.sp_errfd, RUN_EXIT_FAILURE,
		    "the commands' stack: %s", strerror(errno));
	if (sb->sb_pipes.sp_ready != -1)
		close(sb->sb_pipes.sp_ready);
	if (sb->sb_pipes.sp_errfd != -1)
		close(sb->sb_pipes.sp_errfd);
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1) {
		for (i = 0; i < 3; i++)
			(void)dup2(fd, i);
		close(fd);
	}
	if ((ev = event_new(base, sb->sb_pipes.sp_session, EV_READ |
	    EV_PERSIST, sbs_read_cb, (void *)(uintptr_t)sb)) == NULL ||
	    event_add(ev, NULL) == -1)
		_exit(RUN_EXIT_FAILURE);
	sbs_tell(sb, SESS_READY, 0, 0);
	event_base_dispatch(base);
	_exit(RUN_EXIT_FAILURE);
}
