#!/usr/bin/env bash
# mk/workers-bench.sh: the "workers" section of make bench (BENCH=workers
# runs it alone).  One cordon proxy with --workers 1, one with --workers
# $(nproc), the same flags, one local httpd behind both; ab opens a new
# connection for each GET (no keep-alive), WORKERS_CONC at a time,
# WORKERS_REQS a run, RUNS runs interleaved.  Prints, for each, the new
# connections a second through the proxy and the time to first byte
# (ab's "wait": request sent to first byte back) at the 50th and 99th
# percentiles, medians of the runs.  ab itself takes a core: on a
# machine of two, the workers share the second with it.
set -eu

cordon=${1:?usage: workers-bench.sh CORDON TOOLS_DIR}
tools=${2:?usage: workers-bench.sh CORDON TOOLS_DIR}
RUNS=${RUNS:-5}
WORKERS_REQS=${WORKERS_REQS:-5000}
WORKERS_CONC=${WORKERS_CONC:-32}
ncpu=$(nproc)
tmp=$(mktemp -d)
pids=()
here=$(cd "$(dirname "$0")" && pwd)

# alive, tcp_listening, bg_named, wait_up, median, figure, ratio,
# bench_traps, next_port
. "$here/lib.sh"

bench_traps


next_port; up=$port
bg_named httpd "$tools/httpd" --listen "tcp:127.0.0.1:$up"
wait_up "$bg_pid" "$up" || { echo "workers bench: httpd did not start"; exit 1; }
declare -A pport
for w in 1 "$ncpu"; do
	next_port; pport[$w]=$port
	bg_named "proxy$w" "$cordon" proxy --workers "$w" --only \
	    --allow-domain "127.0.0.1:$up" --allow-cidr 127.0.0.1/32 \
	    --listen "tcp:127.0.0.1:$port" --log "$tmp/egress$w.log"
	wait_up "$bg_pid" "$port" || {
		echo "workers bench: cordon proxy did not start:"
		cat "$tmp/proxy$w.log"; exit 1
	}
done

# One ab run through port $1: "RPS P50 P99" (ms), or "failed".
ab_once() {
	local g=$tmp/ab.tsv rps
	if ! ab -q -n "$WORKERS_REQS" -c "$WORKERS_CONC" -X "127.0.0.1:$1" \
	    -g "$g" "http://127.0.0.1:$up/" >"$tmp/ab.out" 2>&1 ||
	    grep -q '^Non-2xx' "$tmp/ab.out"; then
		echo failed
		return
	fi
	rps=$(awk '/^Requests per second:/ { print $4 }' "$tmp/ab.out")
	# -g: starttime seconds ctime dtime ttime wait, one request a line.
	tail -n +2 "$g" | awk -F '\t' '{ print $6 }' | sort -n | awk -v r="$rps" \
	    '{ v[NR] = $1 } END { printf "%s %s %s\n", r,
	    v[int(NR * 0.5 + 0.5)], v[int(NR * 0.99 + 0.5)] }'
}

declare -A runs
for _ in $(seq "$RUNS"); do
	for w in 1 "$ncpu"; do
		read -r rps p50 p99 _ <<<"$(ab_once "${pport[$w]}") - -"
		runs[rps.$w]+="$rps "
		runs[p50.$w]+="$p50 "
		runs[p99.$w]+="$p99 "
	done
done

echo "== workers: new connections through cordon proxy, one GET each" \
    "(ab -c $WORKERS_CONC, $WORKERS_REQS"
echo "   a run, no keep-alive; $RUNS runs, medians; $ncpu cores, ab on" \
    "them too)"
printf '%-22s %14s %14s %14s\n' "" "conns / s" "TTFB p50 ms" "TTFB p99 ms"
for w in 1 "$ncpu"; do
	printf '%-22s %14s %14s %14s\n' "--workers $w" "$(figure "rps.$w")" \
	    "$(figure "p50.$w")" "$(figure "p99.$w")"
done
echo "--workers $ncpu / --workers 1: $(ratio "$(figure "rps.$ncpu")" \
    "$(figure rps.1)") the connections a second"
