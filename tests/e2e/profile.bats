#!/usr/bin/env bats
# cordon profile seatbelt | windows-firewall, as a user runs them.  The
# texts themselves are compared byte for byte by the unit tests
# (tests/profiles); here: flags, exit statuses, messages, and paths of
# this machine going through canonicalisation and quoting.

# bats file_tags=fast

load helpers

setup() {
	cordon_setup
	mkdir -p ws
}

# A real path as macOS writes it: /tmp, /var and /etc are in /private.
mac_path() {
	local p
	p=$(cd "$1" && pwd -P)
	case $p in
	/tmp | /tmp/* | /var | /var/* | /etc | /etc/*) p=/private$p ;;
	esac
	echo "$p"
}

@test "seatbelt: proxy mode without --proxy-port fails closed, status 2" {
	run "$CORDON" profile seatbelt --workspace ws
	[ "$status" -eq 2 ]
	[[ "$output" == *"pass --proxy-port N"* ]]
	[[ "$output" != *"(version 1)"* ]]
}

@test "seatbelt: deny default, the workspace writable, only the proxy's port" {
	run "$CORDON" profile seatbelt --workspace ws --proxy-port 3128
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "(version 1)" ]
	[[ "$output" == *$'\n(deny default)\n'* ]]
	[[ "$output" == *'(allow network-outbound (remote ip "localhost:3128"))'* ]]
	[ "$(grep -c '^(allow network' <<<"$output")" -eq 1 ]
	ws=$(mac_path ws)
	[[ "$output" == *"(subpath \"$ws\")"* ]]
	# Every .git, at any depth, read-only whole (no scan on macOS).
	[[ "$output" == *'(require-not (regex #"/[.]git/"))'* ]]
	[[ "$output" == *'(require-not (regex #"/[.]git$"))'* ]]
	[[ "$output" == *"(require-not (subpath \"$(mac_path "$HOME")/.ssh\"))"* ]]
}

@test "seatbelt: /tmp paths are written as /private/tmp" {
	write p.json <<-'EOF'
	{"version": 1, "filesystem": {"write": ["/tmp/b", "/var/c", "/etc/d"]}}
	EOF
	run "$CORDON" profile seatbelt --workspace ws --network none \
	    --only --policy p.json
	[ "$status" -eq 0 ]
	[[ "$output" == *'(subpath "/private/tmp/b")'* ]]
	[[ "$output" == *'(subpath "/private/var/c")'* ]]
	[[ "$output" == *'(subpath "/private/etc/d")'* ]]
}

@test "seatbelt: a workspace with a quote in its name stays one string" {
	mkdir -p 'we") (allow network*) ("ird'
	run "$CORDON" profile seatbelt --workspace 'we") (allow network*) ("ird' \
	    --proxy-port 3128
	[ "$status" -eq 0 ]
	[[ "$output" == *'/we\") (allow network*) (\"ird")'* ]]
	[ "$(grep -c '^(allow network' <<<"$output")" -eq 1 ]
}

@test "seatbelt: mode none has no network rule, and no port is needed" {
	run "$CORDON" profile seatbelt --workspace ws --network none
	[ "$status" -eq 0 ]
	[[ "$output" != *"(allow network"* ]]
	[[ "$output" == *";; Network: none"* ]]
}

@test "seatbelt: mode host says it is unfiltered, files still deny by default" {
	run "$CORDON" profile seatbelt --workspace ws --network host
	[ "$status" -eq 0 ]
	[[ "$output" == *"cordon: profile: network mode host: the profile leaves the network unfiltered"* ]]
	[[ "$output" == *";; Network: UNFILTERED"* ]]
	[[ "$output" == *$'\n(deny default)\n'* ]]
}

@test "seatbelt: a Windows flag or a bad port is a usage error" {
	run "$CORDON" profile seatbelt --program 'C:\a.exe'
	[ "$status" -eq 2 ]
	[[ "$output" == *"is for windows-firewall"* ]]
	run "$CORDON" profile seatbelt --proxy-port 0
	[ "$status" -eq 2 ]
	[[ "$output" == *"a port is 1 to 65535"* ]]
	run "$CORDON" profile nosuch
	[ "$status" -eq 2 ]
	[[ "$output" == *'unknown kind "nosuch"'* ]]
}

@test "windows-firewall: needs a target and, in proxy mode, the port" {
	run "$CORDON" profile windows-firewall --workspace ws --proxy-port 3128
	[ "$status" -eq 2 ]
	[[ "$output" == *"pass --program PATH or --user NAME"* ]]
	run "$CORDON" profile windows-firewall --workspace ws --program 'C:\a.exe'
	[ "$status" -eq 2 ]
	[[ "$output" == *"pass --proxy-port N"* ]]
}

@test "windows-firewall: blocks all but the proxy's loopback port" {
	run "$CORDON" profile windows-firewall --workspace ws --proxy-port 3128 \
	    --program "C:\\it's\\a.exe"
	[ "$status" -eq 0 ]
	[[ "$output" == *"\$t = @{ Program = 'C:\\it''s\\a.exe' }"* ]]
	[[ "$output" == *"-RemotePort '1-3127', '3129-65535'"* ]]
	[ "$(grep -c '^New-NetFirewallRule' <<<"$output")" -eq 4 ]
	[[ "$output" != *"-Action Allow"* ]]
}

@test "windows-firewall: --remove prints the removal script alone" {
	run "$CORDON" profile windows-firewall --remove
	[ "$status" -eq 0 ]
	[[ "$output" == *"Get-NetFirewallRule -Group \$group"*"Remove-NetFirewallRule"* ]]
	[[ "$output" != *"New-NetFirewallRule"* ]]
}
