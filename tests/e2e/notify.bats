#!/usr/bin/env bats
# cordon run's connect thread (notify.c), which makes every connect(2) of
# a sandbox that may reach a Unix socket of the host: with the host's
# ssh-agent (SSH_AUTH_SOCK) and an allowed host, the ordinary setup, or
# with filesystem.unix_sockets.  What the command sends it may be
# malformed on purpose (tests/tools/connectx.c makes the calls the C
# library and Python will not): each gets the kernel's own answer, and
# cordon run ends with the command's status.  A connect that waits holds
# only its own caller, and does not hold cordon run's end.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	command -v ssh-agent >/dev/null || {
		echo "missing ssh-agent: run 'make deps'" >&2
		return 1
	}
	CX="$UDIR/bin/connectx"
	AGENT="$UDIR/agent/agent.sock"
	mkdir -p "$UDIR/agent" "$UDIR/sock"
	if [ "$(id -u)" -eq 0 ]; then
		chown "$TEST_USER:" "$UDIR/agent" "$UDIR/sock"
	fi
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# Starts a host ssh-agent as the user who will run cordon ($1: user or
# me): ssh-agent takes no other user's connection.
start_agent() {
	if [ "$1" = user ]; then
		start_bg agent as_user "$UDIR/home" ssh-agent -D -a "$AGENT"
	else
		start_bg agent ssh-agent -D -a "$AGENT"
	fi
	wait_listen "unix:$AGENT"
}

# cordon run, as the test user ($1 user) or as whoever runs the tests
# ($1 me), with the agent and an allowed host, bounded: a run that hangs
# ends as 124.
agent_run() {
	local who=$1
	shift
	cd "$WS" || return 1
	if [ "$who" = user ]; then
		as_user "$UDIR/home" env SSH_AUTH_SOCK="$AGENT" \
		    timeout -k 5 30 "$UCORDON" run --read-only "$UDIR/bin" \
		    --allow-domain example.test "$@"
	else
		SSH_AUTH_SOCK="$AGENT" timeout -k 5 30 "$UCORDON" run \
		    --read-only "$UDIR/bin" --allow-domain example.test "$@"
	fi
}

# The malformed addresses, each on its own socket, then exit 7 (a script
# for sh -c).  The first two overflowed cordon run's copy of the path
# (FORTIFY: 134).
malformed() {
	local cx="$UDIR/bin/connectx raw"
	cat <<-EOF
		$cx unix stream 0100,00,61*125 128
		$cx unix stream 0100,2f,61*125 128
		$cx unix seqpacket 0100,2f,61*109 111
		$cx unix stream 0100,00,61*108 111
		$cx unix stream 0100,2f 129
		$cx unix stream 0100,2f -1
		$cx unix stream 0100 2
		$cx unix stream 0000,2f,61 4
		$cx unix stream 0200,2f,61 16
		$cx inet stream 0200,0050,7f000001 15
		$cx inet6 stream 0a00,00*21 23
		$cx netlink raw 1000,00*9 11
		$cx unix stream 0100,2f,61*107 110
		$cx unix stream 0100,00,61*107 110
		exit 7
	EOF
}

# What the run printed for MALFORMED: twelve EINVAL, then the two longest
# well-formed ones, answered as the kernel answers them in the sandbox:
# no such path, and no such abstract name in its network namespace.
malformed_answered() {
	echo "$output"
	[ "$status" -eq 7 ]
	[ "$(grep -c '^connect: EINVAL$' <<<"$output")" -eq 12 ]
	[ "$(grep -c '^connect: ENOENT$' <<<"$output")" -eq 1 ]
	[ "$(grep -c '^connect: ECONNREFUSED$' <<<"$output")" -eq 1 ]
}

@test "a malformed Unix address gets EINVAL, and cordon run ends with the command's status (as the user)" {
	start_agent user
	run agent_run user -- sh -c "$(malformed)"
	malformed_answered
}

@test "a malformed Unix address gets EINVAL, and cordon run ends with the command's status (as root)" {
	[ "$(id -u)" -eq 0 ] || skip "the tests run unprivileged"
	start_agent me
	run agent_run me -- sh -c "$(malformed)"
	malformed_answered
}

@test "a connect whose SYN goes unanswered does not hold another" {
	start_agent user
	# tcp-full: a listener in the sandbox whose backlog is full; the
	# second connect, to another listener, is answered at once.
	run agent_run user -- sh -c "$CX stall tcp-full tcp; exit 3"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"then: 0"* ]]
	start_agent_root_too
	run agent_run me -- sh -c "$CX stall tcp-full tcp; exit 3"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"then: 0"* ]]
}

# As root, a second agent of root's own (ssh-agent serves its own user).
start_agent_root_too() {
	[ "$(id -u)" -eq 0 ] || skip "the tests run unprivileged"
	AGENT="$UDIR/agent/root.sock"
	start_agent me
}

# A host socket with a full backlog, listed in a policy: a connect to it
# waits for as long as its listener does not accept.
full_socket() {
	FULL="$UDIR/sock/full.sock"
	start_bg full as_user "$UDIR/home" "$CX" full "$FULL"
	wait_listen "unix:$FULL"
	printf '{"version": 1, "filesystem": {"unix_sockets": ["%s"]}}\n' \
	    "$FULL" >"$UDIR/p.json"
}

@test "a connect waiting on a host socket's full backlog holds neither the agent's nor cordon run's end" {
	start_agent user
	full_socket
	run agent_run user --policy "$UDIR/p.json" -- sh -c \
	    "$CX stall unix:$FULL unix:/run/cordon/ssh-agent.sock; exit 3"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"then: 0"* ]]
	# The command ends with its connect still waiting on the host: the
	# run ends all the same.
	run agent_run user --policy "$UDIR/p.json" -- sh -c \
	    "$CX stall unix:$FULL -; exit 4"
	echo "$output"
	[ "$status" -eq 4 ]
}
