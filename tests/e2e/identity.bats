#!/usr/bin/env bats
# A policy per identity: `cordon proxy --listen-sandbox tls:` decides a
# client with the operator's policy joined by the layer of the first
# "identities" rule its certificate's identity matches; "report" lets
# through, warned, what that would refuse; a rule's limits refuse a
# tunnel past max_tunnels or a request past new_per_second (429, SOCKS5
# general failure); `policy explain --identity` says the same; a layer
# replaced is reloaded (--policy-watch), a broken one kept out.  Real
# processes on 127.0.0.1: openssl makes the certificates, python3 ssl
# clients send the PROXY v2 header inside TLS, then requests.

load helpers
load tls

bats_require_minimum_version 1.5.0

TUNNELS="$BATS_TEST_DIRNAME/clients/ident_tunnels.py"

setup() {
	tls_setup
	POL="$BATS_TEST_TMPDIR/policy"
	mkdir -p "$POL"
}

teardown() {
	teardown_bg
}

# The operator's policy: 127.0.0.1 may be reached (allow_cidrs) but no
# port of it is allowed, and the echo server's is denied outright; ci's
# layer allows both ports, dev's nothing; $1 is dev's action, $2 ci's
# limits (a JSON object), $3 the default.
write_policies() {
	write "$POL/op.json" <<-EOF
	{"version": 1,
	 "network": {"allow_cidrs": ["127.0.0.1/32"],
	             "deny": ["127.0.0.1:$ECHO"]},
	 "identities": {
	   "rules": [
	     {"match": "spiffe://corp/ci/runner", "policy": "ci.json",
	      "limits": ${2:-{\}}},
	     {"match": "dev-laptop", "policy": "dev.json",
	      "action": "${1:-enforce}"}],
	   "default": ${3:-\"deny\"}}}
	EOF
	write "$POL/ci.json" <<-EOF
	{"version": 1, "network": {"allow": ["127.0.0.1:$UP",
	                                     "127.0.0.1:$ECHO"]}}
	EOF
	echo '{"version": 1, "network": {"deny": ["127.0.0.1:1"]}}' \
	    >"$POL/dev.json"
}

# The tls: proxy with the operator's policy and the flags given.
start_ident_proxy() {
	start_tls_proxy --only --policy "$POL/op.json" "$@"
}

# tunnels NAME connect|socks N HOST:PORT [HOLD]
tunnels() {
	local name=$1
	shift
	python3 "$TUNNELS" "$TLS" "$PKI/ca.crt" "$PKI/$name.crt" \
	    "$PKI/$name.key" "$@"
}

explain() {
	"$CORDON" policy explain --only --policy "$POL/op.json" "$@"
}

@test "identity: ci is allowed a host dev is refused; the operator's deny beats ci's allow; no rule: the default refuses" {
	write_policies
	start_ident_proxy
	run client ci ci-1 get "http://127.0.0.1:$UP/"
	[ "$status" -eq 0 ]
	[[ "$output" == "HTTP/1.1 200"* ]]
	log_lines 1
	[ "$(last identity)" = spiffe://corp/ci/runner ]
	[ "$(last decision)" = allow ]
	[ "$(last rule)" = "127.0.0.1:$UP" ]
	[[ "$(last rule_from)" == *"/ci.json: network.allow[0]" ]]
	# dev: the operator's policy and dev's layer allow no port of it.
	run client dev dev-1 get "http://127.0.0.1:$UP/"
	[ "$status" -eq 0 ]
	[[ "$output" == "HTTP/1.1 403"* ]]
	log_lines 2
	[ "$(last identity)" = dev-laptop ]
	[ "$(last decision)" = deny ]
	# ci's layer allows the echo server, the operator denies it.
	run client ci ci-1 connect "127.0.0.1:$ECHO"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "HTTP/1.1 403"* ]]
	log_lines 3
	[ "$(last decision)" = deny ]
	[[ "$(last rule_from)" == *"/op.json: network.deny[0]" ]]
	# ci2 is of the same CA, but no rule matches it: "deny".
	run client ci2 ci2-1 get "http://127.0.0.1:$UP/"
	[ "$status" -eq 0 ]
	[[ "$output" == "HTTP/1.1 403"* ]]
	log_lines 4
	[ "$(last identity)" = spiffe://corp/ci/other ]
	[[ "$(last reason)" == *'identities.default is "deny", and no rule matches'* ]]
	# policy explain says the same, rule by rule.
	run -0 explain --identity spiffe://corp/ci/runner "127.0.0.1:$UP"
	[[ "${lines[0]}" == *'identities.rules[0] ("match": "spiffe://corp/ci/runner", "action": "enforce"'* ]]
	[[ "${lines[1]}" == "allow 127.0.0.1:$UP: "* ]]
	run -1 explain --identity dev-laptop "127.0.0.1:$UP"
	[[ "${lines[1]}" == "deny 127.0.0.1:$UP: "* ]]
	run -1 explain --identity spiffe://corp/ci/runner "127.0.0.1:$ECHO"
	[[ "${lines[1]}" == *"by network.deny"*"op.json: network.deny[0]"* ]]
	run -1 explain --identity spiffe://corp/ci/other "127.0.0.1:$UP"
	[[ "${lines[0]}" == *"no rule matches"* ]]
	run -2 "$CORDON" policy explain --only --identity x "127.0.0.1:$UP"
	[[ "$output" == *'the policy has no "identities"'* ]]
	run -0 curl -sS "http://127.0.0.1:$METRICS/metrics"
	[[ "$output" == *'cordon_identity_connections_total{identity="dev-laptop",decision="deny"} 1'* ]]
}

@test "identity: report lets through what dev's policy refuses, warned with the rule; never the operator's deny" {
	write_policies report
	start_ident_proxy
	run client dev dev-1 get "http://127.0.0.1:$UP/"
	[ "$status" -eq 0 ]
	[[ "$output" == "HTTP/1.1 200"* ]]
	log_lines 1
	[ "$(last identity)" = dev-laptop ]
	[ "$(last decision)" = allow ]
	[ "$(last status)" = 200 ]
	[[ "$(last warning)" == "report: would be refused (deny 127.0.0.1:$UP: no network.allow entry matches (default deny)); allowed, as "*"op.json: identities.rules[1] has \"action\": \"report\"" ]]
	# dev's own deny entry: lifted too, warned with that entry.
	run client dev dev-1 connect "127.0.0.1:1"
	log_lines 2
	[ "$(last decision)" = allow ]
	[[ "$(last warning)" == *'by network.deny "127.0.0.1:1"'*"dev.json: network.deny[0]"* ]]
	# The operator's deny is not dev's to lift.
	run client dev dev-1 connect "127.0.0.1:$ECHO"
	[[ "${lines[0]}" == "HTTP/1.1 403"* ]]
	log_lines 3
	[ "$(last decision)" = deny ]
	[ "$(last warning)" = null ]
	[ "$(metric 'cordon_identity_report_total{identity="dev-laptop"}')" = 2 ]
	run -0 explain --identity dev-laptop "127.0.0.1:$UP"
	[[ "${lines[1]}" == "allow 127.0.0.1:$UP: "*'has "action": "report"' ]]
	[[ "${lines[2]}" == "warning: report: would be refused (deny 127.0.0.1:$UP: no network.allow entry matches"* ]]
	run -1 explain --identity dev-laptop "127.0.0.1:$ECHO"
}

# max_tunnels 2 held open, with proxy flags $@ (--workers).
max_tunnels_case() {
	write_policies enforce '{"max_tunnels": 2}'
	start_ident_proxy "$@"
	run -0 tunnels ci connect 3 "127.0.0.1:$UP" 1
	[ "${lines[0]}" = "HTTP/1.1 200 Connection established" ]
	[ "${lines[1]}" = "HTTP/1.1 200 Connection established" ]
	[ "${lines[2]}" = "HTTP/1.1 429 Too Many Requests" ]
	log_lines 3
	run jq -r 'select(.event != "open") | select(.decision == "deny") | .reason' "$LOG"
	[[ "$output" == "identity spiffe://corp/ci/runner is at its limit max_tunnels (2; "*"op.json: identities.rules[0].limits)" ]]
	grep -q "hint: retry later, or raise limits.max_tunnels of that rule" \
	    "$BATS_TEST_TMPDIR/proxy.log"
	[ "$(metric 'cordon_identity_limited_total{identity="spiffe://corp/ci/runner",limit="max_tunnels"}')" = 1 ]
	# Closed, the tunnels are the identity's again; SOCKS5 says 1.
	run -0 tunnels ci socks 3 "127.0.0.1:$UP" 0
	[ "${lines[*]}" = "socks 0 socks 0 socks 1" ]
	# Another identity has its own count.
	run -0 tunnels dev connect 1 "127.0.0.1:$ECHO" 0
	[[ "${lines[0]}" == "HTTP/1.1 403"* ]]
	[ "$(metric 'cordon_identity_limited_total{identity="spiffe://corp/ci/runner",limit="max_tunnels"}')" = 2 ]
}

# new_per_second 4, a burst of 12, with proxy flags $@ (--workers): at
# most a second's worth and what refilled while the burst went.
burst_case() {
	write_policies enforce '{"new_per_second": 4}'
	start_ident_proxy "$@"
	t0=$(date +%s.%N)
	run -0 tunnels ci connect 12 "127.0.0.1:$UP" 0
	t1=$(date +%s.%N)
	[ "${lines[0]}" = "HTTP/1.1 200 Connection established" ]
	[ "${lines[3]}" = "HTTP/1.1 200 Connection established" ]
	ok=$(printf '%s\n' "${lines[@]}" | grep -c " 200 ")
	limited=$(printf '%s\n' "${lines[@]}" | grep -c " 429 ")
	most=$(awk -v a="$t0" -v b="$t1" \
	    'BEGIN { m = 4 + 4 * (b - a); print int(m) + (m > int(m)) }')
	echo "$ok through of 12 in $(awk -v a="$t0" -v b="$t1" \
	    'BEGIN { print b - a }') s, at most $most"
	[ "$((ok + limited))" -eq 12 ]
	[ "$ok" -le "$most" ]
	[ "$limited" -ge 4 ]
	log_lines 12
	run jq -r 'select(.event != "open") | select(.decision == "deny") | .reason' "$LOG"
	[[ "${lines[0]}" == *"is at its limit new_per_second (4; "* ]]
	[ "$(metric 'cordon_identity_limited_total{identity="spiffe://corp/ci/runner",limit="new_per_second"}')" = "$limited" ]
	# A second later the bucket is full again.
	sleep 1.1
	run -0 tunnels ci connect 1 "127.0.0.1:$UP" 0
	[ "${lines[0]}" = "HTTP/1.1 200 Connection established" ]
}

@test "identity: more tunnels than max_tunnels held open: 429 and a SOCKS5 failure, named, counted; freed when they close" {
	max_tunnels_case
}

@test "identity: max_tunnels with --workers 1" {
	max_tunnels_case --workers 1
}

@test "identity: a burst past new_per_second is refused with 429, a second's worth goes through" {
	burst_case
}

@test "identity: new_per_second with --workers 1" {
	burst_case --workers 1
}

# The accepts of worker $1 (--workers).
accepted() {
	metric "cordon_worker_accepted_total{worker=\"$1\"}"
}

@test "identity: --workers 2: worker 0 takes the identity's tunnels (a tls: listener carries runs' channels), and max_tunnels holds for all" {
	write_policies enforce '{"max_tunnels": 3}'
	start_ident_proxy --workers 2
	run -0 tunnels ci connect 20 "127.0.0.1:$UP" 0.5
	[ "$(printf '%s\n' "${lines[@]:0:3}" | grep -c " 200 ")" -eq 3 ]
	[ "$(printf '%s\n' "${lines[@]:3}" | grep -c " 429 ")" -eq 17 ]
	# Served by both workers, a run's connections would miss its channel.
	echo "worker 0: $(accepted 0), worker 1: $(accepted 1)"
	[ "$(accepted 0)" -eq 20 ]
	[ "$(accepted 1)" -eq 0 ]
	[ "$(metric 'cordon_identity_limited_total{identity="spiffe://corp/ci/runner",limit="max_tunnels"}')" = 17 ]
}

# The pid of the proxy process at the far end of the tunnels held open.
holder() {
	ss -Htnp state established "( sport = :$TLS )" |
	    sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1
}

@test "identity: --workers 2: kill -9 of the worker holding the tunnel gives it back" {
	write_policies enforce '{"max_tunnels": 1}'
	start_ident_proxy --workers 2
	start_bg held python3 "$TUNNELS" "$TLS" "$PKI/ca.crt" "$PKI/ci.crt" \
	    "$PKI/ci.key" connect 1 "127.0.0.1:$UP" 30
	for _ in $(seq 100); do
		[ -s "$BATS_TEST_TMPDIR/held.log" ] && break
		sleep 0.05
	done
	[ "$(cat "$BATS_TEST_TMPDIR/held.log")" = "HTTP/1.1 200 Connection established" ]
	run -0 tunnels ci connect 1 "127.0.0.1:$UP" 0
	[ "${lines[0]}" = "HTTP/1.1 429 Too Many Requests" ]
	victim=$(holder)
	[ -n "$victim" ]
	[ "$victim" != "$PROXY_PID" ]
	kill -9 "$victim"
	for _ in $(seq 100); do
		grep -q "(pid $victim) was killed by signal 9" \
		    "$BATS_TEST_TMPDIR/proxy.log" && break
		sleep 0.05
	done
	grep -q "(pid $victim) was killed by signal 9.*starting it again" \
	    "$BATS_TEST_TMPDIR/proxy.log"
	# Its tunnel went with it: the limit admits again, with the client
	# of that tunnel still running.
	run -0 tunnels ci connect 1 "127.0.0.1:$UP" 0
	[ "${lines[0]}" = "HTTP/1.1 200 Connection established" ]
}

@test "identity: a layer replaced is reloaded (--policy-watch); a broken one keeps the whole policy in force" {
	write_policies
	start_ident_proxy --policy-watch
	run client ci ci-1 get "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 200"* ]]
	digest=$(metric 'cordon_policy_info{digest="'"$(curl -sS "http://127.0.0.1:$METRICS/metrics" | sed -n 's/^cordon_policy_info{digest="\([^"]*\)"}.*/\1/p')"'"}')
	[ "$digest" = 1 ]
	before=$(curl -sS "http://127.0.0.1:$METRICS/metrics" | sed -n 's/^cordon_policy_info{digest="\([^"]*\)"}.*/\1/p')
	# ci's layer no longer allows the port: replaced as a ConfigMap is.
	echo '{"version": 1, "network": {"allow": ["127.0.0.1:1"]}}' \
	    >"$POL/ci.json.new"
	mv "$POL/ci.json.new" "$POL/ci.json"
	for i in $(seq 100); do
		grep -q "policy reloaded" "$BATS_TEST_TMPDIR/proxy.log" && break
		sleep 0.05
	done
	run client ci ci-1 get "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 403"* ]]
	after=$(curl -sS "http://127.0.0.1:$METRICS/metrics" | sed -n 's/^cordon_policy_info{digest="\([^"]*\)"}.*/\1/p')
	[ "$after" != "$before" ]
	# A broken layer: the reload fails, the policy in force stays.
	echo '{"version": 1, "network": {"mode": "host"}}' >"$POL/ci.json.new"
	mv "$POL/ci.json.new" "$POL/ci.json"
	for i in $(seq 100); do
		grep -q "reload failed" "$BATS_TEST_TMPDIR/proxy.log" && break
		sleep 0.05
	done
	grep -q "an identity's policy may hold only" "$BATS_TEST_TMPDIR/proxy.log"
	run client ci ci-1 get "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 403"* ]]
	[ "$(metric cordon_reloads_total'{result="failed"}')" -ge 1 ] ||
	    grep -q "reload failed; the policy in force stays" \
	    "$BATS_TEST_TMPDIR/proxy.log"
	# Fixed, and SIGHUP: ci is allowed again.
	write_policies
	kill -HUP "$PROXY_PID"
	for i in $(seq 100); do
		[ "$(grep -c "policy reloaded" "$BATS_TEST_TMPDIR/proxy.log")" -ge 2 ] && break
		sleep 0.05
	done
	run client ci ci-1 get "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 200"* ]]
}

# A client certificate of the test's CA: NAME, its subject, and its
# subjectAltName (OpenSSL's syntax) or none.
make_client() {
	local name=$1 subj=$2 san=${3:-}
	{
		echo "basicConstraints = CA:FALSE"
		echo "extendedKeyUsage = clientAuth"
		[ -z "$san" ] || echo "subjectAltName = $san"
	} >"$PKI/$name.ext"
	openssl req -newkey rsa:2048 -nodes -keyout "$PKI/$name.key" \
	    -out "$PKI/$name.csr" -subj "$subj" 2>/dev/null
	openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" \
	    -CAkey "$PKI/ca.key" -set_serial "0x$(openssl rand -hex 8)" \
	    -days 1 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
}

@test "identity: one name space: a CN that reads as a URI, a URI without a scheme, two URIs: refused with why; a CN without ':' keeps its rule" {
	write_policies
	start_ident_proxy
	# Without the rule, a CN of the person's choosing is ci's identity,
	# its layer allowing the port: 200.
	make_client cnuri '/CN=spiffe:\/\/corp\/ci\/runner'
	make_client noscheme /CN=x "URI:dev-laptop"
	make_client twouri /CN=x \
	    "URI:spiffe://corp/dev/laptop,URI:spiffe://corp/ci/runner"
	make_client cncolon /CN=dev:laptop "DNS:dev.corp"
	local n=0 who
	for who in cnuri noscheme twouri cncolon; do
		run client "$who" s get "http://127.0.0.1:$UP/"
		[ "$status" -ne 0 ]
		[[ "$output" != *"HTTP/1.1"* ]]
		n=$((n + 1))
		log_lines "$n"
		[ "$(last decision)" = deny ]
		[ "$(last identity)" = null ]
	done
	run jq -r 'select(.event != "open") | .reason' "$LOG"
	[[ "${lines[0]}" == "TLS client refused: a certificate that names no usable identity (its CN holds ':': an identity from a CN never looks like a URI"*"subject /CN=spiffe:"*"runner" ]]
	[[ "${lines[1]}" == *"(its URI subjectAltName does not begin with a scheme such as spiffe:)"* ]]
	[[ "${lines[2]}" == *"(2 URI subjectAltNames: an identity is one URI)"* ]]
	[[ "${lines[3]}" == *"(its CN holds ':'"*"subject /CN=dev:laptop" ]]
	[ "$(metric 'cordon_tls_refused_total{reason="no-identity"}')" = 4 ]
	grep -q "hint: give the certificate one URI subjectAltName (spiffe://...), or none and one CN of printable ASCII without ':'" \
	    "$BATS_TEST_TMPDIR/proxy.log"
	# The CA's ordinary certificates: as before.
	run client ci ci-1 get "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 200"* ]]
	[ "$(last identity)" = spiffe://corp/ci/runner ]
	run client dev dev-1 get "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 403"* ]]
	[ "$(last identity)" = dev-laptop ]
}

@test "identity: the originator's uid field (0xe5) is a uid in decimal, once: text or a repeat refuses the header" {
	write_policies
	start_ident_proxy
	MTLS_ORIGIN=1000 run client ci ci-1 get "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 200"* ]]
	[ "$(last origin_uid)" = 1000 ]
	local n=1 v
	for v in root 1000,1000 01000 "1000 " -1; do
		MTLS_ORIGIN=$v run client ci ci-1 get "http://127.0.0.1:$UP/"
		[[ "$output" != *"HTTP/1.1"* ]]
		n=$((n + 1))
		log_lines "$n"
		[ "$(last decision)" = deny ]
		[ "$(last origin_uid)" = null ]
		[[ "$(last reason)" == "PROXY header: the originator's uid must be one field of 1 to 10 digits"* ]]
	done
}
