#!/usr/bin/env bats
# The tier behind a real HAProxy (Debian's haproxy, TCP mode): three
# `cordon proxy` replicas with mTLS listeners, health-checked on each
# one's /readyz (option httpchk, the metrics port on the server line),
# balanced by the client's address (balance source, hash-type
# consistent) so that a run's channel and its connections meet on one
# replica; clients as two identities, and one replica killed mid-load:
# no run that starts after HAProxy marks it DOWN is lost, and the
# tunnels held open through the other two still echo.  cordon run
# connects from 127.0.0.1; the tunnels stand for other hosts, each from
# an address of its own in 127.0.0.0/8 (lo has them all).

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

# The HAProxy of the tier: frontend ci (port CI) to replicas 1-3, a
# host (its address) to one of them, each checked with GET /readyz on
# its metrics port every 200 ms, DOWN after two failures.  Its stats
# socket is $F/haproxy.sock.
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
	    balance source
	    hash-type consistent
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
		wait_for -t 30 server_is ci "$s" UP
	done
}

# stot N: the sessions HAProxy has sent to replica N so far.
stot() {
	haproxy_stat "$F/haproxy.sock" |
	    awk -F, -v s="r$1" '$1 == "ci" && $2 == s { print $8 }'
}

# home_replica: prints the replica this host's runs go to: the one
# whose sessions a run as ci adds to.
home_replica() {
	local n before=(0 "$(stot 1)" "$(stot 2)" "$(stot 3)")
	(tier_run user "$CI" ci -- curl -s -o /dev/null "http://up.test:$UP/")
	for n in 1 2 3; do
		[ "$(stot "$n")" -eq "${before[n]}" ] || echo "$n"
	done
}

# hold I SOURCE: tunnel I from address SOURCE, seen echoing, and the
# replica it landed on (the connections HAProxy holds to it) in ON[I].
hold() {
	local i=$1 n before
	before=(0 "$(tcp_established "${R_TLS[1]}")" \
	    "$(tcp_established "${R_TLS[2]}")" \
	    "$(tcp_established "${R_TLS[3]}")")
	start_bg "hold$i" python3 "$HOLD" "$CI" "$PKI/ca.crt" \
	    "$PKI/ci.crt" "$PKI/ci.key" "hold-$i" "up.test:$ECHO" "$2"
	HOLD_PID[i]=$BG_PID
	# A deadline for a failure: the client is Python, slow to start.
	wait_for -t 30 grep -q '^ok 1$' "$F/hold$i.log"
	ON[i]=
	for n in 1 2 3; do
		[ "$(tcp_established "${R_TLS[n]}")" -gt "${before[n]}" ] &&
		    ON[i]=$n
	done
	[ -n "${ON[i]}" ]
}

# covered: each replica holds one of the tunnels 1..$NH.
covered() {
	[[ " ${ON[*]:1:NH} " == *" 1 "* && " ${ON[*]:1:NH} " == *" 2 "* &&
	    " ${ON[*]:1:NH} " == *" 3 "* ]]
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

@test "fleet tier: HAProxy sends one host's cordon runs, channels and connections, to one of three mTLS replicas; a host allowed for ci, refused for dev by its layer (identities); each line names its identity; bad certificates refused; as root and as the test user" {
	local who id i n nl
	for who in me user; do
		for i in 1 2 3; do
			run tier_run "$who" "$CI" ci -- sh -c "
			    curl -s -o /dev/null -w '%{http_code} ' \
			        http://up.test:$UP/
			    curl -s -o /dev/null -w '%{http_code}' \
			        http://ci.test:$CIONLY/"
			[ "$status" -eq 0 ]
			[ "$output" = "200 200" ]
			run --separate-stderr tier_run "$who" "$CI" dev -- \
			    sh -c "
			    curl -s -o /dev/null -w '%{http_code} ' \
			        http://up.test:$UP/
			    curl -s -o /dev/null -w '%{http_code}' \
			        http://ci.test:$CIONLY/"
			[ "$status" -eq 0 ]
			[ "$output" = "200 403" ]
			# Its refusal reached the run: the same replica.
			[[ "$stderr" == \
			    *"refused 1 connection: ci.test:$CIONLY"* ]]
		done
	done
	# By source: one replica took every connection of this host, each
	# run's channel and its two requests (HAProxy's stot), and logged
	# all twelve runs' lines, two each; the others none.
	for n in 1 2 3; do
		nl[n]=$(jq -c 'select(.event != "open")' "$F/r$n.log" | wc -l)
		[ "${nl[n]}" -eq 0 ] || [ "$(stot "$n")" -ge 36 ]
	done
	[ "$(printf '%s\n' "${nl[@]}" | sort -n | tr '\n' ' ')" = \
	    "0 0 24 " ]
	[ "$(jq -r 'select(.event != "open") | .sandbox' "$F"/r[123].log |
	    sort | uniq -c | awk '$1 == 2 { n++ } END { print n + 0 }')" -eq 12 ]
	# Across the tier: who reached which host, what was decided, and
	# by which layer's rule (dev's refusal is its own layer's deny).
	jq -r 'select(.event != "open") | "\(.identity) \(.host) " +
	    "\(.decision) \(.rule_from | split("/") | last)"' \
	    "$F"/r[123].log | sort | uniq -c | awk '{ $1 = $1 } 1' >"$F/who"
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
	wait_for -t 30 grep -q 'no client certificate' "$F"/r[123].log
	# Nor another CA's, an expired or a revoked one (--crl).
	for who in "stranger:a certificate of an unknown CA" \
	    "expired:an expired certificate" "revoked:a revoked certificate"; do
		run -125 tier_run user "$CI" "${who%%:*}" -- sh -c 'echo ran >ran'
		[[ "$output" == *"hint: "* ]]
		wait_for -t 30 grep -q "TLS client refused: ${who#*:}" \
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

# oks_since I N: tunnel I echoed 5 lines more than the N it had.
oks_since() {
	[ "$(grep -c '^ok ' "$F/hold$1.log")" -ge $(($2 + 5)) ]
}

# runs_after NS N: at least N runs started after NS, so far.
runs_after() {
	[ "$(cat "$F"/runs.* 2>/dev/null | awk -v d="$1" '$1 > d { n++ }
	    END { print n + 0 }')" -ge "$2" ]
}

@test "fleet tier: a replica killed mid-load: HAProxy marks it DOWN, no run after that is lost, the other replicas' tunnels still echo, and their hosts stay on them (consistent)" {
	local i n victim down t workers
	# The replica this host's runs go to is the one to kill: its runs
	# must move.  Tunnels from other hosts, one at a time, until each
	# replica holds some (and six at least).
	victim=$(home_replica)
	[ -n "$victim" ]
	NH=0
	while [ "$NH" -lt 6 ] || ! covered; do
		NH=$((NH + 1))
		[ "$NH" -le 30 ]
		hold "$NH" "127.0.0.$((NH + 1))"
	done

	for i in 1 2 3; do
		start_bg "load$i" load_worker "$i" "$CI" "http://up.test:$UP/"
		LOAD_PID[i]=$BG_PID
	done
	# The load under way: three runs ended.
	wait_for -t 60 runs_after 0 3
	# The replica's pid is the parent of its workers (--workers, the
	# cores by default): they die with it, the ones holding tunnels too.
	workers=$(cat /proc/"${R_PID[victim]}"/task/*/children)
	[ -n "$workers" ]
	kill -KILL "${R_PID[victim]}"
	wait_for -t 30 server_is ci "r$victim" DOWN
	down=$(date +%s%N)
	for n in $workers; do
		wait_for -t 30 gone "$n"
	done
	for i in $(seq "$NH"); do
		OK_AT_DOWN[i]=$(grep -c '^ok ' "$F/hold$i.log")
	done
	# Each worker ends after its run in progress: a run that hung
	# still gets its line (the client gives up after 10 s).
	# A worker whose run was sent to the replica before DOWN waits
	# for it (up to 10 s): ten runs after DOWN, from any worker.
	wait_for -t 60 runs_after "$down" 10
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
	# The victim's tunnels broke; the others' echo on, unbroken, and
	# a new tunnel from the same host lands on the same replica: only
	# the lost replica's hosts moved.
	for i in $(seq "$NH"); do
		if [ "${ON[i]}" = "$victim" ]; then
			wait_for -t 30 grep -q '^lost: ' "$F/hold$i.log"
		else
			kill -0 "${HOLD_PID[i]}"
			wait_for -t 30 oks_since "$i" "${OK_AT_DOWN[i]}"
			run grep -c '^lost' "$F/hold$i.log"
			[ "$output" -eq 0 ]
			hold $((100 + i)) "127.0.0.$((i + 1))"
			echo "127.0.0.$((i + 1)): r${ON[i]}, r${ON[100 + i]}"
			[ "${ON[100 + i]}" = "${ON[i]}" ]
		fi
	done
}

@test "fleet tier: a replica drained (SIGTERM): /readyz 503, HAProxy marks it DOWN, its open tunnel echoes on through the drain, no run after DOWN is lost" {
	local i victim mine="" down t
	# The replica this host's runs go to is the one to drain, and a
	# tunnel from another host that it holds.
	victim=$(home_replica)
	[ -n "$victim" ]
	for i in $(seq 30); do
		hold "$i" "127.0.0.$((i + 1))"
		if [ "${ON[i]}" = "$victim" ]; then
			mine=$i
			break
		fi
	done
	[ -n "$mine" ]
	# Five workers: those HAProxy sends to the replica between SIGTERM
	# and DOWN may wait there (below).
	for i in 1 2 3 4 5; do
		start_bg "load$i" load_worker "$i" "$CI" "http://up.test:$UP/"
		LOAD_PID[i]=$BG_PID
	done
	# The load under way: three runs ended.
	wait_for -t 60 runs_after 0 3
	kill -TERM "${R_PID[victim]}"
	wait_for -t 30 server_is ci "r$victim" DOWN
	down=$(date +%s%N)
	run curl -sS -o /dev/null -w '%{http_code}' \
	    "http://127.0.0.1:${R_MET[victim]}/readyz"
	[ "$output" = 503 ]
	t=$(grep -c '^ok ' "$F/hold$mine.log")
	# Still draining (30 s): the tunnel it holds carries on.
	wait_for -t 20 oks_since "$mine" "$t"
	kill -0 "${R_PID[victim]}"
	run grep -c '^lost' "$F/hold$mine.log"
	[ "$output" -eq 0 ]
	# A run HAProxy sent to it between SIGTERM and DOWN may wait in
	# its listen queue (the listener is disabled, not closed) until the
	# client gives up (10 s); it started before DOWN.
	# A worker whose run was sent to the replica before DOWN waits
	# for it (up to 10 s): ten runs after DOWN, from any worker.
	wait_for -t 60 runs_after "$down" 10
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

@test "fleet tier: one run's channel and its connections meet on one replica of three: each of its refusals is in its summary and --report, and a live deny (--control) holds for each later connection; as the test user" {
	local ids live
	mkdir -p "$WS/m"
	chmod 777 "$WS/m"
	CTL="$UDIR/ctl.sock"
	# The harness: denies up.test once the run has made its first
	# connections (m/first), and says so (m/denied) once applied.
	cp "$BATS_TEST_DIRNAME/../e2e/clients/deny_after.py" "$UDIR/bin/deny.py"
	chmod 755 "$UDIR/bin/deny.py"
	start_bg harness as_user "$UDIR/home" python3 "$UDIR/bin/deny.py" \
	    "$CTL" "$WS/m" "up.test:$UP"
	wait_listen "unix:$CTL"
	# As dev: ci.test refused by its layer, up.test allowed, six each;
	# then up.test denied live, and six more.  Were the connections
	# spread over the replicas (balance roundrobin), most would be
	# decided where the channel is not: their refusals missing from
	# the summary and the report, the live deny unknown there.
	run --separate-stderr tier_run user "$CI" dev --report "$WS/r.json" \
	    --control "$CTL" -- sh -c "
	    c() { curl -s -o /dev/null -w '%{http_code} ' \$1; }
	    for i in 1 2 3 4 5 6; do
	        c http://ci.test:$CIONLY/; c http://up.test:$UP/
	    done
	    echo; : >m/first
	    for i in \$(seq 100); do [ -e m/denied ] && break; sleep 0.05; done
	    for i in 1 2 3 4 5 6; do c http://up.test:$UP/; done"
	echo "$output"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | sed -n 1p)" = \
	    "$(printf '403 200 %.0s' 1 2 3 4 5 6)" ]
	[ "$(echo "$output" | sed -n 2p)" = "$(printf '403 %.0s' 1 2 3 4 5 6)" ]
	# Every refusal, counted, in the summary and the report.
	live="network.deny \"up.test:$UP\" (from the run's control channel)"
	[[ "$stderr" == *"refused 12 connections: ci.test:$CIONLY (by "*") x6, "* ]]
	[[ "$stderr" == *"up.test:$UP (by $live) x6"* ]]
	[ "$(jq -r '.refused[] | "\(.host) \(.count)"' "$WS/r.json" |
	    sort | tr '\n' ' ')" = "ci.test 6 up.test 6 " ]
	# The tier logged the run's 18 connections, 12 refused, all on one
	# replica, which held the run's channel.
	ids=$(jq -r .sandbox "$F"/r[123].log | sort -u)
	[ "$(echo "$ids" | wc -l)" -eq 1 ]
	[ "$(jq -r 'select(.event != "open") | .decision' "$F"/r[123].log |
	    sort | uniq -c |
	    awk '{ $1 = $1 } 1' | tr '\n' ' ')" = "6 allow 12 deny " ]
	[ "$(grep -l . "$F"/r[123].log | wc -l)" -eq 1 ]
}

# lost_run SCRIPT: `cordon run` as ci, its live deny of up.test sent
# by the harness at once (harness.log), its report in $WS/r.json, its
# stderr in $F/lost.err, in the background; $F/lost.log ends with its
# status.  SCRIPT starts once the deny is applied (m/applied).
lost_run() {
	mkdir -p "$WS/m"
	chmod 777 "$WS/m"
	CTL="$UDIR/ctl.sock"
	start_bg harness as_user "$UDIR/home" "$UDIR/bin/harness" \
	    --listen "$CTL" --send "{\"deny\": \"up.test:$UP\"}"
	wait_listen "unix:$CTL"
	start_bg lost bash -c "$(declare -f tier_run in_sandbox \
	    in_sandbox_as_me as_user ensure_test_user); $(declare -p \
	    UDIR WS UCORDON TEST_USER); (tier_run user $CI ci \
	    --report $WS/r.json --control $CTL -- sh -c '
	    c() { curl -s -o /dev/null -w \"%{http_code} \" \$1; }
	    for i in \$(seq 200); do [ -e m/applied ] && break; sleep 0.05; done
	    $1' 2>$F/lost.err); echo \"exit \$?\""
	wait_for -t 30 grep -q '"event":"applied"' "$F/harness.log"
	touch "$WS/m/applied"
}

# events NAME: the harness's events NAME, "state reason" a line.
events() {
	jq -r --arg e "$1" 'select(.event == $e) | "\(.state) \(.reason)"' \
	    "$F/harness.log"
}

@test "fleet tier: the replica holding a run's channel killed mid-run: the run holds its new connections, reopens its channel on another replica and replays its live deny there: the denied host stays refused, the allowed one answers, the summary and --report count the refusals of both replicas, the harness hears the channel lost and restored; as the test user" {
	local victim n
	victim=$(home_replica)
	[ -n "$victim" ]
	# Before the kill: ci.test allowed, up.test denied live; after it
	# (m/go, the replica DOWN) the same, and up.test once more.
	lost_run 'c http://ci.test:'$CIONLY'/; c http://up.test:'$UP'/
	    : >m/first
	    for i in $(seq 200); do [ -e m/go ] && break; sleep 0.05; done
	    c http://ci.test:'$CIONLY'/; c http://up.test:'$UP'/
	    c http://up.test:'$UP'/; echo'
	wait_for -t 30 test -e "$WS/m/first"
	kill -KILL "${R_PID[victim]}"
	wait_for -t 30 server_is ci "r$victim" DOWN
	touch "$WS/m/go"
	wait_for -t 60 grep -q '^exit ' "$F/lost.log"
	cat "$F/lost.log" "$F/lost.err" "$F/harness.log"
	[ "$(cat "$F/lost.log")" = "$(printf '200 403 200 403 403 \nexit 0')" ]
	# The harness heard the loss, then the channel back, its deny
	# replayed; the deny's "applied" once, not again for the replay.
	[ "$(events channel | cut -d' ' -f1 | tr '\n' ' ')" = "lost restored " ]
	events channel | grep -q '^restored reopened after .*, 1 live rule replayed$'
	[ "$(grep -c '"event":"applied"' "$F/harness.log")" -eq 1 ]
	grep -q "reopening it, the run's new connections held until its live \
rules are back" <(tr -d '\n' <"$F/lost.err")
	# The summary and the report count up.test's three refusals, two
	# of them by the replica that took over, by the replayed rule.
	grep -q "refused 3 connections: up.test:$UP (by network.deny \
\"up.test:$UP\" (from the run's control channel)) x3" \
	    <(tr -d '\n' <"$F/lost.err" | sed 's/  */ /g')
	[ "$(jq -r '.refused[] | "\(.host) \(.count)"' "$WS/r.json")" = \
	    "up.test 3" ]
	for n in 1 2 3; do
		[ "$n" = "$victim" ] || cat "$F/r$n.log"
	done | jq -r 'select(.event != "open") | "\(.host) \(.decision)"' |
	    sort >"$F/after"
	[ "$(cat "$F/after")" = "$(printf '%s\n' "ci.test allow" \
	    "up.test deny" "up.test deny")" ]
}

@test "fleet tier: every replica killed mid-run: the run's held and later connections are refused, it says why, the harness hears the channel lost and failed, and the command's status passes through; as the test user" {
	local n
	lost_run 'c http://ci.test:'$CIONLY'/; : >m/first
	    for i in $(seq 400); do [ -e m/go ] && break; sleep 0.05; done
	    c http://ci.test:'$CIONLY'/; echo
	    for i in $(seq 400); do grep -q failed m/ev 2>/dev/null && break
	    sleep 0.05; done
	    c http://ci.test:'$CIONLY'/; echo; exit 3'
	wait_for -t 30 test -e "$WS/m/first"
	for n in 1 2 3; do
		kill -KILL "${R_PID[n]}"
	done
	touch "$WS/m/go"
	wait_for -t 60 grep -q '"state":"failed"' "$F/harness.log"
	echo failed >"$WS/m/ev"
	wait_for -t 60 grep -q '^exit ' "$F/lost.log"
	cat "$F/lost.log" "$F/lost.err" "$F/harness.log"
	[ "$(cat "$F/lost.log")" = "$(printf '200 000 \n000 \nexit 3')" ]
	[ "$(events channel | cut -d' ' -f1 | tr '\n' ' ')" = "lost failed " ]
	tr -d '\n' <"$F/lost.err" | sed 's/  */ /g' >"$F/err1"
	grep -q "could not be reopened ([0-9]* tries in [0-9]* ms): the \
run's new connections are refused, since its live rules cannot be \
applied" "$F/err1"
	grep -q "hint: the proxy (127.0.0.1:$CI) must be up and reachable" \
	    "$F/err1" || grep -q "hint: the proxy (tls://127.0.0.1:$CI) must" \
	    "$F/err1"
	grep -q "run: 2 connections refused by the run, its channel to \
the operator's proxy lost" "$F/err1"
}
