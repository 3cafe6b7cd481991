#!/usr/bin/env bash
# make bench: cordon against the tools other sandboxes use, in the same
# run, on this machine's loopback.  Machines are shared and noisy: each
# figure is the median of RUNS runs, and what counts is the ratio to the
# reference measured beside it.
set -eu

cordon=${1:?usage: bench.sh CORDON TOOLS_DIR}
tools=${2:?usage: bench.sh CORDON TOOLS_DIR}
netcheck="$tools/netcheck"
RUNS=${RUNS:-5}
SIZE=${SIZE:-1073741824}		# bytes per throughput run, each way: up
CONNS=${CONNS:-2000}			# connections per rate run
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# Ports below the ephemeral range, counted up from a random start.
port=$((20000 + RANDOM % 10000))
next_port() { port=$((port + 1)); }

bg() { "$@" >"$tmp/bg.$RANDOM.log" 2>&1 & pids+=("$!"); }

wait_tcp() {
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.05
	done
	echo "bench: nothing listens on $1" >&2
	exit 1
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# One figure: field $1 of netcheck's line, median of RUNS runs of the rest.
measure() {
	local field=$1
	shift
	for _ in $(seq "$RUNS"); do
		"$@" | awk -v f="$field" '{ for (i = 1; i < NF; i++)
		    if ($i == f) print $(i + 1) }'
	done | median
}

next_port; back=$port
bg "$netcheck" serve "tcp:127.0.0.1:$back" --raw 1
next_port; back_rate=$port
bg "$netcheck" serve "tcp:127.0.0.1:$back_rate" --raw 1 --reply 100
wait_tcp "$back"
wait_tcp "$back_rate"

# The chain TCP -> Unix socket -> TCP, made of cordon bridges ...
chain_cordon() {	# $1: target port; the front port is left in $port
	local sock="$tmp/c.$1.sock"
	next_port
	bg "$cordon" bridge --listen "unix:$sock" --connect "tcp:127.0.0.1:$1"
	bg "$cordon" bridge --listen "tcp:127.0.0.1:$port" \
	    --connect "unix:$sock"
	wait_tcp "$port"
}
# ... and of two socat processes, as other sandboxes build it.
chain_socat() {
	local sock="$tmp/s.$1.sock"
	next_port
	bg socat "UNIX-LISTEN:$sock,fork" "TCP:127.0.0.1:$1"
	bg socat "TCP-LISTEN:$port,fork,reuseaddr,bind=127.0.0.1" \
	    "UNIX-CONNECT:$sock"
	wait_tcp "$port"
}

chain_cordon "$back"; c_tp=$port
chain_socat "$back"; s_tp=$port
chain_cordon "$back_rate"; c_rate=$port
chain_socat "$back_rate"; s_rate=$port

tp() { measure MiB/s "$netcheck" client "tcp:127.0.0.1:$1" --raw 1 \
    --send "$SIZE" --expect 0; }
rate() { measure conns/s "$netcheck" client "tcp:127.0.0.1:$1" --raw 1 \
    --send 100 --expect 100 --conns "$CONNS" --parallel "$2"; }

echo "== bridge: the chain TCP -> Unix socket -> TCP ($RUNS runs, medians)"
d=$(tp "$back"); c=$(tp "$c_tp"); s=$(tp "$s_tp")
printf '%-34s %10s %10s %10s %14s\n' "" direct cordon socat "cordon/socat"
printf '%-34s %10.0f %10.0f %10.0f %13.2fx\n' \
    "throughput, 1 conn, MiB/s" "$d" "$c" "$s" "$(echo "$c / $s" | bc -l)"
for par in 1 16; do
	d=$(rate "$back_rate" "$par"); c=$(rate "$c_rate" "$par")
	s=$(rate "$s_rate" "$par")
	printf '%-34s %10.0f %10.0f %10.0f %13.2fx\n' \
	    "connections/s, $par at a time" "$d" "$c" "$s" \
	    "$(echo "$c / $s" | bc -l)"
done
echo "(cordon as a share of direct loopback: see the first columns)"
