#!/usr/bin/env bats
# Ordinary agent work behaves inside as on the host: the tools an agent
# runs in a repository (git, cargo, npm...) see it as they would without
# cordon, and the host's tools see it so while a run is under way.  Each
# test first does the task on the host, then inside, as the test user.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	as_me sh -c 'git init -q && git config user.email t@example.test &&
	    git config user.name t && echo x > f && git add f &&
	    git commit -qm init'
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# as_me CMD...: CMD as the test user, in the workspace (no `run`).
as_me() {
	(cd "$WS" && as_user "$UDIR/home" "$@")
}

# waits up to 30 s for a file to exist
wait_file() {
	local i
	for i in $(seq 300); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

@test "while a run is under way, git on the host works in its repository; nothing is left behind" {
	as_me git status --short
	start_bg run in_sandbox --quiet -- sh -c \
	    'touch started; while [ ! -e stop ]; do sleep 0.1; done'
	wait_file "$WS/started"
	# A placeholder git reads (commondir) must read as git's own.
	run as_me git status --short
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *fatal* ]]
	run as_me git log --oneline
	[ "$status" -eq 0 ]
	touch "$WS/stop"
	wait "$BG_PID"
	[ ! -e "$WS/.git/commondir" ] && [ ! -e "$WS/.git/gitdir" ]
}

@test "cargo new in a repository's folder joins that repository, as on the host" {
	# On the host: cargo finds the repository above and makes none.
	as_me cargo new -q host-crate
	[ -d "$WS/host-crate" ] && [ ! -e "$WS/host-crate/.git" ]
	rm -rf "$WS/host-crate"
	run in_sandbox --quiet -- sh -c 'cargo new -q app && cd app &&
	    cargo run -q --offline'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"Hello, world!"* ]]
	[ -f "$WS/app/Cargo.toml" ] && [ ! -e "$WS/app/.git" ]
	[[ $(as_me git status --short) == *"app/"* ]]
}
