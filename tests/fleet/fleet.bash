# fleet.bash: loaded by tests/fleet/*.bats (make fleet-check), after
# tests/e2e/helpers.bash.  The image is in a store of its own, named by
# IMAGE_STORE_FLAGS; podman runs it as root with runc and cgroupfs
# (crun 1.8 refuses a host with both cgroup versions mounted, and
# systemd need not be running), in a network namespace of its own with
# slirp4netns: nothing is added to the host's interfaces or firewall,
# published ports are on 127.0.0.1, and the host's loopback is 10.0.2.2
# from inside.

: "${IMAGE_TAG:?IMAGE_TAG must name the image (make fleet-check)}"
: "${IMAGE_STORE_FLAGS:?IMAGE_STORE_FLAGS must name its store}"
FLEET_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DEPLOY_DIR=$FLEET_DIR/../../deploy
FLEET_RUNTIME=${FLEET_RUNTIME:-runc}

pod() {
	# shellcheck disable=SC2086
	podman $IMAGE_STORE_FLAGS --runtime "$FLEET_RUNTIME" \
	    --cgroup-manager cgroupfs "$@"
}

# The rendered manifests, one JSON object a line, in $BATS_TEST_TMPDIR.
render() {
	kubectl kustomize "$DEPLOY_DIR" >"$BATS_TEST_TMPDIR/rendered.yaml" &&
	    node "$FLEET_DIR/yaml2json.js" <"$BATS_TEST_TMPDIR/rendered.yaml" \
	    >"$BATS_TEST_TMPDIR/rendered.jsonl"
}

# The rendered Deployment's container args, one a line.
deploy_args() {
	jq -r 'select(.kind == "Deployment") |
	    .spec.template.spec.containers[0].args[]' \
	    "$BATS_TEST_TMPDIR/rendered.jsonl"
}

# The egress log lines (standard output) of container $1.
pod_log() {
	pod logs "$1" 2>/dev/null | grep '^{'
}
