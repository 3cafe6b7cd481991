/*
 * session_cmd.c: `cordon session start | stop | list`.
 *
 * start forks the keeper, which leaves the terminal's session (setsid),
 * writes to the session's log (ID.log) and runs as cordon run does
 * (run_cmd_session: the same options, the same steps), with a sandbox
 * whose PID 1 waits for commands.  start returns when the keeper says
 * the sandbox is ready, printing the id on stdout; if the keeper ends
 * first, the log's lines say why, and start exits 125.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "runner/runner.h"
#include "session/sess.h"

static void
session_usage(FILE *f)
{
	fprintf(f,
	    "usage: cordon session start [--name NAME] [--idle SECONDS] "
	    "[--run-between]\n"
	    "                            [cordon run's options]\n"
	    "       cordon session stop ID|NAME\n"
	    "       cordon session list [--json]\n"
	    "       cordon run --session ID|NAME [--report FILE] -- CMD "
	    "[ARGS...]\n");
}

/* Copies the file at path to stderr. */
static void
session_copy_log(const char *path)
{
	char	 buf[4096];
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(2, buf, (size_t)n) != n)
			break;
	close(fd);
}

/*
 * Takes --name, --idle and --run-between out of argv (the rest is
 * cordon run's).
 * Returns 0, or -1 having said why.
 */
static int
session_start_opts(int *argc, char **argv, struct session_opts *so)
{
	char	*end, *shown;
	int	 i, j;

	for (i = j = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < *argc)
				argv[j++] = argv[i++];
			break;
		}
		if ((strcmp(argv[i], "--name") == 0 ||
		    strcmp(argv[i], "--idle") == 0) && i + 1 == *argc) {
			log_warnx("session start: %s needs a value", argv[i]);
			return -1;
		}
		if (strcmp(argv[i], "--name") == 0) {
			so->so_name = argv[++i];
			if (!sessdir_name_ok(so->so_name)) {
				shown = str_escape(so->so_name,
				    strlen(so->so_name));
				log_warnx("session start: --name \"%s\" "
				    "refused: a name is 1 to %d letters, "
				    "digits, '-', '_', '+' or '@', not "
				    "beginning with '-', and not an id (16 "
				    "hex digits)", shown, SESS_NAME_MAX);
				log_warnx("hint: give another --name, such as "
				    "task-1");
				free(shown);
				return -1;
			}
		} else if (strcmp(argv[i], "--run-between") == 0)
			so->so_run_between = true;
		else if (strcmp(argv[i], "--idle") == 0) {
			so->so_idle = strtol(argv[++i], &end, 10);
			if (*argv[i] == '\0' || *end != '\0' ||
			    so->so_idle < 1 || so->so_idle > 31536000) {
				log_warnx("session start: --idle \"%s\" is not "
				    "a number of seconds (1 or more)", argv[i]);
				return -1;
			}
		} else
			argv[j++] = argv[i];
	}
	argv[j] = NULL;
	*argc = j;
	return 0;
}

/*
 * The keeper: never returns.  It keeps the name's claim (so_name_fd, at
 * 4) to its end: while it lives, no other session takes its name.
 */
static void __attribute__((noreturn))
session_keeper(int argc, char **argv, struct session_opts *so, int logfd)
{
	int	 fd, name = -1;

	setsid();
	if ((so->so_name_fd != -1 && (name = fcntl(so->so_name_fd,
	    F_DUPFD_CLOEXEC, 5)) == -1) ||
	    (fd = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
	    dup2(fd, 0) == -1 || dup2(fd, 1) == -1 || dup2(logfd, 2) == -1 ||
	    (so->so_ready != 3 && dup3(so->so_ready, 3, O_CLOEXEC) == -1) ||
	    (name != -1 && dup3(name, 4, O_CLOEXEC) == -1))
		_exit(RUN_EXIT_FAILURE);
	/*
	 * Nothing else of the caller's: a harness waiting for the end of a
	 * pipe it gave session start would wait for the session's end.
	 */
	so->so_ready = 3;
	so->so_name_fd = name != -1 ? 4 : -1;
	if (syscall(SYS_close_range, name != -1 ? 5 : 4, ~0U, 0) == -1)
		_exit(RUN_EXIT_FAILURE);
	_exit(run_cmd_session(argc, argv, so));
}

/*
 * Waits for the keeper's word: its id on rfd (ready), or its end
 * (pidfd).  Returns 0 when ready.
 */
static int
session_wait_ready(int rfd, int pidfd, const struct session_opts *so)
{
	struct pollfd	 pfd[2];
	char		 line[64];
	ssize_t		 n;

	pfd[0].fd = rfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = pidfd;
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) == -1 && errno != EINTR)
			return -1;
		if (pfd[0].revents != 0) {
			n = read(rfd, line, sizeof(line) - 1);
			if (n == SESS_ID_LEN + 1 && memcmp(line, so->so_id,
			    SESS_ID_LEN) == 0)
				return 0;
			pfd[0].fd = -1;
		}
		if (pfd[1].revents != 0)
			return -1;
	}
}

/*
 * Claims --name for the session so (its id made): 0, or -1 having said
 * why, with the session that holds it.
 */
static int
session_claim(struct session_opts *so)
{
	char	 holder[SESS_ID_LEN + 1];

	if (so->so_name == NULL)
		return 0;
	if ((so->so_name_fd = sessdir_name_claim(so->so_dir, so->so_name,
	    so->so_id, holder)) != -1)
		return 0;
	if (errno != EBUSY) {
		log_warn("session start: --name \"%s\": %s/%s.name",
		    so->so_name, so->so_dir, so->so_name);
		return -1;
	}
	log_warnx("session start: --name \"%s\" is session %s's, which "
	    "runs or is starting: refused", so->so_name, holder[0] != '\0' ?
	    holder : "(unreadable)");
	log_warnx("hint: stop it first (cordon session stop %s), or give "
	    "another --name", so->so_name);
	return -1;
}

/* A start that failed lets go of its name, if it claimed one. */
static void
session_unclaim(struct session_opts *so)
{
	if (so->so_name_fd == -1)
		return;
	close(so->so_name_fd);
	so->so_name_fd = -1;
	(void)sessdir_name_drop(so->so_dir, so->so_name, so->so_id);
}

/*
 * Starts a session: its keeper forked (session_keeper), made as cordon
 * run would be from argv (session start's options, then run's), and
 * waited for until its sandbox is ready.  The id is in so->so_id, the
 * keeper's pid in *pidp (a child of the caller's until it ends).  A
 * tied session ends (its keeper gets SIGTERM) when the caller does, in
 * whatever way: cordon mcp's, whose client may be killed.
 * Returns 0; 2 for a wrong option and 125 having said why.
 */
int
session_cmd_begin(int argc, char **argv, struct session_opts *so, bool tied,
    pid_t *pidp)
{
	sigset_t	 none;
	char		 cause[2048], log[PATH_MAX];
	int		 logfd, rp[2], pidfd, rc = RUN_EXIT_FAILURE;
	pid_t		 pid, parent = getpid();

	memset(so, 0, sizeof(*so));
	so->so_ready = so->so_name_fd = -1;
	if (session_start_opts(&argc, argv, so) == -1)
		return 2;
	if (sessdir_path(so->so_dir, sizeof(so->so_dir), true, cause,
	    sizeof(cause)) == -1) {
		log_warnx("session start: %s", cause);
		return RUN_EXIT_FAILURE;
	}
	/* What sessions that ended a week ago left goes. */
	(void)sessdir_prune(so->so_dir, time(NULL) - SESS_ENDED_KEEP_SECS);
	if (str_random_hex(so->so_id, SESS_ID_LEN) == -1)
		fatal("session: getrandom");
	so->so_id[SESS_ID_LEN] = '\0';
	/* A name is one live session's, claimed at once or refused. */
	if (session_claim(so) == -1)
		return RUN_EXIT_FAILURE;
	sessdir_file(log, sizeof(log), so->so_dir, so->so_id, "log");
	if ((logfd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_APPEND |
	    O_CLOEXEC, 0600)) == -1 || pipe2(rp, O_CLOEXEC) == -1) {
		log_warn("session start: %s", log);
		session_unclaim(so);
		return RUN_EXIT_FAILURE;
	}
	fflush(NULL);
	if ((pid = fork()) == -1) {
		log_warn("session start: fork");
		session_unclaim(so);
		return RUN_EXIT_FAILURE;
	}
	if (pid == 0) {
		/* A caller with a signalfd (cordon mcp) blocks some. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (tied && (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1 ||
		    getppid() != parent))
			_exit(RUN_EXIT_FAILURE);
		close(rp[0]);
		so->so_ready = rp[1];
		session_keeper(argc, argv, so, logfd);
	}
	close(rp[1]);
	close(logfd);
	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) == -1)
		fatal("session start: pidfd_open");
	if (session_wait_ready(rp[0], pidfd, so) == -1) {
		session_copy_log(log);
		unlink(log);
		session_unclaim(so);
		log_warnx("session start: no session was started");
	} else {
		/* The keeper holds the name now; this process lets go. */
		if (so->so_name_fd != -1)
			close(so->so_name_fd);
		so->so_name_fd = -1;
		/* What the keeper said while it made the sandbox (notes). */
		session_copy_log(log);
		*pidp = pid;
		rc = 0;
	}
	close(rp[0]);
	close(pidfd);
	return rc;
}

static int
session_start(int argc, char **argv)
{
	struct session_opts	 so;
	pid_t			 pid;
	int			 rc;

	if ((rc = session_cmd_begin(argc, argv, &so, false, &pid)) != 0)
		return rc;
	if (so.so_run_between)
		log_warnx("session %s: --run-between: its background "
		    "processes run between commands, so git on the host is "
		    "protected only when each command ends and at the stop: "
		    "a repository one plants in between stays, for the host's "
		    "git to run, until the next command's check", so.so_id);
	printf("%s\n", so.so_id);
	return 0;
}

/*
 * A session that ended (its keeper left ID.end, or was killed and left
 * its files): its files removed, its name too if it is still this
 * one's, and said so.  The log of a keeper that died stays, named: what
 * it said before it died is the only account of why.  Returns whether
 * it had ended.
 */
static bool
session_forget(const char *name, const char *id)
{
	/* "log" last: a keeper that died keeps it. */
	static const char *const	 sfx[] = { "json", "sock", "lock",
					    "log" };
	char				 dir[PATH_MAX], path[PATH_MAX];
	char				 why[512], cause[256];
	size_t				 i, n = sizeof(sfx) / sizeof(sfx[0]);
	bool				 had = false, died = false;

	if (!sessdir_id_ok(id) || sessdir_path(dir, sizeof(dir), false,
	    cause, sizeof(cause)) == -1 || sessdir_file(path, sizeof(path),
	    dir, id, "end") == -1)
		return false;
	/*
	 * Its reason, or none: a keeper killed (SIGKILL) left only files.
	 * Neither: a keeper that holds its lock (starting, or its socket
	 * removed), whose files are its own.
	 */
	if (sessdir_reason(dir, id, why, sizeof(why)) != -1)
		had = unlink(path) == 0;
	else if (sessdir_keeper(dir, id) == KEEPER_DIED)
		died = true;
	else
		return false;
	for (i = 0; i < n - died; i++)
		if (sessdir_file(path, sizeof(path), dir, id, sfx[i]) == 0 &&
		    unlink(path) == 0)
			had = true;
	if (!had)
		return false;
	if (strcmp(name, id) != 0)
		(void)sessdir_name_drop(dir, name, id);
	if (died)
		fprintf(stderr, "cordon: session %s had already ended (its "
		    "keeper died without a stop: killed, or crashed): its "
		    "files are removed but its log, with what it said before "
		    "it died: %s/%s.log\n", id, dir, id);
	else
		fprintf(stderr, "cordon: session %s had already ended (%s): "
		    "its files are removed\n", id, why[0] != '\0' ? why :
		    "its keeper left no reason");
	return true;
}

static int
session_stop(int argc, char **argv)
{
	struct sessmsg	 m;
	char		 id[SESS_ID_LEN + 1], cause[2048], b[64];
	int		 s, fd = 2, fds[SESS_FDS_MAX], nfds;

	if (argc != 3) {
		session_usage(stderr);
		return 2;
	}
	if ((s = sessclient_connect(argv[2], id, sizeof(id), cause,
	    sizeof(cause))) == -1) {
		if (session_forget(argv[2], id))
			return 0;
		fprintf(stderr, "cordon: session stop: %s\n", cause);
		return RUN_EXIT_FAILURE;
	}
	memset(&m, 0, sizeof(m));
	m.sm_type = SESS_STOP;
	if (sessmsg_send(s, &m, NULL, &fd, 1) == -1) {
		log_warn("session stop: %s", id);
		return RUN_EXIT_FAILURE;
	}
	/* The keeper's end closes the socket, after the summary. */
	while (sessmsg_recv(s, &m, b, sizeof(b), fds, &nfds) > 0) {
		sessmsg_close(fds, nfds);
		if (m.sm_type == SESS_ERROR) {
			fputs(b, stderr);
			return RUN_EXIT_FAILURE;
		}
	}
	close(s);
	return 0;
}

/* Whether the session's socket at path answers. */
static bool
session_alive(const char *sock)
{
	char	 id[SESS_ID_LEN + 1], cause[1024];
	int	 s;

	if ((s = sessclient_connect(sock, id, sizeof(id), cause,
	    sizeof(cause))) == -1)
		return false;
	close(s);
	return true;
}

static int
session_list(int argc, char **argv)
{
	struct dirent	*de;
	DIR		*d;
	json_t		*all, *doc;
	json_error_t	 err;
	const char	*sock;
	char		 dir[PATH_MAX], path[PATH_MAX], cause[2048], *text;
	char		 id[SESS_ID_LEN + 1];
	bool		 json = argc == 3 && strcmp(argv[2], "--json") == 0;
	bool		 alive;
	size_t		 i;

	if (argc > 3 || (argc == 3 && !json)) {
		session_usage(stderr);
		return 2;
	}
	if (sessdir_path(dir, sizeof(dir), false, cause, sizeof(cause)) ==
	    -1 || (d = opendir(dir)) == NULL) {
		if (json)
			printf("[]\n");
		return 0;
	}
	all = json_array();
	while ((de = readdir(d)) != NULL) {
		if (strlen(de->d_name) != SESS_ID_LEN + 5 ||
		    strcmp(de->d_name + SESS_ID_LEN, ".json") != 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%.*s", dir,
		    (int)(SESS_ID_LEN + 5), de->d_name) >= sizeof(path))
			continue;
		snprintf(id, sizeof(id), "%.*s", SESS_ID_LEN, de->d_name);
		if ((doc = json_load_file(path, 0, &err)) == NULL)
			continue;
		sock = json_string_value(json_object_get(doc, "socket"));
		alive = sock != NULL && session_alive(sock);
		/*
		 * A keeper provably gone (killed) is not listed, once said.
		 * One that ended as we read removed ID.json before it let
		 * go of the lock: gone, with nothing to say.
		 */
		if (!alive && sessdir_keeper(dir, id) == KEEPER_DIED &&
		    (faccessat(dirfd(d), de->d_name, F_OK,
		    AT_SYMLINK_NOFOLLOW) == -1 ||
		    session_forget(json_is_string(json_object_get(doc,
		    "name")) ? json_string_value(json_object_get(doc,
		    "name")) : id, id))) {
			json_decref(doc);
			continue;
		}
		json_object_set_new(doc, "alive", json_boolean(alive));
		json_array_append_new(all, doc);
	}
	closedir(d);
	if (json) {
		text = json_dumps(all, JSON_COMPACT);
		printf("%s\n", text != NULL ? text : "[]");
		free(text);
	} else
		json_array_foreach(all, i, doc)
			printf("%s %-16s %s%s\n", json_string_value(
			    json_object_get(doc, "id")), json_is_string(
			    json_object_get(doc, "name")) ? json_string_value(
			    json_object_get(doc, "name")) : "-",
			    json_string_value(json_object_get(doc,
			    "workspace")), json_is_true(json_object_get(doc,
			    "alive")) ? "" : " (not answering)");
	json_decref(all);
	return 0;
}

int
session_cmd(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "start") == 0)
		return session_start(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "stop") == 0)
		return session_stop(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return session_list(argc, argv);
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0)) {
		session_usage(stdout);
		return 0;
	}
	session_usage(stderr);
	return 2;
}
