/*
 * test_listen.c: which targets are the proxy's own listeners, and who is
 * at the other end of a client's socket.
 */
#include "unit.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <grp.h>
#include <unistd.h>

#include "proxy/proxy.h"

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

/* A socketpair's other end is this very process. */
static void
test_listen_peer_pair(void **state)
{
	struct listen_peer	 lp;
	int			 sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	memset(&lp, 0xff, sizeof(lp));
	listen_peer(sv[0], &lp);
	assert_true(lp.lp_known);
	assert_int_equal(lp.lp_uid, getuid());
	assert_int_equal(lp.lp_gid, getgid());
	assert_int_equal(lp.lp_pid, getpid());
	close(sv[0]);
	close(sv[1]);
}

/*
 * On a listener this process made, a client that is another user is
 * that user: the uid is the one who connected, not the socket's owner.
 */
static void
test_listen_peer_other_user(void **state)
{
	struct sockaddr_un	 sun;
	struct listen_peer	 lp;
	char			 dir[] = "/tmp/test_listen.XXXXXX";
	pid_t			 pid;
	int			 l, fd, status;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/s", dir);
	assert_int_not_equal(l = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	assert_int_equal(bind(l, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(chmod(sun.sun_path, 0666), 0);
	assert_int_equal(listen(l, 1), 0);
	if ((pid = fork()) == 0) {
		if (setgroups(0, NULL) == -1 || setresgid(65534, 65534,
		    65534) == -1 || setresuid(65534, 65534, 65534) == -1 ||
		    (fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
		    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
			_exit(1);
		_exit(0);
	}
	assert_int_not_equal(fd = accept(l, NULL, NULL), -1);
	listen_peer(fd, &lp);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);
	assert_true(lp.lp_known);
	assert_int_equal(lp.lp_uid, 65534);
	assert_int_equal(lp.lp_gid, 65534);
	assert_int_equal(lp.lp_pid, pid);
	close(fd);
	close(l);
	unlink(sun.sun_path);
	rmdir(dir);
}

/* TCP has no peer credentials: nothing is known, nothing made up. */
static void
test_listen_peer_tcp(void **state)
{
	struct sockaddr_in	 sin;
	struct listen_peer	 lp;
	int			 l, c, fd, port;

	(void)state;
	assert_int_not_equal(l = listener(AF_INET, "127.0.0.1", &port), -1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	assert_int_not_equal(c = socket(AF_INET, SOCK_STREAM, 0), -1);
	assert_int_equal(connect(c, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_not_equal(fd = accept(l, NULL, NULL), -1);
	memset(&lp, 0xff, sizeof(lp));
	listen_peer(fd, &lp);
	assert_false(lp.lp_known);
	assert_int_equal(lp.lp_uid, 0);
	close(fd);
	close(c);
	close(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen_own),
		cmocka_unit_test(test_listen_peer_pair),
		cmocka_unit_test(test_listen_peer_other_user),
		cmocka_unit_test(test_listen_peer_tcp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
