#!/usr/bin/env bash
# make bench: cordon against the tools other sandboxes use, in the same
# run, on this machine's loopback.  Machines are shared and noisy: each
# figure is the median of RUNS runs, and what counts is the ratio to the
# reference measured beside it.
set -eu

# alive, tcp_listening, bg_named, wait_up, median, figure, is_num, ratio
. "$(dirname "$0")/lib.sh"

# The commands the sandbox start section times, by label.  The floor is
# the true binary, not the shell's builtin: each run pays one fork and
# exec, as every other line does.
start_cmds() {
	local cordon=$1
	start_labels=(true unshare bwrap none plain proxy session runsession
	    version logtail tree treesession)
	# CORDON_BEFORE's fresh run, log tail and tree rows beside, when
	# given.
	[ -z "${CORDON_BEFORE:-}" ] || start_labels+=(nonebefore logbefore
	    treebefore treesessionbefore)
	start_cmd_true=("$(type -P true)")
	start_cmd_unshare=(unshare -Urnmpf true)
	start_cmd_bwrap=(bwrap --unshare-all --dev-bind / / --proc /proc true)
	start_cmd_none=("$cordon" run --network none -- true)
	# The same without HOME: no scratch layer over it, so none - plain
	# is what that layer costs (plain pays one more exec, env's; root's
	# runs keep apt's layers in both).
	start_cmd_plain=(env -u HOME "$cordon" run --network none -- true)
	start_cmd_proxy=("$cordon" run -- true)
	# A command in a session (--network none, as none's), through the
	# C-library-only client; the session is started once, by --starts.
	start_cmd_session=("${sessexec:-false}" --session "${sid:-none}" -- true)
	# The same through cordon itself: cordon's own start (its libraries
	# linked, about what cordon --version costs) on top.
	start_cmd_runsession=("$cordon" run --session "${sid:-none}" -- true)
	# cordon's own start alone: the front, which serves it.
	start_cmd_version=("$cordon" --version)
	# The last 10 of 20 egress log lines (cordon-log, execed by the front).
	start_cmd_logtail=("$cordon" log tail "${elog:-none}")
	# In a workspace of 1,100 folders, a git repository: cordon walks it
	# before the run (the plan's scan) and after (the check), and a
	# session after each command.  env -C: one exec more.
	start_cmd_tree=(env -C "${tree:-/}" "$cordon" run --network none \
	    -- true)
	start_cmd_treesession=(env -C "${tree:-/}" "$cordon" run --session \
	    "${sidt:-none}" -- true)
	start_cmd_nonebefore=("${CORDON_BEFORE:-false}" run --network none \
	    -- true)
	start_cmd_logbefore=("${CORDON_BEFORE:-false}" log tail \
	    "${elog:-none}")
	start_cmd_treebefore=(env -C "${tree:-/}" "${CORDON_BEFORE:-false}" \
	    run --network none -- true)
	start_cmd_treesessionbefore=(env -C "${tree:-/}" \
	    "${CORDON_BEFORE:-false}" run --session "${sidtb:-none}" -- true)
}

# The pids of $1's children, one a line.
children() { cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' |
    grep . || true; }

# cpu_us: the CPU time, user and system, of the shell's waited-for
# children so far, in microseconds (times(1), to the millisecond; read
# with no fork, which would count too).
children_cpu() {
	local _u _s m sec
	times >"$tmp_times"
	{ read -r _u _s; read -r _u _s; } <"$tmp_times"
	cpu_us=0
	for sec in "$_u" "$_s"; do
		m=${sec%%m*}; sec=${sec#*m}; sec=${sec%s}
		cpu_us=$((cpu_us + m * 60000000 + 10#${sec%.*} * 1000000 +
		    10#${sec#*.} * 1000))
	done
}

# VmHWM of process $1 in KiB, or "-".
hwm() { awk '$1 == "VmHWM:" { print $2; f = 1 } END { if (!f) print "-" }' \
    "/proc/$1/status" 2>/dev/null || echo -; }

# bench.sh --starts CORDON RUNS: the sandbox start figures, for one user,
# as "name value" lines: each command's median wall time in
# microseconds over RUNS interleaved runs ("failed" when a run failed);
# the mean CPU time (microseconds, user and system, of every process
# the command waited for: times(1) of the bench's shell, whose children
# it is) of each; the median peak RSS (KiB) that time(1) reports for
# each, which counts the largest process of the tree it waited for; and
# VmHWM of cordon's processes, read from /proc while a sandboxed sleep
# runs.
# Run as the user measured (the bench calls it through setpriv), in an
# empty folder, so that the workspace cordon scans is the same each time.
if [ "${1:-}" = --starts ]; then
	cordon=$2 runs=$3
	gnutime=$(type -P time) || { echo "bench: no time(1)" >&2; exit 1; }
	tmp_times=$(mktemp)
	sessexec=$(dirname "$cordon")/build/cordon-session-exec
	[ -x "$sessexec" ] || sessexec=$(dirname "$cordon")/cordon-session-exec
	sid=$("$cordon" session start --network none 2>/dev/null) || sid=
	tree=$(dirname "$HOME")/tree
	mkdir -p "$tree"
	git init -q "$tree" 2>/dev/null || true
	for i in $(seq 100); do
		mkdir -p "$tree/d$i/e"{1..10}
	done
	# As a workspace is: older than the 2 s within which cordon lists a
	# folder again each walk (plan/fslist.c).
	sleep 3
	sidt=$(cd "$tree" && "$cordon" session start --network none \
	    2>/dev/null) || sidt=
	sidtb=
	[ -z "${CORDON_BEFORE:-}" ] || sidtb=$(cd "$tree" &&
	    "$CORDON_BEFORE" session start --network none 2>/dev/null) ||
	    sidtb=
	elog=$HOME/egress.log
	for _ in $(seq 20); do
		echo '{"time":"2026-11-22T01:40:18.029Z","sandbox":"s",' \
		    '"decision":"allow","protocol":"https","method":"CONNECT",' \
		    '"host":"example.com","port":443,"status":200,' \
		    '"bytes_up":10,"bytes_down":20,"reason":null}'
	done >"$elog"
	start_cmds "$cordon"
	declare -A us cpu
	for _ in $(seq "$runs"); do
		for l in "${start_labels[@]}"; do
			declare -n cmd="start_cmd_$l"
			children_cpu; c0=$cpu_us
			t0=${EPOCHREALTIME/./}
			if "${cmd[@]}" >/dev/null 2>&1; then
				t1=${EPOCHREALTIME/./}
				us[$l]+="$((t1 - t0)) "
			else
				us[$l]+="failed "
			fi
			children_cpu
			cpu[$l]=$((${cpu[$l]:-0} + cpu_us - c0))
			unset -n cmd
		done
	done
	for l in "${start_labels[@]}"; do
		case " ${us[$l]} " in
		*" failed "*) echo "time.$l failed" ;;
		*) echo "time.$l $(for v in ${us[$l]}; do echo "$v"; done |
		    median)"
		   echo "cpu.$l $((cpu[$l] / runs))" ;;
		esac
	done
	for l in "${start_labels[@]}"; do
		declare -n cmd="start_cmd_$l"
		for _ in $(seq 5); do
			"$gnutime" -f %M -o /dev/stdout "${cmd[@]}" \
			    2>/dev/null | tail -n 1
		done | echo "rss.$l $(median)"
		unset -n cmd
	done
	# The tree: cordon run (and its proxy), the sandbox's PID 1, and
	# the command; each one's high-water mark once the command runs.
	for mode in none proxy; do
		for _ in $(seq 5); do
			"$cordon" run --network "$mode" -- sleep 1 \
			    >/dev/null 2>&1 &
			outer=$! pid1= inner=
			for _ in $(seq 100); do
				pid1=$(children "$outer" | head -n 1)
				[ -n "$pid1" ] &&
				    inner=$(children "$pid1" | head -n 1)
				[ -n "$inner" ] &&
				    [ "$(cat "/proc/$inner/comm" 2>/dev/null)" \
				    = sleep ] && break
				inner=
				sleep 0.02
			done
			if [ -n "$inner" ]; then
				echo "$(hwm "$outer") $(hwm "$pid1")"
			else
				echo "- -"
			fi
			wait "$outer" || true
		done >"hwm.$mode"
		echo "hwm.outer.$mode $(cut -d' ' -f1 "hwm.$mode" | median)"
		echo "hwm.pid1.$mode $(cut -d' ' -f2 "hwm.$mode" | median)"
	done
	[ -z "$sid" ] || "$cordon" session stop "$sid" >/dev/null 2>&1 || true
	[ -z "$sidt" ] || "$cordon" session stop "$sidt" >/dev/null 2>&1 ||
	    true
	[ -z "$sidtb" ] || "$CORDON_BEFORE" session stop "$sidtb" \
	    >/dev/null 2>&1 || true
	rm -f "$tmp_times"
	exit 0
fi

cordon=${1:?usage: bench.sh CORDON TOOLS_DIR}
tools=${2:?usage: bench.sh CORDON TOOLS_DIR}
netcheck="$tools/netcheck"
RUNS=${RUNS:-5}
SIZE=${SIZE:-1073741824}		# bytes per throughput run (bridge: up,
					# proxy tunnel: down)
CONNS=${CONNS:-2000}			# connections per rate run
REQS=${REQS:-5000}			# requests per ab run (proxy) ...
ABSECS=${ABSECS:-5}			# ... or its seconds, if fewer
CONC=${CONC:-16}			# ab's concurrency (proxy)
TINYPROXY_LOGLEVEL=${TINYPROXY_LOGLEVEL:-Connect}
STARTS=${STARTS:-100}			# runs per command, sandbox start
BENCH=${BENCH:-all}			# all, or start, proxy (and ttfb),
					# ttfb, inspect, mtls, workers, mcp or
					# load: that alone
CORDON_BEFORE=${CORDON_BEFORE:-}	# another build's cordon, its proxy
					# measured beside ("before")
tmp=$(mktemp -d)
pids=()
client_pid=

# Ends every process the bench started, by pid: TERM, a few seconds to
# exit (squid takes two or three), then KILL.
cleanup() {
	local p left
	set +e
	trap - EXIT INT TERM HUP
	if [ -n "$client_pid" ]; then pids+=("$client_pid"); fi
	for p in "${pids[@]}"; do alive "$p" && kill "$p" 2>/dev/null; done
	for _ in $(seq 100); do
		left=0
		for p in "${pids[@]}"; do alive "$p" && left=1; done
		[ "$left" -eq 0 ] && break
		sleep 0.1
	done
	for p in "${pids[@]}"; do
		alive "$p" && kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# ---------------------------------------------------------------------
# sandbox start: how long `cordon run` takes to run `true`, against
# bwrap and unshare(1) doing the same, each as the issue names it, and
# the true binary alone as the floor.  Timed from the bench's shell
# (fork, exec, wait), so the floor holds the shell's share.  As root
# and, more like a user's machine, as $TEST_USER (through setpriv).
TEST_USER=cordon-test
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
case $cordon in */*) cordon=$(cd "$(dirname "$cordon")" && pwd)/${cordon##*/} ;; esac

# The --starts figures of one user ("root" or "user") in
# $tmp/starts.$1, each run in its own empty folder (the workspace),
# HOME beside it, with no policy of this machine.
starts_as() {
	local dir="$tmp/start.$1"
	mkdir -p "$dir/home" "$dir/ws"
	if [ "$1" = user ] && [ "$(id -u)" -eq 0 ]; then
		if ! id -u "$TEST_USER" >/dev/null 2>&1; then
			useradd --system --no-create-home \
			    --shell /usr/sbin/nologin "$TEST_USER"
		fi
		chmod 711 "$tmp"
		chown -R "$TEST_USER:" "$dir"
		(cd "$dir/ws" && setpriv --reuid="$TEST_USER" \
		    --regid="$TEST_USER" --clear-groups --inh-caps=-all \
		    --reset-env env HOME="$dir/home" \
		    XDG_CONFIG_HOME="$dir/home/.config" CORDON_SYSTEM_POLICY= \
		    CORDON_BEFORE="$CORDON_BEFORE" \
		    bash "$self" --starts "$cordon" "$STARTS") >"$tmp/starts.$1"
	else
		(cd "$dir/ws" && HOME="$dir/home" \
		    XDG_CONFIG_HOME="$dir/home/.config" CORDON_SYSTEM_POLICY= \
		    bash "$self" --starts "$cordon" "$STARTS") >"$tmp/starts.$1"
	fi
}

# Figure $2 of user $1, or "-".
start_fig() { awk -v k="$2" '$1 == k { print $2; f = 1 }
    END { if (!f) print "-" }' "$tmp/starts.$1"; }

# Prints the start figures of user $1.
start_report() {
	local who=$1 l t c t0 added
	local -A name=([true]="true (the floor)"
	    [unshare]="unshare -Urnmpf true"
	    [bwrap]="bwrap --unshare-all --dev-bind / / --proc /proc true"
	    [none]="cordon run --network none -- true"
	    [plain]="  the same, no HOME (no home layer)"
	    [proxy]="cordon run -- true (proxy)"
	    [session]="cordon-session-exec --session ID -- true"
	    [runsession]="cordon run --session ID -- true"
	    [version]="cordon --version"
	    [logtail]="cordon log tail FILE (20 lines)"
	    [tree]="the fresh run, in 1,100 folders (env -C)"
	    [treesession]="the session's, in 1,100 folders (env -C)"
	    [nonebefore]="CORDON_BEFORE's run --network none"
	    [logbefore]="CORDON_BEFORE's log tail FILE"
	    [treebefore]="CORDON_BEFORE's, in 1,100 folders"
	    [treesessionbefore]="CORDON_BEFORE's session, 1,100 folders")
	local -A add
	t0=$(start_fig "$who" time.true)
	printf '%-40s %9s %9s %9s %9s %9s\n' "as $2:" "ms" "added ms" \
	    "CPU ms" "/bwrap" "/unshare"
	for l in true unshare bwrap none plain proxy session runsession \
	    version logtail tree treesession \
	    ${CORDON_BEFORE:+nonebefore logbefore treebefore \
	    treesessionbefore}; do
		t=$(start_fig "$who" "time.$l")
		c=$(start_fig "$who" "cpu.$l")
		is_num "$c" && c=$(printf '%.2f' "$(echo "$c / 1000" | bc -l)")
		if is_num "$t" && is_num "$t0"; then
			add[$l]=$(echo "($t - $t0) / 1000" | bc -l)
			printf '%-40s %9.2f %9.2f %9s' "${name[$l]}" \
			    "$(echo "$t / 1000" | bc -l)" "${add[$l]}" "$c"
		else
			add[$l]=
			printf '%-40s %9s %9s %9s' "${name[$l]}" "$t" - "$c"
		fi
		case $l in
		none|plain|proxy|session|runsession|version|logtail|tree|\
		treesession|nonebefore|logbefore|treebefore|\
		treesessionbefore) printf ' %9s %9s\n' \
		    "$(ratio "${add[$l]}" "${add[bwrap]}")" \
		    "$(ratio "${add[$l]}" "${add[unshare]}")" ;;
		*) echo ;;
		esac
	done
	printf '%-40s' "peak RSS, MiB (time -f %M, median of 5)"
	for l in true bwrap none proxy; do
		printf ' %s %s' "$l" "$(mib "$(start_fig "$who" "rss.$l")")"
	done
	echo
	for l in none proxy; do
		printf '%-40s outer %s + PID 1 %s\n' \
		    "  VmHWM, MiB, cordon run ($l)" \
		    "$(mib "$(start_fig "$who" "hwm.outer.$l")")" \
		    "$(mib "$(start_fig "$who" "hwm.pid1.$l")")"
	done
}

# KiB $1 as MiB with one decimal, or as it is.
mib() {
	if is_num "$1"; then printf '%.1f' "$(echo "$1 / 1024" | bc -l)"
	else printf '%s' "$1"; fi
}

if [ "$BENCH" = all ] || [ "$BENCH" = start ]; then
	echo "== sandbox start: wall time of one run, fork to exit" \
	    "($STARTS runs each, interleaved, medians; load:" \
	    "$(cut -d' ' -f1-3 /proc/loadavg))"
	echo "   added: over the floor; CPU: user and system time of" \
	    "all its processes, mean; /bwrap, /unshare: ratio of the" \
	    "added times"
	users=(root)
	if [ "$(id -u)" -ne 0 ]; then users=(self); fi
	if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
		users+=(user)
	fi
	for u in "${users[@]}"; do
		starts_as "$u"
		case $u in
		root|self) start_report "$u" "$(id -un)" ;;
		user) start_report "$u" "$TEST_USER" ;;
		esac
	done
	echo "(goals: added under 5 ms with --network none, under 10 ms" \
	    "with the proxy; peak RSS under 8 MiB; a command in a session"
	echo " and log tail at most a quarter of what bwrap adds)"
	echo "(VmHWM: each process's own peak, read while a sandboxed" \
	    "sleep runs; shared pages count in both)"
	echo "(each in an empty folder: cordon makes the mount points of" \
	    "the protected folders there"
	echo " (.git, .cordon) and removes them at exit, a cost a" \
	    "workspace that has them does not pay)"
	echo
	echo "== where a fresh run's time goes (load: $(cut -d' ' -f1-3 \
	    /proc/loadavg))"
	for net in proxy none; do
		bash "$(dirname "$self")/start-breakdown.sh" "$cordon" \
		    "${BREAKDOWN_RUNS:-50}" "$net"
	done
	# And as the user, whose plan and mounts are not root's.
	if [ "$(id -u)" -eq 0 ] && id -u "$TEST_USER" >/dev/null 2>&1; then
		bash "$(dirname "$self")/start-breakdown.sh" "$cordon" \
		    "${BREAKDOWN_RUNS:-50}" none "$TEST_USER"
	fi
	[ "$BENCH" = start ] && exit 0
	echo
fi

# TLS inspection: its own script (mk/inspect-bench.sh).
if [ "$BENCH" = inspect ]; then
	bash "$(dirname "$self")/inspect-bench.sh" "$cordon" "$tools"
	exit
fi

# A tls: listener's handshake against a plain one: mk/mtls-bench.sh.
if [ "$BENCH" = mtls ]; then
	bash "$(dirname "$self")/mtls-bench.sh" "$cordon" "$tools"
	exit
fi

# New connections a second with 1 and N workers: mk/workers-bench.sh.
if [ "$BENCH" = workers ]; then
	bash "$(dirname "$self")/workers-bench.sh" "$cordon" "$tools"
	exit
fi

# A tool call through cordon mcp against a session command and a native
# one: mk/mcp-bench.sh.
if [ "$BENCH" = mcp ]; then
	bash "$(dirname "$self")/mcp-bench.sh" "$cordon" "$tools"
	exit
fi

# load and faults: its own script (mk/load.sh), run last with all.
if [ "$BENCH" = load ]; then
	bash "$(dirname "$self")/load.sh" "$cordon" "$tools"
	exit
fi

# Ports below the ephemeral range, counted up from a random start.
port=$((20000 + RANDOM % 10000))
next_port() { port=$((port + 1)); }

bg() { "$@" >"$tmp/bg.$RANDOM.log" 2>&1 & pids+=("$!"); }

wait_tcp() {
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.05
	done
	echo "bench: nothing listens on $1" >&2
	exit 1
}

# One figure: field $1 of netcheck's line, median of RUNS runs of the rest.
measure() {
	local field=$1
	shift
	for _ in $(seq "$RUNS"); do
		"$@" | awk -v f="$field" '{ for (i = 1; i < NF; i++)
		    if ($i == f) print $(i + 1) }'
	done | median
}

# BENCH=proxy leaves the bridge out: the proxy's figures alone.
if [ "$BENCH" != proxy ]; then
	next_port; back=$port
	bg "$netcheck" serve "tcp:127.0.0.1:$back" --raw 1
	next_port; back_rate=$port
	bg "$netcheck" serve "tcp:127.0.0.1:$back_rate" --raw 1 --reply 100
	wait_tcp "$back"
	wait_tcp "$back_rate"

	# The chain TCP -> Unix socket -> TCP, made of cordon bridges ...
	chain_cordon() {	# $1: target port; the front port is left in $port
		local sock="$tmp/c.$1.sock"
		next_port
		bg "$cordon" bridge --listen "unix:$sock" --connect "tcp:127.0.0.1:$1"
		bg "$cordon" bridge --listen "tcp:127.0.0.1:$port" \
		    --connect "unix:$sock"
		wait_tcp "$port"
	}
	# ... and of two socat processes, as other sandboxes build it.
	chain_socat() {
		local sock="$tmp/s.$1.sock"
		next_port
		# -t 10: after one side's end of file socat waits 0.5 s by default,
		# then closes both; the peer answers after the end of file, and on a
		# busy machine may take longer, which would count against socat.
		bg socat -t 10 "UNIX-LISTEN:$sock,fork" "TCP:127.0.0.1:$1"
		bg socat -t 10 "TCP-LISTEN:$port,fork,reuseaddr,bind=127.0.0.1" \
		    "UNIX-CONNECT:$sock"
		wait_tcp "$port"
	}

	chain_cordon "$back"; c_tp=$port
	chain_socat "$back"; s_tp=$port
	chain_cordon "$back_rate"; c_rate=$port
	chain_socat "$back_rate"; s_rate=$port

	tp() { measure MiB/s "$netcheck" client "tcp:127.0.0.1:$1" --raw 1 \
	    --send "$SIZE" --expect 0; }
	rate() { measure conns/s "$netcheck" client "tcp:127.0.0.1:$1" --raw 1 \
	    --send 100 --expect 100 --conns "$CONNS" --parallel "$2"; }

	echo "== bridge: the chain TCP -> Unix socket -> TCP ($RUNS runs, medians)"
	d=$(tp "$back"); c=$(tp "$c_tp"); s=$(tp "$s_tp")
	printf '%-34s %10s %10s %10s %14s\n' "" direct cordon socat "cordon/socat"
	printf '%-34s %10.0f %10.0f %10.0f %13.2fx\n' \
	    "throughput, 1 conn, MiB/s" "$d" "$c" "$s" "$(echo "$c / $s" | bc -l)"
	for par in 1 16; do
		d=$(rate "$back_rate" "$par"); c=$(rate "$c_rate" "$par")
		s=$(rate "$s_rate" "$par")
		printf '%-34s %10.0f %10.0f %10.0f %13.2fx\n' \
		    "connections/s, $par at a time" "$d" "$c" "$s" \
		    "$(echo "$c / $s" | bc -l)"
	done
	echo "(cordon as a share of direct loopback: see the first columns)"
fi

# ---------------------------------------------------------------------
# proxy: cordon's HTTP proxy, squid, tinyproxy and no proxy at all, in
# front of one origin (tests/tools/httpd), each set up alike: no cache,
# a log of each request or connection in $tmp, CONNECT allowed to the
# origin's port, listening on 127.0.0.1.
httpd="$tools/httpd"
run_as=nobody				# squid and tinyproxy, started as root

# Sets $port to the next one nothing listens on (the machine is shared).
free_port() {
	next_port
	while tcp_listening "$port"; do next_port; done
}


# Runs a client to $tmp/client.out in the background and waits for it,
# so that a signal ends the wait at once and cleanup ends the client.
client() {
	local rc=0
	"$@" >"$tmp/client.out" 2>&1 &
	client_pid=$!
	wait "$client_pid" || rc=$?
	client_pid=
	return "$rc"
}

# Whether a GET and a CONNECT through the proxy on port $1 reach the
# origin and bring back its "hello" (not someone else's listener).
proxy_works() {
	client curl -s --max-time 10 -x "http://127.0.0.1:$1" \
	    "http://127.0.0.1:$up/" && [ "$(cat "$tmp/client.out")" = hello ] &&
	    client curl -s --max-time 10 --proxytunnel \
	    -x "http://127.0.0.1:$1" "http://127.0.0.1:$up/" &&
	    [ "$(cat "$tmp/client.out")" = hello ]
}

# The origin, and a check that ab -X sends the absolute-form target to
# the proxy: a second httpd stands in for one and logs what it got.
free_port; up=$port
bg_named origin "$httpd" --listen "tcp:127.0.0.1:$up"
wait_up "$bg_pid" "$up" || { echo "bench: httpd did not start" >&2; exit 1; }
free_port; probe=$port
bg_named probe "$httpd" --listen "tcp:127.0.0.1:$probe" --log "$tmp/probe.req"
wait_up "$bg_pid" "$probe" || { echo "bench: httpd did not start" >&2; exit 1; }
client ab -q -n 1 -X "127.0.0.1:$probe" "http://127.0.0.1:$up/" || true
if ! grep -q "^GET http://127.0.0.1:$up/ " "$tmp/probe.req" 2>/dev/null; then
	echo "bench: ab -X did not send an absolute-form request" >&2
	exit 1
fi

# The same origin over TLS, for the first byte of a new HTTPS
# connection: a certificate for 127.0.0.1 (through the proxies) and for
# ttfb.test (from inside a sandbox, where NO_PROXY keeps 127.0.0.1 in).
sh "$(dirname "$self")/origin-cert.sh" "$tmp" 127.0.0.1 ttfb.test
free_port; ups=$port
bg_named origin-tls "$httpd" --listen "tcp:127.0.0.1:$ups" \
    --tls-cert "$tmp/origin.pem" --tls-key "$tmp/origin.key"
wait_up "$bg_pid" "$ups" || { echo "bench: httpd (TLS) did not start" >&2; exit 1; }

declare -A pport note			# each proxy's port, or why it has none
targets=(direct cordon ${CORDON_BEFORE:+before} squid tinyproxy)
pport[direct]=
if [ "$(id -u)" -eq 0 ]; then chmod 711 "$tmp"; fi

# cordon decides by name, and refuses loopback unless a CIDR allows it.
if "$cordon" proxy --help >/dev/null 2>&1; then
	free_port; pport[cordon]=$port
	bg_named cordon "$cordon" proxy --listen "tcp:127.0.0.1:$port" \
	    --allow-domain "127.0.0.1:$up" --allow-domain "127.0.0.1:$ups" \
	    --allow-cidr 127.0.0.1/32 --log "$tmp/cordon-egress.log"
	wait_up "$bg_pid" "$port" || note[cordon]="cordon proxy: did not start"
else
	note[cordon]="cordon proxy: not built yet"
fi
# Another build, set up alike: what a change costs, in the same run.
if [ -n "$CORDON_BEFORE" ]; then
	free_port; pport[before]=$port
	bg_named before "$CORDON_BEFORE" proxy --listen \
	    "tcp:127.0.0.1:$port" --allow-domain "127.0.0.1:$up" \
	    --allow-domain "127.0.0.1:$ups" --allow-cidr 127.0.0.1/32 \
	    --log "$tmp/before-egress.log"
	wait_up "$bg_pid" "$port" || note[before]="before: did not start"
fi

# squid: one process in the foreground (-N).  Started as root it runs as
# cache_effective_user, which must own its folder; as anyone else it
# stays who it is.  No DNS or ICP traffic leaves loopback.
sq="$tmp/squid"
mkdir -p "$sq"
free_port; pport[squid]=$port
cat >"$sq/squid.conf" <<CONF
http_port 127.0.0.1:$port
workers 1
cache deny all
cache_mem 0 MB
access_log stdio:$sq/access.log
cache_log $sq/cache.log
cache_store_log none
pid_filename $sq/squid.pid
coredump_dir $sq
pinger_enable off
visible_hostname localhost
dns_nameservers 127.0.0.1
udp_incoming_address 127.0.0.1
shutdown_lifetime 0 seconds
# CONNECT to any port: no SSL_ports rule.
http_access allow localhost
http_access deny all
CONF
if [ "$(id -u)" -eq 0 ]; then
	echo "cache_effective_user $run_as" >>"$sq/squid.conf"
	chown "$run_as" "$sq"
fi
bg_named squid squid -N -f "$sq/squid.conf"
wait_up "$bg_pid" "$port" || note[squid]="squid: did not start"

# tinyproxy: in the foreground (-d).  It fsyncs its log file after each
# line; Connect is the level that logs each connection.
tp="$tmp/tinyproxy"
mkdir -p "$tp"
free_port; pport[tinyproxy]=$port
cat >"$tp/tinyproxy.conf" <<CONF
Port $port
Listen 127.0.0.1
Timeout 600
LogFile "$tp/tinyproxy.log"
LogLevel $TINYPROXY_LOGLEVEL
MaxClients 1024
Allow 127.0.0.1
ConnectPort $up
ConnectPort $ups
CONF
if [ "$(id -u)" -eq 0 ]; then
	printf 'User %s\nGroup %s\n' "$run_as" "$(id -gn "$run_as")" \
	    >>"$tp/tinyproxy.conf"
	chown "$run_as" "$tp"
fi
bg_named tinyproxy tinyproxy -d -c "$tp/tinyproxy.conf"
wait_up "$bg_pid" "$port" || note[tinyproxy]="tinyproxy: did not start"

for t in cordon ${CORDON_BEFORE:+before} squid tinyproxy; do
	if [ -z "${note[$t]:-}" ] && ! proxy_works "${pport[$t]}"; then
		note[$t]="$t: no answer from the origin through it"
	fi
	if [ -n "${note[$t]:-}" ] && [ "${note[$t]}" != \
	    "cordon proxy: not built yet" ]; then
		echo "bench: ${note[$t]}; its output:" >&2
		tail -n 5 "$tmp/$t.log" >&2 || true
	fi
done

# ---------------------------------------------------------------------
# Time to the first byte of a new HTTPS connection (curl's
# time_starttransfer: TCP, CONNECT, TLS, the request, the first byte of
# the answer), TTFB connections each, interleaved: directly, through
# each proxy, and from inside `cordon run` (the bridge, the Unix socket,
# the run's own proxy), in milliseconds, p50 and p99.
TTFB=${TTFB:-200}

# One new connection through proxy port $1 ("" for none): its time, or
# "failed".
ttfb_one() {
	curl -s -o /dev/null --max-time 10 --cacert "$tmp/origin-ca.pem" \
	    -w '%{time_starttransfer}\n' ${1:+-x "http://127.0.0.1:$1"} \
	    "https://127.0.0.1:$ups/" || echo failed
}

# Percentiles 50 and 99 of the seconds in file $1, as "ms ms", or
# "failed" when a connection failed.
ttfb_pct() {
	if grep -q failed "$1"; then echo "failed failed"; return; fi
	sort -g "$1" | awk '{ v[NR] = $1 * 1000 } END {
	    i = int(NR * 0.50 + 0.999); j = int(NR * 0.99 + 0.999)
	    printf "%.1f %.1f\n", v[i], v[j] }'
}

ttfb_label() {
	case $1 in
	sandbox)	echo "cordon run" ;;
	captured)	echo "run, captured" ;;
	*)		echo "$1" ;;
	esac
}

# TTFB connections from curl in a sandbox in folder $1, with curl's
# further arguments (--noproxy '*': through the capture).
ttfb_sandbox() {
	local ws=$1
	shift
	(cd "$ws" && "$cordon" run --quiet --resolve ttfb.test:127.0.0.1 \
	    --allow-domain "ttfb.test:$ups" --allow-cidr 127.0.0.1/32 -- \
	    sh -c 'n=$1 port=$2; shift 2; for i in $(seq "$n"); do
	    curl -s -o /dev/null --max-time 10 --cacert ca.pem "$@" \
	    -w "%{time_starttransfer}\n" "https://ttfb.test:$port/" ||
	    echo failed; done' sh "$TTFB" "$ups" "$@")
}

ttfb_report() {
	local t ws="$tmp/ttfb-ws" p50 p99
	declare -A ttfb50 ttfb99
	echo
	echo "== time to the first byte of a new HTTPS connection" \
	    "($TTFB each, interleaved; ms)"
	for t in "${targets[@]}"; do : >"$tmp/ttfb.$t"; done
	for _ in $(seq "$TTFB"); do
		for t in "${targets[@]}"; do
			[ -n "${note[$t]:-}" ] && continue
			ttfb_one "${pport[$t]}" >>"$tmp/ttfb.$t"
		done
	done
	mkdir -p "$ws"
	cp "$tmp/origin-ca.pem" "$ws/ca.pem"
	# In a sandbox: curl through the proxy variables, then with them
	# unset, through the capture (the sandbox's resolver and rules).
	ttfb_sandbox "$ws" >"$tmp/ttfb.sandbox" 2>&1 ||
	    echo failed >>"$tmp/ttfb.sandbox"
	ttfb_sandbox "$ws" --noproxy '*' >"$tmp/ttfb.captured" 2>&1 ||
	    echo failed >>"$tmp/ttfb.captured"
	printf '%-24s %10s %10s\n' "" p50 p99
	for t in "${targets[@]}" sandbox captured; do
		if [ -n "${note[$t]:-}" ]; then
			printf '%-24s %s\n' "$t" "${note[$t]}"
			continue
		fi
		read -r p50 p99 < <(ttfb_pct "$tmp/ttfb.$t")
		ttfb50[$t]=$p50
		ttfb99[$t]=$p99
		printf '%-24s %10s %10s\n' "$(ttfb_label "$t")" "$p50" "$p99"
	done
	for t in cordon sandbox captured; do
		for ref in direct ${CORDON_BEFORE:+before} squid tinyproxy; do
			printf '%-24s %10s %10s\n' "$(ttfb_label "$t")/$ref" \
			    "$(ratio "${ttfb50[$t]:-}" "${ttfb50[$ref]:-}")" \
			    "$(ratio "${ttfb99[$t]:-}" "${ttfb99[$ref]:-}")"
		done
	done
	echo "(cordon run: curl inside a sandbox, through its bridge and" \
	    "the run's own proxy; captured: the same with the proxy" \
	    "variables ignored, through the sandbox's resolver and capture;" \
	    "the others from the host)"
}

if [ "$BENCH" = ttfb ]; then
	ttfb_report
	exit 0
fi

# One ab run through proxy port $1 ("" for none), keep-alive when $2 is
# -k, of REQS requests or ABSECS seconds (a slow proxy still takes its
# turn quickly): sets $val to its requests/s and $kept to the share of
# requests on a reused connection, or $val to "" when any failed.
ab_run() {
	local args=(-q -r -s 10 -t "$ABSECS" -n "$REQS" -c "$CONC")
	[ -n "$2" ] && args+=(-k)
	[ -n "$1" ] && args+=(-X "127.0.0.1:$1")
	val='' kept=0
	client ab "${args[@]}" "http://127.0.0.1:$up/" || return 0
	read -r val kept < <(awk -v n="$REQS" -v secs="$ABSECS" '
	    /^Document Length:/ { len = $3 }
	    /^Time taken for tests:/ { taken = $5 }
	    /^Complete requests:/ { done = $3 }
	    /^Failed requests:/ { failed = $3 }
	    /^Non-2xx responses:/ { failed += $3 }
	    /^Keep-Alive requests:/ { kept = $3 }
	    /^Requests per second:/ { rps = $4 }
	    END { if (len == 6 && failed == 0 && done > 0 &&
	        (done == n || taken >= secs - 0.5))
	        print rps, kept * 100 / done; else print "-", 0 }' \
	    "$tmp/client.out")
	if [ "$val" = - ]; then val=; fi
}

# One download of $SIZE bytes, through a CONNECT tunnel on proxy port $1
# ("" for none): sets $val to MiB/s, or "" when it fell short.
tunnel_run() {
	local code size speed
	val=
	client curl -s -o /dev/null --max-time 600 \
	    -w '%{http_code} %{size_download} %{speed_download}\n' \
	    ${1:+--proxytunnel -x "http://127.0.0.1:$1"} \
	    "http://127.0.0.1:$up/bytes/$SIZE" || return 0
	read -r code size speed <"$tmp/client.out"
	[ "$code" = 200 ] && [ "$size" = "$SIZE" ] &&
	    val=$(echo "$speed / 1048576" | bc -l)
	return 0
}

# Runs are interleaved, a round of every figure for every target at a
# time, so that a noisy moment is shared.  A figure with one failed run
# shows "failed".
declare -A runs kept_of
figs=(ka close tunnel)
echo
echo "== proxy: GET / with ab ($CONC at a time, $REQS requests or" \
    "${ABSECS}s), and a CONNECT tunnel"
echo "   carrying $SIZE bytes with curl; one httpd behind them all" \
    "($RUNS runs, medians)"
for r in $(seq "$RUNS"); do
	if [ -t 2 ]; then printf '   run %s of %s\r' "$r" "$RUNS" >&2; fi
	for t in "${targets[@]}"; do
		[ -n "${note[$t]:-}" ] && continue
		ab_run "${pport[$t]}" -k
		runs[ka.$t]+="${val:-failed} "
		kept_of[$t]=$kept
		ab_run "${pport[$t]}" ""
		runs[close.$t]+="${val:-failed} "
		tunnel_run "${pport[$t]}"
		runs[tunnel.$t]+="${val:-failed} "
	done
done
if [ -t 2 ]; then printf '%30s\r' "" >&2; fi


declare -A med
for t in "${targets[@]}"; do
	[ -n "${note[$t]:-}" ] && continue
	for f in "${figs[@]}"; do med[$f.$t]=$(figure "$f.$t"); done
done


# A table cell: figure $1 rounded, or what stands in its place.
cell() {
	if is_num "$1"; then printf '%.0f' "$1"; else printf '%s' "$1"; fi
}

row() { printf '%-18s %18s %18s %18s\n' "$@"; }
row "" "req/s, keep-alive" "req/s, new conns" "CONNECT, MiB/s"
for t in "${targets[@]}"; do
	if [ -n "${note[$t]:-}" ]; then
		printf '%-18s %s\n' "$t" "${note[$t]}"
		continue
	fi
	row "$t" "$(cell "${med[ka.$t]}")" \
	    "$(cell "${med[close.$t]}")" "$(cell "${med[tunnel.$t]}")"
done
for ref in ${CORDON_BEFORE:+before} squid tinyproxy direct; do
	row "cordon/$ref" \
	    "$(ratio "${med[ka.cordon]:-}" "${med[ka.$ref]:-}")" \
	    "$(ratio "${med[close.cordon]:-}" "${med[close.$ref]:-}")" \
	    "$(ratio "${med[tunnel.cordon]:-}" "${med[tunnel.$ref]:-}")"
done
sep=' '
printf '(ab -k: requests on a reused connection:'
for t in "${targets[@]}"; do
	[ -n "${note[$t]:-}" ] && continue
	printf '%s%s %.0f%%' "$sep" "$t" "${kept_of[$t]}"
	sep=', '
done
echo ')'
if [ -z "${note[tinyproxy]:-}" ]; then
	echo "(tinyproxy fsyncs its log after each line, at LogLevel" \
	    "$TINYPROXY_LOGLEVEL; TINYPROXY_LOGLEVEL=Warning leaves that out)"
fi

ttfb_report

if [ "$BENCH" = all ]; then
	bash "$(dirname "$self")/inspect-bench.sh" "$cordon" "$tools" || true
	echo
	bash "$(dirname "$self")/mtls-bench.sh" "$cordon" "$tools" || true
	echo
	bash "$(dirname "$self")/workers-bench.sh" "$cordon" "$tools" || true
	echo
	bash "$(dirname "$self")/mcp-bench.sh" "$cordon" "$tools" || true
	echo
	bash "$(dirname "$self")/load.sh" "$cordon" "$tools"
fi
