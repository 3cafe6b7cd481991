#!/bin/sh
# Runs each libFuzzer target for FUZZ_SECONDS (default 20) from a scratch
# copy of its seed corpus, so the tree is never written, with its
# dictionary when it has one.  Prints a line per target (runs, coverage,
# result) and exits 1 if any target crashed, leaked, timed out or did
# not start; the input that did it is kept in the scratch folder.
#
# usage: fuzz-run.sh BUILDDIR FUZZDIR TARGET...
set -u

bindir=$1
src=$2
shift 2
secs=${FUZZ_SECONDS:-20}
scratch=$bindir/run

# The largest input worth trying, per target: a little past the limits
# each parser enforces, small enough for many runs a second.
max_len() {
	case $1 in
	fuzz_policy_load|fuzz_policy_list)	echo 16384 ;;
	fuzz_http|fuzz_inspect)			echo 8192 ;;
	fuzz_http_body|fuzz_elog)		echo 4096 ;;
	fuzz_tls_peek)				echo 17000 ;;
	fuzz_ssh_peek)				echo 70000 ;;
	fuzz_pp2)				echo 1100 ;;
	fuzz_socks5)				echo 600 ;;
	fuzz_host_match|fuzz_addr)		echo 300 ;;
	fuzz_notify)				echo 200 ;;
	fuzz_gitptr)				echo 512 ;;
	*)					echo 4096 ;;
	esac
}

failed=0
printf '%-18s %10s %8s  %s\n' target runs cov result
for t in "$@"; do
	dir=$scratch/$t
	rm -rf "$dir"
	mkdir -p "$dir/corpus" "$dir/crash"
	if [ -d "$src/corpus/$t" ]; then
		cp "$src/corpus/$t"/* "$dir/corpus/" 2>/dev/null
	fi
	dict=""
	if [ -f "$src/dict/$t.dict" ]; then
		dict="-dict=$src/dict/$t.dict"
	fi
	"$bindir/$t" -max_total_time="$secs" -max_len="$(max_len "$t")" \
	    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix="$dir/crash/" $dict "$dir/corpus" \
	    >"$dir/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" |
	    tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -n 1 | cut -d' ' -f2)
	if [ "$rc" -eq 0 ]; then
		result=ok
	else
		art=$(ls "$dir/crash" 2>/dev/null | head -n 1)
		result="FAILED (exit $rc${art:+, input $dir/crash/$art})"
		failed=1
	fi
	printf '%-18s %10s %8s  %s\n' "$t" "${runs:-?}" "${cov:-?}" "$result"
	if [ "$rc" -ne 0 ]; then
		grep -m 1 -A 12 'ERROR: \|==ERROR\|runtime error\|deadly signal' \
		    "$dir/log" | sed 's/^/    /'
		echo "    (whole log: $dir/log)"
	fi
done
if [ "$failed" -ne 0 ]; then
	echo "fuzz-run: a target failed; see above" >&2
	exit 1
fi
echo "fuzz-run: $# targets, ${secs}s each, no crash"
