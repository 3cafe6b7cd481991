/*
 * test_signer.c: the signing process (signer.c), started on a CA made in
 * a scratch directory for each test and driven from a real event loop.
 */
#include "unit.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <signal.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/x509v3.h>

#include "certs/certs.h"

struct fixture {
	char			 dir[64];	/* the mkdtemp folder */
	char			*ca;		/* dir/ca, made by ca_init */
	struct event_base	*base;
};

/* What one callback got. */
struct result {
	int		 called;
	X509		*cert;
	char		*why;
};

static int	in_get;		/* set around signer_get() */
static int	timed_out;

static int
setup(void **state)
{
	struct fixture	*f;
	char		*cause;

	f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/cordon-signer-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	if (asprintf(&f->ca, "%s/ca", f->dir) == -1)
		return -1;
	if (ca_init(f->ca, false, &cause) == -1) {
		print_error("%s\n", cause);
		return -1;
	}
	if ((f->base = event_base_new()) == NULL)
		return -1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*f = *state;

	event_base_free(f->base);
	unit_rmtree(f->dir);
	free(f->ca);
	free(f);
	return 0;
}

static void
result_cb(X509 *cert, const char *why, void *arg)
{
	struct result	*res = arg;

	if (in_get)
		fail_msg("a callback ran inside signer_get()");
	res->called++;
	res->cert = cert;
	res->why = why != NULL ? strdup(why) : NULL;
}

static void
result_clear(struct result *res)
{
	X509_free(res->cert);
	free(res->why);
	memset(res, 0, sizeof(*res));
}

static struct signer_req *
get(struct signer *s, const char *host, struct result *res)
{
	struct signer_req	*r;

	in_get = 1;
	r = signer_get(s, host, result_cb, res);
	in_get = 0;
	return r;
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	timed_out = 1;
}

/* Runs the loop until *res has been called (10 seconds at most). */
static void
wait_for(struct event_base *base, struct result *res)
{
	struct timeval	 tv = { 10, 0 };
	struct event	*ev;

	timed_out = 0;
	ev = evtimer_new(base, timeout_cb, NULL);
	evtimer_add(ev, &tv);
	while (res->called == 0 && !timed_out)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(ev);
	if (res->called == 0)
		fail_msg("no callback within 10 seconds");
}

static struct signer *
start(struct fixture *f)
{
	struct signer	*s;
	char		*cause;

	if ((s = signer_start(f->base, f->ca, &cause)) == NULL)
		fail_msg("signer_start: %s", cause);
	return s;
}

/* Asserts that cert chains to the signer's CA and holds its key. */
static void
assert_leaf(struct signer *s, X509 *cert)
{
	X509_STORE	*store;
	X509_STORE_CTX	*ctx;

	assert_non_null(cert);
	store = X509_STORE_new();
	ctx = X509_STORE_CTX_new();
	assert_int_equal(X509_STORE_add_cert(store, signer_ca(s)), 1);
	assert_int_equal(X509_STORE_CTX_init(ctx, store, cert, NULL), 1);
	assert_int_equal(X509_verify_cert(ctx), 1);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	assert_int_equal(X509_check_private_key(cert, signer_key(s)), 1);
}

static void
test_leaves(void **state)
{
	struct fixture	*f = *state;
	struct signer	*s = start(f);
	struct result	 a = { 0 }, b = { 0 }, ip = { 0 };

	get(s, "a.example.com", &a);
	get(s, "B.Example.ORG.", &b);
	get(s, "192.0.2.7", &ip);
	assert_int_equal(a.called + b.called + ip.called, 0);
	wait_for(f->base, &ip);
	assert_int_equal(a.called, 1);
	assert_int_equal(b.called, 1);

	assert_leaf(s, a.cert);
	assert_int_equal(X509_check_host(a.cert, "a.example.com", 0, 0,
	    NULL), 1);
	assert_int_equal(X509_check_host(a.cert, "b.example.org", 0, 0,
	    NULL), 0);
	assert_leaf(s, b.cert);
	assert_int_equal(X509_check_host(b.cert, "b.example.org", 0, 0,
	    NULL), 1);
	assert_leaf(s, ip.cert);
	assert_int_equal(X509_check_ip_asc(ip.cert, "192.0.2.7", 0), 1);
	assert_null(a.why);

	result_clear(&a);
	result_clear(&b);
	result_clear(&ip);
	signer_free(s);
}

static void
test_refused(void **state)
{
	struct fixture	*f = *state;
	struct signer	*s = start(f);
	struct result	 w = { 0 }, sp = { 0 }, ok = { 0 };
	char		 big[300];

	get(s, "*.x.com", &w);
	get(s, "a b", &sp);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	get(s, big, &ok);
	wait_for(f->base, &sp);
	assert_null(w.cert);
	assert_non_null(w.why);
	assert_null(sp.cert);
	assert_non_null(sp.why);
	wait_for(f->base, &ok);
	assert_null(ok.cert);
	assert_contains(ok.why, "255");
	result_clear(&w);
	result_clear(&sp);
	result_clear(&ok);

	/* Still serving after refusals. */
	get(s, "example.net", &ok);
	wait_for(f->base, &ok);
	assert_leaf(s, ok.cert);
	result_clear(&ok);
	signer_free(s);
}

static void
test_no_ca(void **state)
{
	struct fixture	*f = *state;
	char		*cause, *dir;

	assert_int_equal(asprintf(&dir, "%s/none", f->dir), (int)strlen(
	    f->dir) + 5);
	assert_null(signer_start(f->base, dir, &cause));
	assert_contains(cause, "cordon ca init");
	assert_contains(cause, dir);
	free(cause);
	free(dir);
}

static void
test_key_mode(void **state)
{
	struct fixture	*f = *state;
	char		 path[256], *cause;

	snprintf(path, sizeof(path), "%s/%s", f->ca, CA_KEY_FILE);
	assert_int_equal(chmod(path, 0644), 0);
	assert_null(signer_start(f->base, f->ca, &cause));
	assert_contains(cause, "0644");
	assert_contains(cause, "0600");
	free(cause);
}

static void
test_cancel(void **state)
{
	struct fixture		*f = *state;
	struct signer		*s = start(f);
	struct signer_req	*r;
	struct result		 a = { 0 }, b = { 0 }, c = { 0 };

	r = get(s, "a.example.com", &a);
	get(s, "b.example.com", &b);
	signer_cancel(r);
	wait_for(f->base, &b);
	assert_int_equal(a.called, 0);
	assert_leaf(s, b.cert);
	assert_int_equal(X509_check_host(b.cert, "b.example.com", 0, 0,
	    NULL), 1);
	result_clear(&b);

	/* Cancelled with its reply pending at free: no callback either. */
	r = get(s, "c.example.com", &c);
	signer_cancel(r);
	get(s, "d.example.com", &b);
	signer_free(s);
	assert_int_equal(b.called + c.called, 0);
}

/* The value of field in /proc/pid/status, or NULL. */
static char *
proc_status(pid_t pid, const char *field)
{
	char	 path[64], line[256], *v = NULL;
	size_t	 len = strlen(field);
	FILE	*fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return NULL;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (strncmp(line, field, len) == 0 && line[len] == ':') {
			line[strcspn(line, "\n")] = '\0';
			v = strdup(line + len + 1);
			break;
		}
	}
	fclose(fp);
	return v;
}

/*
 * Whether a signer started by a process of an ordinary uid is dumpable:
 * the kernel makes the /proc files of a process that is not root's.
 * Root owns them all anyway, so as root the probe runs as nobody, in a
 * child with its own CA.  Returns 1 if dumpable, 0 if not, -1 when it
 * cannot be told.
 */
static int
dumpable_as_peer(void)
{
	struct event_base	*base;
	struct signer		*s;
	struct stat		 self, st;
	char			 dir[64], ca[96], path[64], *cause;
	pid_t			 p;
	int			 status, rc;

	if ((p = fork()) == 0) {
		if (getuid() == 0 && (setgroups(0, NULL) == -1 ||
		    setresgid(65534, 65534, 65534) == -1 ||
		    setresuid(65534, 65534, 65534) == -1 ||
		    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == -1))
			_exit(2);
		snprintf(dir, sizeof(dir), "/tmp/cordon-signer-XXXXXX");
		if (mkdtemp(dir) == NULL)
			_exit(2);
		snprintf(ca, sizeof(ca), "%s/ca", dir);
		rc = 2;
		if (ca_init(ca, false, &cause) == 0 &&
		    (base = event_base_new()) != NULL &&
		    (s = signer_start(base, ca, &cause)) != NULL) {
			snprintf(path, sizeof(path), "/proc/%d/environ",
			    (int)signer_pid(s));
			if (stat("/proc/self/environ", &self) == 0 &&
			    self.st_uid != 0 && stat(path, &st) == 0)
				rc = st.st_uid == self.st_uid ? 1 : 0;
			signer_free(s);
		}
		unit_rmtree(dir);
		_exit(rc);
	}
	if (waitpid(p, &status, 0) != p || !WIFEXITED(status) ||
	    WEXITSTATUS(status) > 1)
		return -1;
	return WEXITSTATUS(status);
}

static void
test_locked_down(void **state)
{
	struct fixture	*f = *state;
	struct signer	*s = start(f);
	pid_t		 pid = signer_pid(s);
	char		*v;

	v = proc_status(pid, "Seccomp");
	assert_non_null(v);
	assert_string_equal(v, "\t2");
	free(v);
	v = proc_status(pid, "NoNewPrivs");
	assert_non_null(v);
	assert_string_equal(v, "\t1");
	free(v);
	signer_free(s);
}

/*
 * Not dumpable: no process of its uid may read its memory.  Told as a
 * process of an ordinary uid (dumpable_as_peer); where that cannot be
 * told, skipped, and counted so.
 */
static void
test_not_dumpable(void **state)
{
	int	 dumpable;

	(void)state;
	if ((dumpable = dumpable_as_peer()) == -1)
		skip();
	assert_int_equal(dumpable, 0);
}

static void
test_child_killed(void **state)
{
	struct fixture	*f = *state;
	struct signer	*s = start(f);
	struct result	 a = { 0 }, b = { 0 };

	assert_int_equal(kill(signer_pid(s), SIGKILL), 0);
	get(s, "a.example.com", &a);
	assert_int_equal(a.called, 0);
	wait_for(f->base, &a);
	assert_null(a.cert);
	assert_contains(a.why, "the certificate signer exited");
	assert_contains(a.why, "signal 9");

	get(s, "b.example.com", &b);
	assert_int_equal(b.called, 0);
	wait_for(f->base, &b);
	assert_null(b.cert);
	assert_contains(b.why, "the certificate signer exited");
	assert_contains(b.why, "refused until the proxy is restarted");
	result_clear(&a);
	result_clear(&b);
	signer_free(s);
}

static void
test_free_reaps(void **state)
{
	struct fixture	*f = *state;
	struct signer	*s = start(f);
	struct result	 a = { 0 };
	pid_t		 pid = signer_pid(s);

	assert_int_equal(kill(pid, 0), 0);
	get(s, "a.example.com", &a);
	signer_free(s);
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
	/* Nothing left for the loop to run. */
	event_base_loop(f->base, EVLOOP_NONBLOCK);
	assert_int_equal(a.called, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_leaves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_no_ca, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_mode, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test(test_not_dumpable),
		cmocka_unit_test_setup_teardown(test_locked_down, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_child_killed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_free_reaps, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
