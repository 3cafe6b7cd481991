#!/bin/sh
# mk/exports.sh [BUILD]: the functions and data each object of the build
# exports whose name does not carry its file's name (the project's rule:
# file stem = function prefix).  A name carries it when it is the stem,
# or starts with the stem and "_"; main is cordon.c's.  Prints "file symbol" per
# line, then the count per folder; `make` first, so that the objects are
# there.  Exits 1 when any folder (outside PENDING) has one: `make lint`
# runs it, so that the rule stays.
set -eu

build=${1:-build}

# Exceptions, as tmux keeps xmalloc's and log's names: calls so common
# that a prefix would only lengthen every line of the tree.  xmalloc.c's
# x* are the libc calls they wrap, with an x (OpenBSD's names); log.c's
# fatal and fatalx are err(3)'s and errx(3)'s, which every reader of C
# knows.  A new name belongs here only for the same reason.
EXEMPT='
lib/log.c fatal
lib/log.c fatalx
lib/xmalloc.c xasprintf
lib/xmalloc.c xcalloc
lib/xmalloc.c xmalloc
lib/xmalloc.c xreallocarray
lib/xmalloc.c xstrdup
lib/xmalloc.c xstrndup
lib/xmalloc.c xvasprintf
'

# Folders whose names are still being given their file's prefix: listed,
# not failed.  A folder leaves this list when it reaches 0; none is left.
PENDING=''

find "$build" -name '*.o' ! -path "$build/tests/*" | sort |
while read -r o; do
	src=${o#"$build"/}
	src=${src%.o}.c
	[ -f "$src" ] || continue
	stem=$(basename "$src" .c)
	nm -g --defined-only "$o" | awk -v f="$src" -v s="$stem" '
	    $2 ~ /^[TDBR]$/ && $3 != s && $3 != "main" && index($3, s "_") != 1 {
		print f, $3 }'
done | sort |
awk -v exempt="$EXEMPT" -v pending="$PENDING" '
    BEGIN { k = split(exempt, e, "\n"); for (i = 1; i <= k; i++) ok[e[i]] = 1
	k = split(pending, p, " "); for (i = 1; i <= k; i++) later[p[i]] = 1 }
    ($1 " " $2) in ok { next }
    { d = $1; sub(/\/[^\/]*$/, "", d); if (d == $1) d = "."; n[d]++; print
	if (!(d in later)) bad++ }
    END { for (d in n) printf "# %s %d\n", d, n[d] | "sort"; close("sort")
	if (bad) { printf "%d export(s) without their file'"'"'s name " \
	    "outside %s: give them the file'"'"'s prefix, or a file " \
	    "named for them\n", bad, pending > "/dev/stderr"; exit 1 } }'
