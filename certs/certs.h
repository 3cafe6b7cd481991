/*
 * certs.h: the local CA (`cordon ca`) and the leaf certificates minted
 * from it for TLS inspection.  Everything OpenSSL-specific stays in these
 * files: callers get 0 / -1 with a cause, never OpenSSL's 1-is-success.
 *
 * The CA key is a secret: only the component that signs leaves should
 * load it; ca_load() is the one way in.
 */
#ifndef CORDON_CERTS_H
#define CORDON_CERTS_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#define CA_DAYS			30	/* validity of a new CA */
#define CA_WARN_DAYS		7	/* `ca show` warns this near the end */
#define CA_KEY_FILE		"ca.key"
#define CA_CERT_FILE		"ca.crt"

#define LEAF_HOURS		24	/* at most; never past the CA's end */
#define LEAF_BACKDATE_SECS	3600	/* clients whose clock runs late */
#define LEAF_CACHE_MAX		512	/* default leafcache size */

struct policy;

/* ca.c */
char	*ca_dir_default(char **);
char	*ca_dir_policy(const struct policy *, char **);
int	 ca_init(const char *, bool, char **);
int	 ca_load(const char *, X509 **, EVP_PKEY **, char **);
int	 ca_show(const char *, FILE *, char **);
int	 ca_fingerprint(X509 *, char *, size_t);
int	 ca_serial_random(X509 *);
int	 ca_ext_add(X509 *, X509 *, int, const char *);

/* ca_cmd.c */
int	 ca_cmd(int, char **);

/* leaf.c */
struct leafcache;

struct leafcache *leaf_cache_new(X509 *, EVP_PKEY *, size_t, char **);
void	 leaf_cache_free(struct leafcache *);
int	 leaf_get(struct leafcache *, const char *, X509 **, EVP_PKEY **,
	    char **);
size_t	 leaf_cache_count(const struct leafcache *);
EVP_PKEY *leaf_cache_key(const struct leafcache *);	/* borrowed */

/*
 * signer.c: the signing process.  signer_start() forks it; it alone
 * loads the CA key (ca_load), holds the leafcache, locks itself down
 * (no new privileges, a seccomp filter without open, socket or exec)
 * and answers "a leaf for this host" over a SOCK_SEQPACKET socketpair.
 * The proxy's process never holds the CA key; it gets the CA
 * certificate and the leaves' shared key once, at start.
 *
 * Callbacks always run from the event loop, never inside signer_get().
 */
#define SIGNER_START_SECS	10	/* for the CA to load */

struct event_base;
struct signer;
struct signer_req;

/* The leaf (a new reference the callee frees), or NULL and why. */
typedef void	(*signer_cb)(X509 *, const char *, void *);

struct signer	*signer_start(struct event_base *, const char *, char **);
struct signer_req *signer_get(struct signer *, const char *, signer_cb,
		    void *);
void		 signer_cancel(struct signer_req *);
EVP_PKEY	*signer_key(const struct signer *);	/* borrowed */
X509		*signer_ca(const struct signer *);	/* borrowed */
pid_t		 signer_pid(const struct signer *);
void		 signer_free(struct signer *);

#endif
