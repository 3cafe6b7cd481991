#!/usr/bin/env bats
# cordon mcp: the MCP server driven by real clients, as an agent would
# start it: in the workspace, with a bare environment (PATH alone), as
# the test user when the suite runs as root.  The clients are the MCP
# Inspector's command-line client (@modelcontextprotocol/inspector-cli)
# and, where one client must make several calls to one server or answer
# a question, a client on the official TypeScript SDK
# (clients/mcp_client.cjs); both pinned in tests/npm.  The official
# conformance suite (@modelcontextprotocol/conformance) runs its server
# scenarios that apply (see the test) through clients/mcp_http.cjs: the
# suite speaks only Streamable HTTP, and that relays each of its
# sessions to a cordon mcp of its own on stdio.  Upstreams are
# tests/tools/httpd on 127.0.0.1, its name pinned by --resolve.

load helpers
bats_require_minimum_version 1.5.0

NPM_DIR="$BATS_TEST_DIRNAME/../npm/node_modules"

setup() {
	cordon_setup
	sandbox_setup
	need_npm
	UP=$(free_port)
	start_bg httpd "$TOOLS_DIR/httpd" --listen "tcp:127.0.0.1:$UP" \
	    --log "$BATS_TEST_TMPDIR/origin.log"
	wait_listen "tcp:127.0.0.1:$UP"
	# Loopback is a special range: allowed on purpose for the tests.
	ALLOW_UP=(--resolve "up.test:127.0.0.1" --allow-cidr 127.0.0.1/32
	    --allow-domain "up.test:$UP")
	# The server as a client starts it (stdio), with the options given,
	# in the user's home: its sessions are where sessions() looks.
	SERVE="$UDIR/bin/serve"
	{
		echo '#!/bin/sh'
		echo "cd '$WS' || exit 1"
		if [ "$(id -u)" -eq 0 ]; then
			echo "exec setpriv --reuid=$TEST_USER" \
			    "--regid=$TEST_USER --clear-groups --inh-caps=-all" \
			    "--reset-env env HOME='$UDIR/home'" \
			    "PATH=/usr/bin:/bin '$UCORDON' mcp" \
			    '"$@"'
		else
			echo "exec env -i HOME='$UDIR/home'" \
			    "PATH=/usr/bin:/bin '$UCORDON' mcp" \
			    '"$@"'
		fi
	} >"$SERVE"
	chmod 755 "$SERVE"
	# inspector-cli 1.0.3 names itself from ../package.json of the
	# folder it runs in (its build looks there first, relative to the
	# process's folder): it runs in the workspace, so one is beside it.
	echo '{"name": "x/inspector-cli", "version": "1.0.3"}' \
	    >"$UDIR/package.json"
}

teardown() {
	teardown_bg
	sandbox_teardown
}

need_npm() {
	[ -e "$NPM_DIR/@modelcontextprotocol/inspector-cli/build/index.js" ] &&
	    [ -e "$NPM_DIR/@modelcontextprotocol/conformance/dist/index.js" ] ||
	    { echo "missing the MCP clients: run 'make deps-check' (tests/npm)" >&2
	    return 1; }
}

# The Inspector's client against the server: inspector ARGS -- SERVER
# OPTIONS...  (its own options first).
inspector() {
	local args=()
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	(cd "$WS" && timeout 60 node \
	    "$NPM_DIR/@modelcontextprotocol/inspector-cli/build/index.js" \
	    "$SERVE" "$@" "${args[@]}")
}

# The SDK's client: $MCP_CALLS the calls' arguments, one result a line.
sdk_client() {
	(cd "$WS" && NODE_PATH="$NPM_DIR" timeout 120 node \
	    "$BATS_TEST_DIRNAME/clients/mcp_client.cjs" "$SERVE" "$@")
}

# The sessions of this test's workspace, as session list --json says
# (the test user's folder of sessions is shared with other tests).
sessions() {
	if [ "$(id -u)" -eq 0 ]; then
		(as_user "$UDIR/home" env -u XDG_RUNTIME_DIR "$UCORDON" \
		    session list --json)
	else
		env -u XDG_RUNTIME_DIR "$UCORDON" session list --json
	fi | jq -c --arg ws "$WS" '[.[] | select(.workspace == $ws)]'
}

@test "initialize and tools/list: the tool run, its input and output schemas" {
	run --separate-stderr inspector --method tools/list --
	[ "$status" -eq 0 ]
	jq -e '.tools | length == 1' <<<"$output"
	jq -e '.tools[0].name == "run"' <<<"$output"
	jq -e '.tools[0].inputSchema.required == ["command"]' <<<"$output"
	jq -e '.tools[0].outputSchema.properties.refused.type == "array"' \
	    <<<"$output"
	# Nothing was started for a list: no session.
	[ "$(sessions)" = "[]" ]
}

@test "a run: its output and exit status, as text and structured content; an allowed host answers" {
	run --separate-stderr inspector --method tools/call --tool-name run \
	    --tool-arg "command=curl -s http://up.test:$UP/; echo; echo oops >&2; exit 3" \
	    -- "${ALLOW_UP[@]}"
	[ "$status" -eq 0 ]
	# The inspector's client checks structuredContent by outputSchema.
	jq -e '.structuredContent.exit_status == 3' <<<"$output"
	jq -e '.structuredContent.stdout | startswith("hello")' <<<"$output"
	jq -e '.structuredContent.stderr == "oops\n"' <<<"$output"
	jq -e '.structuredContent.refused == []' <<<"$output"
	jq -e '.isError == false' <<<"$output"
	jq -e '.content[0].text | startswith("hello") and
	    endswith("[stderr]\noops\n[exit status 3]")' <<<"$output"
	grep -q 'GET /' "$BATS_TEST_TMPDIR/origin.log"
}

@test "a refused host: its reason and fix in the result, and on the command's stderr" {
	run --separate-stderr inspector --method tools/call --tool-name run \
	    --tool-arg "command=curl -s -o /dev/null -w '%{http_code}' http://evil.test/" \
	    -- "${ALLOW_UP[@]}"
	[ "$status" -eq 0 ]
	jq -e '.structuredContent.refused | length == 1' <<<"$output"
	jq -e '.structuredContent.refused[0] | .host == "evil.test" and
	    .port == 80 and (.reason | test("default deny")) and
	    (.fix | test("--allow-domain evil.test"))' <<<"$output"
	jq -e '.structuredContent.stderr |
	    test("cordon: refused 1 connection: evil.test:80 \\(")' <<<"$output"
	jq -e '.content[0].text | test("cordon: to allow evil.test:80: ")' \
	    <<<"$output"
}

@test "the folder and an exported variable carry to the next call, as in one shell; a cwd is entered; the session stops when the client goes" {
	MCP_CALLS='[{"command": "mkdir -p a/b && cd a && export GREETING=\"hi there\""},
	    {"command": "pwd; echo \"$GREETING\"", "cwd": "b"},
	    {"command": "pwd; cd /nonexistent", "cwd": ".."}]' \
	    run --separate-stderr sdk_client
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	jq -e ".structuredContent.cwd == \"$WS/a\"" <<<"${lines[0]}"
	jq -e ".structuredContent.stdout == \"$WS/a/b\nhi there\n\"" \
	    <<<"${lines[1]}"
	# A failed cd keeps the folder, as a shell does.
	jq -e ".structuredContent.stdout == \"$WS/a\n\"" <<<"${lines[2]}"
	jq -e '.structuredContent.exit_status != 0' <<<"${lines[2]}"
	# The client has gone: its session was stopped.
	[ "$(sessions)" = "[]" ]
}

@test "variables carry with their quotes and newlines; one too long for an environment is not carried, and the next call runs" {
	MCP_CALLS='[{"command": "export Q=\"it'"'"'s \\\"q\\\"\n\ttwo\" BIG=$(head -c 140000 /dev/zero | tr \"\\\\0\" x) OLDPWD=/etc"},
	    {"command": "printf %s \"$Q\"; echo \" ${#BIG} $OLDPWD\"; env >/dev/null"}]' \
	    run --separate-stderr sdk_client
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	jq -e '.structuredContent.exit_status == 0' <<<"${lines[0]}"
	jq -e ".structuredContent.stdout == \"it's \\\"q\\\"\n\ttwo 0 $WS\n\"" \
	    <<<"${lines[1]}"
	jq -e '.structuredContent.exit_status == 0' <<<"${lines[1]}"
}

@test "timeout: the command is ended, and the result says so" {
	run --separate-stderr inspector --method tools/call --tool-name run \
	    --tool-arg "command=echo started; sleep 30" --tool-arg timeout=1 --
	[ "$status" -eq 0 ]
	jq -e '.structuredContent.timed_out == true' <<<"$output"
	jq -e '.structuredContent.exit_status == 143' <<<"$output"
	jq -e '.structuredContent.stdout == "started\n"' <<<"$output"
	jq -e '.isError == true' <<<"$output"
	jq -e '.structuredContent.duration_ms < 10000' <<<"$output"
}

@test "output is bounded: its start and end kept, and what was cut counted" {
	run --separate-stderr inspector --method tools/call --tool-name run \
	    --tool-arg "command=seq 1 100000" --
	[ "$status" -eq 0 ]
	jq -e '.structuredContent.stdout | startswith("1\n2\n3\n")' <<<"$output"
	jq -e '.structuredContent.stdout | endswith("99999\n100000\n")' \
	    <<<"$output"
	jq -e '.structuredContent.stdout_cut > 500000' <<<"$output"
	jq -e '.structuredContent.stdout | test("\\[cordon: [0-9]+ bytes left out here\\]")' \
	    <<<"$output"
}

@test "--ask: a client that can be asked is asked, and its answer holds; one that cannot gets the refusal at once" {
	MCP_ANSWER=allow-once MCP_CALLS="[{\"command\": \"curl -s http://up.test:$UP/\"}]" \
	    run --separate-stderr sdk_client --ask --resolve up.test:127.0.0.1 \
	    --allow-cidr 127.0.0.1/32
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	jq -e '.asked | test("up.test:'"$UP"'")' <<<"${lines[0]}"
	jq -e '.structuredContent.stdout | startswith("hello")' <<<"${lines[1]}"
	jq -e '.structuredContent.refused == []' <<<"${lines[1]}"

	MCP_ANSWER=deny MCP_CALLS="[{\"command\": \"curl -s http://up.test:$UP/\"}]" \
	    run --separate-stderr sdk_client --ask --resolve up.test:127.0.0.1 \
	    --allow-cidr 127.0.0.1/32
	[ "$status" -eq 0 ]
	jq -e '.asked' <<<"${lines[0]}"
	jq -e '.structuredContent.refused[0].host == "up.test"' <<<"${lines[1]}"

	# No elicitation capability: no question, and no wait for one.
	MCP_CALLS="[{\"command\": \"curl -s http://up.test:$UP/\"}]" \
	    run --separate-stderr sdk_client --ask --ask-secs 30 \
	    --resolve up.test:127.0.0.1 --allow-cidr 127.0.0.1/32
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	jq -e '.structuredContent.refused[0].host == "up.test"' <<<"${lines[0]}"
	jq -e '.structuredContent.duration_ms < 10000' <<<"${lines[0]}"
}

@test "JSON-RPC errors: parse error, invalid request, method not found, invalid params; answers on stdout alone" {
	run --separate-stderr "$SERVE" <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{not json
{"jsonrpc":"1.0","id":2,"method":"ping"}
{"jsonrpc":"2.0","id":3,"method":"resources/list"}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}
{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}
{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"run","arguments":{}}}
{"jsonrpc":"2.0","id":7,"method":"ping"}
EOF
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 8 ]
	jq -e '.id == 1 and .result.protocolVersion == "2025-06-18"' \
	    <<<"${lines[0]}"
	jq -e '.id == null and .error.code == -32700' <<<"${lines[1]}"
	jq -e '.id == 2 and .error.code == -32600' <<<"${lines[2]}"
	jq -e '.id == 3 and .error.code == -32601' <<<"${lines[3]}"
	jq -e '.id == 4 and .error.code == -32602' <<<"${lines[4]}"
	jq -e '.id == 5 and .error.code == -32602' <<<"${lines[5]}"
	# Bad arguments are the tool's error: the model reads and retries.
	jq -e '.id == 6 and .result.isError == true' <<<"${lines[6]}"
	jq -e '.id == 7 and .result == {}' <<<"${lines[7]}"
	[[ "$stderr" == *"cordon: mcp: the client sent not JSON"* ]]
}

@test "a session that cannot start: the tool's error says why, to the model and on stderr" {
	run --separate-stderr "$SERVE" --no-such-option <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run","arguments":{"command":"true"}}}
EOF
	[ "$status" -eq 0 ]
	jq -e '.result.isError == true' <<<"$output"
	jq -e '.result.content[0].text | test("unknown option --no-such-option")' \
	    <<<"$output"
	[[ "$stderr" == *"unknown option --no-such-option"* ]]
}

# Starts the server on a FIFO held open, makes one call, and waits for
# its answer; the server's pid in $BG_PID.
serve_one_call() {
	mkfifo "$BATS_TEST_TMPDIR/in"
	# Open both ways first: the server's open for reading does not wait.
	exec 4<>"$BATS_TEST_TMPDIR/in"
	# Not start_bg: a command put in the background reads /dev/null
	# unless its own redirection says otherwise.
	"$SERVE" <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/server.log" \
	    2>&1 3>&- &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
	echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run","arguments":{"command":"true"}}}' >&4
	for i in $(seq 100); do
		grep -q '"id":1' "$BATS_TEST_TMPDIR/server.log" && break
		sleep 0.1
	done
	[ "$(sessions | jq length)" -eq 1 ]
}

@test "SIGTERM ends the server, and its session with it" {
	serve_one_call
	kill -TERM "$BG_PID"
	wait "$BG_PID"
	exec 4>&-
	[ "$(sessions)" = "[]" ]
}

@test "a server killed (SIGKILL) takes its session with it" {
	serve_one_call
	kill -KILL "$BG_PID"
	wait "$BG_PID" || true
	exec 4>&-
	for i in $(seq 100); do
		[ "$(sessions)" = "[]" ] && break
		sleep 0.1
	done
	[ "$(sessions)" = "[]" ]
}

# The suite's server scenarios are for servers that implement its test
# tools, resources and prompts; cordon mcp serves one tool of its own.
# What applies: server-initialize, ping, tools-list, logging-set-level.
# What does not: tools-call-* and json-schema-2020-12 and the
# elicitation-* ones call tools named by the suite (test_simple_text,
# test_error_handling, ...); resources-*, prompts-* and
# completion-complete need resources and prompts, which cordon mcp does
# not offer (it says so: no such capability); server-sse-* and
# dns-rebinding-protection test an HTTP server, which here is the relay,
# not cordon.
@test "the MCP conformance suite: the server scenarios that apply pass" {
	PORT=$(free_port)
	start_bg bridge env NODE_PATH="$NPM_DIR" node \
	    "$BATS_TEST_DIRNAME/clients/mcp_http.cjs" "$PORT" "$SERVE"
	wait_listen "tcp:127.0.0.1:$PORT"
	cd "$BATS_TEST_TMPDIR"
	for sc in server-initialize ping tools-list logging-set-level; do
		run timeout 120 node \
		    "$NPM_DIR/@modelcontextprotocol/conformance/dist/index.js" \
		    server --url "http://127.0.0.1:$PORT/mcp" --scenario "$sc"
		# The suite's report, in the test's output.
		echo "$output" >&3
		[ "$status" -eq 0 ]
		[[ "$output" == *"Passed: 1/1, 0 failed"* ]]
	done
}
