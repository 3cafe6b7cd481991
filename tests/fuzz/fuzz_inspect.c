/*
 * fuzz_inspect.c: what an inspected tunnel does with the sandbox's
 * bytes: an origin-form request head, the path as network.inspect's rules
 * see it, the rules, and the phantom credentials.  Checks that a path the
 * rules admit has no "." or ".." segment, no escaped '/', no ';', no
 * escape left after decoding and no overlong UTF-8, whatever escapes it
 * came in, that a filled credential is exactly the format
 * around the real value in the one header named, and that the real value
 * appears nowhere else.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/xmalloc.h"
#include "policies/policy.h"
#include "proxy/proxy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define SECRET	"REAL-SECRET-VALUE"

static struct policy	*pol;
static struct phantom	*ph;

static void
setup(void)
{
	static const char text[] = "{\"version\":1,\"network\":{\"inspect\":["
	    "{\"host\":\"api.test\",\"methods\":[\"GET\",\"HEAD\"],"
	    "\"paths\":[\"/repos/org/*\",\"/user\"]}]}}";
	struct policy_ctx	 ctx;
	char			*cause;

	memset(&ctx, 0, sizeof(ctx));
	ctx.pc_workspace = ctx.pc_home = ctx.pc_dir = "/";
	if ((pol = policy_load_buffer(text, strlen(text), "fuzz", &ctx,
	    &cause)) == NULL)
		abort();
	ph = xcalloc(1, sizeof(*ph));
	if (policy_parse_pattern("api.test", &ph->ph_host, &cause) == -1)
		abort();
	ph->ph_env = xstrdup("TOKEN");
	ph->ph_header = xstrdup("Authorization");
	ph->ph_format = xstrdup("Bearer %s");
	ph->ph_placeholder = xstrdup(PHANTOM_PREFIX
	    "0123456789abcdef0123456789abcdef");
	ph->ph_value = xstrdup(SECRET);
}

static void
check_path(const char *path)
{
	const char	*s;

	if (strstr(path, "%2f") || strstr(path, "%2F") || strstr(path, "\\") ||
	    strchr(path, ';') != NULL)
		abort();
	/* Not escaped twice, no overlong UTF-8 lead byte. */
	for (s = path; *s != '\0'; s++)
		if ((*s == '%' && isxdigit((unsigned char)s[1]) &&
		    isxdigit((unsigned char)s[2])) ||
		    (unsigned char)*s == 0xc0 || (unsigned char)*s == 0xc1 ||
		    (unsigned char)*s >= 0xf5)
			abort();
	for (s = path; (s = strchr(s, '/')) != NULL; s++)
		if (strcmp(s, "/.") == 0 || strcmp(s, "/..") == 0 ||
		    strncmp(s, "/./", 3) == 0 || strncmp(s, "/../", 4) == 0)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_request	 req;
	const struct pinspect	*in;
	char			*buf, *cause, *why, *hint, *path, *warning;
	size_t			 used, i;
	int			 status, filled, seen;

	if (pol == NULL)
		setup();
	if ((buf = malloc(size == 0 ? 1 : size)) == NULL)
		abort();
	memcpy(buf, data, size);
	if (http_request_parse_origin(buf, size, 443, &req, &used, &status,
	    &cause) != HTTP_PARSE_OK) {
		free(cause);
		free(buf);
		return 0;
	}
	if (used > size || req.hr_path == NULL || req.hr_path[0] != '/')
		abort();
	if (http_path_normalise(req.hr_path, &path, &cause) == 0) {
		check_path(path);
		free(path);
	} else
		free(cause);
	in = policy_match_inspect(pol, "api.test");
	if (inspect_allows(in, &req, &status, &why, &hint)) {
		if (http_path_normalise(req.hr_path, &path, &cause) != 0)
			abort();	/* admitted, yet not judgeable */
		free(path);
	}
	free(why);
	free(hint);
	/* The client's own bytes may hold the secret's text: skip those. */
	if (memmem(data, size, SECRET, strlen(SECRET)) == NULL) {
		filled = inspect_phantom_apply(&req, ph, 1, "api.test", true,
		    &warning);
		for (i = 0, seen = 0; i < req.hr_nheaders; i++) {
			if (strstr(req.hr_headers[i].hh_value, SECRET) == NULL)
				continue;
			if (strcasecmp(req.hr_headers[i].hh_name,
			    "Authorization") != 0 || strcmp(req.hr_headers[i].
			    hh_value, "Bearer " SECRET) != 0)
				abort();
			seen++;
		}
		if (seen != filled || strstr(req.hr_target, SECRET) != NULL)
			abort();
		free(warning);
	}
	http_request_clear(&req);
	free(buf);
	return 0;
}
