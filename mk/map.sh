#!/bin/sh
# mk/map.sh [--check | --write]: the file map of docs/architecture.md, made from
# each source file's own first sentence (the comment that opens it: "name:
# what it is.").  Prints the map; with --check, compares it with the
# lines between docs/architecture.md's map markers and exits 1 when they
# differ, so that a new, moved or renamed file is named there in the
# same commit (`make check` and `make lint` run it).  --write puts the
# map between the markers.
set -eu

doc=docs/architecture.md

map() {
	git ls-files '*.c' '*.h' | grep -v '^tests/' |
	    awk -F/ '{ print (NF > 1 ? $1 : "."), $0 }' | sort -k1,1 -k2,2 |
	    { last=
	    while read -r dir f; do
		if [ "$dir" != "$last" ]; then
			[ -z "$last" ] || echo
			echo "\`$dir/\`:"
			last=$dir
		fi
		# The opening comment up to its first blank line, one line;
		# then its first sentence, without the file's name.
		awk 'NR == 1 { next } /^ \*\/?$/ || /^ \*\// { exit }
		    { sub(/^ \* ?/, ""); printf "%s ", $0 }' "$f" |
		    sed 's/  */ /g; s/ $//; s/^[^:]*: //; s/\. .*/./' |
		    sed "s|^|- \`$f\`: |"
		echo
	done; }
}

if [ "${1:-}" = --check ]; then
	want=$(mktemp)
	have=$(mktemp)
	trap 'rm -f "$want" "$have"' EXIT
	map > "$want"
	sed -n '/^<!-- map: begin -->$/,/^<!-- map: end -->$/p' "$doc" |
	    sed '1d;$d' > "$have"
	if ! diff -u "$have" "$want"; then
		echo "mk/map.sh: $doc's file map differs from the files' own" \
		    "first sentences (above: - the page, + the tree)" >&2
		echo "hint: mk/map.sh --write puts the tree's map in the" \
		    "page; then check that each file's first sentence says" \
		    "what it is" >&2
		exit 1
	fi
	exit 0
fi
if [ "${1:-}" = --write ]; then
	tmp=$(mktemp)
	trap 'rm -f "$tmp"' EXIT
	map > "$tmp"
	awk -v map="$tmp" '
	    /^<!-- map: end -->$/ { while ((getline l < map) > 0) print l;
		skip = 0 }
	    !skip { print }
	    /^<!-- map: begin -->$/ { skip = 1 }' "$doc" > "$doc.new"
	mv "$doc.new" "$doc"
	exit 0
fi
map
