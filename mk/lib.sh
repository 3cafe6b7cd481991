# mk/lib.sh: helpers of the bash scripts under mk/ (bench, inspect-bench,
# mtls-bench, workers-bench, load, valgrind), sourced by them.  The caller sets $tmp (a scratch folder) and pids=()
# (what it started, which its cleanup ends).

# Whether $1 is still a running child of ours: not a zombie, and not a
# pid that an ended child left for someone else to reuse.
alive() {
	local stat state ppid
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	read -r state ppid _ <<<"${stat##*) }"
	[ "$state" != Z ] && [ "$ppid" = $$ ]
}

# Whether something listens on TCP port $1, seen without connecting.
tcp_listening() {
	local hex tables=(/proc/net/tcp)
	hex=$(printf '%04X' "$1")
	if [ -e /proc/net/tcp6 ]; then tables+=(/proc/net/tcp6); fi
	awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { found = 1 }
	    END { exit !found }' "${tables[@]}"
}

# Starts a server, output to $tmp/$1.log; its pid is in $bg_pid.
bg_named() {
	local name=$1
	shift
	"$@" >"$tmp/$name.log" 2>&1 &
	bg_pid=$!
	pids+=("$bg_pid")
}

# Waits until process $1 listens on port $2; fails if it died first.
wait_up() {
	for _ in $(seq 200); do
		tcp_listening "$2" && alive "$1" && return 0
		alive "$1" || return 1
		sleep 0.05
	done
	return 1
}

# The median of the numbers on standard input, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# The median of the runs of figure $1 in the caller's runs[] ("v v v "),
# or "failed" when one run failed.
figure() {
	case " ${runs[$1]} " in
	*" failed "*) echo failed ;;
	*) for v in ${runs[$1]}; do echo "$v"; done | median ;;
	esac
}

is_num() { [[ $1 =~ ^([0-9]+(\.[0-9]*)?|\.[0-9]+)$ ]]; }

# $1 / $2 as "1.23x", or "-" when either is not a number.
ratio() {
	if is_num "$1" && is_num "$2" && [ "$(echo "$2 > 0" | bc)" = 1 ]
	then
		printf '%.2fx' "$(echo "$1 / $2" | bc -l)"
	else
		printf -- '-'
	fi
}

# Ends what the caller started and removes $tmp: the EXIT trap of the
# benches that need no more.
bench_cleanup() {
	local p
	set +e
	for p in "${pids[@]}"; do alive "$p" && kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}

# The traps of a bench that needs no more than bench_cleanup: it runs
# at the end, and SIGINT or SIGTERM end the bench with their status.
bench_traps() {
	trap bench_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# Sets $port to the next free TCP port, from a random one between 10000
# and 2000 below the ephemeral range.
next_port() {
	local low
	# Below the ephemeral range, where no outgoing connection holds one.
	read -r low _ </proc/sys/net/ipv4/ip_local_port_range
	port=$((${port:-$((10000 + RANDOM % (low - 12000)))} + 1))
	while tcp_listening "$port"; do port=$((port + 1)); done
}
