#!/usr/bin/env bats
# The workspace is the adversary's (docs/threat-model.md, "The workspace
# is reshaped"): a repository it came with, or the command itself,
# reshapes it with links, renames and new repositories; none of that
# may widen a write, replace a protected path, plant code that git on
# the host runs after the run, or steer what cordon itself writes there.
#
# Each test first shows, outside the sandbox, that the step it relies
# on works (the link leads out, the rename succeeds, the planted
# repository runs its command under the host's git), then that inside
# `cordon run` it does not: as the unprivileged test user, and as root
# where the suite runs as root.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	TOP=$(mktemp -d)
	chmod 755 "$TOP"
	mkdir -p "$TOP/bin"
	cp_cordon "$TOP/bin"
	MARK="$TOP/marker"
}

teardown() {
	teardown_bg
	cd / && rm -rf "$TOP"
	# Where a regression of the etclink test would leave its file.
	if is_root && [ -n "${ETC_PROBE:-}" ]; then
		rm -f /etc/cordon-escaped
	fi
}

is_root() {
	[ "$(id -u)" -eq 0 ]
}

# The users the sandbox runs as here: the test user, and root if we are.
whos() {
	echo user
	if is_root; then
		echo root
	fi
}

# fresh WHO: a home and a workspace in it, a git repository with one
# commit, owned by WHO; sets H and WS and cds there.
fresh() {
	H="$TOP/$1"
	WS="$H/ws"
	rm -rf "$H"
	mkdir -p "$WS"
	echo "# the host's" >"$H/.bashrc"
	git -C "$WS" init -q
	git -C "$WS" config user.email t@example.test
	git -C "$WS" config user.name t
	echo x >"$WS/f"
	git -C "$WS" add f
	git -C "$WS" commit -qm init
	if is_root && [ "$1" = user ]; then
		ensure_test_user
		chown -R "$TEST_USER:" "$TOP"
	fi
	cd "$WS" || return 1
}

# as WHO CMD...: runs CMD as WHO, with HOME=$H (no run: the caller's).
as() {
	local who=$1
	shift
	if [ "$who" = user ]; then
		(as_user "$H" "$@")
	else
		HOME="$H" XDG_CONFIG_HOME="$H/.config" "$@"
	fi
}

# sandbox WHO ARGS... -- CMD: cordon run as WHO, output and status in
# $output and $status.
sandbox() {
	local who=$1
	shift
	run as "$who" timeout -k 5 60 "$TOP/bin/cordon" run --quiet "$@"
	echo "inside, $who: $output (status $status)"
}

# host_git WHO ARGS...: git on the host after the run, as WHO.
host_git() {
	local who=$1
	shift
	as "$who" git "$@" >/dev/null 2>&1 || true
}

@test "E1: a workspace layer's write through a committed link out is refused" {
	for who in $(whos); do
		fresh "$who"
		mkdir -p .cordon
		echo '{"version":1,"filesystem":{"write":["tools"]}}' \
		    >.cordon/policy.json
		ln -s .. tools
		[ "$(cd tools && pwd -P)" = "$(cd "$H" && pwd -P)" ]
		sandbox "$who" -- sh -c 'echo x >> ~/.bashrc'
		[ "$status" -eq 125 ]
		[[ $output == *"tools resolves to "*"outside the workspace"* ]]
		[[ $output == *"hint: remove the link"* ]]
		[ "$(cat "$H/.bashrc")" = "# the host's" ]
	done
}

@test "E1: as root, a workspace layer's write through etclink -> /etc" {
	is_root || skip "needs root: /etc is root's"
	fresh root
	mkdir -p .cordon
	echo '{"version":1,"filesystem":{"write":["etclink"]}}' \
	    >.cordon/policy.json
	ln -s /etc etclink
	ETC_PROBE=1
	sandbox root -- sh -c 'echo x > /etc/cordon-escaped'
	[ "$status" -eq 125 ]
	[[ $output == *"outside the workspace"* ]]
	[ ! -e /etc/cordon-escaped ]
}

@test "E1: a trusted --write folder swapped for a link out in one run is refused in the next" {
	for who in $(whos); do
		fresh "$who"
		mkdir out
		is_root && [ "$who" = user ] && chown "$TEST_USER:" out
		sandbox "$who" --write out -- sh -c 'rmdir out && ln -s .. out'
		[ "$status" -eq 0 ]
		[ -L out ]	# the step works: the link is there
		sandbox "$who" --write out -- sh -c 'echo x >> out/.bashrc'
		[ "$status" -eq 125 ]
		[[ $output == *"--write: "*"/out resolves to "*"outside the workspace"* ]]
		[ "$(cat "$H/.bashrc")" = "# the host's" ]
	done
}

@test "E4: a read-only path two levels deep cannot be replaced by renaming its parent" {
	for who in $(whos); do
		fresh "$who"
		mkdir -p .github/workflows
		echo good >.github/workflows/ci.yml
		is_root && [ "$who" = user ] && chown -R "$TEST_USER:" .github
		# The step works outside: the parent renames.
		as "$who" mv .github .github_old
		as "$who" mv .github_old .github
		sandbox "$who" --read-only .github/workflows -- sh -c \
		    'mv .github .github_old; mkdir -p .github/workflows;
		    echo evil > .github/workflows/ci.yml'
		[[ $output == *"Device or resource busy"* ]]
		[ "$(cat .github/workflows/ci.yml)" = good ]
		[ ! -e .github_old ]
		# A missing one, below a folder that exists.
		mkdir -p sub5
		is_root && [ "$who" = user ] && chown "$TEST_USER:" sub5
		sandbox "$who" --read-only sub5/gen/x -- sh -c \
		    'mv sub5 sub5.old; mkdir -p sub5/gen/x; echo evil > sub5/gen/x/y'
		[ ! -e sub5/gen ]
		[ ! -e sub5.old ]
	done
}

@test "E2: git init in an empty folder plants core.fsmonitor: quarantined, never run" {
	for who in $(whos); do
		fresh "$who"
		mkdir -p vendor/lib ctl
		is_root && [ "$who" = user ] && chown "$TEST_USER:" vendor \
		    vendor/lib ctl
		# The step works outside: git on the host runs it.
		as "$who" git init -q ctl
		as "$who" git -C ctl config core.fsmonitor "touch $MARK"
		host_git "$who" -C ctl status
		[ -e "$MARK" ]
		rm -f "$MARK"
		as "$who" rm -rf ctl/.git
		sandbox "$who" -- sh -c "git init -q vendor/lib &&
		    git -C vendor/lib config core.fsmonitor 'touch $MARK'"
		[ "$status" -eq 125 ]
		[[ $output == *"quarantined $WS/vendor/lib/.git, a git repository"* ]]
		[ -d vendor/lib/.git.cordon-quarantine-* ]
		host_git "$who" -C vendor/lib status
		host_git "$who" status
		[ ! -e "$MARK" ]
	done
}

@test "E2: a new src/.git, and a .git file whose gitdir is writable: judged where it leads" {
	for who in $(whos); do
		fresh "$who"
		mkdir -p src wt gd
		is_root && [ "$who" = user ] && chown "$TEST_USER:" src wt gd
		sandbox "$who" --report "$TOP/$who.json" -- sh -c "
		    git init -q src && git -C src config core.fsmonitor 'touch $MARK'
		    git init -q --bare gd/r.git
		    git -C gd/r.git config core.fsmonitor 'touch $MARK'
		    echo 'gitdir: ../gd/r.git' > wt/.git"
		[ "$status" -eq 125 ]
		[ ! -e src/.git ]
		[ ! -e gd/r.git ]
		# The .git file itself runs nothing: what it named went.
		jq -e '.repositories.checked_all and
		    (.repositories.quarantined | length == 2) and
		    (.repositories.kept | map(.path) ==
		    ["'"$WS"'/wt/.git"])' "$TOP/$who.json"
		host_git "$who" -C src status
		host_git "$who" -C wt status
		[ ! -e "$MARK" ]
	done
}

@test "E2: an implicit bare repository (docs/HEAD, objects, refs) with no .git name" {
	for who in $(whos); do
		fresh "$who"
		mkdir -p docs ctl/objects ctl/refs
		echo 'ref: refs/heads/main' >ctl/HEAD
		is_root && [ "$who" = user ] && chown -R "$TEST_USER:" docs ctl
		# The step works outside: git takes such a folder for a repository.
		run as "$who" git -C ctl rev-parse --git-dir
		[ "$output" = . ]
		sandbox "$who" -- sh -c "mkdir -p docs/objects docs/refs &&
		    echo 'ref: refs/heads/main' > docs/HEAD &&
		    printf '[core]\n\tpager = touch $MARK\n' > docs/config"
		[ "$status" -eq 125 ]
		[[ $output == *"quarantined $WS/docs/HEAD, a bare repository"* ]]
		# docs is no repository of its own any more: git finds the
		# workspace's above it.
		run as "$who" git -C docs rev-parse --git-dir
		[ "$output" != . ]
	done
}

@test "E2: a pointer whose path holds a line end or CR, to a git directory made in .git/objects or .git/refs: quarantined (issue 36)" {
	for who in $(whos); do
		# The step works outside: git follows the whole path.
		fresh "$who"
		as "$who" sh -c "$PTR_PLANT" plant objects n gitfile "$MARK"
		host_git "$who" -C src status
		[ -e "$MARK" ]
		rm -f "$MARK"
		for v in "objects n gitfile" "objects r gitfile" \
		    "refs n gitfile" "objects n commondir"; do
			set -- $v
			fresh "$who"
			sandbox "$who" --report "$TOP/$who.json" -- \
			    sh -c "$PTR_PLANT" plant $v "$MARK"
			[ "$status" -eq 125 ]
			[[ $output == *"quarantined $WS/.git/$1/evil, a git directory"* ]]
			[[ $output == *"holds a control byte (0x0"[ad]") in the path"* ]]
			if [ "$3" = gitfile ]; then
				[[ $output == *"quarantined $WS/src/.git, a git repository"* ]]
				[ ! -e src/.git ]
			fi
			[ ! -e ".git/$1/evil" ]
			jq -e '.repositories.checked_all and
			    (.repositories.quarantined | length == 2)' \
			    "$TOP/$who.json"
			host_git "$who" -C src status
			host_git "$who" status
			[ ! -e "$MARK" ]
		done
	done
}

@test "E2: a folder the check cannot list (chmod 0311) after sub/.git was planted: looked up by name, quarantined, the folder held (issue 36)" {
	plant='set -e
	git init -q sub
	git -C sub config core.fsmonitor "touch $1; false"
	chmod 0311 sub'
	for who in $(whos); do
		# The step works outside: git opens sub/.git by name.
		fresh "$who"
		as "$who" sh -c "$plant" plant "$MARK"
		host_git "$who" -C sub status
		[ -e "$MARK" ]
		rm -f "$MARK"
		fresh "$who"
		sandbox "$who" --report "$TOP/$who.json" -- \
		    sh -c "$plant" plant "$MARK"
		[ "$status" -eq 125 ]
		[[ $output == *"quarantined $WS/sub/.git, a git repository"* ]]
		host_git "$who" -C sub status
		[ ! -e "$MARK" ]
		# Root reads it all the same: nothing to hold.
		[ "$who" = user ] || continue
		[[ $output == *"cordon: held $WS/sub, a folder the check could not read: it cannot be listed (Permission denied)"* ]]
		[[ $output == *"cordon: hint: look at it before running git there: chmod u+rx $WS/sub"* ]]
		jq -e '(.repositories.checked_all | not) and
		    (.repositories.held | map(.path) == ["'"$WS"'/sub"]) and
		    .exit_status == 125' "$TOP/$who.json"
	done
}

# The repository the tests below plant: git on the host runs its
# core.fsmonitor.  plant_works shows that step, outside the sandbox.
plant() {
	echo "git init -q evil && git -C evil config core.fsmonitor 'touch $MARK'"
}

plant_works() {
	as "$1" sh -c "cd '$TOP' && $(plant)" || return 1
	host_git "$1" -C "$TOP/evil" status
	[ -e "$MARK" ] || return 1
	rm -rf "$MARK" "$TOP/evil"
}

# harness WHO SIGNAL WHOM FLAG CMD...: a harness as agent loops have:
# CMD as WHO in a session of its own; once FLAG exists, SIGNAL to its
# whole process group (WHOM=group) or to CMD alone (WHOM=process).
# Prints CMD's status; CMD's stderr, and all that inherits it, is ours.
harness() {
	local who=$1
	shift
	write "$TOP/harness.py" <<-'EOF'
	import os, subprocess, sys, time
	sig, whom, flag, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
	p = subprocess.Popen(cmd, start_new_session=True)
	end = time.time() + 30
	while not os.path.exists(flag) and p.poll() is None and time.time() < end:
	    time.sleep(0.05)
	if whom == "group":
	    os.killpg(p.pid, sig)
	else:
	    os.kill(p.pid, sig)
	print("status", p.wait())
	EOF
	run as "$who" python3 "$TOP/harness.py" "$@"
	echo "$who, $*: $output"
}

@test "E2: a harness's timeout -s KILL ends cordon run mid-command: the sentinel quarantines what it planted" {
	for who in $(whos); do
		fresh "$who"
		plant_works "$who"
		run as "$who" timeout -s KILL 4 "$TOP/bin/cordon" run --quiet \
		    -- sh -c "$(plant) && sleep 30"
		echo "$who: $output (status $status)"
		[ "$status" -eq 137 ]
		[[ $output == *"its sentinel checked them"* ]]
		[[ $output == *"quarantined $WS/evil/.git, a git repository"* ]]
		[ -d evil/.git.cordon-quarantine-* ]
		[ ! -e evil/.git ]
		host_git "$who" -C evil status
		[ ! -e "$MARK" ]
	done
}

@test "E2: SIGKILL of the run's whole process group, and a crash of cordon run (SIGSEGV, SIGABRT): the sentinel quarantines" {
	local how
	for who in $(whos); do
		for how in "9 group" "11 process" "6 process"; do
			fresh "$who"
			plant_works "$who"
			# shellcheck disable=SC2086
			harness "$who" $how "$WS/planted" "$TOP/bin/cordon" run \
			    --quiet -- sh -c "$(plant) && touch planted && sleep 30"
			# cordon run did not end by itself: its sentinel says
			# so (under ASan a SIGSEGV sent to it ends by ASan's
			# exit, not the signal, so the status is not the test).
			[[ $output == *"status "* ]]
			[[ $output == *"ended before it could check its writable folders"* ]]
			[[ $output == *"quarantined $WS/evil/.git, a git"* ]]
			[ ! -e evil/.git ]
			host_git "$who" -C evil status
			[ ! -e "$MARK" ]
		done
	done
}

@test "E2: a run that ends by itself makes the check once, and leaves no sentinel behind" {
	for who in $(whos); do
		fresh "$who"
		sandbox "$who" -- sh -c "$(plant)"
		[ "$status" -eq 125 ]
		[ "$(grep -c 'quarantined ' <<<"$output")" -eq 1 ]
		[[ $output != *sentinel* ]]
		[ ! -e evil/.git ]
		# This run's (its command line is cordon run's): none left.
		# One reparented when its run was killed may be a zombie here.
		local p
		for p in $(pgrep -r D,R,S,T -x cordon-sentinel); do
			if grep -q "$TOP" "/proc/$p/cmdline" 2>/dev/null; then
				echo "left: $p"
				false
			fi
		done
	done
}

@test "E2: renaming the parent of a protected nested .git fails" {
	for who in $(whos); do
		fresh "$who"
		git init -q vendor/lib
		is_root && [ "$who" = user ] && chown -R "$TEST_USER:" vendor
		as "$who" mv vendor vendor.orig	# works outside
		as "$who" mv vendor.orig vendor
		sandbox "$who" -- sh -c "mv vendor vendor.orig ||
		    echo rename refused; mkdir -p vendor/lib"
		[[ $output == *"rename refused"* ]]
		[ ! -e vendor.orig ]
		[ -d vendor/lib/.git ]
		run git -C vendor/lib config --get core.fsmonitor
		[ "$status" -ne 0 ]
	done
}

@test "E2: a hook linked to a workspace file, and core.hooksPath in the workspace" {
	for who in $(whos); do
		fresh "$who"
		mkdir -p scripts .husky
		printf '#!/bin/sh\nexit 0\n' >scripts/pre-commit
		cp scripts/pre-commit .husky/pre-push
		chmod +x scripts/pre-commit .husky/pre-push
		ln -s ../../scripts/pre-commit .git/hooks/pre-commit
		as "$who" git config core.hooksPath .husky
		is_root && [ "$who" = user ] && chown -R "$TEST_USER:" \
		    scripts .husky
		as "$who" sh -c 'cat scripts/pre-commit > scripts/x' # writable
		sandbox "$who" -- sh -c "echo 'touch $MARK' >> scripts/pre-commit
		    echo 'touch $MARK' >> .husky/pre-push
		    echo 'touch $MARK' > .husky/pre-commit"
		[[ $output == *"scripts/pre-commit: Read-only file system"* ]]
		[[ $output == *".husky/pre-push: Read-only file system"* ]]
		run grep -rq "$MARK" scripts .husky
		[ "$status" -ne 0 ]
	done
}

@test "E5: --report through a link the command planted, or onto a FIFO" {
	for who in $(whos); do
		fresh "$who"
		mkdir -p reports "$H/victim2"
		is_root && [ "$who" = user ] && chown "$TEST_USER:" reports \
		    "$H/victim2"
		sandbox "$who" --report reports/run.json -- sh -c \
		    'mv reports r.old && ln -s ../victim2 reports'
		[ "$status" -eq 0 ]
		[ -L reports ]
		[ ! -e "$H/victim2/run.json" ]
		jq -e .sandbox r.old/run.json
		# The next run refuses the link, before anything runs.
		sandbox "$who" --report reports/run.json -- touch ran
		[ "$status" -eq 125 ]
		[[ $output == *"leads out of the workspace through a symbolic link"* ]]
		[ ! -e ran ]
		[ ! -e "$H/victim2/run.json" ]
		# A FIFO where the report goes: replaced, no hang.
		rm reports
		mkdir reports
		mkfifo reports/run.json
		is_root && [ "$who" = user ] && chown -R "$TEST_USER:" reports
		sandbox "$who" --report reports/run.json -- true
		[ "$status" -eq 0 ]
		[ -f reports/run.json ]
		jq -e .sandbox reports/run.json
	done
}

@test "E5: the egress log is not opened through a link or onto a FIFO" {
	for who in $(whos); do
		fresh "$who"
		ln -s "$H/.bashrc" egress.log
		is_root && [ "$who" = user ] && chown -h "$TEST_USER:" egress.log
		sandbox "$who" --log egress.log -- true
		[ "$status" -eq 125 ]
		[[ $output == *"egress.log"*"symbolic link"* ]]
		[ "$(cat "$H/.bashrc")" = "# the host's" ]
		rm egress.log
		mkfifo egress.log
		is_root && [ "$who" = user ] && chown "$TEST_USER:" egress.log
		sandbox "$who" --log egress.log -- true
		[ "$status" -eq 125 ]
		[[ $output == *"not a regular file"* ]]
	done
}

@test "E5: a blocked placeholder's parent swapped for a link: nothing outside removed" {
	for who in $(whos); do
		fresh "$who"
		mkdir -p sub5 "$H/victim/gen"
		is_root && [ "$who" = user ] && chown -R "$TEST_USER:" sub5 \
		    "$H/victim"
		sandbox "$who" --read-only sub5/gen -- sh -c \
		    'mv sub5 s5 || echo pinned; ln -s ../victim sub5/v'
		[[ $output == *pinned* ]]
		[ -d "$H/victim/gen" ]
		[ ! -e sub5/gen ]
	done
}

@test "P1: run from the home folder: refused without --workspace, with the fix" {
	for who in $(whos); do
		fresh "$who"
		cd "$H"
		sandbox "$who" -- touch ran
		[ "$status" -eq 125 ]
		[[ $output == *"the workspace would be "*", your home folder, and all of it writable"* ]]
		[[ $output == *"--workspace "* ]]
		[ ! -e "$H/ran" ]
	done
}

@test "P1: with --workspace ~, the home is writable but its persistence points stay as they were" {
	for who in $(whos); do
		fresh "$who"
		cd "$H"
		mkdir -p "$H/.local/bin" "$H/tools"
		is_root && [ "$who" = user ] && chown -R "$TEST_USER:" "$H"
		# tools/ is on the caller's PATH: what lands there runs later.
		run as "$who" env PATH="$H/tools:/usr/local/bin:/usr/bin:/bin" \
		    timeout -k 5 60 "$TOP/bin/cordon" run --quiet \
		    --workspace "$H" -- sh -c '
		    touch ran
		    echo evil >>~/.bashrc; echo evil >~/.profile
		    echo evil >~/.zshenv; echo "[core] fsmonitor = evil" >~/.gitconfig
		    mkdir -p ~/.config/autostart ~/.ssh
		    echo key >>~/.ssh/authorized_keys
		    echo evil >~/.local/bin/ls; echo evil >~/tools/ls
		    mkdir -p ~/.config/cordon && echo "{}" >~/.config/cordon/policy.json
		    cat ~/.gitconfig ~/.zshenv; echo read'
		echo "inside, $who: $output (status $status)"
		# Everything else in the home is the command's; an absent file
		# reads as empty inside.
		[ -e "$H/ran" ]
		[[ $output == *read* ]]
		[ "$(cat "$H/.bashrc")" = "# the host's" ]
		for p in .profile .zshenv .gitconfig .config .ssh .local/bin/ls \
		    tools/ls; do
			[ ! -e "$H/$p" ] || { echo "$p is on the host" >&2; false; }
		done
		# The placeholders are gone: nothing left behind on the host.
		[ ! -e "$H/.zshrc" ]
		[ ! -e "$H/.vim" ]
		host_git "$who" -C "$WS" status
	done
}

@test "P1: in the home's scratch layer, a write to a persistence point lands in the layer and is named apart; nothing of it reaches the host" {
	for who in $(whos); do
		fresh "$who"
		mkdir -p "$H/tools"
		echo "# the host's" >"$H/.profile"
		is_root && [ "$who" = user ] && chown -R "$TEST_USER:" "$H"
		cd "$WS"
		run as "$who" env PATH="$H/tools:/usr/local/bin:/usr/bin:/bin" \
		    timeout -k 5 60 "$TOP/bin/cordon" run --report "$WS/r.json" \
		    -- sh -c '
		    for f in .bashrc .profile tools/ls .zshrc; do
			(echo evil >>~/$f) 2>/dev/null && echo "wrote $f"
		    done
		    echo fine >~/.cache-ok && echo "wrote cache"'
		echo "inside, $who: $output (status $status)"
		[ "$status" -eq 0 ]
		# Each write works inside, in the layer, and is listed; the
		# persistence points apart, with how to apply such a change.
		for f in .bashrc .profile tools/ls .zshrc cache; do
			[[ $output == *"wrote $f"* ]]
		done
		[[ $output == *"the command changed files your shell, session or git run, in the scratch layer only (never the host's): "* ]]
		[[ $output == *"hint: to apply such a change, make it on the host yourself"* ]]
		[ "$(jq -r '[.scratch.written[] | select(.point) | .path] |
		    sort | join(" ")' "$WS/r.json")" = \
		    "~/.bashrc ~/.profile ~/.zshrc ~/tools" ]
		[ "$(jq -r '[.scratch.written[] | select(.point | not) |
		    .path] | join(" ")' "$WS/r.json")" = "~/.cache-ok" ]
		[ "$(cat "$H/.bashrc")" = "# the host's" ]
		[ "$(cat "$H/.profile")" = "# the host's" ]
		for p in .zshrc tools/ls .cache-ok; do
			[ ! -e "$H/$p" ] || { echo "$p is on the host" >&2; false; }
		done
	done
}

@test "G1: commit, amend, branch, rebase, stash and gc work inside; git's config, hooks, attributes and commondir cannot be planted on the host" {
	for who in $(whos); do
		fresh "$who"
		# The step works outside: git runs a planted core.fsmonitor.
		as "$who" git -c core.fsmonitor="touch $MARK.ctl" status >/dev/null
		[ -e "$MARK.ctl" ]
		rm -f "$MARK.ctl"
		sandbox "$who" -- sh -c '
		    echo b >>f && git commit -qam second &&
		    git commit -q --amend -m second2 && git branch topic &&
		    git checkout -q topic && echo c >>f &&
		    git commit -qam third && git checkout -q - &&
		    git rebase -q topic && echo d >>f && git stash -q &&
		    git stash pop -q && git gc -q && echo all-ok
		    git config core.fsmonitor "touch '"$MARK"'" || echo no-config
		    printf "#!/bin/sh\ntouch '"$MARK"'\n" >.git/hooks/post-checkout ||
		    echo no-hook
		    echo "* filter=x" >.git/info/attributes || echo no-attributes
		    echo "'"$H"'/evil" >.git/commondir || echo no-commondir
		    echo "[core] fsmonitor = x" >.git/config.worktree ||
		    echo no-worktree-config
		    echo /tmp >.git/objects/info/alternates || echo no-alternates'
		for s in all-ok no-attributes no-commondir \
		    no-worktree-config no-alternates; do
			[[ $output == *"$s"* ]] || { echo "missing: $s" >&2; false; }
		done
		# The config change and the hook are not refused but held:
		# neither reaches the host, and the run says so.
		[[ $output == *"held back 1 change to git config"* ]]
		[[ $output == *"git hooks the command wrote were not kept"* ]]
		[ ! -e "$WS/.git/hooks/post-checkout" ]
		# The history is the host's now; the host's git runs nothing.
		[ "$(as "$who" git -C "$WS" log --format=%s | tr '\n' ' ')" = \
		    "third second2 init " ]
		host_git "$who" -C "$WS" status
		host_git "$who" -C "$WS" checkout -q -b after
		[ ! -e "$MARK" ]
		run ! grep -q fsmonitor "$WS/.git/config"
		[ ! -e "$WS/.git/commondir" ]
		[ ! -e "$WS/.git/config.worktree" ]
		[ ! -e "$WS/.git/info/attributes" ]
	done
}

@test "G2: a submodule's git directory (.git/modules/NAME, NAME with a /) and a nested repository: writable state, protected code" {
	for who in $(whos); do
		fresh "$who"
		m="$WS/.git/modules/vendor/lib"
		mkdir -p "$m/objects" "$m/refs"
		echo 'ref: refs/heads/main' >"$m/HEAD"
		printf '[core]\n\tbare = false\n' >"$m/config"
		git init -q "$WS/nested"
		is_root && [ "$who" = user ] && chown -R "$TEST_USER:" "$TOP"
		sandbox "$who" -- sh -c '
		    echo x >.git/modules/vendor/lib/HEAD && echo state-ok
		    echo x >>.git/modules/vendor/lib/config || echo no-config
		    mkdir -p .git/modules/vendor/lib/hooks 2>/dev/null;
		    touch .git/modules/vendor/lib/hooks/post-checkout ||
		    echo no-hook
		    echo x >nested/.git/description && echo nested-ok
		    echo x >>nested/.git/config || echo no-nested-config'
		for s in state-ok no-config no-hook nested-ok no-nested-config; do
			[[ $output == *"$s"* ]] || { echo "missing: $s" >&2; false; }
		done
		[ "$(cat "$m/config")" = "$(printf '[core]\n\tbare = false')" ]
		[ ! -e "$m/hooks" ]
		run ! grep -q '^x$' "$WS/nested/.git/config"
	done
}

# A submodule's git directory at .git/modules/$1 with one commit (a file
# in it), the superproject's .gitmodules entry and gitlink to it at
# sub/, committed; the host's `git submodule update --init` reuses such
# a directory, and checks out in it (running its hooks).  Run in the
# workspace, outside or inside the sandbox.
MODULE='set -e
g=.git/modules/$1
git init -q --bare "$g"
git --git-dir="$g" config core.bare false
b=$(echo hi | git --git-dir="$g" hash-object -w --stdin)
t=$(printf "100644 blob %s\tfile\n" "$b" | git --git-dir="$g" mktree)
c=$(git --git-dir="$g" -c user.name=t -c user.email=t@e commit-tree -m x "$t")
git --git-dir="$g" update-ref HEAD "$c"
git config -f .gitmodules "submodule.$1.path" sub
git config -f .gitmodules "submodule.$1.url" ./none.git
git update-index --add --cacheinfo "160000,$c,sub"
git add .gitmodules && git commit -qm sub'

# The same, with a post-checkout hook that touches $2.
HOOKED="$MODULE"'
printf "#!/bin/sh\ntouch %s\n" "$2" >"$g/hooks/post-checkout"
chmod +x "$g/hooks/post-checkout"'

# A module NAME deeper than the mount plan looks (it protects
# modules/a/b/... to 8 levels): its code is writable inside.
DEEP=d/d/d/d/d/d/d/d/d/d/d/d

# planted WHO NAME: the step works outside: a module planted at
# .git/modules/NAME with a hook, and the host's git runs the hook.
planted() {
	fresh "$1"
	as "$1" sh -c "$HOOKED" plant "$2" "$MARK.ctl"
	host_git "$1" submodule update --init
	[ -e "$MARK.ctl" ]
	rm -f "$MARK.ctl"
}

@test "G3: a submodule git directory planted in the protected .git (modules/NAME, a hook) is quarantined; the host's submodule update runs nothing" {
	for who in $(whos); do
		planted "$who" evil
		fresh "$who"
		sandbox "$who" -- sh -c "$HOOKED" plant evil "$MARK"
		[ "$status" -eq 125 ]
		[[ $output == *"quarantined $WS/.git/modules/evil, a git directory"* ]]
		[ -d "$WS/.git/modules/evil.cordon-quarantine-"* ]
		host_git "$who" submodule update --init
		[ ! -e "$MARK" ]
	done
}

@test "G3: a module NAME with a '/' (modules/a/b), and one deeper than the plan looks, planted: quarantined" {
	for who in $(whos); do
		planted "$who" a/b
		for name in a/b "$DEEP"; do
			fresh "$who"
			sandbox "$who" -- sh -c "$HOOKED" plant "$name" "$MARK"
			[ "$status" -eq 125 ]
			[[ $output == *"quarantined $WS/.git/modules/$name, a git directory"* ]]
			host_git "$who" submodule update --init
			[ ! -e "$MARK" ]
		done
	done
}

@test "G3: a linked worktree's git directory (worktrees/NEW) planted for a worktree outside: quarantined" {
	for who in $(whos); do
		# The user's linked worktree outside the workspace, whose
		# folder in .git/worktrees was pruned.
		plant='set -e
		mkdir -p stuff/objects stuff/refs .git/worktrees/wt
		printf "[core]\n\tfsmonitor = touch %s\n" "$1" >stuff/config
		echo "ref: refs/heads/wt" >.git/worktrees/wt/HEAD
		echo "$PWD/stuff" >.git/worktrees/wt/commondir
		echo "$2/.git" >.git/worktrees/wt/gitdir'
		for step in outside inside; do
			fresh "$who"
			as "$who" git worktree add -q "$H/wt" -b wt
			as "$who" rm -rf .git/worktrees/wt
			if [ $step = outside ]; then
				as "$who" sh -c "$plant" plant "$MARK" "$H/wt"
				host_git "$who" -C "$H/wt" status
				[ -e "$MARK" ]
				rm -f "$MARK"
				continue
			fi
			sandbox "$who" -- sh -c "$plant" plant "$MARK" "$H/wt"
			[ "$status" -eq 125 ]
			# Its folder runs nothing; the store it names does.
			[[ $output == *"quarantined $WS/stuff, a git directory"* ]]
			[[ $output == *"(core.fsmonitor in its config)"* ]]
			host_git "$who" -C "$H/wt" status
			[ ! -e "$MARK" ]
		done
	done
}

@test "G3: info/attributes in a module's git directory the plan did not protect, with the filter it picks in its config: the module is quarantined" {
	for who in $(whos); do
		for step in outside inside; do
			fresh "$who"
			as "$who" sh -c "$MODULE" module "$DEEP"
			# Attributes alone pick only drivers the user defined, as
			# a worktree's .gitattributes does; with one defined in
			# the module's own config, the command's program runs.
			attr="echo '* filter=x' >.git/modules/$DEEP/info/attributes &&
			    git --git-dir=.git/modules/$DEEP config filter.x.smudge \
			    \"sh -c 'touch $MARK; cat'\""
			if [ $step = outside ]; then
				as "$who" sh -c "$attr"
				host_git "$who" submodule update --init
				[ -e "$MARK" ]
				rm -f "$MARK"
				continue
			fi
			sleep 2	# the module is older than the run (ctime)
			sandbox "$who" -- sh -c "$attr"
			[ "$status" -eq 125 ]
			[[ $output == *"quarantined $WS/.git/modules/$DEEP, a git directory"* ]]
			[[ $output == *"(filter.x.smudge in its config)"* ]]
			host_git "$who" submodule update --init
			[ ! -e "$MARK" ]
		done
	done
}

@test "G3: objects/info/alternates in a module's git directory the plan did not protect: judged by content, kept, as objects written there would be" {
	for who in $(whos); do
		# A commit only in a store the command makes (no repository:
		# no HEAD), a branch of the module and the superproject's
		# gitlink moved to it: git reads it through the alternates.
		alt='set -e
		g=.git/modules/$1
		git init -q --bare store.git
		b=$(echo evil | git --git-dir=store.git hash-object -w --stdin)
		t=$(printf "100644 blob %s\tfrom-alternate\n" "$b" |
		    git --git-dir=store.git mktree)
		c=$(git --git-dir=store.git -c user.name=t -c user.email=t@e \
		    commit-tree -m x "$t")
		mv store.git/objects objs && rm -rf store.git
		echo "$PWD/objs" >"$g/objects/info/alternates"
		git --git-dir="$g" update-ref refs/heads/alt "$c"
		git update-index --cacheinfo "160000,$c,sub"
		git commit -qm bump'
		for step in outside inside; do
			fresh "$who"
			as "$who" sh -c "$MODULE" module "$DEEP"
			if [ $step = outside ]; then
				as "$who" sh -c "$alt" alt "$DEEP"
				host_git "$who" submodule update --init
				[ -e sub/from-alternate ]
				continue
			fi
			sleep 2	# the module is older than the run (ctime)
			sandbox "$who" --report "$TOP/r.json" -- sh -c "$alt" alt \
			    "$DEEP"
			# Alternates point git at objects, and run nothing: the
			# command could write the same objects into the module.
			[ "$status" -eq 0 ]
			jq -e '.repositories.kept | map(.path) |
			    index("'"$WS/.git/modules/$DEEP"'")' "$TOP/r.json"
			[ -e ".git/modules/$DEEP" ]
		done
	done
}

@test "G3: a .git file to a repository outside the writable folders is quarantined" {
	for who in $(whos); do
		plant='mkdir -p wt && echo "gitdir: $1" >wt/.git'
		for step in outside inside; do
			fresh "$who"
			# The user's other repository, outside the workspace.
			as "$who" git init -q "$H/other"
			as "$who" git -C "$H/other" config core.fsmonitor \
			    "touch $MARK"
			if [ $step = outside ]; then
				as "$who" sh -c "$plant" plant "$H/other/.git"
				host_git "$who" -C wt status
				[ -e "$MARK" ]
				rm -f "$MARK"
				continue
			fi
			sandbox "$who" -- sh -c "$plant" plant "$H/other/.git"
			[ "$status" -eq 125 ]
			[[ $output == *"quarantined $WS/wt/.git, a git repository"* ]]
			host_git "$who" -C wt status
			[ ! -e "$MARK" ]
		done
	done
}
