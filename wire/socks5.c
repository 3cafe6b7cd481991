/*
 * socks5.c: the SOCKS5 greeting and request (RFC 1928), and replies.
 *
 * The proxy listens on loopback or a Unix socket and asks for no
 * authentication, so only the "no authentication required" method is of
 * interest.  Both parsers work on whatever bytes have arrived: they say
 * MORE until a message is whole, and refuse as soon as the bytes present
 * prove it malformed.  A name is kept exactly as sent, whatever bytes it
 * holds; deciding whether it is a host name is the policy's job
 * (lib/host.c), and a name is never logged before it is escaped.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <string.h>

#include "lib/xmalloc.h"
#include "wire/wire.h"

#define SOCKS5_METHOD_NOAUTH	0x00

/*
 * Parses the greeting (VER, NMETHODS, METHODS) from the len bytes of buf.
 * Returns SOCKS5_PARSE_OK with *used its length and *noauth true when the
 * client offers "no authentication required"; SOCKS5_PARSE_MORE while
 * the greeting is incomplete; SOCKS5_PARSE_ERROR with *cause set (caller
 * frees) when the version is not 5 or no method is offered.  *used and
 * *noauth are 0 and false unless the result is SOCKS5_PARSE_OK.
 */
int
socks5_greeting_parse(const uint8_t *buf, size_t len, size_t *used,
    bool *noauth, char **cause)
{
	size_t	 nmethods;

	*used = 0;
	*noauth = false;
	*cause = NULL;

	if (len < 1)
		return SOCKS5_PARSE_MORE;
	if (buf[0] != SOCKS5_VERSION) {
		xasprintf(cause, "not a SOCKS5 greeting (version byte 0x%02x)",
		    buf[0]);
		return SOCKS5_PARSE_ERROR;
	}
	if (len < 2)
		return SOCKS5_PARSE_MORE;
	if ((nmethods = buf[1]) == 0) {
		xasprintf(cause, "SOCKS5 greeting offers no method");
		return SOCKS5_PARSE_ERROR;
	}
	if (len < 2 + nmethods)
		return SOCKS5_PARSE_MORE;

	*noauth = memchr(buf + 2, SOCKS5_METHOD_NOAUTH, nmethods) != NULL;
	*used = 2 + nmethods;
	return SOCKS5_PARSE_OK;
}

/* Sets *cause and *reply_code for a refused request; returns the error. */
static int
socks5_request_error(uint8_t *reply_code, uint8_t code, char **cause,
    const char *msg)
{
	*reply_code = code;
	xasprintf(cause, "%s", msg);
	return SOCKS5_PARSE_ERROR;
}

/*
 * Parses a request (VER, CMD, RSV, ATYP, DST.ADDR, DST.PORT) from the len
 * bytes of buf into req.  An IPv4 or IPv6 address becomes its inet_ntop
 * text (IPv6 without brackets); a name is copied as sent, NUL bytes and
 * all, with its length in sr_hostlen and a NUL after it.
 *
 * Returns SOCKS5_PARSE_OK with *used the request's length; *reply_code is
 * then SOCKS5_REP_OK for CONNECT, or SOCKS5_REP_COMMAND for BIND, UDP
 * ASSOCIATE or an unknown command: the request is well formed, req is
 * filled in, and the caller refuses it with that code.  Returns
 * SOCKS5_PARSE_MORE while the request is incomplete (*reply_code is then
 * SOCKS5_REP_OK and req is not filled in).  Returns SOCKS5_PARSE_ERROR
 * with *cause set (caller frees) and *reply_code the reply to send:
 * SOCKS5_REP_ATYP for an unknown address type, SOCKS5_REP_FAILURE for a
 * version other than 5, a reserved byte other than 0, an empty name or
 * port 0.  *used is 0 unless the result is SOCKS5_PARSE_OK.
 */
int
socks5_request_parse(const uint8_t *buf, size_t len, size_t *used,
    struct socks5_request *req, uint8_t *reply_code, char **cause)
{
	const uint8_t	*addr;
	size_t		 addrlen, need;
	uint16_t	 port;

	*used = 0;
	*reply_code = SOCKS5_REP_OK;
	*cause = NULL;
	memset(req, 0, sizeof(*req));

	if (len < 1)
		return SOCKS5_PARSE_MORE;
	if (buf[0] != SOCKS5_VERSION)
		return socks5_request_error(reply_code, SOCKS5_REP_FAILURE,
		    cause, "not a SOCKS5 request (version is not 5)");
	if (len < 3)
		return SOCKS5_PARSE_MORE;
	if (buf[2] != 0)
		return socks5_request_error(reply_code, SOCKS5_REP_FAILURE,
		    cause, "SOCKS5 request with a reserved byte other than 0");
	if (len < 4)
		return SOCKS5_PARSE_MORE;

	switch (buf[3]) {
	case SOCKS5_ATYP_IPV4:
		addr = buf + 4;
		addrlen = 4;
		break;
	case SOCKS5_ATYP_IPV6:
		addr = buf + 4;
		addrlen = 16;
		break;
	case SOCKS5_ATYP_NAME:
		if (len < 5)
			return SOCKS5_PARSE_MORE;
		if ((addrlen = buf[4]) == 0)
			return socks5_request_error(reply_code,
			    SOCKS5_REP_FAILURE, cause,
			    "SOCKS5 request with an empty host name");
		addr = buf + 5;
		break;
	default:
		return socks5_request_error(reply_code, SOCKS5_REP_ATYP,
		    cause, "SOCKS5 request with an unknown address type");
	}

	need = (size_t)(addr - buf) + addrlen + 2;
	if (len < need)
		return SOCKS5_PARSE_MORE;
	port = (uint16_t)(addr[addrlen] << 8 | addr[addrlen + 1]);
	if (port == 0)
		return socks5_request_error(reply_code, SOCKS5_REP_FAILURE,
		    cause, "SOCKS5 request for port 0");

	req->sr_cmd = buf[1];
	req->sr_atyp = buf[3];
	req->sr_port = port;
	switch (req->sr_atyp) {
	case SOCKS5_ATYP_IPV4:
		inet_ntop(AF_INET, addr, req->sr_host, sizeof(req->sr_host));
		req->sr_hostlen = strlen(req->sr_host);
		break;
	case SOCKS5_ATYP_IPV6:
		inet_ntop(AF_INET6, addr, req->sr_host, sizeof(req->sr_host));
		req->sr_hostlen = strlen(req->sr_host);
		break;
	default:
		memcpy(req->sr_host, addr, addrlen);	/* at most 255 */
		req->sr_host[addrlen] = '\0';
		req->sr_hostlen = addrlen;
		break;
	}

	if (req->sr_cmd != SOCKS5_CMD_CONNECT)
		*reply_code = SOCKS5_REP_COMMAND;
	*used = need;
	return SOCKS5_PARSE_OK;
}

/*
 * Writes a reply with code and the bound address (an AF_INET or AF_INET6
 * sockaddr; NULL or any other family gives 0.0.0.0 port 0) to buf, which
 * holds at least SOCKS5_REPLY_MAX bytes.  Returns the reply's length.
 */
size_t
socks5_reply(uint8_t *buf, uint8_t code, const struct sockaddr *bound)
{
	const struct sockaddr_in	*sin;
	const struct sockaddr_in6	*sin6;
	size_t				 n;

	buf[0] = SOCKS5_VERSION;
	buf[1] = code;
	buf[2] = 0;
	n = 3;
	if (bound != NULL && bound->sa_family == AF_INET6) {
		sin6 = (const struct sockaddr_in6 *)(const void *)bound;
		buf[n++] = SOCKS5_ATYP_IPV6;
		memcpy(buf + n, &sin6->sin6_addr, 16);
		n += 16;
		memcpy(buf + n, &sin6->sin6_port, 2);	/* network order */
		n += 2;
	} else if (bound != NULL && bound->sa_family == AF_INET) {
		sin = (const struct sockaddr_in *)(const void *)bound;
		buf[n++] = SOCKS5_ATYP_IPV4;
		memcpy(buf + n, &sin->sin_addr, 4);
		n += 4;
		memcpy(buf + n, &sin->sin_port, 2);
		n += 2;
	} else {
		buf[n++] = SOCKS5_ATYP_IPV4;
		memset(buf + n, 0, 6);
		n += 6;
	}
	return n;
}
