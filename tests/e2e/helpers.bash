# helpers.bash: loaded by every bats file in tests/e2e.
#
# Each test gets a private HOME and XDG_CONFIG_HOME and no system policy,
# so nothing of the machine it runs on leaks into what it checks.

: "${CORDON:?CORDON must name the cordon binary}"

cordon_setup() {
	export HOME="$BATS_TEST_TMPDIR/home"
	export XDG_CONFIG_HOME="$HOME/.config"
	export CORDON_SYSTEM_POLICY=
	mkdir -p "$HOME" "$XDG_CONFIG_HOME"
	cd "$BATS_TEST_TMPDIR" || return 1
}

# The unprivileged account the tests use when they run as root.
TEST_USER=cordon-test

# Makes sure $TEST_USER exists (as root); prints nothing.
ensure_test_user() {
	if ! id -u "$TEST_USER" >/dev/null 2>&1; then
		useradd --system --no-create-home --shell /usr/sbin/nologin \
		    "$TEST_USER"
	fi
}

# Runs a command as an unprivileged user, with HOME in a folder that user
# owns ($1), and the rest of the environment reset.  When the tests
# themselves run unprivileged, the command just runs.  It replaces the
# calling shell: use it with `run` or start_bg, which fork first.
as_user() {
	local home=$1
	shift
	if [ "$(id -u)" -ne 0 ]; then
		HOME="$home" XDG_CONFIG_HOME="$home/.config" exec "$@"
	fi
	ensure_test_user
	# Only what is not the user's yet: a chown changes ctime, which
	# the check after a run reads to tell what the run changed.
	find "$home" \( ! -user "$TEST_USER" -o ! -group "$TEST_USER" \) \
	    -exec chown -h "$TEST_USER:" {} +
	exec setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups \
	    --inh-caps=-all --reset-env \
	    env HOME="$home" XDG_CONFIG_HOME="$home/.config" \
	    CORDON_SYSTEM_POLICY= "$@"
}

# Writes stdin to a file, making its folder.
write() {
	mkdir -p "$(dirname "$1")"
	cat >"$1"
}

# Test peers built with the suite (tests/tools).
: "${TOOLS_DIR:=$BATS_TEST_DIRNAME/../../build/tests/tools}"
NETCHECK="$TOOLS_DIR/netcheck"

# Processes a test started in the background; teardown_bg ends them.
BG_PIDS=()

# Starts a command in the background, output to $BATS_TEST_TMPDIR/NAME.log;
# its pid is in $BG_PID.
start_bg() {
	local name=$1
	shift
	# fd 3 is bats' own: a child that keeps it open stalls the suite.
	"$@" >"$BATS_TEST_TMPDIR/$name.log" 2>&1 3>&- &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

teardown_bg() {
	local pid
	for pid in "${BG_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${BG_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	BG_PIDS=()
}

# Prints a TCP port on 127.0.0.1 that nothing listens on, below the
# kernel's ephemeral range (so no client connection holds it), and not one
# this test was given before.
USED_PORTS=" "
free_port() {
	local port low
	read -r low _ </proc/sys/net/ipv4/ip_local_port_range
	while :; do
		port=$((10000 + RANDOM % (low - 10000)))
		case $USED_PORTS in *" $port "*) continue ;; esac
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			USED_PORTS="$USED_PORTS$port "
			echo "$port"
			return
		fi
	done
}

# Says whether something listens on TCP port $1, without connecting to
# it (a connection would be a client the listener then has to serve).
tcp_listening() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { found = 1 }
	    END { exit !found }' /proc/net/tcp /proc/net/tcp6
}

# Says whether something listens on Unix socket $1 (a socket file left
# by a process that ended is no listener).
unix_listening() {
	awk -v p="$1" '$NF == p && $4 == "00010000" { found = 1 }
	    END { exit !found }' /proc/net/unix
}

# Says whether a TCP connection to port $1 on 127.0.0.1 is still open at
# the client's end (established, or closed by the server alone).
tcp_open_to() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v p=":$hex" '$3 ~ p"$" && ($4 == "01" || $4 == "08") {
	    found = 1 } END { exit !found }' /proc/net/tcp
}

# Waits up to 5 s for a listener: "tcp:127.0.0.1:PORT" or "unix:PATH".
wait_listen() {
	local ep=$1 i
	for i in $(seq 100); do
		case $ep in
		unix:*) [ -S "${ep#unix:}" ] && return 0 ;;
		tcp:*) tcp_listening "${ep##*:}" && return 0 ;;
		esac
		sleep 0.05
	done
	echo "nothing listens on $ep" >&2
	return 1
}

# wait_for [-t SECONDS] CMD...: runs CMD every 0.05 s until it succeeds,
# for at most SECONDS (10 unless told): a deadline for a failure, never
# for a pace, so a loaded machine only waits longer.  Past it, says what
# it waited for and fails.
wait_for() {
	local secs=10 end
	if [ "$1" = -t ]; then
		secs=$2
		shift 2
	fi
	end=$((SECONDS + secs))
	until "$@"; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "wait_for: no success in $secs s: $*" >&2
			return 1
		fi
		sleep 0.05
	done
}

# Prints how many descriptors process $1 has open.
fd_count() {
	ls "/proc/$1/fd" | wc -l
}

# fds_at_least PID N: process PID has N descriptors open or more.
fds_at_least() {
	[ "$(fd_count "$1")" -ge "$2" ]
}

# fds_are PID N: process PID has N descriptors open, no more, no fewer.
fds_are() {
	[ "$(fd_count "$1")" -eq "$2" ]
}

# size_at_least FILE N: FILE exists and holds N bytes or more.
size_at_least() {
	[ -e "$1" ] || return 1
	[ "$(stat -c %s "$1")" -ge "$2" ]
}

# has_open PID PATH: process PID holds PATH open.
has_open() {
	[ -n "$(find /proc/"$1"/fd -lname "$(readlink -f "$2")" -print \
	    -quit 2>/dev/null)" ]
}

# Opens $2 connections to endpoint $1 in the background and waits until all
# are open; they close when release_conns is called.
hold_conns() {
	rm -f "$BATS_TEST_TMPDIR/release"
	start_bg hold "$NETCHECK" hold "$1" --conns "$2" \
	    --then "$BATS_TEST_TMPDIR/release"
	HOLD_PID=$BG_PID
	for i in $(seq 600); do
		grep -q "^held $2" "$BATS_TEST_TMPDIR/hold.log" && return 0
		kill -0 "$HOLD_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/hold.log" >&2
	return 1
}

release_conns() {
	touch "$BATS_TEST_TMPDIR/release"
	wait "$HOLD_PID"
}

# A place for sandboxed runs: $UDIR (owned by the test user when the tests
# run as root) holds bin/ (cordon and the test tools, copied: the
# checkout may not be readable by that user), home/ and the workspace
# ws/.  Inside a sandbox /tmp is private, so what the command needs is
# in the workspace, or named with --read-only.
# cordon_main: cordon-main, the whole program that cordon execs for what
# it does not serve itself: beside it when built, in ../libexec/cordon
# when installed.
cordon_main() {
	local d
	d=$(dirname "$(readlink -f "$CORDON")")
	if [ -x "$d/cordon-main" ]; then
		echo "$d/cordon-main"
	else
		echo "$d/../libexec/cordon/cordon-main"
	fi
}

# make_install ARGS...: `make -s install ARGS...` from the checkout, of
# the binaries under test as they are (cordon, cordon-main, cordon-log,
# cordon-offline): none is built again, with this make's flags, over a
# sanitizer's build.
make_install() {
	local d
	d=$(dirname "$(cordon_main)")
	make -s -C "$BATS_TEST_DIRNAME/../.." install BIN="$CORDON" \
	    -o "$CORDON" MAIN="$(cordon_main)" -o "$(cordon_main)" \
	    LOG_BIN="$d/cordon-log" -o "$d/cordon-log" \
	    OFFLINE_BIN="$d/cordon-offline" -o "$d/cordon-offline" "$@"
}

# cp_cordon DIR: a copy of cordon that runs from DIR: DIR/cordon and
# cordon-main beside it, and cordon-log (`cordon log` alone) and
# cordon-offline (runs without the proxy) if built.
cp_cordon() {
	local d
	d=$(dirname "$(cordon_main)")
	cp "$CORDON" "$1/cordon" && cp "$(cordon_main)" "$1/cordon-main" &&
	    { [ ! -x "$d/cordon-log" ] || cp "$d/cordon-log" "$1/"; } &&
	    { [ ! -x "$d/cordon-offline" ] || cp "$d/cordon-offline" "$1/"; }
}

sandbox_setup() {
	UDIR=$(mktemp -d)
	chmod 755 "$UDIR"
	mkdir -p "$UDIR/bin" "$UDIR/home" "$UDIR/ws"
	cp_cordon "$UDIR/bin"
	cp "$TOOLS_DIR"/* "$UDIR/bin/" 2>/dev/null || true
	UCORDON="$UDIR/bin/cordon"
	WS="$UDIR/ws"
	if [ "$(id -u)" -eq 0 ]; then
		ensure_test_user
		chown -R "$TEST_USER:" "$UDIR"
	fi
}

sandbox_teardown() {
	[ -n "${UDIR:-}" ] && rm -rf "$UDIR"
}

# Runs `cordon run ARGS...` as the test user, in the workspace, with bin/
# readable inside.  Use it with `run` or start_bg.
in_sandbox() {
	cd "$WS" || return 1
	as_user "$UDIR/home" "$UCORDON" run --read-only "$UDIR/bin" "$@"
}

# The same, as whoever runs the tests (root in CI).
in_sandbox_as_me() {
	cd "$WS" || return 1
	"$UCORDON" run --read-only "$UDIR/bin" "$@"
}

# Waits up to 5 s for log $2 (default $LOG) to have $1 lines, open
# lines not counted: $1 exchanges ended (docs/egress-log.md).
log_lines() {
	local i
	for i in $(seq 100); do
		[ "$(end_lines "${2:-$LOG}")" -ge "$1" ] && return 0
		sleep 0.05
	done
	echo "$(end_lines "${2:-$LOG}") lines in ${2:-$LOG}, not $1" >&2
	return 1
}

# The lines of log $1 but open ones: one per exchange, as before those.
end_lines() {
	grep -vc '"event":"open"' "$1" || true
}

# Prints the value of metric line $1 (name with labels, as printed) of
# the proxy whose metrics port is $METRICS.
metric() {
	curl -sS "http://127.0.0.1:$METRICS/metrics" |
	    awk -v m="$1" '$1 == m { print $2 }'
}

# metric_is NAME VALUE: metric line NAME (as metric reads it) is VALUE.
metric_is() {
	[ "$(metric "$1")" = "$2" ]
}

# Issue 36's plant (reshape.bats, session.bats), a script for sh -c
# with $1 objects or refs (where in the protected .git the git
# directory goes), $2 n or r (the control
# byte in the pointer's path), $3 gitfile or commondir (which pointer
# holds it), $4 the marker: a git directory made by hand in
# .git/$1/evil whose core.fsmonitor touches $4, folders src/decoy and
# src/decoy + the byte, and a pointer past them to the git directory.
# Git keeps the byte in the path; a reader that stops at it sees
# src/decoy, empty.
PTR_PLANT='set -e
e=.git/$1/evil
mkdir -p "$e/objects" "$e/refs"
echo "ref: refs/heads/main" >"$e/HEAD"
printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" "$4" >"$e/config"
if [ "$3" = gitfile ]; then at=src; up=../..; else at=lnk; up=../..; fi
d=$(printf "decoy\\$2_")
d=${d%_}
mkdir -p src "$at/decoy" "$at/$d"
if [ "$3" = gitfile ]; then
	printf "gitdir: decoy\\$2/$up/$e\n" >src/.git
else
	echo "ref: refs/heads/main" >lnk/HEAD
	printf "decoy\\$2/$up/$e\n" >lnk/commondir
	echo "gitdir: ../lnk" >src/.git
fi'
