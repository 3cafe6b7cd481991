#!/usr/bin/env bats
# Answers that echo a real value cut in pieces: an HTTPS origin on
# loopback that reflects the Authorization header in parts, a real
# client inside `cordon run` as the test user.

load helpers
bats_require_minimum_version 1.5.0

# The real value: random, as tokens are, and long enough for each half
# of it to be masked.
TOKEN=realsecret-9fQx2LmZ7pKwR4tB8nVc1yHs6dJg3eUa

setup() {
	cordon_setup
	sandbox_setup
	T="$UDIR/tls"
	sh "$BATS_TEST_DIRNAME/../../mk/origin-cert.sh" "$T" api.test
	SPLITPORT=$(free_port)
	start_bg splitecho /usr/bin/python3 \
	    "$BATS_TEST_DIRNAME/clients/splitecho.py" "$SPLITPORT" \
	    "$T/origin.pem" "$T/origin.key"
	wait_listen "tcp:127.0.0.1:$SPLITPORT"
	CADIR="$UDIR/ca"
	"$CORDON" ca init --dir "$CADIR" >/dev/null
	POL="$UDIR/inspect.json"
	write "$POL" <<-EOF
	{"version": 1,
	 "network": {
	   "allow": ["api.test:$SPLITPORT"],
	   "allow_cidrs": ["127.0.0.1/32"],
	   "inspect": [
	     {"host": "api.test", "methods": ["GET"], "paths": ["/split"]}]},
	 "credentials": [{"host": "api.test", "env": "GITHUB_TOKEN",
	     "header": "Authorization", "format": "Bearer %s"}],
	 "tls": {"ca_dir": "$CADIR"}}
	EOF
	ELOG="$UDIR/egress.log"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR"
	chmod 644 "$POL"
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# Runs "$@" in a sandbox of the test user, with GITHUB_TOKEN=$TOKEN in
# cordon's environment and the origin's CA given to the run's proxy.
ws_run() {
	cd "$WS" || return 1
	as_user "$UDIR/home" env GITHUB_TOKEN="$TOKEN" "$UCORDON" run \
	    --read-only "$UDIR/bin" --policy "$POL" \
	    --upstream-ca "$T/origin-ca.pem" \
	    --resolve api.test:127.0.0.1 \
	    --log "$ELOG" --quiet "$@"
}

# Fails if $1 holds any 8 bytes of $TOKEN in a row.
no_part_of_token() {
	local k
	for ((k = 0; k + 8 <= ${#TOKEN}; k++)); do
		if [[ "$1" == *"${TOKEN:k:8}"* ]]; then
			echo "part ${TOKEN:k:8} came back" >&2
			return 1
		fi
	done
}

@test "credentials: an origin that echoes the real value in pieces gives none of them back" {
	run ws_run -- sh -c 'curl -sS -D - -H "Authorization: Bearer $GITHUB_TOKEN" \
	    "https://api.test:'"$SPLITPORT"'/split"'

	[ "$status" -eq 0 ]
	[[ "$output" == *"X-Echo-A: "* ]]
	[[ "$output" == *"--b--"* ]]
	# What the pieces would make, put together, is not the value.
	a=$(sed -n 's/^X-Echo-A: \(.*\)\r$/\1/p' <<<"$output")
	b=$(sed -n 's/^X-Echo-B: \(.*\)\r$/\1/p' <<<"$output")
	[[ "$a$b" != *"$TOKEN"* ]]
	no_part_of_token "$output"
	run jq -r 'select(.path == "/split") | .warning' "$ELOG"
	[[ "$output" == *"parts of the real value of GITHUB_TOKEN came back in the answer "*" times; masked"* ]]
}
