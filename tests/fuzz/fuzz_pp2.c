/*
 * fuzz_pp2.c: the PROXY v2 header parser on arbitrary bytes.  What it
 * accepts is within the bytes given, and every prefix of an accepted
 * header asks for more.
 */
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 id[PP2_ID_MAX + 1], id2[PP2_ID_MAX + 1], *cause;
	size_t	 used, used2;
	int	 rc;

	rc = pp2_parse(data, size, &used, id, sizeof(id), NULL, &cause);
	if (rc != PP2_PARSE_OK) {
		free(cause);
		return 0;
	}
	if (used > size || used < 16 || strlen(id) == 0 ||
	    strlen(id) > PP2_ID_MAX)
		abort();
	if (pp2_parse(data, used - 1, &used2, id2, sizeof(id2), NULL, &cause) !=
	    PP2_PARSE_MORE)
		abort();
	return 0;
}
