#!/usr/bin/env bats
# cordon run --agent NAME: the agent profiles (policies/agents/), and the
# real agent CLIs inside, whole: Claude Code, Codex, Gemini CLI and
# OpenCode from the npm registry (tests/agents, pinned, installed by
# make deps-check) against
# a scripted model API on loopback (tests/agents/mockapi.py) that
# answers the first request with a tool call and the second with a text,
# and records every request.  The API's name is the real one, pinned to
# 127.0.0.1 (--resolve): the profile's own rules hold, and only the
# port and the address are the test's.

load helpers
bats_require_minimum_version 1.5.0

AGENTS_DIR="$BATS_TEST_DIRNAME/../agents"
# The CLIs, and OpenCode's binary (its Linux x64 package, pinned alone:
# the wrapper's optional packages for other systems are not all on
# every registry mirror, and npm ci wants them in the lock file).
AGENTS_BIN="$AGENTS_DIR/node_modules/.bin"
OPENCODE_BIN="$AGENTS_DIR/node_modules/opencode-linux-x64/bin"

setup() {
	cordon_setup
	sandbox_setup
	T="$UDIR/tls"
	sh "$BATS_TEST_DIRNAME/../../mk/origin-cert.sh" "$T" \
	    api.anthropic.com api.openai.com generativelanguage.googleapis.com \
	    platform.claude.com chatgpt.com auth.openai.com 127.0.0.1
	chmod 644 "$T"/*.pem
	REQ="$BATS_TEST_TMPDIR/requests.jsonl"
	KEY=sk-real-$RANDOM$RANDOM
	PORT=$(free_port)	# start_api serves there
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR"
}

teardown() {
	[ -z "${TMUX_SOCK:-}" ] || tmux -S "$TMUX_SOCK" kill-server || true
	teardown_bg
	sandbox_teardown
}

# Fails, saying so, when the agents are not installed: under CI a
# missing agent is a broken set-up, never a pass or a skip.
need_agents() {
	local a
	for a in claude codex gemini opencode; do
		[ -x "$AGENTS_BIN/$a" ] || [ -x "$OPENCODE_BIN/$a" ] && continue
		echo "missing the agent CLI $a: run 'make deps-check'" >&2
		return 1
	done
}

# Starts the model API on $PORT, its tool call running $1.
start_api() {
	start_bg api python3 "$AGENTS_DIR/mockapi.py" --listen "$PORT" \
	    --cert "$T/origin.pem" --key "$T/origin.key" --log "$REQ" \
	    --command "$1"
	wait_listen "tcp:127.0.0.1:$PORT"
}

# Runs `cordon run --agent $1 ARGS...` as the test user in the
# workspace, the agents on PATH, the key $KEY in the variable $2.
# Claude's and OpenCode's base URL names the port, and the profile
# allows what the URL names; Codex's provider is the test's, so its port
# is allowed here.
agent_run() {
	local agent=$1 var=$2 host=api.openai.com base= allow
	local base_var=ANTHROPIC_BASE_URL
	shift 2
	allow=(--allow-domain "$host:$PORT")
	case $agent in
	claude)
		host=api.anthropic.com base=https://api.anthropic.com:$PORT
		allow=() ;;
	opencode)
		host=api.anthropic.com base=https://api.anthropic.com:$PORT/v1
		allow=() ;;
	gemini)
		host=generativelanguage.googleapis.com base=https://$host:$PORT
		base_var=GOOGLE_GEMINI_BASE_URL allow=() ;;
	esac
	cd "$WS" || return 1
	as_user "$UDIR/home" env "$var=$KEY" "$base_var=$base" \
	    PATH="$AGENTS_BIN:$OPENCODE_BIN:$PATH" TERM="${TERM:-dumb}" \
	    SHELL=/bin/sh \
	    "$UCORDON" run --read-only "$UDIR/bin" --agent "$agent" \
	    --resolve "$host:127.0.0.1" "${allow[@]}" \
	    --allow-cidr 127.0.0.1/32 --upstream-ca "$T/origin-ca.pem" "$@"
}

# Runs codex inside, `codex exec ARGS...`, with the model API's
# provider: api.openai.com on $PORT.
codex_run() {
	agent_run codex OPENAI_API_KEY -- codex exec --skip-git-repo-check \
	    -s danger-full-access -m mock-model -c model_provider=mock \
	    -c "model_providers.mock={name=\"mock\",base_url=\"https://api.openai.com:$PORT/v1\",env_key=\"OPENAI_API_KEY\",wire_api=\"responses\"}" \
	    "$@"
}

# host_mcp_args ARGS... -- OPTS...: the agent's ARGS in args (the
# caller's local), and `cordon mcp OPTS...` as a JSON list's items in
# MCP_ARGS, for the agent's config.
host_mcp_args() {
	args=()
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	MCP_ARGS=$(for a in mcp "$@"; do printf '"%s", ' "$a"; done)
	MCP_ARGS=${MCP_ARGS%, }
}

# Runs codex on the host, not in cordon, as the test user in the
# workspace: `codex exec ARGS...` with its own shell tools off and
# cordon mcp ($@ after --, its options) its only command tool, from a
# config.toml of the test's.  The model API is 127.0.0.1:$PORT, its CA
# trusted by codex alone; codex gives the MCP server its key.
codex_host_mcp() {
	local args
	host_mcp_args "$@"
	write "$UDIR/home/.codex/config.toml" <<-EOF
	model = "mock-model"
	model_provider = "mock"

	[model_providers.mock]
	name = "mock"
	base_url = "https://127.0.0.1:$PORT/v1"
	env_key = "OPENAI_API_KEY"
	wire_api = "responses"

	[features]
	shell_tool = false
	unified_exec = false

	[mcp_servers.cordon]
	command = "$UCORDON"
	args = [$MCP_ARGS]
	cwd = "$WS"
	env_vars = ["OPENAI_API_KEY"]
	default_tools_approval_mode = "approve"
	EOF
	cd "$WS" || return 1
	as_user "$UDIR/home" env "OPENAI_API_KEY=$KEY" \
	    CODEX_HOME="$UDIR/home/.codex" \
	    CODEX_CA_CERTIFICATE="$T/origin-ca.pem" PATH="$PATH" \
	    "$AGENTS_BIN/codex" exec --skip-git-repo-check "${args[@]}" \
	    </dev/null
}

# Runs claude -p on the host, as codex_host_mcp does codex: Bash
# disallowed, cordon mcp (its options $@ after --) allowed, from an MCP
# config of the test's, its tools offered at once (no tool search).
# The server gets claude's environment, its base URL (an address, which
# --agent claude does not follow) too.
claude_host_mcp() {
	local args
	host_mcp_args "$@"
	write "$UDIR/home/mcp.json" <<-EOF
	{"mcpServers": {"cordon": {"type": "stdio", "command": "$UCORDON",
	  "args": [$MCP_ARGS]}}}
	EOF
	cd "$WS" || return 1
	as_user "$UDIR/home" env "ANTHROPIC_API_KEY=$KEY" \
	    ANTHROPIC_BASE_URL="https://127.0.0.1:$PORT" ENABLE_TOOL_SEARCH=false \
	    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
	    NODE_EXTRA_CA_CERTS="$T/origin-ca.pem" PATH="$PATH" \
	    "$AGENTS_BIN/claude" -p --strict-mcp-config \
	    --mcp-config "$UDIR/home/mcp.json" --allowedTools mcp__cordon__run \
	    --disallowedTools Bash -- "${args[@]}" </dev/null
}

# Runs claude -p on the host, not in cordon, as the test user in the
# workspace, its own tools allowed: what the user runs after cordon.
claude_host() {
	cd "$WS" || return 1
	as_user "$UDIR/home" env "ANTHROPIC_API_KEY=$KEY" \
	    ANTHROPIC_BASE_URL="https://127.0.0.1:$PORT" \
	    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
	    NODE_EXTRA_CA_CERTS="$T/origin-ca.pem" PATH="$PATH" \
	    "$AGENTS_BIN/claude" -p --dangerously-skip-permissions "$@" \
	    </dev/null
}

# Runs opencode on the host, as codex_host_mcp does codex: its bash
# tool denied, cordon mcp (its options $@ after --) a local MCP server,
# from a config of the test's.
opencode_host_mcp() {
	local args
	host_mcp_args "$@"
	write "$UDIR/home/.config/opencode/opencode.json" <<-EOF
	{"mcp": {"cordon": {"type": "local", "enabled": true, "command":
	  ["$UCORDON", $MCP_ARGS]}},
	 "permission": {"bash": "deny"}}
	EOF
	cd "$WS" || return 1
	as_user "$UDIR/home" env "ANTHROPIC_API_KEY=$KEY" \
	    ANTHROPIC_BASE_URL="https://127.0.0.1:$PORT/v1" SHELL=/bin/sh \
	    OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 \
	    NODE_EXTRA_CA_CERTS="$T/origin-ca.pem" PATH="$PATH" \
	    "$OPENCODE_BIN/opencode" run -m anthropic/claude-sonnet-4-5 \
	    "${args[@]}" </dev/null
}

# Runs gemini -p on the host, as codex_host_mcp does codex: its shell
# tool excluded, cordon mcp (its options $@ after --) an MCP server of
# its settings, given the key by name (gemini passes it no other
# variable of its own).
gemini_host_mcp() {
	local args
	host_mcp_args "$@"
	write "$UDIR/home/.gemini/settings.json" <<-EOF
	{"security": {"auth": {"selectedType": "gemini-api-key"}},
	 "privacy": {"usageStatisticsEnabled": false},
	 "tools": {"exclude": ["run_shell_command"]},
	 "mcpServers": {"cordon": {"command": "$UCORDON", "trust": true,
	  "env": {"GEMINI_API_KEY": "\$GEMINI_API_KEY"},
	  "args": [$MCP_ARGS]}}}
	EOF
	cd "$WS" || return 1
	as_user "$UDIR/home" env "GEMINI_API_KEY=$KEY" \
	    GOOGLE_GEMINI_BASE_URL="https://127.0.0.1:$PORT" \
	    GEMINI_CLI_TRUST_WORKSPACE=true SHELL=/bin/sh \
	    NODE_EXTRA_CA_CERTS="$T/origin-ca.pem" PATH="$PATH" \
	    "$AGENTS_BIN/gemini" -p "${args[@]}" --yolo -m gemini-2.5-pro \
	    </dev/null
}

# Checks cordon mcp's structured result $1, as the model got it, of
# MCP_COMMAND run with --agent: it ran in the sandbox (its PID 1 is
# cordon's, unlike the host's), in the workspace, holding the key's
# placeholder; the refusal is there with its reason and fix.
MCP_COMMAND='echo made >mcp-made; cat /proc/1/comm; echo "key=$KEY_VAR"; curl -sS https://refused.test/'
mcp_result_ok() {
	jq -e '.stdout | test("^cordon\nkey=cordon-phantom-[0-9a-f]{32}\n$")' \
	    "$1"
	[ "$(cat /proc/1/comm)" != cordon ]
	[ "$(cat "$WS/mcp-made")" = made ]
	jq -e '.exit_status != 0' "$1"
	jq -e '.refused | length == 1' "$1"
	jq -e '.refused[0] | .host == "refused.test" and .port == 443 and
	    (.reason | test("default deny")) and
	    (.fix | test("--allow-domain refused.test"))' "$1"
}

# The store's copy of the workspace's kept state folder $1 (".claude"):
# its folder is named for the workspace and the first 8 bytes of the
# SHA-256 of its path, so that a new cordon finds what an older kept.
kept_copy() {
	local sum
	sum=$(printf %s "$(cd "$WS" && pwd -P)" | sha256sum | cut -c1-16)
	echo "$UDIR/home/.local/share/cordon/keep/ws/ws-$sum/$1"
}

@test "--agent: policy show gives the profile's rules, from the profile" {
	run "$CORDON" policy show --agent claude
	[ "$status" -eq 0 ]
	jq -e '.network.allow[] | select(.value == "api.anthropic.com") |
	    .from | startswith("agent profile claude: network.allow")' \
	    <<<"$output"
	jq -e '.credentials[] | select(.value.env == "ANTHROPIC_API_KEY") |
	    .value.header == "x-api-key"' <<<"$output"
	jq -e '.env.set[] | select(.value.name ==
	    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")' <<<"$output" ||
	    jq -e '.env.set.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC' \
	    <<<"$output"
	run "$CORDON" policy show --agent codex
	[ "$status" -eq 0 ]
	jq -e '.credentials[] | select(.value.env == "OPENAI_API_KEY") |
	    .value.host == "api.openai.com"' <<<"$output"
	# A model API elsewhere, named by the base URL: allowed on its port,
	# inspected, and given the key.
	ANTHROPIC_BASE_URL=https://gw.test:8443/v1 run "$CORDON" policy show \
	    --agent claude
	[ "$status" -eq 0 ]
	jq -e '.network.allow[] | select(.value == "gw.test:8443")' <<<"$output"
	jq -e '.network.inspect[] | select(.value.host == "gw.test")' \
	    <<<"$output"
	jq -e '.credentials[] | select(.value.host == "gw.test" and
	    .value.env == "ANTHROPIC_API_KEY")' <<<"$output"
	# One that names an address: not followed, and said with the fix.
	ANTHROPIC_BASE_URL=https://10.1.2.3:8443/v1 run "$CORDON" policy show \
	    --agent claude
	[ "$status" -eq 0 ]
	[[ "$output" == *"ANTHROPIC_BASE_URL names an address (10.1.2.3)"* ]]
	[[ "$output" == *"--allow-cidr 10.1.2.3/32"* ]]
	run jq -e '.network.allow[] | select(.value == "10.1.2.3:8443")' \
	    <<<"$(ANTHROPIC_BASE_URL=https://10.1.2.3:8443/v1 "$CORDON" \
	    policy show --agent claude 2>/dev/null)"
	[ "$status" -ne 0 ]
	# Without --agent, none of it.
	run "$CORDON" policy show
	[[ "$output" != *api.anthropic.com* ]]
}

@test "--agent: an unknown profile, or two, is refused with the names" {
	run "$CORDON" run --agent nope -- true
	[ "$status" -eq 125 ]
	[[ "$output" == *"--agent nope: no such profile (the profiles are claude, codex, gemini, opencode"* ]]
	run "$CORDON" policy show --agent claude --agent codex
	[ "$status" -ne 0 ]
	[[ "$output" == *"one --agent per run"* ]]
}

@test "--agent: cordon's CA is made on first use, and said once" {
	run agent_run claude ANTHROPIC_API_KEY --quiet -- true
	[ "$status" -eq 0 ]
	[[ "$output" == *"--agent claude: made cordon's CA in $UDIR/home/.local/share/cordon/ca (first use)"* ]]
	[ -s "$UDIR/home/.local/share/cordon/ca/ca.crt" ]
	run agent_run claude ANTHROPIC_API_KEY --quiet -- true
	[ "$status" -eq 0 ]
	[[ "$output" != *"made cordon's CA"* ]]
}

@test "--agent codex: the hint says what to pass when codex's own sandbox is on" {
	printf '#!/bin/sh\necho "codex ran: $*"\n' >"$UDIR/bin/codex"
	chmod 755 "$UDIR/bin/codex"
	run agent_run codex OPENAI_API_KEY --quiet -- "$UDIR/bin/codex" exec hi
	[ "$status" -eq 0 ]
	[[ "$output" == *"cordon: hint: codex's own sandbox"*"-s danger-full-access"* ]]
	[[ "$output" == *"codex ran: exec hi"* ]]
	run agent_run codex OPENAI_API_KEY --quiet -- "$UDIR/bin/codex" exec \
	    -s danger-full-access hi
	[ "$status" -eq 0 ]
	[[ "$output" != *"hint: codex"* ]]
}

@test "claude -p inside: the tool call runs, holding a placeholder; the API gets the key" {
	need_agents
	start_api 'echo "key=$ANTHROPIC_API_KEY"; curl -sS https://refused.test/'
	run agent_run claude ANTHROPIC_API_KEY \
	    -- claude -p --dangerously-skip-permissions "run the command"
	[ "$status" -eq 0 ]
	[[ "$output" =~ MOCK-DONE\ tool\ said:.*key=cordon-phantom-[0-9a-f]{32} ]]
	[[ "$output" != *"$KEY"* ]]
	# The summary names the host the tool call was refused, and no
	# other: the agent's own traffic is switched off.
	[[ "$output" == *"refused 1 connection: refused.test:443 (no network.allow entry matches"* ]]
	# Every request reached the API with the real key, none with the
	# placeholder; the tool's output, sent back, held only the placeholder.
	[ "$(jq -r '.headers["x-api-key"]' "$REQ" | sort -u)" = "$KEY" ]
	jq -e 'select(.body.messages != null) | .body.messages[] |
	    .content | arrays | .[] | select(.type == "tool_result")' "$REQ"
	run ! grep -q "$KEY" <(jq -c .body "$REQ")
	grep -q 'key=cordon-phantom-' <(jq -c .body "$REQ")
}

@test "codex exec inside: the tool call runs, holding a placeholder; the API gets the key" {
	need_agents
	start_api 'echo "key=$OPENAI_API_KEY"; curl -sS https://refused.test/'
	run codex_run "run the command"
	[ "$status" -eq 0 ]
	[[ "$output" =~ MOCK-DONE\ tool\ said:.*key=cordon-phantom-[0-9a-f]{32} ]]
	[[ "$output" != *"$KEY"* ]]
	[[ "$output" == *"refused 1 connection: refused.test:443 (no network.allow entry matches"* ]]
	[ "$(jq -r '.headers.authorization' "$REQ" | sort -u)" = "Bearer $KEY" ]
	# Its analytics, update check and plugin sync are off in the
	# config.toml the kept copy started with.
	grep -qx 'enabled = false' "$(kept_copy .codex)/config.toml"
	run ! grep -q "$KEY" <(jq -c .body "$REQ")
	grep -q 'key=cordon-phantom-' <(jq -c .body "$REQ")
}

@test "opencode run inside: the tool call holds a placeholder, the API gets the key, and its sessions survive to the next run" {
	need_agents
	start_api 'echo "key=$ANTHROPIC_API_KEY"'
	run agent_run opencode ANTHROPIC_API_KEY -- opencode run \
	    -m anthropic/claude-sonnet-4-5 "first task"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ MOCK-DONE\ tool\ said:\ key=cordon-phantom-[0-9a-f]{32} ]]
	[[ "$output" != *"$KEY"* ]]
	# Its background plugin install is refused, said, and harmless.
	[[ "$output" == *"refused registry.npmjs.org:443"* ]]
	[ "$(jq -r '.headers["x-api-key"]' "$REQ" | sort -u)" = "$KEY" ]
	run ! grep -q "$KEY" <(jq -c .body "$REQ")
	# The next run continues the session: its request holds both tasks.
	run agent_run opencode ANTHROPIC_API_KEY -- opencode run --continue \
	    -m anthropic/claude-sonnet-4-5 "next task"
	[ "$status" -eq 0 ]
	last=$(tail -n 1 "$REQ" | jq -c .body.messages)
	[[ "$last" == *"first task"* ]]
	[[ "$last" == *"next task"* ]]
	[ -f "$(kept_copy .local/share/opencode)/opencode.db" ]
	[ ! -e "$UDIR/home/.local/share/opencode" ]
}

@test "codex on the host, its shell tool off: cordon mcp runs its command in the sandbox; the refusal's reason and fix reach the model" {
	need_agents
	start_api "${MCP_COMMAND//KEY_VAR/OPENAI_API_KEY}"
	run codex_host_mcp "run the command" -- --agent codex
	[ "$status" -eq 0 ]
	[[ "$output" == *"mcp: cordon/run (completed)"* ]]
	# The model was offered cordon's tool, and no shell of codex's own.
	jq -e '.body.tools | any(.type == "namespace" and
	    .name == "mcp__cordon" and any(.tools[]; .name == "run"))' \
	    <(head -n 1 "$REQ")
	run ! jq -e '.body.tools[] | select(.name == "shell" or
	    .name == "shell_command" or .name == "exec_command")' \
	    <(head -n 1 "$REQ")
	# The tool's result, as codex sent it back: the structured content,
	# whole.
	jq -r '.body.input[] | select(.type == "function_call_output") |
	    .output' <(tail -n 1 "$REQ") | sed -n '/^{/,$p' \
	    >"$BATS_TEST_TMPDIR/result.json"
	mcp_result_ok "$BATS_TEST_TMPDIR/result.json"
	# The real key went to the API only, never to the model.
	[ "$(jq -r '.headers.authorization' "$REQ" | sort -u)" = "Bearer $KEY" ]
	run ! grep -q "$KEY" <(jq -c .body "$REQ")
}

@test "claude -p on the host, Bash disallowed: cordon mcp runs its command in the sandbox; the refusal's reason and fix reach the model" {
	need_agents
	start_api "${MCP_COMMAND//KEY_VAR/ANTHROPIC_API_KEY}"
	run claude_host_mcp "run the command" -- --agent claude
	[ "$status" -eq 0 ]
	[[ "$output" == "MOCK-DONE tool said: "* ]]
	# The model was offered cordon's tool, and not Bash.
	jq -e '.body.tools | any(.name == "mcp__cordon__run")' \
	    <(head -n 1 "$REQ")
	run ! jq -e '.body.tools[] | select(.name == "Bash")' \
	    <(head -n 1 "$REQ")
	jq -r '.body.messages[] | .content | arrays | .[] |
	    select(.type == "tool_result") | .content |
	    if type == "string" then . else map(.text) | join("") end' \
	    <(tail -n 1 "$REQ") >"$BATS_TEST_TMPDIR/result.json"
	mcp_result_ok "$BATS_TEST_TMPDIR/result.json"
	[ "$(jq -r '.headers["x-api-key"]' "$REQ" | sort -u)" = "$KEY" ]
	run ! grep -q "$KEY" <(jq -c .body "$REQ")
}

@test "opencode on the host, bash denied: cordon mcp runs its command in the sandbox; the refusal's reason and fix reach the model" {
	need_agents
	start_api "${MCP_COMMAND//KEY_VAR/ANTHROPIC_API_KEY}"
	run opencode_host_mcp "run the command" -- --agent opencode
	echo "$output"
	[ "$status" -eq 0 ]
	# The model was offered cordon's tool, and not opencode's bash.
	jq -e 'select(.body.tools != null) | .body.tools |
	    any(.name == "cordon_run")' "$REQ"
	run ! jq -e 'select(.body.tools != null) | .body.tools[] |
	    select(.name == "bash")' "$REQ"
	# The tool's result as the model got it (opencode sends the text):
	# run in the sandbox, in the workspace, holding the placeholder,
	# and the refusal with its reason and fix.
	jq -r '.body.messages[] | .content | arrays | .[] |
	    select(.type == "tool_result") | .content |
	    if type == "string" then . else map(.text) | join("") end' \
	    <(tail -n 1 "$REQ") >"$BATS_TEST_TMPDIR/result.txt"
	cat "$BATS_TEST_TMPDIR/result.txt"
	grep -Pzq '^cordon\nkey=cordon-phantom-[0-9a-f]{32}\n' \
	    "$BATS_TEST_TMPDIR/result.txt"
	grep -q 'refused.test:443.*default deny' "$BATS_TEST_TMPDIR/result.txt"
	grep -q -- '--allow-domain refused.test' "$BATS_TEST_TMPDIR/result.txt"
	[ "$(cat "$WS/mcp-made")" = made ]
	[ "$(jq -r '.headers["x-api-key"]' "$REQ" | sort -u)" = "$KEY" ]
	run ! grep -q "$KEY" <(jq -c .body "$REQ")
}

@test "gemini -p inside: the tool call holds a placeholder, the API gets the key, and its state is kept" {
	need_agents
	start_api 'echo "key=$GEMINI_API_KEY"'
	run agent_run gemini GEMINI_API_KEY -- env GEMINI_CLI_TRUST_WORKSPACE=true \
	    gemini -p "first task" --yolo -m gemini-2.5-pro
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ MOCK-DONE\ tool\ said:.*key=cordon-phantom-[0-9a-f]{32} ]]
	[[ "$output" != *"$KEY"* ]]
	# Nothing of gemini's own was refused: its usage statistics and
	# update check are off in the settings the kept state starts with.
	[[ "$output" != *"refused"* ]]
	[ "$(jq -r '.headers["x-goog-api-key"]' "$REQ" | sort -u)" = "$KEY" ]
	run ! grep -q "$KEY" <(jq -c .body "$REQ")
	# Kept in cordon's copy, with the seeded settings.
	jq -e '.security.auth.selectedType == "gemini-api-key"' \
	    "$(kept_copy .gemini)/settings.json"
	[ ! -e "$UDIR/home/.gemini" ]
}

@test "gemini on the host, its shell tool excluded: cordon mcp runs its command in the sandbox; the refusal's reason and fix reach the model" {
	need_agents
	start_api "${MCP_COMMAND//KEY_VAR/GEMINI_API_KEY}"
	run gemini_host_mcp "run the command" -- --agent gemini
	echo "$output"
	[ "$status" -eq 0 ]
	# The model was offered cordon's tool, and not gemini's shell.
	jq -e '[.body.tools[]?.functionDeclarations[]?.name] |
	    any(. == "mcp_cordon_run")' <(head -n 1 "$REQ")
	run ! jq -e '.body.tools[]?.functionDeclarations[]? |
	    select(.name == "run_shell_command")' "$REQ"
	# The tool's result as the model got it (the text).
	jq -r '.body.contents[] | .parts[]? | .functionResponse? //
	    empty | .response.output' <(tail -n 1 "$REQ") \
	    >"$BATS_TEST_TMPDIR/result.txt"
	cat "$BATS_TEST_TMPDIR/result.txt"
	grep -Pzq '\ncordon\nkey=cordon-phantom-[0-9a-f]{32}\n' \
	    "$BATS_TEST_TMPDIR/result.txt"
	grep -q 'refused.test:443.*default deny' "$BATS_TEST_TMPDIR/result.txt"
	grep -q -- '--allow-domain refused.test' "$BATS_TEST_TMPDIR/result.txt"
	[ "$(cat "$WS/mcp-made")" = made ]
	[ "$(jq -r '.headers["x-goog-api-key"]' "$REQ" | sort -u)" = "$KEY" ]
	run ! grep -q "$KEY" <(jq -c .body "$REQ")
}

@test "claude: its state survives to the workspace's next run, in cordon's copy; the token file held back" {
	need_agents
	start_api 'echo "key=$ANTHROPIC_API_KEY"'
	run agent_run claude ANTHROPIC_API_KEY \
	    -- claude -p --dangerously-skip-permissions "first task"
	[ "$status" -eq 0 ]
	[[ "$output" == *"--agent claude: ~/.claude/: kept between this workspace's runs in cordon's own copy"*"held back: ~/.claude/.credentials.json"* ]]
	# The next run goes on with the same conversation (--continue): its
	# request holds the first run's prompt and tool result.
	run agent_run claude ANTHROPIC_API_KEY \
	    -- claude -p --continue --dangerously-skip-permissions "next task"
	[ "$status" -eq 0 ]
	[[ "$output" != *"kept between"* ]]	# said once
	last=$(tail -n 1 "$REQ" | jq -c .body.messages)
	[[ "$last" == *"first task"* ]]
	[[ "$last" == *"next task"* ]]
	[[ "$last" == *tool_result* ]]
	# Kept on disk in cordon's copy, .claude.json with it; never the
	# host's folder.
	copy=$(kept_copy .claude)
	[ -f "$copy/.claude.json" ]
	[ -n "$(ls "$copy/projects")" ]
	[ ! -e "$UDIR/home/.claude" ]
	[ ! -e "$UDIR/home/.claude.json" ]
}

@test "codex: its sessions survive to the workspace's next run (exec resume --last), on disk" {
	need_agents
	start_api 'echo "key=$OPENAI_API_KEY"'
	run codex_run "first task"
	[ "$status" -eq 0 ]
	[[ "$output" == *"--agent codex: ~/.codex/: kept between this workspace's runs"*"held back: ~/.codex/auth.json"* ]]
	run codex_run resume --last "next task"
	[ "$status" -eq 0 ]
	last=$(tail -n 1 "$REQ" | jq -c .body.input)
	[[ "$last" == *"first task"* ]]
	[[ "$last" == *"next task"* ]]
	[[ "$last" == *function_call_output* ]]
	[ -n "$(ls "$(kept_copy .codex)/sessions")" ]
	[ ! -e "$UDIR/home/.codex" ]
}

@test "claude: a hook its own tool call writes runs on the host without cordon; with cordon it is moved aside and runs nothing" {
	need_agents
	local mark="$UDIR/home/MARK"
	# The model's tool call writes the workspace's .claude/settings.json
	# with a SessionStart hook, and only when it is not there yet.
	write "$UDIR/bin/plant.sh" <<-EOF
	[ -e .claude/settings.json ] && exit 0
	mkdir -p .claude
	echo '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch $mark"}]}]}}' >.claude/settings.json
	EOF
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/bin/plant.sh"
	start_api "sh $UDIR/bin/plant.sh"
	# On the host, without cordon: the hook the tool call wrote runs at
	# the user's next claude.
	run claude_host "write the hook"
	[ "$status" -eq 0 ]
	[ -f "$WS/.claude/settings.json" ]
	[ ! -e "$mark" ]
	run claude_host "next task"
	[ "$status" -eq 0 ]
	[ -e "$mark" ]
	rm -rf "$mark" "$WS/.claude"
	# Inside: the tool call writes it, and cordon moves it aside.
	run agent_run claude ANTHROPIC_API_KEY \
	    -- claude -p --dangerously-skip-permissions "write the hook"
	echo "$output"
	[ "$status" -eq 125 ]
	[[ "$output" == *"MOCK-DONE"* ]]
	[[ "$output" == *"moved aside $WS/.claude"* ]]
	[ ! -e "$WS/.claude" ]
	ls -d "$WS"/.claude.cordon-quarantine-*
	# The user's next claude runs nothing of it.
	rm -f "$UDIR/bin/plant.sh"
	run claude_host "next task"
	[ "$status" -eq 0 ]
	[ ! -e "$mark" ]
}

@test "--keep ~/.claude: kept, saying what it holds back; the host's login file comes over the copy, what is written there dropped" {
	write "$UDIR/home/.claude/.credentials.json" <<<'{"secret": "host-token"}'
	run in_sandbox --keep '~/.claude' -- sh -c '
	    echo one >~/.claude/history.jsonl
	    echo planted >~/.claude/.credentials.json &&
		echo "written inside"
	    cat ~/.claude/.credentials.json'
	[ "$status" -eq 0 ]
	[[ "$output" == *"--keep ~/.claude: kept between this workspace's runs in cordon's own copy"*"held back: ~/.claude/.credentials.json"*"run: ~/.claude/.credentials.json: hidden by the policy (filesystem.deny) in every run"* ]]
	# The login's copy is writable (a refresh's new expiry goes there),
	# and what is written there stays in the run.
	[[ "$output" == *"written inside"*planted* ]]
	[[ "$output" != *host-token* ]]
	run in_sandbox --quiet --keep '~/.claude' -- sh -c '
	    cat ~/.claude/history.jsonl ~/.claude/.credentials.json'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = one ]
	[ "${lines[1]}" = "{}" ]
	[[ "$output" != *"kept between"* ]]
	[[ "$output" != *planted* ]]
	# The host's folder is untouched.
	[ ! -e "$UDIR/home/.claude/history.jsonl" ]
	grep -q host-token "$UDIR/home/.claude/.credentials.json"
	# The copy is a file of the kept folder during a run, gone after it;
	# a link left in its place is removed, never followed.
	[ ! -e "$(kept_copy .claude)/.credentials.json" ]
	echo outside >"$BATS_TEST_TMPDIR/target"
	ln -s "$BATS_TEST_TMPDIR/target" "$(kept_copy .claude)/.credentials.json"
	run in_sandbox --quiet --keep '~/.claude' -- sh -c '
	    cat ~/.claude/.credentials.json; echo again >~/.claude/.credentials.json'
	[ "$status" -eq 0 ]
	[ "$output" = "{}" ]
	[ "$(cat "$BATS_TEST_TMPDIR/target")" = outside ]
	[ ! -e "$(kept_copy .claude)/.credentials.json" ]
	[ ! -L "$(kept_copy .claude)/.credentials.json" ]
	grep -q host-token "$UDIR/home/.claude/.credentials.json"
}

@test "claude: a subscription login works inside from a copy with placeholders for both tokens" {
	need_agents
	refresh=sk-ant-ort-$RANDOM$RANDOM
	write "$UDIR/home/.claude/.credentials.json" <<-EOF
	{"claudeAiOauth": {"accessToken": "$KEY", "refreshToken": "$refresh",
	  "expiresAt": $(( ($(date +%s) + 86400) * 1000 )),
	  "scopes": ["user:inference"]}}
	EOF
	start_api 'cat ~/.claude/.credentials.json'
	run agent_run claude NO_KEY \
	    -- claude -p --dangerously-skip-permissions "run the command"
	[ "$status" -eq 0 ]
	[[ "$output" == *"~/.claude/.credentials.json (claude: api.anthropic.com, platform.claude.com)"* ]]
	[[ "$output" != *"left out of ~/.claude/.credentials.json"* ]]
	[[ "$output" =~ \"accessToken\":\ \"cordon-phantom-[0-9a-f]{32}\" ]]
	[[ "$output" =~ \"refreshToken\":\ \"cordon-phantom-[0-9a-f]{32}\" ]]
	[[ "$output" != *"$KEY"* ]]
	[[ "$output" != *"$refresh"* ]]
	[ "$(jq -r '.headers.Authorization' "$REQ" | sort -u)" = "Bearer $KEY" ]
	run ! grep -q -e "$KEY" -e "$refresh" <(jq -c .body "$REQ")
	# Not expired: no refresh was sent.
	run ! grep -q oauth/token "$REQ"
}

# Starts the token endpoint of Claude Code (platform.claude.com:443) or
# Codex (auth.openai.com:443) at an address of 127/8 of the test's own
# ($ADDR: the port is fixed), answering a refresh with access token $1,
# refresh token $2 and id token $3 (if given), or with the text $2 when
# $1 is "raw".
start_tokens() {
	local i answer=(--tokens-raw "$2")
	[ "$1" = raw ] ||
	    answer=(--tokens "{\"access_token\": \"$1\", \"refresh_token\": \"$2\"${3:+, \"id_token\": \"$3\"}}")
	ADDR=127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))
	start_bg tokens python3 "$AGENTS_DIR/mockapi.py" --address "$ADDR" \
	    --listen 443 --cert "$T/origin.pem" --key "$T/origin.key" \
	    --log "$REQ" --command true "${answer[@]}"
	for i in $(seq 100); do
		grep -q listening "$BATS_TEST_TMPDIR/tokens.log" && return 0
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/tokens.log" >&2
	return 1
}

@test "claude: an expired login refreshes inside; the new tokens stay outside, and reach the host's file" {
	need_agents
	refresh=sk-ant-ort-$RANDOM$RANDOM
	access2=sk-ant-oat-new-$RANDOM$RANDOM
	refresh2=sk-ant-ort-new-$RANDOM$RANDOM
	creds=$UDIR/home/.claude/.credentials.json
	write "$creds" <<-EOF
	{"claudeAiOauth": {"accessToken": "$KEY", "refreshToken": "$refresh",
	  "expiresAt": $(( ($(date +%s) - 3600) * 1000 )),
	  "scopes": ["user:inference"], "subscriptionType": "max"},
	 "mcpOAuth": {"srv": {"accessToken": "mcp-kept"}}}
	EOF
	chmod 600 "$creds"
	start_api 'cat ~/.claude/.credentials.json; env | grep -e sk-ant -e phantom'
	start_tokens "$access2" "$refresh2"
	run agent_run claude NO_KEY --resolve "platform.claude.com:$ADDR" \
	    --allow-cidr "$ADDR/32" \
	    -- claude -p --dangerously-skip-permissions "run the command"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"run: ~/.claude/.credentials.json: the login was refreshed inside; its new tokens are written to $creds"* ]]
	[ "$(grep -c "the login was refreshed inside" <<<"$output")" -eq 1 ]
	# The token endpoint got the real refresh token, in its member, once:
	# claude stored the new expiry in its copy, which is writable.
	jq -se --arg r "$refresh" '
	    map(select(.path == "/v1/oauth/token") | .body) |
	    length == 1 and .[0].refresh_token == $r and
	    .[0].grant_type == "refresh_token"' "$REQ"
	# The API got the new real access token, and never the old one.
	[ "$(jq -r 'select(.path | startswith("/v1/messages")) |
	    .headers.Authorization' "$REQ" | sort -u)" = "Bearer $access2" ]
	# Inside, placeholders only: the copy the tool printed, as claude
	# wrote it anew with the new expiry, and what the tool's output
	# carried back to the API.
	[[ "$output" =~ \"refreshToken\":\ ?\"cordon-phantom-[0-9a-f]{32}\" ]]
	[[ "$output" =~ \"expiresAt\":\ ?([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" -gt "$(( ($(date +%s) + 3000) * 1000 ))" ]
	for v in "$KEY" "$refresh" "$access2" "$refresh2"; do
		[[ "$output" != *"$v"* ]]
		run ! grep -q -e "$v" <(jq -c 'select(.path |
		    startswith("/v1/messages")) | .body' "$REQ")
	done
	# The host's file holds the new tokens, the rest kept, its mode too.
	[ "$(jq -r .claudeAiOauth.accessToken "$creds")" = "$access2" ]
	[ "$(jq -r .claudeAiOauth.refreshToken "$creds")" = "$refresh2" ]
	jq -e --argjson now "$(date +%s)" \
	    '.claudeAiOauth.expiresAt > ($now + 3000) * 1000' "$creds"
	jq -e '.claudeAiOauth.subscriptionType == "max" and
	    .mcpOAuth.srv.accessToken == "mcp-kept"' "$creds"
	[ "$(stat -c %a "$creds")" = 600 ]
}

@test "claude: a refresh whose new tokens cannot be written back says so, with the fix" {
	need_agents
	refresh=sk-ant-ort-$RANDOM$RANDOM
	creds=$UDIR/home/.claude/.credentials.json
	write "$creds" <<-EOF
	{"claudeAiOauth": {"accessToken": "$KEY", "refreshToken": "$refresh",
	  "expiresAt": $(( ($(date +%s) - 3600) * 1000 )),
	  "scopes": ["user:inference"]}}
	EOF
	start_api true
	start_tokens sk-ant-oat-new-$RANDOM sk-ant-ort-new-$RANDOM
	# The folder the new file would be made in is not the user's to
	# write.
	chmod 555 "$UDIR/home/.claude"
	run agent_run claude NO_KEY --resolve "platform.claude.com:$ADDR" \
	    --allow-cidr "$ADDR/32" \
	    -- claude -p --dangerously-skip-permissions "run the command"
	chmod 755 "$UDIR/home/.claude"
	[ "$status" -eq 0 ]
	[[ "$output" == *"run: ~/.claude/.credentials.json: the login was refreshed inside, but its new tokens could not be written back: cannot make $creds.cordon-"*"Permission denied"* ]]
	[[ "$output" == *"hint: the file on the host holds the old refresh token"*"let your user write $creds and its folder"* ]]
	[ "$(jq -r .claudeAiOauth.refreshToken "$creds")" = "$refresh" ]
	[ -z "$(find "$UDIR/home/.claude" -name '*.cordon-*')" ]
}

@test "claude: a refresh answer cordon cannot rewrite reaches the sandbox as a 502, never as it came" {
	refresh=sk-ant-ort-$RANDOM$RANDOM
	creds=$UDIR/home/.claude/.credentials.json
	write "$creds" <<-EOF
	{"claudeAiOauth": {"accessToken": "$KEY", "refreshToken": "$refresh",
	  "expiresAt": 42}}
	EOF
	# The endpoint echoes the token it got, in a page.
	start_tokens raw "<html>bad token $refresh</html>"
	run agent_run claude NO_KEY --quiet \
	    --resolve "platform.claude.com:$ADDR" --allow-cidr "$ADDR/32" \
	    -- sh -c 'ph=$(jq -r .claudeAiOauth.refreshToken \
	    ~/.claude/.credentials.json)
	    echo "held=$ph"
	    curl -sS -w "status=%{http_code}\n" -H "Content-Type: application/json" \
	    --data "{\"grant_type\": \"refresh_token\", \"refresh_token\": \"$ph\"}" \
	    https://platform.claude.com/v1/oauth/token'
	[ "$status" -eq 0 ]
	[[ "$output" =~ held=cordon-phantom-[0-9a-f]{32} ]]
	[[ "$output" == *"status=502"* ]]
	[[ "$output" == *"cordon: the token endpoint's answer to the refresh of ~/.claude/.credentials.json is not a JSON object"* ]]
	[[ "$output" != *"$refresh"* ]]
	[[ "$output" != *"bad token"* ]]
	# The endpoint got the real token; the host's file is as it was.
	[ "$(jq -r .body.refresh_token "$REQ")" = "$refresh" ]
	[ "$(jq -r .claudeAiOauth.refreshToken "$creds")" = "$refresh" ]
}

# A JWT as OpenAI's logins hold them: RS256's header, the claims $1 (a
# JSON object), and 256 random bytes for its signature.
jwt() {
	python3 - "$1" <<-'EOF'
	import base64, json, os, sys
	def b(d):
	    return base64.urlsafe_b64encode(d).rstrip(b"=").decode()
	print(b(json.dumps({"alg": "RS256", "typ": "JWT"}).encode()) + "." +
	      b(sys.argv[1].encode()) + "." + b(os.urandom(256)))
	EOF
}

# The signature of JWT $1.
jwt_sig() {
	echo "${1##*.}"
}

# The claims of JWT $1, as JSON.
jwt_claims() {
	python3 -c 'import base64, sys
p = sys.argv[1].split(".")[1]
print(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)).decode())' "$1"
}

# A ChatGPT login in the host's ~/.codex/auth.json: id token $ID, access
# token $ACCESS (expiring $1 seconds from now), refresh token $REFRESH,
# account $ACCOUNT, refreshed last on date $2.
codex_login() {
	local auth='"https://api.openai.com/auth": {"chatgpt_plan_type": "plus",
	    "chatgpt_account_id": "'$ACCOUNT'", "chatgpt_user_id": "user-1"}'
	ID=$(jwt '{"email": "dev@example.com", "email_verified": true,
	    "exp": '$(( $(date +%s) + 86400 ))', '"$auth"'}')
	ACCESS=$(jwt '{"exp": '$(( $(date +%s) + $1 ))', '"$auth"'}')
	write "$UDIR/home/.codex/auth.json" <<-EOF
	{"OPENAI_API_KEY": null,
	 "tokens": {"id_token": "$ID", "access_token": "$ACCESS",
	   "refresh_token": "$REFRESH", "account_id": "$ACCOUNT"},
	 "last_refresh": "$2"}
	EOF
	chmod 600 "$UDIR/home/.codex/auth.json"
}

# Runs codex inside with its ChatGPT login: `codex exec ARGS...`, the
# model API chatgpt.com on $PORT, as Codex's own provider with a
# ChatGPT login reaches it (requires_openai_auth).
codex_chatgpt_run() {
	local opts=()
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	agent_run codex NO_KEY --resolve chatgpt.com:127.0.0.1 \
	    --allow-domain "chatgpt.com:$PORT" "${opts[@]}" \
	    -- codex exec --skip-git-repo-check \
	    -s danger-full-access -m mock-model -c model_provider=mock \
	    -c "model_providers.mock={name=\"mock\",base_url=\"https://chatgpt.com:$PORT/backend-api/codex\",requires_openai_auth=true,wire_api=\"responses\"}" \
	    -c "chatgpt_base_url=\"https://chatgpt.com:$PORT/backend-api/\"" \
	    "$@"
}

# The placeholders the tool call printed first, from its words
# "held-NAME=VALUE", in held_id, held_access and held_refresh.
codex_held() {
	local l
	held_id= held_access= held_refresh=
	for l in $(grep -oE 'held-[a-z]+=[A-Za-z0-9._-]+' <<<"$output"); do
		case $l in
		held-id=*) held_id=${held_id:-${l#*=}} ;;
		held-access=*) held_access=${held_access:-${l#*=}} ;;
		held-refresh=*) held_refresh=${held_refresh:-${l#*=}} ;;
		esac
	done
	[ -n "$held_id" ] && [ -n "$held_access" ] && [ -n "$held_refresh" ]
}

# What codex's tool call prints: the login's tokens inside, one a line.
CODEX_PRINT='jq -r ".tokens | \"held-id=\(.id_token)\", \"held-access=\(.access_token)\", \"held-refresh=\(.refresh_token)\"" ~/.codex/auth.json; env'

@test "codex: a ChatGPT login works inside from a copy whose JWTs keep their claims, their signatures placeholders" {
	need_agents
	REFRESH=rt_$RANDOM$RANDOM$RANDOM ACCOUNT=acct-$RANDOM
	codex_login 864000 "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)"
	start_api "$CODEX_PRINT"
	run codex_chatgpt_run -- "run the command"
	[ "$status" -eq 0 ]
	[[ "$output" == *"~/.codex/auth.json (codex: auth.openai.com, chatgpt.com)"* ]]
	[[ "$output" != *"left out of ~/.codex/auth.json"* ]]
	[[ "$output" == *"MOCK-DONE tool said"* ]]
	codex_held
	# Inside: each JWT's header and claims as they are, its signature
	# another; the refresh token a placeholder.
	[ "${held_id%.*}" = "${ID%.*}" ]
	[ "${held_access%.*}" = "${ACCESS%.*}" ]
	[ "${#held_access}" -eq "${#ACCESS}" ]
	[[ "$held_refresh" =~ ^cordon-phantom-[0-9a-f]{32}$ ]]
	for v in "$(jwt_sig "$ID")" "$(jwt_sig "$ACCESS")" "$REFRESH"; do
		[[ "$output" != *"$v"* ]]
		run ! grep -q -e "$v" <(jq -c .body "$REQ")
	done
	# The model API got the real access token, with the account.
	jq -se --arg a "Bearer $ACCESS" --arg id "$ACCOUNT" '
	    map(select(.path | endswith("/responses")) | .headers |
	    with_entries(.key |= ascii_downcase)) | length >= 2 and
	    all(.authorization == $a and ."chatgpt-account-id" == $id)' "$REQ"
	# Not expired, refreshed lately: no refresh was sent.
	run ! grep -q oauth/token "$REQ"
}

@test "codex: an expired ChatGPT login refreshes inside; the new tokens stay outside, and reach the host's file" {
	need_agents
	REFRESH=rt_$RANDOM$RANDOM$RANDOM ACCOUNT=acct-$RANDOM
	auth=$UDIR/home/.codex/auth.json
	codex_login -3600 2020-01-01T00:00:00.000000Z
	old_id=$ID old_access=$ACCESS
	codex_login 864000 2020-01-01T00:00:00.000000Z
	new_id=$ID new_access=$ACCESS new_refresh=rt_new_$RANDOM$RANDOM
	ID=$old_id ACCESS=$old_access
	jq --arg i "$ID" --arg a "$ACCESS" '.tokens.id_token = $i |
	    .tokens.access_token = $a | .kept = "yes"' "$auth" >"$auth.new"
	mv "$auth.new" "$auth"
	chmod 600 "$auth"
	start_api "$CODEX_PRINT"
	start_tokens "$new_access" "$new_refresh" "$new_id"
	run codex_chatgpt_run --resolve "auth.openai.com:$ADDR" \
	    --allow-cidr "$ADDR/32" -- "run the command"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"run: ~/.codex/auth.json: the login was refreshed inside; its new tokens are written to $auth"* ]]
	[ "$(grep -c "the login was refreshed inside" <<<"$output")" -eq 1 ]
	[[ "$output" == *"MOCK-DONE tool said"* ]]
	# The token endpoint got the real refresh token, in its member,
	# once: codex renamed its new login over its copy, a plain file of
	# the kept ~/.codex/.
	jq -se --arg r "$REFRESH" '
	    map(select(.path == "/oauth/token") | .body) |
	    length == 1 and .[0].refresh_token == $r and
	    .[0].grant_type == "refresh_token"' "$REQ"
	# The model API got the new real access token, never the old one,
	# though codex sent the copy's placeholder still.
	[ "$(jq -r 'select(.path | endswith("/responses")) | .headers |
	    with_entries(.key |= ascii_downcase) | .authorization' "$REQ" |
	    sort -u)" = "Bearer $new_access" ]
	# Inside, what codex stored after the refresh: the new JWTs' claims,
	# their signatures placeholders, and a placeholder refresh token.
	codex_held
	[ "${held_access%.*}" = "${new_access%.*}" ]
	[ "${held_id%.*}" = "${new_id%.*}" ]
	[ "$held_access" != "$new_access" ]
	[[ "$held_refresh" =~ ^cordon-phantom-[0-9a-f]{32}$ ]]
	# The copy is gone from the kept folder with the run.
	[ ! -e "$(kept_copy .codex)/auth.json" ]
	for v in "$(jwt_sig "$old_id")" "$(jwt_sig "$old_access")" "$REFRESH" \
	    "$(jwt_sig "$new_id")" "$(jwt_sig "$new_access")" "$new_refresh"; do
		[[ "$output" != *"$v"* ]]
		run ! grep -q -e "$v" <(jq -c 'select(.path |
		    endswith("/responses")) | .body' "$REQ")
	done
	# The host's file holds the new tokens and the date, the rest kept,
	# its mode too.
	jq -e --arg i "$new_id" --arg a "$new_access" --arg r "$new_refresh" \
	    --arg acct "$ACCOUNT" '.tokens.id_token == $i and
	    .tokens.access_token == $a and .tokens.refresh_token == $r and
	    .tokens.account_id == $acct and .kept == "yes" and
	    .last_refresh > "2026"' "$auth"
	[ "$(stat -c %a "$auth")" = 600 ]
}

@test "session start --agent claude: each command of the session holds the placeholder, in the kept state" {
	cd "$WS"
	SID=$(as_user "$UDIR/home" env "ANTHROPIC_API_KEY=$KEY" "$UCORDON" \
	    session start --agent claude 2>"$BATS_TEST_TMPDIR/start.err" 3>&-)
	cat "$BATS_TEST_TMPDIR/start.err"
	[ -n "$SID" ]
	run as_user "$UDIR/home" "$UCORDON" run --session "$SID" -- sh -c \
	    'printenv ANTHROPIC_API_KEY; echo "$CLAUDE_CONFIG_DIR"; ls -A ~/.claude'
	(as_user "$UDIR/home" "$UCORDON" session stop "$SID" 3>&-)
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^cordon-phantom-[0-9a-f]{32}$ ]]
	[ "${lines[1]}" = "$UDIR/home/.claude" ]
	[ "${lines[2]}" = .claude.json ]
	[[ "$output" != *"$KEY"* ]]
}

# Waits up to 30 s for the tmux pane to show $1.
pane_has() {
	local i
	for i in $(seq 150); do
		tmux -S "$TMUX_SOCK" capture-pane -p -t tui | grep -qF -- "$1" &&
		    return 0
		sleep 0.2
	done
	tmux -S "$TMUX_SOCK" capture-pane -p -t tui >&2
	echo "the pane never showed: $1" >&2
	return 1
}

# Sends keys to the pane, a second after what they answer showed: the
# TUI reads its input once it has drawn the question.
press() {
	sleep 1
	tmux -S "$TMUX_SOCK" send-keys -t tui "$@"
}

@test "claude's TUI inside, under a pty: it starts and takes a prompt; the tool call holds the placeholder" {
	need_agents
	start_api 'echo "key=$ANTHROPIC_API_KEY"'
	# The run, as agent_run makes it, in a script the pane runs.
	{
		echo "TEST_USER=$TEST_USER UDIR=$UDIR WS=$WS KEY=$KEY PORT=$PORT"
		echo "T=$T AGENTS_BIN=$AGENTS_BIN UCORDON=$UCORDON"
		declare -f ensure_test_user as_user agent_run
		echo 'agent_run claude ANTHROPIC_API_KEY' \
		    '-- claude --dangerously-skip-permissions'
	} >"$UDIR/tui.sh"
	TMUX_SOCK="$BATS_TEST_TMPDIR/tmux.sock"
	tmux -S "$TMUX_SOCK" new-session -d -s tui -x 150 -y 40 \
	    "bash $UDIR/tui.sh; echo exited \$?; sleep 60" 3>&-
	# Claude's own questions: the folder's trust, the key (the
	# placeholder, new each run), its bypass mode.  Then the prompt.
	pane_has "Yes, I trust this folder"
	press Down Enter
	pane_has "Do you want to use this API key"
	press Up Enter
	pane_has "Yes, I accept"
	press Down Enter
	pane_has "bypass permissions on"
	press "run the command"
	press Enter
	pane_has "MOCK-DONE tool said: key=cordon-phantom-"
	[ "$(jq -r '.headers["x-api-key"]' "$REQ" | sort -u)" = "$KEY" ]
	run ! grep -q "$KEY" <(tmux -S "$TMUX_SOCK" capture-pane -p -t tui)
	# It ends as a user ends it, and cordon run with it.
	press "/exit"
	press Enter
	pane_has "exited 0"
}

@test "codex's TUI inside, under a pty: it starts and takes a prompt; the tool call holds the placeholder" {
	need_agents
	start_api 'echo "key=$OPENAI_API_KEY"'
	{
		echo "TEST_USER=$TEST_USER UDIR=$UDIR WS=$WS KEY=$KEY PORT=$PORT"
		echo "T=$T AGENTS_BIN=$AGENTS_BIN UCORDON=$UCORDON"
		echo "OPENCODE_BIN=$OPENCODE_BIN"
		declare -f ensure_test_user as_user agent_run
		echo 'agent_run codex OPENAI_API_KEY -- codex' \
		    '-s danger-full-access -m mock-model -c model_provider=mock' \
		    "-c 'model_providers.mock={name=\"mock\",base_url=\"https://api.openai.com:$PORT/v1\",env_key=\"OPENAI_API_KEY\",wire_api=\"responses\"}'"
	} >"$UDIR/tui.sh"
	TMUX_SOCK="$BATS_TEST_TMPDIR/tmux.sock"
	tmux -S "$TMUX_SOCK" new-session -d -s tui -x 150 -y 40 \
	    "bash $UDIR/tui.sh; echo exited \$?; sleep 60" 3>&-
	# Codex asks nothing first here: the prompt is the first screen.
	pane_has "Ask Codex to do anything"
	press "run the command"
	press Enter
	pane_has "MOCK-DONE tool said:"
	pane_has "key=cordon-phantom-"
	[ "$(jq -r '.headers.authorization' "$REQ" | sort -u)" = "Bearer $KEY" ]
	run ! grep -q "$KEY" <(tmux -S "$TMUX_SOCK" capture-pane -p -t tui)
	# Its announcement fetch is the profile's: no refusal line is
	# drawn over the screen.
	run ! grep -q "network.allow" <(tmux -S "$TMUX_SOCK" capture-pane -p -t tui)
	press "/quit"
	press Enter
	pane_has "exited 0"
}
