/*
 * fuzz_ssh_peek.c: the reader of an SSH server's first key exchange on
 * arbitrary bytes.  Checks what cordon run's agent relies on: FOUND
 * comes with a host key and a signature that were in the input; how the
 * bytes are cut into reads does not change the answer; MORE is never
 * the answer once SSH_PEEK_MAX bytes were fed; an answer given stays.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Feeds data in reads of step bytes (0: all at once) into sp. */
static int
feed(struct ssh_peek *sp, const uint8_t *data, size_t size, size_t step)
{
	uint8_t	*copy;
	size_t	 off, k;
	int	 rc = SSH_PEEK_MORE, was;

	memset(sp, 0, sizeof(*sp));
	for (off = 0; off < size || off == 0; off += k) {
		k = step == 0 || size - off < step ? size - off : step;
		/* A copy, so that ASan sees any read past the read. */
		if ((copy = malloc(k ? k : 1)) == NULL)
			abort();
		memcpy(copy, data + off, k);
		was = rc;
		rc = ssh_peek_feed(sp, copy, k);
		free(copy);
		if (was != SSH_PEEK_MORE && rc != was)
			abort();	/* an answer changed */
		if (k == 0)
			break;
	}
	if (rc == SSH_PEEK_MORE && size >= SSH_PEEK_MAX)
		abort();		/* would watch for ever */
	if (rc == SSH_PEEK_FOUND && (sp->sp_hostkey == NULL ||
	    sp->sp_hostkeylen == 0 || sp->sp_sig == NULL ||
	    sp->sp_siglen == 0 || memmem(data, size, sp->sp_hostkey,
	    sp->sp_hostkeylen) == NULL || memmem(data, size, sp->sp_sig,
	    sp->sp_siglen) == NULL))
		abort();
	if (rc != SSH_PEEK_FOUND && (sp->sp_hostkey != NULL ||
	    sp->sp_sig != NULL))
		abort();
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ssh_peek	 whole, part;
	int		 rc, prc;
	size_t		 step;

	if (size > 2 * SSH_PEEK_MAX)
		return 0;
	rc = feed(&whole, data, size, 0);
	step = size > 0 ? 1 + data[size - 1] % 13 : 1;
	prc = feed(&part, data, size, step);
	if (rc != prc)
		abort();	/* the reads changed the answer */
	if (rc == SSH_PEEK_FOUND && (whole.sp_hostkeylen !=
	    part.sp_hostkeylen || whole.sp_siglen != part.sp_siglen ||
	    memcmp(whole.sp_hostkey, part.sp_hostkey,
	    whole.sp_hostkeylen) != 0 || memcmp(whole.sp_sig, part.sp_sig,
	    whole.sp_siglen) != 0))
		abort();
	ssh_peek_clear(&whole);
	ssh_peek_clear(&part);
	return 0;
}
