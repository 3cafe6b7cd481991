/*
 * agent.c: cordon's ssh-agent for the sandbox, in `cordon run`'s loop.
 *
 * The sandbox never reaches the user's agent: it talks to this one, on
 * a socket in the run's private folder (bound inside at RUN_AGENT_SOCK).
 * Each connection gets a connection of its own to the user's agent,
 * opened when a first request goes there, and one request is carried
 * at a time.  What goes on (agentmsg.c parses):
 *
 * - session-bind@openssh.com: the host key's signature over the session
 *   identifier must verify (agentkey.c); an open tunnel of the run's
 *   proxy must have carried that key exchange (its server sent that key
 *   and that signature: proxy/conn_ssh.c), which says where the proxy
 *   connected for the session; the key must not be @revoked, known_hosts
 *   (knownhosts.c) must list it under that destination's name ("host",
 *   "[host]:port"), and the run's policy must allow the destination.
 *   The name ssh checked the key under (HostKeyAlias) counts for
 *   nothing: two services sharing a host key are told apart by where
 *   the proxy connected.  Then the connection is bound to that
 *   destination, and the bind goes on to the user's agent too, so that
 *   its own destination constraints (ssh-add -h) hold.  One bind a
 *   connection: a second one spoils it.
 * - REQUEST_IDENTITIES: on a connection bound to an allowed host, not
 *   for forwarding, the user's agent's list; otherwise an empty one
 *   (ssh-add -L inside lists nothing).  The keys listed are remembered.
 * - SIGN_REQUEST: only on such a connection, with a key it was shown,
 *   for data that is an SSH login (agentmsg_userauth) in the bound
 *   session, for that key (and that host key, host-bound), and while
 *   the policy still allows the host.
 * - anything else (adding, removing, locking, other extensions, an
 *   older protocol): SSH_AGENT_FAILURE, and the user's agent never
 *   hears of it.
 *
 * Each signature, and each refusal of a bind or a signature, is a line
 * of the egress log (protocol "ssh-agent"); a refusal the policy made
 * reaches the summary with its fix.  Never blocks: both sides are
 * nonblocking bufferevents.
 *
 * Runs in: cordon run on the host, on its event loop.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "agent/agent.h"
#include "lib/jsonl.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"
#include "sshagent/sshagent.h"

#define AGENT_CLIENT_SECS	600	/* an idle client */
#define AGENT_REAL_SECS		120	/* the user's agent: it may ask */

struct agent_conn {
	TAILQ_ENTRY(agent_conn)	 ac_entry;
	struct agent		*ac_agent;	/* borrowed */
	struct bufferevent	*ac_client;
	struct bufferevent	*ac_real;	/* NULL until needed */
	uint8_t			 ac_pending;	/* the request carried, or 0 */
	bool			 ac_bound;	/* to an allowed host */
	bool			 ac_forwarding;
	bool			 ac_spoiled;	/* a second bind: no signing */
	uint8_t			*ac_hostkey;
	size_t			 ac_hostkeylen;
	uint8_t			*ac_sid;
	size_t			 ac_sidlen;
	char			*ac_host;	/* where the proxy connected */
	int			 ac_port;	/* for the bound session */
	char			*ac_addr;	/* its address, or NULL */
	char			*ac_rule;	/* the rule that allowed the */
	char			*ac_rule_from;	/* signature carried */
	uint8_t			**ac_keys;	/* the keys it was shown */
	size_t			*ac_keylens;
	size_t			 ac_nkeys;
	struct timeval		 ac_start;	/* of the request carried */
};

struct agent {
	struct proxy		*ag_proxy;	/* borrowed: policy, log */
	struct evconnlistener	*ag_listener;
	char			*ag_path;
	struct sockaddr_un	 ag_real;	/* the user's agent */
	struct knownhosts	*ag_kh;
	const char		*ag_sandbox;	/* borrowed, for the log */
	const char		*ag_command;
	TAILQ_HEAD(, agent_conn) ag_conns;
	size_t			 ag_nconns;
	unsigned long		 ag_signed;
	unsigned long		 ag_refused;
};

static void	agent_client_read_cb(struct bufferevent *, void *);
static bool	agent_real_open(struct agent_conn *);

/* Frees ac and both its connections. */
static void
agent_close(struct agent_conn *ac)
{
	struct agent	*ag = ac->ac_agent;
	size_t		 i;

	TAILQ_REMOVE(&ag->ag_conns, ac, ac_entry);
	ag->ag_nconns--;
	if (ac->ac_client != NULL)
		bufferevent_free(ac->ac_client);
	if (ac->ac_real != NULL)
		bufferevent_free(ac->ac_real);
	for (i = 0; i < ac->ac_nkeys; i++)
		free(ac->ac_keys[i]);
	free(ac->ac_keys);
	free(ac->ac_keylens);
	free(ac->ac_hostkey);
	free(ac->ac_sid);
	free(ac->ac_host);
	free(ac->ac_addr);
	free(ac->ac_rule);
	free(ac->ac_rule_from);
	free(ac);
}

/*
 * One line of the egress log; a refusal goes to the summary too, with
 * the policy's fix when d (the decision about the bound host) has one,
 * or else with fix.
 */
static void
agent_log(struct agent_conn *ac, const char *method, bool allow,
    const char *why, const struct decision *d, const char *fix)
{
	struct agent	*ag = ac->ac_agent;
	struct proxy	*px = ag->ag_proxy;
	struct egress	 e;
	char		*hint = NULL, *pattern = NULL;

	memset(&e, 0, sizeof(e));
	e.e_start = ac->ac_start;
	e.e_sandbox = ag->ag_sandbox;
	e.e_command = ag->ag_command;
	e.e_client = "unix";
	e.e_proto = "ssh-agent";
	e.e_method = method;
	e.e_host = ac->ac_host != NULL ? ac->ac_host : "";
	e.e_hostlen = strlen(e.e_host);
	e.e_port = ac->ac_host != NULL ? ac->ac_port : 0;
	e.e_addr = ac->ac_addr;
	e.e_allow = allow;
	e.e_reason = why;
	if (d != NULL && d->d_rule != NULL) {
		e.e_rule = d->d_rule->pi_text;
		e.e_rule_from = d->d_rule->pi_from;
	} else if (allow) {
		e.e_rule = ac->ac_rule;
		e.e_rule_from = ac->ac_rule_from;
	}
	if (allow)
		ag->ag_signed++;
	else
		ag->ag_refused++;
	if (px->px_log != NULL)
		jsonl_write(px->px_log, &e);
	if (allow || !proxy_observed(px) || e.e_port == 0)
		return;
	if (d != NULL && d->d_verdict == VERDICT_DENY) {
		hint = decision_hint(d);
		pattern = decision_pattern(d);
	} else if (fix != NULL)
		hint = xstrdup(fix);
	proxy_observe(px, &e, hint, pattern);
	free(hint);
	free(pattern);
}

/* Answers the client with a message of its own: type and body. */
static void
agent_answer(struct agent_conn *ac, uint8_t type, const void *body,
    size_t len)
{
	uint8_t	 head[5];
	uint32_t n = (uint32_t)len + 1;

	head[0] = (uint8_t)(n >> 24);
	head[1] = (uint8_t)(n >> 16);
	head[2] = (uint8_t)(n >> 8);
	head[3] = (uint8_t)n;
	head[4] = type;
	bufferevent_write(ac->ac_client, head, sizeof(head));
	if (len > 0)
		bufferevent_write(ac->ac_client, body, len);
}

static void
agent_fail(struct agent_conn *ac)
{
	agent_answer(ac, AGENT_FAILURE, NULL, 0);
}

/* Carries a request to the user's agent; a failure if it is not there. */
static void
agent_forward(struct agent_conn *ac, const uint8_t *frame, size_t len,
    uint8_t type)
{
	if (!agent_real_open(ac)) {
		agent_fail(ac);
		return;
	}
	bufferevent_write(ac->ac_real, frame, len);
	ac->ac_pending = type;
}

/* Whether the policy allows host:port now, as the proxy would decide. */
static bool
agent_allowed(const struct agent *ag, const char *host, int port,
    struct decision *d)
{
	const struct policy	*p = ag->ag_proxy->px_policy->pp_policy;

	if (!policy_match_host(p, host, strlen(host), port, d))
		return false;
	if (d->d_host.h_kind == HOST_ADDR && d->d_why != WHY_MODE_HOST &&
	    !policy_match_addr(p, &d->d_host.h_ip, d))
		return false;
	return true;
}

/* "host" on port 22, "[host]:port" elsewhere: as known_hosts names it. */
static char *
agent_khname(const char *host, int port)
{
	char	*name;

	if (port == 22)
		return xstrdup(host);
	xasprintf(&name, "[%s]:%d", host, port);
	return name;
}

/*
 * Whether known_hosts lists the key under name; *why (to free) says
 * under which name it does list it, when not.
 */
static bool
agent_known(const struct agent *ag, const struct agent_bind *b,
    const char *name, char **why)
{
	char	**names;
	size_t	 nnames;

	if (knownhosts_known(ag->ag_kh, b->ab_hostkey, b->ab_hostkeylen,
	    name))
		return true;
	knownhosts_names(ag->ag_kh, b->ab_hostkey, b->ab_hostkeylen, NULL, 0,
	    &names, &nnames);
	xasprintf(why, "the host key is not in known_hosts as %s, where the "
	    "proxy connected%s%s%s", name, nnames > 0 ? " (known_hosts has "
	    "it as " : "", nnames > 0 ? names[0] : "", nnames > 0 ? ")" : "");
	while (nnames > 0)
		free(names[--nnames]);
	free(names);
	return false;
}

/*
 * Decides a verified bind: the tunnel that carried its key exchange
 * names the destination (ac_host, ac_port), which known_hosts must list
 * the key under and the policy allow.  Returns 0, or -1 with *why (to
 * free), and *fix (to free) when the policy has none to give; d is the
 * policy's decision when *decided.
 */
static int
agent_bind_host(struct agent_conn *ac, const struct agent_bind *b,
    struct decision *d, bool *decided, char **why, char **fix)
{
	struct agent		*ag = ac->ac_agent;
	struct conn_ssh_dest	 dest;
	char			*name;
	bool			 known;

	*decided = false;
	*fix = NULL;
	if (!conn_ssh_find(ag->ag_proxy, ag->ag_sandbox, b->ab_hostkey,
	    b->ab_hostkeylen, b->ab_sig, b->ab_siglen, &dest)) {
		*why = xstrdup("no open connection of the run's proxy carried "
		    "this session's key exchange (a session inside another, "
		    "as ssh -J makes, or one that did not go through the "
		    "proxy)");
		return -1;
	}
	ac->ac_host = xstrdup(dest.sd_host);
	ac->ac_port = dest.sd_port;
	ac->ac_addr = dest.sd_addr[0] != '\0' ? xstrdup(dest.sd_addr) : NULL;
	if (knownhosts_revoked(ag->ag_kh, b->ab_hostkey, b->ab_hostkeylen)) {
		*why = xstrdup("the host key is @revoked in known_hosts");
		return -1;
	}
	name = agent_khname(dest.sd_host, dest.sd_port);
	if (!(known = agent_known(ag, b, name, why)))
		xasprintf(fix, "list the host key in known_hosts as %s, if "
		    "that server holds it", name);
	free(name);
	if (!known)
		return -1;
	*decided = true;
	if (!agent_allowed(ag, dest.sd_host, dest.sd_port, d)) {
		*why = xstrdup("the policy does not allow the host");
		return -1;
	}
	return 0;
}

/* session-bind@openssh.com: verified, mapped to a host, decided. */
static void
agent_bind(struct agent_conn *ac, struct agent_rd *r, const uint8_t *frame,
    size_t framelen)
{
	struct agent_bind	 b;
	struct decision		 d;
	const char		*cause;
	char			 fp[AGENTKEY_FP_LEN], *why = NULL, *fix = NULL;
	char			*text;
	bool			 decided = false;

	if (ac->ac_bound || ac->ac_spoiled) {
		ac->ac_spoiled = true;
		agent_log(ac, "session-bind", false, "a second session-bind "
		    "on one connection: nothing more is signed on it", NULL,
		    NULL);
		agent_fail(ac);
		return;
	}
	if (agentmsg_bind(r, &b, &cause) == -1 ||
	    agentkey_verify(b.ab_hostkey, b.ab_hostkeylen, b.ab_sig,
	    b.ab_siglen, b.ab_sid, b.ab_sidlen, &cause) == -1)
		why = xstrdup(cause);
	else
		(void)agent_bind_host(ac, &b, &d, &decided, &why, &fix);
	if (why != NULL) {
		if (b.ab_hostkey != NULL && ac->ac_host == NULL) {
			agentkey_fingerprint(b.ab_hostkey, b.ab_hostkeylen,
			    fp, sizeof(fp));
			xasprintf(&text, "%s (host key %s)", why, fp);
		} else
			text = xstrdup(why);
		agent_log(ac, "session-bind", false, text, decided ? &d :
		    NULL, fix);
		free(text);
		free(why);
		free(fix);
		if (decided)
			decision_clear(&d);
		ac->ac_spoiled = true;
		agent_fail(ac);
		return;
	}
	decision_clear(&d);
	ac->ac_bound = true;
	ac->ac_forwarding = b.ab_forwarding;
	ac->ac_hostkey = xmalloc(b.ab_hostkeylen);
	memcpy(ac->ac_hostkey, b.ab_hostkey, b.ab_hostkeylen);
	ac->ac_hostkeylen = b.ab_hostkeylen;
	ac->ac_sid = xmalloc(b.ab_sidlen);
	memcpy(ac->ac_sid, b.ab_sid, b.ab_sidlen);
	ac->ac_sidlen = b.ab_sidlen;
	/* The user's agent hears of it too: its own constraints hold. */
	agent_forward(ac, frame, framelen, AGENT_EXTENSION);
}

/* Whether the connection was shown the key. */
static bool
agent_shown(const struct agent_conn *ac, const uint8_t *key, size_t len)
{
	size_t	 i;

	for (i = 0; i < ac->ac_nkeys; i++)
		if (ac->ac_keylens[i] == len &&
		    memcmp(ac->ac_keys[i], key, len) == 0)
			return true;
	return false;
}

/* Why a sign request is refused, or NULL: it goes on. */
static const char *
agent_sign_why(struct agent_conn *ac, struct agent_rd *r,
    struct decision *d, bool *decided)
{
	struct agent_sign	 s;
	struct agent_auth	 a;
	const char		*why;

	*decided = false;
	if (!ac->ac_bound)
		return "the connection is not bound to a host (no "
		    "session-bind@openssh.com: ssh before OpenSSH 8.9, or "
		    "not an ssh login)";
	if (ac->ac_spoiled)
		return "a second session-bind on this connection";
	if (ac->ac_forwarding)
		return "the connection is for agent forwarding";
	if (agentmsg_sign(r, &s, &why) == -1)
		return why;
	if (agentmsg_userauth(s.as_data, s.as_datalen, &a, &why) == -1)
		return why;
	if (!agent_shown(ac, s.as_key, s.as_keylen))
		return "a key this connection was not shown";
	if (a.aa_sidlen != ac->ac_sidlen || memcmp(a.aa_sid, ac->ac_sid,
	    a.aa_sidlen) != 0)
		return "the login is for another session than the bound one";
	if (a.aa_keylen != s.as_keylen || memcmp(a.aa_key, s.as_key,
	    a.aa_keylen) != 0)
		return "the login names another key than the one to sign with";
	if (a.aa_hostkey != NULL && (a.aa_hostkeylen != ac->ac_hostkeylen ||
	    memcmp(a.aa_hostkey, ac->ac_hostkey, a.aa_hostkeylen) != 0))
		return "the login names another host key than the bound one";
	*decided = true;
	if (!agent_allowed(ac->ac_agent, ac->ac_host, ac->ac_port, d))
		return "the policy does not allow the host any more";
	return NULL;
}

static void
agent_sign(struct agent_conn *ac, struct agent_rd *r, const uint8_t *frame,
    size_t framelen)
{
	struct decision	 d;
	const char	*why;
	bool		 decided;

	if ((why = agent_sign_why(ac, r, &d, &decided)) != NULL) {
		agent_log(ac, "sign", false, why, decided ? &d : NULL, NULL);
		if (decided)
			decision_clear(&d);
		agent_fail(ac);
		return;
	}
	/* The log says which rule, once the user's agent has signed. */
	free(ac->ac_rule);
	free(ac->ac_rule_from);
	ac->ac_rule = d.d_rule != NULL && d.d_rule->pi_text != NULL ?
	    xstrdup(d.d_rule->pi_text) : NULL;
	ac->ac_rule_from = d.d_rule != NULL && d.d_rule->pi_from != NULL ?
	    xstrdup(d.d_rule->pi_from) : NULL;
	decision_clear(&d);
	agent_forward(ac, frame, framelen, AGENT_SIGN_REQUEST);
}

/* One whole message of the client's. */
static void
agent_request(struct agent_conn *ac, uint8_t type, struct agent_rd *body,
    const uint8_t *frame, size_t framelen)
{
	const uint8_t	*name;
	size_t		 namelen;
	static const uint8_t none[4];

	gettimeofday(&ac->ac_start, NULL);
	switch (type) {
	case AGENT_REQUEST_IDENTITIES:
		if (!ac->ac_bound || ac->ac_spoiled || ac->ac_forwarding) {
			agent_answer(ac, AGENT_IDENTITIES_ANSWER, none,
			    sizeof(none));
			break;
		}
		agent_forward(ac, frame, framelen, AGENT_REQUEST_IDENTITIES);
		break;
	case AGENT_SIGN_REQUEST:
		agent_sign(ac, body, frame, framelen);
		break;
	case AGENT_EXTENSION:
		if (agentmsg_string(body, &name, &namelen) == 0 &&
		    agentmsg_is(name, namelen, AGENT_SESSION_BIND))
			agent_bind(ac, body, frame, framelen);
		else
			agent_fail(ac);
		break;
	default:
		agent_fail(ac);
		break;
	}
}

/* Remembers a key of an identities answer. */
static void
agent_key_cb(const uint8_t *key, size_t len, void *arg)
{
	struct agent_conn	*ac = arg;

	ac->ac_keys = xreallocarray(ac->ac_keys, ac->ac_nkeys + 1,
	    sizeof(*ac->ac_keys));
	ac->ac_keylens = xreallocarray(ac->ac_keylens, ac->ac_nkeys + 1,
	    sizeof(*ac->ac_keylens));
	ac->ac_keys[ac->ac_nkeys] = xmalloc(len);
	memcpy(ac->ac_keys[ac->ac_nkeys], key, len);
	ac->ac_keylens[ac->ac_nkeys++] = len;
}

/* The user's agent's answer to the request carried: to the client. */
static void
agent_real_read_cb(struct bufferevent *bev, void *arg)
{
	struct agent_conn	*ac = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct agent_rd		 body;
	const uint8_t		*buf;
	size_t			 len, used, i;
	uint8_t			 type;
	int			 rc;

	len = evbuffer_get_length(in);
	if (len > 4 + AGENT_MSG_MAX)
		len = 4 + AGENT_MSG_MAX;
	buf = evbuffer_pullup(in, (ssize_t)len);
	if ((rc = agentmsg_frame(buf, len, &type, &body, &used)) == 1)
		return;
	if (rc == -1 || ac->ac_pending == 0) {
		agent_close(ac);
		return;
	}
	if (ac->ac_pending == AGENT_REQUEST_IDENTITIES) {
		for (i = 0; i < ac->ac_nkeys; i++)
			free(ac->ac_keys[i]);
		ac->ac_nkeys = 0;
		if (type != AGENT_IDENTITIES_ANSWER ||
		    agentmsg_idents(&body, agent_key_cb, ac) == -1) {
			agent_close(ac);
			return;
		}
	} else if (ac->ac_pending == AGENT_SIGN_REQUEST)
		agent_log(ac, "sign", type == AGENT_SIGN_RESPONSE,
		    type == AGENT_SIGN_RESPONSE ? NULL : "the user's agent "
		    "did not sign", NULL, NULL);
	bufferevent_write(ac->ac_client, buf, used);
	evbuffer_drain(in, used);
	ac->ac_pending = 0;
	if (evbuffer_get_length(in) > 0) {
		agent_close(ac);	/* it speaks when not asked */
		return;
	}
	bufferevent_enable(ac->ac_client, EV_READ);
	agent_client_read_cb(ac->ac_client, ac);
}

static void
agent_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct agent_conn	*ac = arg;

	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
		agent_close(ac);
}

static bool
agent_real_open(struct agent_conn *ac)
{
	struct agent	*ag = ac->ac_agent;

	if (ac->ac_real != NULL)
		return true;
	if ((ac->ac_real = bufferevent_socket_new(bufferevent_get_base(
	    ac->ac_client), -1, BEV_OPT_CLOSE_ON_FREE)) == NULL)
		return false;
	bufferevent_setcb(ac->ac_real, agent_real_read_cb, NULL,
	    agent_event_cb, ac);
	bufferevent_set_timeouts(ac->ac_real, &(struct timeval){
	    AGENT_REAL_SECS, 0 }, NULL);
	if (bufferevent_socket_connect(ac->ac_real,
	    (struct sockaddr *)&ag->ag_real, sizeof(ag->ag_real)) == -1) {
		log_warnx("run: ssh-agent: cannot reach the user's agent at "
		    "%s", ag->ag_real.sun_path);
		bufferevent_free(ac->ac_real);
		ac->ac_real = NULL;
		return false;
	}
	bufferevent_enable(ac->ac_real, EV_READ);
	return true;
}

/* The client's messages, one at a time: the next once one is answered. */
static void
agent_client_read_cb(struct bufferevent *bev, void *arg)
{
	struct agent_conn	*ac = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct agent_rd		 body;
	const uint8_t		*buf;
	size_t			 len, used;
	uint8_t			 type;
	int			 rc;

	while (ac->ac_pending == 0 && (len = evbuffer_get_length(in)) > 0) {
		if (len > 4 + AGENT_MSG_MAX)
			len = 4 + AGENT_MSG_MAX;
		buf = evbuffer_pullup(in, (ssize_t)len);
		if ((rc = agentmsg_frame(buf, len, &type, &body, &used)) == 1)
			return;
		if (rc == -1) {
			agent_close(ac);
			return;
		}
		agent_request(ac, type, &body, buf, used);
		evbuffer_drain(in, used);
	}
	if (ac->ac_pending != 0)
		bufferevent_disable(bev, EV_READ);
}

static void
agent_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct agent		*ag = arg;
	struct agent_conn	*ac;

	(void)sa;
	(void)salen;
	if (ag->ag_nconns >= AGENT_CONNS_MAX) {
		evutil_closesocket(fd);
		return;
	}
	ac = xcalloc(1, sizeof(*ac));
	ac->ac_agent = ag;
	TAILQ_INSERT_TAIL(&ag->ag_conns, ac, ac_entry);
	ag->ag_nconns++;
	if ((ac->ac_client = bufferevent_socket_new(
	    evconnlistener_get_base(l), fd, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		evutil_closesocket(fd);
		agent_close(ac);
		return;
	}
	bufferevent_setcb(ac->ac_client, agent_client_read_cb, NULL,
	    agent_event_cb, ac);
	bufferevent_set_timeouts(ac->ac_client, &(struct timeval){
	    AGENT_CLIENT_SECS, 0 }, NULL);
	bufferevent_enable(ac->ac_client, EV_READ);
}

/*
 * The agent, listening at dir/agent.sock, for the user's agent at real,
 * on px's loop, policy and log; sandbox and command (borrowed) name the
 * run in the log.  Reads the user's known_hosts files now.
 * Returns NULL with *cause set.
 */
struct agent *
agent_new(struct proxy *px, const char *dir, const char *real,
    const char *sandbox, const char *command, char **cause)
{
	struct agent		*ag;
	struct sockaddr_un	 sun;
	const char		*home = getenv("HOME");
	const char		*files[] = { "/etc/ssh/ssh_known_hosts",
				    "/etc/ssh/ssh_known_hosts2", NULL, NULL };
	char			*mine[2] = { NULL, NULL };
	size_t			 i;

	ag = xcalloc(1, sizeof(*ag));
	TAILQ_INIT(&ag->ag_conns);
	ag->ag_proxy = px;
	ag->ag_sandbox = sandbox;
	ag->ag_command = command;
	ag->ag_kh = knownhosts_new();
	ag->ag_real.sun_family = AF_UNIX;
	snprintf(ag->ag_real.sun_path, sizeof(ag->ag_real.sun_path), "%s",
	    real);
	if (home != NULL && home[0] == '/') {
		xasprintf(&mine[0], "%s/.ssh/known_hosts", home);
		xasprintf(&mine[1], "%s/.ssh/known_hosts2", home);
		files[2] = mine[0];
		files[3] = mine[1];
	}
	for (i = 0; i < nitems(files); i++)
		if (files[i] != NULL && knownhosts_load(ag->ag_kh, files[i],
		    cause) == -1)
			goto fail;
	xasprintf(&ag->ag_path, "%s/agent.sock", dir);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(ag->ag_path) >= sizeof(sun.sun_path)) {
		xasprintf(cause, "%s: too long for a socket", ag->ag_path);
		goto fail;
	}
	memcpy(sun.sun_path, ag->ag_path, strlen(ag->ag_path));
	if ((ag->ag_listener = evconnlistener_new_bind(px->px_base,
	    agent_accept_cb, ag, LEV_OPT_CLOSE_ON_FREE |
	    LEV_OPT_CLOSE_ON_EXEC, 16, (struct sockaddr *)&sun,
	    sizeof(sun))) == NULL) {
		xasprintf(cause, "%s: %s", ag->ag_path, strerror(errno));
		free(ag->ag_path);
		ag->ag_path = NULL;	/* not ours to unlink */
		goto fail;
	}
	free(mine[0]);
	free(mine[1]);
	return ag;
fail:
	free(mine[0]);
	free(mine[1]);
	agent_free(ag);
	return NULL;
}

/* The socket's path, outside: what the sandbox gets at RUN_AGENT_SOCK. */
const char *
agent_path(const struct agent *ag)
{
	return ag->ag_path;
}

/* The summary's line: what the agent did, when it did something. */
void
agent_summary(const struct agent *ag, FILE *f)
{
	if (ag == NULL || (ag->ag_signed == 0 && ag->ag_refused == 0))
		return;
	fprintf(f, "cordon: ssh-agent: %lu login%s signed, %lu request%s "
	    "refused (the egress log has each, protocol \"ssh-agent\")\n",
	    ag->ag_signed, ag->ag_signed == 1 ? "" : "s", ag->ag_refused,
	    ag->ag_refused == 1 ? "" : "s");
}

/* Closes every connection and the socket, and frees ag. */
void
agent_free(struct agent *ag)
{
	if (ag == NULL)
		return;
	while (!TAILQ_EMPTY(&ag->ag_conns))
		agent_close(TAILQ_FIRST(&ag->ag_conns));
	if (ag->ag_listener != NULL)
		evconnlistener_free(ag->ag_listener);
	if (ag->ag_path != NULL) {
		unlink(ag->ag_path);
		free(ag->ag_path);
	}
	knownhosts_free(ag->ag_kh);
	free(ag);
}
