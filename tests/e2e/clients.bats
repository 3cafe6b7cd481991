#!/usr/bin/env bats
# Real clients inside cordon run: npm, pnpm, yarn, Go, cargo, git, pip, Java,
# Maven, Node, Python, curl and wget, each against a real server this file starts on
# 127.0.0.1, with nothing but the allowlist on the command line
# (--resolve pins the name, --allow-cidr lets loopback past the address
# checks, --allow-domain allows the name on the server's port).  Each
# client is also pointed at evil.test, pinned to the same server but not
# allowed: it must fail, the server must never see it, and the run's
# summary must name the host and the flag that would allow it.
#
# The runs are the test user's (when the suite runs as root), git's also
# root's.  The packages, the wheel, the Go module, the crate and the
# repositories are made here (tests/e2e/clients/mkpkg.py, git); the
# servers are tests/e2e/clients/serve.py (static files, git http-backend,
# a TCP echo) and tests/tools/httpd.  Nothing comes from the network.
#
# Two kinds of client:
# - those that honour the proxy variables cordon run sets (npm, yarn, Go,
#   cargo, git, pip, Python's urllib, wget), or its JAVA_TOOL_OPTIONS (the
#   JDK's HTTP clients): they go through the proxy today;
# - those that ignore them (Node 20's fetch and https, a raw socket, curl
#   with the variables unset): the capture takes every TCP connection of
#   the sandbox to the proxy, and the sandbox's resolver answers names by
#   policy.  Without the capture they find no resolver and no route, and
#   these tests fail.  (Node 24 and later read the variables with
#   NODE_USE_ENV_PROXY, which cordon sets; Node 20 does not.)
#
# A client that is missing fails its test (make deps installs them all):
# see need.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	FIX="$BATS_TEST_DIRNAME/clients"
	# One throwaway CA; the origin's certificate names every host used.
	sh "$BATS_TEST_DIRNAME/../../mk/origin-cert.sh" "$UDIR/ca" up.test \
	    npm.test git.test pypi.test goproxy.test crates.test \
	    maven.test evil.test
	cp "$UDIR/ca/origin-ca.pem" "$WS/ca.pem"
	chmod 644 "$WS/ca.pem"
	ORIGIN_LOG="$BATS_TEST_TMPDIR/origin.log"
	touch "$ORIGIN_LOG"
	SERVE_AUTH=()
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# Fails, saying so, when a program a test needs is not installed: under
# CI a missing client is a broken set-up, never a pass or a skip.
need() {
	local p
	for p in "$@"; do
		if ! command -v "$p" >/dev/null 2>&1; then
			echo "missing $p: run 'make deps'" >&2
			return 1
		fi
	done
}

# Sets ALLOW to the flags that allow NAME on PORT, and pins evil.test to
# the same server, so that only the allowlist keeps it out.
allow() {
	ALLOW=(--resolve "$1:127.0.0.1" --resolve evil.test:127.0.0.1
	    --allow-cidr 127.0.0.1/32 --allow-domain "$1:$2")
}

# Starts serve.py over HTTPS (http with $1 = plain) on a free port, $PORT,
# serving $UDIR/www and, under /git/, the repositories of $UDIR/git.  With
# SERVE_AUTH=(--auth VALUE ...), only requests that carry one of the
# VALUEs as their Authorization header are answered; others get 401.
start_serve() {
	local tls=(--tls "$UDIR/ca/origin.pem" "$UDIR/ca/origin.key")
	[ "${1:-}" = plain ] && tls=()
	PORT=$(free_port)
	mkdir -p "$UDIR/www" "$UDIR/git"
	start_bg serve python3 "$FIX/serve.py" http --listen "$PORT" \
	    --root "$UDIR/www" --git "$UDIR/git" --log "$ORIGIN_LOG" "${tls[@]}" \
	    "${SERVE_AUTH[@]}"
	wait_listen "tcp:127.0.0.1:$PORT"
}

# Starts tests/tools/httpd over HTTPS on a free port, $PORT: "/" answers
# "hello".
start_httpd() {
	PORT=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$PORT" \
	    --tls-cert "$UDIR/ca/origin.pem" --tls-key "$UDIR/ca/origin.key" \
	    --log "$ORIGIN_LOG"
	wait_listen "tcp:127.0.0.1:$PORT"
}

# The run's summary (standard error, in $output) names HOST:PORT as
# refused, with the flag that would allow it; the origin never saw HOST.
# Without PORT, HOST is a name the sandbox's resolver was refused (a
# lookup answered NXDOMAIN has no port).
refused() {
	local target="$1${2:+:$2}"
	[[ "$output" == *"cordon: refused "*" $target ("* ]] || {
		echo "no refusal of $target in the summary" >&2
		return 1
	}
	[[ "$output" == *"cordon: to allow $target: "*"--allow-domain $target"* ]] || {
		echo "no fix for $target in the summary" >&2
		return 1
	}
	if grep -q "$1" "$ORIGIN_LOG"; then
		echo "the origin saw $1:" >&2
		cat "$ORIGIN_LOG" >&2
		return 1
	fi
}

# Every line of $WS/egress.log for host $1 reads $2 ("PROTOCOL DECISION";
# "connect allow": through the proxy variables, in CONNECT tunnels).
logged_as() {
	local got
	got=$(jq -r --arg h "$1" 'select(.event != "open") | select(.host == $h) | .protocol + " " +
	    .decision' "$WS/egress.log" | sort -u)
	[ "$got" = "$2" ] || {
		echo "$1 logged as: ${got:-nothing}" >&2
		return 1
	}
}

# --- npm ----------------------------------------------------------------

# A static registry: /cordon-probe is the packument, the tarball under
# /cordon-probe/-/.  HOME is made visible, read-only as a real home is
# inside (sandbox_setup's is under /tmp, which the sandbox replaces with a
# writable tmpfs of its own), with an empty ~/.npm the run may write: npm
# cannot work without a writable cache (the example in cordon-policy(5)),
# and fails with "ENOENT ... mkdir ~/.npm" when it has none.
npm_setup() {
	need npm node
	start_serve
	python3 "$FIX/mkpkg.py" npm "$UDIR/www" cordon-probe 1.0.0 \
	    "https://$1:$PORT"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/home"
}

# cordon-probe came from npm.test and node found it (in $lines): its
# tarball fetched through the proxy, in CONNECT tunnels, each logged in
# $WS/egress.log.
probe_installed() {
	printf '%s\n' "${lines[@]}" | grep -qx "cordon-probe 1.0.0" ||
	    return 1
	grep -q '^GET /cordon-probe/-/cordon-probe-1.0.0.tgz npm.test' \
	    "$ORIGIN_LOG" || return 1
	logged_as npm.test "connect allow"
}

@test "npm install from a registry over HTTPS, fresh home, no flag, as the test user" {
	npm_setup npm.test
	allow npm.test "$PORT"
	[ ! -e "$UDIR/home/.npm" ]
	run in_sandbox --log "$WS/egress.log" --report "$WS/report.json" \
	    "${ALLOW[@]}" \
	    -- sh -c "npm install --no-audit --no-fund --no-update-notifier \
	    --registry https://npm.test:$PORT/ --cafile ca.pem cordon-probe &&
	    node -p 'require(\"cordon-probe\")'"
	[ "$status" -eq 0 ]
	[[ "$output" == *"added 1 package"* ]]
	grep -q '^GET /cordon-probe npm.test' "$ORIGIN_LOG"
	probe_installed
	[ -f "$WS/package-lock.json" ]
	# npm's cache went to the scratch layer: listed, and not on the host.
	[[ "$output" == *"cordon: written outside the writable roots, into the scratch layer (discarded at exit): ~/.npm ("* ]]
	[[ "$output" == *"to keep ~/.npm between runs: pass --keep ~/.npm (cordon's own copy; the host's ~/.npm stays as it is)"* ]]
	[ "$(jq -r '.scratch.written[0].path' "$WS/report.json")" = "~/.npm" ]
	[ "$(jq -r '.scratch.written[0].files' "$WS/report.json")" -gt 0 ]
	[ ! -e "$UDIR/home/.npm" ]
}

@test "npm install from a registry not allowed fails, and the summary says how to allow it" {
	npm_setup evil.test
	allow npm.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- npm install \
	    --no-audit --no-fund --no-update-notifier --fetch-retries 0 \
	    --registry "https://evil.test:$PORT/" --cafile ca.pem cordon-probe
	[ "$status" -ne 0 ]
	[[ "$output" == *"npm error"* ]]
	[ ! -e "$WS/node_modules/cordon-probe" ]
	refused evil.test "$PORT"
	# npm's "A complete log of this run" is in ~/.npm/_logs, in the
	# scratch layer: the summary says so, and how to keep such logs.
	[[ "$output" == *"A complete log of this run can be found in"* ]]
	[[ "$output" == *"cordon: npm's logs (~/.npm/_logs, where npm says \"A complete log of this run can be found\") went with the scratch layer; to keep them: pass --keep ~/.npm, or set npm_config_logs_dir to a folder in the workspace"* ]]
	[ ! -e "$UDIR/home/.npm" ]
}

# --- pnpm (from the npm registry, pinned in tests/npm) -------------------

# The same registry as npm's; pnpm itself copied where the test user can
# read it.  Its content-addressed store and its metadata cache live in
# the home (~/.local/share/pnpm, ~/.cache/pnpm).
pnpm_setup() {
	need node
	[ -x "$BATS_TEST_DIRNAME/../npm/node_modules/.bin/pnpm" ] || {
		echo "missing pnpm: run 'make deps' (tests/npm)" >&2
		return 1
	}
	cp -R "$BATS_TEST_DIRNAME/../npm/node_modules/pnpm" "$UDIR/bin/pnpm"
	PNPM="$UDIR/bin/pnpm/bin/pnpm.cjs"
	npm_setup "$1"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/bin/pnpm"
}

@test "pnpm add from a registry over HTTPS, fresh home, no flag, as the test user" {
	pnpm_setup npm.test
	allow npm.test "$PORT"
	run in_sandbox --log "$WS/egress.log" "${ALLOW[@]}" -- sh -c \
	    "node $PNPM add --registry=https://npm.test:$PORT/ \
	    --config.cafile=ca.pem cordon-probe &&
	    node -p 'require(\"cordon-probe\")'"
	[ "$status" -eq 0 ]
	probe_installed
	[ -f "$WS/pnpm-lock.yaml" ]
	# Its store and cache went to the scratch layer: listed, not on the
	# host.
	[[ "$output" == *"~/.local/share/pnpm ("* ]]
	[[ "$output" == *"~/.cache/pnpm ("* ]]
	[ ! -e "$UDIR/home/.local" ]
	[ ! -e "$UDIR/home/.cache" ]
}

@test "pnpm add from a registry not allowed fails, and the summary says how to allow it" {
	pnpm_setup evil.test
	allow npm.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- node "$PNPM" add \
	    --registry="https://evil.test:$PORT/" --config.cafile=ca.pem \
	    --config.fetch-retries=0 cordon-probe
	[ "$status" -ne 0 ]
	[[ "$output" == *"ERR_PNPM_FETCH_403"* ]]
	[ ! -e "$WS/node_modules/cordon-probe" ]
	refused evil.test "$PORT"
}

# --- yarn (classic) ------------------------------------------------------

# Debian's yarn 1, yarnpkg, against the npm registry of npm_setup.  It
# finds its modules in /usr/share/nodejs, where Debian's Node looks and
# a Node from another archive does not: NODE_PATH says it to both.
YARN_ADD='NODE_PATH=/usr/share/nodejs npm_config_cafile=ca.pem \
	yarnpkg add --non-interactive --no-progress --network-timeout 10000 \
	--registry "$0" cordon-probe'

@test "yarn add from a registry over HTTPS, fresh home, no flag, as the test user" {
	need yarnpkg
	npm_setup npm.test
	allow npm.test "$PORT"
	[ ! -e "$UDIR/home/.cache" ]
	run in_sandbox --log "$WS/egress.log" --report "$WS/report.json" \
	    "${ALLOW[@]}" -- sh -c \
	    "$YARN_ADD && node -p 'require(\"cordon-probe\")'" \
	    "https://npm.test:$PORT/"
	[ "$status" -eq 0 ]
	[[ "$output" == *"success Saved 1 new dependency"* ]]
	grep -q '^GET /cordon-probe npm.test' "$ORIGIN_LOG"
	probe_installed
	grep -q "^cordon-probe@" "$WS/yarn.lock"
	# yarn's cache went to the scratch layer: listed, and not on the host.
	[[ "$output" == *"cordon: written outside the writable roots, into the scratch layer (discarded at exit): "*"~/.cache/yarn ("* ]]
	jq -e '.scratch.written[] | select(.path == "~/.cache/yarn" and
	    .files > 0)' "$WS/report.json"
	[ ! -e "$UDIR/home/.cache" ]
}

@test "yarn add from a registry not allowed fails, and the summary says how to allow it" {
	need yarnpkg
	npm_setup evil.test
	allow npm.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- sh -c "$YARN_ADD" "https://evil.test:$PORT/"
	[ "$status" -ne 0 ]
	[[ "$output" == *"tunneling socket could not be established, statusCode=403"* ]]
	[ ! -e "$WS/node_modules/cordon-probe" ]
	refused evil.test "$PORT"
}

# --- Go -----------------------------------------------------------------

# A GOPROXY of static files over HTTPS (mkpkg.py gomod) with one module,
# and a module in the workspace that needs it.  No checksum database:
# go.sum is written from what the proxy sends.
go_setup() {
	need go
	start_serve
	python3 "$FIX/mkpkg.py" gomod "$UDIR/www" cordon.test/probe v1.0.0
	printf 'module ws\n\ngo 1.19\n\nrequire cordon.test/probe v1.0.0\n' \
	    >"$WS/go.mod"
	printf '%s\n' 'package main' 'import ("fmt"; "cordon.test/probe")' \
	    'func main() { fmt.Println(probe.Who) }' >"$WS/main.go"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/home" "$WS"
}

GO_RUN='SSL_CERT_FILE=ca.pem GOPROXY="$0" GOFLAGS=-mod=mod GOSUMDB=off \
	go run .'

@test "go run fetches a module through a GOPROXY over HTTPS, fresh home, no flag, as the test user" {
	go_setup
	allow goproxy.test "$PORT"
	[ ! -e "$UDIR/home/go" ]
	run in_sandbox --log "$WS/egress.log" --report "$WS/report.json" \
	    "${ALLOW[@]}" -- sh -c "$GO_RUN" "https://goproxy.test:$PORT"
	[ "$status" -eq 0 ]
	printf '%s\n' "${lines[@]}" | grep -qx "cordon.test/probe v1.0.0"
	grep -q '^GET /cordon.test/probe/@v/v1.0.0.mod goproxy.test' "$ORIGIN_LOG"
	grep -q '^GET /cordon.test/probe/@v/v1.0.0.zip goproxy.test' "$ORIGIN_LOG"
	grep -q '^cordon.test/probe v1.0.0 h1:' "$WS/go.sum"
	# Through the proxy variables: CONNECT tunnels, each logged.
	logged_as goproxy.test "connect allow"
	# The module cache and the build cache went to the scratch layer:
	# listed, and not on the host.
	[[ "$output" == *"cordon: written outside the writable roots, into the scratch layer (discarded at exit): "*"~/go/pkg ("* ]]
	[[ "$output" == *"~/.cache/go-build ("* ]]
	jq -e '.scratch.written[] | select(.path == "~/go/pkg" and .files > 0)' \
	    "$WS/report.json"
	jq -e '.scratch.written[] | select(.path == "~/.cache/go-build" and
	    .files > 0)' "$WS/report.json"
	[ ! -e "$UDIR/home/go" ]
	[ ! -e "$UDIR/home/.cache" ]
}

@test "go run with a GOPROXY not allowed fails, and the summary says how to allow it" {
	go_setup
	allow goproxy.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- sh -c "$GO_RUN" "https://evil.test:$PORT"
	[ "$status" -ne 0 ]
	[[ "$output" == *"cordon.test/probe@v1.0.0: "*"Forbidden"* ]]
	[ ! -e "$WS/go.sum" ]
	refused evil.test "$PORT"
}

# --- cargo --------------------------------------------------------------

# A Cargo registry over HTTPS (mkpkg.py crate): its index a git
# repository served by git http-backend, the .crate a static file; a
# crate in the workspace depends on it.  Debian's cargo by its path, not
# one a rustup of the machine's may put first in PATH.  CARGO_HTTP_CAINFO
# trusts the test's CA for the index (git over cargo's own HTTP
# transport) and the download alike.
cargo_setup() {
	need /usr/bin/cargo
	start_serve
	python3 "$FIX/mkpkg.py" crate "$UDIR/www" "$UDIR/git" cordon-probe \
	    1.0.0 "https://$1:$PORT"
	mkdir -p "$WS/src"
	printf '%s\n' '[package]' 'name = "ws"' 'version = "0.1.0"' \
	    'edition = "2018"' '[dependencies]' \
	    'cordon-probe = { version = "1.0.0", registry = "probe" }' \
	    >"$WS/Cargo.toml"
	echo 'fn main() { println!("{}", cordon_probe::WHO); }' \
	    >"$WS/src/main.rs"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/home" "$WS"
}

CARGO_RUN='CARGO_HTTP_CAINFO=ca.pem CARGO_NET_RETRY=0 \
	CARGO_REGISTRIES_PROBE_INDEX="$0" /usr/bin/cargo run -q'

@test "cargo run fetches a crate from a git-index registry over HTTPS, fresh home, no flag, as the test user" {
	cargo_setup crates.test
	allow crates.test "$PORT"
	[ ! -e "$UDIR/home/.cargo" ]
	run in_sandbox --log "$WS/egress.log" --report "$WS/report.json" \
	    "${ALLOW[@]}" -- sh -c "$CARGO_RUN" \
	    "https://crates.test:$PORT/git/index.git"
	[ "$status" -eq 0 ]
	printf '%s\n' "${lines[@]}" | grep -qx "cordon-probe 1.0.0"
	grep -q '^POST /git/index.git/git-upload-pack crates.test' "$ORIGIN_LOG"
	grep -q '^GET /crates/cordon-probe/cordon-probe-1.0.0.crate crates.test' \
	    "$ORIGIN_LOG"
	grep -q '^name = "cordon-probe"' "$WS/Cargo.lock"
	# Through the proxy variables: CONNECT tunnels, each logged.
	logged_as crates.test "connect allow"
	# The registry's index, the .crate and its sources went to the
	# scratch layer: listed, and not on the host.
	[[ "$output" == *"cordon: written outside the writable roots, into the scratch layer (discarded at exit): "*"~/.cargo/registry ("* ]]
	jq -e '.scratch.written[] | select(.path == "~/.cargo/registry" and .files > 0)' \
	    "$WS/report.json"
	[ ! -e "$UDIR/home/.cargo" ]
}

@test "cargo run with a registry not allowed fails, and the summary says how to allow it" {
	cargo_setup evil.test
	allow crates.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- sh -c "$CARGO_RUN" \
	    "https://evil.test:$PORT/git/index.git"
	[ "$status" -ne 0 ]
	[[ "$output" == *"failed to fetch \`https://evil.test:$PORT/git/index.git\`"* ]]
	[[ "$output" == *"CONNECT tunnel failed, response 403"* ]]
	[ ! -e "$WS/Cargo.lock" ]
	refused evil.test "$PORT"
}

# --- git ----------------------------------------------------------------

# A bare repository served by git http-backend (smart HTTP, plain HTTP
# through the proxy's forward path): main has one commit, next a second
# on top of it.
git_setup() {
	need git
	local src="$BATS_TEST_TMPDIR/src" g=(git -c user.name=cordon
	    -c user.email=cordon@up.test -c init.defaultBranch=main)
	"${g[@]}" init -q "$src"
	echo one >"$src/file"
	"${g[@]}" -C "$src" add file
	"${g[@]}" -C "$src" commit -q -m first
	"${g[@]}" -C "$src" checkout -q -b next
	echo two >>"$src/file"
	"${g[@]}" -C "$src" commit -q -am second
	mkdir -p "$UDIR/git"
	git clone -q --bare "$src" "$UDIR/git/repo.git"
	start_serve plain
}

# Clones main over smart HTTP into the workspace (an ordinary clone: its
# config runs nothing, so the check after the run keeps it), then
# fetches next into it.
GIT_CLONE_FETCH='set -e
	git clone -q --single-branch --branch main "$0" c
	cd c
	git log --format=%s
	git fetch -q origin next
	git log --format=%s FETCH_HEAD | head -n 1'

@test "git clone and git fetch over smart HTTP, as the test user and as root" {
	git_setup
	allow git.test "$PORT"
	run in_sandbox --log "$WS/egress.log" "${ALLOW[@]}" -- sh -c \
	    "$GIT_CLONE_FETCH" "http://git.test:$PORT/git/repo.git"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = first ]
	[ "${lines[1]}" = second ]
	# The smart protocol: the refs advertised, then packs by POST.
	grep -q '^GET /git/repo.git/info/refs?service=git-upload-pack git.test' \
	    "$ORIGIN_LOG"
	[ "$(grep -c '^POST /git/repo.git/git-upload-pack git.test' \
	    "$ORIGIN_LOG")" -ge 2 ]
	logged_as git.test "http allow"
	# Root gets no further than the allowlist, and no less; it clones
	# into a folder of its own (without capabilities inside, the test
	# user's folder is not root's to write).
	mkdir "$WS/root"
	run in_sandbox_as_me "${ALLOW[@]}" -- sh -c \
	    "cd root && $GIT_CLONE_FETCH" "http://git.test:$PORT/git/repo.git"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = first ]
	[ "${lines[1]}" = second ]
}

@test "git clone from a host not allowed fails, as the test user and as root" {
	git_setup
	allow git.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- git clone -q \
	    "http://evil.test:$PORT/git/repo.git" /tmp/c
	[ "$status" -ne 0 ]
	[[ "$output" == *"fatal: unable to access"*"403"* ]]
	refused evil.test "$PORT"
	run in_sandbox_as_me "${ALLOW[@]}" -- git clone -q \
	    "http://evil.test:$PORT/git/repo.git" /tmp/c
	[ "$status" -ne 0 ]
	refused evil.test "$PORT"
}

# --- the tools' token files ---------------------------------------------

# A registry and a git server that want a token, and the token only in the
# tools' own files in the home (~/.npmrc, ~/.netrc, ~/.git-credentials):
# the sandbox gets copies whose tokens are placeholders, and the proxy
# puts the real ones in for their hosts, inspecting TLS with cordon's CA
# (made in the home with `cordon ca init`; the proxy trusts the origin
# through --upstream-ca).  The real tokens must never be readable inside.
NPM_TOKEN_REAL=s3cr3t-npm-t0ken

token_home() {
	mkdir -p "$UDIR/home"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/home"
	(as_user "$UDIR/home" "$UCORDON" ca init >/dev/null)
}

# The command inside: npm install, then what it can read of the token.
NPM_TOKEN_RUN='npm install --no-audit --no-fund --no-update-notifier \
	--fetch-retries 0 --registry "$0" cordon-probe >/dev/null || exit 3
	node -p "require(\"cordon-probe\")"
	grep _authToken ~/.npmrc
	grep -rs "$1" ~/.npmrc /proc/self/environ /proc/1/environ /run/cordon \
	    && echo "token seen"
	exit 0'

@test "tokens: npm's token in ~/.npmrc reaches the registry that wants it, never the sandbox" {
	SERVE_AUTH=(--auth "Bearer $NPM_TOKEN_REAL")
	npm_setup npm.test
	allow npm.test "$PORT"
	token_home
	printf 'registry=https://npm.test:%s/\n//npm.test:%s/:_authToken=%s\n' \
	    "$PORT" "$PORT" "$NPM_TOKEN_REAL" >"$UDIR/home/.npmrc"
	run in_sandbox --report "$WS/report.json" \
	    --upstream-ca "$UDIR/ca/origin-ca.pem" "${ALLOW[@]}" -- sh -c \
	    "$NPM_TOKEN_RUN" "https://npm.test:$PORT/" "$NPM_TOKEN_REAL"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "cordon-probe 1.0.0" ]
	[[ "${lines[1]}" =~ ^//npm.test:[0-9]+/:_authToken=cordon-phantom-[0-9a-f]{32}$ ]]
	[[ "$output" != *"token seen"* ]]
	[[ "$output" != *"$NPM_TOKEN_REAL"* ]]
	[[ "$output" == *"cordon: given to the command with placeholders for their tokens, which the proxy fills in for each token's host alone, over TLS it inspects: ~/.npmrc (npm: npm.test)"* ]]
	[ "$(jq -c '.token_files[0] | [.file, .hosts, .filled]' \
	    "$WS/report.json")" = '["~/.npmrc",["npm.test"],true]' ]
	# The registry answered, so it got the real token; none went without.
	grep -q '^GET /cordon-probe npm.test' "$ORIGIN_LOG"
	run ! grep -q ' 401$' "$ORIGIN_LOG"
	# The host's file is as it was.
	grep -qx "//npm.test:$PORT/:_authToken=$NPM_TOKEN_REAL" "$UDIR/home/.npmrc"
}

@test "tokens: without cordon's CA the copy's placeholder is not filled in, and the summary says how to fix it" {
	SERVE_AUTH=(--auth "Bearer $NPM_TOKEN_REAL")
	npm_setup npm.test
	allow npm.test "$PORT"
	printf '//npm.test:%s/:_authToken=%s\n' "$PORT" "$NPM_TOKEN_REAL" \
	    >"$UDIR/home/.npmrc"
	run in_sandbox --upstream-ca "$UDIR/ca/origin-ca.pem" "${ALLOW[@]}" \
	    -- sh -c "cat ~/.npmrc"
	[ "$status" -eq 0 ]
	[[ "$output" =~ //npm.test:[0-9]+/:_authToken=cordon-phantom-[0-9a-f]{32} ]]
	[[ "$output" != *"$NPM_TOKEN_REAL"* ]]
	[[ "$output" == *"which nothing fills in (the proxy needs cordon's CA to inspect TLS: run \`cordon ca init\`): ~/.npmrc (npm: npm.test)"* ]]
}

@test "tokens: curl with ~/.netrc and git with ~/.git-credentials, as root; the Basic password is filled in, never seen" {
	git_setup
	# plain git_setup serves HTTP; the tokens need HTTPS.
	teardown_bg
	SERVE_AUTH=(--auth "Basic $(printf 'alice:netrc-pw-1' | base64)"
	    --auth "Basic $(printf 'carol:p@ss-2' | base64)")
	start_serve
	mkdir -p "$UDIR/www"
	echo hello-netrc >"$UDIR/www/file.txt"
	allow git.test "$PORT"
	mkdir -p "$UDIR/home"
	HOME="$UDIR/home" "$UCORDON" ca init >/dev/null
	printf 'machine git.test login alice password netrc-pw-1\n' \
	    >"$UDIR/home/.netrc"
	printf 'https://carol:p%%40ss-2@git.test:%s\n' "$PORT" \
	    >"$UDIR/home/.git-credentials"
	cd "$WS"
	run env HOME="$UDIR/home" XDG_CONFIG_HOME="$UDIR/home/.config" \
	    "$UCORDON" run --read-only "$UDIR/bin" \
	    --upstream-ca "$UDIR/ca/origin-ca.pem" "${ALLOW[@]}" -- sh -c '
	    curl -sS --netrc "$0/file.txt"
	    git -c credential.helper=store clone -q --branch main \
		"$0/git/repo.git" /tmp/c &&
		git -C /tmp/c log --format=%s
	    cat ~/.netrc ~/.git-credentials
	    grep -rs -e netrc-pw-1 -e "p%40ss-2" ~/.netrc ~/.git-credentials \
		/proc/self/environ && echo "token seen"
	    exit 0' "https://git.test:$PORT"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = hello-netrc ]
	[ "${lines[1]}" = first ]
	[[ "$output" =~ machine\ git.test\ login\ alice\ password\ cordon-phantom-[0-9a-f]{32} ]]
	[[ "$output" =~ https://carol:cordon-phantom-[0-9a-f]{32}@git.test ]]
	[[ "$output" != *"token seen"* ]]
	[[ "$output" == *"~/.netrc (curl, git, pip: git.test), ~/.git-credentials (git: git.test)"* ]]
	grep -q '^GET /file.txt git.test' "$ORIGIN_LOG"
	grep -q '^POST /git/repo.git/git-upload-pack git.test' "$ORIGIN_LOG"
}

# --- pip ----------------------------------------------------------------

# A PEP 503 simple index over HTTPS with one wheel made here.  HOME is
# read-only: pip finds its cache unwritable and goes on without it.
# (A python3 without pip fails inside, "No module named pip".)
pip_setup() {
	need python3
	start_serve
	python3 "$FIX/mkpkg.py" wheel "$UDIR/www" cordon_probe 1.0
}

PIP_INSTALL='python3 -m pip install --disable-pip-version-check --retries 0 \
	--timeout 10 --cert ca.pem --target site --index-url "$0" cordon_probe'

@test "pip install from a simple index over HTTPS, fresh home, no flag, as the test user" {
	pip_setup
	allow pypi.test "$PORT"
	run in_sandbox --log "$WS/egress.log" "${ALLOW[@]}" -- sh -c "$PIP_INSTALL &&
	    PYTHONPATH=site python3 -c 'import cordon_probe; print(cordon_probe.WHO)'" \
	    "https://pypi.test:$PORT/simple/"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Successfully installed cordon_probe-1.0"* ]]
	printf '%s\n' "${lines[@]}" | grep -qx "cordon_probe 1.0"
	grep -q '^GET /simple/cordon-probe/ pypi.test' "$ORIGIN_LOG"
	grep -q '^GET /files/cordon_probe-1.0-py3-none-any.whl pypi.test' \
	    "$ORIGIN_LOG"
	logged_as pypi.test "connect allow"
	# Whatever pip cached (this index sends nothing cacheable) is not
	# on the host.
	[ ! -e "$UDIR/home/.cache/pip" ]
}

@test "pip install from an index not allowed fails, and the summary says how to allow it" {
	pip_setup
	allow pypi.test "$PORT"
	run in_sandbox --read-only "$UDIR/home" "${ALLOW[@]}" -- sh -c \
	    "$PIP_INSTALL" "https://evil.test:$PORT/simple/"
	[ "$status" -ne 0 ]
	[[ "$output" == *"No matching distribution found for cordon_probe"* ]]
	[ ! -e "$WS/site/cordon_probe.py" ]
	refused evil.test "$PORT"
}

# --- Python urllib, wget: the proxy variables ----------------------------

URLLIB='import ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile="ca.pem")
print(urllib.request.urlopen(sys.argv[1], context=ctx, timeout=10).read().decode(), end="")'

@test "Python urllib over HTTPS through the proxy variables; a refused host fails" {
	need python3
	start_httpd
	allow up.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- python3 -c "$URLLIB" \
	    "https://up.test:$PORT/"
	[ "$status" -eq 0 ]
	[ "$output" = hello ]
	grep -q '^GET / up.test' "$ORIGIN_LOG"
	run in_sandbox "${ALLOW[@]}" -- python3 -c "$URLLIB" \
	    "https://evil.test:$PORT/"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Tunnel connection failed: 403"* ]]
	refused evil.test "$PORT"
}

@test "wget over HTTPS through the proxy variables; a refused host fails" {
	need wget
	start_httpd
	allow up.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- wget -q -O - --ca-certificate=ca.pem \
	    "https://up.test:$PORT/"
	[ "$status" -eq 0 ]
	[ "$output" = hello ]
	grep -q '^GET / up.test' "$ORIGIN_LOG"
	run in_sandbox "${ALLOW[@]}" -- wget -q -O - --tries=1 \
	    --ca-certificate=ca.pem "https://evil.test:$PORT/"
	[ "$status" -ne 0 ]
	refused evil.test "$PORT"
}

# --- Java: the proxy through JAVA_TOOL_OPTIONS ----------------------------

# Compiles tests/e2e/clients/Get.java into the workspace, and makes
# ca.p12, a trust store of the origin's CA (the JVM reads no PEM file).
java_setup() {
	need javac java keytool
	javac -d "$WS" "$FIX/Get.java"
	keytool -importcert -noprompt -alias origin -file "$WS/ca.pem" \
	    -keystore "$WS/ca.p12" -storetype PKCS12 -storepass changeit \
	    >/dev/null 2>&1
	chmod 644 "$WS"/*.class "$WS/ca.p12"
	JAVA_TRUST=(-Djavax.net.ssl.trustStore=ca.p12
	    -Djavax.net.ssl.trustStorePassword=changeit)
}

@test "Java: HttpClient and HttpURLConnection through the proxy, the JVM told by JAVA_TOOL_OPTIONS" {
	java_setup
	start_httpd
	allow up.test "$PORT"
	for api in client url; do
		run in_sandbox "${ALLOW[@]}" --log "$UDIR/egress.log" -- \
		    java "${JAVA_TRUST[@]}" -cp . Get "$api" \
		    "https://up.test:$PORT/"
		[ "$status" -eq 0 ]
		[[ "$output" == *"200 hello"* ]]
		# Through the proxy's CONNECT, not the capture.
		[ "$(jq -r 'select(.event != "open") | .protocol' "$UDIR/egress.log" | sort -u)" = connect ]
		rm "$UDIR/egress.log"
		run in_sandbox "${ALLOW[@]}" -- java "${JAVA_TRUST[@]}" \
		    -cp . Get "$api" "https://evil.test:$PORT/"
		[ "$status" -eq 1 ]
		# Each client's words for the proxy's 403 to its CONNECT.
		[[ "$output" == *"java: java.io.IOException: Tunnel failed, got: 403"* ||
		    "$output" == *"java: java.io.IOException: Unable to tunnel through proxy. Proxy returns \"HTTP/1.1 403 Forbidden\""* ]]
		refused evil.test "$PORT"
	done
	[ "$(grep -c '^GET / up.test' "$ORIGIN_LOG")" -eq 2 ]
}

# --- Maven --------------------------------------------------------------

# A Maven repository of static files over HTTPS with one parent POM, a
# project in the workspace that inherits it, and settings.xml sending
# every repository to https://$1:$PORT/ (Maven reads the proxy from
# JAVA_TOOL_OPTIONS, like any JVM).
maven_setup() {
	need mvn
	java_setup
	start_serve
	write "$UDIR/www/org/example/parent/1/parent-1.pom" <<-EOF
	<project xmlns="http://maven.apache.org/POM/4.0.0">
	  <modelVersion>4.0.0</modelVersion>
	  <groupId>org.example</groupId>
	  <artifactId>parent</artifactId>
	  <version>1</version>
	  <packaging>pom</packaging>
	</project>
	EOF
	write "$WS/pom.xml" <<-EOF
	<project xmlns="http://maven.apache.org/POM/4.0.0">
	  <modelVersion>4.0.0</modelVersion>
	  <parent>
	    <groupId>org.example</groupId>
	    <artifactId>parent</artifactId>
	    <version>1</version>
	    <relativePath/>
	  </parent>
	  <artifactId>cordon-probe</artifactId>
	  <packaging>pom</packaging>
	</project>
	EOF
	write "$WS/settings.xml" <<-EOF
	<settings><mirrors><mirror><id>local</id><mirrorOf>*</mirrorOf>
	<url>https://$1:$PORT/</url></mirror></mirrors></settings>
	EOF
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/home" "$WS"
}

@test "Maven fetches a parent POM through the proxy, fresh home, no flag, as the test user" {
	maven_setup maven.test
	allow maven.test "$PORT"
	[ ! -e "$UDIR/home/.m2" ]
	# The test user's HOME is not the password database's home, which
	# the JVM would take: the run tells it HOME.
	run in_sandbox --log "$WS/egress.log" "${ALLOW[@]}" -- env \
	    MAVEN_OPTS="${JAVA_TRUST[*]}" mvn -B -s settings.xml validate
	[ "$status" -eq 0 ]
	[[ "$output" == *"Building cordon-probe 1"* ]]
	[[ "$output" == *"BUILD SUCCESS"* ]]
	grep -q '^GET /org/example/parent/1/parent-1.pom maven.test' \
	    "$ORIGIN_LOG"
	logged_as maven.test "connect allow"
	# The local repository went to the scratch layer: listed, and not
	# on the host.
	[[ "$output" == *"~/.m2/repository ("* ]]
	[ ! -e "$UDIR/home/.m2" ]
}

@test "Maven with a repository not allowed fails, and the summary says how to allow it" {
	maven_setup evil.test
	allow maven.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- env MAVEN_OPTS="${JAVA_TRUST[*]}" \
	    mvn -B -s settings.xml validate
	[ "$status" -ne 0 ]
	[[ "$output" == *"Non-resolvable parent POM"* ]]
	refused evil.test "$PORT"
}

# --- clients that ignore the proxy variables ------------------------------
#
# Each of these works through the capture alone: with network.capture
# "off" the allowed case fails (the name does not resolve: EAI_AGAIN,
# "Could not resolve host") and the refused case fails without the proxy
# ever hearing of it (no summary).  With it, the refused name is answered
# NXDOMAIN inside and named in the summary with its fix (refused, without a port).

NODE_FETCH='fetch(process.argv[1]).then(r => r.text())
	.then(t => process.stdout.write(t))
	.catch(e => { console.error("fetch failed:", e.cause ? e.cause.code ||
	    e.cause.message : e.message); process.exit(1); })'

@test "Node fetch over HTTPS, ignoring the proxy variables" {
	need node
	start_httpd
	allow up.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- env NODE_EXTRA_CA_CERTS=ca.pem \
	    node -e "$NODE_FETCH" "https://up.test:$PORT/"
	[ "$status" -eq 0 ]
	[ "$output" = hello ]
	grep -q '^GET / up.test' "$ORIGIN_LOG"
	run in_sandbox "${ALLOW[@]}" -- env NODE_EXTRA_CA_CERTS=ca.pem \
	    node -e "$NODE_FETCH" "https://evil.test:$PORT/"
	[ "$status" -ne 0 ]
	[[ "$output" == *"fetch failed"* ]]
	refused evil.test
}

NODE_HTTPS_GET='require("https").get(process.argv[1], r => {
	r.setEncoding("utf8"); r.on("data", d => process.stdout.write(d));
	}).on("error", e => { console.error("https.get:", e.code || e.message);
	process.exit(1); })'

@test "Node https.get, ignoring the proxy variables" {
	need node
	start_httpd
	allow up.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- env NODE_EXTRA_CA_CERTS=ca.pem \
	    node -e "$NODE_HTTPS_GET" "https://up.test:$PORT/"
	[ "$status" -eq 0 ]
	[ "$output" = hello ]
	grep -q '^GET / up.test' "$ORIGIN_LOG"
	run in_sandbox "${ALLOW[@]}" -- env NODE_EXTRA_CA_CERTS=ca.pem \
	    node -e "$NODE_HTTPS_GET" "https://evil.test:$PORT/"
	[ "$status" -ne 0 ]
	[[ "$output" == *"https.get:"* ]]
	refused evil.test
}

RAW_SOCKET='import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
s.sendall(b"ping\n")
s.shutdown(socket.SHUT_WR)
print(s.makefile("rb").read().decode(), end="")'

@test "a raw Python socket to a TCP echo service on its port" {
	need python3
	PORT=$(free_port)
	start_bg echo python3 "$FIX/serve.py" echo --listen "$PORT" \
	    --log "$ORIGIN_LOG"
	wait_listen "tcp:127.0.0.1:$PORT"
	allow echo.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- python3 -c "$RAW_SOCKET" echo.test "$PORT"
	[ "$status" -eq 0 ]
	[ "$output" = "echo:ping" ]
	grep -q '^echo connection' "$ORIGIN_LOG"
	: >"$ORIGIN_LOG"
	run in_sandbox "${ALLOW[@]}" -- python3 -c "$RAW_SOCKET" evil.test "$PORT"
	[ "$status" -ne 0 ]
	refused evil.test
	[ ! -s "$ORIGIN_LOG" ]
}

# curl with every proxy variable unset, as a program that ignores them.
CURL_DIRECT=(env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY
    -u ALL_PROXY -u all_proxy curl -sS --max-time 10 --cacert ca.pem)

@test "curl without the proxy variables, as the test user and as root" {
	need curl
	start_httpd
	allow up.test "$PORT"
	run in_sandbox "${ALLOW[@]}" -- "${CURL_DIRECT[@]}" "https://up.test:$PORT/"
	[ "$status" -eq 0 ]
	[ "$output" = hello ]
	grep -q '^GET / up.test' "$ORIGIN_LOG"
	run in_sandbox_as_me "${ALLOW[@]}" -- "${CURL_DIRECT[@]}" \
	    "https://up.test:$PORT/"
	[ "$status" -eq 0 ]
	[ "$output" = hello ]
	run in_sandbox "${ALLOW[@]}" -- "${CURL_DIRECT[@]}" \
	    "https://evil.test:$PORT/"
	[ "$status" -ne 0 ]
	refused evil.test
}

# --- the capture itself ------------------------------------------------

@test "capture: network.capture \"off\" leaves a client that ignores the variables without a way out" {
	start_httpd
	allow up.test "$PORT"
	write "$WS/off.json" <<'J'
{"version": 1, "network": {"capture": "off"}}
J
	[ "$(id -u)" -ne 0 ] || chown "$TEST_USER:" "$WS/off.json"
	run in_sandbox --dry-run --policy "$WS/off.json" -- true
	[[ "$output" == *"capture: off (network.capture)"* ]]
	run in_sandbox --dry-run -- true
	[[ "$output" == *"capture: lo with 198.18.0.1"* ]]
	run in_sandbox "${ALLOW[@]}" --policy "$WS/off.json" -- \
	    "${CURL_DIRECT[@]}" "https://up.test:$PORT/"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Could not resolve host"* ]]
	run ! grep -q '^GET / up.test' "$ORIGIN_LOG"
}

@test "capture: UDP and QUIC off the sandbox fail at once; DNS to any server is answered inside, never sent" {
	need python3
	start_httpd
	allow up.test "$PORT"
	write "$WS/udp.py" <<'P'
import socket, struct, sys
# UDP to a public address (QUIC's port): refused by the sandbox at once.
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b"q", ("192.0.2.1", 443))
    print("udp: sent")
except OSError as e:
    print("udp: refused", e.errno)
# A DNS query to a server the sandbox cannot reach: answered anyway, from
# the pool, by the sandbox's own resolver.
q = struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
for label in sys.argv[1].split("."):
    q += bytes([len(label)]) + label.encode()
q += b"\0" + struct.pack("!HH", 1, 1)
d = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
d.settimeout(5)
d.sendto(q, ("192.0.2.53", 53))
a = d.recv(512)
print("dns: rcode", a[3] & 15, "answers", struct.unpack("!H", a[6:8])[0],
      "address", socket.inet_ntoa(a[-4:]) if a[7] else "-")
# Over TCP, two queries sent at once (as a stub that pipelines does):
# two answers, in order.
t = socket.create_connection(("192.0.2.53", 53), 5)
t.sendall(struct.pack("!H", len(q)) + q + struct.pack("!H", len(q)) +
          q[:1] + b"\x35" + q[2:])
ids = []
for _ in range(2):
    n = struct.unpack("!H", t.recv(2, socket.MSG_WAITALL))[0]
    ids.append(t.recv(n, socket.MSG_WAITALL)[:2].hex())
print("tcp: answers", " ".join(ids))
P
	run in_sandbox "${ALLOW[@]}" --report "$WS/up.json" -- \
	    python3 "$WS/udp.py" up.test
	echo "$output"
	[[ "$output" == *"udp: refused 1"* ]]
	[[ "$output" == *"dns: rcode 0 answers 1 address 198.19."* ]]
	[[ "$output" == *"tcp: answers 1234 1235"* ]]
	# Said once, in the summary and the report.
	[[ "$output" == *"cordon: refused 1 QUIC packet (UDP to port 443; clients fall back to TCP): only TCP connections and DNS lookups leave the sandbox"* ]]
	[ "$(jq -c .dropped "$WS/up.json")" = '{"quic":1,"udp":0,"other":0}' ]
	run in_sandbox "${ALLOW[@]}" --report "$WS/evil.json" -- \
	    python3 "$WS/udp.py" evil.test
	echo "$output"
	[[ "$output" == *"dns: rcode 3 answers 0"* ]]
	refused evil.test
	# The refused name in the report: no port, one entry for its three
	# lookups (UDP, then two over TCP), with its fix.
	run jq -r '.refused[] | select(.host == "evil.test") |
	    "\(.port) \(.protocol) \(.count) \(.allow) \(.fix)"' "$WS/evil.json"
	echo "$output"
	[[ "$output" == "0 dns 3 evil.test "*"--allow-domain evil.test"* ]]
	[ "$(jq .refused_total "$WS/evil.json")" -ge 1 ]
}

@test "capture: a kernel without nf_tables: the run fails closed, with the reason and the fix" {
	# nonft makes the kernel answer as one without nf_tables does.
	cd "$WS"
	run as_user "$UDIR/home" "$TOOLS_DIR/nonft" "$UCORDON" run -- \
	    touch ran
	echo "$output"
	[ "$status" -eq 125 ]
	[[ "$output" == *"the capture: its nftables rules: Protocol not supported (a kernel without nf_tables"* ]]
	[[ "$output" == *'set "capture": "off" under "network" in a policy'* ]]
	[ ! -e "$WS/ran" ]
	# The fix as given works.
	echo '{"version": 1, "network": {"capture": "off"}}' >"$UDIR/nocap.json"
	run as_user "$UDIR/home" "$TOOLS_DIR/nonft" "$UCORDON" run \
	    --policy "$UDIR/nocap.json" -- touch ran
	[ "$status" -eq 0 ]
	[ -e "$WS/ran" ]
}

@test "capture: /etc/resolv.conf names the sandbox's resolver alone" {
	run in_sandbox -- cat /etc/resolv.conf
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^nameserver' <<<"$output")" = 1 ]
	[[ "$output" == *"nameserver 127.0.0.1"* ]]
	[[ "$output" != *search* ]]
	# Read-only: a tool cannot point the sandbox elsewhere by mistake.
	run in_sandbox -- sh -c 'echo nameserver 192.0.2.53 >/etc/resolv.conf'
	[ "$status" -ne 0 ]
}

@test "capture: the sandbox's own host name is loopback, answered inside, never a refusal" {
	run in_sandbox --report "$WS/r.json" -- python3 -c '
import socket
h = socket.gethostname()
print(h, socket.gethostbyname(h), socket.getaddrinfo(h, None,
    socket.AF_INET6)[0][4][0])'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "cordon 127.0.0.1 ::1" ]
	[[ "$output" != *"refused"* ]]
	[ "$(jq -r .refused_total "$WS/r.json")" = 0 ]
}

@test "capture: a host whose resolv.conf is systemd-resolved's link into /run" {
	[ "$(id -u)" -eq 0 ] || skip "root builds that host, in a mount namespace"
	start_httpd
	allow up.test "$PORT"
	# The host's /etc as it is, but for resolv.conf: a link into /run,
	# which the sandbox gets empty.  The link must lead to ours.
	etc=$BATS_TEST_TMPDIR/etc
	mkdir -p "$etc/up" "$etc/work"
	ln -s ../run/systemd/resolve/stub-resolv.conf "$etc/up/resolv.conf"
	run unshare -m sh -c 'mount --make-rprivate / &&
	    mount -t overlay overlay \
	    -o "lowerdir=/etc,upperdir=$1/up,workdir=$1/work" /etc &&
	    shift && cd "$1" && shift && exec "$@"' sh "$etc" "$WS" \
	    "$UCORDON" run --quiet "${ALLOW[@]}" -- sh -c \
	    'readlink /etc/resolv.conf; cat /etc/resolv.conf; getent ahostsv4 up.test'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"../run/systemd/resolve/stub-resolv.conf"* ]]
	[[ "$output" == *"nameserver 127.0.0.1"* ]]
	[[ "$output" == *"198.19."*"up.test"* ]]
}

@test "host ports: network.host_ports opens those ports of the host's loopback, in every spelling, and nothing else" {
	start_httpd
	db=$PORT
	start_httpd
	other=$PORT
	# Closed by default: the sandbox's loopback is its own.
	run in_sandbox -- "${CURL_DIRECT[@]}" -k "https://127.0.0.1:$db/"
	[ "$status" -ne 0 ]
	printf '{"version": 1, "network": {"host_ports": ["localhost:%s"]}}\n' \
	    "$db" >"$UDIR/hp.json"
	for who in in_sandbox in_sandbox_as_me; do
		run $who --policy "$UDIR/hp.json" --log "$WS/hp.log" -- sh -c '
		    for h in 127.0.0.1 localhost "[::ffff:127.0.0.1]" 0.0.0.0; do
			"$@" -k "https://$h:'"$db"'/" && echo " $h"
		    done
		    "$@" -k "https://127.0.0.1:'"$other"'/" || echo " other closed"
		' sh "${CURL_DIRECT[@]}"
		echo "$who: $output"
		[ "$status" -eq 0 ]
		for h in 127.0.0.1 localhost "[::ffff:127.0.0.1]" 0.0.0.0; do
			[[ "$output" == *$'hello\n '"$h"* ]] ||
			    { echo "no answer through $h" >&2; false; }
		done
		[[ "$output" == *"other closed"* ]]
	done
	# Each went through the proxy, allowed by that entry, and logged.
	[ "$(jq -r 'select(.event != "open") | select(.decision == "allow") | .rule' "$WS/hp.log" |
	    sort -u)" = "localhost:$db" ]
	run in_sandbox --policy "$UDIR/hp.json" --dry-run -- true
	[[ "$output" == *"host ports $db-$db: the sandbox's loopback there is the host's"* ]]
	# A workspace policy may not open them; without the capture, they
	# cannot be reached, which is said, not silent.
	mkdir -p "$WS/.cordon"
	cp "$UDIR/hp.json" "$WS/.cordon/policy.json"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$WS/.cordon"
	run in_sandbox -- true
	[ "$status" -ne 0 ]
	[[ "$output" == *"a workspace policy may not open ports of the host"* ]]
	rm -r "$WS/.cordon"
	printf '{"version": 1, "network": {"capture": "off", "host_ports": ["localhost:%s"]}}\n' \
	    "$db" >"$UDIR/hp-off.json"
	run in_sandbox --policy "$UDIR/hp-off.json" -- touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"network.host_ports (localhost:$db"*"needs the capture"* ]]
	[ ! -e "$WS/ran" ]
}

# Waits up to 15 s for http://127.0.0.1:$1/ to answer with $2 in it.
wait_page() {
	local i
	for i in $(seq 150); do
		curl -s --noproxy '*' --max-time 2 "http://127.0.0.1:$1/" |
		    grep -q "$2" && return 0
		sleep 0.1
	done
	echo "no page with $2 on 127.0.0.1:$1" >&2
	return 1
}

@test "publish: a dev server inside, opened by a browser on the host, as the test user and as root" {
	need chromium python3
	for who in in_sandbox in_sandbox_as_me; do
		port=$(free_port)
		mark="served from inside by $who"
		echo "<html><body><h1 id=t>$mark</h1></body></html>" \
		    >"$WS/index.html"
		chmod 644 "$WS/index.html"
		# Closed without --publish: the server's loopback is the
		# sandbox's own.
		start_bg plain $who -- timeout 10 python3 -u -m http.server \
		    "$port" --bind 127.0.0.1
		wait_for grep -q '^Serving HTTP' "$BATS_TEST_TMPDIR/plain.log"
		run curl -s --noproxy '*' --max-time 2 "http://127.0.0.1:$port/"
		[ "$status" -ne 0 ]
		teardown_bg
		BG_PIDS=()
		# It serves until the test is done with it (a browser's first
		# start under a sanitizer can take long), then the run ends.
		rm -f "$WS/stop"
		start_bg dev $who --publish "$port" -- timeout 120 sh -c '
			python3 -m http.server "$1" --bind 127.0.0.1 &
			while [ ! -e stop ]; do sleep 0.1; done
			kill $!' sh "$port"
		dev=$BG_PID
		wait_page "$port" "$mark"
		# A real browser on the host loads it, and draws it.
		run timeout 60 env HOME="$BATS_TEST_TMPDIR/chrome" chromium \
		    --headless --no-sandbox --disable-gpu \
		    --user-data-dir="$BATS_TEST_TMPDIR/chrome" \
		    --dump-dom "http://127.0.0.1:$port/"
		[[ "$output" == *"<h1 id=\"t\">$mark</h1>"* ]]
		rm -f "$BATS_TEST_TMPDIR/shot.png"
		(cd "$BATS_TEST_TMPDIR" && timeout 60 env \
		    HOME="$BATS_TEST_TMPDIR/chrome" chromium --headless \
		    --no-sandbox --disable-gpu --window-size=640,400 \
		    --user-data-dir="$BATS_TEST_TMPDIR/chrome" \
		    --screenshot="$BATS_TEST_TMPDIR/shot.png" \
		    "http://127.0.0.1:$port/") >/dev/null 2>&1
		[ -s "$BATS_TEST_TMPDIR/shot.png" ]
		# Gone with the run, once the server is stopped.
		touch "$WS/stop"
		wait "$dev" || true
		BG_PIDS=()
		run curl -s --noproxy '*' --max-time 2 "http://127.0.0.1:$port/"
		[ "$status" -ne 0 ]
	done
	# A port already taken on the host: the run stops, with the reason.
	start_httpd
	run in_sandbox --publish "$PORT" -- touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"--publish $PORT: 127.0.0.1:$PORT on the host: Address already in use"* ]]
	[ ! -e "$WS/ran" ]
}

@test "apt as root: apt-get update and download work inside; the host's lists stay as they were" {
	[ "$(id -u)" -eq 0 ] || skip "apt's own folders are root's"
	need apt-get dpkg-deb python3
	start_serve plain
	# A flat repository with one package, served on loopback.
	mkdir -p "$UDIR/pkg/DEBIAN"
	printf 'Package: cordon-probe\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.test>\nDescription: probe\n' \
	    >"$UDIR/pkg/DEBIAN/control"
	dpkg-deb --build "$UDIR/pkg" "$UDIR/www/cordon-probe_1.0_all.deb" \
	    >/dev/null
	(cd "$UDIR/www" && dpkg-deb -f cordon-probe_1.0_all.deb &&
	    echo "Filename: ./cordon-probe_1.0_all.deb" &&
	    echo "Size: $(stat -c %s cordon-probe_1.0_all.deb)" &&
	    echo "SHA256: $(sha256sum cordon-probe_1.0_all.deb | cut -d' ' -f1)" &&
	    echo) >"$UDIR/www/Packages"
	echo "deb [trusted=yes] http://repo.test:$PORT/ ./" >"$WS/repo.list"
	before=$(ls /var/lib/apt/lists | sort | md5sum)
	apt=(apt-get -q -o "Dir::Etc::SourceList=$WS/repo.list"
	    -o Dir::Etc::SourceParts=/nonexistent)
	# A folder of root's in the workspace (the test user's) to download to.
	mkdir -p "$WS/debs"
	run in_sandbox_as_me --resolve "repo.test:127.0.0.1" \
	    --allow-domain "repo.test:$PORT" --allow-cidr 127.0.0.1/32 -- \
	    sh -c '"$@" update && cd debs && "$@" download cordon-probe' sh \
	    "${apt[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"setgroups"* ]]
	[ -s "$WS/debs/cordon-probe_1.0_all.deb" ]
	# What apt wrote of its own went to the scratch layer, and says so.
	[[ "$output" == *"into the scratch layer (discarded at exit): "*"/var/lib/apt/lists ("* ]]
	[ "$(ls /var/lib/apt/lists | sort | md5sum)" = "$before" ]
	run in_sandbox_as_me --dry-run -- true
	[[ "$output" == *"/var/lib/apt: scratch layer: writes succeed, discarded at exit (apt's, for root"* ]]
}

@test "capture: a literal address is decided as the proxy decides literals" {
	start_httpd
	allow up.test "$PORT"
	# 127.0.0.1 is the sandbox's own; 192.0.2.1 (documentation) is not
	# allowed, so the proxy refuses it before any connection.
	run in_sandbox "${ALLOW[@]}" -- "${CURL_DIRECT[@]}" \
	    "https://192.0.2.1:$PORT/"
	[ "$status" -ne 0 ]
	[[ "$output" == *"cordon: refused 1 connection: 192.0.2.1:$PORT ("* ]]
	[[ "$output" == *"--allow-domain 192.0.2.1:$PORT"* ]]
}

@test "capture: an address of the sandbox's pool that stands for no name gets the name as its fix, never allow_cidrs" {
	# 198.19.3.7 and 64:ff9b:1:1::307 are the resolver's kind of address,
	# but this run gave them to no name (one kept from another run).
	run in_sandbox --report "$WS/r.json" -- sh -c "
	    curl -sS --noproxy '*' --max-time 5 https://198.19.3.7:8443/;
	    curl -sS --noproxy '*' --max-time 5 'https://[64:ff9b:1:1::307]:8443/'"
	echo "$output"
	[[ "$output" == *"cordon: refused 2 connections: "* ]]
	[[ "$output" == *"198.19.3.7 is an address of the sandbox's own pool (198.19.0.0/16, 64:ff9b:1:1::/96), which its resolver gives names the policy allows; this run gave it to none (an address kept from another run is stale): connect by the host's name, looked up in this run"* ]]
	[[ "$output" == *"64:ff9b:1:1::307 is an address of the sandbox's own pool"* ]]
	[[ "$output" != *"allow_cidrs"* && "$output" != *"--allow-cidr"* ]]
	[ "$(jq -r '[.refused[].fix] | map(startswith("198.19.3.7 is") or startswith("64:ff9b:1:1::307 is")) | all' "$WS/r.json")" = true ]
	[ "$(jq -r '[.refused[].allow] | map(. == null) | all' "$WS/r.json")" = true ]
	# An address outside the pool keeps the fix of its range.
	run in_sandbox -- curl -sS --noproxy '*' --max-time 5 https://198.18.3.7:8443/
	[[ "$output" == *"\"198.18.3.7/32\" to network.allow_cidrs"* ]]
}
