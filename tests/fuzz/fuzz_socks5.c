/*
 * fuzz_socks5.c: the SOCKS5 greeting and request parsers on arbitrary
 * bytes, read as a client's stream (a greeting, then a request) and as a
 * request alone.  Checks what the proxy relies on: *used never passes
 * the input, a name fits its buffer, a message cut short is MORE, a
 * message parses the same without what follows it, and a reply for a
 * parsed address reads back as that address.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Parses len bytes of data (copied, so ASan sees any read past them). */
static int
request(const uint8_t *data, size_t len, size_t *used,
    struct socks5_request *req, uint8_t *code)
{
	uint8_t	*copy;
	char	*cause;
	int	 rc;

	if ((copy = malloc(len ? len : 1)) == NULL)
		abort();
	memcpy(copy, data, len);
	rc = socks5_request_parse(copy, len, used, req, code, &cause);
	free(copy);
	if (*used > len)
		abort();
	if ((rc == SOCKS5_PARSE_ERROR) != (cause != NULL))
		abort();	/* a cause exactly with an error */
	if (rc != SOCKS5_PARSE_OK && *used != 0)
		abort();
	free(cause);
	return rc;
}

/* Writes a reply for the address in req and checks it reads back. */
static void
reply_round_trip(const struct socks5_request *req)
{
	struct sockaddr_in	 sin;
	struct sockaddr_in6	 sin6;
	struct socks5_request	 back;
	struct sockaddr		*sa;
	uint8_t			 buf[SOCKS5_REPLY_MAX + 1], code;
	size_t			 n, used;

	memset(&sin, 0, sizeof(sin));
	memset(&sin6, 0, sizeof(sin6));
	if (req->sr_atyp == SOCKS5_ATYP_IPV4) {
		sin.sin_family = AF_INET;
		sin.sin_port = htons(req->sr_port);
		if (inet_pton(AF_INET, req->sr_host, &sin.sin_addr) != 1)
			abort();
		sa = (struct sockaddr *)&sin;
	} else if (req->sr_atyp == SOCKS5_ATYP_IPV6) {
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = htons(req->sr_port);
		if (inet_pton(AF_INET6, req->sr_host, &sin6.sin6_addr) != 1)
			abort();
		sa = (struct sockaddr *)&sin6;
	} else
		return;
	n = socks5_reply(buf, SOCKS5_REP_OK, sa);
	if (n > SOCKS5_REPLY_MAX)
		abort();
	if (request(buf, n, &used, &back, &code) != SOCKS5_PARSE_OK ||
	    used != n || back.sr_port != req->sr_port ||
	    strcmp(back.sr_host, req->sr_host) != 0)
		abort();	/* the reply does not say what we parsed */
}

/* Parses a request from data and checks its invariants. */
static void
check_request(const uint8_t *data, size_t size)
{
	struct socks5_request	 req, again;
	size_t			 used, used2;
	uint8_t			 code, code2;
	int			 rc;

	rc = request(data, size, &used, &req, &code);
	if (rc != SOCKS5_PARSE_OK)
		return;
	if (used < 7 || req.sr_hostlen == 0 || req.sr_hostlen > 255 ||
	    req.sr_host[req.sr_hostlen] != '\0' || req.sr_port == 0)
		abort();
	if (req.sr_atyp != SOCKS5_ATYP_NAME &&
	    strlen(req.sr_host) != req.sr_hostlen)
		abort();
	if ((code == SOCKS5_REP_OK) != (req.sr_cmd == SOCKS5_CMD_CONNECT) ||
	    (code != SOCKS5_REP_OK && code != SOCKS5_REP_COMMAND))
		abort();
	/* Cut one short it is MORE; alone it is the same request. */
	if (request(data, used - 1, &used2, &again, &code2) !=
	    SOCKS5_PARSE_MORE)
		abort();
	if (request(data, used, &used2, &again, &code2) != SOCKS5_PARSE_OK ||
	    used2 != used || code2 != code ||
	    memcmp(&again, &req, sizeof(req)) != 0)
		abort();
	reply_round_trip(&req);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t		*copy;
	char		*cause;
	size_t		 used, used2;
	bool		 noauth, noauth2;
	int		 rc;

	if ((copy = malloc(size ? size : 1)) == NULL)
		abort();
	memcpy(copy, data, size);
	rc = socks5_greeting_parse(copy, size, &used, &noauth, &cause);
	free(copy);
	if (used > size || (rc == SOCKS5_PARSE_ERROR) != (cause != NULL))
		abort();
	free(cause);
	if (rc == SOCKS5_PARSE_OK) {
		if (used < 3 || used != 2 + (size_t)data[1])
			abort();
		if (socks5_greeting_parse(data, used - 1, &used2, &noauth2,
		    &cause) != SOCKS5_PARSE_MORE || cause != NULL)
			abort();
		if (socks5_greeting_parse(data, used, &used2, &noauth2,
		    &cause) != SOCKS5_PARSE_OK || used2 != used ||
		    noauth2 != noauth)
			abort();
		check_request(data + used, size - used);
	} else if (used != 0)
		abort();
	check_request(data, size);
	return 0;
}
