#!/usr/bin/env bats
# cordon run for agent harnesses: --report, --control and --ask, with
# tests/tools/harness standing in for the harness (it listens on a Unix
# socket, prints every event, answers as told).  The sandbox runs as the
# unprivileged test user; the upstream is a real server on 127.0.0.1.

# bats file_tags=fast

load helpers

setup() {
	cordon_setup
	sandbox_setup
	UP=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP"
	wait_listen "tcp:127.0.0.1:$UP"
	PIN=(--resolve up.test:127.0.0.1 --allow-cidr 127.0.0.1/32)
	CTL="$UDIR/ctl.sock"
	EVENTS="$BATS_TEST_TMPDIR/harness.log"
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# Starts the harness as the test user with the given options.
start_harness() {
	start_bg harness as_user "$UDIR/home" "$UDIR/bin/harness" \
	    --listen "$CTL" "$@"
	wait_listen "unix:$CTL"
}

# GETs from the upstream N times inside the sandbox, a line per status.
gets() {
	local n=$1
	shift
	in_sandbox --quiet "${PIN[@]}" "$@" -- sh -c "for i in \$(seq $n); do
	    curl -s -o /dev/null -w '%{http_code}\n' http://up.test:$UP/; done"
}

@test "--report: the refused host, its fix, the allowed bytes, the setup" {
	run in_sandbox --quiet "${PIN[@]}" --allow-domain "up.test:$UP" \
	    --report "$WS/report.json" -- sh -c \
	    "curl -s http://up.test:$UP/ >/dev/null; curl -s http://evil.test/ >/dev/null; exit 3"
	[ "$status" -eq 3 ]
	r="$WS/report.json"
	[ "$(jq -r .version "$r")" = 1 ]
	[ "$(jq -r .exit_status "$r")" = 3 ]
	[ "$(jq -r '.sandbox | length' "$r")" = 16 ]
	[ "$(jq -r '.command[0]' "$r")" = sh ]
	[ "$(jq -r '.refused[0].host' "$r")" = evil.test ]
	[ "$(jq -r '.refused[0].port' "$r")" = 80 ]
	[ "$(jq -r '.refused[0].protocol' "$r")" = http ]
	[ "$(jq -r '.refused[0].allow' "$r")" = evil.test ]
	[[ "$(jq -r '.refused[0].fix' "$r")" == *"--allow-domain evil.test"* ]]
	[ "$(jq -r '.allowed[0].host' "$r")" = up.test ]
	[ "$(jq -r '.allowed[0].connections' "$r")" = 1 ]
	[ "$(jq -r '.allowed[0].bytes_down' "$r")" -gt 0 ]
	[ "$(jq -r '.setup.network' "$r")" = proxy ]
	[ "$(jq -r '.setup.seccomp' "$r")" = true ]
	[ "$(jq -r '.setup.namespaces | index("network") != null' "$r")" = true ]
	# To a descriptor the harness passed, too.
	cd "$WS"
	run bash -c '"$0" run --quiet --report fd:7 -- true 7>"$1"' \
	    "$UCORDON" "$BATS_TEST_TMPDIR/fd7.json"
	[ "$status" -eq 0 ]
	[ "$(jq -r .exit_status "$BATS_TEST_TMPDIR/fd7.json")" = 0 ]
}

@test "--control: an allow sent after a refusal lets a later connection through" {
	start_harness --after refused "{\"allow\": \"up.test:$UP\"}"
	# The second status once 200, or the last of 10 s of tries.
	run in_sandbox --quiet "${PIN[@]}" --control "$CTL" -- sh -c "
	    curl -s -o /dev/null -w '%{http_code}\n' http://up.test:$UP/
	    for i in \$(seq 200); do
	        c=\$(curl -s -o /dev/null -w '%{http_code}' http://up.test:$UP/)
	        [ \$c = 200 ] && break
	        sleep 0.05
	    done
	    echo \$c"
	[ "${lines[0]}" = 403 ]
	[ "${lines[1]}" = 200 ]
	grep -q '"event":"refused".*"allow":"up.test:'"$UP"'"' "$EVENTS"
	grep -q '"event":"applied","allow":"up.test:'"$UP"'"' "$EVENTS"
	grep -q '"event":"exit","status":0' "$EVENTS"
	# The rule was for that run only.
	run gets 1
	[ "$output" = 403 ]
}

@test "--ask: allow-once passes one connection, the next is asked again" {
	start_harness --answer allow-once --answer deny
	run gets 2 --control "$CTL" --ask
	[ "${lines[0]}" = 200 ]
	[ "${lines[1]}" = 403 ]
	[ "$(grep -c '"event":"ask"' "$EVENTS")" -eq 2 ]
	grep -q '"event":"ask","id":"a[0-9]*","host":"up.test","port":'"$UP" "$EVENTS"
}

@test "--ask: allow-run adds the rule; no answer in time is a deny" {
	start_harness --answer none --answer allow-run
	run gets 3 --control "$CTL" --ask --ask-secs 1
	[ "${lines[0]}" = 403 ]		# no answer within 1 s
	[ "${lines[1]}" = 200 ]		# allow-run
	[ "${lines[2]}" = 200 ]		# not asked again
	[ "$(grep -c '"event":"ask"' "$EVENTS")" -eq 2 ]
	grep -q '"event":"applied","allow":"up.test:'"$UP"'"' "$EVENTS"
}

@test "--control: malformed messages change nothing and are reported" {
	start_harness --send '{"allow": "up.test", "extra": 1}' \
	    --send '{"allow": 42}' --send 'not json' \
	    --send '{"allow": "bad name!"}' --send '{"answer": "a9", "decision": "allow-once"}' \
	    --send '{"answer": "a9", "decision": "maybe"}'
	run gets 1 --control "$CTL"
	[ "$output" = 403 ]
	[ "$(grep -c '"event":"error"' "$EVENTS")" -eq 6 ]
	grep -q 'unknown key \\"extra\\"' "$EVENTS"
	grep -q '"allow\\" must be a string' "$EVENTS"
	grep -q 'not JSON' "$EVENTS"
	grep -q 'no question \\"a9\\" waits' "$EVENTS"
	[ "$(grep -c '"event":"applied"' "$EVENTS")" -eq 0 ]
}

@test "--control: a harness that goes away denies what waits; --ask alone is refused" {
	# The harness answers nothing and is killed while a connection waits.
	start_harness --answer none
	harness=$BG_PID
	cd "$WS"
	start_bg run as_user "$UDIR/home" "$UCORDON" run --quiet \
	    --read-only "$UDIR/bin" "${PIN[@]}" --control "$CTL" --ask -- \
	    curl -s -o /dev/null -w '%{http_code}\n' "http://up.test:$UP/"
	runpid=$BG_PID
	for i in $(seq 100); do grep -q '"event":"ask"' "$EVENTS" && break; sleep 0.05; done
	kill "$harness"
	wait "$runpid"
	[ "$(cat "$BATS_TEST_TMPDIR/run.log" | grep -c '^403$')" -eq 1 ]
	grep -q "the control channel closed" "$BATS_TEST_TMPDIR/run.log"
	run in_sandbox --ask -- true
	[ "$status" -eq 125 ]
	[[ "$output" == *"--ask needs --control"* ]]
}
