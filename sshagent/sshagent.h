/*
 * sshagent.h: what cordon's ssh-agent (agent/agent.c) knows of the
 * protocol and of keys, a library with no process in it: the messages
 * (agentmsg.c), a host key's signature (agentkey.c), the user's known
 * hosts (knownhosts.c).
 */
#ifndef CORDON_SSHAGENT_H
#define CORDON_SSHAGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * agentmsg.c: the ssh-agent protocol's messages (OpenSSH's
 * PROTOCOL.agent and draft-miller-ssh-agent), parsed without I/O.
 * What a parse hands out points into the caller's buffer.
 */
#define AGENT_MSG_MAX		(256 * 1024)	/* a message, as OpenSSH */
#define AGENT_SID_MAX		128	/* a session identifier: a hash */
#define AGENT_KEYS_MAX		1024	/* keys in an identities answer */
#define AGENT_FAILURE		5
#define AGENT_SUCCESS		6
#define AGENT_REQUEST_IDENTITIES 11
#define AGENT_IDENTITIES_ANSWER	12
#define AGENT_SIGN_REQUEST	13
#define AGENT_SIGN_RESPONSE	14
#define AGENT_EXTENSION		27
#define AGENT_RSA_SHA2_MASK	0x06	/* SSH_AGENT_RSA_SHA2_256 | _512 */
#define AGENT_USERAUTH_REQUEST	50	/* SSH2_MSG_USERAUTH_REQUEST */
#define AGENT_SESSION_BIND	"session-bind@openssh.com"
#define AGENT_HOSTBOUND		"publickey-hostbound-v00@openssh.com"

struct agent_rd {
	const uint8_t	*ar_p;
	size_t		 ar_len;
};

struct agent_bind {
	const uint8_t	*ab_hostkey;
	size_t		 ab_hostkeylen;
	const uint8_t	*ab_sid;
	size_t		 ab_sidlen;
	const uint8_t	*ab_sig;
	size_t		 ab_siglen;
	bool		 ab_forwarding;
};

struct agent_sign {
	const uint8_t	*as_key;
	size_t		 as_keylen;
	const uint8_t	*as_data;
	size_t		 as_datalen;
	uint32_t	 as_flags;
};

struct agent_auth {
	const uint8_t	*aa_sid;
	size_t		 aa_sidlen;
	const uint8_t	*aa_user;
	size_t		 aa_userlen;
	const uint8_t	*aa_service;
	size_t		 aa_servicelen;
	const uint8_t	*aa_alg;
	size_t		 aa_alglen;
	const uint8_t	*aa_key;
	size_t		 aa_keylen;
	const uint8_t	*aa_hostkey;	/* the host-bound method's, or NULL */
	size_t		 aa_hostkeylen;
};

int	agentmsg_u32(struct agent_rd *, uint32_t *);
int	agentmsg_u8(struct agent_rd *, uint8_t *);
int	agentmsg_string(struct agent_rd *, const uint8_t **, size_t *);
bool	agentmsg_is(const uint8_t *, size_t, const char *);
int	agentmsg_frame(const uint8_t *, size_t, uint8_t *, struct agent_rd *,
	    size_t *);
int	agentmsg_bind(struct agent_rd *, struct agent_bind *, const char **);
int	agentmsg_sign(struct agent_rd *, struct agent_sign *, const char **);
int	agentmsg_userauth(const uint8_t *, size_t, struct agent_auth *,
	    const char **);
int	agentmsg_idents(struct agent_rd *, void (*)(const uint8_t *, size_t,
	    void *), void *);

/* agentkey.c: a host key's signature, checked with OpenSSL. */
#define AGENTKEY_FP_LEN		64	/* "SHA256:" and base64, with NUL */

int	agentkey_verify(const uint8_t *, size_t, const uint8_t *, size_t,
	    const uint8_t *, size_t, const char **);
void	agentkey_fingerprint(const uint8_t *, size_t, char *, size_t);

/* knownhosts.c: whether, and the names, a host key is known under. */
#define KNOWNHOSTS_FILE_MAX	(8 * 1024 * 1024)
#define KNOWNHOSTS_LINE_MAX	(64 * 1024)
#define KNOWNHOSTS_LINES_MAX	100000
#define KNOWNHOSTS_NAMES_MAX	64	/* names returned for one key */

struct knownhosts;

struct knownhosts *knownhosts_new(void);
void	knownhosts_parse(struct knownhosts *, const char *, size_t);
int	knownhosts_load(struct knownhosts *, const char *, char **);
bool	knownhosts_revoked(const struct knownhosts *, const uint8_t *,
	    size_t);
bool	knownhosts_known(const struct knownhosts *, const uint8_t *, size_t,
	    const char *);
void	knownhosts_names(const struct knownhosts *, const uint8_t *, size_t,
	    const char *const *, size_t, char ***, size_t *);
void	knownhosts_free(struct knownhosts *);

#endif
