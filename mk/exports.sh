#!/bin/sh
# mk/exports.sh [BUILD]: the functions and data each object of the build
# exports whose name does not carry its file's name (STYLE.md: file stem
# = function prefix).  A name carries it when it is the stem, or starts
# with the stem and "_"; main is cordon.c's.  Prints "file symbol" per line, then the count
# per folder; `make` first, so that the objects are there.
set -eu

build=${1:-build}
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
awk '{ d = $1; sub(/\/[^\/]*$/, "", d); if (d == $1) d = "."; n[d]++;
    print } END { for (d in n) printf "# %s %d\n", d, n[d] | "sort" }'
