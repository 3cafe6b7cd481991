#!/usr/bin/env bats
# A newcomer's make targets: what `make demo`, `make unit`, `make check`
# and `make deps-fleet` ask the package tools for (apt-get, dpkg-query,
# npm and sudo replaced by stand-ins that record their arguments), what
# `make e2e` runs, that `make check` shows its progress while it runs,
# `make install` as an unprivileged user, and the seccomp programs'
# comparison `mk/same.sh` makes (tests/tools/bpfsame.c).

load helpers

bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	BUILDDIR=${TOOLS_DIR%/tests/tools}
}

teardown() {
	teardown_bg
	[ -z "${PUBDIR:-}" ] || rm -rf "$PUBDIR"
}

# Puts stand-ins for the package tools first on PATH: each appends its
# name and arguments to $REC, installs nothing, and says that nothing
# is installed; sudo runs what it is given (the stand-ins, then).
standins() {
	local t
	STANDIN="$BATS_TEST_TMPDIR/standin"
	REC="$BATS_TEST_TMPDIR/asked"
	mkdir -p "$STANDIN"
	: >"$REC"
	for t in apt-get apt dpkg dpkg-query npm npx yarn pip3; do
		printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$t" "$REC" \
		    >"$STANDIN/$t"
	done
	echo 'exit 1' >>"$STANDIN/dpkg-query"
	echo '[ "$1" != ci ] || mkdir -p node_modules' >>"$STANDIN/npm"
	printf '#!/bin/sh\necho "sudo $*" >>"%s"\nexec "$@"\n' "$REC" \
	    >"$STANDIN/sudo"
	chmod 755 "$STANDIN"/*
	export PATH="$STANDIN:$PATH"
}

# The packages apt-get was asked to install, one a line, sorted.
asked_packages() {
	awk '$1 == "apt-get" && / install / {
		for (i = 2; i <= NF; i++) if ($i !~ /^-/ && $i != "install")
			print $i }' "$REC" | sort -u
}

# make with the suite's binary and tools, up to date: nothing is built.
make_here() {
	local t o=()
	for t in "$TOOLS_DIR"/*; do
		o+=(-o "$t")
	done
	make -s -C "$TOP" BIN="$CORDON" BUILD="$BUILDDIR" -o "$CORDON" \
	    "${o[@]}" "$@"
}

@test "make demo asks apt-get for the build's packages, curl and jq only, and runs no npm" {
	standins
	run make_here demo
	echo "$output"
	[ "$status" -eq 0 ]
	cat "$REC"
	# The demo itself ran, against the real curl and jq.
	[[ "$output" == *"cordon: refused 1 connection: evil.example:443"* ]]
	want="curl gcc jq libc-ares-dev libcmocka-dev libevent-dev
libjansson-dev libmnl-dev libnftnl-dev libseccomp-dev libssl-dev make
musl-tools nettle-dev passwd pkg-config util-linux zlib1g-dev"
	[ "$(asked_packages | tr '\n' ' ')" = "$(echo $want) " ]
	run grep -E '^(npm|npx|yarn|pip3) ' "$REC"
	[ "$status" -eq 1 ]
}

@test "make unit asks apt-get for the build's packages and git only, and runs the unit tests" {
	standins
	run make_here unit UNIT_TESTS=test_host \
	    -o "$BUILDDIR/tests/unit/test_host"
	echo "$output"
	[ "$status" -eq 0 ]
	ran=$output
	cat "$REC"
	want="gcc git libc-ares-dev libcmocka-dev libevent-dev libjansson-dev
libmnl-dev libnftnl-dev libseccomp-dev libssl-dev make musl-tools nettle-dev
pkg-config zlib1g-dev"
	[ "$(asked_packages | tr '\n' ' ')" = "$(echo $want) " ]
	run grep -E '^(npm|npx|yarn|pip3) ' "$REC"
	[ "$status" -eq 1 ]
	# test_host ran, and the bats suite did not.
	[[ "$ran" == *"# unit: test_host"* ]]
	[[ "$ran" != *"# e2e:"* ]]
	[[ "$(tail -n 1 <<<"$ran")" =~ ^[1-9][0-9]*\ passed,\ 0\ failed$ ]]
}

@test "make e2e runs the bats suite, after the tests' clients and servers" {
	run make -n -s -C "$TOP" e2e
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"mk/deps.sh"*"bats"*"chromium"* ]]
	[[ "$output" == *"./tests/run.sh"* ]]
}

@test "make deps-check asks for the tests' clients and servers as well" {
	standins
	mkdir "$BATS_TEST_TMPDIR/npm"
	cp "$TOP"/tests/npm/package*.json "$BATS_TEST_TMPDIR/npm/"
	run make_here deps-check NPM_TOOLS="$BATS_TEST_TMPDIR/npm"
	echo "$output"
	[ "$status" -eq 0 ]
	asked_packages >"$BATS_TEST_TMPDIR/pkgs"
	for p in bats chromium openssh-server default-jdk-headless maven \
	    golang-go cargo yarnpkg npm gcc libevent-dev; do
		grep -qx "$p" "$BATS_TEST_TMPDIR/pkgs"
	done
	grep -qx 'npm ci --no-audit --no-fund --no-update-notifier --loglevel=error' \
	    "$REC"
	# The image's tools are make fleet-check's, not make check's.
	run grep -xE 'mmdebstrap|buildah|podman|runc|slirp4netns' \
	    "$BATS_TEST_TMPDIR/pkgs"
	[ "$status" -eq 1 ]
}

@test "make deps-fleet asks for the image's tools and the runtime, and npm ci for the manifests' validator" {
	standins
	mkdir "$BATS_TEST_TMPDIR/fleet"
	cp "$TOP"/tests/fleet/package*.json "$BATS_TEST_TMPDIR/fleet/"
	run make_here deps-fleet FLEET_NPM="$BATS_TEST_TMPDIR/fleet"
	echo "$output"
	[ "$status" -eq 0 ]
	asked_packages >"$BATS_TEST_TMPDIR/pkgs"
	for p in mmdebstrap buildah podman runc slirp4netns conmon bats jq \
	    nodejs dpkg-dev fakeroot; do
		grep -qx "$p" "$BATS_TEST_TMPDIR/pkgs"
	done
	grep -qx 'npm ci --no-audit --no-fund --no-update-notifier --loglevel=error' \
	    "$REC"
}

@test "the README says the demo creates the cordon-test user" {
	tr '\n' ' ' <"$TOP/README.md" |
	    grep -q 'When run as root it creates the `cordon-test` user'
	grep -q 'useradd.*"$user"\|useradd --system' "$TOP/mk/demo.sh"
}

@test "make check shows each bats result as the test ends, then the counts" {
	mkdir -p "$BATS_TEST_TMPDIR/t/tests/e2e"
	flag="$BATS_TEST_TMPDIR/flag"
	# The second test passes only if the first one's result was shown
	# while the suite still ran (the flag is set on seeing it).  The
	# lines are written with % for @: bats would rewrite them here.
	sed 's/^%/@/' <<BATS | write "$BATS_TEST_TMPDIR/t/tests/e2e/a.bats"
%test "first" { true; }
%test "second" {
	for i in \$(seq 100); do [ -e "$flag" ] && return 0; sleep 0.1; done
	return 1
}
BATS
	cd "$BATS_TEST_TMPDIR/t"
	out="$BATS_TEST_TMPDIR/out"
	# A suite of its own: none of this one's BATS_ variables (its -f).
	env $(compgen -e | grep '^BATS_' | sed 's/^/-u /') CORDON=/bin/true \
	    "$TOP/tests/run.sh" >"$out" 2>&1 3>&- &
	pid=$!
	for i in $(seq 100); do
		grep -q '^ok 1 first' "$out" && break
		sleep 0.1
	done
	touch "$flag"
	wait "$pid" || true
	cat "$out"
	grep -q '^ok 2 second' "$out"
	[ "$(tail -n 1 "$out")" = "2 passed, 0 failed" ]
}

@test "make install PREFIX=~/.local as an unprivileged user: everything beneath the prefix" {
	# A folder the test user can reach (the test's own is root's).
	PUBDIR=$(mktemp -d)
	chmod 755 "$PUBDIR"
	src="$PUBDIR/src"
	home="$PUBDIR/uhome"
	mkdir -p "$src/docs" "$src/policies" "$home"
	# The pieces install reads, where the test user can read them.
	cp "$TOP/Makefile" "$src/"
	cp -r "$TOP/contrib" "$src/"
	cp "$TOP"/docs/cordon.1 "$TOP"/docs/cordon-policy.5 "$src/docs/"
	cp "$TOP"/policies/*.json "$src/policies/"
	cp -r "$TOP"/policies/agents "$src/policies/"
	cp_cordon "$src"
	mkdir -p "$src/build"
	# The session client built beside the binary under test.
	sx=$(dirname "$CORDON")/build/cordon-session-exec
	[ -x "$sx" ] || sx=$(dirname "$CORDON")/cordon-session-exec
	cp "$sx" "$src/build/"
	chmod -R a+rX "$src"
	run as_user "$home" make -s -C "$src" install PREFIX="$home/.local" \
	    -o cordon -o cordon-main -o cordon-log -o cordon-offline \
	    -o build/cordon-session-exec
	echo "$output"
	[ "$status" -eq 0 ]
	[ -x "$home/.local/bin/cordon" ]
	[ -x "$home/.local/libexec/cordon/cordon-session-exec" ]
	[ -x "$home/.local/libexec/cordon/cordon-main" ]
	[ -x "$home/.local/libexec/cordon/cordon-log" ]
	[ -x "$home/.local/libexec/cordon/cordon-offline" ]
	[ -f "$home/.local/share/man/man1/cordon.1" ]
	[ -f "$home/.local/share/man/man5/cordon-policy.5" ]
	[ -f "$home/.local/share/cordon/policies/default.json" ]
	[ -f "$home/.local/share/cordon/policies/agents/claude.json" ]
	[ -f "$home/.local/etc/logrotate.d/cordon" ]
	[ -f "$home/.local/lib/systemd/system/cordon-proxy.service" ]
	grep -q "^ExecStart=$home/.local/bin/cordon proxy" \
	    "$home/.local/lib/systemd/system/cordon-proxy.service"
	grep -q "^ExecStart=$home/.local/bin/cordon bridge" \
	    "$home/.local/lib/systemd/system/cordon-originator.service"
	# The installed binary runs, for that user.
	run as_user "$home" "$home/.local/bin/cordon" --version
	[ "$status" -eq 0 ]
	# And finds cordon-main for what it does not serve itself.
	run as_user "$home" "$home/.local/bin/cordon" policy check \
	    "$home/.local/share/cordon/policies/default.json"
	echo "$output"
	[ "$status" -eq 0 ]
}

# dpkg on a scratch root of its own ($R): the machine's packages untouched.
dpkg_r() {
	fakeroot dpkg --root="$R" --log=/dev/null --force-depends \
	    --force-not-root --force-script-chrootless "$@"
}

@test "make deb: lintian finds no error; installs, upgrades, removes and purges cleanly" {
	out="$BATS_TEST_TMPDIR/out"
	run make_here deb DEB_OUT="$out"
	echo "$output"
	[ "$status" -eq 0 ]
	deb=$(ls "$out"/cordon_*.deb)
	run lintian --fail-on error "$deb"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"E: "* ]]
	dpkg-deb -c "$deb" | awk '{ print $6 }' >"$BATS_TEST_TMPDIR/files"
	for f in ./usr/bin/cordon ./usr/share/man/man1/cordon.1.gz \
	    ./usr/share/man/man5/cordon-policy.5.gz \
	    ./usr/share/cordon/policies/default.json \
	    ./lib/systemd/system/cordon-proxy.service \
	    ./lib/systemd/system/cordon-originator.service \
	    ./etc/logrotate.d/cordon ./usr/share/doc/cordon/copyright; do
		grep -qxF "$f" "$BATS_TEST_TMPDIR/files"
	done
	[ "$(dpkg-deb -f "$deb" Package)" = cordon ]
	# The shared libraries are Depends; those linked from their archives
	# (LINK=static, the default) are Built-Using, with their versions.
	[[ "$(dpkg-deb -f "$deb" Depends)" == *libc6* ]]
	[[ "$(dpkg-deb -f "$deb" Depends)" == *libmnl* ]]
	[[ "$(dpkg-deb -f "$deb" Built-Using)" == *"openssl (= "* ]]
	[[ "$(dpkg-deb -f "$deb" Built-Using)" == *"libevent (= "* ]]
	[[ "$(dpkg-deb -f "$deb" Depends)" != *libssl* ]]

	# The postinst, on configure, runs systemd-sysusers and
	# systemd-tmpfiles (stubs here, which log their arguments), and
	# passes when they are missing or fail.
	ctl="$BATS_TEST_TMPDIR/ctl" stub="$BATS_TEST_TMPDIR/stub"
	calls="$BATS_TEST_TMPDIR/calls"
	dpkg-deb -e "$deb" "$ctl"
	[ -x "$ctl/postinst" ]
	mkdir -p "$stub" "$BATS_TEST_TMPDIR/empty"
	for t in systemd-sysusers systemd-tmpfiles; do
		printf '#!/bin/sh\necho "${0##*/} $*" >>"%s"\nexit ${STUB_RC:-0}\n' \
		    "$calls" >"$stub/$t"
		chmod +x "$stub/$t"
	done
	run env -u DPKG_ROOT PATH="$stub" /bin/sh "$ctl/postinst" configure
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cat "$calls")" = "systemd-sysusers cordon.conf
systemd-tmpfiles --create cordon.conf" ]
	rm "$calls"
	run env -u DPKG_ROOT STUB_RC=1 PATH="$stub" /bin/sh "$ctl/postinst" \
	    configure
	[ "$status" -eq 0 ]
	[[ "$output" == *"systemd-sysusers cordon.conf failed"* ]]
	rm "$calls"
	run env -u DPKG_ROOT PATH="$BATS_TEST_TMPDIR/empty" /bin/sh \
	    "$ctl/postinst" configure
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run env -u DPKG_ROOT PATH="$stub" /bin/sh "$ctl/postinst" remove
	[ "$status" -eq 0 ]
	[ ! -e "$calls" ]

	# Under dpkg --root the postinst runs (DPKG_ROOT set) and leaves the
	# running system alone: the stubs first on PATH are not called.
	R="$BATS_TEST_TMPDIR/root"
	mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
	: >"$R/var/lib/dpkg/status"
	PATH="$stub:$PATH" run dpkg_r -i "$deb"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -x "$R/var/lib/dpkg/info/cordon.postinst" ]
	[ ! -e "$calls" ]
	[ "$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Status}' \
	    cordon)" = "install ok installed" ]
	"$R/usr/bin/cordon" --version
	grep -q "^ExecStart=/usr/bin/cordon proxy" \
	    "$R/lib/systemd/system/cordon-proxy.service"
	grep -q "^ExecStart=/usr/bin/cordon bridge" \
	    "$R/lib/systemd/system/cordon-originator.service"
	# An upgrade keeps the operator's change to a conffile.
	echo "# local" >>"$R/etc/logrotate.d/cordon"
	run make_here deb DEB_OUT="$out/2" DEB_VERSION=0.1.0+up1
	[ "$status" -eq 0 ]
	run dpkg_r -i --force-confold "$out"/2/cordon_0.1.0+up1_*.deb
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Version}' \
	    cordon)" = 0.1.0+up1 ]
	grep -qx '# local' "$R/etc/logrotate.d/cordon"
	# Remove: the files go, the conffile stays; purge: it goes too.
	run dpkg_r -r cordon
	[ "$status" -eq 0 ]
	[ ! -e "$R/usr/bin/cordon" ]
	[ ! -e "$R/usr/share/man/man1/cordon.1.gz" ]
	[ -e "$R/etc/logrotate.d/cordon" ]
	run dpkg_r --purge cordon
	[ "$status" -eq 0 ]
	[ ! -e "$R/etc/logrotate.d/cordon" ]
	[ -z "$(find "$R" -type f ! -path "$R/var/lib/dpkg/*")" ]
}

# A classic BPF program for seccomp from instructions "CODE JT JF K"
# (hex code and k), as raw bytes in file $1.
bpf_prog() {
	local out=$1 code jt jf k
	shift
	: >"$out"
	while [ $# -gt 0 ]; do
		read -r code jt jf k <<<"$1"
		printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' \
		    $((code & 255)) $((code >> 8)) "$jt" "$jf")" >>"$out"
		printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' \
		    $((k & 255)) $(((k >> 8) & 255)) $(((k >> 16) & 255)) \
		    $(((k >> 24) & 255)))" >>"$out"
		shift
	done
}

@test "mk/same.sh's bpfsame: two layouts of one decision are the same, another decision differs" {
	local d=$BATS_TEST_TMPDIR
	# x86_64 allowed, any other architecture EPERM; then the same with
	# the returns the other way round; then x86_64 refused.
	bpf_prog "$d/a" "0x20 0 0 4" "0x15 0 1 0xc000003e" \
	    "0x06 0 0 0x7fff0000" "0x06 0 0 0x00050001"
	bpf_prog "$d/b" "0x20 0 0 4" "0x15 1 0 0xc000003e" \
	    "0x06 0 0 0x00050001" "0x06 0 0 0x7fff0000"
	bpf_prog "$d/c" "0x20 0 0 4" "0x15 1 0 0xc000003e" \
	    "0x06 0 0 0x7fff0000" "0x06 0 0 0x00050001"
	run "$TOOLS_DIR/bpfsame" "$d/a" "$d/b"
	[ "$status" -eq 0 ]
	[[ "$output" == *"the same decisions in"*"(4 and 4 instructions)"* ]]
	# od's text, as same.sh reads a program, is the same program.
	od -An -tx1 -v "$d/a" >"$d/a.hex"
	run "$TOOLS_DIR/bpfsame" "$d/a.hex" "$d/b"
	[ "$status" -eq 0 ]
	run "$TOOLS_DIR/bpfsame" "$d/a" "$d/c"
	[ "$status" -eq 1 ]
	[[ "$output" == *"they differ: arch x86_64"*"old 0x7fff0000, new 0x50001"* ]]
	# A jump out of the program is no program.
	bpf_prog "$d/bad" "0x05 0 0 9"
	run "$TOOLS_DIR/bpfsame" "$d/a" "$d/bad"
	[ "$status" -eq 2 ]
}
