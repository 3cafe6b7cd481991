#!/usr/bin/env bats
# cordon bridge: a TCP <-> Unix socket relay, tested with real sockets.

load helpers

bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	SOCK="$BATS_TEST_TMPDIR/b.sock"
}

teardown() {
	teardown_bg
}

# Starts the chain client -> tcp:$FRONT -> bridge -> unix:$SOCK -> bridge
# -> tcp:$BACK -> netcheck serve (replying $1 bytes).
start_chain() {
	BACK=$(free_port)
	FRONT=$(free_port)
	start_bg server "$NETCHECK" serve "tcp:127.0.0.1:$BACK" --reply "$1"
	SERVER=$BG_PID
	start_bg inner "$CORDON" bridge --listen "unix:$SOCK" \
	    --connect "tcp:127.0.0.1:$BACK"
	INNER=$BG_PID
	start_bg outer "$CORDON" bridge --listen "tcp:127.0.0.1:$FRONT" \
	    --connect "unix:$SOCK"
	OUTER=$BG_PID
	wait_listen "tcp:127.0.0.1:$BACK"
	wait_listen "unix:$SOCK"
	wait_listen "tcp:127.0.0.1:$FRONT"
}

@test "byte-exact both ways, with half-close, from 0 B to 105 MiB" {
	for size in 0 1 2 4097 65535 65536 65537 1048583 110100481; do
		teardown_bg
		start_chain "$size"
		run "$NETCHECK" client "tcp:127.0.0.1:$FRONT" --send "$size" \
		    --expect "$size"
		echo "size $size: $output"
		[ "$status" -eq 0 ]
		[[ "$output" == "ok 1 failed 0 "* ]]
	done
	# Different sizes each way.
	run "$NETCHECK" client "tcp:127.0.0.1:$FRONT" --send 3 \
	    --expect 110100481
	[ "$status" -eq 0 ]
}

@test "1,200 connections open at once, then the descriptors come back" {
	start_chain 10
	base_in=$(fd_count "$INNER")
	base_out=$(fd_count "$OUTER")
	hold_conns "tcp:127.0.0.1:$FRONT" 1200
	# Each relay holds two sockets (and pipes) in each bridge.
	wait_for fds_at_least "$OUTER" $((base_out + 2400))
	wait_for fds_at_least "$INNER" $((base_in + 2400))
	release_conns
	for i in $(seq 100); do
		[ "$(fd_count "$OUTER")" -eq "$base_out" ] &&
		    [ "$(fd_count "$INNER")" -eq "$base_in" ] && break
		sleep 0.05
	done
	[ "$(fd_count "$OUTER")" -eq "$base_out" ]
	[ "$(fd_count "$INNER")" -eq "$base_in" ]
	# And 3,000 exchanges, 300 at a time, all byte-exact.
	run "$NETCHECK" client "tcp:127.0.0.1:$FRONT" --send 1000 --expect 10 \
	    --conns 3000 --parallel 300
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(fd_count "$OUTER")" -eq "$base_out" ]
}

@test "a target that is down: clients closed at once, said once, still up" {
	PORT=$(free_port)
	start_bg bridge "$CORDON" bridge --listen "tcp:127.0.0.1:$PORT" \
	    --connect "unix:$BATS_TEST_TMPDIR/nobody.sock"
	BRIDGE=$BG_PID
	wait_listen "tcp:127.0.0.1:$PORT"
	run timeout 10 "$NETCHECK" client "tcp:127.0.0.1:$PORT" --send 10 \
	    --expect 0 --conns 200 --parallel 20
	[ "$status" -eq 1 ]
	[[ "$output" == *"ok 0 failed 200 "* ]]
	kill -0 "$BRIDGE"
	[ "$(grep -c 'nobody.sock' "$BATS_TEST_TMPDIR/bridge.log")" -eq 1 ]
	grep -q 'No such file or directory' "$BATS_TEST_TMPDIR/bridge.log"
	# When the target comes up, the same bridge relays.
	start_bg server "$NETCHECK" serve "unix:$BATS_TEST_TMPDIR/nobody.sock" \
	    --reply 5
	wait_listen "unix:$BATS_TEST_TMPDIR/nobody.sock"
	run "$NETCHECK" client "tcp:127.0.0.1:$PORT" --send 10 --expect 5
	[ "$status" -eq 0 ]
}

@test "resets from either side end the relay and free its descriptors" {
	start_chain 100
	base=$(fd_count "$OUTER")
	for i in $(seq 20); do
		"$NETCHECK" reset "tcp:127.0.0.1:$FRONT"
	done
	for i in $(seq 100); do
		[ "$(fd_count "$OUTER")" -eq "$base" ] && break
		sleep 0.05
	done
	[ "$(fd_count "$OUTER")" -eq "$base" ]
	kill -0 "$OUTER"
	run "$NETCHECK" client "tcp:127.0.0.1:$FRONT" --send 5 --expect 100
	[ "$status" -eq 0 ]
	teardown_bg
	# A server that resets mid-stream: the client sees an error, soon.
	BACK=$(free_port)
	FRONT=$(free_port)
	start_bg server "$NETCHECK" serve "tcp:127.0.0.1:$BACK" \
	    --reset-after 100000
	start_bg outer "$CORDON" bridge --listen "tcp:127.0.0.1:$FRONT" \
	    --connect "tcp:127.0.0.1:$BACK"
	OUTER=$BG_PID
	wait_listen "tcp:127.0.0.1:$FRONT"
	base=$(fd_count "$OUTER")
	run timeout 10 "$NETCHECK" client "tcp:127.0.0.1:$FRONT" \
	    --send 10000000 --expect 0
	[ "$status" -eq 1 ]
	kill -0 "$OUTER"
	wait_for fds_are "$OUTER" "$base"
}

@test "Unix socket paths: too long refused, stale replaced, live kept" {
	long="$BATS_TEST_TMPDIR/$(printf 'x%.0s' $(seq 120)).sock"
	run "$CORDON" bridge --listen "unix:$long" --connect tcp:127.0.0.1:9
	[ "$status" -eq 1 ]
	[[ "$output" == *"a Unix socket path may have at most 107; use a shorter one"* ]]
	# A regular file is never replaced.
	echo data >"$SOCK"
	run "$CORDON" bridge --listen "unix:$SOCK" --connect tcp:127.0.0.1:9
	[ "$status" -eq 1 ]
	[[ "$output" == *"exists and is not a socket; refusing to replace it"* ]]
	[ "$(cat "$SOCK")" = data ]
	rm "$SOCK"
	# A live listener is not stolen; a stale one is replaced.
	start_bg first "$CORDON" bridge --listen "unix:$SOCK" \
	    --connect tcp:127.0.0.1:9
	FIRST=$BG_PID
	wait_listen "unix:$SOCK"
	[ "$(stat -c %a "$SOCK")" = 600 ]
	run "$CORDON" bridge --listen "unix:$SOCK" --connect tcp:127.0.0.1:9
	[ "$status" -eq 1 ]
	[[ "$output" == *"another process is listening there"* ]]
	kill -9 "$FIRST"
	wait "$FIRST" || true
	[ -S "$SOCK" ]
	start_bg second "$CORDON" bridge --listen "unix:$SOCK" \
	    --connect tcp:127.0.0.1:9
	SECOND=$BG_PID
	wait_for unix_listening "$SOCK"
	kill -0 "$SECOND"
	# Removed on a clean exit.
	kill -TERM "$SECOND"
	wait "$SECOND"
	[ ! -e "$SOCK" ]
}

@test "SIGTERM: no new connections, open relays finish, then exit 0" {
	start_chain 7
	hold_conns "tcp:127.0.0.1:$FRONT" 3
	kill -TERM "$OUTER"
	# Not accepting, once the signal is handled.
	wait_for eval '! timeout 5 "$NETCHECK" client "tcp:127.0.0.1:$FRONT" \
	    --send 1 --expect 7 2>/dev/null'
	kill -0 "$OUTER"		# still draining
	release_conns
	run timeout 5 tail --pid="$OUTER" -f /dev/null
	[ "$status" -eq 0 ]
	# And a drain with a deadline closes what is still open.
	start_bg outer2 "$CORDON" bridge --listen "tcp:127.0.0.1:$FRONT" \
	    --connect "unix:$SOCK" --drain-secs 1
	OUTER2=$BG_PID
	wait_listen "tcp:127.0.0.1:$FRONT"
	hold_conns "tcp:127.0.0.1:$FRONT" 2
	kill -TERM "$OUTER2"
	run timeout 5 tail --pid="$OUTER2" -f /dev/null
	[ "$status" -eq 0 ]
	grep -q "still open after the drain time" "$BATS_TEST_TMPDIR/outer2.log"
	release_conns
}

@test "listening off loopback needs an explicit flag" {
	run "$CORDON" bridge --listen tcp:0.0.0.0:1 --connect tcp:127.0.0.1:9
	[ "$status" -eq 1 ]
	[[ "$output" == *"not a loopback address"* ]]
	[[ "$output" == *"--allow-non-loopback"* ]]
	run "$CORDON" bridge --listen tcp:127.0.0.1:0x --connect tcp:127.0.0.1:9
	[ "$status" -eq 1 ]
	run "$CORDON" bridge --listen tcp:127.0.0.1:1
	[ "$status" -eq 2 ]
}

@test "--socket-group and --socket-mode give a group the Unix socket; every user, an empty endpoint or no such group refused (2)" {
	BACK=$(free_port)
	start_bg server "$NETCHECK" serve "tcp:127.0.0.1:$BACK" --reply 10
	wait_listen "tcp:127.0.0.1:$BACK"
	start_bg inner "$CORDON" bridge --listen "unix:$SOCK" \
	    --connect "tcp:127.0.0.1:$BACK" --socket-group "$(id -g)"
	wait_listen "unix:$SOCK"
	[ "$(stat -c '%a %g' "$SOCK")" = "660 $(id -g)" ]
	run "$NETCHECK" client "unix:$SOCK" --send 10 --expect 10
	[ "$status" -eq 0 ]
	teardown_bg
	run -2 "$CORDON" bridge --listen "unix:$SOCK" \
	    --connect "tcp:127.0.0.1:$BACK" --socket-mode 0666
	[[ "$output" == *"bridge: --socket-mode 0666 lets every user on this host use the bridge"* ]]
	run -2 "$CORDON" bridge --listen "unix:$SOCK" \
	    --connect "tcp:127.0.0.1:$BACK" --socket-group no-such-group-here
	[[ "$output" == *"bridge: --socket-group: no group \"no-such-group-here\""* ]]
	run -2 "$CORDON" bridge --listen "unix:$SOCK" --connect ""
	[[ "$output" == *"bridge: --connect is empty"* ]]
	[ ! -e "$SOCK" ]
}

@test "an unprivileged user runs the chain" {
	udir=$(mktemp -d)
	cp_cordon "$udir"
	cp "$NETCHECK" "$udir/"
	BACK=$(free_port)
	FRONT=$(free_port)
	start_bg server "$NETCHECK" serve "tcp:127.0.0.1:$BACK" --reply 4096
	start_bg inner as_user "$udir" "$udir/cordon" bridge \
	    --listen "unix:$udir/b.sock" --connect "tcp:127.0.0.1:$BACK"
	start_bg outer as_user "$udir" "$udir/cordon" bridge \
	    --listen "tcp:127.0.0.1:$FRONT" --connect "unix:$udir/b.sock"
	wait_listen "tcp:127.0.0.1:$FRONT"
	if [ "$(id -u)" -eq 0 ]; then
		[ "$(stat -c %U "$udir/b.sock")" = "$TEST_USER" ]
	fi
	run "$NETCHECK" client "tcp:127.0.0.1:$FRONT" --send 99999 \
	    --expect 4096 --conns 50 --parallel 10
	[ "$status" -eq 0 ]
	teardown_bg
	rm -rf "$udir"
}

@test "--proxy-id: each upstream connection starts with a PROXY v2 header" {
	BACK=$(free_port)
	FRONT=$(free_port)
	start_bg dump "$NETCHECK" dump "tcp:127.0.0.1:$BACK" \
	    --then "$BATS_TEST_TMPDIR/got"
	start_bg bridge "$CORDON" bridge --listen "tcp:127.0.0.1:$FRONT" \
	    --connect "tcp:127.0.0.1:$BACK" --proxy-id sbx-42
	wait_listen "tcp:127.0.0.1:$BACK"
	wait_listen "tcp:127.0.0.1:$FRONT"
	printf 'hello' >"/dev/tcp/127.0.0.1/$FRONT"
	# 16 bytes of header, 9 of TLV, 5 of data.
	wait_for size_at_least "$BATS_TEST_TMPDIR/got" 30
	# signature, v2 LOCAL, AF_UNSPEC, length 9, UNIQUE_ID TLV "sbx-42"
	want='0d0a0d0a000d0a515549540a200000090500067362782d343268656c6c6f'
	[ "$(od -An -tx1 -v "$BATS_TEST_TMPDIR/got" | tr -d ' \n')" = "$want" ]
	run "$CORDON" bridge --listen "tcp:127.0.0.1:$(free_port)" \
	    --connect "tcp:127.0.0.1:$BACK" --proxy-id 'bad id'
	[ "$status" -eq 1 ]
	[[ "$output" == *"a sandbox id is 1 to 128 letters"* ]]
}
