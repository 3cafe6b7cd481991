/*
 * sandbox_fail.c: how the sandbox's setup ends when a step fails, for
 * every file of the inside (sandbox.c, mount.c): the reason to cordon
 * run, which prints it, and the exit.  A file of its own, so that those
 * files need not call each other back.
 *
 * Runs in: the sandbox's PID 1 and the command before exec.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

/*
 * Ends the run from inside: the reason goes to the parent, which prints
 * it, and this process exits with code.
 */
void
sandbox_fail(int errfd, int code, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg, *line;
	int	 n;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		msg = NULL;
	va_end(ap);
	n = asprintf(&line, "cordon: run: %s\n", msg != NULL ? msg :
	    "out of memory");
	/* Nobody else to tell if this fails. */
	if (n > 0 && write(errfd != -1 ? errfd : 2, line,
	    (size_t)n) != n)
		_exit(code);
	_exit(code);
}
