#!/usr/bin/env bats
# Ordinary agent work behaves inside cordon run as on the host.  Each
# test is one task a coding agent does (clone, commit, push, build,
# serve, sign, ...), a short bash script run three times, each from a
# fresh copy of the same workspace (a git repository with one commit),
# home and server: on the host as the test user, then inside `cordon
# run` as the test user, without and with a host ssh-agent (which
# changes how cordon brokers connect(2)).  The exit status, what the
# task prints, the workspace's files and the server's refs after it must
# be the same all three times (commit dates are fixed, so are hashes).
#
# The servers are local: tests/e2e/clients/serve.py on 127.0.0.1 serves
# bare repositories through git http-backend (smart HTTP, push allowed)
# as git.test and a static npm registry as npm.test.  Inside, cordon's
# proxy reaches them (--resolve, --allow-cidr, --allow-domain); on the
# host the same names go to the server itself as the HTTP proxy, so the
# URLs the task sees are the same.  Nothing comes from the network: Go
# with GOPROXY=off, cargo offline, pip from a wheel file, npm from the
# local registry.
#
# A few tasks write what the threat model keeps out of the sandbox on
# purpose (git hooks, core.hooksPath, ~/.bashrc): "(held back on
# purpose)" in their names.  They must do it on the host; inside, the
# host must be left as it was, and cordon's standard error must name
# what it held back and how to apply it.
#
# make bench runs this file under other sandboxes too (mk/bench-tasks.sh):
# there TASKS_WRAP names an executable that runs its arguments in that
# sandbox, in place of `cordon run`; there is no run with an ssh-agent,
# and a held-back task passes when the host is left as it was.  With
# TASKS_WHY naming a file, each failure adds a line there saying why.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export HOME="$BATS_FILE_TMPDIR/home"
	mkdir -p "$HOME"
	sandbox_setup
	export UDIR UCORDON WS
	export TEMPLATES="$UDIR/templates" OUT="$UDIR/out"
	mkdir -p "$TEMPLATES" "$OUT"
	PORT=$(free_port)
	export PORT
	mkfixtures
	cp -a "$UDIR/git" "$TEMPLATES/git"
	start_bg serve python3 "$BATS_TEST_DIRNAME/clients/serve.py" http \
	    --listen "$PORT" --root "$UDIR/www" --git "$UDIR/git"
	export SERVE_PID=$BG_PID
	wait_listen "tcp:127.0.0.1:$PORT"
	export AGENT="$UDIR/agent/agent.sock"
	mkdir -p "$UDIR/agent"
	[ "$(id -u)" -ne 0 ] || chown -R "$TEST_USER:" "$UDIR/agent"
	start_bg agent as_user "$UDIR/agent" ssh-agent -D -a "$AGENT"
	export AGENT_PID=$BG_PID
	wait_listen "unix:$AGENT"
}

teardown_file() {
	kill "$SERVE_PID" "$AGENT_PID" 2>/dev/null || true
	wait "$SERVE_PID" "$AGENT_PID" 2>/dev/null || true
	sandbox_teardown
}

setup() {
	RUN_USER=$TEST_USER
	[ "$(id -u)" -eq 0 ] || RUN_USER=$(id -un)
	# The server's URLs, as the tasks use them; the rest makes runs
	# repeatable (dates, so hashes) and keeps every tool off the network.
	TASK_ENV=(LANG=C.UTF-8 TZ=UTC TERM=xterm SHELL=/bin/bash
	    USER="$RUN_USER" LOGNAME="$RUN_USER"
	    GIT_AUTHOR_DATE=2024-01-01T00:00:00Z
	    GIT_COMMITTER_DATE=2024-01-01T00:00:00Z
	    SRV="http://git.test:$PORT/git" FIX="$UDIR/fix"
	    npm_config_registry="http://npm.test:$PORT/"
	    npm_config_audit=false npm_config_fund=false
	    npm_config_update_notifier=false
	    GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local GOSUMDB=off
	    CARGO_NET_OFFLINE=true PIP_NO_INDEX=1
	    PIP_DISABLE_PIP_VERSION_CHECK=1)
	# On the host the server is its own proxy: it takes absolute URLs.
	HOST_ENV=(http_proxy="http://127.0.0.1:$PORT"
	    HTTP_PROXY="http://127.0.0.1:$PORT"
	    npm_config_proxy="http://127.0.0.1:$PORT"
	    no_proxy=localhost,127.0.0.1,::1 NO_PROXY=localhost,127.0.0.1,::1)
	ALLOW=(--policy "$UDIR/fix/env.json" --read-only "$UDIR/fix"
	    --resolve git.test:127.0.0.1 --resolve npm.test:127.0.0.1
	    --allow-cidr 127.0.0.1/32
	    --allow-domain "git.test:$PORT" --allow-domain "npm.test:$PORT")
}

teardown() {
	teardown_bg
}

# How long one run of a task may take: the slowest takes a few seconds.
TASK_SECS=20

# What every task may use: wait_for CMD... runs CMD until it succeeds,
# for up to 5 s.
PRELUDE='wait_for() {
	local i
	for i in $(seq 250); do "$@" && return; sleep 0.02; done
	return 1
}'


# Makes what every run starts from, in $TEMPLATES: the workspace (a git
# repository with one commit), the home (~/.gitconfig, ~/.bashrc); and
# what the server serves: bare repositories app.git (one commit),
# lib.git, super.git (lib as a submodule) and empty.git, all taking
# pushes; the npm package cordon-probe; and a wheel in $UDIR/fix.
mkfixtures() {
	local g=(git -c user.name=Fixture -c user.email=f@example.test
	    -c init.defaultBranch=main) src="$BATS_FILE_TMPDIR/src" lib
	export GIT_AUTHOR_DATE=2024-01-01T00:00:00Z
	export GIT_COMMITTER_DATE=2024-01-01T00:00:00Z
	mkdir -p "$TEMPLATES/ws" "$TEMPLATES/home" "$UDIR/git" "$UDIR/www"
	"${g[@]}" init -q "$TEMPLATES/ws"
	printf '# project\n' >"$TEMPLATES/ws/README.md"
	"${g[@]}" -C "$TEMPLATES/ws" add README.md
	"${g[@]}" -C "$TEMPLATES/ws" commit -qm initial
	git config -f "$TEMPLATES/home/.gitconfig" user.name Agent
	git config -f "$TEMPLATES/home/.gitconfig" user.email agent@example.test
	git config -f "$TEMPLATES/home/.gitconfig" init.defaultBranch main
	printf '# the user'"'"'s own\n' >"$TEMPLATES/home/.bashrc"
	[ "$(id -u)" -ne 0 ] ||
	    chown -R "$TEST_USER:" "$TEMPLATES/ws" "$TEMPLATES/home"
	for r in app lib; do
		"${g[@]}" init -q "$src/$r"
		echo "$r v1" >"$src/$r/$r.txt"
		"${g[@]}" -C "$src/$r" add .
		"${g[@]}" -C "$src/$r" commit -qm "$r: first"
		"${g[@]}" clone -q --bare "$src/$r" "$UDIR/git/$r.git"
	done
	lib=$(git -C "$src/lib" rev-parse HEAD)
	"${g[@]}" init -q "$src/super"
	git config -f "$src/super/.gitmodules" submodule.lib.path lib
	git config -f "$src/super/.gitmodules" submodule.lib.url \
	    "http://git.test:$PORT/git/lib.git"
	"${g[@]}" -C "$src/super" add .gitmodules
	"${g[@]}" -C "$src/super" update-index --add \
	    --cacheinfo "160000,$lib,lib"
	"${g[@]}" -C "$src/super" commit -qm "super: lib as a submodule"
	"${g[@]}" clone -q --bare "$src/super" "$UDIR/git/super.git"
	"${g[@]}" init -q --bare "$UDIR/git/empty.git"
	for r in "$UDIR"/git/*.git; do
		git -C "$r" config http.receivepack true
	done
	python3 "$BATS_TEST_DIRNAME/clients/mkpkg.py" npm "$UDIR/www" \
	    cordon-probe 1.0.0 "http://npm.test:$PORT"
	python3 "$BATS_TEST_DIRNAME/clients/mkpkg.py" wheel "$UDIR/fix" \
	    cordon_wheel 1.0.0
	# cordon passes only the variables its policy names (env.pass).
	cat >"$UDIR/fix/env.json" <<-'EOF'
		{"version": 1, "env": {"pass": ["GIT_AUTHOR_DATE",
		    "GIT_COMMITTER_DATE", "SRV", "FIX", "npm_config_*", "GO*",
		    "CARGO_NET_OFFLINE", "PIP_*"]}}
	EOF
	chmod -R a+rX "$UDIR/fix" "$UDIR/www"
	unset GIT_AUTHOR_DATE GIT_COMMITTER_DATE
}

# Puts back the workspace, the home and the server's repositories as
# they were before any run.
fresh() {
	rm -rf "$WS" "$UDIR/home" "$UDIR/git"
	cp -a "$TEMPLATES/ws" "$WS"
	cp -a "$TEMPLATES/home" "$UDIR/home"
	cp -a "$TEMPLATES/git" "$UDIR/git"
}

# Runs $TASK from a fresh start, as the test user: $1 is host, sandbox
# (cordon run) or agent (cordon run with a host ssh-agent).  Its output
# is in $OUT/$1.out and .err; prints what is compared: the exit status,
# that output, the workspace's files (not git's objects) and the
# server's refs.
run_task() {
	local how=$1 st=0 r env=("${TASK_ENV[@]}")
	local task=(bash -eo pipefail -c "$PRELUDE
$TASK")
	local cmd=("${task[@]}")
	case $how in
	host) env+=("${HOST_ENV[@]}") ;;
	agent) env+=(SSH_AUTH_SOCK="$AGENT") ;&
	sandbox) cmd=("$UCORDON" run --read-only "$UDIR/bin" "${ALLOW[@]}"
	    -- "${task[@]}") ;;
	esac
	# make bench: another sandbox in place of cordon's.
	[ "$how" = host ] || [ -z "${TASKS_WRAP:-}" ] ||
	    cmd=("$TASKS_WRAP" "${task[@]}")
	fresh
	(cd "$WS" && as_user "$UDIR/home" env "${env[@]}" \
	    timeout "$TASK_SECS" "${cmd[@]}") \
	    >"$OUT/$how.out" 2>"$OUT/$how.err" </dev/null || st=$?
	echo "status $st"
	echo "--- output"
	cat "$OUT/$how.out"
	echo "--- workspace"
	# Not git's objects; not rustc's incremental state (named by time).
	find "$WS" \( -path '*/.git/objects' -o -path '*/incremental' \) \
	    -prune -o -printf '%y %P %l\n' | sort
	echo "--- server"
	for r in "$UDIR"/git/*.git; do
		git -C "$r" for-each-ref \
		    --format="${r##*/} %(refname) %(objectname)"
	done
}

# Adds to $TASKS_WHY, if set, a line: this test's name, a tab, and $1,
# why it failed.
why() {
	[ -z "${TASKS_WHY:-}" ] ||
	    printf '%s\t%s\n' "$BATS_TEST_DESCRIPTION" "$1" >>"$TASKS_WHY"
}

# Shows where run $2's result ($3) differs from the host's ($1), with the
# first lines cordon wrote on its standard error, and fails.
differs() {
	local last
	last=$(grep -v '^cordon' "$OUT/$2.err" | grep . |
	    { grep -iE 'error|fatal|denied|not permitted|unable|cannot' ||
	    cat "$OUT/$2.err"; } | tail -n 1)
	why "${last:-differs: $(diff <(echo "$1") <(echo "$3") |
	    grep -m 1 '^>' | cut -c 3-)}"
	echo "# $2 differs from the host:"
	diff <(echo "$1") <(echo "$3") | head -n 40
	echo "# $2: cordon said:"
	grep '^cordon' "$OUT/$2.err" | head -n 8
	echo "# $2: the task's standard error ended:"
	grep -v '^cordon' "$OUT/$2.err" | tail -n 8
	return 1
}

# Runs the task on stdin on the host and in the sandbox, without and
# with an ssh-agent: it must pass on the host, and the sandbox's runs
# must give what the host's gave.
both() {
	local host sandbox agent ok=0
	TASK=$(cat)
	host=$(run_task host)
	[[ "$host" == "status 0"$'\n'* ]] || {
		why "fails on the host"
		echo "# the task fails on the host:"
		echo "$host" | head -n 20
		cat "$OUT/host.err"
		return 1
	}
	sandbox=$(run_task sandbox)
	[ "$sandbox" = "$host" ] || differs "$host" sandbox "$sandbox" || ok=1
	[ -z "${TASKS_WRAP:-}" ] || return "$ok"
	agent=$(run_task agent)
	[ "$agent" = "$host" ] || differs "$host" agent "$agent" || ok=1
	return "$ok"
}

# For a task the threat model keeps out on purpose: on the host the task
# on stdin passes and test $2 (a shell condition, run in the workspace
# as root, HOME the test user's) holds; inside, it must not hold after
# the run, and cordon's standard error must name $1 and say how to apply
# what it held back.
held_back() {
	local what=$1 cond=$2 host
	TASK=$(cat)
	host=$(run_task host)
	[[ "$host" == "status 0"$'\n'* ]] || {
		why "fails on the host"
		echo "$host" | head -n 20
		cat "$OUT/host.err"
		return 1
	}
	(cd "$WS" && HOME="$UDIR/home" eval "$cond") >/dev/null || {
		echo "# on the host, the task did not do it: $cond"
		return 1
	}
	run_task sandbox >/dev/null
	echo "# cordon said:"
	grep '^cordon' "$OUT/sandbox.err" || true
	echo "# the task's standard error ended:"
	grep -v '^cordon' "$OUT/sandbox.err" | tail -n 4
	if (cd "$WS" && HOME="$UDIR/home" eval "$cond") >/dev/null; then
		why "the sandbox wrote $what on the host"
		echo "# the sandbox did it on the host: $cond"
		return 1
	fi
	[ -z "${TASKS_WRAP:-}" ] || return 0
	grep '^cordon' "$OUT/sandbox.err" | grep -qF -- "$what" || {
		why "cordon did not name $what"
		echo "# cordon did not name $what"
		return 1
	}
	grep '^cordon' "$OUT/sandbox.err" | grep -qi 'apply' || {
		why "cordon did not say how to apply it"
		echo "# cordon did not say how to apply it"
		return 1
	}
}

# --- git ---------------------------------------------------------------

@test "task: git status, diff, log and grep" {
	both <<-'EOF'
		echo more >>README.md
		git status --short
		git diff --stat
		git grep -n project
		git log --format='%H %an %s'
	EOF
}

@test "task: git add and commit in the workspace" {
	both <<-'EOF'
		echo 'int x;' >x.c
		echo more >>README.md
		git add -A
		git commit -qm 'add x.c'
		git log --format='%H %s'
		git status --short
	EOF
}

@test "task: git clone over smart HTTP into the workspace" {
	both <<-'EOF'
		git clone -q "$SRV/app.git" app
		git -C app log --format='%H %s'
		git -C app remote -v
		cat app/app.txt
	EOF
}

@test "task: git init a repository in a subfolder and commit" {
	both <<-'EOF'
		git init -q sub
		cd sub
		echo x >f
		git add f
		git commit -qm first
		git log --format='%H %s'
	EOF
}

@test "task: git remote add and push -u to the server" {
	both <<-'EOF'
		git remote add origin "$SRV/empty.git"
		git push -q -u origin main
		git rev-parse --abbrev-ref '@{u}'
		git status -sb
	EOF
}

@test "task: git clone, commit and push back" {
	both <<-'EOF'
		git clone -q "$SRV/app.git" app
		cd app
		echo v2 >app.txt
		git commit -qam 'app: v2'
		git push -q
		git log --format='%H %s' origin/main
	EOF
}

@test "task: git fetch and pull what another clone pushed" {
	both <<-'EOF'
		git clone -q "$SRV/app.git" a
		git clone -q "$SRV/app.git" b
		(cd a && echo v2 >app.txt && git commit -qam 'from a' &&
		    git push -q)
		cd b
		git fetch -q
		git pull -q --ff-only
		git log --format='%H %s'
	EOF
}

@test "task: git config a setting of the repository" {
	both <<-'EOF'
		git config user.name 'Agent Two'
		git config pull.rebase true
		git config --get user.name
		git config --get pull.rebase
		git commit -q --allow-empty -m 'as agent two'
		git log -1 --format='%an'
	EOF
}

@test "task: git submodule add from the server" {
	both <<-'EOF'
		git submodule add -q "$SRV/lib.git" lib
		git commit -qm 'add lib'
		git submodule status
		cat lib/lib.txt
	EOF
}

@test "task: git clone and submodule update --init" {
	both <<-'EOF'
		git clone -q "$SRV/super.git" super
		cd super
		git submodule update -q --init
		git submodule status
		cat lib/lib.txt
	EOF
}

@test "task: git worktree add inside the workspace" {
	both <<-'EOF'
		git worktree add -q -b feature wt
		cd wt
		echo f >feature.txt
		git add feature.txt
		git commit -qm feature
		cd ..
		git worktree list --porcelain | grep -c worktree
		git log --format='%H %s' feature
	EOF
}

@test "task: git branch, checkout and merge" {
	both <<-'EOF'
		git checkout -q -b topic
		echo t >t.txt
		git add t.txt
		git commit -qm topic
		git checkout -q main
		git merge -q --no-ff -m 'merge topic' topic
		git log --format='%H %s' --graph
	EOF
}

@test "task: git rebase a branch onto main" {
	both <<-'EOF'
		git checkout -q -b topic
		echo t >t.txt && git add t.txt && git commit -qm topic
		git checkout -q main
		echo m >m.txt && git add m.txt && git commit -qm main
		git checkout -q topic
		git rebase -q main
		git log --format='%H %s'
	EOF
}

@test "task: git stash and stash pop" {
	both <<-'EOF'
		echo wip >>README.md
		git stash -q
		git stash list | wc -l
		cat README.md
		git stash pop -q
		cat README.md
	EOF
}

@test "task: git tag and describe" {
	both <<-'EOF'
		git tag -a v1.0 -m 'release 1.0'
		git commit -q --allow-empty -m next
		git describe
		git tag -l
	EOF
}

@test "task: git reset --hard and clean" {
	both <<-'EOF'
		echo junk >junk.txt
		mkdir -p build && touch build/out.o
		echo changed >README.md
		git reset -q --hard
		git clean -qfdx
		git status --short
		cat README.md
	EOF
}

@test "task: git format-patch and am" {
	both <<-'EOF'
		git checkout -q -b fix
		echo fixed >>README.md
		git commit -qam 'fix readme'
		git format-patch -q -1 -o patches
		git checkout -q main
		git am -q patches/*.patch
		git log --format='%H %s'
	EOF
}

@test "task: git bisect run finds the bad commit" {
	both <<-'EOF'
		for i in 1 2 3 4 5; do
			echo "$i" >n.txt
			git add n.txt
			git commit -qm "n=$i"
		done
		git bisect start -- >/dev/null
		git bisect bad
		git bisect good HEAD~4 >/dev/null
		git bisect run sh -c 'test "$(cat n.txt)" -lt 4' |
		    grep 'is the first bad commit'
		git bisect reset >/dev/null
	EOF
}

@test "task: git gc and fsck" {
	both <<-'EOF'
		for i in 1 2 3; do git commit -q --allow-empty -m "c$i"; done
		git gc -q
		git fsck --no-progress
		git count-objects -v | grep -E '^(count|in-pack):'
	EOF
}

# --- toolchains ----------------------------------------------------------

@test "task: make and cc" {
	both <<-'EOF'
		cat >hello.c <<-'C'
		#include <stdio.h>
		int main(void) { puts("hello from cc"); return 0; }
		C
		printf 'hello: hello.c\n\tcc -O0 -o $@ hello.c\n' >Makefile
		make -s
		./hello
	EOF
}

@test "task: make -j with parallel jobs" {
	both <<-'EOF'
		for i in 1 2 3 4; do
			echo "int f$i(void) { return $i; }" >"f$i.c"
		done
		cat >main.c <<-'C'
		int f1(void), f2(void), f3(void), f4(void);
		int main(void) { return f1() + f2() + f3() + f4() - 10; }
		C
		printf 'OBJ = main.o f1.o f2.o f3.o f4.o\n' >Makefile
		printf 'prog: $(OBJ)\n\tcc -o $@ $(OBJ)\n' >>Makefile
		make -s -j4
		./prog && echo ran
	EOF
}

@test "task: cmake configure and build" {
	both <<-'EOF'
		mkdir -p src
		cat >src/CMakeLists.txt <<-'CMAKE'
		cmake_minimum_required(VERSION 3.13)
		project(demo C)
		add_executable(demo main.c)
		CMAKE
		cat >src/main.c <<-'C'
		#include <stdio.h>
		int main(void) { puts("cmake ok"); return 0; }
		C
		cmake -S src -B build >/dev/null
		cmake --build build >/dev/null
		./build/demo
	EOF
}

@test "task: cargo new, build and test" {
	both <<-'EOF'
		cargo new -q app
		cd app
		cargo build -q --offline
		cargo test -q --offline 2>/dev/null | grep 'test result'
		./target/debug/app
	EOF
}

@test "task: go mod init and build with a local module" {
	both <<-'EOF'
		mkdir -p greet cmd
		(cd greet && go mod init example.test/greet 2>/dev/null)
		cat >greet/greet.go <<-'GO'
		package greet

		func Hello() string { return "hello from go" }
		GO
		cd cmd
		go mod init example.test/cmd 2>/dev/null
		go mod edit -require example.test/greet@v0.0.0 \
		    -replace example.test/greet=../greet
		cat >main.go <<-'GO'
		package main

		import (
		"fmt"
		"example.test/greet"
		)

		func main() { fmt.Println(greet.Hello()) }
		GO
		go build -o hello .
		./hello
	EOF
}

@test "task: go test" {
	both <<-'EOF'
		go mod init example.test/calc 2>/dev/null
		cat >calc.go <<-'GO'
		package calc

		func Add(a, b int) int { return a + b }
		GO
		cat >calc_test.go <<-'GO'
		package calc

		import "testing"

		func TestAdd(t *testing.T) {
		if Add(2, 2) != 4 {
		t.Fatal("2+2")
		}
		}
		GO
		go test -count=1 ./... | sed 's/\t[0-9.]*s$//'
	EOF
}

@test "task: npm init and run a script" {
	both <<-'EOF'
		npm init -y >/dev/null
		npm pkg set scripts.hello='node -e "console.log(1 + 1)"'
		npm run -s hello
	EOF
}

@test "task: npm install a package from the local registry" {
	both <<-'EOF'
		npm init -y >/dev/null
		npm install -s cordon-probe
		node -p 'require("cordon-probe")'
		npm ls --depth=0 | tail -n +2
	EOF
}

@test "task: node script with child processes and files" {
	both <<-'EOF'
		cat >t.js <<-'JS'
		const { execFileSync, spawnSync } = require("child_process");
		const fs = require("fs");
		fs.mkdirSync("out", { recursive: true });
		const log = execFileSync("git", ["log", "--format=%s"]);
		fs.writeFileSync("out/a.txt", log);
		console.log(fs.readFileSync("out/a.txt", "utf8").trim());
		console.log(spawnSync("sh", ["-c", "exit 3"]).status);
		JS
		node t.js
	EOF
}

@test "task: python venv and pip install of a local wheel" {
	both <<-'EOF'
		python3 -m venv .venv
		.venv/bin/pip install -q "$FIX"/files/cordon_wheel-1.0.0-*.whl
		.venv/bin/python -c 'import cordon_wheel; print(cordon_wheel.WHO)'
		.venv/bin/pip list 2>/dev/null | grep cordon
	EOF
}

@test "task: python unittest" {
	both <<-'EOF'
		mkdir -p tests
		printf 'def add(a, b):\n    return a + b\n' >calc.py
		cat >tests/test_calc.py <<-'PY'
		import unittest
		from calc import add

		class T(unittest.TestCase):
		    def test_add(self):
		        self.assertEqual(add(2, 2), 4)
		PY
		touch tests/__init__.py
		python3 -m unittest -q 2>&1 | grep -v '^Ran'
	EOF
}

@test "task: python multiprocessing pool" {
	both <<-'EOF'
		python3 - <<-'PY'
		import multiprocessing as mp
		def sq(x):
		    return x * x
		if __name__ == "__main__":
		    with mp.Pool(4) as p:
		        print(sum(p.map(sq, range(100))))
		    q = mp.Queue()
		    w = mp.Process(target=q.put, args=("from a child",))
		    w.start(); print(q.get()); w.join(); print(w.exitcode)
		PY
	EOF
}

@test "task: sqlite3 command-line database" {
	both <<-'EOF'
		sqlite3 app.db 'create table t(id integer primary key, name text);
		    insert into t(name) values ("a"), ("b");'
		sqlite3 app.db 'select count(*), group_concat(name) from t;'
	EOF
}

@test "task: python sqlite3 with a WAL journal" {
	both <<-'EOF'
		python3 - <<-'PY'
		import sqlite3
		db = sqlite3.connect("data.db")
		print(db.execute("pragma journal_mode=wal").fetchone()[0])
		db.execute("create table t(x)")
		db.executemany("insert into t values (?)", [(i,) for i in range(10)])
		db.commit()
		other = sqlite3.connect("data.db")
		print(other.execute("select sum(x) from t").fetchone()[0])
		db.close()
		PY
	EOF
}

# --- processes, sockets, terminals ----------------------------------------

@test "task: background jobs and wait" {
	both <<-'EOF'
		(wait_for test -e go; echo one >one.txt) &
		(wait_for test -e go; echo two >two.txt) &
		jobs | wc -l
		touch go
		wait
		cat one.txt two.txt
	EOF
}

@test "task: kill of a child" {
	both <<-'EOF'
		sleep 30 &
		pid=$!
		kill "$pid"
		wait "$pid" || echo "child ended with $?"
		sleep 30 &
		kill -9 $!
		wait $! || echo "child ended with $?"
	EOF
}

@test "task: timeout of a slow command" {
	both <<-'EOF'
		timeout 0.2 sleep 10 || echo "timeout gave $?"
		timeout -s KILL 0.2 sleep 10 || echo "timeout gave $?"
	EOF
}

@test "task: a detached daemon with a pid file, then stopped" {
	both <<-'EOF'
		setsid nohup sh -c 'echo $$ >daemon.pid; exec sleep 60' \
		    >/dev/null 2>&1 &
		wait_for test -s daemon.pid
		pid=$(cat daemon.pid)
		kill -0 "$pid" && echo running
		kill "$pid"
		wait_for test ! -e "/proc/$pid" && echo stopped
		rm daemon.pid
	EOF
}

@test "task: ps finds its own children" {
	both <<-'EOF'
		sleep 30 &
		# Until the child has run exec, ps names it bash: not a race
		# of the task's own.
		wait_for sh -c "ps -o comm= -p $! | grep -qx sleep"
		ps -o comm= -p $!
		ps -o args= --ppid $$ | grep -c 'sleep 30'
		kill $!
	EOF
}

@test "task: flock between two processes" {
	both <<-'EOF'
		(flock 9; echo first; touch held; wait_for test -e go
		    echo first-done) 9>lock &
		wait_for test -e held
		flock -n lock true || echo busy
		touch go
		( flock 9; echo second ) 9>lock
		wait
		flock -n lock true && echo free
	EOF
}

@test "task: tmux session, send-keys and capture-pane" {
	both <<-'EOF'
		export TMUX_TMPDIR=$(mktemp -d)
		tmux new-session -d -s agent -x 80 -y 10
		tmux send-keys -t agent 'echo hello-from-tmux > tmux.txt' Enter
		wait_for test -s tmux.txt
		cat tmux.txt
		tmux list-sessions -F '#{session_name}'
		tmux kill-server
	EOF
}

@test "task: Unix-socket server and client in the workspace" {
	both <<-'EOF'
		python3 - <<-'PY'
		import os, socket, threading
		path = "app.sock"
		srv = socket.socket(socket.AF_UNIX)
		srv.bind(path)
		srv.listen(1)
		def serve():
		    c, _ = srv.accept()
		    c.sendall(b"echo:" + c.recv(100))
		    c.close()
		threading.Thread(target=serve, daemon=True).start()
		cli = socket.socket(socket.AF_UNIX)
		cli.connect(path)
		cli.sendall(b"ping")
		print(cli.recv(100).decode())
		os.unlink(path)
		PY
	EOF
}

@test "task: Unix-socket server and client in /tmp, two processes" {
	both <<-'EOF'
		sock=$(mktemp -d)/s.sock
		node -e '
		  require("net").createServer(c => c.on("data", d => {
		    c.end("node:" + d); process.exit(0); })).listen(process.argv[1]);
		' "$sock" &
		wait_for test -S "$sock"
		python3 -c 'import socket, sys
		s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
		s.sendall(b"hi"); print(s.recv(100).decode())' "$sock"
		wait
	EOF
}

@test "task: loopback HTTP server and curl" {
	both <<-'EOF'
		mkdir -p site && echo 'served inside' >site/index.html
		port=$((20000 + RANDOM % 20000))
		python3 -m http.server -b 127.0.0.1 -d site "$port" 2>/dev/null &
		wait_for curl -sf -o /dev/null "http://127.0.0.1:$port/"
		curl -sS "http://127.0.0.1:$port/"
		curl -sS "http://localhost:$port/"
		kill $!
	EOF
}

@test "task: node HTTP server and client on loopback" {
	both <<-'EOF'
		node -e '
		const http = require("http");
		const srv = http.createServer((q, a) => a.end("node says " + q.url));
		srv.listen(0, "127.0.0.1", () => {
		  const port = srv.address().port;
		  http.get("http://127.0.0.1:" + port + "/hi", r => {
		    let b = ""; r.on("data", d => b += d);
		    r.on("end", () => { console.log(b); srv.close(); });
		  });
		});'
	EOF
}

@test "task: curl a file from the local server" {
	both <<-'EOF'
		curl -sS -o probe.json "${npm_config_registry}cordon-probe"
		jq -r .name probe.json
	EOF
}

# --- keys and signatures --------------------------------------------------

@test "task: ssh-keygen a key and sign a file with it" {
	both <<-'EOF'
		mkdir -p keys
		ssh-keygen -q -t ed25519 -N '' -C agent -f keys/id
		ssh-keygen -l -f keys/id.pub | awk '{print $1, $4}'
		echo data >file
		ssh-keygen -q -Y sign -f keys/id -n file file
		printf 'agent %s\n' "$(cut -d' ' -f1,2 keys/id.pub)" >allowed
		ssh-keygen -q -Y verify -f allowed -I agent -n file \
		    -s file.sig <file
		rm -r keys file.sig
	EOF
}

@test "task: gpg generate a key, sign and verify (gpg-agent)" {
	both <<-'EOF'
		export GNUPGHOME=$(mktemp -d)
		gpg -q --batch --pinentry-mode loopback --passphrase '' \
		    --quick-gen-key 'Agent <agent@example.test>' ed25519 sign never
		echo data >file
		gpg -q --batch --detach-sign file
		gpg -q --batch --verify file.sig file 2>&1 | grep -o 'Good signature'
		gpgconf --kill all
		rm file.sig
	EOF
}

@test "task: git commit signed with gpg" {
	both <<-'EOF'
		export GNUPGHOME=$(mktemp -d)
		gpg -q --batch --pinentry-mode loopback --passphrase '' \
		    --quick-gen-key 'Agent <agent@example.test>' ed25519 sign never
		git -c user.signingkey=agent@example.test commit -q -S \
		    --allow-empty -m signed
		git verify-commit HEAD 2>&1 | grep -o 'Good signature'
		git log -1 --format='%s %G?'
		gpgconf --kill all
	EOF
}

# --- files -------------------------------------------------------------

@test "task: find, grep, sed and xargs over the sources" {
	both <<-'EOF'
		mkdir -p src/a src/b
		printf 'TODO one\n' >src/a/x.txt
		printf 'done\nTODO two\n' >src/b/y.txt
		grep -rl TODO src | sort
		find src -name '*.txt' -print0 | xargs -0 sed -i 's/TODO/DONE/'
		grep -rh DONE src | sort
	EOF
}

@test "task: tar and gzip an archive and extract it" {
	both <<-'EOF'
		mkdir -p pkg && echo a >pkg/a && echo b >pkg/b
		tar -czf pkg.tar.gz pkg
		mkdir out && tar -xzf pkg.tar.gz -C out
		tar -tzf pkg.tar.gz | sort
		cat out/pkg/a out/pkg/b
	EOF
}

@test "task: symbolic links, chmod +x and a script" {
	both <<-'EOF'
		mkdir -p scripts
		printf '#!/bin/sh\necho "run as $(basename "$0")"\n' >scripts/run.sh
		chmod +x scripts/run.sh
		ln -s scripts/run.sh run
		ln -s ../README.md scripts/readme
		./run
		readlink run
		head -n 1 scripts/readme
	EOF
}

@test "task: mktemp and /tmp" {
	both <<-'EOF'
		d=$(mktemp -d)
		echo scratch >"$d/f"
		cat "$d/f"
		f=$(mktemp)
		echo more >"$f" && cat "$f"
		rm -r "$d" "$f"
		test -w /tmp && echo tmp-writable
	EOF
}

@test "task: whoami, umask and a new file's owner" {
	both <<-'EOF'
		whoami
		umask
		touch mine
		stat -c '%U %a' mine
	EOF
}

# --- held back on purpose (the threat model's persistence points) ----------

@test "task: pre-commit install writes a git hook (held back on purpose)" {
	held_back .git/hooks/pre-commit 'test -x .git/hooks/pre-commit' <<-'EOF'
		printf '#!/bin/sh\nexec make lint\n' >.git/hooks/pre-commit
		chmod +x .git/hooks/pre-commit
	EOF
}

@test "task: husky sets core.hooksPath (held back on purpose)" {
	held_back core.hooksPath \
	    'git config -f .git/config core.hooksPath' <<-'EOF'
		mkdir -p .husky
		printf '#!/bin/sh\nnpm test\n' >.husky/pre-commit
		chmod +x .husky/pre-commit
		git config core.hooksPath .husky
	EOF
}

@test "task: git config --global in the home (held back on purpose)" {
	held_back user.email \
	    'git config -f "$HOME/.gitconfig" --get user.email | grep -q other' \
	    <<-'EOF'
		git config --global user.email other@example.test
	EOF
}

@test "task: append to ~/.bashrc (held back on purpose)" {
	held_back .bashrc 'grep -q "alias ll" "$HOME/.bashrc"' <<-'EOF'
		echo "alias ll='ls -l'" >>~/.bashrc
	EOF
}
