#!/bin/sh
# make demo: the policy engine at work on the shipped policies, the
# egress proxy, and cordon run putting a command behind it.  Each line
# shows a command a user can type and what cordon answers.
set -u

cordon=${1:?usage: demo.sh CORDON TOOLS_DIR}
tools=${2:?usage: demo.sh CORDON TOOLS_DIR}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

# Only the layers this demo names: no system or user policy of this
# machine, so everyone sees the same answers.
export CORDON_SYSTEM_POLICY=
export XDG_CONFIG_HOME="$tmp/config"

show() {
	printf '\n$ cordon %s\n' "$*"
	"$cordon" "$@" 2>&1 | sed 's/^/  /'
}

cd "$top" || exit 1
dev=policies/dev.json
echo "== cordon policy: decide by name, port and address, and say why"
show policy check policies/default.json "$dev"
show policy explain --policy "$dev" github.com
show policy explain --policy "$dev" raw.githubusercontent.com
show policy explain --policy "$dev" gist.github.com
show policy explain --policy "$dev" evil.test
show policy explain --policy "$dev" 'github.com%2f@evil.test'
show policy explain --allow-domain 169.254.169.254 169.254.43518:80

echo
echo "== a cloned repository's .cordon/policy.json can only tighten"
mkdir -p "$tmp/repo/.cordon"
cat >"$tmp/repo/.cordon/policy.json" <<'JSON'
{"version": 1,
 "network": {"mode": "host", "allow": ["api.github.com", "evil.test"]}}
JSON
printf '\n$ cat repo/.cordon/policy.json\n'
sed 's/^/  /' "$tmp/repo/.cordon/policy.json"
ws="$tmp/repo"
show policy explain --policy "$dev" --workspace "$ws" api.github.com
show policy explain --policy "$dev" --workspace "$ws" github.com
show policy explain --policy "$dev" --workspace "$ws" evil.test
printf '\n$ cordon policy show --policy %s --workspace repo --plain | jq .network.mode\n' "$dev"
"$cordon" policy show --policy "$dev" --workspace "$ws" --plain |
    jq .network.mode | sed 's/^/  /'
echo
echo "== the egress proxy: one allowed and one refused connection, logged"
port() { echo $((20000 + $(od -An -N2 -tu2 /dev/urandom) % 10000)); }
origin=$(port)
proxy=$(port)
"$tools/httpd" --listen "tcp:127.0.0.1:$origin" >/dev/null 2>&1 &
pids="$pids $!"
printf '\n$ cordon proxy --listen tcp:127.0.0.1:%s --allow-domain api.test:%s \\\n' \
    "$proxy" "$origin"
printf '    --resolve api.test:127.0.0.1 --allow-cidr 127.0.0.1/32 --log egress.log &\n'
"$cordon" proxy --listen "tcp:127.0.0.1:$proxy" \
    --allow-domain "api.test:$origin" --resolve api.test:127.0.0.1 \
    --allow-cidr 127.0.0.1/32 --log "$tmp/egress.log" &
pids="$pids $!"
# Listening (state 0A) on the port, seen without connecting to it.
hex=$(printf '%04X' "$proxy")
for _ in $(seq 100); do
	awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }' \
	    /proc/net/tcp && break
	sleep 0.05
done
printf '\n$ curl -x http://127.0.0.1:%s http://api.test:%s/\n' "$proxy" "$origin"
curl -sS -x "http://127.0.0.1:$proxy" "http://api.test:$origin/" 2>&1 |
    sed 's/^/  /'
printf '\n$ curl -x http://127.0.0.1:%s https://exfil.test/\n' "$proxy"
curl -sS -x "http://127.0.0.1:$proxy" "https://exfil.test/" 2>&1 |
    sed 's/^/  /'
printf '\n$ curl -x http://127.0.0.1:%s http://exfil.test/\n' "$proxy"
curl -sS -x "http://127.0.0.1:$proxy" "http://exfil.test/" 2>&1 |
    sed 's/^/  /'
printf '\n$ cat egress.log\n'
sleep 0.2
sed 's/^/  /' "$tmp/egress.log"

echo
echo "== cordon run: a command in a sandbox, its network only through the proxy"
# Run as an unprivileged user, as cordon is meant to be: when the demo
# runs as root, as cordon-test (made if missing), from a copy of the
# binary that user can reach.
run="$tmp/run"
mkdir -p "$run/home"
if [ "$(id -u)" -eq 0 ]; then
	user=cordon-test
	if ! id -u "$user" >/dev/null 2>&1; then
		useradd --system --no-create-home --shell /usr/sbin/nologin \
		    "$user"
	fi
	# cordon is a small front that runs cordon-main, made beside it.
	cp "$cordon" "$run/cordon"
	cp "$cordon-main" "$run/cordon-main"
	[ ! -x "$cordon-offline" ] || cp "$cordon-offline" "$run/"
	chown -R "$user:" "$run"
	chmod 711 "$tmp"
	echo "(as $user, through setpriv: cordon needs no privileges)"
	as_user() {
		setpriv --reuid="$user" --regid="$user" --clear-groups \
		    --inh-caps=-all --reset-env env HOME="$run/home" \
		    XDG_CONFIG_HOME="$run/home/.config" CORDON_SYSTEM_POLICY= \
		    "$run/cordon" "$@"
	}
else
	as_user() { HOME="$run/home" "$cordon" "$@"; }
fi
script="curl -sS http://api.test:$origin/; curl -sS https://evil.example/"
printf '\n$ cordon run --allow-domain api.test:%s --resolve api.test:127.0.0.1 \\\n' \
    "$origin"
printf '    --allow-cidr 127.0.0.1/32 --log egress.log -- \\\n'
printf '    sh -c '\''%s'\''\n' "$script"
(cd "$run" && as_user run --allow-domain "api.test:$origin" \
    --resolve api.test:127.0.0.1 --allow-cidr 127.0.0.1/32 \
    --log "$run/egress.log" -- sh -c "$script") >"$tmp/run.out" 2>&1
rc=$?
sed 's/^/  /' "$tmp/run.out"
printf '\n$ echo $?    # the command'\''s own: its last curl was refused\n  %s\n' "$rc"
printf '\n$ jq -c '\''{event, host, port, decision, status, reason}'\'' egress.log\n'
jq -c '{event, host, port, decision, status, reason}' "$run/egress.log" 2>&1 |
    sed 's/^/  /'

# The demo is also a check: the sandboxed command reached the origin
# through the proxy, and the refusal was logged and summarised.
if ! grep -qx hello "$tmp/run.out" ||
    ! grep -q '^cordon: refused 1 connection: evil.example:443' \
    "$tmp/run.out" ||
    [ "$(jq -r 'select(.host == "api.test" and .event == "end") | .status' \
    "$run/egress.log" 2>/dev/null)" != 200 ] ||
    [ "$(jq -r 'select(.host == "evil.example") | .decision' \
    "$run/egress.log" 2>/dev/null)" != deny ]; then
	echo "demo: cordon run did not do what is shown above" >&2
	exit 1
fi
