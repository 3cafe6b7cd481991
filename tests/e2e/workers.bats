#!/usr/bin/env bats
# cordon proxy --workers N: N processes serve one proxy.  Both serve;
# /metrics gives the totals of all; SIGHUP reaches every worker; a run's
# live deny holds for all its sandbox's connections; a worker killed is
# started again, logged, and no listener is lost; SIGTERM drains all.
# Everything on 127.0.0.1.

load helpers

bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	LOG="$BATS_TEST_TMPDIR/egress.log"
	UP=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP"
	wait_listen "tcp:127.0.0.1:$UP"
}

teardown() {
	teardown_bg
	# Workers a failed test left without their parent.
	for p in ${ORPHANS:-}; do
		grep -qs cordon "/proc/$p/cmdline" && kill -9 "$p"
	done
	true
	if [ -n "${UDIR:-}" ]; then
		sandbox_teardown
	fi
}

# Starts a proxy of 2 workers with flags; PROXY and METRICS its ports.
start_workers() {
	PROXY=$(free_port)
	METRICS=$(free_port)
	start_bg proxy "$CORDON" -v proxy --workers 2 \
	    --listen "tcp:127.0.0.1:$PROXY" \
	    --metrics "tcp:127.0.0.1:$METRICS" --log "$LOG" \
	    --pid-file "$BATS_TEST_TMPDIR/proxy.pid" "$@"
	PROXY_PID=$BG_PID
	wait_listen "tcp:127.0.0.1:$PROXY"
	wait_ready
}

# Waits up to 5 s for /readyz to answer 200.
wait_ready() {
	for _ in $(seq 100); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' \
		    "http://127.0.0.1:$METRICS/readyz")" = 200 ] && return 0
		sleep 0.05
	done
	curl -s "http://127.0.0.1:$METRICS/readyz" >&2
	return 1
}

# The pids of the workers, one a line.
workers() { cat /proc/"$PROXY_PID"/task/*/children 2>/dev/null |
    tr ' ' '\n' | grep -v '^$' || true; }

# Prints those of the pids given that still run (not zombies).
live() {
	local p
	for p in "$@"; do
		case $(sed -n 's/^State:[[:space:]]*//p' \
		    "/proc/$p/status" 2>/dev/null) in
		"" | Z*) ;;
		*) echo "$p" ;;
		esac
	done
	true
}

# $1 new connections in a row, GET through the proxy to $2: the codes.
gets() {
	local i
	for i in $(seq "$1"); do
		curl -sS -o /dev/null -w '%{http_code} ' \
		    -x "http://127.0.0.1:$PROXY" "$2"
	done
}

# $1 times $2, as "C C C ".
times() { printf "$2 %.0s" $(seq "$1"); }

@test "workers: two processes serve, /metrics gives their totals, every log line whole" {
	start_workers --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	[ "$(workers | wc -l)" -eq 2 ]
	[ "$(gets 60 "http://127.0.0.1:$UP/bytes/100")" = "$(times 60 200)" ]
	# Both workers took connections, each counted apart.
	w0=$(metric 'cordon_worker_accepted_total{worker="0"}')
	w1=$(metric 'cordon_worker_accepted_total{worker="1"}')
	echo "worker 0: $w0, worker 1: $w1"
	[ "$w0" -gt 0 ]
	[ "$w1" -gt 0 ]
	[ "$(metric cordon_workers)" = 2 ]
	# The totals are the whole proxy's, not one worker's.
	[ "$(metric cordon_accepted_total)" = 60 ]
	[ "$(metric 'cordon_connections_total{decision="allow",protocol="http"}')" = 60 ]
	[ "$(metric 'cordon_bytes_total{direction="down"}')" -ge 6000 ]
	[ "$(curl -sS "http://127.0.0.1:$METRICS/metrics" |
	    grep -c '^cordon_policy_info')" -eq 1 ]
	# One whole line per request, from both processes.
	[ "$(end_lines "$LOG")" -eq 60 ]
	[ "$(jq -c 'select(.event != "open") | .' "$LOG" | wc -l)" -eq 60 ]
}

@test "workers: SIGHUP reaches every worker: a host newly allowed is allowed on every connection" {
	pol="$BATS_TEST_TMPDIR/policy.json"
	echo '{"version": 1, "network": {"allow": ["other.test"]}}' >"$pol"
	start_workers --policy "$pol" --allow-cidr 127.0.0.1/32
	[ "$(gets 10 "http://127.0.0.1:$UP/")" = "$(times 10 403)" ]
	echo '{"version": 1, "network": {"allow": ["other.test",
	    "127.0.0.1:'"$UP"'"]}}' >"$pol"
	kill -HUP "$PROXY_PID"
	# Given time to reach both (not asserted here: the connections
	# below are what must show it).
	for _ in $(seq 100); do
		[ "$(grep -c 'policy reloaded' "$BATS_TEST_TMPDIR/proxy.log")" \
		    -ge 2 ] && break
		sleep 0.05
	done
	a0=$(metric 'cordon_worker_accepted_total{worker="0"}')
	a1=$(metric 'cordon_worker_accepted_total{worker="1"}')
	# Every new connection allowed, whichever worker took it ...
	[ "$(gets 60 "http://127.0.0.1:$UP/")" = "$(times 60 200)" ]
	# ... and both took some: a worker the reload missed would have
	# answered 403.
	b0=$(metric 'cordon_worker_accepted_total{worker="0"}')
	b1=$(metric 'cordon_worker_accepted_total{worker="1"}')
	echo "after the reload: worker 0 took $((b0 - a0)), worker 1 $((b1 - a1))"
	[ $((b0 - a0)) -gt 0 ]
	[ $((b1 - a1)) -gt 0 ]
	# One reload, counted once: it reached both workers.
	[ "$(metric 'cordon_policy_reloads_total{result="ok"}')" = 1 ]
	[ "$(grep -c 'policy reloaded' "$BATS_TEST_TMPDIR/proxy.log")" -eq 2 ]
	wait_ready
}

@test "workers: kill -9 of a worker: started again, logged, no listener lost, no count lost" {
	start_workers --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	[ "$(gets 20 "http://127.0.0.1:$UP/")" = "$(times 20 200)" ]
	victim=$(workers | head -n 1)
	kill -9 "$victim"
	for _ in $(seq 100); do
		if [ "$(workers | wc -l)" -eq 2 ] &&
		    [ -z "$(workers | grep -x "$victim")" ]; then
			break
		fi
		sleep 0.05
	done
	workers
	[ "$(workers | wc -l)" -eq 2 ]
	run ! grep -qx "$victim" < <(workers)
	grep -q "worker [01] (pid $victim) was killed by signal 9.*starting it again" \
	    "$BATS_TEST_TMPDIR/proxy.log"
	wait_ready
	[ "$(gets 20 "http://127.0.0.1:$UP/")" = "$(times 20 200)" ]
	[ "$(metric cordon_worker_restarts_total)" = 1 ]
	# The dead worker's counts are kept: a counter never goes down.
	[ "$(metric 'cordon_connections_total{decision="allow",protocol="http"}')" = 40 ]
	[ "$(end_lines "$LOG")" -eq 40 ]
}

@test "workers: SIGTERM drains every worker: an open tunnel finishes, then all end" {
	ECHO=$(free_port)
	start_bg echo "$NETCHECK" echo "tcp:127.0.0.1:$ECHO"
	wait_listen "tcp:127.0.0.1:$ECHO"
	start_workers --allow-domain "127.0.0.1:$ECHO" --allow-cidr 127.0.0.1/32
	ws=$(workers | tr '\n' ' ')
	# A tunnel held open across the signal, written to after it.
	cat >"$BATS_TEST_TMPDIR/hold.py" <<'PY'
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[2].encode())
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
open(sys.argv[3], "w").close()
while not os.path.exists(sys.argv[4]):
    time.sleep(0.05)
s.sendall(b"after\n")
print(s.recv(100).decode().strip())
PY
	start_bg hold python3 "$BATS_TEST_TMPDIR/hold.py" "$PROXY" "$ECHO" \
	    "$BATS_TEST_TMPDIR/open" "$BATS_TEST_TMPDIR/go"
	HOLD=$BG_PID
	for _ in $(seq 100); do [ -e "$BATS_TEST_TMPDIR/open" ] && break; sleep 0.05; done
	kill -TERM "$PROXY_PID"
	# Both workers heard it; the proxy is draining, not gone.
	wait_for eval '[ "$(grep -c "Terminated: no new connections" \
	    "$BATS_TEST_TMPDIR/proxy.log")" -eq 2 ]'
	kill -0 "$PROXY_PID"
	run curl -sS "http://127.0.0.1:$METRICS/readyz"
	[[ "$output" == "not ready: draining"* ]]
	: >"$BATS_TEST_TMPDIR/go"
	wait "$HOLD"
	[ "$(cat "$BATS_TEST_TMPDIR/hold.log")" = after ]
	for _ in $(seq 100); do kill -0 "$PROXY_PID" 2>/dev/null || break; sleep 0.05; done
	run wait "$PROXY_PID"
	[ "$status" -eq 0 ]
	for w in $ws; do run ! kill -0 "$w"; done
	[ ! -e "$BATS_TEST_TMPDIR/proxy.pid" ]
	[ "$(jq -r 'select(.event != "open") | .protocol' "$LOG")" = connect ]
}

@test "workers: a run's live deny (--proxy-socket --control) holds for every connection of its sandbox, all served by worker 0" {
	sandbox_setup
	sock="$UDIR/proxy.sock"
	PROXY=$(free_port)
	METRICS=$(free_port)
	start_bg proxy "$UCORDON" proxy --workers 2 \
	    --listen "tcp:127.0.0.1:$PROXY" --listen-sandbox "unix:$sock" \
	    --metrics "tcp:127.0.0.1:$METRICS" --log "$LOG" \
	    --resolve up.test:127.0.0.1 --allow-cidr 127.0.0.1/32 \
	    --allow-domain "up.test:$UP"
	wait_listen "unix:$sock"
	wait_ready
	chmod 666 "$sock"
	mkdir -p "$WS/m"
	chmod 777 "$WS/m"
	CTL="$UDIR/ctl.sock"
	# The harness: denies up.test once the run has made its first
	# connections (m/first), and says so (m/denied) once applied.
	cp "$BATS_TEST_DIRNAME/clients/deny_after.py" "$UDIR/bin/deny.py"
	chmod 755 "$UDIR/bin/deny.py"
	start_bg harness as_user "$UDIR/home" python3 "$UDIR/bin/deny.py" \
	    "$CTL" "$WS/m" "up.test:$UP"
	wait_listen "unix:$CTL"
	# 40 connections at once, before the deny and after: were the
	# listener served by both workers, both would take some.
	run --separate-stderr in_sandbox --quiet --proxy-socket "$sock" \
	    --control "$CTL" -- sh -c "
	    c() { curl -s -o /dev/null -w '%{http_code} ' http://up.test:$UP/; }
	    burst() { for i in \$(seq 40); do c & done; wait; }
	    burst; echo; : >m/first
	    for i in \$(seq 200); do [ -e m/denied ] && break; sleep 0.05; done
	    burst"
	echo "$output"
	echo "$stderr"
	[ "$(echo "$output" | sed -n 1p)" = "$(times 40 200)" ]
	[ "$(echo "$output" | sed -n 2p)" = "$(times 40 403)" ]
	# Every one of them, and the run's channel, accepted by worker 0.
	w0=$(metric 'cordon_worker_accepted_total{worker="0"}')
	w1=$(metric 'cordon_worker_accepted_total{worker="1"}')
	echo "worker 0: $w0, worker 1: $w1"
	[ "$w0" -ge 80 ]
	[ "$w1" -eq 0 ]
	# The same host, through the TCP listener, for no run: the deny was
	# the run's alone.
	[ "$(gets 10 "http://up.test:$UP/")" = "$(times 10 200)" ]
}

@test "workers: kill -9 of the parent: every worker ends with it at once, an open tunnel too, and the port refuses" {
	ECHO=$(free_port)
	start_bg echo "$NETCHECK" echo "tcp:127.0.0.1:$ECHO"
	wait_listen "tcp:127.0.0.1:$ECHO"
	start_workers --allow-domain "127.0.0.1:$ECHO" --allow-cidr 127.0.0.1/32 \
	    --drain-secs 30
	ws=$(workers | tr '\n' ' ')
	ORPHANS=$ws
	[ "$(echo $ws | wc -w)" -eq 2 ]
	# A tunnel held open: a worker told to drain would serve it on
	# for 30 s; one that ends with its parent breaks it.
	cat >"$BATS_TEST_TMPDIR/hold.py" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[2].encode())
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
open(sys.argv[3], "w").close()
try:
    print("closed" if s.recv(100) == b"" else "data")
except OSError as e:
    print("closed: %s" % e)
PY
	start_bg hold python3 "$BATS_TEST_TMPDIR/hold.py" "$PROXY" "$ECHO" \
	    "$BATS_TEST_TMPDIR/open"
	HOLD=$BG_PID
	for _ in $(seq 100); do
		[ -e "$BATS_TEST_TMPDIR/open" ] && break
		sleep 0.05
	done
	[ -e "$BATS_TEST_TMPDIR/open" ]
	kill -KILL "$PROXY_PID"
	# Within a second, no worker is left (a zombie not yet reaped by
	# whoever inherited it counts as gone).
	for _ in $(seq 20); do
		[ -z "$(live $ws)" ] && break
		sleep 0.05
	done
	live $ws
	[ -z "$(live $ws)" ]
	# The tunnel broke, and nothing accepts on the port: a new
	# client is refused, not queued.
	run timeout 5 tail --pid "$HOLD" -f /dev/null
	[ "$status" -eq 0 ]
	[[ "$(cat "$BATS_TEST_TMPDIR/hold.log")" == closed* ]]
	run curl -sS -m 5 -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$ECHO/"
	[ "$status" -eq 7 ]
}
