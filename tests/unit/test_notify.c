/*
 * test_notify.c: what the connect thread reads from the command, judged
 * (notify_addr.c): the address's bytes, the length given, the socket's
 * domain and type.  Each row says what the kernel answers to the same
 * connect(2) on a fresh socket, and the test asks this kernel too: a
 * malformed address must get the kernel's own errno, never a crash.
 */
#include "notify/notify_addr.h"
#include "unit.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <linux/netlink.h>
#include <netinet/in.h>

#include <unistd.h>

#include "lib/util.h"
#include "runner/runner.h"

#define NO_LIVE	(-1)		/* not tried on the kernel: it would reach */
				/* something, or needs privilege */
#define PASSED	(-2)		/* the judge passes it to the kernel */

struct row {
	const char	*r_what;
	int		 r_domain;
	int		 r_type;
	sa_family_t	 r_family;
	const char	*r_body;	/* the bytes after the family */
	size_t		 r_bodylen;
	char		 r_fill;	/* then this, to NOTIFY_ADDR_MAX */
	int		 r_len;		/* the length the command gives */
	int		 r_err;		/* the judge's: errno, 0 or PASSED */
	enum notify_addr_kind r_kind;	/* when 0 */
	const char	*r_path;	/* when 0: na_path, then r_fill */
	size_t		 r_pathlen;	/* ... to this length */
	int		 r_kernel;	/* connect(2)'s errno, 0, or NO_LIVE */
};

#define BODY(s)	s, sizeof(s) - 1

static const struct row rows[] = {
	/* The length, for any socket (move_addr_to_kernel). */
	{ "unix len -1", AF_UNIX, SOCK_STREAM, AF_UNIX, BODY("/x"), 0, -1,
	    EINVAL, 0, NULL, 0, EINVAL },
	{ "unix len 129", AF_UNIX, SOCK_STREAM, AF_UNIX, BODY("/x"), 0, 129,
	    EINVAL, 0, NULL, 0, EINVAL },
	{ "inet len 129", AF_INET, SOCK_STREAM, AF_INET, BODY(""), 0, 129,
	    EINVAL, 0, NULL, 0, EINVAL },
	{ "inet len -1", AF_INET, SOCK_DGRAM, AF_INET, BODY(""), 0, -1,
	    EINVAL, 0, NULL, 0, EINVAL },
	/* Unix: the kernel's unix_validate_addr. */
	{ "unix len 0", AF_UNIX, SOCK_STREAM, AF_UNIX, BODY(""), 0, 0,
	    EINVAL, 0, NULL, 0, EINVAL },
	{ "unix len 1", AF_UNIX, SOCK_STREAM, AF_UNIX, BODY(""), 0, 1,
	    EINVAL, 0, NULL, 0, EINVAL },
	{ "unix family only", AF_UNIX, SOCK_STREAM, AF_UNIX, BODY("/x"), 0, 2,
	    EINVAL, 0, NULL, 0, EINVAL },
	{ "unix AF_INET", AF_UNIX, SOCK_STREAM, AF_INET, BODY("/x"), 0, 16,
	    EINVAL, 0, NULL, 0, EINVAL },
	{ "unix stream AF_UNSPEC", AF_UNIX, SOCK_STREAM, AF_UNSPEC, BODY(""),
	    0, 2, EINVAL, 0, NULL, 0, EINVAL },
	{ "unix seqpacket AF_UNSPEC", AF_UNIX, SOCK_SEQPACKET, AF_UNSPEC,
	    BODY(""), 0, 16, EINVAL, 0, NULL, 0, EINVAL },
	{ "unix dgram AF_UNSPEC: disconnect", AF_UNIX, SOCK_DGRAM, AF_UNSPEC,
	    BODY(""), 0, 2, 0, NOTIFY_ADDR_UNSPEC, NULL, 0, 0 },
	{ "unix dgram AF_UNSPEC len 1", AF_UNIX, SOCK_DGRAM, AF_UNSPEC,
	    BODY(""), 0, 1, EINVAL, 0, NULL, 0, EINVAL },
	{ "unix dgram family only", AF_UNIX, SOCK_DGRAM, AF_UNIX, BODY(""),
	    0, 2, EINVAL, 0, NULL, 0, EINVAL },
	/* The two addresses of the report: past sizeof(sockaddr_un). */
	{ "unix \\0 + 125 bytes, len 128", AF_UNIX, SOCK_STREAM, AF_UNIX,
	    BODY("\0"), 'a', 128, EINVAL, 0, NULL, 0, EINVAL },
	{ "unix / + 125 bytes, len 128", AF_UNIX, SOCK_STREAM, AF_UNIX,
	    BODY("/"), 'a', 128, EINVAL, 0, NULL, 0, EINVAL },
	{ "unix seqpacket / + 125, len 128", AF_UNIX, SOCK_SEQPACKET,
	    AF_UNIX, BODY("/"), 'a', 128, EINVAL, 0, NULL, 0, EINVAL },
	{ "unix abstract, len 111", AF_UNIX, SOCK_STREAM, AF_UNIX,
	    BODY("\0"), 'a', 111, EINVAL, 0, NULL, 0, EINVAL },
	{ "unix path, len 111", AF_UNIX, SOCK_STREAM, AF_UNIX, BODY("/"),
	    'a', 111, EINVAL, 0, NULL, 0, EINVAL },
	/* The longest: taken whole, the kernel adding the NUL. */
	{ "unix path of 108, no NUL", AF_UNIX, SOCK_STREAM, AF_UNIX,
	    BODY("/cordon-test-none/"), 'a', 110, 0, NOTIFY_ADDR_PATH,
	    "/cordon-test-none/", 108, ENOENT },
	{ "unix abstract of 107", AF_UNIX, SOCK_STREAM, AF_UNIX,
	    BODY("\0cordon-test-none-"), 'a', 110, 0, NOTIFY_ADDR_ABSTRACT,
	    "cordon-test-none-", 107, ECONNREFUSED },
	{ "unix abstract, empty", AF_UNIX, SOCK_STREAM, AF_UNIX, BODY("\0"),
	    0, 3, 0, NOTIFY_ADDR_ABSTRACT, "", 0, ECONNREFUSED },
	/* A path ends at its first NUL, or at the length given. */
	{ "unix path, NUL then bytes", AF_UNIX, SOCK_STREAM, AF_UNIX,
	    BODY("/cordon-test-none\0zz"), 'z', 40, 0, NOTIFY_ADDR_PATH,
	    "/cordon-test-none", 17, ENOENT },
	{ "unix path, no NUL, short len", AF_UNIX, SOCK_STREAM, AF_UNIX,
	    BODY("/cordon-test-nonexyz"), 0, 19, 0, NOTIFY_ADDR_PATH,
	    "/cordon-test-none", 17, ENOENT },
	{ "unix path \"/\"", AF_UNIX, SOCK_SEQPACKET, AF_UNIX, BODY("/"),
	    'a', 3, 0, NOTIFY_ADDR_PATH, "/", 1, ECONNREFUSED },
	{ "unix relative", AF_UNIX, SOCK_DGRAM, AF_UNIX, BODY("x"), 0, 3, 0,
	    NOTIFY_ADDR_PATH, "x", 1, NO_LIVE },
	/* Internet: to the kernel as given, which answers a short one. */
	{ "inet len 0", AF_INET, SOCK_STREAM, AF_INET, BODY(""), 0, 0,
	    PASSED, 0, NULL, 0, EINVAL },
	{ "inet len 1", AF_INET, SOCK_STREAM, AF_INET, BODY(""), 0, 1,
	    PASSED, 0, NULL, 0, EINVAL },
	{ "inet len 15", AF_INET, SOCK_STREAM, AF_INET, BODY(""), 0, 15,
	    PASSED, 0, NULL, 0, EINVAL },
	{ "inet6 len 23", AF_INET6, SOCK_STREAM, AF_INET6, BODY(""), 0, 23,
	    PASSED, 0, NULL, 0, EINVAL },
	{ "inet AF_INET6", AF_INET, SOCK_DGRAM, AF_INET6, BODY(""), 0, 16,
	    PASSED, 0, NULL, 0, EAFNOSUPPORT },
	{ "inet AF_UNSPEC: disconnect", AF_INET, SOCK_STREAM, AF_UNSPEC,
	    BODY(""), 0, 2, PASSED, 0, NULL, 0, 0 },
	{ "inet6 AF_UNSPEC len 1", AF_INET6, SOCK_DGRAM, AF_UNSPEC, BODY(""),
	    0, 1, PASSED, 0, NULL, 0, EINVAL },
	{ "inet len 128", AF_INET, SOCK_DGRAM, AF_INET,
	    BODY("\0\1\177\0\0\1"), 0, 128, PASSED, 0, NULL, 0, 0 },
	/* Netlink: whole, and no groups or peer (checked on the caller). */
	{ "netlink len 1", AF_NETLINK, SOCK_RAW, AF_NETLINK, BODY(""), 0, 1,
	    PASSED, 0, NULL, 0, EINVAL },
	{ "netlink len 11", AF_NETLINK, SOCK_RAW, AF_NETLINK, BODY(""), 0,
	    11, EINVAL, 0, NULL, 0, EINVAL },
	{ "netlink AF_UNSPEC", AF_NETLINK, SOCK_RAW, AF_UNSPEC, BODY(""), 0,
	    2, PASSED, 0, NULL, 0, 0 },
	{ "netlink AF_INET", AF_NETLINK, SOCK_RAW, AF_INET, BODY(""), 0, 12,
	    PASSED, 0, NULL, 0, EINVAL },
	{ "netlink kernel", AF_NETLINK, SOCK_RAW, AF_NETLINK, BODY(""), 0,
	    12, PASSED, 0, NULL, 0, 0 },
	{ "netlink groups", AF_NETLINK, SOCK_RAW, AF_NETLINK,
	    BODY("\0\0\0\0\0\0\1\0\0\0"), 0, 12, EPERM, 0, NULL, 0, NO_LIVE },
	{ "netlink peer", AF_NETLINK, SOCK_RAW, AF_NETLINK,
	    BODY("\0\0\7\0\0\0"), 0, 12, EPERM, 0, NULL, 0, NO_LIVE },
	/* Any other domain: not connected for the command. */
	{ "packet", AF_PACKET, SOCK_DGRAM, AF_PACKET, BODY(""), 0, 20, EPERM,
	    0, NULL, 0, NO_LIVE },
};

/* The row's address: family, body, fill, in NOTIFY_ADDR_MAX bytes. */
static void
row_addr(const struct row *r, uint8_t *buf)
{
	memset(buf, r->r_fill, NOTIFY_ADDR_MAX);
	memcpy(buf, &r->r_family, sizeof(r->r_family));
	memcpy(buf + sizeof(r->r_family), r->r_body, r->r_bodylen);
}

static void
test_notify_rows(void **state)
{
	const struct row	*r;
	struct notify_addr	 na;
	uint8_t			 buf[NOTIFY_ADDR_MAX];
	size_t			 i, n;
	char			 fill[2] = { '\0', '\0' };
	int			 err, want;

	(void)state;
	for (i = 0; i < nitems(rows); i++) {
		r = &rows[i];
		row_addr(r, buf);
		err = notify_addr_judge(buf, r->r_len, r->r_domain, r->r_type,
		    &na);
		want = r->r_err == PASSED ? 0 : r->r_err;
		if (err != want)
			fail_msg("%s: judged %s, not %s", r->r_what,
			    strerror(err), strerror(want));
		if (r->r_err == PASSED && na.na_kind != NOTIFY_ADDR_PASS)
			fail_msg("%s: not passed to the kernel", r->r_what);
		if (r->r_err != 0)
			continue;
		if (na.na_kind != r->r_kind)
			fail_msg("%s: kind %d, not %d", r->r_what,
			    (int)na.na_kind, (int)r->r_kind);
		if (r->r_path == NULL)
			continue;
		assert_true(na.na_len <= NOTIFY_PATH_MAX);
		assert_int_equal(na.na_path[na.na_len], '\0');
		n = strlen(r->r_path);
		fill[0] = r->r_fill;
		if (na.na_len != r->r_pathlen ||
		    memcmp(na.na_path, r->r_path, n) != 0 ||
		    strspn(na.na_path + n, fill) != na.na_len - n)
			fail_msg("%s: path \"%s\" (%zu), not \"%s\"... (%zu)",
			    r->r_what, na.na_path, na.na_len, r->r_path,
			    r->r_pathlen);
	}
}

/* What the kernel says to each row: the table is this kernel's. */
static void
test_notify_kernel(void **state)
{
	const struct row	*r;
	uint8_t			 buf[NOTIFY_ADDR_MAX + 16];
	size_t			 i;
	int			 s, got;

	(void)state;
	for (i = 0; i < nitems(rows); i++) {
		r = &rows[i];
		if (r->r_kernel == NO_LIVE)
			continue;
		memset(buf, 0, sizeof(buf));
		row_addr(r, buf);
		if ((s = socket(r->r_domain, r->r_type | SOCK_CLOEXEC, 0)) ==
		    -1)
			fail_msg("%s: socket: %s", r->r_what, strerror(errno));
		got = connect(s, (struct sockaddr *)buf, (socklen_t)r->r_len)
		    == 0 ? 0 : errno;
		close(s);
		if (got != r->r_kernel)
			fail_msg("%s: the kernel says %s, the table %s",
			    r->r_what, strerror(got), strerror(r->r_kernel));
	}
}

/*
 * Every length from below 0 to past the bound, on every kind of socket,
 * with bytes with and without NULs: a judged path or name is within
 * sun_path and terminated; anything longer than sockaddr_un is EINVAL
 * on a Unix socket.
 */
static void
test_notify_bounds(void **state)
{
	static const int	 types[] = { SOCK_STREAM, SOCK_DGRAM,
				    SOCK_SEQPACKET };
	static const char	 firsts[] = { '\0', '/', 'x' };
	struct notify_addr	 na;
	uint8_t			 buf[NOTIFY_ADDR_MAX];
	sa_family_t		 family = AF_UNIX;
	size_t			 t, f;
	int			 len, err;

	(void)state;
	for (t = 0; t < nitems(types); t++)
		for (f = 0; f < nitems(firsts); f++)
			for (len = -3; len <= NOTIFY_ADDR_MAX + 3; len++) {
				memset(buf, 0xff, sizeof(buf));
				memcpy(buf, &family, sizeof(family));
				buf[2] = (uint8_t)firsts[f];
				err = notify_addr_judge(buf, len, AF_UNIX,
				    types[t], &na);
				if (len < 3 || len > 110) {
					assert_int_equal(err, EINVAL);
					continue;
				}
				assert_int_equal(err, 0);
				assert_true(na.na_len <= NOTIFY_PATH_MAX);
				assert_int_equal(na.na_path[na.na_len], '\0');
				assert_int_equal(na.na_len, firsts[f] == '\0' ?
				    (size_t)len - 3 : (size_t)len - 2);
			}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify_rows),
		cmocka_unit_test(test_notify_kernel),
		cmocka_unit_test(test_notify_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
