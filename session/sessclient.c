/*
 * sessclient.c: `cordon run --session ID -- CMD`, the client, shared by
 * cordon and the small cordon-session-exec (libc alone: it starts in a
 * fraction of cordon's time).  It hands the keeper, over the session's
 * socket, what the command is (its folder, argv, the client's
 * environment, which the keeper scrubs by the session's policy) and the
 * client's own stdin, stdout and stderr; it passes on the signals it
 * gets (Ctrl-C at a terminal reaches this process, the terminal's
 * foreground, and goes on to the command's process group); it exits as
 * the command did.
 */
#include <sys/types.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/sess.h"

extern char **environ;

/* What the client passes on: those cordon run passes on, and SIGTSTP. */
static const int sessclient_sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM,
    SIGUSR1, SIGUSR2, SIGWINCH };

/* Prints "cordon: " and the text, then a hint line when one is given. */
static void
sessclient_say(const char *text, const char *hint)
{
	fprintf(stderr, "cordon: %s\n", text);
	if (hint != NULL)
		fprintf(stderr, "hint: %s\n", hint);
}

/*
 * Why a session's socket did not answer: its end, said by its keeper
 * (ID.end), its keeper's death (killed: it said nothing), a keeper
 * that lives without answering, or that no session has that id.  Written into cause.
 */
static void
sessclient_why(const char *dir, const char *id, int err, char *cause,
    size_t clen)
{
	char			 why[1024];
	enum keeper_state	 st;

	if (sessdir_reason(dir, id, why, sizeof(why)) > 0)
		snprintf(cause, clen, "session %s has ended: %s\nhint: start "
		    "another with: cordon session start", id, why);
	else if ((st = sessdir_keeper(dir, id)) == KEEPER_DIED)
		snprintf(cause, clen, "session %s ended without a stop: its "
		    "keeper died (killed, or crashed)\nhint: cordon session "
		    "list removes what it left; start another with: cordon "
		    "session start", id);
	else if (st == KEEPER_LIVES)
		snprintf(cause, clen, "session %s does not answer (%s), but "
		    "its keeper lives (it holds %s/%s.lock): its socket was "
		    "removed, or it is still starting\nhint: cordon session "
		    "list --json shows its pid; end it with: kill PID", id,
		    strerror(err), dir, id);
	else
		snprintf(cause, clen, "no session %s is running (%s)\nhint: "
		    "cordon session list shows yours; start one with: cordon "
		    "session start", id, strerror(err));
}

/*
 * Whether the socket s is served by a process of this user's, as a
 * keeper is (SO_PEERCRED: who called listen).  The folder's mode keeps
 * others out of the user's sessions, but a path given to --session, or
 * a socket planted before the folder was checked, could be another
 * user's: such a listener would get the command's environment and its
 * stdio and could forge its exit status.  Checked before anything is
 * sent.  Returns 0, or -1 with the reason and the fix in cause.
 */
static int
sessclient_peer(int s, const char *path, char *cause, size_t clen)
{
	struct ucred	 cr;
	socklen_t	 len = sizeof(cr);

	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &len) == -1) {
		snprintf(cause, clen, "the session at %s: SO_PEERCRED: %s",
		    path, strerror(errno));
		return -1;
	}
	if (cr.uid != getuid()) {
		snprintf(cause, clen, "the session at %s is not yours: its "
		    "socket is served by uid %u (pid %d), not by a cordon of "
		    "uid %u; nothing was sent to it\nhint: cordon session "
		    "list shows yours; start one with: cordon session start",
		    path, (unsigned int)cr.uid, (int)cr.pid,
		    (unsigned int)getuid());
		return -1;
	}
	return 0;
}

/*
 * Resolves name (an id, a --name, or the socket's path) to its socket
 * in the user's folder, and connects.  Returns the socket, the id in
 * id (SESS_ID_LEN + 1), or -1 with the reason and the fix in cause.
 */
int
sessclient_connect(const char *name, char *id, size_t idlen, char *cause,
    size_t clen)
{
	struct sockaddr_un	 sun;
	char			 dir[PATH_MAX], path[PATH_MAX];
	ssize_t			 n;
	int			 s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(id, idlen, "%s", name);
	if (strchr(name, '/') != NULL)
		snprintf(path, sizeof(path), "%s", name);
	else {
		if (sessdir_path(dir, sizeof(dir), false, cause, clen) == -1)
			return -1;
		if (!sessdir_id_ok(name)) {
			/* A --name: NAME.name holds the id. */
			n = strlen(name) <= SESS_NAME_MAX &&
			    strchr(name, '.') == NULL ? sessdir_name_id(dir,
			    name, id) : -1;
			if (n != SESS_ID_LEN) {
				snprintf(cause, clen, "no session is named "
				    "\"%s\"\nhint: cordon session list shows "
				    "yours", name);
				return -1;
			}
			if (!sessdir_id_ok(id)) {
				sessdir_file(path, sizeof(path), dir, name,
				    "name");
				snprintf(cause, clen, "%s: not an id", path);
				return -1;
			}
		}
		sessdir_file(path, sizeof(path), dir, id, "sock");
	}
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(cause, clen, "%s: too long for a socket's path", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path));
	if ((s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(cause, clen, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		if (strchr(name, '/') != NULL)
			snprintf(cause, clen, "the session at %s does not "
			    "answer: %s\nhint: cordon session list shows "
			    "yours", path, strerror(errno));
		else
			sessclient_why(dir, id, errno, cause, clen);
		close(s);
		return -1;
	}
	if (sessclient_peer(s, path, cause, clen) == -1) {
		close(s);
		return -1;
	}
	return s;
}

/*
 * Whether run's options (argv from "run") name a session before the
 * command: the one test both cordon's front and cordon-main's run make,
 * so that they agree on which program serves a run.
 */
bool
sessclient_named(int argc, char **argv)
{
	int	 i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--session") == 0 ||
		    strncmp(argv[i], "--session=", 10) == 0)
			return true;
	return false;
}

/* The options: --session ID, --report FILE, --quiet; then CMD. */
static int
sessclient_opts(int argc, char **argv, const char **id, const char **report,
    char ***cmd)
{
	int	 i;

	*id = *report = NULL;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "--session") == 0 && i + 1 < argc)
			*id = argv[++i];
		else if (strncmp(argv[i], "--session=", 10) == 0)
			*id = argv[i] + 10;
		else if (strcmp(argv[i], "--report") == 0 && i + 1 < argc)
			*report = argv[++i];
		else if (strncmp(argv[i], "--report=", 9) == 0)
			*report = argv[i] + 9;
		else if (strcmp(argv[i], "--quiet") == 0 ||
		    strcmp(argv[i], "-q") == 0)
			continue;
		else if (argv[i][0] == '-') {
			fprintf(stderr, "cordon: run --session: %s is not an "
			    "option of a command in a session\nhint: the "
			    "options that make the sandbox (policy, "
			    "--workspace, --publish, ...) go to cordon "
			    "session start; a command takes --report FILE\n",
			    argv[i]);
			return -1;
		} else
			break;
	}
	if (*id == NULL || i >= argc) {
		sessclient_say("run --session: usage: cordon run --session ID "
		    "[--report FILE] -- CMD [ARGS...]", NULL);
		return -1;
	}
	*cmd = argv + i;
	return 0;
}

/*
 * Waits for the command's end, passing on the signals of sfd.  Returns
 * its exit status, or SESS_EXIT_FAILURE having said why.
 */
static int
sessclient_wait(int s, int sfd)
{
	struct signalfd_siginfo	 si;
	struct pollfd		 pfd[2];
	struct sessmsg		 m;
	char			 text[SESS_TEXT_MAX];
	int			 fds[SESS_FDS_MAX], nfds;

	pfd[0].fd = s;
	pfd[0].events = POLLIN;
	pfd[1].fd = sfd;
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents & POLLIN) {
			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				memset(&m, 0, sizeof(m));
				m.sm_type = SESS_SIGNAL;
				m.sm_arg = (int32_t)si.ssi_signo;
				(void)sessmsg_send(s, &m, NULL, NULL, 0);
			}
		}
		if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0)
			continue;
		if (sessmsg_recv(s, &m, text, sizeof(text), fds, &nfds) <= 0)
			break;
		sessmsg_close(fds, nfds);
		if (m.sm_type == SESS_EXIT)
			return m.sm_arg;
		if (m.sm_type == SESS_ERROR) {
			fputs(text, stderr);
			return m.sm_arg != 0 ? m.sm_arg : SESS_EXIT_FAILURE;
		}
	}
	sessclient_say("the session ended while the command ran; nothing "
	    "is known of its status", "cordon session list says whether it "
	    "runs");
	return SESS_EXIT_FAILURE;
}

/*
 * Sends the session at s the request to run argv in cwd with env, and
 * the descriptors the command gets as its stdin, stdout and stderr
 * (stdio), and report (--report's file), or -1.  Returns 0, or -1 with
 * errno set.
 */
int
sessclient_request(int s, const char *cwd, char *const *argv,
    char *const *env, const int *stdio, int report, uint32_t flags)
{
	struct sessmsg	 m;
	int		 fds[SESS_FDS_MAX], nfds = 4, rc, saved;

	memset(&m, 0, sizeof(m));
	m.sm_type = SESS_RUN;
	m.sm_flags = flags;
	if ((fds[0] = sessmsg_blob(cwd, argv, env, &m.sm_argc,
	    &m.sm_envc)) == -1)
		return -1;
	memcpy(fds + 1, stdio, 3 * sizeof(int));
	if (report != -1)
		fds[nfds++] = report;
	rc = sessmsg_send(s, &m, NULL, fds, nfds) == -1 ? -1 : 0;
	saved = errno;
	close(fds[0]);
	errno = saved;
	return rc;
}

/*
 * `cordon run --session ID [--report FILE] -- CMD`.  Returns the
 * command's exit status, or SESS_EXIT_FAILURE having said why.
 */
int
sessclient_main(int argc, char **argv, const char *prog)
{
	sigset_t	 fwd;
	const char	*name, *report;
	char		**cmd, cwd[PATH_MAX], id[SESS_ID_LEN + 1];
	char		 cause[2048];
	int		 s, sfd, rfd = -1, rc;
	const int	 stdio[3] = { 0, 1, 2 };
	size_t		 i;

	(void)prog;
	if (sessclient_opts(argc, argv, &name, &report, &cmd) == -1)
		return 2;
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		fprintf(stderr, "cordon: the current folder: %s\n",
		    strerror(errno));
		return SESS_EXIT_FAILURE;
	}
	/* Blocked before the request: none is lost in between. */
	sigemptyset(&fwd);
	for (i = 0; i < sizeof(sessclient_sigs) / sizeof(int); i++)
		sigaddset(&fwd, sessclient_sigs[i]);
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	if ((sfd = signalfd(-1, &fwd, SFD_NONBLOCK | SFD_CLOEXEC)) == -1) {
		fprintf(stderr, "cordon: signalfd: %s\n", strerror(errno));
		return SESS_EXIT_FAILURE;
	}
	if ((s = sessclient_connect(name, id, sizeof(id), cause,
	    sizeof(cause))) == -1) {
		fprintf(stderr, "cordon: %s\n", cause);
		return SESS_EXIT_FAILURE;
	}
	if (report != NULL) {
		/* Opened now, before the command can put a link there. */
		if ((rfd = open(report, O_WRONLY | O_CREAT | O_TRUNC |
		    O_NOFOLLOW | O_CLOEXEC, 0644)) == -1) {
			fprintf(stderr, "cordon: --report %s: %s\n", report,
			    strerror(errno));
			return SESS_EXIT_FAILURE;
		}
	}
	rc = sessclient_request(s, cwd, cmd, environ, stdio, rfd,
	    isatty(0) ? SESS_F_TTY : 0);
	if (rfd != -1)
		close(rfd);
	if (rc == -1) {
		fprintf(stderr, "cordon: session %s: sending the command: "
		    "%s\n", id, strerror(errno));
		return SESS_EXIT_FAILURE;
	}
	rc = sessclient_wait(s, sfd);
	close(s);
	close(sfd);
	return rc;
}
