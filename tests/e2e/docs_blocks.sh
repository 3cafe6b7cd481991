#!/bin/sh
# docs_blocks.sh: the shell examples of the Markdown pages, for
# docs_examples.bats.
#
# A shell example is a fenced block whose info string is sh, console,
# shell or bash, a fenced block without one that holds a line starting
# with "$ ", or an indented block (four spaces or a tab) whose first line
# starts with "$ ".  The line before it (blank lines between allowed)
# says what becomes of it, as an HTML comment the rendered page hides:
#	<!-- example: ID -->	a test runs it, and names ID (replay ID)
#	<!-- not run: REASON -->	why no test can run it as written
#
# usage:
#	docs_blocks.sh list FILE.md...
#		one line per example: FILE:LINE, then "example ID",
#		"not run: REASON" or "unmarked"
#	docs_blocks.sh show ID FILE.md...
#		the lines of example ID (fails if there is none, or two)
#	docs_blocks.sh check TESTS.bats -- FILE.md...
#		fails, naming each, on an example neither marked "not run"
#		with a reason nor whose ID one of TESTS names
set -u

# One record a line: FILE:LINE TAB MARK TAB LINES (joined by \002).
blocks() {
	awk '
	function mark(s) {
		if (s ~ /^<!-- example: [A-Za-z0-9_.-]+ -->$/) {
			sub(/^<!-- example: /, "", s)
			sub(/ -->$/, "", s)
			return "example " s
		}
		if (s ~ /^<!-- not run: .*[^ ].* -->$/) {
			sub(/^<!-- /, "", s)
			sub(/ -->$/, "", s)
			return s
		}
		return "unmarked"
	}
	function emit() {
		if (shell)
			printf "%s:%d\t%s\t%s\n", file, start, m, body
		inb = 0
		ind = 0
		prev = ""
	}
	FNR == 1 {
		if (ind)
			emit()
		inb = 0
		prev = ""
	}
	inb && /^```/ {
		emit()
		next
	}
	inb {
		body = body $0 "\002"
		if ($0 ~ /^\$ /)
			shell = 1
		next
	}
	ind && (/^(    |\t)/ || /^$/) {
		s = $0
		sub(/^(    |\t)/, "", s)
		body = body s "\002"
		next
	}
	ind {
		sub(/(\002)+$/, "\002", body)
		emit()
	}
	/^```/ {
		lang = substr($0, 4)
		inb = 1
		start = FNR
		file = FILENAME
		body = ""
		m = mark(prev)
		shell = (lang ~ /^(sh|console|shell|bash)$/)
		next
	}
	(/^    \$ / || /^\t\$ /) && lastblank {
		ind = 1
		shell = 1
		start = FNR
		file = FILENAME
		m = mark(prev)
		s = $0
		sub(/^(    |\t)/, "", s)
		body = s "\002"
		next
	}
	{
		lastblank = ($0 ~ /^[ \t]*$/)
		if (!lastblank)
			prev = $0
	}
	END {
		if (ind || inb)
			emit()
	}' "$@"
}


case ${1:-} in
list)
	shift
	blocks "$@" | cut -f 1,2 | tr '\t' ' '
	;;
show)
	id=$2
	shift 2
	blocks "$@" | awk -F '\t' -v m="example $id" '
	$2 == m {
		n++
		body = substr($0, length($1) + length($2) + 3)
	}
	END {
		if (n != 1) {
			printf "docs_blocks.sh: %d examples named %s\n", n,
			    substr(m, 9) > "/dev/stderr"
			exit 1
		}
		gsub(/\002/, "\n", body)
		sub(/\n$/, "", body)
		print body
	}'
	;;
check)
	shift
	tests=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		tests="$tests $1"
		shift
	done
	shift
	bad=0
	n=0
	run=0
	skipped=0
	tab=$(printf '\t')
	blocks "$@" | cut -f 1,2 >"${TMPDIR:-/tmp}/docs_blocks.$$"
	while IFS="$tab" read -r where m; do
		n=$((n + 1))
		case $m in
		"not run: "*)
			skipped=$((skipped + 1))
			;;
		"example "*)
			id=${m#example }
			# shellcheck disable=SC2086
			if grep -Eq "(^|[^A-Za-z0-9_.-])$id(\$|[^A-Za-z0-9_.-])" \
			    $tests; then
				run=$((run + 1))
			else
				echo "$where: example $id: no test names it"
				bad=1
			fi
			;;
		*)
			echo "$where: a shell example neither run by a test" \
			    "nor marked"
			echo "$where: hint: put <!-- example: ID --> before it" \
			    "and run it in tests/e2e/docs_examples.bats, or" \
			    "<!-- not run: REASON --> saying why it cannot run"
			bad=1
			;;
		esac
	done <"${TMPDIR:-/tmp}/docs_blocks.$$"
	rm -f "${TMPDIR:-/tmp}/docs_blocks.$$"
	echo "$n examples: $run run, $skipped not run"
	exit "$bad"
	;;
*)
	echo "usage: docs_blocks.sh list|show ID|check TESTS -- FILE.md..." >&2
	exit 2
	;;
esac
