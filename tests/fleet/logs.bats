#!/usr/bin/env bats
# The log pipeline of the tier on Debian's rsyslog: each replica's egress
# log read by an rsyslogd of its own (imfile) and sent over TCP (omfwd)
# to a central rsyslogd (imtcp) that writes one file.  The central file
# holds every line of every replica, each once and as written, through
# a rotation under load (mv, then SIGHUP to the pid of --pid-file).

load helpers

setup_file() {
	fleet_pki
}

setup() {
	fleet_setup
	UP=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP"
	wait_listen "tcp:127.0.0.1:$UP"
	local n
	for n in 1 2 3; do
		start_replica "$n" --allow-domain "127.0.0.1:$UP" \
		    --allow-cidr 127.0.0.1/32
	done
	start_central
	for n in 1 2 3; do
		start_shipper "$n"
	done
}

teardown() {
	teardown_bg
}

# rsyslogd NAME: runs rsyslogd in the foreground on $F/NAME.conf, its
# state in $F/NAME.d, its pid in $F/NAME.pid.
rsyslogd_bg() {
	mkdir -p "$F/$1.d"
	start_bg "$1" rsyslogd -n -f "$F/$1.conf" -i "$F/$1.pid"
}

# The central rsyslogd: lines received on TCP port $CENTRAL, their
# message alone (RFC 5424 parsed) in $F/central.log.
start_central() {
	CENTRAL=$(free_port)
	write "$F/central.conf" <<-EOF
	global(workDirectory="$F/central.d" maxMessageSize="64k")
	module(load="imtcp")
	template(name="line" type="string" string="%msg%\n")
	ruleset(name="central") {
	    action(type="omfile" file="$F/central.log" template="line")
	}
	input(type="imtcp" address="127.0.0.1" port="$CENTRAL"
	    ruleset="central")
	EOF
	rsyslogd_bg central
	wait_listen "tcp:127.0.0.1:$CENTRAL"
}

# start_shipper N: an rsyslogd following replica N's log (imfile, which
# follows a rename) and sending each line to the central one over TCP.
start_shipper() {
	write "$F/ship$1.conf" <<-EOF
	global(workDirectory="$F/ship$1.d" maxMessageSize="64k")
	module(load="imfile")
	ruleset(name="ship") {
	    action(type="omfwd" target="127.0.0.1" port="$CENTRAL"
	        protocol="tcp" template="RSYSLOG_SyslogProtocol23Format")
	}
	input(type="imfile" file="$F/r$1.log" tag="cordon"
	    ruleset="ship")
	EOF
	rsyslogd_bg "ship$1"
	wait_for -t 30 test -s "$F/ship$1.pid"
}

# runs N COUNT [HALF]: COUNT runs through replica N, one allowed, one
# refused; with HALF, after run HALF it makes $F/half and waits for
# $F/rotated (a deadline for a failure only).
runs() {
	local i
	for i in $(seq "$2"); do
		fleet_run "${R_TLS[$1]}" ci "run-$1-$i" \
		    "http://127.0.0.1:$((UP + i % 2))/" >/dev/null
		if [ "$i" = "${3:-}" ]; then
			: >"$F/half"
			wait_for -t 600 test -e "$F/rotated" || return 1
		fi
	done
}

# Lines in the replicas' logs, rotated ones too.
replica_lines() {
	cat "$F"/r[123].log* | wc -l
}

# The central file has as many lines as the replicas wrote.
central_has_all() {
	[ -s "$F/central.log" ] &&
	    [ "$(wc -l <"$F/central.log")" -eq "$(replica_lines)" ]
}

@test "fleet logs: rsyslog ships every replica's lines to one file, each once, through a rotation under load; cordon log summary reads it" {
	local n pids=()
	runs 1 30 15 &
	pids+=($!)
	for n in 2 3; do
		runs "$n" 30 &
		pids+=($!)
	done
	# Mid-load, replica 1's log rotated as logrotate does it, between
	# its 15th and 16th run, however fast they go: the deadlines are
	# for a failure only (a run is a Python TLS client, about 0.6 s
	# each here, and 1.5 s with three at once on 2 cores).
	wait_for -t 600 test -e "$F/half"
	mv "$F/r1.log" "$F/r1.log.1"
	kill -HUP "$(cat "$F/r1.pid")"
	wait_for test -e "$F/r1.log"
	: >"$F/rotated"
	for n in "${pids[@]}"; do
		wait "$n"
	done
	# Every run logged, the rotation on both sides of the load: 45
	# refused (one line each), 45 allowed (an open line and an end).
	[ "$(replica_lines)" -eq 135 ]
	[ "$(wc -l <"$F/r1.log.1")" -ge 10 ]
	[ -s "$F/r1.log" ]

	wait_for -t 60 central_has_all
	# The same lines, none lost, none twice, none altered.
	run diff <(sort "$F/central.log") <(cat "$F"/r[123].log* | sort)
	[ "$status" -eq 0 ]
	# Each parses as JSON and names its identity.
	run jq -r .identity "$F/central.log"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | sort -u)" = spiffe://corp/ci/runner ]
	[ "${#lines[@]}" -eq 135 ]
	# cordon log reads the central file as its own, and pairs each
	# open line with its end (the rotation may part them): none unended.
	run "$CORDON" log summary --json "$F/central.log"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e . >/dev/null
	[[ "$output" == *"127.0.0.1"* ]]
	run "$CORDON" log summary "$F/central.log"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "135 line(s), 1 host(s), 0 malformed" ]
	[[ "${lines[1]}" =~ ^127\.0\.0\.1\ +[0-9,]+\ +45\ +45\ +0\ +0\  ]]
}
