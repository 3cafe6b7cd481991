#!/bin/sh
# mk/layers.sh: the layering the code keeps, checked on its includes.
# Every #include of a header of the tree names its folder
# ("wire/pp2.h"; the build has -I. alone), and a folder includes only
# the folders its rule below allows: itself and lib/, and those named.
# Prints file:line for each include that breaks a rule and exits 1;
# `make lint-layers` (in `make lint` and `make check`) runs it.
# tests/ may include any folder; its own headers stay bare.
set -eu

# FOLDER: the folders it may include besides itself and lib/.  Read
# from the bottom up: a folder names only folders below it, so no
# circle can form.  What it says, among others: lib/ includes only
# lib/; wire/ (protocol bytes) never proxy/ nor any process; sandbox/
# (the sandbox's side of the clone) never runner/ nor proxy/; proxy/
# never runner/; only cordon.c, mcp/ and offline/ include runner/.
rules='
lib:
session:
sshagent:
git:
logs:
policies:
plan: policies
profile: policies
secrets: policies
certs: policies
wire: policies
bridge: certs wire
sandbox: bridge git plan policies secrets session wire
guard: git plan sandbox
proxy: certs policies sandbox wire
proxyd: certs policies proxy
agent: policies proxy sshagent
confine: certs policies proxy
notify: guard policies sandbox
runner: agent bridge certs confine guard notify plan policies profile proxy sandbox secrets session wire
mcp: runner session
offline: policies proxy runner sandbox
front.c: session
cordon.c: bridge certs logs mcp policies profile proxyd runner session
'

headers=$(git ls-files '*.h' | grep -v '^tests/')
git grep -n -e '^#[[:space:]]*include[[:space:]]*"' -- '*.c' '*.h' \
    ':!tests/' |
    sed -n 's/^\([^:]*\):\([0-9]*\):.*include[[:space:]]*"\([^"]*\)".*/\1 \2 \3/p' |
    awk '{ f = $1; sub(/\/.*/, "", f); print $1, $2, f, $3 }' |
    awk -v rules="$rules" -v headers="$headers" '
    BEGIN {
	n = split(rules, r, "\n")
	for (i = 1; i <= n; i++) {
		if (r[i] == "")
			continue
		k = split(r[i], w, /[: ]+/)
		known[w[1]] = 1
		for (j = 2; j <= k; j++)
			if (w[j] != "")
				ok[w[1], w[j]] = 1
	}
	n = split(headers, h, "\n")
	for (i = 1; i <= n; i++) {
		b = h[i]; sub(/.*\//, "", b)
		base[b] = h[i]
	}
    }
    function bad(msg) { printf "%s:%s: %s\n", $1, $2, msg; errs++ }
    {
	f = $1; from = $3; inc = $4
	if (index(inc, "/") == 0) {
		if (inc in base)
			bad("\"" inc "\" without its folder: \"" base[inc] "\"")
		next
	}
	to = inc; sub(/\/.*/, "", to)
	if (!(from in known)) {
		bad(from " has no rule in mk/layers.sh: give it its place")
		next
	}
	if (to == from || to == "lib" || ok[from, to])
		next
	bad(from " includes " to "/ (" inc "), which its rule in " \
	    "mk/layers.sh does not allow")
    }
    END {
	if (errs) {
		printf "mk/layers.sh: %d include(s) against the layering\n",
		    errs > "/dev/stderr"
		exit 1
	}
    }'
