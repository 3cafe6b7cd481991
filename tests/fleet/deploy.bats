#!/usr/bin/env bats
# deploy/: rendered by kubectl kustomize, validated offline against the
# Kubernetes API's schemas (tests/fleet/validate.js), and consistent with
# the proxy it runs: the grace period outlasts the drain, readiness is
# /readyz on the metrics port, the policy passes cordon policy check,
# and the sandbox hosts' NetworkPolicy lets them reach the tier alone.

load ../e2e/helpers
load fleet

setup() {
	cordon_setup
	render
}

# The one object of kind $1 (and name $2, if given), as JSON.
obj() {
	jq -c --arg k "$1" --arg n "${2:-}" \
	    'select(.kind == $k and ($n == "" or .metadata.name == $n))' \
	    "$BATS_TEST_TMPDIR/rendered.jsonl"
}

@test "deploy: kubectl kustomize renders the tier, and every object is valid against the Kubernetes schemas" {
	run jq -r '.kind' "$BATS_TEST_TMPDIR/rendered.jsonl"
	[ "$(printf '%s\n' "${lines[@]}" | sort | tr '\n' ' ')" = \
	    "ConfigMap Deployment Namespace NetworkPolicy NetworkPolicy PodDisruptionBudget Service " ]
	run node "$FLEET_DIR/validate.js" <"$BATS_TEST_TMPDIR/rendered.yaml"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 7 ]
	[[ "$output" != *invalid* ]]
}

@test "deploy: the validator refuses a misspelt field, a wrong type and a value outside an enum" {
	r=$BATS_TEST_TMPDIR/rendered.yaml
	run node "$FLEET_DIR/validate.js" < <(sed 's/readinessProbe:/readinesProbe:/' "$r")
	[ "$status" -eq 1 ]
	[[ "$output" == *"containers/0/readinesProbe: unknown field"* ]]
	run node "$FLEET_DIR/validate.js" < <(sed 's/replicas: 3/replicas: three/' "$r")
	[ "$status" -eq 1 ]
	[[ "$output" == *'/spec/replicas: type {"type":"integer"}'* ]]
	run node "$FLEET_DIR/validate.js" < <(sed 's/protocol: UDP/protocol: QUIC/' "$r")
	[ "$status" -eq 1 ]
	[[ "$output" == *'ports/0/protocol: enum {"allowedValues":["SCTP","TCP","UDP"]}'* ]]
}

@test "deploy: terminationGracePeriodSeconds outlasts the preStop pause and --drain-secs, and readiness is /readyz on --metrics's port" {
	d=$(obj Deployment)
	grace=$(jq '.spec.template.spec.terminationGracePeriodSeconds' <<<"$d")
	pause=$(jq '.spec.template.spec.containers[0].lifecycle.preStop.sleep.seconds' <<<"$d")
	mapfile -t ARGS < <(deploy_args)
	drain=
	for i in "${!ARGS[@]}"; do
		[ "${ARGS[$i]}" != --drain-secs ] || drain=${ARGS[$((i + 1))]}
		[ "${ARGS[$i]}" != --metrics ] || metrics=${ARGS[$((i + 1))]}
	done
	echo "grace $grace pause $pause drain $drain"
	[ -n "$drain" ]
	[ "$grace" -gt $((pause + drain)) ]
	# The proxy's own default is what the manifest says.
	grep -q "^#define PROXY_DRAIN_SECS[[:space:]]*$drain\$" \
	    "$FLEET_DIR/../../proxyd/proxy_cmd.c"
	port=$(jq -r '.spec.template.spec.containers[0].ports[] |
	    select(.name == "metrics") | .containerPort' <<<"$d")
	[ "$metrics" = "tcp:0.0.0.0:$port" ]
	[ "$(jq -r '.spec.template.spec.containers[0].readinessProbe.httpGet |
	    "\(.path) \(.port)"' <<<"$d")" = "/readyz metrics" ]
}

@test "deploy: the pod runs unprivileged, the policy comes from the ConfigMap, and the proxy accepts the Deployment's args" {
	d=$(obj Deployment)
	jq -e '.spec.template.spec.securityContext.runAsNonRoot == true and
	    .spec.template.spec.securityContext.runAsUser == 10001 and
	    .spec.template.spec.containers[0].securityContext.capabilities.drop
	        == ["ALL"] and
	    .spec.template.spec.containers[0].securityContext
	        .allowPrivilegeEscalation == false' <<<"$d"
	cm=$(obj ConfigMap | jq -r .metadata.name)
	[[ "$cm" == cordon-proxy-policy-* ]]
	[ "$(jq -r '.spec.template.spec.volumes[] | select(.name == "policy") |
	    .configMap.name' <<<"$d")" = "$cm" ]
	obj ConfigMap | jq -r '.data["proxy.json"]' >"$BATS_TEST_TMPDIR/p.json"
	run "$CORDON" policy check "$BATS_TEST_TMPDIR/p.json"
	[ "$status" -eq 0 ]
	# The args, with the ConfigMap's path and loopback ports, start a
	# real proxy that answers /readyz.
	mapfile -t ARGS < <(deploy_args)
	P=$(free_port)
	S=$(free_port)
	M=$(free_port)
	BG_PIDS=()
	for i in "${!ARGS[@]}"; do
		a=${ARGS[$i]//\/etc\/cordon\/policy\/proxy.json/$BATS_TEST_TMPDIR/p.json}
		a=${a/tcp:0.0.0.0:3128/tcp:127.0.0.1:$P}
		a=${a/tcp:0.0.0.0:3129/tcp:127.0.0.1:$S}
		ARGS[$i]=${a/tcp:0.0.0.0:9464/tcp:127.0.0.1:$M}
	done
	start_bg proxy "$CORDON" proxy "${ARGS[@]}"
	wait_listen "tcp:127.0.0.1:$M"
	run curl -s "http://127.0.0.1:$M/readyz"
	teardown_bg
	[ "$output" = ready ]
}

@test "deploy: the sandbox hosts reach the tier's proxy ports and DNS, nothing else; the tier takes them and the monitoring namespace only" {
	h=$(obj NetworkPolicy cordon-sandbox-hosts)
	jq -e '.spec.policyTypes == ["Egress"] and
	    (.spec.egress | length) == 2 and
	    .spec.egress[0].to == [{"namespaceSelector": {"matchLabels":
	        {"kubernetes.io/metadata.name": "cordon"}},
	        "podSelector": {"matchLabels":
	        {"app.kubernetes.io/name": "cordon-proxy"}}}] and
	    ([.spec.egress[0].ports[].port] == [3128, 3129]) and
	    ([.spec.egress[1].ports[].port] == [53, 53]) and
	    (.spec.egress[1].to[0].podSelector.matchLabels["k8s-app"]
	        == "kube-dns")' <<<"$h"
	t=$(obj NetworkPolicy cordon-proxy)
	jq -e '.spec.policyTypes == ["Ingress"] and
	    (.spec.ingress | length) == 2 and
	    .spec.ingress[0].from[0].podSelector.matchLabels
	        == {"cordon-sandbox-host": "true"} and
	    ([.spec.ingress[1].ports[].port] == [9464])' <<<"$t"
	# The tier's Service and PDB select the Deployment's pods.
	sel=$(obj Deployment | jq -c .spec.selector.matchLabels)
	[ "$(obj Service | jq -c .spec.selector)" = "$sel" ]
	[ "$(obj PodDisruptionBudget | jq -c .spec.selector.matchLabels)" = "$sel" ]
}

@test "deploy: the Service keeps a client address on one replica (sessionAffinity ClientIP) for 3 h, so a run's channel and its connections meet" {
	obj Service | jq -e '.spec.sessionAffinity == "ClientIP" and
	    .spec.sessionAffinityConfig.clientIP.timeoutSeconds >= 10800 and
	    .spec.sessionAffinityConfig.clientIP.timeoutSeconds <= 86400'
}
