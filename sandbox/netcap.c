/*
 * netcap.c: the capture in the sandbox's network namespace.  PID 1 calls
 * netcap_setup() with the namespace's capabilities, before the command
 * exists:
 *
 * - lo gets an address of each family that is not loopback (NETCAP_ADDR4,
 *   NETCAP_ADDR6) and the default routes through it, so a program sees a
 *   host with a network (getaddrinfo's AI_ADDRCONFIG finds an address; a
 *   connection to any address has a route and a source);
 * - an nftables table "inet cordon" (over netlink, with libnftnl) whose
 *   output hooks send every new TCP connection to an address that is not
 *   local to the bridge's port, where the bridge reads where it was going
 *   (SO_ORIGINAL_DST); every DNS query, TCP or UDP, to any server, to the
 *   resolver on port 53; and drop every other packet bound elsewhere (UDP,
 *   QUIC, ICMP): the sender gets EPERM at once.
 *
 * None of this is the boundary: the namespace has no interface but lo,
 * so without the rules nothing leaves either; they make what is allowed
 * work.  The command gets no capability, and its filter refuses netlink
 * but routing's, so it cannot change them.
 *
 * Runs in: the sandbox's PID 1, before it forks the command.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>

#include "lib/log.h"
#include "lib/xmalloc.h"
#include "sandbox/sandbox.h"

#define NETCAP_TABLE	"cordon"
#define NETCAP_BUF	(64 * 1024)

/*
 * Sends the len bytes of buf (netlink messages, the last numbered last)
 * on a new socket of protocol proto and reads until the last is
 * acknowledged or one fails.  Returns 0, or -1 with errno set.
 */
static int
netcap_talk(int proto, const void *buf, size_t len, uint32_t last)
{
	struct mnl_socket	*nl;
	char			*rbuf;
	struct nlmsghdr		*nlh;
	struct nlmsgerr		*e;
	ssize_t			 n;
	int			 rc = -1, err = EPROTO;

	if ((nl = mnl_socket_open2(proto, SOCK_CLOEXEC)) == NULL)
		return -1;
	rbuf = xmalloc(NETCAP_BUF);
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) == -1 ||
	    mnl_socket_sendto(nl, buf, len) != (ssize_t)len) {
		err = errno;
		goto out;
	}
	while ((n = mnl_socket_recvfrom(nl, rbuf, NETCAP_BUF)) > 0) {
		int	 left = (int)n;

		for (nlh = (struct nlmsghdr *)rbuf; mnl_nlmsg_ok(nlh, left);
		    nlh = mnl_nlmsg_next(nlh, &left)) {
			if (nlh->nlmsg_type != NLMSG_ERROR)
				continue;
			e = mnl_nlmsg_get_payload(nlh);
			if (e->error != 0) {
				err = -e->error;
				goto out;
			}
			if (nlh->nlmsg_seq == last) {
				rc = 0;
				goto out;
			}
		}
	}
	err = n == -1 ? errno : EPROTO;
out:
	free(rbuf);
	mnl_socket_close(nl);
	if (rc == -1)
		errno = err;
	return rc;
}

/*
 * A new routing message of type in buf, numbered seq, for the address a
 * of family af (its bytes in bin).  Returns NULL when a is not one.
 */
static struct nlmsghdr *
netcap_msg(char *buf, int type, uint32_t seq, int af, const char *a,
    unsigned char *bin)
{
	struct nlmsghdr	*nlh;

	if (inet_pton(af, a, bin) != 1) {
		errno = EINVAL;
		return NULL;
	}
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (uint16_t)type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL |
	    NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	return nlh;
}

/* An address of family af (text a) on lo, with its host route. */
static int
netcap_addr(int af, const char *a, uint32_t seq, char *buf)
{
	struct nlmsghdr		*nlh;
	struct ifaddrmsg	*ifa;
	unsigned char		 bin[16];

	if ((nlh = netcap_msg(buf, RTM_NEWADDR, seq, af, a, bin)) == NULL)
		return -1;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = (unsigned char)af;
	ifa->ifa_prefixlen = af == AF_INET ? 32 : 128;
	ifa->ifa_flags = af == AF_INET6 ? IFA_F_NODAD : 0;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = if_nametoindex("lo");
	mnl_attr_put(nlh, IFA_LOCAL, af == AF_INET ? 4 : 16, bin);
	mnl_attr_put(nlh, IFA_ADDRESS, af == AF_INET ? 4 : 16, bin);
	return netcap_talk(NETLINK_ROUTE, nlh, nlh->nlmsg_len, seq);
}

/* The default route of family af through lo, from the address a. */
static int
netcap_route(int af, const char *a, uint32_t seq, char *buf)
{
	struct nlmsghdr	*nlh;
	struct rtmsg	*rtm;
	unsigned char	 bin[16];

	if ((nlh = netcap_msg(buf, RTM_NEWROUTE, seq, af, a, bin)) == NULL)
		return -1;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (unsigned char)af;
	rtm->rtm_dst_len = 0;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = RT_SCOPE_LINK;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_OIF, if_nametoindex("lo"));
	mnl_attr_put(nlh, RTA_PREFSRC, af == AF_INET ? 4 : 16, bin);
	return netcap_talk(NETLINK_ROUTE, nlh, nlh->nlmsg_len, seq);
}

/* Appends an expression of name, set up by the pairs that follow. */
static struct nftnl_expr *
netcap_expr(struct nftnl_rule *r, const char *name)
{
	struct nftnl_expr	*e;

	if ((e = nftnl_expr_alloc(name)) == NULL)
		fatalx("netcap: out of memory");
	nftnl_rule_add_expr(r, e);
	return e;
}

/* Continue when reg 1 holds the len bytes of data. */
static void
netcap_cmp(struct nftnl_rule *r, const void *data, uint32_t len)
{
	struct nftnl_expr	*e;

	e = netcap_expr(r, "cmp");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_EQ);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
}

/* reg 1 = the layer 4 protocol; continue when it is proto. */
static void
netcap_l4(struct nftnl_rule *r, uint8_t proto)
{
	struct nftnl_expr	*e;

	e = netcap_expr(r, "meta");
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, NFT_META_L4PROTO);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
	netcap_cmp(r, &proto, sizeof(proto));
}

/* Continue when the transport header's destination port is in lo..hi. */
static void
netcap_dport_range(struct nftnl_rule *r, uint16_t lo, uint16_t hi)
{
	struct nftnl_expr	*e;
	uint16_t		 blo = htons(lo), bhi = htons(hi);

	e = netcap_expr(r, "payload");
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE,
	    NFT_PAYLOAD_TRANSPORT_HEADER);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, 2);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, 2);
	e = netcap_expr(r, "range");
	nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_OP, NFT_RANGE_EQ);
	nftnl_expr_set(e, NFTNL_EXPR_RANGE_FROM_DATA, &blo, sizeof(blo));
	nftnl_expr_set(e, NFTNL_EXPR_RANGE_TO_DATA, &bhi, sizeof(bhi));
}

/* Continue when the transport header's destination port is port. */
static void
netcap_dport(struct nftnl_rule *r, uint16_t port)
{
	netcap_dport_range(r, port, port);
}

/* Continue when the destination is an address of this namespace. */
static void
netcap_local(struct nftnl_rule *r)
{
	struct nftnl_expr	*e;
	uint32_t		 local = RTN_LOCAL;

	e = netcap_expr(r, "fib");
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS, NFTA_FIB_F_DADDR);
	netcap_cmp(r, &local, sizeof(local));
}

/* Redirect to port on this namespace's loopback address. */
static void
netcap_redirect(struct nftnl_rule *r, uint16_t port)
{
	struct nftnl_expr	*e;
	uint16_t		 be = htons(port);

	e = netcap_expr(r, "immediate");
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
	nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &be, sizeof(be));
	e = netcap_expr(r, "redir");
	nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_FLAGS,
	    NF_NAT_RANGE_PROTO_SPECIFIED);
}

/* A verdict: accept or drop. */
static void
netcap_verdict(struct nftnl_rule *r, int verdict)
{
	struct nftnl_expr	*e;

	e = netcap_expr(r, "immediate");
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
}

/* The rules of chain, one a row; see the comment at the top. */
enum netcap_rule {
	NR_DNS_UDP, NR_DNS_TCP, NR_BRIDGE, NR_HOST_PORT, NR_LOCAL, NR_TCP,
	NR_DROP_QUIC, NR_DROP_UDP, NR_DROP
};

/* A counted drop's tag, in the rule's user data: netcap_drops reads it. */
static const char *const netcap_tags[] = {
	[NR_DROP_QUIC] = "quic", [NR_DROP_UDP] = "udp", [NR_DROP] = "other"
};

/* Counts what matches so far, then drops it, the rule tagged. */
static void
netcap_drop(struct nftnl_rule *r, enum netcap_rule which)
{
	nftnl_rule_set_data(r, NFTNL_RULE_USERDATA, netcap_tags[which],
	    (uint32_t)strlen(netcap_tags[which]));
	netcap_expr(r, "counter");
	netcap_verdict(r, NF_DROP);
}

static struct nftnl_rule *
netcap_rule(const char *chain, enum netcap_rule which, uint16_t port,
    const struct netcap_range *hp)
{
	struct nftnl_rule	*r;

	if ((r = nftnl_rule_alloc()) == NULL)
		fatalx("netcap: out of memory");
	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, NETCAP_TABLE);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	switch (which) {
	case NR_DNS_UDP:
	case NR_DNS_TCP:
		netcap_l4(r, which == NR_DNS_UDP ? IPPROTO_UDP : IPPROTO_TCP);
		netcap_dport(r, 53);
		netcap_redirect(r, 53);
		break;
	case NR_BRIDGE:		/* the bridge itself, never taken */
		netcap_l4(r, IPPROTO_TCP);
		netcap_dport(r, port);
		netcap_local(r);
		netcap_verdict(r, NF_ACCEPT);
		break;
	case NR_HOST_PORT:	/* the host's loopback: through the proxy */
		netcap_l4(r, IPPROTO_TCP);
		netcap_dport_range(r, hp->nr_lo, hp->nr_hi);
		netcap_local(r);
		netcap_redirect(r, port);
		break;
	case NR_LOCAL:
		netcap_local(r);
		netcap_verdict(r, NF_ACCEPT);
		break;
	case NR_TCP:
		netcap_l4(r, IPPROTO_TCP);
		netcap_redirect(r, port);
		break;
	case NR_DROP_QUIC:
		netcap_l4(r, IPPROTO_UDP);
		netcap_dport(r, 443);
		netcap_drop(r, which);
		break;
	case NR_DROP_UDP:
		netcap_l4(r, IPPROTO_UDP);
		netcap_drop(r, which);
		break;
	case NR_DROP:
		netcap_drop(r, which);
		break;
	}
	return r;
}

static struct nftnl_chain *
netcap_chain(const char *name, const char *type, int prio)
{
	struct nftnl_chain	*c;

	if ((c = nftnl_chain_alloc()) == NULL)
		fatalx("netcap: out of memory");
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, NETCAP_TABLE);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, type);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, NF_INET_LOCAL_OUT);
	nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
	return c;
}

/*
 * Appends the rule to the batch b, numbered *seq, which is kept in *last.
 */
static void
netcap_add(struct mnl_nlmsg_batch *b, struct nftnl_rule *r, uint32_t *seq,
    uint32_t *last)
{
	struct nlmsghdr	*nlh;

	*last = (*seq)++;
	nlh = nftnl_rule_nlmsg_build_hdr(mnl_nlmsg_batch_current(b),
	    NFT_MSG_NEWRULE, NFPROTO_INET, NLM_F_CREATE | NLM_F_APPEND |
	    NLM_F_ACK, *last);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	nftnl_rule_free(r);
	mnl_nlmsg_batch_next(b);
}

/*
 * The table, its two chains and their rules, in one transaction; the
 * host's ports hp (nhp of them) right after the bridge's own.
 */
static int
netcap_rules(uint16_t port, const struct netcap_range *hp, size_t nhp,
    uint32_t *seq, char *buf)
{
	static const struct {
		const char		*chain;
		enum netcap_rule	 rule;
	} rules[] = {
		{ "nat", NR_DNS_UDP }, { "nat", NR_DNS_TCP },
		{ "nat", NR_BRIDGE }, { "nat", NR_HOST_PORT },
		{ "nat", NR_LOCAL }, { "nat", NR_TCP },
		{ "filter", NR_LOCAL }, { "filter", NR_DROP_QUIC },
		{ "filter", NR_DROP_UDP }, { "filter", NR_DROP },
	};
	struct mnl_nlmsg_batch	*b;
	struct nftnl_table	*t;
	struct nftnl_chain	*c;
	struct nlmsghdr		*nlh;
	size_t			 i, j;
	uint32_t		 last = 0;
	int			 rc;

	b = mnl_nlmsg_batch_start(buf, NETCAP_BUF);
	nftnl_batch_begin(mnl_nlmsg_batch_current(b), (*seq)++);
	mnl_nlmsg_batch_next(b);

	if ((t = nftnl_table_alloc()) == NULL)
		fatalx("netcap: out of memory");
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, NETCAP_TABLE);
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	nlh = nftnl_table_nlmsg_build_hdr(mnl_nlmsg_batch_current(b),
	    NFT_MSG_NEWTABLE, NFPROTO_INET, NLM_F_CREATE | NLM_F_ACK,
	    (*seq)++);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_table_free(t);
	mnl_nlmsg_batch_next(b);

	for (i = 0; i < 2; i++) {
		c = i == 0 ? netcap_chain("nat", "nat", -100) :
		    netcap_chain("filter", "filter", 0);
		nlh = nftnl_chain_nlmsg_build_hdr(mnl_nlmsg_batch_current(b),
		    NFT_MSG_NEWCHAIN, NFPROTO_INET, NLM_F_CREATE | NLM_F_ACK,
		    (*seq)++);
		nftnl_chain_nlmsg_build_payload(nlh, c);
		nftnl_chain_free(c);
		mnl_nlmsg_batch_next(b);
	}
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (rules[i].rule != NR_HOST_PORT) {
			netcap_add(b, netcap_rule(rules[i].chain,
			    rules[i].rule, port, NULL), seq, &last);
			continue;
		}
		for (j = 0; j < nhp; j++)
			netcap_add(b, netcap_rule(rules[i].chain,
			    NR_HOST_PORT, port, &hp[j]), seq, &last);
	}
	nftnl_batch_end(mnl_nlmsg_batch_current(b), (*seq)++);
	mnl_nlmsg_batch_next(b);
	rc = netcap_talk(NETLINK_NETFILTER, mnl_nlmsg_batch_head(b),
	    mnl_nlmsg_batch_size(b), last);
	mnl_nlmsg_batch_stop(b);
	return rc;
}

/*
 * Sets the capture up in the current network namespace, its TCP sent to
 * port on the loopback addresses, and so the TCP to the ports hp (nhp
 * ranges) of the namespace's own addresses: the host's, via the proxy.  IPv6 is optional (a kernel or a
 * namespace without it keeps IPv4).  Returns 0, or -1 with *cause set.
 */
int
netcap_setup(unsigned short port, const struct netcap_range *hp, size_t nhp,
    char **cause)
{
	char		*buf;
	uint32_t	 seq = (uint32_t)time(NULL);
	int		 rc = -1;

	buf = xmalloc(NETCAP_BUF);
	if (netcap_addr(AF_INET, NETCAP_ADDR4, seq++, buf) == -1 ||
	    netcap_route(AF_INET, NETCAP_ADDR4, seq++, buf) == -1) {
		xasprintf(cause, "its address and route: %s",
		    strerror(errno));
		goto out;
	}
	if (netcap_addr(AF_INET6, NETCAP_ADDR6, seq++, buf) == -1 ||
	    netcap_route(AF_INET6, NETCAP_ADDR6, seq++, buf) == -1)
		log_debug("%s: no IPv6: %s", __func__, strerror(errno));
	if (netcap_rules(port, hp, nhp, &seq, buf) == -1) {
		xasprintf(cause, "its nftables rules: %s%s",
		    strerror(errno), errno == ENOENT || errno ==
		    EOPNOTSUPP || errno == EPROTONOSUPPORT ? " (a kernel "
		    "without nf_tables, its nat, fib or redir)" : "");
		goto out;
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

/* One rule of the dump: its counter into the slot its tag names. */
static int
netcap_count_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct netcap_drops	*d = arg;
	struct nftnl_rule	*r;
	struct nftnl_expr_iter	*it;
	struct nftnl_expr	*e;
	const char		*tag;
	uint64_t		*slot = NULL;
	uint32_t		 len = 0;

	if ((r = nftnl_rule_alloc()) == NULL)
		return MNL_CB_ERROR;
	if (nftnl_rule_nlmsg_parse(nlh, r) < 0) {
		nftnl_rule_free(r);
		return MNL_CB_ERROR;
	}
	if ((tag = nftnl_rule_get_data(r, NFTNL_RULE_USERDATA, &len)) != NULL) {
		if (len == 4 && memcmp(tag, "quic", 4) == 0)
			slot = &d->nd_quic;
		else if (len == 3 && memcmp(tag, "udp", 3) == 0)
			slot = &d->nd_udp;
		else if (len == 5 && memcmp(tag, "other", 5) == 0)
			slot = &d->nd_other;
	}
	if (slot != NULL && (it = nftnl_expr_iter_create(r)) != NULL) {
		while ((e = nftnl_expr_iter_next(it)) != NULL)
			if (strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME),
			    "counter") == 0)
				*slot += nftnl_expr_get_u64(e,
				    NFTNL_EXPR_CTR_PACKETS);
		nftnl_expr_iter_destroy(it);
	}
	nftnl_rule_free(r);
	return MNL_CB_OK;
}

/*
 * What the capture dropped so far, by kind, read from the counters of
 * the rules netcap_setup made.  Returns 0, or -1 with errno set.
 */
int
netcap_drops(struct netcap_drops *d)
{
	struct mnl_socket	*nl;
	struct nftnl_rule	*r;
	struct nlmsghdr		*nlh;
	char			*buf;
	uint32_t		 seq = (uint32_t)time(NULL), portid;
	ssize_t			 n;
	int			 rc = -1, err = 0, cb;

	memset(d, 0, sizeof(*d));
	if ((nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC)) == NULL)
		return -1;
	buf = xmalloc(NETCAP_BUF);
	if ((r = nftnl_rule_alloc()) == NULL)
		fatalx("netcap: out of memory");
	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, NETCAP_TABLE);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, "filter");
	nlh = nftnl_rule_nlmsg_build_hdr(buf, NFT_MSG_GETRULE, NFPROTO_INET,
	    NLM_F_DUMP, seq);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	nftnl_rule_free(r);
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) == -1 ||
	    mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) == -1) {
		err = errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	do {
		if ((n = mnl_socket_recvfrom(nl, buf, NETCAP_BUF)) <= 0) {
			err = n == -1 ? errno : EPROTO;
			goto out;
		}
		errno = 0;
		cb = mnl_cb_run(buf, (size_t)n, seq, portid, netcap_count_cb,
		    d);
	} while (cb > MNL_CB_STOP);
	if (cb == MNL_CB_ERROR)
		err = errno != 0 ? errno : EPROTO;
	else
		rc = 0;
out:
	free(buf);
	mnl_socket_close(nl);
	if (rc == -1)
		errno = err;
	return rc;
}
