# helpers.bash: loaded by every bats file in tests/e2e.
#
# Each test gets a private HOME and XDG_CONFIG_HOME and no system policy,
# so nothing of the machine it runs on leaks into what it checks.

: "${CORDON:?CORDON must name the cordon binary}"

cordon_setup() {
	export HOME="$BATS_TEST_TMPDIR/home"
	export XDG_CONFIG_HOME="$HOME/.config"
	export CORDON_SYSTEM_POLICY=
	mkdir -p "$HOME" "$XDG_CONFIG_HOME"
	cd "$BATS_TEST_TMPDIR" || return 1
}

# The unprivileged account the tests use when they run as root.
TEST_USER=cordon-test

# Makes sure $TEST_USER exists (as root); prints nothing.
ensure_test_user() {
	if ! id -u "$TEST_USER" >/dev/null 2>&1; then
		useradd --system --no-create-home --shell /usr/sbin/nologin \
		    "$TEST_USER"
	fi
}

# Runs a command as an unprivileged user, with HOME in a folder that user
# owns ($1), and the rest of the environment reset.  When the tests
# themselves run unprivileged, the command just runs.
as_user() {
	local home=$1
	shift
	if [ "$(id -u)" -ne 0 ]; then
		HOME="$home" XDG_CONFIG_HOME="$home/.config" "$@"
		return
	fi
	ensure_test_user
	chown -R "$TEST_USER:" "$home"
	setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups \
	    --inh-caps=-all --reset-env \
	    env HOME="$home" XDG_CONFIG_HOME="$home/.config" \
	    CORDON_SYSTEM_POLICY= "$@"
}

# Writes stdin to a file, making its folder.
write() {
	mkdir -p "$(dirname "$1")"
	cat >"$1"
}
