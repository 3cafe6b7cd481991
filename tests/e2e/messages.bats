#!/usr/bin/env bats
# What a newcomer meets first: a URL where a host goes, a log path with
# "..", --help on every subcommand, a mistyped option, a bad value, a
# CA folder others may write, an unknown group, a proxy that cannot
# start.  Each message says what is wrong and the fix.

# bats file_tags=fast

load helpers

bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
}

teardown() {
	teardown_bg
}

@test "--allow-domain with a URL: a host name, not a URL, and the host to write" {
	run "$CORDON" run --allow-domain https://registry.npmjs.org/ -- true
	echo "$output"
	[ "$status" -eq 125 ]
	[[ "$output" == *'a host name, not a URL: write "registry.npmjs.org"'* ]]
	[[ "$output" != *"bad port"* ]]
	# A policy is there; the flag is wrong: no "no policy".
	[[ "$output" != *"no policy"* ]]
	[[ "$output" == *"cordon: run: nothing run"* ]]
	run "$CORDON" policy explain --allow-domain \
	    'http://u:p@api.test:8080/x?y' api.test:8080
	[ "$status" -eq 2 ]
	[[ "$output" == *'a host name, not a URL: write "api.test:8080"'* ]]
	# The host it names is what works.
	run "$CORDON" policy explain --only --allow-domain api.test:8080 \
	    api.test:8080
	[ "$status" -eq 0 ]
}

@test "--log ../x.log: the file in the parent folder, no talk of a link" {
	mkdir -p ws
	cd ws
	run "$CORDON" run --log ../x.log --dry-run -- true
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"symbolic link"* ]]
	[[ "$output" == *"egress log: ../x.log"* ]]
	run "$CORDON" run --log ../none/x.log -- true
	[ "$status" -eq 125 ]
	[[ "$output" == *"its folder $BATS_TEST_TMPDIR/none: No such file or directory"* ]]
	[[ "$output" != *"symbolic link"* ]]
	run "$CORDON" run --log ./.. -- true
	[ "$status" -eq 125 ]
	[[ "$output" == *"--log ./..: not a file name"* ]]
}

@test "every subcommand has --help, with its options, on stdout, status 0" {
	for sc in run proxy bridge policy "policy check" "policy explain" \
	    "policy show" "profile seatbelt" "profile windows-firewall" \
	    log "log summary" "log tail" ca "ca init" "ca show"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$CORDON" $sc --help
		echo "$sc: $status $output $stderr"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[[ "$output" == "usage: cordon ${sc%% *}"* ]]
		[[ "$output" == *"--"* ]]
	done
	[ ! -e "$HOME/.cordon" ]
}

@test "a mistyped option: cordon: prefix, what was refused, did you mean" {
	run --separate-stderr "$CORDON" run --allow-domian x -- true
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "cordon: run: unknown option --allow-domian" ]
	[ "${stderr_lines[1]}" = "cordon: hint: did you mean --allow-domain? (cordon run --help lists the options)" ]
	run --separate-stderr "$CORDON" proxy --lisen tcp:127.0.0.1:1
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"did you mean --listen?"* ]]
	run --separate-stderr "$CORDON" run -allow-domain x -- true
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"did you mean --allow-domain, not -allow-domain?"* ]]
	run --separate-stderr "$CORDON" policy explain --alow-domain x y
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"cordon: policy explain: unknown option --alow-domain"* ]]
	[[ "$stderr" == *"did you mean --allow-domain?"* ]]
	run --separate-stderr "$CORDON" run --log
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "cordon: run: --log needs a value" ]
	run --separate-stderr "$CORDON" run --dry-run=yes -- true
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "cordon: run: --dry-run takes no value" ]
	run --separate-stderr "$CORDON" run --al x -- true
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--al is short for more than one option"* ]]
	run --separate-stderr "$CORDON" ca init --frce
	[[ "$stderr" == *"did you mean --force?"* ]]
	run --separate-stderr "$CORDON" log tail -x f
	[ "${stderr_lines[0]}" = "cordon: log tail: unknown option -x" ]
	run --separate-stderr "$CORDON" policy check --hlep
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"did you mean --help?"* ]]
	# No line of getopt's own, without the prefix.
	run --separate-stderr "$CORDON" bridge --zzz
	[ "$status" -eq 2 ]
	[ "$(printf '%s\n' "$stderr" | grep -vc '^cordon: ')" -eq 0 ]
}

@test "a bad value exits 125 as cordon(1) says; an unknown flag 2" {
	run "$CORDON" run --publish 70000 -- true
	[ "$status" -eq 125 ]
	[[ "$output" == *'--publish: "70000" is not a port'* ]]
	run "$CORDON" run --ask-secs 0 -- true
	[ "$status" -eq 125 ]
	run "$CORDON" run --no-such-flag -- true
	[ "$status" -eq 2 ]
}

@test "ca init --dir on a folder others may write: says why, and chmod 700" {
	mkdir -m 0777 open
	chmod 0777 open
	run "$CORDON" ca init --dir "$PWD/open"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"mode 0700, or 0711 (it is 0777)"* ]]
	[[ "$output" == *"cordon: hint: chmod 700 $PWD/open: others must not"* ]]
	chmod 700 open
	run "$CORDON" ca init --dir "$PWD/open"
	[ "$status" -eq 0 ]
}

@test "--socket-group unknown: says how to list and make one" {
	run "$CORDON" proxy --listen "unix:$PWD/s" --socket-group nosuchgrp
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *'no group "nosuchgrp"'* ]]
	[[ "$output" == *"cordon: hint: name a group of this system (getent group lists them)"* ]]
	[[ "$output" == *"groupadd nosuchgrp makes one"* ]]
}

@test "a proxy that cannot start leaves no empty log it made; keeps one it did not" {
	port=$(free_port)
	start_bg busy "$NETCHECK" echo "tcp:127.0.0.1:$port"
	wait_listen "tcp:127.0.0.1:$port"
	run "$CORDON" proxy --listen "tcp:127.0.0.1:$port" --log "$PWD/new.log"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"Address already in use"* ]]
	[ ! -e new.log ]
	: >old.log
	run "$CORDON" proxy --listen "tcp:127.0.0.1:$port" --log "$PWD/old.log"
	[ "$status" -eq 1 ]
	[ -e old.log ]
}
