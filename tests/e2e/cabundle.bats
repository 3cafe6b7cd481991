#!/usr/bin/env bats
# Behind a corporate TLS proxy the host names its CA in NODE_EXTRA_CA_CERTS,
# CURL_CA_BUNDLE and the like: they reach the sandboxed command (a file
# of public certificates is no secret), and when the run inspects TLS
# its own bundle holds them too.  --dry-run names every host variable
# left out, and why, never its value.  Runs as the test user.

# bats file_tags=fast

load helpers

bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	# The "corporate" CA and an origin it signs, in the workspace (the
	# sandbox's /tmp is its own).
	sh "$BATS_TEST_DIRNAME/../../mk/origin-cert.sh" "$WS/corp" corp.test
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$WS/corp"
	chmod 644 "$WS/corp/origin-ca.pem"
	PORT=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$PORT" \
	    --tls-cert "$WS/corp/origin.pem" --tls-key "$WS/corp/origin.key"
	wait_listen "tcp:127.0.0.1:$PORT"
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# cordon run as the test user with the host variables given first.
run_with_env() {
	local vars=()
	while [ "$1" != -- ]; do
		vars+=("$1")
		shift
	done
	shift
	cd "$WS" || return 1
	as_user "$UDIR/home" env "${vars[@]}" "$UCORDON" run \
	    --read-only "$UDIR/bin" "$@"
}

@test "the host's CA variables reach the command: curl trusts the corporate CA" {
	ca="$WS/corp/origin-ca.pem"
	run run_with_env CURL_CA_BUNDLE="$ca" NODE_EXTRA_CA_CERTS="$ca" \
	    GIT_SSL_CAINFO="$ca" -- --allow-domain "corp.test:$PORT" \
	    --resolve corp.test:127.0.0.1 --allow-cidr 127.0.0.1/32 -- \
	    sh -c 'echo "node=$NODE_EXTRA_CA_CERTS git=$GIT_SSL_CAINFO";
	    curl -sS "https://corp.test:'"$PORT"'/"'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"node=$ca git=$ca"* ]]
	[[ "$output" == *hello* ]]
	# Without the variable the same curl fails: the test can fail.
	run run_with_env FOO=1 -- --allow-domain "corp.test:$PORT" \
	    --resolve corp.test:127.0.0.1 --allow-cidr 127.0.0.1/32 -- \
	    curl -sS "https://corp.test:$PORT/"
	[ "$status" -ne 0 ]
	[[ "$output" == *"certificate"* ]]
}

@test "--dry-run names each host variable left out, and why, never its value" {
	run run_with_env FOO_SETTING=visible-value GITHUB_TOKEN=hunter2 \
	    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt -- \
	    --dry-run -- true
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"dropped from the host's environment (names only):"* ]]
	[[ "$output" == *"  FOO_SETTING (not in env.pass)"* ]]
	[[ "$output" == *"  GITHUB_TOKEN (looks like a secret: passed only when env.pass names it exactly)"* ]]
	[[ "$output" == *"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"* ]]
	[[ "$output" != *"SSL_CERT_FILE ("* ]]
	[[ "$output" != *visible-value* ]]
	[[ "$output" != *hunter2* ]]
}

@test "inspecting: the run's bundle holds the host's CA files, then cordon's CA" {
	CADIR="$UDIR/cordon-ca"
	"$CORDON" ca init --dir "$CADIR" >/dev/null
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$CADIR"
	write "$UDIR/inspect.json" <<-EOF
	{"version": 1,
	 "network": {"inspect": [{"host": "corp.test", "methods": ["GET"],
	     "paths": ["/"]}]},
	 "tls": {"ca_dir": "$CADIR"}}
	EOF
	chmod 644 "$UDIR/inspect.json"
	ca="$WS/corp/origin-ca.pem"
	run run_with_env NODE_EXTRA_CA_CERTS="$ca" -- --policy \
	    "$UDIR/inspect.json" --dry-run -- true
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"with the host's CA files: $ca (NODE_EXTRA_CA_CERTS)"* ]]
	# In the sandbox: the variable names the run's bundle, which holds
	# the corporate CA's certificate.
	line=$(sed -n 2p "$ca")
	run run_with_env NODE_EXTRA_CA_CERTS="$ca" -- --policy \
	    "$UDIR/inspect.json" --quiet -- sh -c \
	    'echo "$NODE_EXTRA_CA_CERTS"; grep -c -F -- "'"$line"'" "$NODE_EXTRA_CA_CERTS"'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = /run/cordon/ca-bundle.pem ]
	[ "${lines[1]}" -ge 1 ]
}
