#!/usr/bin/env bats
# Ordinary agent work behaves inside as on the host: the tools an agent
# runs in a repository (git, cargo, npm...) see it as they would without
# cordon, and the host's tools see it so while a run is under way.  Each
# test first does the task on the host, then inside, as the test user.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	as_me sh -c 'git init -q && git config user.email t@example.test &&
	    git config user.name t && echo x > f && git add f &&
	    git commit -qm init'
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# as_me CMD...: CMD as the test user, in the workspace (no `run`).
as_me() {
	(cd "$WS" && as_user "$UDIR/home" "$@")
}

# waits up to 30 s for a file to exist
wait_file() {
	local i
	for i in $(seq 300); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

@test "while a run is under way, git on the host works in its repository; nothing is left behind" {
	as_me git status --short
	start_bg run in_sandbox --quiet -- sh -c \
	    'touch started; while [ ! -e stop ]; do sleep 0.1; done'
	wait_file "$WS/started"
	# A placeholder git reads (commondir) must read as git's own.
	run as_me git status --short
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *fatal* ]]
	run as_me git log --oneline
	[ "$status" -eq 0 ]
	touch "$WS/stop"
	wait "$BG_PID"
	[ ! -e "$WS/.git/commondir" ]
	[ ! -e "$WS/.git/gitdir" ]
}

@test "cargo new in a repository's folder joins that repository, as on the host" {
	# On the host: cargo finds the repository above and makes none.
	as_me cargo new -q host-crate
	[ -d "$WS/host-crate" ]
	[ ! -e "$WS/host-crate/.git" ]
	rm -rf "$WS/host-crate"
	run in_sandbox --quiet -- sh -c 'cargo new -q app && cd app &&
	    cargo run -q --offline'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"Hello, world!"* ]]
	[ -f "$WS/app/Cargo.toml" ]
	[ ! -e "$WS/app/.git" ]
	[[ $(as_me git status --short) == *"app/"* ]]
}

@test "git init, clone, submodule add and worktree add inside: kept as made, the command's status, listed in the report" {
	as_me git init -q --bare --initial-branch=main "$UDIR/src.git"
	as_me git -C "$WS" push -q "$UDIR/src.git" HEAD:refs/heads/main
	# (/tmp is private inside: the source is shown read-only.)
	run in_sandbox --quiet --report "$UDIR/r.json" --read-only \
	    "$UDIR/src.git" -- sh -c "
	    git init -q fresh &&
	    git clone -q '$UDIR/src.git' cloned &&
	    git -c protocol.file.allow=always submodule add -q \
	        '$UDIR/src.git' vendor/lib &&
	    git worktree add -q wt -b wt &&
	    git -C cloned log --oneline | wc -l"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *quarantined* ]]
	[ -d "$WS/fresh/.git" ]
	[ -d "$WS/cloned/.git" ]
	[ -f "$WS/vendor/lib/.git" ]
	[ -f "$WS/wt/.git" ]
	jq -e '.repositories.quarantined == [] and
	    (.repositories.kept | length >= 4)' "$UDIR/r.json"
	# On the host they are repositories as git made them.
	[ "$(as_me git -C "$WS/cloned" rev-parse HEAD)" = \
	    "$(as_me git -C "$WS" rev-parse HEAD)" ]
	as_me git -C "$WS/wt" status --short
	as_me git -C "$WS/vendor/lib" status --short
	[[ $(as_me git -C "$WS" status --short) != *cordon-quarantine* ]]
}

@test "a repository made inside that could make git run a program is quarantined, each way, with how to look and take it back" {
	local plants=(
	    "git -C r config core.fsmonitor 'touch $UDIR/mark'"
	    "git -C r config core.hooksPath .hooks"
	    "git -C r config include.path ../../evil.cfg"
	    "git -C r config filter.x.smudge 'touch $UDIR/mark'"
	    "printf '#!/bin/sh\ntouch $UDIR/mark\n' >r/.git/hooks/post-checkout &&
	     chmod +x r/.git/hooks/post-checkout"
	)
	local p
	for p in "${plants[@]}"; do
		rm -rf "$WS/r"
		run in_sandbox --quiet -- sh -c "git init -q r && $p"
		echo "$p: $output"
		[ "$status" -eq 125 ]
		[[ $output == *"quarantined $WS/r/.git, a git repository"* ]]
		[[ $output == *"hint: look at it with: cat $WS/r/.git.cordon-quarantine-"*"and only if you trust it, take it back with: "*"&& mv "* ]]
		[ ! -e "$WS/r/.git" ]
		as_me git -C "$WS/r" status >/dev/null 2>&1 || true
		[ ! -e "$UDIR/mark" ]
		# What was moved is no untracked noise in the repository around.
		[[ $(as_me git -C "$WS" status --short) != *cordon-quarantine* ]]
	done
}

@test "a quarantined repository is none to git run inside it either, as a shell prompt runs it on cd; the printed way back restores it" {
	run in_sandbox --quiet -- sh -c "git init -q r &&
	    git -C r -c user.name=a -c user.email=a@example.test \
	    commit -q --allow-empty -m x &&
	    git -C r config core.worktree '$WS/r' &&
	    git -C r config core.fsmonitor 'touch $UDIR/mark; false' &&
	    git -C r config core.pager 'touch $UDIR/mark; cat'"
	echo "$output"
	[ "$status" -eq 125 ]
	[[ $output == *"moved to $WS/r/.git.cordon-quarantine-"*", and its HEAD files renamed HEAD.cordon-quarantine-"*"even when run inside it"* ]]
	q=$(ls -d "$WS"/r/.git.cordon-quarantine-*)
	# In it and in its hooks, as a prompt runs git on cd, and git log
	# at a terminal (its pager): no repository of its own there.
	for d in "$q" "$q/hooks"; do
		as_me sh -c 'cd "$0" && git status; git log -1' "$d" \
		    >/dev/null 2>&1 || true
		as_me script -qec "cd '$d' && git log -1" /dev/null \
		    >/dev/null 2>&1 || true
	done
	[ ! -e "$UDIR/mark" ]
	# The way back the run printed, as the user would paste it.
	back=$(sed -n 's/.*take it back with: //p' <<<"$output")
	[ -n "$back" ]
	as_me sh -c "$back"
	[ -f "$WS/r/.git/HEAD" ]
	[ -f "$WS/r/.git/logs/HEAD" ]
	[ ! -e "$q" ]
	[ "$(as_me git -C "$WS/r" config core.pager)" = "touch $UDIR/mark; cat" ]
	[ "$(as_me git -C "$WS/r" rev-list --count HEAD)" -eq 1 ]
}

@test "git remote add, push -u, branch --set-upstream-to, git config user.name and submodule init change the protected config, as on the host" {
	as_me git init -q --bare --initial-branch=main "$UDIR/remote.git"
	as_me git -C "$WS" branch -M main
	run in_sandbox --quiet --report "$UDIR/r.json" --write "$UDIR/remote.git" \
	    -- sh -c "
	    git remote add origin '$UDIR/remote.git' &&
	    git push -q -u origin main &&
	    git branch --set-upstream-to=origin/main main &&
	    git config user.name Agent &&
	    git config --get branch.main.remote"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *$'\norigin\n'* ]]
	# The remote the command added is said, with where it goes.
	[[ $output == *"cordon: the command added remote.origin.url = $UDIR/remote.git in $WS/.git/config"* ]]
	# On the host, the same config, as git wrote it inside.
	[ "$(as_me git -C "$WS" config --get remote.origin.url)" = \
	    "$UDIR/remote.git" ]
	[ "$(as_me git -C "$WS" config --get branch.main.merge)" = \
	    refs/heads/main ]
	[ "$(as_me git -C "$WS" config --get user.name)" = Agent ]
	[ "$(as_me git -C "$UDIR/remote.git" rev-parse main)" = \
	    "$(as_me git -C "$WS" rev-parse HEAD)" ]
	[ ! -e "$WS/.git/config.lock" ]
	jq -e '[.git_config[] | select(.applied)] | length >= 4' "$UDIR/r.json"
	jq -e '[.git_config[] | select(.applied | not)] == []' "$UDIR/r.json"
}

@test "a config change that could make git run a program (husky's core.hooksPath, core.fsmonitor) is held back, said with the command that applies it" {
	run in_sandbox --quiet --report "$UDIR/r.json" -- sh -c "
	    git config core.hooksPath .husky && echo set &&
	    git config core.fsmonitor 'touch $UDIR/mark' && echo set"
	echo "$output"
	# The tool is told it worked, so the work around it goes on...
	[ "$status" -eq 0 ]
	[ "$(grep -c '^set$' <<<"$output")" -eq 2 ]
	# ...but nothing was written, and it is said, even with --quiet.
	run as_me git -C "$WS" config --get core.hooksPath
	[ "$status" -eq 1 ]
	as_me git -C "$WS" status >/dev/null
	[ ! -e "$UDIR/mark" ]
	run in_sandbox --quiet -- git config core.hooksPath .husky
	[[ $output == *"held back 1 change to git config that could make git on the host run a program"* ]]
	[[ $output == *"set core.hooksPath = .husky in $WS/.git/config"* ]]
	[[ $output == *"hint: after reading it, apply it with: git config --file '$WS/.git/config' --add 'core.hooksPath' '.husky'"* ]]
	jq -e '.git_config | map(select(.applied | not)) | length == 2' \
	    "$UDIR/r.json"
	# The command the hint gives does it.
	cmd=$(jq -r '.git_config[0].apply' "$UDIR/r.json")
	as_me sh -c "$cmd"
	[ "$(as_me git -C "$WS" config --get core.hooksPath)" = .husky ]
}

@test "what the command leaves in /tmp goes with the run, and the run says so once, with the fix; --dry-run says /tmp is the run's own" {
	run in_sandbox --report "$UDIR/r.json" -- sh -c \
	    'echo a >/tmp/a; mkdir /tmp/d; echo bb >/tmp/d/b; echo c >/var/tmp/c'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'in /tmp and /var/tmp' <<<"$output")" -eq 1 ]
	[[ $output == *"the command left 3 files (7 bytes) in /tmp and /var/tmp, which are this run's own and went with it"* ]]
	[[ $output == *"hint: write what a later command needs into the workspace"* ]]
	jq -e '.private_tmp == {"files": 3, "bytes": 7, "all": true}' \
	    "$UDIR/r.json"
	run in_sandbox -- cat /tmp/a
	[ "$status" -ne 0 ]
	[[ $output != *"in /tmp and /var/tmp"* ]]
	run in_sandbox --dry-run -- true
	[[ $output == *"/tmp: tmpfs, writable (a private /tmp)"* ]]
}

@test "a /var/tmp the run binds from the host (--write) is the host's: what is in it is not said to go with the run" {
	f=/var/tmp/cordon-kept.$$.$BATS_TEST_NUMBER
	run in_sandbox --write /var/tmp -- sh -c "echo a >/tmp/a; echo b >$f"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cat "$f")" = b ]
	rm -f "$f"
	[[ $output == *"the command left 1 file (2 bytes) in /tmp and /var/tmp"* ]]
}

@test "a git hook written inside (as pre-commit install writes one) runs inside, never reaches the host, and is said once with the fix" {
	run in_sandbox -- sh -c '
	    printf "#!/bin/sh\necho hook-ran-inside\n" >.git/hooks/pre-commit &&
	    chmod +x .git/hooks/pre-commit &&
	    git commit -q --allow-empty -m inside && echo committed'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *hook-ran-inside* ]]
	[[ $output == *committed* ]]
	[ ! -e "$WS/.git/hooks/pre-commit" ]
	[ "$(grep -c 'git hooks the command wrote were not kept' <<<"$output")" -eq 1 ]
	[[ $output == *"were not kept, since git on the host would run them: $WS/.git/hooks/pre-commit"* ]]
	[[ $output == *"hint: to apply them, run what wrote them"*"again on the host, if you trust it"* ]]
	# The host's commit runs no hook of the command's.
	run as_me git -C "$WS" commit -q --allow-empty -m host
	[ "$status" -eq 0 ]
	[[ $output != *hook-ran-inside* ]]
	[ "$(as_me git -C "$WS" log --format=%s -1 HEAD~1)" = inside ]
}

@test "a loopback port the host serves but the sandbox does not: said once, with network.host_ports; a server inside on it is not" {
	local port
	port=$(free_port)
	start_bg hostsrv python3 -m http.server "$port" --bind 127.0.0.1
	wait_listen "tcp:127.0.0.1:$port"
	run in_sandbox -- sh -c "
	    curl -s --noproxy '*' http://127.0.0.1:$port/ || echo refused
	    curl -s --noproxy '*' http://[::1]:$port/ || echo refused"
	echo "$output"
	[ "$(grep -c '^refused$' <<<"$output")" -eq 2 ]
	[ "$(grep -c "to allow localhost:$port" <<<"$output")" -eq 1 ]
	[[ $output == *"localhost:$port (the sandbox's loopback is its own; the host's server there is not reached) x2"* ]]
	[[ $output == *"add \"localhost:$port\" to network.host_ports"* ]]
	# The fix works...
	printf '{"version": 1, "network": {"host_ports": ["localhost:%s"]}}\n' \
	    "$port" >"$UDIR/hp.json"
	chmod 644 "$UDIR/hp.json"
	run in_sandbox --quiet --policy "$UDIR/hp.json" -- \
	    curl -s -o /dev/null -w '%{http_code}' --noproxy '*' \
	    "http://127.0.0.1:$port/"
	[ "$output" = 200 ]
	# ...and the sandbox's own server on that port is no such case.
	run in_sandbox -- python3 -c "
import socket
s = socket.socket(); s.bind(('127.0.0.1', $port)); s.listen(1)
socket.create_connection(('127.0.0.1', $port)); print('inside ok')"
	[[ $output == *"inside ok"* ]]
	[[ $output != *"network.host_ports"* ]]
}

@test "a config text git would not read, renamed over the protected config, is not written and is said without a command to apply" {
	cp "$WS/.git/config" "$UDIR/config.before"
	run in_sandbox --quiet --report "$UDIR/r.json" -- sh -c \
	    "printf '[core\n' >.git/config.lock && mv .git/config.lock .git/config && echo moved"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *moved* ]]
	cmp "$UDIR/config.before" "$WS/.git/config"
	[[ $output == *"a text for $WS/.git/config that git would not read ("* ]]
	[[ $output == *"hint: make the change on the host with git config"* ]]
	[[ $output != *"apply it with"* ]]
	jq -e '.git_config | length == 1 and .[0].applied == false and
	    .[0].apply == null' "$UDIR/r.json"
}
