/*
 * agentmsg.c: the ssh-agent protocol's messages, as cordon's agent
 * (agent.c) reads them: pure parsing, no I/O, so the unit tests and a
 * fuzzer call it on any bytes.
 *
 * A message is a uint32 length, then that many bytes: a type byte and
 * its body.  Strings are a uint32 length and the bytes.  Every length is
 * checked against what is left before it is used; what a parse hands out
 * points into the caller's buffer.
 */
#include <sys/types.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "sshagent/sshagent.h"

/* Reads a uint32 from r; -1 when fewer than four bytes are left. */
int
agentmsg_u32(struct agent_rd *r, uint32_t *v)
{
	if (r->ar_len < 4)
		return -1;
	*v = (uint32_t)r->ar_p[0] << 24 | (uint32_t)r->ar_p[1] << 16 |
	    (uint32_t)r->ar_p[2] << 8 | (uint32_t)r->ar_p[3];
	r->ar_p += 4;
	r->ar_len -= 4;
	return 0;
}

/* Reads one byte from r. */
int
agentmsg_u8(struct agent_rd *r, uint8_t *v)
{
	if (r->ar_len < 1)
		return -1;
	*v = r->ar_p[0];
	r->ar_p++;
	r->ar_len--;
	return 0;
}

/* Reads a string from r: *s points into r's buffer, *len its length. */
int
agentmsg_string(struct agent_rd *r, const uint8_t **s, size_t *len)
{
	uint32_t	 n;

	if (agentmsg_u32(r, &n) == -1 || n > r->ar_len)
		return -1;
	*s = r->ar_p;
	*len = n;
	r->ar_p += n;
	r->ar_len -= n;
	return 0;
}

/* Whether the string s of len bytes is the text t. */
bool
agentmsg_is(const uint8_t *s, size_t len, const char *t)
{
	return len == strlen(t) && memcmp(s, t, len) == 0;
}

/*
 * The frame at the start of buf: 0 with *type, the body and *used (the
 * whole frame's size); 1 when more bytes are needed; -1 when the frame
 * is empty or longer than AGENT_MSG_MAX.
 */
int
agentmsg_frame(const uint8_t *buf, size_t len, uint8_t *type,
    struct agent_rd *body, size_t *used)
{
	struct agent_rd	 r = { buf, len };
	uint32_t	 n;

	if (agentmsg_u32(&r, &n) == -1)
		return 1;
	if (n == 0 || n > AGENT_MSG_MAX)
		return -1;
	if (r.ar_len < n)
		return 1;
	*type = r.ar_p[0];
	body->ar_p = r.ar_p + 1;
	body->ar_len = n - 1;
	*used = 4 + (size_t)n;
	return 0;
}

/*
 * session-bind@openssh.com, after its name: string host key, string
 * session identifier, string signature, bool forwarding, and nothing
 * more.  Returns 0, or -1 with *cause (static text).
 */
int
agentmsg_bind(struct agent_rd *r, struct agent_bind *b, const char **cause)
{
	uint8_t	 fwd;

	memset(b, 0, sizeof(*b));
	if (agentmsg_string(r, &b->ab_hostkey, &b->ab_hostkeylen) == -1 ||
	    agentmsg_string(r, &b->ab_sid, &b->ab_sidlen) == -1 ||
	    agentmsg_string(r, &b->ab_sig, &b->ab_siglen) == -1 ||
	    agentmsg_u8(r, &fwd) == -1 || r->ar_len != 0) {
		*cause = "a malformed session-bind";
		return -1;
	}
	if (b->ab_sidlen == 0 || b->ab_sidlen > AGENT_SID_MAX ||
	    b->ab_hostkeylen == 0) {
		*cause = "a session-bind with no session or host key";
		return -1;
	}
	b->ab_forwarding = fwd != 0;
	return 0;
}

/*
 * SSH2_AGENTC_SIGN_REQUEST's body: string key, string data, uint32
 * flags.  Only the flags that choose RSA's hash are taken.
 */
int
agentmsg_sign(struct agent_rd *r, struct agent_sign *s, const char **cause)
{
	memset(s, 0, sizeof(*s));
	if (agentmsg_string(r, &s->as_key, &s->as_keylen) == -1 ||
	    agentmsg_string(r, &s->as_data, &s->as_datalen) == -1 ||
	    agentmsg_u32(r, &s->as_flags) == -1 || r->ar_len != 0) {
		*cause = "a malformed sign request";
		return -1;
	}
	if ((s->as_flags & ~(uint32_t)AGENT_RSA_SHA2_MASK) != 0) {
		*cause = "a sign request with unknown flags";
		return -1;
	}
	return 0;
}

/*
 * What an SSH client signs to log in with a key (RFC 4252, section 7,
 * and OpenSSH's host-bound variant): string session identifier, byte
 * SSH2_MSG_USERAUTH_REQUEST, string user, string service, string method,
 * bool TRUE, string algorithm, string public key, and for the host-bound
 * method string host key; nothing more.  Anything else (a git commit,
 * a file signature, a challenge) is not this, and is refused.
 */
int
agentmsg_userauth(const uint8_t *data, size_t len, struct agent_auth *a,
    const char **cause)
{
	struct agent_rd	 r = { data, len };
	const uint8_t	*method;
	size_t		 methodlen;
	uint8_t		 type, has_sig;

	memset(a, 0, sizeof(*a));
	*cause = "the data to sign is not an SSH login";
	if (agentmsg_string(&r, &a->aa_sid, &a->aa_sidlen) == -1 ||
	    agentmsg_u8(&r, &type) == -1 || type != AGENT_USERAUTH_REQUEST ||
	    agentmsg_string(&r, &a->aa_user, &a->aa_userlen) == -1 ||
	    agentmsg_string(&r, &a->aa_service, &a->aa_servicelen) == -1 ||
	    agentmsg_string(&r, &method, &methodlen) == -1 ||
	    agentmsg_u8(&r, &has_sig) == -1 || has_sig != 1 ||
	    agentmsg_string(&r, &a->aa_alg, &a->aa_alglen) == -1 ||
	    agentmsg_string(&r, &a->aa_key, &a->aa_keylen) == -1)
		return -1;
	if (!agentmsg_is(a->aa_service, a->aa_servicelen, "ssh-connection"))
		return -1;
	if (agentmsg_is(method, methodlen, AGENT_HOSTBOUND)) {
		if (agentmsg_string(&r, &a->aa_hostkey, &a->aa_hostkeylen) ==
		    -1)
			return -1;
	} else if (!agentmsg_is(method, methodlen, "publickey"))
		return -1;
	if (r.ar_len != 0 || a->aa_sidlen == 0)
		return -1;
	*cause = NULL;
	return 0;
}

/*
 * SSH2_AGENT_IDENTITIES_ANSWER's body: uint32 count, then count pairs of
 * string key and string comment.  Calls cb for each key; returns the
 * count, or -1 when malformed or above AGENT_KEYS_MAX.
 */
int
agentmsg_idents(struct agent_rd *r, void (*cb)(const uint8_t *, size_t,
    void *), void *arg)
{
	const uint8_t	*key, *comment;
	size_t		 keylen, commentlen;
	uint32_t	 n, i;

	if (agentmsg_u32(r, &n) == -1 || n > AGENT_KEYS_MAX)
		return -1;
	for (i = 0; i < n; i++) {
		if (agentmsg_string(r, &key, &keylen) == -1 ||
		    agentmsg_string(r, &comment, &commentlen) == -1 ||
		    keylen == 0)
			return -1;
		if (cb != NULL)
			cb(key, keylen, arg);
	}
	return r->ar_len == 0 ? (int)n : -1;
}
