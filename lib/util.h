/*
 * util.h: small helpers shared by every part of cordon, one header for
 * the few files that define them, each named for what it exports:
 * errlist.c, str.c, path.c and file.c.
 */
#ifndef CORDON_UTIL_H
#define CORDON_UTIL_H

#include <stdbool.h>
#include <stddef.h>

/* cordon --version, and cordon_build_info in the proxy's metrics. */
#ifndef CORDON_VERSION
#define CORDON_VERSION	"0.1.0"
#endif

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * errlist.c: a list of messages collected while checking something, so
 * that every error is reported before giving up (tmux cfg.c does the
 * same).
 */
struct errlist {
	char	*el_buf;	/* messages joined by '\n', or NULL */
	size_t	 el_len;
	size_t	 el_count;
};

void	 errlist_add(struct errlist *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
char	*errlist_steal(struct errlist *);

/*
 * str.c: strings escaped for a log or a shell, RFC 9110 tokens, random
 * hex, lists, a JWT's placeholder.  What str_escape_as does with the backslash and the double
 * quote; a byte outside printable ASCII becomes \xNN in every mode.
 */
enum str_esc {
	STR_ESC_QUOTE,		/* both get a backslash: \\ and \" */
	STR_ESC_HEX_BACKSLASH,	/* '\\' becomes \x5c, '"' stays */
	STR_ESC_KEEP		/* both stay as they are */
};

char	*str_escape(const char *, size_t);
char	*str_shell_quote(const char *);
char	*str_escape_as(const char *, size_t, enum str_esc);
void	 str_append(char **, const char *, const char *);
bool	 str_is_tchar(unsigned char);
bool	 str_is_token(const char *, size_t);
int	 str_random_hex(char *, size_t);
size_t	 str_jwt_signature(const char *);
char	*str_jwt_placeholder(const char *);

/* path.c */
bool	 path_is_below(const char *, const char *);
char	*path_join(const char *, const char *);

/* clock.c */
struct timespec;
long long	 clock_ms_since(const struct timespec *);

/* file.c */
char	*file_read(const char *, size_t, const char *, size_t *, char **);
void	 file_limit_raise(void);

#endif
