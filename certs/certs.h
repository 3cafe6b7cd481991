/*
 * certs.h: the local CA (`cordon ca`) and the leaf certificates minted
 * from it for TLS inspection.  Everything OpenSSL-specific stays in these
 * files: callers get 0 / -1 with a cause, never OpenSSL's 1-is-success.
 *
 * The CA key is a secret: only the component that signs leaves should
 * load it (STYLE.md §6); ca_load() is the one way in.
 */
#ifndef CORDON_CERTS_H
#define CORDON_CERTS_H

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

/* ca.c */
char	*ca_dir_default(char **);
int	 ca_init(const char *, bool, char **);
int	 ca_load(const char *, X509 **, EVP_PKEY **, char **);
int	 ca_show(const char *, FILE *, char **);
int	 ca_fingerprint(X509 *, char *, size_t);
int	 cert_serial_random(X509 *);
int	 cert_ext_add(X509 *, X509 *, int, const char *);

/* ca_cmd.c */
int	 ca_cmd(int, char **);

/* leaf.c */
struct leafcache;

struct leafcache *leafcache_new(X509 *, EVP_PKEY *, size_t, char **);
void	 leafcache_free(struct leafcache *);
int	 leaf_get(struct leafcache *, const char *, X509 **, EVP_PKEY **,
	    char **);
size_t	 leafcache_count(const struct leafcache *);

#endif
