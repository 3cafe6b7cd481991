#!/bin/sh
# mk/lint-commits.sh: runs mk/commit-msg on every commit after the one
# mk/commit-base names, the last commit before the rule (`make lint`).
# A tree without git, or a shallow clone without the base, is skipped
# with a note: there is no history to judge.
#
# usage: mk/lint-commits.sh [REVISION]   (default HEAD)
set -eu

cd "$(git rev-parse --show-toplevel 2>/dev/null || echo .)"
base=$(sed -n 's/^\([0-9a-f]\{40\}\).*/\1/p' mk/commit-base)
head=${1:-HEAD}
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
	echo "lint-commits: no commit $base here (no git, or shallow): skipped"
	exit 0
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
bad=0
for c in $(git rev-list "$base..$head"); do
	git log -1 --format=%B "$c" >"$tmp"
	if ! out=$(./mk/commit-msg "$tmp" 2>&1); then
		printf '%s\n' "$out" | sed "s/^/${c%"${c#???????}"}: /" >&2
		bad=1
	fi
done
exit "$bad"
