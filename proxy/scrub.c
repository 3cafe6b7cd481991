/*
 * scrub.c: the real values of phantom credentials kept out of the
 * answers the proxy passes back to the sandbox.  An endpoint of an
 * allowed host that echoes the request (httpbin's /headers, a debug
 * route, an error page quoting the Authorization header) would otherwise
 * hand the sandbox the very token it was never to hold.
 *
 * What is looked for is every form in which the proxy sent a real value
 * (scrub_forms): the value itself, which the formatted header ("Bearer
 * v", the whole "%s") and Basic's "user:v" hold, and for Basic the
 * base64 of "user:v", which "Basic ..." holds.  In a head (status line,
 * header names and values) a form becomes the same form of the
 * placeholder, what the sandbox sent: the proxy writes the head anew, so
 * lengths are free.  In a body it becomes '*' as many times as it has
 * bytes: the length the head announced (Content-Length) has left
 * already, so the body must keep it.  A chunked body is taken apart and
 * sent on in chunks of our own, so a value split across two chunks is
 * seen; its trailers are dropped.  A match split across two reads is
 * seen too: the last (longest form - 1) bytes are held back until more
 * come or the body ends.  A compressed answer cannot be searched byte
 * by byte: the request that carried a real value asked for none
 * (inspect_phantom_apply), and a compressed answer to it is refused
 * (scrub_head).
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "log.h"
#include "proxy.h"
#include "util.h"
#include "xmalloc.h"

/* A form of a real value, and the same form of its placeholder. */
struct scrub_form {
	char			*sf_real;	/* wiped when freed */
	size_t			 sf_len;
	char			*sf_put;
	size_t			 sf_ph;		/* whose: an index in sc_ph */
};

struct scrub {
	const struct phantom	*sc_ph;		/* borrowed: the proxy's */
	size_t			 sc_n;
	struct scrub_form	*sc_forms;
	size_t			 sc_nforms;
	size_t			 sc_keep;	/* longest form - 1 */
	bool			 sc_filled;	/* the request carried one */
	bool			 sc_chunked;	/* the body is re-chunked */
	struct evbuffer		*sc_tail;	/* body bytes not sent yet */
	uint64_t		*sc_seen;	/* per phantom: values masked */
};

/* Whether ph[j] has a real value to look for. */
static bool
scrub_wanted(const struct phantom *ph)
{
	return ph->ph_value != NULL && ph->ph_value[0] != '\0' &&
	    ph->ph_placeholder != NULL;
}

/* Adds real (taken) and put (taken), a form of ph j, to s. */
static void
scrub_form_add(struct scrub *s, size_t j, char *real, char *put)
{
	struct scrub_form	*f;

	s->sc_forms = xreallocarray(s->sc_forms, s->sc_nforms + 1,
	    sizeof(*s->sc_forms));
	f = &s->sc_forms[s->sc_nforms++];
	f->sf_real = real;
	f->sf_len = strlen(real);
	f->sf_put = put;
	f->sf_ph = j;
	if (f->sf_len > s->sc_keep + 1)
		s->sc_keep = f->sf_len - 1;
}

/*
 * The forms of s's real values, the longest first where one may hold
 * another: for Basic the base64 of "user:value" (inspect_phantom_format's after
 * "Basic "), then for each the value itself.  Any other form the proxy
 * sent holds one of these.
 */
static void
scrub_forms(struct scrub *s)
{
	const struct phantom	*ph;
	char			*real, *put;
	size_t			 j;

	for (j = 0; j < s->sc_n; j++) {
		ph = &s->sc_ph[j];
		if (!scrub_wanted(ph) || ph->ph_user == NULL)
			continue;
		real = inspect_phantom_format(ph, ph->ph_value);
		put = inspect_phantom_format(ph, ph->ph_placeholder);
		scrub_form_add(s, j, xstrdup(real + 6), xstrdup(put + 6));
		explicit_bzero(real, strlen(real));
		free(real);
		free(put);
	}
	for (j = 0; j < s->sc_n; j++) {
		ph = &s->sc_ph[j];
		if (scrub_wanted(ph))
			scrub_form_add(s, j, xstrdup(ph->ph_value),
			    xstrdup(ph->ph_placeholder));
	}
}

/*
 * A scrubber for the answer to one request, looking for the real values
 * of the n phantoms at ph (borrowed: they outlive it); filled says the
 * request carried one.  NULL when there is nothing to look for.
 */
struct scrub *
scrub_new(const struct phantom *ph, size_t n, bool filled)
{
	struct scrub	*s;
	size_t		 j;

	for (j = 0; j < n && !scrub_wanted(&ph[j]); j++)
		;
	if (j == n)
		return NULL;
	s = xcalloc(1, sizeof(*s));
	s->sc_ph = ph;
	s->sc_n = n;
	s->sc_filled = filled;
	s->sc_seen = xcalloc(n, sizeof(*s->sc_seen));
	scrub_forms(s);
	if ((s->sc_tail = evbuffer_new()) == NULL)
		fatalx("proxy: evbuffer_new failed");
	return s;
}

/* Frees s (or NULL), wiping what it held back. */
void
scrub_free(struct scrub *s)
{
	size_t	 len, i;

	if (s == NULL)
		return;
	if ((len = evbuffer_get_length(s->sc_tail)) > 0)
		explicit_bzero(evbuffer_pullup(s->sc_tail, -1), len);
	evbuffer_free(s->sc_tail);
	for (i = 0; i < s->sc_nforms; i++) {
		explicit_bzero(s->sc_forms[i].sf_real, s->sc_forms[i].sf_len);
		free(s->sc_forms[i].sf_real);
		free(s->sc_forms[i].sf_put);
	}
	free(s->sc_forms);
	free(s->sc_seen);
	free(s);
}

/*
 * *text with every form of a real value replaced by the same form of
 * its placeholder (*text is wiped, freed and replaced when one was
 * found).
 */
static void
scrub_string(struct scrub *s, char **text)
{
	const char	*v, *ph, *at, *from;
	char		*out, *o;
	size_t		 i, vlen, phlen, count;

	for (i = 0; i < s->sc_nforms; i++) {
		v = s->sc_forms[i].sf_real;
		vlen = s->sc_forms[i].sf_len;
		ph = s->sc_forms[i].sf_put;
		phlen = strlen(ph);
		count = 0;
		for (from = *text; (at = strstr(from, v)) != NULL;
		    from = at + vlen)
			count++;
		if (count == 0)
			continue;
		o = out = xmalloc(strlen(*text) - count * vlen +
		    count * phlen + 1);
		for (from = *text; (at = strstr(from, v)) != NULL;
		    from = at + vlen) {
			memcpy(o, from, (size_t)(at - from));
			o += at - from;
			memcpy(o, ph, phlen);
			o += phlen;
		}
		strcpy(o, from);
		s->sc_seen[s->sc_forms[i].sf_ph] += count;
		explicit_bzero(*text, strlen(*text));
		free(*text);
		*text = out;
	}
}

/*
 * Whether a body coded by hh (Content-Encoding, Transfer-Encoding) could
 * be searched byte by byte: identity or chunked only.
 */
static bool
scrub_plain(const struct http_header *hh)
{
	if (strcasecmp(hh->hh_name, "Content-Encoding") == 0)
		return strcasecmp(hh->hh_value, "identity") == 0;
	if (strcasecmp(hh->hh_name, "Transfer-Encoding") == 0)
		return strcasecmp(hh->hh_value, "chunked") == 0;
	return true;
}

/*
 * Scrubs the head of an answer (s may be NULL: nothing to do) and makes
 * s ready for its body.  Returns 0, or -1 with *cause and *hint (caller
 * frees) for an answer that must not reach the sandbox: a coded body
 * answering a request that carried a real value.
 */
int
scrub_head(struct scrub *s, struct http_response *resp, char **cause,
    char **hint)
{
	struct http_header	*hh;
	char			*shown;
	size_t			 i;

	*cause = *hint = NULL;
	if (s == NULL)
		return 0;
	if (resp->hs_reason != NULL)
		scrub_string(s, &resp->hs_reason);
	for (i = 0; i < resp->hs_nheaders; i++) {
		hh = &resp->hs_headers[i];
		scrub_string(s, &hh->hh_name);
		scrub_string(s, &hh->hh_value);
		if (!s->sc_filled || resp->hs_body == HTTP_BODY_NONE ||
		    scrub_plain(hh))
			continue;
		shown = str_escape(hh->hh_value, strlen(hh->hh_value));
		xasprintf(cause, "the answer to a request carrying a "
		    "credential's real value is coded (%s: %s), so the proxy "
		    "cannot take the value out of it", hh->hh_name, shown);
		xasprintf(hint, "the proxy asked for no coding "
		    "(Accept-Encoding: identity) and the server coded its "
		    "answer anyway; leave this host out of \"credentials\", "
		    "or its path out of the network.inspect entry");
		free(shown);
		return -1;
	}
	s->sc_chunked = resp->hs_body == HTTP_BODY_CHUNKED;
	return 0;
}

/* Masks every form of a real value in the n bytes at p with '*'. */
static void
scrub_mask(struct scrub *s, unsigned char *p, size_t n)
{
	const char	*v;
	unsigned char	*at, *from;
	size_t		 i, vlen;

	for (i = 0; i < s->sc_nforms; i++) {
		v = s->sc_forms[i].sf_real;
		vlen = s->sc_forms[i].sf_len;
		for (from = p; (at = memmem(from, n - (size_t)(from - p), v,
		    vlen)) != NULL; from = at + vlen) {
			memset(at, '*', vlen);
			s->sc_seen[s->sc_forms[i].sf_ph]++;
		}
	}
}

/*
 * Sends on what s holds back but the last sc_keep bytes, or all of it
 * when the body is over (last), in a chunk of its own when re-chunking,
 * then the last chunk.
 */
static void
scrub_emit(struct scrub *s, struct evbuffer *out, bool last)
{
	size_t	 len = evbuffer_get_length(s->sc_tail), n;

	if (len > 0)
		scrub_mask(s, evbuffer_pullup(s->sc_tail, -1), len);
	n = last ? len : len > s->sc_keep ? len - s->sc_keep : 0;
	if (n > 0) {
		if (s->sc_chunked)
			evbuffer_add_printf(out, "%zx\r\n", n);
		evbuffer_remove_buffer(s->sc_tail, out, n);
		if (s->sc_chunked)
			evbuffer_add(out, "\r\n", 2);
	}
	if (last && s->sc_chunked)
		evbuffer_add(out, "0\r\n\r\n", 5);
}

/*
 * Moves the body bytes among the first len of in (up to where the body
 * hb follows ends) to out, scrubbed when s is not NULL; *done says the
 * body ended.  Returns how many bytes of in were used, or -1 for a
 * malformed body.
 */
ssize_t
scrub_body(struct scrub *s, struct http_body *hb, struct evbuffer *in,
    struct evbuffer *out, size_t len, bool *done)
{
	const char	*buf = (const char *)evbuffer_pullup(in, (ssize_t)len);
	size_t		 used = 0;
	ssize_t		 n;
	bool		 data;

	if (s == NULL) {
		if ((n = http_body_scan(hb, buf, len, done)) > 0)
			evbuffer_remove_buffer(in, out, (size_t)n);
		return n;
	}
	*done = false;
	while (used < len && !*done) {
		if ((n = http_body_part(hb, buf + used, len - used, &data,
		    done)) < 0)
			return -1;
		if (n == 0)
			break;
		/* Chunk framing is dropped: scrub_emit writes its own. */
		if (data || !s->sc_chunked)
			evbuffer_add(s->sc_tail, buf + used, (size_t)n);
		used += (size_t)n;
	}
	evbuffer_drain(in, used);
	scrub_emit(s, out, *done);
	return (ssize_t)used;
}

/* The end of a close-delimited body: what s holds back goes out. */
void
scrub_end(struct scrub *s, struct evbuffer *out)
{
	if (s != NULL)
		scrub_emit(s, out, true);
}

/*
 * Adds to *warning (and standard error) how many real values were taken
 * out of the answer, once; nothing when none were.
 */
void
scrub_warn(struct scrub *s, char **warning)
{
	char	*w, *both;
	size_t	 j;

	for (j = 0; s != NULL && j < s->sc_n; j++) {
		if (s->sc_seen[j] == 0)
			continue;
		xasprintf(&w, "the real value of %s came back in the answer "
		    "%llu time%s; taken out", proxy_phantom_name(&s->sc_ph[j]),
		    (unsigned long long)s->sc_seen[j],
		    s->sc_seen[j] == 1 ? "" : "s");
		log_warnx("proxy: %s", w);
		s->sc_seen[j] = 0;
		if (*warning == NULL) {
			*warning = w;
			continue;
		}
		xasprintf(&both, "%s; %s", *warning, w);
		free(*warning);
		free(w);
		*warning = both;
	}
}
