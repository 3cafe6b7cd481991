/*
 * trust.h: what cordon run on the host makes, before the clone, for a
 * run that inspects TLS: the phantom credentials (trust.c) and the CA
 * bundle the command is given (trust_bundle.c, with OpenSSL).
 */
#ifndef CORDON_TRUST_H
#define CORDON_TRUST_H

#include <stdbool.h>
#include <stddef.h>

/*
 * trust.c: the phantom credentials and the CA bundle of a run that
 * inspects TLS, made outside before the clone.
 */
struct phantom;

struct trust_bundle {
	char		*ib_pem;	/* the base bundle, then cordon's CA */
	size_t		 ib_len;
	char		*ib_base;	/* the base bundle's path, or NULL */
	char		*ib_extra;	/* the host's CA files added, or NULL */
	char		*ib_ca;		/* cordon's ca.crt */
	char		 ib_fingerprint[96];	/* the CA's SHA-256 */
	unsigned char	*ib_java;	/* the same, as Java's trust store */
	size_t		 ib_java_len;	/* (PKCS#12, DER) */
};

const char *trust_getenv(char *const *, const char *);
char	*trust_placeholder(void);
void	trust_phantoms(const struct policy *, char *const *,
	    struct phantom **, size_t *);
bool	trust_wanted(const struct policy *);
void	trust_hide_ca(struct policy *);
int	trust_bundle(const struct policy *, char *const *,
	    struct trust_bundle *, char **);
void	trust_bundle_clear(struct trust_bundle *);

#endif
