#!/bin/sh
# Installs the test clients that Debian does not package (tests/npm:
# pnpm; the MCP SDK, the MCP Inspector's client and the MCP conformance
# suite; tests/agents: the agent CLIs), at the versions
# DIR's package-lock.json pins, with npm ci, from the npm registry.  Quiet and quick when they are there already: the
# lock file is kept beside them, and compared.
set -eu

dir=${1:?usage: npm-tools.sh DIR}
stamp="$dir/node_modules/.cordon-lock"
if cmp -s "$dir/package-lock.json" "$stamp" 2>/dev/null; then
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "cordon: npm is missing; run 'make deps' (Debian's npm)" >&2
	exit 1
fi
echo "deps: npm ci in $dir"
(cd "$dir" && npm ci --no-audit --no-fund --no-update-notifier \
    --loglevel=error)
cp "$dir/package-lock.json" "$stamp"
