#!/usr/bin/env bats
# cordon run: the sandbox as its users meet it.  Every test runs the
# sandbox as an unprivileged user (the test user, when the suite runs as
# root), and some as root too.  Upstreams are real servers on 127.0.0.1,
# reached through the run's own proxy with names pinned by --resolve.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	UP=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP" \
	    --log "$BATS_TEST_TMPDIR/origin.log"
	wait_listen "tcp:127.0.0.1:$UP"
	# Loopback is a special range: allowed on purpose for the tests.
	ALLOW_UP=(--resolve "up.test:127.0.0.1" --allow-cidr 127.0.0.1/32
	    --allow-domain "up.test:$UP")
}

teardown() {
	teardown_bg
	sandbox_teardown
}

@test "exit status: the command's own, 128+N on a signal, 126, 127" {
	run in_sandbox --quiet -- true
	[ "$status" -eq 0 ]
	run in_sandbox --quiet -- sh -c 'exit 7'
	[ "$status" -eq 7 ]
	run in_sandbox --quiet -- sh -c 'kill -TERM $$'
	[ "$status" -eq 143 ]
	run -127 in_sandbox --quiet -- no-such-command-here
	[ "$status" -eq 127 ]
	[[ "$output" == *"no-such-command-here: No such file or directory"* ]]
	printf 'echo hi\n' >"$WS/script"
	chmod 644 "$WS/script"
	run in_sandbox --quiet -- ./script
	[ "$status" -eq 126 ]
	[[ "$output" == *"./script: Permission denied"* ]]
}

@test "allowed HTTP goes through the proxy; a refused one is summed up with its fix" {
	run in_sandbox --log "$WS/egress.log" "${ALLOW_UP[@]}" -- sh -c \
	    "curl -sS http://up.test:$UP/; curl -sS http://evil.test/; true"
	[ "$status" -eq 0 ]
	[[ "$output" == *hello* ]]
	# The proxy's own answer reaches the command...
	[[ "$output" == *"cordon: deny evil.test:80"* ]]
	# ...and the summary says what to change.
	[[ "$output" == *"cordon: refused 1 connection: evil.test:80 ("* ]]
	[[ "$output" == *"to allow evil.test:80: "*"--allow-domain evil.test"* ]]
	# Both decisions logged, with the run's id.
	[ "$(end_lines "$WS/egress.log")" -eq 2 ]
	[ "$(jq -r 'select(.event != "open") | select(.host == "up.test") | .decision' "$WS/egress.log")" = allow ]
	[ "$(jq -r 'select(.event != "open") | select(.host == "evil.test") | .decision' "$WS/egress.log")" = deny ]
	[ "$(jq -r 'select(.event != "open") | .sandbox' "$WS/egress.log" | sort -u | wc -l)" -eq 1 ]
	[ "$(jq -r .sandbox "$WS/egress.log" | head -n 1)" != null ]
}

@test "a host refused is said on stderr while the command runs, once per host, with its fix" {
	run --separate-stderr in_sandbox "${ALLOW_UP[@]}" -- sh -c \
	    "curl -s http://evil.test/ >/dev/null; curl -s http://evil.test/ \
	    >/dev/null; echo between >&2; curl -s http://up.test:$UP/"
	[ "$status" -eq 0 ]
	# The live line and its hint come before what the command said next,
	# once for the two refusals; the summary follows at the end.
	run grep -n -e '^cordon: refused evil.test:80 (' -e '^between$' \
	    -e '^cordon: hint: .*--allow-domain evil.test' <<<"$stderr"
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == *"cordon: refused evil.test:80 ("* ]]
	[[ "${lines[1]}" == *"cordon: hint: "* ]]
	[[ "${lines[2]}" == *":between" ]]
	[[ "$stderr" == *"cordon: refused 2 connections: evil.test:80 ("* ]]
	# Not with --quiet.
	run --separate-stderr in_sandbox --quiet -- sh -c \
	    "curl -s http://evil.test/ >/dev/null; true"
	[ "$status" -eq 0 ]
	[[ "$stderr" != *"cordon: refused"* ]]
}

@test "live refusal lines are bounded: a burst of hosts is said in part, and the rest counted" {
	run --separate-stderr in_sandbox -- sh -c \
	    'for i in 1 2 3 4 5 6 7 8; do curl -s http://h$i.test/ >/dev/null
	    done; sleep 11; curl -s http://last.test/ >/dev/null; true'
	[ "$status" -eq 0 ]
	[ "$(grep -c '^cordon: refused h[0-9].test:80 (' <<<"$stderr")" -eq 5 ]
	[[ "$stderr" == *"cordon: refused 3 more targets meanwhile"* ]]
	[[ "$stderr" == *"cordon: refused last.test:80 ("* ]]
}

@test "no live refusal line over a program that holds the terminal (raw mode, as an agent's screen): counted, then said with the next line and in the summary" {
	cd "$WS"
	cmd='stty raw -echo; curl -s http://held.test/ >/dev/null
	    stty sane; curl -s http://said.test/ >/dev/null; true'
	run script -qec "$UCORDON run -- sh -c '$cmd'" /dev/null
	[ "$status" -eq 0 ]
	[[ "$output" != *"cordon: refused held.test:80 ("* ]]
	[[ "$output" == *"cordon: refused 1 more target meanwhile"* ]]
	[[ "$output" == *"cordon: refused said.test:80 ("* ]]
	[[ "$output" == *"cordon: refused 2 connections: "*"held.test:80"* ]]
}

@test "HTTPS through CONNECT, and SOCKS5 with the name resolved by the proxy" {
	TLS=$(free_port)
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
	    -subj /CN=up.test -addext subjectAltName=DNS:up.test \
	    -days 1 -nodes -keyout "$BATS_TEST_TMPDIR/key.pem" \
	    -out "$WS/cert.pem" 2>/dev/null
	start_bg tls openssl s_server -accept "127.0.0.1:$TLS" -www \
	    -cert "$WS/cert.pem" -key "$BATS_TEST_TMPDIR/key.pem"
	wait_listen "tcp:127.0.0.1:$TLS"
	run in_sandbox --quiet --resolve up.test:127.0.0.1 \
	    --allow-cidr 127.0.0.1/32 --allow-domain "up.test:$TLS" \
	    --allow-domain "up.test:$UP" -- sh -c "
	    curl -sS --cacert cert.pem https://up.test:$TLS/ | head -c 200;
	    echo; curl -sS --proxy \"\$ALL_PROXY\" http://up.test:$UP/"
	[ "$status" -eq 0 ]
	[[ "$output" == *"s_server"* ]]
	[[ "$output" == *hello* ]]
}

@test "no route but the proxy: direct connections fail, also as root" {
	# Outside, the upstream answers directly.
	run curl -sS --noproxy '*' "http://127.0.0.1:$UP/"
	[ "$output" = hello ]
	run in_sandbox --quiet "${ALLOW_UP[@]}" -- \
	    curl -sS --noproxy '*' "http://127.0.0.1:$UP/"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Couldn't connect"* || "$output" == *"Failed to connect"* ]]
	run in_sandbox_as_me --quiet "${ALLOW_UP[@]}" -- \
	    curl -sS --noproxy '*' "http://127.0.0.1:$UP/"
	[ "$status" -ne 0 ]
	# Only lo exists, and no resolver works.
	run in_sandbox --quiet -- cat /proc/net/dev
	[ "$(grep -c ':' <<<"$output")" -eq 1 ]
	[[ "$output" == *"lo:"* ]]
	run in_sandbox --quiet -- getent hosts example.com
	[ "$status" -ne 0 ]
}

@test "--network none: no proxy, no variables; --network host says it is unfiltered" {
	run in_sandbox --quiet --network none -- sh -c \
	    "env | grep -ci proxy; curl -sS http://127.0.0.1:3128/"
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = 0 ]
	run in_sandbox --network host -- curl -sS --noproxy '*' \
	    "http://127.0.0.1:$UP/"
	[ "$status" -eq 0 ]
	[[ "$output" == *hello* ]]
	[[ "$output" == *"neither filtered nor logged"* ]]
}

@test "the filesystem: root read-only, workspace writable, private /tmp, git's config kept, hooks never on the host" {
	mkdir -p "$WS/.git/hooks" "$WS/sub/.git"
	echo '[core]' >"$WS/.git/config"
	touch "$BATS_TEST_TMPDIR/host-tmp-file"
	chmod -R a+rwX "$WS"
	run in_sandbox --quiet -- sh -c '
	    echo made >made.txt && echo ws-ok
	    touch /etc/cordon-x 2>/dev/null || echo etc-held
	    (echo x >>.git/config) 2>/dev/null || echo git-held
	    touch .git/hooks/pre-commit 2>/dev/null && echo hooks-layer
	    touch sub/.git/config 2>/dev/null || echo nested-held
	    mkdir .cordon 2>/dev/null; touch .cordon/policy.json 2>/dev/null &&
	        echo cordon-made
	    ls "'"$BATS_TEST_TMPDIR"'" 2>/dev/null | grep -c host-tmp-file
	    echo t >/tmp/inside && echo tmp-ok'
	# The .cordon the command made is moved aside: the run says so.
	[ "$status" -eq 125 ]
	[[ $output == *"moved aside $WS/.cordon, cordon's workspace policy folder (.cordon), which the command made"* ]]
	[ "${lines[0]}" = ws-ok ]
	[ "${lines[1]}" = etc-held ]
	[ "${lines[2]}" = git-held ]
	[ "${lines[3]}" = hooks-layer ]	# the hooks folder's scratch layer
	[ "${lines[4]}" = nested-held ]
	[ "${lines[5]}" = cordon-made ]	# moved aside after the run
	[ "${lines[6]}" = 0 ]
	[ "${lines[7]}" = tmp-ok ]
	[ ! -e "$WS/.git/hooks/pre-commit" ]
	[ "$(cat "$WS/made.txt")" = made ]
	[ "$(cat "$WS/.git/config")" = '[core]' ]
	# No placeholder was there; what the command made went aside.
	[ ! -e "$WS/.cordon" ]
	[ -d "$WS"/.cordon.cordon-quarantine-* ]
	[ ! -e /tmp/inside ]
}

@test "secrets: hidden files and folders, scrubbed variables, no inherited fds" {
	mkdir -p "$UDIR/home/.ssh"
	echo secret-key >"$UDIR/home/.ssh/id_test"
	echo 'machine x password y' >"$UDIR/home/.netrc"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/home"
	run in_sandbox --quiet -- sh -c '
	    cat ~/.ssh/id_test 2>/dev/null || echo ssh-hidden
	    cat ~/.netrc 2>/dev/null | grep -c "password y$"
	    ls -A /proc/self/fd | tr "\n" " "; echo'
	[ "${lines[0]}" = ssh-hidden ]
	[ "${lines[1]}" = 0 ]
	[ "${lines[2]}" = "0 1 2 3 " ]	# 3: ls's own directory
	# A variable that looks like a secret does not pass, even if listed
	# by a prefix; the proxy's do.
	cd "$WS"
	run env MY_API_TOKEN=t0ken LC_SECRET=x "$UCORDON" run --quiet -- \
	    sh -c 'env' 5</dev/null
	[[ "$output" != *t0ken* ]]
	[[ "$output" != *LC_SECRET* ]]
	[[ "$output" == *"HTTPS_PROXY=http://127.0.0.1:3128"* ]]
	[[ "$output" == *"NO_PROXY=localhost,127.0.0.1,::1"* ]]
}

@test "processes: own PID namespace, no capabilities, seccomp and no_new_privs" {
	run in_sandbox_as_me --quiet -- sh -c '
	    echo $$; ls /proc | grep -c "^[0-9]"
	    grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status'
	[ "${lines[0]}" = 2 ]
	[ "${lines[1]}" -le 4 ]
	[[ "$output" == *"CapEff:	0000000000000000"* ]]
	[[ "$output" == *"CapBnd:	0000000000000000"* ]]
	[[ "$output" == *"NoNewPrivs:	1"* ]]
	[[ "$output" == *"Seccomp:	2"* ]]
	# PID 1 is cordon, and its secrets stay its own.
	run in_sandbox --quiet -- sh -c 'cat /proc/1/environ >/dev/null 2>&1 ||
	    echo environ-held'
	[ "$output" = environ-held ]
}

@test "signals reach the command; the sandbox dies with cordon run" {
	cd "$WS"
	start_bg sig as_user "$UDIR/home" "$UCORDON" run --quiet -- sh -c \
	    'trap "echo got-term; exit 3" TERM; echo ready; while :; do sleep 0.1; done'
	pid=$BG_PID
	for i in $(seq 100); do
		grep -q ready "$BATS_TEST_TMPDIR/sig.log" && break
		sleep 0.05
	done
	# as_user execs: $pid is cordon run itself.
	kill -TERM "$pid"
	wait "$pid" || st=$?
	[ "${st:-0}" -eq 3 ]
	grep -q got-term "$BATS_TEST_TMPDIR/sig.log"

	# SIGKILL to cordon run: nothing of the sandbox stays behind.
	start_bg sig2 as_user "$UDIR/home" "$UCORDON" run --quiet -- \
	    sh -c 'echo ready; exec sleep 300'
	pid=$BG_PID
	for i in $(seq 100); do
		grep -q ready "$BATS_TEST_TMPDIR/sig2.log" && break
		sleep 0.05
	done
	init=$(cat "/proc/$pid/task/$pid/children")
	[ -n "$init" ]
	kill -KILL "$pid"
	for i in $(seq 100); do
		[ -e "/proc/$init" ] || break
		sleep 0.05
	done
	[ ! -e "/proc/$init" ]
}

@test "--dry-run prints the plan and runs nothing" {
	run in_sandbox --dry-run -- touch ran
	[ "$status" -eq 0 ]
	[[ "$output" == *"mounts, in order:"* ]]
	[[ "$output" == *"$WS: bind, writable"* ]]
	[[ "$output" == *"/tmp: tmpfs, writable"* ]]
	[[ "$output" == *"seccomp: "* ]]
	[[ "$output" == *"HTTP_PROXY=http://127.0.0.1:3128"* ]]
	[ ! -e "$WS/ran" ]
}

# A home's first run makes the sessions' folder (~/.cache/cordon) before
# the plan: the plan sees it made, though a path below its parent was
# looked at before it was (what the runner knew of the tree is dropped).
@test "--dry-run: the sessions' folder the run itself makes is hidden" {
	cd "$WS"
	[ ! -e "$UDIR/home/.cache" ]
	run as_user "$UDIR/home" env XDG_RUNTIME_DIR= "$UCORDON" run \
	    --dry-run --write "$UDIR/home/.cache/x" --write "$UDIR/home" -- true
	[ "$status" -eq 0 ]
	[[ "$output" == *"$UDIR/home/.cache/cordon: hidden"*"(protected: cordon's sessions)"* ]]
}

@test "fail closed: a policy that does not load, a bad flag" {
	echo '{"version": 1, "network": {"mode": "sideways"}}' >"$WS/bad.json"
	run in_sandbox --policy "$WS/bad.json" -- touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"run: nothing run"* ]]
	run in_sandbox --network sideways -- touch ran
	[ "$status" -eq 125 ]
	[ ! -e "$WS/ran" ]
	# A kernel without Landlock (as the variable makes it seem): refused,
	# unless the weaker sandbox is asked for, and then said.
	cd "$WS"
	run as_user "$UDIR/home" env CORDON_NO_LANDLOCK=1 "$UCORDON" run -- \
	    touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"has no Landlock"*"--allow-no-landlock"* ]]
	[ ! -e "$WS/ran" ]
	run as_user "$UDIR/home" env CORDON_NO_LANDLOCK=1 "$UCORDON" run \
	    --allow-no-landlock --quiet -- touch ran
	[ "$status" -eq 0 ]
	[[ "$output" == *"no Landlock (--allow-no-landlock)"* ]]
	[ -e "$WS/ran" ]
}

@test "fail closed: the proxy does not start, or --proxy-socket is no socket" {
	# Each fails after the policy went to run_exec (run.c), which gives
	# it to the run's own proxy or frees it: once, as the sanitize build
	# checks; the proxy's private folder goes too.
	xdg="$UDIR/xdg"
	mkdir -m 700 "$xdg"
	if [ "$(id -u)" -eq 0 ]; then
		chown "$TEST_USER:" "$xdg"
	fi
	cd "$WS"
	run as_user "$UDIR/home" env XDG_RUNTIME_DIR="$xdg" "$UCORDON" run \
	    --dns "not a server" -- touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"--dns not a server: "* ]]
	[ -z "$(ls -A "$xdg")" ]
	run in_sandbox --proxy-socket "$UDIR/none.sock" -- touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"the proxy socket $UDIR/none.sock: No such file or directory"* ]]
	run in_sandbox --proxy-socket "$UCORDON" -- touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"the proxy socket $UCORDON: not a socket"* ]]
	[ ! -e "$WS/ran" ]
	# access(2) lets root write anywhere, but no folder can be made in
	# /proc: the proxy's folder fails after the proxy took the policy.
	if [ "$(id -u)" -eq 0 ]; then
		run env XDG_RUNTIME_DIR=/proc "$UCORDON" run -- touch ran
		[ "$status" -eq 125 ]
		[[ "$output" == *"making /proc/cordon-"* ]]
		[ ! -e "$WS/ran" ]
	fi
}

@test "--proxy-socket: an operator's proxy decides; the run's flags narrow, never widen" {
	sock="$UDIR/proxy.sock"
	start_bg proxy "$UCORDON" proxy --listen-sandbox "unix:$sock" \
	    --log "$BATS_TEST_TMPDIR/egress.log" "${ALLOW_UP[@]}" \
	    --resolve two.test:127.0.0.1 --allow-domain "two.test:$UP"
	wait_listen "unix:$sock"
	chmod 666 "$sock"
	run in_sandbox --quiet --proxy-socket "$sock" -- sh -c \
	    "curl -sS http://up.test:$UP/; curl -sS http://evil.test/ >/dev/null"
	[[ "$output" == *hello* ]]
	[ "$(jq -r 'select(.event != "open") | .decision' "$BATS_TEST_TMPDIR/egress.log" | tr '\n' ' ')" = "allow deny " ]
	# Allowing what the operator does not: still refused.
	run in_sandbox --quiet --proxy-socket "$sock" --allow-domain evil.test \
	    -- curl -s -o /dev/null -w '%{http_code}' http://evil.test/
	[ "$output" = 403 ]
	# Denying what the operator allows: refused for this run only.
	run in_sandbox --quiet --proxy-socket "$sock" --deny-domain up.test \
	    -- curl -s -o /dev/null -w '%{http_code}' "http://up.test:$UP/"
	[ "$output" = 403 ]
	tail -n 1 "$BATS_TEST_TMPDIR/egress.log" | grep -q '"rule_from":"sandbox '
	# An allowlist of the run's own: the operator's, met with it.
	run in_sandbox --quiet --proxy-socket "$sock" \
	    --allow-domain "two.test:$UP" -- sh -c "
	    curl -s -o /dev/null -w '%{http_code} ' http://up.test:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://two.test:$UP/"
	[ "$output" = "403 200" ]
	# The next run without rules: the operator's policy as it was.
	run in_sandbox --quiet --proxy-socket "$sock" -- \
	    curl -s -o /dev/null -w '%{http_code}' "http://up.test:$UP/"
	[ "$output" = 200 ]
}

@test "--proxy-socket: the capture reaches the operator's proxy too, its metrics name it" {
	sock="$UDIR/proxy.sock"
	metrics=$(free_port)
	start_bg proxy "$UCORDON" proxy --listen-sandbox "unix:$sock" \
	    --metrics "tcp:127.0.0.1:$metrics" \
	    --log "$BATS_TEST_TMPDIR/egress.log" "${ALLOW_UP[@]}"
	wait_listen "unix:$sock"
	wait_listen "tcp:127.0.0.1:$metrics"
	chmod 666 "$sock"
	# curl told to ignore the proxy variables: the capture takes it (a
	# tunnel: the port is not 80), and the name refused is asked twice
	# (A and AAAA).
	run in_sandbox --quiet --proxy-socket "$sock" -- sh -c \
	    "curl -sS --noproxy '*' http://up.test:$UP/;
	    curl -sS --noproxy '*' http://evil.test/ >/dev/null"
	echo "$output"
	cat "$BATS_TEST_TMPDIR/egress.log"
	[[ "$output" == *hello* ]]
	[ "$(jq -r 'select(.event != "open") | "\(.protocol) \(.decision)"' "$BATS_TEST_TMPDIR/egress.log" |
	    tr '\n' ' ')" = "capture allow dns deny dns deny " ]
	curl -sS "http://127.0.0.1:$metrics/metrics" >"$BATS_TEST_TMPDIR/m"
	cat "$BATS_TEST_TMPDIR/m"
	grep -qx 'cordon_connections_total{decision="allow",protocol="capture"} 1' \
	    "$BATS_TEST_TMPDIR/m"
	grep -qx 'cordon_connections_total{decision="deny",protocol="dns"} 2' \
	    "$BATS_TEST_TMPDIR/m"
}

@test "scratch layer: writes in the home succeed, are listed, and are gone after; a deletion there deletes nothing" {
	echo keep >"$UDIR/home/keep.txt"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/home"
	run in_sandbox --report "$WS/report.json" -- sh -c '
	    mkdir -p ~/.cache/x && echo 12345 >~/.cache/x/f && rm ~/keep.txt &&
	    cat ~/.cache/x/f && [ ! -e ~/keep.txt ] && echo gone inside'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"12345"*"gone inside"* ]]
	[[ $output == *"into the scratch layer (discarded at exit): ~/.cache/x (1 file, 6 B), ~/keep.txt (0 files, 0 B, 1 removed)"* ]]
	[ "$(jq -c '.scratch.written[] | select(.path == "~/keep.txt") |
	    [.files, .removed]' "$WS/report.json")" = "[0,1]" ]
	# A name the command chose reaches the terminal escaped.
	run in_sandbox -- sh -c 'touch ~/"$(printf "\033]0;x\007")"'
	[[ $output == *'~/\x1b]0;x\x07 (1 file, 0 B)'* ]]
	[[ $output != *$'\033'* ]]
	# The host's home is as it was.
	[ "$(cat "$UDIR/home/keep.txt")" = keep ]
	[ ! -e "$UDIR/home/.cache/x" ]
	# --dry-run shows the layer.
	run in_sandbox --dry-run -- true
	[[ $output == *"$UDIR/home: scratch layer: writes succeed, discarded at exit"* ]]
}

@test "scratch layer, root: writes into the system's folders succeed, are listed, and never reach the host; PATH folders stay read-only" {
	[ "$(id -u)" -eq 0 ] || skip "the system's scratch layers are root's"
	n="cordon-probe-$$-$RANDOM"
	cd "$WS"
	run "$UCORDON" run --read-only "$UDIR/bin" --report "$WS/report.json" \
	    -- sh -c "
	    echo e >/etc/$n && mkdir -p /usr/local/lib/$n /opt/$n &&
	    echo u >/usr/local/lib/$n/f && echo o >/opt/$n/f &&
	    cat /etc/$n /usr/local/lib/$n/f /opt/$n/f
	    (echo x >/usr/local/bin/$n) 2>/dev/null || echo bin-refused"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = e ]
	[ "${lines[1]}" = u ]
	[ "${lines[2]}" = o ]
	[ "${lines[3]}" = bin-refused ]
	[[ "$output" == *"into the scratch layer (discarded at exit): "*"/etc/$n (1 file, 2 B)"* ]]
	[[ "$output" == *"/usr/local (1 file, 2 B)"* ]]
	[[ "$output" == *"/opt/$n (1 file, 2 B)"* ]]
	[ "$(jq -r '[.scratch.written[].path] | sort | join(" ")' \
	    "$WS/report.json")" = "/etc/$n /opt/$n /usr/local" ]
	[ ! -e "/etc/$n" ]
	[ ! -e "/usr/local/lib/$n" ]
	[ ! -e "/opt/$n" ]
	[ ! -e "/usr/local/bin/$n" ]
	run "$UCORDON" run --dry-run -- true
	[[ "$output" == *"/etc: scratch layer: writes succeed, discarded at exit (the system's, for root: installs succeed)"* ]]
	# The test user gets no such layer: /etc is not theirs to write.
	run in_sandbox -- sh -c "echo e >/etc/$n || echo refused"
	[[ "$output" == *refused* ]]
	[ ! -e "/etc/$n" ]
}

@test "scratch layer, root: a system folder with a mount below it is no layer (the overlay would hide the mount)" {
	[ "$(id -u)" -eq 0 ] || skip "the system's scratch layers are root's"
	cd "$WS"
	# /var/cache made a mount of its own, in a mount namespace of the test.
	run unshare -m sh -c 'mount --make-rprivate / &&
	    mount -t tmpfs none /var/cache && echo in-tmpfs >/var/cache/seen &&
	    "$0" -v run --read-only "$1" -- sh -c "cat /var/cache/seen;
	    (echo x >/var/cordon-probe) 2>/dev/null || echo var-refused"' \
	    "$UCORDON" "$UDIR/bin"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"/var has a mount below it: no scratch layer"* ]]
	[[ "$output" == *in-tmpfs* && "$output" == *var-refused* ]]
	[ ! -e /var/cordon-probe ]
}

@test "--keep: a folder of the home kept between runs in cordon's own copy, never the host's" {
	run in_sandbox --keep '~/.cache/tool' -- sh -c '
	    mkdir -p ~/.cache/tool && echo warm >~/.cache/tool/entry'
	echo "$output"
	[ "$status" -eq 0 ]
	# Not in the scratch summary: kept, not discarded.
	[[ "$output" != *"~/.cache/tool ("* ]]
	[ ! -e "$UDIR/home/.cache/tool" ]
	# The workspace's own copy: ws/NAME-HASH in cordon's store.
	[ "$(cat "$UDIR"/home/.local/share/cordon/keep/ws/ws-*/.cache/tool/entry)" = warm ]
	run in_sandbox --keep '~/.cache/tool' -- cat "$UDIR/home/.cache/tool/entry"
	[ "$output" = warm ]
	# Without the flag, the copy is not there (nor the host's, none).
	run in_sandbox -- cat "$UDIR/home/.cache/tool/entry"
	[ "$status" -ne 0 ]
	run in_sandbox --dry-run --keep '~/.cache/tool' -- true
	[[ "$output" == *"$UDIR/home/.cache/tool: bind, writable (kept between this workspace's runs (--keep): cordon's own copy)"* ]]
	# Outside the home, or with no scratch layer: said, nothing run.
	run in_sandbox --keep /etc -- touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"--keep /etc: not a folder in the home folder"* ]]
	run in_sandbox --write "$UDIR/home" --keep '~/.cache/tool' -- touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"the home folder is not a scratch layer in this run"* ]]
	[ ! -e "$WS/ran" ]
}

@test "--keep: each workspace keeps its own copy; --keep-shared is one copy for all, said so" {
	mkdir -p "$UDIR/ws2"
	[ "$(id -u)" -ne 0 ] || chown "$TEST_USER:" "$UDIR/ws2"
	run in_sandbox --keep '~/.cache/tool' -- sh -c '
	    mkdir -p ~/.cache/tool && echo first >~/.cache/tool/entry'
	[ "$status" -eq 0 ]
	# Another workspace does not see what the first one left.
	WS="$UDIR/ws2" run in_sandbox --keep '~/.cache/tool' -- \
	    cat "$UDIR/home/.cache/tool/entry"
	echo "$output"
	[ "$status" -ne 0 ]
	[ "$(ls "$UDIR/home/.local/share/cordon/keep/ws" | wc -l)" -eq 2 ]
	# --keep-shared: the one copy every workspace's runs see.
	run in_sandbox --keep-shared '~/.cache/tool' -- sh -c '
	    mkdir -p ~/.cache/tool && echo shared >~/.cache/tool/entry'
	[ "$status" -eq 0 ]
	WS="$UDIR/ws2" run in_sandbox --keep-shared '~/.cache/tool' -- \
	    cat "$UDIR/home/.cache/tool/entry"
	[ "$output" = shared ]
	[ "$(cat "$UDIR/home/.local/share/cordon/keep/shared/.cache/tool/entry")" = shared ]
	run in_sandbox --dry-run --keep-shared '~/.cache/tool' -- true
	[[ "$output" == *"$UDIR/home/.cache/tool: bind, writable (kept between the runs of every workspace (--keep-shared): cordon's own copy)"* ]]
}

# A run can leave a link in its kept folder (lnk -> ~); a later --keep of
# a folder through it made that folder on the host, wherever it led.
keep_link_check() {
	local home=$1 run_as=$2
	run "$run_as" --keep '~/.cache/rt' -- sh -c '
	    mkdir -p ~/.cache/rt && ln -s ~ ~/.cache/rt/lnk'
	[ "$status" -eq 0 ]
	run "$run_as" --keep '~/.cache/rt/lnk/NEW' -- touch "$WS/ran"
	echo "$output"
	[ "$status" -eq 125 ]
	[ ! -e "$home/NEW" ]
	[ ! -e "$WS/ran" ]
	[[ "$output" == *"--keep ~/.cache/rt/lnk/NEW: on the way to cordon's copy, $home/.local/share/cordon/keep/ws/ws-"*"/.cache/rt/lnk is a symbolic link (a run left it there): cordon makes its copy through no link; nothing run"* ]]
	[[ "$output" == *"hint: remove it (rm $home/.local/share/cordon/keep/ws/ws-"*"/.cache/rt/lnk), or keep another folder"* ]]
	# A file in the way is no folder either.
	run "$run_as" --keep '~/.cache/rt' -- sh -c 'echo x >~/.cache/rt/file'
	run "$run_as" --keep '~/.cache/rt/file/sub' -- true
	[ "$status" -eq 125 ]
	[[ "$output" == *"/.cache/rt/file is not a folder (a run left it there)"* ]]
}

@test "--keep: a link a run left in cordon's copy is never followed (test user)" {
	keep_link_check "$UDIR/home" in_sandbox
}

@test "--keep: a link a run left in cordon's copy is never followed (root)" {
	[ "$(id -u)" -eq 0 ] || skip "root's run"
	keep_link_check "$HOME" in_sandbox_as_me
}

@test "--keep: no persistence point, folder on PATH or hidden path is kept, nor a folder that holds a persistence point" {
	mkdir -p "$UDIR/home/mybin"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/home"
	run in_sandbox --keep '~/.config/fish' -- touch "$WS/ran"
	echo "$output"
	[ "$status" -eq 125 ]
	[[ "$output" == *"--keep ~/.config/fish: it is ~/.config/fish, a persistence point (built-in defaults: filesystem.read_only["*"]): what a run left in cordon's copy would run in each later run that keeps it; nothing run"* ]]
	[[ "$output" == *"hint: keep a tool's own folder, one that holds no startup file, hook, program on PATH nor hidden path (--keep ~/.npm, --keep ~/.cache/pip)"* ]]
	run in_sandbox --keep '~/.config' -- touch "$WS/ran"
	[ "$status" -eq 125 ]
	[[ "$output" == *"--keep ~/.config: it holds ~/.config/"*", a persistence point"* ]]
	run in_sandbox --keep '~/.cache/../.ssh' -- touch "$WS/ran"
	[ "$status" -eq 125 ]
	[[ "$output" == *"it is ~/.ssh, a persistence point"* ]]
	run in_sandbox --keep '~/.aws' -- touch "$WS/ran"
	[ "$status" -eq 125 ]
	[[ "$output" == *"it is ~/.aws, a path the policy hides (built-in defaults: filesystem.deny["* ]]
	cd "$WS"
	run as_user "$UDIR/home" env PATH="$UDIR/home/mybin:/usr/bin:/bin" \
	    "$UCORDON" run --read-only "$UDIR/bin" --keep-shared '~/mybin/x' \
	    -- touch "$WS/ran"
	[ "$status" -eq 125 ]
	[[ "$output" == *"it is below ~/mybin, a persistence point (a folder on PATH, what it holds runs when its name is typed)"* ]]
	[ ! -e "$WS/ran" ]
	[ ! -e "$UDIR/home/.local/share/cordon/keep" ]
	# The summary never suggests keeping one: the next folder, if any.
	run in_sandbox --report "$WS/r.json" -- sh -c '
	    mkdir -p ~/.config/fish ~/.npm && echo x >~/.npm/a &&
	    head -c 5000 /dev/zero >~/.config/fish/config.fish'
	echo "$output"
	[ "$status" -eq 0 ]
	# The persistence point is named apart, never with --keep.
	[[ "$output" == *"in the scratch layer only (never the host's): ~/.config/fish"* ]]
	[[ "$output" == *"discarded at exit): ~/.npm (1 file, 2 B)"* ]]
	[[ "$output" == *"to keep ~/.npm between runs: pass --keep ~/.npm"* ]]
	[[ "$output" != *"--keep ~/.config"* ]]
	[ "$(jq -c '[.scratch.written[] | [.path, .keep]]' "$WS/r.json")" = '[["~/.config/fish",false],["~/.npm",true]]' ]
	run in_sandbox -- sh -c 'mkdir -p ~/.local/bin && echo x >~/.local/bin/t'
	[[ "$output" == *"in the scratch layer only (never the host's): ~/.local/bin"* ]]
	[[ "$output" != *"pass --keep"* ]]
}

@test "tools' token files: those cordon cannot copy are hidden, and said once, in the summary and the report" {
	run in_sandbox --report "$WS/r1.json" -- true
	[[ "$output" != *"hidden from the command"* ]]
	[ "$(jq -c .hidden "$WS/r1.json")" = null ]
	[ "$(jq -c .token_files "$WS/r1.json")" = null ]
	mkdir -p "$UDIR/home/.docker" "$UDIR/home/.cargo"
	echo '{"auths": {"x": {"auth": "secret"}}}' \
	    >"$UDIR/home/.docker/config.json"
	printf '[registry]\ntoken = "secret"\n' \
	    >"$UDIR/home/.cargo/credentials.toml"
	# A token file cordon copies, its token a placeholder: not hidden.
	echo "//registry.test/:_authToken=secret" >"$UDIR/home/.npmrc"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/home"
	run in_sandbox --report "$WS/r2.json" -- sh -c \
	    'cat ~/.docker/config.json 2>/dev/null
	    cat ~/.npmrc ~/.cargo/credentials.toml; echo done'
	echo "$output"
	[[ "$output" != *secret* ]]
	[[ "$output" =~ //registry.test/:_authToken=cordon-phantom-[0-9a-f]{32} ]]
	[[ "$output" =~ token\ =\ \"cordon-phantom-[0-9a-f]{32}\" ]]
	[ "$(grep -c "hidden from the command" <<<"$output")" = 1 ]
	[[ "$output" == *"hidden from the command, as they may hold tokens: ~/.docker/config.json (docker); a tool that reads its token there runs without it: give the token as a credentials entry"* ]]
	[ "$(jq -c .hidden "$WS/r2.json")" = '["~/.docker/config.json (docker)"]' ]
	[ "$(jq -c '[.token_files[] | [.file, .hosts, .filled]]' \
	    "$WS/r2.json")" = '[["~/.npmrc",["registry.test"],false],["~/.cargo/credentials.toml",["crates.io"],false]]' ]
}

@test "tools' token files: a user's own filesystem.deny keeps one hidden whole" {
	echo "//registry.test/:_authToken=secret" >"$UDIR/home/.npmrc"
	write "$WS/.cordon/policy.json" <<-EOF
	{"version": 1, "filesystem": {"deny": ["~/.npmrc"]}}
	EOF
	run in_sandbox -- sh -c 'cat ~/.npmrc 2>&1; echo done'
	echo "$output"
	[[ "$output" != *secret* ]]
	[[ "$output" != *cordon-phantom-* ]]
	[[ "$output" == *"hidden from the command, as they may hold tokens: ~/.npmrc (npm)"* ]]
}

@test "path flags, most specific last: hidden folder, writable inside it, read-only" {
	mkdir -p "$WS/secret/pub" "$WS/docs" "$UDIR/extra"
	echo s >"$WS/secret/key"
	echo d >"$WS/docs/readme"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR"
	run in_sandbox --quiet --deny-path secret --write secret/pub \
	    --read-only docs --write "$UDIR/extra" -- sh -c '
	    cat secret/key 2>/dev/null || echo key-hidden
	    echo p >secret/pub/x && echo pub-ok
	    (echo x >>docs/readme) 2>/dev/null || echo docs-held
	    cat docs/readme
	    echo e >'"$UDIR/extra/y"' && echo extra-ok'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = key-hidden ]
	[ "${lines[1]}" = pub-ok ]
	[ "${lines[2]}" = docs-held ]
	[ "${lines[3]}" = d ]
	[ "${lines[4]}" = extra-ok ]
	[ "$(cat "$WS/secret/pub/x")" = p ]
	[ "$(cat "$UDIR/extra/y")" = e ]
	[ "$(cat "$WS/docs/readme")" = d ]
}

@test "symlinks cannot redirect a protected or hidden path" {
	mkdir -p "$UDIR/elsewhere" "$UDIR/home/real-ssh"
	echo k >"$UDIR/home/real-ssh/id"
	ln -s "$UDIR/elsewhere" "$WS/.cordon"
	ln -s real-ssh "$UDIR/home/.ssh"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR"
	[ "$(id -u)" -ne 0 ] || chown -h "$TEST_USER:" "$WS/.cordon" "$UDIR/home/.ssh"
	run in_sandbox --quiet --read-only "$UDIR/home" -- sh -c '
	    (echo x >.cordon/policy.json) 2>/dev/null || echo cordon-held
	    (rm .cordon && mkdir .cordon) 2>/dev/null || echo link-pinned
	    cat ~/.ssh/id 2>/dev/null || echo ssh-hidden
	    cat ~/real-ssh/id 2>/dev/null || echo target-hidden'
	[ "${lines[0]}" = cordon-held ]
	[ "${lines[1]}" = link-pinned ]
	[ "${lines[2]}" = ssh-hidden ]
	[ "${lines[3]}" = target-hidden ]
	[ ! -e "$UDIR/elsewhere/policy.json" ]
	[ -L "$WS/.cordon" ]
}

@test "overlapping runs: one run's end does not lift another's cover" {
	cd "$WS"
	# A makes the placeholder for a missing read-only path, and waits.
	start_bg a as_user "$UDIR/home" "$UCORDON" run --quiet \
	    --read-only "$WS/prot/" -- sh -c \
	    'while [ ! -e go ]; do sleep 0.05; done'
	a=$BG_PID
	for i in $(seq 100); do [ -d "$WS/prot" ] && break; sleep 0.05; done
	[ -d "$WS/prot" ]
	# B starts while A runs, lets A end, then tries to make it.
	start_bg b as_user "$UDIR/home" "$UCORDON" run --quiet \
	    --read-only "$WS/prot/" -- sh -c '
	    touch go; while [ ! -e a-done ]; do sleep 0.05; done
	    (mkdir -p prot/x) 2>/dev/null && echo escaped || echo held'
	b=$BG_PID
	wait "$a"
	touch "$WS/a-done"
	wait "$b"
	[ "$(cat "$BATS_TEST_TMPDIR/b.log")" = held ]
	[ ! -e "$WS/prot/x" ]
}

@test "a workspace on a read-only filesystem runs; nothing to block there" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to mount a read-only tmpfs"
	ro="$UDIR/ro"
	mkdir -p "$ro"
	mount -t tmpfs -o size=1m,mode=755 tmpfs "$ro"
	mkdir "$ro/ws"
	chown "$TEST_USER:" "$ro/ws"
	mount -o remount,ro "$ro"
	cd "$ro/ws"
	run as_user "$UDIR/home" "$UCORDON" run --quiet -- sh -c \
	    'echo ran; (touch x) 2>/dev/null || echo ro-held'
	cd /
	umount "$ro"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = ran ]
	[ "${lines[1]}" = ro-held ]
}

@test "fail closed: the operator's proxy killed mid-run leaves no way out, and says so" {
	sock="$UDIR/proxy.sock"
	start_bg proxy "$UCORDON" proxy --listen-sandbox "unix:$sock" \
	    "${ALLOW_UP[@]}"
	proxy=$BG_PID
	wait_listen "unix:$sock"
	chmod 666 "$sock"
	cd "$WS"
	start_bg inside as_user "$UDIR/home" "$UCORDON" run --quiet \
	    --proxy-socket "$sock" -- sh -c "
	    curl -sS http://up.test:$UP/; touch ready
	    while [ ! -e go ]; do sleep 0.05; done
	    curl -sS --max-time 5 http://up.test:$UP/ || echo no-way-out"
	inside=$BG_PID
	for i in $(seq 100); do [ -e "$WS/ready" ] && break; sleep 0.05; done
	kill -KILL "$proxy"
	wait "$proxy" || true
	touch "$WS/go"
	wait "$inside" || true
	log="$BATS_TEST_TMPDIR/inside.log"
	grep -q '^hello$' "$log"
	grep -q '^no-way-out$' "$log"
	grep -q "cordon: bridge: the proxy at $sock, the sandbox's only way out: Connection refused" "$log"
	[ "$(grep -c hello "$log")" -eq 1 ]
}

@test "--proxy-socket: a path longer than a Unix socket address may be" {
	deep="$UDIR/$(printf 'd%.0s' $(seq 60))/$(printf 'e%.0s' $(seq 60))"
	mkdir -p "$deep"
	sock="$deep/proxy.sock"
	# The proxy itself cannot bind there: it listens nearby, and a link
	# with the long name points at it.
	start_bg proxy "$UCORDON" proxy --listen-sandbox "unix:$UDIR/p.sock" \
	    "${ALLOW_UP[@]}"
	wait_listen "unix:$UDIR/p.sock"
	chmod 666 "$UDIR/p.sock"
	ln "$UDIR/p.sock" "$sock"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/d"*
	[ "${#sock}" -gt 108 ]
	run in_sandbox --quiet --proxy-socket "$sock" -- \
	    curl -sS "http://up.test:$UP/"
	[ "$status" -eq 0 ]
	[ "$output" = hello ]
}

@test "fail closed: no user namespaces, nothing run, the reason and the fix" {
	cd "$WS"
	# A user namespace of the test's own whose limit is 0: as if the
	# administrator had turned them off.
	run unshare -Ur sh -c 'echo 0 >/proc/sys/user/max_user_namespaces &&
	    exec "$0" run -- touch ran' "$UCORDON"
	[ "$status" -eq 125 ]
	[[ "$output" == *"cannot make the sandbox's namespaces"* ]]
	[[ "$output" == *"sysctl -w user.max_user_namespaces="* ]]
	[[ "$output" == *"nothing was run"* ]]
	[ ! -e "$WS/ran" ]
}

@test "Ctrl-C at a terminal reaches the command once; kill -INT reaches it too" {
	cd "$WS"
	cmd='trap "echo got-INT" INT; echo ready; for i in $(seq 30); do sleep 0.1; done; echo end'
	# ^C typed once the command is ready: the terminal signals the
	# command's group.
	run bash -c '(for i in $(seq 200); do grep -q ready "$1" && break
	    sleep 0.05; done; printf "\003"; sleep 3) |
	    script -qec "$0" /dev/null | tee "$1"' \
	    "$UCORDON run --quiet -- sh -c '$cmd'" "$BATS_TEST_TMPDIR/tty.out"
	[ "$(grep -c got-INT <<<"$output")" -eq 1 ]
	[[ "$output" == *end* ]]
	# Without a terminal, SIGINT to cordon run is passed on.
	start_bg noterm "$UCORDON" run --quiet -- sh -c "$cmd" </dev/null
	wait_for grep -q ready "$BATS_TEST_TMPDIR/noterm.log"
	kill -INT "$BG_PID"
	wait "$BG_PID"
	[ "$(grep -c got-INT "$BATS_TEST_TMPDIR/noterm.log")" -eq 1 ]
}

@test "--proxy-socket: four sandboxes at once through one managed proxy, each with its id" {
	sock="$UDIR/proxy.sock"
	log="$BATS_TEST_TMPDIR/egress.log"
	start_bg proxy "$UCORDON" proxy --listen-sandbox "unix:$sock" \
	    --log "$log" "${ALLOW_UP[@]}"
	wait_listen "unix:$sock"
	chmod 666 "$sock"
	cd "$WS"
	pids=()
	for i in 1 2 3 4; do
		start_bg "s$i" as_user "$UDIR/home" "$UCORDON" run --quiet \
		    --proxy-socket "$sock" -- sh -c "
		    for j in 1 2 3; do curl -s http://up.test:$UP/; done
		    curl -s -o /dev/null http://evil.test/"
		pids+=("$BG_PID")
	done
	for p in "${pids[@]}"; do wait "$p"; done
	for i in 1 2 3 4; do
		[ "$(grep -c '^hello$' "$BATS_TEST_TMPDIR/s$i.log")" -eq 3 ]
	done
	# One end line per exchange (an allowed one has an open line too).
	[ "$(jq -c 'select(.event != "open")' "$log" | wc -l)" -eq 16 ]
	[ "$(jq -r .sandbox "$log" | sort -u | wc -l)" -eq 4 ]
	[ "$(jq -r .command "$log" | sort -u)" = sh ]
	# Each sandbox: three allowed, one refused, under its own id.
	[ "$(jq -r 'select(.decision == "deny") | .sandbox' "$log" | sort -u | wc -l)" -eq 4 ]
}

@test "--proxy-socket: the workspace policy's network lists narrow the operator's proxy too" {
	sock="$UDIR/proxy.sock"
	log="$BATS_TEST_TMPDIR/egress.log"
	start_bg proxy "$UCORDON" proxy --listen-sandbox "unix:$sock" \
	    --log "$log" "${ALLOW_UP[@]}" \
	    --resolve two.test:127.0.0.1 --allow-domain "two.test:$UP"
	wait_listen "unix:$sock"
	chmod 666 "$sock"
	mkdir -p "$WS/.cordon"
	# A workspace deny: what cordon policy explain says, the proxy does.
	printf '{"version": 1, "network": {"deny": ["up.test"]}}\n' \
	    >"$WS/.cordon/policy.json"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$WS/.cordon"
	cd "$WS"
	run as_user "$UDIR/home" "$UCORDON" policy explain "up.test:$UP"
	[ "$status" -eq 1 ]
	[[ "$output" == "deny up.test:$UP"* ]]
	run in_sandbox --quiet --proxy-socket "$sock" -- sh -c "
	    curl -s -o /dev/null -w '%{http_code} ' http://up.test:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://two.test:$UP/"
	[ "$output" = "403 200" ]
	deny=$(jq -c 'select(.event != "open")' "$log" | tail -n 2 | head -n 1)
	[ "$(jq -r .rule_from <<<"$deny")" = "sandbox $(jq -r .sandbox <<<"$deny"): network.deny[0]" ]
	# A workspace allowlist meets the operator's (and the run's flags):
	# never wider than either.
	printf '{"version": 1, "network": {"allow": ["two.test:*", "evil.test"]}}\n' \
	    >"$WS/.cordon/policy.json"
	run in_sandbox --quiet --proxy-socket "$sock" -- sh -c "
	    curl -s -o /dev/null -w '%{http_code} ' http://up.test:$UP/
	    curl -s -o /dev/null -w '%{http_code} ' http://two.test:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://evil.test/"
	[ "$output" = "403 200 403" ]
	run in_sandbox --quiet --proxy-socket "$sock" \
	    --allow-domain "up.test:$UP" -- sh -c "
	    curl -s -o /dev/null -w '%{http_code} ' http://up.test:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://two.test:$UP/"
	[ "$output" = "403 403" ]
	# An empty allowlist there: nothing goes out.
	printf '{"version": 1, "network": {"allow": []}}\n' \
	    >"$WS/.cordon/policy.json"
	run in_sandbox --quiet --proxy-socket "$sock" -- \
	    curl -s -o /dev/null -w '%{http_code}' http://two.test:$UP/
	[ "$output" = 403 ]
	# --dry-run shows what is sent.
	run in_sandbox --dry-run --proxy-socket "$sock" -- true
	[[ "$output" == *'narrowed by the run'*'"allow":[]'* ]]
	# The user's own deny list goes too; its allowlist is the
	# operator's to set, and is not sent.
	rm "$WS/.cordon/policy.json"
	mkdir -p "$UDIR/home/.config/cordon"
	printf '{"version": 1, "network": {"deny": ["two.test"], "allow": ["else.test"]}}\n' \
	    >"$UDIR/home/.config/cordon/policy.json"
	run in_sandbox --quiet --proxy-socket "$sock" -- sh -c "
	    curl -s -o /dev/null -w '%{http_code} ' http://up.test:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://two.test:$UP/"
	[ "$output" = "200 403" ]
}

# A stream socket server at $1 (sockpeer), owned by the test user.
unix_peer() {
	start_bg upeer "$UDIR/bin/sockpeer" "unix:$1"
	wait_listen "unix:$1"
	[ "$(id -u)" -ne 0 ] || chown "$TEST_USER:" "$1"
}

@test "filesystem.unix_sockets: --dry-run lists each, and a Docker socket's risk" {
	mkdir -p "$UDIR/sock"
	unix_peer "$UDIR/sock/agent.sock"
	printf '{"version": 1, "filesystem": {"unix_sockets": ["%s", "%s"]}}\n' \
	    "$UDIR/sock/agent.sock" "$UDIR/sock/docker.sock" >"$UDIR/p.json"
	run in_sandbox --policy "$UDIR/p.json" --dry-run -- true
	[ "$status" -eq 0 ]
	[[ "$output" == *"Unix sockets but stream and seqpacket ones; every connect(2) made by cordon run"* ]]
	[[ "$output" == *"  $UDIR/sock/agent.sock ($UDIR/p.json: filesystem.unix_sockets[0])"* ]]
	[[ "$output" == *"  $UDIR/sock/docker.sock ($UDIR/p.json: filesystem.unix_sockets[1])"*"warning: Docker's socket: whoever connects to it is root on the host"* ]]
	# Not there yet: said, not refused (a daemon may start later).
	[[ "$output" == *"filesystem.unix_sockets: $UDIR/sock/docker.sock: No such file or directory"* ]]
}

@test "filesystem.unix_sockets: a socket listed twice is one route, checked as itself" {
	# Listed by two layers (the user's policy and --policy), with another
	# socket between: the second listing is the first's route, and what
	# is said of it is said of it, not of the socket listed before.
	mkdir -p "$UDIR/sock" "$UDIR/home/.config/cordon"
	unix_peer "$UDIR/sock/agent.sock"
	printf '{"version": 1, "filesystem": {"unix_sockets": ["%s", "%s"]}}\n' \
	    "$UDIR/sock/agent.sock" "$UDIR/sock/gone.sock" \
	    >"$UDIR/home/.config/cordon/policy.json"
	printf '{"version": 1, "filesystem": {"unix_sockets": ["%s"]}}\n' \
	    "$UDIR/sock/agent.sock" >"$UDIR/p.json"
	run in_sandbox --policy "$UDIR/p.json" --dry-run -- true
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c "^  $UDIR/sock/agent.sock (" <<<"$output")" -eq 1 ]
	[[ "$output" == *"  $UDIR/sock/agent.sock ($UDIR/home/.config/cordon/policy.json: filesystem.unix_sockets[0])"* ]]
	[ "$(grep -c "filesystem.unix_sockets: $UDIR/sock/gone.sock: No such file" <<<"$output")" -eq 1 ]
	[[ "$output" != *"filesystem.unix_sockets: $UDIR/sock/agent.sock: No such file"* ]]
	run in_sandbox --policy "$UDIR/p.json" -- "$UDIR/bin/probe" unix \
	    "$UDIR/sock/agent.sock"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"escaped unix: connected to $UDIR/sock/agent.sock"* ]]
}

@test "filesystem.unix_sockets: a socket the command could replace is held as it was at the start; a file fails closed" {
	unix_peer "$WS/app.sock"
	printf '{"version": 1, "filesystem": {"unix_sockets": ["%s"]}}\n' \
	    "$WS/app.sock" >"$UDIR/p.json"
	# The command replaces the path with its own socket; the connect
	# still reaches the host's, held by cordon from the start.
	run in_sandbox --policy "$UDIR/p.json" -- sh -c "
	    mv app.sock app.old && $UDIR/bin/probe unix $WS/app.sock; touch ran"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -e "$WS/ran" ]
	rm -f "$WS/ran"
	printf '{"version": 1, "filesystem": {"unix_sockets": ["%s"]}}\n' \
	    "$UDIR/bin/cordon" >"$UDIR/p.json"
	run in_sandbox --policy "$UDIR/p.json" -- touch ran
	[ "$status" -eq 125 ]
	[[ "$output" == *"$UDIR/bin/cordon ($UDIR/p.json: filesystem.unix_sockets[0]) is not a socket"* ]]
	[ ! -e "$WS/ran" ]
}

@test "filesystem.unix_sockets: each connect in the egress log; the proxy still works" {
	mkdir -p "$UDIR/sock"
	unix_peer "$UDIR/sock/agent.sock"
	printf '{"version": 1, "filesystem": {"unix_sockets": ["%s"]}}\n' \
	    "$UDIR/sock/agent.sock" >"$UDIR/p.json"
	run in_sandbox --policy "$UDIR/p.json" --log "$WS/egress.log" \
	    "${ALLOW_UP[@]}" -- sh -c "$UDIR/bin/probe unix $UDIR/sock/agent.sock;
	    $UDIR/bin/probe unix $UDIR/sock/other.sock;
	    curl -sS http://up.test:$UP/"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"escaped unix: connected to $UDIR/sock/agent.sock"* ]]
	# other.sock is nowhere: the kernel's answer, as without cordon.
	[[ "$output" == *"held unix: ENOENT (connect)"* ]]
	[[ "$output" == *hello* ]]
	jq -s -e --arg p "$UDIR/sock/agent.sock" 'map(select(.protocol ==
	    "unix" and .host == $p and .decision == "allow" and .rule == $p))
	    | length == 1' "$WS/egress.log"
	# Nothing at other.sock on the host or inside: refused, not logged.
	jq -s -e 'map(select(.protocol == "unix" and .decision == "deny"))
	    | length == 0' "$WS/egress.log"
}

@test "a run without the proxy is cordon-offline's, which links no OpenSSL; what needs the proxy or a harness is cordon-main's, which also serves it alone" {
	local off=$UDIR/off main=$UDIR/mainonly syms=$BATS_TEST_TMPDIR/off.syms
	[ -x "$UDIR/bin/cordon-offline" ]
	mkdir "$off" "$main"
	cp "$UDIR/bin/cordon" "$UDIR/bin/cordon-offline" "$off/"
	cp "$UDIR/bin/cordon" "$UDIR/bin/cordon-main" "$main/"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$off" "$main"
	cd "$WS"
	# No cordon-main beside: runs with --network none and host are whole.
	run as_user "$UDIR/home" "$off/cordon" run --quiet --network none \
	    -- sh -c 'echo inside; exit 7'
	[ "$status" -eq 7 ]
	[ "$output" = inside ]
	run as_user "$UDIR/home" "$off/cordon" run --quiet --network=host \
	    -- sh -c 'echo host'
	[ "$status" -eq 0 ]
	[[ "$output" == *host* ]]
	# A harness's --control is cordon-main's: handed over, and here it
	# is missing, which the run says before it makes anything.
	run --separate-stderr as_user "$UDIR/home" "$off/cordon" run \
	    --network none --control "unix:$UDIR/ctl.sock" -- true
	[ "$status" -eq 125 ]
	[[ "$stderr" == *"this run needs cordon-main ($off/cordon-main)"* ]]
	[[ "$stderr" == *"hint: cordon-offline serves runs without the proxy"* ]]
	# The proxy's runs go to cordon-main.
	run --separate-stderr as_user "$UDIR/home" "$off/cordon" run -- true
	[ "$status" -eq 125 ]
	[[ "$stderr" == *"cannot run cordon-main ($off/cordon-main,"* ]]
	# Without cordon-offline, cordon-main serves the runs without proxy.
	run as_user "$UDIR/home" "$main/cordon" run --quiet --network none \
	    -- sh -c 'echo inside'
	[ "$status" -eq 0 ]
	[ "$output" = inside ]
	# The run's code is in it; OpenSSL is not (linked from its archive,
	# or shared with LINK=shared), while cordon-main holds it.
	nm "$UDIR/bin/cordon-offline" >"$syms" 2>/dev/null || true
	grep -q ' sandbox_main$' "$syms"
	run grep -E ' (SSL_CTX_new|OPENSSL_init_crypto|EVP_DigestInit_ex)$' \
	    "$syms"
	[ "$status" -eq 1 ]
	run ldd "$UDIR/bin/cordon-offline"
	[[ "$output" != *libssl* && "$output" != *libcrypto* ]]
	nm "$(cordon_main)" | grep -q ' SSL_CTX_new$'
}
