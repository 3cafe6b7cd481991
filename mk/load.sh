#!/usr/bin/env bash
# mk/load.sh: the "load and faults" section of make bench (BENCH=load runs
# it alone).  One cordon proxy on loopback, in front of test peers
# (tests/tools: netcheck echo, httpd), and the figures the issue asks for:
#
#   - TUNNELS concurrent CONNECT tunnels, all checked alive while held;
#     the proxy's descriptors and peak RSS (VmHWM) at that moment;
#   - SEQ sequential CONNECT tunnels, opened and closed one at a time,
#     with the proxy's descriptors back at their baseline and its RSS
#     before and after;
#   - SLOW slowloris clients (a head byte a second), each dropped at
#     --head-secs, while a normal client's GETs keep their latency;
#   - FAULTS clients that reset mid-tunnel and FAULTS tunnels whose
#     upstream resets mid-stream: the proxy stays up, descriptors back.
#
# Every count is printed as measured; a phase that fails says so and the
# script goes on, exiting 1 at the end.
set -eu

cordon=${1:?usage: load.sh CORDON TOOLS_DIR}
tools=${2:?usage: load.sh CORDON TOOLS_DIR}
netcheck="$tools/netcheck"
httpd="$tools/httpd"
TUNNELS=${TUNNELS:-10000}
SEQ=${SEQ:-100000}
SLOW=${SLOW:-200}
FAULTS=${FAULTS:-2000}
HEAD_SECS=${HEAD_SECS:-3}
tmp=$(mktemp -d)
pids=()
bad=0

# alive, tcp_listening, bg_named, wait_up
. "$(dirname "$0")/lib.sh"

cleanup() {
	local p
	set +e
	trap - EXIT INT TERM HUP
	for p in "${pids[@]}"; do alive "$p" && kill "$p" 2>/dev/null; done
	sleep 0.2
	for p in "${pids[@]}"; do alive "$p" && kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The proxy holds two descriptors an idle tunnel (its sockets; a splice
# pipe only while bytes move); the client and the echo server one each.  Raising the
# hard limit needs root (CAP_SYS_RESOURCE); with less, fewer tunnels, and
# the line says so.
need=$((2 * TUNNELS + 64))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$need" ]; then
	ulimit -n "$need" 2>/dev/null ||
	    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
fi
limit=$(ulimit -n)
tunnels_note=
if [ "$limit" != unlimited ] && [ "$limit" -lt "$need" ]; then
	tunnels_note=" (fewer than $TUNNELS: the fd limit is $limit)"
	TUNNELS=$(((limit - 64) / 2))
fi

port=$((20000 + RANDOM % 10000))
free_port() { port=$((port + 1)); while tcp_listening "$port"; do
    port=$((port + 1)); done; }


fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" \
    2>/dev/null || echo 0; }
mib() { printf '%.1f' "$(echo "${1:-0} / 1024" | bc -l)"; }

# Waits up to 10 s for process $1 to be back at $2 descriptors; sets
# $after to the count it ended at and $back_secs to the time it took.
fds_settle() {
	local t0=${EPOCHREALTIME/./}
	for _ in $(seq 200); do
		after=$(fds "$1")
		[ "$after" -le "$2" ] && break
		sleep 0.05
	done
	back_secs=$(echo "(${EPOCHREALTIME/./} - $t0) / 1000000" | bc -l)
}

# Field $2 of the line of file $1 that starts with $3.
field() { awk -v w="$3" -v f="$2" '$1 == w { for (i = 1; i < NF; i++)
    if ($i == f) print $(i + 1) }' "$1"; }

free_port; echo_port=$port
bg_named echo "$netcheck" echo "tcp:127.0.0.1:$echo_port"
wait_up "$bg_pid" "$echo_port" || { echo "load: no echo server" >&2; exit 1; }
free_port; reset_port=$port
bg_named reset "$netcheck" echo "tcp:127.0.0.1:$reset_port" \
    --reset-after 1000
wait_up "$bg_pid" "$reset_port" || { echo "load: no echo server" >&2; exit 1; }
free_port; up=$port
bg_named origin "$httpd" --listen "tcp:127.0.0.1:$up"
wait_up "$bg_pid" "$up" || { echo "load: httpd did not start" >&2; exit 1; }
free_port; px=$port
bg_named proxy "$cordon" proxy --listen "tcp:127.0.0.1:$px" \
    --allow-domain "127.0.0.1:$echo_port" \
    --allow-domain "127.0.0.1:$reset_port" --allow-domain "127.0.0.1:$up" \
    --allow-cidr 127.0.0.1/32 --max-conns $((TUNNELS + 1024)) \
    --head-secs "$HEAD_SECS" --log "$tmp/egress.log"
proxy=$bg_pid
wait_up "$proxy" "$px" || { echo "load: the proxy did not start" >&2;
    cat "$tmp/proxy.log" >&2; exit 1; }
base=$(fds "$proxy")
row() { printf '%-30s %s\n' "$1" "$2"; }

echo "== load and faults: one cordon proxy on loopback (fd limit $limit," \
    "baseline $base fds)"

# Concurrent tunnels, held; the peak sampled while they open.
bg_named tunnels "$netcheck" tunnels "tcp:127.0.0.1:$px" \
    --target "127.0.0.1:$echo_port" --conns "$TUNNELS" --mode hold \
    --then "$tmp/release"
client=$bg_pid
peak=0
while alive "$client" && ! grep -q '^open ' "$tmp/tunnels.log"; do
	n=$(fds "$proxy"); [ "$n" -gt "$peak" ] && peak=$n
	sleep 0.1
done
n=$(fds "$proxy"); [ "$n" -gt "$peak" ] && peak=$n
held_rss=$(kib "$proxy" VmRSS)
touch "$tmp/release"
wait "$client" || bad=1
fds_settle "$proxy" "$base"
row "concurrent CONNECT tunnels" "$(field "$tmp/tunnels.log" open open) open,\
 $(field "$tmp/tunnels.log" failed open) failed in\
 $(printf '%.1f' "$(field "$tmp/tunnels.log" seconds open)") s;\
 $(field "$tmp/tunnels.log" alive alive) alive,\
 $(field "$tmp/tunnels.log" dead alive) dead when checked$tunnels_note"
row "  the proxy, all held" "$peak fds, RSS $(mib "$held_rss") MiB, peak RSS\
 (VmHWM) $(mib "$(kib "$proxy" VmHWM)") MiB"
row "  after closing them" "$after fds (baseline $base) in\
 $(printf '%.1f' "$back_secs") s"
[ "$after" -le "$base" ] || bad=1

# Sequential tunnels.
rss0=$(kib "$proxy" VmRSS)
bg_named seq "$netcheck" tunnels "tcp:127.0.0.1:$px" \
    --target "127.0.0.1:$echo_port" --conns "$SEQ" --mode cycle
wait "$bg_pid" || bad=1
fds_settle "$proxy" "$base"
row "sequential CONNECT tunnels" "$(field "$tmp/seq.log" ok ok) ok,\
 $(field "$tmp/seq.log" failed ok) failed in\
 $(printf '%.1f' "$(field "$tmp/seq.log" seconds ok)") s\
 ($(printf '%.0f' "$(field "$tmp/seq.log" conns/s ok)")/s)"
row "  the proxy after" "$after fds (baseline $base), RSS $(mib "$rss0") ->\
 $(mib "$(kib "$proxy" VmRSS)") MiB"
[ "$after" -le "$base" ] || bad=1

# Slowloris, and a normal client's GETs before and during it.
get() { curl -s -o /dev/null -w '%{http_code} %{time_total}\n' \
    --max-time 10 -x "http://127.0.0.1:$px" "http://127.0.0.1:$up/" ||
    echo "fail 0"; }
ms() { awk '$1 == 200 { print $2 * 1000 }' "$1" | sort -g | awk '
    { v[NR] = $1 } END { if (NR) printf "median %.1f ms, max %.1f ms",
    v[int((NR + 1) / 2)], v[NR]; else printf "none" }'; }
for _ in $(seq 20); do get; done >"$tmp/get.before"
bg_named slow "$netcheck" slowloris "tcp:127.0.0.1:$px" --conns "$SLOW" \
    --secs $((HEAD_SECS + 10))
slow=$bg_pid
sleep 0.2
while alive "$slow"; do get; sleep 0.1; done >"$tmp/get.during"
wait "$slow" || bad=1
fds_settle "$proxy" "$base"
gfail=$(awk '$1 != 200' "$tmp/get.during" | wc -l)
row "slowloris, a byte a second" "$(field "$tmp/slow.log" dropped dropped) of\
 $SLOW dropped (--head-secs $HEAD_SECS), after median\
 $(field "$tmp/slow.log" median dropped) s, max\
 $(field "$tmp/slow.log" max dropped) s; $(field "$tmp/slow.log" open \
 dropped) left open"
row "  a normal client meanwhile" "GET $(ms "$tmp/get.during"),\
 $gfail failed of $(wc -l <"$tmp/get.during")\
 (before: $(ms "$tmp/get.before"))"
row "  the proxy after" "$after fds (baseline $base)"
[ "$gfail" -eq 0 ] && [ "$after" -le "$base" ] || bad=1

# Faults: clients that vanish, upstreams that reset.
bg_named vanish "$netcheck" tunnels "tcp:127.0.0.1:$px" \
    --target "127.0.0.1:$echo_port" --conns "$FAULTS" --mode vanish
wait "$bg_pid" || bad=1
bg_named upreset "$netcheck" tunnels "tcp:127.0.0.1:$px" \
    --target "127.0.0.1:$reset_port" --conns "$FAULTS" --mode upreset
wait "$bg_pid" || bad=1
fds_settle "$proxy" "$base"
row "clients resetting mid-tunnel" "$(field "$tmp/vanish.log" ok ok) ok,\
 $(field "$tmp/vanish.log" failed ok) failed in\
 $(printf '%.1f' "$(field "$tmp/vanish.log" seconds ok)") s"
row "upstreams resetting mid-stream" "$(field "$tmp/upreset.log" ok ok) ended\
 by the proxy, $(field "$tmp/upreset.log" failed ok) not, in\
 $(printf '%.1f' "$(field "$tmp/upreset.log" seconds ok)") s"
up_now=no
alive "$proxy" && up_now=yes
row "  the proxy after" "up: $up_now, $after fds (baseline $base), peak RSS\
 (VmHWM) $(mib "$(kib "$proxy" VmHWM)") MiB"
[ "$up_now" = yes ] && [ "$after" -le "$base" ] || bad=1

# The proxy's own complaints, then its exit on SIGTERM.
kill -TERM "$proxy"
rc=0
wait "$proxy" || rc=$?
warns=$(grep -vc -e 'listening on' -e 'no new connections' \
    "$tmp/proxy.log" || true)
row "proxy messages, exit" "$warns warnings or errors; exit $rc on SIGTERM;\
 $(wc -l <"$tmp/egress.log") egress log lines"
if [ "$warns" -ne 0 ]; then sort "$tmp/proxy.log" | uniq -c | sort -rn |
    head -n 5 | sed 's/^/    /'; fi
[ "$rc" -eq 0 ] || bad=1
if [ "$bad" -ne 0 ]; then
	echo "(load: some figure above is not what it should be)"
	exit 1
fi
