/*
 * run_secrets.c: what a run makes of the tools' token files (secrets.c
 * reads and copies them): before the plan, the files and the hosts to
 * inspect for them; the phantom credentials the proxy fills in; the
 * files for the summary and the report.  Outside, before the clone;
 * nothing here needs privileges.
 *
 * Runs in: cordon run on the host, before the clone and at the end.
 */

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "certs/certs.h"
#include "confine/trust.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"
#include "runner/runner.h"
#include "secrets/secrets.h"

/* An inspect entry for host, from file name, unless p inspects it. */
static void
run_secrets_inspect(struct policy *p, const char *host, const char *name)
{
	struct pinspect	 in = { 0 };
	char		*cause;

	if (policy_match_inspect(p, host) != NULL)
		return;
	if (policy_parse_pattern(host, &in.in_host, &cause) == -1) {
		log_info("run: %s: %s", name, cause);
		free(cause);
		return;
	}
	xasprintf(&in.in_host.pi_from, "%s (a token for it)", name);
	in.in_any = true;
	p->p_inspect = xreallocarray(p->p_inspect, p->p_ninspect + 1,
	    sizeof(in));
	p->p_inspect[p->p_ninspect++] = in;
}

/*
 * Before the plan: the token files of the caller's home (secrets_read)
 * into the view's sv_secrets.  With fill (the run's own proxy) and
 * cordon's CA there to inspect TLS with, the proxy is to fill their
 * tokens in: each token's host is inspected (an entry added to p unless p has one), and
 * the CA is hidden as for any inspection (trust_hide_ca, after this).
 */
void
run_secrets_prepare(struct run *run, struct policy *p, bool fill)
{
	const char	*home = getenv("HOME");
	char		*dir, *ca, *cause, name[PATH_MAX];
	size_t		 i, j;

	if (home == NULL || home[0] != '/')
		return;
	secrets_read(home, p, trust_placeholder, &run->r_sb.sb_view.sv_secrets,
	    &run->r_sb.sb_view.sv_nsecrets);
	if (run->r_sb.sb_view.sv_nsecrets == 0)
		return;
	if ((dir = ca_dir_policy(p, &cause)) == NULL) {
		free(cause);
		return;
	}
	xasprintf(&ca, "%s/%s", dir, CA_CERT_FILE);
	run->r_secrets_filled = fill && access(ca, R_OK) == 0;
	free(ca);
	free(dir);
	for (i = 0; run->r_secrets_filled &&
	    i < run->r_sb.sb_view.sv_nsecrets; i++) {
		snprintf(name, sizeof(name), "~/%s",
		    run->r_sb.sb_view.sv_secrets[i].tf_kind->sk_name);
		for (j = 0; j < run->r_sb.sb_view.sv_secrets[i].tf_nsecrets; j++)
			run_secrets_inspect(p,
			    run->r_sb.sb_view.sv_secrets[i].tf_secrets[j].se_host, name);
	}
}

/*
 * The phantom credentials of the tokens run_secrets_prepare() found,
 * added to run->r_phantoms, when the proxy fills them in.
 */
void
run_secrets_phantoms(struct run *run)
{
	const struct secret_file *tf;
	const struct secret	*se;
	struct phantom		*ph;
	char			*cause;
	size_t			 i, j;

	for (i = 0; run->r_secrets_filled &&
	    i < run->r_sb.sb_view.sv_nsecrets; i++) {
		tf = &run->r_sb.sb_view.sv_secrets[i];
		for (j = 0; j < tf->tf_nsecrets; j++) {
			se = &tf->tf_secrets[j];
			run->r_phantoms = xreallocarray(run->r_phantoms,
			    run->r_nphantoms + 1, sizeof(*run->r_phantoms));
			ph = &run->r_phantoms[run->r_nphantoms];
			memset(ph, 0, sizeof(*ph));
			if (policy_parse_pattern(se->se_host, &ph->ph_host,
			    &cause) == -1) {
				free(cause);
				continue;
			}
			run->r_nphantoms++;
			xasprintf(&ph->ph_file, "~/%s", tf->tf_kind->sk_name);
			if (se->se_path == NULL)
				ph->ph_header = xstrdup("Authorization");
			else
				ph->ph_path = xstrdup(se->se_path);
			if (se->se_member != NULL)
				ph->ph_member = xstrdup(se->se_member);
			if (se->se_user != NULL)
				ph->ph_user = xstrdup(se->se_user);
			else
				ph->ph_format = xstrdup(se->se_format);
			ph->ph_placeholder = xstrdup(se->se_placeholder);
			ph->ph_value = xstrdup(se->se_value);
			ph->ph_jwt = se->se_jwt;
		}
	}
}

/*
 * A login was refreshed inside (proxy/renew.c): the new real tokens of
 * file ("~/.claude/.credentials.json"), among the n phantoms at ph,
 * written to the host's file, lasting expires_in seconds; said the first
 * time, or each time what failed and what to do.
 */
void
run_secrets_renewed(struct run *run, const char *file,
    const struct phantom *ph, size_t n, long long expires_in)
{
	struct secret_file	*tf = NULL;
	const char		**names, **values;
	char			 name[PATH_MAX], *cause;
	size_t			 i, k = 0;

	for (i = 0; tf == NULL && i < run->r_sb.sb_view.sv_nsecrets;
	    i++) {
		tf = &run->r_sb.sb_view.sv_secrets[i];
		snprintf(name, sizeof(name), "~/%s", tf->tf_kind->sk_name);
		if (strcmp(name, file) != 0)
			tf = NULL;
	}
	if (tf == NULL)
		return;
	names = xcalloc(n, sizeof(*names));
	values = xcalloc(n, sizeof(*values));
	for (i = 0; i < n; i++)
		if (ph[i].ph_member != NULL && ph[i].ph_file != NULL &&
		    strcmp(ph[i].ph_file, file) == 0) {
			names[k] = ph[i].ph_member;
			values[k++] = ph[i].ph_value;
		}
	if (secrets_renew(tf, names, values, k, expires_in, &cause) == 0) {
		if (tf->tf_renewed++ == 0)
			log_warnx("run: %s: the login was refreshed inside; "
			    "its new tokens are written to %s (the sandbox "
			    "holds placeholders)", file, tf->tf_path);
	} else {
		log_warnx("run: %s: the login was refreshed inside, but its "
		    "new tokens could not be written back: %s", file, cause);
		log_warnx("hint: the file on the host holds the old refresh "
		    "token, which the refresh made stale: let your user write "
		    "%s and its folder, then run the agent on the host and log "
		    "in again", tf->tf_path);
		free(cause);
	}
	free(names);
	free(values);
}

/*
 * The token files copied into the sandbox, for the summary and the
 * report (tally_tokens): [{"file", "tool", "hosts", "filled", "left"}]
 * for each that held a token or lost a line; NULL when none did.
 */
json_t *
run_secrets_json(const struct run *run)
{
	const struct secret_file *tf;
	json_t			*a = NULL, *hosts, *left, *h;
	char			 name[PATH_MAX];
	size_t			 i, j, k;

	for (i = 0; i < run->r_sb.sb_view.sv_nsecrets; i++) {
		tf = &run->r_sb.sb_view.sv_secrets[i];
		if (!tf->tf_bound || (tf->tf_nsecrets == 0 &&
		    tf->tf_nleft == 0))
			continue;
		hosts = json_array();
		for (j = 0; j < tf->tf_nsecrets; j++) {
			json_array_foreach(hosts, k, h)
				if (strcmp(json_string_value(h),
				    tf->tf_secrets[j].se_host) == 0)
					break;
			if (k == json_array_size(hosts))
				json_array_append_new(hosts, json_string(
				    tf->tf_secrets[j].se_host));
		}
		left = json_array();
		for (j = 0; j < tf->tf_nleft; j++)
			json_array_append_new(left, json_string(tf->tf_left[j]));
		snprintf(name, sizeof(name), "~/%s", tf->tf_kind->sk_name);
		if (a == NULL)
			a = json_array();
		json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:b, s:o}",
		    "file", name, "tool", tf->tf_kind->sk_tool, "hosts", hosts,
		    "filled", run->r_secrets_filled && tf->tf_nsecrets > 0,
		    "left", left));
	}
	return a;
}
