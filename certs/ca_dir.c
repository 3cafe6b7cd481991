/*
 * ca_dir.c: where cordon's CA lives: the folder policy p names
 * (tls.ca_dir), or the default one in the user's data folder.  Paths
 * only, no OpenSSL: a run without the proxy asks it too, to hide the
 * folder from the sandbox.
 */
#include <stdlib.h>

#include "certs/certs.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"

/*
 * The CA folder policy p names (tls.ca_dir), or the default one (caller
 * frees); NULL with *cause set.
 */
char *
ca_dir_policy(const struct policy *p, char **cause)
{
	*cause = NULL;
	if (p->p_ca_dir.pl_n > 0)
		return xstrdup(p->p_ca_dir.pl_v[0].pi_text);
	return ca_dir_default(cause);
}

/*
 * Returns the default CA directory, $XDG_DATA_HOME/cordon/ca or
 * ~/.local/share/cordon/ca (caller frees), or NULL with *cause set.
 */
char *
ca_dir_default(char **cause)
{
	const char	*xdg, *home;
	char		*dir;

	*cause = NULL;
	if ((xdg = getenv("XDG_DATA_HOME")) != NULL && xdg[0] == '/') {
		xasprintf(&dir, "%s/cordon/ca", xdg);
		return dir;
	}
	if ((home = getenv("HOME")) == NULL || home[0] != '/') {
		xasprintf(cause, "neither XDG_DATA_HOME nor HOME is an "
		    "absolute path");
		return NULL;
	}
	xasprintf(&dir, "%s/.local/share/cordon/ca", home);
	return dir;
}
