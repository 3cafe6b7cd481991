/*
 * fuzz_agentmsg.c: cordon's ssh-agent's parsers on arbitrary bytes: a
 * message's frame and each body it reads, a host key's signature check,
 * and known_hosts.  What a parse hands out lies within the bytes given.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sshagent/sshagent.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
within(const uint8_t *p, size_t n, const uint8_t *data, size_t size)
{
	if (p != NULL && (p < data || p + n > data + size))
		abort();
}

static void
key_cb(const uint8_t *key, size_t len, void *arg)
{
	(void)key;
	(void)len;
	(void)arg;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_rd		 body, r;
	struct agent_bind	 b;
	struct agent_sign	 s;
	struct agent_auth	 a;
	struct knownhosts	*kh;
	const char		*cause, *cands[] = { "a.test", "[b.test]:2222" };
	char			**names;
	size_t			 used, n, i;
	uint8_t			 type;

	if (agentmsg_frame(data, size, &type, &body, &used) == 0) {
		if (used > size)
			abort();
		within(body.ar_p, body.ar_len, data, size);
		r = body;
		if (agentmsg_bind(&r, &b, &cause) == 0) {
			within(b.ab_sid, b.ab_sidlen, data, size);
			(void)agentkey_verify(b.ab_hostkey, b.ab_hostkeylen,
			    b.ab_sig, b.ab_siglen, b.ab_sid, b.ab_sidlen,
			    &cause);
		}
		r = body;
		if (agentmsg_sign(&r, &s, &cause) == 0 &&
		    agentmsg_userauth(s.as_data, s.as_datalen, &a,
		    &cause) == 0)
			within(a.aa_key, a.aa_keylen, data, size);
		r = body;
		(void)agentmsg_idents(&r, key_cb, NULL);
	}
	kh = knownhosts_new();
	knownhosts_parse(kh, (const char *)data, size);
	knownhosts_names(kh, data, size < 64 ? size : 64, cands, 2, &names,
	    &n);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	knownhosts_free(kh);
	return 0;
}
