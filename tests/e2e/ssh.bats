#!/usr/bin/env bats
# git over SSH inside cordon run, with the private key never inside: a
# real sshd (Debian's openssh-server) on 127.0.0.1 with a throwaway host
# key, serving a bare repository; a throwaway key in a throwaway
# ssh-agent, run as the user who runs cordon (ssh-agent takes no other
# user's connection).  The sandbox gets cordon's agent at
# /run/cordon/ssh-agent.sock, which signs a login only for a host whose
# key known_hosts lists under a name the policy allows.
#
# The sandbox runs as the test user, and as root for the clone.  The
# login on the test sshd is as whoever runs the tests (root in CI): the
# sshd cannot run a session for the test user, whose shell is nologin.
#
# The runs use the default policy: the command's connect to the agent's
# socket is made by cordon run (the same route as a socket listed in
# filesystem.unix_sockets), and every other Unix socket stays closed.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	for p in ssh ssh-agent ssh-add ssh-keygen git /usr/sbin/sshd; do
		command -v "$p" >/dev/null || {
			echo "missing $p: run 'make deps'" >&2
			return 1
		}
	done
	SRV="$UDIR/srv"
	mkdir -p "$SRV" "$UDIR/home/.ssh"
	ssh-keygen -q -t ed25519 -N '' -C throwaway -f "$UDIR/home/userkey"
	cp "$UDIR/home/userkey.pub" "$SRV/authorized_keys"
	LOGIN=$(id -un)
	git init -q --bare "$SRV/repo.git"
	git -C "$SRV/repo.git" symbolic-ref HEAD refs/heads/main
	git init -q "$BATS_TEST_TMPDIR/src"
	git -C "$BATS_TEST_TMPDIR/src" -c user.email=t@t -c user.name=t \
	    commit -q --allow-empty -m "over ssh"
	git -C "$BATS_TEST_TMPDIR/src" push -q "$SRV/repo.git" HEAD:refs/heads/main
	PORT=$(free_port)
	start_sshd ed25519
	PIN=(--resolve git.test:127.0.0.1 --resolve other.test:127.0.0.1
	    --allow-cidr 127.0.0.1/32)
	ELOG="$WS/egress.log"
	URL="ssh://$LOGIN@git.test:$PORT$SRV/repo.git"
	# ssh reads known_hosts from the passwd entry's home, not $HOME.
	GSSH='ssh -o UserKnownHostsFile=$HOME/.ssh/known_hosts -o BatchMode=yes'
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# Starts the test sshd on $PORT with a new host key (ssh-keygen -t ARGS),
# listed in known_hosts as git.test's; ends the one before, if any.
start_sshd() {
	[ -z "${SSHD_PID:-}" ] || { kill "$SSHD_PID"; wait "$SSHD_PID" || true; }
	rm -f "$SRV/hostkey" "$SRV/hostkey.pub"
	ssh-keygen -q -N '' -C host -f "$SRV/hostkey" -t "$@"
	cat >"$SRV/sshd_config" <<-EOF
		Port $PORT
		ListenAddress 127.0.0.1
		HostKey $SRV/hostkey
		AuthorizedKeysFile $SRV/authorized_keys
		StrictModes no
		UsePAM no
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		PidFile none
		LogLevel VERBOSE
	EOF
	[ "$(id -u)" -ne 0 ] || mkdir -p /run/sshd
	start_bg sshd /usr/sbin/sshd -D -e -f "$SRV/sshd_config"
	wait_listen "tcp:127.0.0.1:$PORT"
	SSHD_PID=$BG_PID
	SSHD_LOG="$BATS_TEST_TMPDIR/sshd.log"
	known git.test
}

# known_hosts lists the test sshd's key under NAME on its port.
known() {
	echo "[$1]:$PORT $(cut -d' ' -f1,2 "$SRV/hostkey.pub")" \
	    >"$UDIR/home/.ssh/known_hosts"
}

# Starts the throwaway agent as the user who will run cordon ($1: user
# or me), holding the throwaway key; a fake private key sits in ~/.ssh.
start_agent() {
	AGENT="$UDIR/agent/agent.sock"
	mkdir -p "$UDIR/agent"
	echo "-----BEGIN FAKE PRIVATE KEY-----" >"$UDIR/home/.ssh/id_ed25519"
	chmod 600 "$UDIR/home/userkey" "$UDIR/home/.ssh/id_ed25519"
	if [ "$1" = user ]; then
		[ "$(id -u)" -ne 0 ] || chown "$TEST_USER:" "$UDIR/agent"
		start_bg agent as_user "$UDIR/home" ssh-agent -D -a "$AGENT"
		wait_listen "unix:$AGENT"
		run as_user "$UDIR/home" env SSH_AUTH_SOCK="$AGENT" \
		    ssh-add -q "$UDIR/home/userkey"
	else
		start_bg agent ssh-agent -D -a "$AGENT"
		wait_listen "unix:$AGENT"
		run env SSH_AUTH_SOCK="$AGENT" ssh-add -q "$UDIR/home/userkey"
	fi
	[ "$status" -eq 0 ]
}

# cordon run as the test user with the agent, the pins and the policy.
agent_run() {
	cd "$WS" || return 1
	as_user "$UDIR/home" env SSH_AUTH_SOCK="$AGENT" timeout 60 \
	    "$UCORDON" run --read-only "$UDIR/bin" "${PIN[@]}" \
	    --log "$ELOG" "$@"
}

@test "git clone over SSH through cordon's agent; the key, ~/.ssh and the agent stay out" {
	start_agent user
	run agent_run --allow-domain "git.test:$PORT" -- sh -c "
	    export GIT_SSH_COMMAND='$GSSH'
	    echo \"sock \$SSH_AUTH_SOCK\"
	    ssh-add -L || echo listed-none
	    cat ~/.ssh/id_ed25519 2>/dev/null || echo key-hidden
	    ls ~/.ssh >/dev/null 2>&1 || echo ssh-unlistable
	    test -e '$AGENT' || echo agent-hidden
	    grep -c git.test ~/.ssh/known_hosts
	    git clone -q '$URL' r && git -C r log --format=%s"
	echo "$output"
	# Into the workspace, as README's example: the clone is kept.
	[ "$status" -eq 0 ]
	[ -d "$WS/r/.git" ]
	[ "${lines[0]}" = "sock /run/cordon/ssh-agent.sock" ]
	[[ "$output" == *"The agent has no identities."* ]]
	[[ "$output" == *listed-none* ]]
	[[ "$output" == *key-hidden* ]]
	[[ "$output" == *ssh-unlistable* ]]
	[[ "$output" == *agent-hidden* ]]
	[[ "$output" == *"over ssh"* ]]
	[[ "$output" == *"ssh-agent: 1 login signed, 0 requests refused"* ]]
	grep -q "Accepted publickey for $LOGIN" "$SSHD_LOG"
	[ "$(jq -r 'select(.protocol == "ssh-agent") | [.method, .host,
	    .port, .address, .decision, .rule] | @tsv' "$ELOG")" = \
	    "$(printf 'sign\tgit.test\t%s\t127.0.0.1\tallow\tgit.test:%s' \
	    "$PORT" "$PORT")" ]
}

# A server's version line may come before the client's (RFC 4253
# section 4.2: either side may send first); on a busy machine it often
# does, as ssh reads its files between connect and its own line.  This
# ProxyCommand holds ssh's bytes until the server's line has gone by.
@test "git clone over SSH when the server's version line comes before the client's" {
	start_agent user
	cat >"$UDIR/bin/serverfirst" <<-'EOF'
		#!/bin/bash
		exec 3<>"/dev/tcp/$1/$2" || exit 1
		IFS= read -r line <&3 || exit 1
		printf '%s\n' "$line"
		cat <&3 &
		exec cat >&3
	EOF
	chmod 755 "$UDIR/bin/serverfirst"
	run agent_run --allow-domain "git.test:$PORT" -- sh -c "
	    export SHELL=/bin/sh GIT_SSH_COMMAND=\"$GSSH -o \
	    ProxyCommand='$UDIR/bin/serverfirst %h %p'\"
	    git clone -q '$URL' /tmp/r && git -C /tmp/r log --format=%s"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "over ssh" ]
	[[ "$output" == *"ssh-agent: 1 login signed, 0 requests refused"* ]]
	grep -q "Accepted publickey for $LOGIN" "$SSHD_LOG"
	[ "$(jq -r 'select(.protocol == "ssh-agent") | [.method, .host,
	    .port, .decision] | @tsv' "$ELOG")" = \
	    "$(printf 'sign\tgit.test\t%s\tallow' "$PORT")" ]
}

@test "git clone over SSH as root, through cordon's agent" {
	start_agent me
	# Root's own folder: without capabilities inside, the test user's
	# workspace is not root's to write.
	mkdir "$WS/root"
	cd "$WS/root"
	run env SSH_AUTH_SOCK="$AGENT" HOME="$UDIR/home" timeout 60 \
	    "$UCORDON" run "${PIN[@]}" --log "$ELOG" \
	    --allow-domain "git.test:$PORT" -- sh -c "
	    export GIT_SSH_COMMAND='$GSSH'
	    git clone -q '$URL' r && git -C r log --format=%s"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -d "$WS/root/r/.git" ]
	[ "${lines[0]}" = "over ssh" ]
	[ "$(jq -r 'select(.protocol == "ssh-agent") | .decision' "$ELOG")" = \
	    allow ]
}

@test "RSA and ECDSA host keys bind too (rsa-sha2-512, ecdsa-sha2-nistp384)" {
	start_agent me
	cd "$WS"
	for t in rsa "ecdsa -b 384"; do
		# shellcheck disable=SC2086
		start_sshd $t
		rm -f "$ELOG"
		run env SSH_AUTH_SOCK="$AGENT" HOME="$UDIR/home" timeout 60 \
		    "$UCORDON" run "${PIN[@]}" --log "$ELOG" \
		    --allow-domain "git.test:$PORT" -- sh -c "
		    export GIT_SSH_COMMAND='$GSSH'
		    git clone -q '$URL' /tmp/r && echo cloned"
		echo "$t: $output"
		[ "$status" -eq 0 ]
		[ "${lines[0]}" = cloned ]
		[ "$(jq -r 'select(.protocol == "ssh-agent") | .decision' \
		    "$ELOG")" = allow ]
	done
}

@test "a host key known_hosts lists under another name than where the proxy connected gets no signature, and the fix" {
	start_agent user
	known other.test
	# ssh itself takes any key here: cordon's agent is what refuses.
	run agent_run --allow-domain "git.test:$PORT" \
	    --allow-domain "other.test:$PORT" -- sh -c "
	    export GIT_SSH_COMMAND='ssh -o UserKnownHostsFile=/dev/null \
	    -o StrictHostKeyChecking=no -o BatchMode=yes'
	    git clone -q '$URL' /tmp/r"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Permission denied (publickey)"* ]]
	[[ "$output" == *"to allow git.test:$PORT: list the host key in known_hosts as [git.test]:$PORT, if that server holds it"* ]]
	run ! grep -q "Accepted publickey" "$SSHD_LOG"
	[ "$(jq -r 'select(.protocol == "ssh-agent") | [.method, .host,
	    .port, .address, .decision] | @tsv' "$ELOG")" = \
	    "$(printf 'session-bind\tgit.test\t%s\t127.0.0.1\tdeny' "$PORT")" ]
	[[ "$(jq -r 'select(.protocol == "ssh-agent") | .reason' "$ELOG")" == *"(known_hosts has it as [other.test]:$PORT)" ]]
}

@test "SSH to a port the policy does not allow is refused, with the fix, before any login" {
	start_agent user
	# The name is allowed on another port: the capture refuses the
	# connection itself, as it refuses a CONNECT (no SNI to look at).
	run agent_run --allow-domain git.test:1 -- sh -c "
	    export GIT_SSH_COMMAND='$GSSH'
	    git clone -q '$URL' /tmp/r"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"--allow-domain git.test:$PORT"* ]]
	run ! grep -q "Accepted publickey" "$SSHD_LOG"
	[ "$(jq -r 'select(.protocol == "ssh-agent")' "$ELOG")" = "" ]
	[ "$(jq -r 'select(.event != "open") | select(.protocol == "capture") | .decision' "$ELOG")" = \
	    deny ]
}

@test "--dry-run says what cordon's agent does; without an allowed host it is off" {
	start_agent user
	run agent_run --dry-run --allow-domain "git.test:$PORT" -- true
	[ "$status" -eq 0 ]
	[[ "$output" == *"ssh-agent: cordon's, at /run/cordon/ssh-agent.sock"* ]]
	[[ "$output" == *"SSH_AUTH_SOCK=/run/cordon/ssh-agent.sock"* ]]
	[[ "$output" == *"/.ssh/known_hosts: bind, read-only"* ]]
	run agent_run --dry-run -- true
	[ "$status" -eq 0 ]
	[[ "$output" != *"ssh-agent: cordon's"* ]]
	[[ "$output" != *"SSH_AUTH_SOCK=/run/cordon"* ]]
	# The user's own is listed among the variables dropped, and why.
	[[ "$output" == *"SSH_AUTH_SOCK (an agent's or a bus's socket: never passed)"* ]]
}

# A second sshd, on $PORT2, with the same host key as the first (a cloned
# image, another port of one host): the service the policy refuses.  A
# relay, cordon bridge on $RPORT, leads to it; relay.test:$RPORT is an
# allowed TCP destination.
start_twin() {
	PORT2=$(free_port)
	RPORT=$(free_port)
	sed "s/^Port .*/Port $PORT2/" "$SRV/sshd_config" >"$SRV/sshd2_config"
	start_bg sshd2 /usr/sbin/sshd -D -e -f "$SRV/sshd2_config"
	wait_listen "tcp:127.0.0.1:$PORT2"
	start_bg relay "$CORDON" bridge --listen "tcp:127.0.0.1:$RPORT" \
	    --connect "tcp:127.0.0.1:$PORT2"
	wait_listen "tcp:127.0.0.1:$RPORT"
	PIN+=(--resolve relay.test:127.0.0.1)
}

@test "a login to a refused sshd with the allowed host's key, through an allowed relay, is refused where the proxy connected" {
	start_agent user
	start_twin
	# ssh checks the key as git.test's: only cordon's agent can refuse.
	run agent_run --allow-domain "git.test:$PORT" \
	    --allow-domain "relay.test:$RPORT" -- sh -c "$GSSH \
	    -o HostKeyAlias=[git.test]:$PORT -p $RPORT $LOGIN@relay.test \
	    echo logged-in"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" != *logged-in* ]]
	[[ "$output" == *"Permission denied (publickey)"* ]]
	[[ "$output" == *"to allow relay.test:$RPORT: list the host key in known_hosts as [relay.test]:$RPORT, if that server holds it"* ]]
	run ! grep -q "Accepted publickey" "$BATS_TEST_TMPDIR/sshd2.log"
	[ "$(jq -r 'select(.protocol == "ssh-agent") | [.method, .host,
	    .port, .decision] | @tsv' "$ELOG")" = \
	    "$(printf 'session-bind\trelay.test\t%s\tdeny' "$RPORT")" ]
	[ "$(jq -r 'select(.protocol == "ssh-agent") | .reason' "$ELOG")" = \
	    "the host key is not in known_hosts as [relay.test]:$RPORT, where the proxy connected (known_hosts has it as [git.test]:$PORT)" ]
	# Known as the relay's too, the key is the relay's: the login is
	# signed, and logged where the proxy connected.
	echo "[relay.test]:$RPORT $(cut -d' ' -f1,2 "$SRV/hostkey.pub")" \
	    >>"$UDIR/home/.ssh/known_hosts"
	rm -f "$ELOG"
	run agent_run --allow-domain "relay.test:$RPORT" -- sh -c "$GSSH \
	    -p $RPORT $LOGIN@relay.test echo logged-in"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = logged-in ]
	grep -q "Accepted publickey for $LOGIN" "$BATS_TEST_TMPDIR/sshd2.log"
	[ "$(jq -r 'select(.protocol == "ssh-agent") | [.method, .host,
	    .port, .decision] | @tsv' "$ELOG")" = \
	    "$(printf 'sign\trelay.test\t%s\tallow' "$RPORT")" ]
}

@test "a session inside an allowed one (ssh -J) gets no signature: no connection of the proxy carried it" {
	start_agent user
	start_twin
	# The jump host's login is signed; the one it forwards to is not,
	# whatever name ssh checks its key under.  (ssh runs ProxyCommand
	# with $SHELL: the test user's is nologin.)
	run agent_run --allow-domain "git.test:$PORT" -- sh -c "
	    export SHELL=/bin/sh; $GSSH \
	    -o HostKeyAlias=[git.test]:$PORT -o ProxyCommand='$GSSH \
	    -p $PORT -W %h:%p $LOGIN@git.test' \
	    -p $PORT2 $LOGIN@127.0.0.1 echo logged-in"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" != *logged-in* ]]
	run ! grep -q "Accepted publickey" "$BATS_TEST_TMPDIR/sshd2.log"
	grep -q "Accepted publickey for $LOGIN" "$SSHD_LOG"
	[ "$(jq -r 'select(.protocol == "ssh-agent") | [.method, .host,
	    .decision] | @tsv' "$ELOG")" = \
	    "$(printf 'sign\tgit.test\tallow\nsession-bind\t\tdeny')" ]
	jq -r 'select(.protocol == "ssh-agent") | .reason' "$ELOG" |
	    grep -q "no open connection of the run's proxy carried this session's key exchange"
}
