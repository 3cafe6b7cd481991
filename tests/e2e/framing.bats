#!/usr/bin/env bats
# Every framing of an answer arrives whole, on every path through the
# proxy: Content-Length, chunked, chunked with chunk extensions and
# trailer fields, close-delimited ended with close_notify, and
# close-delimited ended by a bare TCP close (no close_notify), over a
# forward HTTP request, a CONNECT tunnel, and an inspected TLS
# connection with and without a credential in the path (whose scrubber
# holds back the last bytes of each read).  Real curl against the test
# origin (tests/tools/httpd, /text/KIND/N); what arrived is compared
# with what was sent by length and sha256.

load helpers
bats_require_minimum_version 1.5.0

HTTPD="$TOOLS_DIR/httpd"
KINDS="length chunked ext close bare"

setup() {
	cordon_setup
	sandbox_setup
	T="$UDIR/tls"
	mkdir -p "$T"
	sh "$BATS_TEST_DIRNAME/../../mk/origin-cert.sh" "$T" api.test \
	    plain.test >/dev/null 2>&1
	TLS_PORT=$(free_port)
	start_bg origin "$HTTPD" --listen "tcp:127.0.0.1:$TLS_PORT" \
	    --tls-cert "$T/origin.pem" --tls-key "$T/origin.key"
	HTTP_PORT=$(free_port)
	start_bg plain "$HTTPD" --listen "tcp:127.0.0.1:$HTTP_PORT"
	wait_listen "tcp:127.0.0.1:$TLS_PORT"
	wait_listen "tcp:127.0.0.1:$HTTP_PORT"
	CADIR="$BATS_TEST_TMPDIR/ca"
	"$CORDON" ca init --dir "$CADIR" >/dev/null
	# api.test is inspected; plain.test is tunnelled as it is.
	POL="$UDIR/framing.json"
	write "$POL" <<-EOF
	{"version": 1,
	 "network": {
	   "allow": ["api.test:$TLS_PORT", "api.test:$HTTP_PORT",
	       "plain.test:$TLS_PORT"],
	   "allow_cidrs": ["127.0.0.1/32"],
	   "inspect": [{"host": "api.test", "methods": ["GET"],
	       "paths": ["/text/*"]}]},
	 "credentials": [{"host": "api.test", "env": "GITHUB_TOKEN",
	     "header": "Authorization", "format": "Bearer %s"}],
	 "tls": {"ca_dir": "$CADIR"}}
	EOF
	LOG="$BATS_TEST_TMPDIR/egress.log"
	if [ "$(id -u)" -eq 0 ]; then
		chown -R "$TEST_USER:" "$UDIR"
	fi
	chmod 644 "$POL"
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# Prints "200 N SHA256" for the N bytes /text/ sends.
want() {
	echo "200 $1 $(yes abcdefghijklmnopqrstuvwxyz0123456789 | head -c "$1" |
	    sha256sum | cut -d' ' -f1)"
}

# Fetches URL $1 with curl options $2... and prints "STATUS SIZE SHA256",
# or curl's error.
fetch() {
	local url=$1 out code rc
	shift
	out=$(mktemp)
	code=$(curl -sS "$@" -o "$out" -w '%{http_code}' "$url") && rc=0 ||
	    rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "curl $rc"
	else
		echo "$code $(stat -c %s "$out") $(sha256sum <"$out" |
		    cut -d' ' -f1)"
	fi
	rm -f "$out"
}

# Starts `cordon proxy` with the policy; PROXY is its port.
start_proxy() {
	PROXY=$(free_port)
	start_bg proxy "$CORDON" proxy --listen "tcp:127.0.0.1:$PROXY" \
	    --policy "$POL" --upstream-ca "$T/origin-ca.pem" \
	    --resolve api.test:127.0.0.1 --resolve plain.test:127.0.0.1 \
	    --log "$LOG"
	wait_listen "tcp:127.0.0.1:$PROXY" || {
		cat "$BATS_TEST_TMPDIR/proxy.log" >&2
		return 1
	}
}

# Checks every framing at sizes 180 and 300000 (past the proxy's
# buffer) through the proxy, the path being what the URL prefix $1 and
# curl options $2... make of it; one line per mismatch.
check_kinds() {
	local prefix=$1 kind n got bad=0
	shift
	for n in 180 300000; do
		for kind in $KINDS; do
			got=$(fetch "$prefix/text/$kind/$n" "$@")
			if [ "$got" != "$(want "$n")" ]; then
				echo "$prefix/text/$kind/$n: $got" >&2
				bad=1
			fi
		done
	done
	return "$bad"
}

@test "framing: the test origin sends each framing whole, directly" {
	check_kinds "https://api.test:$TLS_PORT" --cacert "$T/origin-ca.pem" \
	    --resolve "api.test:$TLS_PORT:127.0.0.1"
	check_kinds "http://127.0.0.1:$HTTP_PORT"
	# The bare close really has no close_notify, and ext its extensions.
	run openssl s_client -connect "127.0.0.1:$TLS_PORT" -quiet \
	    -servername api.test -CAfile "$T/origin-ca.pem" <<-EOF
	GET /text/bare/10 HTTP/1.1
	Host: api.test

	EOF
	[[ "$output" == *"unexpected eof while reading"* ]]
	run curl -sS --raw -H 'Connection: close' \
	    "http://127.0.0.1:$HTTP_PORT/text/ext/10"
	[[ "$output" == *'a ; n=0;q="a \"b\" ;c";x'* ]]
	[[ "$output" == *"X-Sum: none"* ]]
}

@test "framing: every framing arrives whole over a forward request" {
	start_proxy
	check_kinds "http://api.test:$HTTP_PORT" -x "http://127.0.0.1:$PROXY"
	# HTTP/1.0 gets the chunked ones close-delimited.
	check_kinds "http://api.test:$HTTP_PORT" -x "http://127.0.0.1:$PROXY" -0
}

@test "framing: every framing arrives whole through a CONNECT tunnel" {
	start_proxy
	check_kinds "https://plain.test:$TLS_PORT" -x "http://127.0.0.1:$PROXY" \
	    --cacert "$T/origin-ca.pem"
}

@test "framing: every framing arrives whole through an inspected connection" {
	start_proxy
	check_kinds "https://api.test:$TLS_PORT" -x "http://127.0.0.1:$PROXY" \
	    --cacert "$CADIR/ca.crt"
	check_kinds "https://api.test:$TLS_PORT" -x "http://127.0.0.1:$PROXY" \
	    --cacert "$CADIR/ca.crt" -H 'Connection: close' --limit-rate 20M
	# The bare close is passed on as one, and the log says it.
	run jq -r 'select(.event != "open") | select(.path == "/text/bare/180") | .reason' "$LOG"
	[[ "${lines[0]}" == *"without TLS close_notify"* ]]
	run jq -r 'select(.event != "open") | select(.path == "/text/close/180") | .reason' "$LOG"
	[ "${lines[0]}" = null ]
}

@test "framing: every framing arrives whole with a credential's scrubber in the path" {
	# cordon run fills in credentials; the run's own proxy inspects.
	cd "$WS"
	run env GITHUB_TOKEN=realsecret "$UCORDON" run --read-only "$UDIR/bin" \
	    --read-only "$T" --policy "$POL" --upstream-ca "$T/origin-ca.pem" \
	    --resolve api.test:127.0.0.1 --log "$LOG" --quiet -- \
	    bash -c "for n in 180 300000; do for k in $KINDS; do
		curl -sS -o /tmp/out -w \"\$k \$n %{http_code} %{size_download} \" \
		    https://api.test:$TLS_PORT/text/\$k/\$n || echo -n fail
		sha256sum </tmp/out | cut -d' ' -f1
	    done; done"
	echo "$output"
	[ "$status" -eq 0 ]
	for n in 180 300000; do
		for kind in $KINDS; do
			[[ "$output" == *"$kind $n $(want "$n")"* ]]
		done
	done
	# The log has every exchange.
	run jq -r 'select(.event != "open") | select(.protocol == "https") | .status' "$LOG"
	[ "${#lines[@]}" -eq 10 ]
}
