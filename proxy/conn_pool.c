/*
 * conn_pool.c: a connection's upstream into the proxy's pool of idle
 * ones (upool.c) and back: the core lets go of a kept upstream through
 * its table's ct_let_go (conn_accept.c names this file's), and the HTTP
 * and inspection protocols take one for a decided request.
 *
 * The key is the connection's run (its PROXY v2 id, the uid the kernel
 * gave, a tls: client's identity and its originator's uid: as watch.c
 * tells runs apart), the host and port, and for TLS the name the
 * session was verified for, which must be the host taking it.  A
 * connection that is of no run (a TCP client of cordon proxy with no
 * PROXY v2 header) neither puts nor takes.
 */
#include <sys/types.h>

#include <stdbool.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include "proxy/conn_proto.h"
#include "proxy/upool.h"

/* Whether c is of a run at all: an id, a uid or an identity. */
static bool
conn_pool_known(const struct conn *c)
{
	return c->c_sandbox != NULL || c->c_peer.lp_known ||
	    c->c_identity != NULL;
}

/* c's run, for host and port, name "" for plain: into *k. */
static void
conn_pool_key(const struct conn *c, const char *host, int port,
    const char *name, struct upool_key *k)
{
	memset(k, 0, sizeof(*k));
	k->uk_sandbox = c->c_sandbox;
	k->uk_has_uid = c->c_peer.lp_known;
	k->uk_uid = k->uk_has_uid ? c->c_peer.lp_uid : 0;
	k->uk_identity = c->c_identity;
	k->uk_origin = c->c_origin_uid;
	k->uk_host = host;
	k->uk_port = port;
	k->uk_name = name;
}

/*
 * Whether c's upstream may wait in the pool: kept, of a run, nothing
 * left to read or write, a TLS one's session fit to wait (its name in
 * *name, "" for plain), and the proxy not ending.
 */
static bool
conn_pool_fits(const struct conn *c, const char **name)
{
	SSL	*ssl;

	*name = "";
	if (c->c_up == NULL || c->c_dial.cd_up != CU_KEPT ||
	    !conn_pool_known(c) || c->c_proxy->px_draining ||
	    evbuffer_get_length(bufferevent_get_input(c->c_up)) != 0 ||
	    evbuffer_get_length(bufferevent_get_output(c->c_up)) != 0)
		return false;
	if ((ssl = bufferevent_openssl_get_ssl(c->c_up)) == NULL)
		return c->c_upfd != -1;
	return (*name = upool_tls_name(ssl)) != NULL;
}

/*
 * Lets go of c's upstream (the table's ct_let_go): a kept one waits in
 * the pool, any other is closed (conn_drop_up).  Either way c has none
 * after.
 */
void
conn_pool_let_go(struct conn *c)
{
	struct proxy		*px = c->c_proxy;
	struct upool_key	 k;
	struct upool_up		 up;
	const char		*name;
	int			 idle = UPOOL_IDLE_SECS;

	if (!conn_pool_fits(c, &name)) {
		conn_drop_up(c);
		return;
	}
	conn_pool_key(c, c->c_dial.cd_kept_host, c->c_dial.cd_kept_port, name,
	    &k);
	up.uu_bev = c->c_up;
	up.uu_fd = c->c_upfd;
	up.uu_addr = c->c_dial.cd_upaddr;
	c->c_up = NULL;
	c->c_upfd = -1;
	c->c_dial.cd_up = CU_NEW;
	if (px->px_idle_secs < idle)
		idle = px->px_idle_secs;
	upool_put(&px->px_upool, &k, &up, idle);
}

/*
 * Gives c, whose request is decided and its addresses checked, an idle
 * upstream of its run to the host and port decided on, at one of those
 * addresses, TLS (verified for that host) or plain as tls says: c_up,
 * kept (CU_KEPT) for them, as if from its own last request, and c_upfd
 * with it (-1 for TLS, whose bufferevent has the socket).  What c kept
 * before waits in the pool instead.  Returns false, and does nothing,
 * when there is none.
 */
bool
conn_pool_take(struct conn *c, bool tls)
{
	struct conn_dial	*d = &c->c_dial;
	const char		*host = c->c_dec.d_host.h_name;
	struct upool_key	 k;
	struct upool_up		 up;

	if (!conn_pool_known(c))
		return false;
	conn_pool_key(c, host, c->c_port, tls ? host : "", &k);
	if (!upool_take(c->c_proxy->px_upool, &k, d->cd_addrs, d->cd_naddrs,
	    &up))
		return false;
	conn_up_let_go(c);
	c->c_up = up.uu_bev;
	c->c_upfd = up.uu_fd;
	d->cd_upaddr = up.uu_addr;
	bufferevent_setcb(c->c_up, conn_up_read_cb, conn_up_write_cb,
	    conn_up_event_cb, c);
	bufferevent_enable(c->c_up, EV_READ | EV_WRITE);
	d->cd_up = CU_KEPT;
	memcpy(d->cd_kept_host, host, sizeof(d->cd_kept_host));
	d->cd_kept_port = c->c_port;
	return true;
}
