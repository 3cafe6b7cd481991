#!/bin/sh
# Fails when a bats test holds an assertion that can never fail; run by
# make check and make lint.
#
# Bats runs a test under `set -e`, and bash does not stop on a command
# whose status is inverted with `!` (bash(1), under `set -e`).  So
# `! grep -q secret log` in the middle of a test passes whatever grep
# finds; as the test's last line it counts, but only until a line is
# added after it.  The same holds for `a || ! b` and `a && ! b`.
#
# Likewise in `[ a ] && [ b ]` only the last test counts: when a fails,
# the list fails, and set -e lets it pass.
#
# Inside @test bodies, outside here-documents, this prints FILE:LINE for
# a command that starts with `!`, or a list that ends in `! cmd`, unless
# it ends in `|| false`, and for a list of tests joined by `&&`.  The fix: `run ! cmd` (bats 1.5) for one
# command; `! a | b || false` for a pipeline; `if c; then ...; fi` for a
# condition.  Lines continued with `\`, `|`, `&&` or `||` are read as
# one; a line that starts with if, elif, while or until is a condition,
# and what is inside `[[ ]]` or quotes is not a command.  A quoted string
# that spans lines (an awk program, sh -c) is read line by line: keep
# such programs in a helper or a here-document.
#
# usage: lint-bats.sh FILE.bats...
set -u

awk '
# Says why line of file never fails a test, and the fix.
function say(file, line, why, fix) {
	printf "%s:%d: %s\n%s:%d: hint: %s\n", file, line, why, file, line, fix
	bad = 1
}

function flag(file, line) {
	say(file, line, "a command inverted with \"!\" never fails a bats " \
	    "test (set -e ignores its status)", "write \"run ! cmd\", or " \
	    "\"! a | b || false\" for a pipeline, or \"if c; then ...; " \
	    "fi\" for a condition")
}

function flag_and(file, line) {
	say(file, line, "tests joined by \"&&\" fail a bats test only by " \
	    "the last one (set -e ignores the status of the others)",
	    "one test a line, or \"if c; then ...; fi\" for a condition")
}

# One logical line, from line "at" of the file.
function check(s, file, at,	bare) {
	if (s ~ /\|\|[ \t]*false[ \t]*$/)
		return
	if (s ~ /^[ \t]*!([ \t]|$)/) {
		flag(file, at)
		return
	}
	if (s ~ /^[ \t]*(if|elif|while|until)[ \t]/)
		return
	bare = s
	gsub(/"([^"\\]|\\.)*"/, "\"\"", bare)
	gsub(/'\''[^'\'']*'\''/, "'\'''\''", bare)
	gsub(/\[\[([^]]|\][^]])*\]\]/, "[[ ]]", bare)
	if (bare ~ /(&&|\|\||;)[ \t]*!([ \t]|$)/)
		flag(file, at)
	if (bare ~ /^[ \t]*\[/ && bare !~ /\|\|/ &&
	    split(bare, part, /&&/) > 1 && part[length(part)] ~ /^[ \t]*\[/)
		flag_and(file, at)
}

FNR == 1 {
	intest = 0
	heredoc = ""
	cont = ""
}

heredoc != "" {
	s = $0
	sub(/^\t+/, "", s)
	if (s == heredoc)
		heredoc = ""
	next
}

/^@test[ \t]/ {
	intest = 1
	next
}

intest && /^}/ {
	intest = 0
	cont = ""
	next
}

!intest || /^[ \t]*#/ {
	next
}

{
	s = $0
	sub(/[ \t]+#.*$/, "", s)
	if (cont == "")
		at = FNR
	cont = cont (cont == "" ? "" : " ") s
	# A here-document: skip its lines up to the word that ends it.
	if (match($0, /(^|[^<])<<-?[ \t]*["'\'']?[A-Za-z_][A-Za-z0-9_]*/)) {
		heredoc = substr($0, RSTART, RLENGTH)
		sub(/^[^<]*<<-?[ \t]*["'\'']?/, "", heredoc)
	}
	if (s ~ /(\\|\||&&)[ \t]*$/)
		next
	check(cont, FILENAME, at)
	cont = ""
}

END {
	exit bad
}
' "$@"
