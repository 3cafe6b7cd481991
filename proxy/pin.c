/*
 * pin.c: account pinning, a host the run holds a credential for gets no
 * other one; and which credential each request carried, for the log.
 * The credential is a phantom (from credentials[] or a token file); a
 * request that carries another one to its host, in Authorization, in
 * the credential's own header, or in a header or cookie the policy
 * names, is the command's own, and could act as another account (its
 * token, the user's code, the attacker's gist).  Refused, unless a
 * credentials entry for the host says "foreign": "allow".  The log says
 * "phantom", "none" or "foreign" for every request read.  Pure functions on a parsed request, before the phantoms are filled in.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"

const char *const pin_kind_names[] = {
	[PIN_NONE] = "none", [PIN_PHANTOM] = "phantom",
	[PIN_FOREIGN] = "foreign"
};

/* Whether pl holds name; headers ignore case (cookies do not). */
static bool
pin_listed(const struct plist *pl, const char *name, size_t len, bool fold)
{
	const char	*t;
	size_t		 i;

	for (i = 0; i < pl->pl_n; i++) {
		t = pl->pl_v[i].pi_text;
		if (strlen(t) == len && (fold ? strncasecmp(t, name, len) :
		    strncmp(t, name, len)) == 0)
			return true;
	}
	return false;
}

/*
 * Whether header name carries a credential to host: Authorization, a
 * phantom's header for host, or one the policy's entries for host name.
 */
static bool
pin_header(const char *name, const struct phantom *ph, size_t n,
    const struct policy *p, const char *host)
{
	size_t	 i;

	/* Names first: matching the host costs more, and is rarely asked. */
	if (strcasecmp(name, "Authorization") == 0)
		return true;
	for (i = 0; i < n; i++)
		if (ph[i].ph_header != NULL &&
		    strcasecmp(name, ph[i].ph_header) == 0 &&
		    policy_match_admits_name(&ph[i].ph_host, host))
			return true;
	for (i = 0; p != NULL && i < p->p_ncreds; i++)
		if (pin_listed(&p->p_creds[i].cr_headers, name, strlen(name),
		    true) && policy_match_admits_name(&p->p_creds[i].cr_host,
		    host))
			return true;
	return false;
}

/*
 * The first cookie of a Cookie header's value that the policy's entries
 * for host name (RFC 6265, 4.2.1: "name=value" pairs split by ';'), as
 * a new string, or NULL.
 */
static char *
pin_cookie(const char *value, const struct policy *p, const char *host)
{
	const char	*s = value, *eq;
	size_t		 i, len;

	while (*s != '\0') {
		s += strspn(s, " \t;");
		len = strcspn(s, ";");
		if ((eq = memchr(s, '=', len)) != NULL)
			len = (size_t)(eq - s);
		while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		for (i = 0; len > 0 && p != NULL && i < p->p_ncreds; i++)
			if (pin_listed(&p->p_creds[i].cr_cookies, s, len,
			    false) && policy_match_admits_name(
			    &p->p_creds[i].cr_host, host))
				return xstrndup(s, len);
		s += strcspn(s, ";");
	}
	return NULL;
}

/*
 * What header hh's value is to host, when it is in a credential's
 * place: cordon's own (PIN_PHANTOM: exactly a phantom for host in its
 * header and format, over inspected TLS, so inspect_phantom_apply fills
 * it), a placeholder left as it is (PIN_NONE: it carries nothing, and
 * inspect_phantom_apply warns), or anything else (PIN_FOREIGN).
 */
static enum pin_kind
pin_value(const struct http_header *hh, const struct phantom *ph, size_t n,
    const char *host, bool inspected)
{
	enum pin_kind	 kind = PIN_FOREIGN;
	const char	*held[2];
	char		*want;
	size_t		 i, k;

	/*
	 * Entries naming one variable share its placeholder: look at all,
	 * and at the placeholder a refresh replaced (ph_was).
	 */
	for (i = 0; i < n && kind != PIN_PHANTOM; i++) {
		held[0] = ph[i].ph_placeholder;
		held[1] = ph[i].ph_was;
		for (k = 0; k < 2 && kind != PIN_PHANTOM; k++) {
			if (held[k] == NULL)
				continue;
			want = inspect_phantom_format(&ph[i], held[k]);
			if (strcmp(hh->hh_value, want) == 0)
				kind = inspected && ph[i].ph_header != NULL &&
				    strcasecmp(hh->hh_name,
				    ph[i].ph_header) == 0 &&
				    policy_match_admits_name(&ph[i].ph_host,
				    host) ? PIN_PHANTOM : PIN_NONE;
			else if (strcmp(hh->hh_value, held[k]) == 0)
				kind = PIN_NONE;
			free(want);
		}
	}
	return kind;
}

/*
 * Which credential req carries to host (already filled in or not:
 * before inspect_phantom_apply).  One foreign value among phantoms
 * makes the request foreign; *where then says where it is ("header
 * Authorization", "cookie sid": a new string), else it is NULL.
 */
enum pin_kind
pin_classify(const struct http_request *req, const struct phantom *ph,
    size_t n, const struct policy *p, const char *host, bool inspected,
    char **where)
{
	const struct http_header	*hh;
	enum pin_kind			 kind = PIN_NONE, k;
	char				*cookie;
	size_t				 i;

	*where = NULL;
	for (i = 0; i < req->hr_nheaders && *where == NULL; i++) {
		hh = &req->hr_headers[i];
		if (hh->hh_value[0] == '\0')
			continue;	/* carries nothing */
		if (pin_header(hh->hh_name, ph, n, p, host)) {
			if ((k = pin_value(hh, ph, n, host, inspected)) ==
			    PIN_FOREIGN)
				xasprintf(where, "header %s", hh->hh_name);
			else if (k == PIN_PHANTOM)
				kind = k;
			continue;
		}
		if (strcasecmp(hh->hh_name, "Cookie") == 0 &&
		    (cookie = pin_cookie(hh->hh_value, p, host)) != NULL) {
			xasprintf(where, "cookie %s", cookie);
			free(cookie);
		}
	}
	return *where != NULL ? PIN_FOREIGN : kind;
}

/*
 * Whether host is pinned: the run holds a credential for it (a phantom
 * of ph whose host admits it; returned, or NULL) and no credentials
 * entry of p for it says "foreign": "allow".
 */
const struct phantom *
pin_pinned(const struct phantom *ph, size_t n, const struct policy *p,
    const char *host)
{
	const struct phantom	*own = NULL;
	size_t			 i;

	for (i = 0; i < n && own == NULL; i++)
		if (ph[i].ph_placeholder != NULL &&
		    policy_match_admits_name(&ph[i].ph_host, host))
			own = &ph[i];
	for (i = 0; own != NULL && p != NULL && i < p->p_ncreds; i++)
		if (p->p_creds[i].cr_foreign && policy_match_admits_name(
		    &p->p_creds[i].cr_host, host))
			return NULL;
	return own;
}

/*
 * Judges req to host: sets *kind (pin_classify), and returns true, or
 * false with *why and *hint (caller frees) when it carries a foreign
 * credential to a pinned host (pin_pinned); *rule is then the host
 * pattern of the credential it is pinned to.
 */
bool
pin_allows(const struct http_request *req, const struct phantom *ph,
    size_t n, const struct policy *p, const char *host, bool inspected,
    enum pin_kind *kind, const struct pitem **rule, char **why, char **hint)
{
	const struct phantom	*own;
	char			*where;

	*why = *hint = NULL;
	*rule = NULL;
	*kind = pin_classify(req, ph, n, p, host, inspected, &where);
	if (*kind != PIN_FOREIGN ||
	    (own = pin_pinned(ph, n, p, host)) == NULL) {
		free(where);
		return true;
	}
	*rule = &own->ph_host;
	xasprintf(why, "%s carries a credential cordon did not put there, "
	    "and %s is pinned to cordon's credential (%s): a command's own "
	    "credential could act as another account", where, host,
	    proxy_phantom_name(own));
	xasprintf(hint, "send the placeholder of %s as it was given, or, to "
	    "let commands use their own credentials there, add {\"host\": "
	    "\"%s\", \"foreign\": \"allow\"} to \"credentials\" in your user "
	    "policy or a --policy file", proxy_phantom_name(own), host);
	free(where);
	return false;
}
