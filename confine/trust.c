/*
 * trust.c: the runner's part of TLS inspection that is policy, done
 * outside before the clone: the phantom credentials (a placeholder for
 * the sandbox, the real value for the proxy), whether the run trusts
 * cordon's CA, and the CA's folder hidden from the sandbox.  The CA
 * bundle itself is trust_bundle.c's, the part that needs OpenSSL.
 * Nothing here needs privileges.
 *
 * Runs in: cordon run on the host, before the clone.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certs/certs.h"
#include "confine/trust.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"

#define PHANTOM_HEX		32

/* Returns the value of name in env (NULL-terminated), or NULL. */
const char *
trust_getenv(char *const *env, const char *name)
{
	size_t	 i, n = strlen(name);

	for (i = 0; env != NULL && env[i] != NULL; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

/* A new placeholder: PHANTOM_PREFIX and 32 random hex digits. */
char *
trust_placeholder(void)
{
	char	*s;
	size_t	 off = strlen(PHANTOM_PREFIX);

	s = xmalloc(off + PHANTOM_HEX + 1);
	memcpy(s, PHANTOM_PREFIX, off);
	if (str_random_hex(s + off, PHANTOM_HEX) == -1)
		fatal("run: getrandom");
	return s;
}

/*
 * The phantom credentials of policy p's credentials entries, whose real
 * values are read from env (the runner's own environment).  An entry
 * whose variable env does not hold gets none (said with -v).  Entries
 * naming one variable share one placeholder.  Sets *ph (the caller
 * frees it with proxy_phantoms_free) and *n.
 */
void
trust_phantoms(const struct policy *p, char *const *env,
    struct phantom **ph, size_t *n)
{
	const struct pcred	*cr;
	struct phantom		*e;
	const char		*value;
	size_t			 i, j;

	*ph = NULL;
	*n = 0;
	for (i = 0; i < p->p_ncreds; i++) {
		cr = &p->p_creds[i];
		if (cr->cr_env == NULL)
			continue;	/* it only pins its host */
		if ((value = trust_getenv(env, cr->cr_env)) == NULL) {
			log_info("run: credentials: %s is not set in cordon's "
			    "environment; no placeholder, nothing swapped for "
			    "%s", cr->cr_env, cr->cr_host.pi_text);
			continue;
		}
		*ph = xreallocarray(*ph, *n + 1, sizeof(**ph));
		e = &(*ph)[(*n)++];
		memset(e, 0, sizeof(*e));
		policy_pitem_copy(&e->ph_host, &cr->cr_host);
		e->ph_env = xstrdup(cr->cr_env);
		e->ph_header = xstrdup(cr->cr_header);
		e->ph_format = xstrdup(cr->cr_format);
		e->ph_value = xstrdup(value);
		for (j = 0; j + 1 < *n; j++)
			if (strcmp((*ph)[j].ph_env, e->ph_env) == 0)
				break;
		e->ph_placeholder = j + 1 < *n ?
		    xstrdup((*ph)[j].ph_placeholder) : trust_placeholder();
	}
}

/* Whether the run is to trust cordon's CA: it inspects some host. */
bool
trust_wanted(const struct policy *p)
{
	return p->p_ninspect > 0;
}

/*
 * Hides the folder of the CA that network.inspect uses (tls.ca_dir, or
 * the default) from the sandbox, wherever it is: the command gets the
 * certificate in its bundle and must never read the key.  Adds it to
 * p's filesystem.deny when it exists; a missing one is left to fail
 * where the CA is loaded.
 */
void
trust_hide_ca(struct policy *p)
{
	struct pitem	*it;
	struct stat	 st;
	char		*dir, *cause;

	if (!trust_wanted(p) && p->p_ca_dir.pl_n == 0)
		return;
	if ((dir = ca_dir_policy(p, &cause)) == NULL) {
		free(cause);
		return;
	}
	if (dir[0] == '/' && stat(dir, &st) == 0) {
		it = policy_plist_add(&p->p_hide);
		it->pi_text = dir;
		it->pi_from = xstrdup("protected: the CA of network.inspect");
		return;
	}
	free(dir);
}
