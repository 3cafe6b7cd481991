#!/usr/bin/env bats
# The escape battery (docs/threat-model.md, "The escape catalogue").
#
# Needs `cordon run` and the test tools probe and sockpeer (make check
# builds them; each test copies them, with cordon, to a folder the test
# user can read, and names it --read-only, since /tmp is private inside),
# script(1) for the terminal tests, and root for the halves marked so
# (they are left out, with a note, when the suite runs unprivileged).
#
# Each test first runs tests/tools/probe OUTSIDE the sandbox, where the
# route must work ("escaped"): a probe that cannot escape an open door
# proves nothing inside.  Then the same probe runs INSIDE, as the
# unprivileged test user and where privilege matters as root, and must be
# "held", with the probe's own exit status 1 passed through cordon.  Where
# a peer is involved, its log also shows that nothing arrived from inside.

load helpers

bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	# A folder the test user can walk (bats' own is private to root).
	TOP=$(mktemp -d)
	chmod 755 "$TOP"
	export HOME="$TOP/home"
	export XDG_CONFIG_HOME="$HOME/.config"
	WS="$TOP/ws"
	mkdir -p "$HOME/.config" "$WS/.git/hooks" "$TOP/outside" "$TOP/bin"
	cp_cordon "$TOP/bin"
	cp "$TOOLS_DIR/probe" "$TOOLS_DIR/sockpeer" "$TOP/bin/"
	PROBE="$TOP/bin/probe"
	SOCKPEER="$TOP/bin/sockpeer"
	RUN=("$TOP/bin/cordon" run --quiet --read-only "$TOP/bin")
	printf '[core]\n\tbare = false\n' >"$WS/.git/config"
	ENV_EXTRA=()
	cd "$WS" || return 1
}

teardown() {
	teardown_bg
	cd / && rm -rf "$TOP"
}

is_root() {
	[ "$(id -u)" -eq 0 ]
}

# Hands everything under $TOP to the test user, as a real user's own
# home and project would be.
own() {
	if is_root; then
		ensure_test_user
		chown -R "$TEST_USER:" "$TOP"
	fi
}

# Checks that $output holds the probe's line "VERDICT KIND: ..." and that
# $status is the probe's (0 escaped, 1 held).  A terminal may echo a
# pushed byte before the line, hence the leading blanks.
verdict() {
	local want=$1 kind=$2 code=1

	[ "$want" = escaped ] && code=0
	if ! printf '%s\n' "$output" | tr -d '\r' |
	    grep -q "^ *$want $kind: "; then
		echo "expected \"$want $kind: ...\", got: $output"
		return 1
	fi
	if [ "$status" -ne "$code" ]; then
		echo "expected status $code, got $status"
		return 1
	fi
}

# out_user KIND ARGS...: the route works outside, for the test user.
out_user() {
	own
	run as_user "$HOME" env "${ENV_EXTRA[@]}" "$PROBE" "$@"
	echo "outside, user: $output"
	verdict escaped "$1"
}

# out_root KIND ARGS...: the route works outside, for root; without
# root, a note that the control is missing (the inside half still runs).
out_root() {
	if ! is_root; then
		echo "not root: no outside control for $*"
		return 0
	fi
	run "$PROBE" "$@"
	echo "outside, root: $output"
	verdict escaped "$1"
}

# Like out_user, but a route this machine lacks (kernel option, sysctl)
# skips the test with the probe's reason.
out_user_or_skip() {
	own
	run as_user "$HOME" env "${ENV_EXTRA[@]}" "$PROBE" "$@"
	echo "outside, user: $output"
	if [[ $output == "held "* ]]; then
		skip "no such route here: $output"
	fi
	verdict escaped "$1"
}

# Like out_user, but a route this kernel lacks (x32, vsock) is only a
# note: it is closed here already, and a skip would fail CI for a kernel
# that is safer; the inside half still runs.
out_user_or_note() {
	own
	run as_user "$HOME" env "${ENV_EXTRA[@]}" "$PROBE" "$@"
	echo "outside, user: $output"
	if [[ $output == "held "* ]]; then
		echo "note: this kernel has no such route: $output"
		return 0
	fi
	verdict escaped "$1"
}

out_root_or_skip() {
	is_root || skip "needs root for the outside control"
	run "$PROBE" "$@"
	echo "outside, root: $output"
	if [[ $output == "held "* ]]; then
		skip "no such route here: $output"
	fi
	verdict escaped "$1"
}

# sandboxed_user KIND ARGS...: the probe inside `cordon run`, test user.
sandboxed_user() {
	own
	run as_user "$HOME" env "${ENV_EXTRA[@]}" timeout -k 5 30 \
	    "${RUN[@]}" -- "$PROBE" "$@"
	echo "inside, user: $output"
}

# in_user KIND ARGS...: held inside, for the test user.
in_user() {
	sandboxed_user "$@"
	verdict held "$1"
}

# in_user_ok KIND ARGS...: works inside (a positive control: the sandbox
# runs the probe at all, and what it must allow, it allows).
in_user_ok() {
	sandboxed_user "$@"
	verdict escaped "$1"
}

# as_root VERDICT KIND ARGS...: the probe inside `cordon run` as root,
# whose verdict must be VERDICT; a note without root.
as_root() {
	local want=$1
	shift
	if ! is_root; then
		echo "not root: the root half of $1 is left out"
		return 0
	fi
	run env "${ENV_EXTRA[@]}" timeout -k 5 30 \
	    "${RUN[@]}" -- "$PROBE" "$@"
	echo "inside, root: $output"
	verdict "$want" "$1"
}

# in_root KIND ARGS...: held inside, for root.
in_root() {
	as_root held "$@"
}

# Starts sockpeer on the endpoints given; its log is peer.log.
start_peer() {
	start_bg peer "$SOCKPEER" "$@"
	for i in $(seq 100); do
		grep -qx ready "$BATS_TEST_TMPDIR/peer.log" && return 0
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/peer.log"
	return 1
}

# await_comm PID NAME: waits until PID runs the program NAME.  A job that
# start_bg runs through as_user is still root's shell until setpriv has
# changed users and exec'd the program; until then the test user may not
# signal it (EPERM), and its /proc files are root's.
await_comm() {
	local i
	for i in $(seq 100); do
		[ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

# Starts a host process of the test user's, `sleep`; its pid is $pid.
start_sleeper() {
	own
	start_bg sleeper as_user "$HOME" sleep 1000
	pid=$BG_PID
	await_comm "$pid" sleep
}

# peer_count WORD: lines of the peer's log that start with WORD.
peer_count() {
	grep -c "^$1 " "$BATS_TEST_TMPDIR/peer.log" || true
}

# ---------------------------------------------------------------------
# Guarantee 1: no way out but the proxy

@test "TCP to a server on the host's 127.0.0.1: its own lo inside" {
	port=$(free_port)
	start_peer "tcp:127.0.0.1:$port"
	out_user tcp 127.0.0.1 "$port"
	[ "$(peer_count accepted)" -eq 1 ]
	in_user tcp 127.0.0.1 "$port"
	in_root tcp 127.0.0.1 "$port"
	[ "$(peer_count accepted)" -eq 1 ]
}

@test "UDP to an echo server on the host's 127.0.0.1 (a local resolver)" {
	port=$(free_port)
	start_peer "udp:127.0.0.1:$port"
	out_user udp 127.0.0.1 "$port"
	[ "$(peer_count datagram)" -eq 1 ]
	in_user udp 127.0.0.1 "$port"
	in_root udp 127.0.0.1 "$port"
	[ "$(peer_count datagram)" -eq 1 ]
}

@test "IPv6: TCP and UDP to the host's ::1" {
	[ -e /proc/net/if_inet6 ] || skip "no IPv6 here"
	port=$(free_port)
	start_peer "tcp:[::1]:$port" "udp:[::1]:$port"
	out_user tcp ::1 "$port"
	out_user udp ::1 "$port"
	in_user tcp ::1 "$port"
	in_user udp ::1 "$port"
	in_root tcp ::1 "$port"
	[ "$(peer_count accepted)" -eq 1 ]
	[ "$(peer_count datagram)" -eq 1 ]
}

@test "host Unix sockets: in the workspace, in HOME, in a temp folder" {
	# The workspace and HOME are visible inside; only the filter's
	# refusal of socket(AF_UNIX) stands between a tool and a socket
	# there (a dev server's, a forwarded agent's).
	start_peer "unix:$WS/s.sock" "unix:$HOME/s.sock" \
	    "unix:$TOP/outside/s.sock" "unix-dgram:$WS/d.sock" \
	    "unix-dgram:$HOME/d.sock"
	for s in "$WS/s.sock" "$HOME/s.sock" "$TOP/outside/s.sock"; do
		out_user unix "$s"
		in_user unix "$s"
		in_root unix "$s"
	done
	for s in "$WS/d.sock" "$HOME/d.sock"; do
		out_user unix-dgram "$s"
		in_user unix-dgram "$s"
	done
	[ "$(peer_count accepted)" -eq 3 ]
	[ "$(peer_count datagram)" -eq 2 ]
}

@test "a fake \$XDG_RUNTIME_DIR with a bus socket is empty inside" {
	xdg="$TOP/xdg"
	mkdir -m 700 "$xdg"
	start_peer "unix:$xdg/bus" "unix-dgram:$xdg/notify"
	ENV_EXTRA=(XDG_RUNTIME_DIR="$xdg")
	out_user unix "$xdg/bus"
	out_user unix-dgram "$xdg/notify"
	out_user readdir "$xdg"
	in_user unix "$xdg/bus"
	in_user unix-dgram "$xdg/notify"
	in_user readdir "$xdg"
	in_root unix "$xdg/bus"
	[ "$(peer_count accepted)" -eq 1 ]
	[ "$(peer_count datagram)" -eq 1 ]
}

@test "socketpair(AF_UNIX, SOCK_DGRAM) then sendto a host socket" {
	# sandbox-runtime's hole: socket(AF_UNIX) denied, this not.
	start_peer "unix-dgram:$WS/d.sock" "unix-dgram:$HOME/d.sock"
	out_user unix-dgram-pair "$WS/d.sock"
	out_user unix-dgram-pair "$HOME/d.sock"
	in_user unix-dgram-pair "$WS/d.sock"
	in_user unix-dgram-pair "$HOME/d.sock"
	in_root unix-dgram-pair "$WS/d.sock"
	[ "$(peer_count datagram)" -eq 2 ]
}

@test "an abstract Unix socket of the host" {
	name="cordon-probe-$$-$RANDOM"
	start_peer "abstract:$name"
	out_user abstract "$name"
	in_user abstract "$name"
	in_root abstract "$name"
	[ "$(peer_count accepted)" -eq 1 ]
}

@test "netlink other than NETLINK_ROUTE; NETLINK_ROUTE itself works" {
	for f in netlink-sock_diag netlink-audit netlink-kobject_uevent \
	    netlink-generic netlink-xfrm; do
		out_user socket "$f"
		in_user socket "$f"
		in_root socket "$f"
	done
	in_user_ok socket netlink-route
}

@test "packet, raw IPv4 and raw IPv6 sockets" {
	# Unprivileged users cannot make these outside either: the control
	# is root's.  Inside, the user may be root of its own namespaces.
	for f in packet raw raw6; do
		out_root socket "$f"
		in_user socket "$f"
		in_root socket "$f"
	done
}

@test "AF_VSOCK, to the hypervisor" {
	out_user_or_note socket vsock
	in_user socket vsock
	in_user socket vsock dgram
	in_root socket vsock
}

@test "other families the kernel has (xdp, bluetooth, can, alg, key, tipc)" {
	n=0
	for f in xdp bluetooth can alg key tipc rds; do
		# Only the families this kernel has tell us anything.
		run "$PROBE" socket "$f"
		echo "outside: $output"
		[[ $output == "escaped "* ]] || continue
		n=$((n + 1))
		in_user socket "$f"
		in_root socket "$f"
	done
	[ "$n" -gt 0 ] || skip "none of them exists here"
}

# ---------------------------------------------------------------------
# Guarantee 3: the filesystem

@test "writing into the workspace works (the positive control)" {
	in_user_ok write "$WS/made-inside"
	[ "$(cat "$WS/made-inside")" = "cordon probe" ]
	in_user_ok mkdir "$WS/dir-inside"
	[ -d "$WS/dir-inside" ]
	in_user_ok read "$WS/.git/config"
}

@test "/tmp inside is private: writable, and nothing reaches the host's" {
	f="/tmp/cordon-probe-$$-$RANDOM"
	in_user_ok write "$f"
	[ ! -e "$f" ]
}

@test "writes outside the workspace: HOME into the scratch layer only, a temp folder, /etc" {
	out_user write "$HOME/x"
	out_user write "$TOP/outside/x"
	rm "$HOME/x" "$TOP/outside/x"
	# HOME: the write succeeds inside, into the scratch layer, and the
	# host's home is as it was.
	in_user_ok write "$HOME/x"
	in_user_ok mkdir "$HOME/d"
	[ ! -e "$HOME/x" ]
	[ ! -e "$HOME/d" ]
	in_user write "$TOP/outside/x"
	[ ! -e "$TOP/outside/x" ]
	etc="/etc/cordon-probe-$$-$RANDOM"
	out_root write "$etc"
	rm -f "$etc"
	# /etc: root's write succeeds inside, into the system's scratch
	# layer; the test user's is refused, as on the host; neither
	# reaches the host's /etc.
	in_user write "$etc"
	[ ! -e "$etc" ]
	if is_root; then
		in_root_ok write "$etc"
		[ ! -e "$etc" ]
	fi
}

@test ".git/config is read-only in the workspace; .git/hooks/x is written inside only, never on the host" {
	cp "$WS/.git/config" "$TOP/config.orig"
	out_user write "$WS/.git/config"
	out_user write "$WS/.git/hooks/x"
	cp "$TOP/config.orig" "$WS/.git/config"
	rm "$WS/.git/hooks/x"
	in_user write "$WS/.git/config"
	# The hooks folder is a scratch layer: the write works inside, and
	# goes with the run (below: not on the host).
	in_user_ok write "$WS/.git/hooks/x"
	in_user unlink "$WS/.git/config"
	in_user chmod "$WS/.git/config" 0666
	in_root write "$WS/.git/config"
	in_root_ok write "$WS/.git/hooks/x"
	cmp "$TOP/config.orig" "$WS/.git/config"
	[ ! -e "$WS/.git/hooks/x" ]
}

@test "a nested sub/.git is read-only too" {
	mkdir -p "$WS/sub/.git/hooks"
	: >"$WS/sub/.git/config"
	out_user write "$WS/sub/.git/hooks/post-checkout"
	rm "$WS/sub/.git/hooks/post-checkout"
	in_user_ok write "$WS/sub/.git/hooks/post-checkout"	# inside only
	in_user write "$WS/sub/.git/config"
	[ ! -e "$WS/sub/.git/hooks/post-checkout" ]
	[ ! -s "$WS/sub/.git/config" ]
}

@test ".git cannot be renamed away, nor hard-linked to a writable name" {
	out_user rename "$WS/.git" "$WS/dotgit"
	mv "$WS/dotgit" "$WS/.git"
	out_user hardlink "$WS/.git/config" "$WS/config-link"
	rm "$WS/config-link"
	printf '[core]\n\tbare = false\n' >"$WS/.git/config"
	cp "$WS/.git/config" "$TOP/config.orig"
	in_user rename "$WS/.git" "$WS/dotgit"
	in_user rename "$WS/.git/config" "$WS/config-moved"
	in_user hardlink "$WS/.git/config" "$WS/config-link"
	[ -d "$WS/.git" ]
	[ ! -e "$WS/dotgit" ]
	cmp "$TOP/config.orig" "$WS/.git/config"
}

@test ".cordon/x cannot be created; .cordon itself, when missing, is moved aside if made" {
	out_user mkdir "$WS/.cordon"
	out_user write "$WS/.cordon/x"
	rm "$WS/.cordon/x"
	in_user write "$WS/.cordon/x"
	in_user write "$WS/.cordon/policy.json"
	[ ! -e "$WS/.cordon/x" ]
	[ ! -e "$WS/.cordon/policy.json" ]
	rmdir "$WS/.cordon"
	# Not yet there: made, it goes aside after the run (guarantee 3),
	# and the run says so.
	sandboxed_user mkdir "$WS/.cordon"
	[ "$status" -eq 125 ]
	[[ $output == *"escaped mkdir: made $WS/.cordon"* ]]
	[[ $output == *"moved aside $WS/.cordon"* ]]
	[ ! -e "$WS/.cordon" ]
}

@test "a symlink in the workspace that points outside is no way out" {
	out_user symlink "$HOME/through-link" "$WS/link"
	[ -s "$HOME/through-link" ]
	rm "$HOME/through-link" "$WS/link"
	# Into the home: the scratch layer takes it; the host never sees it.
	in_user_ok symlink "$HOME/through-link" "$WS/link"
	[ ! -e "$HOME/through-link" ]
	# Into the hooks folder: its scratch layer takes it; never the host.
	in_user_ok symlink "$WS/.git/hooks/pre-commit" "$WS/link2"
	[ ! -e "$WS/.git/hooks/pre-commit" ]
	# One that came with the repository (made outside, used inside).
	ln -s "$HOME/through-link" "$WS/cloned-link"
	in_user_ok write "$WS/cloned-link"
	[ ! -e "$HOME/through-link" ]
}

@test "secrets in HOME are hidden: ~/.ssh/id_x, ~/.aws/credentials" {
	mkdir -p "$HOME/.ssh" "$HOME/.aws"
	echo "-----BEGIN FAKE KEY-----" >"$HOME/.ssh/id_x"
	echo "aws_secret_access_key = fake" >"$HOME/.aws/credentials"
	echo plain >"$HOME/visible"
	out_user read "$HOME/.ssh/id_x"
	out_user readdir "$HOME/.ssh"
	out_user read "$HOME/.aws/credentials"
	# HOME is under the private /tmp here: brought back in, so that what
	# holds is the hiding, not the cover (the positive control).
	RUN+=(--read-only "$HOME")
	in_user_ok read "$HOME/visible"
	in_user read "$HOME/.ssh/id_x"
	in_user readdir "$HOME/.ssh"
	in_user read "$HOME/.aws/credentials"
	in_root read "$HOME/.ssh/id_x"
}

# ---------------------------------------------------------------------
# Guarantee 4: the process

@test "a secret variable MY_TOKEN does not reach the command; HOME does" {
	ENV_EXTRA=(MY_TOKEN=x)
	out_user env MY_TOKEN
	in_user env MY_TOKEN
	in_root env MY_TOKEN
	in_user_ok env HOME
}

@test "fd 5 of the caller is closed inside" {
	own
	run as_user "$HOME" "$PROBE" fd 5 5</dev/null
	echo "outside, user: $output"
	verdict escaped fd
	run as_user "$HOME" timeout -k 5 30 "${RUN[@]}" -- \
	    "$PROBE" fd 5 5</dev/null
	echo "inside, user: $output"
	verdict held fd
}

@test "ptrace and process_vm_readv: of a child, of a host process" {
	# ptrace_scope 1 lets a user trace only its descendants: the user's
	# control is a child of the probe; root's is a host process.
	scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
	[ "$scope" -le 1 ] || skip "ptrace_scope $scope: no control"
	start_sleeper
	out_user ptrace child
	out_user vmread child
	out_root ptrace "$pid"
	in_user ptrace child
	in_user vmread child
	in_user ptrace "$pid"
	in_user ptrace "$$"
	in_root ptrace child
	in_root ptrace "$$"
	in_root vmread "$pid"
}

@test "io_uring, Linux AIO (io_setup, io_submit), keyctl, userfaultfd" {
	for k in io_uring aio keyctl userfaultfd; do
		out_user "$k"
		in_user "$k"
		in_root "$k"
	done
}

@test "bpf" {
	# unprivileged_bpf_disabled keeps users out already: root's control.
	out_root_or_skip bpf
	in_user bpf
	in_root bpf
}

@test "new namespaces: unshare, clone and clone3 of a user namespace" {
	for k in unshare-user clone-user clone3-user; do
		out_user_or_skip "$k"
		in_user "$k"
		in_root "$k"
	done
}

@test "unshare-net, setns, mount and fsopen (root's control)" {
	out_root_or_skip unshare-net
	mkdir "$WS/mnt"
	out_root mount-tmpfs "$WS/mnt"
	out_root fsopen
	out_root setns /proc/self/ns/net
	for k in unshare-net fsopen; do
		in_user "$k"
		in_root "$k"
	done
	in_user mount-tmpfs "$WS/mnt"
	in_root mount-tmpfs "$WS/mnt"
	in_user setns /proc/self/ns/net
	in_root setns /proc/self/ns/net
}

@test "TIOCSTI into the caller's terminal, and its high-bit variant" {
	command -v script >/dev/null || skip "no script(1)"
	own
	for k in tiocsti tiocsti-high; do
		run as_user "$HOME" env SHELL=/bin/sh script -qec "$PROBE $k" \
		    /dev/null
		echo "outside, user: $output"
		if [[ $output == *"held $k: "* ]]; then
			skip "no TIOCSTI here (dev.tty.legacy_tiocsti=0?)"
		fi
		verdict escaped "$k"
		# --foreground: in a process group of its own the command
		# would be a background job of the terminal (SIGTTOU).
		run as_user "$HOME" env SHELL=/bin/sh script -qec \
		    "timeout --foreground -k 5 30 ${RUN[*]} -- \
		    $PROBE $k" /dev/null
		echo "inside, user: $output"
		verdict held "$k"
	done
}

@test "kill of a host process: it survives" {
	start_sleeper
	# Signal 0: the right to signal it, without harm.
	out_user kill "$pid" 0
	in_user kill "$pid" KILL
	in_root kill "$pid" KILL
	kill -0 "$pid"
}

@test "other ABIs: i386 (int 0x80) and x32" {
	[ "$(uname -m)" = x86_64 ] || skip "x86_64 only"
	out_user_or_note i386
	in_user i386
	in_root i386
	out_user_or_note x32
	in_user x32
}

# ---------------------------------------------------------------------
# Guarantee 2, from inside: the proxy as the sandbox reaches it, through
# the in-sandbox bridge on 127.0.0.1:3128.  Outside, each request sent
# straight to the origin works (or the origin answers): what stops it
# inside is the proxy's decision.  http-raw escapes on a 2xx answer.

# Starts the origin (tests/tools/httpd) on 127.0.0.1; UP is its port.
start_origin() {
	cp "$TOOLS_DIR/httpd" "$TOP/bin/"
	UP=$(free_port)
	start_bg origin "$TOP/bin/httpd" --listen "tcp:127.0.0.1:$UP" \
	    --log "$BATS_TEST_TMPDIR/requests.log"
	wait_listen "tcp:127.0.0.1:$UP"
	touch "$BATS_TEST_TMPDIR/requests.log"
}

# req NAME FORMAT: a request's bytes (printf FORMAT) in $WS/NAME.req,
# where the probe reads them inside too.
req() {
	printf "$2" >"$WS/$1.req"
}

# origin_count: requests the origin parsed.
origin_count() {
	wc -l <"$BATS_TEST_TMPDIR/requests.log"
}

# out_answers KIND ARGS...: outside, the peer answers (held or escaped,
# but a status line, not a failed connection).
out_answers() {
	own
	run as_user "$HOME" "$PROBE" "$@"
	echo "outside, user: $output"
	[[ $output == *": HTTP/1."[01]" "[0-9][0-9][0-9]* ]]
}

@test "proxy from inside: IP literals in other spellings, no --allow-cidr" {
	start_origin
	n=0
	for h in 0x7f.1 2130706433 0177.0.0.1 127.1 '[::ffff:127.0.0.1]' \
	    '[::ffff:7f00:1]'; do
		n=$((n + 1))
		req "lit$n" "GET http://$h:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
		out_user http-raw 127.0.0.1 "$UP" "$WS/lit$n.req"
	done
	[ "$(origin_count)" -eq "$n" ]
	RUN+=(--allow-domain "127.0.0.1:$UP")
	# The door is open: with the range allowed, a spelling goes through.
	save=("${RUN[@]}")
	RUN+=(--allow-cidr 127.0.0.1/32)
	in_user_ok http-raw 127.0.0.1 3128 "$WS/lit2.req"
	RUN=("${save[@]}")
	[ "$(origin_count)" -eq $((n + 1)) ]
	for i in $(seq "$n"); do
		in_user http-raw 127.0.0.1 3128 "$WS/lit$i.req"
		[[ $output == *"HTTP/1.1 403 "* ]]
	done
	in_root http-raw 127.0.0.1 3128 "$WS/lit1.req"
	[ "$(origin_count)" -eq $((n + 1)) ]
}

@test "proxy from inside: %00 and control bytes refused; case and a dot allowed alike; localhost. refused" {
	start_origin
	RUN+=(--resolve up.test:127.0.0.1 --allow-cidr 127.0.0.1/32
	    --allow-domain "up.test:$UP")
	req ok "GET http://up.test:$UP/ HTTP/1.1\r\nHost: up.test\r\nConnection: close\r\n\r\n"
	req upper "GET http://UP.TEST:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	req dot "GET http://up.test.:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	req updot "GET http://Up.Test.:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	req connect-upper "CONNECT UP.TEST.:$UP HTTP/1.1\r\nHost: x\r\n\r\n"
	req nul "GET http://up.test%%00.evil.test:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	req nul2 "GET http://evil.test%%00up.test:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	req ctl "GET http://up.test\001:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	req tab "GET http://up.test\t.evil.test:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	req connect-nul "CONNECT up.test%%00.evil.test:$UP HTTP/1.1\r\nHost: x\r\n\r\n"
	req dots "GET http://up.test..:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	req lh "GET http://localhost:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	req lhdot "GET http://localhost.:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	req lhup "GET http://LOCALHOST:$UP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	# Outside, the origin answers every one of them.
	for r in ok nul ctl tab lhdot lhup; do
		out_answers http-raw 127.0.0.1 "$UP" "$WS/$r.req"
	done
	before=$(origin_count)
	for r in ok upper dot updot connect-upper; do
		in_user_ok http-raw 127.0.0.1 3128 "$WS/$r.req"
	done
	[ "$(origin_count)" -eq $((before + 4)) ]	# the tunnel sent none
	for r in nul nul2 ctl tab connect-nul dots lh lhdot lhup; do
		in_user http-raw 127.0.0.1 3128 "$WS/$r.req"
		[[ $output == *"HTTP/1.1 4"[0-9][0-9]* ]]
	done
	in_root http-raw 127.0.0.1 3128 "$WS/lhdot.req"
	[ "$(origin_count)" -eq $((before + 4)) ]
}

@test "proxy from inside: a TLS server name other than the CONNECT host" {
	command -v openssl >/dev/null || skip "no openssl"
	own
	TLS=$(free_port)
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
	    -subj /CN=up.test -addext subjectAltName=DNS:up.test,DNS:alt.test \
	    -days 1 -nodes -keyout "$BATS_TEST_TMPDIR/key.pem" \
	    -out "$BATS_TEST_TMPDIR/cert.pem" 2>/dev/null
	start_bg tls openssl s_server -accept "127.0.0.1:$TLS" -www \
	    -cert "$BATS_TEST_TMPDIR/cert.pem" -key "$BATS_TEST_TMPDIR/key.pem"
	wait_listen "tcp:127.0.0.1:$TLS"
	s_client=(openssl s_client -brief)
	# Outside, the server takes any name.
	run timeout 10 "${s_client[@]}" -connect "127.0.0.1:$TLS" \
	    -servername alt.test </dev/null
	echo "outside: $output"
	[ "$status" -eq 0 ]
	RUN+=(--log "$TOP/egress.log" --resolve up.test:127.0.0.1
	    --allow-cidr 127.0.0.1/32 --allow-domain "up.test:$TLS")
	own
	run as_user "$HOME" timeout -k 5 30 "${RUN[@]}" -- \
	    "${s_client[@]}" -proxy 127.0.0.1:3128 -connect "up.test:$TLS" \
	    -servername up.test </dev/null
	echo "inside, same name: $output"
	[ "$status" -eq 0 ]
	[[ $output == *"CONNECTION ESTABLISHED"* ]]
	for sni in alt.test evil.test UP.TEST.EVIL.TEST; do
		run as_user "$HOME" timeout -k 5 30 "${RUN[@]}" -- \
		    "${s_client[@]}" -proxy 127.0.0.1:3128 \
		    -connect "up.test:$TLS" -servername "$sni" </dev/null
		echo "inside, $sni: $output"
		[ "$status" -ne 0 ]
		[[ $output != *"CONNECTION ESTABLISHED"* ]]
		[ "$(tail -n 1 "$TOP/egress.log" | jq -r .decision)" = deny ]
		[[ "$(tail -n 1 "$TOP/egress.log" | jq -r .reason)" == \
		    *"does not match"* ]]
	done
}

@test "proxy from inside: smuggling shapes (CL with TE, two lengths) get 400" {
	start_origin
	RUN+=(--allow-cidr 127.0.0.1/32 --allow-domain "127.0.0.1:$UP")
	u="http://127.0.0.1:$UP/echo"
	req clte "POST $u HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n"
	req tecl "POST $u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"
	req clcl "POST $u HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"
	req tete "POST $u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n"
	req tews "POST $u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n"
	req ok "POST $u HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"
	for r in clte tecl clcl; do
		out_answers http-raw 127.0.0.1 "$UP" "$WS/$r.req"
	done
	before=$(origin_count)
	in_user_ok http-raw 127.0.0.1 3128 "$WS/ok.req"
	for r in clte tecl clcl tews; do
		in_user http-raw 127.0.0.1 3128 "$WS/$r.req"
		[[ $output == *"HTTP/1.1 400 "* ]]
	done
	# An unknown coding ("identity" is no longer one): 501, RFC 9112 6.1.
	in_user http-raw 127.0.0.1 3128 "$WS/tete.req"
	[[ $output == *"HTTP/1.1 501 "* ]]
	[ "$(origin_count)" -eq $((before + 1)) ]
	run ! grep -q smuggled "$BATS_TEST_TMPDIR/requests.log"
}

@test "proxy from inside: CONNECT to its own port 3128" {
	start_origin
	RUN+=(--allow-cidr 127.0.0.1/32 --allow-domain "127.0.0.1:$UP")
	req up "CONNECT 127.0.0.1:$UP HTTP/1.1\r\nHost: x\r\n\r\n"
	req self "CONNECT 127.0.0.1:3128 HTTP/1.1\r\nHost: x\r\n\r\n"
	req self-lh "CONNECT localhost:3128 HTTP/1.1\r\nHost: x\r\n\r\n"
	req self-v6 "CONNECT [::1]:3128 HTTP/1.1\r\nHost: x\r\n\r\n"
	req self-get "GET http://127.0.0.1:3128/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	# Outside, the bridge's port is nobody's: the route is the tunnel,
	# which opens to the allowed origin.
	in_user_ok http-raw 127.0.0.1 3128 "$WS/up.req"
	for r in self self-lh self-v6 self-get; do
		in_user http-raw 127.0.0.1 3128 "$WS/$r.req"
		[[ $output == *"HTTP/1.1 403 "* ]]
	done
	in_root http-raw 127.0.0.1 3128 "$WS/self.req"
}

@test "proxy from inside: SOCKS5 to private, link-local, CGNAT, ULA ranges" {
	start_origin
	# Allowed by name; only the range check stands in the way (no
	# --allow-cidr for them), and each is refused before a connection.
	RUN+=(--allow-cidr 127.0.0.1/32 --allow-domain "127.0.0.1:$UP"
	    --resolve priv.test:10.1.2.3 --resolve meta.test:169.254.169.254)
	for t in 10.1.2.3 192.168.0.1 172.16.0.1 169.254.169.254 100.64.0.1 \
	    '[fd00::1]' '[fe80::1]' '[::ffff:10.1.2.3]' 0.0.0.0 224.0.0.1 \
	    priv.test meta.test; do
		RUN+=(--allow-domain "$t:80")
	done
	in_user_ok socks5 127.0.0.1 3128 127.0.0.1 "$UP"
	for t in 10.1.2.3 192.168.0.1 172.16.0.1 169.254.169.254 100.64.0.1 \
	    fd00::1 fe80::1 ::ffff:10.1.2.3 0.0.0.0 224.0.0.1 priv.test \
	    meta.test; do
		in_user socks5 127.0.0.1 3128 "$t" 80
		[[ $output == *"SOCKS5 reply 2"* ]]
	done
	in_root socks5 127.0.0.1 3128 169.254.169.254 80
}

# ---------------------------------------------------------------------
# DNS from inside

@test "DNS over UDP and TCP to a resolver on the host's 127.0.0.1; getent fails" {
	command -v dnsmasq >/dev/null || skip "no dnsmasq"
	DNS=$(free_port)
	start_bg dnsmasq dnsmasq --no-daemon --port="$DNS" \
	    --listen-address=127.0.0.1 --bind-interfaces --no-resolv \
	    --no-hosts --user="$(id -un)" --pid-file= --log-queries \
	    --log-facility="$BATS_TEST_TMPDIR/dns.log" \
	    --address=/probe.test/127.0.0.1
	for i in $(seq 100); do
		grep -q started "$BATS_TEST_TMPDIR/dns.log" 2>/dev/null && break
		sleep 0.05
	done
	out_user dns 127.0.0.1 "$DNS" udp probe.test
	out_user dns 127.0.0.1 "$DNS" tcp probe.test
	q=$(grep -c 'query\[A\] probe.test' "$BATS_TEST_TMPDIR/dns.log")
	[ "$q" -eq 2 ]
	in_user dns 127.0.0.1 "$DNS" udp probe.test
	in_user dns 127.0.0.1 "$DNS" tcp probe.test
	in_root dns 127.0.0.1 "$DNS" udp probe.test
	in_root dns 127.0.0.1 "$DNS" tcp probe.test
	# The machine's own resolver, only where it is a loopback address
	# (any other address is not this test's to contact).
	ns=$(awk '$1 == "nameserver" { print $2; exit }' /etc/resolv.conf)
	case $ns in
	127.*|::1)
		in_user dns "$ns" 53 udp probe.test
		in_user dns "$ns" 53 tcp probe.test ;;
	*)	echo "note: the resolver $ns is not loopback: not tried" ;;
	esac
	[ "$(grep -c 'query\[A\] probe.test' "$BATS_TEST_TMPDIR/dns.log")" -eq "$q" ]
	# The one route leads to lo (the capture's), and the C library's
	# lookup reaches the sandbox's own resolver, which never asks
	# outside: a name the policy does not allow has no address.
	own
	run as_user "$HOME" timeout -k 5 30 "${RUN[@]}" -- cat /proc/net/route
	echo "inside: $output"
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[1]} == lo* ]]
	run as_user "$HOME" timeout -k 5 30 "${RUN[@]}" -- \
	    getent hosts probe.test
	echo "inside: $output"
	[ "$status" -ne 0 ]
	[ "$(grep -c 'query\[A\] probe.test' "$BATS_TEST_TMPDIR/dns.log")" -eq "$q" ]
}

# ---------------------------------------------------------------------
# Guarantee 3, more: repositories at depth and by reference, links out,
# the kernel's knobs, PID 1, the host's shared memory

@test "a/b/c/.git at depth: config (core.fsmonitor), hooks, info/attributes" {
	command -v git >/dev/null || skip "no git"
	git init -q "$WS/a/b/c"
	g="$WS/a/b/c/.git"
	mkdir -p "$g/info"
	: >"$g/info/attributes"
	cp "$g/config" "$TOP/config.orig"
	out_user write "$g/config" '[core]\n\tfsmonitor = touch pwned\n'
	out_user write "$g/hooks/post-checkout"
	out_user write "$g/info/attributes" '* filter=pwn\n'
	mkdir "$WS/.git/info"
	out_user write "$WS/.git/info/attributes"
	cp "$TOP/config.orig" "$g/config"
	: >"$g/info/attributes"
	rm -rf "$g/hooks/post-checkout" "$WS/.git/info"
	in_user write "$g/config" '[core]\n\tfsmonitor = touch pwned\n'
	in_user_ok write "$g/hooks/post-checkout"	# inside only
	in_user write "$g/info/attributes" '* filter=pwn\n'
	in_user mkdir "$WS/.git/info"
	in_root write "$g/config" '[core]\n\tfsmonitor = touch pwned\n'
	cmp "$TOP/config.orig" "$g/config"
	[ ! -s "$g/info/attributes" ]
	[ ! -e "$g/hooks/post-checkout" ]
	[ ! -e "$WS/.git/info" ]
	# git itself, inside, cannot set it either: held back, and said.
	own
	run as_user "$HOME" timeout -k 5 30 "${RUN[@]}" -- \
	    git -C "$WS/a/b/c" config core.fsmonitor "touch pwned"
	echo "inside, git: $output"
	[[ $output == *"held back 1 change to git config"* ]]
	cmp "$TOP/config.orig" "$g/config"
}

# A linked worktree: its .git is a file naming a git directory, whose
# commondir names the repository that holds config and hooks.
make_worktree() {
	repo="$TOP/store/repo.git"
	mkdir -p "$repo/hooks" "$repo/worktrees/wt" "$WS/wt"
	printf '[core]\n\tbare = true\n' >"$repo/config"
	echo 'ref: refs/heads/main' >"$repo/worktrees/wt/HEAD"
	echo '../..' >"$repo/worktrees/wt/commondir"
	echo "$WS/wt/.git" >"$repo/worktrees/wt/gitdir"
	echo "gitdir: $repo/worktrees/wt" >"$WS/wt/.git"
	cp "$repo/config" "$TOP/config.orig"
}

@test "a worktree's .git file: its gitdir and commondir outside, even writable" {
	make_worktree
	out_user write "$repo/worktrees/wt/HEAD"
	out_user write "$repo/hooks/post-checkout"
	out_user write "$repo/config"
	echo 'ref: refs/heads/main' >"$repo/worktrees/wt/HEAD"
	rm "$repo/hooks/post-checkout"
	cp "$TOP/config.orig" "$repo/config"
	# Outside the workspace: read-only like the rest of /.
	in_user write "$repo/worktrees/wt/HEAD"
	in_user write "$repo/config"
	# Even where the policy makes the folder writable (a second
	# checkout), what makes git run a program or look elsewhere is not:
	# the worktree's commondir and gitdir, the common directory's config
	# and hooks.  Its HEAD is the worktree's state: commits write it.
	RUN+=(--write "$TOP/store")
	in_user_ok write "$TOP/store/other"
	in_user_ok write "$repo/worktrees/wt/HEAD"
	in_user write "$repo/worktrees/wt/commondir"
	in_user write "$repo/worktrees/wt/gitdir"
	in_user_ok write "$repo/hooks/post-checkout"	# inside only
	in_user write "$repo/config"
	in_root_ok write "$repo/hooks/post-checkout"
	[ "$(cat "$repo/worktrees/wt/commondir")" = '../..' ]
	[ ! -e "$repo/hooks/post-checkout" ]
	cmp "$TOP/config.orig" "$repo/config"
}

@test "a .git file with a relative gitdir inside the workspace" {
	mkdir -p "$WS/store/hooks" "$WS/sub"
	printf '[core]\n\tbare = false\n' >"$WS/store/config"
	echo "gitdir: ../store" >"$WS/sub/.git"
	cp "$WS/store/config" "$TOP/config.orig"
	out_user write "$WS/store/hooks/pre-commit"
	rm "$WS/store/hooks/pre-commit"
	in_user_ok write "$WS/store/hooks/pre-commit"	# inside only
	in_user write "$WS/store/config"
	in_user write "$WS/sub/.git"
	[ ! -e "$WS/store/hooks/pre-commit" ]
	cmp "$TOP/config.orig" "$WS/store/config"
	[ "$(cat "$WS/sub/.git")" = "gitdir: ../store" ]
}

@test "a hard link from the workspace to a file outside it" {
	# Outside the workspace but visible inside: a --read-only folder,
	# a second --write folder, the root's /etc.
	mkdir "$TOP/other"
	echo secret >"$TOP/outside/f"
	echo secret >"$TOP/other/f"
	out_user hardlink "$TOP/outside/f" "$WS/link"
	rm "$WS/link"
	echo secret >"$TOP/outside/f"
	RUN+=(--read-only "$TOP/outside" --write "$TOP/other")
	in_user_ok read "$TOP/outside/f"
	in_user hardlink "$TOP/outside/f" "$WS/link"
	[[ $output == *"EXDEV (link)"* || $output == *"EPERM (link)"* ]]
	in_user hardlink "$TOP/other/f" "$WS/link2"
	in_user hardlink "$WS/.git/config" "$TOP/other/link3"
	in_user hardlink /etc/hostname "$WS/link4"
	in_root hardlink "$TOP/outside/f" "$WS/link"
	in_root hardlink /etc/hostname "$WS/link4"
	[ "$(cat "$TOP/outside/f")" = secret ]
	[ "$(cat "$TOP/other/f")" = secret ]
	[ ! -e "$WS/link" ]
	[ ! -e "$WS/link2" ]
	[ ! -e "$WS/link4" ]
	[ ! -e "$TOP/other/link3" ]
}

@test "/proc/sys writes: hostname, domainname, ip_forward (value written back)" {
	for k in kernel/hostname kernel/domainname net/ipv4/ip_forward \
	    net/ipv4/ping_group_range; do
		out_root sysctl-rewrite "/proc/sys/$k"
		in_user sysctl-rewrite "/proc/sys/$k"
		in_root sysctl-rewrite "/proc/sys/$k"
	done
}

@test "PID 1 inside: /proc/1/environ and /proc/1/mem" {
	start_sleeper
	out_user read "/proc/$pid/environ"
	out_user procmem child
	out_root procmem "$pid"
	in_user read /proc/1/environ
	in_user procmem 1
	in_root read /proc/1/environ
	in_root procmem 1
	in_user vmread 1
}

@test "the host's /tmp and /dev/shm files are not there inside" {
	t="/tmp/cordon-probe-$$-$RANDOM"
	s="/dev/shm/cordon-probe-$$-$RANDOM"
	echo secret >"$t"
	echo secret >"$s"
	if is_root; then
		ensure_test_user
		chown "$TEST_USER:" "$t" "$s"
	fi
	for f in "$t" "$s"; do
		out_user read "$f"
		out_user write "$f"
		echo secret >"$f"
		in_user read "$f"
		in_root read "$f"
		# A write makes a file of the sandbox's own, gone after it.
		in_user_ok write "$f"
		[ "$(cat "$f")" = secret ]
	done
	out_user readdir /dev/shm
	in_user readdir /dev/shm
	rm -f "$t" "$s"
}

# ---------------------------------------------------------------------
# Guarantee 4, more: what a process could undo or reach

@test "no_new_privs cannot be cleared; a stacked allow-all filter does not re-allow ptrace" {
	out_user no-new-privs
	out_user seccomp-stack child
	in_user no-new-privs
	in_root no-new-privs
	in_user seccomp-stack child
	in_root seccomp-stack child
	if is_root; then
		[[ $output == *"(ptrace under the stacked filter)"* ]]
	fi
}

@test "TIOCLINUX from a terminal, and its high-bit variant" {
	command -v script >/dev/null || skip "no script(1)"
	own
	for k in tioclinux tioclinux-high; do
		run as_user "$HOME" env SHELL=/bin/sh script -qec "$PROBE $k" \
		    /dev/null
		echo "outside, user: $output"
		# A pty is no virtual console: ENOTTY outside, the filter's
		# EPERM inside (on a console, outside would escape).
		[[ $output == *"escaped $k: "* || $output == *"held $k: ENOTTY"* ]]
		run as_user "$HOME" env SHELL=/bin/sh script -qec \
		    "timeout --foreground -k 5 30 ${RUN[*]} -- \
		    $PROBE $k" /dev/null
		echo "inside, user: $output"
		verdict held "$k"
		[[ $output == *"held $k: EPERM (ioctl)"* ]]
	done
}

@test "pivot_root and chroot (root's control, pivot_root in its own mount namespace)" {
	mkdir "$WS/newroot"
	if is_root; then
		run unshare -m "$PROBE" pivot-root "$WS/newroot"
		echo "outside, root: $output"
		verdict escaped pivot-root
	fi
	out_root chroot "$WS"
	in_user pivot-root "$WS/newroot"
	in_root pivot-root "$WS/newroot"
	in_user chroot "$WS"
	in_root chroot "$WS"
	in_root chroot /
}

@test "open_by_handle_at (the shocker escape)" {
	echo secret >"$TOP/outside/f"
	out_root open-by-handle "$TOP/outside/f"
	in_user open-by-handle "$WS/.git/config"
	in_root open-by-handle "$WS/.git/config"
	in_root open-by-handle /etc/passwd
}

@test "signals: to every pid inside, and to cordon run's own pid" {
	start_sleeper
	# Outside, the test user may signal its own processes.
	out_user kill "$pid" 0
	own
	start_bg runner as_user "$HOME" "${RUN[@]}" -- sh -c \
	    "while [ ! -s '$WS/pid' ]; do sleep 0.05; done
	    \"$PROBE\" kill \"\$(cat '$WS/pid')\" KILL
	    sleep 30 &
	    # The probe as the command itself: killing its own parent shell
	    # would end the run before it could print.
	    exec \"$PROBE\" kill-all 9"
	runner=$BG_PID
	# Its own pid once it is cordon run, no longer root's shell.
	await_comm "$runner" cordon
	out_user kill "$runner" 0
	echo "$runner" >"$WS/pid"
	for i in $(seq 200); do
		grep -q '^held kill-all' "$BATS_TEST_TMPDIR/runner.log" && break
		kill -0 "$runner" 2>/dev/null || break
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/runner.log"
	grep -q '^held kill: ESRCH (kill)' "$BATS_TEST_TMPDIR/runner.log"
	grep -q '^held kill-all: .*all in this PID namespace' \
	    "$BATS_TEST_TMPDIR/runner.log"
	# Nothing outside died: the sleeper, this shell.
	kill -0 "$pid"
	kill -0 $$
}

# ---------------------------------------------------------------------
# Unix socket types as the kernel makes them: it reads the low 4 bits of
# the type (SOCK_NONBLOCK and SOCK_CLOEXEC sit above), and makes an
# AF_UNIX SOCK_RAW socket a datagram one (SO_TYPE 2).

# unix_type_held CALL TYPE: the probe CALL (unix-pair: socketpair, or
# unix-sock: socket) of TYPE sends a datagram to a host socket in the
# workspace, outside and inside under a policy that allows Unix sockets
# (the path is visible: only the filter stands in the way); under the
# default policy it is held, EPERM from the filter, for the test user
# and for root.
unix_type_held() {
	local call=$1 type=$2 sys=socket saved=("${RUN[@]}")

	[ "$call" = unix-pair ] && sys=socketpair
	printf '{"version": 1, "network": {"unix_sockets": "allow"}}\n' \
	    >"$TOP/unix.json"
	start_peer "unix-dgram:$WS/d.sock"
	out_user "$call" "$type" "$WS/d.sock"
	[[ $output == *"(SO_TYPE 2) delivered"* ]]
	RUN+=(--policy "$TOP/unix.json")
	in_user_ok "$call" "$type" "$WS/d.sock"
	RUN=("${saved[@]}")
	[ "$(peer_count datagram)" -eq 2 ]
	in_user "$call" "$type" "$WS/d.sock"
	[[ $output == *"held $call: EPERM ($sys)"* ]]
	in_root "$call" "$type" "$WS/d.sock"
	[ "$(peer_count datagram)" -eq 2 ]
}

@test "socketpair(AF_UNIX, SOCK_RAW), a datagram pair, then sendto a host socket" {
	unix_type_held unix-pair raw
}

@test "socketpair(AF_UNIX, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC) then sendto" {
	unix_type_held unix-pair raw+nonblock+cloexec
}

@test "socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC) then sendto" {
	unix_type_held unix-pair dgram+nonblock+cloexec
}

@test "socketpair(AF_UNIX, SOCK_RAW) with bit 32 set (the kernel reads an int)" {
	unix_type_held unix-pair raw+high
}

@test "socketpair(AF_UNIX, SOCK_DGRAM) with bit 32 set" {
	unix_type_held unix-pair dgram+high
}

@test "socket(AF_UNIX, SOCK_RAW) then sendto a host socket" {
	unix_type_held unix-sock raw
}

@test "socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC) then sendto" {
	unix_type_held unix-sock dgram+nonblock+cloexec
}

@test "stream and seqpacket socketpairs stay for tools' own IPC, and cannot send to a path" {
	start_peer "unix-dgram:$WS/d.sock"
	for t in stream seqpacket stream+nonblock+cloexec \
	    seqpacket+nonblock+cloexec; do
		out_user unix-pair "$t"
		in_user_ok unix-pair "$t"
		# Outside too, their ends are joined: no datagram leaves.
		run "$PROBE" unix-pair "$t" "$WS/d.sock"
		verdict held unix-pair
	done
	[ "$(peer_count datagram)" -eq 0 ]
}

# listed_policy PATH...: RUN reads a policy that lists these host sockets
# (filesystem.unix_sockets): socket(AF_UNIX) of stream and seqpacket
# type is allowed, and cordon run makes every connect(2) itself.
listed_policy() {
	local list
	list=$(printf '"%s",' "$@")
	printf '{"version": 1, "filesystem": {"unix_sockets": [%s]}}\n' \
	    "${list%,}" >"$TOP/listed.json"
	RUN+=(--policy "$TOP/listed.json")
}

# in_root_ok KIND ARGS...: works inside, for root (a positive control).
in_root_ok() {
	as_root escaped "$@"
}

@test "listed Unix socket: reachable by connect, as the user and as root" {
	start_peer "unix:$TOP/outside/listed.sock"
	listed_policy "$TOP/outside/listed.sock"
	in_user_ok unix "$TOP/outside/listed.sock"
	in_root_ok unix "$TOP/outside/listed.sock"
	if is_root; then
		[ "$(peer_count accepted)" -eq 2 ]
	else
		[ "$(peer_count accepted)" -eq 1 ]
	fi
	# It is where it is on the host, for a client that looks first
	# (the host's /tmp, which holds it, is not the sandbox's).
	own
	run as_user "$HOME" "${RUN[@]}" -- sh -c \
	    "test -S '$TOP/outside/listed.sock' && echo there"
	echo "$output"
	[ "${lines[0]}" = there ]
}

@test "listed Unix socket: every other host socket stays unreachable" {
	local s name="cordon-probe-$$-$RANDOM"
	start_peer "unix:$TOP/outside/listed.sock" "unix:$WS/s.sock" \
	    "unix:$HOME/s.sock" "unix:$TOP/outside/s.sock" \
	    "unix-dgram:$TOP/outside/d.sock" "unix-dgram:$WS/d.sock" \
	    "abstract:$name"
	ln -s listed.sock "$TOP/outside/link.sock"
	listed_policy "$TOP/outside/listed.sock"
	# The host's /tmp, which holds them, shown inside: each is there.
	RUN+=(--read-only "$TOP/outside")
	# Other spellings of the listed socket reach it outside, not inside:
	# a listed socket is matched by its exact path.  HOME is under the
	# scratch layer, through which no socket is reached (the kernel's
	# ECONNREFUSED); the others are host sockets, refused.
	for s in "$WS/s.sock" "$HOME/s.sock" "$TOP/outside/s.sock" \
	    "$TOP/outside/link.sock" "$TOP/outside//listed.sock" \
	    "$TOP/outside/./listed.sock" "$TOP/ws/../outside/listed.sock"; do
		out_user unix "$s"
		in_user unix "$s"
		if [ "$s" = "$HOME/s.sock" ]; then
			[[ $output == *"held unix: ECONNREFUSED (connect)"* ]]
		else
			[[ $output == *"held unix: EACCES (connect)"* ]]
		fi
		in_root unix "$s"
	done
	out_user abstract "$name"
	in_user abstract "$name"
	in_root abstract "$name"
	# Datagrams: no datagram socket, and a stream or seqpacket socket's
	# address on sendto(2) is refused or ignored by the kernel.
	for s in "$TOP/outside/d.sock" "$WS/d.sock"; do
		out_user unix-dgram "$s"
		in_user unix-dgram "$s"
		in_user unix-dgram-pair "$s"
		in_user unix-sock raw "$s"
		in_user unix-sock seqpacket "$s"
		in_user unix-sock stream "$s"
		in_root unix-dgram "$s"
	done
	# 3 + 4 of the spellings outside, and the abstract name.
	[ "$(peer_count accepted)" -eq 8 ]
	[ "$(peer_count datagram)" -eq 2 ]
}

@test "listed Unix socket: a refusal names the entry that would allow it" {
	start_peer "unix:$TOP/outside/listed.sock" "unix:$TOP/outside/s.sock"
	RUN=("$TOP/bin/cordon" run --read-only "$TOP/bin" --read-only
	    "$TOP/outside")
	listed_policy "$TOP/outside/listed.sock"
	in_user unix "$TOP/outside/s.sock"
	[[ $output == *"cordon: refused 1 connection: $TOP/outside/s.sock (not in filesystem.unix_sockets)"* ]]
	[[ $output == *"to allow $TOP/outside/s.sock: add \"$TOP/outside/s.sock\" to filesystem.unix_sockets in your own policy"* ]]
	in_user unix "$TOP/outside//listed.sock"
	[[ $output == *"connect to \"$TOP/outside/listed.sock\" as listed"* ]]
	[ "$(peer_count accepted)" -eq 0 ]
}

# A hint names the one socket refused, never more: not the user's own
# ssh-agent (every key, for any host), not "allow" for another spelling
# of a listed socket, and a container engine's socket says what it gives.
@test "Unix socket refusals: the hint opens no more than the socket refused" {
	start_peer "unix:$TOP/outside/agent.sock" "unix:$TOP/outside/docker.sock"
	ENV_EXTRA=(SSH_AUTH_SOCK="$TOP/outside/agent.sock")
	# cordon's agent is on: a policy that allows a host.
	RUN=("$TOP/bin/cordon" run --read-only "$TOP/bin" --report "$WS/r.json"
	    --allow-domain x.test:22 --read-only "$TOP/outside")
	in_user unix "$TOP/outside/agent.sock"
	[[ $output == *"$TOP/outside/agent.sock (the user's ssh-agent, never listed)"* ]]
	[[ $output == *"use cordon's ssh-agent, the command's SSH_AUTH_SOCK (/run/cordon/ssh-agent.sock): it signs logins to the hosts the policy allows; listing the user's agent would hand the command every key"* ]]
	[[ $output != *"to filesystem.unix_sockets"* ]]
	[[ "$(jq -r '.refused[0].fix' "$WS/r.json")" == "use cordon's ssh-agent"* ]]
	# Its own socket spelt otherwise: the listed spelling, not "allow".
	for s in //run/cordon/ssh-agent.sock /./run/cordon/ssh-agent.sock \
	    /run/../run/cordon/ssh-agent.sock; do
		in_user unix "$s"
		[[ $output == *"connect to \"/run/cordon/ssh-agent.sock\" as listed (cordon's ssh-agent)"* ]]
		[[ $output != *"network.unix_sockets"* ]]
	done
	# A Docker socket the test user runs (rootless): its user, not root.
	in_user unix "$TOP/outside/docker.sock"
	[[ $output == *"add \"$TOP/outside/docker.sock\" to filesystem.unix_sockets in your own policy"*"mind that it is Docker's socket, rootless (of "*"): whoever connects to it is "*" on the host (a container mounting their files)"* ]]
	[[ $output != *"root on the host"* ]]
	# The agent off (no host allowed; a socket listed): the way to it.
	RUN=("$TOP/bin/cordon" run --read-only "$TOP/bin" --read-only
	    "$TOP/outside")
	listed_policy "$TOP/outside/docker.sock"
	in_user unix "$TOP/outside/agent.sock"
	[[ $output == *"cordon's ssh-agent stands in for the user's when cordon runs its own proxy and network.allow names the SSH host (\"HOST:22\")"* ]]
	[[ $output != *"to filesystem.unix_sockets in your own"* ]]
	# The listed engine's socket, in --dry-run, as the test user has it.
	own
	run as_user "$HOME" "${RUN[@]}" --dry-run -- true
	[[ $output == *"warning: Docker's socket, rootless (of "* ]]
}

@test "listed Unix socket: the rest of the escape routes stay closed" {
	port=$(free_port)
	start_peer "unix:$TOP/outside/listed.sock" "tcp:127.0.0.1:$port"
	listed_policy "$TOP/outside/listed.sock"
	# TCP connects are made by cordon run too, in the sandbox's own
	# network namespace: the host's loopback stays out of reach.
	in_user tcp 127.0.0.1 "$port"
	in_root tcp 127.0.0.1 "$port"
	for f in netlink-sock_diag netlink-audit; do
		in_user socket "$f"
	done
	in_user_ok socket netlink-route
	in_user ptrace child
	[ "$(peer_count accepted)" -eq 0 ]
}

@test "credential files the defaults hide: ~/.pgpass, cargo, Vault, agents' logins" {
	local f files=(.pgpass .vault-token .config/op/config
	    .terraform.d/credentials.tfrc.json .s3cfg)

	for f in "${files[@]}"; do
		mkdir -p "$(dirname "$HOME/$f")"
		echo "fake secret" >"$HOME/$f"
	done
	# HOME is under the private /tmp inside: show it, read-only, so
	# that only the rule hides them; a file beside them that no rule
	# hides stays readable (the control).
	RUN+=(--read-only "$HOME")
	mkdir -p "$HOME/.cargo"
	echo "not a secret" >"$HOME/.cargo/config.toml"
	for f in "${files[@]}"; do
		out_user read "$HOME/$f"
		in_user read "$HOME/$f"
	done
	in_user_ok read "$HOME/.cargo/config.toml"
	in_root read "$HOME/.pgpass"
	# cargo's is given as a copy that keeps only its token, as a
	# placeholder: what else it holds stays out.
	printf 'fake secret\n[registry]\ntoken = "fake-token"\n' \
	    >"$HOME/.cargo/credentials.toml"
	own
	run as_user "$HOME" "${RUN[@]}" -- cat "$HOME/.cargo/credentials.toml"
	echo "$output"
	[[ $output =~ token\ =\ \"cordon-phantom-[0-9a-f]{32}\" ]]
	[[ $output != *fake* ]]
	# So are the agents' logins: what is not a JSON object is not
	# copied at all.
	for f in .claude/.credentials.json .codex/auth.json; do
		mkdir -p "$(dirname "$HOME/$f")"
		echo "fake secret" >"$HOME/$f"
	done
	own
	run as_user "$HOME" "${RUN[@]}" -- cat "$HOME/.claude/.credentials.json" \
	    "$HOME/.codex/auth.json"
	[ "$status" -eq 0 ]
	[ "$output" = "{}
{}" ]
}
