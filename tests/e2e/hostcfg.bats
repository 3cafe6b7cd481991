#!/usr/bin/env bats
# What agents and editors on the host load or run when the user opens
# the workspace (filesystem.host_config: .claude/, .mcp.json,
# .vscode/tasks.json, .envrc, ...) is judged as git's hooks are: one
# the command made is moved aside with the way back, said on the
# terminal and listed in --report, however the run ends (by itself,
# killed, or a session's command); one that was there is the user's,
# read-only inside, and left alone.  The sandbox runs as the
# unprivileged test user.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	MARK="$UDIR/pwned"
	SID=
}

teardown() {
	if [ -n "$SID" ]; then
		(as_user "$UDIR/home" timeout 20 "$UCORDON" session stop \
		    "$SID" >/dev/null 2>&1) || true
	fi
	teardown_bg
	sandbox_teardown
}

# as_me CMD...: CMD as the test user, in the workspace (no `run`).
as_me() {
	(cd "$WS" && as_user "$UDIR/home" "$@")
}

# The shell command that writes what four host programs run: Claude
# Code's SessionStart hook, an MCP server, a VS Code task run when the
# folder opens, and direnv's .envrc; each would touch $MARK.
plant() {
	cat <<-EOF
	mkdir -p .claude .vscode &&
	echo '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch $MARK"}]}]}}' >.claude/settings.json &&
	echo '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch $MARK"]}}}' >.mcp.json &&
	echo '{"version": "2.0.0", "tasks": [{"label": "x", "type": "shell", "command": "touch $MARK", "runOptions": {"runOn": "folderOpen"}}]}' >.vscode/tasks.json &&
	echo 'touch $MARK' >.envrc
	EOF
}

# What each planted file makes the host run, run as its program would
# (the commands it names, by the file's own format), in the workspace.
run_as_host() {
	(cd "$WS" || exit 1
	[ -f .claude/settings.json ] && sh -c "$(jq -r \
	    '.hooks.SessionStart[].hooks[].command' .claude/settings.json)"
	[ -f .mcp.json ] && jq -r '.mcpServers[] | [.command] + .args |
	    @sh' .mcp.json | xargs sh -c 'exec "$@"' sh
	[ -f .vscode/tasks.json ] && sh -c "$(jq -r '.tasks[] |
	    select(.runOptions.runOn == "folderOpen") | .command' \
	    .vscode/tasks.json)"
	[ -f .envrc ] && sh .envrc
	true)
}

# moved NAME: NAME is gone from the workspace, and there is one
# NAME.cordon-quarantine-* in its place, said with the way back.
moved() {
	[ ! -e "$WS/$1" ] && [ ! -L "$WS/$1" ]
	ls -d "$WS/$1".cordon-quarantine-*
	[[ $output == *"moved aside $WS/$1, "*"made during the run, which an agent or editor on the host would load or run when the workspace is opened (filesystem.host_config): now $WS/$1.cordon-quarantine-"* ]]
	[[ $output == *"hint: look at it with: "*" $WS/$1.cordon-quarantine-"*"and only if you trust it, take it back with: mv $WS/$1.cordon-quarantine-"*" $WS/$1"* ]]
}

@test "host config: what the command writes for Claude Code, an MCP client, VS Code and direnv is moved aside, said with the way back, in --report; status 125" {
	# On the host, without cordon, each runs.
	as_me sh -c "$(plant)"
	run_as_host
	[ -e "$MARK" ]
	rm -rf "$MARK" "$WS/.claude" "$WS/.mcp.json" "$WS/.vscode" "$WS/.envrc"

	run in_sandbox --quiet --report "$UDIR/r.json" -- sh -c "$(plant)"
	echo "$output"
	[ "$status" -eq 125 ]
	local f
	for f in .claude .mcp.json .vscode/tasks.json .envrc; do
		moved "$f"
	done
	run_as_host
	[ ! -e "$MARK" ]
	jq -e --arg ws "$WS" '[.host_config.moved_aside[].path] | sort ==
	    ([$ws + "/.claude", $ws + "/.envrc", $ws + "/.mcp.json",
	    $ws + "/.vscode/tasks.json"] | sort)' "$UDIR/r.json"
	jq -e '.host_config.moved_aside | all(.moved_to != null and
	    (.moved_to | contains(".cordon-quarantine-")) and .error == null)' \
	    "$UDIR/r.json"
	jq -e --arg ws "$WS" '.host_config.watched | index($ws + "/.envrc")' \
	    "$UDIR/r.json"
	[ "$(jq -r .exit_status "$UDIR/r.json")" = 125 ]
	# A folder is listed, a file shown.
	[[ $output == *"look at it with: ls -laR $WS/.claude.cordon-quarantine-"* ]]
	[[ $output == *"look at it with: cat $WS/.envrc.cordon-quarantine-"* ]]
	# The printed way back restores it.
	line=$(grep -o "take it back with: mv [^ ]*/\.envrc\.cordon-quarantine-[^ ]* [^ ]*" <<<"$output")
	as_me sh -c "${line#take it back with: }"
	[ "$(cat "$WS/.envrc")" = "touch $MARK" ]
}

# claude_starts: the real Claude Code CLI (tests/agents, pinned), started
# in the workspace as the user starts it, in print mode, with a model API
# that answers nothing (a closed port on loopback).  Its user settings
# (a home of its own) hold a SessionStart hook that touches
# $UDIR/started; once that ran, and a second more, the CLI is ended.
claude_starts() {
	local cli="$BATS_TEST_DIRNAME/../agents/node_modules/.bin/claude" i pid
	[ -x "$cli" ] || {
		echo "missing Claude Code: run 'make deps-check' (tests/agents)" >&2
		return 1
	}
	rm -f "$UDIR/started"
	write "$UDIR/cchome/.claude/settings.json" <<-EOF
	{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch $UDIR/started"}]}]}}
	EOF
	(cd "$WS" && HOME="$UDIR/cchome" ANTHROPIC_API_KEY=sk-ant-test \
	    ANTHROPIC_BASE_URL="http://127.0.0.1:$(free_port)" \
	    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
	    exec "$cli" -p hi --max-turns 1 </dev/null \
	    >"$BATS_TEST_TMPDIR/claude.log" 2>&1 3>&-) &
	pid=$!
	for i in $(seq 300); do
		[ -e "$UDIR/started" ] && break
		sleep 0.1
	done
	sleep 1
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	[ -e "$UDIR/started" ] || { cat "$BATS_TEST_TMPDIR/claude.log"; false; }
}

@test "host config: the real Claude Code CLI runs the workspace's SessionStart hook on the host; the one a command writes inside is moved aside, and the CLI runs nothing" {
	local hook='{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch '"$MARK"'"}]}]}}'
	# On the host, without cordon: the hook runs.
	as_me sh -c "mkdir -p .claude && echo '$hook' >.claude/settings.json"
	claude_starts
	[ -e "$MARK" ]
	rm -rf "$MARK" "$WS/.claude"
	run in_sandbox --quiet -- sh -c "mkdir -p .claude &&
	    echo '$hook' >.claude/settings.json"
	echo "$output"
	[ "$status" -eq 125 ]
	moved .claude
	claude_starts
	[ ! -e "$MARK" ]
}

@test "host config: a link the command made on the way, or in the place, is moved aside; nothing is followed out" {
	run in_sandbox --quiet -- sh -c "mkdir -p real &&
	    echo '{\"mcpServers\": {}}' >real/mcp.json &&
	    ln -s real .cursor && ln -s real .claude"
	echo "$output"
	[ "$status" -eq 125 ]
	moved .cursor
	moved .claude
	[[ $output == *"moved aside $WS/.cursor, a symbolic link to configuration made during the run"* ]]
	[[ $output == *"look at it with: ls -l $WS/.cursor.cordon-quarantine-"* ]]
	# What the links pointed to is the command's ordinary work: kept.
	[ -f "$WS/real/mcp.json" ]
}

@test "host config: a folder the command made unsearchable is not called clean: said, held, status 125" {
	run in_sandbox --quiet --report "$UDIR/r.json" -- sh -c 'mkdir .cursor &&
	    echo "{\"mcpServers\": {}}" >.cursor/mcp.json && chmod 0 .cursor'
	echo "$output"
	[ "$status" -eq 125 ]
	[[ $output == *"the check could not look at $WS/.cursor/mcp.json (Permission denied), where an agent or editor on the host would load configuration made during the run (filesystem.host_config), so it is not called clean"* ]]
	[[ $output == *"hint: look at it with: ls -la $WS/.cursor/mcp.json"* ]]
	jq -e '.host_config.moved_aside[0].unread and
	    .host_config.moved_aside[0].moved_to == null' "$UDIR/r.json"
	chmod 755 "$WS/.cursor"
}

@test "host config: the user's own files stay, and the command cannot change or replace them; what is not listed is its own" {
	as_me sh -c 'mkdir -p .claude .vscode &&
	    echo "{\"permissions\": {}}" >.claude/settings.json &&
	    echo "{\"editor.tabSize\": 8}" >.vscode/settings.json &&
	    echo "export A=1" >.envrc'
	before=$(cat "$WS/.claude/settings.json" "$WS/.vscode/settings.json" \
	    "$WS/.envrc")
	# --dry-run says which is kept read-only, which watched.
	run in_sandbox --dry-run -- true
	[[ $output == *"$WS/.claude: bind, read-only (built-in defaults: filesystem.host_config["* ]]
	[[ $output == *"$WS/.vscode/settings.json: bind, read-only (built-in defaults: filesystem.host_config["* ]]
	[[ $output == *"$WS/.envrc: bind, read-only (built-in defaults: filesystem.host_config["* ]]
	[[ $output == *"$WS/.mcp.json: not there, and not blocked: what the command makes there is moved aside after the run (filesystem.host_config)"* ]]
	run in_sandbox --quiet -- sh -c '
	    echo x >.claude/hooks.sh || echo refused-new
	    echo "{}" >.vscode/settings.json || echo refused-edit
	    echo "touch x" >>.envrc || echo refused-append
	    rm -f .envrc || echo refused-rm
	    mv .vscode v2 || echo refused-mv
	    echo "{\"recommendations\": []}" >.vscode/extensions.json &&
	    cat .envrc'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *refused-new*refused-edit*refused-append*refused-rm*refused-mv* ]]
	[[ $output == *"export A=1"* ]]
	[[ $output != *"moved aside"* ]]
	[ "$before" = "$(cat "$WS/.claude/settings.json" \
	    "$WS/.vscode/settings.json" "$WS/.envrc")" ]
	[ ! -e "$WS/.claude/hooks.sh" ]
	# A scaffolder's recommendations run nothing: kept.
	[ -f "$WS/.vscode/extensions.json" ]
	run ls -a "$WS" "$WS/.vscode"
	[[ $output != *cordon-quarantine* ]]
}

@test "host config: a session's command: moved aside before its cordon run --session returns; the next command is not blamed" {
	SID=$(cd "$WS" && as_user "$UDIR/home" "$UCORDON" session start \
	    --read-only "$UDIR/bin" 2>"$BATS_TEST_TMPDIR/start.err" 3>&-)
	[ -n "$SID" ] || { cat "$BATS_TEST_TMPDIR/start.err"; false; }
	run as_me "$UCORDON" run --session "$SID" --report "$UDIR/r.json" \
	    -- sh -c "$(plant)"
	echo "$output"
	[ "$status" -eq 125 ]
	moved .claude
	moved .envrc
	jq -e '.host_config.moved_aside | length == 4' "$UDIR/r.json"
	run as_me "$UCORDON" run --session "$SID" -- true
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *"moved aside"* ]]
	# Made again in the same session: moved again, beside the first.
	run as_me "$UCORDON" run --session "$SID" -- sh -c 'echo x >.envrc'
	[ "$status" -eq 125 ]
	[ ! -e "$WS/.envrc" ]
	[ "$(ls -d "$WS"/.envrc.cordon-quarantine-* | wc -l)" -eq 2 ]
}

@test "host config: --run-between: what a background process writes after its command's check is moved aside by the next command's check, or by the stop's" {
	SID=$(cd "$WS" && as_user "$UDIR/home" "$UCORDON" session start \
	    --run-between --read-only "$UDIR/bin" \
	    2>"$BATS_TEST_TMPDIR/start.err" 3>&-)
	[ -n "$SID" ] || { cat "$BATS_TEST_TMPDIR/start.err"; false; }
	run as_me "$UCORDON" run --session "$SID" -- sh -c \
	    '(sleep 1; echo "touch x" >.envrc) >/dev/null 2>&1 &'
	[ "$status" -eq 0 ]
	for i in $(seq 50); do
		[ -e "$WS/.envrc" ] && break
		sleep 0.1
	done
	[ -f "$WS/.envrc" ]
	run as_me "$UCORDON" run --session "$SID" -- true
	echo "$output"
	[ "$status" -eq 125 ]
	moved .envrc
	# With no next command, the stop's check takes it.
	run as_me "$UCORDON" run --session "$SID" -- sh -c \
	    '(sleep 1; mkdir .vscode && echo "{}" >.vscode/tasks.json) \
	    >/dev/null 2>&1 &'
	[ "$status" -eq 0 ]
	wait_for test -f "$WS/.vscode/tasks.json"
	run as_me timeout 20 "$UCORDON" session stop "$SID"
	echo "$output"
	SID=
	moved .vscode/tasks.json
	# What an earlier command was told is not told again.
	[[ $output != *"moved aside $WS/.envrc"* ]]
}

@test "host config: a run killed with SIGKILL of its process group: the sentinel moves aside what it wrote" {
	write "$UDIR/harness.py" <<-'EOF'
	import os, signal, subprocess, sys, time
	flag, cmd = sys.argv[1], sys.argv[2:]
	p = subprocess.Popen(cmd, start_new_session=True)
	end = time.time() + 30
	while not os.path.exists(flag) and p.poll() is None and time.time() < end:
	    time.sleep(0.05)
	os.killpg(p.pid, signal.SIGKILL)
	print("status", p.wait())
	EOF
	run as_me python3 "$UDIR/harness.py" "$WS/planted" "$UCORDON" run \
	    --quiet --read-only "$UDIR/bin" -- sh -c \
	    "$(plant) && touch planted && sleep 30"
	echo "$output"
	[[ $output == *"status -9"* ]]
	[[ $output == *"ended before it could check its writable folders"* ]]
	moved .claude
	moved .mcp.json
	moved .vscode/tasks.json
	moved .envrc
	run_as_host
	[ ! -e "$MARK" ]
}

@test "host config: a user's policy adds a path; a workspace policy adds one but cannot take one away" {
	write "$UDIR/home/.config/cordon/policy.json" <<-'EOF'
	{"version": 1, "filesystem": {"host_config": [".tool/hooks.json"]}}
	EOF
	write "$WS/.cordon/policy.json" <<-'EOF'
	{"version": 1, "filesystem": {"host_config": ["Taskfile.hooks"]}}
	EOF
	run as_me "$UCORDON" policy show --plain
	echo "$output"
	jq -e --arg ws "$WS" '.filesystem.host_config | index($ws + "/.envrc")
	    and index($ws + "/.tool/hooks.json")
	    and index($ws + "/Taskfile.hooks")' <<<"$output"
	run in_sandbox --quiet -- sh -c 'mkdir -p .tool &&
	    echo x >.tool/hooks.json && echo y >.tool/other &&
	    echo z >Taskfile.hooks && echo "touch x" >.envrc'
	echo "$output"
	[ "$status" -eq 125 ]
	moved .tool/hooks.json
	moved Taskfile.hooks
	moved .envrc
	[ -f "$WS/.tool/other" ]
	# A workspace policy that writes the key empty removes nothing.
	write "$WS/.cordon/policy.json" <<-'EOF'
	{"version": 1, "filesystem": {"host_config": []}}
	EOF
	run in_sandbox --quiet -- sh -c 'echo "touch x" >.envrc'
	echo "$output"
	[ "$status" -eq 125 ]
	[ ! -e "$WS/.envrc" ]
}
