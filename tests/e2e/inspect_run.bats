#!/usr/bin/env bats
# cordon run with network.inspect and credentials: the runner's part.
# The sandbox sees a placeholder, never the real value, and trusts
# cordon's CA through a bundle PID 1 writes on the private /run.  Every
# run is the test user's (when the suite runs as root).

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	# In the workspace, which the sandbox sees: cordon must hide it.
	CADIR="$WS/ca"
	"$CORDON" ca init --dir "$CADIR" >/dev/null
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$CADIR"
	POL="$UDIR/inspect.json"
	write "$POL" <<-EOF
	{"version": 1,
	 "network": {"inspect": [{"host": "api.github.com",
	     "methods": ["GET"], "paths": ["/user"]}]},
	 "env": {"pass": ["GITHUB_TOKEN"]},
	 "credentials": [{"host": "api.github.com", "env": "GITHUB_TOKEN",
	     "header": "Authorization", "format": "Bearer %s"}],
	 "tls": {"ca_dir": "$CADIR"}}
	EOF
	CRED="$UDIR/cred.json"
	write "$CRED" <<-EOF
	{"version": 1,
	 "credentials": [{"host": "api.github.com", "env": "GITHUB_TOKEN",
	     "header": "Authorization", "format": "Bearer %s"}]}
	EOF
	chmod 644 "$POL" "$CRED"
	SYSTEM_BUNDLE=$(openssl version -d | sed 's/.*"\(.*\)"/\1/')/cert.pem
	[ -r "$SYSTEM_BUNDLE" ] || SYSTEM_BUNDLE=/etc/ssl/certs/ca-certificates.crt
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# Runs the sandbox as the test user with GITHUB_TOKEN=realsecret.
in_sandbox_token() {
	cd "$WS" || return 1
	as_user "$UDIR/home" env GITHUB_TOKEN=realsecret "$UCORDON" run \
	    --read-only "$UDIR/bin" "$@"
}

@test "credentials: the sandbox gets a placeholder, never the real value" {
	run in_sandbox_token --quiet --policy "$POL" -- sh -c \
	    'echo "$GITHUB_TOKEN"'
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^cordon-phantom-[0-9a-f]{32}$ ]]
	first=$output
	run in_sandbox_token --quiet --policy "$POL" -- sh -c \
	    'echo "$GITHUB_TOKEN"'
	[[ "$output" =~ ^cordon-phantom-[0-9a-f]{32}$ ]]
	[ "$output" != "$first" ]	# new each run
	# What the command can read of environments: no real value.
	run in_sandbox_token --quiet --policy "$POL" -- sh -c '
	    cat /proc/1/environ >/dev/null 2>&1 && echo "pid 1 readable"
	    grep -rs realsecret /proc/self/environ /proc/1/environ \
		/proc/[0-9]*/environ && echo "found"
	    env | grep -c cordon-phantom-'
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
}

@test "credentials: a variable cordon's environment lacks gets nothing" {
	cd "$WS"
	run as_user "$UDIR/home" "$UCORDON" -v run --read-only "$UDIR/bin" \
	    --quiet --policy "$POL" -- sh -c 'echo "[${GITHUB_TOKEN-unset}]"'
	[ "$status" -eq 0 ]
	[[ "$output" == *"[unset]"* ]]
	[[ "$output" == *"GITHUB_TOKEN is not set"* ]]
}

@test "credentials: --dry-run names the placeholder, never the value" {
	run in_sandbox_token --policy "$POL" --dry-run -- true
	[ "$status" -eq 0 ]
	[[ "$output" == *"GITHUB_TOKEN=cordon-phantom-<32 hex digits"* ]]
	[[ "$output" == *"trust: /run/cordon/ca-bundle.pem"* ]]
	[[ "$output" == *"fingerprint: "* ]]
	[[ "$output" == *"and for the JVM: /run/cordon/ca-bundle.p12 (PKCS#12, "* ]]
	[[ "$output" != *realsecret* ]]
}

@test "credentials: --proxy-socket is refused, with the fix" {
	run in_sandbox_token --policy "$CRED" --proxy-socket "$UDIR/none.sock" \
	    -- touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"cannot know their real values"* ]]
	[[ "$output" == *"drop --proxy-socket"* ]]
	[ ! -e "$WS/ran" ]
}

@test "trust: the bundle holds the system's certificates and cordon's CA" {
	(in_sandbox_token --quiet --policy "$POL" -- sh -c '
	    [ "$SSL_CERT_FILE" = /run/cordon/ca-bundle.pem ] || exit 3
	    for v in CURL_CA_BUNDLE REQUESTS_CA_BUNDLE NODE_EXTRA_CA_CERTS \
		GIT_SSL_CAINFO PIP_CERT; do
		eval "[ \"\$$v\" = \"\$SSL_CERT_FILE\" ]" || exit 4
	    done
	    stat -c %a "$SSL_CERT_FILE" /run/cordon
	    grep -c "BEGIN CERTIFICATE" "$SSL_CERT_FILE"
	    # The CA folder is hidden: the key above all.
	    ls -A '"$CADIR"' | wc -l
	    cat "$SSL_CERT_FILE"') >"$UDIR/out"
	mapfile -t lines <"$UDIR/out"
	[ "${lines[0]}" = 444 ]
	[ "${lines[1]}" = 755 ]
	want=$(($(grep -c "BEGIN CERTIFICATE" "$SYSTEM_BUNDLE") + 1))
	[ "${lines[2]}" = "$want" ]
	[ "${lines[3]}" = 0 ]
	# The bundle the sandbox had verifies cordon's CA.
	tail -n +5 "$UDIR/out" >"$UDIR/bundle.pem"
	openssl verify -CAfile "$UDIR/bundle.pem" "$CADIR/ca.crt"
}

@test "trust: it wins over a passed SSL_CERT_FILE" {
	echo '{"version": 1, "env": {"set": {"SSL_CERT_FILE": "/mine.pem"}}}' \
	    >"$UDIR/set.json"
	chmod 644 "$UDIR/set.json"
	run in_sandbox_token --quiet --policy "$POL" --policy "$UDIR/set.json" \
	    -- sh -c 'echo "$SSL_CERT_FILE"'
	[ "$status" -eq 0 ]
	[ "$output" = /run/cordon/ca-bundle.pem ]
}

@test "trust: no CA, nothing run, and the fix named" {
	rm -rf "$CADIR"
	run in_sandbox_token --quiet --policy "$POL" -- touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"cordon ca init"* ]]
	[ ! -e "$WS/ran" ]
	# Garbage is no CA either.
	mkdir -p "$CADIR"
	echo "not a certificate" >"$CADIR/ca.crt"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$CADIR"
	run in_sandbox_token --quiet --policy "$POL" -- touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"not a PEM certificate"* ]]
	[ ! -e "$WS/ran" ]
}

@test "trust: without inspect entries nothing changes" {
	run in_sandbox_token --quiet --policy "$CRED" -- sh -c \
	    'echo "[${SSL_CERT_FILE-unset}]"; [ -e /run/cordon/ca-bundle.pem ] ||
	    echo none'
	[ "$status" -eq 0 ]
	[ "$output" = "[unset]
none" ]
}
