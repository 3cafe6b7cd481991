/*
 * mcp_call.c: the tool `run`, one call as one command of the session,
 * sent by the client code `cordon run --session` uses (sessclient.c).
 *
 * The command runs in sh, in a wrapper (MCP_WRAPPER) that carries the
 * shell's state from call to call as one shell would: it goes to the
 * folder the last call ended in, runs the command with eval in that
 * same shell (so `cd` and `export` hold), and at its exit writes where
 * it is and its exported variables (pwd -P, export -p: builtins, so no
 * process is started for it) on its stdin, a socket whose other end is
 * ours; the command's own stdin is /dev/null.  That folder and that
 * text are the next call's, given to its wrapper as arguments (the text
 * in pieces an argument can hold), entered and evaluated inside the
 * sandbox by the same shell that wrote it: they came from inside it,
 * and go back nowhere else.  (The request's own environment is ours,
 * scrubbed by the keeper by the policy as any client's is; a variable
 * the command unset comes back from it.)  Each
 * call's report (--report, to a memfd) gives the connections refused in
 * its time, with their rule and fix.  Output is bounded (MCP_OUT_MAX a
 * stream: its start and its end kept, what was cut counted).
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/param.h>
#include <sys/socket.h>
#include <sys/stat.h>

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
#include "mcp/mcp.h"
#include "session/sess.h"

#define MCP_HALF	(MCP_OUT_MAX / 2)
#define MCP_PIECE	(64 * 1024)	/* of the exports, an argument each */

/*
 * $1 the command, $2 the folder carried (or ""), $3 the call's cwd (or
 * ""), relative to $2, and then the last call's export -p, in pieces.
 * Status 125 when that cwd cannot be entered.  PWD, OLDPWD, SHLVL and _
 * are the shell's own, not carried.  `command` keeps an error of eval
 * or unset (a readonly variable) from ending the shell.
 */
static const char mcp_wrapper[] =
    "exec 9<&0 </dev/null\n"
    "cordon_cmd=$1 cordon_dir=$2 cordon_cwd=$3 cordon_v=\n"
    "shift 3\n"
    "for cordon_a in \"$@\"; do cordon_v=$cordon_v$cordon_a; done\n"
    "command eval \"$cordon_v\" 2>/dev/null\n"
    "unset cordon_v cordon_a; set --\n"
    "if [ -n \"$cordon_dir\" ] && ! cd -- \"$cordon_dir\" 2>/dev/null; then\n"
    "  echo \"cordon: mcp: the folder $cordon_dir is gone; the command"
    " runs in $(pwd -P)\" >&2\n"
    "fi\n"
    "if [ -n \"$cordon_cwd\" ] && ! cd -- \"$cordon_cwd\"; then exit 125; fi\n"
    "trap 'cordon_st=$?; { pwd -P; printf \"\\0\"; command unset PWD;"
    " command unset OLDPWD; command unset SHLVL; command unset _;"
    " export -p; } >&9 2>/dev/null; exit $cordon_st' EXIT\n"
    "eval \"$cordon_cmd\"\n";

/* One stream of the command: its start and its end, and a count. */
struct mcp_out {
	int		 mo_fd;		/* our read end, or -1 at its end */
	char		 mo_head[MCP_HALF];
	size_t		 mo_hlen;
	char		 mo_tail[MCP_HALF];	/* a ring */
	size_t		 mo_tpos;
	size_t		 mo_tlen;
	size_t		 mo_total;
};

struct mcp_call {
	struct mcp	*mc_m;
	json_t		*mc_id;		/* the request's */
	int		 mc_s;		/* the session's socket, or -1 */
	struct mcp_out	 mc_out[2];	/* stdout, stderr */
	int		 mc_state_fd;	/* the wrapper's fd 9, or -1 */
	char		*mc_state;
	size_t		 mc_slen;
	bool		 mc_state_over;	/* past MCP_STATE_MAX: dropped */
	int		 mc_report;	/* a memfd */
	struct timespec	 mc_start;
	long long	 mc_timeout_ms;
	int		 mc_sig;	/* the last signal sent, or 0 */
	long long	 mc_sig_ms;	/* ... when */
	bool		 mc_timed_out;
	bool		 mc_cancelled;
	bool		 mc_exited;
	long long	 mc_exit_ms;
	int		 mc_status;
	char		*mc_note;	/* cordon's words to the model */
};

/* The tool, as tools/list gives it. */
json_t *
mcp_call_tool(void)
{
	json_error_t	 je;
	json_t		*t;

	t = json_loads("{\"name\": \"run\", \"title\": \"Run a shell command "
	    "in cordon's sandbox\", \"description\": \"Runs a command with sh "
	    "in a sandbox of the workspace (cordon): the workspace is "
	    "writable, the network goes through a proxy that allows only "
	    "the hosts of the policy.  The folder and exported variables "
	    "carry over to the next call, as in one shell; background "
	    "processes stay (stopped between calls).  The result has stdout, "
	    "stderr, the exit status and the connections the sandbox "
	    "refused, each with its reason and the fix a user can apply.  "
	    "Output is cut to 32 KiB a stream (its start and its end).\", "
	    "\"inputSchema\": {\"type\": \"object\", \"properties\": {"
	    "\"command\": {\"type\": \"string\", \"description\": \"the shell "
	    "command line\"}, \"cwd\": {\"type\": \"string\", \"description\": "
	    "\"the folder to run in, relative to the current one; it stays "
	    "the current one, as cd would\"}, \"timeout\": {\"type\": "
	    "\"number\", \"description\": \"seconds before the command is "
	    "ended (SIGTERM, then SIGKILL); 120 if not given\"}}, "
	    "\"required\": [\"command\"]}, "
	    "\"outputSchema\": {\"type\": \"object\", \"properties\": {"
	    "\"exit_status\": {\"type\": \"integer\"}, "
	    "\"signal\": {\"type\": \"integer\"}, "
	    "\"stdout\": {\"type\": \"string\"}, "
	    "\"stderr\": {\"type\": \"string\"}, "
	    "\"stdout_cut\": {\"type\": \"integer\", \"description\": \"bytes "
	    "left out of stdout\"}, "
	    "\"stderr_cut\": {\"type\": \"integer\"}, "
	    "\"timed_out\": {\"type\": \"boolean\"}, "
	    "\"cwd\": {\"type\": \"string\"}, "
	    "\"duration_ms\": {\"type\": \"integer\"}, "
	    "\"refused\": {\"type\": \"array\", \"items\": {\"type\": "
	    "\"object\", \"properties\": {\"host\": {\"type\": \"string\"}, "
	    "\"port\": {\"type\": \"integer\"}, \"protocol\": {\"type\": "
	    "\"string\"}, \"reason\": {\"type\": \"string\"}, \"rule\": "
	    "{\"type\": [\"string\", \"null\"]}, \"fix\": {\"type\": "
	    "[\"string\", \"null\"]}, \"allow\": {\"type\": [\"string\", "
	    "\"null\"]}, \"count\": {\"type\": \"integer\"}}, \"required\": "
	    "[\"host\", \"port\", \"reason\"]}}}, "
	    "\"required\": [\"exit_status\", \"stdout\", \"stderr\", "
	    "\"stdout_cut\", \"stderr_cut\", \"timed_out\", \"refused\"]}, "
	    "\"annotations\": {\"destructiveHint\": true, \"openWorldHint\": "
	    "true}}", 0, &je);
	if (t == NULL)
		fatalx("mcp: the tool's description: %s", je.text);
	return t;
}

/* Reads what fd has; returns 0 at its end, -1 when nothing now. */
static ssize_t
mcp_call_read(int fd, char *buf, size_t len)
{
	ssize_t	 n;

	while ((n = read(fd, buf, len)) == -1 && errno == EINTR)
		;
	if (n == -1 && errno != EAGAIN)
		return 0;
	return n;
}

static void
mcp_out_add(struct mcp_out *o, const char *p, size_t n)
{
	size_t	 k;

	o->mo_total += n;
	k = MIN(n, MCP_HALF - o->mo_hlen);
	memcpy(o->mo_head + o->mo_hlen, p, k);
	o->mo_hlen += k;
	for (p += k, n -= k; n > 0; p += k, n -= k) {
		k = MIN(n, MCP_HALF - o->mo_tpos);
		memcpy(o->mo_tail + o->mo_tpos, p, k);
		o->mo_tpos = (o->mo_tpos + k) % MCP_HALF;
		o->mo_tlen = MIN(o->mo_tlen + k, MCP_HALF);
	}
}

/* The stream as kept, with a line where bytes were cut; *cut how many. */
static json_t *
mcp_out_json(const struct mcp_out *o, json_int_t *cut)
{
	char	*buf, mark[96];
	size_t	 len, start, m = 0;
	json_t	*j;

	*cut = (json_int_t)(o->mo_total - o->mo_hlen - o->mo_tlen);
	if (*cut > 0)
		m = (size_t)snprintf(mark, sizeof(mark), "\n[cordon: %lld "
		    "bytes left out here]\n", (long long)*cut);
	buf = xmalloc(o->mo_hlen + m + o->mo_tlen + 1);
	memcpy(buf, o->mo_head, o->mo_hlen);
	memcpy(buf + o->mo_hlen, mark, m);
	len = o->mo_hlen + m;
	start = o->mo_tlen < MCP_HALF ? 0 : o->mo_tpos;
	memcpy(buf + len, o->mo_tail + start, o->mo_tlen - start);
	memcpy(buf + len + o->mo_tlen - start, o->mo_tail, start);
	len += o->mo_tlen;
	j = mcpmsg_text(buf, len);
	free(buf);
	return j;
}

/*
 * The call's arguments: command, and cwd and timeout if given.
 * Returns 0, or -1 with why in *why (static).
 */
static int
mcp_call_args(const json_t *args, const char **cmd, const char **cwd,
    long long *timeout_ms, const char **why)
{
	const json_t	*t;
	double		 secs = MCP_TIMEOUT_DEF;

	*cmd = json_string_value(json_object_get(args, "command"));
	*cwd = NULL;
	if (!json_is_object(args) || *cmd == NULL || **cmd == '\0') {
		*why = "the argument \"command\" (a string: the command line) "
		    "is missing";
		return -1;
	}
	if (strlen(*cmd) != json_string_length(json_object_get(args,
	    "command"))) {
		*why = "the command holds a NUL byte";
		return -1;
	}
	if ((t = json_object_get(args, "cwd")) != NULL && !json_is_null(t)) {
		if ((*cwd = json_string_value(t)) == NULL ||
		    strlen(*cwd) != json_string_length(t)) {
			*why = "\"cwd\" is not a folder's name";
			return -1;
		}
	}
	if ((t = json_object_get(args, "timeout")) != NULL &&
	    !json_is_null(t)) {
		secs = json_number_value(t);
		if (!json_is_number(t) || secs <= 0 || secs > MCP_TIMEOUT_MAX) {
			*why = "\"timeout\" is not a number of seconds from 0 "
			    "to 86400";
			return -1;
		}
	}
	*timeout_ms = (long long)(secs * 1000);
	return 0;
}

/* Closes a descriptor of ours and marks it so. */
static void
mcp_close(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

/*
 * Sends the command to the session: our ends of its stdio kept, the
 * others given.  Returns 0, or -1 with why in cause.
 */
static int
mcp_call_send(struct mcp_call *c, const char *cmd, const char *cwd,
    char *cause, size_t clen)
{
	struct mcp	*m = c->mc_m;
	extern char	**environ;
	char		 id[SESS_ID_LEN + 1];
	char		**argv;
	int		 sp[2], po[2], pe[2], stdio[3], rc = -1;
	size_t		 i, n, len, argc;

	len = m->m_exports != NULL ? strlen(m->m_exports) : 0;
	n = (len + MCP_PIECE - 1) / MCP_PIECE;
	/* sh -c WRAPPER $0 $1 $2 $3 PIECES (copies: argv is not const). */
	argv = xcalloc(n + 8, sizeof(*argv));
	argv[0] = xstrdup("sh");
	argv[1] = xstrdup("-c");
	argv[2] = xstrdup(mcp_wrapper);
	argv[3] = xstrdup("cordon-mcp");
	argv[4] = xstrdup(cmd);
	argv[5] = xstrdup(m->m_cwd != NULL ? m->m_cwd : "");
	argv[6] = xstrdup(cwd != NULL ? cwd : "");
	for (i = 0; i < n; i++)
		argv[7 + i] = xstrndup(m->m_exports + i * MCP_PIECE,
		    MCP_PIECE);
	argc = 7 + n;
	sp[0] = sp[1] = po[0] = po[1] = pe[0] = pe[1] = -1;
	if ((c->mc_s = sessclient_connect(m->m_sid, id, sizeof(id), cause,
	    clen)) == -1)
		goto out;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1 ||
	    pipe2(po, O_CLOEXEC) == -1 || pipe2(pe, O_CLOEXEC) == -1 ||
	    (c->mc_report = memfd_create("cordon-mcp-report",
	    MFD_CLOEXEC)) == -1) {
		snprintf(cause, clen, "the command's descriptors: %s",
		    strerror(errno));
		goto out;
	}
	stdio[0] = sp[1];
	stdio[1] = po[1];
	stdio[2] = pe[1];
	if (sessclient_request(c->mc_s, m->m_ws, argv, environ, stdio,
	    c->mc_report, 0) == -1) {
		snprintf(cause, clen, "session %s: sending the command: %s",
		    m->m_sid, strerror(errno));
		goto out;
	}
	c->mc_state_fd = sp[0];
	c->mc_out[0].mo_fd = po[0];
	c->mc_out[1].mo_fd = pe[0];
	sp[0] = po[0] = pe[0] = -1;
	fcntl(c->mc_state_fd, F_SETFL, O_NONBLOCK);
	fcntl(c->mc_out[0].mo_fd, F_SETFL, O_NONBLOCK);
	fcntl(c->mc_out[1].mo_fd, F_SETFL, O_NONBLOCK);
	rc = 0;
out:
	mcp_close(&sp[0]);
	mcp_close(&sp[1]);
	mcp_close(&po[0]);
	mcp_close(&po[1]);
	mcp_close(&pe[0]);
	mcp_close(&pe[1]);
	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	return rc;
}

/*
 * Starts the tool call id (kept) with args: the session started first
 * if it is not, and again if it ended (said in the result).  Returns
 * the call, or NULL with the words of a tool error in *why (the
 * caller's to free).
 */
struct mcp_call *
mcp_call_start(struct mcp *m, json_t *id, json_t *args, char **why)
{
	struct mcp_call	*c;
	const char	*cmd, *cwd, *bad;
	char		 cause[2048], *err = NULL;
	long long	 timeout_ms;

	*why = NULL;
	if (mcp_call_args(args, &cmd, &cwd, &timeout_ms, &bad) == -1) {
		*why = xstrdup(bad);
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->mc_m = m;
	c->mc_s = c->mc_state_fd = c->mc_report = -1;
	c->mc_out[0].mo_fd = c->mc_out[1].mo_fd = -1;
	c->mc_timeout_ms = timeout_ms;
	if (m->m_sid[0] == '\0' && mcp_session(m, &err) == -1)
		goto fail;
	if (mcp_call_send(c, cmd, cwd, cause, sizeof(cause)) == -1) {
		/* The session ended (idle, killed): a new one, said so. */
		log_warnx("mcp: %s", cause);
		mcp_close(&c->mc_s);
		mcp_close(&c->mc_report);
		m->m_sid[0] = '\0';
		if (mcp_session(m, &err) == -1)
			goto fail;
		xasprintf(&c->mc_note, "cordon: the session had ended (%s); "
		    "this command runs in a new one: the folder, variables, "
		    "background processes and /tmp of the old one are gone\n",
		    cause);
		if (mcp_call_send(c, cmd, cwd, cause, sizeof(cause)) == -1) {
			err = xstrdup(cause);
			goto fail;
		}
	}
	c->mc_id = json_incref(id);
	clock_gettime(CLOCK_MONOTONIC, &c->mc_start);
	return c;
fail:
	*why = err;
	mcp_call_free(c);
	return NULL;
}

/* The request's id, lent. */
const json_t *
mcp_call_id(const struct mcp_call *c)
{
	return c->mc_id;
}

/* The descriptors to poll (POLLIN), at most 4; returns how many. */
int
mcp_call_fds(struct mcp_call *c, int *fds, int max)
{
	int	 n = 0;

	if (max < 4)
		return 0;
	if (c->mc_s != -1)
		fds[n++] = c->mc_s;
	if (c->mc_out[0].mo_fd != -1)
		fds[n++] = c->mc_out[0].mo_fd;
	if (c->mc_out[1].mo_fd != -1)
		fds[n++] = c->mc_out[1].mo_fd;
	if (c->mc_state_fd != -1)
		fds[n++] = c->mc_state_fd;
	return n;
}

/* The keeper's word: the command's status, or why it has none. */
static void
mcp_call_keeper(struct mcp_call *c)
{
	struct sessmsg	 sm;
	char		 text[SESS_TEXT_MAX];
	int		 fds[SESS_FDS_MAX], nfds;
	ssize_t		 n;

	n = sessmsg_recv(c->mc_s, &sm, text, sizeof(text), fds, &nfds);
	if (n > 0)
		sessmsg_close(fds, nfds);
	if (n > 0 && sm.sm_type != SESS_EXIT && sm.sm_type != SESS_ERROR)
		return;
	if (n > 0 && sm.sm_type == SESS_EXIT)
		c->mc_status = sm.sm_arg;
	else {
		c->mc_status = n > 0 && sm.sm_arg != 0 ? sm.sm_arg :
		    SESS_EXIT_FAILURE;
		free(c->mc_note);
		xasprintf(&c->mc_note, "%s", n > 0 ? text : "cordon: the "
		    "session ended while the command ran; nothing is known "
		    "of its status\n");
	}
	c->mc_exited = true;
	c->mc_exit_ms = clock_ms_since(&c->mc_start);
	mcp_close(&c->mc_s);
}

/* What poll said of the descriptors mcp_call_fds gave. */
void
mcp_call_ready(struct mcp_call *c, const int *fds, const short *revents,
    int n)
{
	char		 buf[65536];
	ssize_t		 r;
	int		 i, k;

	for (i = 0; i < n; i++) {
		if (revents[i] == 0)
			continue;
		if (fds[i] == c->mc_s) {
			mcp_call_keeper(c);
			continue;
		}
		for (k = 0; k < 2; k++)
			if (fds[i] == c->mc_out[k].mo_fd) {
				if ((r = mcp_call_read(fds[i], buf,
				    sizeof(buf))) == 0)
					mcp_close(&c->mc_out[k].mo_fd);
				else if (r > 0)
					mcp_out_add(&c->mc_out[k], buf,
					    (size_t)r);
			}
		if (fds[i] != c->mc_state_fd)
			continue;
		if ((r = mcp_call_read(fds[i], buf, sizeof(buf))) == 0)
			mcp_close(&c->mc_state_fd);
		else if (r > 0 && c->mc_slen + (size_t)r > MCP_STATE_MAX)
			c->mc_state_over = true;
		else if (r > 0) {
			c->mc_state = xreallocarray(c->mc_state, c->mc_slen +
			    (size_t)r + 1, 1);
			memcpy(c->mc_state + c->mc_slen, buf, (size_t)r);
			c->mc_slen += (size_t)r;
		}
	}
}

/* Milliseconds poll may wait before mcp_call_tick has work. */
long
mcp_call_wait_ms(const struct mcp_call *c)
{
	long long	 now = clock_ms_since(&c->mc_start), w;

	if (c->mc_exited)
		w = c->mc_exit_ms + MCP_DRAIN_MS - now;
	else if (c->mc_sig != 0)
		w = c->mc_sig_ms + MCP_KILL_MS - now;
	else
		w = c->mc_timeout_ms - now;
	return w < 0 ? 0 : (long)w;
}

/* Passes sig on to the command's process group. */
static void
mcp_call_signal(struct mcp_call *c, int sig)
{
	struct sessmsg	 sm;

	if (c->mc_s == -1 || c->mc_sig == sig)
		return;
	memset(&sm, 0, sizeof(sm));
	sm.sm_type = SESS_SIGNAL;
	sm.sm_arg = sig;
	(void)sessmsg_send(c->mc_s, &sm, NULL, NULL, 0);
	c->mc_sig = sig;
	c->mc_sig_ms = clock_ms_since(&c->mc_start);
}

/* Its time up: SIGTERM, and SIGKILL MCP_KILL_MS later. */
void
mcp_call_tick(struct mcp_call *c)
{
	long long	 now = clock_ms_since(&c->mc_start);

	if (c->mc_exited)
		return;
	if (c->mc_sig == 0 && now >= c->mc_timeout_ms) {
		c->mc_timed_out = true;
		mcp_call_signal(c, SIGTERM);
	} else if (c->mc_sig == SIGTERM && now >= c->mc_sig_ms +
	    MCP_KILL_MS)
		mcp_call_signal(c, SIGKILL);
}

/* The client cancelled it, or left: ended at once, and not answered. */
void
mcp_call_cancel(struct mcp_call *c)
{
	c->mc_cancelled = true;
	mcp_call_signal(c, SIGKILL);
}

/*
 * Whether it is over: the status known, and its output read to its end
 * or for MCP_DRAIN_MS more (a background process may hold the pipes).
 */
bool
mcp_call_done(const struct mcp_call *c)
{
	if (!c->mc_exited)
		return false;
	return (c->mc_out[0].mo_fd == -1 && c->mc_out[1].mo_fd == -1 &&
	    c->mc_state_fd == -1) || clock_ms_since(&c->mc_start) >=
	    c->mc_exit_ms + MCP_DRAIN_MS;
}

/*
 * The wrapper's state, "FOLDER\n\0EXPORTS" (export -p's text, with no
 * NUL: one would cut an argument), made the next call's, without the
 * variables too long for an environment (mcpmsg_exports).
 */
static void
mcp_call_state(struct mcp_call *c)
{
	struct mcp	*m = c->mc_m;
	char		*nul;
	size_t		 rest;

	if (c->mc_state == NULL || c->mc_state_over)
		return;
	c->mc_state[c->mc_slen] = '\0';
	if ((nul = memchr(c->mc_state, '\0', c->mc_slen)) == NULL ||
	    nul == c->mc_state || nul[-1] != '\n' || c->mc_state[0] != '/')
		return;
	rest = c->mc_slen - (size_t)(nul + 1 - c->mc_state);
	if (memchr(nul + 1, '\0', rest) != NULL)
		return;
	nul[-1] = '\0';
	free(m->m_cwd);
	m->m_cwd = xstrdup(c->mc_state);
	rest = mcpmsg_exports(nul + 1, rest, MCP_VAR_MAX);
	mcp_exports_set(m, xstrndup(nul + 1, rest));
}

/*
 * The report's refusals, or an empty array.  Read whole, then parsed:
 * json_loadfd reads a byte a call.
 */
static json_t *
mcp_call_refused(struct mcp_call *c)
{
	json_error_t	 je;
	struct stat	 st;
	json_t		*doc = NULL, *r;
	char		*buf;
	ssize_t		 n;

	if (fstat(c->mc_report, &st) == -1 || st.st_size <= 0 ||
	    st.st_size > MCP_REPORT_MAX)
		return json_array();
	buf = xmalloc((size_t)st.st_size);
	if ((n = pread(c->mc_report, buf, (size_t)st.st_size, 0)) > 0)
		doc = json_loadb(buf, (size_t)n, 0, &je);
	free(buf);
	if (doc == NULL)
		return json_array();
	r = json_object_get(doc, "refused");
	r = json_is_array(r) ? json_incref(r) : json_array();
	json_decref(doc);
	return r;
}

/* The text the model reads: the output, then the status. */
static json_t *
mcp_call_text(const struct mcp_call *c, json_t *sc)
{
	const char	*out, *err;
	char		*t, tail[160];
	json_t		*j;
	int		 st = c->mc_status;

	out = json_string_value(json_object_get(sc, "stdout"));
	err = json_string_value(json_object_get(sc, "stderr"));
	if (c->mc_timed_out)
		snprintf(tail, sizeof(tail), "[timed out after %.1f s: ended, "
		    "exit status %d]", (double)c->mc_timeout_ms / 1000, st);
	else if (st > 128 && st < 128 + 65)
		snprintf(tail, sizeof(tail), "[exit status %d: signal %d]",
		    st, st - 128);
	else
		snprintf(tail, sizeof(tail), "[exit status %d]", st);
	xasprintf(&t, "%s%s%s%s%s%s%s", c->mc_note != NULL ? c->mc_note : "",
	    out, *out != '\0' && out[strlen(out) - 1] != '\n' ? "\n" : "",
	    *err != '\0' ? "[stderr]\n" : "", err, *err != '\0' &&
	    err[strlen(err) - 1] != '\n' ? "\n" : "", tail);
	j = json_pack("{s:s, s:o}", "type", "text", "text", mcpmsg_text(t,
	    strlen(t)));
	free(t);
	return j;
}

/*
 * The call's result (content, structuredContent, isError), and its
 * request's id in *id (the caller's); NULL when it was cancelled: a
 * cancelled request is not answered.
 */
json_t *
mcp_call_result(struct mcp_call *c, json_t **id)
{
	json_t		*sc, *out, *err;
	json_int_t	 ocut, ecut;
	int		 st = c->mc_status;

	*id = c->mc_id;
	c->mc_id = NULL;
	if (!c->mc_timed_out)
		mcp_call_state(c);
	if (c->mc_cancelled)
		return NULL;
	out = mcp_out_json(&c->mc_out[0], &ocut);
	err = mcp_out_json(&c->mc_out[1], &ecut);
	sc = json_pack("{s:i, s:o, s:o, s:I, s:I, s:b, s:s, s:I, s:o}",
	    "exit_status", st, "stdout", out, "stderr", err,
	    "stdout_cut", ocut, "stderr_cut", ecut, "timed_out",
	    c->mc_timed_out, "cwd", c->mc_m->m_cwd != NULL ? c->mc_m->m_cwd :
	    c->mc_m->m_ws, "duration_ms", (json_int_t)c->mc_exit_ms,
	    "refused", mcp_call_refused(c));
	if (st > 128 && st < 128 + 65)
		json_object_set_new(sc, "signal", json_integer(st - 128));
	return json_pack("{s:[o], s:o, s:b}", "content", mcp_call_text(c, sc),
	    "structuredContent", sc, "isError", c->mc_timed_out);
}

void
mcp_call_free(struct mcp_call *c)
{
	if (c == NULL)
		return;
	mcp_close(&c->mc_s);
	mcp_close(&c->mc_out[0].mo_fd);
	mcp_close(&c->mc_out[1].mo_fd);
	mcp_close(&c->mc_state_fd);
	mcp_close(&c->mc_report);
	json_decref(c->mc_id);
	free(c->mc_state);
	free(c->mc_note);
	free(c);
}
