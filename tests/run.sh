#!/usr/bin/env bash
# Runs every test: the cmocka unit tests named as arguments (binaries in
# $UNIT_DIR), then the bats end-to-end tests in tests/e2e, against the
# binary in $CORDON; E2E=no runs the unit tests alone (make unit), and
# no argument the bats tests alone (make e2e).  Prints what each printed, each bats test's result
# as it ends, then one line of counts.
# Under CI (CI=true) a skipped test counts as a failure: a missing kernel
# feature or package there is a fault of the set-up, not a pass.
set -u

: "${CORDON:?CORDON must name the cordon binary}"
: "${UNIT_DIR:=build/tests/unit}"
export CORDON

pass=0
fail=0
skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Counts the TAP lines in $log; a run that failed without saying which
# test failed (a crash, a sanitizer abort) counts as one failure.
count() {
	local rc=$1 name=$2 p f s
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

for t in "$@"; do
	echo "# unit: $t"
	CMOCKA_MESSAGE_OUTPUT=TAP "$UNIT_DIR/$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	count "$rc" "$t"
done

if [ "${E2E:-yes}" != no ] && ls tests/e2e/*.bats >/dev/null 2>&1; then
	echo "# e2e: bats tests/e2e"
	# Shown as bats writes it, through the file: a daemon a test
	# leaves behind holding bats' output would keep a pipe open.
	bats --tap tests/e2e >"$log" 2>&1 &
	bpid=$!
	tail -n +1 -s 0.2 -f --pid="$bpid" "$log"
	wait "$bpid"
	rc=$?
	count "$rc" "bats"
fi

if [ "$skip" -ne 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
