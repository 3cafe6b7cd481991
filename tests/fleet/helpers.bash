# helpers.bash for tests/fleet: the tier of issue 31 on engines operators
# already run (HAProxy, etcd, Prometheus, rsyslog from Debian's archive),
# each started by hand in the foreground with its own configuration in
# the test's folder, on 127.0.0.1, and ended by pid (teardown_bg): no
# systemd, no file of the machine's.  make fleet-tier runs these.

load ../e2e/helpers

bats_require_minimum_version 1.5.0

CLIENT="$BATS_TEST_DIRNAME/../e2e/clients/mtls_client.py"
HOLD="$BATS_TEST_DIRNAME/hold_tunnel.py"

# The certificates of tests/e2e/fleet.bats (clients ci and dev, the
# server's for 127.0.0.1), once per file.
fleet_pki() {
	sh "$BATS_TEST_DIRNAME/../e2e/clients/mkpki.sh" "$BATS_FILE_TMPDIR/pki"
}

fleet_setup() {
	cordon_setup
	PKI="$BATS_FILE_TMPDIR/pki"
	F="$BATS_TEST_TMPDIR"
	R_TLS=()
	R_MET=()
	R_PID=()
}

# start_replica N FLAGS...: replica N of the tier, logging to $F/rN.log,
# its pid in $F/rN.pid; its ports in R_TLS[N] and R_MET[N].
start_replica() {
	local n=$1
	shift
	R_TLS[n]=$(free_port)
	R_MET[n]=$(free_port)
	start_bg "replica$n" "$CORDON" proxy \
	    --listen-sandbox "tls:127.0.0.1:${R_TLS[n]}" \
	    --tls-cert "$PKI/server.crt" --tls-key "$PKI/server.key" \
	    --client-ca "$PKI/ca.crt" --crl "$PKI/crl.pem" \
	    --metrics "tcp:127.0.0.1:${R_MET[n]}" --log "$F/r$n.log" \
	    --pid-file "$F/r$n.pid" "$@"
	R_PID[n]=$BG_PID
	wait_listen "tcp:127.0.0.1:${R_TLS[n]}"
	wait_listen "tcp:127.0.0.1:${R_MET[n]}"
}

# fleet_run PORT IDENTITY SANDBOX URL: one request through the tier at
# PORT as IDENTITY (a certificate of $PKI) with a sandbox id the test
# picks; prints the status line.  The python client speaks TLS and the
# PROXY v2 header itself: policy.bats and logs.bats count lines by that
# id, which `cordon run` picks itself.  lb.bats runs `cordon run`.
fleet_run() {
	python3 "$CLIENT" "$1" "$PKI/ca.crt" "$PKI/$2.crt" "$PKI/$2.key" \
	    "$3" get "$4"
}

# tier_files: the certificates of $PKI in $UDIR/pki, where the test user
# may read them (sandbox_setup first), and the tunnel client in bin/.
tier_files() {
	mkdir -p "$UDIR/pki"
	cp "$PKI"/*.crt "$PKI"/*.key "$PKI"/crl.pem "$UDIR/pki/"
	cp "$HOLD" "$UDIR/bin/"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/pki" "$UDIR/bin"
}

# tier_run me|user PORT IDENTITY ARGS... -- CMD: `cordon run --proxy
# tls://127.0.0.1:PORT` as IDENTITY (its certificate and key, the
# tier's CA), as whoever runs the tests or as the test user.
tier_run() {
	local who=$1 port=$2 id=$3
	shift 3
	set -- --proxy "tls://127.0.0.1:$port" \
	    --client-cert "$UDIR/pki/$id.crt" --client-key "$UDIR/pki/$id.key" \
	    --proxy-ca "$UDIR/pki/ca.crt" "$@"
	if [ "$who" = me ]; then
		in_sandbox_as_me "$@"
	else
		in_sandbox "$@"
	fi
}

# Prints the value of metric $2 (name with labels) of replica $1.
replica_metric() {
	curl -sS "http://127.0.0.1:${R_MET[$1]}/metrics" |
	    awk -v m="$2" '$1 == m { print $2 }'
}

# Prints the policy digest replica $1 enforces.
replica_digest() {
	curl -sS "http://127.0.0.1:${R_MET[$1]}/metrics" |
	    sed -n 's/^cordon_policy_info{digest="\(.*\)"} 1$/\1/p'
}

# Counts the established TCP connections to 127.0.0.1 port $1.
tcp_established() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v p=":$hex" '$3 ~ p"$" && $4 == "01" { n++ } END { print n + 0 }' \
	    /proc/net/tcp
}

# Prints the lines of `show stat` on HAProxy's stats socket $1.
haproxy_stat() {
	python3 - "$1" <<-'PY'
	import socket, sys
	s = socket.socket(socket.AF_UNIX)
	s.connect(sys.argv[1])
	s.sendall(b"show stat\n")
	data = b""
	while True:
	    chunk = s.recv(65536)
	    if not chunk:
	        break
	    data += chunk
	sys.stdout.write(data.decode())
	PY
}

# Prints the status (UP, DOWN, ...) of server $3 of backend $2 of the
# HAProxy whose stats socket is $1.
haproxy_status() {
	haproxy_stat "$1" | awk -F, -v b="$2" -v s="$3" \
	    '$1 == b && $2 == s { print $18 }'
}
