/*
 * elog.h: `cordon log`, reading egress logs written by lib/jsonl.c (the
 * format is in docs/egress-log.md).  One block per source file.
 */
#ifndef CORDON_ELOG_H
#define CORDON_ELOG_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * elog.c: one record from one line, and files read line by line,
 * plain or gzip-compressed alike (zlib reads both).
 */
#define ELOG_LINE_MAX		(256 * 1024)	/* longer: malformed */
#define ELOG_TIME_LEN		24		/* 2026-11-22T01:40:18.029Z */

struct elog_record {
	char		 er_time[ELOG_TIME_LEN + 1];
	char		*er_sandbox;	/* NULL: none */
	char		*er_protocol;
	char		*er_method;	/* NULL: none */
	char		*er_host;	/* "" when no head was read */
	int		 er_port;
	bool		 er_allow;
	char		*er_reason;	/* NULL: none */
	int		 er_status;
	uint64_t	 er_up;
	uint64_t	 er_down;
	int64_t		 er_ms;
	char		*er_identity;	/* a tls: client's; NULL: none */
	bool		 er_open;	/* "event": "open": its end may follow */
	char		*er_id;		/* pairs open and end; NULL: none */
};

struct elog_file;

int		 elog_parse(const char *, size_t, struct elog_record *,
		    char **);
void		 elog_record_clear(struct elog_record *);
char		*elog_printable(const char *);
struct elog_file *elog_open(const char *, bool, char **);
int		 elog_fd(const struct elog_file *);
void		 elog_rewind(struct elog_file *);
int		 elog_getline(struct elog_file *, char **, size_t *,
		    char **);
void		 elog_close(struct elog_file *);

/*
 * elog_summary.c: per host counts over any number of logs.
 */
int	 elog_summary(char **, int, bool);
int	 elog_summary_to(FILE *, char **, int, bool);

/*
 * elog_tail.c: records as readable lines, the last few and then more as
 * they come, across rotation.
 */
void	 elog_tail_format(const struct elog_record *, char *, size_t);
int	 elog_tail(const char *, long, bool);

/* log_cmd.c */
int	 log_cmd(int, char **);

#endif
