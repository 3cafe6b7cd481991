/*
 * knownhosts.c: the user's known_hosts files, read by cordon's agent
 * (agent.c) to learn whether a host key is known under the name of the
 * destination the proxy connected to for a session.
 *
 * A line is [marker] hosts keytype base64-key [comment].  hosts is a
 * comma-separated list of patterns: a name, "[name]:port" for a port
 * other than 22, '*' and '?' wildcards, '!' to exclude, or one hashed
 * entry "|1|salt|HMAC-SHA1(salt, name)" (HashKnownHosts).  A name is
 * known for a key when a line with that key matches it and no '!'
 * pattern of the line does.  The agent asks about one name: where the
 * proxy connected for the session (knownhosts_known); the names a key
 * is listed under by name (knownhosts_names) only say more in a
 * refusal.
 *
 * Markers: a @revoked key is never bound; @cert-authority lines are
 * skipped, since nothing here checks a host certificate.  Lines that do
 * not parse are skipped, as ssh does.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sshagent/sshagent.h"

enum kh_marker {
	KH_PLAIN,
	KH_REVOKED,
	KH_CA
};

struct kh_line {
	char		*kl_hosts;	/* the patterns, lower case */
	uint8_t		*kl_key;	/* the key's blob */
	size_t		 kl_keylen;
	enum kh_marker	 kl_marker;
};

struct knownhosts {
	struct kh_line	*kh_v;
	size_t		 kh_n;
};

/* Decodes base64 text; returns a new buffer, or NULL. */
static uint8_t *
kh_b64(const char *s, size_t len, size_t *outlen)
{
	EVP_ENCODE_CTX	*ctx;
	uint8_t		*out;
	int		 n, m;

	if (len == 0 || len > INT32_MAX / 2 || (ctx = EVP_ENCODE_CTX_new()) ==
	    NULL)
		return NULL;
	out = xmalloc(len / 4 * 3 + 4);
	EVP_DecodeInit(ctx);
	if (EVP_DecodeUpdate(ctx, out, &n, (const unsigned char *)s,
	    (int)len) == -1 || EVP_DecodeFinal(ctx, out + n, &m) != 1) {
		free(out);
		out = NULL;
	} else
		*outlen = (size_t)(n + m);
	EVP_ENCODE_CTX_free(ctx);
	return out;
}

/* The next field of a line at *p, skipping blanks; NULL at its end. */
static char *
kh_field(char **p)
{
	char	*s = *p, *start;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0')
		return NULL;
	start = s;
	while (*s != '\0' && *s != ' ' && *s != '\t')
		s++;
	if (*s != '\0')
		*s++ = '\0';
	*p = s;
	return start;
}

/* Adds the line (NUL-terminated, writable) to kh when it parses. */
static void
kh_add_line(struct knownhosts *kh, char *line)
{
	struct kh_line	 kl;
	struct agent_rd	 r;
	const uint8_t	*type;
	char		*p = line, *hosts, *ktype, *b64, *c;
	size_t		 typelen;

	memset(&kl, 0, sizeof(kl));
	if ((hosts = kh_field(&p)) == NULL || hosts[0] == '#')
		return;
	if (hosts[0] == '@') {
		if (strcmp(hosts, "@revoked") == 0)
			kl.kl_marker = KH_REVOKED;
		else if (strcmp(hosts, "@cert-authority") == 0)
			kl.kl_marker = KH_CA;
		else
			return;
		if ((hosts = kh_field(&p)) == NULL)
			return;
	}
	if ((ktype = kh_field(&p)) == NULL || (b64 = kh_field(&p)) == NULL ||
	    (kl.kl_key = kh_b64(b64, strlen(b64), &kl.kl_keylen)) == NULL)
		return;
	/* The blob's own type must be the one the line names. */
	r.ar_p = kl.kl_key;
	r.ar_len = kl.kl_keylen;
	if (agentmsg_string(&r, &type, &typelen) == -1 ||
	    !agentmsg_is(type, typelen, ktype) ||
	    kh->kh_n >= KNOWNHOSTS_LINES_MAX) {
		free(kl.kl_key);
		return;
	}
	kl.kl_hosts = xstrdup(hosts);
	for (c = kl.kl_hosts; *c != '\0'; c++)
		if (strncmp(c, "|1|", 3) != 0)
			*c = (char)tolower((unsigned char)*c);
		else
			c += strcspn(c, ",") - 1;	/* base64 keeps case */
	kh->kh_v = xreallocarray(kh->kh_v, kh->kh_n + 1, sizeof(*kh->kh_v));
	kh->kh_v[kh->kh_n++] = kl;
}

/* Adds the lines of a buffer to kh. */
void
knownhosts_parse(struct knownhosts *kh, const char *buf, size_t len)
{
	const char	*end = buf + len, *nl;
	char		*line;
	size_t		 n;

	while (buf < end) {
		if ((nl = memchr(buf, '\n', (size_t)(end - buf))) == NULL)
			nl = end;
		if ((size_t)(nl - buf) <= KNOWNHOSTS_LINE_MAX) {
			line = xstrndup(buf, (size_t)(nl - buf));
			if ((n = strlen(line)) > 0 && line[n - 1] == '\r')
				line[n - 1] = '\0';
			kh_add_line(kh, line);
			free(line);
		}
		buf = nl + 1;
	}
}

struct knownhosts *
knownhosts_new(void)
{
	return xcalloc(1, sizeof(struct knownhosts));
}

/*
 * Adds the file at path (a missing one adds nothing).  Returns 0, or -1
 * with *cause set when it cannot be read or is too big.
 */
int
knownhosts_load(struct knownhosts *kh, const char *path, char **cause)
{
	struct stat	 st;
	char		*buf;
	ssize_t		 n;
	size_t		 off = 0;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		xasprintf(cause, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > KNOWNHOSTS_FILE_MAX) {
		xasprintf(cause, "%s: not a file, or bigger than %d bytes",
		    path, KNOWNHOSTS_FILE_MAX);
		close(fd);
		return -1;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (off < (size_t)st.st_size && ((n = read(fd, buf + off,
	    (size_t)st.st_size - off)) > 0 || (n == -1 && errno == EINTR)))
		off += n > 0 ? (size_t)n : 0;
	close(fd);
	knownhosts_parse(kh, buf, off);
	free(buf);
	return 0;
}

void
knownhosts_free(struct knownhosts *kh)
{
	size_t	 i;

	if (kh == NULL)
		return;
	for (i = 0; i < kh->kh_n; i++) {
		free(kh->kh_v[i].kl_hosts);
		free(kh->kh_v[i].kl_key);
	}
	free(kh->kh_v);
	free(kh);
}

/* '*' and '?' wildcards over name, without recursion. */
static bool
kh_glob(const char *pat, size_t plen, const char *name)
{
	const char	*star = NULL, *retry = NULL;
	size_t		 i = 0;

	while (*name != '\0') {
		if (i < plen && (pat[i] == '?' || pat[i] == *name)) {
			i++;
			name++;
		} else if (i < plen && pat[i] == '*') {
			star = pat + i++;
			retry = name;
		} else if (star != NULL) {
			i = (size_t)(star - pat) + 1;
			name = ++retry;
		} else
			return false;
	}
	while (i < plen && pat[i] == '*')
		i++;
	return i == plen;
}

/* A hashed pattern "|1|salt|hash" (len bytes) against name. */
static bool
kh_hashed(const char *pat, size_t len, const char *name)
{
	const char	*bar;
	uint8_t		*salt, *hash, mac[EVP_MAX_MD_SIZE];
	size_t		 saltlen, hashlen;
	unsigned int	 maclen = 0;
	bool		 ok = false;

	pat += 3;
	len -= 3;
	if ((bar = memchr(pat, '|', len)) == NULL)
		return false;
	if ((salt = kh_b64(pat, (size_t)(bar - pat), &saltlen)) == NULL)
		return false;
	hash = kh_b64(bar + 1, len - (size_t)(bar - pat) - 1, &hashlen);
	if (hash != NULL && saltlen == 20 && HMAC(EVP_sha1(), salt,
	    (int)saltlen, (const unsigned char *)name, strlen(name), mac,
	    &maclen) != NULL && maclen == hashlen)
		ok = memcmp(mac, hash, hashlen) == 0;
	free(salt);
	free(hash);
	return ok;
}

/* Whether the line's patterns take name ("host" or "[host]:port"). */
static bool
kh_matches(const struct kh_line *kl, const char *name)
{
	const char	*p = kl->kl_hosts, *pat;
	size_t		 len;
	bool		 neg, hit = false;

	while (*p != '\0') {
		len = strcspn(p, ",");
		pat = p;
		p += len + (p[len] == ',');
		if (len >= 3 && strncmp(pat, "|1|", 3) == 0) {
			hit = hit || kh_hashed(pat, len, name);
			continue;
		}
		if ((neg = pat[0] == '!')) {
			pat++;
			len--;
		}
		if (kh_glob(pat, len, name)) {
			if (neg)
				return false;
			hit = true;
		}
	}
	return hit;
}

/* Adds name to *v unless there or full. */
static void
kh_push(char ***v, size_t *n, const char *name, size_t len)
{
	size_t	 i;

	if (*n >= KNOWNHOSTS_NAMES_MAX)
		return;
	for (i = 0; i < *n; i++)
		if (strlen((*v)[i]) == len && strncmp((*v)[i], name, len) == 0)
			return;
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = xstrndup(name, len);
}

/* Whether a @revoked line has the key. */
bool
knownhosts_revoked(const struct knownhosts *kh, const uint8_t *key,
    size_t len)
{
	size_t	 i;

	for (i = 0; i < kh->kh_n; i++)
		if (kh->kh_v[i].kl_marker == KH_REVOKED &&
		    kh->kh_v[i].kl_keylen == len &&
		    memcmp(kh->kh_v[i].kl_key, key, len) == 0)
			return true;
	return false;
}

/* Whether a plain line with the key takes name ("host", "[host]:port"). */
bool
knownhosts_known(const struct knownhosts *kh, const uint8_t *key,
    size_t keylen, const char *name)
{
	const struct kh_line	*kl;
	char			*lower, *c;
	size_t			 i;
	bool			 hit = false;

	lower = xstrdup(name);
	for (c = lower; *c != '\0'; c++)
		*c = (char)tolower((unsigned char)*c);
	for (i = 0; i < kh->kh_n && !hit; i++) {
		kl = &kh->kh_v[i];
		hit = kl->kl_marker == KH_PLAIN && kl->kl_keylen == keylen &&
		    memcmp(kl->kl_key, key, keylen) == 0 &&
		    kh_matches(kl, lower);
	}
	free(lower);
	return hit;
}

/*
 * The names the key is known under ("host", "[host]:port"): those its
 * lines spell out, and those of cands (lower case, in the same forms)
 * its lines match.  Fills *names (free each, then the array).
 */
void
knownhosts_names(const struct knownhosts *kh, const uint8_t *key,
    size_t keylen, const char *const *cands, size_t ncands, char ***names,
    size_t *nnames)
{
	const struct kh_line	*kl;
	const char		*p;
	char			*one;
	size_t			 i, j, len;

	*names = NULL;
	*nnames = 0;
	for (i = 0; i < kh->kh_n; i++) {
		kl = &kh->kh_v[i];
		if (kl->kl_marker != KH_PLAIN || kl->kl_keylen != keylen ||
		    memcmp(kl->kl_key, key, keylen) != 0)
			continue;
		for (p = kl->kl_hosts; *p != '\0'; p += len + (p[len] == ',')) {
			len = strcspn(p, ",");
			if (len == 0 || strcspn(p, "*?!|") < len)
				continue;
			one = xstrndup(p, len);
			if (kh_matches(kl, one))
				kh_push(names, nnames, p, len);
			free(one);
		}
		for (j = 0; j < ncands; j++)
			if (kh_matches(kl, cands[j]))
				kh_push(names, nnames, cands[j],
				    strlen(cands[j]));
	}
}
