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

@test "the connect thread starts at the sandbox's first call: cordon run keeps one thread while the command makes none, then a call starts it and is answered" {
	start_bg lazy in_sandbox --network none -- sh -c '
		touch started
		while [ ! -e go ]; do sleep 0.05; done
		"$1" raw unix stream 0100,2f6e6f7065,00 8 >connected
		while [ ! -e end ]; do sleep 0.05; done' sh "$CX"
	wait_for test -e "$WS/started"
	# PID 1's socket and the command's listener came before it ran.
	[ "$(ls "/proc/$BG_PID/task" | wc -l)" -eq 1 ]
	touch "$WS/go"
	wait_for test -s "$WS/connected"
	[ "$(cat "$WS/connected")" = "connect: ENOENT" ]
	[ "$(ls "/proc/$BG_PID/task" | wc -l)" -ge 2 ]
	touch "$WS/end"
	wait "$BG_PID"
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

# The sandbox's own Unix sockets (issue: tmux, gpg-agent, a test suite's
# server): a socket bound inside is reached from inside, whether or not
# the run also has cordon's ssh-agent or a listed host socket; a host
# socket stays refused unless listed, a missing path is ENOENT, and the
# host's abstract names stay out of reach.

# usock.py ADDR...: for each, a server inside (a fork that answers one
# "hi") then a client, printing "ADDR hi" or "ADDR ERRNO".  @NAME is an
# abstract name; ?ADDR only connects (a server outside, or none).
usock_script() {
	cat >"$UDIR/bin/usock.py" <<-'EOF'
	import errno, os, socket, sys
	def serve(addr):
	    s = socket.socket(socket.AF_UNIX)
	    s.bind(addr)
	    s.listen(4)
	    if os.fork() == 0:
	        c, _ = s.accept()
	        c.sendall(b"hi")
	        os._exit(0)
	    s.close()
	def connect(addr):
	    c = socket.socket(socket.AF_UNIX)
	    try:
	        c.connect(addr)
	        return c.recv(10).decode()
	    except OSError as e:
	        return errno.errorcode[e.errno]
	for a in sys.argv[1:]:
	    if a.startswith("?"):
	        a = a[1:]
	    else:
	        serve(a.replace("@", "\0", 1))
	    print(a, connect(a.replace("@", "\0", 1)), flush=True)
	EOF
}

# hostsrv.py PATH|@NAME: a server on the host, writable by anyone, that
# answers "hi" and logs each connection it accepts.
host_server() {
	cat >"$UDIR/bin/hostsrv.py" <<-'EOF'
	import os, socket, sys
	a = sys.argv[1]
	s = socket.socket(socket.AF_UNIX)
	s.bind(a.replace("@", "\0", 1))
	if not a.startswith("@"):
	    os.chmod(a, 0o777)
	s.listen(16)
	print("listening", flush=True)
	while True:
	    c, _ = s.accept()
	    print("accepted", flush=True)
	    c.sendall(b"hi")
	    c.close()
	EOF
	start_bg "host$2" python3 "$UDIR/bin/hostsrv.py" "$1"
	for _ in $(seq 100); do
		grep -q listening "$BATS_TEST_TMPDIR/host$2.log" && return 0
		sleep 0.05
	done
	return 1
}

# sock_run WHO MODE ARGS...: cordon run as WHO (user, me), bounded, with
# MODE: plain (no route at all), agent (the host's ssh-agent, so
# cordon's, and an allowed host), listed (a host socket listed).
sock_run() {
	local who=$1 mode=$2 env=()
	shift 2
	local args=(--read-only "$UDIR/bin" --read-only "$UDIR/sock")
	case $mode in
	agent)
		env=(SSH_AUTH_SOCK="$AGENT")
		args+=(--allow-domain example.test:22) ;;
	listed)
		printf '{"version": 1, "filesystem": {"unix_sockets": ["%s"]}}\n' \
		    "$UDIR/sock/listed.sock" >"$UDIR/listed.json"
		args+=(--policy "$UDIR/listed.json") ;;
	esac
	cd "$(ws_of "$who")" || return 1
	if [ "$who" = user ]; then
		as_user "$UDIR/home" env "${env[@]}" timeout -k 5 60 \
		    "$UCORDON" run "${args[@]}" "$@"
	else
		env "${env[@]}" timeout -k 5 60 "$UCORDON" run "${args[@]}" "$@"
	fi
}

# The whos this run may use: root's half only as root.
whos() {
	echo user
	[ "$(id -u)" -ne 0 ] || echo me
}

# WHO's workspace: root's own (root inside may not write the test
# user's, whose uid is not mapped there).
ws_of() {
	if [ "$1" = user ]; then
		echo "$WS"
	else
		mkdir -p "$UDIR/mews"
		echo "$UDIR/mews"
	fi
}

@test "the sandbox's own Unix sockets: a server and its client inside, by relative and absolute path, in the workspace and /tmp, and by abstract name; with and without cordon's ssh-agent and a listed host socket, as the user and as root" {
	local who mode ws
	usock_script
	start_agent user
	host_server "$UDIR/sock/listed.sock" listed
	for who in $(whos); do
		ws=$(ws_of "$who")
		for mode in plain agent listed; do
			rm -f "$ws"/*.sock
			run sock_run "$who" "$mode" -- sh -c "python3 \
			    $UDIR/bin/usock.py rel.sock $ws/abs.sock /tmp/t.sock \
			    @cordon-own-$$ && mkdir -p d && cd d && python3 \
			    $UDIR/bin/usock.py ../up.sock '?$ws/abs.sock'"
			echo "$who, $mode: $output"
			[ "$status" -eq 0 ]
			[[ $output == *"rel.sock hi"* ]]
			[[ $output == *"$ws/abs.sock hi"* ]]
			[[ $output == *"/tmp/t.sock hi"* ]]
			[[ $output == *"@cordon-own-$$ hi"* ]]
			[[ $output == *"../up.sock hi"* ]]
			# The server answered once: its socket is gone.
			[[ $output == *"$ws/abs.sock ECONNREFUSED"* ]]
			[[ $output != *refused* ]]
		done
		# The listed host socket, beside them.
		rm -f "$ws"/*.sock
		run sock_run "$who" listed -- python3 "$UDIR/bin/usock.py" \
		    "?$UDIR/sock/listed.sock" rel.sock
		echo "$who, listed: $output"
		[[ $output == *"$UDIR/sock/listed.sock hi"* ]]
		[[ $output == *"rel.sock hi"* ]]
	done
}

@test "tmux and gpg-agent work inside, with cordon's ssh-agent and without, as the user and as root" {
	local who mode
	command -v tmux >/dev/null && command -v gpg >/dev/null || {
		echo "missing tmux or gnupg: run 'make deps'" >&2
		return 1
	}
	start_agent user
	for who in $(whos); do
		for mode in plain agent; do
			# The test user's login shell is nologin.
			run sock_run "$who" "$mode" -- env SHELL=/bin/sh \
			    sh -c 'tmux new-session \
			    -d -s cordon "sleep 60" && tmux ls && tmux \
			    kill-server && export GNUPGHOME=/tmp/gnupg && \
			    mkdir -m 700 $GNUPGHOME && gpg --batch \
			    --passphrase "" --quick-gen-key "T <t@example.test>" \
			    default default never && echo signed | gpg --batch \
			    --clearsign | gpg --batch --verify && echo verified'
			echo "$who, $mode: $output"
			[ "$status" -eq 0 ]
			[[ $output == *"cordon: 1 windows"* ]]
			[[ $output == *"Good signature"* ]]
			[[ $output == *verified* ]]
		done
	done
}

@test "a host Unix socket the sandbox sees stays refused with the hint, a missing path is ENOENT, and the host's abstract names are out of reach" {
	local who mode
	usock_script
	start_agent user
	host_server "$UDIR/sock/host.sock" path
	host_server "@cordon-host-$$" abstract
	# Outside, the test user reaches both (the controls).
	run as_user "$UDIR/home" python3 "$UDIR/bin/usock.py" \
	    "?$UDIR/sock/host.sock" "?@cordon-host-$$"
	echo "outside: $output"
	[[ $output == *"$UDIR/sock/host.sock hi"* ]]
	[[ $output == *"@cordon-host-$$ hi"* ]]
	for who in $(whos); do
		for mode in plain agent listed; do
			run sock_run "$who" "$mode" -- python3 \
			    "$UDIR/bin/usock.py" "?$UDIR/sock/host.sock" \
			    "?$(ws_of "$who")/none.sock" "?/tmp/none/x.sock" \
			    "?@cordon-host-$$"
			echo "$who, $mode: $output"
			[ "$status" -eq 0 ]
			[[ $output == *"$UDIR/sock/host.sock EACCES"* ]]
			[[ $output == *"cordon: refused 1 connection: $UDIR/sock/host.sock (not in filesystem.unix_sockets)"* ]]
			[[ $output == *"add \"$UDIR/sock/host.sock\" to filesystem.unix_sockets in your own policy"* ]]
			[[ $output == *"/none.sock ENOENT"* ]]
			[[ $output == *"/tmp/none/x.sock ENOENT"* ]]
			[[ $output == *"@cordon-host-$$ ECONNREFUSED"* ]]
		done
	done
	# Only the controls reached them.
	[ "$(grep -c accepted "$BATS_TEST_TMPDIR/hostpath.log")" -eq 1 ]
	[ "$(grep -c accepted "$BATS_TEST_TMPDIR/hostabstract.log")" -eq 1 ]
}

@test "following the hint for a host socket in the workspace lists it, and the run reaches it" {
	usock_script
	host_server "$WS/dev.sock" dev
	run sock_run user plain -- python3 "$UDIR/bin/usock.py" "?$WS/dev.sock"
	echo "$output"
	[[ $output == *"$WS/dev.sock EACCES"* ]]
	[[ $output == *"add \"$WS/dev.sock\" to filesystem.unix_sockets in your own policy"* ]]
	printf '{"version": 1, "filesystem": {"unix_sockets": ["%s"]}}\n' \
	    "$WS/dev.sock" >"$UDIR/dev.json"
	run sock_run user plain --policy "$UDIR/dev.json" -- python3 \
	    "$UDIR/bin/usock.py" "?$WS/dev.sock"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"$WS/dev.sock hi"* ]]
	[ "$(grep -c accepted "$BATS_TEST_TMPDIR/hostdev.log")" -eq 1 ]
}
