#!/usr/bin/env bash
# mk/same.sh OLD_CORDON NEW_CORDON: whether two builds of cordon make the
# same sandbox of the same tree.  It builds a home and a workspace full of
# what the mount plan has to get right (links in and out, a loop, missing
# protected paths, nested repositories: .git folders, .git files, bare
# layouts, submodules' and worktrees' git directories, core.hooksPath,
# hook links, .hg, node_modules, a workspace policy, persistence points),
# then, for each of a few runs, compares what both builds say: the
# --dry-run text, the --report JSON of a trivial command (its run id,
# times and durations normalised), the seccomp program the run loads (read
# from the memfd `cordon run` keeps open while the command runs: the same
# bytes, or the same decisions, tests/tools/bpfsame.c), and a refusal's
# message and status.  Prints the differences; exits 1 on any.
# Run as root (the seccomp program is read through /proc); KEEP=1 keeps
# what both said, in the folder it names.
set -eu

old=$(realpath "${1:?usage: same.sh OLD_CORDON NEW_CORDON}")
bpfsame=$(realpath "$(dirname "$0")/..")/build/tests/tools/bpfsame
new=$(realpath "${2:?usage: same.sh OLD_CORDON NEW_CORDON}")
tmp=$(realpath "$(mktemp -d)")
pids=()
differ=0

cleanup() {
	local p
	set +e
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "${KEEP:-}" ]; then
		echo "same.sh: kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

t=$tmp/t
home=$t/home
ws=$home/proj
out=$t/outside

# Writes stdin to a file, making its folder.
put() {
	mkdir -p "$(dirname "$1")"
	cat >"$1"
}

# A git directory's layout, without git: HEAD, objects, refs, config.
gitdir() {
	mkdir -p "$1/objects/info" "$1/refs/heads" "$1/hooks" "$1/info"
	echo "ref: refs/heads/main" >"$1/HEAD"
	printf '[core]\n\trepositoryformatversion = 0\n' >"$1/config"
}

tree_home() {
	mkdir -p "$home/.config/git" "$home/.ssh" "$home/.cargo/bin" \
	    "$home/.local/bin" "$home/.config/systemd/user" "$home/.aws"
	echo "export A=1" >"$home/.profile"
	echo "[user]" >"$home/.config/git/config"
	echo "secret" >"$home/.aws/credentials"
	echo "key" >"$home/.ssh/id_ed25519"
	echo "localhost ssh-ed25519 AAAA" >"$home/.ssh/known_hosts"
	# ~/.zshrc a link out of the home; ~/.vimrc a dangling one.
	echo "zsh" >"$out/zshrc"
	ln -s "$out/zshrc" "$home/.zshrc"
	ln -s "$home/nowhere/vimrc" "$home/.vimrc"
	# ~/bin a regular file: a rule under it meets a non-directory.
	echo "not a folder" >"$home/bin"
	# ~/.emacs.d a link to a folder in the home.
	mkdir -p "$home/dotfiles/emacs"
	ln -s dotfiles/emacs "$home/.emacs.d"
	# A repository in the home, beside the workspace.
	gitdir "$home/dotfiles/.git"
}

tree_repos() {
	# The workspace's own repository, with hooks: a link in hooks/,
	# core.hooksPath to a folder of the worktree (husky), links there.
	gitdir "$ws/.git"
	printf '[core]\n\thooksPath = .husky\n' >>"$ws/.git/config"
	mkdir -p "$ws/scripts" "$ws/.husky"
	echo "#!/bin/sh" >"$ws/scripts/pre-commit"
	ln -s ../../scripts/pre-commit "$ws/.git/hooks/pre-commit"
	ln -s ../scripts/pre-commit "$ws/.husky/pre-push"
	echo "x" >"$ws/.git/info/attributes"
	# Submodules: a .git file naming modules/NAME, one with '/' in it.
	gitdir "$ws/.git/modules/sub"
	echo "gitdir: ../.git/modules/sub" | put "$ws/sub/.git"
	gitdir "$ws/.git/modules/lib/deep"
	gitdir "$ws/.git/modules/lib/deep/modules/inner"
	echo "gitdir: ../../.git/modules/lib/deep" | put "$ws/lib/deep/.git"
	# A linked worktree: .git file, worktrees/NAME with commondir.
	mkdir -p "$ws/.git/worktrees/wt1" "$ws/wt1"
	echo "../.." >"$ws/.git/worktrees/wt1/commondir"
	echo "$ws/wt1/.git" >"$ws/.git/worktrees/wt1/gitdir"
	echo "ref: refs/heads/wt1" >"$ws/.git/worktrees/wt1/HEAD"
	echo "gitdir: $ws/.git/worktrees/wt1" >"$ws/wt1/.git"
	# A worktree of a repository outside (gitdir and commondir out).
	gitdir "$out/repo.git"
	mkdir -p "$out/repo.git/worktrees/w2" "$ws/w2"
	echo "../.." >"$out/repo.git/worktrees/w2/commondir"
	echo "gitdir: $out/repo.git/worktrees/w2" >"$ws/w2/.git"
	# Bare layouts: HEAD, objects, refs; and HEAD with commondir.
	gitdir "$ws/bare.git"
	mkdir -p "$ws/cd"
	echo "ref: refs/heads/main" >"$ws/cd/HEAD"
	echo "../bare.git" >"$ws/cd/commondir"
	# .git a link, out of the workspace and in it; a .git file that
	# names nothing; a .git file whose gitdir is missing.
	gitdir "$out/linked.git"
	mkdir -p "$ws/linked" "$ws/inlinked" "$ws/junk" "$ws/lost"
	ln -s "$out/linked.git" "$ws/linked/.git"
	ln -s ../bare.git "$ws/inlinked/.git"
	echo "not a gitdir line" >"$ws/junk/.git"
	echo "gitdir: ../nowhere/.git" >"$ws/lost/.git"
	# Mercurial, and repositories in node_modules.
	mkdir -p "$ws/hgrepo/.hg" "$ws/node_modules/pkg/nested"
	gitdir "$ws/node_modules/pkg/.git"
	mkdir -p "$ws/node_modules/pkg/nested/.hg"
	# Wide: 150 folders side by side, a repository in one of them.
	mkdir -p "$ws/wide/w"{1..150}/x
	gitdir "$ws/wide/w17/x/.git"
	mkdir -p "$ws/wide/w90/.hg"
}

tree_links() {
	mkdir -p "$ws/src/a/b" "$out/data"
	ln -s src "$ws/in"
	ln -s "$out/data" "$ws/out"
	ln -s loop "$ws/loop"
	ln -s nowhere "$ws/dangling"
	ln -s ../../.. "$ws/src/a/up"
	echo "plain" >"$ws/file"
	mkdir -p "$ws/bin" "$ws/docs" "$ws/secret/pub"
	echo "s" >"$ws/secret/key"
	# The workspace policy: rules through links in and out, a missing
	# path, a path under a file, a hidden folder reopened.
	put "$ws/.cordon/policy.json" <<-EOF
	{"version": 1, "filesystem": {
	  "read_only": ["docs/", "in/a/", "out/", "missing/deep/x",
	    "file/sub", "dangling", "loop/x"],
	  "deny": ["secret", "in/a/b", "out/data2", "nothing/here"]}}
	EOF
}

tree() {
	mkdir -p "$home" "$ws" "$out" "$t/extra/inner/.git"
	tree_home
	tree_repos
	tree_links
	gitdir "$t/extra/inner/.git"
	# The run's own /tmp hides the host's: the FIFO is in the workspace.
	mkfifo "$ws/.go"
}

# The run id, times and durations of a report, and the run id and
# agent's socket of a dry run, made the same for both builds.
norm() {
	local key='"([a-z_]*(time|_at|_ms|_secs|duration|started|ended|elapsed)'
	local val='[a-z_]*)": ?("[^"]*"|[0-9.e+-]+)'
	sed -E -e 's/"(id|sandbox|run_id|run)": ?"[^"]*"/"\1": "ID"/g' \
	    -e "s/$key$val/\"\\1\": \"T\"/g" \
	    -e 's/^sandbox [0-9a-zA-Z-]+$/sandbox ID/' \
	    -e 's/cordon-phantom-[0-9a-f]{32}/cordon-phantom-X/g'
}

# Runs one build: env, in the workspace, as the tests do.
cordon_in() {
	(cd "$ws" && exec env -i PATH="$path" HOME="$home" \
	    XDG_CONFIG_HOME="$home/.config" CORDON_SYSTEM_POLICY= \
	    ${agent:+SSH_AUTH_SOCK="$agent"} "$@")
}

# The children of pid $1, one a line.
children_of() {
	cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | grep .
}

# The seccomp program of the run of pid $1: the memfd it keeps open,
# read once the command runs (PID 1 has a child): cordon run writes the
# program after the clone, before the command may start.
seccomp_of() {
	local fd c up=
	for _ in $(seq 200); do
		for c in $(children_of "$1"); do
			[ -n "$(children_of "$c")" ] && up=1
		done
		[ -n "$up" ] && break
		sleep 0.05
	done
	for _ in $(seq 200); do
		for fd in /proc/"$1"/fd/*; do
			case $(readlink "$fd" 2>/dev/null) in
			*memfd:cordon-seccomp*)
				od -An -tx1 -v "$fd"
				return 0 ;;
			esac
		done
		sleep 0.05
	done
	echo "no seccomp memfd in pid $1" >&2
	return 1
}

# One build's view of one case: dry run, report, seccomp, refusal.
view() {
	local bin=$1 dir=$2 pid rc
	shift 2
	mkdir -p "$dir"
	cordon_in "$bin" run "$@" --dry-run -- true \
	    >"$dir/dry" 2>"$dir/dry.err" || echo "status $?" >>"$dir/dry"
	# A refused run: its message and status are all there is.
	if grep -q '^status' "$dir/dry"; then
		cordon_in "$bin" run "$@" -- true >"$dir/run.out" \
		    2>"$dir/run.err" || echo "status $?" >>"$dir/run.out"
		return 0
	fi
	# The command waits on a FIFO while the seccomp program is read.
	# cordon_in, but the pid of `cordon run` itself (it execs).
	(cd "$ws" && exec env -i PATH="$path" HOME="$home" \
	    XDG_CONFIG_HOME="$home/.config" CORDON_SYSTEM_POLICY= \
	    ${agent:+SSH_AUTH_SOCK="$agent"} "$bin" run --quiet \
	    --report "$dir/report.raw" "$@" -- \
	    sh -c "cat $ws/.go >/dev/null; true") \
	    >"$dir/run.out" 2>"$dir/run.err" &
	pid=$!
	pids+=("$pid")
	seccomp_of "$pid" >"$dir/seccomp" || true
	# Opening the FIFO waits for the command, which may have failed.
	timeout 10 sh -c "echo >$ws/.go" 2>/dev/null || true
	rc=0
	wait "$pid" || rc=$?
	echo "status $rc" >>"$dir/run.out"
	if [ -s "$dir/report.raw" ]; then
		jq -S . "$dir/report.raw" | norm >"$dir/report"
	fi
	rm -f "$dir/report.raw"
	norm <"$dir/dry" >"$dir/dry.n" && mv "$dir/dry.n" "$dir/dry"
	norm <"$dir/dry.err" >"$dir/dry.n" && mv "$dir/dry.n" "$dir/dry.err"
}

# Whether both seccomp programs of case $1 decide alike: the same bytes,
# or, laid out otherwise, the same decisions on the calls bpfsame runs
# both on (tests/tools/bpfsame.c, built by make check).
decide_alike() {
	local old_p=$tmp/old/$1/seccomp new_p=$tmp/new/$1/seccomp
	[ -s "$old_p" ] && [ -s "$new_p" ] || return 1
	cmp -s "$old_p" "$new_p" && return 0
	if [ ! -x "$bpfsame" ]; then
		echo "same.sh: $1: the seccomp programs differ, and no" \
		    "$bpfsame to compare what they decide (make check builds it)"
		return 1
	fi
	if "$bpfsame" "$old_p" "$new_p" >"$tmp/bpfsame"; then
		echo "same.sh: $1: the seccomp program is laid out" \
		    "otherwise; $(sed 's/^bpfsame: //' "$tmp/bpfsame")"
		return 0
	fi
	echo "same.sh: $1: the seccomp programs decide otherwise:"
	cat "$tmp/bpfsame"
	return 1
}

# One case, both builds: $1 names it, the rest are `cordon run` flags.
case_() {
	local name=$1 f
	shift
	view "$old" "$tmp/old/$name" "$@"
	view "$new" "$tmp/new/$name" "$@"
	for f in dry dry.err report seccomp run.out; do
		[ -e "$tmp/old/$name/$f" ] || [ -e "$tmp/new/$name/$f" ] ||
		    continue
		if [ "$f" = seccomp ] && decide_alike "$name"; then
			continue
		fi
		if ! diff -u "$tmp/old/$name/$f" "$tmp/new/$name/$f" \
		    >"$tmp/diff"; then
			echo "same.sh: $name: $f differs:"
			head -n 60 "$tmp/diff"
			differ=1
		fi
	done
	if [ ! -s "$tmp/old/$name/seccomp" ] && [ "$name" != refused ]; then
		echo "same.sh: $name: no seccomp program read"
		differ=1
	fi
	if ! grep -q '^mounts, in order:' "$tmp/old/$name/dry" &&
	    [ "$name" != refused ]; then
		echo "same.sh: $name: the dry run printed no plan"
		differ=1
	fi
}

tree
path="$ws/bin:$home/.cargo/bin:$home/.local/bin:$home/missing/bin"
path="$path:/usr/local/bin:/usr/bin:/bin"
agent=
case_ default --network none
case_ home --network none --write "$home" --write "$t/extra" \
    --read-only "$ws/src" --deny-path "$ws/secret" \
    --write "$ws/secret/pub"
if command -v ssh-agent >/dev/null; then
	agent=$tmp/agent.sock
	ssh-agent -D -a "$agent" >/dev/null 2>&1 &
	pids+=("$!")
	for _ in $(seq 100); do [ -S "$agent" ] && break; sleep 0.05; done
	case_ agent --allow-domain example.test --write "$home"
	agent=
else
	echo "same.sh: no ssh-agent: the case of files shown in a hidden" \
	    "folder is left out"
fi
ln -s "$out" "$ws/tools"
case_ refused --network none --write "$ws/tools"
rm "$ws/tools"
if [ "$differ" -eq 0 ]; then
	echo "same.sh: the same plan, report and seccomp decisions in" \
	    "$(find "$tmp/old" -mindepth 1 -maxdepth 1 | wc -l) cases"
fi
exit "$differ"
