/*
 * profile.h: `cordon profile`, a merged policy written as another
 * system's sandbox: a macOS Seatbelt profile (seatbelt.c) or a Windows
 * Defender Firewall script (winfw.c).  Pure text generation: nothing
 * here reads the disk, so the unit tests compare the output byte for
 * byte with the files in tests/profiles.
 */
#ifndef CORDON_PROFILE_H
#define CORDON_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

struct policy;

/*
 * seatbelt.c: SBPL, as sandbox-exec(1) reads it.  The profile takes two
 * parameters (sandbox-exec -D NAME=VALUE): the run's private temporary
 * folder and the terminal the command may use, both canonical paths.
 */
#define SB_PARAM_TMPDIR		"CORDON_TMPDIR"
#define SB_PARAM_TTY		"CORDON_TTY"
#define SB_MAX_PATH		1024	/* macOS's MAXPATHLEN */

struct sb_opts {
	int		 so_port;	/* the proxy on localhost; 0: unknown */
	const char	*so_home;	/* absolute; NULL: no macOS stores */
	/* Real path of an existing path (malloc'd), or NULL: keep it. */
	char		*(*so_resolve)(const char *);
};

char	*seatbelt_profile(const struct policy *, const struct sb_opts *,
	    char **);
char	*seatbelt_path(const char *, char **);
char	*seatbelt_string(const char *);
int	 seatbelt_check(const char *, int, int, char **);

/*
 * winfw.c: a PowerShell script of New-NetFirewallRule calls, and the
 * script that removes them.  Rules name each program by its full path,
 * or a local user by name (the script looks the SID up).
 */
#define WINFW_GROUP		"cordon"
#define WINFW_MAX_TARGETS	64

struct winfw_opts {
	int		 wo_port;	/* the proxy on loopback; 0: unknown */
	const char	**wo_programs;	/* Windows paths */
	size_t		 wo_nprograms;
	const char	*wo_user;	/* a local account, or NULL */
};

char	*winfw_install(const struct policy *, const struct winfw_opts *,
	    char **);
char	*winfw_remove(void);
char	*winfw_quote(const char *, char **);

/* profile_cmd.c */
int	 profile_cmd(int, char **);

#endif
