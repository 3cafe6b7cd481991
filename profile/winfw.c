/*
 * winfw.c: the network half of a merged policy as Windows Defender
 * Firewall rules, written as a PowerShell script (New-NetFirewallRule),
 * and the script that removes them.
 *
 * The firewall lets a block rule win over any allow rule, so "block all
 * but the proxy" cannot be an allow inside a block.  It is written as
 * block rules whose addresses and ports leave the proxy out:
 *
 *   - outbound, any protocol, to every address but 127.0.0.0/8 and ::1;
 *   - outbound TCP to 127.0.0.0/8 and ::1 on every port but the proxy's;
 *   - outbound UDP to 127.0.0.0/8 and ::1 (a local DNS forwarder);
 *   - inbound from every address but loopback.
 *
 * In mode none one rule blocks all outbound and one all inbound; in mode
 * host there is nothing to block, and the script only removes earlier
 * rules.  Each rule applies to one program (by full path) or one local
 * user (by SID, looked up when the script runs).  Every rule is in the
 * group WINFW_GROUP: the install script removes that group first, so it
 * can be run again, and the removal script removes just that group.
 *
 * The firewall only sees sockets the named program or user opens: what
 * a system service does for them (DNS lookups by the DNS Client, SMB by
 * the redirector, BITS, WinHTTP proxy discovery) is not covered.
 * docs/platforms.md says what else is not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "profile/profile.h"

/* Every address but loopback, as firewall address ranges. */
#define WINFW_NOT_LOOPBACK	"'0.0.0.0-126.255.255.255', " \
	"'128.0.0.0-255.255.255.255', '::', " \
	"'::2-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'"
#define WINFW_LOOPBACK		"'127.0.0.0/8', '::1'"

/*
 * Returns s as a PowerShell single-quoted string, quotes included: no
 * variable, subexpression or escape is expanded there, and a quote is
 * doubled.  PowerShell also ends such a string at the typographic single
 * quotes U+2018..U+201B; a string holding one, or a control byte, is
 * refused (NULL, *cause set) rather than guessed at.
 */
char *
winfw_quote(const char *s, char **cause)
{
	const unsigned char	*p;
	char			*out, *o, *shown;

	*cause = NULL;
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xe2 &&
		    p[1] == 0x80 && p[2] >= 0x98 && p[2] <= 0x9b)) {
			shown = str_escape(s, strlen(s));
			xasprintf(cause, "\"%s\": a control character or a "
			    "typographic quote cannot be written safely in "
			    "the script", shown);
			free(shown);
			return NULL;
		}
	out = o = xmalloc(strlen(s) * 2 + 3);
	*o++ = '\'';
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			*o++ = '\'';
		*o++ = *s;
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

/* Is path a full Windows path: X:\... or \\server\...? */
static bool
winfw_absolute(const char *path)
{
	if (((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' &&
	    path[0] <= 'z')) && path[1] == ':' && path[2] == '\\')
		return true;
	return path[0] == '\\' && path[1] == '\\' && path[2] != '\0';
}

/* The rules for one target, splatted from $t, named after what. */
static void
winfw_rules(FILE *f, int mode, int port, const char *what)
{
	fprintf(f, "New-NetFirewallRule @common @t -Direction Inbound "
	    "-DisplayName \"cordon: %s: block inbound\"", what);
	if (mode == NET_PROXY)
		fprintf(f, " `\n    -RemoteAddress $notLoopback");
	fprintf(f, " | Out-Null\n");
	if (mode == NET_NONE) {
		fprintf(f, "New-NetFirewallRule @common @t -Direction Outbound "
		    "-DisplayName \"cordon: %s: block all outbound\" | "
		    "Out-Null\n", what);
		return;
	}
	fprintf(f, "New-NetFirewallRule @common @t -Direction Outbound "
	    "-DisplayName \"cordon: %s: block all but loopback\" `\n"
	    "    -RemoteAddress $notLoopback | Out-Null\n", what);
	fprintf(f, "New-NetFirewallRule @common @t -Direction Outbound "
	    "-DisplayName \"cordon: %s: block loopback TCP but the proxy\" `\n"
	    "    -Protocol TCP -RemoteAddress $loopback -RemotePort ", what);
	if (port > 1)
		fprintf(f, "'1-%d'%s", port - 1, port < 65535 ? ", " : "");
	if (port < 65535)
		fprintf(f, "'%d-65535'", port + 1);
	fprintf(f, " | Out-Null\n");
	fprintf(f, "New-NetFirewallRule @common @t -Direction Outbound "
	    "-DisplayName \"cordon: %s: block loopback UDP\" `\n"
	    "    -Protocol UDP -RemoteAddress $loopback | Out-Null\n", what);
}

static const char winfw_prologue[] =
    "#Requires -RunAsAdministrator\n"
    "Set-StrictMode -Version 3\n"
    "$ErrorActionPreference = 'Stop'\n"
    "$group = '" WINFW_GROUP "'\n";

/*
 * Checks o's targets for mode and quotes them into q: q[i] for program
 * i, q[nq - 1] for the user.  What is wrong goes to errors.
 */
static void
winfw_targets(const struct winfw_opts *o, int mode, char **q, size_t nq,
    struct errlist *errors)
{
	char	*why;
	size_t	 i;

	if (mode == NET_PROXY && (o->wo_port < 1 || o->wo_port > 65535))
		errlist_add(errors, "network mode proxy: the proxy's port is "
		    "unknown, and the rules leave only that port open; pass "
		    "--proxy-port N");
	if (o->wo_nprograms == 0 && o->wo_user == NULL)
		errlist_add(errors, "no program and no user to apply the "
		    "rules to; pass --program PATH or --user NAME");
	if (o->wo_nprograms + (o->wo_user != NULL) > WINFW_MAX_TARGETS)
		errlist_add(errors, "more than %d programs", WINFW_MAX_TARGETS);
	for (i = 0; i < o->wo_nprograms && errors->el_count == 0; i++) {
		if (!winfw_absolute(o->wo_programs[i]))
			errlist_add(errors, "--program \"%s\": not a full "
			    "Windows path (C:\\...\\NAME.exe)",
			    o->wo_programs[i]);
		else if ((q[i] = winfw_quote(o->wo_programs[i], &why)) ==
		    NULL) {
			errlist_add(errors, "--program %s", why);
			free(why);
		}
	}
	if (o->wo_user != NULL && errors->el_count == 0 &&
	    (q[nq - 1] = winfw_quote(o->wo_user, &why)) == NULL) {
		errlist_add(errors, "--user %s", why);
		free(why);
	}
}

/*
 * The script's head: what it does for mode, the prologue, the check
 * that the firewall is on, and the removal of earlier rules.
 */
static void
winfw_head(FILE *f, int mode, int port)
{
	fprintf(f, "# cordon: Windows Defender Firewall rules made by "
	    "`cordon profile windows-firewall`;\n# do not edit.  network: ");
	if (mode == NET_NONE)
		fprintf(f, "none: no traffic in or out.\n");
	else if (mode == NET_PROXY)
		fprintf(f, "proxy: out only to 127.0.0.1 and ::1, TCP port "
		    "%d.\n", port);
	else
		fprintf(f, "host: UNFILTERED; no rule is made.\n");
	fprintf(f, "# Run it in an elevated PowerShell.  Undo it with the "
	    "script that\n# `cordon profile windows-firewall --remove` "
	    "prints.\n%s\n", winfw_prologue);
	fprintf(f, "# The rules apply only where the firewall is on.\n"
	    "$off = @(Get-NetFirewallProfile | Where-Object { $_.Enabled "
	    "-ne 'True' })\n"
	    "if ($off.Count -ne 0) {\n"
	    "    throw \"cordon: the firewall is off for: $($off.Name -join "
	    "', '); turn it on first\"\n"
	    "}\n\n"
	    "# What an earlier run of this script made goes first.\n"
	    "Get-NetFirewallRule -Group $group -ErrorAction SilentlyContinue "
	    "|\n    Remove-NetFirewallRule\n");
}

/* The rules of mode for each program and the user, quoted in q. */
static void
winfw_body(FILE *f, const struct winfw_opts *o, int mode, char *const *q,
    size_t nq)
{
	size_t	 i;

	fprintf(f, "\n$notLoopback = @(" WINFW_NOT_LOOPBACK ")\n"
	    "$loopback = @(" WINFW_LOOPBACK ")\n"
	    "$common = @{ Group = $group; Action = 'Block'; Profile = 'Any';"
	    " Enabled = 'True' }\n");
	for (i = 0; i < o->wo_nprograms; i++) {
		fprintf(f, "\n# Program %s\n"
		    "if (-not (Test-Path -LiteralPath %s -PathType Leaf)) {\n"
		    "    throw (\"cordon: no program at \" + %s)\n"
		    "}\n"
		    "$t = @{ Program = %s }\n", q[i], q[i], q[i], q[i]);
		winfw_rules(f, mode, o->wo_port, "program");
	}
	if (o->wo_user != NULL) {
		fprintf(f, "\n# Local user %s, by SID: every process it "
		    "runs.\n"
		    "$sid = ([System.Security.Principal.NTAccount]%s).Translate("
		    "\n    [System.Security.Principal.SecurityIdentifier]).Value\n"
		    "$t = @{ LocalUser = \"D:(A;;CC;;;$sid)\" }\n",
		    q[nq - 1], q[nq - 1]);
		winfw_rules(f, mode, o->wo_port, "user");
	}
}

/*
 * Returns the install script for policy p's network mode (caller
 * frees), or NULL with *cause set: in proxy mode the port must be known,
 * and there must be a program or a user to apply the rules to (rules
 * for no one would apply to everyone).
 */
char *
winfw_install(const struct policy *p, const struct winfw_opts *o,
    char **cause)
{
	struct errlist	 errors = { 0 };
	FILE		*f;
	char		*text = NULL, **q;
	size_t		 len, i, nq;
	int		 mode = p->p_mode.ps_value;

	*cause = NULL;
	nq = o->wo_nprograms + 1;
	q = xcalloc(nq, sizeof(*q));
	winfw_targets(o, mode, q, nq, &errors);
	if (errors.el_count != 0)
		goto out;

	if ((f = open_memstream(&text, &len)) == NULL)
		fatal("open_memstream");
	winfw_head(f, mode, o->wo_port);
	if (mode == NET_HOST)
		fprintf(f, "Write-Warning 'cordon: network mode host: no "
		    "firewall rule; the traffic is neither filtered nor "
		    "logged'\n");
	else
		winfw_body(f, o, mode, q, nq);
	fprintf(f, "\nGet-NetFirewallRule -Group $group -ErrorAction "
	    "SilentlyContinue |\n    Format-Table DisplayName, Direction, "
	    "Action\n");
	if (fclose(f) != 0)
		fatal("open_memstream");
out:
	for (i = 0; i < nq; i++)
		free(q[i]);
	free(q);
	if (errors.el_count != 0)
		*cause = errlist_steal(&errors);
	return text;
}

/* Returns the removal script (caller frees): the group, whatever is in it. */
char *
winfw_remove(void)
{
	char	*text;

	xasprintf(&text, "# cordon: removes the Windows Defender Firewall "
	    "rules that\n# `cordon profile windows-firewall` made (group "
	    "'" WINFW_GROUP "').\n%s\n"
	    "Get-NetFirewallRule -Group $group -ErrorAction SilentlyContinue "
	    "|\n    Remove-NetFirewallRule\n", winfw_prologue);
	return text;
}
