/*
 * env.h: the environment the sandboxed command gets (env.c), decided by
 * cordon run on the host before the clone from its own environment and
 * the policy.
 */
#ifndef CORDON_ENV_H
#define CORDON_ENV_H

#include <stddef.h>

/* env.c: the sandboxed command's environment, from host and policy. */
#define ENV_MAX_VARS	4096
#define ENV_MAX_BYTES	(1024 * 1024)	/* "NAME=value" and NUL, summed */

struct policy;
struct phantom;

struct env_proxy {
	int			 ep_port;	/* the proxy on 127.0.0.1, */
						/* HTTP and SOCKS5 */
	const struct phantom	*ep_phantoms;	/* ph_env gets ph_placeholder: */
						/* it wins over pass and set */
	size_t			 ep_nphantoms;
	const char		*ep_ca_bundle;	/* NULL, or the CA bundle's */
						/* path inside: env_ca_vars */
	const char		*ep_ca_java;	/* NULL, or the same as Java's */
						/* trust store */
	const char		*ep_apt_conf;	/* NULL, or APT_CONFIG, unless */
						/* one is passed */
	const char		*ep_agent_sock;	/* NULL, or SSH_AUTH_SOCK: */
						/* cordon's agent, inside */
};

/* The variables that point tools at a CA bundle, and who reads each. */
struct env_ca_var {
	const char	*cv_name;
	const char	*cv_reader;
};

extern const struct env_ca_var	env_ca_vars[];
extern const size_t		env_ca_nvars;

char	**env_build(const struct policy *, char *const *,
	    const struct env_proxy *, char **);
void	  env_free(char **);
char	 *env_dropped(const struct policy *, char *const *);

#endif
