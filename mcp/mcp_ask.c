/*
 * mcp_ask.c: with --ask, the session's control channel is ours: a
 * socket in a private folder, given to the session as --control.  A
 * connection no rule allows is held and asked about there; we ask the
 * user through the client (elicitation/create) when the client said it
 * can be asked, and answer the session with the user's choice.  A
 * client that cannot be asked gets no question: the answer is deny at
 * once, and the refusal stands, with its reason and fix in the result.
 * The channel's other events (refused, command) are not needed here:
 * each call's report lists its refusals.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "mcp/mcp.h"
#include "session/sess.h"

/* The folder (mode 0700) and the socket the session connects to. */
int
mcp_ask_open(struct mcp *m, char **cause)
{
	struct sockaddr_un	 sun;
	char			 top[PATH_MAX], why[1024];

	/* The user's folder of sessions: only its user enters. */
	if (sessdir_path(top, sizeof(top), true, why, sizeof(why)) == -1) {
		xasprintf(cause, "%s", why);
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if ((size_t)snprintf(m->m_ctl_dir, sizeof(m->m_ctl_dir),
	    "%s/mcp-XXXXXX", top) >= sizeof(m->m_ctl_dir) ||
	    mkdtemp(m->m_ctl_dir) == NULL) {
		xasprintf(cause, "a private folder in %s: %s", top,
		    strerror(errno));
		m->m_ctl_dir[0] = '\0';
		return -1;
	}
	if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/ctl",
	    m->m_ctl_dir) >= sizeof(sun.sun_path)) {
		xasprintf(cause, "%s/ctl: too long for a socket's path",
		    m->m_ctl_dir);
		return -1;
	}
	if ((m->m_ctl_lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
	    -1 || bind(m->m_ctl_lfd, (struct sockaddr *)&sun,
	    sizeof(sun)) == -1 || listen(m->m_ctl_lfd, 4) == -1) {
		xasprintf(cause, "%s: %s", sun.sun_path, strerror(errno));
		return -1;
	}
	return 0;
}

/* What to poll: the channel, or the socket it comes on; -1: none. */
int
mcp_ask_fd(const struct mcp *m)
{
	return m->m_ctl_fd != -1 ? m->m_ctl_fd : m->m_ctl_lfd;
}

/* One line to the session: the answer to its question id. */
static void
mcp_ask_answer(struct mcp *m, const char *id, const char *decision)
{
	json_t	*line;
	char	*text;

	line = json_pack("{s:s, s:s}", "answer", id, "decision", decision);
	text = json_dumps(line, JSON_COMPACT);
	json_decref(line);
	if (text == NULL)
		return;
	if (dprintf(m->m_ctl_fd, "%s\n", text) < 0)
		log_warn("mcp: --ask: answering %s", id);
	free(text);
}

/* An ask event: to the user through the client, or denied. */
static void
mcp_ask_event(struct mcp *m, json_t *ev)
{
	const char	*id, *host, *proto;
	json_int_t	 port;
	char		 rid[48], *text, *esc;

	if (json_unpack(ev, "{s:s, s:s, s:I, s:s}", "id", &id,
	    "host", &host, "port", &port, "protocol", &proto) == -1)
		return;
	if (!m->m_elicit) {
		mcp_ask_answer(m, id, "deny");
		return;
	}
	esc = str_escape(host, strlen(host));
	snprintf(rid, sizeof(rid), "cordon-ask-%lld", (long long)++m->m_seq);
	xasprintf(&text, "cordon: a command in the sandbox connects to "
	    "%s:%lld (%s), which no rule of the policy allows. Allow it?",
	    esc, (long long)port, proto);
	mcp_send(json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:{s:{s:s, s:s, "
	    "s:[s, s, s], s:[s, s, s]}}, s:[s]}}}", "id", rid, "method",
	    "elicitation/create", "params", "message", text,
	    "requestedSchema", "type", "object", "properties", "decision",
	    "type", "string", "title", "Allow this connection?", "enum",
	    "allow-once", "allow-run", "deny", "enumNames", "This once",
	    "For the rest of the session", "No", "required", "decision"));
	json_object_set_new(m->m_asks, rid, json_string(id));
	free(text);
	free(esc);
}

/* Reads the channel (or takes the session's connection) and its lines. */
void
mcp_ask_read(struct mcp *m)
{
	char		 buf[16384];
	const char	*err, *ev;
	json_t		*msg;
	ssize_t		 n;

	if (m->m_ctl_fd == -1) {
		if ((m->m_ctl_fd = accept4(m->m_ctl_lfd, NULL, NULL,
		    SOCK_CLOEXEC)) == -1)
			return;
		close(m->m_ctl_lfd);
		m->m_ctl_lfd = -1;
		return;
	}
	if ((n = read(m->m_ctl_fd, buf, sizeof(buf))) <= 0) {
		if (n == -1 && errno == EINTR)
			return;
		close(m->m_ctl_fd);
		m->m_ctl_fd = -1;
		return;
	}
	mcpmsg_feed(&m->m_ctl_in, buf, (size_t)n);
	while (mcpmsg_next(&m->m_ctl_in, &msg, &err) == 1) {
		ev = json_string_value(json_object_get(msg, "event"));
		if (ev != NULL && strcmp(ev, "ask") == 0)
			mcp_ask_event(m, msg);
		else if (ev != NULL && strcmp(ev, "error") == 0)
			log_warnx("mcp: --ask: the session: %s",
			    json_string_value(json_object_get(msg, "message")));
		json_decref(msg);
	}
}

/* The client's answer to our request id: the user's choice, or deny. */
void
mcp_ask_answered(struct mcp *m, const json_t *id, const json_t *msg)
{
	const json_t	*result;
	const char	*ask, *action, *decision = "deny", *d;

	if (!json_is_string(id) || (ask = json_string_value(json_object_get(
	    m->m_asks, json_string_value(id)))) == NULL)
		return;
	result = json_object_get(msg, "result");
	action = json_string_value(json_object_get(result, "action"));
	d = json_string_value(json_object_get(json_object_get(result,
	    "content"), "decision"));
	if (action != NULL && strcmp(action, "accept") == 0 && d != NULL &&
	    (strcmp(d, "allow-once") == 0 || strcmp(d, "allow-run") == 0))
		decision = d;
	if (m->m_ctl_fd != -1)
		mcp_ask_answer(m, ask, decision);
	json_object_del(m->m_asks, json_string_value(id));
}

void
mcp_ask_close(struct mcp *m)
{
	char	 path[PATH_MAX + 8];

	if (m->m_ctl_fd != -1)
		close(m->m_ctl_fd);
	if (m->m_ctl_lfd != -1)
		close(m->m_ctl_lfd);
	m->m_ctl_fd = m->m_ctl_lfd = -1;
	mcpmsg_clear(&m->m_ctl_in);
	if (m->m_ctl_dir[0] == '\0')
		return;
	snprintf(path, sizeof(path), "%s/ctl", m->m_ctl_dir);
	unlink(path);
	rmdir(m->m_ctl_dir);
	m->m_ctl_dir[0] = '\0';
}
