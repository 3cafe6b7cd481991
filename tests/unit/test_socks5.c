/*
 * test_socks5.c: the SOCKS5 greeting and request parsers, and replies.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdbool.h>

#include "unit.h"

#include "proxy/proxy.h"

/* Parses every proper prefix of a greeting (MORE), then all of it. */
static void
greeting_whole(const uint8_t *buf, size_t len, size_t want_used,
    bool want_noauth)
{
	char	*cause;
	size_t	 k, used;
	bool	 noauth;

	for (k = 0; k < want_used; k++) {
		noauth = true;
		if (socks5_greeting_parse(buf, k, &used, &noauth, &cause) !=
		    SOCKS5_PARSE_MORE)
			fail_msg("greeting cut at %zu is not MORE", k);
		assert_int_equal(used, 0);
		assert_false(noauth);
		assert_null(cause);
	}
	assert_int_equal(socks5_greeting_parse(buf, len, &used, &noauth,
	    &cause), SOCKS5_PARSE_OK);
	assert_null(cause);
	assert_int_equal(used, want_used);
	assert_int_equal(noauth, want_noauth);
}

static void
test_greeting(void **state)
{
	static const uint8_t	 noauth[] = { 5, 1, 0 };
	static const uint8_t	 userpass[] = { 5, 2, 1, 2 };
	static const uint8_t	 several[] = { 5, 3, 2, 1, 0 };
	static const uint8_t	 all[] = { 5, 255 };
	static const uint8_t	 more[] = { 5, 1, 0, 5, 1, 0, 1, 2, 3 };
	uint8_t			 big[2 + 255 + 3];
	size_t			 i;

	(void)state;
	greeting_whole(noauth, sizeof(noauth), 3, true);
	greeting_whole(userpass, sizeof(userpass), 4, false);
	greeting_whole(several, sizeof(several), 5, true);
	/* A pipelined request after the greeting is not counted. */
	greeting_whole(more, sizeof(more), 3, true);

	/* 255 methods, none of them 0, then the same with 0 last. */
	memcpy(big, all, sizeof(all));
	for (i = 0; i < 255; i++)
		big[2 + i] = (uint8_t)(i + 1);
	big[257] = 0;
	big[258] = 0;
	big[259] = 0;
	greeting_whole(big, sizeof(big), 257, false);
	big[256] = 0;
	greeting_whole(big, sizeof(big), 257, true);
}

/* Expects an error from the first errlen bytes on, MORE before. */
static void
greeting_error(const uint8_t *buf, size_t len, size_t errlen,
    const char *want)
{
	char	*cause;
	size_t	 k, used;
	bool	 noauth;

	for (k = 0; k <= len; k++) {
		int	 rc;

		rc = socks5_greeting_parse(buf, k, &used, &noauth, &cause);
		if (k < errlen) {
			assert_int_equal(rc, SOCKS5_PARSE_MORE);
			continue;
		}
		assert_int_equal(rc, SOCKS5_PARSE_ERROR);
		assert_int_equal(used, 0);
		assert_false(noauth);
		assert_contains(cause, want);
		free(cause);
	}
}

static void
test_greeting_errors(void **state)
{
	static const uint8_t	 v4[] = { 4, 1, 0, 0x50, 0, 0, 0, 1, 0 };
	static const uint8_t	 http[] = "GET / HTTP/1.1\r\n";
	static const uint8_t	 none[] = { 5, 0, 0 };

	(void)state;
	greeting_error(v4, sizeof(v4), 1, "version byte 0x04");
	greeting_error(http, sizeof(http) - 1, 1, "version byte 0x47");
	greeting_error(none, sizeof(none), 2, "no method");
}

/*
 * Parses every proper prefix of a request (MORE), then all of it with a
 * byte after it; returns the result in req and the reply code.
 */
static uint8_t
request_whole(const uint8_t *buf, size_t len, struct socks5_request *req)
{
	uint8_t		 copy[600], code;
	char		*cause;
	size_t		 k, used;

	assert_true(len + 1 <= sizeof(copy));
	for (k = 0; k < len; k++) {
		code = 0xff;
		if (socks5_request_parse(buf, k, &used, req, &code, &cause) !=
		    SOCKS5_PARSE_MORE)
			fail_msg("request cut at %zu is not MORE", k);
		assert_int_equal(used, 0);
		assert_int_equal(code, SOCKS5_REP_OK);
		assert_null(cause);
	}
	memcpy(copy, buf, len);
	copy[len] = 0x16;		/* the client's first data byte */
	assert_int_equal(socks5_request_parse(copy, len + 1, &used, req,
	    &code, &cause), SOCKS5_PARSE_OK);
	assert_null(cause);
	assert_int_equal(used, len);
	assert_true(req->sr_hostlen <= 255);
	assert_int_equal(req->sr_host[req->sr_hostlen], '\0');
	return code;
}

static void
test_request_ipv4(void **state)
{
	static const uint8_t	 req4[] = { 5, 1, 0, 1, 192, 0, 2, 1,
	    0x01, 0xbb };
	static const uint8_t	 low[] = { 5, 1, 0, 1, 0, 0, 0, 0, 0, 1 };
	static const uint8_t	 high[] = { 5, 1, 0, 1, 255, 255, 255, 255,
	    0xff, 0xff };
	struct socks5_request	 req;

	(void)state;
	assert_int_equal(request_whole(req4, sizeof(req4), &req),
	    SOCKS5_REP_OK);
	assert_int_equal(req.sr_cmd, SOCKS5_CMD_CONNECT);
	assert_int_equal(req.sr_atyp, SOCKS5_ATYP_IPV4);
	assert_string_equal(req.sr_host, "192.0.2.1");
	assert_int_equal(req.sr_hostlen, 9);
	assert_int_equal(req.sr_port, 443);

	assert_int_equal(request_whole(low, sizeof(low), &req), SOCKS5_REP_OK);
	assert_string_equal(req.sr_host, "0.0.0.0");
	assert_int_equal(req.sr_port, 1);
	assert_int_equal(request_whole(high, sizeof(high), &req),
	    SOCKS5_REP_OK);
	assert_string_equal(req.sr_host, "255.255.255.255");
	assert_int_equal(req.sr_hostlen, 15);
	assert_int_equal(req.sr_port, 65535);
}

static void
test_request_ipv6(void **state)
{
	uint8_t			 buf[22] = { 5, 1, 0, 4 };
	struct socks5_request	 req;

	(void)state;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", buf + 4), 1);
	buf[20] = 0x20;
	buf[21] = 0xfb;
	assert_int_equal(request_whole(buf, sizeof(buf), &req),
	    SOCKS5_REP_OK);
	assert_int_equal(req.sr_atyp, SOCKS5_ATYP_IPV6);
	assert_string_equal(req.sr_host, "2001:db8::1");
	assert_int_equal(req.sr_hostlen, 11);
	assert_int_equal(req.sr_port, 8443);

	/* Mapped IPv4 stays IPv6 text here; lib/host.c unmaps it. */
	assert_int_equal(inet_pton(AF_INET6, "::ffff:127.0.0.1", buf + 4), 1);
	request_whole(buf, sizeof(buf), &req);
	assert_string_equal(req.sr_host, "::ffff:127.0.0.1");

	memset(buf + 4, 0xff, 16);
	request_whole(buf, sizeof(buf), &req);
	assert_string_equal(req.sr_host,
	    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	assert_int_equal(req.sr_hostlen, 39);
}

/* Builds a name request for namelen bytes of name and port. */
static size_t
name_request(uint8_t *buf, uint8_t cmd, const char *name, size_t namelen,
    uint16_t port)
{
	buf[0] = 5;
	buf[1] = cmd;
	buf[2] = 0;
	buf[3] = SOCKS5_ATYP_NAME;
	buf[4] = (uint8_t)namelen;
	memcpy(buf + 5, name, namelen);
	buf[5 + namelen] = port >> 8;
	buf[6 + namelen] = port & 0xff;
	return 7 + namelen;
}

static void
test_request_name(void **state)
{
	static const char	 nul[] = "evil.test\0.github.com";
	static const char	 ctl[] = "a\r\nHost: b\x1b[2J\x7f\xff";
	struct socks5_request	 req;
	uint8_t			 buf[300];
	char			 name[255];
	size_t			 i, n;

	(void)state;
	n = name_request(buf, SOCKS5_CMD_CONNECT, "example.com", 11, 443);
	assert_int_equal(request_whole(buf, n, &req), SOCKS5_REP_OK);
	assert_int_equal(req.sr_atyp, SOCKS5_ATYP_NAME);
	assert_string_equal(req.sr_host, "example.com");
	assert_int_equal(req.sr_hostlen, 11);
	assert_int_equal(req.sr_port, 443);

	/* Kept raw, NUL and all: refusing it is the policy's job. */
	n = name_request(buf, SOCKS5_CMD_CONNECT, nul, sizeof(nul) - 1, 80);
	request_whole(buf, n, &req);
	assert_int_equal(req.sr_hostlen, sizeof(nul) - 1);
	assert_memory_equal(req.sr_host, nul, sizeof(nul));
	assert_int_equal(strlen(req.sr_host), 9);

	n = name_request(buf, SOCKS5_CMD_CONNECT, ctl, sizeof(ctl) - 1, 80);
	request_whole(buf, n, &req);
	assert_int_equal(req.sr_hostlen, sizeof(ctl) - 1);
	assert_memory_equal(req.sr_host, ctl, sizeof(ctl));

	/* One byte, and 255 bytes of every value but 255. */
	n = name_request(buf, SOCKS5_CMD_CONNECT, "\0", 1, 1);
	request_whole(buf, n, &req);
	assert_int_equal(req.sr_hostlen, 1);
	assert_int_equal(req.sr_host[0], '\0');
	for (i = 0; i < sizeof(name); i++)
		name[i] = (char)i;
	n = name_request(buf, SOCKS5_CMD_CONNECT, name, 255, 65535);
	request_whole(buf, n, &req);
	assert_int_equal(req.sr_hostlen, 255);
	assert_memory_equal(req.sr_host, name, 255);
	assert_int_equal(req.sr_host[255], '\0');
	assert_int_equal(req.sr_port, 65535);
}

static void
test_request_commands(void **state)
{
	static const uint8_t	 cmds[] = { SOCKS5_CMD_BIND, SOCKS5_CMD_UDP,
	    0x00, 0x04, 0xff };
	struct socks5_request	 req;
	uint8_t			 buf[32];
	size_t			 i, n;

	(void)state;
	/* Well formed, filled in, to be refused with "command not
	 * supported". */
	for (i = 0; i < sizeof(cmds); i++) {
		n = name_request(buf, cmds[i], "example.com", 11, 53);
		assert_int_equal(request_whole(buf, n, &req),
		    SOCKS5_REP_COMMAND);
		assert_int_equal(req.sr_cmd, cmds[i]);
		assert_string_equal(req.sr_host, "example.com");
		assert_int_equal(req.sr_port, 53);
	}
}

/*
 * Expects SOCKS5_PARSE_ERROR with code and a cause holding want from
 * errlen bytes on, and MORE before.
 */
static void
request_error(const uint8_t *buf, size_t len, size_t errlen, uint8_t code,
    const char *want)
{
	struct socks5_request	 req;
	char			*cause;
	size_t			 k, used;
	uint8_t			 got;
	int			 rc;

	for (k = 0; k <= len; k++) {
		rc = socks5_request_parse(buf, k, &used, &req, &got, &cause);
		if (k < errlen) {
			if (rc != SOCKS5_PARSE_MORE)
				fail_msg("cut at %zu: %d, not MORE", k, rc);
			continue;
		}
		if (rc != SOCKS5_PARSE_ERROR)
			fail_msg("cut at %zu: %d, not an error (%s)", k, rc,
			    want);
		assert_int_equal(used, 0);
		assert_int_equal(got, code);
		assert_contains(cause, want);
		free(cause);
	}
}

static void
test_request_errors(void **state)
{
	static const uint8_t	 v4[] = { 4, 1, 0, 1, 1, 2, 3, 4, 0, 80 };
	static const uint8_t	 rsv[] = { 5, 1, 1, 1, 1, 2, 3, 4, 0, 80 };
	static const uint8_t	 empty[] = { 5, 1, 0, 3, 0, 0, 80 };
	static const uint8_t	 port4[] = { 5, 1, 0, 1, 1, 2, 3, 4, 0, 0 };
	uint8_t			 buf[32];
	size_t			 n;
	int			 atyp;

	(void)state;
	request_error(v4, sizeof(v4), 1, SOCKS5_REP_FAILURE, "version");
	request_error(rsv, sizeof(rsv), 3, SOCKS5_REP_FAILURE, "reserved");
	request_error(empty, sizeof(empty), 5, SOCKS5_REP_FAILURE,
	    "empty host name");
	request_error(port4, sizeof(port4), 10, SOCKS5_REP_FAILURE, "port 0");
	n = name_request(buf, SOCKS5_CMD_CONNECT, "a.test", 6, 0);
	request_error(buf, n, n, SOCKS5_REP_FAILURE, "port 0");
	memset(buf, 0, sizeof(buf));
	buf[0] = 5;
	buf[1] = 1;
	buf[3] = SOCKS5_ATYP_IPV6;
	request_error(buf, 22, 22, SOCKS5_REP_FAILURE, "port 0");

	/* Every address type but 1, 3 and 4. */
	for (atyp = 0; atyp < 256; atyp++) {
		if (atyp == SOCKS5_ATYP_IPV4 || atyp == SOCKS5_ATYP_NAME ||
		    atyp == SOCKS5_ATYP_IPV6)
			continue;
		memcpy(buf, v4, sizeof(v4));
		buf[0] = 5;
		buf[3] = (uint8_t)atyp;
		request_error(buf, sizeof(v4), 4, SOCKS5_REP_ATYP,
		    "unknown address type");
	}
}

static void
test_reply(void **state)
{
	static const uint8_t	 want4[] = { 5, 0, 0, 1, 192, 0, 2, 7,
	    0x04, 0x38 };
	static const uint8_t	 want6[] = { 5, 0, 0, 4, 0x20, 0x01, 0x0d,
	    0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42, 0xc3, 0x50 };
	static const uint8_t	 zero[] = { 5, 7, 0, 1, 0, 0, 0, 0, 0, 0 };
	struct sockaddr_in	 sin;
	struct sockaddr_in6	 sin6;
	struct sockaddr_un	 sun;
	struct socks5_request	 req;
	uint8_t			 buf[SOCKS5_REPLY_MAX + 8], code;
	char			*cause;
	size_t			 n, used;
	int			 rep;

	(void)state;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(1080);
	assert_int_equal(inet_pton(AF_INET, "192.0.2.7", &sin.sin_addr), 1);
	memset(buf, 0xee, sizeof(buf));
	n = socks5_reply(buf, SOCKS5_REP_OK, (struct sockaddr *)&sin);
	assert_int_equal(n, sizeof(want4));
	assert_memory_equal(buf, want4, n);
	assert_int_equal(buf[n], 0xee);

	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(50000);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::42", &sin6.sin6_addr),
	    1);
	memset(buf, 0xee, sizeof(buf));
	n = socks5_reply(buf, SOCKS5_REP_OK, (struct sockaddr *)&sin6);
	assert_int_equal(n, sizeof(want6));
	assert_int_equal(n, SOCKS5_REPLY_MAX);
	assert_memory_equal(buf, want6, n);
	assert_int_equal(buf[n], 0xee);

	/* No address, or one that SOCKS5 cannot say: 0.0.0.0:0. */
	n = socks5_reply(buf, SOCKS5_REP_COMMAND, NULL);
	assert_int_equal(n, sizeof(zero));
	assert_memory_equal(buf, zero, n);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	n = socks5_reply(buf, SOCKS5_REP_COMMAND, (struct sockaddr *)&sun);
	assert_memory_equal(buf, zero, n);

	/* Each code lands in REP; a reply has a request's shape. */
	for (rep = 0; rep <= SOCKS5_REP_ATYP; rep++) {
		n = socks5_reply(buf, (uint8_t)rep, (struct sockaddr *)&sin6);
		assert_int_equal(buf[1], rep);
		assert_int_equal(socks5_request_parse(buf, n, &used, &req,
		    &code, &cause), SOCKS5_PARSE_OK);
		assert_int_equal(used, n);
		assert_string_equal(req.sr_host, "2001:db8::42");
		assert_int_equal(req.sr_port, 50000);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_greeting),
		cmocka_unit_test(test_greeting_errors),
		cmocka_unit_test(test_request_ipv4),
		cmocka_unit_test(test_request_ipv6),
		cmocka_unit_test(test_request_name),
		cmocka_unit_test(test_request_commands),
		cmocka_unit_test(test_request_errors),
		cmocka_unit_test(test_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
