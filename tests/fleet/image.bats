#!/usr/bin/env bats
# make image's image, run by podman with the rendered Deployment's own
# arguments and the policy ConfigMap's file mounted where the Deployment
# mounts it: it serves a curl through --listen and a cordon run through
# --listen-sandbox (by way of a host relay, as a sandbox host would),
# logs both decisions of each to standard output, answers /readyz, runs
# as uid 10001 and has no shell.

bats_require_minimum_version 1.5.0
load ../e2e/helpers
load fleet

setup() {
	cordon_setup
	[ "$(id -u)" -eq 0 ] || skip "podman runs the image as root here"
	BG_PIDS=()
	UP=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP"
	wait_listen "tcp:127.0.0.1:$UP"
	render
	mapfile -t ARGS < <(deploy_args)
	# The ConfigMap's one file, mounted read-only as in the pod.
	mkdir -m 0755 "$BATS_TEST_TMPDIR/policy"
	install -m 0644 "$DEPLOY_DIR/proxy.json" \
	    "$BATS_TEST_TMPDIR/policy/proxy.json"
	P=$(free_port)
	PS=$(free_port)
	PM=$(free_port)
	NAME=cordon-fleet-$$-$BATS_TEST_NUMBER
	# ok.test and no.test are the host's 127.0.0.1, 10.0.2.2 inside;
	# the ConfigMap's policy allows neither, a flag allows ok.test.
	pod run -d --name "$NAME" --ulimit nofile=4096:4096 \
	    --ulimit nproc=1024:1024 \
	    --network slirp4netns:allow_host_loopback=true \
	    -p "127.0.0.1:$P:3128" -p "127.0.0.1:$PS:3129" \
	    -p "127.0.0.1:$PM:9464" \
	    -v "$BATS_TEST_TMPDIR/policy:/etc/cordon/policy:ro" \
	    "$IMAGE_TAG" "${ARGS[@]}" --allow-domain "ok.test:$UP" \
	    --resolve ok.test:10.0.2.2 --allow-cidr 10.0.2.2/32 >/dev/null
	for _ in $(seq 100); do
		curl -s "http://127.0.0.1:$PM/readyz" >/dev/null && break
		sleep 0.1
	done
}

teardown() {
	[ -z "${NAME:-}" ] || pod rm -f -t 0 "$NAME" >/dev/null 2>&1 || true
	teardown_bg
	sandbox_teardown || true
}

@test "image: /readyz is ready, and the proxy runs as uid 10001 with no shell" {
	run curl -s "http://127.0.0.1:$PM/readyz"
	[ "$output" = ready ]
	run pod top "$NAME" user huser
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == "cordon"*"10001"* ]]
	run pod image inspect --format '{{.Config.User}}' "$IMAGE_TAG"
	[ "$output" = 10001:10001 ]
	run -127 pod exec "$NAME" /bin/sh -c true
	[[ "$output" == *"/bin/sh"* ]]
}

@test "image: a curl through --listen: ok.test allowed, no.test refused, both logged on standard output" {
	run curl -s -x "http://127.0.0.1:$P" "http://ok.test:$UP/"
	[ "$status" -eq 0 ]
	run curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$P" \
	    "http://ok.test:$UP/"
	[ "$output" = 200 ]
	run curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$P" \
	    "http://no.test:$UP/"
	[ "$output" = 403 ]
	sleep 0.3
	pod_log "$NAME" >"$BATS_TEST_TMPDIR/egress.jsonl"
	jq -e -s --argjson up "$UP" '
	    any(.[]; .host == "ok.test" and .port == $up and
	        .decision == "allow") and
	    any(.[]; .host == "no.test" and .decision == "deny")' \
	    "$BATS_TEST_TMPDIR/egress.jsonl"
}

@test "image: cordon run --proxy-socket through a host relay to --listen-sandbox: its id in the container's log" {
	sandbox_setup
	start_bg relay "$CORDON" bridge --listen "unix:$UDIR/tier.sock" \
	    --connect "tcp:127.0.0.1:$PS"
	wait_listen "unix:$UDIR/tier.sock"
	run --separate-stderr in_sandbox_as_me --quiet \
	    --proxy-socket "$UDIR/tier.sock" -- \
	    sh -c "curl -s -o /dev/null -w '%{http_code} ' http://ok.test:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://no.test:$UP/"
	echo "$output"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "200 403" ]
	# Over TCP the tier knows no uid, so it answers the run's channel
	# (its live decisions, for the summary) and closes it: said, not
	# hidden (docs/fleet.md).
	[[ "$stderr" == *"the proxy closed the run's channel"* ]]
	sleep 0.3
	pod_log "$NAME" >"$BATS_TEST_TMPDIR/egress.jsonl"
	jq -e -s '
	    any(.[]; .host == "ok.test" and .decision == "allow" and
	        (.sandbox | type) == "string") and
	    any(.[]; .host == "no.test" and .decision == "deny" and
	        (.sandbox | type) == "string")' \
	    "$BATS_TEST_TMPDIR/egress.jsonl"
}

@test "image: SIGTERM makes /readyz 503 while it drains an open tunnel, and the container exits 0" {
	# A tunnel held open to the origin keeps the drain going.
	exec 5<>"/dev/tcp/127.0.0.1/$P"
	printf 'CONNECT ok.test:%s HTTP/1.1\r\nHost: ok.test:%s\r\n\r\n' \
	    "$UP" "$UP" >&5
	read -r -t 5 line <&5
	[[ "$line" == "HTTP/1."*" 200"* ]]
	pod kill --signal TERM "$NAME" >/dev/null
	sleep 0.5
	run curl -s -o /dev/null -w '%{http_code}' \
	    "http://127.0.0.1:$PM/readyz"
	[ "$output" = 503 ]
	exec 5>&-
	run pod wait "$NAME"
	[ "$output" = 0 ]
}

@test "image: cordon run inside the container needs an uncovered /proc and sethostname; podman's seccomp profile with sethostname added is enough, with no capability" {
	# What docs/fleet.md tells an operator.  The run's own procfs is
	# refused while the runtime covers parts of /proc (podman: unmask;
	# Kubernetes: procMount Unmasked); podman's profile allows the
	# namespaces and the mount calls but sethostname only to holders
	# of CAP_SYS_ADMIN, and the run's UTS namespace needs it.
	inner=(--rm --network none --ulimit nofile=4096:4096
	    --ulimit nproc=1024:1024 --tmpfs /tmp:mode=1777 -w /tmp
	    -e HOME=/tmp --cap-drop ALL --security-opt no-new-privileges
	    --entrypoint /usr/bin/cordon)
	cmd=(run --workspace /tmp -- /usr/bin/cordon policy check
	    /etc/cordon/policy/proxy.json)
	run pod run "${inner[@]}" --security-opt seccomp=unconfined \
	    "$IMAGE_TAG" "${cmd[@]}"
	[ "$status" -ne 0 ]
	[[ "$output" == *"/proc: Operation not permitted"* ]]
	run pod run "${inner[@]}" --security-opt 'unmask=/proc/*' \
	    "$IMAGE_TAG" "${cmd[@]}"
	[ "$status" -ne 0 ]
	[[ "$output" == *"sethostname: Operation not permitted"* ]]
	jq '.syscalls |= map(.names -= ["sethostname", "setdomainname"] |
	    select(.names | length > 0)) | .syscalls += [{"names":
	    ["sethostname", "setdomainname"], "action": "SCMP_ACT_ALLOW"}]' \
	    /usr/share/containers/seccomp.json >"$BATS_TEST_TMPDIR/run.json"
	run pod run "${inner[@]}" --security-opt 'unmask=/proc/*' \
	    --security-opt "seccomp=$BATS_TEST_TMPDIR/run.json" \
	    "$IMAGE_TAG" "${cmd[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"proxy.json: ok"* ]]
}
