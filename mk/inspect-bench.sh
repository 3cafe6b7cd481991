#!/usr/bin/env bash
# mk/inspect-bench.sh: the "TLS inspection" section of make bench
# (BENCH=inspect runs it alone).  One HTTPS origin (tests/tools/httpd
# with a certificate from a CA made here), one cordon proxy, and curl
# downloading SIZE bytes three ways, interleaved, RUNS times each:
#
#   direct     curl to the origin, no proxy;
#   tunnel     through cordon, CONNECT to a host that is not inspected:
#              the bytes are spliced, TLS end to end;
#   inspected  through cordon, to a host network.inspect lists: cordon
#              decrypts the origin's TLS and encrypts its own to curl.
#
# Prints the medians in MiB/s and the ratios; the proxy's CPU time per
# GiB inspected, from /proc, says where the cost is.
set -eu

cordon=${1:?usage: inspect-bench.sh CORDON TOOLS_DIR}
tools=${2:?usage: inspect-bench.sh CORDON TOOLS_DIR}
httpd="$tools/httpd"
RUNS=${RUNS:-5}
SIZE=${SIZE:-1073741824}
tmp=$(mktemp -d)
pids=()

# alive, tcp_listening, bg_named, wait_up, median, figure, ratio,
# bench_traps, next_port
. "$(dirname "$0")/lib.sh"

bench_traps

sh "$(dirname "$0")/origin-cert.sh" "$tmp" inspected.test tunnel.test
"$cordon" ca init --dir "$tmp/ca" >/dev/null

next_port; up=$port
bg_named origin "$httpd" --listen "tcp:127.0.0.1:$up" \
    --tls-cert "$tmp/origin.pem" --tls-key "$tmp/origin.key"
wait_up "$bg_pid" "$up" || { echo "inspect bench: origin did not start"; exit 1; }
cat >"$tmp/policy.json" <<EOF
{"version": 1,
 "network": {"allow": ["inspected.test:$up", "tunnel.test:$up"],
   "allow_cidrs": ["127.0.0.1/32"],
   "inspect": [{"host": "inspected.test", "methods": ["GET"],
     "paths": ["/bytes/*"]}]},
 "tls": {"ca_dir": "$tmp/ca"}}
EOF
next_port; px=$port
bg_named proxy "$cordon" proxy --only --policy "$tmp/policy.json" \
    --listen "tcp:127.0.0.1:$px" --log "$tmp/egress.log" \
    --resolve inspected.test:127.0.0.1 --resolve tunnel.test:127.0.0.1 \
    --upstream-ca "$tmp/origin-ca.pem"
proxy_pid=$bg_pid
wait_up "$proxy_pid" "$px" || {
	echo "inspect bench: cordon proxy did not start:"; cat "$tmp/proxy.log"
	exit 1
}

# One download: prints MiB/s, or "failed".
fetch() {
	local how=$1 host args out code size speed
	case $how in
	direct)	   host=inspected.test; args=(--cacert "$tmp/origin-ca.pem"
		   --resolve "inspected.test:$up:127.0.0.1") ;;
	tunnel)	   host=tunnel.test; args=(--cacert "$tmp/origin-ca.pem"
		   -x "http://127.0.0.1:$px") ;;
	inspected) host=inspected.test; args=(--cacert "$tmp/ca/ca.crt"
		   -x "http://127.0.0.1:$px") ;;
	esac
	out=$(curl -s -o /dev/null --max-time 600 "${args[@]}" \
	    -w '%{http_code} %{size_download} %{speed_download}' \
	    "https://$host:$up/bytes/$SIZE") || true
	read -r code size speed <<<"$out"
	if [ "${code:-}" = 200 ] && [ "${size:-}" = "$SIZE" ]; then
		echo "$speed / 1048576" | bc -l
	else
		echo failed
	fi
}

# The proxy's user+system CPU seconds so far.
cpu() { awk '{ printf "%.2f\n", ($14 + $15) / 100 }' "/proc/$proxy_pid/stat"; }

declare -A runs
cpu_inspected=0
for r in $(seq "$RUNS"); do
	if [ -t 2 ]; then printf '   run %s of %s\r' "$r" "$RUNS" >&2; fi
	for how in direct tunnel inspected; do
		before=$(cpu)
		runs[$how]+="$(fetch "$how") "
		if [ "$how" = inspected ]; then
			cpu_inspected=$(echo "$cpu_inspected + $(cpu) - $before" |
			    bc -l)
		fi
	done
done
if [ -t 2 ]; then printf '%30s\r' "" >&2; fi


d=$(figure direct) t=$(figure tunnel) i=$(figure inspected)
echo
echo "== TLS inspection: one HTTPS download of $SIZE bytes with curl," \
    "$RUNS runs, medians"
printf '%-34s %10s\n' "" "MiB/s"
for how in direct tunnel inspected; do
	v=$(figure "$how")
	if is_num "$v"; then v=$(printf '%.0f' "$v"); fi
	printf '%-34s %10s\n' "$how" "$v"
done
printf '%-34s %10s\n' "inspected/direct" "$(ratio "$i" "$d")"
printf '%-34s %10s\n' "inspected/tunnel" "$(ratio "$i" "$t")"
printf '%-34s %10s\n' "time inspected/direct (x slower)" "$(ratio "$d" "$i")"
gib=$(echo "$SIZE * $RUNS / 1073741824" | bc -l)
printf '(cordon proxy CPU while inspecting: %.2f s per GiB, decrypt and' \
    "$(echo "$cpu_inspected / $gib" | bc -l)"
echo " encrypt on one thread)"
