/*
 * ssl_error.h: OpenSSL's last error in words (ssl_error.c).
 */
#ifndef CORDON_SSL_ERROR_H
#define CORDON_SSL_ERROR_H

const char	*ssl_error_last(void);

#endif
