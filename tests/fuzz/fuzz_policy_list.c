/*
 * fuzz_policy_list.c: host list files (policy_list_buffer) on arbitrary
 * bytes.  Checks what `policy explain` and the loader rely on: a list
 * that fails adds nothing to the entries already there; one that loads
 * names each entry FILE:LINE with lines in order and within the file;
 * and its canonical entries, written one a line, load back the same.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
policy_plist_drop(struct plist *pl)
{
	while (pl->pl_n > 0)
		policy_pitem_clear(&pl->pl_v[--pl->pl_n]);
	free(pl->pl_v);
	pl->pl_v = NULL;
}

/* Returns the line number in "list:N", or 0 if from is not that shape. */
static size_t
from_line(const char *from, const char *name)
{
	size_t	 nlen = strlen(name);
	char	*end;
	unsigned long long n;

	if (strncmp(from, name, nlen) != 0 || from[nlen] != ':' ||
	    from[nlen + 1] < '1' || from[nlen + 1] > '9')
		return 0;
	n = strtoull(from + nlen + 1, &end, 10);
	if (*end != '\0')
		return 0;
	return (size_t)n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct plist	 pl = { 0 }, back = { 0 };
	struct pitem	*it;
	char		*buf, *cause, *text;
	size_t		 i, lines, line, prev = 0, off = 0, tlen = 0;

	if (size > 1024 * 1024)
		return 0;
	/* A heap copy, so that ASan sees a read past the end. */
	if ((buf = malloc(size ? size : 1)) == NULL)
		abort();
	memcpy(buf, data, size);
	lines = 1;
	for (i = 0; i < size; i++)
		if (buf[i] == '\n')
			lines++;

	/* An entry already there, as from an earlier list. */
	it = policy_plist_add(&pl);
	if (policy_parse_pattern("before.test", it, &cause) != 0)
		abort();
	if (policy_list_buffer(buf, size, "list", &pl, &cause) == -1) {
		free(buf);
		if (cause == NULL || pl.pl_n != 1 ||
		    strcmp(pl.pl_v[0].pi_text, "before.test") != 0)
			abort();	/* a failed list left entries */
		free(cause);
		policy_plist_drop(&pl);
		return 0;
	}
	free(buf);
	if (cause != NULL || pl.pl_n < 1 || pl.pl_n > lines + 1 ||
	    pl.pl_n > POLICY_MAX_ITEMS)
		abort();

	for (i = 1; i < pl.pl_n; i++) {
		it = &pl.pl_v[i];
		line = from_line(it->pi_from, "list");
		if (line == 0 || line > lines || line <= prev)
			abort();	/* origin out of order or outside */
		prev = line;
		if (it->pi_text == NULL || it->pi_host == NULL ||
		    strpbrk(it->pi_text, "\n\r\t #") != NULL)
			abort();	/* canonical text a list cannot hold */
		tlen += strlen(it->pi_text) + 1;
	}

	/* The canonical entries, one a line, load back the same. */
	text = malloc(tlen + 1);
	if (text == NULL)
		abort();
	for (i = 1; i < pl.pl_n; i++) {
		memcpy(text + off, pl.pl_v[i].pi_text,
		    strlen(pl.pl_v[i].pi_text));
		off += strlen(pl.pl_v[i].pi_text);
		text[off++] = '\n';
	}
	if (policy_list_buffer(text, off, "again", &back, &cause) != 0 ||
	    back.pl_n != pl.pl_n - 1)
		abort();	/* canonical entries did not load back */
	for (i = 0; i < back.pl_n; i++) {
		if (strcmp(back.pl_v[i].pi_text, pl.pl_v[i + 1].pi_text) != 0 ||
		    back.pl_v[i].pi_kind != pl.pl_v[i + 1].pi_kind ||
		    back.pl_v[i].pi_port != pl.pl_v[i + 1].pi_port ||
		    strcmp(back.pl_v[i].pi_host, pl.pl_v[i + 1].pi_host) != 0 ||
		    from_line(back.pl_v[i].pi_from, "again") != i + 1)
			abort();	/* an entry changed on the way back */
	}
	free(text);
	policy_plist_drop(&back);
	policy_plist_drop(&pl);
	return 0;
}
