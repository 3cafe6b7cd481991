#!/usr/bin/env bats
# Git config keys judged by what they make git on the host do, not by
# their names (issue 36, item 3; docs/threat-model.md, "Git config by
# effect").  Each attack is first done on the host without cordon, in a
# repository of its own, as the command would do it; there it works:
# git pull writes a file in the home, git clean empties a folder outside,
# git log -p makes a request to a server on 127.0.0.1, files come out
# world-writable, git push deletes the upstream's branches.  Then the
# command does the same inside `cordon run`, as the test user, and the
# user's git on the host afterwards does none of it; cordon says what it
# held back and the command that applies it, or what it quarantined.
# The ordinary work next to them (remote add and push -u, clone) goes on
# and is said.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	as_me git init -q -b main .
	as_me git config user.email t@example.test
	as_me git config user.name t
	as_me sh -c 'echo x >f && git add f && git commit -qm init'
	mkdir -p "$UDIR/demo" "$UDIR/away"
	[ "$(id -u)" -ne 0 ] || chown "$TEST_USER:" "$UDIR/demo" "$UDIR/away"
}

teardown() {
	[ -z "${SID:-}" ] || as_me timeout 20 "$UCORDON" session stop "$SID" \
	    >/dev/null 2>&1 || true
	teardown_bg
	sandbox_teardown
}

# as_me CMD...: CMD as the test user, in the workspace (no `run`).
as_me() {
	(cd "$WS" && as_user "$UDIR/home" "$@")
}

# in_demo CMD...: CMD as the test user in $UDIR/demo: the host, no cordon.
in_demo() {
	(cd "$UDIR/demo" && as_user "$UDIR/home" "$@")
}

# A branch "evil" whose commit adds .bash_profile, as the command makes
# it, in the repository of the current folder; main checked out again.
EVIL_BRANCH='git checkout -q -b evil &&
    printf "touch %s\n" "$MARK" >.bash_profile &&
    git add .bash_profile && git commit -qm profile &&
    git checkout -q main'

@test "core.worktree set to the home: the user's git pull would write ~/.bash_profile; held back, said with the command" {
	# On the host: the user's plain git pull writes into the "home".
	in_demo sh -c "git init -q -b main . && git config user.name a &&
	    git config user.email a@example.test &&
	    git commit -q --allow-empty -m init &&
	    MARK='$UDIR/mark' && $EVIL_BRANCH &&
	    git config core.worktree '$UDIR/away' &&
	    git config branch.main.remote '$UDIR/demo' &&
	    git config branch.main.merge refs/heads/evil"
	in_demo git pull -q
	[ -f "$UDIR/away/.bash_profile" ]
	rm -f "$UDIR/away/.bash_profile"
	# Inside, against the user's home.
	run in_sandbox --quiet --report "$UDIR/r.json" -- sh -c "
	    MARK='$UDIR/mark' && $EVIL_BRANCH &&
	    git config core.worktree \"\$HOME\" &&
	    git config branch.main.remote '$WS' &&
	    git config branch.main.merge refs/heads/evil && echo set"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *set* ]]
	[[ $output == *"set core.worktree = $UDIR/home in $WS/.git/config: git on the host would check out, write and clean files there"* ]]
	[[ $output == *"apply it with: git config --file '$WS/.git/config' --add 'core.worktree' '$UDIR/home'"* ]]
	run as_me git config --get core.worktree
	[ "$status" -eq 1 ]
	as_me git pull -q || true
	[ ! -e "$UDIR/home/.bash_profile" ]
	jq -e '[.git_config[] | select(.key == "core.worktree")][0] |
	    .class == "files" and .applied == false' "$UDIR/r.json"
}

@test "core.worktree set to a folder outside: the user's git clean -fdx would empty it; held back, and a new repository with it quarantined" {
	mkdir -p "$UDIR/away/docs"
	echo mine >"$UDIR/away/docs/notes"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/away"
	# On the host: git clean in the repository removes the folder's files.
	in_demo sh -c "git init -q . &&
	    git config core.worktree '$UDIR/away/docs' && git clean -fdxq"
	[ ! -e "$UDIR/away/docs/notes" ]
	echo mine >"$UDIR/away/docs/notes"
	# Inside: the user's repository, and a new one.
	run in_sandbox --quiet -- sh -c \
	    "git config core.worktree '$UDIR/away/docs' && echo set"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"held back 1 change to git config"* ]]
	[[ $output == *"set core.worktree = $UDIR/away/docs in $WS/.git/config"* ]]
	[[ $output == *"apply it with: git config --file '$WS/.git/config' --add 'core.worktree' '$UDIR/away/docs'"* ]]
	as_me git clean -fdxq
	[ -f "$UDIR/away/docs/notes" ]
	run in_sandbox --quiet -- sh -c \
	    "git init -q n && git -C n config core.worktree '$UDIR/away/docs'"
	echo "$output"
	[ "$status" -eq 125 ]
	[[ $output == *"quarantined $WS/n/.git, a git repository (.git) the command made or changed that could make git on the host run a program or act outside the workspace (core.worktree = $UDIR/away/docs in its config"* ]]
	[[ $output == *"take it back with: "* ]]
	as_me git -C "$WS/n" clean -fdxq 2>/dev/null || true
	[ -f "$UDIR/away/docs/notes" ]
	# A work tree in the workspace is the repository's own business.
	run in_sandbox --quiet -- sh -c "git init -q m && mkdir wt &&
	    git -C m config core.worktree ../../wt"
	[ "$status" -eq 0 ]
	[ -d "$WS/m/.git" ]
}

@test "set-url, pushurl, push refspec, mirror on the user's remote: held back, said with the command; the user's git push still goes upstream" {
	as_me git init -q --bare -b main "$UDIR/up.git"
	as_me git remote add origin "$UDIR/up.git"
	as_me git push -q -u origin main
	as_me git push -q origin main:other
	as_me git init -q --bare -b main "$UDIR/evil.git"
	# On the host: mirror makes a plain git push delete the upstream's
	# other branches.
	in_demo sh -c "git clone -q '$UDIR/up.git' . &&
	    git config remote.origin.mirror true && git push -q"
	run as_me git -C "$UDIR/up.git" rev-parse -q --verify other
	[ "$status" -ne 0 ]
	as_me git push -q origin main:other
	run in_sandbox --quiet --report "$UDIR/r.json" -- sh -c "
	    git remote set-url origin '$UDIR/evil.git' &&
	    git config remote.origin.pushurl '$UDIR/evil.git' &&
	    git config remote.origin.push '+refs/*:refs/*' &&
	    git config remote.origin.mirror true && echo set"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"held back 4 changes to git config"* ]]
	[[ $output == *"changed remote.origin.url = $UDIR/evil.git in $WS/.git/config: a change to the remote origin, which was there"* ]]
	[[ $output == *"apply it with: git config --file '$WS/.git/config' 'remote.origin.url' '$UDIR/evil.git'"* ]]
	[[ $output == *"set remote.origin.mirror = true"* ]]
	[[ $output == *"apply it with: git config --file '$WS/.git/config' --add 'remote.origin.push' '+refs/*:refs/*'"* ]]
	jq -e '[.git_config[] | select(.applied | not) | .class] | unique ==
	    ["destination"]' "$UDIR/r.json"
	as_me sh -c 'echo y >>f && git commit -qam two && git push -q'
	[ "$(as_me git -C "$UDIR/up.git" rev-parse main)" = \
	    "$(as_me git rev-parse HEAD)" ]
	as_me git -C "$UDIR/up.git" rev-parse -q --verify other
	[ -z "$(as_me git -C "$UDIR/evil.git" for-each-ref)" ]
}

@test "a remote on a loopback port: the host's git fetch would reach a host service; held back, and a new repository with it quarantined" {
	local port
	port=$(free_port)
	start_bg hostsrv python3 -m http.server "$port" --bind 127.0.0.1
	wait_listen "tcp:127.0.0.1:$port"
	# On the host: a fetch is a request to the host's own server.
	in_demo sh -c "git init -q . &&
	    git remote add x 'http://127.0.0.1:$port/r.git' &&
	    git fetch -q x" || true
	grep -q 'GET /r.git/info/refs' "$BATS_TEST_TMPDIR/hostsrv.log"
	: >"$BATS_TEST_TMPDIR/hostsrv.log"
	run in_sandbox --quiet -- sh -c "
	    git remote add x 'http://127.0.0.1:$port/x.git' &&
	    git remote add y 'http://0x7f.1:$port/y.git' && echo set"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"set remote.x.url = http://127.0.0.1:$port/x.git in $WS/.git/config: its host 127.0.0.1 is a loopback address"* ]]
	[[ $output == *"its host 127.0.0.1 is a loopback address"*"remote.y.url"* ]]
	[[ $output == *"apply it with: git config --file '$WS/.git/config' --add 'remote.x.url' 'http://127.0.0.1:$port/x.git'"* ]]
	as_me git fetch -q --all || true
	[ "$(grep -c 'GET ' "$BATS_TEST_TMPDIR/hostsrv.log" || true)" = 0 ]
	run in_sandbox --quiet -- sh -c "git init -q n &&
	    git -C n remote add origin 'http://localhost:$port/n.git'"
	echo "$output"
	[ "$status" -eq 125 ]
	[[ $output == *"quarantined $WS/n/.git"*"remote.origin.url = http://localhost:$port/n.git in its config: its host localhost is a loopback address"* ]]
	as_me git -C "$WS/n" fetch -q --all 2>/dev/null || true
	[ "$(grep -c 'GET ' "$BATS_TEST_TMPDIR/hostsrv.log" || true)" = 0 ]
}

@test "partial clone keys and a deleted object: the host's git log -p would fetch from the command's server; held back, a new repository quarantined" {
	local port
	port=$(free_port)
	start_bg hostsrv python3 -m http.server "$port" --bind 127.0.0.1
	wait_listen "tcp:127.0.0.1:$port"
	# The workspace already has a remote: a public name, which is fine.
	as_me git remote add origin https://git.example.test/r.git
	local plant="git config extensions.partialClone origin &&
	    git config remote.origin.promisor true &&
	    git config core.repositoryFormatVersion 1 &&
	    b=\$(git rev-parse HEAD:f) &&
	    rm -f .git/objects/\$(echo \$b | cut -c1-2)/\$(echo \$b | cut -c3-)"
	# On the host: git log -p asks the server for the missing object.
	in_demo sh -c "git init -q . && git config user.name a &&
	    git config user.email a@example.test && echo x >f && git add f &&
	    git commit -qm f &&
	    git remote add origin 'http://127.0.0.1:$port/r.git' && $plant"
	in_demo git log -p >/dev/null 2>&1 || true
	grep -q 'GET /r.git/info/refs' "$BATS_TEST_TMPDIR/hostsrv.log"
	: >"$BATS_TEST_TMPDIR/hostsrv.log"
	run in_sandbox --quiet --report "$UDIR/r.json" -- sh -c \
	    "git remote set-url origin 'http://127.0.0.1:$port/r.git'; $plant"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"set extensions.partialClone = origin in $WS/.git/config: git on the host would fetch missing objects from a remote by itself"* ]]
	[[ $output == *"set remote.origin.promisor = true"* ]]
	[[ $output == *"changed core.repositoryFormatVersion = 1"* ]]
	[[ $output == *"apply it with: git config --file '$WS/.git/config' --add 'extensions.partialClone' 'origin'"* ]]
	jq -e '[.git_config[] | select(.applied | not) | .class] | unique ==
	    ["destination", "network"]' "$UDIR/r.json"
	as_me git log -p >/dev/null 2>&1 || true
	[ "$(grep -c 'GET ' "$BATS_TEST_TMPDIR/hostsrv.log" || true)" = 0 ]
	# A new repository's promisor that is no remote: git takes its name
	# for a URL.  On the host, git log -p asks the server.
	in_demo sh -c "git remote remove origin &&
	    git config extensions.partialClone 'http://127.0.0.1:$port/p.git'"
	in_demo git log -p >/dev/null 2>&1 || true
	grep -q 'GET /p.git/info/refs' "$BATS_TEST_TMPDIR/hostsrv.log"
	run in_sandbox --quiet -- sh -c "git init -q n && cd n &&
	    git remote add origin https://git.example.test/n.git &&
	    git config extensions.partialClone 'http://127.0.0.1:$port/p.git'"
	echo "$output"
	[ "$status" -eq 125 ]
	[[ $output == *"quarantined $WS/n/.git"*"extensions.partialClone = http://127.0.0.1:$port/p.git in its config: git on the host would fetch missing objects by itself from http://127.0.0.1:$port/p.git, which is no remote with a URL here"* ]]
}

@test "core.sharedRepository 0666: the host's git would make world-writable files; held back, said with the command" {
	# On the host: a commit leaves files anyone may write.
	in_demo sh -c "git init -q . && git config user.name a &&
	    git config user.email a@example.test &&
	    git config core.sharedRepository 0666 &&
	    echo x >f && git add f && git commit -qm f"
	[ -n "$(find "$UDIR/demo/.git" -perm -0002 -type f)" ]
	run in_sandbox --quiet -- git config core.sharedRepository 0666
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"set core.sharedRepository = 0666 in $WS/.git/config: git on the host would make files that others may read or write"* ]]
	[[ $output == *"apply it with: git config --file '$WS/.git/config' --add 'core.sharedRepository' '0666'"* ]]
	as_me sh -c 'echo y >g && git add g && git commit -qm g'
	[ -z "$(find "$WS/.git" -perm -0002 -type f)" ]
}

@test "a remote at a local path the command was not shown: the host's git fetch would bring its objects into the workspace; held back, a new repository quarantined" {
	as_me git init -q -b main "$UDIR/priv.git"
	as_me sh -c "cd '$UDIR/priv.git' && echo secret >s && git add s &&
	    git -c user.name=a -c user.email=a@example.test commit -qm secret"
	# On the host: a fetch copies the private repository's objects.
	in_demo sh -c "git init -q . && git remote add p '$UDIR/priv.git' &&
	    git fetch -q p && git show p/main:s" | grep -q secret
	# Inside, /tmp is the run's own: the path is one it cannot read.
	run in_sandbox --quiet -- sh -c "
	    git remote add p '$UDIR/priv.git' && echo set"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"set remote.p.url = $UDIR/priv.git in $WS/.git/config: a local path neither writable nor shown to the command (--write, --read-only)"* ]]
	[[ $output == *"apply it with: git config --file '$WS/.git/config' --add 'remote.p.url' '$UDIR/priv.git'"* ]]
	as_me git fetch -q --all
	run as_me git cat-file -e "$(as_me git -C "$UDIR/priv.git" rev-parse HEAD:s)"
	[ "$status" -ne 0 ]
	run in_sandbox --quiet -- sh -c "git init -q n &&
	    git -C n remote add origin '$UDIR/priv.git'"
	echo "$output"
	[ "$status" -eq 125 ]
	[[ $output == *"quarantined $WS/n/.git"*"remote.origin.url = $UDIR/priv.git in its config: a local path"* ]]
	# Shown read-only, it is ordinary: a clone's origin.
	run in_sandbox --quiet --read-only "$UDIR/priv.git" -- sh -c \
	    "git clone -q '$UDIR/priv.git' c"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"kept $WS/c/.git"*"remote.origin.url = $UDIR/priv.git"* ]]
}

@test "ordinary work goes on and is said: remote add and push -u in a new repository and in the user's, clone from the workspace" {
	as_me git init -q --bare -b main "$UDIR/remote.git"
	run in_sandbox --quiet --report "$UDIR/r.json" --write "$UDIR/remote.git" \
	    -- sh -c "
	    git init -q -b main app && cd app && echo a >a && git add a &&
	    git -c user.name=a -c user.email=a@example.test commit -qm a &&
	    git remote add origin '$UDIR/remote.git' &&
	    git push -q -u origin main && cd .. &&
	    git clone -q app copy && git clone -q 'file://$WS/app' copy2 &&
	    git remote add origin '$UDIR/remote.git' &&
	    git push -q -u origin main:ws && git config user.name Agent"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *quarantined* ]]
	[[ $output != *"held back"* ]]
	[[ $output == *"kept $WS/app/.git, a git repository (.git) the command made or changed, with its remotes, where git on the host will fetch from and push to: remote.origin.url = $UDIR/remote.git"* ]]
	[[ $output == *"kept $WS/copy/.git"*"remote.origin.url = $WS/app"* ]]
	[[ $output == *"the command added remote.origin.url = $UDIR/remote.git in $WS/.git/config: a remote"* ]]
	[ "$(as_me git config --get remote.origin.url)" = "$UDIR/remote.git" ]
	[ "$(as_me git config --get branch.main.remote)" = origin ]
	[ "$(as_me git config --get user.name)" = Agent ]
	[ "$(as_me git -C "$WS/app" config --get branch.main.remote)" = origin ]
	jq -e '.repositories.kept | map(select(.remotes != null)) |
	    length == 3' "$UDIR/r.json"
	jq -e '[.git_config[] | select(.key == "remote.origin.url")][0].class
	    == "remote_added"' "$UDIR/r.json"
}

@test "a blobless clone over http through the proxy: its promisor remote is a remote added: kept and said" {
	local port g=(git -c user.name=a -c user.email=a@example.test)
	port=$(free_port)
	mkdir -p "$UDIR/srv"
	git init -q --bare -b main "$UDIR/srv/up.git"
	git -C "$UDIR/srv/up.git" config uploadpack.allowFilter true
	"${g[@]}" init -q -b main "$UDIR/src"
	echo blob >"$UDIR/src/b" && "${g[@]}" -C "$UDIR/src" add b
	"${g[@]}" -C "$UDIR/src" commit -qm b
	git -C "$UDIR/src" push -q "$UDIR/srv/up.git" main
	start_bg srv python3 "$BATS_TEST_DIRNAME/clients/serve.py" http \
	    --listen "$port" --root "$UDIR/srv" --git "$UDIR/srv"
	wait_listen "tcp:127.0.0.1:$port"
	# git.test is cordon's name for the server (--resolve): the host's
	# /etc/hosts does not have it, so the URL check lets it be.
	run in_sandbox --quiet --report "$UDIR/r.json" \
	    --resolve git.test:127.0.0.1 --allow-cidr 127.0.0.1/32 \
	    --allow-domain "git.test:$port" -- sh -c "
	    git clone -q --filter=blob:none 'http://git.test:$port/git/up.git' \
	    part && git -C part config --get remote.origin.promisor"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *quarantined* ]]
	[[ $output == *"kept $WS/part/.git"*"remote.origin.url = http://git.test:$port/git/up.git, remote.origin.promisor = true, remote.origin.partialclonefilter = blob:none"* ]]
	[ -d "$WS/part/.git" ]
	[ "$(as_me git -C "$WS/part" config --get remote.origin.promisor)" = true ]
	jq -e '.repositories.kept | map(select(.remotes != null)) |
	    length == 1' "$UDIR/r.json"
}

@test "in a session, each command's held changes and added remotes are said on that command's terminal and in its report" {
	cd "$WS"
	SID=$(as_user "$UDIR/home" "$UCORDON" session start \
	    --read-only "$UDIR/bin" 2>"$BATS_TEST_TMPDIR/start.err" 3>&-)
	[ -n "$SID" ] || { cat "$BATS_TEST_TMPDIR/start.err"; false; }
	run as_me "$UCORDON" run --session "$SID" --report "$UDIR/r1.json" \
	    -- sh -c "git config core.worktree '$UDIR/away' &&
	    git remote add up https://up.example.test/r.git && echo set"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"set core.worktree = $UDIR/away in $WS/.git/config"* ]]
	[[ $output == *"apply it with: git config --file '$WS/.git/config' --add 'core.worktree' '$UDIR/away'"* ]]
	[[ $output == *"the command added remote.up.url = https://up.example.test/r.git in $WS/.git/config"* ]]
	jq -e '[.git_config[] | select(.key == "core.worktree")][0] |
	    .class == "files" and .applied == false' "$UDIR/r1.json"
	# The next command is told of its own changes only.
	run as_me "$UCORDON" run --session "$SID" --report "$UDIR/r2.json" \
	    -- true
	[ "$status" -eq 0 ]
	[[ $output != *core.worktree* ]]
	jq -e '.git_config == []' "$UDIR/r2.json"
	as_me timeout 20 "$UCORDON" session stop "$SID" >/dev/null 2>&1
	SID=
	run as_me git config --get core.worktree
	[ "$status" -eq 1 ]
}
