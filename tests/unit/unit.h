/*
 * unit.h: what every cmocka test here includes, and small helpers.
 */
#ifndef CORDON_UNIT_H
#define CORDON_UNIT_H

#include <sys/stat.h>

#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* Asserts that haystack holds needle, printing both when it does not. */
#define assert_contains(haystack, needle) do {				\
	const char *h_ = (haystack), *n_ = (needle);			\
	if (h_ == NULL || strstr(h_, n_) == NULL)			\
		fail_msg("\"%s\" does not contain \"%s\"",		\
		    h_ ? h_ : "(null)", n_);				\
} while (0)

/* Removes a test's scratch tree at dir, as rm -rf would. */
static inline int
unit_rm_cb(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline int
unit_rmtree(const char *dir)
{
	return nftw(dir, unit_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Makes a scratch folder $TMPDIR/name.XXXXXX (/tmp without TMPDIR) and
 * puts its resolved path in out (PATH_MAX bytes).  Returns 0 or -1.
 */
static inline int
unit_tmpdir(char *out, const char *name)
{
	char		 tmpl[4096];
	const char	*tmp;

	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(tmpl, sizeof(tmpl), "%s/%s.XXXXXX", tmp, name);
	if (mkdtemp(tmpl) == NULL || realpath(tmpl, out) == NULL)
		return -1;
	return 0;
}

/*
 * Makes path below the scratch folder base: folders (a path ending in
 * '/') with their parents, or a file holding text, its folders first.
 */
static inline void
unit_make(const char *base, char *path, const char *text)
{
	char	*p;
	FILE	*fp;

	for (p = path + strlen(base) + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) == -1 && errno != EEXIST)
			fail_msg("mkdir %s: %s", path, strerror(errno));
		*p = '/';
	}
	if (path[strlen(path) - 1] != '/') {
		if ((fp = fopen(path, "w")) == NULL)
			fail_msg("%s: %s", path, strerror(errno));
		fputs(text != NULL ? text : "", fp);
		fclose(fp);
	}
}

/* "@/rel" made absolute below the scratch folder base; the caller frees. */
static inline char *
unit_at(const char *base, const char *rel)
{
	char	*s;

	if (asprintf(&s, "%s%s", base, rel + 1) == -1)
		fail_msg("asprintf: %s", strerror(errno));
	return s;
}

/* A symlink at "@/rel" below base, to target. */
static inline void
unit_link_at(const char *base, const char *target, const char *rel)
{
	char	*path = unit_at(base, rel);

	if (symlink(target, path) == -1)
		fail_msg("symlink %s: %s", path, strerror(errno));
	free(path);
}

#endif
