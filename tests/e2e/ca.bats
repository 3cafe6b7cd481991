#!/usr/bin/env bats
# cordon ca init | show: the local CA for TLS inspection, as a user runs it.
# Leaves are checked by tests/unit/test_certs.c (X509_verify_cert).

load helpers

setup() {
	cordon_setup
	export XDG_DATA_HOME="$HOME/.local/share"
	CA="$XDG_DATA_HOME/cordon/ca"
	umask 022
}

@test "ca init: makes the CA under XDG_DATA_HOME, key 0600, folder 0700" {
	run "$CORDON" ca init
	[ "$status" -eq 0 ]
	[[ "$output" == *"directory: $CA"* ]]
	[[ "$output" == *"subject: CN=cordon local CA "* ]]
	[ "$(stat -c %a "$CA")" = 700 ]
	[ "$(stat -c %a "$XDG_DATA_HOME/cordon")" = 700 ]
	[ "$(stat -c %a "$CA/ca.key")" = 600 ]
	[ "$(stat -c %a "$CA/ca.crt")" = 644 ]
	[ ! -e "$CA/ca.key.new" ]
}

@test "ca init: without XDG_DATA_HOME, ~/.local/share/cordon/ca" {
	unset XDG_DATA_HOME
	run "$CORDON" ca init
	[ "$status" -eq 0 ]
	[ -f "$HOME/.local/share/cordon/ca/ca.key" ]
}

@test "ca init: a CA openssl accepts, EC P-256, CA:TRUE pathlen:0" {
	"$CORDON" ca init --dir ca >/dev/null
	run openssl verify -CAfile ca/ca.crt ca/ca.crt
	[ "$status" -eq 0 ]
	run openssl x509 -in ca/ca.crt -noout -text
	[[ "$output" == *"CA:TRUE, pathlen:0"* ]]
	[[ "$output" == *"Certificate Sign, CRL Sign"* ]]
	[[ "$output" == *"prime256v1"* ]]
	run openssl pkey -in ca/ca.key -pubout
	[ "$status" -eq 0 ]
	[ "$output" = "$(openssl x509 -in ca/ca.crt -noout -pubkey)" ]
}

@test "ca init: refuses to replace a CA without --force" {
	"$CORDON" ca init --dir ca >/dev/null
	cp ca/ca.crt before.crt
	run "$CORDON" ca init --dir ca
	[ "$status" -eq 1 ]
	[[ "$output" == *"already holds a CA"* ]]
	[[ "$output" == *"hint: cordon ca init --force"* ]]
	cmp -s before.crt ca/ca.crt
	run "$CORDON" ca init --dir ca --force
	[ "$status" -eq 0 ]
	run cmp -s before.crt ca/ca.crt
	[ "$status" -ne 0 ]
	[ "$(stat -c %a ca/ca.key)" = 600 ]
}

@test "ca init: refuses a folder others may enter" {
	mkdir -m 755 open
	run "$CORDON" ca init --dir open
	[ "$status" -eq 1 ]
	[[ "$output" == *"mode 0700"* ]]
	[ ! -e open/ca.key ]
}

@test "ca init: a folder others may only pass through (0711) is accepted" {
	"$CORDON" ca init --dir ca >/dev/null
	chmod 711 ca
	run "$CORDON" ca init --dir ca --force
	[ "$status" -eq 0 ]
	[ "$(stat -c %a ca)" = 711 ]
	[ "$(stat -c %a ca/ca.key)" = 600 ]
	chmod 751 ca
	run "$CORDON" ca init --dir ca --force
	[ "$status" -eq 1 ]
	[[ "$output" == *"mode 0700, or 0711 (it is 0751)"* ]]
}

@test "ca show: the fingerprint is openssl's SHA-256 fingerprint" {
	"$CORDON" ca init --dir ca >/dev/null
	run "$CORDON" ca show --dir ca
	[ "$status" -eq 0 ]
	want=$(openssl x509 -in ca/ca.crt -noout -fingerprint -sha256)
	want=${want#*=}
	[[ "$output" == *"sha256 fingerprint: $want"* ]]
	[[ "$output" == *"not after: "* ]]
	[[ "$output" != *"warn"* && "$output" != *"hint"* ]]
}

@test "ca show: warns when the key is open to others" {
	"$CORDON" ca init --dir ca >/dev/null
	chmod 644 ca/ca.key
	run "$CORDON" ca show --dir ca
	[ "$status" -eq 0 ]
	[[ "$output" == *"ca.key has mode 0644"* ]]
	[[ "$output" == *"hint: chmod 600"* ]]
}

@test "ca show: warns when the CA ends within 7 days" {
	mkdir -m 700 ca
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
	    -nodes -days 2 -subj /CN=short -keyout ca/ca.key \
	    -out ca/ca.crt 2>/dev/null
	chmod 600 ca/ca.key
	run "$CORDON" ca show --dir ca
	[ "$status" -eq 0 ]
	[[ "$output" == *"the CA expires in "[12]" day(s)"* ]]
}

@test "ca show: no CA yet fails with a hint" {
	run "$CORDON" ca show --dir nowhere
	[ "$status" -eq 1 ]
	[[ "$output" == *"nowhere/ca.crt"* ]]
	[[ "$output" == *"hint: cordon ca init --dir nowhere"* ]]
}

@test "ca: unknown command and stray arguments are usage errors" {
	run "$CORDON" ca sign
	[ "$status" -eq 2 ]
	run "$CORDON" ca show --force
	[ "$status" -eq 2 ]
	run "$CORDON" ca init extra
	[ "$status" -eq 2 ]
}
