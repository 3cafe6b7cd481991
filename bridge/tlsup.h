/*
 * tlsup.h: a host's way to a remote egress tier over mutual TLS
 * (cordon run --proxy tls://, cordon bridge --connect tls:).
 */
#ifndef CORDON_TLSUP_H
#define CORDON_TLSUP_H

#include <stdbool.h>

#include <openssl/ssl.h>

struct event_base;
struct tlsup;

/* The files a host shows the tier, and the CA the tier must show. */
struct tlsup_files {
	const char	*tf_cert;	/* --client-cert */
	const char	*tf_key;	/* --client-key */
	const char	*tf_ca;		/* --proxy-ca */
};

#define TLSUP_DIAL_SECS		5

/* What a client of tlsup_listen() meets (tlsup_gate). */
enum tlsup_gate {
	TLSUP_PASS,		/* relayed to the tier */
	TLSUP_HOLD,		/* waits */
	TLSUP_REFUSE		/* closed */
};

struct tlsup	*tlsup_new(struct event_base *, const char *,
		    const struct tlsup_files *, char **);
int		 tlsup_dial(struct tlsup *, int, SSL **, char **, char **);
int		 tlsup_listen(struct tlsup *, int, bool, char **);
void		 tlsup_gate(struct tlsup *, enum tlsup_gate);
unsigned long	 tlsup_refused(const struct tlsup *);
const char	*tlsup_where(const struct tlsup *);
void		 tlsup_free(struct tlsup *);

#endif
