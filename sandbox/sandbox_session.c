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
 * every process of the namespace.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "sandbox.h"
#include "sess.h"
#include "xmalloc.h"

/* A command of the session, running. */
struct sbs_cmd {
	pid_t		 sc_pid;
	uint32_t	 sc_id;		/* the keeper's request */
};

static struct sbs_cmd	*sbs_cmds;
static size_t		 sbs_ncmds;

/* Tells the keeper m; a keeper gone is seen as EOF on the pair. */
static void
sbs_tell(const struct sandbox *sb, uint32_t type, uint32_t id, int arg)
{
	struct sessmsg	 m;

	memset(&m, 0, sizeof(m));
	m.sm_type = type;
	m.sm_id = id;
	m.sm_arg = arg;
	(void)sessmsg_send(sb->sb_pipes.sp_session, &m, NULL, NULL, 0);
}

/*
 * A child of PID 1 ended: if it is a command of the session, its status
 * to the keeper (128 + the signal's number when one killed it).
 */
void
sandbox_session_reaped(const struct sandbox *sb, pid_t pid, int status)
{
	size_t	 i;

	for (i = 0; i < sbs_ncmds; i++) {
		if (sbs_cmds[i].sc_pid != pid)
			continue;
		sbs_tell(sb, SESS_ENDED, sbs_cmds[i].sc_id,
		    WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
		    WEXITSTATUS(status));
		sbs_cmds[i] = sbs_cmds[--sbs_ncmds];
		return;
	}
}

/*
 * The command's side of the fork: the client's descriptors as 0, 1, 2,
 * what the request says, then a run's last steps (the same Landlock
 * rules, seccomp program and listener's way out).  A failure goes to
 * the client's stderr (sc_errfd -1).
 */
static void __attribute__((noreturn))
sbs_child(const struct sandbox *sb, const struct sessblob *req,
    const int *fds)
{
	struct sandbox_cmd	 cmd = sb->sb_cmd;
	int			 i;

	for (i = 0; i < 3; i++)
		if (dup2(fds[1 + i], i) == -1)
			_exit(RUN_EXIT_FAILURE);
	cmd.sc_argv = req->sb_argv;
	cmd.sc_env = req->sb_env;
	cmd.sc_cwd = req->sb_cwd;
	cmd.sc_tty = false;	/* not in the terminal's session: its own */
	cmd.sc_errfd = -1;
	command_exec(&cmd);
}

/* A request to run: forked, its pid told to the keeper. */
static void
sbs_run(const struct sandbox *sb, const struct sessmsg *m, int *fds,
    int nfds)
{
	struct sessblob	 req;
	pid_t		 pid;

	if (nfds < 4 || sessmsg_blob_read(fds[0], m->sm_argc, m->sm_envc,
	    &req) == -1) {
		sbs_tell(sb, SESS_ENDED, m->sm_id, RUN_EXIT_FAILURE);
		return;
	}
	if ((pid = fork()) == -1) {
		dprintf(fds[3], "cordon: run: fork in the session: %s\n",
		    strerror(errno));
		sbs_tell(sb, SESS_ENDED, m->sm_id, RUN_EXIT_FAILURE);
	} else if (pid == 0)
		sbs_child(sb, &req, fds);
	else {
		sbs_cmds = xreallocarray(sbs_cmds, sbs_ncmds + 1,
		    sizeof(*sbs_cmds));
		sbs_cmds[sbs_ncmds].sc_pid = pid;
		sbs_cmds[sbs_ncmds++].sc_id = m->sm_id;
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
		sbs_run(sb, &m, fds, nfds);
		break;
	case SESS_SIGNAL:
		sbs_signal(m.sm_id, m.sm_arg);
		break;
	case SESS_QUIT:
		sandbox_tell_end(sb);
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
sandbox_session(const struct sandbox *sb, struct event_base *base)
{
	struct event	*ev;
	int		 fd, i;

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
