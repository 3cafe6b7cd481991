/*
 * fuzz_secrets.c: the parsers of the tools' token files (runner/
 * tokenfile.c) on arbitrary bytes; the first byte picks the format.  Every
 * token taken out has a host the proxy can hold it to (lower-case name
 * bytes), a value, and a placeholder the copy holds, as it is or (npm's
 * _password, base64) encoded; the copy's length is its text's.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "secrets/secrets.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int	 next_ph;

static char *
counted(void)
{
	char	*s;

	xasprintf(&s, "cordon-phantom-%032d", ++next_ph);
	return s;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct secret_file	 tf;
	const struct secret	*se;
	size_t			 i, j;

	if (size < 1)
		return 0;
	memset(&tf, 0, sizeof(tf));
	next_ph = 0;
	secrets_parse(&secrets_formats[data[0] % secrets_nformats],
	    (const char *)data + 1, size - 1, counted, &tf);
	if (tf.tf_text == NULL || strlen(tf.tf_text) > tf.tf_len)
		abort();
	for (i = 0; i < tf.tf_nsecrets; i++) {
		se = &tf.tf_secrets[i];
		if (se->se_host[0] == '\0' || se->se_value == NULL ||
		    (se->se_user == NULL) == (se->se_format == NULL))
			abort();
		for (j = 0; se->se_host[j] != '\0'; j++)
			if (strchr("abcdefghijklmnopqrstuvwxyz0123456789-.",
			    se->se_host[j]) == NULL)
				abort();
		if (se->se_user == NULL &&
		    strstr(tf.tf_text, se->se_placeholder) == NULL)
			abort();
	}
	secrets_clear(&tf);
	return 0;
}
