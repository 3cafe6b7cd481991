/*
 * conn_ssh.c: a tunnel's SSH key exchange, watched for cordon run's
 * agent (agent/agent.c), which signs a login only for a session whose
 * connection it can name.
 *
 * When px_ssh_watch is set, what the upstream of a tunnel sends goes to
 * ssh_peek.c until it has shown an SSH server's first key exchange, or
 * that it is none, each byte before the client gets it: what came while
 * the proxy waited for the client's first bytes (conn_ssh_feed), then
 * what the relay reads, which copies those bytes rather than splicing
 * them (lib/relay.c), at most SSH_PEEK_MAX of them a tunnel.  So the
 * reply is read before ssh can have it, and before ssh binds its agent.
 * The agent then looks for the tunnel whose server showed the host key
 * and the signature that ssh's session-bind@openssh.com carries:
 * OpenSSH's client binds with the signature of its first key exchange,
 * so that tunnel carries the session, and its destination is where the
 * proxy connected for it, whatever name ssh was told to check the key
 * under (HostKeyAlias) and whatever lies behind that destination.
 *
 * The downstream bytes come from the upstream alone: the sandbox writes
 * only the other way, so it cannot make a tunnel show a reply that its
 * server did not send.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include "lib/relay.h"
#include "proxy/conn_proto.h"

/* The relay's watcher: true while the exchange is still to come. */
static bool
conn_ssh_watch_cb(const void *buf, size_t len, void *arg)
{
	struct conn	*c = arg;

	return ssh_peek_feed(&c->c_ssh, buf, len) == SSH_PEEK_MORE;
}

/*
 * Shows the watch len bytes the upstream sent before its tunnel, as
 * they come and before they go on to the client: a server may speak
 * before the client does (RFC 4253 section 4.2), and on a busy machine
 * its version line, or more, often reaches the proxy while it still
 * waits for the client's first bytes (CS_PEEK).
 */
void
conn_ssh_feed(struct conn *c, const void *buf, size_t len)
{
	if (c->c_proxy->px_ssh_watch && len > 0)
		(void)ssh_peek_feed(&c->c_ssh, buf, len);
}

/*
 * Watches c's tunnel (its relay made, not started) when the proxy is
 * asked to, after what conn_ssh_feed() was shown; pending is what the
 * upstream sent since and the relay is to send first, len bytes of it.
 */
void
conn_ssh_watch(struct conn *c, const void *pending, size_t len)
{
	conn_ssh_feed(c, pending, len);
	if (c->c_proxy->px_ssh_watch && c->c_ssh.sp_done == SSH_PEEK_MORE)
		relay_watch(c->c_relay, RELAY_DOWN, conn_ssh_watch_cb, c);
}

/*
 * The open tunnel of the sandbox whose server showed the host key key
 * and the signature sig in its first key exchange: true, with where the
 * proxy connected for it in *d.  sandbox is the run's id (NULL: any).
 */
bool
conn_ssh_find(struct proxy *px, const char *sandbox, const uint8_t *key,
    size_t keylen, const uint8_t *sig, size_t siglen,
    struct conn_ssh_dest *d)
{
	struct conn		*c;
	const struct ssh_peek	*sp;

	TAILQ_FOREACH(c, &px->px_conns, c_entry) {
		sp = &c->c_ssh;
		if (c->c_state != CS_TUNNEL || sp->sp_hostkey == NULL ||
		    (sandbox != NULL && (c->c_sandbox == NULL ||
		    strcmp(c->c_sandbox, sandbox) != 0)))
			continue;
		if (sp->sp_hostkeylen != keylen || sp->sp_siglen != siglen ||
		    memcmp(sp->sp_hostkey, key, keylen) != 0 ||
		    memcmp(sp->sp_sig, sig, siglen) != 0)
			continue;
		memset(d, 0, sizeof(*d));
		snprintf(d->sd_host, sizeof(d->sd_host), "%s",
		    c->c_dec.d_host.h_name);
		d->sd_port = c->c_port;
		snprintf(d->sd_addr, sizeof(d->sd_addr), "%s", c->c_addrtext);
		return true;
	}
	return false;
}
