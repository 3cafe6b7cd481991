#!/bin/sh
# make demo: the policy engine at work on the shipped policies.  Each
# line shows a command a user can type and what cordon answers.
set -u

cordon=${1:?usage: demo.sh CORDON}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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
echo "(the sandbox runner, proxy and bridge build on this engine)"
