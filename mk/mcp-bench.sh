#!/usr/bin/env bash
# mk/mcp-bench.sh: the "mcp" section of make bench (BENCH=mcp runs it
# alone).  One command, sh -c true, MCP_CALLS times each way, the ways
# interleaved in the same run: natively (fork and exec), through `cordon
# run --session` and cordon-session-exec into a session, and as a tool
# call through `cordon mcp` (one server, its session started by a first
# call that is not timed).  All are timed from one Python client, so
# each pays the same spawn: the MCP call is the time from its request
# written to its answer read.  Medians, in ms, and what each adds over
# the native run.  CORDON_BEFORE=PATH adds another build's cordon mcp
# beside ("before"), its own server and session.
set -eu

cordon=${1:?usage: mcp-bench.sh CORDON TOOLS_DIR}
MCP_CALLS=${MCP_CALLS:-200}
tmp=$(mktemp -d)
pids=()
here=$(cd "$(dirname "$0")" && pwd)

# median, ratio, bench_traps
. "$here/lib.sh"

bench_traps

sessexec=$(dirname "$cordon")/build/cordon-session-exec
[ -x "$sessexec" ] || sessexec=$(dirname "$cordon")/cordon-session-exec
mkdir -p "$tmp/ws" "$tmp/home"
cd "$tmp/ws"
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config"
export CORDON_SYSTEM_POLICY=
sid=$("$cordon" session start --network none 2>/dev/null)

python3 - "$cordon" "$sessexec" "$sid" "$MCP_CALLS" \
    "${CORDON_BEFORE:-}" >"$tmp/times" <<'PY'
import json, shutil, subprocess, sys, time

cordon, sessexec, sid, n, before = sys.argv[1], sys.argv[2], sys.argv[3], \
    int(sys.argv[4]), sys.argv[5]
cmd = ["sh", "-c", "true"]
seq = 0

def server(path):
    return subprocess.Popen([path, "mcp", "--network", "none"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL)

def call(mcp):
    global seq
    seq += 1
    mcp.stdin.write((json.dumps({"jsonrpc": "2.0", "id": seq,
        "method": "tools/call", "params": {"name": "run",
        "arguments": {"command": "true"}}}) + "\n").encode())
    mcp.stdin.flush()
    r = json.loads(mcp.stdout.readline())
    if r["result"]["structuredContent"]["exit_status"] != 0:
        raise SystemExit("mcp: the call failed")

servers = [server(cordon)] + ([server(before)] if before else [])
for s in servers:
    call(s)  # the session's start: not timed
mcp = servers[0]
ways = {
    "native": lambda: subprocess.run(cmd, check=True),
    "runsession": lambda: subprocess.run([cordon, "run", "--session", sid,
        "--"] + cmd, check=True),
    "sessexec": lambda: subprocess.run([sessexec, "--session", sid,
        "--"] + cmd, check=True),
    "mcp": lambda: call(mcp),
}
if before:
    ways["before"] = lambda: call(servers[1])
# bubblewrap, as make bench's start section runs it: the reference the
# per-call cost is read against.
if shutil.which("bwrap"):
    ways["bwrap"] = lambda: subprocess.run(["bwrap", "--unshare-all",
        "--dev-bind", "/", "/", "--proc", "/proc"] + cmd, check=True)
for _ in range(n):
    for name, way in ways.items():
        t0 = time.perf_counter()
        way()
        print(name, int((time.perf_counter() - t0) * 1e6))
for s in servers:
    s.stdin.close()
    s.wait()
PY
"$cordon" session stop "$sid" >/dev/null 2>&1 || true

med() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/times" | median; }
native=$(med native)
echo "== cordon mcp: one command (sh -c true), $MCP_CALLS runs each," \
    "interleaved, medians"
printf '%-44s %9s %9s %9s %9s\n' "" ms "added ms" "/run -s" "/bwrap"
rs=$(med runsession)
bw=$(med bwrap)
for w in native sessexec runsession mcp before bwrap; do
	case $w in
	native) label="sh -c true (native)" ;;
	sessexec) label="cordon-session-exec --session ID -- sh -c" ;;
	runsession) label="cordon run --session ID -- sh -c true" ;;
	mcp) label="cordon mcp, tools/call run {command: true}" ;;
	before) label="  the same, CORDON_BEFORE's" ;;
	bwrap) label="bwrap --unshare-all --dev-bind / / --proc /proc" ;;
	esac
	t=$(med "$w")
	is_num "$t" || continue
	printf '%-44s %9.2f %9.2f %9s %9s\n' "$label" \
	    "$(echo "$t / 1000" | bc -l)" \
	    "$(echo "($t - $native) / 1000" | bc -l)" \
	    "$(ratio "$(echo "$t - $native" | bc)" "$(echo "$rs - $native" | bc)")" \
	    "$(ratio "$(echo "$t - $native" | bc)" \
	    "$(echo "${bw:-0} - $native" | bc)")"
done
echo "(the MCP call runs its command in a wrapper sh that carries the" \
    "folder and variables, and reads its report and state; no process" \
    "is started on the client's side)"
