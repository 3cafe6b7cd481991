/*
 * jsonl.h: the egress log, one JSON object per line, per decision.  This
 * file owns the format: its field names are documented in
 * docs/egress-log.md and nothing else writes the log.
 */
#ifndef CORDON_JSONL_H
#define CORDON_JSONL_H

#include <sys/types.h>
#include <sys/time.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jsonl;

struct egress {
	struct timeval	 e_start;
	const char	*e_sandbox;	/* NULL: not known */
	bool		 e_has_uid;	/* e_uid is the kernel's word */
	uid_t		 e_uid;		/* who connected, on a Unix socket */
	const char	*e_command;	/* the sandboxed command's name, or NULL */
	const char	*e_client;	/* "127.0.0.1:40000", "unix" */
	const char	*e_proto;	/* "http", "https", "connect", "socks5" */
	const char	*e_method;	/* HTTP method, or NULL */
	const char	*e_host;	/* as the client sent it */
	size_t		 e_hostlen;
	int		 e_port;
	const char	*e_path;	/* HTTP request target's path, or NULL */
	const char	*e_addr;	/* the address connected to, or NULL */
	bool		 e_allow;
	const char	*e_rule;	/* the deciding entry, or NULL */
	const char	*e_rule_from;	/* where it came from */
	const char	*e_reason;	/* why, in words */
	const char	*e_warning;	/* something to look at, or NULL */
	int		 e_status;	/* HTTP status or SOCKS5 reply */
	uint64_t	 e_up;		/* bytes client to upstream */
	uint64_t	 e_down;	/* bytes upstream to client */
	const char	*e_identity;	/* a tls: client's certificate's, or
					   NULL */
	bool		 e_report;	/* allowed by an identity's "report" */
	const char	*e_limit;	/* refused by this identity limit */
	const char	*e_origin_uid;	/* the originator's word, or NULL */
	const char	*e_credential;	/* HTTP: "phantom", "none" or
					   "foreign"; NULL: no request read */
	bool		 e_open;	/* the open line, before the first
					   byte upstream; else the end */
	const char	*e_id;		/* pairs open and end, or NULL */
};

struct jsonl	*jsonl_open(const char *, char **);
struct jsonl	*jsonl_fdopen(int);
int		 jsonl_reopen(struct jsonl *, char **);
bool		 jsonl_write(struct jsonl *, const struct egress *);
bool		 jsonl_write_open(struct jsonl *, const struct egress *);
bool		 jsonl_failed(const struct jsonl *);
bool		 jsonl_retry(struct jsonl *);
const char	*jsonl_error(const struct jsonl *);
size_t		 jsonl_held(const struct jsonl *);
uint64_t	 jsonl_lost(const struct jsonl *);
void		 jsonl_close(struct jsonl *);
void		 jsonl_unmake(struct jsonl *);

#endif
