#!/usr/bin/env bats
# Every shell example of README.md and docs/*.md runs here as written,
# what it prints compared with the text the page shows; the few that
# cannot run on a CI machine say why in the page (docs_blocks.sh lists
# them, and the first test fails on an example neither run nor marked).
# Also cordon(1)'s and cordon-policy(5)'s commands (man_examples.bats
# checks the policies of cordon-policy(5)).
#
# What is normalised, and only where a test says so: the test's home is
# the page's /home/alice, its folder the page's /tmp, the ports its
# servers got the page's; in egress-log.md's answers times and durations;
# in operations.md's the run's id and the test user's uid (995 there).

load helpers

bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
}

teardown() {
	local pid
	if [ -s "$BATS_TEST_TMPDIR/replay.pids" ]; then
		while read -r pid; do
			kill "$pid" 2>/dev/null || true
		done <"$BATS_TEST_TMPDIR/replay.pids"
	fi
	teardown_bg
	sandbox_teardown
}

# The lines of the example marked <!-- example: ID --> in the pages.
example() {
	"$REPO/tests/e2e/docs_blocks.sh" show "$1" "$REPO/README.md" \
	    "$REPO"/docs/*.md
}

# replay ID [SED]: runs the "$ " commands of example ID in order, in one
# shell in the current folder, and prints a transcript to compare with the
# page: each command as shown, then what it printed (output and errors).
# SED edits a command before it runs (the test's port for the page's),
# never what is shown.  A command that ends in "&" runs in the background,
# its output to bg.log; then replay_started, the test's, is called.
replay() {
	local line cmd= shown= script="$BATS_TEST_TMPDIR/replay.sh"
	example "$1" >"$BATS_TEST_TMPDIR/example" || return 1
	: >"$script"
	while IFS= read -r line; do
		# A command, and the lines it continues on ("\" at the end).
		if [ -z "$shown" ]; then
			case $line in
			'$ '*) cmd=${line#\$ } ;;
			*) continue ;;
			esac
		else
			cmd="$cmd $line"
		fi
		shown="$shown${shown:+$'\n'}$line"
		if [ "${cmd%\\}" != "$cmd" ]; then
			cmd="${cmd%\\}"
			continue
		fi
		[ -n "${2:-}" ] && cmd=$(printf '%s\n' "$cmd" | sed "$2")
		printf 'printf "%%s\\n" %q\n' "$shown" >>"$script"
		case $cmd in
		*'&')
			# A simple command, as on the pages: $! is its pid.
			printf '%s >>bg.log 2>&1 3>&- &\n' "${cmd%&}"
			printf 'echo $! >>%q\n' "$BATS_TEST_TMPDIR/replay.pids"
			printf 'replay_started\n'
			;;
		*)
			printf '{ %s\n} 2>&1\n' "$cmd"
			;;
		esac >>"$script"
		cmd=
		shown=
	done <"$BATS_TEST_TMPDIR/example"
	(set +e; trap - ERR; . "$script")
}

replay_started() {
	:
}

# The lines of the literal block of page $1 that follows the line
# "$ $2", up to the next "$ " line or the block's end.
shown_after() {
	awk -v cmd="\$ $2" '
	found && (/^\$ / || /^\.Ed/ || /^```/) { exit }
	found { print }
	$0 == cmd { found = 1 }' "$1"
}

@test "cordon(1): a program that ignores the proxy meets it anyway (403)" {
	run in_sandbox -- curl -sS --noproxy '*' http://192.0.2.1/
	echo "$output"
	shown_after "$REPO/docs/cordon.1" \
	    "cordon run -- curl -sS --noproxy '*' http://192.0.2.1/" \
	    >"$BATS_TEST_TMPDIR/shown"
	[ -s "$BATS_TEST_TMPDIR/shown" ]
	# The page's lines, each in what the run printed.
	while IFS= read -r line; do
		grep -qxF -- "$line" <(printf '%s\n' "$output")
	done <"$BATS_TEST_TMPDIR/shown"
	[[ "$output" != *"Couldn't connect"* ]]
}

# The .Dl lines of a man page $1 after ".Dl $ $2", up to the next command
# or the end of the .Dl lines, as mandoc prints them (\(dq a quote).
dl_after() {
	awk -v cmd=".Dl \$ $2" '
	found && (/^\.Dl \$ / || !/^\.Dl /) { exit }
	found { sub(/^\.Dl /, ""); gsub(/\\\(dq/, "\""); print }
	$0 == cmd { found = 1 }' "$1"
}

@test "cordon-policy(5): check, explain and show against the shipped policies print what the page shows" {
	local cmd n=0
	cd "$REPO"
	while IFS= read -r cmd; do
		run sh -c "$CORDON ${cmd#cordon }"
		[ "$status" -eq 0 ]
		diff <(dl_after "$REPO/docs/cordon-policy.5" "$cmd") \
		    <(printf '%s\n' "$output")
		n=$((n + 1))
	done < <(sed -n 's/^\.Dl \$ \(cordon policy .*policies\/.*\)/\1/p' \
	    "$REPO/docs/cordon-policy.5")
	[ "$n" -eq 3 ]
}

# --- every example is run or says why not ------------------------------

@test "every shell example of README.md and docs/*.md is run here, or says in the page why it cannot be" {
	run "$REPO/tests/e2e/docs_blocks.sh" check \
	    "$BATS_TEST_DIRNAME"/*.bats -- "$REPO/README.md" "$REPO"/docs/*.md
	echo "$output"
	[ "$status" -eq 0 ]
	# What the check reads: a page with one example of each kind, and
	# a test that runs one of them.
	write page.md <<-'EOF2'
	<!-- not run: needs what a CI machine lacks -->
	```console
	$ a
	```

	<!-- example: page-b -->
	```sh
	b
	```

	<!-- example: page-c -->

	```
	$ c
	```

	```
	$ d
	```

	Text:

	    $ e
	EOF2
	printf '@test "c" {\n\treplay page-c\n}\n' >t.bats
	run "$REPO/tests/e2e/docs_blocks.sh" check t.bats -- page.md
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "page.md:7: example page-b: no test names it" ]
	[ "${lines[1]}" = "page.md:17: a shell example neither run by a test nor marked" ]
	[ "${lines[3]}" = "page.md:23: a shell example neither run by a test nor marked" ]
	[ "${lines[5]}" = "5 examples: 1 run, 1 not run" ]
}

# --- README.md ----------------------------------------------------------

# A copy of the source tree as the README's examples see it: ./cordon and
# policies/, and cordon on PATH.
readme_tree() {
	mkdir -p tree bin
	ln -s "$CORDON" tree/cordon
	ln -s "$CORDON" bin/cordon
	ln -s "$REPO/policies" tree/policies
	PATH="$BATS_TEST_TMPDIR/bin:$PATH"
	cd tree
}

# Compares the transcript in $output with example $1 of the pages, after
# the sed program $2 on both (what the test normalises).
same_as_page() {
	diff <(example "$1" | sed "${2:-}") <(printf '%s\n' "$output" |
	    sed "${2:-}")
}

@test "README: policy explain, by rule, by address spelling, and policy check and show" {
	readme_tree
	local id
	for id in readme-explain readme-spelling readme-check; do
		run replay "$id"
		same_as_page "$id"
	done
}

@test "README: the egress proxy alone refuses, and logs it" {
	readme_tree
	P=$(free_port)
	replay_started() {
		wait_listen "tcp:127.0.0.1:$P"
	}
	# The test's port for 3128.
	local sed="s/proxy --allow/proxy --listen tcp:127.0.0.1:$P --allow/"
	run replay readme-proxy "$sed; s/127\.0\.0\.1:3128/127.0.0.1:$P/g"
	same_as_page readme-proxy
}

@test "README: a TCP port relayed to the proxy through a Unix socket" {
	readme_tree
	P=$(free_port)
	B=$(free_port)
	start_bg proxy "$CORDON" proxy --listen "tcp:127.0.0.1:$P" \
	    --allow-domain github.com --log egress.log
	wait_listen "tcp:127.0.0.1:$P"
	WAITS=("unix:$BATS_TEST_TMPDIR/proxy.sock" "tcp:127.0.0.1:$B")
	replay_started() {
		wait_listen "${WAITS[0]}"
		WAITS=("${WAITS[@]:1}")
	}
	# The test's ports for 3128 and 8080, its folder for /tmp.
	local sed="s/127\.0\.0\.1:3128/127.0.0.1:$P/"
	sed="$sed; s/127\.0\.0\.1:8080/127.0.0.1:$B/"
	run replay readme-bridge "$sed; s|/tmp/|$BATS_TEST_TMPDIR/|g"
	same_as_page readme-bridge
	# The proxy answers through both bridges.
	run curl -sS -x "http://127.0.0.1:$B" http://example.com/
	[ "${lines[0]}" = "cordon: deny example.com:80: no network.allow entry \
matches (default deny)" ]
	[ "$(jq -r 'select(.event != "open") | .host' egress.log)" = example.com ]
}

@test "README: a server one command of a session starts answers the next" {
	readme_tree
	# Sessions of this test alone: its own runtime folder, as a user's.
	mkdir -m 700 "$BATS_TEST_TMPDIR/xdg"
	export XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg"
	P=$(free_port)
	# The test's port for the page's 8000.
	run replay readme-session "s/8000/$P/g"
	same_as_page readme-session
	# Stopped: the session is gone, its server with it.
	run ! curl -s -o /dev/null "http://127.0.0.1:$P/"
	run "$CORDON" session list --json
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | jq '[.[] | select(.alive)] | length')" -eq 0 ]
}

# --- docs/policy.md -----------------------------------------------------

# The page's home: the user policy with its list file, the projects
# ~/src/py and ~/src/bad, and cordon on PATH; the output names the home
# /home/alice.
ALICE='s|'"${BATS_TEST_TMPDIR:-/nowhere}"'/home|/home/alice|g'

alice_home() {
	mkdir -p bin
	ln -s "$CORDON" bin/cordon
	PATH="$BATS_TEST_TMPDIR/bin:$PATH"
	write "$XDG_CONFIG_HOME/cordon/policy.json" <<-'EOF2'
	{
	  "version": 1,
	  "network": {
	    "allow_files": ["registries.txt"],
	    "deny": ["gist.github.com"]
	  }
	}
	EOF2
	write "$XDG_CONFIG_HOME/cordon/registries.txt" <<-'EOF2'
	# Package registries
	registry.npmjs.org
	pypi.org
	files.pythonhosted.org   # wheels and sdists
	*.githubusercontent.com
	EOF2
	write "$HOME/src/py/.cordon/policy.json" <<-'EOF2'
	{
	  "version": 1,
	  "network": { "allow": ["pypi.org", "*.pythonhosted.org"] }
	}
	EOF2
	write "$HOME/src/bad/.cordon/policy.json" <<-'EOF2'
	{
	  "version": 1,
	  "network": { "allow": ["pypi.org"] },
	  "env": { "set": { "PIP_INDEX_URL": "https://pypi.example/simple" } }
	}
	EOF2
	write bad.json <<-'EOF2'
	{"version": 1,
	 "network": {"mode": "open", "allow": ["*"], "proxy": 1}}
	EOF2
}

@test "policy.md: the first user policy checks ok" {
	alice_home
	write "$XDG_CONFIG_HOME/cordon/policy.json" <<-'EOF2'
	{
	  "version": 1,
	  "network": {
	    "allow": ["registry.npmjs.org", "github.com", "*.githubusercontent.com"],
	    "deny": ["gist.githubusercontent.com"]
	  }
	}
	EOF2
	run replay policy-check-user
	same_as_page policy-check-user "$ALICE"
}

@test "policy.md: explain and check in the home of the page, and in its projects" {
	alice_home
	local id
	for id in policy-cidrs policy-files policy-workspace \
	    policy-workspace-bad policy-check-bad policy-explain-deny \
	    policy-show-plain; do
		cd "$BATS_TEST_TMPDIR"
		run replay "$id"
		same_as_page "$id" "$ALICE"
	done
}

@test "policy.md: policy show in ~/src/py begins as the page shows" {
	alice_home
	run replay policy-show
	# The page shows the beginning, then "...".
	example policy-show >shown
	[ "$(tail -n 1 shown)" = ... ]
	diff <(sed '$d' shown) \
	    <(printf '%s\n' "$output" | sed "$ALICE" |
	    head -n $(($(wc -l <shown) - 1)))
}

@test "policy.md: the shipped policies check, and dev.json leaves SSH out" {
	readme_tree
	run replay policy-shipped
	same_as_page policy-shipped
}

# --- docs/egress-log.md -------------------------------------------------

# The session the page's questions are asked of: through `cordon proxy`,
# names from dnsmasq, the origin tests/tools/httpd on a port the page
# calls 24443; plain HTTP, CONNECT, then SOCKS5 (the page's --arg since
# is the moment between).  Each exchange the page's answers name:
# meta.test is the cloud metadata address, nx.test does not resolve, a
# tunnel to api.test says "other.test" in its ClientHello, *.evil.test is
# denied by flag, nope.test and example.com by no rule; the three slowest
# take 300, 150 and 60 ms (the origin waits that long to answer).
egress_session() {
	local c
	command -v dnsmasq >/dev/null || {
		echo "missing dnsmasq: run 'make deps'" >&2
		return 1
	}
	UP=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP"
	DNS=$(free_port)
	start_bg dnsmasq dnsmasq --no-daemon --port="$DNS" \
	    --listen-address=127.0.0.1 --bind-interfaces --no-resolv \
	    --no-hosts --user="$(id -un)" --pid-file= \
	    --address=/api.test/127.0.0.1 --address=/files.test/127.0.0.1 \
	    --address=/meta.test/169.254.169.254 --address=/nx.test/
	P=$(free_port)
	start_bg proxy "$CORDON" proxy --listen "tcp:127.0.0.1:$P" \
	    --log egress.log --dns "127.0.0.1:$DNS" --allow-cidr 127.0.0.1/32 \
	    --allow-domain "api.test:$UP" --allow-domain "files.test:$UP" \
	    --allow-domain meta.test --allow-domain nx.test \
	    --deny-domain '*.evil.test'
	wait_listen "tcp:127.0.0.1:$UP"
	wait_listen "tcp:127.0.0.1:$P"
	for i in $(seq 100); do
		[ "$(dig +short -p "$DNS" @127.0.0.1 api.test 2>/dev/null)" = \
		    127.0.0.1 ] && break
		sleep 0.05
	done
	# One request a curl, a fixed User-Agent: the bytes up are the same
	# whatever curl's version.
	c=(curl -sS -o /dev/null -A doc -x "http://127.0.0.1:$P")
	"${c[@]}" http://meta.test/ || true
	"${c[@]}" http://nx.test/ || true
	"${c[@]}" -p --connect-to "other.test:$UP:api.test:$UP" -k \
	    "https://other.test:$UP/" || true
	"${c[@]}" "http://files.test:$UP/bytes/1000000"
	"${c[@]}" "http://api.test:$UP/slow/300"
	"${c[@]}" "http://files.test:$UP/slow/60"
	"${c[@]}" http://upload.evil.test/ || true
	"${c[@]}" http://upload.evil.test/ || true
	"${c[@]}" -p https://example.com/ || true
	sleep 0.01
	SINCE=$(date -u +%Y-%m-%dT%H:%M:%S.%3N)
	sleep 0.01
	c=(curl -sS -o /dev/null -A doc --socks5-hostname "127.0.0.1:$P")
	"${c[@]}" http://x.evil.test/ || true
	"${c[@]}" "http://api.test:$UP/slow/150"
	"${c[@]}" http://nope.test/ || true
	[ "$(end_lines egress.log)" -eq 12 ]
}

# tail_of FILE: prints the pid of a tail(1) that holds FILE open.
tail_of() {
	local p
	for p in $(pgrep -x tail); do
		has_open "$p" "$1" && echo "$p" && return 0
	done
	return 1
}

@test "egress-log.md: the jq questions, asked of a session's log, answer as the page shows" {
	egress_session
	cat egress.log
	# Normalised: the test's ports are the page's (the origin's 24443),
	# times and durations are T and N, and --arg since is the moment
	# between the session's HTTP and SOCKS5 requests.
	local n="s/:$UP\\b/:24443/g; s/\\t$UP\\t/\\t24443\\t/g"
	n="$n; s/\"time\":\"[^\"]*\"/\"time\":\"T\"/g"
	n="$n; s/\"duration_ms\":[0-9]*/\"duration_ms\":N/g"
	local id
	for id in log-refused log-refused-hosts log-flags log-failed \
	    log-bytes log-slowest; do
		run replay "$id"
		same_as_page "$id" "$n"
	done
	run replay log-since "s/--arg since [^ ]*/--arg since $SINCE/"
	same_as_page log-since "$n"
	# A refusal while tail follows the file, then tail is stopped once
	# the answer is out (follow.out).
	(pid=$(wait_for tail_of "$PWD/egress.log")
	    curl -sS -o /dev/null -x "http://127.0.0.1:$P" http://example.com/
	    wait_for grep -q example.com follow.out
	    kill "$pid") 3>&- &
	run replay log-follow "s/^tail /timeout 30 tail /; s/\$/ | tee follow.out/"
	same_as_page log-follow "$n"
}

# --- docs/agents.md -----------------------------------------------------

@test "agents.md: the shell script reports what npm install was refused, and exits with npm's status" {
	command -v npm >/dev/null || {
		echo "missing npm: run 'make deps'" >&2
		return 1
	}
	mkdir -p bin app
	ln -s "$CORDON" bin/cordon
	PATH="$BATS_TEST_TMPDIR/bin:$PATH"
	cd app
	# A project with one dependency; npm does not retry (it would wait
	# for minutes).  Nothing leaves: the proxy refuses the name unasked.
	printf '{"name": "app", "version": "1.0.0",
	    "dependencies": {"left-pad": "1.3.0"}}\n' >package.json
	printf 'fetch-retries=0\n' >.npmrc
	# The test's folder for /tmp.
	run --separate-stderr sh -c "$(example agents-report |
	    sed "s|/tmp/|$BATS_TEST_TMPDIR/|g")"
	echo "$stderr"
	[ "$status" -eq 1 ]	# npm's
	[ "$output" = "registry.npmjs.org:443 refused: no network.allow entry \
matches (default deny); allow with --allow-domain registry.npmjs.org" ]
	[[ "$stderr" == *"npm error 403"* ]]
}

# --- docs/operations.md -------------------------------------------------

@test "operations.md: one run's lines on a shared proxy, read by its uid and sandbox id" {
	[ "$(id -u)" -eq 0 ] || skip "two users: needs root"
	UP=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP"
	sock="$UDIR/proxy.sock"
	start_bg proxy "$UCORDON" proxy --listen-sandbox "unix:$sock" \
	    --log "$BATS_TEST_TMPDIR/egress.log" \
	    --resolve up.test:127.0.0.1 --resolve two.test:127.0.0.1 \
	    --allow-cidr 127.0.0.1/32 --allow-domain "up.test:$UP" \
	    --allow-domain "two.test:$UP"
	wait_listen "tcp:127.0.0.1:$UP"
	wait_listen "unix:$sock"
	chmod 666 "$sock"
	# Root's run refuses itself two.test...
	run in_sandbox_as_me --quiet --proxy-socket "$sock" \
	    --deny-domain two.test -- sh -c "
	    curl -s -o /dev/null -w '%{http_code} ' http://up.test:$UP/
	    curl -s -o /dev/null -w '%{http_code}' http://two.test:$UP/"
	[ "$output" = "200 403" ]
	aid=$(jq -r 'select(.event != "open") | .sandbox' "$BATS_TEST_TMPDIR/egress.log" | sort -u)
	[ "${#aid}" -eq 16 ]
	# ...then the test user names the same id, and is allowed two.test.
	F=$(free_port)
	start_bg forged as_user "$UDIR/home" "$UCORDON" bridge \
	    --listen "tcp:127.0.0.1:$F" --connect "unix:$sock" --proxy-id "$aid"
	wait_listen "tcp:127.0.0.1:$F"
	run curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$F" \
	    "http://two.test:$UP/"
	[ "$output" = 200 ]
	for i in $(seq 50); do
		[ "$(end_lines "$BATS_TEST_TMPDIR/egress.log")" -eq 3 ] && break
		sleep 0.05
	done
	cd "$BATS_TEST_TMPDIR"
	# The run's id is the page's, the test user's uid its 995.
	run replay ops-uid "s/61dea934320e3300/$aid/g"
	same_as_page ops-uid \
	    "s/$aid/61dea934320e3300/g; s/,$(id -u "$TEST_USER"),/,995,/g"
}
