/*
 * policy.h: the policy, as plain data, and the functions that load, merge,
 * match and print it.  Nothing here touches the network or the kernel, so
 * every function can run in a unit test or a fuzzer on a memory buffer.
 */
#ifndef CORDON_POLICY_H
#define CORDON_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "lib/addr.h"
#include "lib/host.h"

#define POLICY_VERSION		1
#define POLICY_MAX_ITEMS	100000	/* per list, after list files */
#define POLICY_MAX_FILE		(16 * 1024 * 1024)

/* Network modes, strictest first: the workspace layer may only go down. */
enum net_mode {
	NET_NONE,
	NET_PROXY,
	NET_HOST
};

/* Unix sockets inside the sandbox, strictest first. */
enum unix_sockets {
	UNIX_DENY,
	UNIX_ALLOW
};

/* network.capture: unset counts as on (policy_capture()). */
enum capture_mode {
	CAPTURE_OFF,
	CAPTURE_ON
};

/* How a host pattern matches. */
enum pattern_kind {
	PAT_NAME,		/* "example.com": that name only */
	PAT_SUFFIX,		/* "*.example.com": strictly below it */
	PAT_ADDR		/* "10.0.0.1", "[::1]": that address only */
};

#define PORT_UNSET	0	/* allow: 80 and 443; deny: every port */
#define PORT_ANY	(-1)	/* ":*" */

/*
 * One entry of a list: a host pattern, a CIDR, a path or an environment
 * variable, with where it came from.  pi_text is the canonical text that
 * `policy show` prints and that loads back to the same entry.
 */
struct pitem {
	char		*pi_text;
	char		*pi_from;	/* "FILE: network.allow[3]", "--allow-domain" */
	char		*pi_value;	/* env.set: the value */
	enum pattern_kind pi_kind;	/* host patterns */
	char		*pi_host;	/* host patterns: name, suffix or address */
	int		 pi_port;	/* host patterns */
	struct addr	 pi_addr;	/* PAT_ADDR */
	struct cidr	 pi_cidr;	/* allow_cidrs */
	bool		 pi_untrusted;	/* from the workspace layer */
	int		 pi_port_hi;	/* host_ports: the range's last port */
	bool		 pi_dir;	/* a path written with a final '/' */
	bool		 pi_ident;	/* from an identity's layer */
};

struct plist {
	struct pitem	*pl_v;
	size_t		 pl_n;
	bool		 pl_set;	/* the key was written (even empty) */
};

struct pscalar {
	int		 ps_value;
	char		*ps_from;
	bool		 ps_set;
};

/*
 * network.inspect[]: a host whose TLS the proxy opens, and the requests
 * it lets through there (proxy/inspect.c).  in_host.pi_from says where
 * the entry came from.
 */
struct pinspect {
	struct pitem	 in_host;	/* a name or *.suffix, no port */
	struct plist	 in_methods;	/* upper-case tokens */
	struct plist	 in_paths;	/* "/exact" or "/prefix*" */
	bool		 in_any;	/* the runner's, to fill a token file's */
					/* token in: every method and path */
};

/*
 * credentials[]: a variable the runner replaces by a placeholder, and
 * the header the proxy fills from it for one host (confine/trust.c,
 * proxy/inspect.c's inspect_phantom_apply); and how that host is pinned
 * to cordon's credential: the headers and cookies where any other one
 * would be refused, unless cr_foreign (proxy/pin.c).
 */
struct pcred {
	struct pitem	 cr_host;	/* as in_host, with pi_from */
	char		*cr_env;	/* NULL: an entry that only pins */
	char		*cr_header;	/* NULL with cr_env */
	char		*cr_format;	/* exactly one "%s"; NULL with cr_env */
	struct plist	 cr_headers;	/* more headers a credential is in */
	struct plist	 cr_cookies;	/* cookies a credential is in */
	bool		 cr_foreign;	/* "foreign": "allow" */
};

/*
 * identities (policy_ident.c): the layer that joins the operator's
 * policy for a tls: client whose certificate's identity id_match
 * matches, the first that does; id_layer holds only network.allow and
 * network.deny entries, loaded with the policy.
 */
enum ident_action {
	IDENT_ENFORCE,
	IDENT_REPORT		/* refusals it may lift are allowed, warned */
};

struct pident {
	char			*id_match;	/* a glob; NULL: the default */
	char			*id_file;	/* NULL: "deny" */
	char			*id_from;	/* FILE: identities.rules[0] */
	enum ident_action	 id_action;
	unsigned int		 id_max_tunnels;	/* 0: no limit */
	unsigned int		 id_new_per_second;	/* 0: no limit */
	struct policy		*id_layer;	/* NULL: "deny" */
};

/* The whole identities key of one layer, shared by the policies merged. */
struct pidents {
	unsigned int		 is_refs;
	struct pident		*is_v;
	size_t			 is_n;
	struct pident		 is_default;	/* id_match NULL */
};

#define IDENT_MAX_RULES		1024
#define IDENT_LIMIT_MAX		1000000

/*
 * tier: the remote egress tier a run reaches when no --proxy or
 * --proxy-socket is given (cordon run --proxy tls://), one value each,
 * in policy_tier_keys' order; the workspace layer may not name it.
 */
enum policy_tier {
	POLICY_TIER_PROXY,		/* "tls://HOST:PORT" */
	POLICY_TIER_CERT,		/* client_cert, a path */
	POLICY_TIER_KEY,		/* client_key, a path */
	POLICY_TIER_CA,			/* proxy_ca, a path */
	POLICY_TIER_N
};
extern const char *const policy_tier_keys[POLICY_TIER_N];

struct policy {
	struct pscalar	 p_mode;	/* enum net_mode */
	struct pscalar	 p_unix;	/* enum unix_sockets */
	struct pscalar	 p_capture;	/* enum capture_mode */
	struct plist	 p_allow;	/* host patterns */
	struct plist	 p_deny;	/* host patterns */
	struct plist	 p_cidrs;	/* allow_cidrs */
	struct plist	 p_host_ports;	/* host_ports: pi_port..pi_port_hi */
	struct plist	 p_write;	/* absolute paths */
	struct plist	 p_read_only;
	struct plist	 p_hide;	/* filesystem.deny */
	struct plist	 p_sockets;	/* filesystem.unix_sockets: paths */
	struct plist	 p_host_config;	/* what host agents, editors run */
	struct plist	 p_env_pass;	/* names, or prefixes ending in '*' */
	struct plist	 p_env_set;	/* names with pi_value */
	struct pinspect	*p_inspect;	/* network.inspect */
	size_t		 p_ninspect;
	struct pcred	*p_creds;	/* credentials */
	size_t		 p_ncreds;
	struct plist	 p_ca_dir;	/* tls.ca_dir: at most one path */
	struct pidents	*p_idents;	/* identities; NULL: none */
	struct plist	 p_tier[POLICY_TIER_N];	/* tier.*: one each */
};

/*
 * Where relative and "~" paths point, and whether the layer is the
 * untrusted workspace one.
 */
struct policy_ctx {
	const char	*pc_workspace;	/* absolute */
	const char	*pc_home;	/* absolute */
	const char	*pc_dir;	/* the policy file's folder, for lists */
	bool		 pc_untrusted;
	char		*pc_owned[2];	/* policy_merge_ctx_init's */
};

/* policy.c */
extern const char *const policy_mode_names[3];	/* enum net_mode's */
extern const char *const policy_unix_names[2];	/* enum unix_sockets's */
extern const char *const policy_capture_names[2]; /* enum capture_mode's */
struct policy	*policy_new(void);
void		 policy_free(struct policy *);
const char	*policy_mode_name(int);
const char	*policy_unix_name(int);
const char	*policy_capture_name(int);
bool		 policy_capture(const struct policy *);
void		 policy_pitem_clear(struct pitem *);
void		 policy_pitem_copy(struct pitem *, const struct pitem *);
struct pitem	*policy_plist_add(struct plist *);
void		 policy_plist_append(struct plist *, const struct plist *);
void		 policy_plist_free(struct plist *);
void		 policy_pinspect_clear(struct pinspect *);
void		 policy_pinspect_copy(struct pinspect *,
		    const struct pinspect *);
void		 policy_pcred_clear(struct pcred *);
void		 policy_pcred_copy(struct pcred *, const struct pcred *);
struct pidents	*policy_pidents_ref(struct pidents *);
void		 policy_pidents_unref(struct pidents *);

/* policy_parse.c */
int		 policy_parse_pattern(const char *, struct pitem *, char **);
int		 policy_parse_path(const char *, const struct policy_ctx *,
		    struct pitem *, char **);
int		 policy_parse_host_port(const char *, struct pitem *, char **);
int		 policy_parse_socket(const char *, const struct policy_ctx *,
		    struct pitem *, char **);
const char	*policy_parse_socket_risk(const char *);
bool		 policy_parse_http_token(const char *);

/* policy_load.c */
struct policy	*policy_load_buffer(const char *, size_t, const char *,
		    const struct policy_ctx *, char **);
struct policy	*policy_load_file(const char *, const struct policy_ctx *,
		    char **);
struct policy	*policy_load_narrowing(const char *, const char *, char **);

/* policy_list.c */
int		 policy_list_load(const char *, struct plist *,
		    const struct policy_ctx *, char **);
int		 policy_list_buffer(const char *, size_t, const char *,
		    struct plist *, char **);

/*
 * policy_flag.c: the policy flags the commands share, in one table.  A
 * command takes some sets of them, added to its getopt_long table.
 */
enum policy_flag_adds {
	PFLAG_FILE,		/* a policy file: a layer of its own */
	PFLAG_MODE,		/* network.mode */
	PFLAG_ALLOW,		/* network.allow */
	PFLAG_DENY,		/* network.deny */
	PFLAG_CIDR,		/* network.allow_cidrs */
	PFLAG_WRITE,		/* filesystem.write */
	PFLAG_READ_ONLY,	/* filesystem.read_only */
	PFLAG_HIDE,		/* filesystem.deny */
	PFLAG_AGENT		/* an agent profile: a layer of its own */
};

#define POLICY_FLAGS_NET	0x1	/* --policy and the network lists */
#define POLICY_FLAGS_MODE	0x2	/* --network */
#define POLICY_FLAGS_FS		0x4	/* the filesystem lists */
#define POLICY_FLAGS_N		9	/* flags in the table */
#define POLICY_FLAG_VAL		0x1000	/* getopt_long's val: + index */

struct policy_flag {
	const char		*pf_flag;	/* "--allow-domain" */
	int			 pf_has_arg;	/* getopt_long's */
	unsigned int		 pf_set;	/* one of POLICY_FLAGS_* */
	enum policy_flag_adds	 pf_adds;
	bool			 pf_path;	/* its argument is a path */
};

struct option;

/*
 * What a command's flags said, in the order given: policy_flag.c writes
 * it, policy_merge_layers() (policy_merge.c) reads it as the layer of
 * the flags.
 */
struct policy_layers {
	const char	**ly_args;	/* pairs, in order: "--policy" FILE, */
	size_t		  ly_nargs;	/* "--allow-domain" P, ...          */
	const char	 *ly_workspace;	/* NULL: the current folder */
	bool		  ly_real;	/* ly_workspace is resolved already */
	bool		  ly_only;	/* only ly_args: no built-in, system, */
					/* user or workspace layer          */
	bool		  ly_no_workspace; /* no workspace layer (a daemon) */
};

void		 policy_flag_options(struct option *, size_t,
		    const struct option *, unsigned int);
const struct policy_flag *policy_flag_find(int);
const struct policy_flag *policy_flag_named(const char *);
void		 policy_flag_add(struct policy_layers *, const char *,
		    const char *);
bool		 policy_flag_take(struct policy_layers *, int, const char *);

/*
 * policy_agent.c: the agent profiles (--agent NAME), linked in: what the
 * runner takes of one beside its policy.
 */
struct pahint {
	char		 *ph_command;	/* said when the command's name is */
	char		 *ph_text;	/* this, and none of its arguments */
	char		**ph_unless;	/* is one of these (or "THIS=...") */
	size_t		  ph_nunless;
};

struct paenv {
	char		 *pe_name;	/* set inside to the home's path */
	char		 *pe_path;	/* "/.claude", below the home */
};

struct paseed {
	size_t		  ps_state;	/* in pa_state[ps_state], */
	char		 *ps_name;	/* this file, */
	char		 *ps_text;	/* with this text when it is made */
};

struct pagent {
	char		 *pa_name;
	char		 *pa_about;
	char		**pa_state;	/* "~/.claude/": kept per workspace */
	size_t		  pa_nstate;
	struct paenv	 *pa_env;	/* "state_env" */
	size_t		  pa_nenv;
	struct paseed	 *pa_seed;	/* "seed" */
	size_t		  pa_nseed;
	struct pahint	 *pa_hints;
	size_t		  pa_nhints;
};

char		*policy_agent_names(void);
const char	*policy_agent_text(const char *, size_t *);
struct policy	*policy_agent_load(const char *, const struct policy_ctx *,
		    struct pagent *, char **);
void		 policy_agent_clear(struct pagent *);
const char	*policy_agent_of(const struct policy_layers *);

/* policy_merge.c */
int		 policy_merge_flag(struct policy *, const char *, const char *,
		    const struct policy_ctx *, char **);
void		 policy_merge(struct policy *, const struct policy *);
void		 policy_merge_narrow(struct policy *, const struct policy *);
void		 policy_merge_live(struct policy *, const struct policy *,
		    const struct policy *);
struct policy	*policy_merge_defaults(const struct policy_ctx *, char **);
struct policy	*policy_merge_layers(const struct policy_layers *,
		    struct policy **, char **);
struct policy	*policy_merge_layers_narrowing(const struct policy_layers *,
		    const struct policy *, char **);
int		 policy_merge_ctx_init(struct policy_ctx *, const char *,
		    char **);
void		 policy_merge_ctx_clear(struct policy_ctx *);

/* policy_match.c */
enum verdict {
	VERDICT_DENY,
	VERDICT_ALLOW
};

enum decision_why {
	WHY_MODE_NONE,		/* network.mode is none */
	WHY_MODE_HOST,		/* network.mode is host: nothing filtered */
	WHY_BAD_NAME,		/* the name is not a valid host */
	WHY_BAD_PORT,
	WHY_DENY_RULE,		/* a network.deny entry matches */
	WHY_ALLOW_RULE,		/* a network.allow entry matches */
	WHY_NO_RULE,		/* default deny */
	WHY_SPECIAL_ADDR	/* a special range, not in allow_cidrs */
};

struct decision {
	enum verdict		 d_verdict;
	enum decision_why	 d_why;
	const struct pitem	*d_rule;	/* borrowed from the policy */
	const struct pitem	*d_cidr;	/* the allow_cidrs entry used */
	bool			 d_host_port;	/* d_rule: network.host_ports */
	const char		*d_key;		/* "network.allow", ... */
	const char		*d_special;	/* the special range's name */
	const char		*d_mode_from;	/* WHY_MODE_*: where mode was set */
	struct addr		 d_addr;	/* the address judged, if d_addr_set */
	bool			 d_addr_set;
	struct host		 d_host;
	int			 d_port;
	char			*d_cause;	/* WHY_BAD_NAME */
};

bool		 policy_match_host(const struct policy *, const char *, size_t,
		    int, struct decision *);
bool		 policy_match_name(const struct policy *, const char *,
		    size_t, struct decision *);
bool		 policy_match_addr(const struct policy *, const struct addr *,
		    struct decision *);
bool		 policy_match_path(const char *, const char *);
bool		 policy_match_admits_name(const struct pitem *, const char *);
const struct pinspect *policy_match_inspect(const struct policy *,
		    const char *);
bool		 policy_match_intersect(const struct pitem *,
		    const struct pitem *, struct pitem *);

/* decision.c: what a decision says to a person */
char		*decision_describe(const struct decision *);
char		*decision_hint(const struct decision *);
char		*decision_pattern(const struct decision *);
void		 decision_clear(struct decision *);

/* policy_ident.c: identities, their globs, the layer joined */
int		 policy_ident_glob_ok(const char *, char **);
bool		 policy_ident_match(const char *, const char *);
const struct pident *policy_ident_find(const struct policy *,
		    const char *);
struct policy	*policy_ident_join(const struct policy *,
		    const struct pident *, const char *);
bool		 policy_ident_liftable(const struct decision *);
json_t		*policy_ident_show(const struct pidents *, bool);

/* policy_show.c */
json_t		*policy_show_json(const struct policy *, bool);

/* policy_cmd.c */
int		 policy_cmd(int, char **);

#endif
