#!/usr/bin/env bats
# tests/tools/httpd: the origin the proxy's tests and `make bench` stand
# on, held to what its header comment promises.

load helpers

HTTPD="$TOOLS_DIR/httpd"

setup() {
	cordon_setup
	PORT=$(free_port)
	URL="http://127.0.0.1:$PORT"
	start_bg httpd "$HTTPD" --listen "tcp:127.0.0.1:$PORT" \
	    --log "$BATS_TEST_TMPDIR/requests.log"
	wait_listen "tcp:127.0.0.1:$PORT"
}

teardown() {
	teardown_bg
}

# Sends stdin over one connection and prints what comes back until the
# server closes (or 3 s pass).  (A <<< string gains a newline at its end:
# an empty line between requests, which a server skips.)
raw() {
	exec 5<>"/dev/tcp/127.0.0.1/$PORT"
	cat >&5
	timeout 3 cat <&5 || true
	exec 5>&-
}

# Code, connections opened and body size of each URL, one curl call.
W='%{http_code} %{num_connects} %{size_download}\n'

@test "says listening; several URLs go over one kept connection" {
	grep -qx listening "$BATS_TEST_TMPDIR/httpd.log"
	run curl -s -o /dev/null -o /dev/null -o /dev/null -o /dev/null \
	    -o /dev/null -w "$W" "$URL/" "$URL/status/204" "$URL/bytes/3" \
	    "$URL/chunked/70000" "$URL/nowhere"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '%s\n' '200 1 6' '204 0 0' '200 0 3' \
	    '200 0 70000' '404 0 0')" ]
	[ "$(curl -s "$URL/")" = hello ]
}

@test "bodies: exact sizes, zeros, chunked framing, close-delimited" {
	[ "$(curl -s "$URL/bytes/1048583" | tr -d '\0' | wc -c)" -eq 0 ]
	[ "$(curl -s "$URL/bytes/1048583" | wc -c)" -eq 1048583 ]
	run curl -sI "$URL/bytes/1099511627776"
	[[ "$output" == *"Content-Length: 1099511627776"* ]]
	[ "$(curl -s -o /dev/null -w '%{http_code}' \
	    "$URL/bytes/1099511627777")" = 404 ]
	curl -s --raw "$URL/chunked/5" | tr '\0' z >out
	printf '5\r\nzzzzz\r\n0\r\n\r\n' | cmp - out
	run curl -s -D - -o /dev/null -w "$W" "$URL/close/300001"
	[[ "$output" == *"Connection: close"* ]]
	[[ "$output" != *"Content-Length"* ]]
	[[ "$output" == *"200 1 300001" ]]
}

@test "/echo: the head as received, then the body, chunked or not" {
	head -c 3000000 /dev/urandom >body
	curl -s -H 'X-Test: a  b' --data-binary @body -o out "$URL/echo"
	tail -c 3000000 out | cmp - body
	head -n 1 out | grep -qx $'POST /echo HTTP/1.1\r'
	grep -qa $'^X-Test: a  b\r$' out
	curl -s -H 'Transfer-Encoding: chunked' --data-binary @body -o out \
	    "$URL/echo"
	tail -c 3000000 out | cmp - body
	grep -qa $'^Transfer-Encoding: chunked\r$' out
	# Absolute form and a bare-LF head come back byte for byte.
	req=$'GET http://example.test/echo?x HTTP/1.1\nHost: h\n'
	req+=$'Connection: close\n\n'
	printf '%s' "$req" | raw >resp
	printf '%s' "$req" | cmp - <(tail -c "${#req}" resp)
	grep -qa "^Content-Length: ${#req}"$'\r$' resp
}

@test "HTTP/1.0 closes unless asked; Connection: close is honoured" {
	run curl -s -0 -o /dev/null -o /dev/null -w "$W" "$URL/" "$URL/"
	[ "$output" = "$(printf '200 1 6\n200 1 6')" ]
	run curl -s -0 -H 'Connection: keep-alive' -o /dev/null -o /dev/null \
	    -w "$W" "$URL/" "$URL/"
	[ "$output" = "$(printf '200 1 6\n200 0 6')" ]
	run curl -s -H 'Connection: close' -o /dev/null -o /dev/null \
	    -w "$W" "$URL/" "$URL/"
	[ "$output" = "$(printf '200 1 6\n200 1 6')" ]
}

@test "pipelined requests, in order; a bad head gets 400 and the end" {
	req=$'GET / HTTP/1.1\r\n\r\n'
	req+=$'POST /echo HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi'
	req+=$'GET /status/503 HTTP/1.1\r\nConnection: close\r\n\r\n'
	run raw <<<"$req"
	[[ "$output" == *"hello"*$'Content-Length: 2\r\n\r\nhiHTTP/1.1 503 '* ]]
	run raw <<<$'GET / HTTP/1.1\r\nBad header\r\n\r\nGET / HTTP/1.1\r\n\r\n'
	[[ "$output" == "HTTP/1.1 400 "* ]]
	[[ "$output" != *hello* ]]
	run raw <<<$'POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n'
	[[ "$output" == "HTTP/1.1 501 "* ]]
	printf 'GET /\0 HTTP/1.1\r\n\r\n' | raw >resp
	grep -q '^HTTP/1.1 400 ' resp
	[ "$(curl -s "$URL/")" = hello ]
}

@test "/status, /slow, and the log of method, target and Host" {
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/status/418")" = 418 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/status/99")" = 404 ]
	run curl -s -o out -w '%{time_total}' "$URL/slow/300"
	[ "$(cat out)" = slow ]
	awk -v t="$output" 'BEGIN { exit !(t >= 0.3) }'
	curl -s -X DELETE -H 'Host: a b' "$URL/x" >/dev/null
	grep -qxF "GET /status/418 127.0.0.1:$PORT" requests.log
	grep -qxF 'DELETE /x a\x20b' requests.log
}

@test "listens on ::1" {
	[ -e /proc/net/if_inet6 ] || skip "no IPv6 on this machine"
	P6=$(free_port)
	start_bg httpd6 "$HTTPD" --listen "tcp:[::1]:$P6"
	for _ in $(seq 100); do
		grep -q listening "$BATS_TEST_TMPDIR/httpd6.log" && break
		sleep 0.05
	done
	[ "$(curl -s "http://[::1]:$P6/")" = hello ]
}

# A throwaway CA and a certificate it signs for localhost and 127.0.0.1
# (DNS and IP SANs), chain file leaf first; then httpd over TLS on
# $TPORT, logging to tls.log.
tls_start() {
	local d=$BATS_TEST_TMPDIR
	sh "$BATS_TEST_DIRNAME/../../mk/origin-cert.sh" "$d" localhost \
	    127.0.0.1
	cp "$d/origin-ca.pem" "$d/ca.pem"
	cp "$d/origin.key" "$d/srv.key"
	cat "$d/origin.pem" "$d/ca.pem" >"$d/chain.pem"
	TPORT=$(free_port)
	TURL="https://localhost:$TPORT"
	start_bg httpds "$HTTPD" --listen "tcp:127.0.0.1:$TPORT" \
	    --tls-cert "$d/chain.pem" --tls-key "$d/srv.key" --log "$d/tls.log"
	wait_listen "tcp:127.0.0.1:$TPORT"
}

tcurl() {
	curl -s --cacert "$BATS_TEST_TMPDIR/ca.pem" \
	    --resolve "localhost:$TPORT:127.0.0.1" "$@"
}

@test "TLS: hello, echo, bodies, close_notify at the end of /close" {
	tls_start
	[ "$(tcurl "$TURL/")" = hello ]
	tcurl -H 'X-Test: t' "$TURL/echo" >out
	head -n 1 out | grep -qx $'GET /echo HTTP/1.1\r'
	grep -qa $'^X-Test: t\r$' out
	grep -qa "^Host: localhost:$TPORT"$'\r$' out
	[ "$(tcurl "$TURL/bytes/1048576" | wc -c)" -eq 1048576 ]
	run tcurl -o /dev/null -w "$W" "$TURL/close/100"
	[ "$status" -eq 0 ]
	[ "$output" = "200 1 100" ]
	# ... and the server did send a close_notify.
	printf 'GET /close/5 HTTP/1.1\r\nHost: x\r\n\r\n' |
	    timeout 5 openssl s_client -connect "127.0.0.1:$TPORT" \
	    -CAfile ca.pem -ign_eof -msg >sclient 2>&1 || true
	grep -qa '^<<< .*Alert.*close_notify' sclient
	run tcurl -o /dev/null -o /dev/null -o /dev/null -w "$W" \
	    "$TURL/chunked/70000" "$TURL/status/204" "$TURL/nowhere"
	[ "$output" = "$(printf '%s\n' '200 1 70000' '204 0 0' '404 0 0')" ]
	# A body with 100-continue, back whole; an IP name verifies too.
	head -c 2000000 /dev/urandom >body
	tcurl -H 'Expect: 100-continue' --data-binary @body -o out \
	    "https://127.0.0.1:$TPORT/echo"
	tail -c 2000000 out | cmp - body
}

@test "TLS: plain HTTP fails; the log says alpn and sni" {
	tls_start
	run curl -s "http://127.0.0.1:$TPORT/"
	[ "$status" -ne 0 ]
	grep -q '^tls-handshake-failed ' tls.log
	tcurl "$TURL/status/418" >/dev/null
	grep -qxF "GET /status/418 localhost:$TPORT alpn=http/1.1 sni=localhost" \
	    tls.log
	curl -s --cacert ca.pem "https://127.0.0.1:$TPORT/" >/dev/null
	grep -qxF "GET / 127.0.0.1:$TPORT alpn=http/1.1 sni=-" tls.log
	# The plain server's lines are as they were.
	curl -s "$URL/" >/dev/null
	grep -qxF "GET / 127.0.0.1:$PORT" requests.log
}
