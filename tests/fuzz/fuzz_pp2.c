/*
 * fuzz_pp2.c: the PROXY v2 header parser on arbitrary bytes.  What it
 * accepts is within the bytes given, an originator's uid in it is
 * digits, and every prefix of an accepted header asks for more.
 */
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		 id[PP2_ID_MAX + 1], id2[PP2_ID_MAX + 1], *cause;
	char		*narrow;
	const uint8_t	*v;
	size_t		 used, used2, vlen, i;
	int		 rc;

	rc = pp2_parse(data, size, &used, id, sizeof(id), &narrow, &cause);
	if (rc != PP2_PARSE_OK) {
		if (narrow != NULL)
			abort();	/* nothing handed out on an error */
		free(cause);
		return 0;
	}
	if (used > size || used < 16 || strlen(id) == 0 ||
	    strlen(id) > PP2_ID_MAX)
		abort();
	/* The run's rules: within the bound, NUL-terminated, no NUL. */
	if (narrow != NULL && (strlen(narrow) == 0 ||
	    strlen(narrow) > PP2_NARROW_MAX))
		abort();
	free(narrow);
	/* The originator's uid: digits alone, when there. */
	if ((v = pp2_field(data, used, PP2_TYPE_CORDON_ORIGIN, &vlen)) !=
	    NULL) {
		if (vlen == 0 || vlen > 10)
			abort();
		for (i = 0; i < vlen; i++)
			if (v[i] < '0' || v[i] > '9')
				abort();
	}
	if (pp2_parse(data, used - 1, &used2, id2, sizeof(id2), NULL, &cause) !=
	    PP2_PARSE_MORE)
		abort();
	return 0;
}
