/*
 * renew.c: a login's token refresh from inside (the agents' OAuth
 * logins, secrets/tokenjson.c).  The copy the sandbox reads holds
 * placeholders for every token of the login; the refresh token's
 * phantom names its token endpoint (ph_path on ph_host) and the member
 * of the request's JSON body it goes in (ph_member).  A POST there, over
 * inspected TLS, is read whole both ways, as no other exchange is:
 *
 *   - the request's body gets the real refresh token in that member
 *     alone, and only when the member holds the placeholder;
 *   - the answer's new real tokens (the members the login's phantoms
 *     name: "access_token", "refresh_token") become their placeholders
 *     again, and the phantoms fill in the new values from then on; a
 *     JWT's placeholder is made anew of the new token's header and
 *     claims (its expiry), with a random signature;
 *   - the program running the proxy is told (hk_renewed), to keep the
 *     host's file up to date: refresh tokens rotate.
 *
 * No real value reaches the sandbox: the answer sent on is searched for
 * every real value, old and new, and what cannot be read or rewritten
 * safely fails closed: the sandbox gets cordon's 502, never the raw
 * answer.  Bodies are small (RENEW_BODY_MAX): a token endpoint's are.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"

#define RENEW_BODY_MAX		(64 * 1024)

struct renew {
	struct proxy	*rw_px;		/* borrowed: its phantoms change */
	size_t		 rw_ph;		/* the refresh token's phantom */
	struct evbuffer	*rw_body[2];	/* the request's, the answer's */
	bool		 rw_filled;	/* the request got the real token */
	long long	 rw_expires;	/* the answer's expires_in, or -1 */
};

/* Whether phantom ph is a refresh token for a POST of req to host. */
static bool
renew_ours(const struct phantom *ph, const struct http_request *req,
    const char *host)
{
	size_t	 len;

	if (ph->ph_path == NULL || ph->ph_placeholder == NULL ||
	    req->hr_path == NULL || strcmp(req->hr_method, "POST") != 0 ||
	    !policy_match_admits_name(&ph->ph_host, host))
		return false;
	len = strcspn(req->hr_path, "?");
	return strlen(ph->ph_path) == len &&
	    strncmp(req->hr_path, ph->ph_path, len) == 0;
}

/*
 * The refresh exchange req to host is, over inspected TLS: a POST to a
 * refresh token's endpoint.  NULL for any other request.
 */
struct renew *
renew_new(struct proxy *px, const struct http_request *req, const char *host,
    bool inspected)
{
	struct renew	*r;
	size_t		 j;

	for (j = 0; inspected && j < px->px_nphantoms; j++)
		if (renew_ours(&px->px_phantoms[j], req, host))
			break;
	if (!inspected || j == px->px_nphantoms)
		return NULL;
	r = xcalloc(1, sizeof(*r));
	r->rw_px = px;
	r->rw_ph = j;
	r->rw_expires = -1;
	if ((r->rw_body[0] = evbuffer_new()) == NULL ||
	    (r->rw_body[1] = evbuffer_new()) == NULL)
		fatalx("proxy: evbuffer_new failed");
	return r;
}

/* Wipes and empties buffer b. */
static void
renew_wipe(struct evbuffer *b)
{
	size_t	 len = evbuffer_get_length(b);

	if (len > 0) {
		explicit_bzero(evbuffer_pullup(b, -1), len);
		evbuffer_drain(b, len);
	}
}

/* Frees r (or NULL), wiping the bodies it read. */
void
renew_free(struct renew *r)
{
	size_t	 i;

	if (r == NULL)
		return;
	for (i = 0; i < 2; i++) {
		renew_wipe(r->rw_body[i]);
		evbuffer_free(r->rw_body[i]);
	}
	free(r);
}

/* The request's body (answer false) or the answer's, as read or made. */
struct evbuffer *
renew_body(struct renew *r, bool answer)
{
	return r->rw_body[answer];
}

/*
 * Reads the body hb follows from in, its data alone (chunk framing
 * dropped), into the request's or the answer's buffer; *done says it
 * ended.  Returns 0, or -1 for a malformed body or one over
 * RENEW_BODY_MAX.
 */
int
renew_collect(struct renew *r, bool answer, struct http_body *hb,
    struct evbuffer *in, bool *done)
{
	struct evbuffer	*to = r->rw_body[answer];
	const char	*buf;
	size_t		 len, used = 0;
	ssize_t		 n;
	bool		 data;

	*done = hb->hb_kind == HTTP_BODY_NONE;
	len = evbuffer_get_length(in);
	buf = (const char *)evbuffer_pullup(in, (ssize_t)len);
	while (used < len && !*done) {
		if ((n = http_body_part(hb, buf + used, len - used, &data,
		    done)) < 0)
			return -1;
		if (n == 0)
			break;
		if (data)
			evbuffer_add(to, buf + used, (size_t)n);
		used += (size_t)n;
	}
	if (used > 0) {
		explicit_bzero(evbuffer_pullup(in, (ssize_t)used), used);
		evbuffer_drain(in, used);
	}
	return evbuffer_get_length(to) > RENEW_BODY_MAX ? -1 : 0;
}

/*
 * Frames a message of headers h (n of them) as a body of len bytes:
 * its Content-Length and Transfer-Encoding headers replaced by one
 * Content-Length.
 */
static void
renew_frame(struct http_header **h, size_t *n, size_t len)
{
	struct http_header	*hh;
	size_t			 i, kept = 0;

	for (i = 0; i < *n; i++) {
		hh = &(*h)[i];
		if (strcasecmp(hh->hh_name, "Content-Length") == 0 ||
		    strcasecmp(hh->hh_name, "Transfer-Encoding") == 0) {
			free(hh->hh_name);
			free(hh->hh_value);
			continue;
		}
		(*h)[kept++] = *hh;
	}
	*h = xreallocarray(*h, kept + 1, sizeof(**h));
	hh = &(*h)[kept];
	hh->hh_name = xstrdup("Content-Length");
	xasprintf(&hh->hh_value, "%zu", len);
	*n = kept + 1;
}

/*
 * Whether the answer's head resp lets its body be read whole and
 * rewritten: not coded, and not ended by the upstream's close.
 * Returns 0, or -1 with *cause and *hint (caller frees).
 */
int
renew_head(struct renew *r, const struct http_response *resp, char **cause,
    char **hint)
{
	const struct http_header	*hh;
	size_t				 i;
	bool				 ok = resp->hs_body != HTTP_BODY_CLOSE;

	*cause = *hint = NULL;
	for (i = 0; i < resp->hs_nheaders && ok; i++) {
		hh = &resp->hs_headers[i];
		ok = strcasecmp(hh->hh_name, "Content-Encoding") != 0 ||
		    strcasecmp(hh->hh_value, "identity") == 0;
	}
	if (ok)
		return 0;
	xasprintf(cause, "the token endpoint's answer to a refresh of %s is "
	    "coded or has no length, so cordon cannot read it whole and keep "
	    "its new tokens out of the sandbox",
	    r->rw_px->px_phantoms[r->rw_ph].ph_file);
	xasprintf(hint, "the sandbox got this refusal in place of the "
	    "answer; run the agent once on the host to refresh its login "
	    "there");
	return -1;
}

/* Parses body b as a JSON object (NULL when it is none); b is kept. */
static json_t *
renew_parse(struct evbuffer *b)
{
	json_t	*doc;
	size_t	 len = evbuffer_get_length(b);

	doc = json_loadb((const char *)evbuffer_pullup(b, -1), len,
	    JSON_REJECT_DUPLICATES, NULL);
	if (doc != NULL && !json_is_object(doc)) {
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}

/* Replaces body b's bytes with doc, compact; b's old bytes wiped. */
static void
renew_dump(struct evbuffer *b, json_t *doc)
{
	char	*text;

	if ((text = json_dumps(doc, JSON_COMPACT)) == NULL)
		fatalx("proxy: json_dumps failed");
	renew_wipe(b);
	evbuffer_add(b, text, strlen(text));
	explicit_bzero(text, strlen(text));
	free(text);
}

/*
 * The request's body read: when its JSON member ph_member holds the
 * refresh token's placeholder, the real token goes there (that member
 * alone), and the request asks for an answer in no coding.  Any other
 * body goes as it came.  req is framed for the body sent.
 */
void
renew_request(struct renew *r, struct http_request *req)
{
	const struct phantom	*ph = &r->rw_px->px_phantoms[r->rw_ph];
	struct evbuffer		*b = r->rw_body[0];
	json_t			*doc, *v;

	if ((doc = renew_parse(b)) != NULL &&
	    (v = json_object_get(doc, ph->ph_member)) != NULL &&
	    json_is_string(v) &&
	    strcmp(json_string_value(v), ph->ph_placeholder) == 0) {
		json_object_set_new(doc, ph->ph_member,
		    json_string(ph->ph_value));
		renew_dump(b, doc);
		r->rw_filled = true;
		inspect_phantom_identity(req);
	}
	json_decref(doc);
	renew_frame(&req->hr_headers, &req->hr_nheaders,
	    evbuffer_get_length(b));
	req->hr_body = HTTP_BODY_LENGTH;
	req->hr_length = evbuffer_get_length(b);
}

/* Whether one of the n strings at v, or a real value, is in b. */
static bool
renew_leaks(struct renew *r, struct evbuffer *b, char **v, size_t n)
{
	const struct phantom	*ph = r->rw_px->px_phantoms;
	const char		*p = (const char *)evbuffer_pullup(b, -1);
	size_t			 len = evbuffer_get_length(b), j;

	for (j = 0; j < n; j++) {
		if (v[j] != NULL && v[j][0] != '\0' &&
		    memmem(p, len, v[j], strlen(v[j])) != NULL)
			return true;
		if (ph[j].ph_value != NULL && ph[j].ph_value[0] != '\0' &&
		    memmem(p, len, ph[j].ph_value,
		    strlen(ph[j].ph_value)) != NULL)
			return true;
	}
	return false;
}

/*
 * Takes the new real tokens out of the answer doc: each member a
 * phantom of the login (its ph_file) names becomes that phantom's
 * placeholder, its value kept in fresh[j] (the caller wipes); a JWT's
 * becomes a new placeholder made of the new token, kept in put[j] (the
 * caller frees).  Returns how many were taken.
 */
static size_t
renew_take(struct renew *r, json_t *doc, char **fresh, char **put)
{
	const struct phantom	*ph = r->rw_px->px_phantoms;
	const char		*file = ph[r->rw_ph].ph_file;
	json_t			*v;
	size_t			 j, n = 0;

	for (j = 0; j < r->rw_px->px_nphantoms; j++) {
		if (ph[j].ph_member == NULL || ph[j].ph_file == NULL ||
		    file == NULL || strcmp(ph[j].ph_file, file) != 0 ||
		    (v = json_object_get(doc, ph[j].ph_member)) == NULL ||
		    !json_is_string(v) || json_string_length(v) == 0)
			continue;
		fresh[j] = xstrdup(json_string_value(v));
		if (ph[j].ph_jwt)
			put[j] = str_jwt_placeholder(fresh[j]);
		json_object_set_new(doc, ph[j].ph_member, json_string(
		    put[j] != NULL ? put[j] : ph[j].ph_placeholder));
		n++;
	}
	if ((v = json_object_get(doc, "expires_in")) != NULL &&
	    json_is_integer(v))
		r->rw_expires = json_integer_value(v);
	return n;
}

/*
 * The phantoms take their new values from fresh and their new
 * placeholders from put (both emptied), then say so.
 */
static void
renew_commit(struct renew *r, char **fresh, char **put)
{
	struct proxy	*px = r->rw_px;
	struct phantom	*ph = px->px_phantoms;
	size_t		 j;

	for (j = 0; j < px->px_nphantoms; j++) {
		if (fresh[j] == NULL)
			continue;
		explicit_bzero(ph[j].ph_value, strlen(ph[j].ph_value));
		free(ph[j].ph_value);
		ph[j].ph_value = fresh[j];
		fresh[j] = NULL;
		if (put[j] != NULL) {
			if (ph[j].ph_was == NULL)
				ph[j].ph_was = ph[j].ph_placeholder;
			else
				free(ph[j].ph_placeholder);
			ph[j].ph_placeholder = put[j];
			put[j] = NULL;
		}
	}
	if (px->px_hooks != NULL && px->px_hooks->hk_renewed != NULL)
		px->px_hooks->hk_renewed(ph[r->rw_ph].ph_file, ph,
		    px->px_nphantoms, r->rw_expires, px->px_hooks_arg);
}

/*
 * The answer's body read (resp, its head): when the request carried
 * the real refresh token and the answer is a success, its new real
 * tokens are taken out (renew_take) and the phantoms renewed.  resp is
 * framed for the body to send, renew_body(r, true).  Returns 0, or -1
 * with *cause and *hint (caller frees) when the answer must not reach
 * the sandbox: coded, not JSON, or holding a real value still.
 */
int
renew_answer(struct renew *r, struct http_response *resp, char **cause,
    char **hint)
{
	struct evbuffer	*b = r->rw_body[1];
	const char	*name = r->rw_px->px_phantoms[r->rw_ph].ph_file;
	char		**fresh, **put;
	json_t		*doc = NULL;
	size_t		 j, n = r->rw_px->px_nphantoms;
	int		 rc = -1;

	*cause = *hint = NULL;
	fresh = xcalloc(n, sizeof(*fresh));
	put = xcalloc(n, sizeof(*put));
	if (r->rw_filled && resp->hs_status / 100 == 2) {
		if ((doc = renew_parse(b)) == NULL) {
			xasprintf(cause, "the token endpoint's answer to the "
			    "refresh of %s is not a JSON object (or is coded), "
			    "so its new tokens cannot be kept out of the "
			    "sandbox", name);
			goto out;
		}
		if (renew_take(r, doc, fresh, put) > 0)
			renew_dump(b, doc);
	}
	if (renew_leaks(r, b, fresh, n)) {
		xasprintf(cause, "the token endpoint's answer to a refresh "
		    "of %s holds a real token where cordon cannot put a "
		    "placeholder", name);
		goto out;
	}
	for (j = 0; j < n && fresh[j] == NULL; j++)
		;
	if (j < n)
		renew_commit(r, fresh, put);
	renew_frame(&resp->hs_headers, &resp->hs_nheaders,
	    evbuffer_get_length(b));
	resp->hs_body = HTTP_BODY_LENGTH;
	resp->hs_length = evbuffer_get_length(b);
	rc = 0;
out:
	if (rc == -1)
		xasprintf(hint, "the sandbox got this refusal in place of the "
		    "answer; run the agent once on the host to refresh its "
		    "login there");
	for (j = 0; j < n; j++) {
		if (fresh[j] != NULL) {
			explicit_bzero(fresh[j], strlen(fresh[j]));
			free(fresh[j]);
		}
		free(put[j]);
	}
	free(fresh);
	free(put);
	json_decref(doc);
	return rc;
}
