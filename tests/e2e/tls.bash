# tls.bash: loaded by the bats files that test a tls: listener
# (fleet.bats, identity.bats), after helpers.bash.  openssl makes the
# certificates once a file (clients/mkpki.sh); a python3 ssl client
# sends the PROXY v2 header inside TLS, then a request.

CLIENT="$BATS_TEST_DIRNAME/clients/mtls_client.py"

setup_file() {
	sh "$BATS_TEST_DIRNAME/clients/mkpki.sh" "$BATS_FILE_TMPDIR/pki"
}

# A test's own copy of the certificates in PKI, LOG for the proxy's log,
# an HTTP server on port UP and an echo server on port ECHO.
tls_setup() {
	cordon_setup
	PKI="$BATS_TEST_TMPDIR/pki"
	cp -r "$BATS_FILE_TMPDIR/pki" "$PKI"
	LOG="$BATS_TEST_TMPDIR/egress.log"
	UP=$(free_port)
	ECHO=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP"
	start_bg echo "$NETCHECK" echo "tcp:127.0.0.1:$ECHO"
	wait_listen "tcp:127.0.0.1:$UP"
	wait_listen "tcp:127.0.0.1:$ECHO"
}

# Starts the proxy with a tls: listener (TLS on its port, metrics on
# METRICS) and the flags given.
start_tls_proxy() {
	TLS=$(free_port)
	METRICS=$(free_port)
	start_bg proxy "$CORDON" proxy --listen-sandbox "tls:127.0.0.1:$TLS" \
	    --tls-cert "$PKI/server.crt" --tls-key "$PKI/server.key" \
	    --client-ca "$PKI/ca.crt" --metrics "tcp:127.0.0.1:$METRICS" \
	    --log "$LOG" "$@"
	PROXY_PID=$BG_PID
	wait_listen "tcp:127.0.0.1:$TLS"
	wait_listen "tcp:127.0.0.1:$METRICS"
}

# client NAME SANDBOX get URL | connect HOST:PORT; NAME - for none.
client() {
	local name=$1
	shift
	if [ "$name" = - ]; then
		python3 "$CLIENT" "$TLS" "$PKI/ca.crt" - - "$@"
	else
		python3 "$CLIENT" "$TLS" "$PKI/ca.crt" "$PKI/$name.crt" \
		    "$PKI/$name.key" "$@"
	fi
}

# The last line of the log, field $1.
last() {
	tail -n 1 "$LOG" | jq -r ".$1"
}
