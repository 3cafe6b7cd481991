/*
 * log.h: messages for people, on standard error.
 *
 * Levels:
 *   fatal/fatalx  set-up cannot go on; prints and exits with status 1.
 *                 fatal appends strerror(errno), fatalx not.
 *   log_warn[x]   something failed or was refused and the user should know;
 *                 log_warn appends strerror(errno).
 *   log_info      what the user asked to see with -v.
 *   log_debug     for developers, with -vv; callers lead with __func__.
 *
 * Every line starts with "cordon: ".  Text that came from outside (names,
 * headers, paths) must go through str_escape() first.  The egress log is a
 * different thing and lives in lib/jsonl.c.
 */
#ifndef CORDON_LOG_H
#define CORDON_LOG_H

#include <stdarg.h>

void	log_init(int verbose);
int	log_init_args(int, char **);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx_lines(char *);
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
