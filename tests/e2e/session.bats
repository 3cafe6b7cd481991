#!/usr/bin/env bats
# cordon session: one sandbox for many commands.  Sessions run as the
# test user (when the suite runs as root) and, where it says so, as root
# too; clients are real processes (python's http.server, curl, git,
# script for a terminal).

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	SIDS=()
	AS=user
}

teardown() {
	local sid died=
	# No session of this test's ended without a stop (its keeper killed
	# or crashed): a list says so, once, with its log (before the stops
	# below, which would remove it as quietly).
	for AS in user root; do
		run --separate-stderr as_who "$UCORDON" session list
		[[ "$stderr" != *"had already ended"* ]] && continue
		echo "$stderr"
		cat "${stderr##*: }"
		died=1
	done
	# Whoever started it (a test may have switched $AS since).
	for sid in "${SIDS[@]}"; do
		AS=user as_who timeout 20 "$UCORDON" session stop "$sid" \
		    >/dev/null 2>&1 ||
		    timeout 20 "$UCORDON" session stop "$sid" >/dev/null 2>&1 ||
		    true
	done
	# The two users of the test of /tmp/cordon-UID taken first.
	if [ -n "${VICTIM:-}" ]; then
		for sid in "${VSIDS[@]}"; do
			as_uid "$VICTIM" timeout 20 "$UCORDON" session stop \
			    "$sid" >/dev/null 2>&1 || true
		done
		rm -rf "/tmp/cordon-$VICTIM"
	fi
	teardown_bg
	sandbox_teardown
	[ -z "$died" ]
}

# Runs ARGS as uid $1 (of no account; root runs the tests), its HOME
# $UDIR/home-UID, XDG_RUNTIME_DIR unset: a service's or su's.
as_uid() {
	local uid=$1
	shift
	(exec setpriv --reuid="$uid" --regid="$uid" --clear-groups \
	    --inh-caps=-all --reset-env env HOME="${AS_HOME:-$UDIR/home-$uid}" \
	    PATH=/usr/bin:/bin "$@")
}

# Runs ARGS as the session's owner: the test user ($AS=user) or whoever
# runs the tests ($AS=root).
as_who() {
	if [ "$AS" = root ]; then
		"$@"
	else
		(as_user "$UDIR/home" "$@")
	fi
}

# Starts a session in the workspace (options: session start's); its id
# in $SID.
session_start() {
	cd "$WS" || return 1
	SID=$(as_who "$UCORDON" session start --read-only "$UDIR/bin" "$@" \
	    2>"$BATS_TEST_TMPDIR/start.err" 3>&-)
	[ -n "$SID" ] || { cat "$BATS_TEST_TMPDIR/start.err"; return 1; }
	SIDS+=("$SID")
}

# Runs `cordon run --session $SID ARGS...` in the workspace.
in_session() {
	cd "$WS" || return 1
	as_who "$UCORDON" run --session "$SID" "$@"
}

# The same as a command line for script(1): its terminal's client.
who_cmd() {
	if [ "$AS" = user ] && [ "$(id -u)" -eq 0 ]; then
		echo "setpriv --reuid=$TEST_USER --regid=$TEST_USER" \
		    "--clear-groups --reset-env env HOME=$UDIR/home $*"
	else
		echo "$*"
	fi
}

# The keeper's pid, and the sandbox's PID 1 (its child whose pid is 1
# in its own namespace).
keeper_pid() {
	as_who "$UCORDON" session list --json |
	    jq -r --arg id "$SID" '.[] | select(.id == $id) | .pid'
}

# The folder of the owner's sessions, as its client finds it:
# $XDG_RUNTIME_DIR/cordon, else ~/.cache/cordon (then sessions/).
sessions_top() {
	as_who sh -c 'if [ -n "${XDG_RUNTIME_DIR:-}" ]; then
	    echo "$XDG_RUNTIME_DIR/cordon"; else echo "$HOME/.cache/cordon"; fi'
}

# Waits up to 2 s for process $1 to be gone.
wait_gone() {
	local i
	for i in $(seq 40); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
}

pid1_of() {
	local p
	for p in $(pgrep -P "$1"); do
		grep -qE '^NSpid:.*[[:space:]]1$' "/proc/$p/status" && echo "$p"
	done
	return 0
}

@test "a background server started by one command answers the next; /tmp and ~/.local last, and never reach the host (user and root)" {
	for AS in user root; do
		port=$(free_port)
		tok="s$RANDOM$RANDOM"
		session_start
		run in_session -- sh -c "python3 -m http.server $port \
		    --bind 127.0.0.1 >/dev/null 2>&1 &
		    echo $tok >/tmp/$tok; mkdir -p ~/.local &&
		    echo $tok >~/.local/$tok"
		[ "$status" -eq 0 ]
		run in_session -- sh -c "for i in \$(seq 50); do
		    curl -s -o /dev/null -w '%{http_code}' \
		    http://127.0.0.1:$port/ && exit 0; sleep 0.1; done; exit 1"
		[ "$status" -eq 0 ]
		[[ "$output" == *200 ]]
		# The server is the sandbox's: the host's port stays free.
		run tcp_listening "$port"
		[ "$status" -ne 0 ]
		run in_session -- sh -c "cat /tmp/$tok ~/.local/$tok"
		[ "$status" -eq 0 ]
		[ "$output" = "$tok"$'\n'"$tok" ]
		[ ! -e "/tmp/$tok" ]
		[ ! -e "$UDIR/home/.local/$tok" ]
		[ ! -e "$HOME/.local/$tok" ]
		cd "$WS"
		as_who "$UCORDON" session stop "$SID" 2>/dev/null
		[ ! -e "/tmp/$tok" ]
	done
}

@test "exit statuses and signals: the command's own; Ctrl-C at a terminal and kill -INT reach the command, not the session (user and root)" {
	for AS in user root; do
	session_start
	run in_session -- sh -c 'exit 7'
	[ "$status" -eq 7 ]
	run in_session -- sh -c 'kill -TERM $$'
	[ "$status" -eq 143 ]
	run -127 in_session -- no-such-command-here
	[ "$status" -eq 127 ]
	[[ "$output" == *"no-such-command-here: No such file or directory"* ]]
	cmd='trap "echo got-INT; exit 9" INT; echo ready; sleep 5 & wait'
	# ^C typed at the client's terminal once the command is ready: the
	# terminal signals the client, which passes it on to the command's
	# process group.
	run bash -c '(for i in $(seq 200); do grep -q ready "$1" && break
	    sleep 0.05; done; printf "\003"; sleep 2) |
	    script -qec "$0" /dev/null | tee "$1"' \
	    "$(who_cmd "$UCORDON" run --session "$SID" -- sh -c "'$cmd'")" \
	    "$BATS_TEST_TMPDIR/tty.out"
	[ "$(grep -c got-INT <<<"$output")" -eq 1 ]
	start_bg noterm as_who "$UCORDON" run --session "$SID" -- sh -c "$cmd" \
	    </dev/null
	wait_for grep -q ready "$BATS_TEST_TMPDIR/noterm.log"
	pkill -INT -P "$BG_PID" -x cordon 2>/dev/null || kill -INT "$BG_PID"
	wait "$BG_PID" || rc=$?
	[ "${rc:-0}" -eq 9 ]
	grep -q got-INT "$BATS_TEST_TMPDIR/noterm.log"
	# The session is still there.
	run in_session -- echo alive
	[ "$status" -eq 0 ]
	[ "$output" = alive ]
	unset rc
	done
}

@test "a terminal: the command's stdin is the client's terminal, as in a fresh run" {
	AS=root
	session_start
	probe='[ -t 0 ] && echo isatty || echo notatty; stty size'
	run script -qec "$UCORDON run --session $SID -- sh -c '$probe'" /dev/null
	[ "$status" -eq 0 ]
	session_out=$output
	run script -qec "$UCORDON run --quiet -- sh -c '$probe'" /dev/null
	[ "$output" = "$session_out" ]
	[[ "$session_out" == *isatty* ]]
	run in_session -- sh -c "$probe" </dev/null
	[[ "$output" == *notatty* ]]
}

@test "two commands at once: each waits on the other, each gets its own status" {
	session_start
	start_bg first as_who "$UCORDON" run --session "$SID" -- sh -c \
	    'for i in $(seq 100); do [ -e /tmp/go ] && exit 3; sleep 0.05; done; exit 1'
	first=$BG_PID
	run in_session -- sh -c 'touch /tmp/go; exit 4'
	[ "$status" -eq 4 ]
	wait "$first" || rc=$?
	[ "${rc:-0}" -eq 3 ]
}

@test "a command in a session has the seccomp filter, no_new_privs and capabilities of a fresh run (user and root)" {
	for AS in user root; do
		session_start
		fields='^(Seccomp|Seccomp_filters|NoNewPrivs|CapInh|CapPrm|CapEff|CapBnd|CapAmb):'
		run in_session -- grep -E "$fields" /proc/self/status
		[ "$status" -eq 0 ]
		in=$output
		cd "$WS"
		run as_who "$UCORDON" run --quiet --read-only "$UDIR/bin" -- \
		    grep -E "$fields" /proc/self/status
		[ "$output" = "$in" ]
		[[ "$in" == *"Seccomp:	2"* ]]
		[[ "$in" == *"NoNewPrivs:	1"* ]]
		[[ "$in" == *"CapEff:	0000000000000000"* ]]
	done
}

@test "another user cannot use the session: refused by its peer's uid, and logged" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to be the other user"
	session_start
	uid=$(id -u "$TEST_USER")
	dir=$(sessions_top)/sessions
	sock=$dir/$SID.sock
	[ -S "$sock" ]
	# Root passes the folder's mode; its cordon sees the keeper is not
	# its own and sends nothing.
	run "$UCORDON" run --session "$sock" -- touch "$WS/by-root"
	[ "$status" -eq 125 ]
	[[ "$output" == *"is not yours: its socket is served by uid $uid"* ]]
	[[ "$output" == *"hint:"* ]]
	# A client that does not check: the keeper refuses its request.
	run python3 -c '
import os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
blob = os.memfd_create("req")
os.write(blob, ("%s\0touch\0%s\0" % (sys.argv[2], sys.argv[3])).encode())
s.sendmsg([struct.pack("<7I", 0x63736e31, 1, 0, 0, 2, 0, 0)],
    [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("4i", blob, 0, 1, 2))])
m = s.recv(4096)
print(struct.unpack("<7I", m[:28])[1], m[28:].decode())
' "$sock" "$WS" "$WS/by-root"
	[[ "$output" == "5 cordon: session $SID is not yours"*"hint:"* ]]
	[ ! -e "$WS/by-root" ]
	grep -q "refused a client of uid 0" "$dir/$SID.log"
	[ "$(stat -c %a "$dir")" = 700 ]
}

# A listener of the test user's that poses as a session's keeper: it
# writes what a client sends (how many bytes and descriptors, and the
# request's memfd: folder, argv, environment) into $2, and answers a
# forged exit status 0.
fake_keeper() {
	cat >"$UDIR/fake.py" <<'PY'
import array, os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.listen(8)
open(sys.argv[1] + ".ready", "w").close()
while True:
    c, _ = s.accept()
    msg, anc, _, _ = c.recvmsg(64, socket.CMSG_SPACE(5 * 4))
    fds = array.array("i")
    for _, _, data in anc:
        fds.frombytes(data[:len(data) - len(data) % 4])
    if msg or fds:
        with open(sys.argv[2], "a") as f:
            f.write("%d bytes, %d fds\n" % (len(msg), len(fds)))
            if len(fds) > 1:
                f.write(os.pread(fds[0], 1 << 20, 0).decode("latin-1"))
    for fd in fds:
        os.close(fd)
    if msg:
        c.sendmsg([struct.pack("<7I", 0x63736e31, 4, 0, 0, 0, 0, 0)])
    c.close()
PY
	chown "$TEST_USER:" "$UDIR/fake.py"
	start_bg fake as_user "$UDIR/home" python3 "$UDIR/fake.py" "$1" "$2"
	for i in $(seq 50); do
		[ -e "$1.ready" ] && return 0
		sleep 0.1
	done
	return 1
}

@test "another user's socket posing as a session: cordon run --session, cordon-session-exec and session stop refuse it by its peer's uid, having sent nothing" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to be the owner and the test user the other"
	sock=$UDIR/fake.sock
	got=$UDIR/fake.got
	fake_keeper "$sock" "$got"
	sx=$(dirname "$CORDON")/build/cordon-session-exec
	[ -x "$sx" ] || sx=$(dirname "$CORDON")/cordon-session-exec
	cd "$WS"
	for client in "$UCORDON run" "$sx"; do
		run env CORDON_TEST_SECRET=s3cret $client --session "$sock" \
		    -- sh -c 'exit 3'
		[ "$status" -eq 125 ]
		[[ "$output" == *"is not yours: its socket is served by uid $(id -u "$TEST_USER")"* ]]
		[[ "$output" == *"hint:"* ]]
	done
	run timeout 20 "$UCORDON" session stop "$sock"
	[ "$status" -eq 125 ]
	[[ "$output" == *"is not yours"* ]]
	# Nothing reached the other user: no request, no descriptor.
	[ ! -s "$got" ] || { cat "$got"; false; }
}

@test "cordon serves run --session and --version without cordon-main, the program that links the libraries; the rest goes to it" {
	session_start
	# cordon alone, its cordon-main out of reach.
	mkdir "$UDIR/front"
	cp "$UDIR/bin/cordon" "$UDIR/front/cordon"
	chmod -R a+rX "$UDIR/front"
	cd "$WS"
	run as_who "$UDIR/front/cordon" -v run --session "$SID" -- sh -c \
	    'echo in; exit 3'
	[ "$status" -eq 3 ]
	[ "$output" = in ]
	run as_who "$UDIR/front/cordon" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "cordon "* ]]
	# What it does not serve, it execs cordon-main for, and says where
	# it looked when that is missing.
	run as_who "$UDIR/front/cordon" policy show
	[ "$status" -eq 125 ]
	[[ "$output" == *"cannot run cordon-main ($UDIR/front/cordon-main,"* ]]
	[[ "$output" == *"hint:"* ]]
	run as_who "$UCORDON" policy show
	[ "$status" -eq 0 ]
}

# As the session's owner, with the variables $@ set, a run given the
# host's /tmp to write tries to put a socket of its own in place of the
# session's ($dir/sessions/$SID.sock), to answer the next client with a
# forged status: it must be refused, and the session answer as itself.
hijack_refused() {
	start_bg hijack as_who env "$@" "$UCORDON" run --quiet --write /tmp \
	    -- python3 -c '
import os, socket, struct, sys, time
p = sys.argv[1]
try:
    os.unlink(p)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(p)
    s.listen(1)
    print("bound", flush=True)
    c, _ = s.accept()
    c.recv(64)
    c.sendmsg([struct.pack("<7I", 0x63736e31, 4, 0, 0, 0, 0, 0)])
    time.sleep(2)
except OSError as e:
    print("refused:", e, flush=True)
' "$dir/sessions/$SID.sock"
	for i in $(seq 100); do
		grep -q 'bound\|refused' "$BATS_TEST_TMPDIR/hijack.log" && break
		sleep 0.1
	done
	cat "$BATS_TEST_TMPDIR/hijack.log"
	run grep -E '^(bound|refused)' "$BATS_TEST_TMPDIR/hijack.log"
	[[ "$output" == "refused: "* ]] || return 1
	run in_session -- sh -c 'exit 7'
	[ "$status" -eq 7 ] || return 1
	wait "$BG_PID" || true
}

@test "a run given the host's /tmp to write cannot put its own socket in place of a session's: the sessions' folder is hidden inside (user and root)" {
	for AS in user root; do
		session_start
		dir=$(sessions_top)
		[ -S "$dir/sessions/$SID.sock" ]
		# Another run, of the same user, with /tmp writable: it would
		# bind a socket of its own in the session's place, and answer
		# the next client with a forged status, having read its
		# environment.
		cd "$WS"
		hijack_refused
	done
}

@test "a run whose XDG_RUNTIME_DIR differs from the session's client's still hides the sessions' folder the client uses (user and root)" {
	# The session and its clients without XDG_RUNTIME_DIR: their folder
	# is ~/.cache/cordon.  The hijacking run has one of the user's, as a
	# login shell would: it must hide both places, not its own alone.
	export XDG_RUNTIME_DIR=
	mkdir -p "$UDIR/xdg"
	chmod 700 "$UDIR/xdg"
	for AS in user root; do
		[ "$AS" = root ] && chown root: "$UDIR/xdg"
		[ "$AS" = user ] && [ "$(id -u)" -eq 0 ] &&
		    chown "$TEST_USER:" "$UDIR/xdg"
		session_start
		dir=$(sessions_top)
		[ "$dir" = "$(as_who sh -c 'echo "$HOME"')/.cache/cordon" ]
		[ -S "$dir/sessions/$SID.sock" ]
		cd "$WS"
		hijack_refused XDG_RUNTIME_DIR="$UDIR/xdg"
	done
}

@test "a repository planted with core.fsmonitor is quarantined before that command's cordon run --session returns" {
	session_start
	run in_session -- sh -c "git init -q evil &&
	    git -C evil config core.fsmonitor 'touch $WS/pwned'"
	[ "$status" -eq 125 ]
	[[ "$output" == *"quarantined $WS/evil/.git"* ]]
	[ ! -e "$WS/evil/.git" ]
	git -C "$WS/evil" status >/dev/null 2>&1 || true
	[ ! -e "$WS/pwned" ]
	# The next command is not blamed for it.
	run in_session -- true
	[ "$status" -eq 0 ]
	# A later command that read the quarantine's name puts it in the
	# way of its own repository's: that moves all the same, elsewhere.
	q=$(ls -d "$WS"/evil/.git.cordon-quarantine-*)
	run in_session -- sh -c "git init -q evil2 &&
	    git -C evil2 config core.fsmonitor 'touch $WS/pwned' &&
	    mkdir evil2/.git${q##*/.git}"
	[ "$status" -eq 125 ]
	[[ "$output" == *"quarantined $WS/evil2/.git"*"moved to $WS/evil2/.git${q##*/.git}-"* ]]
	[ ! -e "$WS/evil2/.git" ]
	git -C "$WS/evil2" status >/dev/null 2>&1 || true
	[ ! -e "$WS/pwned" ]
}

@test "a session's command plants a pointer with a line end to a git directory in .git/objects, then a folder it cannot list: quarantined, held, 125 (issue 36)" {
	unlistable='set -e
	git init -q sub
	git -C sub config core.fsmonitor "touch $1; false"
	chmod 0311 sub'
	# The steps work outside, as the user, with plain git.
	as_who mkdir -p "$UDIR/out"
	cd "$UDIR/out"
	as_who git init -q
	as_who sh -c "$PTR_PLANT" plant objects n gitfile "$UDIR/mark"
	as_who git -C src status >/dev/null 2>&1 || true
	[ -e "$UDIR/mark" ]
	rm -f "$UDIR/mark"
	as_who sh -c "$unlistable" plant "$UDIR/mark"
	as_who git -C sub status >/dev/null 2>&1 || true
	[ -e "$UDIR/mark" ]
	rm -f "$UDIR/mark"

	cd "$WS"
	as_who git init -q
	session_start
	run in_session -- sh -c "$PTR_PLANT" plant objects n gitfile \
	    "$WS/pwned"
	[ "$status" -eq 125 ]
	[[ "$output" == *"quarantined $WS/.git/objects/evil, a git directory"* ]]
	[[ "$output" == *"quarantined $WS/src/.git"*"control byte"* ]]
	as_who git -C "$WS/src" status >/dev/null 2>&1 || true
	[ ! -e "$WS/pwned" ]
	run in_session -- true
	[ "$status" -eq 0 ]

	run in_session -- sh -c "$unlistable" plant "$WS/pwned"
	[ "$status" -eq 125 ]
	[[ "$output" == *"quarantined $WS/sub/.git"* ]]
	[[ "$output" == *"cordon: held $WS/sub, a folder the check could not read"* ]]
	as_who git -C "$WS/sub" status >/dev/null 2>&1 || true
	[ ! -e "$WS/pwned" ]
	# Held until the user can read it.
	run in_session -- true
	[ "$status" -eq 125 ]
	[[ "$output" == *"cordon: held $WS/sub"* ]]
	as_who chmod 0755 "$WS/sub"
	run in_session -- true
	[ "$status" -eq 0 ]
}

# Plants a repository at $1 whose core.fsmonitor touches $2.
PLANT_AT='git init -q "$1" && git -C "$1" config core.fsmonitor "touch $2; false"'

@test "folders older than the 2 s the walks keep listings for, read again only when changed: a repository planted 3 deep below them, and one in a folder then made unreadable, are quarantined, the folder held, in a fresh run and in a session" {
	cd "$WS"
	as_who git init -q
	as_who mkdir -p a/b/c d/e f/g/h
	# The listings are kept once the folders are 2 s old (fslist.c).
	sleep 3
	# A fresh run: its scan listed them, its check recalls them.
	run as_who "$UCORDON" run -- sh -c "$PLANT_AT" plant f/g/h/r \
	    "$WS/pwned"
	[ "$status" -eq 125 ]
	[[ "$output" == *"quarantined $WS/f/g/h/r/.git"* ]]
	session_start
	run in_session -- true
	[ "$status" -eq 0 ]
	run in_session -- true
	[ "$status" -eq 0 ]
	run in_session -- sh -c "$PLANT_AT" plant a/b/c/r "$WS/pwned"
	[ "$status" -eq 125 ]
	[[ "$output" == *"quarantined $WS/a/b/c/r/.git"* ]]
	run in_session -- sh -c "$PLANT_AT && chmod 0311 d/e" plant d/e \
	    "$WS/pwned"
	[ "$status" -eq 125 ]
	[[ "$output" == *"quarantined $WS/d/e/.git"* ]]
	[[ "$output" == *"cordon: held $WS/d/e, a folder the check could not read"* ]]
	for r in a/b/c/r d/e f/g/h/r; do
		as_who git -C "$WS/$r" status >/dev/null 2>&1 || true
	done
	[ ! -e "$WS/pwned" ]
	as_who chmod 0755 "$WS/d/e"
}

@test "a harness's timeout that kills cordon run --session: the command's processes end, its check quarantines what it planted and says so on the client's stderr, and the session goes on (user and root)" {
	for AS in user root; do
		# Root's sandbox has no capability: its workspace is its own.
		[ "$AS" = root ] && [ "$(id -u)" -eq 0 ] && chown root: "$WS"
		session_start
		cd "$WS"
		start_bg killed as_who timeout -s KILL 2 "$UCORDON" run \
		    --session "$SID" -- sh -c "git init -q evil-$AS &&
		    git -C evil-$AS config core.fsmonitor 'touch $WS/pwned' &&
		    echo planted && exec sleep 600"
		wait "$BG_PID" || rc=$?
		[ "${rc:-0}" -eq 137 ]
		unset rc
		# Its client gone, the command ends (not in its 600 s), and
		# its check follows, said on the stderr the client had (the
		# harness's pipe or file).
		for i in $(seq 100); do
			[ -e "$WS/evil-$AS/.git" ] || break
			sleep 0.05
		done
		cat "$BATS_TEST_TMPDIR/killed.log"
		grep -q planted "$BATS_TEST_TMPDIR/killed.log"
		grep -q "quarantined $WS/evil-$AS/.git" \
		    "$BATS_TEST_TMPDIR/killed.log"
		[ ! -e "$WS/evil-$AS/.git" ]
		ls -d "$WS/evil-$AS"/.git.cordon-quarantine-*
		git -C "$WS/evil-$AS" status >/dev/null 2>&1 || true
		[ ! -e "$WS/pwned" ]
		# None of its processes is left, and the next command runs.
		run in_session -- sh -c 'ps -e -o args= | grep -c "^sleep 600"'
		[ "$output" = 0 ]
		run in_session -- echo next
		[ "$status" -eq 0 ]
		[ "$output" = next ]
		as_who "$UCORDON" session stop "$SID" 2>/dev/null
	done
}

# A background process that plants a repository with core.fsmonitor in
# $WS/$1 a second after its command returned.  The shell lets go of
# the client's output before it forks (exec >): a child stopped before
# its own redirection would hold it until the next command (sbs_pause
# gives it 100 ms, which a loaded machine can miss).
plant_late() {
	in_session -- sh -c 'exec >/dev/null 2>&1; (sleep 1; git init -q "$0" &&
	    git -C "$0" config core.fsmonitor "touch $1") &' \
	    "$WS/$1" "$WS/pwned"
}

# plant_late late2, then session stop 1.5 s on, when the plant is due:
# its status and output as run gives them.
stop_after_plant() {
	run plant_late late2
	[ "$status" -eq 0 ] || return 1
	sleep 1.5
	cd "$WS"
	run as_who timeout 20 "$UCORDON" session stop "$SID"
}

@test "a background process is stopped between commands: what it would plant after its command's check waits for the next command, whose check quarantines it; stop ends it unplanted" {
	session_start
	run plant_late late
	[ "$status" -eq 0 ]
	# Stopped with its command's end, before its check: nothing for
	# the host's git in the meantime.
	sleep 3
	[ ! -e "$WS/late" ]
	# The next command lets it run; that command's check takes it.
	run in_session -- sleep 2
	[ "$status" -eq 125 ]
	[[ "$output" == *"quarantined $WS/late/.git"* ]]
	[ ! -e "$WS/late/.git" ]
	stop_after_plant
	[ "$status" -eq 0 ]
	[ ! -e "$WS/late2" ]
	git -C "$WS/late" status >/dev/null 2>&1 || true
	[ ! -e "$WS/pwned" ]
}

@test "--run-between: background processes run between commands, said at the start; what one plants then stays until the next command's check or the stop's, which quarantine it" {
	session_start --run-between
	grep -q "run-between: its background processes run between commands" \
	    "$BATS_TEST_TMPDIR/start.err"
	run --separate-stderr as_who "$UCORDON" session list --json
	echo "list said: $stderr"
	[ -z "$stderr" ]
	[ "$(jq -r --arg id "$SID" '.[] | select(.id == $id) |
	    .between_commands' <<<"$output")" = running ]
	run plant_late late
	[ "$status" -eq 0 ]
	# The gap the option opens: its check came before the repository.
	for i in $(seq 50); do
		[ -e "$WS/late/.git/config" ] &&
		    grep -q fsmonitor "$WS/late/.git/config" && break
		sleep 0.1
	done
	grep -q fsmonitor "$WS/late/.git/config"
	# The next command's check takes it, and says so to that command.
	run in_session -- true
	[ "$status" -eq 125 ]
	[[ "$output" == *"quarantined $WS/late/.git"* ]]
	[ ! -e "$WS/late/.git" ]
	# With no next command, the stop's check takes it.
	stop_after_plant
	[[ "$output" == *"quarantined $WS/late2/.git"* ]]
	[ ! -e "$WS/late2/.git" ]
	git -C "$WS/late" status >/dev/null 2>&1 || true
	git -C "$WS/late2" status >/dev/null 2>&1 || true
	[ ! -e "$WS/pwned" ]
}

# A plant 1.5 s after its command, by a process that has a timer send
# it SIGCONT from 1 s on, when it can have one (tools/sigcont.c).
plant_timer() {
	in_session -- "$UDIR/bin/sigcont" plant sh -c 'git init -q "$0" &&
	    git -C "$0" config core.fsmonitor "touch $1"' "$WS/$1" "$WS/pwned"
}

@test "a paused session refuses each way to have the kernel send SIGCONT later (timer_create, mq_notify: ENOSYS; PR_SET_PDEATHSIG, F_SETSIG, clone's exit signal: EPERM) (user and root)" {
	for AS in user root; do
		session_start
		run in_session -- "$UDIR/bin/sigcont" routes
		[ "$status" -eq 0 ]
		[[ "$output" == *"timer_create: ENOSYS"* ]]
		[[ "$output" == *"pdeathsig: EPERM"* ]]
		[[ "$output" == *"setsig: EPERM"* ]]
		[[ "$output" == *"clone: EPERM"* ]]
		[[ "$output" == *"mq_notify: ENOSYS"* ]]
	done
}

@test "a process stopped between commands has no timer to continue it: what it would plant 1.5 s after its command waits for the next command, whose check quarantines it" {
	session_start
	run plant_timer tlate
	[ "$status" -eq 0 ]
	[[ "$output" == *"timer_create: ENOSYS"* ]]
	sleep 3
	[ ! -e "$WS/tlate" ]
	run in_session -- sleep 2
	[ "$status" -eq 125 ]
	[[ "$output" == *"quarantined $WS/tlate/.git"* ]]
	git -C "$WS/tlate" status >/dev/null 2>&1 || true
	[ ! -e "$WS/pwned" ]
}

# Makes, in the folder the working directory is, the plant of
# tools/inflight.c: src, a repository whose git directory is ./real
# (src/.git the pointer "gitdir: $PWD/real"), and a git directory at
# .git/objects/evil, where the walk does not go unless a pointer names
# it, whose core.fsmonitor touches $1.  Then leaves a child writing
# 1000 MB into src/.git, the pointer's rewrite to that git directory and
# a truncate queued behind it, and returns.  1000 MB: an overwrite of
# 300 MB in the page cache took 40 ms here, inside the 100 ms in which
# PID 1 looks closely before it tells the client why the check waits.
inflight_plant() {
	git init -q --separate-git-dir="$PWD/real" src &&
	    git init -q "${TMPDIR:-/tmp}/evil.$$" &&
	    cp -r "${TMPDIR:-/tmp}/evil.$$/.git" .git/objects/evil &&
	    git --git-dir=.git/objects/evil config core.fsmonitor \
	    "touch $1; false" &&
	    exec "$(dirname "$0")/inflight" plant src/.git 1000 \
	    "gitdir: ../.git/objects/evil"
}

# Waits up to 30 s for $1/src/.git to be the rewritten pointer.
inflight_landed() {
	local i
	for i in $(seq 300); do
		[ "$(cat "$1/src/.git" 2>/dev/null)" = \
		    "gitdir: ../.git/objects/evil" ] && return 0
		sleep 0.1
	done
	return 1
}

@test "writes still in the kernel when a command ends (1000 MB holding src/.git, the pointer's rewrite and a truncate queued behind it) land before that command's check, which quarantines what they point to; the client is told why it waits; the host's git between commands runs nothing (user and root)" {
	declare -f inflight_plant >"$UDIR/bin/plant.sh"
	echo 'inflight_plant "$@"' >>"$UDIR/bin/plant.sh"
	# On the host, without cordon, the plant works: once the writes
	# land, git status in src runs the fsmonitor.
	mkdir -p "$UDIR/host"
	chown "$(stat -c %u "$UDIR")" "$UDIR/host"
	run as_who sh -c 'cd "$1" && git init -q . &&
	    sh "$2/plant.sh" "$1/MARK"' sh "$UDIR/host" "$UDIR/bin"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ "in flight: writer "[RD]", rewrite D, truncate D" ]]
	inflight_landed "$UDIR/host"
	as_who git -C "$UDIR/host/src" status >/dev/null 2>&1 || true
	[ -e "$UDIR/host/MARK" ]

	# In a session: the command returns once they landed, and its
	# check quarantines the git directory the pointer now names; as
	# the test user (stopped between commands) and as root (frozen
	# too, where cgroup v2 is), each in a workspace of its own.
	top=$WS
	for AS in user root; do
		WS=$top/$AS
		mkdir "$WS"
		if [ "$AS" = user ] && [ "$(id -u)" -eq 0 ]; then
			chown "$TEST_USER:" "$WS"
		fi
		as_who git init -q "$WS"
		session_start
		run in_session -- sh "$UDIR/bin/plant.sh" "$WS/MARK"
		echo "$output"
		landed=$(cat "$WS/src/.git")
		# The host's git before the next command: nothing to run.
		inflight_landed "$WS"
		as_who git -C "$WS/src" status >/dev/null 2>&1 || true
		[ ! -e "$WS/MARK" ]
		[ "$landed" = "gitdir: ../.git/objects/evil" ]
		[[ "$output" =~ "in flight: writer "[RD]", rewrite D, truncate D" ]]
		# One thread or several, as the big write goes.
		[[ "$output" == *"its check waits for "*" thread"*" of its processes"* ]]
		[[ "$output" == *"hint: to end them with the session: cordon session stop $SID"* ]]
		[ "$status" -eq 125 ]
		[[ "$output" == *"quarantined $WS/.git/objects/evil"* ]]
	done
}

@test "while a command's check waits for writes in the kernel, the session serves: session stop ends them, the client hears why, and the host's git finds nothing to run" {
	cat >"$UDIR/bin/plant.sh" <<'SH'
git init -q --separate-git-dir="$PWD/real" src &&
    git init -q "${TMPDIR:-/tmp}/evil.$$" &&
    cp -r "${TMPDIR:-/tmp}/evil.$$/.git" .git/objects/evil &&
    git --git-dir=.git/objects/evil config core.fsmonitor "touch $1; false" &&
    exec "$(dirname "$0")/inflight" plant src/.git 1000 \
    "gitdir: ../.git/objects/evil"
SH
	as_who git init -q "$WS"
	session_start
	start_bg client in_session -- sh "$UDIR/bin/plant.sh" "$WS/MARK"
	client=$BG_PID
	for i in $(seq 300); do
		grep -q "its check waits for" "$BATS_TEST_TMPDIR/client.log" &&
		    break
		sleep 0.1
	done
	cat "$BATS_TEST_TMPDIR/client.log"
	grep -q "its check waits for" "$BATS_TEST_TMPDIR/client.log"
	cd "$WS"
	run as_who timeout 20 "$UCORDON" session stop "$SID"
	echo "$output"
	[ "$status" -eq 0 ]
	run wait "$client"
	[ "$status" -eq 125 ]
	cat "$BATS_TEST_TMPDIR/client.log"
	grep -q "session $SID ended while the command ran: it was stopped" \
	    "$BATS_TEST_TMPDIR/client.log"
	as_who git -C "$WS/src" status >/dev/null 2>&1 || true
	[ ! -e "$WS/MARK" ]
}

# The folder where cgroup v2 is mounted, or nothing.
cgroup2_mount() {
	awk '$0 ~ / - cgroup2 / && $4 == "/" { print $5; exit }' \
	    /proc/self/mountinfo
}

@test "root's session is frozen between commands in a cgroup of its own (cgroup.freeze): a SIGCONT from outside continues nothing; the next command does; with nothing left to freeze, none; stop removes the cgroup" {
	[ "$(id -u)" -eq 0 ] || skip "the cgroup freezer needs root here"
	[ -n "$(cgroup2_mount)" ] || skip "no cgroup v2 mounted"
	AS=root
	chown root: "$WS"
	session_start
	cg=$(as_who "$UCORDON" session list --json | jq -r --arg id "$SID" \
	    '.[] | select(.id == $id) | .cgroup // empty')
	echo "cgroup: $cg"
	[ -n "$cg" ]
	run in_session -- sh -c 'exec >/dev/null 2>&1; (sleep 1; touch "$0") &' \
	    "$WS/woke"
	[ "$status" -eq 0 ]
	# What a stop alone would let run: a signal from outside (the
	# user's own) or one a racing process sent.
	while read -r pid; do
		kill -CONT "$pid"
	done <"$cg/cgroup.procs"
	sleep 2.5
	[ ! -e "$WS/woke" ]
	grep -qx "frozen 1" "$cg/cgroup.events"
	# The next command: it runs on, and is there within 10 s.
	run in_session -- sh -c 'for i in $(seq 100); do
	    [ -e "$0" ] && exit 0; sleep 0.1; done; exit 1' "$WS/woke"
	[ "$status" -eq 0 ]
	# The background process ended meanwhile: PID 1 is alone, and a
	# freeze would cost each command milliseconds for nothing.
	[ "$(wc -l <"$cg/cgroup.procs")" -eq 1 ]
	grep -qx "frozen 0" "$cg/cgroup.events"
	run in_session -- sh -c 'exec >/dev/null 2>&1; sleep 30 &'
	[ "$status" -eq 0 ]
	grep -qx "frozen 1" "$cg/cgroup.events"
	run as_who timeout 20 "$UCORDON" session stop "$SID"
	[ "$status" -eq 0 ]
	[ ! -e "$cg" ]
}

@test "a session refuses Linux AIO, whose queued writes no stop of its threads waits for (io_setup: EPERM)" {
	session_start
	"$UDIR/bin/probe" aio
	run in_session -- "$UDIR/bin/probe" aio
	[ "$status" -eq 1 ]
	[[ "$output" == "held aio: EPERM (io_setup)" ]]
}

@test "a process stopped between commands cannot have its client's terminal's hangup continue it: TIOCSCTTY is refused, and what it would plant after the terminal closes waits for the next command" {
	session_start
	# The client's stdin is a fresh pseudo-terminal that is no one's
	# controlling terminal yet, as a harness's may be; the harness
	# closes its master after the command.  A hangup sends SIGHUP and
	# SIGCONT to the session leader whose controlling terminal it is.
	cat >"$UDIR/bin/ptyclient.py" <<'PY'
import os, subprocess, sys, time
m, s = os.openpty()
r = subprocess.run(sys.argv[1:], stdin=s, stdout=sys.stdout, stderr=sys.stderr)
os.close(s)
time.sleep(0.5)
os.close(m)
sys.exit(r.returncode)
PY
	cat >"$UDIR/bin/ctty.py" <<'PY'
import fcntl, os, signal, subprocess, sys, termios, time
signal.signal(signal.SIGHUP, signal.SIG_IGN)
try:
	fcntl.ioctl(0, termios.TIOCSCTTY, 0)
	print("ctty: ok", flush=True)
except OSError as e:
	print("ctty:", os.strerror(e.errno), flush=True)
# The other way to one: a session leader opening a terminal without
# O_NOCTTY (here, its own stdin again).
try:
	os.close(os.open("/proc/self/fd/0", os.O_RDWR))
	os.close(os.open("/dev/tty", os.O_RDWR))
	print("reopen: ctty", flush=True)
except OSError as e:
	print("reopen:", e.filename, os.strerror(e.errno), flush=True)
os.close(1)
os.close(2)
time.sleep(1)
subprocess.run(["sh", "-c", 'git init -q "$0" && git -C "$0" config core.fsmonitor "touch $1"', sys.argv[1], sys.argv[2]])
PY
	cd "$WS"
	run as_who python3 "$UDIR/bin/ptyclient.py" "$UCORDON" run --session "$SID" -- \
	    sh -c 'setsid -f python3 "$0" "$1" "$2" | head -2' \
	    "$UDIR/bin/ctty.py" "$WS/hlate" "$WS/pwned"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ctty: Operation not permitted"* ]]
	[[ "$output" == *"reopen: "* && "$output" != *"reopen: ctty"* ]]
	sleep 2.5
	[ ! -e "$WS/hlate" ]
	run in_session -- sleep 1.5
	[ "$status" -eq 125 ]
	[[ "$output" == *"quarantined $WS/hlate/.git"* ]]
	[ ! -e "$WS/pwned" ]
}

@test "--run-between and a fresh cordon run keep timer_create, mq_notify, PR_SET_PDEATHSIG, F_SETSIG and clone's exit signal" {
	session_start --run-between
	run in_session -- "$UDIR/bin/sigcont" routes
	[ "$status" -eq 0 ]
	[ "$(grep -c ': ok$' <<<"$output")" -eq 4 ]
	[[ "$output" != *ENOSYS* && "$output" != *EPERM* ]]
	cd "$WS"
	run as_who "$UCORDON" run --quiet --read-only "$UDIR/bin" -- \
	    "$UDIR/bin/sigcont" routes
	[ "$status" -eq 0 ]
	[ "$(grep -c ': ok$' <<<"$output")" -eq 4 ]
	[[ "$output" != *ENOSYS* && "$output" != *EPERM* ]]
}

@test "a background process runs while a later command runs (its /proc State is not T there) and is stopped between commands (T, seen from the host) (user and root)" {
	for AS in user root; do
		tok="b$RANDOM$RANDOM"
		session_start
		run --separate-stderr as_who "$UCORDON" session list --json
		echo "list said: $stderr"
		[ -z "$stderr" ]
		[ "$(jq -r --arg id "$SID" '.[] | select(.id == $id) |
		    .between_commands' <<<"$output")" = stopped ]
		run in_session -- sh -c "python3 -c 'import time
while True: time.sleep(0.05)' $tok >/dev/null 2>&1 & echo \$!"
		[ "$status" -eq 0 ]
		inner=$output
		host=$(pgrep -f "$tok")
		[ -n "$host" ]
		grep -q '^State:	T' "/proc/$host/status"
		run in_session -- grep '^State:' "/proc/$inner/status"
		[ "$status" -eq 0 ]
		[[ "$output" == "State:"* ]]
		[[ "$output" != *"T ("* ]]
		grep -q '^State:	T' "/proc/$host/status"
		cd "$WS"
		as_who timeout 20 "$UCORDON" session stop "$SID" 2>/dev/null
		wait_gone "$host"
		run ! kill -0 "$host"
	done
}

@test "--report per command: its status, what was quarantined, what was refused in its time" {
	session_start
	rep=$UDIR/rep.json
	run in_session --report "$rep" -- sh -c "curl -s -m 5 \
	    http://denied.test/ >/dev/null; git init -q r2 &&
	    git -C r2 config core.fsmonitor true; exit 0"
	[ "$status" -eq 125 ]
	jq -e '.exit_status == 125' "$rep"
	jq -e '.command[0] == "sh"' "$rep"
	jq -e '[.refused[].host] | index("denied.test") != null' "$rep"
	jq -e '.repositories.quarantined | length == 1' "$rep"
	run in_session --report "$rep" -- true
	jq -e '.exit_status == 0 and .refused_total == 0' "$rep"
	jq -e '.repositories.quarantined | length == 0' "$rep"
}

@test "a command's refusals are on its own stderr when it ends, before its status, with their fix" {
	session_start
	run --separate-stderr in_session -- sh -c \
	    "curl -s -m 5 http://denied.test/ >/dev/null; exit 3"
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"cordon: refused 1 connection: denied.test:80 ("* ]]
	[[ "$stderr" == *"cordon: to allow denied.test:80: "*"denied.test"* ]]
	# The next command hears only its own.
	run --separate-stderr in_session -- true
	[ "$status" -eq 0 ]
	[[ "$stderr" != *"cordon: refused"* ]]
}

@test "stop ends every process of the session and prints its summary; the idle limit does too" {
	tok="m$RANDOM$RANDOM"
	session_start
	run in_session -- sh -c "python3 -c 'import time; time.sleep(1000)' \
	    $tok >/dev/null 2>&1 & echo x >/tmp/left"
	[ "$status" -eq 0 ]
	# Stopped between commands (SIGKILL ends it all the same).
	grep -q '^State:	T' "/proc/$(pgrep -f "$tok")/status"
	cd "$WS"
	run as_who timeout 20 "$UCORDON" session stop "$SID"
	[ "$status" -eq 0 ]
	[[ "$output" == *"left 1 file"* ]]
	[[ "$output" == *"this session's own"* ]]
	run pgrep -f "$tok"
	[ "$status" -ne 0 ]
	run in_session -- true
	[ "$status" -eq 125 ]
	[[ "$output" == *"has ended: it was stopped"* ]]

	session_start --idle 1
	run in_session -- sh -c "python3 -c 'import time; time.sleep(1000)' \
	    $tok >/dev/null 2>&1 &"
	grep -q '^State:	T' "/proc/$(pgrep -f "$tok")/status"
	for i in $(seq 40); do
		pgrep -f "$tok" >/dev/null || break
		sleep 0.1
	done
	run pgrep -f "$tok"
	[ "$status" -ne 0 ]
	run in_session -- true
	[ "$status" -eq 125 ]
	[[ "$output" == *"idle longer than its --idle limit"* ]]
}

@test "--name: a second session is refused the name while the first runs; stop of an ended session removes its files (user and root)" {
	for AS in user root; do
		session_start --name "n$AS"
		first=$SID
		cd "$WS"
		run as_who "$UCORDON" session start --name "n$AS"
		[ "$status" -eq 125 ]
		[[ "$output" == *"--name \"n$AS\" is session $first's"* ]]
		[[ "$output" == *"hint: stop it first"* ]]
		run in_session -- true
		[ "$status" -eq 0 ]
		run as_who timeout 20 "$UCORDON" session stop "n$AS"
		[ "$status" -eq 0 ]
		run as_who "$UCORDON" session stop "n$AS"
		[ "$status" -eq 0 ]
		[[ "$output" == *"session $first had already ended (it was stopped"* ]]
		[[ "$output" == *"its files are removed"* ]]
		run as_who "$UCORDON" session stop "n$AS"
		[ "$status" -eq 125 ]
		[[ "$output" == *"no session is named"* ]]
		run ls "$(sessions_top)/sessions"
		[[ "$output" != *"$first"* ]]
	done
}

@test "--name: two session starts at once with one name: exactly one wins, the other is refused and told which session holds it" {
	local round r1 r2 id1 id2 won lost
	cd "$WS"
	for round in 1 2 3; do
		# Both from one shell of the owner's, at once.
		as_who sh -c 'for i in 1 2; do
			("$0" session start --read-only "$1" --name "$2" \
			    >"$3/s$i.out" 2>"$3/s$i.err"; echo $? >"$3/s$i.rc") &
		done; wait' "$UCORDON" "$UDIR/bin" "race$round" "$UDIR" 3>&-
		id1=$(cat "$UDIR/s1.out")
		id2=$(cat "$UDIR/s2.out")
		r1=$(cat "$UDIR/s1.rc")
		r2=$(cat "$UDIR/s2.rc")
		SIDS+=($id1 $id2)
		echo "round $round: $r1 ($id1) $r2 ($id2)"
		cat "$UDIR"/s[12].err
		[ "$((r1 + r2))" -eq 125 ]
		if [ "$r1" -eq 0 ]; then won=$id1 lost=2; else won=$id2 lost=1; fi
		grep -q "^cordon: session start: --name \"race$round\" is session $won's, which runs or is starting: refused" \
		    "$UDIR/s$lost.err"
		grep -q "hint: stop it first (cordon session stop race$round)" \
		    "$UDIR/s$lost.err"
		# The name leads to the winner, which answers by it.
		run -0 as_who "$UCORDON" run --session "race$round" -- echo "$won"
		[ "$output" = "$won" ]
		[ "$(as_who "$UCORDON" session list | grep -c " race$round ")" -eq 1 ]
	done
}

@test "--name: a newline, a space, a '.', a leading '-': refused, saying which characters a name holds; session list stays one line a session" {
	local name
	cd "$WS"
	for name in $'evil\nffffffffffffffff forged /etc' 'a b' a.b -x \
	    "$(printf 'x%.0s' $(seq 65))"; do
		run --separate-stderr as_who "$UCORDON" session start \
		    --read-only "$UDIR/bin" --name "$name"
		[ -z "$output" ] || SIDS+=("$output")
		[ "$status" -eq 2 ]
		[[ "$stderr" == *"refused: a name is 1 to 64 letters, digits, '-', '_', '+' or '@', not beginning with '-', and not an id"* ]]
		[[ "$stderr" == *"hint: give another --name"* ]]
	done
	# The name in the message is escaped: one line, not two.
	run -2 as_who "$UCORDON" session start --name $'evil\nforged'
	[[ "${lines[0]}" == *'--name "evil\x0aforged" refused'* ]]
	run -0 as_who "$UCORDON" session list
	[ -z "$output" ]
	# What a name may hold.
	session_start --name "Task_1+fix@repo-2"
	run -0 as_who "$UCORDON" run --session "Task_1+fix@repo-2" -- true
}

@test "without XDG_RUNTIME_DIR, another user who made /tmp/cordon-UID first stops nothing: the sessions are in the user's home, work, and are out of the other's reach" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to be two users"
	VICTIM=61997
	VSIDS=()
	local other=61998 sid dir
	rm -rf "/tmp/cordon-$VICTIM"
	mkdir -p "$UDIR/home-$VICTIM" "$UDIR/home-$other" "$UDIR/vws"
	chown "$VICTIM:$VICTIM" "$UDIR/home-$VICTIM" "$UDIR/vws"
	chown "$other:$other" "$UDIR/home-$other"
	# The other user takes the shared folder's name first, as any may.
	as_uid "$other" mkdir -m 0777 "/tmp/cordon-$VICTIM" \
	    "/tmp/cordon-$VICTIM/sessions"
	cd "$UDIR/vws"
	sid=$(as_uid "$VICTIM" "$UCORDON" session start --read-only \
	    "$UDIR/bin" --name mine 3>&-)
	[ -n "$sid" ]
	VSIDS+=("$sid")
	run -0 as_uid "$VICTIM" "$UCORDON" run --session mine -- echo works
	[ "$output" = works ]
	dir=$UDIR/home-$VICTIM/.cache/cordon/sessions
	[ -S "$dir/$sid.sock" ]
	[ "$(stat -c '%a %u' "$dir")" = "700 $VICTIM" ]
	[ "$(stat -c '%a %u' "$UDIR/home-$VICTIM/.cache/cordon")" = "700 $VICTIM" ]
	run -0 as_uid "$VICTIM" "$UCORDON" session list
	[[ "$output" == "$sid mine "* ]]
	# The other user: nothing in its folder, and no way to the session.
	[ -z "$(ls -A "/tmp/cordon-$VICTIM/sessions")" ]
	run -125 as_uid "$other" "$UCORDON" session stop "$sid"
	run -125 as_uid "$other" "$UCORDON" session stop "$dir/$sid.sock"
	[[ "$output" == *"Permission denied"* ]]
	run -0 as_uid "$VICTIM" "$UCORDON" run --session mine -- echo still
	[ "$output" = still ]
	# A home that is not the user's: /tmp/cordon-UID, the other's, is
	# refused, with what the user can do (not "remove it").
	AS_HOME=/ run -125 as_uid "$VICTIM" "$UCORDON" session start \
	    --read-only "$UDIR/bin" 3>&-
	[[ "$output" == *"/tmp/cordon-$VICTIM is not a folder of yours"*"(owner $other, mode 777)"* ]]
	[[ "$output" == *"hint: another user made it: set XDG_RUNTIME_DIR, or HOME, to a folder of yours that no one else may write"* ]]
	[[ "$output" != *"remove it"* ]]
	run -0 as_uid "$VICTIM" "$UCORDON" session stop mine
	VSIDS=()
}

@test "a session whose PID 1 died, or none by that id: cordon run --session fails with the reason and the fix" {
	session_start
	keeper=$(keeper_pid)
	[ -n "$keeper" ]
	pid1=$(pid1_of "$keeper")
	[ -n "$pid1" ]
	kill -KILL "$pid1"
	wait_gone "$keeper"
	run in_session -- true
	[ "$status" -eq 125 ]
	[[ "$output" == *"has ended: its sandbox's PID 1 ended"* ]]
	[[ "$output" == *"hint: start another"* ]]
	SID=0123456789abcdef
	run in_session -- true
	[ "$status" -eq 125 ]
	[[ "$output" == *"no session 0123456789abcdef is running"* ]]
	[[ "$output" == *"hint:"* ]]
}

@test "a session whose keeper was killed: session list removes it once and says why, keeping its log; cordon run --session fails with the reason" {
	session_start --name killed
	keeper=$(keeper_pid)
	[ -n "$keeper" ]
	kill -KILL "$keeper"
	wait_gone "$keeper"
	run ! kill -0 "$keeper"
	run -125 in_session -- true
	[[ "$output" == *"session $SID ended without a stop: its keeper died"* ]]
	[[ "$output" == *"hint: "*"cordon session start"* ]]
	run --separate-stderr as_who "$UCORDON" session list
	[ "$status" -eq 0 ]
	[[ "$output" != *"$SID"* ]]
	[[ "$stderr" == *"cordon: session $SID had already ended (its keeper died without a stop"*"its files are removed but its log, with what it said before it died: "*"/$SID.log"* ]]
	# Its log stays: the only account of why it died.
	log=${stderr##*: }
	[ -f "$log" ]
	# Said once: the next list neither lists it nor says it again.
	run --separate-stderr as_who "$UCORDON" session list --json
	[ "$status" -eq 0 ]
	[ "$(jq --arg id "$SID" 'map(select(.id == $id)) | length' <<<"$output")" -eq 0 ]
	[[ "$stderr" != *"$SID"* ]]
	run -125 as_who "$UCORDON" run --session killed -- true
	[[ "$output" == *"no session is named \"killed\""* ]]
	run ls "$(sessions_top)/sessions"
	[ "$(grep -c "$SID" <<<"$output")" -eq 1 ]
	[[ "$output" == *"$SID.log"* ]]
}

@test "a session whose socket was removed: run --session and stop say its keeper lives and how to end it, and remove nothing of it" {
	session_start --name orphan
	keeper=$(keeper_pid)
	sock=$(as_who "$UCORDON" session list --json |
	    jq -r --arg id "$SID" '.[] | select(.id == $id) | .socket')
	[ -S "$sock" ]
	as_who rm "$sock"
	run -125 in_session -- true
	[[ "$output" == *"session $SID does not answer"*"but its keeper lives"* ]]
	[[ "$output" == *"hint: "*"kill PID"* ]]
	run -125 as_who "$UCORDON" session stop "$SID"
	[[ "$output" == *"but its keeper lives"* ]]
	[[ "$output" != *"had already ended"* ]]
	# Its files stay with it: the lock it holds, its description.
	[ -e "${sock%.sock}.lock" ]
	run --separate-stderr as_who "$UCORDON" session list --json
	[ -z "$stderr" ]
	[ "$(jq -r --arg id "$SID" '.[] | select(.id == $id) | .alive' \
	    <<<"$output")" = false ]
	# The way the hint gives ends it, and says so to the next client.
	kill "$keeper"
	wait_gone "$keeper"
	run ! kill -0 "$keeper"
	run -125 as_who "$UCORDON" run --session orphan -- true
	[[ "$output" == *"session $SID has ended: its keeper got SIGTERM"* ]]
}

@test "session start removes what sessions that ended over a week ago left (reason, log, a name of nothing), and nothing newer or alive" {
	session_start --name alive
	live=$SID
	sock=$(as_who "$UCORDON" session list --json |
	    jq -r --arg id "$SID" '.[] | select(.id == $id) | .socket')
	dir=${sock%/*}
	old=0123456789abcdef
	new=fedcba9876543210
	as_who sh -c 'cd "$0" && echo stopped >$1.end && : >$1.log &&
	    printf %s $1 >old.name && echo stopped >$2.end && : >$2.log &&
	    printf %s $2 >new.name &&
	    touch -d "8 days ago" $1.end $1.log old.name new.name \
	    $3.log alive.name' "$dir" "$old" "$new" "$live"
	session_start
	[ ! -e "$dir/$old.end" ]
	[ ! -e "$dir/$old.log" ]
	[ ! -e "$dir/old.name" ]
	# Ended a day ago: its reason and log stay, and its name with them.
	[ -e "$dir/$new.end" ]
	[ -e "$dir/$new.log" ]
	[ -e "$dir/new.name" ]
	# Alive, however old its files: whole, and it runs.
	[ -e "$dir/$live.log" ]
	[ -e "$dir/alive.name" ]
	[ -S "$sock" ]
	run as_who "$UCORDON" run --session alive -- echo here
	[ "$status" -eq 0 ]
	[ "$output" = here ]
	as_who rm "$dir/$new.end" "$dir/$new.log" "$dir/new.name"
}

@test "agents.md: the Python harness runs as written, as the user" {
	REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	awk '/^## Sessions/ { s = 1 } s && /^```python/ { p = 1; next }
	    p && /^```/ { exit } p { print }' "$REPO/docs/agents.md" \
	    >"$UDIR/harness.py"
	[ -s "$UDIR/harness.py" ]
	chmod 644 "$UDIR/harness.py"
	cd "$WS"
	run as_who env PATH="$UDIR/bin:/usr/bin:/bin" python3 "$UDIR/harness.py"
	[ "$status" -eq 0 ]
	[[ "$output" == *"server answered"* ]]
	[ -s "$WS/report.json" ]
	jq -e '.exit_status == 0' "$WS/report.json"
	run pgrep -f "http.server 8731"
	[ "$status" -ne 0 ]
}

@test "agents.md: the Node harness runs as written, as the user, through cordon-session-exec when installed, else cordon run" {
	REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	awk '/^## Sessions/ { s = 1 } s && /^```js/ { p = 1; next }
	    p && /^```/ { exit } p { print }' "$REPO/docs/agents.md" \
	    >"$UDIR/harness.js"
	[ -s "$UDIR/harness.js" ]
	chmod 644 "$UDIR/harness.js"
	cd "$WS"
	run as_who env PATH="$UDIR/bin:/usr/bin:/bin" node "$UDIR/harness.js"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "server answered via cordon" ]
	# Installed as make install does: libexec/cordon beside bin.
	sx=$(dirname "$CORDON")/build/cordon-session-exec
	[ -x "$sx" ] || sx=$(dirname "$CORDON")/cordon-session-exec
	mkdir -p "$UDIR/libexec/cordon"
	cp "$sx" "$UDIR/libexec/cordon/"
	chmod -R a+rX "$UDIR/libexec"
	run as_who env PATH="$UDIR/bin:/usr/bin:/bin" node "$UDIR/harness.js"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "server answered via cordon-session-exec" ]
	run pgrep -f "listen.8732"
	[ "$status" -ne 0 ]
}

# A harness on the control channel, in Python as a user's would be:
# listens at $CTL, writes every event to $EVENTS, and answers: "allow"
# sends a refused event's allow entry back, once; other words answer
# the ask events in turn (allow-once, allow-run, deny).
start_py_harness() {
	CTL="$UDIR/ctl.sock"
	EVENTS="$UDIR/events.log"
	rm -f "$CTL" "$EVENTS"
	cat >"$UDIR/ctl.py" <<'PY'
import json, socket, sys

path, log, answers = sys.argv[1], sys.argv[2], sys.argv[3:]
server = socket.socket(socket.AF_UNIX)
server.bind(path)
server.listen(1)
conn, _ = server.accept()
out = open(log, "a", buffering=1)
for line in conn.makefile("r"):
    event = json.loads(line)
    out.write(line)
    reply = None
    if event["event"] == "refused" and answers[:1] == ["allow"]:
        reply = {"allow": event["allow"]}
        answers.pop(0)
    elif event["event"] == "ask" and answers:
        reply = {"answer": event["id"], "decision": answers.pop(0)}
    if reply:
        conn.sendall((json.dumps(reply) + "\n").encode())
PY
	chmod 644 "$UDIR/ctl.py"
	start_bg harness as_who python3 "$UDIR/ctl.py" "$CTL" "$EVENTS" "$@"
	wait_listen "unix:$CTL"
}

# Waits up to 5 s for a line of $EVENTS matching the regex $1.
wait_event() {
	local i
	for i in $(seq 50); do
		grep -qE "$1" "$EVENTS" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "no event matches $1" >&2
	return 1
}

# GETs http://up.test:$UP/ in the session; prints the status.
get_up() {
	in_session -- curl -s -o /dev/null -w '%{http_code}' \
	    "http://up.test:$UP/"
}

@test "--control per session: each command's start and exit, its refusals between them, reach the harness, an allow sent on it holds for the next command, --ask holds a command's connection for the answer (as the user)" {
	UP=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP"
	wait_listen "tcp:127.0.0.1:$UP"
	PIN=(--resolve up.test:127.0.0.1 --allow-cidr 127.0.0.1/32)
	start_py_harness allow
	session_start "${PIN[@]}" --control "$CTL"
	run --separate-stderr get_up
	[ "$output" = 403 ]
	# The command's stderr has its refusal too, with the fix.
	[[ "$stderr" == *"cordon: refused 1 connection: up.test:$UP ("* ]]
	wait_event '"event":"refused".*"host":"up.test"'
	wait_event '"event":"applied","allow":"up.test:'"$UP"'"'
	run get_up
	[ "$output" = 200 ]
	run get_up
	[ "$output" = 200 ]
	[ "$(grep -c '"event":"refused"' "$EVENTS")" -eq 1 ]
	# Each command's start and end, with what ran and its status; the
	# refusal between the first command's two.
	wait_event '"event":"command","state":"exit","command":3'
	run jq -rc 'select(.event == "command" or .event == "refused") |
	    [.event, .state, .command, .status, .argv[0]?, .host] |
	    map(select(. != null)) | join(" ")' "$EVENTS"
	[ "$output" = "command start 1 curl
refused up.test
command exit 1 0
command start 2 curl
command exit 2 0
command start 3 curl
command exit 3 0" ]
	cd "$WS"
	as_who "$UCORDON" session stop "$SID" 2>/dev/null
	wait_event '"event":"exit"'

	# --ask: each command's connection waits for the harness's answer.
	start_py_harness allow-once deny
	session_start "${PIN[@]}" --control "$CTL" --ask
	run get_up
	[ "$output" = 200 ]
	run --separate-stderr get_up
	[ "$output" = 403 ]
	[[ "$stderr" == *"cordon: refused 1 connection: up.test:$UP ("* ]]
	[ "$(grep -c '"event":"ask".*"host":"up.test"' "$EVENTS")" -eq 2 ]
	wait_event '"event":"refused".*; the harness did not allow it"'
}

@test "the session's proxy reuses an upstream connection between the requests of one client connection, and between commands (its pool)" {
	UP=$(free_port)
	# An origin that writes the client port of each request it answers:
	# one port, one TCP connection.
	cat >"$UDIR/origin.py" <<'PY'
import http.server, sys

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        with open(sys.argv[2], "a") as f:
            f.write("%d\n" % self.client_address[1])
        self.send_response(200)
        self.send_header("Content-Length", "3")
        self.end_headers()
        self.wfile.write(b"hi\n")
    def log_message(self, *a):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])),
                                H).serve_forever()
PY
	start_bg origin python3 "$UDIR/origin.py" "$UP" "$UDIR/conns.log"
	wait_listen "tcp:127.0.0.1:$UP"
	session_start --resolve up.test:127.0.0.1 --allow-cidr 127.0.0.1/32 \
	    --allow-domain "up.test:$UP"
	url="http://up.test:$UP/"
	# Two requests on one client connection (curl keeps it alive).
	run in_session -- curl -sf "$url" "$url"
	[ "$status" -eq 0 ]
	[ "$output" = $'hi\nhi' ]
	[ "$(wc -l <"$UDIR/conns.log")" -eq 2 ]
	[ "$(sort -u "$UDIR/conns.log" | wc -l)" -eq 1 ]
	# Two more commands: new client connections, and the same upstream
	# one, kept idle in the proxy's pool between them.
	run in_session -- curl -sf "$url"
	[ "$status" -eq 0 ]
	run in_session -- curl -sf "$url"
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$UDIR/conns.log")" -eq 4 ]
	[ "$(sort -u "$UDIR/conns.log" | wc -l)" -eq 1 ]
}

# A static npm registry for cordon-probe over plain HTTP on $REG,
# served by serve.py, which logs each request to $UDIR/reg.log and each
# TCP connection it accepts to $UDIR/accepts.log.
start_registry() {
	local fix="$BATS_TEST_DIRNAME/clients"
	REG=$(free_port)
	mkdir -p "$UDIR/www"
	python3 "$fix/mkpkg.py" npm "$UDIR/www" cordon-probe 1.0.0 \
	    "http://npm.test:$REG"
	start_bg registry python3 "$fix/serve.py" http --listen "$REG" \
	    --root "$UDIR/www" --log "$UDIR/reg.log" \
	    --conns "$UDIR/accepts.log"
	wait_listen "tcp:127.0.0.1:$REG"
}

# npm install of cordon-probe in the session, with a fresh cache ($1),
# so that npm asks the registry; then node finds it.
npm_probe() {
	in_session -- sh -c "rm -rf node_modules package.json \
	    package-lock.json && npm install --no-audit --no-fund \
	    --no-update-notifier --prefer-online --cache /tmp/npm-cache-$1 \
	    --registry http://npm.test:$REG/ cordon-probe &&
	    node -p 'require(\"cordon-probe\")'"
}

@test "a second npm install in a session opens no new connection to a registry over HTTP (the proxy's pool)" {
	command -v npm >/dev/null || skip "no npm"
	start_registry
	session_start --resolve npm.test:127.0.0.1 --allow-cidr 127.0.0.1/32 \
	    --allow-domain "npm.test:$REG"
	run npm_probe 1
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "cordon-probe 1.0.0" ]
	grep -q '^GET /cordon-probe/-/cordon-probe-1.0.0.tgz npm.test' \
	    "$UDIR/reg.log"
	first=$(wc -l <"$UDIR/accepts.log")
	asked=$(wc -l <"$UDIR/reg.log")
	[ "$first" -ge 1 ]
	# A second command: another npm, another cache, the same requests,
	# on the upstream connections the first one left in the pool.
	run npm_probe 2
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "cordon-probe 1.0.0" ]
	[ "$(wc -l <"$UDIR/reg.log")" -ge $((asked + 2)) ]
	[ "$(grep -c '^GET /cordon-probe npm.test' "$UDIR/reg.log")" -eq 2 ]
	[ "$(wc -l <"$UDIR/accepts.log")" -eq "$first" ]
}

# A dev server behind --publish, started by one command, as the host's
# browser would reach it: between commands the session is stopped, and
# start said so; while a command runs, and with --run-between always,
# it answers.
@test "--publish in a session: answered while a command runs; between commands only with --run-between, and start says so" {
	local port
	port=$(free_port)
	session_start --publish "$port"
	grep -q "a server behind --publish answers the host only while a command of the session runs" \
	    "$BATS_TEST_TMPDIR/start.err"
	grep -q "pass --run-between to session start" \
	    "$BATS_TEST_TMPDIR/start.err"
	in_session sh -c "python3 -m http.server $port --bind 127.0.0.1 \
	    >/dev/null 2>&1 &"
	in_session curl -s --retry 10 --retry-connrefused -o /dev/null \
	    "http://127.0.0.1:$port/"
	# Between commands: stopped, the connection waits unanswered.
	run curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
	    "http://127.0.0.1:$port/"
	[ "$output" = 000 ]
	# While a command runs: answered.
	start_bg busy as_who "$UCORDON" run --session "$SID" -- sleep 4
	run curl -s -o /dev/null -w '%{http_code}' --retry 20 \
	    --retry-all-errors --retry-delay 0 --max-time 3 \
	    "http://127.0.0.1:$port/"
	[ "$output" = 200 ]
	# --run-between: answered between commands, and no note.
	port=$(free_port)
	session_start --run-between --publish "$port"
	run grep -q "answers the host only while" "$BATS_TEST_TMPDIR/start.err"
	[ "$status" -ne 0 ]
	in_session sh -c "python3 -m http.server $port --bind 127.0.0.1 \
	    >/dev/null 2>&1 &"
	in_session curl -s --retry 10 --retry-connrefused -o /dev/null \
	    "http://127.0.0.1:$port/"
	run curl -s -o /dev/null -w '%{http_code}' --max-time 3 \
	    "http://127.0.0.1:$port/"
	[ "$output" = 200 ]
}

# A harness that reads one command's stderr only after another's end,
# as a simple one would: that command filled its stderr pipe and
# planted a repository, so the keeper's word of the quarantine finds no
# room.  The keeper waits a bounded time, not for ever, and serves the
# other command meanwhile.
# Reads a command's output and errors to their end, as a harness does,
# for 10 s at most: the command leaves late.py in the background with
# both.
late_read() {
	in_session -- sh -c 'python3 late.py &' 2>&1 | timeout 10 cat
}

@test "a child a command leaves, that runs 0.5 s before it lets go of the command's output, is not stopped holding it: a harness reading to the end gets it (a shell's child on a loaded machine)" {
	cat >"$WS/late.py" <<-'EOF'
	import os, time
	end = time.monotonic() + 0.5
	while time.monotonic() < end:
	    pass
	os.close(1)
	os.close(2)
	time.sleep(30)
	EOF
	session_start
	run late_read
	[ "$status" -eq 0 ]
}

@test "a client whose stderr nobody reads does not hold the session: the next command returns, the first still fails" {
	session_start
	cat >"$UDIR/full.py" <<'PY'
import subprocess, sys, time
cordon, sid = sys.argv[1:3]
a = subprocess.Popen([cordon, "run", "--session", sid, "--", "sh", "-c",
    "head -c 65536 /dev/zero >&2; git init -q planted && "
    "git -C planted config core.fsmonitor 'touch pwned'"],
    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
time.sleep(2)
t = time.monotonic()
try:
    b = subprocess.run([cordon, "run", "--session", sid, "--", "true"],
        timeout=20).returncode
except subprocess.TimeoutExpired:
    b = "timeout"
print(b, int(time.monotonic() - t))
a.stderr.read()
print(a.wait())
PY
	chmod 644 "$UDIR/full.py"
	cd "$WS"
	run as_who python3 "$UDIR/full.py" "$UCORDON" "$SID"
	[ "${lines[0]%% *}" = 0 ]
	[ "${lines[0]##* }" -lt 10 ]
	[ "${lines[1]}" = 125 ]
	[ ! -e "$WS/planted/.git" ]
	[ ! -e "$WS/pwned" ]
}

# The folder of the sessions cannot be hidden under a writable path
# inside it: such a run is refused before anything runs.
@test "a run given --write inside the sessions' folder is refused, and says why (user and root)" {
	export XDG_RUNTIME_DIR=
	for AS in user root; do
		session_start
		dir=$(sessions_top)/sessions
		[ -S "$dir/$SID.sock" ]
		cd "$WS"
		run as_who "$UCORDON" run --write "$dir" -- touch "$dir/planted"
		echo "$output"
		[ "$status" -eq 125 ]
		[[ "$output" == *"is inside "*"/.cache/cordon, the folder of cordon's sessions"* ]]
		[[ "$output" == *"hint: write elsewhere"* ]]
		[ ! -e "$dir/planted" ]
		[ -S "$dir/$SID.sock" ]
	done
}
