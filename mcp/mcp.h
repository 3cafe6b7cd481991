/*
 * mcp.h: `cordon mcp`, an MCP server on stdin and stdout (JSON-RPC 2.0,
 * one message a line) whose tool `run` runs a command in one session of
 * the workspace it was started in.  mcp_cmd.c parses the options;
 * mcpmsg.c frames and sorts the messages (no I/O: fuzzed); mcp.c is the
 * server, its loop and the protocol; mcp_call.c runs one tool call as a
 * session command and makes its result; mcp_ask.c the session's control
 * channel, whose questions (--ask) go to the user through the client.
 */
#ifndef CORDON_MCP_H
#define CORDON_MCP_H

#include <sys/types.h>

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#define MCP_LINE_MAX	(4 * 1024 * 1024)	/* a message, at most */
#define MCP_OUT_MAX	(32 * 1024)	/* each stream's bytes kept */
#define MCP_STATE_MAX	(512 * 1024)	/* the folder and environment */
#define MCP_VAR_MAX	(128 * 1024)	/* a variable carried (an argument's) */
#define MCP_REPORT_MAX	(64 * 1024 * 1024)	/* a call's report, read */
#define MCP_TIMEOUT_DEF	120		/* seconds, when none is given */
#define MCP_TIMEOUT_MAX	86400
#define MCP_KILL_MS	2000		/* SIGTERM, then SIGKILL */
#define MCP_DRAIN_MS	200		/* output after the command's end */

/* JSON-RPC 2.0's error codes. */
#define MCP_PARSE_ERROR		-32700
#define MCP_INVALID_REQUEST	-32600
#define MCP_NO_METHOD		-32601
#define MCP_INVALID_PARAMS	-32602
#define MCP_INTERNAL_ERROR	-32603

/* mcpmsg.c: lines of JSON, read from a byte stream. */
struct mcpbuf {
	char		*mb_buf;
	size_t		 mb_len;
	size_t		 mb_cap;
	bool		 mb_skip;	/* in a line past MCP_LINE_MAX */
};

enum mcpmsg_kind {
	MCPMSG_REQUEST,		/* method and id */
	MCPMSG_NOTIFY,		/* method, no id */
	MCPMSG_RESPONSE,	/* id, and result or error */
	MCPMSG_INVALID
};

void	mcpmsg_feed(struct mcpbuf *, const char *, size_t);
int	mcpmsg_next(struct mcpbuf *, json_t **, const char **);
void	mcpmsg_clear(struct mcpbuf *);
enum mcpmsg_kind
	mcpmsg_kind(const json_t *, const char **);
json_t	*mcpmsg_text(const char *, size_t);
size_t	mcpmsg_exports(char *, size_t, size_t);

/* mcp_call.c: a tool call, run as a command of the session. */
struct mcp;
struct mcp_call;

struct mcp_call	*mcp_call_start(struct mcp *, json_t *, json_t *, char **);
int	 mcp_call_fds(struct mcp_call *, int *, int);
void	 mcp_call_ready(struct mcp_call *, const int *, const short *, int);
long	 mcp_call_wait_ms(const struct mcp_call *);
void	 mcp_call_tick(struct mcp_call *);
void	 mcp_call_cancel(struct mcp_call *);
bool	 mcp_call_done(const struct mcp_call *);
const json_t *mcp_call_id(const struct mcp_call *);
json_t	*mcp_call_result(struct mcp_call *, json_t **);
void	 mcp_call_free(struct mcp_call *);
json_t	*mcp_call_tool(void);

/* mcp_ask.c: the session's control channel, for --ask. */
int	 mcp_ask_open(struct mcp *, char **);
int	 mcp_ask_fd(const struct mcp *);
void	 mcp_ask_read(struct mcp *);
void	 mcp_ask_answered(struct mcp *, const json_t *, const json_t *);
void	 mcp_ask_close(struct mcp *);

/* mcp.c: the server. */
struct mcp_opts {
	int		 mo_argc;	/* session start's and run's */
	char		**mo_argv;
	bool		 mo_ask;	/* --ask, with our own --control */
};

struct mcp {
	struct mcp_opts	*m_opts;
	char		 m_ws[PATH_MAX];	/* where it was started */
	char		 m_sid[32];		/* the session, or "" */
	pid_t		 m_keeper;
	bool		 m_elicit;	/* the client can be asked */
	char		*m_cwd;		/* the command's folder, carried */
	char		*m_exports;	/* its shell's export -p, or NULL */
	json_int_t	 m_seq;		/* ids of our requests */
	/* mcp_ask.c's */
	char		 m_ctl_dir[PATH_MAX];
	int		 m_ctl_lfd;
	int		 m_ctl_fd;
	struct mcpbuf	 m_ctl_in;
	json_t		*m_asks;	/* our request id: the ask's id */
};

int	 mcp_session(struct mcp *, char **);
void	 mcp_send(json_t *);
void	 mcp_exports_set(struct mcp *, char *);

/* mcp_cmd.c: `cordon mcp`. */
int	 mcp_cmd(int, char **);
int	 mcp_main(struct mcp_opts *);

#endif
