/*
 * pp2.h: the PROXY protocol v2 header that a sandbox's bridge puts
 * before each of its connections to a proxy, written by the bridge and
 * read on the proxy's listeners that expect it (--listen-sandbox, the
 * socket of `cordon run`) and nowhere else.
 */
#ifndef CORDON_PP2_H
#define CORDON_PP2_H

#include <stddef.h>
#include <stdint.h>

#define PP2_ID_MAX		128
#define PP2_NARROW_MAX		(16 * 1024)	/* the run's own rules */
#define PP2_COMMAND_MAX		64
#define PP2_TARGET_MAX		(255 + 8)	/* "[host]:port" */
#define PP2_NAME_MAX		253
#define PP2_WATCH_MAX		16
#define PP2_ORIGIN_MAX		16	/* a uid, in decimal */
#define PP2_HEADER_MAX		(16 + 3 + PP2_ID_MAX + 3 + PP2_NARROW_MAX + \
				    3 + PP2_COMMAND_MAX + 3 + PP2_TARGET_MAX + \
				    3 + PP2_NAME_MAX + 3 + PP2_WATCH_MAX + \
				    3 + PP2_ORIGIN_MAX + 3 + PP2_WATCH_MAX)

#define PP2_TYPE_UNIQUE_ID	0x05
/* Fields of cordon's own, from PP2_TYPE_MIN_CUSTOM (0xe0) up. */
#define PP2_TYPE_CORDON_NARROW	0xe0	/* the run's rules, JSON */
#define PP2_TYPE_CORDON_COMMAND	0xe1	/* the command's name, a label */
#define PP2_TYPE_CORDON_TARGET	0xe2	/* a captured connection's host:port */
#define PP2_TYPE_CORDON_NAME	0xe3	/* a name the sandbox's resolver asks */
#define PP2_TYPE_CORDON_WATCH	0xe4	/* a run's own channel (watch.c) */
/*
 * The local user a node-local originator (cordon bridge --connect tls:)
 * took the connection from, by SO_PEERCRED, in decimal: its word, read
 * only on tls: listeners, scoped under its certificate's identity.
 */
#define PP2_TYPE_CORDON_ORIGIN	0xe5
/*
 * The run keeps a channel (PP2_WATCH_VERSION): it has a harness whose
 * live rules and questions the proxy holds on it (--control, --ask), so
 * a connection of that run is refused while its channel is not open on
 * this proxy (restarted, or another replica's), never decided without
 * them (proxy/watch.c watch_missing).
 */
#define PP2_TYPE_CORDON_CHANNEL	0xe6

/*
 * A sandbox listener's first answer on a connection whose header asks
 * for the run's channel (PP2_TYPE_CORDON_WATCH "1"): `cordon run
 * --proxy-socket` waits for it before the command runs, so that a
 * listener that cannot serve it is found before, not per connection.
 */
#define PP2_WATCH_VERSION	"1"
#define PP2_WATCH_HELLO		"cordon-proxy watch 1\n"

enum pp2_parse {
	PP2_PARSE_OK,
	PP2_PARSE_MORE,
	PP2_PARSE_ERROR
};

/* What a header carries; NULL leaves a field out (id is required). */
struct pp2_out {
	const char	*po_id;
	const char	*po_narrow;
	const char	*po_command;
	const char	*po_target;
	const char	*po_name;
	const char	*po_watch;	/* PP2_WATCH_VERSION: the channel */
	const char	*po_channel;	/* PP2_WATCH_VERSION: the run has one */
};

int		 pp2_parse(const uint8_t *, size_t, size_t *, char *, size_t,
		    char **, char **);
const uint8_t	*pp2_field(const uint8_t *, size_t, int, size_t *);
void		 pp2_command(const uint8_t *, size_t, char *, size_t);
int		 pp2_text(const uint8_t *, size_t, int, char *, size_t);
char		*pp2_header(const struct pp2_out *, size_t *, char **);

#endif
