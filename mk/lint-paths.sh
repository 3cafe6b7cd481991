#!/bin/sh
# mk/lint-paths.sh: fails on a repository path named in a comment or a
# doc that the repository does not hold; run by make lint and make check.
#
# It reads the tracked C sources and headers, shell and bats files,
# Markdown pages, man pages and the Makefile.  A path is a word that
# begins with one of the repository's top folders and ends in a file
# name with an extension (`proxy/conn.c`, `docs/fleet.md`,
# `tests/e2e/run.bats`).  A word that follows `/`, `~`, `.`, `$`, `-` or
# a letter is another tree's (`/etc/cordon/x.json`, `~/.codex/auth.json`,
# `$TOP/mk/x.sh`, a URL) and is not judged; nor is one with a `*`, `%`
# or `{`, which is a pattern, or one with a placeholder word (NAME, ID,
# X, N: `tests/unit/test_NAME.c`).  In shell, bats and the Makefile only
# comments are read: their code names the files a test makes.  The
# target of each relative Markdown link is checked too, from its page's
# folder.  Each missing path is printed as FILE:LINE: path, and the exit
# status is 1.
#
# usage: mk/lint-paths.sh [FILE...]   (default: every tracked file)
set -eu

cd "$(git rev-parse --show-toplevel)"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

dirs=$(git ls-files | sed -n 's|/.*||p' | sort -u | tr '\n' '|' |
    sed 's/|$//')

if [ $# -eq 0 ]; then
	set -- $(git ls-files '*.c' '*.h' '*.md' '*.sh' '*.bats' '*.bash' \
	    '*.[15]' Makefile)
fi

# FILE:LINE:PATH for every path-shaped word, then keep the missing ones.
awk -v dirs="$dirs" '
BEGIN { re = "(^|[^A-Za-z0-9_/~.$-])(" dirs ")/[A-Za-z0-9_./+-]*[A-Za-z0-9_]\\.[A-Za-z0-9]+" }
{
	line = $0
	if (FILENAME ~ /(\.sh|\.bats|\.bash|Makefile)$/) {
		if (!match(line, /#/))
			next
		line = substr(line, RSTART)
	}
	while (match(line, re)) {
		w = substr(line, RSTART, RLENGTH)
		rest = substr(line, RSTART + RLENGTH, 1)
		line = substr(line, RSTART + RLENGTH)
		sub(/^[^A-Za-z]/, "", w)
		if (rest ~ /[*%{]/ || w ~ /\.\.|\/\// ||
		    w ~ /(^|[\/_.-])(NAME|ID|X|N)([\/_.-]|$)/)
			continue
		print FILENAME ":" FNR ":" w
	}
}' "$@" |
while IFS=: read -r file line path; do
	# A trailing sentence dot is not the name's.
	path=${path%.}
	[ -e "$path" ] || echo "$file:$line: $path: no such file in the repository"
done >"$tmp"

# A Markdown link's target, relative to its page: [text](../docs/x.md#a).
for page in "$@"; do
	case $page in *.md) ;; *) continue ;; esac
	awk '{
		line = $0
		while (match(line, /\]\([^)# ]+/)) {
			print FILENAME ":" FNR ":" substr(line, RSTART + 2, RLENGTH - 2)
			line = substr(line, RSTART + RLENGTH)
		}
	}' "$page"
done | grep -Ev ':[0-9]+:[a-z]+:' |
while IFS=: read -r file line path; do
	[ -e "$(dirname "$file")/$path" ] ||
	    echo "$file:$line: $path: no such file for this link"
done >>"$tmp"

if [ -s "$tmp" ]; then
	cat "$tmp"
	exit 1
fi
