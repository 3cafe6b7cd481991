/*
 * sess.h: sessions, one sandbox for many commands.  What is here needs
 * libc alone, so that the small client (cordon-session-exec) shares it
 * with cordon: sessmsg.c the messages between the client, the keeper
 * (cordon's process outside the sandbox) and the sandbox's PID 1;
 * sessdir.c the user's folder of sessions; sessclient.c the client.
 */
#ifndef CORDON_SESS_H
#define CORDON_SESS_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SESS_ID_LEN	16		/* hex digits */
#define SESS_ENDED_KEEP_SECS (7 * 24 * 3600) /* an ended one's files */
#define SESS_NAME_MAX	64
#define SESS_FDS_MAX	5		/* the request, 0, 1, 2, --report */
#define SESS_TEXT_MAX	4096		/* a message's text, at most */
#define SESS_BLOB_MAX	(8 * 1024 * 1024)	/* argv, env, cwd */
#define SESS_EXIT_FAILURE 125

/* sessmsg.c: one message, a header, some text and descriptors. */
enum sess_type {
	SESS_RUN = 1,		/* client: run; fds: blob, 0, 1, 2[, report] */
	SESS_SIGNAL,		/* client: pass sm_arg on to the command */
	SESS_STOP,		/* client: end the session; fd: its stderr */
	SESS_EXIT,		/* keeper: the command ended, sm_arg status */
	SESS_ERROR,		/* keeper: refused or failed; text says why */
	SESS_READY,		/* PID 1: the sandbox is made */
	SESS_STARTED,		/* PID 1: request sm_id forked, pid sm_arg */
	SESS_ENDED,		/* PID 1: request sm_id ended, status sm_arg */
	SESS_QUIT,		/* keeper: PID 1 tells its end, and exits */
	SESS_WAIT		/* PID 1: request sm_id ended, its check */
				/* waits for threads in the kernel (text) */
};

#define SESS_F_TTY	0x1	/* the client's stdin is a terminal */
#define SESS_F_ALONE	0x2	/* SESS_ENDED: PID 1 had no other process */

struct sessmsg {
	uint32_t	 sm_magic;	/* SESS_MAGIC */
	uint32_t	 sm_type;	/* enum sess_type */
	uint32_t	 sm_id;		/* the request, keeper to PID 1 */
	int32_t		 sm_arg;
	uint32_t	 sm_argc;	/* SESS_RUN: the blob's */
	uint32_t	 sm_envc;
	uint32_t	 sm_flags;	/* SESS_F_* */
};

#define SESS_MAGIC	0x63736e31	/* "csn1" */

/* A request decoded: pointers into sb_buf. */
struct sessblob {
	char		*sb_buf;
	size_t		 sb_len;
	const char	*sb_cwd;
	char		**sb_argv;	/* NULL-terminated */
	char		**sb_env;	/* NULL-terminated */
};

ssize_t	sessmsg_send(int, const struct sessmsg *, const char *,
	    const int *, int);
int	sessmsg_tell(int, uint32_t, uint32_t, int, uint32_t);
ssize_t	sessmsg_recv(int, struct sessmsg *, char *, size_t, int *, int *);
int	sessmsg_blob(const char *, char *const *, char *const *,
	    uint32_t *, uint32_t *);
int	sessmsg_blob_read(int, uint32_t, uint32_t, struct sessblob *);
void	sessmsg_blob_clear(struct sessblob *);
void	sessmsg_close(int *, int);

/* sessdir.c: $XDG_RUNTIME_DIR/cordon/sessions, or ~/.cache/cordon/... */
void	sessdir_top(char *);
int	sessdir_path(char *, size_t, bool, char *, size_t);
int	sessdir_tops(char [][256]);
int	sessdir_in(const char *, char *, size_t, bool, char *, size_t);
int	sessdir_file(char *, size_t, const char *, const char *,
	    const char *);
ssize_t	sessdir_name_id(const char *, const char *, char *);
ssize_t	sessdir_reason(const char *, const char *, char *, size_t);
enum keeper_state { KEEPER_NONE, KEEPER_LIVES, KEEPER_DIED };
enum keeper_state
	sessdir_keeper(const char *, const char *);
size_t	sessdir_prune(const char *, time_t);
int	sessdir_name_claim(const char *, const char *, const char *, char *);
bool	sessdir_name_drop(const char *, const char *, const char *);
bool	sessdir_name_ok(const char *);
bool	sessdir_id_ok(const char *);

/* sessclient.c: `cordon run --session ID -- CMD`, the client. */
int	sessclient_main(int, char **, const char *);
bool	sessclient_named(int, char **);
int	sessclient_connect(const char *, char *, size_t, char *, size_t);
int	sessclient_request(int, const char *, char *const *, char *const *,
	    const int *, int, uint32_t);

/* session_cmd.c: `cordon session`. */
int	session_cmd(int, char **);

#endif
