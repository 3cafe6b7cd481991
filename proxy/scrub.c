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
 * seen; its trailers are dropped.  Any SCRUB_PIECE bytes in a row of a
 * value are masked too, wherever they are, so that an origin that
 * echoes a value in pieces (two header lines, two parts, two frames)
 * does not hand over every piece.  A match split across two reads is
 * seen too: a part begun in the bytes sent last is masked from where
 * the read begins, and an end that may go on into a value is held back
 * until more come or the body ends.  A compressed answer cannot be
 * searched byte by byte: the request that carried a real value asked
 * for none (inspect_phantom_apply), and a compressed answer to it is
 * refused (scrub_head).  A WebSocket's server frames go through as a
 * stream (scrub_stream), nothing held back.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "proxy/proxy.h"

/* The shortest part of a real value masked wherever it is. */
#define SCRUB_PIECE	8
#define SCRUB_BLOOM	(64 * 1024)	/* bits: one L1-sized table */
/*
 * Each SCRUB_PIECE bytes in a row hold SCRUB_QUAD bytes that begin at a
 * multiple of SCRUB_STRIDE, so the scan looks up one of those in a
 * table of the values' own, at every SCRUB_STRIDE-th byte, and only
 * where it is found the parts around it: a fifth of the looks.
 */
#define SCRUB_QUAD	4
#define SCRUB_STRIDE	(SCRUB_PIECE - SCRUB_QUAD + 1)

/*
 * A form of a real value, and the same form of its placeholder;
 * sf_secret is where the bytes that depend on the value begin (Basic's
 * base64 starts with the user's name, which is no secret).
 */
struct scrub_form {
	char			*sf_real;	/* wiped when freed */
	size_t			 sf_len;
	size_t			 sf_secret;
	char			*sf_put;
	size_t			 sf_ph;		/* whose: an index in sc_ph */
};

/* A part of SCRUB_PIECE bytes of a form's secret, and whose it is. */
struct scrub_gram {
	uint64_t		 sg_bytes;
	size_t			 sg_ph;
};

struct scrub {
	const struct phantom	*sc_ph;		/* borrowed: the proxy's */
	size_t			 sc_n;
	struct scrub_form	*sc_forms;
	size_t			 sc_nforms;
	struct scrub_gram	*sc_grams;	/* sorted; wiped when freed */
	size_t			 sc_ngrams;
	uint64_t		*sc_bloom;	/* SCRUB_BLOOM bits of them */
	uint64_t		*sc_quads;	/* ... and of their quads */
	bool			 sc_filled;	/* the request carried one */
	bool			 sc_chunked;	/* the body is re-chunked */
	struct evbuffer		*sc_tail;	/* body bytes not sent yet */
	unsigned char		 sc_sent[SCRUB_PIECE - 1]; /* the last */
	size_t			 sc_nsent;	/* bytes sent, at most 7 */
	uint64_t		*sc_seen;	/* per phantom: values masked */
	uint64_t		*sc_parts;	/* ... and parts of them */
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
scrub_form_add(struct scrub *s, size_t j, char *real, size_t secret,
    char *put)
{
	struct scrub_form	*f;

	s->sc_forms = xreallocarray(s->sc_forms, s->sc_nforms + 1,
	    sizeof(*s->sc_forms));
	f = &s->sc_forms[s->sc_nforms++];
	f->sf_real = real;
	f->sf_len = strlen(real);
	f->sf_secret = secret < f->sf_len ? secret : f->sf_len;
	f->sf_put = put;
	f->sf_ph = j;
}

/* The slot of the bloom filter of a part. */
static size_t
scrub_bloom_bit(uint64_t g)
{
	return (size_t)((g * 0x9e3779b97f4a7c15ULL) >> 48);
}

/* The slot of the SCRUB_QUAD bytes at p in sc_quads. */
static size_t
scrub_quad_bit(const unsigned char *p)
{
	uint32_t	 q;

	memcpy(&q, p, SCRUB_QUAD);
	return (size_t)((q * 0x9e3779b1U) >> 16);
}

/* Sets bit k of the bloom filter b. */
static void
scrub_bloom_set(uint64_t *b, size_t k)
{
	b[k / 64] |= 1ULL << (k % 64);
}

static bool
scrub_bloom_has(const uint64_t *b, size_t k)
{
	return (b[k / 64] & (1ULL << (k % 64))) != 0;
}

static int
scrub_gram_cmp(const void *a, const void *b)
{
	const struct scrub_gram	*x = a, *y = b;

	return x->sg_bytes < y->sg_bytes ? -1 : x->sg_bytes > y->sg_bytes;
}

/*
 * Every part of SCRUB_PIECE bytes of each form's secret, sorted, and
 * the bloom filter that lets most bytes of an answer pass at one look.
 */
static void
scrub_grams(struct scrub *s)
{
	const struct scrub_form	*f;
	struct scrub_gram	*g;
	size_t			 i, k;

	for (i = 0; i < s->sc_nforms; i++) {
		f = &s->sc_forms[i];
		for (k = f->sf_secret; k + SCRUB_PIECE <= f->sf_len; k++) {
			s->sc_grams = xreallocarray(s->sc_grams,
			    s->sc_ngrams + 1, sizeof(*s->sc_grams));
			g = &s->sc_grams[s->sc_ngrams++];
			memcpy(&g->sg_bytes, f->sf_real + k, SCRUB_PIECE);
			g->sg_ph = f->sf_ph;
		}
	}
	if (s->sc_ngrams > 0)
		qsort(s->sc_grams, s->sc_ngrams, sizeof(*s->sc_grams),
		    scrub_gram_cmp);
	s->sc_bloom = xcalloc(SCRUB_BLOOM / 64, sizeof(*s->sc_bloom));
	s->sc_quads = xcalloc(SCRUB_BLOOM / 64, sizeof(*s->sc_quads));
	for (i = 0; i < s->sc_ngrams; i++) {
		scrub_bloom_set(s->sc_bloom,
		    scrub_bloom_bit(s->sc_grams[i].sg_bytes));
		for (k = 0; k + SCRUB_QUAD <= SCRUB_PIECE; k++)
			scrub_bloom_set(s->sc_quads, scrub_quad_bit(
			    (const unsigned char *)&s->sc_grams[i].sg_bytes +
			    k));
	}
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
		/* Base64 char k holds bits 6k..6k+5 of "user:value". */
		scrub_form_add(s, j, xstrdup(real + 6),
		    (strlen(ph->ph_user) + 1) * 8 / 6, xstrdup(put + 6));
		explicit_bzero(real, strlen(real));
		free(real);
		free(put);
	}
	/*
	 * A JWT's placeholder holds its header and claims, which answers
	 * may quote: only its signature is looked for in parts.
	 */
	for (j = 0; j < s->sc_n; j++) {
		ph = &s->sc_ph[j];
		if (scrub_wanted(ph))
			scrub_form_add(s, j, xstrdup(ph->ph_value), ph->ph_jwt ?
			    str_jwt_signature(ph->ph_value) : 0,
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
	s->sc_parts = xcalloc(n, sizeof(*s->sc_parts));
	scrub_forms(s);
	scrub_grams(s);
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
	if (s->sc_ngrams > 0)
		explicit_bzero(s->sc_grams, s->sc_ngrams *
		    sizeof(*s->sc_grams));
	free(s->sc_grams);
	free(s->sc_bloom);
	free(s->sc_quads);
	explicit_bzero(s->sc_sent, sizeof(s->sc_sent));
	free(s->sc_seen);
	free(s->sc_parts);
	free(s);
}

/*
 * *text with every form of a real value replaced by the same form of
 * its placeholder (*text is wiped, freed and replaced when one was
 * found), then what is left of parts of one masked (scrub_pieces).
 */
static void	scrub_pieces(struct scrub *, unsigned char *, size_t,
		    size_t, const unsigned char *, size_t);

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
	scrub_pieces(s, (unsigned char *)*text, strlen(*text), strlen(*text),
	    NULL, 0);
}

/*
 * Whether a body coded by hh (Content-Encoding, Transfer-Encoding,
 * Sec-WebSocket-Extensions) could be searched byte by byte: identity or
 * chunked only, and frames with no extension.
 */
static bool
scrub_plain(const struct http_header *hh)
{
	if (strcasecmp(hh->hh_name, "Content-Encoding") == 0)
		return strcasecmp(hh->hh_value, "identity") == 0;
	if (strcasecmp(hh->hh_name, "Transfer-Encoding") == 0)
		return strcasecmp(hh->hh_value, "chunked") == 0;
	/* permessage-deflate: the frames compressed (RFC 7692). */
	return strcasecmp(hh->hh_name, "Sec-WebSocket-Extensions") != 0;
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
		if (!s->sc_filled || (resp->hs_body == HTTP_BODY_NONE &&
		    !resp->hs_websocket) || scrub_plain(hh))
			continue;
		shown = str_escape(hh->hh_value, strlen(hh->hh_value));
		xasprintf(cause, "the answer to a request carrying a "
		    "credential's real value is coded (%s: %s), so the proxy "
		    "cannot take the value out of it", hh->hh_name, shown);
		xasprintf(hint, "the proxy asked for no coding "
		    "(Accept-Encoding: identity, no Sec-WebSocket-Extensions) "
		    "and the server coded its answer anyway; leave this host "
		    "out of \"credentials\", or its path out of the "
		    "network.inspect entry");
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
 * Whether the SCRUB_PIECE bytes at p are a part of a real value's
 * secret; *ph says whose.
 */
static bool
scrub_gram_find(const struct scrub *s, const unsigned char *p, size_t *ph)
{
	struct scrub_gram	 key, *g;
	size_t			 k;

	memcpy(&key.sg_bytes, p, SCRUB_PIECE);
	k = scrub_bloom_bit(key.sg_bytes);
	if (!scrub_bloom_has(s->sc_bloom, k))
		return false;
	if ((g = bsearch(&key, s->sc_grams, s->sc_ngrams, sizeof(*g),
	    scrub_gram_cmp)) == NULL)
		return false;
	*ph = g->sg_ph;
	return true;
}

/* Masks p[from, to) with '*', as far as lim. */
static void
scrub_fill(unsigned char *p, size_t from, size_t to, size_t lim)
{
	if (to > lim)
		to = lim;
	if (from < to)
		memset(p + from, '*', to - from);
}

/*
 * Masks with '*' each run of the n bytes at p that is made of parts of
 * SCRUB_PIECE bytes or more of a real value, those begun in the nsent
 * bytes sent just before (sent) included, as far as the first lim: the
 * rest is held back, and scanned again as it was with what comes next.
 * An origin that echoes a value cut in pieces (over two header lines,
 * two parts of a multipart body, two frames) would otherwise give the
 * sandbox every piece.
 */
static void
scrub_pieces(struct scrub *s, unsigned char *p, size_t n, size_t lim,
    const unsigned char *sent, size_t nsent)
{
	unsigned char	 edge[2 * (SCRUB_PIECE - 1)];
	size_t		 i, q, m, from = 0, to = 0, ph = 0, end;
	bool		 run = false;

	if (s->sc_ngrams == 0)
		return;
	/* The parts that begin in what was sent and end in p. */
	m = n < SCRUB_PIECE - 1 ? n : SCRUB_PIECE - 1;
	if (nsent > 0)
		memcpy(edge, sent, nsent);
	memcpy(edge + nsent, p, m);
	for (i = 0; i < nsent && i + SCRUB_PIECE <= nsent + m; i++) {
		if (!scrub_gram_find(s, edge + i, &ph))
			continue;
		to = i + SCRUB_PIECE - nsent;
		if (!run)
			s->sc_parts[ph]++;
		run = true;
	}
	for (q = 0; q + SCRUB_QUAD <= n; q += SCRUB_STRIDE) {
		if (!scrub_bloom_has(s->sc_quads, scrub_quad_bit(p + q)))
			continue;
		/* The parts that hold the quad at q. */
		for (i = q < SCRUB_STRIDE - 1 ? 0 : q - (SCRUB_STRIDE - 1);
		    i <= q && i + SCRUB_PIECE <= n; i++) {
			if (!scrub_gram_find(s, p + i, &end))
				continue;
			if (!run || i > to) {
				/* A new run: the last, over, is masked now. */
				if (run)
					scrub_fill(p, from, to, lim);
				from = i;
				s->sc_parts[end]++;
			}
			to = i + SCRUB_PIECE;
			run = true;
		}
	}
	if (run)
		scrub_fill(p, from, to, lim);
	explicit_bzero(edge, sizeof(edge));
}

/* Keeps the last of the n bytes at p, sent, as sc_sent. */
static void
scrub_sent(struct scrub *s, const unsigned char *p, size_t n)
{
	size_t	 keep = sizeof(s->sc_sent), drop;

	if (n >= keep) {
		memcpy(s->sc_sent, p + n - keep, keep);
		s->sc_nsent = keep;
		return;
	}
	drop = s->sc_nsent + n > keep ? s->sc_nsent + n - keep : 0;
	memmove(s->sc_sent, s->sc_sent + drop, s->sc_nsent - drop);
	memcpy(s->sc_sent + s->sc_nsent - drop, p, n);
	s->sc_nsent = s->sc_nsent - drop + n;
}

/*
 * Masks the len bytes at p, the first n of which are sent next: they
 * are kept, as they were before, for the next scan to see a part that
 * goes on from them.
 */
static void
scrub_scan(struct scrub *s, unsigned char *p, size_t len, size_t n)
{
	unsigned char	 was[SCRUB_PIECE - 1];
	size_t		 k = n < sizeof(was) ? n : sizeof(was);

	memcpy(was, p + n - k, k);
	scrub_mask(s, p, len);
	scrub_pieces(s, p, len, n, s->sc_sent, s->sc_nsent);
	scrub_sent(s, was, k);
	explicit_bzero(was, sizeof(was));
}

/*
 * How many of the last of the len bytes at p to hold back until more
 * come: the longest end, under SCRUB_PIECE bytes, that is a part of a
 * real value's secret, and so may go on into one.  An end that does
 * not (most answers end a line, a brace, a space) is not held.
 */
static size_t
scrub_hold(const struct scrub *s, const unsigned char *p, size_t len)
{
	const struct scrub_form	*f;
	size_t			 t, i;

	for (t = len < SCRUB_PIECE - 1 ? len : SCRUB_PIECE - 1; t > 0; t--)
		for (i = 0; i < s->sc_nforms; i++) {
			f = &s->sc_forms[i];
			if (memmem(f->sf_real + f->sf_secret, f->sf_len -
			    f->sf_secret, p + len - t, t) != NULL)
				return t;
		}
	return 0;
}

/*
 * Sends on what s holds back, but an end that may go on into a real
 * value (scrub_hold), or all of it when the body is over (last), in a
 * chunk of its own when re-chunking, then the last chunk.
 */
static void
scrub_emit(struct scrub *s, struct evbuffer *out, bool last)
{
	size_t		 len = evbuffer_get_length(s->sc_tail), n = 0;
	unsigned char	*p;

	if (len > 0) {
		p = evbuffer_pullup(s->sc_tail, -1);
		n = last ? len : len - scrub_hold(s, p, len);
		scrub_scan(s, p, len, n);
	}
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

/*
 * Moves all of in to out, scrubbed when s is not NULL: the frames of a
 * WebSocket from its server.  Nothing is held back: a frame must reach
 * its client whole, whatever comes next, so a part of a value cut at
 * the end of a read is masked from the read after, not before.
 */
void
scrub_stream(struct scrub *s, struct evbuffer *in, struct evbuffer *out)
{
	size_t		 len = evbuffer_get_length(in);
	unsigned char	*p;

	if (s != NULL && len > 0) {
		p = evbuffer_pullup(in, -1);
		scrub_scan(s, p, len, len);
	}
	evbuffer_add_buffer(out, in);
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
		if (s->sc_seen[j] == 0 && s->sc_parts[j] == 0)
			continue;
		if (s->sc_seen[j] == 0)
			xasprintf(&w, "parts of the real value of %s came "
			    "back in the answer %llu time%s; masked",
			    proxy_phantom_name(&s->sc_ph[j]),
			    (unsigned long long)s->sc_parts[j],
			    s->sc_parts[j] == 1 ? "" : "s");
		else if (s->sc_parts[j] == 0)
			xasprintf(&w, "the real value of %s came back in the "
			    "answer %llu time%s; taken out",
			    proxy_phantom_name(&s->sc_ph[j]),
			    (unsigned long long)s->sc_seen[j],
			    s->sc_seen[j] == 1 ? "" : "s");
		else
			xasprintf(&w, "the real value of %s came back in the "
			    "answer %llu time%s whole and %llu in parts; "
			    "taken out", proxy_phantom_name(&s->sc_ph[j]),
			    (unsigned long long)s->sc_seen[j],
			    s->sc_seen[j] == 1 ? "" : "s",
			    (unsigned long long)s->sc_parts[j]);
		log_warnx("proxy: %s", w);
		s->sc_seen[j] = s->sc_parts[j] = 0;
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
