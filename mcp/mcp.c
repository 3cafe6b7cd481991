/*
 * mcp.c: the MCP server of `cordon mcp`, on stdin and stdout.  One
 * loop (poll): the client's messages, the signals that end it, the
 * session's control channel (mcp_ask.c) and the tool call that runs
 * (mcp_call.c).  Calls run one at a time, in the order they came; the
 * others wait, while pings, lists and answers to our questions are
 * served at once.  The session is started at the first call, and
 * stopped when the client closes stdin or on SIGTERM, SIGINT, SIGHUP
 * (and by its keeper, tied to this process, when it is killed); its
 * summary goes to stderr, as does every word of ours: stdout is the
 * protocol's alone.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "mcp/mcp.h"
#include "runner/runner.h"
#include "session/sess.h"

/* The revisions served, newest first: the first is offered. */
static const char *const mcp_versions[] = { "2025-11-25", "2025-06-18",
    "2025-03-26", "2024-11-05" };

/* Writes one message, a line, on stdout; takes msg. */
void
mcp_send(json_t *msg)
{
	char	*text;
	size_t	 len, off = 0;
	ssize_t	 w;

	if (msg == NULL)
		return;
	json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	text = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (text == NULL)
		fatalx("mcp: a message could not be written as JSON");
	len = strlen(text);
	text[len++] = '\n';	/* json_dumps' NUL: the line's end */
	while (off < len) {
		if ((w = write(1, text + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			break;	/* the client left: stdin's end follows */
		}
		off += (size_t)w;
	}
	free(text);
}

static void
mcp_result(json_t *id, json_t *result)
{
	mcp_send(json_pack("{s:O, s:o}", "id", id, "result", result));
}

/* An error answer; id NULL when the request's is not known. */
static void
mcp_error(json_t *id, int code, const char *text)
{
	mcp_send(json_pack("{s:o, s:{s:i, s:s}}", "id", id != NULL ?
	    json_incref(id) : json_null(), "error", "code", code, "message",
	    text));
}

/* Takes exports (export -p's text, or NULL) as the next command's. */
void
mcp_exports_set(struct mcp *m, char *exports)
{
	free(m->m_exports);
	m->m_exports = exports;
}

/*
 * Stderr into a memfd (returned; *saved the real one), for what the
 * start of a session says; -1 if it cannot be.
 */
static int
mcp_said_begin(int *saved)
{
	int	 fd;

	fflush(stderr);
	if ((fd = memfd_create("cordon-mcp-said", MFD_CLOEXEC)) == -1)
		return -1;
	if ((*saved = fcntl(2, F_DUPFD_CLOEXEC, 3)) == -1 ||
	    dup2(fd, 2) == -1) {
		if (*saved != -1)
			close(*saved);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Stderr back; what was said copied to it, and, with why, made the
 * words of a tool error (its first 4 KiB).
 */
static void
mcp_said_end(int fd, int saved, char **why)
{
	char	 buf[4096];
	ssize_t	 n, len = 0;

	if (fd == -1) {
		if (why != NULL)
			*why = xstrdup("cordon: the session could not be "
			    "started; cordon mcp's stderr says why");
		return;
	}
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	if (lseek(fd, 0, SEEK_SET) == 0)
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			if (write(2, buf, (size_t)n) != n)
				break;
		}
	if (why != NULL) {
		if (lseek(fd, 0, SEEK_SET) == 0 &&
		    (len = read(fd, buf, sizeof(buf) - 1)) < 0)
			len = 0;
		buf[len] = '\0';
		xasprintf(why, "cordon: the sandbox's session could not be "
		    "started:\n%s", buf);
	}
	close(fd);
}

/*
 * Starts the session (session start's and run's options, and our own
 * --control with --ask).  Returns 0, or -1 with the words of a tool
 * error in *why.
 */
int
mcp_session(struct mcp *m, char **why)
{
	struct session_opts	 so;
	char			**argv, **all;
	int			 argc = 0, i, rc, said, saved;
	pid_t			 pid;

	/* Copies: session_cmd_begin takes its options out of argv. */
	argv = xcalloc((size_t)m->m_opts->mo_argc + 4, sizeof(*argv));
	argv[argc++] = xstrdup("mcp");
	for (i = 0; i < m->m_opts->mo_argc; i++)
		argv[argc++] = xstrdup(m->m_opts->mo_argv[i]);
	if (m->m_opts->mo_ask && m->m_ctl_dir[0] != '\0') {
		argv[argc++] = xstrdup("--control");
		xasprintf(&argv[argc++], "%s/ctl", m->m_ctl_dir);
	}
	all = xcalloc((size_t)argc + 1, sizeof(*all));
	memcpy(all, argv, (size_t)argc * sizeof(*argv));
	/* What it says goes to our stderr, and to the model if it fails. */
	said = mcp_said_begin(&saved);
	rc = session_cmd_begin(argc, argv, &so, true, &pid);
	mcp_said_end(said, saved, rc != 0 ? why : NULL);
	for (i = 0; i < argc; i++)
		free(all[i]);
	free(all);
	free(argv);
	if (rc != 0)
		return -1;
	snprintf(m->m_sid, sizeof(m->m_sid), "%s", so.so_id);
	m->m_keeper = pid;
	free(m->m_cwd);
	m->m_cwd = NULL;
	mcp_exports_set(m, NULL);
	log_info("mcp: session %s started", m->m_sid);
	return 0;
}

/* Ends the session, its summary on stderr, and waits for its keeper. */
static void
mcp_session_stop(struct mcp *m)
{
	struct sessmsg	 sm;
	char		 id[SESS_ID_LEN + 1], cause[2048], b[64];
	int		 s, fd = 2, fds[SESS_FDS_MAX], nfds;

	if (m->m_sid[0] != '\0' && (s = sessclient_connect(m->m_sid, id,
	    sizeof(id), cause, sizeof(cause))) != -1) {
		memset(&sm, 0, sizeof(sm));
		sm.sm_type = SESS_STOP;
		if (sessmsg_send(s, &sm, NULL, &fd, 1) != -1)
			while (sessmsg_recv(s, &sm, b, sizeof(b), fds,
			    &nfds) > 0)
				sessmsg_close(fds, nfds);
		close(s);
	}
	if (m->m_keeper > 0)
		while (waitpid(m->m_keeper, NULL, 0) == -1 && errno == EINTR)
			;
	m->m_sid[0] = '\0';
	m->m_keeper = 0;
}

/* initialize: the revision agreed, what we serve, who we are. */
static void
mcp_initialize(struct mcp *m, json_t *id, const json_t *params)
{
	const char	*want;
	const char	*ver = mcp_versions[0];
	size_t		 i;

	want = json_string_value(json_object_get(params, "protocolVersion"));
	if (want == NULL) {
		mcp_error(id, MCP_INVALID_PARAMS, "initialize: "
		    "\"protocolVersion\" (a string) is missing");
		return;
	}
	for (i = 0; i < nitems(mcp_versions); i++)
		if (strcmp(want, mcp_versions[i]) == 0)
			ver = mcp_versions[i];
	m->m_elicit = json_object_get(json_object_get(params,
	    "capabilities"), "elicitation") != NULL;
	mcp_result(id, json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s, s:s}, "
	    "s:s}", "protocolVersion", ver, "capabilities", "tools",
	    "listChanged", 0, "logging", "serverInfo", "name", "cordon",
	    "title", "cordon: commands in a sandbox", "version",
	    CORDON_VERSION, "instructions", "Use the tool run for shell "
	    "commands: they run in a sandbox of this workspace, one shell "
	    "session whose folder and exported variables carry over.  When "
	    "a connection is refused, the result's refused list gives the "
	    "reason and the fix; tell the user the fix rather than working "
	    "around it."));
}

/* The queue of calls that wait, and the one that runs. */
struct mcp_loop {
	struct mcp	*ml_m;
	json_t		*ml_queue;	/* requests, in order */
	struct mcp_call	*ml_call;
	bool		 ml_eof;
};

/* Starts the next call that waits, until one runs. */
static void
mcp_next_call(struct mcp_loop *ml)
{
	json_t	*req, *params, *id;
	char	*why;

	while (ml->ml_call == NULL && json_array_size(ml->ml_queue) > 0) {
		req = json_incref(json_array_get(ml->ml_queue, 0));
		json_array_remove(ml->ml_queue, 0);
		id = json_object_get(req, "id");
		params = json_object_get(req, "params");
		if ((ml->ml_call = mcp_call_start(ml->ml_m, id,
		    json_object_get(params, "arguments"), &why)) == NULL) {
			/* A tool error: the model reads it and may retry. */
			mcp_result(id, json_pack("{s:[{s:s, s:s}], s:b}",
			    "content", "type", "text", "text", why, "isError",
			    1));
			free(why);
		}
		json_decref(req);
	}
}

/* notifications/cancelled: the call ended, or taken out of the queue. */
static void
mcp_cancelled(struct mcp_loop *ml, const json_t *params)
{
	const json_t	*rid = json_object_get(params, "requestId");
	json_t		*req;
	size_t		 i;

	if (rid == NULL)
		return;
	if (ml->ml_call != NULL && json_equal(rid, mcp_call_id(ml->ml_call)))
		mcp_call_cancel(ml->ml_call);
	json_array_foreach(ml->ml_queue, i, req)
		if (json_equal(rid, json_object_get(req, "id"))) {
			json_array_remove(ml->ml_queue, i);
			break;
		}
}

/* A request of the client's. */
static void
mcp_request(struct mcp_loop *ml, json_t *msg, const char *method)
{
	json_t		*id = json_object_get(msg, "id");
	json_t		*params = json_object_get(msg, "params");
	const char	*name;

	if (strcmp(method, "initialize") == 0)
		mcp_initialize(ml->ml_m, id, params);
	else if (strcmp(method, "ping") == 0 ||
	    strcmp(method, "logging/setLevel") == 0)
		mcp_result(id, json_object());
	else if (strcmp(method, "tools/list") == 0)
		mcp_result(id, json_pack("{s:[o]}", "tools", mcp_call_tool()));
	else if (strcmp(method, "tools/call") == 0) {
		name = json_string_value(json_object_get(params, "name"));
		if (name == NULL || strcmp(name, "run") != 0) {
			mcp_error(id, MCP_INVALID_PARAMS, "tools/call: no such "
			    "tool; the one tool is \"run\"");
			return;
		}
		json_array_append(ml->ml_queue, msg);
		mcp_next_call(ml);
	} else
		mcp_error(id, MCP_NO_METHOD, "no such method");
}

/* One line of the client's: msg, or NULL with why it is none. */
static void
mcp_message(struct mcp_loop *ml, json_t *msg, const char *err)
{
	const char	*method;
	json_t		*id;

	if (msg == NULL) {
		log_warnx("mcp: the client sent %s", err);
		mcp_error(NULL, MCP_PARSE_ERROR, err);
		return;
	}
	switch (mcpmsg_kind(msg, &method)) {
	case MCPMSG_REQUEST:
		mcp_request(ml, msg, method);
		break;
	case MCPMSG_NOTIFY:
		if (strcmp(method, "notifications/cancelled") == 0)
			mcp_cancelled(ml, json_object_get(msg, "params"));
		break;
	case MCPMSG_RESPONSE:
		mcp_ask_answered(ml->ml_m, json_object_get(msg, "id"), msg);
		break;
	case MCPMSG_INVALID:
		id = json_object_get(msg, "id");
		mcp_error(json_is_string(id) || json_is_integer(id) ? id : NULL,
		    MCP_INVALID_REQUEST, "not a JSON-RPC 2.0 request");
		break;
	}
	json_decref(msg);
}

/* Reads stdin and serves each whole line. */
static void
mcp_read(struct mcp_loop *ml, struct mcpbuf *in)
{
	char		 buf[65536];
	const char	*err;
	json_t		*msg;
	ssize_t		 n;

	if ((n = read(0, buf, sizeof(buf))) == -1) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		n = 0;
	}
	if (n == 0)
		ml->ml_eof = true;
	else
		mcpmsg_feed(in, buf, (size_t)n);
	while (mcpmsg_next(in, &msg, &err) == 1)
		mcp_message(ml, msg, err);
}

/* The call that ran is over: its answer, and the next one. */
static void
mcp_call_over(struct mcp_loop *ml)
{
	json_t	*id, *result;

	result = mcp_call_result(ml->ml_call, &id);
	if (result != NULL)
		mcp_result(id, result);
	json_decref(id);
	mcp_call_free(ml->ml_call);
	ml->ml_call = NULL;
	mcp_next_call(ml);
}

/* One turn of the loop; returns false when it is time to end. */
static bool
mcp_turn(struct mcp_loop *ml, struct mcpbuf *in, int sfd)
{
	struct pollfd	 pfd[8];
	struct signalfd_siginfo si;
	int		 cfds[4], nc = 0, n = 0, i, askfd;
	short		 crev[4];

	if (!ml->ml_eof) {
		pfd[n].fd = 0;
		pfd[n++].events = POLLIN;
	}
	pfd[n].fd = sfd;
	pfd[n++].events = POLLIN;
	if ((askfd = mcp_ask_fd(ml->ml_m)) != -1) {
		pfd[n].fd = askfd;
		pfd[n++].events = POLLIN;
	}
	if (ml->ml_call != NULL)
		nc = mcp_call_fds(ml->ml_call, cfds, 4);
	for (i = 0; i < nc; i++) {
		pfd[n + i].fd = cfds[i];
		pfd[n + i].events = POLLIN;
	}
	if (poll(pfd, (nfds_t)(n + nc), ml->ml_call != NULL ?
	    (int)mcp_call_wait_ms(ml->ml_call) : -1) == -1) {
		if (errno != EINTR)
			fatal("mcp: poll");
		return true;
	}
	for (i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		if (pfd[i].fd == 0)
			mcp_read(ml, in);
		else if (pfd[i].fd == sfd) {
			if (read(sfd, &si, sizeof(si)) == sizeof(si))
				log_info("mcp: signal %u: the end",
				    si.ssi_signo);
			return false;
		} else if (pfd[i].fd == askfd)
			mcp_ask_read(ml->ml_m);
	}
	if (ml->ml_call == NULL)
		return !ml->ml_eof;
	for (i = 0; i < nc; i++)
		crev[i] = pfd[n + i].revents;
	mcp_call_ready(ml->ml_call, cfds, crev, nc);
	/* The client gone, nothing more can be answered. */
	if (ml->ml_eof)
		mcp_call_cancel(ml->ml_call);
	mcp_call_tick(ml->ml_call);
	if (mcp_call_done(ml->ml_call))
		mcp_call_over(ml);
	return !ml->ml_eof || ml->ml_call != NULL;
}

/*
 * The server, until the client leaves or a signal ends it; then the
 * session is stopped.  Returns cordon's exit status.
 */
int
mcp_main(struct mcp_opts *o)
{
	struct mcp	 m;
	struct mcp_loop	 ml;
	struct mcpbuf	 in;
	sigset_t	 set;
	char		*cause;
	int		 sfd;

	memset(&m, 0, sizeof(m));
	memset(&ml, 0, sizeof(ml));
	memset(&in, 0, sizeof(in));
	m.m_opts = o;
	m.m_ctl_lfd = m.m_ctl_fd = -1;
	m.m_asks = json_object();
	ml.ml_m = &m;
	ml.ml_queue = json_array();
	if (getcwd(m.m_ws, sizeof(m.m_ws)) == NULL) {
		log_warn("mcp: the current folder");
		return RUN_EXIT_FAILURE;
	}
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC)) == -1)
		fatal("mcp: signalfd");
	if (o->mo_ask && mcp_ask_open(&m, &cause) == -1) {
		log_warnx("mcp: --ask: %s", cause);
		free(cause);
		return RUN_EXIT_FAILURE;
	}
	while (mcp_turn(&ml, &in, sfd))
		;
	if (ml.ml_call != NULL) {
		mcp_call_cancel(ml.ml_call);
		mcp_call_free(ml.ml_call);
	}
	mcp_session_stop(&m);
	mcp_ask_close(&m);
	mcp_exports_set(&m, NULL);
	free(m.m_cwd);
	json_decref(ml.ml_queue);
	json_decref(m.m_asks);
	mcpmsg_clear(&in);
	close(sfd);
	return 0;
}
