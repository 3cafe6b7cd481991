#!/usr/bin/env bats
# The tier behind a real HAProxy (Debian's haproxy, TCP mode): three
# `cordon proxy` replicas with mTLS listeners, health-checked on each
# one's /readyz (option httpchk, the metrics port on the server line),
# clients as two identities, and one replica killed mid-load: no run
# that starts after HAProxy marks it DOWN is lost, and the tunnels held
# open through the other two still echo.

load helpers

setup_file() {
	fleet_pki
}

setup() {
	fleet_setup
	UP=$(free_port)
	CIONLY=$(free_port)
	ECHO=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP"
	start_bg cionly "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$CIONLY"
	start_bg echo "$NETCHECK" echo "tcp:127.0.0.1:$ECHO"
	wait_listen "tcp:127.0.0.1:$UP"
	wait_listen "tcp:127.0.0.1:$CIONLY"
	wait_listen "tcp:127.0.0.1:$ECHO"
	# One policy for the tier: the operator's layer allows no port, a
	# layer per identity does (identities), and CIONLY only for ci.
	write "$F/pol/op.json" <<-EOF
	{"version": 1,
	 "network": {"allow_cidrs": ["127.0.0.1/32"]},
	 "identities": {
	   "rules": [
	     {"match": "spiffe://corp/ci/*", "policy": "ci.json"},
	     {"match": "dev-laptop", "policy": "dev.json"}],
	   "default": "deny"}}
	EOF
	write "$F/pol/ci.json" <<-EOF
	{"version": 1, "network": {"allow": ["up.test:$UP",
	  "ci.test:$CIONLY", "up.test:$ECHO"]}}
	EOF
	write "$F/pol/dev.json" <<-EOF
	{"version": 1, "network": {"allow": ["up.test:$UP"], "deny": ["ci.test"]}}
	EOF
	local n
	for n in 1 2 3; do
		start_replica "$n" --only --policy "$F/pol/op.json" \
		    --drain-secs 30 --resolve up.test:127.0.0.1 \
		    --resolve ci.test:127.0.0.1
	done
	start_haproxy
	sandbox_setup
	tier_files
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# The HAProxy of the tier: frontend ci (port CI) to replicas 1-3, each
# checked with GET /readyz on its metrics port every 200 ms, DOWN after
# two failures.  Its stats socket is $F/haproxy.sock.
start_haproxy() {
	CI=$(free_port)
	write "$F/haproxy.cfg" <<-EOF
	global
	    stats socket $F/haproxy.sock mode 600 level admin
	    maxconn 2000

	defaults
	    mode tcp
	    timeout connect 2s
	    timeout client 60s
	    timeout server 60s
	    timeout check 1s

	frontend ci
	    bind 127.0.0.1:$CI
	    default_backend ci

	backend ci
	    balance roundrobin
	    option httpchk GET /readyz
	    http-check expect status 200
	    default-server inter 200ms fall 2 rise 2
	    server r1 127.0.0.1:${R_TLS[1]} check port ${R_MET[1]}
	    server r2 127.0.0.1:${R_TLS[2]} check port ${R_MET[2]}
	    server r3 127.0.0.1:${R_TLS[3]} check port ${R_MET[3]}
	EOF
	start_bg haproxy haproxy -db -f "$F/haproxy.cfg"
	HAPROXY_PID=$BG_PID
	wait_listen "tcp:127.0.0.1:$CI"
	local s
	for s in r1 r2 r3; do
		until_true 5 server_is ci "$s" UP
	done
}

# gone PID: process PID ended (a zombie not yet reaped counts).
gone() {
	case $(sed -n 's/^State:[[:space:]]*//p' /proc/"$1"/status \
	    2>/dev/null) in
	"" | Z*) return 0 ;;
	esac
	return 1
}

# server_is BACKEND SERVER STATUS: HAProxy says so.
server_is() {
	[ "$(haproxy_status "$F/haproxy.sock" "$1" "$2")" = "$3" ]
}

@test "fleet tier: HAProxy spreads cordon runs over three mTLS replicas; a host allowed for ci, refused for dev by its layer (identities); each line names its identity; bad certificates refused; as root and as the test user" {
	local who id i n
	for who in me user; do
		for i in 1 2 3; do
			run tier_run "$who" "$CI" ci -- sh -c "
			    curl -s -o /dev/null -w '%{http_code} ' \
			        http://up.test:$UP/
			    curl -s -o /dev/null -w '%{http_code}' \
			        http://ci.test:$CIONLY/"
			[ "$status" -eq 0 ]
			[ "$output" = "200 200" ]
			run tier_run "$who" "$CI" dev -- sh -c "
			    curl -s -o /dev/null -w '%{http_code} ' \
			        http://up.test:$UP/
			    curl -s -o /dev/null -w '%{http_code}' \
			        http://ci.test:$CIONLY/"
			[ "$status" -eq 0 ]
			[ "$output" = "200 403" ]
		done
	done
	# Round robin: each replica took some of the runs' connections
	# (HAProxy's stot; each run's feed is one, and held on one replica
	# while its requests go to others); each line names the
	# certificate's identity; twelve runs, two requests each.
	for n in 1 2 3; do
		[ "$(haproxy_stat "$F/haproxy.sock" |
		    awk -F, -v s="r$n" '$1 == "ci" && $2 == s { print $8 }')" \
		    -ge 8 ]
	done
	[ "$(jq -r .sandbox "$F"/r[123].log | sort | uniq -c |
	    awk '$1 == 2 { n++ } END { print n + 0 }')" -eq 12 ]
	# Across the tier: who reached which host, what was decided, and
	# by which layer's rule (dev's refusal is its own layer's deny).
	jq -r '"\(.identity) \(.host) \(.decision) \(.rule_from | split("/") |
	    last)"' "$F"/r[123].log | sort | uniq -c | awk '{ $1 = $1 } 1' \
	    >"$F/who"
	cat "$F/who"
	[ "$(cat "$F/who")" = "$(printf '%s\n' \
	    "6 dev-laptop ci.test deny dev.json: network.deny[0]" \
	    "6 dev-laptop up.test allow dev.json: network.allow[0]" \
	    "6 spiffe://corp/ci/runner ci.test allow ci.json: network.allow[1]" \
	    "6 spiffe://corp/ci/runner up.test allow ci.json: network.allow[0]" |
	    sort)" ]
	# No certificate: the replica HAProxy passes the handshake to
	# refuses it, and the run does not start (125, a hint).
	run -125 in_sandbox --proxy "tls://127.0.0.1:$CI" \
	    --proxy-ca "$UDIR/pki/ca.crt" -- sh -c 'echo ran >ran'
	[[ "$output" == *"the tier needs a client certificate"* ]]
	[[ "$output" == *"hint: add --client-cert FILE"* ]]
	# cordon run may log nothing on the tier (it may stop before its
	# handshake ends): a bare TLS client without one is logged.
	run python3 "$CLIENT" "$CI" "$PKI/ca.crt" - - s get "http://up.test:$UP/"
	[ "$status" -ne 0 ]
	[[ "$output" != *"HTTP/1.1"* ]]
	until_true 5 grep -q 'no client certificate' "$F"/r[123].log
	# Nor another CA's, an expired or a revoked one (--crl).
	for who in "stranger:a certificate of an unknown CA" \
	    "expired:an expired certificate" "revoked:a revoked certificate"; do
		run -125 tier_run user "$CI" "${who%%:*}" -- sh -c 'echo ran >ran'
		[[ "$output" == *"hint: "* ]]
		until_true 5 grep -q "TLS client refused: ${who#*:}" \
		    "$F"/r[123].log
	done
	[ ! -e "$WS/ran" ]
}

# load_worker I PORT URL: `cordon run -- curl URL` as ci through the tier
# at PORT, as the test user, one after another until $F/stop exists;
# each run's start (ns), exit status and HTTP status in $F/runs.I.
load_worker() {
	local s out rc
	while [ ! -e "$F/stop" ]; do
		s=$(date +%s%N)
		rc=0
		out=$(timeout 10 bash -c "$(declare -f tier_run in_sandbox \
		    in_sandbox_as_me as_user ensure_test_user); $(declare -p \
		    UDIR WS UCORDON TEST_USER); tier_run user $2 ci -- \
		    curl -s -o /dev/null -w '%{http_code}' $3" 2>/dev/null) ||
		    rc=$?
		echo "$s $rc ${out:-none}" >>"$F/runs.$1"
	done
}

# runs_after NS N: at least N runs started after NS, so far.
runs_after() {
	[ "$(cat "$F"/runs.* | awk -v d="$1" '$1 > d { n++ }
	    END { print n + 0 }')" -ge "$2" ]
}

@test "fleet tier: a replica killed mid-load: HAProxy marks it DOWN, no run after that is lost, the other replicas' tunnels still echo" {
	local i n before victim=1 down t workers
	# Six long-lived tunnels, one at a time, each seen landing on its
	# replica (the connections HAProxy holds to it).
	for i in 1 2 3 4 5 6; do
		before=(0 "$(tcp_established "${R_TLS[1]}")" \
		    "$(tcp_established "${R_TLS[2]}")" \
		    "$(tcp_established "${R_TLS[3]}")")
		start_bg "hold$i" python3 "$HOLD" "$CI" "$PKI/ca.crt" \
		    "$PKI/ci.crt" "$PKI/ci.key" "hold-$i" "up.test:$ECHO"
		HOLD_PID[i]=$BG_PID
		until_true 5 grep -q '^ok 1$' "$F/hold$i.log"
		for n in 1 2 3; do
			[ "$(tcp_established "${R_TLS[n]}")" -gt "${before[n]}" ] &&
			    ON[i]=$n
		done
		[ -n "${ON[i]}" ]
	done
	# Each replica holds some.
	[[ " ${ON[*]} " == *" 1 "* ]]
	[[ " ${ON[*]} " == *" 2 "* ]]
	[[ " ${ON[*]} " == *" 3 "* ]]

	for i in 1 2 3; do
		start_bg "load$i" load_worker "$i" "$CI" "http://up.test:$UP/"
		LOAD_PID[i]=$BG_PID
	done
	sleep 1
	# The replica's pid is the parent of its workers (--workers, the
	# cores by default): they die with it, the ones holding tunnels too.
	workers=$(cat /proc/"${R_PID[victim]}"/task/*/children)
	[ -n "$workers" ]
	kill -KILL "${R_PID[victim]}"
	until_true 5 server_is ci r1 DOWN
	down=$(date +%s%N)
	for n in $workers; do
		until_true 1 gone "$n"
	done
	for i in 1 2 3 4 5 6; do
		OK_AT_DOWN[i]=$(grep -c '^ok ' "$F/hold$i.log")
	done
	sleep 2
	# Each worker ends after its run in progress: a run that hung
	# still gets its line (the client gives up after 10 s).
	# A worker whose run was sent to the replica before DOWN waits
	# for it (up to 10 s): ten runs after DOWN, from any worker.
	until_true 20 runs_after "$down" 10
	touch "$F/stop"
	for i in 1 2 3; do
		wait "${LOAD_PID[i]}"
	done

	# Every run that started after HAProxy marked the replica DOWN
	# got its answer; there were some.
	cat "$F"/runs.* >"$F/runs"
	run awk -v d="$down" '$1 > d { n++; if ($2 != 0 || $3 != 200) bad++ }
	    END { print n + 0, bad + 0 }' "$F/runs"
	echo "runs after DOWN, failed: $output"
	[ "${output% *}" -ge 10 ]
	[ "${output#* }" -eq 0 ]
	# The victim's tunnels broke; the others' echo on, unbroken.
	for i in 1 2 3 4 5 6; do
		if [ "${ON[i]}" = "$victim" ]; then
			until_true 5 grep -q '^lost: ' "$F/hold$i.log"
		else
			kill -0 "${HOLD_PID[i]}"
			run grep -c '^lost' "$F/hold$i.log"
			[ "$output" -eq 0 ]
			t=$(grep -c '^ok ' "$F/hold$i.log")
			[ "$t" -ge $((OK_AT_DOWN[i] + 5)) ]
		fi
	done
}

@test "fleet tier: a replica drained (SIGTERM): /readyz 503, HAProxy marks it DOWN, its open tunnel echoes on through the drain, no run after DOWN is lost" {
	local i n before mine="" down t
	for i in 1 2 3; do
		before=$(tcp_established "${R_TLS[2]}")
		start_bg "hold$i" python3 "$HOLD" "$CI" "$PKI/ca.crt" \
		    "$PKI/ci.crt" "$PKI/ci.key" "hold-$i" "up.test:$ECHO"
		until_true 5 grep -q '^ok 1$' "$F/hold$i.log"
		[ "$(tcp_established "${R_TLS[2]}")" -eq "$before" ] ||
		    mine=$i
	done
	[ -n "$mine" ]
	# Five workers: those HAProxy sends to the replica between SIGTERM
	# and DOWN may wait there (below).
	for i in 1 2 3 4 5; do
		start_bg "load$i" load_worker "$i" "$CI" "http://up.test:$UP/"
		LOAD_PID[i]=$BG_PID
	done
	sleep 1
	kill -TERM "${R_PID[2]}"
	until_true 5 server_is ci r2 DOWN
	down=$(date +%s%N)
	run curl -sS -o /dev/null -w '%{http_code}' \
	    "http://127.0.0.1:${R_MET[2]}/readyz"
	[ "$output" = 503 ]
	t=$(grep -c '^ok ' "$F/hold$mine.log")
	sleep 2
	# Still draining (30 s): the tunnel it holds carries on.
	kill -0 "${R_PID[2]}"
	run grep -c '^lost' "$F/hold$mine.log"
	[ "$output" -eq 0 ]
	[ "$(grep -c '^ok ' "$F/hold$mine.log")" -ge $((t + 5)) ]
	# A run HAProxy sent to it between SIGTERM and DOWN may wait in
	# its listen queue (the listener is disabled, not closed) until the
	# client gives up (10 s); it started before DOWN.
	# A worker whose run was sent to the replica before DOWN waits
	# for it (up to 10 s): ten runs after DOWN, from any worker.
	until_true 20 runs_after "$down" 10
	touch "$F/stop"
	for i in 1 2 3 4 5; do
		wait "${LOAD_PID[i]}"
	done
	cat "$F"/runs.* >"$F/runs"
	run awk -v d="$down" '$1 > d { n++; if ($2 != 0 || $3 != 200) bad++ }
	    END { print n + 0, bad + 0 }' "$F/runs"
	echo "runs after DOWN, failed: $output"
	[ "${output% *}" -ge 10 ]
	[ "${output#* }" -eq 0 ]
}
