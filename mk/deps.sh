#!/bin/sh
# Installs the Debian packages named as arguments that are not installed
# yet, with apt-get (through sudo when not root).  Quiet and quick when
# everything is there.
set -eu

# What the installed packages provide counts as installed: npm is a
# package of its own in Debian, but the nodejs of other archives provides
# it (and conflicts with Debian's), and must then be left alone.
provided=$(dpkg-query -W -f='${db:Status-Abbrev}|${Provides}\n' 2>/dev/null |
    awk -F'|' '$1 ~ /^ii/ && $2 != "" { print $2 }' | tr ',' '\n' |
    sed 's/(.*//; s/[[:space:]]//g') || provided=""

missing=""
for p in "$@"; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
	    grep -q 'install ok installed' &&
	    ! printf '%s\n' "$provided" | grep -qxF "$p"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "cordon: missing packages:$missing" >&2
	echo "cordon: hint: this is not a Debian system; install their" \
	    "equivalents by hand" >&2
	exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
	sudo=""
elif command -v sudo >/dev/null 2>&1; then
	sudo="sudo"
else
	echo "cordon: missing packages:$missing" >&2
	echo "cordon: hint: run 'make deps' as root, or install sudo" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
