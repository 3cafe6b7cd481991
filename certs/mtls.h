/*
 * mtls.h: the TLS of a tls: listener (mtls.c): its context (--tls-cert,
 * --tls-key, --client-ca, --crl), read again on SIGHUP; the identity of
 * a client's certificate; why a handshake was refused, and how often
 * that is written.  No proxy in it: proxy/conn_mtls.c runs a client's
 * handshake with it.
 */
#ifndef CORDON_MTLS_H
#define CORDON_MTLS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define MTLS_IDENTITY_MAX	255
#define MTLS_LINES_MAX		5	/* refusals written a second, a reason */

struct ssl_ctx_st;

enum mtls_reason {
	MTLS_R_NO_CERT,
	MTLS_R_UNKNOWN_CA,
	MTLS_R_EXPIRED,
	MTLS_R_REVOKED,
	MTLS_R_NOT_YET_VALID,
	MTLS_R_INVALID,		/* any other verification error */
	MTLS_R_NO_IDENTITY,	/* verified, but names no usable identity */
	MTLS_R_HANDSHAKE,	/* not TLS, an old version, no shared cipher */
	MTLS_R_COUNT
};

struct mtls_files {
	const char		*mf_cert;
	const char		*mf_key;
	const char		*mf_ca;
	const char		*mf_crl;	/* NULL: none */
};

struct mtls {
	struct mtls_files	 mt_files;
	struct ssl_ctx_st	*mt_ctx;	/* replaced on reload */
	uint64_t		 mt_refused[MTLS_R_COUNT];
	uint64_t		 mt_quiet[MTLS_R_COUNT];	/* not written */
	time_t			 mt_second[MTLS_R_COUNT];
	unsigned int		 mt_lines[MTLS_R_COUNT];	/* in it */
};

struct ssl_st;
struct x509_st;

struct mtls	*mtls_new(const struct mtls_files *, char **);
int		 mtls_reload(struct mtls *, char **);
void		 mtls_free(struct mtls *);
struct ssl_st	*mtls_session(struct mtls *);
char		*mtls_identity(struct x509_st *, char **);
enum mtls_reason mtls_why(struct ssl_st *, unsigned long, const char **);
const char	*mtls_failed_subject(struct ssl_st *);
const char	*mtls_label(enum mtls_reason);
const char	*mtls_words_of(enum mtls_reason);
const char	*mtls_hint(enum mtls_reason);
bool		 mtls_refusal(struct mtls *, enum mtls_reason, uint64_t *);

#endif /* CORDON_MTLS_H */
