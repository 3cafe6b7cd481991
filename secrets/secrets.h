/*
 * secrets.h: the tools' token files, a library with no process in it:
 * read, parsed and copied with placeholders for their tokens (secrets.c,
 * a parser per format in tokenfile.c, the agents' JSON logins in
 * tokenjson.c); what a run makes of them is runner/run_secrets.c's.
 */
#ifndef CORDON_SECRETS_H
#define CORDON_SECRETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct policy;

/*
 * secrets.c: the tools' token files, given to the sandbox as copies whose
 * tokens are placeholders the proxy fills in for one host each.
 */
#define SECRETS_FILE_MAX	(1024 * 1024)	/* bytes of one token file */

struct secret {
	char		*se_host;	/* a name, lower case, no port */
	char		*se_user;	/* Basic: the user; NULL: se_format */
	const char	*se_format;	/* the header's value, one "%s" */
	char		*se_value;	/* the real token; wiped when freed */
	char		*se_placeholder;
	const char	*se_path;	/* a login's token endpoint: the */
					/* token goes in its body; NULL: none */
	const char	*se_member;	/* OAuth's name of a login's token */
	bool		 se_jwt;	/* se_placeholder is a JWT too */
};

struct secrets_out;
struct secret_format {
	const char	*sk_name;	/* below the home: ".npmrc" */
	const char	*sk_tool;	/* who reads it: "npm" */
	void		(*sk_parse)(struct secrets_out *, const char *,
			    size_t);
	/*
	 * A login file's text with a refresh's new tokens in (OAuth's
	 * names and values, n of them) and its expiry expires_in seconds
	 * from now (-1: not said); NULL with *cause.  NULL: never renewed.
	 */
	char		*(*sk_renew)(const char *, size_t, const char *const *,
			    const char *const *, size_t, long long, char **);
};

struct secret_file {
	const struct secret_format *tf_kind;
	char		*tf_path;	/* the host's file, resolved */
	char		*tf_text;	/* the copy the sandbox reads */
	size_t		 tf_len;
	struct secret	*tf_secrets;	/* the tokens taken out of it */
	size_t		 tf_nsecrets;
	char		**tf_left;	/* what the copy leaves out, said */
	size_t		 tf_nleft;
	bool		 tf_bound;	/* the plan hides tf_path: PID 1 binds */
					/* the copy there */
	unsigned	 tf_renewed;	/* refreshes written back to tf_path */
	const char	*tf_kept;	/* the kept folder its copy is put in, */
					/* not bound (keepdir.c), or NULL */
	int		 tf_keptfd;	/* that folder, locked while put; -1 */
};

typedef char	*(*placeholder_fn)(void);

/* What is being built: the copy, and the tokens taken out of it. */
struct secrets_out {
	FILE			*sx_f;		/* open_memstream of tf_text */
	struct secret_file	*sx_sf;
	placeholder_fn		 sx_new;
};

extern const struct secret_format	secrets_formats[];
extern const size_t		secrets_nformats;

void	secrets_wipe(char *);
void	secrets_left(struct secret_file *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
const char	*secrets_take(struct secrets_out *, const char *,
	    const char *, const char *, const char *, size_t);
void	secrets_parse(const struct secret_format *, const char *, size_t,
	    placeholder_fn, struct secret_file *);
void	secrets_read(const char *, const struct policy *, placeholder_fn,
	    struct secret_file **, size_t *);
void	secrets_clear(struct secret_file *);
const char	*secrets_take_login(struct secrets_out *, const char *,
	    const char *, const char *, const char *, const char *, size_t);
int	secrets_renew(const struct secret_file *, const char *const *,
	    const char *const *, size_t, long long, char **);

/*
 * tokenfile.c: one parser per token file format, each a secret_format's
 * sk_parse: text in, the copy and its tokens out (secrets_parse()).
 */
void	tokenfile_npmrc(struct secrets_out *, const char *, size_t);
void	tokenfile_netrc(struct secrets_out *, const char *, size_t);
void	tokenfile_gitcred(struct secrets_out *, const char *, size_t);
void	tokenfile_pypirc(struct secrets_out *, const char *, size_t);
void	tokenfile_cargo(struct secrets_out *, const char *, size_t);

/*
 * tokenjson.c: the agents' JSON login files, parsed alike, and written
 * anew with a refresh's new tokens (sk_renew).
 */
void	tokenjson_claude(struct secrets_out *, const char *, size_t);
char	*tokenjson_claude_renew(const char *, size_t, const char *const *,
	    const char *const *, size_t, long long, char **);
void	tokenjson_codex(struct secrets_out *, const char *, size_t);
char	*tokenjson_codex_renew(const char *, size_t, const char *const *,
	    const char *const *, size_t, long long, char **);

#endif
