#!/usr/bin/env bats
# cordon proxy: HTTP, CONNECT and SOCKS5 with real curl, a real DNS server
# (dnsmasq), a real TLS server (openssl s_server) and an HTTP origin, all
# on 127.0.0.1.  Each refusal checks the answer and the egress log line.

load helpers

HTTPD="$TOOLS_DIR/httpd"

setup() {
	cordon_setup
	LOG="$BATS_TEST_TMPDIR/egress.log"
	UP=$(free_port)
	start_bg httpd "$HTTPD" --listen "tcp:127.0.0.1:$UP" \
	    --log "$BATS_TEST_TMPDIR/origin.log"
	wait_listen "tcp:127.0.0.1:$UP"
}

teardown() {
	teardown_bg
}

# Starts dnsmasq on a free port with fixed answers; DNS_PORT is its port
# and its queries are logged to dns.log.
start_dns() {
	DNS_PORT=$(free_port)
	start_bg dnsmasq dnsmasq --no-daemon --port="$DNS_PORT" \
	    --listen-address=127.0.0.1 --bind-interfaces --no-resolv \
	    --no-hosts --user="$(id -un)" --pid-file= \
	    --log-queries --log-facility="$BATS_TEST_TMPDIR/dns.log" \
	    --address=/up.test/127.0.0.1 \
	    --address=/meta.test/169.254.169.254 \
	    --address=/private.test/10.1.2.3 \
	    --address=/v6only.test/::1 \
	    --address=/nx.test/
	for i in $(seq 100); do
		grep -q "started" "$BATS_TEST_TMPDIR/dns.log" 2>/dev/null &&
		    return 0
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/dnsmasq.log" >&2
	return 1
}

# Starts the proxy with the given policy flags; PROXY is its port.
start_proxy() {
	PROXY=$(free_port)
	start_bg proxy "$CORDON" proxy --listen "tcp:127.0.0.1:$PROXY" \
	    --log "$LOG" "$@"
	PROXY_PID=$BG_PID
	wait_listen "tcp:127.0.0.1:$PROXY"
}

# Prints field $1 of the last egress log line.
last() {
	for i in $(seq 50); do [ -s "$LOG" ] && break; sleep 0.05; done
	tail -n 1 "$LOG" | jq -r ".$1"
}

# Sends raw bytes to the proxy and prints the first line of the answer.
raw() {
	printf "$1" | timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PROXY;
	    cat >&3; head -n 1 <&3" | tr -d '\r'
}

@test "HTTP: allowed by name, keep-alive, each request decided and logged" {
	start_dns
	start_proxy --dns "127.0.0.1:$DNS_PORT" --allow-cidr 127.0.0.1/32 \
	    --allow-domain "up.test:$UP"
	run curl -sS -x "http://127.0.0.1:$PROXY" "http://up.test:$UP/" \
	    "http://up.test:$UP/bytes/100000" -o /dev/null -o "$BATS_TEST_TMPDIR/b"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/b")" -eq 100000 ]
	[ "$(end_lines "$LOG")" -eq 2 ]
	[ "$(jq -r 'select(.event != "open") | .decision' "$LOG" | sort -u)" = allow ]
	[ "$(jq -r 'select(.event != "open") | .client' "$LOG" | sort -u | wc -l)" -eq 1 ]	# one connection
	[ "$(last protocol)" = http ]
	[ "$(last method)" = GET ]
	[ "$(last host)" = up.test ]
	[ "$(last address)" = 127.0.0.1 ]
	[ "$(last rule)" = "up.test:$UP" ]
	[ "$(last rule_from)" = "--allow-domain" ]
	[ "$(last status)" = 200 ]
	[ "$(last bytes_down)" = 100000 ]
	# Chunked and close-delimited answers, and a request body.
	run curl -sS -x "http://127.0.0.1:$PROXY" "http://up.test:$UP/chunked/70000" \
	    -o "$BATS_TEST_TMPDIR/c"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/c")" -eq 70000 ]
	run curl -sS -x "http://127.0.0.1:$PROXY" "http://up.test:$UP/close/5000" \
	    -o "$BATS_TEST_TMPDIR/d"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/d")" -eq 5000 ]
	# An HTTP/1.0 client gets no chunks it could not read.
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PROXY
	    printf 'GET http://up.test:$UP/chunked/70000 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n' >&3
	    cat <&3" >"$BATS_TEST_TMPDIR/h10"
	head -c 200 "$BATS_TEST_TMPDIR/h10" | grep -q "^HTTP/1.1 200 OK"
	[ "$(head -c 500 "$BATS_TEST_TMPDIR/h10" | grep -aci chunked)" -eq 0 ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/h10")" -gt 70000 ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/h10")" -lt 70300 ]
	run curl -sS -x "http://127.0.0.1:$PROXY" --data-binary @"$BATS_TEST_TMPDIR/c" \
	    "http://up.test:$UP/echo"
	[ "$status" -eq 0 ]
	[ "$(last bytes_up)" = 70000 ]
}

# A client that shuts its write side after the request (as netcat -N
# does) still gets the whole answer, and the line is logged once.
HALF_CLOSE='import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(("GET http://127.0.0.1:%s/bytes/100000 HTTP/1.1\r\n"
    "Host: 127.0.0.1:%s\r\n\r\n" % (sys.argv[2], sys.argv[2])).encode())
s.shutdown(socket.SHUT_WR)
data = b""
while True:
	b = s.recv(65536)
	if not b:
		break
	data += b
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode(), len(body))'

@test "HTTP: a client that half-closes after its request gets the whole answer" {
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	run python3 -c "$HALF_CLOSE" "$PROXY" "$UP"
	[ "$status" -eq 0 ]
	[ "$output" = "HTTP/1.1 200 OK 100000" ]
	[ "$(end_lines "$LOG")" -eq 1 ]
	[ "$(last decision)" = allow ]
	[ "$(last reason)" = null ]
}

# A client that reads slower than the origin sends: the end of a closing
# answer waits in the proxy's output when the answer is done.
SLOW_READER='import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.settimeout(10)
s.sendall(("GET http://127.0.0.1:%s/bytes/30000000 HTTP/1.1\r\n"
    "Host: 127.0.0.1:%s\r\nConnection: close\r\n\r\n" %
    (sys.argv[2], sys.argv[2])).encode())
time.sleep(1)
n = 0
while True:
	b = s.recv(1 << 20)
	if not b:
		break
	n += len(b)
print(n)'

@test "HTTP: a slow reader gets all of a closing answer" {
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	run python3 -c "$SLOW_READER" "$PROXY" "$UP"
	[ "$status" -eq 0 ]
	# The head, then every byte of the body.
	[ "$output" -gt 30000000 ]
	[ "$output" -lt 30000200 ]
	[ "$(last bytes_down)" -eq 30000000 ]
}

@test "HTTP: Host rewritten, hop-by-hop and Proxy-Authorization dropped" {
	start_proxy --resolve "up.test:127.0.0.1" --allow-cidr 127.0.0.1/32 \
	    --allow-domain "up.test:$UP"
	run curl -sS -x "http://127.0.0.1:$PROXY" -H "Host: evil.test" \
	    -H "Proxy-Authorization: Basic c2VjcmV0" -H "X-Private: 1" \
	    -H "Connection: X-Private" -H "Keep-Alive: timeout=5" \
	    -H "X-Kept: yes" "http://up.test:$UP/echo"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Host: up.test:$UP"* ]]
	[[ "$output" != *"evil.test"* ]]
	[[ "$output" != *"Proxy-Authorization"* ]]
	[[ "$output" != *"X-Private"* ]]
	[[ "$output" != *"Keep-Alive"* ]]
	[[ "$output" == *"X-Kept: yes"* ]]
	[[ "$output" == "GET /echo HTTP/1.1"* ]]
}

# Starts serve.py on a free port, $ORIGIN, logging each TCP connection
# it accepts to $CONNS (options: serve.py's).
start_counted_origin() {
	ORIGIN=$(free_port)
	CONNS="$BATS_TEST_TMPDIR/conns.log"
	mkdir -p "$BATS_TEST_TMPDIR/www"
	echo hi >"$BATS_TEST_TMPDIR/www/index.html"
	start_bg origin python3 "$BATS_TEST_DIRNAME/clients/serve.py" http \
	    --listen "$ORIGIN" --root "$BATS_TEST_TMPDIR/www" \
	    --log "$BATS_TEST_TMPDIR/requests.log" --conns "$CONNS" "$@"
	wait_listen "tcp:127.0.0.1:$ORIGIN"
}

# A sandbox listener, one worker, with metrics; bridges speaking for
# sandbox ids (start_bridge NAME ID: its port in $BRIDGE).
start_sandbox_proxy() {
	SOCK="$BATS_TEST_TMPDIR/proxy.sock"
	METRICS=$(free_port)
	start_bg proxy "$CORDON" proxy --workers 1 \
	    --listen-sandbox "unix:$SOCK" --log "$LOG" \
	    --metrics "tcp:127.0.0.1:$METRICS" \
	    --allow-domain "127.0.0.1:$ORIGIN" --allow-cidr 127.0.0.1/32
	wait_listen "unix:$SOCK"
	wait_listen "tcp:127.0.0.1:$METRICS"
}

start_bridge() {
	BRIDGE=$(free_port)
	start_bg "$1" "$CORDON" bridge --listen "tcp:127.0.0.1:$BRIDGE" \
	    --connect "unix:$SOCK" --proxy-id "$2"
	wait_listen "tcp:127.0.0.1:$BRIDGE"
}

# GETs the origin through the bridge on port $1 (a client connection of
# its own); prints the status.
get_via() {
	curl -sS -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$1" \
	    "http://127.0.0.1:$ORIGIN/"
}

@test "HTTP: an idle upstream outlives its client connection for the same run only (the pool)" {
	start_counted_origin
	start_sandbox_proxy
	start_bridge b1 sbx-one
	ONE=$BRIDGE
	start_bridge b2 sbx-two
	TWO=$BRIDGE
	# Run one: two client connections, one upstream connection.
	[ "$(get_via "$ONE")" = 200 ]
	[ "$(get_via "$ONE")" = 200 ]
	[ "$(wc -l <"$CONNS")" -eq 1 ]
	[ "$(metric 'cordon_upstream_reused_total{from="pool"}')" -eq 1 ]
	# Run two never takes run one's: a connection of its own, then
	# reused by its own next client connection.
	[ "$(get_via "$TWO")" = 200 ]
	[ "$(wc -l <"$CONNS")" -eq 2 ]
	[ "$(get_via "$TWO")" = 200 ]
	[ "$(get_via "$ONE")" = 200 ]
	[ "$(wc -l <"$CONNS")" -eq 2 ]
	[ "$(metric 'cordon_upstream_reused_total{from="pool"}')" -eq 3 ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/requests.log")" -eq 5 ]
	# Every request decided and logged, reused or not.
	[ "$(grep -v '"event":"open"' "$LOG" | grep -c '"decision":"allow"')" -eq 5 ]
}

@test "HTTP: a pooled upstream the origin closed is never used" {
	# The origin closes a connection idle for half a second.
	start_counted_origin --idle 0.5
	start_sandbox_proxy
	start_bridge b1 sbx-one
	[ "$(get_via "$BRIDGE")" = 200 ]
	# Closed by the origin, then by the proxy.
	wait_for eval '! tcp_open_to "$ORIGIN"'
	[ "$(get_via "$BRIDGE")" = 200 ]
	[ "$(wc -l <"$CONNS")" -eq 2 ]
	# Closed in the pool, not taken and retried.
	[ "$(metric 'cordon_upstream_reused_total{from="pool"}')" -eq 0 ]
}

@test "HTTP: a POST a reused upstream dropped unanswered is not sent again (not idempotent)" {
	# Each connection answers one request and drops the next unanswered.
	start_counted_origin --answer 1
	start_sandbox_proxy
	start_bridge b1 sbx-one
	REQS="$BATS_TEST_TMPDIR/requests.log"
	post() {
		curl -sS -o /dev/null -w '%{http_code}' -X POST \
		    -x "http://127.0.0.1:$BRIDGE" "http://127.0.0.1:$ORIGIN/$1"
	}
	# serve.py answers a POST 405, and keeps the connection.
	[ "$(post a)" = 405 ]
	# Taken from the pool, dropped: the origin may have acted on it.
	run post b
	[ "$output" = 502 ]
	[ "$(grep -c '^POST /b ' "$REQS")" -eq 1 ]
	# A GET, idempotent, is sent again on a new connection.
	[ "$(post a)" = 405 ]
	[ "$(get_via "$BRIDGE")" = 200 ]
	[ "$(grep -c '^GET / .*dropped$' "$REQS")" -eq 1 ]
	[ "$(grep -c '^GET / ' "$REQS")" -eq 2 ]
}

@test "a refused name gets 403 with the rule and the fix, and is never looked up" {
	start_dns
	start_proxy --dns "127.0.0.1:$DNS_PORT" --allow-cidr 127.0.0.1/32 \
	    --allow-domain "up.test:$UP" --deny-domain gist.up.test
	run curl -sS -i -x "http://127.0.0.1:$PROXY" "http://exfil.test:$UP/"
	[[ "$output" == "HTTP/1.1 403 Forbidden"* ]]
	[[ "$output" == *"X-Cordon-Decision: deny exfil.test:$UP: no network.allow entry matches (default deny)"* ]]
	[[ "$output" == *"hint: add \"exfil.test:$UP\" to network.allow, or pass --allow-domain exfil.test:$UP"* ]]
	[ "$(last decision)" = deny ]
	[ "$(last host)" = exfil.test ]
	[ "$(last reason)" = "no network.allow entry matches (default deny)" ]
	[ "$(last status)" = 403 ]
	run curl -sS -i -x "http://127.0.0.1:$PROXY" "http://gist.up.test:$UP/"
	[[ "$output" == *'by network.deny "gist.up.test" (from --deny-domain)'* ]]
	[ "$(last rule)" = gist.up.test ]
	run curl -sS -p -x "http://127.0.0.1:$PROXY" "http://exfil2.test:$UP/"
	[ "$status" -ne 0 ]
	[ "$(last protocol)" = connect ]
	[ "$(last decision)" = deny ]
	sleep 0.2
	[ "$(grep -c "exfil" "$BATS_TEST_TMPDIR/dns.log")" -eq 0 ]
	[ "$(grep -c "gist" "$BATS_TEST_TMPDIR/dns.log")" -eq 0 ]
	[ "$(grep -c "exfil" "$BATS_TEST_TMPDIR/origin.log")" -eq 0 ]
}

@test "names that resolve to special addresses are refused" {
	start_dns
	start_proxy --dns "127.0.0.1:$DNS_PORT" --allow-domain '*.test:*'
	for name in up.test meta.test private.test v6only.test; do
		run curl -sS -i -x "http://127.0.0.1:$PROXY" "http://$name:$UP/"
		[[ "$output" == "HTTP/1.1 403 Forbidden"* ]]
		[ "$(last decision)" = deny ]
		[ "$(last host)" = "$name" ]
	done
	[[ "$(last reason)" == "its address ::1 is IPv6 loopback, and not in network.allow_cidrs" ]]
	run curl -sS -i -x "http://127.0.0.1:$PROXY" "http://meta.test/latest/"
	[[ "$output" == *"its address 169.254.169.254 is link-local (incl. cloud metadata)"* ]]
	[[ "$output" == *'add "169.254.169.254/32" to network.allow_cidrs'* ]]
	[ "$(last address)" = 169.254.169.254 ]
	[ "$(grep -c "latest" "$BATS_TEST_TMPDIR/origin.log")" -eq 0 ]
	# A name that does not resolve: 502, saying so.
	run curl -sS -i -x "http://127.0.0.1:$PROXY" "http://nx.test:$UP/"
	[[ "$output" == "HTTP/1.1 502 Bad Gateway"* ]]
	[[ "$output" == *"cannot resolve"* ]]
	# The policy allowed it; what became of it is in status and reason.
	[ "$(last decision)" = allow ]
	[ "$(last status)" = 502 ]
	[[ "$(last reason)" == *"cannot resolve"* ]]
}

@test "IP literals in any spelling are the same address" {
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	for host in 127.0.0.1 2130706433 0x7f000001 0177.0.0.1 0x7f.1 127.1 \
	    '[::ffff:127.0.0.1]'; do
		run raw "GET http://$host:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
		[ "$output" = "HTTP/1.1 200 OK" ]
	done
	run raw "GET http://127.0.0.2:$UP/ HTTP/1.1\r\nHost: x\r\n\r\n"
	[ "$output" = "HTTP/1.1 403 Forbidden" ]
	run raw "CONNECT 0x7f.1:22 HTTP/1.1\r\nHost: x\r\n\r\n"
	[ "$output" = "HTTP/1.1 403 Forbidden" ]
	run raw "GET http://169.254.169.254/ HTTP/1.1\r\nHost: x\r\n\r\n"
	[ "$output" = "HTTP/1.1 403 Forbidden" ]
}

@test "malformed and smuggling-shaped requests get 400, and are logged" {
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	u="http://127.0.0.1:$UP/"
	run raw "POST $u HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
	[ "$output" = "HTTP/1.1 400 Bad Request" ]
	[ "$(last decision)" = deny ]
	run raw "POST $u HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"
	[ "$output" = "HTTP/1.1 400 Bad Request" ]
	run raw "GET $u HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n folded\r\n\r\n"
	[ "$output" = "HTTP/1.1 400 Bad Request" ]
	run raw "GET $u HTTP/1.1\nHost: a\n\n"
	[ "$output" = "HTTP/1.1 400 Bad Request" ]
	run raw "GET / HTTP/1.1\r\nHost: 127.0.0.1:$UP\r\n\r\n"
	[ "$output" = "HTTP/1.1 400 Bad Request" ]
	run raw "GET http://127.0.0.1%00.evil.test:$UP/ HTTP/1.1\r\nHost: a\r\n\r\n"
	[[ "$output" == "HTTP/1.1 40"* ]]
	long=$(head -c 70000 /dev/zero | tr '\0' a)
	run raw "GET $u HTTP/1.1\r\nHost: a\r\nX-Long: $long\r\n\r\n"
	[ "$output" = "HTTP/1.1 431 Request Header Fields Too Large" ]
	[ "$(last status)" = 431 ]
	run raw "GET $u HTTP/2.0\r\nHost: a\r\n\r\n"
	[ "$output" = "HTTP/1.1 505 HTTP Version Not Supported" ]
	# Nothing of these reached the origin.
	[ ! -s "$BATS_TEST_TMPDIR/origin.log" ]
}

@test "CONNECT with TLS: the server name must be the tunnel's host" {
	start_dns
	TLS=$(free_port)
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
	    -subj /CN=up.test -addext subjectAltName=DNS:up.test,DNS:alt.test \
	    -days 1 -nodes -keyout "$BATS_TEST_TMPDIR/key.pem" \
	    -out "$BATS_TEST_TMPDIR/cert.pem" 2>/dev/null
	start_bg tls openssl s_server -accept "127.0.0.1:$TLS" -www \
	    -cert "$BATS_TEST_TMPDIR/cert.pem" -key "$BATS_TEST_TMPDIR/key.pem"
	wait_listen "tcp:127.0.0.1:$TLS"
	start_proxy --dns "127.0.0.1:$DNS_PORT" --allow-cidr 127.0.0.1/32 \
	    --allow-domain "up.test:$TLS"
	run curl -sS --cacert "$BATS_TEST_TMPDIR/cert.pem" \
	    -x "http://127.0.0.1:$PROXY" "https://up.test:$TLS/"
	[ "$status" -eq 0 ]
	[[ "$output" == *"s_server"* ]]
	[ "$(last protocol)" = connect ]
	[ "$(last decision)" = allow ]
	[ "$(last bytes_down)" -gt 1000 ]
	# Another name in the ClientHello: closed before anything goes up.
	run timeout 10 openssl s_client -proxy "127.0.0.1:$PROXY" \
	    -connect "up.test:$TLS" -servername alt.test </dev/null
	[ "$(last decision)" = deny ]
	[[ "$(last reason)" == 'TLS server name "alt.test" does not match'* ]]
	# The same name: fine.
	run timeout 10 openssl s_client -proxy "127.0.0.1:$PROXY" \
	    -connect "up.test:$TLS" -servername up.test </dev/null
	[ "$(last decision)" = allow ]
}

@test "SOCKS5: names, IPv4 literals, refusals with the right reply" {
	start_dns
	start_proxy --dns "127.0.0.1:$DNS_PORT" --allow-cidr 127.0.0.1/32 \
	    --allow-domain "up.test:$UP" --allow-domain "127.0.0.1:$UP"
	run curl -sS --socks5-hostname "127.0.0.1:$PROXY" "http://up.test:$UP/"
	[ "$status" -eq 0 ]
	[ "$output" = hello ]
	[ "$(last protocol)" = socks5 ]
	[ "$(last host)" = up.test ]
	run curl -sS --socks5 "127.0.0.1:$PROXY" "http://127.0.0.1:$UP/"
	[ "$status" -eq 0 ]
	[ "$(last host)" = 127.0.0.1 ]
	run curl -sS --socks5-hostname "127.0.0.1:$PROXY" "http://evil.test:$UP/"
	[ "$status" -eq 97 ]
	[[ "$output" == *"(2)"* ]]		# not allowed by ruleset
	[ "$(last decision)" = deny ]
	[ "$(last status)" = 2 ]
	run curl -sS --socks5 "127.0.0.1:$PROXY" "http://10.1.2.3:$UP/"
	[ "$status" -eq 97 ]
	[ "$(last decision)" = deny ]
}

@test "upstream down: 502 saying why; the proxy stays up" {
	DEAD=$(free_port)
	start_proxy --allow-domain "127.0.0.1:$DEAD" --allow-cidr 127.0.0.1/32
	run curl -sS -i -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$DEAD/"
	[[ "$output" == "HTTP/1.1 502 Bad Gateway"* ]]
	[[ "$output" == *"Connection refused"* ]]
	[[ "$(last reason)" == *"cannot connect to 127.0.0.1: Connection refused" ]]
	kill -0 "$PROXY_PID"
}

@test "SIGHUP reloads the policy; a broken one keeps the old in force" {
	echo "{\"version\": 1, \"network\": {\"allow\": [\"127.0.0.1:$UP\"], \"allow_cidrs\": [\"127.0.0.1/32\"]}}" >p.json
	# The reloads counted are those every worker made (cordon(1)).
	METRICS=$(free_port)
	start_proxy --policy p.json --metrics "tcp:127.0.0.1:$METRICS"
	wait_listen "tcp:127.0.0.1:$METRICS"
	run curl -sS -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$UP/"
	[ "$output" = hello ]
	echo '{"version": 1, "network": {"allow": []}}' >p.json
	kill -HUP "$PROXY_PID"
	wait_for metric_is 'cordon_policy_reloads_total{result="ok"}' 1
	run curl -sS -i -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 403"* ]]
	echo '{"version": 1, "network": {"allow": [' >p.json
	kill -HUP "$PROXY_PID"
	wait_for metric_is 'cordon_policy_reloads_total{result="failed"}' 1
	grep -q "reload failed; the policy in force stays" "$BATS_TEST_TMPDIR/proxy.log"
	grep -q "p.json:2:" "$BATS_TEST_TMPDIR/proxy.log"
	run curl -sS -i -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 403"* ]]
	kill -0 "$PROXY_PID"
	# The log is reopened: logrotate moves it away, SIGHUP, a new file.
	mv "$LOG" "$LOG.1"
	kill -HUP "$PROXY_PID"
	# Each worker reopens its log after it read the policy (broken).
	wait_for metric_is 'cordon_policy_reloads_total{result="failed"}' 2
	curl -sS -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$UP/" || true
	# The line is written once the answer is out: curl may be first.
	for i in $(seq 100); do [ -s "$LOG" ] && break; sleep 0.05; done
	[ -s "$LOG" ]
}

@test "a policy that does not load: the proxy does not start" {
	echo '{"version": 1, "network": {"allow": ["bad name"]}}' >p.json
	run "$CORDON" proxy --listen "tcp:127.0.0.1:$(free_port)" --policy p.json
	[ "$status" -eq 1 ]
	[[ "$output" == *'p.json: network.allow[0]: "bad name"'* ]]
	[[ "$output" == *"no policy, not starting"* ]]
	run "$CORDON" proxy --listen tcp:0.0.0.0:3128
	[ "$status" -eq 1 ]
	[[ "$output" == *"not a loopback address"* ]]
}

@test "limits: slow heads time out, excess connections are closed" {
	# --max-conns is each worker's: one worker, for one limit.
	start_proxy --workers 1 --head-secs 1 --max-conns 3 \
	    --allow-domain "127.0.0.1:$UP"
	start=$(date +%s%N)
	run timeout 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PROXY;
	    printf 'GET http://127.0.0.1/ HTTP/1.1\r\n' >&3; cat <&3"
	elapsed=$((($(date +%s%N) - start) / 1000000))
	[ "$elapsed" -lt 5000 ]
	hold_conns "tcp:127.0.0.1:$PROXY" 3
	run timeout 5 curl -sS -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$UP/"
	[ "$status" -ne 0 ]
	kill -0 "$PROXY_PID"
	release_conns
}

@test "SIGTERM: tunnels drain, then exit 0" {
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	coproc SLOW { curl -sS -x "http://127.0.0.1:$PROXY" -p \
	    "http://127.0.0.1:$UP/slow/1500"; }
	# The tunnel is up once the origin has the request.
	wait_for grep -q /slow/1500 "$BATS_TEST_TMPDIR/origin.log"
	kill -TERM "$PROXY_PID"
	read -r -t 10 line <&"${SLOW[0]}"
	[ "$line" = slow ]
	run timeout 5 tail --pid="$PROXY_PID" -f /dev/null
	[ "$status" -eq 0 ]
	[ "$(last decision)" = allow ]
}

@test "an unprivileged user runs the proxy" {
	udir=$(mktemp -d)
	cp_cordon "$udir"
	PROXY=$(free_port)
	start_bg proxy as_user "$udir" "$udir/cordon" proxy \
	    --listen "tcp:127.0.0.1:$PROXY" --log "$udir/egress.log" \
	    --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	wait_listen "tcp:127.0.0.1:$PROXY"
	run curl -sS -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$UP/"
	[ "$output" = hello ]
	run curl -sS -i -x "http://127.0.0.1:$PROXY" "http://evil.test/"
	[[ "$output" == "HTTP/1.1 403"* ]]
	[ "$(end_lines "$udir/egress.log")" -eq 2 ]
	teardown_bg
	rm -rf "$udir"
}

@test "a sandbox listener takes the id from the bridge's PROXY v2 header" {
	SOCK="$BATS_TEST_TMPDIR/proxy.sock"
	PROXY=$(free_port)
	start_bg proxy "$CORDON" proxy --listen "tcp:127.0.0.1:$PROXY" \
	    --listen-sandbox "unix:$SOCK" --log "$LOG" \
	    --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	wait_listen "unix:$SOCK"
	wait_listen "tcp:127.0.0.1:$PROXY"
	F1=$(free_port)
	F2=$(free_port)
	start_bg b1 "$CORDON" bridge --listen "tcp:127.0.0.1:$F1" \
	    --connect "unix:$SOCK" --proxy-id sbx-one
	start_bg b2 "$CORDON" bridge --listen "tcp:127.0.0.1:$F2" \
	    --connect "unix:$SOCK"
	wait_listen "tcp:127.0.0.1:$F1"
	wait_listen "tcp:127.0.0.1:$F2"
	run curl -sS -x "http://127.0.0.1:$F1" "http://127.0.0.1:$UP/"
	[ "$output" = hello ]
	[ "$(last sandbox)" = sbx-one ]
	[ "$(last decision)" = allow ]
	# Without the header, the sandbox listener refuses, and logs it.
	run curl -sS -x "http://127.0.0.1:$F2" "http://127.0.0.1:$UP/"
	[ "$status" -ne 0 ]
	[ "$(last decision)" = deny ]
	[[ "$(last reason)" == "no PROXY protocol v2 header"* ]]
	# And the ordinary listener does not read one: a header there is
	# not a request.
	F3=$(free_port)
	start_bg b3 "$CORDON" bridge --listen "tcp:127.0.0.1:$F3" \
	    --connect "tcp:127.0.0.1:$PROXY" --proxy-id sbx-fake
	wait_listen "tcp:127.0.0.1:$F3"
	run curl -sS -i -x "http://127.0.0.1:$F3" "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 400"* ]]
	[ "$(last sandbox)" = null ]
}

@test "slow and silent clients, and excess ones, are closed and logged" {
	# --max-conns is each worker's: one worker, for one limit.
	start_proxy --workers 1 --head-secs 2 --max-conns 2 \
	    --allow-domain "127.0.0.1:$UP"
	# A byte a second keeps no connection past --head-secs in all.
	start=$(date +%s)
	run timeout 15 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PROXY;
	    for c in G E T ' ' h t t p : / / x; do printf %s \"\$c\" >&3 ||
	    exit 0; sleep 1; done; cat <&3"
	[ $(($(date +%s) - start)) -lt 6 ]
	[ "$(last decision)" = deny ]
	[ "$(last protocol)" = http ]
	[[ "$(last reason)" == "no whole request within 2 s (--head-secs)" ]]
	# Past --max-conns: closed at once, and a line says so.
	hold_conns "tcp:127.0.0.1:$PROXY" 2
	run timeout 5 curl -sS -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$UP/"
	[ "$status" -ne 0 ]
	[ "$(last reason)" = "too many connections (--max-conns)" ]
	release_conns
	# A SOCKS5 client offering only a password method: refused, logged.
	run bash -c "exec 3<>/dev/tcp/127.0.0.1/$PROXY; printf '\x05\x01\x02' >&3;
	    head -c 2 <&3 | od -An -tx1"
	[ "$(echo $output)" = "05 ff" ]
	[ "$(last protocol)" = socks5 ]
	[ "$(last decision)" = deny ]
}

@test "server-first tunnels: the banner goes out at once, and is counted" {
	BANNER=$(free_port)
	start_bg banner "$NETCHECK" serve "tcp:127.0.0.1:$BANNER" --banner 10
	wait_listen "tcp:127.0.0.1:$BANNER"
	start_proxy --allow-domain "127.0.0.1:$BANNER" --allow-cidr 127.0.0.1/32
	# The client reads the banner before it sends a byte, then answers.
	run timeout 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PROXY
	    printf 'CONNECT 127.0.0.1:$BANNER HTTP/1.1\r\nHost: x\r\n\r\n' >&3
	    head -c 49 <&3 | tail -c 10 | wc -c
	    printf 'hi' >&3"
	[ "$output" -eq 10 ]
	log_lines 1
	[ "$(last protocol)" = connect ]
	[ "$(last decision)" = allow ]
	[ "$(last bytes_down)" -eq 10 ]
	[ "$(last bytes_up)" -eq 2 ]
}

@test "keep-alive: the upstream connection is reused, and replaced when it closed" {
	teardown_bg
	UP=$(free_port)
	start_bg httpd "$HTTPD" --listen "tcp:127.0.0.1:$UP" --timeout 1 \
	    --log "$BATS_TEST_TMPDIR/origin.log"
	wait_listen "tcp:127.0.0.1:$UP"
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-domain "up2.test:$UP" \
	    --resolve up2.test:127.0.0.1 --allow-cidr 127.0.0.1/32
	cat >client.sh <<-'SH'
	exec 3<>"/dev/tcp/127.0.0.1/$1"
	r() {
		printf 'GET http://%s:%s/ HTTP/1.1\r\nHost: x\r\n\r\n' "$1" "$2" >&3
		while read -r -t 5 line <&3; do
			[ "$line" = hello ] && { echo got; return; }
		done
	}
	r 127.0.0.1 "$2"; r 127.0.0.1 "$2"; sleep 2; r 127.0.0.1 "$2"
	r up2.test "$2"
	SH
	run timeout 15 bash client.sh "$PROXY" "$UP"
	[ "$output" = "$(printf 'got\ngot\ngot\ngot')" ]
	[ "$(end_lines "$LOG")" -eq 4 ]
	[ "$(jq -r 'select(.event != "open") | .status' "$LOG" | sort -u)" = 200 ]
	[ "$(jq -r .host "$LOG" | tail -n 1)" = up2.test ]
}

@test "keep-alive: an answer or a request of Content-Length 0 ends at its head" {
	# Once, both waited for a body byte that never comes: the answer
	# until the upstream closed, the connection was not kept after the
	# request.
	start_proxy --allow-domain "up.test:$UP" --resolve up.test:127.0.0.1 \
	    --allow-cidr 127.0.0.1/32
	run timeout 10 curl -sS -o /dev/null -o /dev/null -o /dev/null \
	    -w '%{http_code} %{num_connects} ' -x "http://127.0.0.1:$PROXY" \
	    -X POST -H 'Content-Length: 0' "http://up.test:$UP/bytes/0" \
	    "http://up.test:$UP/bytes/0" "http://up.test:$UP/bytes/5"
	[ "$status" -eq 0 ]
	[ "$output" = "200 1 200 0 200 0 " ]
	[ "$(jq -r 'select(.event != "open") | .status' "$LOG" | sort -u)" = 200 ]
	[ "$(jq -r 'select(.event != "open") | .reason' "$LOG" | sort -u)" = null ]
}

@test "IPv6: HTTP, CONNECT and SOCKS5 to an IPv6 literal" {
	V6=$(free_port)
	start_bg httpd6 "$HTTPD" --listen "tcp:[::1]:$V6"
	wait_listen "tcp:[::1]:$V6"
	start_proxy --allow-domain "[::1]:$V6" --allow-cidr ::1/128
	run curl -sS -g -x "http://127.0.0.1:$PROXY" "http://[::1]:$V6/"
	[ "$output" = hello ]
	[ "$(last host)" = ::1 ]
	[ "$(last rule)" = "[::1]:$V6" ]
	run curl -sS -g -p -x "http://127.0.0.1:$PROXY" "http://[::1]:$V6/"
	[ "$output" = hello ]
	[ "$(last protocol)" = connect ]
	run curl -sS -g --socks5 "127.0.0.1:$PROXY" "http://[::1]:$V6/"
	[ "$output" = hello ]
	[ "$(last protocol)" = socks5 ]
	# Without the range, IPv6 loopback is refused like IPv4's.
	teardown_bg
	start_bg httpd6 "$HTTPD" --listen "tcp:[::1]:$V6"
	start_proxy --allow-domain "[::1]:$V6"
	run curl -sS -g -i -x "http://127.0.0.1:$PROXY" "http://[::1]:$V6/"
	[[ "$output" == "HTTP/1.1 403"* ]]
	[[ "$output" == *'add "::1/128" to network.allow_cidrs'* ]]
}

@test "SOCKS5 BIND and UDP ASSOCIATE are refused clearly" {
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32
	for cmd in 02 03; do
		run timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PROXY
		    printf '\x05\x01\x00\x05\x$cmd\x00\x01\x7f\x00\x00\x01\x00\x50' >&3
		    head -c 4 <&3 | od -An -tx1"
		[ "$(echo $output)" = "05 00 05 07" ]	# command not supported
		[ "$(last protocol)" = socks5 ]
		[ "$(last decision)" = deny ]
		[[ "$(last reason)" == "SOCKS5 "*" is not supported" ]]
	done
}

@test "the proxy's own port, localhost and case or dot variants are not a way round" {
	start_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr 127.0.0.1/32 \
	    --allow-domain "Up.Test.:$UP" --resolve up.test:127.0.0.1
	# A tunnel to the proxy itself: not listed, refused.
	run raw "CONNECT 127.0.0.1:$PROXY HTTP/1.1\r\nHost: x\r\n\r\n"
	[ "$output" = "HTTP/1.1 403 Forbidden" ]
	run raw "GET http://localhost:$UP/ HTTP/1.1\r\nHost: x\r\n\r\n"
	[ "$output" = "HTTP/1.1 403 Forbidden" ]
	run raw "GET http://localhost.:$UP/ HTTP/1.1\r\nHost: x\r\n\r\n"
	[ "$output" = "HTTP/1.1 403 Forbidden" ]
	# Case and one trailing dot are the same name, on both sides.
	run raw "GET http://UP.TEST.:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	[ "$output" = "HTTP/1.1 200 OK" ]
	run raw "GET http://up.test..:$UP/ HTTP/1.1\r\nHost: x\r\n\r\n"
	[[ "$output" == "HTTP/1.1 4"* ]]
	# SOCKS5 to a private address by literal: reply 2.
	run timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PROXY
	    printf '\x05\x01\x00\x05\x01\x00\x01\x0a\x00\x00\x01\x00\x50' >&3
	    head -c 4 <&3 | od -An -tx1"
	[ "$(echo $output)" = "05 00 05 02" ]
	[ "$(last reason)" = "no network.allow entry matches (default deny)" ]
}

@test "--only: the given policy alone, without the system's or the user's" {
	echo "{\"version\": 1, \"network\": {\"allow\": [\"127.0.0.1:$UP\"], \"allow_cidrs\": [\"127.0.0.1/32\"]}}" >system.json
	export CORDON_SYSTEM_POLICY="$PWD/system.json"
	start_proxy
	run curl -sS -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$UP/"
	[ "$output" = hello ]
	teardown_bg
	start_bg httpd "$HTTPD" --listen "tcp:127.0.0.1:$UP"
	wait_listen "tcp:127.0.0.1:$UP"
	echo '{"version": 1, "network": {"allow": []}}' >only.json
	start_proxy --only --policy only.json
	run curl -sS -i -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 403"* ]]
}

@test "a target that is one of the proxy's own listeners is refused, even when allowed: a loop" {
	PROXY=$(free_port)
	ANY=$(free_port)
	# Loopback allowed on purpose, every port: only the loop check stands.
	start_bg proxy "$CORDON" proxy --listen "tcp:127.0.0.1:$PROXY" \
	    --listen "tcp:0.0.0.0:$ANY" --allow-non-loopback --log "$LOG" \
	    --allow-cidr 127.0.0.0/8 --allow-domain '127.0.0.1:*' \
	    --allow-domain '127.0.0.2:*' --allow-domain 'self.test:*' \
	    --resolve self.test:127.0.0.1
	wait_listen "tcp:127.0.0.1:$PROXY"
	wait_listen "tcp:0.0.0.0:$ANY"
	# CONNECT to it: 403 with the reason and a hint, logged.
	run raw "CONNECT 127.0.0.1:$PROXY HTTP/1.1\r\nHost: x\r\n\r\n"
	[ "$output" = "HTTP/1.1 403 Forbidden" ]
	[ "$(last decision)" = deny ]
	[[ "$(last reason)" == *"the proxy's own listener: a loop"* ]]
	# Absolute-form HTTP, by address and by a name resolving to it.
	for u in "http://127.0.0.1:$PROXY/" "http://self.test:$PROXY/"; do
		run curl -sS -x "http://127.0.0.1:$PROXY" "$u"
		echo "$output"
		[[ "$output" == *"the proxy's own listener: a loop"* ]]
		[[ "$output" == *"hint: "* ]]
		[ "$(last status)" = 403 ]
	done
	# SOCKS5: reply 2, not allowed by the rule set.
	run curl -sS --socks5 "127.0.0.1:$PROXY" "http://127.0.0.1:$PROXY/"
	[ "$status" -eq 97 ]
	[ "$(last protocol)" = socks5 ]
	[ "$(last status)" = 2 ]
	[[ "$(last reason)" == *"the proxy's own listener: a loop"* ]]
	# A listener on 0.0.0.0 is reached by any local address.
	run raw "CONNECT 127.0.0.2:$ANY HTTP/1.1\r\nHost: x\r\n\r\n"
	[ "$output" = "HTTP/1.1 403 Forbidden" ]
	run raw "CONNECT 127.0.0.1:$ANY HTTP/1.1\r\nHost: x\r\n\r\n"
	[ "$output" = "HTTP/1.1 403 Forbidden" ]
	[[ "$(last reason)" == *"the proxy's own listener: a loop"* ]]
	# Another port of the same address still works (the control).
	run raw "CONNECT 127.0.0.1:$UP HTTP/1.1\r\nHost: x\r\n\r\n"
	[ "$output" = "HTTP/1.1 200 Connection established" ]
	run curl -sS -x "http://127.0.0.1:$PROXY" "http://self.test:$UP/"
	[ "$output" = hello ]
}

@test "a client that sends its request, the tunnel's first bytes and its end at once gets the echo: CONNECT and SOCKS5, TCP and a Unix sandbox listener" {
	ECHO=$(free_port)
	SOCK="$BATS_TEST_TMPDIR/proxy.sock"
	start_bg echo "$NETCHECK" echo "tcp:127.0.0.1:$ECHO"
	wait_listen "tcp:127.0.0.1:$ECHO"
	start_proxy --listen-sandbox "unix:$SOCK" \
	    --allow-domain "127.0.0.1:$ECHO" --allow-cidr 127.0.0.1/32
	wait_listen "unix:$SOCK"
	half="$BATS_TEST_DIRNAME/clients/halfclose.py"
	run python3 "$half" 50 "tcp:127.0.0.1:$PROXY" connect \
	    "127.0.0.1:$ECHO"
	[ "$status" -eq 0 ]
	[ "$output" = "50 of 50" ]
	run python3 "$half" 50 "tcp:127.0.0.1:$PROXY" socks \
	    "127.0.0.1:$ECHO"
	[ "$status" -eq 0 ]
	[ "$output" = "50 of 50" ]
	run python3 "$half" 50 "unix:$SOCK" connect "127.0.0.1:$ECHO" sbx-1
	[ "$status" -eq 0 ]
	[ "$output" = "50 of 50" ]
	run python3 "$half" 50 "unix:$SOCK" connect-answered \
	    "127.0.0.1:$ECHO" sbx-1
	[ "$status" -eq 0 ]
	[ "$output" = "50 of 50" ]
	run python3 "$half" 50 "unix:$SOCK" socks "127.0.0.1:$ECHO" sbx-1
	[ "$status" -eq 0 ]
	[ "$output" = "50 of 50" ]
	[ "$(last sandbox)" = sbx-1 ]
	[ "$(last bytes_up)" -eq 34 ]
}
