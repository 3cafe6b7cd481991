/*
 * control.c: the control channel of `cordon run --control`, one JSON
 * object per line each way, to the harness that runs the command.
 *
 * cordon connects (to a Unix socket the harness listens on) or is handed
 * a descriptor, sends events as they happen, and reads the harness's
 * messages: {"allow": P}, {"deny": P} and {"answer": ID, "decision":
 * "allow-once" | "allow-run" | "deny"}.  Each message is checked like
 * policy input, whole, before anything of it is applied: an unknown
 * key, a wrong type or a bad pattern is an "error" event and changes
 * nothing.  The protocol is documented in docs/agents.md.
 *
 * Runs in: cordon run on the host, on its event loop.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <jansson.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "runner/control.h"

#define CONTROL_LINE_MAX	(64 * 1024)

struct control {
	struct bufferevent		*ct_bev;
	const struct control_hooks	*ct_hooks;
	void				*ct_arg;
	bool				 ct_alive;
};

/* Opens "fd:N" or connects to the Unix socket at path. */
static int
control_fd(const char *spec, char **cause)
{
	struct sockaddr_un	 sun;
	char			*end;
	long			 n;
	int			 fd;

	if (strncmp(spec, "fd:", 3) == 0) {
		n = strtol(spec + 3, &end, 10);
		if (spec[3] == '\0' || *end != '\0' || n < 3 || n > 65535 ||
		    fcntl((int)n, F_GETFD) == -1) {
			xasprintf(cause, "--control %s: not an open descriptor "
			    "above 2", spec);
			return -1;
		}
		fd = (int)n;
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		return fd;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(spec) >= sizeof(sun.sun_path)) {
		xasprintf(cause, "--control %s: longer than a Unix socket "
		    "path may be (%zu bytes); use a shorter one, or fd:N",
		    spec, sizeof(sun.sun_path) - 1);
		return -1;
	}
	memcpy(sun.sun_path, spec, strlen(spec));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		xasprintf(cause, "--control %s: %s (the harness listens "
		    "there first)", spec, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	return fd;
}

/* Sends an "error" event: what was wrong, and the line as it came. */
static void
control_error(struct control *ct, const char *what, const char *line)
{
	control_send(ct, json_pack("{s:s, s:s, s:s}", "event", "error",
	    "message", what, "line", line));
}

/* Checks and applies one message; anything wrong applies nothing. */
static void
control_message(struct control *ct, const char *line)
{
	const struct control_hooks	*h = ct->ct_hooks;
	json_error_t			 jerr;
	json_t				*msg, *v;
	const char			*key, *id, *decision;
	char				*cause = NULL, *what;
	void				*iter;
	int				 rc;

	if ((msg = json_loads(line, JSON_REJECT_DUPLICATES, &jerr)) == NULL) {
		xasprintf(&what, "not JSON: %s", jerr.text);
		control_error(ct, what, line);
		free(what);
		return;
	}
	if (!json_is_object(msg)) {
		control_error(ct, "not a JSON object", line);
		goto out;
	}
	for (iter = json_object_iter(msg); iter != NULL;
	    iter = json_object_iter_next(msg, iter)) {
		key = json_object_iter_key(iter);
		if (strcmp(key, "allow") != 0 && strcmp(key, "deny") != 0 &&
		    strcmp(key, "answer") != 0 && strcmp(key, "decision") !=
		    0) {
			xasprintf(&what, "unknown key \"%s\"; the keys are "
			    "allow, deny, answer and decision", key);
			control_error(ct, what, line);
			free(what);
			goto out;
		}
		if (!json_is_string(json_object_iter_value(iter))) {
			xasprintf(&what, "\"%s\" must be a string", key);
			control_error(ct, what, line);
			free(what);
			goto out;
		}
	}
	if ((v = json_object_get(msg, "allow")) != NULL &&
	    json_object_size(msg) == 1)
		rc = h->ch_rule(true, json_string_value(v), ct->ct_arg, &cause);
	else if ((v = json_object_get(msg, "deny")) != NULL &&
	    json_object_size(msg) == 1)
		rc = h->ch_rule(false, json_string_value(v), ct->ct_arg,
		    &cause);
	else if ((v = json_object_get(msg, "answer")) != NULL &&
	    json_object_get(msg, "decision") != NULL &&
	    json_object_size(msg) == 2) {
		id = json_string_value(v);
		decision = json_string_value(json_object_get(msg, "decision"));
		if (strcmp(decision, "allow-once") != 0 &&
		    strcmp(decision, "allow-run") != 0 &&
		    strcmp(decision, "deny") != 0) {
			control_error(ct, "decision is allow-once, allow-run or "
			    "deny", line);
			goto out;
		}
		rc = h->ch_answer(id, decision, ct->ct_arg, &cause);
	} else {
		control_error(ct, "a message is {\"allow\": P}, {\"deny\": P} "
		    "or {\"answer\": ID, \"decision\": D}", line);
		goto out;
	}
	if (rc == -1) {
		control_error(ct, cause, line);
		free(cause);
	}
out:
	json_decref(msg);
}

static void
control_read_cb(struct bufferevent *bev, void *arg)
{
	struct control	*ct = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	char		*line;
	size_t		 len;

	while ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		if (len > 0)
			control_message(ct, line);
		free(line);
	}
	if (evbuffer_get_length(in) > CONTROL_LINE_MAX) {
		evbuffer_drain(in, evbuffer_get_length(in));
		control_error(ct, "a line longer than 64 KiB; dropped", "");
	}
}

static void
control_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct control	*ct = arg;

	(void)bev;
	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) || !ct->ct_alive)
		return;
	ct->ct_alive = false;
	bufferevent_disable(ct->ct_bev, EV_READ);
	log_warnx("run: the control channel closed; what waits for an "
	    "answer is refused, and nothing more is asked");
	ct->ct_hooks->ch_closed(ct->ct_arg);
}

/*
 * Opens the channel on base; hooks are called for each valid message and
 * when the harness goes.  Returns NULL with *cause set.
 */
struct control *
control_open(struct event_base *base, const char *spec,
    const struct control_hooks *hooks, void *arg, char **cause)
{
	struct control	*ct;
	int		 fd;

	*cause = NULL;
	if ((fd = control_fd(spec, cause)) == -1)
		return NULL;
	evutil_make_socket_nonblocking(fd);
	ct = xcalloc(1, sizeof(*ct));
	ct->ct_hooks = hooks;
	ct->ct_arg = arg;
	ct->ct_alive = true;
	if ((ct->ct_bev = bufferevent_socket_new(base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		xasprintf(cause, "--control: cannot watch the channel");
		close(fd);
		free(ct);
		return NULL;
	}
	bufferevent_setcb(ct->ct_bev, control_read_cb, NULL,
	    control_event_cb, ct);
	bufferevent_enable(ct->ct_bev, EV_READ);
	return ct;
}

bool
control_alive(const struct control *ct)
{
	return ct != NULL && ct->ct_alive;
}

/* Sends one event (takes ev); nothing when the harness is gone. */
void
control_send(struct control *ct, json_t *ev)
{
	char	*text;

	if (ev == NULL)
		return;
	if (control_alive(ct) && (text = json_dumps(ev, JSON_COMPACT)) !=
	    NULL) {
		evbuffer_add_printf(bufferevent_get_output(ct->ct_bev),
		    "%s\n", text);
		free(text);
	}
	json_decref(ev);
}

static void
control_drained_cb(struct bufferevent *bev, void *arg)
{
	(void)arg;
	event_base_loopbreak(bufferevent_get_base(bev));
}

/*
 * Writes what is queued (at most 2 s more, for a harness that does not
 * read), on the event loop that owns the channel, and closes it.
 */
void
control_free(struct control *ct)
{
	struct event_base	*base;
	struct timeval		 tv = { 2, 0 };

	if (ct == NULL)
		return;
	if (ct->ct_alive &&
	    evbuffer_get_length(bufferevent_get_output(ct->ct_bev)) > 0) {
		base = bufferevent_get_base(ct->ct_bev);
		bufferevent_setcb(ct->ct_bev, NULL, control_drained_cb,
		    control_event_cb, ct);
		event_base_loopexit(base, &tv);
		event_base_dispatch(base);
	}
	bufferevent_free(ct->ct_bev);
	free(ct);
}
