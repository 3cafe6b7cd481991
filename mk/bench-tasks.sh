#!/usr/bin/env bash
# make bench (or make bench-tasks): tests/e2e/tasks.bats, the ordinary
# work of a coding agent, under cordon and under two other sandboxes for
# agents' commands: Anthropic's sandbox-runtime (srt) and OpenAI's Codex
# CLI (codex sandbox), at the versions mk/bench-tasks/package-lock.json
# pins, installed with npm ci into a scratch folder.  tasks.bats runs
# once a sandbox: each task on the host, then in that sandbox (cordon's
# run also with an ssh-agent), compared with the host's run.  Prints a
# table, a row a task and a column a sandbox, and writes it to OUT.
#
# What each sandbox is given, each in its own terms: the workspace
# writable, /tmp too (cordon's is its own), the rest read-only, and the
# network only to the test's server, git.test and npm.test on 127.0.0.1:
#  - cordon: tasks.bats's own `cordon run` (--allow-domain, --resolve);
#  - srt: allowWrite [".", "/tmp"] (its README's example) and
#    allowedDomains git.test, npm.test and 127.0.0.1, which its proxy
#    wants before it dials a name that resolves to loopback; the names
#    resolve in srt's proxy through hosts.cjs, as /etc/hosts would;
#  - codex: the built-in :workspace permission profile, which has no
#    network: a profile's per-domain rules need Codex's own network
#    proxy, not set up here, so every task that needs the server fails
#    there, as it would for a user of that profile.
#
# usage: bench-tasks.sh CORDON TOOLS_DIR [OUT]  (OUT: build/bench/tasks.md)
set -u

cordon=$1 tools=$2
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
md=${3:-$top/build/bench/tasks.md}
outdir=$(dirname "$md")
# A bats run that hangs is cut at this; each task's run is cut at 20 s.
BATS_SECS=${BATS_SECS:-2400}
# Only the tasks whose names match this regular expression (bats -f).
FILTER=${FILTER:-}

mkdir -p "$outdir"
scratch=$(mktemp -d)
# srt and codex let a command write /tmp, where tasks.bats keeps the
# test's home and workspace: their runs keep them in /var/tmp, so that
# the home is as out of reach as a real one (cordon's keeps its /tmp).
vartmp=$(mktemp -d -p /var/tmp)
trap 'rm -rf "$scratch" "$vartmp"' EXIT
chmod 755 "$scratch" "$vartmp"

# The sandboxes, their column titles and, for one that cannot run here,
# why (then its column says n/a with that).
tools_list=(cordon srt codex)
declare -A title why
title[cordon]="cordon"
title[srt]="sandbox-runtime"
title[codex]="codex"

# The pinned version of npm package $1, from the lock file.
pinned() {
	node -e 'const l = require(process.argv[1]);
	    console.log(l.packages["node_modules/" + process.argv[2]].version)' \
	    "$here/bench-tasks/package-lock.json" "$1"
}

# Installs both into $scratch and writes a wrapper for each,
# $scratch/wrap-srt and $scratch/wrap-codex: run as the test user in
# the workspace, each runs its arguments in its sandbox.
install() {
	local log=$outdir/npm-ci.log v
	cp "$here/bench-tasks/package.json" \
	    "$here/bench-tasks/package-lock.json" \
	    "$here/bench-tasks/hosts.cjs" "$scratch/"
	if ! (cd "$scratch" && timeout 600 npm ci --no-audit --no-fund \
	    --loglevel=error) >"$log" 2>&1; then
		why[srt]="npm ci failed: $(tail -n 1 "$log")"
		why[codex]=${why[srt]}
		return
	fi
	v=$(pinned @anthropic-ai/sandbox-runtime)
	title[srt]="sandbox-runtime $v"
	v=$(pinned @openai/codex)
	title[codex]="codex $v"
	cat >"$scratch/srt.json" <<-'EOF'
		{"network": {"allowedDomains": ["git.test", "npm.test",
		    "127.0.0.1"], "deniedDomains": []},
		 "filesystem": {"denyRead": [], "allowWrite": [".", "/tmp"],
		    "denyWrite": []}}
	EOF
	# srt takes one string for bash -c: the arguments, quoted.  It sets
	# TMPDIR to /tmp/claude, which Claude Code makes and srt does not:
	# CLAUDE_CODE_TMPDIR names /tmp instead, which it may write.
	cat >"$scratch/wrap-srt" <<-EOF
		#!/bin/bash
		CLAUDE_CODE_TMPDIR=/tmp exec node --require "$scratch/hosts.cjs" \\
		    "$scratch/node_modules/@anthropic-ai/sandbox-runtime/dist/cli.js" \\
		    --settings "$scratch/srt.json" -c "\$(printf '%q ' "\$@")"
	EOF
	# codex finds its sandbox helper as codex-linux-sandbox on PATH: the
	# links it would make for that it refuses to make under /tmp.
	mkdir -p "$scratch/bin"
	ln -s "$(find "$scratch/node_modules/@openai" -path '*/bin/codex' \
	    -type f | head -n 1)" "$scratch/bin/codex"
	ln -s codex "$scratch/bin/codex-linux-sandbox"
	cat >"$scratch/wrap-codex" <<-EOF
		#!/bin/sh
		PATH="$scratch/bin:\$PATH" exec codex sandbox -P :workspace \\
		    -- "\$@"
	EOF
	chmod -R a+rX "$scratch"
	chmod 755 "$scratch/wrap-srt" "$scratch/wrap-codex"
}

# Whether $1's wrapper runs a command that writes the workspace, as the
# test user: if not, why[$1] says what it said.
probe() {
	local t=$1 d msg
	d=$(mktemp -d)
	chmod 777 "$d"
	msg=$(cd "$d" && if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid=cordon-test --regid=cordon-test \
		    --clear-groups --inh-caps=-all --reset-env \
		    env HOME="$d" timeout 60 "$scratch/wrap-$t" touch ok
	else
		HOME=$d timeout 60 "$scratch/wrap-$t" touch ok
	fi 2>&1) || true
	[ -e "$d/ok" ] ||
	    why[$t]="does not run here: $(echo "$msg" | grep . | tail -n 1)"
	rm -rf "$d"
}

install
# tasks.bats makes the test user; the probe needs it first.
[ "$(id -u)" -ne 0 ] || id -u cordon-test >/dev/null 2>&1 ||
    useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test
for t in srt codex; do
	[ -n "${why[$t]:-}" ] || probe "$t"
done

for t in "${tools_list[@]}"; do
	[ -z "${why[$t]:-}" ] || continue
	wrap=
	[ "$t" = cordon ] || wrap=$scratch/wrap-$t
	rm -f "$outdir/tasks-$t.why"
	echo "bench-tasks: tasks.bats under ${title[$t]}" >&2
	t0=$SECONDS
	(cd "$top" && env ${wrap:+TMPDIR="$vartmp"} CORDON="$cordon" \
	    TOOLS_DIR="$tools" TASKS_WRAP="$wrap" \
	    TASKS_WHY="$outdir/tasks-$t.why" timeout "$BATS_SECS" \
	    bats --tap ${FILTER:+-f "$FILTER"} tests/e2e/tasks.bats) >"$outdir/tasks-$t.tap" 2>&1
	echo "bench-tasks: ${title[$t]}: $((SECONDS - t0)) s" >&2
done

# The table, from the TAP of each run and its reasons.
(cd "$outdir" && TOOLS="${tools_list[*]}" \
    TITLES="$(for t in "${tools_list[@]}"; do echo "${title[$t]}"; done)" \
    WHYS="$(for t in "${tools_list[@]}"; do echo "${why[$t]:-}"; done)" \
    python3 "$here/bench-tasks/table.py") >"$md"
cat "$md"
