#!/usr/bin/env bats
# cordon policy check | explain | show, as a user runs them.

# bats file_tags=fast

load helpers

setup() {
	cordon_setup
}

@test "check: valid policies pass with status 0" {
	write ok.json <<-'EOF'
	{"version": 1, "network": {"allow": ["github.com"]}}
	EOF
	run "$CORDON" policy check ok.json
	[ "$status" -eq 0 ]
	[ "$output" = "ok.json: ok" ]
}

@test "check: a syntax error names FILE:LINE:COLUMN" {
	printf '{"version": 1,\n "network": {\n  "allow": ["a.test",]\n }\n}\n' \
	    >bad.json
	run "$CORDON" policy check bad.json
	[ "$status" -eq 1 ]
	[[ "$output" == *"cordon: bad.json:3:22: "* ]]
}

@test "check: an unknown key is named, with the known ones" {
	write bad.json <<-'EOF'
	{"version": 1, "network": {"allow": [], "alow": ["x.test"]}}
	EOF
	run "$CORDON" policy check bad.json
	[ "$status" -eq 1 ]
	[[ "$output" == *'unknown key "network.alow" (known here: "mode", "allow"'* ]]
}

@test "check: duplicate keys are refused" {
	write bad.json <<-'EOF'
	{"version": 1, "network": {"allow": ["a.test"], "allow": ["b.test"]}}
	EOF
	run "$CORDON" policy check bad.json
	[ "$status" -eq 1 ]
	[[ "$output" == *"duplicate object key"* ]]
}

@test "check: every error is reported, with its JSON path" {
	write bad.json <<-'EOF'
	{"version": 1,
	 "network": {"allow": ["ok.test", "bad%20.test", "a.test:0"],
	             "mode": "open", "allow_cidrs": ["10.0.0.1/8"]},
	 "filesystem": {"write": [""]}}
	EOF
	run "$CORDON" policy check bad.json
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 5 ]
	[[ "${lines[0]}" == *'network.allow[1]: "bad%20.test": '"'%'"' in a host name'* ]]
	[[ "${lines[1]}" == *'network.allow[2]: "a.test:0": bad port "0"'* ]]
	[[ "${lines[2]}" == *'network.mode: "open": expected'* ]]
	[[ "${lines[3]}" == *'did you mean 10.0.0.0/8?'* ]]
	[[ "${lines[4]}" == *'filesystem.write[0]: "": empty path'* ]]
}

@test "check: a bad line in a list file is named FILE:LINE" {
	mkdir lists
	printf '# mirrors\nmirror.test\n\nbad name.test\n' >lists/mirrors.txt
	write p.json <<-'EOF'
	{"version": 1, "network": {"allow_files": ["lists/mirrors.txt"]}}
	EOF
	run "$CORDON" policy check p.json
	[ "$status" -eq 1 ]
	[[ "$output" == *'lists/mirrors.txt:4: "bad name.test": '* ]]
}

@test "check: usage errors exit 2" {
	run "$CORDON" policy check
	[ "$status" -eq 2 ]
	run "$CORDON" policy frobnicate
	[ "$status" -eq 2 ]
	[[ "$output" == *'unknown subcommand "frobnicate"'* ]]
}

@test "the shipped policies load, and the defaults refuse everything" {
	run "$CORDON" policy check "$BATS_TEST_DIRNAME"/../../policies/*.json
	[ "$status" -eq 0 ]
	run "$CORDON" policy explain github.com
	[ "$status" -eq 1 ]
	run "$CORDON" policy show --plain
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -c .network.allow)" = "[]" ]
	[ "$(echo "$output" | jq -r .network.mode)" = proxy ]
	[ "$(echo "$output" | jq -r '.filesystem.deny | index("'"$HOME"'/.ssh") != null')" = true ]
}

@test "explain: allowed, with the rule and the file it came from" {
	run "$CORDON" policy explain --policy "$BATS_TEST_DIRNAME/../../policies/dev.json" github.com
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "allow github.com:443: by network.allow \"github.com\" (from "*"policies/dev.json: network.allow["* ]]
}

@test "explain: an inspected host, with what its rules let through" {
	write "$BATS_TEST_TMPDIR/i.json" <<-'EOF'
	{"version": 1, "network": {"allow": ["*.test"],
	 "inspect": [{"host": "*.test", "methods": ["GET"], "paths": ["/"]},
	   {"host": "api.test", "methods": ["get", "HEAD"],
	    "paths": ["/repos/org/*", "/user"]}]}}
	EOF
	run "$CORDON" policy explain --only --policy "$BATS_TEST_TMPDIR/i.json" \
	    api.test
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = "inspected: api.test ($BATS_TEST_TMPDIR/i.json: network.inspect[1]): methods GET, HEAD; paths /repos/org/*, /user; any other request is refused with 403" ]
	run "$CORDON" policy explain --only --policy "$BATS_TEST_TMPDIR/i.json" \
	    other.test:80
	[[ "${lines[2]}" == "inspected: *.test ("*"network.inspect[0]): methods GET; paths /;"* ]]
	run "$CORDON" policy explain --only --policy "$BATS_TEST_TMPDIR/i.json" \
	    test
	[ "$status" -eq 1 ]
	[[ "$output" != *inspected* ]]
}

@test "explain: default deny says how to allow it" {
	run "$CORDON" policy explain evil.test:8443
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "deny evil.test:8443: no network.allow entry matches (default deny)" ]
	[ "${lines[1]}" = 'hint: add "evil.test:8443" to network.allow, or pass --allow-domain evil.test:8443' ]
	run "$CORDON" policy explain --allow-domain evil.test:8443 evil.test:8443
	[ "$status" -eq 0 ]
}

@test "explain: deny beats allow, on every port when the deny has none" {
	run "$CORDON" policy explain --allow-domain '*.github.com:*' \
	    --deny-domain gist.github.com gist.github.com:22
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = 'deny gist.github.com:22: by network.deny "gist.github.com" (from --deny-domain)' ]
}

@test "explain: IP literals only by the same address, in any spelling" {
	for spelling in 127.0.0.1 2130706433 0x7f000001 0177.0.0.1 0x7f.1 \
	    127.1 '[::ffff:127.0.0.1]'; do
		run "$CORDON" policy explain --allow-domain 127.0.0.1:8080 \
		    --allow-cidr 127.0.0.0/8 "$spelling:8080"
		[ "$status" -eq 0 ]
		[[ "${lines[0]}" == "allow 127.0.0.1:8080: "* ]]
	done
	# Listed but loopback, without allow_cidrs: refused, with the fix.
	run "$CORDON" policy explain --allow-domain 127.0.0.1 0x7f.1
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "deny 127.0.0.1:443: the address is loopback, and not in network.allow_cidrs" ]]
	[[ "${lines[1]}" == *"--allow-cidr 127.0.0.1/32" ]]
	# Metadata by another spelling.
	run "$CORDON" policy explain --allow-domain 169.254.169.254 169.254.43518
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == *"link-local"* ]]
}

@test "explain: names with NUL, control or percent bytes are refused" {
	run "$CORDON" policy explain --allow-domain '*.test' $'a\x01.test'
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == 'deny: bad host name: "a\x01.test": byte 0x01'* ]]
	run "$CORDON" policy explain --allow-domain '*.test' 'a%2e.test'
	[ "$status" -eq 1 ]
	run "$CORDON" policy explain --allow-domain 'a.test' 'A.TEST.'
	[ "$status" -eq 0 ]
}

@test "explain: a policy that does not load is an error, status 2" {
	echo '{"version": 1, "network": {"allow": [' >broken.json
	run "$CORDON" policy explain --policy broken.json github.com
	[ "$status" -eq 2 ]
	[[ "$output" == *"broken.json:2:"* ]]
}

@test "layers: system, user, --policy and flags, deny beats allow" {
	write system.json <<-'EOF'
	{"version": 1, "network": {"deny": ["blocked.test"]}}
	EOF
	write "$XDG_CONFIG_HOME/cordon/policy.json" <<-'EOF'
	{"version": 1, "network": {"allow": ["user.test", "blocked.test"]}}
	EOF
	export CORDON_SYSTEM_POLICY="$PWD/system.json"
	run "$CORDON" policy explain user.test
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *"(from $XDG_CONFIG_HOME/cordon/policy.json: network.allow[0])" ]]
	run "$CORDON" policy explain blocked.test
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == *"(from $PWD/system.json: network.deny[0])" ]]
	# A broken system policy stops everything, it is not skipped.
	echo '{' >system.json
	run "$CORDON" policy explain user.test
	[ "$status" -eq 2 ]
}

@test "workspace: .cordon/policy.json only narrows" {
	mkdir -p ws/.cordon
	write ws/.cordon/policy.json <<-'EOF'
	{"version": 1,
	 "network": {"mode": "host", "allow": ["api.github.com", "evil.test:*"],
	             "unix_sockets": "allow"}}
	EOF
	run "$CORDON" policy check ws/.cordon/policy.json
	[ "$status" -eq 0 ]
	[ "$output" = "ws/.cordon/policy.json: ok (as a workspace layer)" ]
	cd ws
	run "$CORDON" policy explain --allow-domain '*.github.com' api.github.com
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *"narrowed by $PWD/.cordon/policy.json: network.allow[0])" ]]
	run "$CORDON" policy explain --allow-domain '*.github.com' www.github.com
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "deny www.github.com:443: the workspace policy"* ]]
	run "$CORDON" policy explain --allow-domain '*.github.com' evil.test
	[ "$status" -eq 1 ]
	run "$CORDON" policy show --plain
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r .network.mode)" = proxy ]
	[ "$(echo "$output" | jq -r .network.unix_sockets)" = deny ]
}

@test "workspace: may not set variables nor read lists outside itself" {
	mkdir -p ws/.cordon
	write ws/.cordon/policy.json <<-'EOF'
	{"version": 1, "network": {"allow_files": ["../../lists.txt"]},
	 "env": {"set": {"LD_PRELOAD": "/tmp/x.so"}}}
	EOF
	cd ws
	run "$CORDON" policy explain github.com
	[ "$status" -eq 2 ]
	[[ "$output" == *'"../../lists.txt": '*'lists.txt is outside '* ]]
	[[ "$output" == *"env.set.LD_PRELOAD: a workspace policy may not set variables"* ]]
	run "$CORDON" policy explain --workspace "$BATS_TEST_TMPDIR" github.com
	[ "$status" -eq 1 ]
}

@test "show: prints where each rule came from and loads back the same" {
	write p.json <<-'EOF'
	{"version": 1, "network": {"allow": ["GitHub.com", "*.npmjs.org"]},
	 "env": {"set": {"FOO": "bar"}}}
	EOF
	run "$CORDON" policy show --policy p.json --deny-domain gist.github.com
	[ "$status" -eq 0 ]
	echo "$output" >shown.json
	[ "$(jq -r '.network.allow[0].value' shown.json)" = github.com ]
	[ "$(jq -r '.network.allow[0].from' shown.json)" = "p.json: network.allow[0]" ]
	[ "$(jq -r '.network.deny[0].from' shown.json)" = "--deny-domain" ]
	[ "$(jq -r '.network.mode.from' shown.json)" = "built-in defaults: network.mode" ]
	run "$CORDON" policy show --only --policy shown.json
	[ "$status" -eq 0 ]
	[ "$output" = "$(cat shown.json)" ]
	run "$CORDON" policy check shown.json
	[ "$status" -eq 0 ]
}

@test "an unprivileged user's own policy layer is read" {
	uhome=$(mktemp -d)
	mkdir -p "$uhome/.config/cordon"
	echo '{"version": 1, "network": {"allow": ["mine.test"]}}' \
	    >"$uhome/.config/cordon/policy.json"
	# A copy the account can run wherever the checkout lives.
	cp_cordon "$uhome"
	cd /
	run as_user "$uhome" "$uhome/cordon" policy explain mine.test
	rm -rf "$uhome"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "allow mine.test:443: "*"/.config/cordon/policy.json: network.allow[0])" ]]
}

@test "check: a listed Docker or Podman socket is said to be root on the host" {
	write p.json <<-'EOF'
	{"version": 1, "filesystem": {"unix_sockets": [
	  "~/.docker/run/docker.sock", "/run/podman/podman.sock",
	  "/run/user/1000/gnupg/S.gpg-agent"]}}
	EOF
	run "$CORDON" policy check p.json
	[ "$status" -eq 0 ]
	[[ "$output" == *"p.json: warning: $HOME/.docker/run/docker.sock (p.json: filesystem.unix_sockets[0]): Docker's socket: whoever connects to it is root on the host"* ]]
	[[ "$output" == *"warning: /run/podman/podman.sock"*"Podman's socket"* ]]
	[[ "$output" != *"S.gpg-agent"* ]]
	run "$CORDON" policy show --policy p.json
	[ "$(printf '%s\n' "$output" | jq -r '.filesystem.unix_sockets[2].value')" = /run/user/1000/gnupg/S.gpg-agent ]
}

@test "check: a workspace policy cannot add a host Unix socket" {
	write ws/.cordon/policy.json <<-'EOF'
	{"version": 1, "filesystem": {"unix_sockets": ["/run/docker.sock"]}}
	EOF
	run "$CORDON" policy check ws/.cordon/policy.json
	[ "$status" -eq 1 ]
	[[ "$output" == *"filesystem.unix_sockets[0]: a workspace policy may not open Unix sockets of the host"* ]]
	run "$CORDON" policy show --workspace ws
	[ "$status" -ne 0 ]
	[[ "$output" == *"a workspace policy may not open Unix sockets"* ]]
}
