#!/usr/bin/env bats
#
# man_examples.bats: every policy in the EXAMPLES section of
# docs/cordon-policy.5, and every policy shipped in policies/, passes
# `cordon policy check`.
#
# Run from the repository root with the binary in $CORDON:
#	CORDON=$PWD/cordon bats tests/e2e/man_examples.bats
#
# In the man page, each `.Bd -literal` ... `.Ed` block of EXAMPLES is one
# complete policy.  A block preceded by the comment line
#	.\" check-as: workspace
# is a workspace policy: it is written as DIR/.cordon/policy.json, so that
# it is checked with the limits of the workspace layer, and then merged
# over the built-in defaults with --workspace DIR.

# bats file_tags=fast

load helpers

MIN_EXAMPLES=4

setup() {
	cordon_setup
	REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	MANPAGE="$REPO/docs/cordon-policy.5"
}

# extract_examples MANPAGE DIR: writes each literal block of the EXAMPLES
# section to DIR/NN.trusted.json or DIR/NN.workspace.json, with mdoc
# escapes turned back into the characters they stand for.
extract_examples() {
	awk -v out="$2" '
	function unescape(s,	r, i, c, n, name) {
		r = ""
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (c != "\\") {
				r = r c
				continue
			}
			n = substr(s, i + 1, 1)
			if (n == "e") {
				r = r "\\"
				i++
			} else if (n == "&" || n == ":") {
				i++
			} else if (n == "-" || n == ".") {
				r = r n
				i++
			} else if (n == "(") {
				name = substr(s, i + 2, 2)
				if (name == "aq")
					r = r "\047"
				else if (name == "dq")
					r = r "\""
				else if (name == "ga")
					r = r "`"
				else if (name == "ti")
					r = r "~"
				else if (name == "ha")
					r = r "^"
				else
					r = r "\\(" name
				i += 3
			} else
				r = r c
		}
		return r
	}
	/^\.Sh[ \t]/ {
		inex = ($0 ~ /^\.Sh[ \t]+EXAMPLES[ \t]*$/)
		next
	}
	!inex {
		next
	}
	inblock && /^\.Ed/ {
		inblock = 0
		close(file)
		next
	}
	inblock {
		print unescape($0) > file
		next
	}
	/^\.\\" check-as: workspace/ {
		workspace = 1
		next
	}
	/^\.Bd[ \t]+-literal/ {
		n++
		file = sprintf("%s/%02d.%s.json", out, n,
		    workspace ? "workspace" : "trusted")
		printf "" > file
		inblock = 1
		workspace = 0
		next
	}
	' "$1"
}

# check_examples DIR: checks every extracted block; prints each failure
# with the block and cordon's messages, and fails if there was one.
check_examples() {
	local f ws failed=0 out

	for f in "$1"/*.json; do
		[ -e "$f" ] || continue
		case "$f" in
		*.workspace.json)
			ws="${f%.json}.d"
			mkdir -p "$ws/.cordon"
			cp "$f" "$ws/.cordon/policy.json"
			if ! out="$("$CORDON" policy check \
			    "$ws/.cordon/policy.json" 2>&1)"; then
				printf 'FAILED (workspace): %s\n' \
				    "$(basename "$f")"
				cat -n "$f"
				printf '%s\n' "$out"
				failed=1
			elif ! out="$("$CORDON" policy show \
			    --workspace "$ws" 2>&1 >/dev/null)"; then
				printf 'FAILED (merged as workspace): %s\n' \
				    "$(basename "$f")"
				cat -n "$f"
				printf '%s\n' "$out"
				failed=1
			fi
			;;
		*)
			if ! out="$("$CORDON" policy check "$f" 2>&1)"; then
				printf 'FAILED: %s\n' "$(basename "$f")"
				cat -n "$f"
				printf '%s\n' "$out"
				failed=1
			fi
			;;
		esac
	done
	return "$failed"
}

@test "cordon-policy(5) EXAMPLES holds at least $MIN_EXAMPLES policies, one of them a workspace policy" {
	local dir="$BATS_TEST_TMPDIR/examples" n nws

	mkdir -p "$dir"
	extract_examples "$MANPAGE" "$dir"
	n=$(find "$dir" -name '*.json' | wc -l)
	nws=$(find "$dir" -name '*.workspace.json' | wc -l)
	echo "found $n examples, $nws of them workspace policies"
	[ "$n" -ge "$MIN_EXAMPLES" ]
	[ "$nws" -ge 1 ]
}

@test "every policy in cordon-policy(5) EXAMPLES passes cordon policy check" {
	local dir="$BATS_TEST_TMPDIR/examples"

	mkdir -p "$dir"
	extract_examples "$MANPAGE" "$dir"
	run check_examples "$dir"
	[ -n "$output" ] && printf '%s\n' "$output"
	[ "$status" -eq 0 ]
}

@test "every shipped policies/*.json passes cordon policy check" {
	local files

	files=("$REPO"/policies/*.json)
	[ -e "${files[0]}" ]
	run "$CORDON" policy check "${files[@]}"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | grep -c ': ok$')" -eq "${#files[@]}" ]
}

@test "the extractor finds escaped text and a broken example fails" {
	local page="$BATS_TEST_TMPDIR/t.5" dir="$BATS_TEST_TMPDIR/self"

	mkdir -p "$dir"
	cat >"$page" <<'EOF'
.Sh DESCRIPTION
.Bd -literal
not an example, not checked
.Ed
.Sh EXAMPLES
.Bd -literal -offset indent
{ "version": 1, "env": { "set": { "A": "x\e\e" } } }
.Ed
.\" check-as: workspace
.Bd -literal -offset indent
{ "version": 1, "env": { "set": { "A": "workspaces may not set" } } }
.Ed
.Sh SEE ALSO
EOF
	extract_examples "$page" "$dir"
	[ "$(find "$dir" -name '*.json' | wc -l)" -eq 2 ]
	grep -qF '"x\\"' "$dir/01.trusted.json"
	[ -e "$dir/02.workspace.json" ]
	run check_examples "$dir"
	printf '%s\n' "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"FAILED (workspace): 02.workspace.json"* ]]
	[[ "$output" != *"FAILED: 01.trusted.json"* ]]
}
