#!/usr/bin/env bats
# Beyond one machine, the first pieces: `cordon proxy --listen-sandbox
# tls:` asks every client for a certificate of --client-ca, logs the
# identity it names on each line, and refuses (and logs why) a client
# with no certificate, another CA's, an expired or a revoked one; a CRL
# read again on SIGHUP; --policy-watch reloading a policy replaced by
# mv or by a ConfigMap's symbolic link swap, a broken one kept out; the
# policy's digest and the identities' counters in /metrics; TLS
# inspection inside a tls: client's tunnel.  Real
# processes on 127.0.0.1: openssl makes the certificates (openssl ca),
# a python3 ssl client sends the PROXY v2 header inside TLS, then a
# request through the proxy to a local server.

load helpers
load tls

bats_require_minimum_version 1.5.0

setup() {
	tls_setup
}

teardown() {
	teardown_bg
	if [ -n "${UDIR:-}" ]; then
		sandbox_teardown
	fi
}

@test "fleet: an identity on every line of a tls: client; CONNECT and GET through it" {
	start_tls_proxy --allow-domain "127.0.0.1:$UP" \
	    --allow-domain "127.0.0.1:$ECHO" --allow-cidr 127.0.0.1/32 \
	    --crl "$PKI/crl.pem"
	run client ci ci-7 get "http://127.0.0.1:$UP/"
	[ "$status" -eq 0 ]
	[[ "$output" == "HTTP/1.1 200"* ]]
	log_lines 1
	[ "$(last identity)" = spiffe://corp/ci/runner ]
	[ "$(last sandbox)" = ci-7 ]
	[ "$(last decision)" = allow ]
	# The tunnel: no splice over TLS, the bytes go both ways.
	run client ci ci-7 connect "127.0.0.1:$ECHO"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "HTTP/1.1 200 Connection established" ]
	[ "${lines[1]}" = "ping through the tunnel" ]
	log_lines 2
	[ "$(last identity)" = spiffe://corp/ci/runner ]
	[ "$(last protocol)" = connect ]
	[ "$(last bytes_up)" -eq 24 ]
	[ "$(last bytes_down)" -eq 24 ]
	# 32 MiB down a tunnel whose client reads late: held at the bound
	# each way (the proxy stays small), every byte delivered.
	run client ci ci-7 tunnel "127.0.0.1:$UP" /bytes/33554432
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "HTTP/1.1 200 OK" ]
	[ "${lines[1]}" = 33554432 ]
	[ "$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$PROXY_PID/status")" -lt 24576 ]
	log_lines 3
	[ "$(last bytes_down)" -gt 33554432 ]
	# A CN-only certificate: its CN; a refusal by the policy names it.
	run client dev dev-1 get "http://127.0.0.1:$((UP + 1))/"
	[ "$status" -eq 0 ]
	[[ "$output" == "HTTP/1.1 403"* ]]
	log_lines 4
	[ "$(last identity)" = dev-laptop ]
	[ "$(last decision)" = deny ]
	# Every line has the twenty-five fields: identity and origin_uid
	# after the twenty, then credential, event and id.
	run jq -c 'select(.event != "open") | keys_unsorted | length' "$LOG"
	[ "$output" = "$(printf '25\n25\n25\n25')" ]
	run jq -r 'select(.event != "open") | keys_unsorted | .[-5:] | join(" ")' "$LOG"
	[ "${lines[0]}" = "identity origin_uid credential event id" ]
	[ "$(last origin_uid)" = null ]
	# cordon log reads the lines; tail scopes the id to its identity.
	run "$CORDON" log summary "$LOG"
	[ "$status" -eq 0 ]
	[[ "$output" == *"127.0.0.1"* ]]
	# Seven lines: three allowed exchanges' open and end, the refusal's.
	run "$CORDON" log tail -n 7 "$LOG"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *" ci-7@spiffe://corp/ci/runner open  GET 127.0.0.1:$UP" ]]
	[[ "${lines[1]}" == *" ci-7@spiffe://corp/ci/runner allow GET 127.0.0.1:$UP 200 "* ]]
	[[ "${lines[6]}" == *" dev-1@dev-laptop deny  GET "* ]]
}

@test "fleet: no certificate, another CA's, expired, revoked: refused and logged why" {
	start_tls_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr \
	    127.0.0.1/32 --crl "$PKI/crl.pem"
	local n=0 who why
	for who in -:no-certificate stranger:unknown-ca expired:expired \
	    revoked:revoked; do
		run client "${who%%:*}" s get "http://127.0.0.1:$UP/"
		[ "$status" -ne 0 ]
		[[ "$output" != *"HTTP/1.1"* ]]
		n=$((n + 1))
		log_lines "$n"
		[ "$(last decision)" = deny ]
		[ "$(last identity)" = null ]
		[ "$(last sandbox)" = null ]
	done
	run jq -r 'select(.event != "open") | .reason' "$LOG"
	[[ "${lines[0]}" == "TLS client refused: no client certificate"* ]]
	[[ "${lines[1]}" == "TLS client refused: a certificate of an unknown CA"*"subject /CN=stranger" ]]
	[[ "${lines[2]}" == "TLS client refused: an expired certificate"* ]]
	[[ "${lines[3]}" == "TLS client refused: a revoked certificate"* ]]
	for why in no-certificate unknown-ca expired revoked; do
		[ "$(metric "cordon_tls_refused_total{reason=\"$why\"}")" = 1 ]
	done
	# Each said on standard error too, with the fix.
	grep -q "hint: renew the client's certificate" \
	    "$BATS_TEST_TMPDIR/proxy.log"
	# A client retrying in a loop: a few lines a second, not one each.
	MTLS_REPEAT=50 client expired s get "http://127.0.0.1:$UP/" \
	    >/dev/null || true
	[ "$(metric 'cordon_tls_refused_total{reason="expired"}')" = 51 ]
	[ "$(grep -c 'an expired certificate' "$LOG")" -lt 20 ]
	# The next one written says how many were not: at the latest the
	# one after the window (a slow run spreads the 50 over windows, and
	# a line within them may say it first).
	n=$(end_lines "$LOG")
	sleep 1.1
	client expired s get "http://127.0.0.1:$UP/" >/dev/null || true
	log_lines $((n + 1))
	jq -e -s 'map(select(.event != "open") | .warning // "")
	    | map(select(test("more refusal\\(s\\) for the same reason were not logged")))
	    | length > 0' "$LOG"
}

@test "fleet: SIGHUP with a new CRL refuses a certificate that worked" {
	start_tls_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr \
	    127.0.0.1/32 --crl "$PKI/crl.pem"
	run client ci2 a get "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 200"* ]]
	# ca.cnf reads SAN from the environment (mkpki.sh).
	(cd "$PKI" && export SAN=URI:unused &&
	    openssl ca -batch -config ca.cnf -revoke ci2.crt &&
	    openssl ca -batch -config ca.cnf -gencrl -out crl.new) >/dev/null 2>&1
	# A broken CRL first: the one in force stays, and it says why.
	echo garbage >"$PKI/crl.pem"
	kill -HUP "$PROXY_PID"
	wait_for grep -q -- "--crl .*crl.pem: no CRL could be read from it.*the TLS files in force stay" \
	    "$BATS_TEST_TMPDIR/proxy.log"
	run client ci2 a get "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 200"* ]]
	mv "$PKI/crl.new" "$PKI/crl.pem"
	kill -HUP "$PROXY_PID"
	# Refused once the signal is handled, and logged as revoked.
	wait_for eval '! client ci2 a get "http://127.0.0.1:$UP/" >/dev/null'
	log_lines 3
	wait_for eval '[[ "$(last reason)" == "TLS client refused: a revoked certificate"* ]]'
	run client ci a get "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 200"* ]]
}

@test "fleet: a tls: listener without its files, with a key not its certificate's, or files unreadable: exit 125 and a hint" {
	local port
	port=$(free_port)
	run -125 "$CORDON" proxy --listen-sandbox "tls:127.0.0.1:$port" \
	    --tls-cert "$PKI/server.crt" --tls-key "$PKI/server.key"
	[[ "$output" == *"a tls: listener needs --tls-cert, --tls-key and --client-ca"* ]]
	[[ "$output" == *"hint: "* ]]
	run -125 "$CORDON" proxy --listen-sandbox "tls:127.0.0.1:$port" \
	    --tls-cert "$PKI/server.crt" --tls-key "$PKI/ci.key" \
	    --client-ca "$PKI/ca.crt"
	[[ "$output" == *"--tls-key $PKI/ci.key is not the key of --tls-cert"* ]]
	run -125 "$CORDON" proxy --listen-sandbox "tls:127.0.0.1:$port" \
	    --tls-cert "$PKI/server.crt" --tls-key "$PKI/server.key" \
	    --client-ca "$PKI/nonexistent.crt"
	[[ "$output" == *"--client-ca $PKI/nonexistent.crt"* ]]
	[[ "$output" == *"hint: each file must be readable"* ]]
	run -125 "$CORDON" proxy --listen-sandbox "tls:127.0.0.1:$port" \
	    --tls-cert "$PKI/server.crt" --tls-key "$PKI/server.key" \
	    --client-ca "$PKI/ca.crt" --crl "$PKI/ca.key"
	[[ "$output" == *"--crl $PKI/ca.key: no CRL could be read"* ]]
	# A key the user who runs it cannot read.
	sandbox_setup
	cp "$PKI/server.crt" "$PKI/server.key" "$PKI/ca.crt" "$UDIR/"
	chmod 000 "$UDIR/server.key"
	[ "$(id -u)" -ne 0 ] || chown root: "$UDIR/server.key"
	run -125 as_user "$UDIR/home" "$UCORDON" proxy \
	    --listen-sandbox "tls:127.0.0.1:$port" \
	    --tls-cert "$UDIR/server.crt" --tls-key "$UDIR/server.key" \
	    --client-ca "$UDIR/ca.crt"
	[[ "$output" == *"--tls-key $UDIR/server.key: "*"ermission denied"* ]]
	sandbox_teardown
	# TLS files without a tls: listener are a usage error.
	run -2 "$CORDON" proxy --listen "tcp:127.0.0.1:$port" \
	    --tls-cert "$PKI/server.crt"
	[[ "$output" == *"hint: add --listen-sandbox tls:HOST:PORT"* ]]
}

# write_policy FILE PORT: a policy allowing 127.0.0.1:PORT.
write_policy() {
	cat >"$1" <<-EOF
	{"version": 1, "network": {"allow": ["127.0.0.1:$2"],
	 "allow_cidrs": ["127.0.0.1/32"]}}
	EOF
}

# Waits up to 5 s for the digest in /metrics to differ from $1; prints it.
digest_change() {
	local d
	for i in $(seq 100); do
		d=$(curl -sS "http://127.0.0.1:$METRICS/metrics" |
		    sed -n 's/^cordon_policy_info{digest="\(.*\)"} 1$/\1/p')
		if [ "$d" != "$1" ]; then
			echo "$d"
			return 0
		fi
		sleep 0.05
	done
	echo "$1"
}

@test "fleet: --policy-watch reloads a policy replaced by mv and by a ConfigMap's symlink swap; a broken one is kept out" {
	local cm="$BATS_TEST_TMPDIR/cm" d0 d1 d2 d3 other
	other=$(free_port)
	start_bg other "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$other"
	wait_listen "tcp:127.0.0.1:$other"
	# A ConfigMap volume: policy.json -> ..data/policy.json, ..data ->
	# a timestamped folder, swapped by renaming a new link over it.
	mkdir -p "$cm/..2026_1"
	write_policy "$cm/..2026_1/policy.json" "$UP"
	ln -s ..2026_1 "$cm/..data"
	ln -s ..data/policy.json "$cm/policy.json"
	start_tls_proxy --policy "$cm/policy.json" --policy-watch
	d0=$(digest_change "")
	[[ "$d0" == sha256:* ]]
	run client ci a get "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 200"* ]]
	run client ci a get "http://127.0.0.1:$other/"
	[[ "$output" == "HTTP/1.1 403"* ]]

	# The swap, as the kubelet does it.
	mkdir "$cm/..2026_2"
	write_policy "$cm/..2026_2/policy.json" "$other"
	ln -s ..2026_2 "$cm/..data_tmp"
	mv -T "$cm/..data_tmp" "$cm/..data"
	d1=$(digest_change "$d0")
	[ "$d1" != "$d0" ]
	run client ci a get "http://127.0.0.1:$other/"
	[[ "$output" == "HTTP/1.1 200"* ]]
	[ "$(metric 'cordon_policy_reloads_total{result="ok"}')" = 1 ]

	# A broken revision: the one in force stays, and it says why.
	mkdir "$cm/..2026_3"
	echo '{"version": 1, "network": {"allow": [' \
	    >"$cm/..2026_3/policy.json"
	ln -s ..2026_3 "$cm/..data_tmp"
	mv -T "$cm/..data_tmp" "$cm/..data"
	for i in $(seq 100); do
		[ "$(metric 'cordon_policy_reloads_total{result="failed"}')" = 1 ] &&
		    break
		sleep 0.05
	done
	[ "$(metric 'cordon_policy_reloads_total{result="failed"}')" = 1 ]
	[ "$(digest_change "$d1")" = "$d1" ]
	grep -q "reload failed; the policy in force stays ($d1; a policy file changed)" \
	    "$BATS_TEST_TMPDIR/proxy.log"
	run client ci a get "http://127.0.0.1:$other/"
	[[ "$output" == "HTTP/1.1 200"* ]]

	# A plain file replaced by mv, in another proxy.
	kill "$PROXY_PID"
	write_policy "$BATS_TEST_TMPDIR/plain.json" "$UP"
	start_tls_proxy --policy "$BATS_TEST_TMPDIR/plain.json" --policy-watch
	d2=$(digest_change "")
	write_policy "$BATS_TEST_TMPDIR/new.json" "$other"
	mv "$BATS_TEST_TMPDIR/new.json" "$BATS_TEST_TMPDIR/plain.json"
	d3=$(digest_change "$d2")
	[ "$d3" != "$d2" ]
	# The same rules as the swapped ConfigMap's: the same digest.
	[ "$d3" = "$d1" ]
	run client ci a get "http://127.0.0.1:$other/"
	[[ "$output" == "HTTP/1.1 200"* ]]
}

@test "fleet: metrics count decisions by identity, never by sandbox id" {
	start_tls_proxy --allow-domain "127.0.0.1:$UP" --allow-cidr \
	    127.0.0.1/32
	client ci one get "http://127.0.0.1:$UP/"
	client ci two get "http://127.0.0.1:$UP/"
	client dev three get "http://127.0.0.1:$((UP + 1))/"
	log_lines 3
	[ "$(metric 'cordon_identity_connections_total{identity="spiffe://corp/ci/runner",decision="allow"}')" = 2 ]
	[ "$(metric 'cordon_identity_connections_total{identity="dev-laptop",decision="deny"}')" = 1 ]
	run curl -sS "http://127.0.0.1:$METRICS/metrics"
	[[ "$output" != *'"one"'* ]]
	[[ "$output" != *"three"* ]]
	[[ "$output" == *'cordon_policy_info{digest="sha256:'* ]]
}

@test "fleet: an inspected tunnel inside a tls: client's TLS: two layers, every byte, closed cleanly" {
	local T="$BATS_TEST_TMPDIR/tls" port
	mkdir -p "$T"
	sh "$BATS_TEST_DIRNAME/../../mk/origin-cert.sh" "$T" api.test
	port=$(free_port)
	start_bg origin "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$port" \
	    --tls-cert "$T/origin.pem" --tls-key "$T/origin.key"
	wait_listen "tcp:127.0.0.1:$port"
	"$CORDON" ca init --dir "$T/ca" >/dev/null
	write "$T/policy.json" <<-EOF
	{"version": 1,
	 "network": {"allow": ["api.test:$port"],
	   "allow_cidrs": ["127.0.0.1/32"],
	   "inspect": [{"host": "api.test", "methods": ["GET"],
	     "paths": ["/bytes/*"]}]},
	 "tls": {"ca_dir": "$T/ca"}}
	EOF
	start_tls_proxy --only --policy "$T/policy.json" \
	    --resolve api.test:127.0.0.1 --upstream-ca "$T/origin-ca.pem"
	# 3 MiB: more than the proxy buffers each way, ended by a close.
	run client ci ci-9 inspect "api.test:$port" /bytes/3145728 \
	    "$T/ca/ca.crt"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "HTTP/1.1 200 OK" ]
	[ "${lines[1]}" = 3145728 ]
	log_lines 1
	[ "$(last protocol)" = https ]
	[ "$(last identity)" = spiffe://corp/ci/runner ]
	[ "$(last sandbox)" = ci-9 ]
	[ "$(last bytes_down)" -eq 3145728 ]
	# A path the rules do not admit: refused inside, and logged so.
	run client ci ci-9 inspect "api.test:$port" /secret "$T/ca/ca.crt"
	[ "${lines[0]}" = "HTTP/1.1 403 Forbidden" ]
	log_lines 2
	[ "$(last decision)" = deny ]
	[ "$(last identity)" = spiffe://corp/ci/runner ]
}

# Remote sandboxes: `cordon run --proxy tls://` reaches a tier.  The
# tier: a tls: listener with the operator's policy (up.test allowed,
# two.test denied by name), names resolved to the local server.
start_tier() {
	cat >"$BATS_TEST_TMPDIR/op.json" <<-EOF2
	{"version": 1, "network": {"allow": ["up.test:$UP", "up.test:$ECHO",
	 "three.test:$UP"], "deny": ["two.test"],
	 "allow_cidrs": ["127.0.0.1/32"]}}
	EOF2
	start_tls_proxy --policy "$BATS_TEST_TMPDIR/op.json" \
	    --resolve up.test:127.0.0.1 --resolve two.test:127.0.0.1 \
	    --resolve three.test:127.0.0.1 "$@"
}

# The run's files, where the test user may read them; RFILES the flags.
remote_files() {
	mkdir -p "$UDIR/pki"
	cp "$PKI"/ca.crt "$PKI"/other-ca.crt "$PKI"/ci.crt "$PKI"/ci.key \
	    "$PKI"/stranger.crt "$PKI"/stranger.key "$UDIR/pki/"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/pki"
	RFILES=(--client-cert "$UDIR/pki/ci.crt" --client-key
	    "$UDIR/pki/ci.key" --proxy-ca "$UDIR/pki/ca.crt")
}

# remote_run USER|me ARGS... -- CMD: cordon run as the test user or as
# whoever runs the tests.
remote_run() {
	local who=$1
	shift
	if [ "$who" = me ]; then
		in_sandbox_as_me "$@"
	else
		in_sandbox "$@"
	fi
}

@test "remote: cordon run --proxy tls:// as spiffe://corp/ci/runner: allowed, refused with the operator's fix, the report, the capture, --deny-domain narrowing; as root and as the test user" {
	start_tier
	sandbox_setup
	remote_files
	local who
	for who in me user; do
		: >"$LOG"
		run --separate-stderr remote_run "$who" \
		    --proxy "tls://127.0.0.1:$TLS" "${RFILES[@]}" \
		    --report "$WS/r.json" -- sh -c "
		    curl -s -o /dev/null -w '%{http_code} ' http://up.test:$UP/
		    curl -s -o /dev/null -w '%{http_code} ' http://two.test:$UP/
		    curl --noproxy '*' -s -o /dev/null -w '%{http_code}' \
		        http://up.test:$UP/"
		[ "$status" -eq 0 ]
		[ "$output" = "200 403 200" ]
		# The summary: the operator's rule, and the fix is theirs.
		[[ "$stderr" == *"refused 1 connection: two.test:$UP"* ]]
		[[ "$stderr" == *"the operator's proxy (tls://127.0.0.1:$TLS) refuses it by \"two.test\""*"ask its operator"* ]]
		[ "$(jq -r '.refused[0].host' "$WS/r.json")" = two.test ]
		[ "$(jq -r '.refused[0].rule' "$WS/r.json")" = two.test ]
		[ "$(jq -r '.setup.proxy_socket' "$WS/r.json")" = \
		    "tls://127.0.0.1:$TLS" ]
		# The tier: the identity on each line, the capture's too.
		log_lines 3
		[ "$(jq -r 'select(.event != "open") | .identity' "$LOG" | sort -u)" = spiffe://corp/ci/runner ]
		[ "$(jq -r 'select(.event != "open") | .protocol' "$LOG" | tr '\n' ' ')" = \
		    "http http capture " ]
		[ "$(jq -r 'select(.event != "open") | .sandbox' "$LOG" | sort -u | wc -l)" -eq 1 ]
		# The run's own narrowing: up.test refused, the fix is the run's.
		run --separate-stderr remote_run "$who" \
		    --proxy "tls://127.0.0.1:$TLS" "${RFILES[@]}" \
		    --deny-domain up.test -- \
		    curl -s -o /dev/null -w '%{http_code}' "http://up.test:$UP/"
		[ "$output" = 403 ]
		[[ "$stderr" == *"this run's own rules refuse it (\"up.test\""* ]]
	done
	# A client that ends its side of a tunnel still gets the answer:
	# its end reaches the tier as close_notify.  (Its first bytes are
	# echoed before: a tls: client's end that comes with the first
	# bytes of a tunnel, before the tier has judged them, ends the
	# tunnel on the tier.)
	cat >"$WS/half.py" <<-EOF2
	import os, socket
	h, p = os.environ["http_proxy"].split("//")[1].rstrip("/").rsplit(":", 1)
	s = socket.create_connection((h, int(p)))
	s.sendall(b"CONNECT up.test:$ECHO HTTP/1.1\r\nHost: up.test\r\n\r\n")
	buf = b""
	while b"\r\n\r\n" not in buf:
	    buf += s.recv(100)
	data = buf.split(b"\r\n\r\n", 1)[1]
	s.sendall(b"ping, ")
	while len(data) < 6:
	    data += s.recv(100)
	s.sendall(b"then my end\n")
	s.shutdown(socket.SHUT_WR)
	while True:
	    d = s.recv(100)
	    if not d:
	        break
	    data += d
	print(data.decode(), end="")
	EOF2
	run remote_run user --quiet --proxy "tls://127.0.0.1:$TLS" \
	    "${RFILES[@]}" -- timeout 10 python3 half.py
	[ "$status" -eq 0 ]
	[ "$output" = "ping, then my end" ]
	# --ask over the run's TLS channel: three.test, which the operator
	# allows and the run's narrowing does not, is asked about.
	CTL="$UDIR/ctl.sock"
	start_bg harness as_user "$UDIR/home" "$UDIR/bin/harness" \
	    --listen "$CTL" --answer allow-once --answer deny
	wait_listen "unix:$CTL"
	run --separate-stderr remote_run user --quiet \
	    --proxy "tls://127.0.0.1:$TLS" "${RFILES[@]}" \
	    --allow-domain "up.test:$UP" --control "$CTL" --ask --ask-secs 5 \
	    -- sh -c "
	    curl -s -o /dev/null -w '%{http_code} ' http://three.test:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://three.test:$UP/"
	[ "$status" -eq 0 ]
	[ "$output" = "200 403" ]
	[ "$(grep -c '"event":"ask"' "$BATS_TEST_TMPDIR/harness.log")" -eq 2 ]
}

@test "remote: preflight: another CA, no certificate, a certificate of another CA, a plain listener: nothing runs (125) and a hint" {
	start_tier
	sandbox_setup
	remote_files
	local plain
	plain=$(free_port)
	start_bg plain "$CORDON" proxy --listen-sandbox "tcp:127.0.0.1:$plain" \
	    --allow-domain up.test
	wait_listen "tcp:127.0.0.1:$plain"
	run -125 remote_run user --proxy "tls://127.0.0.1:$TLS" \
	    --client-cert "$UDIR/pki/ci.crt" --client-key "$UDIR/pki/ci.key" \
	    --proxy-ca "$UDIR/pki/other-ca.crt" -- sh -c 'echo ran >ran'
	[[ "$output" == *"shows a certificate that does not verify against --proxy-ca"* ]]
	[[ "$output" == *"hint: --proxy-ca must be the CA that signed"* ]]
	run -125 remote_run user --proxy "tls://127.0.0.1:$TLS" \
	    --proxy-ca "$UDIR/pki/ca.crt" -- sh -c 'echo ran >ran'
	[[ "$output" == *"the tier needs a client certificate"* ]]
	[[ "$output" == *"hint: add --client-cert FILE"* ]]
	run -125 remote_run user --proxy "tls://127.0.0.1:$TLS" \
	    --client-cert "$UDIR/pki/stranger.crt" \
	    --client-key "$UDIR/pki/stranger.key" \
	    --proxy-ca "$UDIR/pki/ca.crt" -- sh -c 'echo ran >ran'
	[[ "$output" == *"it refused the client certificate"* ]]
	run -125 remote_run user --proxy "tls://127.0.0.1:$plain" \
	    "${RFILES[@]}" -- sh -c 'echo ran >ran'
	[[ "$output" == *"no TLS session with the tier 127.0.0.1:$plain"* ]]
	[[ "$output" == *"hint: the tier must be a cordon proxy listening with --listen-sandbox tls:"* ]]
	[ ! -e "$WS/ran" ]
}

@test "remote: a user who may not read the key is told of the node-local originator; through it the run works, the tier logs the user's uid under the host's identity" {
	start_tier
	sandbox_setup
	remote_files
	local tuid sock="$UDIR/orig/proxy.sock"
	tuid=$(id -u "$TEST_USER" 2>/dev/null || id -u)
	if [ "$(id -u)" -eq 0 ]; then
		chown root: "$UDIR/pki/ci.key"
		chmod 600 "$UDIR/pki/ci.key"
		run -125 remote_run user --proxy "tls://127.0.0.1:$TLS" \
		    "${RFILES[@]}" -- sh -c 'echo ran >ran'
		[[ "$output" == *"the client key $UDIR/pki/ci.key cannot be read"*"ermission denied"* ]]
		[[ "$output" == *"hint: "*"node-local originator: run with --proxy-socket PATH of it"* ]]
		[ ! -e "$WS/ran" ]
	fi
	# The originator holds the key (root's, when root).
	mkdir -p "$UDIR/orig"
	start_bg orig "$CORDON" bridge --listen "unix:$sock" \
	    --connect "tls:127.0.0.1:$TLS" "${RFILES[@]}"
	wait_listen "unix:$sock"
	chmod 666 "$sock"
	: >"$LOG"
	run --separate-stderr remote_run user --proxy-socket "$sock" \
	    --report "$WS/r.json" -- sh -c "
	    curl -s -o /dev/null -w '%{http_code} ' http://up.test:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://two.test:$UP/"
	[ "$status" -eq 0 ]
	[ "$output" = "200 403" ]
	[[ "$stderr" == *"refuses it by \"two.test\""* ]]
	[ "$(jq -r '.refused[0].host' "$WS/r.json")" = two.test ]
	log_lines 2
	[ "$(jq -r 'select(.event != "open") | .identity' "$LOG" | sort -u)" = spiffe://corp/ci/runner ]
	[ "$(jq -r 'select(.event != "open") | .origin_uid' "$LOG" | sort -u)" = "$tuid" ]
	[ "$(jq -r 'select(.event != "open") | .uid' "$LOG" | sort -u)" = null ]
	# A header that names an origin uid of its own is refused there.
	run python3 -c '
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
tlv = bytes([0x05, 0, 2]) + b"id" + bytes([0xe5, 0, 1]) + b"0"
hdr = b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x21, 0]) + struct.pack("!H", len(tlv)) + tlv
s.sendall(hdr + b"GET http://up.test/ HTTP/1.1\r\nHost: up.test\r\n\r\n")
print(len(s.recv(100)))' "$sock"
	[ "$output" = 0 ]
}

# The words of the originator unit's ExecStart as `make install` wrote it
# under $ROOT, into ARGV, each ${VAR} as systemd expands it (one word,
# empty when unset): CORDON_TIER from the environment file (its path
# under $ROOT, if there), the runtime folder $1 and the credentials
# folder $2; the binary under $ROOT and the group cordon-users as $3.
originator_argv() {
	local unit="$ROOT/usr/lib/systemd/system/cordon-originator.service"
	local env tier= w
	env=$(sed -n 's/^EnvironmentFile=//p' "$unit")
	[ -f "$ROOT$env" ] && tier=$(sed -n 's/^CORDON_TIER=//p' "$ROOT$env")
	ARGV=()
	while IFS= read -r w; do
		w=${w//'${RUNTIME_DIRECTORY}'/$1}
		w=${w//'${CREDENTIALS_DIRECTORY}'/$2}
		w=${w//'${CORDON_TIER}'/$tier}
		[ "$w" != /usr/bin/cordon ] || w=$ROOT/usr/bin/cordon
		[ "$w" != cordon-users ] || w=$3
		ARGV+=("$w")
	done < <(awk '/^ExecStart=/ { on = 1; sub(/^ExecStart=/, "") }
	    on { l = $0; more = sub(/\\$/, "", l); n = split(l, w, /[ \t]+/);
	    for (i = 1; i <= n; i++) if (w[i] != "") print w[i];
	    if (!more) exit }' "$unit")
}

# Runs ARGV as the unit's service user would be: a uid of no account
# (DynamicUser=), in the group $1 as well (SupplementaryGroups=), with
# the unit's UMask=; fd 3 closed, output in $2.
originator_start() {
	setpriv --reuid="$SVC_UID" --regid="$SVC_UID" --groups="$1" \
	    --inh-caps=-all --bounding-set=-all sh -c 'umask 027; exec "$@"' \
	    sh "${ARGV[@]}" >"$2" 2>&1 3>&- &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

@test "make install: the installed cordon-originator.service's command line relays cordon run --proxy-socket to the tier: 200, 403, the host's identity and the user's uid; unconfigured it does not start and says why" {
	[ "$(id -u)" -eq 0 ] || skip "the socket's group, a service user and a second user: needs root"
	start_tier
	sandbox_setup
	SVC_UID=61999
	local gid tuid unit w f
	gid=$(id -g "$TEST_USER")
	tuid=$(id -u "$TEST_USER")
	# Under UDIR (0755), where the service user may reach the binary.
	ROOT="$UDIR/root"
	make_install DESTDIR="$ROOT" PREFIX=/usr
	unit="$ROOT/usr/lib/systemd/system/cordon-originator.service"
	[ -f "$unit" ]
	# The documented steps: the group, then the key's folder, root's.
	systemd-sysusers --root="$ROOT" cordon.conf
	grep -q '^cordon-users:' "$ROOT/etc/group"
	systemd-tmpfiles --root="$ROOT" --create cordon.conf
	[ "$(stat -c '%a %U' "$ROOT/etc/cordon/originator")" = "700 root" ]
	RUNDIR="$UDIR/run"
	CREDS="$UDIR/creds"
	mkdir "$RUNDIR" "$CREDS"
	chown "$SVC_UID:$SVC_UID" "$RUNDIR" "$CREDS"
	chmod 755 "$RUNDIR"

	# Not configured: every file it reads is asserted before a start
	# (systemctl status names the missing one); with no CORDON_TIER the
	# command line itself stops, exit 2, and says where it goes.
	for f in "$(sed -n 's/^EnvironmentFile=//p' "$unit")" \
	    $(sed -n 's/^LoadCredential=[^:]*://p' "$unit"); do
		grep -qxF "AssertPathExists=$f" "$unit"
	done
	originator_argv "$RUNDIR" "$CREDS" "$gid"
	printf '%s\n' "${ARGV[@]}"
	[ "${ARGV[1]}" = bridge ]
	for w in "${ARGV[@]}"; do
		[[ "$w" != *'${'* ]]
	done
	run -2 "${ARGV[@]}"
	[[ "$output" == *"bridge: --connect is empty: nothing to relay to"* ]]
	[[ "$output" == *"hint: "*"CORDON_TIER= in its EnvironmentFile"* ]]
	[ ! -e "$RUNDIR/tier.sock" ]

	# Configured as docs/fleet.md says: the host's files, root's alone;
	# systemd gives the service its copies (LoadCredential=), 0400 its.
	install -m 0600 "$PKI/ci.crt" "$ROOT/etc/cordon/originator/client.crt"
	install -m 0600 "$PKI/ci.key" "$ROOT/etc/cordon/originator/client.key"
	install -m 0600 "$PKI/ca.crt" "$ROOT/etc/cordon/originator/ca.crt"
	echo "CORDON_TIER=tls:127.0.0.1:$TLS" >"$ROOT/etc/cordon/originator.env"
	sed -n 's/^LoadCredential=//p' "$unit" | while IFS=: read -r w f; do
		install -m 0400 -o "$SVC_UID" "$ROOT$f" "$CREDS/$w"
	done
	chmod 500 "$CREDS"
	originator_argv "$RUNDIR" "$CREDS" "$gid"
	[[ " ${ARGV[*]} " == *" --listen unix:$RUNDIR/tier.sock "* ]]
	[[ " ${ARGV[*]} " == *" --connect tls:127.0.0.1:$TLS "* ]]
	originator_start "$gid" "$BATS_TEST_TMPDIR/orig.log"
	wait_listen "unix:$RUNDIR/tier.sock" ||
	    { cat "$BATS_TEST_TMPDIR/orig.log"; false; }
	[ "$(stat -c '%a %g %u' "$RUNDIR/tier.sock")" = "660 $gid $SVC_UID" ]

	# A member of the group runs through it: the tier's rules, the
	# host's identity, the user's uid.
	: >"$LOG"
	run --separate-stderr in_sandbox --proxy-socket "$RUNDIR/tier.sock" \
	    --report "$WS/r.json" -- sh -c "
	    curl -s -o /dev/null -w '%{http_code} ' http://up.test:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://two.test:$UP/"
	echo "$output"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "200 403" ]
	[[ "$stderr" == *"refuses it by \"two.test\""* ]]
	[ "$(jq -r '.refused[0].host' "$WS/r.json")" = two.test ]
	log_lines 2
	[ "$(jq -r 'select(.event != "open") | .identity' "$LOG" | sort -u)" = spiffe://corp/ci/runner ]
	[ "$(jq -r 'select(.event != "open") | .origin_uid' "$LOG" | sort -u)" = "$tuid" ]
	[ "$(jq -r 'select(.event != "open") | "\(.host) \(.decision)"' "$LOG" | sort | tr '\n' ' ')" = \
	    "two.test deny up.test allow " ]
	# The user may read neither the key nor the service's copy.
	run as_user "$UDIR/home" cat "$ROOT/etc/cordon/originator/client.key"
	[ "$status" -ne 0 ]
	run as_user "$UDIR/home" cat "$CREDS/client.key"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Permission denied"* ]]
	# Anyone else may not connect: nothing runs, and the fix is said.
	run -125 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	    --reset-env env HOME=/nonexistent XDG_CONFIG_HOME=/nonexistent \
	    CORDON_SYSTEM_POLICY= "$UCORDON" run --workspace "$WS" \
	    --proxy-socket "$RUNDIR/tier.sock" -- true
	[[ "$output" == *"cannot connect to the proxy socket $RUNDIR/tier.sock: Permission denied"* ]]
	[[ "$output" == *"usermod -aG $(id -gn "$TEST_USER") nobody"* ]]
}

@test "remote: the system policy's tier: a run without flags goes there; a user who may not read its key is told of the originator (125); a workspace may not name one" {
	start_tier
	sandbox_setup
	remote_files
	local sys="$UDIR/system.json"
	cat >"$sys" <<-EOF2
	{"version": 1, "tier": {"proxy": "tls://127.0.0.1:$TLS",
	 "client_cert": "$UDIR/pki/ci.crt", "client_key": "$UDIR/pki/ci.key",
	 "proxy_ca": "$UDIR/pki/ca.crt"}}
	EOF2
	chmod 644 "$sys"
	CORDON_SYSTEM_POLICY="$sys" run "$CORDON" policy show
	[ "$status" -eq 0 ]
	[ "$(jq -r .tier.proxy.value <<<"$output")" = "tls://127.0.0.1:$TLS" ]
	[ "$(jq -r .tier.client_key.from <<<"$output")" = \
	    "$sys: tier.client_key" ]
	cd "$WS"
	: >"$LOG"
	CORDON_SYSTEM_POLICY="$sys" run --separate-stderr "$UCORDON" run \
	    --read-only "$UDIR/bin" --report "$WS/r.json" -- sh -c "
	    curl -s -o /dev/null -w '%{http_code} ' http://up.test:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://two.test:$UP/"
	[ "$status" -eq 0 ]
	[ "$output" = "200 403" ]
	[[ "$stderr" == *"the operator's proxy (tls://127.0.0.1:$TLS) refuses it by \"two.test\""* ]]
	log_lines 2
	[ "$(jq -r 'select(.event != "open") | .identity' "$LOG" | sort -u)" = spiffe://corp/ci/runner ]
	if [ "$(id -u)" -eq 0 ]; then
		# The key is root's: the test user is sent to the originator.
		chown root: "$UDIR/pki/ci.key"
		chmod 600 "$UDIR/pki/ci.key"
		run -125 as_user "$UDIR/home" env CORDON_SYSTEM_POLICY="$sys" \
		    "$UCORDON" run --read-only "$UDIR/bin" -- \
		    sh -c 'echo ran >ran'
		[[ "$output" == *"the client key $UDIR/pki/ci.key cannot be read"* ]]
		[[ "$output" == *"node-local originator: run with --proxy-socket PATH of it"* ]]
		[ ! -e "$WS/ran" ]
	fi
	# Half a tier is no tier.
	echo '{"version": 1, "tier": {"proxy": "tls://127.0.0.1:1"}}' >"$sys"
	CORDON_SYSTEM_POLICY="$sys" run -125 "$UCORDON" run -- true
	[[ "$output" == *"has no tier.client_cert"* ]]
	# A workspace policy may not pick the tier.
	mkdir -p "$WS/.cordon"
	echo '{"version": 1, "tier": {"proxy": "tls://127.0.0.1:1"}}' \
	    >"$WS/.cordon/policy.json"
	run -125 "$UCORDON" run -- true
	[[ "$output" == *"a workspace policy may not name the egress tier"* ]]
}

@test "fleet: a tls: client's handshake end, request, tunnel bytes and close_notify in one write: the echo comes back, CONNECT and SOCKS5; the same once the CONNECT is answered" {
	start_tls_proxy --allow-domain "127.0.0.1:$ECHO" \
	    --allow-cidr 127.0.0.1/32
	half="$BATS_TEST_DIRNAME/clients/halfclose.py"
	for kind in connect socks connect-answered; do
		run python3 "$half" 50 "tls:127.0.0.1:$TLS" "$kind" \
		    "127.0.0.1:$ECHO" ci-7 "$PKI/ca.crt" "$PKI/ci.crt" \
		    "$PKI/ci.key"
		echo "$output" | tail -3 >&2
		[ "${lines[-1]}" = "50 of 50" ]
		[ "$status" -eq 0 ]
	done
	log_lines 150
	[ "$(last identity)" = spiffe://corp/ci/runner ]
	[ "$(last bytes_up)" -eq 34 ]
	[ "$(last bytes_down)" -eq 34 ]
}

@test "fleet: draining, a tls: listener is closed at once: a new client is refused, not queued" {
	PLAIN=$(free_port)
	start_tls_proxy --listen "tcp:127.0.0.1:$PLAIN" \
	    --allow-domain "127.0.0.1:$ECHO" --allow-cidr 127.0.0.1/32
	# The tunnel held is a plain listener's; the new client is TLS's,
	# turned away before its handshake.
	run python3 "$BATS_TEST_DIRNAME/clients/drain.py" "$PROXY_PID" \
	    "127.0.0.1:$ECHO" "tcp:127.0.0.1:$PLAIN" "tcp:127.0.0.1:$TLS"
	echo "$output" >&2
	[[ "${lines[1]}" == "new tcp:127.0.0.1:$TLS: refused in 0.0"* ]]
	[ "${lines[2]}" = "tunnel: echoed" ]
	[ "$status" -eq 0 ]
}

@test "remote: a refusal that is the run's last request is in its summary and report, 20 runs of 20" {
	# Two workers: the run's connections must meet its channel.
	start_tier --workers 2
	sandbox_setup
	remote_files
	local k named=0
	for k in $(seq 20); do
		run --separate-stderr remote_run user \
		    --proxy "tls://127.0.0.1:$TLS" "${RFILES[@]}" \
		    --report "$WS/r.json" -- sh -c "
		    curl -s -o /dev/null http://up.test:$UP/
		    curl -s -o /dev/null http://ci.test:$UP/"
		if [[ "$stderr" == *"refused 1 connection: ci.test:$UP"* ]] &&
		    [ "$(jq -r '.refused[0].host' "$WS/r.json")" = ci.test ]; then
			named=$((named + 1))
		else
			echo "run $k: the summary misses it: $stderr" >&2
		fi
	done
	echo "$named of 20 runs named the refusal" >&2
	[ "$named" -eq 20 ]
}
