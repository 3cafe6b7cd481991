/*
 * log.c: messages for people on standard error (see log.h for levels).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"

static int	 log_level;

void
log_init(int verbose)
{
	log_level = verbose;
}

/* Takes the leading -v and -vv as the level; returns the next index. */
int
log_init_args(int argc, char **argv)
{
	int	 verbose = 0, i = 1;

	for (; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0)
			verbose++;
		else if (strcmp(argv[i], "-vv") == 0)
			verbose += 2;
		else
			break;
	}
	log_init(verbose);
	return i;
}

/* Prints one line; errnum 0 means no strerror suffix. */
static void
log_vline(int errnum, const char *fmt, va_list ap)
{
	char	 msg[2048];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (errnum != 0)
		fprintf(stderr, "cordon: %s: %s\n", msg, strerror(errnum));
	else
		fprintf(stderr, "cordon: %s\n", msg);
}

void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	log_vline(saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vline(0, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	if (log_level < 1)
		return;
	va_start(ap, fmt);
	log_vline(0, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	 ap;

	if (log_level < 2)
		return;
	va_start(ap, fmt);
	log_vline(0, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	log_vline(saved, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vline(0, fmt, ap);
	va_end(ap);
	exit(1);
}

/* Prints each line of text (joined by '\n') as a warning, and frees it. */
void
log_warnx_lines(char *text)
{
	char	*line, *nl;

	for (line = text; line != NULL && *line != '\0'; line = nl) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl++ = '\0';
		log_warnx("%s", line);
	}
	free(text);
}
