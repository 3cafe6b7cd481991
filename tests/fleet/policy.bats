#!/usr/bin/env bats
# Policy distribution through etcd (Debian's etcd-server): one
# contrib/etcd/cordon-policy-watch per replica writes each new revision
# of the key to that replica's --policy file, only once `cordon policy
# check` accepts it; each replica reloads it (--policy-watch); a broken
# revision never reaches a replica; a real Prometheus scrapes the three
# and its API shows one digest.

load helpers

WATCH="$BATS_TEST_DIRNAME/../../contrib/etcd/cordon-policy-watch"
KEY=/cordon/policy

setup_file() {
	fleet_pki
}

setup() {
	fleet_setup
	UP=$(free_port)
	OTHER=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP"
	start_bg other "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$OTHER"
	wait_listen "tcp:127.0.0.1:$UP"
	wait_listen "tcp:127.0.0.1:$OTHER"
	start_etcd
}

teardown() {
	teardown_bg
}

# One etcd member on 127.0.0.1, its data in $F/etcd; etcdctl flags in
# $ETCD.
start_etcd() {
	local client peer
	client=$(free_port)
	peer=$(free_port)
	start_bg etcd etcd --name fleet --data-dir "$F/etcd" \
	    --listen-client-urls "http://127.0.0.1:$client" \
	    --advertise-client-urls "http://127.0.0.1:$client" \
	    --listen-peer-urls "http://127.0.0.1:$peer" \
	    --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
	    --initial-cluster "fleet=http://127.0.0.1:$peer"
	ETCD="--endpoints=http://127.0.0.1:$client"
	wait_for -t 30 etcdctl "$ETCD" endpoint health
}

# policy PORT...: a policy allowing 127.0.0.1 on each PORT.
policy() {
	local p list=""
	for p in "$@"; do
		list="$list${list:+, }\"127.0.0.1:$p\""
	done
	printf '{"version": 1, "network": {"allow": [%s],\n "allow_cidrs": ["127.0.0.1/32"]}}\n' \
	    "$list"
}

# put VALUE: a new revision of the key.
put() {
	printf '%s' "$1" | etcdctl "$ETCD" put "$KEY" >/dev/null
}

# Prometheus scraping the replicas' metrics every 500 ms, its storage in
# $F/prom; its HTTP API on port $PROM.
start_prometheus() {
	PROM=$(free_port)
	write "$F/prometheus.yml" <<-EOF
	global:
	  scrape_interval: 500ms
	  scrape_timeout: 400ms
	scrape_configs:
	  - job_name: cordon
	    static_configs:
	      - targets:
	          - 127.0.0.1:${R_MET[1]}
	          - 127.0.0.1:${R_MET[2]}
	          - 127.0.0.1:${R_MET[3]}
	EOF
	start_bg prometheus prometheus --config.file "$F/prometheus.yml" \
	    --storage.tsdb.path "$F/prom" \
	    --web.listen-address "127.0.0.1:$PROM"
	wait_listen "tcp:127.0.0.1:$PROM"
}

# query EXPR: the values of EXPR now, one line each (sorted), from
# Prometheus' HTTP API.
query() {
	curl -sS -G "http://127.0.0.1:$PROM/api/v1/query" \
	    --data-urlencode "query=$1" |
	    jq -r '.data.result[] | .value[1]' | sort
}

# all_digests_are DIGEST: each replica enforces it.
all_digests_are() {
	local n
	for n in 1 2 3; do
		[ "$(replica_digest "$n")" = "$1" ] || return 1
	done
}

@test "fleet policy: etcd revisions reach every replica through the watcher; a broken one never does; Prometheus sees one digest" {
	local n d1 d2 d3 good
	put "$(policy "$UP")"
	for n in 1 2 3; do
		start_bg "watch$n" env CORDON="$CORDON" sh "$WATCH" "$KEY" \
		    "$F/policy$n.json" "$ETCD"
		WATCH_PID[n]=$BG_PID
		wait_for -t 30 test -s "$F/policy$n.json"
		start_replica "$n" --only --policy "$F/policy$n.json" \
		    --policy-watch
	done
	d1=$(replica_digest 1)
	[[ "$d1" == sha256:* ]]
	all_digests_are "$d1"
	for n in 1 2 3; do
		run fleet_run "${R_TLS[n]}" ci "r$n" "http://127.0.0.1:$OTHER/"
		[[ "$output" == "HTTP/1.1 403"* ]]
	done

	# A new revision: every replica reloads it by itself.
	good=$(policy "$UP" "$OTHER")
	put "$good"
	wait_for -t 30 eval '[ "$(replica_digest 1)" != "$d1" ]'
	d2=$(replica_digest 1)
	wait_for -t 30 all_digests_are "$d2"
	for n in 1 2 3; do
		run fleet_run "${R_TLS[n]}" ci "r$n" "http://127.0.0.1:$OTHER/"
		[[ "$output" == "HTTP/1.1 200"* ]]
	done

	# Broken revisions: not JSON, and JSON of the wrong shape.  The
	# watchers refuse them; no replica's file changes, none is asked
	# to reload.
	put '{"version": 1, "network": {"allow": ['
	put '{"version": 1, "network": {"allow": 5}}'
	for n in 1 2 3; do
		wait_for -t 30 eval "[ \"\$(grep -c 'refused, ' \"\$F/watch$n.log\")\" -eq 2 ]"
	done
	grep -q "network.allow: expected an array of strings" "$F/watch1.log"
	for n in 1 2 3; do
		[ "$(cat "$F/policy$n.json")" = "$good" ]
		[ "$(replica_metric "$n" 'cordon_policy_reloads_total{result="ok"}')" = 1 ]
		[ "$(replica_metric "$n" 'cordon_policy_reloads_total{result="failed"}')" = 0 ]
	done
	all_digests_are "$d2"

	# The next good one reaches all three; Prometheus, scraping them,
	# sees one digest, theirs.
	put "$(policy "$OTHER")"
	wait_for -t 30 eval '[ "$(replica_digest 1)" != "$d2" ]'
	d3=$(replica_digest 1)
	wait_for -t 30 all_digests_are "$d3"
	run fleet_run "${R_TLS[2]}" ci r2 "http://127.0.0.1:$UP/"
	[[ "$output" == "HTTP/1.1 403"* ]]
	start_prometheus
	wait_for -t 60 eval '[ "$(query "count(up == 1)")" = 3 ]'
	run query 'count(count by (digest) (cordon_policy_info))'
	[ "$output" = 1 ]
	run query "count(cordon_policy_info{digest=\"$d3\"})"
	[ "$output" = 3 ]

	# A watcher stopped takes its etcdctl watch with it.
	[ "$(etcdctl_watches)" -eq 3 ]
	kill -TERM "${WATCH_PID[1]}"
	wait "${WATCH_PID[1]}" || true
	wait_for -t 30 eval '[ "$(etcdctl_watches)" -eq 2 ]'
}

# Counts the etcdctl watch processes on this test's etcd.
etcdctl_watches() {
	ps -eo args | grep -c "^etcdctl $ETCD watch $KEY "
}
