#!/usr/bin/env bash
# make valgrind: the proxy and the bridge under valgrind's memcheck
# through a short load on loopback (CONNECT tunnels, plain HTTP with and
# without keep-alive, refusals, resets from either side, a target that is
# down; then inspected TLS: requests kept alive, refused inside, a client
# that does not trust the CA, one that hangs up mid-answer), then SIGTERM.
# Fails on any memcheck error or definite leak.
set -eu

cordon=${1:?usage: valgrind.sh CORDON TOOLS_DIR}
tools=${2:?usage: valgrind.sh CORDON TOOLS_DIR}
netcheck="$tools/netcheck"
httpd="$tools/httpd"
tmp=$(mktemp -d)
pids=()
vg=(valgrind --leak-check=full --errors-for-leak-kinds=definite
    --error-exitcode=1 --track-origins=yes --quiet)

cleanup() {
	local p
	set +e
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

port=$((30000 + RANDOM % 2000))
# tcp_listening
. "$(dirname "$0")/lib.sh"
free_port() { port=$((port + 1)); while tcp_listening "$port"; do
    port=$((port + 1)); done; }
wait_listen() {	# valgrind starts slowly
	for _ in $(seq 600); do
		case $1 in
		unix:*) [ -S "${1#unix:}" ] && return 0 ;;
		*) tcp_listening "$1" && return 0 ;;
		esac
		sleep 0.05
	done
	echo "valgrind: nothing listens on $1" >&2
	exit 1
}
bg() { local name=$1; shift; "$@" >"$tmp/$name.log" 2>&1 & bg_pid=$!
    pids+=("$bg_pid"); }

# Ends process $1 (under valgrind) with SIGTERM; prints its report and
# returns its status.
stop() {
	local rc=0
	kill -TERM "$1"
	wait "$1" || rc=$?
	echo "-- $2: exit $rc"
	grep '^==' "$tmp/$2.log" | head -n 60 || true
	return "$rc"
}

free_port; echo_port=$port
bg echo "$netcheck" echo "tcp:127.0.0.1:$echo_port"
free_port; reset_port=$port
bg reset "$netcheck" echo "tcp:127.0.0.1:$reset_port" --reset-after 1000
free_port; up=$port
bg origin "$httpd" --listen "tcp:127.0.0.1:$up"
free_port; serve=$port
bg serve "$netcheck" serve "tcp:127.0.0.1:$serve" --reply 1000
free_port; dead=$port
free_port; px=$port
wait_listen "$echo_port"; wait_listen "$reset_port"; wait_listen "$up"
wait_listen "$serve"

bg proxy "${vg[@]}" "$cordon" proxy --listen "tcp:127.0.0.1:$px" \
    --allow-domain "127.0.0.1:$echo_port" \
    --allow-domain "127.0.0.1:$reset_port" --allow-domain "127.0.0.1:$up" \
    --allow-domain "127.0.0.1:$dead" --allow-cidr 127.0.0.1/32 \
    --head-secs 2 --drain-secs 1 --log "$tmp/egress.log"
proxy=$bg_pid
wait_listen "$px"
P="http://127.0.0.1:$px"
echo "valgrind: the proxy"
tunnels() { "$netcheck" tunnels "tcp:127.0.0.1:$px" "$@" >/dev/null; }
tunnels --target "127.0.0.1:$echo_port" --conns 200 --mode cycle
tunnels --target "127.0.0.1:$reset_port" --conns 30 --mode upreset
tunnels --target "127.0.0.1:$echo_port" --conns 30 --mode vanish
# Plain HTTP: keep-alive (one curl, many URLs) and a connection each.
urls=()
for i in $(seq 50); do urls+=("http://127.0.0.1:$up/bytes/$((i * 997))"); done
curl -sS -x "$P" "${urls[@]}" >/dev/null
for _ in $(seq 20); do
	curl -sS -o /dev/null -x "$P" -H 'Connection: close' \
	    "http://127.0.0.1:$up/"
done
# Refused by policy, by the upstream, malformed, slow, SOCKS5.
for _ in $(seq 10); do
	curl -s -o /dev/null -x "$P" "http://evil.test/" || true
	curl -s -o /dev/null -x "$P" "http://127.0.0.1:$dead/" || true
	curl -s -o /dev/null -p -x "$P" "http://10.0.0.1:80/" || true
	curl -s -o /dev/null --socks5 "127.0.0.1:$px" \
	    "http://127.0.0.1:$up/" || true
	curl -s -o /dev/null --socks5-hostname "127.0.0.1:$px" \
	    "http://evil.test/" || true
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$px; printf \
	    'GET http://x/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n' >&3;
	    cat <&3" >/dev/null 2>&1 || true
done
"$netcheck" slowloris "tcp:127.0.0.1:$px" --conns 5 --secs 6 >/dev/null
# Tunnels still open at SIGTERM: drained, then closed.
rm -f "$tmp/release"
"$netcheck" tunnels "tcp:127.0.0.1:$px" --target "127.0.0.1:$echo_port" \
    --conns 20 --mode hold --then "$tmp/release" >/dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do
	[ "$(wc -l <"$tmp/egress.log")" -ge 20 ] && break
	sleep 0.1
done
rc=0
stop "$proxy" proxy || rc=1
touch "$tmp/release"
wait "$holder" || true

echo "valgrind: the proxy, inspecting TLS"
sh "$(dirname "$0")/origin-cert.sh" "$tmp" api.test
"$cordon" ca init --dir "$tmp/ca" >/dev/null
free_port; tls_up=$port
bg tls-origin "$httpd" --listen "tcp:127.0.0.1:$tls_up" \
    --tls-cert "$tmp/origin.pem" --tls-key "$tmp/origin.key"
wait_listen "$tls_up"
cat >"$tmp/inspect.json" <<EOF
{"version": 1, "network": {"allow": ["api.test:$tls_up"],
   "allow_cidrs": ["127.0.0.1/32"],
   "inspect": [{"host": "api.test", "methods": ["GET"],
     "paths": ["/bytes/*"]}]},
 "tls": {"ca_dir": "$tmp/ca"}}
EOF
free_port; ipx=$port
bg inspect "${vg[@]}" "$cordon" proxy --only --policy "$tmp/inspect.json" \
    --listen "tcp:127.0.0.1:$ipx" --resolve api.test:127.0.0.1 \
    --upstream-ca "$tmp/origin-ca.pem" --log "$tmp/inspect.log"
iproxy=$bg_pid
wait_listen "$ipx"
IP="http://127.0.0.1:$ipx"
urls=()
for i in $(seq 10); do
	urls+=("https://api.test:$tls_up/bytes/$((i * 9973))")
done
curl -sS --cacert "$tmp/ca/ca.crt" -x "$IP" "${urls[@]}" >/dev/null
for _ in $(seq 5); do
	# Refused inside, refused by the client, cut short by the client.
	curl -s -o /dev/null --cacert "$tmp/ca/ca.crt" -x "$IP" -X POST \
	    "https://api.test:$tls_up/bytes/1" || true
	curl -s -o /dev/null -x "$IP" "https://api.test:$tls_up/bytes/1" ||
	    true
	curl -s -o /dev/null --max-filesize 100000 \
	    --cacert "$tmp/ca/ca.crt" -x "$IP" \
	    "https://api.test:$tls_up/bytes/10000000" || true
done
stop "$iproxy" inspect || rc=1

echo "valgrind: the bridge"
sock="$tmp/b.sock"
free_port; front=$port
bg inner "${vg[@]}" "$cordon" bridge --listen "unix:$sock" \
    --connect "tcp:127.0.0.1:$serve"
inner=$bg_pid
bg outer "${vg[@]}" "$cordon" bridge --listen "tcp:127.0.0.1:$front" \
    --connect "unix:$sock"
outer=$bg_pid
free_port; down=$port
bg down "${vg[@]}" "$cordon" bridge --listen "tcp:127.0.0.1:$down" \
    --connect "unix:$tmp/nobody.sock" --proxy-id vg
downb=$bg_pid
wait_listen "unix:$sock"; wait_listen "$front"; wait_listen "$down"
"$netcheck" client "tcp:127.0.0.1:$front" --send 5000 --expect 1000 \
    --conns 200 --parallel 10 >/dev/null
for _ in $(seq 20); do "$netcheck" reset "tcp:127.0.0.1:$front"; done
"$netcheck" client "tcp:127.0.0.1:$down" --send 10 --expect 0 \
    --conns 20 --parallel 4 >/dev/null 2>&1 || true
stop "$outer" outer || rc=1
stop "$inner" inner || rc=1
stop "$downb" down || rc=1
if [ "$rc" -ne 0 ]; then
	echo "valgrind: errors or definite leaks above"
	exit 1
fi
echo "valgrind: no errors, no definite leaks"
