/*
 * fuzz_watch_msg.c: what a run sends on its channel to the operator's
 * proxy (proxy/watch_msg.c), on arbitrary bytes.  What it accepts is
 * within its bounds: a pattern or an id NUL-terminated, of the length
 * allowed, the seconds of a question within WATCH_ASK_SECS_MAX.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct watch_msg	 m;
	char			*cause;

	if (watch_msg_parse((const char *)data, size, &m, &cause) == -1) {
		if (cause == NULL)
			abort();	/* a refusal always says why */
		free(cause);
		return 0;
	}
	if (size > WATCH_MSG_MAX)
		abort();
	switch (m.wm_kind) {
	case WM_ASK:
		if (m.wm_secs < 1 || m.wm_secs > WATCH_ASK_SECS_MAX)
			abort();
		break;
	case WM_ALLOW:
	case WM_DENY:
		if (m.wm_n < 0 || strlen(m.wm_text) == 0)
			abort();
		break;
	case WM_ANSWER:
		if (strlen(m.wm_text) == 0 ||
		    strlen(m.wm_text) > WATCH_ASK_ID_MAX ||
		    m.wm_decision > WMD_DENY)
			abort();
		break;
	case WM_END:
		if (size != 3)
			abort();
		break;
	}
	return 0;
}
