/*
 * inspect.c: what the proxy does with a request it can read: the method
 * and path rules of network.inspect, and the phantom credentials.  Pure
 * functions on a parsed request, unit-tested and fuzzed on buffers; the
 * TLS around them is conn.c's, the contexts are made here.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "certs/certs.h"
#include "certs/ssl_error.h"
#include "lib/host.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"

#define INSPECT_SUITES	"TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:" \
			"TLS_CHACHA20_POLY1305_SHA256"

/* Whether method is one of in_methods (exact: rules are upper case). */
static bool
inspect_method_ok(const struct pinspect *in, const char *method)
{
	size_t	 i;

	for (i = 0; i < in->in_methods.pl_n; i++)
		if (strcmp(in->in_methods.pl_v[i].pi_text, method) == 0)
			return true;
	return false;
}

/*
 * The headers with which a client asks a server to take the request as
 * another method (Rails, Express's method-override, Google's and
 * Microsoft's APIs): a POST that is read as a DELETE.
 */
static const char *const inspect_overrides[] = {
	"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override", NULL
};

/*
 * Whether each method-override header of req names, exactly, a method
 * in_methods allows, so the server acts on an allowed method whichever
 * it reads.  Returns true, or false with *why and *hint.
 */
static bool
inspect_override_ok(const struct pinspect *in, const struct http_request *req,
    char **why, char **hint)
{
	const struct http_header	*hh;
	const char			*from = in->in_host.pi_from;
	char				*shown;
	size_t				 i, j;

	for (i = 0; i < req->hr_nheaders; i++) {
		hh = &req->hr_headers[i];
		for (j = 0; inspect_overrides[j] != NULL; j++)
			if (strcasecmp(hh->hh_name, inspect_overrides[j]) == 0)
				break;
		if (inspect_overrides[j] == NULL ||
		    inspect_method_ok(in, hh->hh_value))
			continue;
		shown = str_escape(hh->hh_value, strlen(hh->hh_value));
		xasprintf(why, "header %s asks the server for method \"%s\", "
		    "which is not among the methods network.inspect allows "
		    "for %s", inspect_overrides[j], shown,
		    in->in_host.pi_text);
		xasprintf(hint, "send the request with the method itself and "
		    "no %s header, or add the method to \"methods\" of the "
		    "network.inspect entry for %s (%s)", inspect_overrides[j],
		    in->in_host.pi_text, from != NULL ? from : "?");
		free(shown);
		return false;
	}
	return true;
}

/*
 * Judges req against the entry in: its method must be one of in_methods
 * (a WebSocket handshake's is WEBSOCKET: its frames carry what a body
 * would, both ways, so a GET rule does not admit them),
 * as must the method any override header asks for, and its path
 * (decoded, without the query: http_path_normalise) must match one of
 * in_paths.  Returns true, or false with *status (403, or 400 for a path
 * that cannot be judged), *why and *hint (caller frees) saying what was
 * refused and how to allow it.
 */
bool
inspect_allows(const struct pinspect *in, const struct http_request *req,
    int *status, char **why, char **hint)
{
	const char	*from = in->in_host.pi_from;
	char		*path, *cause;
	size_t		 i;
	bool		 ok = false;

	*why = *hint = NULL;
	*status = 403;
	if (in->in_any)
		return true;
	if (req->hr_websocket && !inspect_method_ok(in, "WEBSOCKET")) {
		xasprintf(why, "a WebSocket handshake (GET with Upgrade: "
		    "websocket) is judged as method WEBSOCKET, which is not "
		    "among the methods network.inspect allows for %s",
		    in->in_host.pi_text);
		xasprintf(hint, "add \"WEBSOCKET\" to \"methods\" of the "
		    "network.inspect entry for %s (%s): its frames then go "
		    "both ways unjudged", in->in_host.pi_text,
		    from != NULL ? from : "?");
		return false;
	}
	if (!req->hr_websocket && !inspect_method_ok(in, req->hr_method)) {
		xasprintf(why, "method %s is not among the methods "
		    "network.inspect allows for %s", req->hr_method,
		    in->in_host.pi_text);
		xasprintf(hint, "add \"%s\" to \"methods\" of the "
		    "network.inspect entry for %s (%s)", req->hr_method,
		    in->in_host.pi_text, from != NULL ? from : "?");
		return false;
	}
	if (!inspect_override_ok(in, req, why, hint))
		return false;
	if (http_path_normalise(req->hr_path, &path, &cause) == -1) {
		*status = 400;
		xasprintf(why, "the path cannot be judged: %s", cause);
		xasprintf(hint, "send the path as the server will read it, "
		    "escaped once, with no \".\" or \"..\" segment and no "
		    "';': no path rule of the network.inspect entry for %s "
		    "(%s) admits another spelling", in->in_host.pi_text,
		    from != NULL ? from : "?");
		free(cause);
		return false;
	}
	for (i = 0; i < in->in_paths.pl_n && !ok; i++)
		ok = policy_match_path(in->in_paths.pl_v[i].pi_text, path);
	if (!ok) {
		char	*shown = str_escape(path, strlen(path));

		xasprintf(why, "path %s is not among the paths "
		    "network.inspect allows for %s", shown,
		    in->in_host.pi_text);
		xasprintf(hint, "add \"%s\" (exact) or a prefix ending in "
		    "'*' to \"paths\" of the network.inspect entry for %s (%s)",
		    shown, in->in_host.pi_text, from != NULL ? from : "?");
		free(shown);
	}
	free(path);
	return ok;
}

/*
 * The header's value ph carries with value in it (new string): its
 * format with value for the one "%s", or Basic with ph_user ("Basic "
 * and the base64 of "ph_user:value"; scrub.c looks for that part).
 */
char *
inspect_phantom_format(const struct phantom *ph, const char *value)
{
	const char	*s;
	char		*out, *pair;
	size_t		 n;

	if (ph->ph_user == NULL) {
		s = strstr(ph->ph_format, "%s");
		xasprintf(&out, "%.*s%s%s", (int)(s - ph->ph_format),
		    ph->ph_format, value, s + 2);
		return out;
	}
	n = xasprintf(&pair, "%s:%s", ph->ph_user, value);
	out = xmalloc(6 + 4 * ((n + 2) / 3) + 1);
	memcpy(out, "Basic ", 6);
	EVP_EncodeBlock((unsigned char *)out + 6, (unsigned char *)pair,
	    (int)n);
	explicit_bzero(pair, n);
	free(pair);
	return out;
}

/* Appends w (taken) to *warning, "; " between two. */
static void
phantom_warn(char **warning, char *w)
{
	char	*both;

	if (*warning == NULL)
		*warning = w;
	else {
		xasprintf(&both, "%s; %s", *warning, w);
		free(*warning);
		free(w);
		*warning = both;
	}
}

/*
 * A request that carries a real value asks for an answer in no coding
 * (RFC 9110 section 12.5.3), which scrub.c can search byte by byte: its
 * Accept-Encoding headers say "identity", or one is added that does.
 * A WebSocket handshake offers no extension (RFC 6455 section 9), so
 * that frames are not compressed (permessage-deflate) either.
 */
void
inspect_phantom_identity(struct http_request *req)
{
	struct http_header	*hh;
	size_t			 i, kept = 0;
	bool			 seen = false;

	for (i = 0; i < req->hr_nheaders; i++) {
		hh = &req->hr_headers[i];
		if (strcasecmp(hh->hh_name, "Sec-WebSocket-Extensions") == 0) {
			free(hh->hh_name);
			free(hh->hh_value);
			continue;
		}
		req->hr_headers[kept++] = *hh;
	}
	req->hr_nheaders = kept;
	for (i = 0; i < req->hr_nheaders; i++) {
		hh = &req->hr_headers[i];
		if (strcasecmp(hh->hh_name, "Accept-Encoding") != 0)
			continue;
		free(hh->hh_value);
		hh->hh_value = xstrdup("identity");
		seen = true;
	}
	if (seen)
		return;
	req->hr_headers = xreallocarray(req->hr_headers, req->hr_nheaders + 1,
	    sizeof(*req->hr_headers));
	hh = &req->hr_headers[req->hr_nheaders++];
	hh->hh_name = xstrdup("Accept-Encoding");
	hh->hh_value = xstrdup("identity");
}

/*
 * The phantom credentials of a request to host: over inspected TLS, a
 * header named by a credential for host whose value is exactly its
 * format around the placeholder (or the one a refresh replaced, ph_was)
 * gets the real value instead (a refresh token, in no header, is
 * renew.c's).  Any other
 * placeholder seen (another host, another header, another shape, plain
 * HTTP, the target) is left as it is and named in *warning (caller
 * frees; NULL when none).  A request filled in asks for an answer in no
 * coding (inspect_phantom_identity).  Returns how many headers were filled.
 */
int
inspect_phantom_apply(struct http_request *req, const struct phantom *ph,
    size_t n, const char *host, bool inspected, char **warning)
{
	struct http_header	*hh;
	char			*want, *was, *w;
	size_t			 i, j;
	int			 filled = 0;
	bool			 ours, exact;

	*warning = NULL;
	for (j = 0; j < n; j++) {
		if (ph[j].ph_placeholder == NULL)
			continue;
		if (strstr(req->hr_target, ph[j].ph_placeholder) != NULL) {
			xasprintf(&w, "the placeholder of %s was sent to %s "
			    "in the request target; not replaced",
			    proxy_phantom_name(&ph[j]), host);
			phantom_warn(warning, w);
		}
		/* Basic's placeholder is seen only whole, in base64. */
		want = inspect_phantom_format(&ph[j], ph[j].ph_placeholder);
		was = ph[j].ph_was != NULL ?
		    inspect_phantom_format(&ph[j], ph[j].ph_was) : NULL;
		for (i = 0; i < req->hr_nheaders; i++) {
			hh = &req->hr_headers[i];
			exact = strcmp(hh->hh_value, want) == 0 ||
			    (was != NULL && strcmp(hh->hh_value, was) == 0);
			if (strstr(hh->hh_value, ph[j].ph_placeholder) == NULL &&
			    (ph[j].ph_was == NULL ||
			    strstr(hh->hh_value, ph[j].ph_was) == NULL) &&
			    !exact)
				continue;
			ours = ph[j].ph_header != NULL && inspected &&
			    policy_match_admits_name(&ph[j].ph_host, host) &&
			    strcasecmp(hh->hh_name, ph[j].ph_header) == 0;
			if (ours && exact) {
				explicit_bzero(hh->hh_value,
				    strlen(hh->hh_value));
				free(hh->hh_value);
				hh->hh_value = inspect_phantom_format(&ph[j],
				    ph[j].ph_value);
				filled++;
			} else if (ours) {
				xasprintf(&w, "the placeholder of %s was sent "
				    "to %s in %s, not in the credential's "
				    "format; not replaced",
				    proxy_phantom_name(&ph[j]), host,
				    ph[j].ph_header);
				phantom_warn(warning, w);
			} else {
				xasprintf(&w, "the placeholder of %s was sent "
				    "to %s in header %s; not replaced",
				    proxy_phantom_name(&ph[j]), host,
				    hh->hh_name);
				phantom_warn(warning, w);
			}
		}
		free(want);
		free(was);
	}
	if (filled > 0)
		inspect_phantom_identity(req);
	return filled;
}

/* ALPN for the sandbox's side: http/1.1, http/1.0, or none at all. */
static int
inspect_alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	static const unsigned char	 h11[] = "\x08http/1.1";
	static const unsigned char	 h10[] = "\x08http/1.0";
	unsigned char			*sel;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&sel, outlen, h11, sizeof(h11) - 1, in,
	    inlen) != OPENSSL_NPN_NEGOTIATED &&
	    SSL_select_next_proto(&sel, outlen, h10, sizeof(h10) - 1, in,
	    inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;	/* h2 only: refused */
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

/*
 * The proxy's two TLS contexts: one to answer the sandbox with minted
 * leaves, one to reach upstreams, verified against the system's CAs and
 * upstream_ca (a PEM file, or NULL).  Returns 0, or -1 with *cause.
 */
int
inspect_tls_init(struct proxy *px, const char *upstream_ca, char **cause)
{
	SSL_CTX	*srv = NULL, *cli = NULL;

	if ((srv = SSL_CTX_new(TLS_server_method())) == NULL ||
	    (cli = SSL_CTX_new(TLS_client_method())) == NULL)
		goto ssl_fail;
	SSL_CTX_set_min_proto_version(srv, TLS1_2_VERSION);
	SSL_CTX_set_min_proto_version(cli, TLS1_2_VERSION);
	SSL_CTX_set_options(srv, SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_options(cli, SSL_OP_NO_RENEGOTIATION);
	/* Whole reads from the upstream's socket, not a record at a time. */
	SSL_CTX_set_read_ahead(cli, 1);
	/*
	 * The proxy decrypts and encrypts every byte on one thread: AES-128
	 * first (a third cheaper than AES-256 with AES-NI, and as strong as
	 * TLS 1.3 asks), the others still offered.
	 */
	if (SSL_CTX_set_ciphersuites(srv, INSPECT_SUITES) != 1 ||
	    SSL_CTX_set_ciphersuites(cli, INSPECT_SUITES) != 1)
		goto ssl_fail;
	SSL_CTX_set_alpn_select_cb(srv, inspect_alpn_cb, NULL);
	/* Sessions are not resumed: each leaf may be a new one. */
	SSL_CTX_set_session_cache_mode(srv, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(srv, 0);
	SSL_CTX_set_verify(cli, SSL_VERIFY_PEER, NULL);
	if (SSL_CTX_set_default_verify_paths(cli) != 1)
		goto ssl_fail;
	if (upstream_ca != NULL &&
	    SSL_CTX_load_verify_locations(cli, upstream_ca, NULL) != 1) {
		xasprintf(cause, "--upstream-ca %s: %s", upstream_ca,
		    ssl_error_last());
		goto fail;
	}
	if (SSL_CTX_set_alpn_protos(cli, (const unsigned char *)
	    "\x08http/1.1", 9) != 0)
		goto ssl_fail;
	inspect_tls_free(px);
	px->px_tls_srv = srv;
	px->px_tls_cli = cli;
	return 0;
ssl_fail:
	xasprintf(cause, "TLS contexts for inspection: %s",
	    ssl_error_last());
fail:
	SSL_CTX_free(srv);
	SSL_CTX_free(cli);
	return -1;
}

void
inspect_tls_free(struct proxy *px)
{
	SSL_CTX_free(px->px_tls_srv);
	SSL_CTX_free(px->px_tls_cli);
	px->px_tls_srv = px->px_tls_cli = NULL;
}

/*
 * Makes what inspection needs when policy p inspects anything and the
 * proxy has not got it yet: the signing process, with the CA of
 * tls.ca_dir (or the default folder), and the TLS contexts.  Returns 0,
 * or -1 with *cause (the proxy is as it was).
 */
int
inspect_setup(struct proxy *px, const struct policy *p,
    const char *upstream_ca, char **cause)
{
	char	*dir, *why;

	if (p->p_ninspect == 0 || px->px_signer != NULL)
		return 0;
	if ((dir = ca_dir_policy(p, &why)) == NULL) {
		xasprintf(cause, "network.inspect needs a CA: %s", why);
		free(why);
		return -1;
	}
	if (inspect_tls_init(px, upstream_ca, cause) == -1) {
		free(dir);
		return -1;
	}
	if ((px->px_signer = signer_start(px->px_base, dir, &why)) == NULL) {
		xasprintf(cause, "network.inspect needs a CA: %s", why);
		free(why);
		free(dir);
		inspect_tls_free(px);
		return -1;
	}
	free(dir);
	return 0;
}

/* Ends the signing process and frees the TLS contexts. */
void
inspect_teardown(struct proxy *px)
{
	if (px->px_signer != NULL)
		signer_free(px->px_signer);
	px->px_signer = NULL;
	inspect_tls_free(px);
}
