/*
 * ssl_error.c: OpenSSL's error queue in words, for the reason a refusal
 * or a failed setup gives: its last error, with the queue emptied so the
 * next failure does not report this one.
 */
#include <openssl/err.h>

#include "certs/ssl_error.h"

/*
 * The queue's last error in words, the queue emptied; the text lives in
 * a static buffer until the next call.
 */
const char *
ssl_error_last(void)
{
	static char	 buf[256];
	unsigned long	 e = ERR_peek_last_error();

	ERR_clear_error();
	if (e == 0)
		return "no detail from OpenSSL";
	ERR_error_string_n(e, buf, sizeof(buf));
	return buf;
}
