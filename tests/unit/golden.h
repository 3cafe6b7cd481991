/*
 * golden.h: the cases of tests/profiles, for test_seatbelt and
 * test_winfw.  Each case is a folder holding
 *
 *	policy.json	a layer over the built-in defaults, read with the
 *			workspace /Users/dev/src/app and the home /Users/dev
 *	args		optional, one "KEY VALUE" a line: proxy-port N,
 *			program PATH (repeatable), user NAME
 *	expected.sb	the Seatbelt profile, byte for byte; or expected.sb.err,
 *			the message when none may be made
 *	expected.ps1	the same for the firewall script (or expected.ps1.err)
 *
 * With PROFILE_GOLDEN_UPDATE=1 the tests write the expected files instead
 * of comparing (`make golden`); review them with git diff.
 */
#ifndef CORDON_GOLDEN_H
#define CORDON_GOLDEN_H

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <unistd.h>

#include "lib/xmalloc.h"
#include "policies/policy.h"

#define GOLDEN_WORKSPACE	"/Users/dev/src/app"
#define GOLDEN_HOME		"/Users/dev"
#define GOLDEN_MAX_PROGRAMS	8

struct golden {
	char		*g_dir;		/* tests/profiles/NAME */
	struct policy	*g_policy;
	int		 g_port;
	const char	*g_programs[GOLDEN_MAX_PROGRAMS];
	size_t		 g_nprograms;
	char		*g_user;
	char		*g_args;	/* owns the strings above */
};

static const char *
golden_root(void)
{
	const char	*d = getenv("PROFILE_GOLDEN_DIR");

	return d != NULL ? d : "tests/profiles";
}

/* Reads a whole file, or NULL when it does not exist. */
static char *
golden_read(const char *path)
{
	FILE	*f;
	char	*buf;
	long	 n = 0;

	if ((f = fopen(path, "rb")) == NULL) {
		if (errno != ENOENT)
			fail_msg("%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) == -1 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) == -1)
		fail_msg("%s: cannot size it", path);
	buf = xmalloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		fail_msg("%s: short read", path);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A policy from JSON text over the built-in defaults, as the cases are. */
static struct policy *
golden_policy(const char *json)
{
	struct policy_ctx	 ctx = {
		.pc_workspace = GOLDEN_WORKSPACE,
		.pc_home = GOLDEN_HOME,
	};
	struct policy		*p, *layer;
	char			*cause;

	if ((p = policy_merge_defaults(&ctx, &cause)) == NULL ||
	    (layer = policy_load_buffer(json, strlen(json), "t.json", &ctx,
	    &cause)) == NULL)
		fail_msg("%s", cause);
	policy_merge(p, layer);
	policy_free(layer);
	return p;
}

static void
golden_load(struct golden *g, const char *name)
{
	struct policy_ctx	 ctx = {
		.pc_workspace = GOLDEN_WORKSPACE,
		.pc_home = GOLDEN_HOME,
	};
	struct policy		*layer;
	char			*path, *cause, *line, *save, *val;

	memset(g, 0, sizeof(*g));
	xasprintf(&g->g_dir, "%s/%s", golden_root(), name);
	if ((g->g_policy = policy_merge_defaults(&ctx, &cause)) == NULL)
		fail_msg("defaults: %s", cause);
	xasprintf(&path, "%s/policy.json", g->g_dir);
	ctx.pc_dir = g->g_dir;
	if ((layer = policy_load_file(path, &ctx, &cause)) == NULL)
		fail_msg("%s", cause);
	policy_merge(g->g_policy, layer);
	policy_free(layer);
	free(path);

	xasprintf(&path, "%s/args", g->g_dir);
	g->g_args = golden_read(path);
	free(path);
	if (g->g_args == NULL)
		return;
	for (line = strtok_r(g->g_args, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((val = strchr(line, ' ')) == NULL)
			fail_msg("%s/args: \"%s\": no value", g->g_dir, line);
		*val++ = '\0';
		if (strcmp(line, "proxy-port") == 0)
			g->g_port = atoi(val);
		else if (strcmp(line, "program") == 0 &&
		    g->g_nprograms < GOLDEN_MAX_PROGRAMS)
			g->g_programs[g->g_nprograms++] = val;
		else if (strcmp(line, "user") == 0)
			g->g_user = val;
		else
			fail_msg("%s/args: unknown key \"%s\"", g->g_dir, line);
	}
}

static void
golden_clear(struct golden *g)
{
	policy_free(g->g_policy);
	free(g->g_dir);
	free(g->g_args);
	memset(g, 0, sizeof(*g));
}

/* Writes or compares one expected file; text is the output made. */
static void
golden_match(const struct golden *g, const char *file, const char *text)
{
	FILE		*f;
	char		*path, *want;
	size_t		 i, line = 1;

	xasprintf(&path, "%s/%s", g->g_dir, file);
	if (getenv("PROFILE_GOLDEN_UPDATE") != NULL) {
		if ((f = fopen(path, "wb")) == NULL ||
		    fputs(text, f) == EOF || fclose(f) == EOF)
			fail_msg("%s: %s", path, strerror(errno));
		free(path);
		return;
	}
	if ((want = golden_read(path)) == NULL)
		fail_msg("%s: missing; make golden writes it", path);
	for (i = 0; want[i] != '\0' && want[i] == text[i]; i++)
		if (want[i] == '\n')
			line++;
	if (want[i] != text[i])
		fail_msg("%s differs from the output at line %zu; make golden "
		    "rewrites it, then git diff shows the change", path, line);
	free(want);
	free(path);
}

/* Removes the other outcome's file, so one case has one expectation. */
static void
golden_drop(const struct golden *g, const char *file)
{
	char	*path;

	xasprintf(&path, "%s/%s", g->g_dir, file);
	if (getenv("PROFILE_GOLDEN_UPDATE") != NULL)
		(void)unlink(path);
	else if (access(path, F_OK) == 0)
		fail_msg("%s: left over from another outcome", path);
	free(path);
}

/* Calls fn on every case folder, in name order; returns how many. */
static size_t
golden_each(void (*fn)(const struct golden *))
{
	struct dirent	**names;
	struct golden	  g;
	struct stat	  st;
	char		 *path;
	int		  n, i;
	size_t		  done = 0;

	if ((n = scandir(golden_root(), &names, NULL, alphasort)) == -1)
		fail_msg("%s: %s", golden_root(), strerror(errno));
	for (i = 0; i < n; i++) {
		xasprintf(&path, "%s/%s", golden_root(), names[i]->d_name);
		if (names[i]->d_name[0] != '.' && stat(path, &st) == 0 &&
		    S_ISDIR(st.st_mode)) {
			golden_load(&g, names[i]->d_name);
			fn(&g);
			golden_clear(&g);
			done++;
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return done;
}

#endif
