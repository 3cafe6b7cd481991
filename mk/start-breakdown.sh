#!/usr/bin/env bash
# mk/start-breakdown.sh CORDON RUNS [NETWORK [USER]]: where the time of a
# fresh `cordon run --network NETWORK -- true` goes (proxy, the default,
# or none), run as USER (root when not given), step by step, medians of
# RUNS runs (make bench BENCH=start prints both).  Nothing in cordon
# counts: the steps are timed from outside, by uprobes on the entry of
# the function that begins each (perf probe, on the symbols of the
# program that serves the run) and the scheduler's exec and exit events,
# recorded by perf for the runs' process tree alone.  A probe costs a few
# microseconds; the steps are in the order they run, each from its first
# marker to the next one met.  Needs root (uprobes) and perf; says why
# and exits 0 without them.
set -eu

cordon=${1:?usage: start-breakdown.sh CORDON RUNS [NETWORK]}
runs=${2:-50}
network=${3:-proxy}
user=${4:-root}
# The program that serves the run: cordon-offline without the proxy,
# cordon-main with it (front.c), built beside cordon or installed.
prog=cordon-main
case $network in none|host) prog=cordon-offline ;; esac
main=$(dirname "$cordon")/$prog
[ -x "$main" ] || main=$(dirname "$cordon")/../libexec/cordon/$prog
group=cordon_start_$$
if [ "$(id -u)" -ne 0 ] || ! command -v perf >/dev/null; then
	echo "(breakdown: needs root and perf, for uprobes; skipped)"
	exit 0
fi
if [ ! -x "$main" ]; then
	echo "(breakdown: no $prog beside $cordon; skipped)"
	exit 0
fi

# The markers, in the order a run meets them: a function of $prog
# (its entry; NAME%return: its return), or exec / exit of the front and
# of the command.  Each step is named for what runs from its marker on.
markers=(exec main run_plan run_prepare_exec run_exec run_clone
    mount_sandbox loopback_up netcap_setup netcap_setup%return command_exec
    cmdexec cmdexit end)
declare -A step=(
	[exec]="exec + loader (front, then $prog)"
	[main]="options, workspace, policy load + merge"
	[run_plan]="plan (mounts, environment, routes)"
	[run_prepare_exec]="seccomp build, the check's snapshot"
	[run_exec]="proxy start, control, pipes"
	[run_clone]="clone, id maps (until PID 1 mounts)"
	[mount_sandbox]="mounts, own files"
	[loopback_up]="loopback, bridge start"
	[netcap_setup]="capture rules (nftables)"
	["netcap_setup%return"]="PID 1 ready, command forked"
	[command_exec]="seccomp + Landlock, exec"
	[cmdexec]="the command (true)"
	[cmdexit]="end + check (after the command)"
)

tmp=$(mktemp -d)
cleanup() {
	perf probe -q -d "$group:*" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

for m in "${markers[@]}"; do
	case $m in exec|cmdexec|cmdexit|end) continue ;; esac
	ev=${m//%return/_ret}
	if ! perf probe -q -x "$main" -a "$group:$ev=$m" >/dev/null 2>&1; then
		echo "(breakdown: perf probe $m failed; skipped)"
		exit 0
	fi
done

# The runs, each in an empty workspace, as the start figures' are.
# The user's runs go through setpriv, as a user's shell would start them.
mkdir -p "$tmp/ws" "$tmp/home"
as=()
if [ "$user" != root ]; then
	chmod 755 "$tmp"
	chown "$user:" "$tmp/ws" "$tmp/home"
	as=(setpriv --reuid "$user" --regid "$user" --init-groups)
fi
cat >"$tmp/runs.sh" <<EOF
cd "$tmp/ws"
for _ in \$(seq $runs); do
	"$cordon" run --network $network -- true >/dev/null 2>&1 ||
	    echo failed >&2
done
EOF
if ! HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" \
    CORDON_SYSTEM_POLICY='' perf record -q -o "$tmp/perf.data" \
    -e "$group:*" -e sched:sched_process_exec \
    -e sched:sched_process_exit -- "${as[@]}" bash "$tmp/runs.sh" \
    >/dev/null 2>"$tmp/record.err"; then
	echo "(breakdown: perf record failed: $(tail -n 1 "$tmp/record.err"))"
	exit 0
fi

# perf script's lines: COMM PID [CPU] TIME: EVENT: ...  A run opens with
# the exec of cordon (the front) and closes with that pid's exit: its
# last thread's (group_dead), not the exit of a thread it started.
perf script -i "$tmp/perf.data" -F comm,pid,time,event,trace 2>/dev/null |
    awk -v group="$group" -v order="${markers[*]}" -v front="$cordon" '
	function flush(   i, j, a, b) {
		if (!open_) return
		for (i = 1; i <= n; i++) {
			if (!(m[i] in t)) continue
			for (j = i + 1; j <= n; j++) if (m[j] in t) break
			if (j > n) continue
			printf "%s %d\n", m[i], (t[m[j]] - t[m[i]]) * 1e6
		}
		delete t
		open_ = 0
	}
	BEGIN { n = split(order, m, " ") }
	{
		pid = $2; ts = $3; sub(/:$/, "", ts); ev = $4; sub(/:$/, "", ev)
		if (ev == "sched:sched_process_exec") {
			if (index($0, "filename=" front " ") ||
			    $0 ~ ("filename=" front "$")) {
				flush(); open_ = 1; outer = pid; t["exec"] = ts
			} else if (open_ && $1 == "true" && !("cmdexec" in t)) {
				t["cmdexec"] = ts; cmd = pid
			}
			next
		}
		if (!open_) next
		if (ev == "sched:sched_process_exit") {
			if (pid == cmd && !("cmdexit" in t)) t["cmdexit"] = ts
			# The process, not a thread of it: its last exit.
			else if (pid == outer && $0 !~ /group_dead=false/) {
				t["end"] = ts
				flush()
			}
			next
		}
		if (index(ev, group ":") == 1) {
			name = substr(ev, length(group) + 2)
			sub(/_ret__return$/, "%return", name)
			if (!(name in t)) t[name] = ts
		}
	}
	END { flush() }' >"$tmp/steps"

printf '%-44s %9s %7s\n' "fresh cordon run --network $network -- true" \
    "ms" "share"
total=0
declare -A med
for m in "${markers[@]}"; do
	[ "$m" = end ] && continue
	v=$(awk -v k="$m" '$1 == k { print $2 }' "$tmp/steps" | sort -n |
	    awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }')
	med[$m]=${v:-}
	[ -n "$v" ] && total=$((total + v))
done
for m in "${markers[@]}"; do
	[ "$m" = end ] && continue
	if [ -n "${med[$m]}" ]; then
		printf '%-44s %9.2f %6.0f%%\n' "${step[$m]}" \
		    "$(echo "${med[$m]} / 1000" | bc -l)" \
		    "$(echo "100 * ${med[$m]} / $total" | bc -l)"
	else
		printf '%-44s %9s\n' "${step[$m]}" -
	fi
done
printf '%-44s %9.2f\n' "sum of the medians" "$(echo "$total / 1000" | bc -l)"
echo "(uprobes on $prog and the scheduler's exec and exit, perf;" \
    "$runs runs, medians; as $user)"
