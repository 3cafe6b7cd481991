#!/usr/bin/env bats
# WebSocket on inspected hosts, and answers that echo a real value cut
# in pieces.  Real servers on loopback (Python's websockets, an HTTPS
# origin that reflects the Authorization header in parts), real clients
# inside `cordon run` as the test user.  The client of websockets knows
# no proxy: its connection is captured, then inspected like any other.

load helpers
bats_require_minimum_version 1.5.0

# The real value: random, as tokens are, and long enough for each half
# of it to be masked.
TOKEN=realsecret-9fQx2LmZ7pKwR4tB8nVc1yHs6dJg3eUa

setup() {
	cordon_setup
	sandbox_setup
	T="$UDIR/tls"
	sh "$BATS_TEST_DIRNAME/../../mk/origin-cert.sh" "$T" api.test \
	    other.test
	WSPORT=$(free_port)
	start_bg wsecho /usr/bin/python3 \
	    "$BATS_TEST_DIRNAME/clients/wsecho.py" serve "$WSPORT" \
	    "$T/origin.pem" "$T/origin.key"
	BYEPORT=$(free_port)
	start_bg wsbye /usr/bin/python3 \
	    "$BATS_TEST_DIRNAME/clients/wsecho.py" bye "$BYEPORT" \
	    "$T/origin.pem" "$T/origin.key"
	SPLITPORT=$(free_port)
	start_bg splitecho /usr/bin/python3 \
	    "$BATS_TEST_DIRNAME/clients/splitecho.py" "$SPLITPORT" \
	    "$T/origin.pem" "$T/origin.key"
	wait_listen "tcp:127.0.0.1:$WSPORT"
	wait_listen "tcp:127.0.0.1:$BYEPORT"
	wait_listen "tcp:127.0.0.1:$SPLITPORT"
	cp "$BATS_TEST_DIRNAME/clients/wsecho.py" "$WS/"
	CADIR="$UDIR/ca"
	"$CORDON" ca init --dir "$CADIR" >/dev/null
	POL="$UDIR/inspect.json"
	write "$POL" <<-EOF
	{"version": 1,
	 "network": {
	   "allow": ["api.test:$WSPORT", "api.test:$SPLITPORT",
	       "api.test:$BYEPORT", "other.test:$WSPORT"],
	   "allow_cidrs": ["127.0.0.1/32"],
	   "inspect": [
	     {"host": "api.test", "methods": ["GET", "WEBSOCKET"],
	      "paths": ["/ws", "/bye", "/split"]},
	     {"host": "other.test", "methods": ["GET"], "paths": ["/ws"]}]},
	 "credentials": [{"host": "api.test", "env": "GITHUB_TOKEN",
	     "header": "Authorization", "format": "Bearer %s"}],
	 "tls": {"ca_dir": "$CADIR"}}
	EOF
	ELOG="$UDIR/egress.log"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR"
	chmod 644 "$POL" "$WS/wsecho.py"
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
	    --resolve api.test:127.0.0.1 --resolve other.test:127.0.0.1 \
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

@test "websocket: a handshake the entry admits is relayed both ways and logged once" {
	run ws_run -- /usr/bin/python3 wsecho.py talk \
	    "wss://api.test:$WSPORT/ws"
	[ "$status" -eq 0 ]
	grep -qx "echo: hello" <<<"$output"
	grep -qx "big: same" <<<"$output"
	# The origin had the real value; the frames it sent it back in,
	# one message in two frames and two messages, give none of it.
	grep -q "^auth: Bearer \*\*\*" <<<"$output"
	grep -q "^auth parts: Bearer \*\*\*" <<<"$output"
	[[ "$output" == *"parts of the real value of GITHUB_TOKEN came back in the answer 4 times; masked"* ]]
	no_part_of_token "$output"
	[[ "$output" != *realsecret* ]]
	run jq -c 'select(.host == "api.test" and .event != "open") |
	    {method, path, decision,
	    status, up: (.bytes_up > 200000), down: (.bytes_down > 200000)}' \
	    "$ELOG"
	[ "$output" = '{"method":"GET","path":"/ws","decision":"allow","status":101,"up":true,"down":true}' ]
}

@test "websocket: a 101 that comes with its first frame and the end passes both on, logged once" {
	run ws_run -- /usr/bin/python3 wsecho.py talk \
	    "wss://api.test:$BYEPORT/bye"
	[ "$status" -eq 0 ]
	grep -qx "bye: bye" <<<"$output"
	# One exchange, not a 101 and then the frames read as a request.
	run jq -c 'select(.host == "api.test" and .event != "open") |
	    {path, status, down: .bytes_down}' "$ELOG"
	[ "$output" = '{"path":"/bye","status":101,"down":5}' ]
}

@test "websocket: an entry without WEBSOCKET refuses the handshake at once, with the reason" {
	SECONDS=0
	run ws_run -- /usr/bin/python3 wsecho.py talk \
	    "wss://other.test:$WSPORT/ws"
	[ "$status" -eq 0 ]
	[ "$SECONDS" -lt 5 ]
	[[ "$output" == "refused: 403 GET other.test/ws: a WebSocket handshake (GET with Upgrade: websocket) is judged as method WEBSOCKET"* ]]
	run jq -r 'select(.host == "other.test") | "\(.decision) \(.status) \(.reason)"' "$ELOG"
	[[ "$output" == "deny 403 a WebSocket handshake"*"not among the methods network.inspect allows for other.test" ]]
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
