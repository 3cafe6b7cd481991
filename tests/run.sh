#!/usr/bin/env bash
# Runs every test: the cmocka unit tests named as arguments (binaries in
# $UNIT_DIR), and the bats end-to-end tests in tests/e2e, against the
# binary in $CORDON; E2E=no runs the unit tests alone (make unit), and
# no argument the bats tests alone (make e2e).  The two share nothing:
# the unit tests run in the background while bats runs, and their
# output is printed after bats'.  E2E_TAGS=fast runs the bats tests
# tagged fast alone (make check-fast).  Prints what each printed, each
# bats test's result as it ends, then one line of counts.
# Under CI (CI=true) a skipped test counts as a failure: a missing kernel
# feature or package there is a fault of the set-up, not a pass.
set -u

: "${CORDON:?CORDON must name the cordon binary}"
: "${UNIT_DIR:=build/tests/unit}"
export CORDON

pass=0
fail=0
skip=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# count RC NAME LOG: counts the TAP lines in LOG; a run that failed
# without saying which test failed (a crash, a sanitizer abort) counts
# as one failure.
count() {
	local rc=$1 name=$2 log=$3 p f s
	p=$(grep -cE '^ok ' "$log" | tr -d ' ')
	s=$(grep -cE '^ok .*# [Ss][Kk][Ii][Pp]' "$log" | tr -d ' ')
	f=$(grep -cE '^not ok ' "$log" | tr -d ' ')
	p=$((p - s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited with status $rc"
		f=1
	fi
	if [ "${CI:-}" = true ] && [ "$s" -ne 0 ]; then
		echo "# $s skipped test(s) in $name count as failed under CI"
		f=$((f + s))
		s=0
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + s))
}

# Runs each unit test into $dir/NAME.log, its status in $dir/NAME.rc.
run_units() {
	local t
	for t in "$@"; do
		CMOCKA_MESSAGE_OUTPUT=TAP "$UNIT_DIR/$t" >"$dir/$t.log" 2>&1
		echo $? >"$dir/$t.rc"
	done
}

# Prints and counts what run_units left.
show_units() {
	local t
	for t in "$@"; do
		echo "# unit: $t"
		cat "$dir/$t.log"
		count "$(cat "$dir/$t.rc")" "$t" "$dir/$t.log"
	done
}

e2e=no
if [ "${E2E:-yes}" != no ] && ls tests/e2e/*.bats >/dev/null 2>&1; then
	e2e=yes
fi

upid=
if [ "$e2e" = yes ]; then
	run_units "$@" &
	upid=$!
else
	run_units "$@"
fi

if [ "$e2e" = yes ]; then
	echo "# e2e: bats tests/e2e${E2E_TAGS:+ (tagged $E2E_TAGS)}"
	# Shown as bats writes it, through the file: a daemon a test
	# leaves behind holding bats' output would keep a pipe open.
	log="$dir/bats.log"
	: >"$log"	# before tail opens it: bats' redirect may come later
	bats --tap ${E2E_TAGS:+--filter-tags "$E2E_TAGS"} tests/e2e \
	    >"$log" 2>&1 &
	bpid=$!
	tail -n +1 -s 0.2 -f --pid="$bpid" "$log"
	wait "$bpid"
	rc=$?
	count "$rc" "bats" "$log"
fi

[ -z "$upid" ] || wait "$upid"
show_units "$@"

if [ "$skip" -ne 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
