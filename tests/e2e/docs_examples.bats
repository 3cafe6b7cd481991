#!/usr/bin/env bats
# Shell examples of docs/ run as written, their output compared with the
# text the page shows (a start: the examples found false by running
# them; man_examples.bats checks the policies of cordon-policy(5)), and
# the commands of cordon-policy(5) against the shipped policies.

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

@test "policy.md: policy show --plain in ~/src/py prints the page's policy" {
	# The user policy, its list file and the project's policy of the
	# page, in a home whose path the output names as /home/alice.
	mkdir -p "$XDG_CONFIG_HOME/cordon" "$HOME/src/py/.cordon"
	write "$XDG_CONFIG_HOME/cordon/policy.json" <<-'EOF'
	{"version": 1,
	 "network": {"allow_files": ["registries.txt"],
	  "deny": ["gist.github.com"]}}
	EOF
	write "$XDG_CONFIG_HOME/cordon/registries.txt" <<-'EOF'
	# Package registries
	registry.npmjs.org
	pypi.org
	files.pythonhosted.org   # wheels and sdists
	*.githubusercontent.com
	EOF
	write "$HOME/src/py/.cordon/policy.json" <<-'EOF'
	{"version": 1,
	 "network": {"allow": ["pypi.org", "*.pythonhosted.org"]}}
	EOF
	cd "$HOME/src/py"
	run "$CORDON" policy show --plain
	[ "$status" -eq 0 ]
	diff <(shown_after "$REPO/docs/policy.md" 'cordon policy show --plain') \
	    <(printf '%s\n' "$output" | sed "s|$HOME|/home/alice|g")
}

# The .Dl lines of a man page $1 after ".Dl $ $2", up to the next command
# or the end of the .Dl lines, as mandoc prints them (\(dq a quote).
dl_after() {
	awk -v cmd=".Dl \$ $2" '
	found && (/^\.Dl \$ / || !/^\.Dl /) { exit }
	found { sub(/^\.Dl /, ""); gsub(/\\\(dq/, "\""); print }
	$0 == cmd { found = 1 }' "$1"
}

@test "cordon-policy(5): check, explain and show against the shipped policies print what the page shows" {
	local cmd n=0
	cd "$REPO"
	while IFS= read -r cmd; do
		run sh -c "$CORDON ${cmd#cordon }"
		[ "$status" -eq 0 ]
		diff <(dl_after "$REPO/docs/cordon-policy.5" "$cmd") \
		    <(printf '%s\n' "$output")
		n=$((n + 1))
	done < <(sed -n 's/^\.Dl \$ \(cordon policy .*policies\/.*\)/\1/p' \
	    "$REPO/docs/cordon-policy.5")
	[ "$n" -eq 3 ]
}
