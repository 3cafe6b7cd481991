/*
 * gitjudge.c: what one key of a git config makes git on the host do,
 * judged by effect, not by name.
 *
 * A key is in one of these classes (git.h):
 *  - runs a program, or is not known here (gitcfg_inert's allowlist);
 *  - moves where git writes files, or with what modes: core.worktree
 *    (a work tree of $HOME makes the user's git pull write ~/.profile,
 *    their git clean -fdx empty it), core.sharedRepository; harmless
 *    only when the work tree lies in the writable folders, outside any
 *    .git, and the modes are the user's umask;
 *  - makes git reach the network by itself: extensions.partialClone,
 *    remote.*.promisor and partialclonefilter (git log -p fetches a
 *    missing object from the host, unasked) in a repository that was
 *    there before, or in a new one when the promisor remote's URL is
 *    held or it has none (git clone --filter is a remote added); and
 *    in a repository that was there before, a changed
 *    core.repositoryFormatVersion or extensions.* (git init and clone
 *    write them; so a new repository may have them);
 *  - changes where the user's push or fetch goes: an existing remote's
 *    url, pushurl, push or mirror; remote.pushDefault, branch.*.remote
 *    and pushRemote that turn a branch to another remote; any URL the
 *    URL check holds (giturl.c);
 *  - a remote the command added (remote add, push -u in a new
 *    repository, submodule add, a new partial clone's promisor):
 *    applied, and said;
 *  - inert: the rest of the allowlist.
 * What the command removes is judged too: a key that runs a program,
 * or one that turns a push elsewhere when it goes (a pushurl).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "git/git.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

/* A key split: "remote", "origin" (may hold dots), "url". */
struct gitjudge_key {
	char	*k_sec;
	char	*k_sub;		/* NULL: none */
	char	*k_name;
};

static void
gitjudge_split(const char *key, struct gitjudge_key *k)
{
	const char	*dot = strchr(key, '.'), *last = strrchr(key, '.');

	memset(k, 0, sizeof(*k));
	if (dot == NULL) {
		k->k_sec = xstrdup(key);
		k->k_name = xstrdup("");
		return;
	}
	k->k_sec = xstrndup(key, (size_t)(dot - key));
	k->k_name = xstrdup(last + 1);
	if (last != dot)
		k->k_sub = xstrndup(dot + 1, (size_t)(last - dot - 1));
}

static void
gitjudge_free(struct gitjudge_key *k)
{
	free(k->k_sec);
	free(k->k_sub);
	free(k->k_name);
}

/*
 * Does cfg have a key of section sec, subsection sub (len bytes; NULL:
 * any subsection)?
 */
bool
gitjudge_section(const struct gitcfg *cfg, const char *sec, const char *sub,
    size_t len)
{
	const char	*k, *last;
	size_t		 i, n = strlen(sec);

	if (cfg == NULL)
		return false;
	for (i = 0; i < cfg->gc_n; i++) {
		k = cfg->gc_v[i].ge_key;
		last = strrchr(k, '.');
		if (strncmp(k, sec, n) != 0 || k[n] != '.' || last == k + n)
			continue;
		if (sub == NULL || ((size_t)(last - k - n - 1) == len &&
		    memcmp(k + n + 1, sub, len) == 0))
			return true;
	}
	return false;
}

static bool
gitjudge_remote(const struct gitcfg *cfg, const char *name)
{
	return gitjudge_section(cfg, "remote", name, strlen(name));
}

/* Does cfg give the remote name a URL? */
static bool
gitjudge_has_url(const struct gitcfg *cfg, const char *name)
{
	size_t	 i, n = strlen(name);
	const char *k;

	for (i = 0; i < cfg->gc_n; i++) {
		k = cfg->gc_v[i].ge_key;
		if (strncmp(k, "remote.", 7) == 0 &&
		    strncmp(k + 7, name, n) == 0 &&
		    strcmp(k + 7 + n, ".url") == 0)
			return true;
	}
	return false;
}

/* A value git reads as false. */
static bool
gitjudge_false(const char *v)
{
	return v != NULL && (strcasecmp(v, "false") == 0 ||
	    strcasecmp(v, "no") == 0 || strcasecmp(v, "off") == 0 ||
	    strcmp(v, "0") == 0 || *v == '\0');
}

/* The folder relative URLs are read from: the work tree's top. */
static char *
gitjudge_top(const struct gitcfg_ctx *cx)
{
	const char	*slash;

	if (cx->gx_gitdir == NULL)
		return NULL;
	slash = strrchr(cx->gx_gitdir, '/');
	if (slash != NULL && strcmp(slash, "/.git") == 0)
		return xstrndup(cx->gx_gitdir, slash == cx->gx_gitdir ? 1 :
		    (size_t)(slash - cx->gx_gitdir));
	return xstrdup(cx->gx_gitdir);
}

/* A URL of cfg, judged (giturl.c) from the work tree's top. */
static enum gitcfg_class
gitjudge_url(const struct gitcfg_ctx *cx, const char *url, char **why)
{
	enum gitcfg_class	 c;
	char			*top;

	top = gitjudge_top(cx);
	c = giturl_judge(url, top, cx->gx_places, why);
	free(top);
	return c;
}

/*
 * A submodule's URL: "./x" and "../x" are read from the superproject's
 * remote (its origin, else the first it has), or from its work tree.
 */
static enum gitcfg_class
gitjudge_submodule(const struct gitcfg_ctx *cx, const struct gitcfg *cfg,
    const char *url, char **why)
{
	const char	*base = NULL;
	char		*joined;
	size_t		 i;
	enum gitcfg_class c;

	if (url == NULL || (strncmp(url, "./", 2) != 0 &&
	    strncmp(url, "../", 3) != 0))
		return gitjudge_url(cx, url, why);
	for (i = 0; i < cfg->gc_n && base == NULL; i++)
		if (strcmp(cfg->gc_v[i].ge_key, "remote.origin.url") == 0)
			base = cfg->gc_v[i].ge_value;
	for (i = 0; i < cfg->gc_n && base == NULL; i++)
		if (strncmp(cfg->gc_v[i].ge_key, "remote.", 7) == 0 &&
		    strcmp(strrchr(cfg->gc_v[i].ge_key, '.'), ".url") == 0)
			base = cfg->gc_v[i].ge_value;
	if (base == NULL)
		return gitjudge_url(cx, url, why);
	/* Its host is the remote's, judged with it; a path, joined here. */
	if ((c = gitjudge_url(cx, base, why)) != GITCFG_INERT)
		return c;
	if (strstr(base, "://") != NULL && strncasecmp(base, "file://", 7) != 0)
		return GITCFG_INERT;
	if (strchr(base, ':') != NULL && strncasecmp(base, "file://", 7) != 0 &&
	    (strchr(base, '/') == NULL || strchr(base, ':') <
	    strchr(base, '/')))
		return GITCFG_INERT;
	xasprintf(&joined, "%s/%s", strncasecmp(base, "file://", 7) == 0 ?
	    base + 7 : base, url);
	c = gitjudge_url(cx, joined, why);
	free(joined);
	return c;
}

/*
 * core.worktree: harmless when it names a folder in the writable roots
 * (relative to the git directory, as git reads it), outside any .git.
 */
static enum gitcfg_class
gitjudge_worktree(const struct gitcfg_ctx *cx, const char *v, char **why)
{
	const struct gitcfg_places	*pl = cx->gx_places;
	char				*abs, *w = NULL, *p;
	bool				 ok;

	if (v == NULL || (abs = giturl_join(cx->gx_gitdir, v)) == NULL) {
		*why = xstrdup("a work tree read from a folder cordon does not "
		    "know");
		return GITCFG_FILES;
	}
	ok = giturl_path_in(abs, pl != NULL ? (const char *const *)
	    pl->gp_write : NULL, pl != NULL ? pl->gp_nwrite : 0, &w);
	for (p = abs; ok && (p = strchr(p, '/')) != NULL; p++)
		ok = strncasecmp(p, "/.git", 5) != 0 || (p[5] != '\0' &&
		    p[5] != '/');
	free(abs);
	if (ok)
		return GITCFG_INERT;
	xasprintf(why, "git on the host would check out, write and clean "
	    "files there: %s", w != NULL ? w : "it lies in a git directory");
	free(w);
	return GITCFG_FILES;
}

/*
 * branch.B.remote, branch.B.pushRemote, remote.pushDefault (e, value
 * v): a remote's name, or a URL (judged as one).  In a repository that
 * was there, setting one where none was, to a remote it had, or where
 * it had none at all, is push -u's work; anything else turns the
 * user's push or pull elsewhere.
 */
static enum gitcfg_class
gitjudge_upstream(const struct gitcfg_ctx *cx, const struct gitcfg *cfg,
    const struct gitcfg_ent *e, char **why)
{
	const struct gitcfg	*base = cx->gx_base;
	const char		*v = e->ge_value;
	enum gitcfg_class	 c;
	size_t			 i;

	if (v == NULL) {
		*why = xstrdup("a remote with no name");
		return GITCFG_DEST;
	}
	if (strcmp(v, ".") != 0 && !gitjudge_remote(cfg, v) &&
	    (c = gitjudge_url(cx, v, why)) != GITCFG_INERT)
		return c;
	if (base == NULL || strcmp(v, ".") == 0 ||
	    !gitjudge_section(base, "remote", NULL, 0))
		return GITCFG_INERT;
	for (i = 0; i < base->gc_n; i++)
		if (strcmp(base->gc_v[i].ge_key, e->ge_key) == 0)
			break;
	if (i == base->gc_n && gitjudge_remote(base, v))
		return GITCFG_INERT;
	*why = xstrdup("your push or pull would go to another remote "
	    "than before");
	return GITCFG_DEST;
}

/* A key the command removed (e, from old): held when cfg is the worse. */
static enum gitcfg_class
gitjudge_removed(const struct gitcfg *cfg, const struct gitjudge_key *k,
    char **why)
{
	if (strcmp(k->k_sec, "remote") == 0 && k->k_sub != NULL &&
	    (strcmp(k->k_name, "url") == 0 ||
	    strcmp(k->k_name, "pushurl") == 0 ||
	    strcmp(k->k_name, "push") == 0 ||
	    strcmp(k->k_name, "mirror") == 0) &&
	    gitjudge_remote(cfg, k->k_sub)) {
		*why = xstrdup("the remote stays, and would push or fetch "
		    "elsewhere without it");
		return GITCFG_DEST;
	}
	if ((strcmp(k->k_sec, "branch") == 0 && k->k_sub != NULL &&
	    (strcmp(k->k_name, "remote") == 0 ||
	    strcmp(k->k_name, "pushremote") == 0) &&
	    gitjudge_section(cfg, "branch", k->k_sub, strlen(k->k_sub))) ||
	    (strcmp(k->k_sec, "remote") == 0 && k->k_sub == NULL &&
	    strcmp(k->k_name, "pushdefault") == 0)) {
		*why = xstrdup("your push or pull would go to another "
		    "remote than before");
		return GITCFG_DEST;
	}
	return GITCFG_INERT;
}

/* A remote's key in a repository (remote.N.url, pushurl, push, mirror). */
static enum gitcfg_class
gitjudge_remote_key(const struct gitcfg_ctx *cx, const struct gitcfg_ent *e,
    const struct gitjudge_key *k, char **why)
{
	enum gitcfg_class	 c = GITCFG_INERT;
	char			*sub;

	if ((strcmp(k->k_name, "url") == 0 ||
	    strcmp(k->k_name, "pushurl") == 0) &&
	    (c = gitjudge_url(cx, e->ge_value, why)) == GITCFG_RUNS)
		return c;
	if (!gitjudge_remote(cx->gx_base, k->k_sub))
		return c == GITCFG_INERT ? GITCFG_REMOTE : c;
	free(*why);
	sub = str_escape(k->k_sub, strlen(k->k_sub));
	xasprintf(why, "a change to the remote %s, which was there: "
	    "your next push or fetch would go elsewhere", sub);
	free(sub);
	return GITCFG_DEST;
}

/* Is the remote name a promisor remote in cfg (git fetches from it)? */
static bool
gitjudge_is_promisor(const struct gitcfg *cfg, const char *name)
{
	const struct gitcfg_ent	*e;
	size_t			 i, n = strlen(name);

	for (i = 0; i < cfg->gc_n; i++) {
		e = &cfg->gc_v[i];
		if (strcmp(e->ge_key, "extensions.partialclone") == 0 &&
		    e->ge_value != NULL && strcmp(e->ge_value, name) == 0)
			return true;
		if (strncmp(e->ge_key, "remote.", 7) == 0 &&
		    strncmp(e->ge_key + 7, name, n) == 0 &&
		    ((strcmp(e->ge_key + 7 + n, ".promisor") == 0 &&
		    !gitjudge_false(e->ge_value)) ||
		    strcmp(e->ge_key + 7 + n, ".partialclonefilter") == 0))
			return true;
	}
	return false;
}

/*
 * extensions.partialClone = name, remote.name.promisor or
 * partialclonefilter: git on the host fetches a missing object from
 * the remote name by itself, when it reads one.  In a repository that
 * was there, that is new unless name was a promisor already: held.  In
 * a new one (git clone --filter), it goes where git fetch in it would
 * go: kept and said when each URL cfg gives name passes the URL check;
 * with none, git would take name itself for a URL: held.
 */
static enum gitcfg_class
gitjudge_promisor(const struct gitcfg_ctx *cx, const struct gitcfg *cfg,
    const char *name, char **why)
{
	const struct gitcfg_ent	*e;
	char			*r = NULL, *sub;
	size_t			 i, n, urls = 0;
	bool			 held = false;

	if (cx->gx_base != NULL) {
		if (name != NULL && gitjudge_is_promisor(cx->gx_base, name))
			return GITCFG_INERT;
		*why = xstrdup("git on the host would fetch missing objects "
		    "from a remote by itself, when it reads them");
		return GITCFG_NETWORK;
	}
	n = name != NULL ? strlen(name) : 0;
	for (i = 0; n > 0 && !held && i < cfg->gc_n; i++) {
		e = &cfg->gc_v[i];
		if (strncmp(e->ge_key, "remote.", 7) != 0 ||
		    strncmp(e->ge_key + 7, name, n) != 0 ||
		    strcmp(e->ge_key + 7 + n, ".url") != 0)
			continue;
		free(r);
		held = gitjudge_url(cx, e->ge_value, &r) != GITCFG_INERT;
		urls++;
	}
	if (urls > 0 && !held)
		return GITCFG_REMOTE;
	sub = name != NULL ? str_escape(name, n) : xstrdup("(none)");
	if (held)
		xasprintf(why, "git on the host would fetch missing objects "
		    "from the remote %s by itself: %s", sub,
		    r != NULL ? r : "its URL is held back");
	else
		xasprintf(why, "git on the host would fetch missing objects "
		    "by itself from %s, which is no remote with a URL here",
		    sub);
	free(sub);
	free(r);
	return GITCFG_NETWORK;
}

/*
 * The class of e, a key the command added to cfg (removed false), or
 * took from it (removed true), in the context cx.  *why is set (caller
 * frees) for a class held back.
 */
enum gitcfg_class
gitjudge_class(const struct gitcfg_ctx *cx, const struct gitcfg *cfg,
    const struct gitcfg_ent *e, bool removed, char **why)
{
	struct gitjudge_key	 k;
	const char		*v = e->ge_value;
	enum gitcfg_class	 c = GITCFG_INERT;
	bool			 old = cx->gx_base != NULL;

	*why = NULL;
	gitjudge_split(e->ge_key, &k);
	if (strcmp(k.k_sec, "url") == 0 && k.k_sub != NULL &&
	    (strcmp(k.k_name, "insteadof") == 0 ||
	    strcmp(k.k_name, "pushinsteadof") == 0)) {
		*why = xstrdup("it rewrites the URLs git on the host pushes "
		    "to and fetches from");
		gitjudge_free(&k);
		return GITCFG_DEST;
	}
	if (!gitcfg_inert(e->ge_key, v)) {
		*why = xstrdup("git on the host could run a program, or the "
		    "key is not one cordon knows");
		gitjudge_free(&k);
		return GITCFG_RUNS;
	}
	if (removed)
		c = gitjudge_removed(cfg, &k, why);
	else if (strcmp(e->ge_key, "core.worktree") == 0)
		c = gitjudge_worktree(cx, v, why);
	else if (strcmp(e->ge_key, "core.sharedrepository") == 0) {
		if (!gitjudge_false(v) && strcasecmp(v, "umask") != 0) {
			*why = xstrdup("git on the host would make files that "
			    "others may read or write");
			c = GITCFG_FILES;
		}
	} else if (strcmp(e->ge_key, "extensions.partialclone") == 0)
		c = gitjudge_promisor(cx, cfg, v, why);
	else if (strcmp(k.k_sec, "remote") == 0 && k.k_sub != NULL &&
	    ((strcmp(k.k_name, "promisor") == 0 && !gitjudge_false(v)) ||
	    strcmp(k.k_name, "partialclonefilter") == 0))
		c = gitjudge_promisor(cx, cfg, k.k_sub, why);
	else if (old && strcmp(e->ge_key, "core.repositoryformatversion") ==
	    0) {
		*why = xstrdup("git on the host would fetch missing objects "
		    "from a remote by itself, when it reads them");
		c = GITCFG_NETWORK;
	} else if (old && strcmp(k.k_sec, "extensions") == 0) {
		*why = xstrdup("it changes how git on the host reads the "
		    "repository's files");
		c = GITCFG_FILES;
	} else if (strcmp(k.k_sec, "remote") == 0 && k.k_sub != NULL &&
	    (strcmp(k.k_name, "url") == 0 ||
	    strcmp(k.k_name, "pushurl") == 0 ||
	    strcmp(k.k_name, "push") == 0 ||
	    strcmp(k.k_name, "mirror") == 0))
		c = gitjudge_remote_key(cx, e, &k, why);
	else if (strcmp(k.k_sec, "remote") == 0 && k.k_sub != NULL &&
	    !gitjudge_remote(cx->gx_base, k.k_sub) &&
	    !gitjudge_has_url(cfg, k.k_sub)) {
		/* git remote add writes the URL, then the refspec. */
		*why = xstrdup("part of a remote with no URL (its URL was "
		    "held back)");
		c = GITCFG_DEST;
	} else if (strcmp(k.k_sec, "submodule") == 0 && k.k_sub != NULL &&
	    strcmp(k.k_name, "url") == 0) {
		if ((c = gitjudge_submodule(cx, cfg, v, why)) == GITCFG_INERT)
			c = gitjudge_section(cx->gx_base, "submodule", k.k_sub,
			    strlen(k.k_sub)) ? GITCFG_DEST : GITCFG_REMOTE;
		if (c == GITCFG_DEST && *why == NULL)
			*why = xstrdup("a change to a submodule's URL: git "
			    "submodule update would fetch from elsewhere");
	} else if ((strcmp(k.k_sec, "branch") == 0 && k.k_sub != NULL &&
	    (strcmp(k.k_name, "remote") == 0 ||
	    strcmp(k.k_name, "pushremote") == 0)) ||
	    strcmp(e->ge_key, "remote.pushdefault") == 0)
		c = gitjudge_upstream(cx, cfg, e, why);
	gitjudge_free(&k);
	return c;
}

/* Is a key of class c held back? */
bool
gitjudge_held(enum gitcfg_class c)
{
	return c != GITCFG_INERT && c != GITCFG_REMOTE;
}

/* The class's name in the report. */
const char *
gitjudge_name(enum gitcfg_class c)
{
	switch (c) {
	case GITCFG_INERT:
		return "inert";
	case GITCFG_REMOTE:
		return "remote_added";
	case GITCFG_RUNS:
		return "runs_program";
	case GITCFG_FILES:
		return "files";
	case GITCFG_NETWORK:
		return "network";
	case GITCFG_DEST:
		return "destination";
	}
	return "runs_program";
}
