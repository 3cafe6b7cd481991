#!/usr/bin/env bats
# cordon proxy under load and faults, at a size every commit can afford:
# descriptors come back, slow clients are dropped without hurting others,
# resets from either side end a tunnel and leave the proxy up.  The big
# figures (10,000 tunnels, 100,000 connections) are in make bench
# (mk/load.sh).

load helpers

setup() {
	cordon_setup
	ECHO=$(free_port)
	RESET=$(free_port)
	UP=$(free_port)
	start_bg echo "$NETCHECK" echo "tcp:127.0.0.1:$ECHO"
	start_bg reset "$NETCHECK" echo "tcp:127.0.0.1:$RESET" \
	    --reset-after 1000
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP"
	wait_listen "tcp:127.0.0.1:$ECHO"
	wait_listen "tcp:127.0.0.1:$RESET"
	wait_listen "tcp:127.0.0.1:$UP"
	PROXY=$(free_port)
	# One process, whose descriptors the tests count (workers.bats has
	# the workers).
	start_bg proxy "$CORDON" proxy --workers 1 \
	    --listen "tcp:127.0.0.1:$PROXY" \
	    --log "$BATS_TEST_TMPDIR/egress.log" --head-secs 2 \
	    --allow-domain "127.0.0.1:$ECHO" --allow-domain "127.0.0.1:$RESET" \
	    --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	PROXY_PID=$BG_PID
	wait_listen "tcp:127.0.0.1:$PROXY"
	BASE=$(fd_count "$PROXY_PID")
}

teardown() {
	teardown_bg
}

# Waits up to 5 s for the proxy to be back at its baseline descriptors.
fds_back() {
	for i in $(seq 100); do
		[ "$(fd_count "$PROXY_PID")" -eq "$BASE" ] && return 0
		sleep 0.05
	done
	echo "the proxy has $(fd_count "$PROXY_PID") fds, baseline $BASE" >&2
	return 1
}

tunnels() {
	"$NETCHECK" tunnels "tcp:127.0.0.1:$PROXY" "$@"
}

@test "2,000 tunnels one after the other, 500 at once: descriptors come back" {
	run tunnels --target "127.0.0.1:$ECHO" --conns 2000 --mode cycle
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "ok 2000 failed 0 "* ]]
	fds_back
	rm -f "$BATS_TEST_TMPDIR/release"
	start_bg hold "$NETCHECK" tunnels "tcp:127.0.0.1:$PROXY" \
	    --target "127.0.0.1:$ECHO" --conns 500 --mode hold \
	    --then "$BATS_TEST_TMPDIR/release"
	HOLD=$BG_PID
	for i in $(seq 200); do
		grep -q '^open' "$BATS_TEST_TMPDIR/hold.log" && break
		sleep 0.05
	done
	grep -q '^open 500 failed 0 ' "$BATS_TEST_TMPDIR/hold.log"
	# Two sockets a tunnel, and no pipe while it is idle (lib/relay.c
	# keeps at most 32 empty ones for reuse).
	[ "$(fd_count "$PROXY_PID")" -ge $((BASE + 1000)) ]
	[ "$(fd_count "$PROXY_PID")" -le $((BASE + 1000 + 64)) ]
	touch "$BATS_TEST_TMPDIR/release"
	wait "$HOLD"
	grep -q '^alive 500 dead 0 ' "$BATS_TEST_TMPDIR/hold.log"
	fds_back
	[ "$(end_lines "$BATS_TEST_TMPDIR/egress.log")" -eq 2500 ]
}

@test "20 slowloris clients are dropped at --head-secs; a normal client is served meanwhile" {
	start_bg slow "$NETCHECK" slowloris "tcp:127.0.0.1:$PROXY" \
	    --conns 20 --secs 8
	SLOW=$BG_PID
	# The 20 slow connections accepted before the normal client.
	wait_for fds_at_least "$PROXY_PID" $((BASE + 20))
	n=0
	while kill -0 "$SLOW" 2>/dev/null; do
		out=$(curl -sS --max-time 2 -o /dev/null \
		    -w '%{http_code} %{time_total}' \
		    -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$UP/")
		echo "$out"
		# Served while they hold: --max-time is the 2 s they are held
		# for, and a loaded machine's pace is not the proxy's.
		[ "${out% *}" = 200 ]
		n=$((n + 1))
		sleep 0.1
	done
	[ "$n" -ge 3 ]
	wait "$SLOW"
	cat "$BATS_TEST_TMPDIR/slow.log"
	grep -q '^dropped 20 of 20 open 0 ' "$BATS_TEST_TMPDIR/slow.log"
	max=$(awk '{ print $NF }' "$BATS_TEST_TMPDIR/slow.log")
	# Dropped at --head-secs (2 s), not at their own end (8 s).
	[ "$(echo "$max < 6" | bc)" = 1 ]
	[ "$(grep -c 'no whole request within 2 s' \
	    "$BATS_TEST_TMPDIR/egress.log")" -eq 20 ]
	fds_back
}

@test "upstreams that reset mid-stream, clients that vanish: the proxy stays up" {
	run tunnels --target "127.0.0.1:$RESET" --conns 200 --mode upreset
	echo "$output"
	[ "$status" -eq 0 ]
	run tunnels --target "127.0.0.1:$ECHO" --conns 200 --mode vanish
	echo "$output"
	[ "$status" -eq 0 ]
	kill -0 "$PROXY_PID"
	fds_back
	# And it still carries a tunnel, byte for byte.
	run tunnels --target "127.0.0.1:$ECHO" --conns 1 --mode hold
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.event != "open") | .decision' "$BATS_TEST_TMPDIR/egress.log" | sort -u)" = allow ]
}
