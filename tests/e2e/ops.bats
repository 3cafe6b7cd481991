#!/usr/bin/env bats
# Operating the proxy: `cordon log summary` and `tail` on real logs (plain,
# gzip-rotated, with a malformed line), /metrics scraped with curl, the
# log rotated by rename and SIGHUP (and by logrotate with the shipped
# file), a reload while 1,000 tunnels are open, the socket's group, and
# `make install` into a scratch root.  Everything on 127.0.0.1.

load helpers

bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	LOG="$BATS_TEST_TMPDIR/egress.log"
	PSOCK_ARGS=()
	UP=$(free_port)
	ECHO=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP"
	start_bg echo "$NETCHECK" echo "tcp:127.0.0.1:$ECHO"
	wait_listen "tcp:127.0.0.1:$UP"
	wait_listen "tcp:127.0.0.1:$ECHO"
}

teardown() {
	teardown_bg
	if [ -n "${UDIR:-}" ]; then
		sandbox_teardown
	fi
}

# Starts the proxy with flags; PROXY is its port, METRICS its metrics port.
start_proxy() {
	PROXY=$(free_port)
	METRICS=$(free_port)
	start_bg proxy "$CORDON" proxy --listen "tcp:127.0.0.1:$PROXY" \
	    --metrics "tcp:127.0.0.1:$METRICS" --log "$LOG" "$@"
	PROXY_PID=$BG_PID
	wait_listen "tcp:127.0.0.1:$PROXY"
	wait_listen "tcp:127.0.0.1:$METRICS"
}

get() {
	curl -sS -o /dev/null -w '%{http_code}\n' -x "http://127.0.0.1:$PROXY" "$@"
}

# SIGHUP to the proxy, then waits until it has counted reload number $1
# (done or failed): signals sent close together merge into one.
hup() {
	local n ok failed
	kill -HUP "$PROXY_PID"
	for n in $(seq 200); do
		ok=$(metric 'cordon_policy_reloads_total{result="ok"}')
		failed=$(metric 'cordon_policy_reloads_total{result="failed"}')
		[ $((${ok:-0} + ${failed:-0})) -ge "$1" ] && return 0
		sleep 0.05
	done
	echo "reload $1 was not counted"
	return 1
}

@test "log summary: per host, refused first, plain and .gz, a malformed line counted" {
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	[ "$(get "http://127.0.0.1:$UP/bytes/1000")" = 200 ]
	[ "$(get "http://127.0.0.1:$UP/bytes/2000")" = 200 ]
	[ "$(get http://evil.test/)" = 403 ]
	log_lines 3
	# The first part rotated and compressed, then more, then junk.
	mv "$LOG" "$LOG.1"
	kill -HUP "$PROXY_PID"
	gzip "$LOG.1"
	[ "$(get http://evil.test/x)" = 403 ]
	[ "$(get http://Other.Test:8080/)" = 403 ]
	[ "$(get "http://127.0.0.1:$UP/bytes/500")" = 200 ]
	log_lines 3
	echo 'not a log line' >>"$LOG"
	echo '{"time":"2026-11-22T01:40:18.029Z","decision":"maybe"}' >>"$LOG"

	run --separate-stderr "$CORDON" log summary "$LOG.1.gz" "$LOG"
	echo "$output"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == HOST* ]]
	# Refused hosts first, the most refused first.
	# Each allowed exchange has an open line and an end: counted once.
	[[ "${lines[1]}" =~ ^evil.test\ +80\ +0\ +2\ +0\ +0\ +0\ +0\ 20 ]]
	[[ "${lines[2]}" =~ ^other.test\ +8080\ +0\ +1\  ]]
	[[ "${lines[3]}" =~ ^127.0.0.1\ +$UP\ +3\ +0\ +0\ +0\ +0\ +3500\ 20 ]]
	[[ "$output" == *"11 line(s), 3 host(s), 2 malformed"* ]]
	[[ "$stderr" == *"egress.log:5: malformed: not JSON"* ]]
	[[ "$stderr" == *"egress.log:6: malformed: no \"decision\" of allow or deny"* ]]

	run --separate-stderr "$CORDON" log summary --json "$LOG" "$LOG.1.gz"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.lines == 11 and .malformed == 2 and .unended == 0'
	echo "$output" | jq -e '.hosts[0].host == "evil.test" and .hosts[0].refused == 2'
	echo "$output" | jq -e --arg up "$UP" \
	    '.hosts[2] | .allowed == 3 and .bytes_down == 3500 and
	    .ports == [($up | tonumber)] and .first < .last'
	echo "$output" | jq -e '.malformed_first[0].line == 5'

	# A missing file and a .gz cut short are said, the rest still counts.
	head -c 100 "$LOG.1.gz" >"$BATS_TEST_TMPDIR/cut.gz"
	run "$CORDON" log summary "$BATS_TEST_TMPDIR/cut.gz" nope.log "$LOG"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cut.gz: after line 0: the compressed data ends early"* ]]
	[[ "$output" == *"nope.log: No such file or directory"* ]]
	[[ "$output" == *"6 line(s), 3 host(s), 2 malformed"* ]]
}

@test "log summary: byte counts of an edited log stop at INT64_MAX" {
	# fuzz_elog's invariant: two records of INT64_MAX bytes summed past it,
	# and --json printed a negative count.
	line='{"time":"2026-11-22T01:40:18.029Z","sandbox":null,"protocol":"http","method":"GET","host":"a.test","port":80,"decision":"allow","reason":null,"status":200,"bytes_up":9223372036854775807,"bytes_down":9223372036854775807}'
	printf '%s\n%s\n' "$line" "$line" >"$BATS_TEST_TMPDIR/big.log"
	run --separate-stderr "$CORDON" log summary --json "$BATS_TEST_TMPDIR/big.log"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.hosts[0].allowed == 2 and
	    .hosts[0].bytes_up == 9223372036854775807 and
	    .hosts[0].bytes_down == 9223372036854775807'
}

@test "log tail: readable lines; -f follows across rename and SIGHUP" {
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	[ "$(get "http://127.0.0.1:$UP/bytes/1000")" = 200 ]
	[ "$(get http://evil.test/)" = 403 ]
	log_lines 2
	run "$CORDON" log tail "$LOG"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	# The open line, written before the request went upstream, then its end.
	[[ "${lines[0]}" =~ ^20[0-9-]+T[0-9:.]+Z\ -\ open\ \ GET\ 127.0.0.1:$UP$ ]]
	[[ "${lines[1]}" =~ ^20[0-9-]+T[0-9:.]+Z\ -\ allow\ GET\ 127.0.0.1:$UP\ 200\ up\ 0\ down\ 1000$ ]]
	[[ "${lines[2]}" == *" - deny  GET evil.test:80 403 up 0 down 0: no network.allow entry matches (default deny)" ]]
	run "$CORDON" log tail -n 1 "$LOG"
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == *"evil.test:80"* ]]
	# Control bytes in a line written by something else stay harmless.
	printf '%s\n' '{"time":"2026-11-22T01:40:18.029Z","sandbox":"s\u001b[2J","client":"unix","protocol":"http","method":"GET","host":"x.test","port":80,"address":null,"decision":"deny","rule":null,"rule_from":null,"reason":null,"status":403,"bytes_up":0,"bytes_down":0,"duration_ms":0}' >"$BATS_TEST_TMPDIR/esc.log"
	run "$CORDON" log tail "$BATS_TEST_TMPDIR/esc.log"
	[[ "$output" == *' s\x1b[2J deny  GET x.test:80 403'* ]]

	start_bg tail "$CORDON" log tail -f -n 0 "$LOG"
	wait_for has_open "$BG_PID" "$LOG"
	[ "$(get http://before.test/)" = 403 ]
	log_lines 3
	mv "$LOG" "$LOG.1"
	[ "$(get http://between.test/)" = 403 ]	# still the old file
	kill -HUP "$PROXY_PID"
	for i in $(seq 100); do [ -e "$LOG" ] && break; sleep 0.05; done
	[ "$(get http://after.test/)" = 403 ]
	for i in $(seq 100); do
		grep -q after.test "$BATS_TEST_TMPDIR/tail.log" && break
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/tail.log"
	[ "$(grep -c ' deny  GET ' "$BATS_TEST_TMPDIR/tail.log")" -eq 3 ]
	grep -q 'before.test:80' "$BATS_TEST_TMPDIR/tail.log"
	grep -q 'between.test:80' "$BATS_TEST_TMPDIR/tail.log"
	grep -q 'after.test:80' "$BATS_TEST_TMPDIR/tail.log"
	# Truncated in place (copytruncate): read again from the start.  As
	# with tail -F, that is seen when the file is shorter than before.
	for h in a b c; do [ "$(get "http://$h.test/")" = 403 ]; done
	for i in $(seq 100); do
		grep -q c.test "$BATS_TEST_TMPDIR/tail.log" && break
		sleep 0.05
	done
	: >"$LOG"
	[ "$(get http://truncated.test/)" = 403 ]
	for i in $(seq 100); do
		grep -q truncated.test "$BATS_TEST_TMPDIR/tail.log" && break
		sleep 0.05
	done
	grep -q 'truncated.test:80' "$BATS_TEST_TMPDIR/tail.log"
}

@test "log: cordon-log serves it alone, linking neither OpenSSL nor the sandbox's libraries; cordon-main links no zlib, and without cordon-log cordon says so" {
	local d=$BATS_TEST_TMPDIR
	log=$(dirname "$(cordon_main)")/cordon-log
	[ -x "$log" ]
	{
		printf '%s\n' '{"time":"2026-11-22T01:40:18.029Z","sandbox":"s","protocol":"http","method":"GET","host":"x.test","port":80,"decision":"deny","reason":"no rule","status":403,"bytes_up":0,"bytes_down":0,"duration_ms":0}'
		echo 'not json'
	} >"$d/x.log"
	mkdir "$d/log" "$d/main"
	cp "$CORDON" "$d/log/cordon" && cp "$log" "$d/log/cordon-log"
	cp "$CORDON" "$d/main/cordon" && cp "$(cordon_main)" "$d/main/cordon-main"
	run --separate-stderr "$d/log/cordon" log tail "$d/x.log"
	[ "$status" -eq 0 ]
	[ "$output" = "2026-11-22T01:40:18.029Z s deny  GET x.test:80 403 up 0 down 0: no rule" ]
	[[ "$stderr" == *"a malformed line: not JSON"* ]]
	run --separate-stderr "$d/log/cordon" -v log summary --json "$d/x.log"
	[ "$status" -eq 0 ]
	[[ "$output" == *'"refused": 1'* ]]
	# Without cordon-log: what is missing, and where it was looked for;
	# cordon-main run by hand says who serves log.
	run --separate-stderr "$d/main/cordon" log tail "$d/x.log"
	[ "$status" -eq 125 ]
	[ -z "$output" ]
	[[ "$stderr" == *"cannot run cordon-log ($d/main/cordon-log,"* ]]
	[[ "$stderr" == *"hint: install cordon-log with cordon"* ]]
	run --separate-stderr "$d/main/cordon-main" log tail "$d/x.log"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"log is served by cordon-log"* ]]
	# jansson is in it (linked from its archive, or shared with
	# LINK=shared); OpenSSL, libseccomp and libevent are in neither way.
	nm "$log" >"$BATS_TEST_TMPDIR/log.syms" 2>/dev/null || true
	nm -D "$log" >>"$BATS_TEST_TMPDIR/log.syms"
	grep -q ' json_loads$' "$BATS_TEST_TMPDIR/log.syms"
	run grep -E ' (SSL_CTX_new|EVP_DigestInit|seccomp_init|event_base_new)$' \
	    "$BATS_TEST_TMPDIR/log.syms"
	[ "$status" -eq 1 ]
	run ldd "$log"
	[[ "$output" != *libssl* && "$output" != *libcrypto* &&
	    "$output" != *libseccomp* && "$output" != *libevent* ]]
	# One shared library fewer for cordon-main's loader at each start.
	run ldd "$(cordon_main)"
	[ "$status" -eq 0 ]
	[[ "$output" == *libc.so* && "$output" != *libz.so* ]]
}

@test "rotation: rename, SIGHUP, new lines in a new file; logrotate with the shipped file" {
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32 \
	    --pid-file "$BATS_TEST_TMPDIR/proxy.pid"
	# Written once every listener is up: a moment after the first.
	wait_for test -s "$BATS_TEST_TMPDIR/proxy.pid"
	[ "$(cat "$BATS_TEST_TMPDIR/proxy.pid")" = "$PROXY_PID" ]
	[ "$(get http://one.test/)" = 403 ]
	log_lines 1
	mv "$LOG" "$LOG.1"
	[ "$(get http://two.test/)" = 403 ]	# written to the moved file
	kill -HUP "$PROXY_PID"
	for i in $(seq 100); do [ -e "$LOG" ] && break; sleep 0.05; done
	[ -e "$LOG" ]
	[ "$(stat -c %a "$LOG")" = 640 ]
	[ "$(get http://three.test/)" = 403 ]
	log_lines 1
	[ "$(jq -r 'select(.event != "open") | .host' "$LOG.1" | tr '\n' ' ')" = "one.test two.test " ]
	[ "$(jq -r 'select(.event != "open") | .host' "$LOG")" = three.test ]
	[ "$(metric 'cordon_policy_reloads_total{result="ok"}')" = 1 ]

	# logrotate itself, with contrib/logrotate/cordon for this log and
	# this proxy, found by its --pid-file as the shipped postrotate
	# does (no systemd needed).
	command -v logrotate >/dev/null || skip "logrotate is not installed"
	sed -e "s|/var/log/cordon/egress.log|$LOG|" \
	    -e "s|/run/cordon/proxy.pid|$BATS_TEST_TMPDIR/proxy.pid|" \
	    "$BATS_TEST_DIRNAME/../../contrib/logrotate/cordon" \
	    >"$BATS_TEST_TMPDIR/logrotate.conf"
	grep -qF "kill -HUP \"\$(cat $BATS_TEST_TMPDIR/proxy.pid)\"" \
	    "$BATS_TEST_TMPDIR/logrotate.conf"
	cat "$BATS_TEST_TMPDIR/logrotate.conf"
	rm -f "$LOG.1"
	logrotate -f -s "$BATS_TEST_TMPDIR/state" "$BATS_TEST_TMPDIR/logrotate.conf"
	[ -e "$LOG.1" ]
	for i in $(seq 100); do [ -e "$LOG" ] && break; sleep 0.05; done
	[ "$(get http://four.test/)" = 403 ]
	log_lines 1
	[ "$(jq -r 'select(.event != "open") | .host' "$LOG.1")" = three.test ]
	[ "$(jq -r 'select(.event != "open") | .host' "$LOG")" = four.test ]
	# The next rotation compresses the one before (delaycompress).
	logrotate -f -s "$BATS_TEST_TMPDIR/state" "$BATS_TEST_TMPDIR/logrotate.conf"
	[ -e "$LOG.2.gz" ]
	[ "$(get http://five.test/)" = 403 ]
	log_lines 1
	run "$CORDON" log summary "$LOG"*
	echo "$output"
	[[ "$output" == *"3 line(s), 3 host(s), 0 malformed"* ]]
	[ "$(metric 'cordon_policy_reloads_total{result="ok"}')" = 3 ]
}

@test "metrics: scraped with curl; counts follow the log; loopback only" {
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-domain "127.0.0.1:$ECHO" \
	    --allow-domain nx.test --allow-cidr 127.0.0.1/32 \
	    --dns "127.0.0.1:$(free_port)"
	run curl -sS -D "$BATS_TEST_TMPDIR/h" "http://127.0.0.1:$METRICS/metrics"
	[ "$status" -eq 0 ]
	grep -qi '^Content-Type: text/plain; version=0.0.4' "$BATS_TEST_TMPDIR/h"
	[[ "$output" == *"# TYPE cordon_connections_total counter"* ]]
	[ "$(metric cordon_active_connections)" = 0 ]
	[ "$(get "http://127.0.0.1:$UP/bytes/1000")" = 200 ]
	[ "$(get "http://127.0.0.1:$UP/bytes/234")" = 200 ]
	[ "$(get http://evil.test/)" = 403 ]
	[ "$(get http://nx.test/)" = 502 ]	# no DNS server there
	run curl -sS -x "socks5h://127.0.0.1:$PROXY" http://evil.test/
	[ "$status" -ne 0 ]
	log_lines 5
	[ "$(metric 'cordon_connections_total{decision="allow",protocol="http"}')" = 3 ]
	[ "$(metric 'cordon_connections_total{decision="deny",protocol="http"}')" = 1 ]
	[ "$(metric 'cordon_connections_total{decision="deny",protocol="socks5"}')" = 1 ]
	[ "$(metric 'cordon_bytes_total{direction="down"}')" = 1234 ]
	[ "$(metric cordon_dns_failures_total)" = 1 ]
	[ "$(metric cordon_failures_total)" = 1 ]
	[ "$(metric cordon_accepted_total)" = 5 ]
	# Open tunnels are active connections; their bytes count as they end.
	rm -f "$BATS_TEST_TMPDIR/release"
	start_bg hold "$NETCHECK" tunnels "tcp:127.0.0.1:$PROXY" \
	    --target "127.0.0.1:$ECHO" --conns 3 --mode hold \
	    --then "$BATS_TEST_TMPDIR/release"
	HOLD=$BG_PID
	for i in $(seq 100); do
		grep -q '^open' "$BATS_TEST_TMPDIR/hold.log" && break
		sleep 0.05
	done
	[ "$(metric cordon_active_connections)" = 3 ]
	touch "$BATS_TEST_TMPDIR/release"
	wait "$HOLD"
	log_lines 8
	[ "$(metric cordon_active_connections)" = 0 ]
	[ "$(metric 'cordon_connections_total{decision="allow",protocol="connect"}')" = 3 ]
	# A failed reload is counted, and the policy in force stays.
	[ "$(metric 'cordon_policy_reloads_total{result="failed"}')" = 0 ]
	# Anything but GET /metrics.
	[ "$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$METRICS/")" = 404 ]
	[ "$(curl -sS -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$METRICS/metrics")" != 200 ]

	run "$CORDON" proxy --listen "tcp:127.0.0.1:$(free_port)" \
	    --metrics "tcp:0.0.0.0:$(free_port)"
	[ "$status" -eq 1 ]
	[[ "$output" == *"refusing to serve metrics on tcp:0.0.0.0:"* ]]
	[[ "$output" == *"hint: "* ]]
}

# Waits until the origin's head log holds $2 lines matching $1.
origin_heads() {
	local i
	for i in $(seq 200); do
		[ "$(grep -c "$1" "$BATS_TEST_TMPDIR/origin.heads")" = "$2" ] &&
		    return 0
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/origin.heads"
	return 1
}

@test "kill -9 of the proxy mid-request: each exchange that reached the origin has its open line" {
	UP2=$(free_port)
	start_bg origin "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP2" \
	    --log "$BATS_TEST_TMPDIR/origin.heads"
	wait_listen "tcp:127.0.0.1:$UP2"
	start_proxy --workers 1 --allow-domain "127.0.0.1:$UP2" \
	    --allow-cidr 127.0.0.1/32
	# The origin holds its answers: a request and a tunnel in flight.
	start_bg get curl -sS -x "http://127.0.0.1:$PROXY" \
	    "http://127.0.0.1:$UP2/slow/30000"
	start_bg tunnel curl -sS -p -x "http://127.0.0.1:$PROXY" \
	    "http://127.0.0.1:$UP2/slow/30001"
	origin_heads '/slow/3000[01]' 2
	# Killed as OOM or a crash would: nothing of its own runs after.
	kill -9 "$PROXY_PID"
	wait "$PROXY_PID" || true
	cat "$LOG"
	run jq -r '"\(.event) \(.protocol) \(.path) \(.address) \(.decision) \(.rule) \(.status)"' "$LOG"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ " ${lines[*]} " == *" open http /slow/30000 127.0.0.1 allow 127.0.0.1:$UP2 0 "* ]]
	[[ " ${lines[*]} " == *" open connect null 127.0.0.1 allow 127.0.0.1:$UP2 0 "* ]]
	[ "$(jq -r .id "$LOG" | grep -c '^[0-9a-f]\{16\}-[0-9]\+$')" = 2 ]
	[ "$(jq -r .id "$LOG" | sort -u | wc -l)" = 2 ]
	# The summary counts them, allowed and unended, once each.
	run "$CORDON" log summary "$LOG"
	echo "$output"
	[[ "${lines[0]}" == *ALLOWED*REFUSED*FAILED*UNENDED* ]]
	[[ "$output" == *"2 line(s), 1 host(s), 0 malformed, 2 unended (in flight, or the proxy was killed)"* ]]
	run "$CORDON" log summary --json "$LOG"
	[ "$(jq -r '"\(.unended) \(.hosts[0].allowed) \(.hosts[0].unended) \(.hosts[0].refused)"' <<<"$output")" = "2 2 2 0" ]
	run "$CORDON" log tail "$LOG"
	echo "$output"
	[[ "${lines[0]}" == *" - open  GET 127.0.0.1:$UP2" ]] ||
	    [[ "${lines[0]}" == *" - open  CONNECT 127.0.0.1:$UP2" ]]
}

@test "open and end: an exchange's two lines share an id; a refusal has one line; summary counts each once" {
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	[ "$(get "http://127.0.0.1:$UP/bytes/100")" = 200 ]
	[ "$(get http://evil.test/)" = 403 ]
	log_lines 2
	run jq -r '"\(.event) \(.decision) \(.status) \(.bytes_down) \(.id != null)"' "$LOG"
	[ "${lines[0]}" = "open allow 0 0 true" ]
	[ "${lines[1]}" = "end allow 200 100 true" ]
	[ "${lines[2]}" = "end deny 403 0 false" ]
	[ "$(jq -r 'select(.decision == "allow") | .id' "$LOG" | sort -u | wc -l)" = 1 ]
	# Read in either order (a rotated file after the live one): the same.
	head -n 1 "$LOG" >"$LOG.open"
	tail -n +2 "$LOG" >"$LOG.rest"
	run "$CORDON" log summary --json "$LOG.rest" "$LOG.open"
	[ "$(jq -c '[.unended, (.hosts[] | [.host, .allowed, .refused, .unended, .bytes_down])]' <<<"$output")" = \
	    '[0,["evil.test",0,1,0,0],["127.0.0.1",1,0,0,100]]' ]
	run "$CORDON" log summary "$LOG"
	[[ "$output" == *"3 line(s), 2 host(s), 0 malformed"* ]]
	[[ "$output" != *unended* ]]
}

# Starts the proxy with flags, its log on a tmpfs of 64 KiB mounted in a
# mount namespace of its own (the machine's disks are not touched);
# in_logfs runs a command in that namespace.
start_proxy_logfs() {
	local unshare=(unshare -m --propagation private)
	[ "$(id -u)" -eq 0 ] || unshare=(unshare -r -m --propagation private)
	LOGFS="$BATS_TEST_TMPDIR/logfs"
	mkdir -p "$LOGFS"
	PROXY=$(free_port)
	METRICS=$(free_port)
	start_bg proxy "${unshare[@]}" sh -c 'mount -t tmpfs -o size=64k \
	    cordon-log "$1" && shift && exec "$@"' sh "$LOGFS" \
	    "$CORDON" proxy --listen "tcp:127.0.0.1:$PROXY" \
	    --metrics "tcp:127.0.0.1:$METRICS" --log "$LOGFS/egress.log" "$@"
	PROXY_PID=$BG_PID
	wait_listen "tcp:127.0.0.1:$PROXY"
	wait_listen "tcp:127.0.0.1:$METRICS"
}

# Unprivileged, into the user namespace too, keeping our ids: that
# namespace denies setgroups(2), which nsenter would call otherwise.
in_logfs() {
	nsenter -t "$PROXY_PID" -m \
	    ${LOGFS_USERNS:+-U --preserve-credentials} -- "$@"
}

@test "full disk: the log's ENOSPC refuses new requests with 503, then service resumes by itself" {
	[ "$(id -u)" -eq 0 ] || LOGFS_USERNS=1
	UP2=$(free_port)
	start_bg origin "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP2" \
	    --log "$BATS_TEST_TMPDIR/origin.heads"
	wait_listen "tcp:127.0.0.1:$UP2"
	# A failed log is each worker's: one worker, so that the first
	# request past the full disk is the one refused.
	start_proxy_logfs --workers 1 --allow-domain "127.0.0.1:$UP2" \
	    --allow-cidr 127.0.0.1/32
	[ "$(get "http://127.0.0.1:$UP2/bytes/1")" = 200 ]
	in_logfs grep -q '"path":"/bytes/1"' "$LOGFS/egress.log"
	# The disk fills up.
	in_logfs sh -c 'cat /dev/zero >"$1/fill"' sh "$LOGFS" 2>/dev/null ||
	    true
	# Lines may still fit in the log's last page.  An exchange goes out
	# only once its open line is written: each one answered 200 has a
	# line in the file already.  The first whose open line does not fit
	# is refused, and never reached the origin; or its open line fit and
	# its end did not, and that end is held back.
	for i in $(seq 2 60); do
		code=$(get "http://127.0.0.1:$UP2/bytes/$i")
		[ "$code" = 200 ] || break
		in_logfs grep -q '"path":"/bytes/'"$i"'"' "$LOGFS/egress.log"
		[ "$(metric cordon_log_lines_held)" = 0 ] || break
	done
	inflight=$i
	[ "$code" = 200 ] || [ "$code" = 503 ]
	if [ "$code" = 503 ]; then
		run grep -c "GET /bytes/$i " "$BATS_TEST_TMPDIR/origin.heads"
		[ "$output" = 0 ]
	fi
	# Its end, and the rest of an open line a full page cut short.
	held=$(metric cordon_log_lines_held)
	[ "$held" = 1 ] || [ "$held" = 2 ]
	[ "$(metric cordon_log_write_failed)" = 1 ]
	# Nothing new goes out: refused, saying why, in each protocol.
	run curl -sS -D "$BATS_TEST_TMPDIR/h" -x "http://127.0.0.1:$PROXY" \
	    "http://127.0.0.1:$UP2/bytes/999"
	[[ "$output" == *"cordon: the egress log cannot be written (No space left on device)"* ]]
	[[ "$output" == *"hint: free space where the egress log is written"* ]]
	grep -q '^HTTP/1.1 503 Service Unavailable' "$BATS_TEST_TMPDIR/h"
	grep -q '^X-Cordon-Decision: the egress log cannot be written' \
	    "$BATS_TEST_TMPDIR/h"
	run curl -sS -x "http://127.0.0.1:$PROXY" -p \
	    "http://127.0.0.1:$UP2/bytes/998"
	[ "$status" -ne 0 ]
	[[ "$output" == *"503"* ]]
	run curl -sS -x "socks5h://127.0.0.1:$PROXY" \
	    "http://127.0.0.1:$UP2/bytes/997"
	[ "$status" -ne 0 ]
	run grep -c '/bytes/99[789]' "$BATS_TEST_TMPDIR/origin.heads"
	[ "$output" = 0 ]
	refused=3
	[ "$code" = 200 ] || refused=4
	[ "$(metric cordon_log_refused_total)" = "$refused" ]
	[ "$(metric cordon_log_lines_held)" = $((held + 3)) ]
	# Said once each on standard error, not per connection.
	run grep -c 'egress log: write failed: No space left on device' \
	    "$BATS_TEST_TMPDIR/proxy.log"
	[ "$output" = 1 ] || { cat "$BATS_TEST_TMPDIR/proxy.log"; false; }
	run grep -c 'refusing new requests until it can' \
	    "$BATS_TEST_TMPDIR/proxy.log"
	[ "$output" = 1 ] || { cat "$BATS_TEST_TMPDIR/proxy.log"; false; }
	# Space is freed: the next request goes through, no SIGHUP, and the
	# held lines are written first, in order.
	in_logfs rm "$LOGFS/fill"
	[ "$(get "http://127.0.0.1:$UP2/bytes/1000")" = 200 ]
	[ "$(metric cordon_log_write_failed)" = 0 ]
	[ "$(metric cordon_log_lines_held)" = 0 ]
	[ "$(metric cordon_log_lines_lost_total)" = 0 ]
	grep -q "can be written again; $((held + 3)) line(s) held back were written" \
	    "$BATS_TEST_TMPDIR/proxy.log"
	run in_logfs jq -r 'select(.event == "end") | "\(.path // .host) \(.status)"' \
	    "$LOGFS/egress.log"
	[ "$status" -eq 0 ]
	n=${#lines[@]}
	[ "${lines[n - 5]}" = "/bytes/$inflight $code" ]
	[ "${lines[n - 4]}" = "/bytes/999 503" ]
	[ "${lines[n - 3]}" = "127.0.0.1 503" ]
	[ "${lines[n - 2]}" = "127.0.0.1 1" ]
	[ "${lines[n - 1]}" = "/bytes/1000 200" ]
}

@test "reload: SIGHUP during 1,000 open tunnels drops none" {
	POLICY="$BATS_TEST_TMPDIR/proxy.json"
	printf '{"version":1,"network":{"allow":["127.0.0.1:%s"],"allow_cidrs":["127.0.0.1/32"]}}\n' \
	    "$ECHO" >"$POLICY"
	start_proxy --policy "$POLICY"
	rm -f "$BATS_TEST_TMPDIR/release"
	start_bg hold "$NETCHECK" tunnels "tcp:127.0.0.1:$PROXY" \
	    --target "127.0.0.1:$ECHO" --conns 1000 --mode hold \
	    --then "$BATS_TEST_TMPDIR/release"
	HOLD=$BG_PID
	for i in $(seq 600); do
		grep -q '^open' "$BATS_TEST_TMPDIR/hold.log" && break
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/hold.log"
	grep -q '^open 1000 failed 0 ' "$BATS_TEST_TMPDIR/hold.log"
	[ "$(metric cordon_active_connections)" = 1000 ]
	# Reloads: the same policy, a broken one (kept out), then one that
	# no longer allows the target: open tunnels were decided already.
	hup 1
	echo '{"version":1,"network":{"allow":[' >"$POLICY.new"
	mv "$POLICY.new" "$POLICY"
	hup 2
	printf '{"version":1,"network":{"allow":["other.test"]}}\n' >"$POLICY"
	hup 3
	[ "$(metric 'cordon_policy_reloads_total{result="ok"}')" = 2 ]
	[ "$(metric 'cordon_policy_reloads_total{result="failed"}')" = 1 ]
	[ "$(metric cordon_active_connections)" = 1000 ]
	# A new tunnel is decided by the new policy.
	run "$NETCHECK" tunnels "tcp:127.0.0.1:$PROXY" --target "127.0.0.1:$ECHO" \
	    --conns 1 --mode cycle
	[ "$status" -ne 0 ]
	# Every one of the 1,000 still carries bytes both ways.
	touch "$BATS_TEST_TMPDIR/release"
	wait "$HOLD"
	cat "$BATS_TEST_TMPDIR/hold.log"
	grep -q '^alive 1000 dead 0 ' "$BATS_TEST_TMPDIR/hold.log"
	log_lines 1001
	[ "$(jq -r 'select(.event != "open") | select(.port == '"$ECHO"' and .decision == "allow" and .status == 200) | .host' "$LOG" | wc -l)" -eq 1000 ]
	kill -0 "$PROXY_PID"
}

@test "socket: --socket-group and --socket-mode give a group the Unix socket" {
	SDIR=$(mktemp -d)
	chmod 755 "$SDIR"
	SOCK="$SDIR/proxy.sock"
	group=$(id -gn)
	if [ "$(id -u)" -eq 0 ]; then
		ensure_test_user
		group=$(id -gn "$TEST_USER")
	fi
	start_bg proxy "$CORDON" proxy --listen "unix:$SOCK" \
	    --socket-group "$group" --log "$LOG" \
	    --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	wait_listen "unix:$SOCK"
	[ "$(stat -c '%a %G' "$SOCK")" = "660 $group" ]
	req() {
		curl -sS -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" \
		    --request-target "http://127.0.0.1:$UP/" "http://127.0.0.1:$UP/"
	}
	[ "$(req)" = 200 ]
	if [ "$(id -u)" -eq 0 ]; then
		# A member of the group may connect; anyone else may not.
		run setpriv --reuid="$TEST_USER" --regid="$TEST_USER" \
		    --init-groups bash -c "$(declare -f req); SOCK=$SOCK UP=$UP req"
		[ "$output" = 200 ]
		run setpriv --reuid=nobody --regid=nogroup --clear-groups \
		    bash -c "$(declare -f req); SOCK=$SOCK UP=$UP req"
		[ "$status" -eq 7 ]	# could not connect: EACCES
	fi
	run "$CORDON" proxy --listen "unix:$SDIR/w.sock" --socket-mode 0666
	[ "$status" -eq 2 ]
	[[ "$output" == *"lets every user on this host use the proxy"* ]]
	[[ "$output" == *"hint: give a group access with --socket-group"* ]]
	run "$CORDON" proxy --listen "unix:$SDIR/w.sock" \
	    --socket-group no-such-group-here
	[ "$status" -eq 2 ]
	run "$CORDON" proxy --socket-mode 999
	[ "$status" -eq 2 ]
	teardown_bg
	rm -rf "$SDIR"
}

@test "socket: two users share a sandbox listener; each line carries the uid, an id forged by another user is theirs" {
	[ "$(id -u)" -eq 0 ] || skip "two users: needs root"
	sandbox_setup
	tuid=$(id -u "$TEST_USER")
	sock="$UDIR/proxy.sock"
	TSB=$(free_port)
	start_bg proxy "$UCORDON" proxy --listen-sandbox "unix:$sock" \
	    --listen-sandbox "tcp:127.0.0.1:$TSB" --log "$LOG" \
	    --resolve up.test:127.0.0.1 --resolve two.test:127.0.0.1 \
	    --allow-cidr 127.0.0.1/32 --allow-domain "up.test:$UP" \
	    --allow-domain "two.test:$UP"
	wait_listen "unix:$sock"
	wait_listen "tcp:127.0.0.1:$TSB"
	chmod 666 "$sock"
	# TCP gives no peer credentials, and the proxy says so at start.
	grep -q "tcp:127.0.0.1:$TSB: TCP carries no peer credentials" \
	    "$BATS_TEST_TMPDIR/proxy.log"
	# A (root) narrows its own run: two.test refused.
	run in_sandbox_as_me --quiet --proxy-socket "$sock" \
	    --deny-domain two.test -- sh -c "
	    curl -s -o /dev/null -w '%{http_code} ' http://up.test:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://two.test:$UP/"
	[ "$output" = "200 403" ]
	log_lines 2
	aid=$(jq -r 'select(.event != "open") | .sandbox' "$LOG" | sort -u)
	[ "$(printf '%s\n' "$aid" | wc -l)" -eq 1 ]
	[ "$aid" != null ]
	# B (the test user) runs through the same proxy...
	run in_sandbox --quiet --proxy-socket "$sock" -- \
	    curl -s -o /dev/null -w '%{http_code}' "http://up.test:$UP/"
	[ "$output" = 200 ]
	# ...then names A's id in a header of its own (cordon bridge
	# --proxy-id writes it): it is not decided by A's rules.
	F=$(free_port)
	start_bg forged as_user "$UDIR/home" "$UCORDON" bridge \
	    --listen "tcp:127.0.0.1:$F" --connect "unix:$sock" --proxy-id "$aid"
	wait_listen "tcp:127.0.0.1:$F"
	run curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$F" \
	    "http://two.test:$UP/"
	[ "$output" = 200 ]
	log_lines 4
	# On TCP the same header has no uid to scope it.
	T=$(free_port)
	start_bg tcpb as_user "$UDIR/home" "$UCORDON" bridge \
	    --listen "tcp:127.0.0.1:$T" --connect "tcp:127.0.0.1:$TSB" \
	    --proxy-id "$aid"
	wait_listen "tcp:127.0.0.1:$T"
	run curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$T" \
	    "http://up.test:$UP/"
	[ "$output" = 200 ]
	log_lines 5
	cat "$LOG"
	# Every line of the Unix socket carries its user's uid, the TCP one
	# null.
	[ "$(jq -r 'select(.event != "open") | .uid' "$LOG" | sort | tr '\n' ' ')" = \
	    "$(printf '%s\n' 0 0 "$tuid" "$tuid" null | sort | tr '\n' ' ')" ]
	# A's lines, by (uid, id): its own two, the forged one not among them.
	[ "$(jq -r --arg s "$aid" 'select(.event != "open") | select(.sandbox == $s and .uid == 0) |
	    "\(.host) \(.decision)"' "$LOG" | sort | tr '\n' ' ')" = \
	    "two.test deny up.test allow " ]
	# The forged line: A's id, B's uid, the operator's rule.
	[ "$(jq -r --arg s "$aid" --argjson u "$tuid" 'select(.event != "open") | select(.sandbox == $s and
	    .uid == $u) | "\(.host) \(.decision) \(.rule_from)"' "$LOG")" = \
	    "two.test allow --allow-domain" ]
	# B's own run: B's uid, an id of its own.
	[ "$(jq -r --argjson u "$tuid" 'select(.event != "open") | select(.uid == $u) | .sandbox' "$LOG" |
	    sort -u | grep -vcx "$aid")" -eq 1 ]
}

@test "make install: DESTDIR and PREFIX respected; the unit is hardened and verifies" {
	ROOT="$BATS_TEST_TMPDIR/root"
	cd "$BATS_TEST_DIRNAME/../.."
	run make_install DESTDIR="$ROOT" PREFIX=/usr
	echo "$output"
	[ "$status" -eq 0 ]
	[ -x "$ROOT/usr/bin/cordon" ]
	[ -f "$ROOT/usr/share/man/man1/cordon.1" ]
	[ -f "$ROOT/etc/logrotate.d/cordon" ]
	unit="$ROOT/usr/lib/systemd/system/cordon-proxy.service"
	[ -f "$unit" ]
	grep -q '^ExecStart=/usr/bin/cordon proxy' "$unit"
	run ! grep -q '@[A-Z]*@' "$unit"
	for d in 'ProtectSystem=strict' 'NoNewPrivileges=yes' 'PrivateTmp=yes' \
	    'ProtectHome=yes' 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' \
	    'SystemCallFilter=@system-service' 'CapabilityBoundingSet=' \
	    'DynamicUser=yes' 'RuntimeDirectory=cordon' 'LogsDirectory=cordon' \
	    'ExecReload=/bin/kill -HUP $MAINPID'; do
		grep -qxF "$d" "$unit"
	done
	# The originator's: the same hardening, bar the proxy's log and
	# reload; its key a credential only its user may read.
	unit="$ROOT/usr/lib/systemd/system/cordon-originator.service"
	grep -q '^ExecStart=/usr/bin/cordon bridge' "$unit"
	run ! grep -q '@[A-Z]*@' "$unit"
	for d in 'ProtectSystem=strict' 'NoNewPrivileges=yes' 'PrivateTmp=yes' \
	    'ProtectHome=yes' 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' \
	    'SystemCallFilter=@system-service' 'CapabilityBoundingSet=' \
	    'DynamicUser=yes' 'SupplementaryGroups=cordon-users' \
	    'MemoryDenyWriteExecute=yes' 'ProtectProc=invisible' \
	    'LoadCredential=client.key:/etc/cordon/originator/client.key' \
	    'EnvironmentFile=/etc/cordon/originator.env' \
	    'AssertPathExists=/etc/cordon/originator.env'; do
		grep -qxF "$d" "$unit"
	done
	if command -v systemd-analyze >/dev/null; then
		# Installed for real paths under the scratch root, so that
		# the binary it names exists.
		run make_install PREFIX="$ROOT/v" SYSCONFDIR="$ROOT/v/etc"
		[ "$status" -eq 0 ]
		for u in cordon-proxy cordon-originator; do
			run systemd-analyze verify --man=no \
			    "$ROOT/v/lib/systemd/system/$u.service"
			echo "$output"
			[ "$status" -eq 0 ]
		done
	fi
}

# The unit's ExecStart as `make install` wrote it, one line, with its
# paths mapped under $ROOT ($1: the runtime folder, $2: the group).
unit_command() {
	awk '/^ExecStart=/ { on = 1; sub(/^ExecStart=/, "") }
	    on { l = $0; more = sub(/\\$/, "", l); sub(/^[ \t]+/, "", l);
	    sub(/[ \t]+$/, "", l); printf "%s ", l;
	    if (!more) exit }' "$ROOT/usr/lib/systemd/system/cordon-proxy.service" |
	    sed -e "s|\${RUNTIME_DIRECTORY}|$1|g" \
	    -e "s|\${LOGS_DIRECTORY}|$BATS_TEST_TMPDIR|g" \
	    -e "s|/usr/bin/cordon|$ROOT/usr/bin/cordon|" \
	    -e "s|/etc/cordon|$ROOT/etc/cordon|g" \
	    -e "s|--socket-group cordon-users|--socket-group $2|" \
	    -e "s|tcp:127.0.0.1:9464|tcp:127.0.0.1:$METRICS|"
}

@test "make install: the installed unit's command line serves cordon run --proxy-socket; sysusers and tmpfiles make the group and /etc/cordon" {
	[ "$(id -u)" -eq 0 ] || skip "the socket's group and a second user: needs root"
	sandbox_setup
	ROOT="$BATS_TEST_TMPDIR/root"
	make_install DESTDIR="$ROOT" PREFIX=/usr
	# The documented steps, in order, on a root that has none of it.
	[ -f "$ROOT/usr/lib/sysusers.d/cordon.conf" ]
	[ -f "$ROOT/usr/lib/tmpfiles.d/cordon.conf" ]
	rmdir "$ROOT/etc/cordon"
	systemd-sysusers --root="$ROOT" cordon.conf
	grep -q '^cordon-users:' "$ROOT/etc/group"
	systemd-tmpfiles --root="$ROOT" --create cordon.conf
	[ "$(stat -c '%a %U' "$ROOT/etc/cordon")" = "755 root" ]
	printf '{"version": 1, "network": {"allow": ["127.0.0.1:%s"],
	    "allow_cidrs": ["127.0.0.1/32"]}}\n' "$UP" >"$ROOT/etc/cordon/proxy.json"
	"$ROOT/usr/bin/cordon" policy check "$ROOT/etc/cordon/proxy.json"

	RUNDIR=$(mktemp -d)
	chmod 755 "$RUNDIR"
	METRICS=$(free_port)
	cmd=$(unit_command "$RUNDIR" "$(id -gn "$TEST_USER")")
	echo "$cmd"
	[[ "$cmd" == *" proxy --listen-sandbox unix:$RUNDIR/proxy.sock "* ]]
	# shellcheck disable=SC2086
	start_bg unit $cmd
	UNIT_PID=$BG_PID
	wait_listen "unix:$RUNDIR/proxy.sock"
	# Written once every listener is up: a moment after the first.
	wait_for test -s "$RUNDIR/proxy.pid"
	[ "$(cat "$RUNDIR/proxy.pid")" = "$UNIT_PID" ]

	# A member of the socket's group runs through it; the refusals come
	# back from the operator's proxy to the run's report and summary,
	# with the operator's fix, never a flag that cannot widen it.
	run --separate-stderr in_sandbox --proxy-socket "$RUNDIR/proxy.sock" \
	    --report "$UDIR/home/r.json" -- sh -c "
	    curl -s --noproxy '' -o /dev/null -w '%{http_code} ' http://127.0.0.1:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://evil.test/"
	echo "$output"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "200 403" ]
	[[ "$stderr" == *"refused 1 connection: evil.test:80"* ]]
	[[ "$stderr" == *"to allow evil.test:80: the operator's proxy ($RUNDIR/proxy.sock) allows it by no rule"* ]]
	[[ "$stderr" != *"--allow-domain"* ]]
	jq -e '.refused | length == 1 and .[0].host == "evil.test" and
	    (.[0].fix | test("ask its operator"))' "$UDIR/home/r.json"
	jq -e --arg up "$UP" '.allowed | length == 1 and
	    .[0].host == "127.0.0.1"' "$UDIR/home/r.json"
	jq -e --argjson u "$(id -u "$TEST_USER")" 'select(.host == "evil.test") |
	    .uid == $u' "$BATS_TEST_TMPDIR/egress.log"

	# Anyone else may not connect: nothing runs, and the fix is said.
	run setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env \
	    env HOME=/nonexistent XDG_CONFIG_HOME=/nonexistent CORDON_SYSTEM_POLICY= \
	    "$UCORDON" run --workspace "$WS" --proxy-socket "$RUNDIR/proxy.sock" -- true
	echo "$output"
	[ "$status" -eq 125 ]
	[[ "$output" == *"cannot connect to the proxy socket $RUNDIR/proxy.sock: Permission denied"* ]]
	[[ "$output" == *"hint: the socket is for the group $(id -gn "$TEST_USER") (mode 0660); an administrator adds you to it with: usermod -aG $(id -gn "$TEST_USER") nobody"* ]]
	[[ "$output" == *"nothing run"* ]]
	rm -rf "$RUNDIR"
}

@test "preflight: --proxy-socket to a --listen listener, or to a stale socket, runs nothing (125) and says the fix" {
	sandbox_setup
	start_bg plain "$UCORDON" proxy --listen "unix:$UDIR/plain.sock" \
	    --log "$LOG" --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	wait_listen "unix:$UDIR/plain.sock"
	chmod 666 "$UDIR/plain.sock"
	run in_sandbox --proxy-socket "$UDIR/plain.sock" -- \
	    sh -c 'echo ran >ran'
	echo "$output"
	[ "$status" -eq 125 ]
	[ ! -e "$WS/ran" ]
	[[ "$output" == *"the proxy at $UDIR/plain.sock listens with --listen, not --listen-sandbox"* ]]
	[[ "$output" == *"hint: start the proxy with --listen-sandbox unix:$UDIR/plain.sock"* ]]
	# A socket nothing listens on any more.
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
	    "$UDIR/stale.sock"
	chmod 666 "$UDIR/stale.sock"
	run in_sandbox --proxy-socket "$UDIR/stale.sock" -- sh -c 'echo ran >ran'
	echo "$output"
	[ "$status" -eq 125 ]
	[ ! -e "$WS/ran" ]
	[[ "$output" == *"Connection refused"* ]]
	[[ "$output" == *"hint: no proxy listens there"* ]]
}

# A harness in Python on the control socket $1: every event a line in
# $2, and a file m/EVENT.N in the workspace for the Nth of each, which
# the sandboxed command waits for; each "ask" takes the next --answer
# (none: no answer), --after EVENT.N JSON sends JSON after it, and
# --file NAME JSON once the command made m/NAME.
write_pyharness() {
	cat >"$UDIR/bin/pyharness.py" <<'PY'
import json, os, select, socket, sys
path, events, marks = sys.argv[1:4]
answers, after, files, a = [], {}, {}, 4
while a < len(sys.argv):
	if sys.argv[a] == "--answer":
		answers.append(sys.argv[a + 1]); a += 2
	elif sys.argv[a] == "--file":
		files[sys.argv[a + 1]] = sys.argv[a + 2]; a += 3
	else:
		after[sys.argv[a + 1]] = sys.argv[a + 2]; a += 3
s = socket.socket(socket.AF_UNIX)
s.bind(path); s.listen(1)
c, _ = s.accept()
seen, buf, log = {}, b"", open(events, "a", buffering=1)
while True:
	for name in [f for f in files if os.path.exists(os.path.join(marks, f))]:
		c.sendall(files.pop(name).encode() + b"\n")
	if not select.select([c], [], [], 0.05)[0]:
		continue
	data = c.recv(65536)
	if not data:
		break
	buf += data
	while b"\n" in buf:
		line, buf = buf.split(b"\n", 1)
		log.write(line.decode() + "\n")
		ev = json.loads(line)
		name = ev.get("event")
		seen[name] = seen.get(name, 0) + 1
		key = "%s.%d" % (name, seen[name])
		if name == "ask" and answers:
			d = answers.pop(0)
			if d != "none":
				c.sendall(json.dumps({"answer": ev["id"],
				    "decision": d}).encode() + b"\n")
		if key in after:
			c.sendall(after[key].encode() + b"\n")
		open(os.path.join(marks, key), "w").close()
PY
}

@test "--proxy-socket: --ask and live allow/deny change the run's narrowing in the operator's proxy, for its sandbox alone, never past the operator's policy" {
	sandbox_setup
	write_pyharness
	sock="$UDIR/proxy.sock"
	start_bg proxy "$UCORDON" proxy --listen-sandbox "unix:$sock" \
	    --log "$LOG" --resolve up.test:127.0.0.1 \
	    --resolve two.test:127.0.0.1 --resolve evil.test:127.0.0.1 \
	    --allow-cidr 127.0.0.1/32 --allow-domain "up.test:$UP" \
	    --allow-domain "two.test:$UP" --deny-domain evil.test
	wait_listen "unix:$sock"
	chmod 666 "$sock"
	mkdir -p "$WS/m"
	chmod 777 "$WS/m"
	CTL="$UDIR/ctl.sock"
	EVENTS="$UDIR/events.log"
	# The run narrows the operator's policy to up.test; two.test, which
	# the operator allows, is asked about; evil.test is the operator's.
	start_bg harness as_user "$UDIR/home" python3 "$UDIR/bin/pyharness.py" \
	    "$CTL" "$EVENTS" "$WS/m" --answer none --answer deny \
	    --answer allow-once --answer allow-run \
	    --file go "{\"deny\": \"two.test:$UP\"}" \
	    --after refused.3 '{"allow": "evil.test"}' \
	    --after error.1 "{\"allow\": \"two.test:$UP\"}"
	wait_listen "unix:$CTL"
	# A second sandbox of the same user through the same proxy, with the
	# same narrowing and no harness: what A's harness allows is not B's.
	start_bg b as_user "$UDIR/home" sh -c "cd '$WS' && exec '$UCORDON' run \
	    --quiet --read-only '$UDIR/bin' --proxy-socket '$sock' \
	    --allow-domain 'up.test:$UP' -- sh -c '
	    for i in \$(seq 200); do [ -e m/applied.1 ] && break; sleep 0.05; done
	    curl -s -o /dev/null -w \"%{http_code} \" http://two.test:$UP/
	    curl -s -o /dev/null -w \"%{http_code}\" http://up.test:$UP/'"
	B=$BG_PID
	run --separate-stderr in_sandbox --quiet --proxy-socket "$sock" \
	    --allow-domain "up.test:$UP" --control "$CTL" --ask \
	    --ask-secs 1 -- sh -c "
	    w() { for i in \$(seq 200); do [ -e m/\$1 ] && return; sleep 0.05; done; echo \"no \$1\"; }
	    c() { curl -s -o /dev/null -w '%{http_code} ' http://\$1:$UP/; }
	    n() { curl -s -o /dev/null -w '%{http_code} ' --noproxy '*' http://\$1:$UP/; }
	    c two.test; c two.test; n two.test; c two.test
	    w applied.1; c two.test; : >m/go
	    w applied.2; c two.test
	    w applied.3; c two.test; c evil.test"
	echo "$output"
	echo "$stderr"
	cat "$EVENTS"
	[ "$status" -eq 0 ]
	# no answer in time, deny, allow-once (the capture's: curl told to
	# ignore the proxy variables; its name resolves, since the run asks),
	# allow-run; the run's rule holds; the live deny; the allow back;
	# the operator's deny.
	[ "$output" = "403 403 200 200 200 403 200 403 " ]
	[ "$(grep -c '"event":"ask"' "$EVENTS")" -eq 4 ]
	grep -q '"event":"ask","id":"a[0-9]*","host":"two.test","port":'"$UP" "$EVENTS"
	grep -q '"event":"ask","id":"a[0-9]*","host":"two.test","port":'"$UP"',"protocol":"capture"' "$EVENTS"
	grep -q '"event":"applied","allow":"two.test:'"$UP"'"' "$EVENTS"
	grep -q '"event":"applied","deny":"two.test:'"$UP"'"' "$EVENTS"
	# The allow past the operator's policy: refused, the operator's rule
	# named, and who alone can allow it.
	grep '"event":"error"' "$EVENTS" | grep -q \
	    'evil.test.*network.deny \\"evil.test\\" (from --deny-domain).*only its operator can allow it'
	[ "$(grep -c '"event":"error"' "$EVENTS")" -eq 1 ]
	wait "$B" || true
	cat "$BATS_TEST_TMPDIR/b.log"
	[ "$(cat "$BATS_TEST_TMPDIR/b.log")" = "403 200" ]
	# The log: B's two.test refused by its own narrowing, A's allowed
	# by its harness.
	aid=$(jq -r 'select(.event == "start") | .sandbox' "$EVENTS")
	[ "$(jq -r --arg a "$aid" 'select(.event != "open") | select(.host == "two.test" and
	    .sandbox == $a) | .decision' "$LOG" | sort | uniq -c |
	    awk '{ printf "%s %s ", $1, $2 }')" = "4 allow 3 deny " ]
	[ "$(jq -r --arg a "$aid" 'select(.event != "open") | select(.host == "two.test" and
	    .sandbox != $a) | .decision' "$LOG")" = deny ]
}

@test "--proxy-socket: a malformed line on a run's channel closes it, logged, and refuses the connection it held" {
	sandbox_setup
	sock="$UDIR/proxy.sock"
	start_bg proxy "$UCORDON" proxy --listen-sandbox "unix:$sock" \
	    --log "$LOG" --resolve two.test:127.0.0.1 \
	    --allow-cidr 127.0.0.1/32 --allow-domain "two.test:$UP"
	wait_listen "unix:$sock"
	chmod 666 "$sock"
	# A run of its own words: its channel asks; a connection of its id
	# that its rules narrow is held; then a line no run sends.
	cat >"$UDIR/bin/badrun.py" <<'PY'
import json, socket, struct, sys, time
path, port = sys.argv[1], sys.argv[2]
def header(tlvs):
	body = b"".join(bytes([t]) + struct.pack(">H", len(v)) + v for t, v in tlvs)
	return b"\r\n\r\n\x00\r\nQUIT\n" + b"\x21\x00" + struct.pack(">H", len(body)) + body
ch = socket.socket(socket.AF_UNIX); ch.connect(path)
ch.sendall(header([(0x05, b"badrun"), (0xe4, b"1")]) + b'{"ask": 30}\n')
f = ch.makefile("rb")
print(f.readline().decode().strip(), f.readline().decode().strip())
narrow = json.dumps({"version": 1, "network": {"allow": ["up.test"]}}).encode()
c = socket.socket(socket.AF_UNIX); c.connect(path)
c.sendall(header([(0x05, b"badrun"), (0xe0, narrow)]) +
    b"GET http://two.test:%s/ HTTP/1.1\r\nHost: two.test\r\n\r\n" % port.encode())
print(f.readline().decode().strip())
t = time.time()
ch.sendall(b'{"allow": "two.test", "n": 1, "sandbox": "other"}\n')
print(f.readline().decode().strip())
print(c.recv(4096).split(b"\r\n")[0].decode(), "after %d s" % (time.time() - t))
PY
	run as_user "$UDIR/home" timeout 20 python3 "$UDIR/bin/badrun.py" "$sock" "$UP"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 'cordon-proxy watch 1 {"event":"asking","secs":30}' ]
	[[ "${lines[1]}" == '{"event":"ask","id":"p1","host":"two.test","port":'"$UP"* ]]
	[[ "${lines[2]}" == '{"event":"closed","reason":"{\"allow\": P, \"n\": N} has those two keys'* ]]
	# Refused at once, not after the 30 s it was held for.
	[ "${lines[3]}" = "HTTP/1.1 403 Forbidden after 0 s" ]
	grep -q 'the run channel of sandbox badrun (uid [0-9]*): {"allow": P, "n": N} has those two keys.*; closed' \
	    "$BATS_TEST_TMPDIR/proxy.log"
	[ "$(jq -r 'select(.event != "open") | select(.host == "two.test") | .decision' "$LOG")" = deny ]
}

# The operator's proxy on $sock, its pid in P: up.test:$UP allowed, and
# the test's own flags in PSOCK_ARGS; N names its log.
psock() {
	start_bg "proxy$1" "$UCORDON" proxy --listen-sandbox "unix:$sock" \
	    --log "$LOG" --resolve up.test:127.0.0.1 --allow-cidr 127.0.0.1/32 \
	    --allow-domain "up.test:$UP" "${PSOCK_ARGS[@]}"
	P=$BG_PID
	wait_listen "unix:$sock"
	chmod 666 "$sock"
}

# The run (start_bg run) has made m/first: the operator's proxy ($P) is
# killed, started again by psock N when N is given, and the
# run's end ("exit STATUS" in run.log) is waited for.
proxy_lost_mid_run() {
	for i in $(seq 300); do [ -e "$WS/m/first" ] && break; sleep 0.05; done
	[ -e "$WS/m/first" ] || return 1
	kill "$P"
	wait "$P" || true
	[ -z "${1:-}" ] || psock "$1"
	for i in $(seq 400); do
		grep -q '^exit ' "$BATS_TEST_TMPDIR/run.log" && break
		sleep 0.05
	done
}

@test "--proxy-socket: the operator's proxy restarted mid-run: the run reopens its channel and replays its live deny on the new proxy, the harness hears the channel lost and restored; a connection of a run with a harness and no channel open is refused, logged" {
	sandbox_setup
	write_pyharness
	sock="$UDIR/proxy.sock"
	PSOCK_ARGS=(--resolve two.test:127.0.0.1 --allow-domain "two.test:$UP")
	psock 1
	mkdir -p "$WS/m"
	chmod 777 "$WS/m"
	CTL="$UDIR/ctl.sock"
	EVENTS="$UDIR/events.log"
	start_bg harness as_user "$UDIR/home" python3 "$UDIR/bin/pyharness.py" \
	    "$CTL" "$EVENTS" "$WS/m" --file go "{\"deny\": \"up.test:$UP\"}"
	wait_listen "unix:$CTL"
	start_bg run as_user "$UDIR/home" sh -c "cd '$WS' && '$UCORDON' run \
	    --read-only '$UDIR/bin' --proxy-socket '$sock' --control '$CTL' \
	    --report '$WS/r.json' -- sh -c '
	    w() { for i in \$(seq 300); do [ -e m/\$1 ] && return; sleep 0.05; done; echo \"no \$1\"; }
	    c() { curl -s -o /dev/null -w \"%{http_code} \" http://\$1:$UP/; }
	    c up.test; : >m/go; w applied.1; c up.test; c two.test; echo
	    : >m/first; w channel.2; c up.test; c two.test; echo
	    ' 2>'$UDIR/run.err'; echo \"exit \$?\""
	proxy_lost_mid_run 2
	cat "$BATS_TEST_TMPDIR/run.log" "$UDIR/run.err" "$EVENTS"
	[ "$(cat "$BATS_TEST_TMPDIR/run.log")" = \
	    "$(printf '200 403 200 \n403 200 \nexit 0')" ]
	[ "$(jq -r 'select(.event == "channel") | .state' "$EVENTS" |
	    tr '\n' ' ')" = "lost restored " ]
	[ "$(grep -c '"event":"applied"' "$EVENTS")" -eq 1 ]
	# The new proxy refused up.test by the replayed rule; the report
	# counts both refusals.
	[ "$(jq -r 'select(.event != "open") | select(.host == "up.test" and .decision == "deny") |
	    .rule_from' "$LOG" | sort -u)" = "the run's control channel" ]
	[ "$(jq -r '.refused[] | "\(.host) \(.count)"' "$WS/r.json")" = \
	    "up.test 2" ]
	# A connection whose header says its run keeps a channel, with no
	# channel of that run open here: its request refused, 503, with
	# why and what to do, and logged with why.
	cat >"$UDIR/bin/nochannel.py" <<'PY'
import socket, struct, sys
path, port = sys.argv[1], sys.argv[2]
tlvs = [(0x05, b"ghost"), (0xe6, b"1")]
body = b"".join(bytes([t]) + struct.pack(">H", len(v)) + v for t, v in tlvs)
c = socket.socket(socket.AF_UNIX); c.connect(path)
c.sendall(b"\r\n\r\n\x00\r\nQUIT\n" + b"\x21\x00" + struct.pack(">H", len(body)) +
    body + b"GET http://up.test:%s/ HTTP/1.1\r\nHost: up.test\r\n\r\n" % port.encode())
print(c.recv(4096).decode(errors="replace"))
PY
	run as_user "$UDIR/home" timeout 10 python3 "$UDIR/bin/nochannel.py" \
	    "$sock" "$UP"
	echo "$output"
	[[ "${lines[0]}" == "HTTP/1.1 503 "* ]]
	[[ "$output" == *"its channel is not open on this proxy"* ]]
	[[ "$output" == *"wait until the run has reopened its channel"* ]]
	jq -r 'select(.event != "open") | select(.sandbox == "ghost") | "\(.decision) \(.reason)"' "$LOG" |
	    grep -q '^deny the run has a harness (--control, --ask), and its channel is not open on this proxy'
}

@test "--proxy-socket: a live deny the proxy keeps when it refuses the harness's later allow of the same pattern is replayed on the restarted proxy" {
	sandbox_setup
	write_pyharness
	sock="$UDIR/proxy.sock"
	psock 1
	mkdir -p "$WS/m"
	chmod 777 "$WS/m"
	CTL="$UDIR/ctl.sock"
	EVENTS="$UDIR/events.log"
	# deny up.test (every port) is applied; allow up.test is refused,
	# being past the operator's up.test:$UP: the deny stays in force.
	start_bg harness as_user "$UDIR/home" python3 "$UDIR/bin/pyharness.py" \
	    "$CTL" "$EVENTS" "$WS/m" --file go '{"deny": "up.test"}' \
	    --after applied.1 '{"allow": "up.test"}'
	wait_listen "unix:$CTL"
	start_bg run as_user "$UDIR/home" sh -c "cd '$WS' && '$UCORDON' run \
	    --read-only '$UDIR/bin' --proxy-socket '$sock' --control '$CTL' \
	    -- sh -c '
	    w() { for i in \$(seq 300); do [ -e m/\$1 ] && return; sleep 0.05; done; echo \"no \$1\"; }
	    c() { curl -s -o /dev/null -w \"%{http_code} \" http://\$1:$UP/; }
	    c up.test; : >m/go; w error.1; c up.test; echo
	    : >m/first; w channel.2; c up.test; echo
	    ' 2>'$UDIR/run.err'; echo \"exit \$?\""
	proxy_lost_mid_run 2
	cat "$BATS_TEST_TMPDIR/run.log" "$UDIR/run.err" "$EVENTS"
	[ "$(jq -r 'select(.event == "channel") | .state' "$EVENTS" |
	    tr '\n' ' ')" = "lost restored " ]
	[ "$(grep -c '"event":"error"' "$EVENTS")" -eq 1 ]
	[ "$(cat "$BATS_TEST_TMPDIR/run.log")" = \
	    "$(printf '200 403 \n403 \nexit 0')" ]
}

@test "--proxy-socket: while the channel is reopened the run keeps at most 512 live rules; the harness's next ones are refused, and each rule no proxy answered is told once when the channel cannot be reopened" {
	sandbox_setup
	write_pyharness
	sock="$UDIR/proxy.sock"
	start_bg proxy "$UCORDON" proxy --listen-sandbox "unix:$sock" \
	    --log "$LOG" --resolve up.test:127.0.0.1 \
	    --allow-cidr 127.0.0.1/32 --allow-domain "up.test:$UP"
	P=$BG_PID
	wait_listen "unix:$sock"
	chmod 666 "$sock"
	mkdir -p "$WS/m"
	chmod 777 "$WS/m"
	CTL="$UDIR/ctl.sock"
	EVENTS="$UDIR/events.log"
	# 600 denies, sent once the run says its channel is lost: the
	# proxy stays down, so none is answered.
	rules=$(for i in $(seq 600); do printf '{"deny": "h%d.test"}\n' "$i"; done)
	start_bg harness as_user "$UDIR/home" python3 "$UDIR/bin/pyharness.py" \
	    "$CTL" "$EVENTS" "$WS/m" --after channel.1 "$rules"
	wait_listen "unix:$CTL"
	start_bg run as_user "$UDIR/home" sh -c "cd '$WS' && '$UCORDON' run \
	    --read-only '$UDIR/bin' --proxy-socket '$sock' --control '$CTL' \
	    -- sh -c '
	    : >m/first; for i in \$(seq 400); do [ -e m/channel.2 ] && break; sleep 0.05; done
	    ' 2>'$UDIR/run.err'; echo \"exit \$?\""
	proxy_lost_mid_run
	cat "$BATS_TEST_TMPDIR/run.log" "$UDIR/run.err"
	grep -v '"event":"applied"' "$EVENTS" | head -5
	[ "$(cat "$BATS_TEST_TMPDIR/run.log")" = "exit 0" ]
	[ "$(jq -r 'select(.event == "channel") | .state' "$EVENTS" |
	    tr '\n' ' ')" = "lost failed " ]
	# Each rule told once: the 88 past the 512 at once, the 512 kept
	# when the channel could not be reopened.
	[ "$(grep -c '"event":"error"' "$EVENTS")" -eq 600 ]
	[ "$(grep '"event":"error"' "$EVENTS" | grep -c '512 live rules of the run are in force or wait')" -eq 88 ]
	grep '"event":"error"' "$EVENTS" | head -1 | grep -q 'h513.test'
	[ "$(grep '"event":"error"' "$EVENTS" | grep -c 'could not be reopened; nothing changed')" -eq 512 ]
	[ "$(jq -r 'select(.event == "error") | .line' "$EVENTS" | sort -u | wc -l)" -eq 600 ]
}

@test "readiness: /healthz, /readyz (not while draining), cordon_build_info" {
	start_proxy --allow-domain "127.0.0.1:$ECHO" --allow-cidr 127.0.0.1/32
	run curl -sS -w ' %{http_code}' "http://127.0.0.1:$METRICS/healthz"
	[ "$output" = "ok
 200" ]
	run curl -sS -w ' %{http_code}' "http://127.0.0.1:$METRICS/readyz"
	[ "$output" = "ready
 200" ]
	[ "$(metric cordon_ready)" = 1 ]
	[ "$(metric "cordon_build_info{version=\"$("$CORDON" --version | cut -d' ' -f2)\"}")" = 1 ]
	# An open tunnel keeps the draining proxy up: not ready, and why.
	hold_conns "tcp:127.0.0.1:$PROXY" 1
	kill -TERM "$PROXY_PID"
	for i in $(seq 100); do
		code=$(curl -s -o "$BATS_TEST_TMPDIR/r" -w '%{http_code}' \
		    "http://127.0.0.1:$METRICS/readyz") || true
		[ "$code" = 503 ] && break
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/r"
	[ "$code" = 503 ]
	grep -q '^not ready: draining' "$BATS_TEST_TMPDIR/r"
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$METRICS/healthz")" = 200 ]
	release_conns
}

@test "drain: after SIGTERM a new client of each listener is refused at once, the open tunnel still echoes, the proxy exits when it closes" {
	SOCK="$BATS_TEST_TMPDIR/proxy.sock"
	start_proxy --listen-sandbox "unix:$SOCK" \
	    --allow-domain "127.0.0.1:$ECHO" --allow-cidr 127.0.0.1/32
	wait_listen "unix:$SOCK"
	run python3 "$BATS_TEST_DIRNAME/clients/drain.py" "$PROXY_PID" \
	    "127.0.0.1:$ECHO" "tcp:127.0.0.1:$PROXY" "unix:$SOCK"
	echo "$output" >&2
	[[ "${lines[0]}" == "new tcp:127.0.0.1:$PROXY: refused in 0.0"* ]]
	[[ "${lines[1]}" == "new unix:$SOCK: refused in 0.0"* ]]
	[ "${lines[2]}" = "tunnel: echoed" ]
	[[ "${lines[3]}" == "exited in "* ]]
	[ "$status" -eq 0 ]
	# The Unix socket is gone with the drain, not left for the next
	# proxy at its path to trip on.
	[ ! -e "$SOCK" ]
}
