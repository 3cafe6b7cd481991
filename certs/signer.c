/*
 * signer.c: the signing process.  The proxy faces the sandbox's traffic;
 * if a parser bug there ever let a workload run code in it, the CA key
 * must not be in its memory, or every TLS client trusting the CA could be
 * fooled for as long as the CA lives.  So a forked child alone loads the
 * key, then gives up open, socket, exec and the rest (seccomp) before it
 * reads a single request, and mints leaves for host names sent to it.
 *
 * The messages, one per SOCK_SEQPACKET record, first byte the kind:
 *
 *	child -> parent, once:	'R' len16 ca-cert-DER leaf-key-PKCS#8-DER
 *				'E' text (the CA could not be loaded)
 *	parent -> child:	'Q' host (1 to SIGNER_HOST_MAX bytes, no NUL)
 *	child -> parent:	'L' leaf-DER, or 'E' text (leaf_get's cause)
 *
 * len16 is the certificate's length, big-endian.  Replies come in the
 * order of the requests, so the parent keeps a FIFO of them; a request
 * the child cannot read gets an 'E' like any other, which keeps the two
 * in step.  Anything else ends the child, or on the parent's side is
 * taken for a broken signer: it is killed and every request fails.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <seccomp.h>

#include "certs/certs.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

#define SIGNER_HOST_MAX		255
#define SIGNER_MSG_MAX		16384	/* a leaf is under 1k */
#define SIGNER_TEXT_MAX		512	/* error texts, either way */
#define SIGNER_QUEUE_MAX	4096	/* requests in flight */
#define SIGNER_FD		3	/* the child's end, in the child */

#define SIGNER_MSG_READY	'R'
#define SIGNER_MSG_ERROR	'E'
#define SIGNER_MSG_QUERY	'Q'
#define SIGNER_MSG_LEAF		'L'

struct signer_req {
	TAILQ_ENTRY(signer_req)	 sr_entry;
	struct signer		*sr_signer;
	signer_cb		 sr_cb;
	void			*sr_arg;
	bool			 sr_cancelled;
	bool			 sr_sent;
	size_t			 sr_len;
	char			 sr_host[SIGNER_HOST_MAX + 1];
	char			*sr_why;	/* on the done queue */
};
TAILQ_HEAD(signer_reqs, signer_req);

struct signer {
	struct event_base	*s_base;
	int			 s_fd;
	pid_t			 s_pid;
	bool			 s_reaped;
	X509			*s_ca;
	EVP_PKEY		*s_key;
	struct event		*s_rev;
	struct event		*s_wev;
	struct event		*s_doneev;
	struct signer_reqs	 s_pending;	/* sent or to send, in order */
	struct signer_req	*s_unsent;	/* first not sent yet */
	size_t			 s_npending;
	struct signer_reqs	 s_done;	/* failed, callback to run */
	char			*s_dead;	/* why, once the child is gone */
};

static void	signer_read_cb(evutil_socket_t, short, void *);
static void	signer_write_cb(evutil_socket_t, short, void *);
static void	signer_done_cb(evutil_socket_t, short, void *);

/* The child's side. */

/*
 * Ends the child at once: no atexit handlers, and none of a sanitizer's
 * exit hooks (a leak check stops the world with clone and ptrace, which
 * the filter denies, over memory that is the parent's anyway).
 */
static void __attribute__((noreturn))
child_exit(int status)
{
	for (;;)
		syscall(SYS_exit_group, status);
}

/*
 * Sends a kind and text (an error); the child has nothing better to do
 * on failure than end, so errors are ignored.
 */
static void
child_send_text(char kind, const char *text)
{
	char	 msg[1 + SIGNER_TEXT_MAX];
	size_t	 len = strlen(text);

	if (len > SIGNER_TEXT_MAX)
		len = SIGNER_TEXT_MAX;
	msg[0] = kind;
	memcpy(msg + 1, text, len);
	(void)send(SIGNER_FD, msg, 1 + len, MSG_NOSIGNAL);
}

/*
 * The system calls left to the child once the CA is loaded: reading
 * requests and writing replies on the fd it already has, memory, time,
 * randomness (ECDSA nonces) and ending.  Nothing opens a file or socket
 * or starts a program: a child made to run code by a bad request can
 * only sign, which it could do anyway, and read its own memory.  Denied
 * calls fail with EACCES rather than kill, so an unforeseen call in
 * OpenSSL or a sanitizer's runtime shows as an error, not a lost signer.
 */
static int
child_seccomp(char **cause)
{
	static const char *const allowed[] = {
		"read", "write", "recvfrom", "sendto", "recvmsg", "sendmsg",
		"brk", "mmap", "munmap", "mremap", "madvise", "futex",
		"getrandom", "clock_gettime", "clock_getres", "gettimeofday",
		"time", "getpid", "gettid", "sched_yield", "rt_sigreturn",
		"rt_sigprocmask", "exit", "exit_group"
	};
	scmp_filter_ctx	 ctx;
	size_t		 i;
	int		 rc;

	if ((ctx = seccomp_init(SCMP_ACT_ERRNO(EACCES))) == NULL) {
		xasprintf(cause, "seccomp_init failed");
		return -1;
	}
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW,
		    seccomp_syscall_resolve_name(allowed[i]), 0);
		if (rc < 0)
			goto fail;
	}
	/* malloc may change protections of its own arenas, never to exec. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
	    SCMP_A2_64(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (rc < 0)
		goto fail;
	if ((rc = seccomp_load(ctx)) < 0)
		goto fail;
	seccomp_release(ctx);
	return 0;
fail:
	xasprintf(cause, "seccomp filter: %s", strerror(-rc));
	seccomp_release(ctx);
	return -1;
}

/*
 * Sends the ready message: the CA certificate and the leaves' key, the
 * latter wiped from memory once sent.  Returns 0 or -1.
 */
static int
child_ready(X509 *ca, EVP_PKEY *key)
{
	PKCS8_PRIV_KEY_INFO	*p8;
	unsigned char		 msg[SIGNER_MSG_MAX], *p;
	int			 clen, klen, rc = -1;

	if ((clen = i2d_X509(ca, NULL)) <= 0 || clen > 4096 ||
	    (p8 = EVP_PKEY2PKCS8(key)) == NULL)
		return -1;
	klen = i2d_PKCS8_PRIV_KEY_INFO(p8, NULL);
	if (klen > 0 && (size_t)(3 + clen + klen) <= sizeof(msg)) {
		msg[0] = SIGNER_MSG_READY;
		msg[1] = (unsigned char)(clen >> 8);
		msg[2] = (unsigned char)clen;
		p = msg + 3;
		if (i2d_X509(ca, &p) == clen &&
		    i2d_PKCS8_PRIV_KEY_INFO(p8, &p) == klen &&
		    send(SIGNER_FD, msg, (size_t)(3 + clen + klen),
		    MSG_NOSIGNAL) != -1)
			rc = 0;
	}
	OPENSSL_cleanse(msg, sizeof(msg));
	PKCS8_PRIV_KEY_INFO_free(p8);
	return rc;
}

/*
 * Answers requests until the parent closes its end; never returns.  A
 * request is read whole or, when longer than any valid one, refused.
 */
static void __attribute__((noreturn))
child_serve(struct leafcache *lc)
{
	unsigned char	 in[1 + SIGNER_HOST_MAX + 1], *out, *p;
	char		 host[SIGNER_HOST_MAX + 1], *cause;
	struct iovec	 iov;
	struct msghdr	 mh;
	X509		*cert;
	EVP_PKEY	*key;
	ssize_t		 n;
	int		 len;

	for (;;) {
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = in;
		iov.iov_len = sizeof(in);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		if ((n = recvmsg(SIGNER_FD, &mh, 0)) == -1) {
			if (errno == EINTR)
				continue;
			child_exit(1);
		}
		if (n == 0)
			child_exit(0);
		if ((mh.msg_flags & MSG_TRUNC) || in[0] != SIGNER_MSG_QUERY ||
		    n < 2 || n > 1 + SIGNER_HOST_MAX ||
		    memchr(in + 1, '\0', (size_t)n - 1) != NULL) {
			child_send_text(SIGNER_MSG_ERROR,
			    "malformed certificate request");
			continue;
		}
		memcpy(host, in + 1, (size_t)n - 1);
		host[n - 1] = '\0';

		if (leaf_get(lc, host, &cert, &key, &cause) == -1) {
			child_send_text(SIGNER_MSG_ERROR, cause);
			free(cause);
			continue;
		}
		EVP_PKEY_free(key);
		if ((len = i2d_X509(cert, NULL)) <= 0 ||
		    len >= SIGNER_MSG_MAX) {
			X509_free(cert);
			child_send_text(SIGNER_MSG_ERROR,
			    "encoding a certificate failed");
			continue;
		}
		out = xmalloc(1 + (size_t)len);
		out[0] = SIGNER_MSG_LEAF;
		p = out + 1;
		if (i2d_X509(cert, &p) != len) {
			ERR_clear_error();
			child_send_text(SIGNER_MSG_ERROR,
			    "encoding a certificate failed");
		} else if (send(SIGNER_FD, out, 1 + (size_t)len,
		    MSG_NOSIGNAL) == -1)
			child_exit(1);
		free(out);
		X509_free(cert);
	}
}

/*
 * The child after fork: fd is its end of the socketpair, ppid the
 * parent.  Keeps only fd (as SIGNER_FD) and /dev/null on 0 to 2, dies
 * with the parent, cannot be read by ptrace or a core dump, loads the CA
 * and locks itself down.  Never returns.
 */
static void __attribute__((noreturn))
child_main(int fd, pid_t ppid, const char *ca_dir)
{
	struct leafcache	*lc;
	struct stat		 st;
	sigset_t		 set;
	X509			*ca;
	EVP_PKEY		*key;
	char			*cause, *path;
	int			 null, sig;

	/* Die with the proxy; if it is gone already, nobody would ask. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != ppid)
		child_exit(1);
	/* Without it, any process of our uid could read the CA key. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		child_exit(1);

	if (fd != SIGNER_FD && dup2(fd, SIGNER_FD) == -1)
		child_exit(1);
	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
	    dup2(null, 0) == -1 || dup2(null, 1) == -1 || dup2(null, 2) == -1)
		child_exit(1);
	/* The proxy's listeners, log and event base are not ours to keep. */
	if (syscall(SYS_close_range, SIGNER_FD + 1, ~0U, 0) == -1)
		child_exit(1);

	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);	/* fails for KILL, STOP: fine */

	if (ca_load(ca_dir, &ca, &key, &cause) == -1) {
		xasprintf(&path, "%s/%s", ca_dir, CA_KEY_FILE);
		if (stat(path, &st) == -1 && errno == ENOENT) {
			free(cause);
			xasprintf(&cause, "no CA in %s: run `cordon ca init "
			    "--dir %s`", ca_dir, ca_dir);
		}
		free(path);
		child_send_text(SIGNER_MSG_ERROR, cause);
		child_exit(1);
	}
	lc = leaf_cache_new(ca, key, LEAF_CACHE_MAX, &cause);
	EVP_PKEY_free(key);		/* lc holds its own reference */
	if (lc == NULL) {
		child_send_text(SIGNER_MSG_ERROR, cause);
		child_exit(1);
	}

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		child_send_text(SIGNER_MSG_ERROR, "PR_SET_NO_NEW_PRIVS failed");
		child_exit(1);
	}
	if (child_seccomp(&cause) == -1) {
		child_send_text(SIGNER_MSG_ERROR, cause);
		child_exit(1);
	}
	if (child_ready(ca, leaf_cache_key(lc)) == -1)
		child_exit(1);
	X509_free(ca);
	child_serve(lc);
}

/* The parent's side. */

/* Copies a text from the child, bounded and escaped (str_escape). */
static char *
signer_text(const unsigned char *p, size_t len)
{
	return str_escape((const char *)p, len > SIGNER_TEXT_MAX ?
	    SIGNER_TEXT_MAX : len);
}

/*
 * Kills and reaps the child, once; sets *why to how it ended when the
 * wait tells (someone else may have reaped it).  Killing first makes
 * the wait short: the child may have closed its end while exiting.
 */
static void
signer_reap(struct signer *s, char **why)
{
	int	 status;
	pid_t	 pid;

	if (why != NULL)
		*why = NULL;
	if (s->s_reaped)
		return;
	s->s_reaped = true;
	kill(s->s_pid, SIGKILL);
	while ((pid = waitpid(s->s_pid, &status, 0)) == -1 && errno == EINTR)
		;
	if (pid != s->s_pid || why == NULL)
		return;
	if (WIFEXITED(status))
		xasprintf(why, "status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		xasprintf(why, "signal %d", WTERMSIG(status));
}

/* Frees a request, its callback not run. */
static void
signer_req_free(struct signer_req *r)
{
	free(r->sr_why);
	free(r);
}

/* Moves r to the done queue, to fail with why from the event loop. */
static void
signer_req_fail(struct signer *s, struct signer_req *r, const char *why)
{
	r->sr_why = xstrdup(why);
	TAILQ_INSERT_TAIL(&s->s_done, r, sr_entry);
	event_active(s->s_doneev, 0, 0);
}

/*
 * The child is gone or not to be trusted: reaps it and fails every
 * pending request, now and to come, with why and how the child ended.
 */
static void
signer_dead(struct signer *s, const char *why)
{
	struct signer_req	*r;
	char			*how;

	if (s->s_dead != NULL)
		return;
	event_del(s->s_rev);
	event_del(s->s_wev);
	signer_reap(s, &how);
	/* What every inspected connection will be told from now on. */
	xasprintf(&s->s_dead, "%s%s%s%s; inspected hosts are refused until "
	    "the proxy is restarted", why, how != NULL ? " (" : "",
	    how != NULL ? how : "", how != NULL ? ")" : "");
	free(how);
	while ((r = TAILQ_FIRST(&s->s_pending)) != NULL) {
		TAILQ_REMOVE(&s->s_pending, r, sr_entry);
		signer_req_fail(s, r, s->s_dead);
	}
	s->s_unsent = NULL;
	s->s_npending = 0;
}

/*
 * Forks the signing process for the CA in ca_dir, its end of a socket
 * pair on the signer's s_fd.  Returns the signer, or NULL with *cause
 * set.
 */
static struct signer *
signer_fork(struct event_base *base, const char *ca_dir, char **cause)
{
	struct signer	*s;
	pid_t		 ppid = getpid();
	int		 sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		xasprintf(cause, "socketpair: %s", strerror(errno));
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->s_base = base;
	s->s_fd = sv[0];
	TAILQ_INIT(&s->s_pending);
	TAILQ_INIT(&s->s_done);
	switch (s->s_pid = fork()) {
	case -1:
		xasprintf(cause, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		free(s);
		return NULL;
	case 0:
		child_main(sv[1], ppid, ca_dir);
	default:
		break;
	}
	close(sv[1]);
	return s;
}

/*
 * Waits for the child's first message (at most SIGNER_START_SECS) and
 * reads it into msg, SIGNER_MSG_MAX bytes, its recvmsg flags in *flags.
 * Returns its length, or -1 with *cause set (the child reaped when it
 * ended).
 */
static ssize_t
signer_recv_first(struct signer *s, unsigned char *msg, int *flags,
    char **cause)
{
	struct pollfd	 pfd;
	struct timespec	 now, end;
	struct iovec	 iov;
	struct msghdr	 mh;
	ssize_t		 n;
	int		 ms;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += SIGNER_START_SECS;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (int)((end.tv_sec - now.tv_sec) * 1000 +
		    (end.tv_nsec - now.tv_nsec) / 1000000);
		if (ms <= 0) {
			xasprintf(cause, "the certificate signer did not "
			    "start within %d seconds", SIGNER_START_SECS);
			return -1;
		}
		pfd.fd = s->s_fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, ms) == -1 && errno != EINTR) {
			xasprintf(cause, "poll: %s", strerror(errno));
			return -1;
		}
		if (pfd.revents == 0)
			continue;
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = msg;
		iov.iov_len = SIGNER_MSG_MAX;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		if ((n = recvmsg(s->s_fd, &mh, 0)) == -1 && errno == EINTR)
			continue;
		break;
	}
	if (n <= 0) {
		signer_reap(s, &s->s_dead);
		xasprintf(cause, "the certificate signer exited at start%s%s%s",
		    s->s_dead != NULL ? " (" : "",
		    s->s_dead != NULL ? s->s_dead : "",
		    s->s_dead != NULL ? ")" : "");
		return -1;
	}
	*flags = mh.msg_flags;
	return n;
}

/*
 * Reads the ready message (msg, n bytes, flags from recvmsg) into the
 * signer's CA certificate and leaf key.  Returns 0, or -1 with *cause
 * set: the child's error text, or a malformed message.
 */
static int
signer_parse_ready(struct signer *s, const unsigned char *msg, size_t n,
    int flags, char **cause)
{
	PKCS8_PRIV_KEY_INFO	*p8 = NULL;
	const unsigned char	*p;
	size_t			 clen;
	int			 rc = -1;

	if (msg[0] == SIGNER_MSG_ERROR) {
		*cause = signer_text(msg + 1, n - 1);
		return -1;
	}
	if ((flags & MSG_TRUNC) || msg[0] != SIGNER_MSG_READY || n < 3 ||
	    (clen = (size_t)msg[1] << 8 | msg[2]) > n - 3)
		goto out;
	p = msg + 3;
	if ((s->s_ca = d2i_X509(NULL, &p, (long)clen)) == NULL ||
	    p != msg + 3 + clen)
		goto out;
	if ((p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)(n - 3 - clen))) ==
	    NULL || p != msg + n || (s->s_key = EVP_PKCS82PKEY(p8)) == NULL)
		goto out;
	rc = 0;
out:
	PKCS8_PRIV_KEY_INFO_free(p8);
	if (rc == -1) {
		ERR_clear_error();
		xasprintf(cause, "the certificate signer's first message is "
		    "malformed");
	}
	return rc;
}

/* Watches the signer's socket on its loop; returns 0, or -1 with *cause. */
static int
signer_watch(struct signer *s, char **cause)
{
	int	 flags;

	if ((flags = fcntl(s->s_fd, F_GETFL)) == -1 ||
	    fcntl(s->s_fd, F_SETFL, flags | O_NONBLOCK) == -1) {
		xasprintf(cause, "fcntl: %s", strerror(errno));
		return -1;
	}
	if ((s->s_rev = event_new(s->s_base, s->s_fd, EV_READ | EV_PERSIST,
	    signer_read_cb, s)) == NULL ||
	    (s->s_wev = event_new(s->s_base, s->s_fd, EV_WRITE | EV_PERSIST,
	    signer_write_cb, s)) == NULL ||
	    (s->s_doneev = event_new(s->s_base, -1, 0, signer_done_cb,
	    s)) == NULL || event_add(s->s_rev, NULL) == -1) {
		xasprintf(cause, "the certificate signer's events failed");
		return -1;
	}
	return 0;
}

/*
 * Starts the signing process for the CA in ca_dir and waits until it has
 * loaded the CA (at most SIGNER_START_SECS).  Returns the signer, or NULL
 * with *cause set.  Forks: the caller must not reap children it did not
 * start (waitpid(-1)), or the signer's end goes unnoticed until the next
 * request.
 */
struct signer *
signer_start(struct event_base *base, const char *ca_dir, char **cause)
{
	struct signer	*s;
	unsigned char	*msg;
	ssize_t		 n;
	int		 flags, rc = -1;

	*cause = NULL;
	if ((s = signer_fork(base, ca_dir, cause)) == NULL)
		return NULL;
	/* The ready message, holding a private key: wiped once parsed. */
	msg = xmalloc(SIGNER_MSG_MAX);
	if ((n = signer_recv_first(s, msg, &flags, cause)) != -1 &&
	    signer_parse_ready(s, msg, (size_t)n, flags, cause) == 0)
		rc = 0;
	OPENSSL_cleanse(msg, SIGNER_MSG_MAX);
	free(msg);
	if (rc == -1 || signer_watch(s, cause) == -1) {
		signer_free(s);
		return NULL;
	}
	return s;
}

/*
 * Sends requests not sent yet until the socket is full (then waits for
 * it to drain, with s_wev) or none is left.  Returns 0, or -1 when the
 * child is gone (and then everything has failed).
 */
static int
signer_flush(struct signer *s)
{
	struct signer_req	*r;
	unsigned char		 msg[1 + SIGNER_HOST_MAX];

	while ((r = s->s_unsent) != NULL) {
		msg[0] = SIGNER_MSG_QUERY;
		memcpy(msg + 1, r->sr_host, r->sr_len);
		if (send(s->s_fd, msg, 1 + r->sr_len, MSG_NOSIGNAL) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == ENOBUFS) {
				event_add(s->s_wev, NULL);
				return 0;
			}
			signer_dead(s, "the certificate signer exited");
			return -1;
		}
		r->sr_sent = true;
		s->s_unsent = TAILQ_NEXT(r, sr_entry);
	}
	event_del(s->s_wev);
	return 0;
}

static void
signer_write_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	signer_flush(arg);
}

/*
 * One reply, for the oldest request sent.  Reads one message a call (the
 * read event stays active while more wait), so that a callback may free
 * the signer: nothing touches s after it.
 */
static void
signer_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct signer		*s = arg;
	struct signer_req	*r;
	unsigned char		*msg;
	const unsigned char	*p;
	struct iovec		 iov;
	struct msghdr		 mh;
	X509			*cert = NULL;
	EVP_PKEY		*pub;
	char			*why = NULL;
	const char		*bad = NULL;
	ssize_t			 n;

	(void)what;
	msg = xmalloc(SIGNER_MSG_MAX);
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = msg;
	iov.iov_len = SIGNER_MSG_MAX;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if ((n = recvmsg(fd, &mh, 0)) == -1 &&
	    (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		free(msg);
		return;
	}
	if (n <= 0) {
		free(msg);
		signer_dead(s, "the certificate signer exited");
		return;
	}

	r = TAILQ_FIRST(&s->s_pending);
	if (r == NULL || !r->sr_sent)
		bad = "the certificate signer replied to no request";
	else if (mh.msg_flags & MSG_TRUNC)
		bad = "the certificate signer sent a malformed reply";
	else if (msg[0] == SIGNER_MSG_ERROR)
		why = signer_text(msg + 1, (size_t)n - 1);
	else if (msg[0] != SIGNER_MSG_LEAF)
		bad = "the certificate signer sent a malformed reply";
	else {
		/*
		 * The child is trusted to sign, but a leaf must still parse
		 * whole, hold the key we present with and be the CA's:
		 * anything else is a confused signer, not one bad leaf.
		 */
		p = msg + 1;
		if ((cert = d2i_X509(NULL, &p, (long)n - 1)) == NULL ||
		    p != msg + n ||
		    X509_check_private_key(cert, s->s_key) != 1 ||
		    (pub = X509_get0_pubkey(s->s_ca)) == NULL ||
		    X509_verify(cert, pub) != 1)
			bad = "the certificate signer sent a bad certificate";
	}
	free(msg);
	if (bad != NULL) {
		ERR_clear_error();
		X509_free(cert);
		signer_dead(s, bad);
		return;
	}

	TAILQ_REMOVE(&s->s_pending, r, sr_entry);
	s->s_npending--;
	if (r->sr_cancelled) {
		X509_free(cert);
		free(why);
		signer_req_free(r);
		return;
	}
	r->sr_cb(cert, cert == NULL ? why : NULL, r->sr_arg);
	free(why);
	signer_req_free(r);
}

/*
 * Runs the callback of one failed request; with more to run, activates
 * itself again first, so a callback may free the signer (which frees
 * the rest, callbacks not run).
 */
static void
signer_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct signer		*s = arg;
	struct signer_req	*r;

	(void)fd;
	(void)what;
	if ((r = TAILQ_FIRST(&s->s_done)) == NULL)
		return;
	TAILQ_REMOVE(&s->s_done, r, sr_entry);
	if (TAILQ_FIRST(&s->s_done) != NULL)
		event_active(s->s_doneev, 0, 0);
	if (!r->sr_cancelled)
		r->sr_cb(NULL, r->sr_why, r->sr_arg);
	signer_req_free(r);
}

/*
 * Asks for the leaf of host.  cb runs from the event loop once, with a
 * new certificate reference or NULL and why, unless signer_cancel() is
 * called first.  Returns the handle, valid until then.
 */
struct signer_req *
signer_get(struct signer *s, const char *host, signer_cb cb, void *arg)
{
	struct signer_req	*r;
	size_t			 len = strlen(host);

	r = xcalloc(1, sizeof(*r));
	r->sr_signer = s;
	r->sr_cb = cb;
	r->sr_arg = arg;
	if (s->s_dead != NULL) {
		signer_req_fail(s, r, s->s_dead);
		return r;
	}
	if (len == 0 || len > SIGNER_HOST_MAX) {
		signer_req_fail(s, r, "a host name is 1 to 255 characters");
		return r;
	}
	if (s->s_npending >= SIGNER_QUEUE_MAX) {
		signer_req_fail(s, r, "too many certificate requests waiting");
		return r;
	}
	memcpy(r->sr_host, host, len);
	r->sr_len = len;
	TAILQ_INSERT_TAIL(&s->s_pending, r, sr_entry);
	s->s_npending++;
	if (s->s_unsent == NULL) {
		s->s_unsent = r;
		signer_flush(s);	/* failure fails r too, from the loop */
	}
	return r;
}

/*
 * The callback of r will not run.  r stays queued until its reply (so
 * later replies still match their requests) and is freed then.
 */
void
signer_cancel(struct signer_req *r)
{
	r->sr_cancelled = true;
}

EVP_PKEY *
signer_key(const struct signer *s)
{
	return s->s_key;
}

X509 *
signer_ca(const struct signer *s)
{
	return s->s_ca;
}

pid_t
signer_pid(const struct signer *s)
{
	return s->s_pid;
}

/*
 * Ends the child (SIGKILL, then reaps that pid only) and frees the signer
 * and every request still held, their callbacks not run.  Accepts NULL.
 */
void
signer_free(struct signer *s)
{
	struct signer_req	*r;

	if (s == NULL)
		return;
	if (s->s_rev != NULL)
		event_free(s->s_rev);
	if (s->s_wev != NULL)
		event_free(s->s_wev);
	if (s->s_doneev != NULL)
		event_free(s->s_doneev);
	close(s->s_fd);
	signer_reap(s, NULL);
	while ((r = TAILQ_FIRST(&s->s_pending)) != NULL) {
		TAILQ_REMOVE(&s->s_pending, r, sr_entry);
		signer_req_free(r);
	}
	while ((r = TAILQ_FIRST(&s->s_done)) != NULL) {
		TAILQ_REMOVE(&s->s_done, r, sr_entry);
		signer_req_free(r);
	}
	X509_free(s->s_ca);
	EVP_PKEY_free(s->s_key);
	free(s->s_dead);
	free(s);
}
