#!/usr/bin/env bats
# Shell examples of docs/ run as written, their output compared with the
# text the page shows (a start: the examples found false by running
# them; man_examples.bats checks the policies of cordon-policy(5)).

load helpers

bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# The lines of the literal block of page $1 that follows the line
# "$ $2", up to the next "$ " line or the block's end.
shown_after() {
	awk -v cmd="\$ $2" '
	found && (/^\$ / || /^\.Ed/ || /^```/) { exit }
	found { print }
	$0 == cmd { found = 1 }' "$1"
}

@test "policy.md: policy check bad.json says the keys known here" {
	write bad.json <<-'EOF'
	{"version": 1,
	 "network": {"mode": "open", "allow": ["*"], "proxy": 1}}
	EOF
	run "$CORDON" policy check bad.json
	[ "$status" -eq 1 ]
	diff <(shown_after "$REPO/docs/policy.md" 'cordon policy check bad.json') \
	    <(printf '%s\n' "$output")
}

@test "cordon(1): a program that ignores the proxy meets it anyway (403)" {
	run in_sandbox -- curl -sS --noproxy '*' http://192.0.2.1/
	echo "$output"
	shown_after "$REPO/docs/cordon.1" \
	    "cordon run -- curl -sS --noproxy '*' http://192.0.2.1/" \
	    >"$BATS_TEST_TMPDIR/shown"
	[ -s "$BATS_TEST_TMPDIR/shown" ]
	# The page's lines, each in what the run printed.
	while IFS= read -r line; do
		grep -qxF -- "$line" <(printf '%s\n' "$output")
	done <"$BATS_TEST_TMPDIR/shown"
	[[ "$output" != *"Couldn't connect"* ]]
}
