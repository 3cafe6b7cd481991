/*
 * test_listen.c: which targets are the proxy's own listeners.
 */
#include "unit.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include "proxy.h"

/* A listening TCP socket on text (an address of family af), any port. */
static int
listener(int af, const char *text, int *port)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 len = sizeof(ss);
	int			 fd;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)af;
	if (af == AF_INET)
		inet_pton(af, text, &sin->sin_addr);
	else
		inet_pton(af, text, &sin6->sin6_addr);
	if ((fd = socket(af, SOCK_STREAM, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&ss, af == AF_INET ? sizeof(*sin) :
	    sizeof(*sin6)) == -1 || listen(fd, 1) == -1 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		return -1;
	*port = ntohs(af == AF_INET ? sin->sin_port : sin6->sin6_port);
	return fd;
}

static bool
own(const struct proxy *px, const char *text, int port)
{
	struct addr	 a;

	assert_int_equal(addr_parse(text, strlen(text), &a), 0);
	return listen_is_own(px, &a, port);
}

static void
test_listen_own(void **state)
{
	static struct proxy	 px;
	int			 fd[3], lo, any, any6 = -1;

	(void)state;
	memset(&px, 0, sizeof(px));
	assert_int_not_equal(fd[0] = listener(AF_INET, "127.0.0.1", &lo), -1);
	assert_int_not_equal(fd[1] = listener(AF_INET, "0.0.0.0", &any), -1);
	fd[2] = listener(AF_INET6, "::", &any6);
	listen_note(&px, fd[0]);
	listen_note(&px, fd[1]);
	if (fd[2] != -1)
		listen_note(&px, fd[2]);
	/* 127.0.0.1 only: that address and port. */
	assert_true(own(&px, "127.0.0.1", lo));
	assert_true(own(&px, "::ffff:127.0.0.1", lo));
	assert_false(own(&px, "127.0.0.2", lo));
	assert_false(own(&px, "127.0.0.1", lo + 1 == any ? lo + 2 : lo + 1));
	assert_false(own(&px, "1.1.1.1", lo));
	/* 0.0.0.0: any local IPv4 address, not a remote one. */
	assert_true(own(&px, "127.0.0.1", any));
	assert_true(own(&px, "127.1.2.3", any));
	assert_true(own(&px, "0.0.0.0", any));
	assert_false(own(&px, "192.0.2.1", any));
	assert_false(own(&px, "::1", any));
	/* :: (dual stack): IPv6 and IPv4 local addresses. */
	if (fd[2] != -1) {
		assert_true(own(&px, "::1", any6));
		assert_true(own(&px, "::", any6));
		assert_true(own(&px, "127.0.0.1", any6));
		assert_false(own(&px, "2001:db8::1", any6));
	}
	close(fd[0]);
	close(fd[1]);
	if (fd[2] != -1)
		close(fd[2]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
