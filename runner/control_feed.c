/*
 * control_feed.c: with --proxy-socket, the run's own channel to the
 * operator's proxy (proxy/watch.c), over the same socket the sandbox
 * uses.  Before the command runs it is the preflight: a connection with
 * the run's id and PP2_TYPE_CORDON_WATCH must be answered
 * PP2_WATCH_HELLO, or nothing runs (exit 125) and the user is told why:
 * a socket they may not connect to, a stale one, a --listen listener
 * that would answer each of the command's requests 400.  Then the proxy
 * feeds it the decisions of the run's connections (its uid and id), and
 * the run counts them as it counts its own proxy's: the summary, the
 * report and the harness's refused events.  At the end it asks "end",
 * and waits (FEED_END_SECS at most) until the proxy has sent them all.
 *
 * The operator's policy decides; a run's rules only narrow it.  So a
 * refusal the run did not make itself is told with a fix for the
 * operator, never with a flag that cannot widen anything.
 *
 * The harness's live rules and answers (--control, --ask) travel on the
 * same channel: {"ask": SECS} in the preflight, answered "asking", so
 * that the proxy holds, and asks the run about, a connection the run's
 * own narrowing refused; {"allow": P, "n": N} and {"deny": P, "n": N},
 * answered "rule" (applied, or refused with the operator's rule); and
 * {"answer": ID, "decision": D} for its questions (proxy/watch_msg.c).
 * A channel that ends before the run does is reopened, and the live
 * rules replayed on it, by control_feed_replay.c.
 *
 * Runs in: cordon run on the host, on its event loop.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/util.h>

#include <openssl/ssl.h>

#include <jansson.h>

#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/xmalloc.h"
#include "proxy/proxy.h"
#include "runner/control.h"
#include "runner/run_host.h"
#include "runner/runner.h"
#include "wire/pp2.h"

#define FEED_HELLO_SECS		5	/* the preflight's answer */
#define FEED_END_SECS		5	/* the last decisions, at the end */
#define FEED_LINE_MAX		(64 * 1024)
#define FEED_ASKING		"{\"event\":\"asking\","

/* How the replay reopens a lost channel: this file's dial and start. */
static const struct feed_ops control_feed_ops = {
	.fo_dial = control_feed_dial,
	.fo_start = control_feed_start,
};

/* Says why path refused the connect (err), with the fix. */
static void
control_feed_connect_failed(const char *path, int err)
{
	struct stat	 st;
	struct group	*gr;
	struct passwd	*pw;
	const char	*user;

	log_warnx("run: cannot connect to the proxy socket %s: %s", path,
	    strerror(err));
	if (err == EACCES && stat(path, &st) == 0) {
		gr = getgrgid(st.st_gid);
		pw = getpwuid(getuid());
		user = pw != NULL ? pw->pw_name : "USER";
		log_warnx("hint: the socket is for the group %s (mode %04o); "
		    "an administrator adds you to it with: usermod -aG %s %s "
		    "(it counts from your next login)", gr != NULL ?
		    gr->gr_name : "of the socket", (unsigned int)(st.st_mode &
		    07777), gr != NULL ? gr->gr_name : "GROUP", user);
	} else if (err == EACCES)
		log_warnx("hint: you need search permission on every folder "
		    "above the socket, and write permission on it");
	else if (err == ECONNREFUSED)
		log_warnx("hint: no proxy listens there (a socket left by one "
		    "that stopped): start it (systemctl start cordon-proxy), "
		    "or name the socket it listens on");
}

/* Connects to the socket at path (through /proc for a long one). */
static int
control_feed_connect(const struct run *run, const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd, rc, saved;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) < sizeof(sun.sun_path))
		rc = snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	else
		rc = snprintf(sun.sun_path, sizeof(sun.sun_path),
		    "/proc/self/fd/%d/%s", run->r_sb.sb_net.sn_proxy_dir,
		    run->r_sb.sb_net.sn_proxy_name);
	if (rc < 0 || (size_t)rc >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* Says whether buf's first off bytes hold lines lines. */
static bool
control_feed_lines(const char *buf, size_t off, int lines)
{
	const char	*nl;

	while (lines-- > 0) {
		if ((nl = memchr(buf, '\n', off)) == NULL)
			return false;
		off -= (size_t)(nl + 1 - buf);
		buf = nl + 1;
	}
	return true;
}

/*
 * Reads the proxy's first lines (lines of them) into buf (size bytes),
 * waiting up to FEED_HELLO_SECS; returns their length (0: the proxy
 * closed), or -1 on timeout or error (errno).  With ssl (a remote
 * tier), through it: its socket blocks FEED_HELLO_SECS at most.
 */
static ssize_t
control_feed_hello(int fd, SSL *ssl, char *buf, size_t size, int lines)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	size_t		 off = 0;
	ssize_t		 n;
	int		 rc;

	while (off + 1 < size && !control_feed_lines(buf, off, lines)) {
		if (ssl != NULL) {
			if ((rc = SSL_read(ssl, buf + off, (int)(size - 1 -
			    off))) <= 0)
				break;
			off += (size_t)rc;
			continue;
		}
		if ((rc = poll(&pfd, 1, FEED_HELLO_SECS * 1000)) == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (rc == -1 && errno == EINTR)
			continue;
		if (rc == -1)
			return -1;
		if ((n = recv(fd, buf + off, size - 1 - off, 0)) == -1 &&
		    errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	return (ssize_t)off;
}

/* Says what the proxy at path answered instead of the hello. */
static void
control_feed_wrong(const char *path, const char *answer, ssize_t n)
{
	if (n == -1)
		log_warnx("run: the proxy at %s did not answer the preflight "
		    "(%s)", path, strerror(errno));
	else if (strncmp(answer, "HTTP/", 5) == 0)
		log_warnx("run: the proxy at %s listens with --listen, not "
		    "--listen-sandbox: it reads no sandbox header, and would "
		    "answer each of the command's requests 400", path);
	else if (n == 0 && strncmp(path, "tls:", 4) == 0)
		log_warnx("run: the tier at %s closed the preflight without "
		    "an answer: it refused the client certificate (another "
		    "CA's, expired, revoked) or the run's header (its log "
		    "says why)", path);
	else if (n == 0)
		log_warnx("run: the proxy at %s closed the preflight without "
		    "an answer: a cordon proxy too old for --proxy-socket, or "
		    "one that refused the run's header (its log says why)",
		    path);
	else
		log_warnx("run: the proxy at %s answered the preflight with "
		    "something else than a cordon proxy's answer", path);
	if (strncmp(path, "tls:", 4) == 0)
		log_warnx("hint: the tier must be a cordon proxy listening "
		    "with --listen-sandbox tls:HOST:PORT");
	else
		log_warnx("hint: start the proxy with --listen-sandbox "
		    "unix:%s, as cordon-proxy.service does", path);
}

/* Sends len bytes of buf to the proxy.  Returns 0, or -1. */
static int
control_feed_send(int fd, SSL *ssl, const char *buf, size_t len)
{
	if (ssl != NULL)
		return SSL_write(ssl, buf, (int)len) == (int)len ? 0 : -1;
	return send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/* The feed's bufferevent on fd (and ssl, the handshake done). */
static struct bufferevent *
control_feed_bev(struct runner *rn, int fd, SSL *ssl)
{
	struct bufferevent	*bev;

	if (ssl == NULL)
		bev = bufferevent_socket_new(rn->rn_base, fd,
		    BEV_OPT_CLOSE_ON_FREE);
	else {
		evutil_make_socket_nonblocking(fd);
		bev = bufferevent_openssl_socket_new(rn->rn_base, fd, ssl,
		    BUFFEREVENT_SSL_OPEN, BEV_OPT_CLOSE_ON_FREE);
		if (bev != NULL)
			bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	}
	if (bev == NULL)
		fatalx("run: cannot make the feed's bufferevent");
	return bev;
}

/* Closes the preflight's connection. */
static void
control_feed_close(int fd, SSL *ssl)
{
	SSL_free(ssl);
	close(fd);
}

/*
 * The preflight: the run's channel to the operator's proxy, answered
 * as a sandbox listener answers; more (or NULL): lines sent with it (a
 * reopened channel's live rules, control_feed_replay.c).  Returns 0 with
 * rn_feed set, or -1 having said why and what to do (unless quiet).
 */
int
control_feed_dial(struct runner *rn, const char *more, bool quiet)
{
	const char	*path = rn->rn_net->net_socket;
	struct pp2_out	 po;
	char		*hdr, *cause, answer[512], *ask = NULL;
	const char	*asking = NULL;
	SSL		*ssl = NULL;
	size_t		 len;
	ssize_t		 n;
	int		 fd;

	if (rn->rn_remote != NULL) {
		if ((fd = run_remote_dial(rn, &ssl, quiet)) == -1)
			return -1;
	} else if ((fd = control_feed_connect(rn->rn_run, path)) == -1) {
		if (!quiet)
			control_feed_connect_failed(path, errno);
		return -1;
	}
	memset(&po, 0, sizeof(po));
	po.po_id = rn->rn_run->r_sb.sb_id;
	po.po_watch = PP2_WATCH_VERSION;
	if ((hdr = pp2_header(&po, &len, &cause)) == NULL)
		fatalx("run: %s", cause);
	/* --ask: the proxy must say it holds and asks before the command. */
	if (rn->rn_net->net_ask)
		xasprintf(&ask, "{\"ask\":%d}\n%s", rn->rn_net->net_ask_secs,
		    more != NULL ? more : "");
	else if (more != NULL)
		ask = xstrdup(more);
	/* One write: the proxy reads the rules with the header. */
	if (ask != NULL) {
		hdr = xreallocarray(hdr, len + strlen(ask), 1);
		memcpy(hdr + len, ask, strlen(ask));
		len += strlen(ask);
		free(ask);
	}
	n = control_feed_send(fd, ssl, hdr, len) == 0 ?
	    control_feed_hello(fd, ssl, answer, sizeof(answer),
	    rn->rn_net->net_ask ? 2 : 1) : -1;
	free(hdr);
	if (n <= 0 || strncmp(answer, PP2_WATCH_HELLO,
	    strlen(PP2_WATCH_HELLO)) != 0) {
		if (!quiet)
			control_feed_wrong(path, answer, n);
		control_feed_close(fd, ssl);
		return -1;
	}
	len = strlen(PP2_WATCH_HELLO);
	if (rn->rn_net->net_ask) {
		asking = answer + len;
		if (strncmp(asking, FEED_ASKING, strlen(FEED_ASKING)) != 0) {
			if (!quiet) {
				log_warnx("run: the proxy at %s does not hold "
				    "and ask about connections (--ask): a "
				    "cordon proxy older than this run", path);
				log_warnx("hint: run without --ask, or ask its "
				    "operator to update cordon");
			}
			control_feed_close(fd, ssl);
			return -1;
		}
		len += (size_t)(strchr(asking, '\n') + 1 - asking);
	}
	rn->rn_feed = control_feed_bev(rn, fd, ssl);
	/*
	 * What came after the hello is the first of the feed.  A socket
	 * bufferevent's input takes no evbuffer_add (its end is frozen
	 * but while it reads); the front is free, and it is empty.
	 */
	if ((size_t)n > len)
		evbuffer_prepend(bufferevent_get_input(rn->rn_feed), answer +
		    len, (size_t)n - len);
	return 0;
}

/* The preflight, before the command: 0, or -1 having said why. */
int
control_feed_open(struct runner *rn)
{
	return control_feed_dial(rn, NULL, false);
}

/*
 * The fix for a refusal the operator's policy made: a run cannot widen
 * it, so the fix is the operator's.  Returns a new string.
 */
static char *
control_feed_operator_fix(const struct runner *rn, const char *rule,
    const char *from, const char *pattern)
{
	char	*fix;

	if (rule != NULL)
		xasprintf(&fix, "the operator's proxy (%s) refuses it by \"%s\" "
		    "from %s, and a run can only narrow its policy: ask its "
		    "operator", rn->rn_net->net_socket, rule, from != NULL ?
		    from : "its policy");
	else
		xasprintf(&fix, "the operator's proxy (%s) allows it by no "
		    "rule, and a run can only narrow its policy: ask its "
		    "operator to add \"%s\" to network.allow of its policy",
		    rn->rn_net->net_socket, pattern != NULL ? pattern : "it");
	return fix;
}

/* The string at key of doc, or NULL (missing, null or not a string). */
static const char *
control_feed_str(const json_t *doc, const char *key)
{
	return json_string_value(json_object_get(doc, key));
}

/* The integer at key of doc, or 0. */
static json_int_t
control_feed_int(const json_t *doc, const char *key)
{
	return json_integer_value(json_object_get(doc, key));
}

/* One decision the proxy fed, counted as the run's own proxy's are. */
static void
control_feed_decision(struct runner *rn, const json_t *doc)
{
	struct egress	 e;
	const char	*fix, *pattern;
	char		*opfix = NULL;

	memset(&e, 0, sizeof(e));
	if ((e.e_host = control_feed_str(doc, "host")) == NULL)
		return;
	e.e_hostlen = strlen(e.e_host);
	e.e_port = (int)control_feed_int(doc, "port");
	e.e_allow = json_is_true(json_object_get(doc, "allow"));
	e.e_up = (uint64_t)control_feed_int(doc, "up");
	e.e_down = (uint64_t)control_feed_int(doc, "down");
	e.e_proto = control_feed_str(doc, "protocol");
	e.e_method = control_feed_str(doc, "method");
	e.e_reason = control_feed_str(doc, "reason");
	e.e_rule = control_feed_str(doc, "rule");
	e.e_rule_from = control_feed_str(doc, "rule_from");
	e.e_sandbox = rn->rn_run->r_sb.sb_id;
	fix = control_feed_str(doc, "fix");
	pattern = control_feed_str(doc, "pattern");
	if (e.e_allow || fix == NULL)
		;
	else if (!json_is_true(json_object_get(doc, "by_run")))
		fix = opfix = control_feed_operator_fix(rn, e.e_rule,
		    e.e_rule_from, pattern);
	else if (e.e_rule != NULL) {
		/* The run's own deny entry: the operator's policy allows. */
		xasprintf(&opfix, "this run's own rules refuse it (\"%s\", "
		    "from %s: its --deny-domain, policy, workspace policy or "
		    "control channel); remove it there if that is wrong",
		    e.e_rule, e.e_rule_from != NULL ? e.e_rule_from : "it");
		fix = opfix;
	}
	control_tell_observe(&e, fix, pattern, rn);
	free(opfix);
}

/* The operator's proxy holds a connection of the run and asks. */
static void
control_feed_ask(struct runner *rn, const json_t *doc)
{
	struct egress	 e;
	const char	*id;

	memset(&e, 0, sizeof(e));
	if ((id = control_feed_str(doc, "id")) == NULL ||
	    (e.e_host = control_feed_str(doc, "host")) == NULL)
		return;
	e.e_hostlen = strlen(e.e_host);
	e.e_port = (int)control_feed_int(doc, "port");
	e.e_proto = control_feed_str(doc, "protocol");
	/* Nobody to ask: the run's answer is no. */
	if (!rn->rn_net->net_ask || !control_alive(rn->rn_control)) {
		control_feed_answer(rn, id, "deny");
		return;
	}
	control_tell_ask(rn, id, &e,
	    (int)control_feed_int(doc, "timeout_secs"));
}

/*
 * The proxy's answer to a live rule: applied, or why not; told to the
 * harness unless it answers a rule replayed on a reopened channel.
 */
static void
control_feed_said(struct runner *rn, const json_t *doc)
{
	const char	*allow, *deny, *pattern, *why;
	json_t		*n;

	allow = control_feed_str(doc, "allow");
	deny = control_feed_str(doc, "deny");
	if (allow == NULL && deny == NULL)
		return;
	pattern = allow != NULL ? allow : deny;
	why = control_feed_str(doc, "error");
	n = json_object_get(doc, "n");
	if (control_feed_replay_kept(rn, allow != NULL, pattern,
	    json_is_integer(n) ? (long long)json_integer_value(n) : -1, why))
		control_tell_said(rn, allow != NULL, pattern, why);
}

static void
control_feed_read_cb(struct bufferevent *bev, void *arg)
{
	struct runner	*rn = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	const char	*event, *reason;
	char		*line, *closed = NULL;
	size_t		 len;
	json_t		*doc;

	while (closed == NULL && (line = evbuffer_readln(in, &len,
	    EVBUFFER_EOL_LF)) != NULL) {
		doc = json_loads(line, 0, NULL);
		free(line);
		if (doc == NULL || json_unpack(doc, "{s:s}", "event",
		    &event) == -1) {
			json_decref(doc);
			continue;
		}
		if (strcmp(event, "decision") == 0)
			control_feed_decision(rn, doc);
		else if (strcmp(event, "ask") == 0)
			control_feed_ask(rn, doc);
		else if (strcmp(event, "unasked") == 0 && json_unpack(doc,
		    "{s:s}", "id", &reason) == 0)
			control_tell_gone(rn, reason);
		else if (strcmp(event, "rule") == 0)
			control_feed_said(rn, doc);
		else if (strcmp(event, "end") == 0) {
			rn->rn_feed_ended = true;
			event_base_loopbreak(rn->rn_base);
		} else if (strcmp(event, "closed") == 0 && json_unpack(doc,
		    "{s:s}", "reason", &reason) == 0)
			closed = xstrdup(reason);
		json_decref(doc);
	}
	/* The proxy ended the channel, saying why: reopened as if lost. */
	if (closed != NULL) {
		if (!rn->rn_done)
			control_feed_replay_lost(rn, closed, &control_feed_ops);
		else
			log_warnx("run: the proxy closed the run's channel: "
			    "%s; the summary and --report miss its decisions",
			    closed);
		free(closed);
		return;
	}
	if (evbuffer_get_length(in) > FEED_LINE_MAX)
		evbuffer_drain(in, evbuffer_get_length(in));
}

static void
control_feed_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct runner	*rn = arg;

	(void)bev;
	/* Not the proxy's answer to our "end": reopened (fail closed). */
	if (!rn->rn_feed_ended && !rn->rn_done) {
		control_feed_replay_lost(rn, (what & BEV_EVENT_ERROR) ?
		    "a read error on it" : "it closed", &control_feed_ops);
		return;
	}
	rn->rn_feed_ended = true;
	bufferevent_disable(bev, EV_READ);
	event_base_loopbreak(rn->rn_base);
}

/* From now on the feed is read on the run's loop. */
void
control_feed_start(struct runner *rn)
{
	if (rn->rn_feed == NULL)
		return;
	bufferevent_setcb(rn->rn_feed, control_feed_read_cb, NULL,
	    control_feed_event_cb, rn);
	bufferevent_enable(rn->rn_feed, EV_READ);
	control_feed_read_cb(rn->rn_feed, rn);
}

/*
 * The sandbox is gone: asks for the end of the feed and reads it, so
 * that the last connections' decisions are in the summary and report.
 */
void
control_feed_end(struct runner *rn)
{
	struct timeval	 tv = { FEED_END_SECS, 0 };

	control_feed_replay_end(rn);
	if (rn->rn_feed == NULL)
		return;
	if (!rn->rn_feed_ended && bufferevent_write(rn->rn_feed, "end\n",
	    4) == 0) {
		event_base_loopexit(rn->rn_base, &tv);
		while (!rn->rn_feed_ended)
			if (event_base_dispatch(rn->rn_base) != 0 ||
			    event_base_got_exit(rn->rn_base))
				break;
		if (!rn->rn_feed_ended)
			log_warnx("run: the proxy did not send the run's last "
			    "decisions within %d s; the summary and --report "
			    "may miss some", FEED_END_SECS);
	}
	bufferevent_free(rn->rn_feed);
	rn->rn_feed = NULL;
}

/* Sends msg (taken) to the operator's proxy, a line of its own. */
static void
control_feed_write(struct runner *rn, json_t *msg)
{
	char	*text;

	if ((text = json_dumps(msg, JSON_COMPACT)) != NULL) {
		bufferevent_write(rn->rn_feed, text, strlen(text));
		bufferevent_write(rn->rn_feed, "\n", 1);
		free(text);
	}
	json_decref(msg);
}

/* Sends a live rule, numbered n, to the operator's proxy. */
void
control_feed_rule_n(struct runner *rn, bool allow, const char *pattern,
    long long n)
{
	control_feed_write(rn, json_pack("{s:s, s:I}", allow ? "allow" : "deny",
	    pattern, "n", (json_int_t)n));
}

/*
 * Sends the harness's live rule to the operator's proxy, and keeps it
 * to replay on a reopened channel (kept unsent while it reopens).
 */
void
control_feed_rule(struct runner *rn, bool allow, const char *pattern)
{
	if (control_feed_replay_reopening(rn)) {
		control_feed_replay_keep(rn, allow, pattern, 0);
		return;
	}
	control_feed_replay_keep(rn, allow, pattern, (long long)++rn->rn_seq);
	control_feed_rule_n(rn, allow, pattern, (long long)rn->rn_seq);
}

/* Sends the harness's decision on the proxy's question id. */
void
control_feed_answer(struct runner *rn, const char *id, const char *decision)
{
	if (rn->rn_feed == NULL || rn->rn_feed_ended)
		return;
	control_feed_write(rn, json_pack("{s:s, s:s}", "answer", id, "decision",
	    decision));
}
