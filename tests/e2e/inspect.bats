#!/usr/bin/env bats
# TLS inspection end to end: a real TLS origin (tests/tools/httpd with a
# certificate from a CA made here), real curl inside `cordon run` as the
# test user, the run's own proxy opening the hosts network.inspect lists.
# The sandbox trusts cordon's CA only through the bundle the run gives it:
# no curl here is told -k or --cacert, except for the host that is not
# inspected, whose real certificate it must see.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cordon_setup
	sandbox_setup
	HTTPD="$TOOLS_DIR/httpd"
	T="$UDIR/tls"
	mkdir -p "$T"
	# The origin's own CA and certificate, for four names.
	sh "$BATS_TEST_DIRNAME/../../mk/origin-cert.sh" "$T" api.test \
	    other.test plain.test crates.io
	PORT=$(free_port)
	start_bg origin "$HTTPD" --listen "tcp:127.0.0.1:$PORT" \
	    --tls-cert "$T/origin.pem" --tls-key "$T/origin.key" \
	    --log "$BATS_TEST_TMPDIR/origin.heads" --log-header Authorization
	wait_listen "tcp:127.0.0.1:$PORT"

	# In the workspace, which the sandbox sees (a folder under the private
	# /tmp would be out of its sight anyway): cordon must hide it.
	CADIR="$WS/ca"
	"$CORDON" ca init --dir "$CADIR" >/dev/null
	POL="$UDIR/inspect.json"
	write "$POL" <<-EOF
	{"version": 1,
	 "network": {
	   "allow": ["api.test:$PORT", "other.test:$PORT", "plain.test:$PORT",
	       "crates.io:$PORT"],
	   "allow_cidrs": ["127.0.0.1/32"],
	   "inspect": [
	     {"host": "api.test", "methods": ["GET", "HEAD"],
	      "paths": ["/", "/bytes/*", "/headers", "/echo", "/gzip",
	          "/bad/*", "/text/*"]},
	     {"host": "other.test", "methods": ["GET", "POST"],
	      "paths": ["/", "/echo"]}]},
	 "credentials": [{"host": "api.test", "env": "GITHUB_TOKEN",
	     "header": "Authorization", "format": "Bearer %s"}],
	 "tls": {"ca_dir": "$CADIR"}}
	EOF
	ELOG="$UDIR/egress.log"
	if [ "$(id -u)" -eq 0 ]; then
		chown -R "$TEST_USER:" "$UDIR"
	fi
	chmod 644 "$POL"
}

teardown() {
	teardown_bg
	sandbox_teardown
}

# Runs "$@" in a sandbox of the test user, with GITHUB_TOKEN=realsecret
# in cordon's environment and the origin's CA given to the run's proxy.
inspect_run() {
	cd "$WS" || return 1
	as_user "$UDIR/home" env GITHUB_TOKEN=realsecret "$UCORDON" run \
	    --read-only "$UDIR/bin" --read-only "$T" --policy "$POL" \
	    --resolve api.test:127.0.0.1 --resolve other.test:127.0.0.1 \
	    --resolve plain.test:127.0.0.1 --resolve crates.io:127.0.0.1 \
	    --log "$ELOG" "$@"
}

# The egress log lines of protocol $1, as compact JSON.
log_of() {
	jq -c --arg p "$1" 'select(.event != "open") | select(.protocol == $p) | {method, host, path,
	    decision, reason, warning, status}' "$ELOG"
}

@test "inspect: a GET passes, and the client verified cordon's leaf" {
	run inspect_run --upstream-ca "$T/origin-ca.pem" --quiet -- sh -c "
	    curl -sS -v https://api.test:$PORT/ 2>err.txt
	    echo curl=\$?
	    grep -i 'issuer:' err.txt
	    cat $CADIR/ca.key >/dev/null 2>&1 || echo no-key"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = hello ]
	[ "${lines[1]}" = curl=0 ]
	# The certificate curl checked is cordon's, not the origin's.
	[[ "${lines[2]}" == *"issuer: CN=cordon local CA"* ]]
	# And the command cannot read the key that signed it.
	[ "${lines[3]}" = no-key ]
	grep -q "GET / " "$BATS_TEST_TMPDIR/origin.heads"
	run log_of https
	[ "$output" = '{"method":"GET","host":"api.test","path":"/","decision":"allow","reason":null,"warning":null,"status":200}' ]
}

@test "inspect: a slow reader gets all of a closing answer" {
	# The answer's last TLS records still wait in the proxy when the
	# origin is done; curl says "transfer closed" if they are lost.
	run inspect_run --upstream-ca "$T/origin-ca.pem" --quiet -- \
	    curl -sS --limit-rate 8M -H 'Connection: close' -o /dev/null \
	    -w '%{http_code} %{size_download}\n' \
	    https://api.test:$PORT/bytes/16000000
	[ "$status" -eq 0 ]
	[ "$output" = "200 16000000" ]
}

@test "inspect: an answer ended by a bare close arrives whole past the scrubber" {
	# The credential's scrubber holds back the last bytes of each read
	# in case a real value spans two; no close_notify must not lose them.
	# framing.bats has every framing on every path.
	run inspect_run --upstream-ca "$T/origin-ca.pem" --quiet -- sh -c "
	    curl -sS https://api.test:$PORT/text/bare/180 | sha256sum
	    curl -sS --raw https://api.test:$PORT/text/ext/180 | tail -c 5 |
		od -An -c"
	[ "$status" -eq 0 ]
	want=$(yes abcdefghijklmnopqrstuvwxyz0123456789 | head -c 180 |
	    sha256sum)
	[ "${lines[0]}" = "$want" ]
	# Re-chunked by the scrubber, the last chunk whole (trailers dropped).
	[[ "${lines[1]}" == *'0  \r  \n  \r  \n'* ]]
	run log_of https
	[[ "${lines[0]}" == *'"path":"/text/bare/180","decision":"allow","reason":"the upstream ended its close-delimited answer without TLS close_notify; passed on ended the same way"'* ]]
}

@test "inspect: Java trusts cordon's CA through the run's own trust store" {
	# The JVM reads no PEM bundle: the run names a PKCS#12 store of the
	# same certificates in JAVA_TOOL_OPTIONS.  Neither client is told of
	# a trust store or a proxy here.
	javac -d "$WS" "$BATS_TEST_DIRNAME/clients/Get.java"
	chmod 644 "$WS"/*.class
	for api in client url; do
		run inspect_run --upstream-ca "$T/origin-ca.pem" --quiet -- \
		    java -cp . Get "$api" "https://api.test:$PORT/"
		[ "$status" -eq 0 ]
		[[ "$output" == *"200 hello"* ]]
	done
	run log_of https
	[ "${lines[0]}" = '{"method":"GET","host":"api.test","path":"/","decision":"allow","reason":null,"warning":null,"status":200}' ]
	[ "${lines[1]}" = "${lines[0]}" ]
}

@test "inspect: a base bundle with a broken block still gives the JVM cordon's CA" {
	# cordon's CA comes after the base bundle: a block that does not
	# read is passed over, said, and the rest is in the trust store.
	javac -d "$WS" "$BATS_TEST_DIRNAME/clients/Get.java"
	chmod 644 "$WS"/*.class
	{ printf -- '-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----\n'
	  cat /etc/ssl/certs/ca-certificates.crt; } >"$UDIR/broken.pem"
	chmod 644 "$UDIR/broken.pem"
	cd "$WS"
	run as_user "$UDIR/home" env SSL_CERT_FILE="$UDIR/broken.pem" \
	    "$UCORDON" run --read-only "$UDIR/bin" --read-only "$T" \
	    --policy "$POL" --resolve api.test:127.0.0.1 \
	    --upstream-ca "$T/origin-ca.pem" --quiet -- \
	    java -cp . Get client "https://api.test:$PORT/"
	[ "$status" -eq 0 ]
	[[ "$output" == *"1 block(s) of the CA bundle $UDIR/broken.pem do not read as PEM: left out of the JVM's trust store"* ]]
	[[ "$output" == *"200 hello"* ]]
}

@test "inspect: POST and a path no rule admits get 403, logged with method and path" {
	run inspect_run --upstream-ca "$T/origin-ca.pem" --quiet \
	    --report "$WS/report.json" -- sh -c "
	    curl -sS -X POST -d x https://api.test:$PORT/
	    curl -sS -o /dev/null -w '%{http_code}\n' -X POST -d x \
		https://api.test:$PORT/
	    curl -sS -o /dev/null -w '%{http_code}\n' \
		https://api.test:$PORT/secret?q=1
	    curl -sS -o /dev/null -w '%{http_code}\n' \
		https://api.test:$PORT/bytes/../secret --path-as-is"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "cordon: POST api.test/: method POST is not among"* ]]
	[[ "${lines[1]}" == "hint: add \"POST\" to \"methods\" of the network.inspect entry for api.test ($POL: network.inspect[0])" ]]
	[ "${lines[2]}" = 403 ]
	[ "${lines[3]}" = 403 ]
	[ "${lines[4]}" = 400 ]
	# None of them reached the origin.
	run grep -c . "$BATS_TEST_TMPDIR/origin.heads"
	[ "$output" = 0 ] || [ "$status" -eq 1 ]
	run log_of https
	[ "${lines[0]}" = '{"method":"POST","host":"api.test","path":"/","decision":"deny","reason":"method POST is not among the methods network.inspect allows for api.test","warning":null,"status":403}' ]
	[ "${lines[2]}" = '{"method":"GET","host":"api.test","path":"/secret","decision":"deny","reason":"path /secret is not among the paths network.inspect allows for api.test","warning":null,"status":403}' ]
	[[ "${lines[3]}" == *'"path":"/bytes/../secret","decision":"deny","reason":"the path cannot be judged: a \".\" or \"..\" segment in the path","warning":null,"status":400}' ]]
	# The harness's report gives the inspect rule's fix, not an allow.
	run jq -c '.refused[0] | {host, fix, allow}' "$WS/report.json"
	[ "$output" = '{"host":"api.test","fix":"add \"POST\" to \"methods\" of the network.inspect entry for api.test ('"$POL"': network.inspect[0])","allow":null}' ]
}

@test "inspect: paths a server could read another way get 400, method overrides 403" {
	run inspect_run --upstream-ca "$T/origin-ca.pem" --quiet -- sh -c "
	    for p in '/bytes/..;/secret' '/bytes/x;a=b' '/bytes/..%252fsecret' \
		'/bytes/%252e%252e/secret' '/bytes/%c0%ae%c0%ae/secret'; do
		curl -sS -o /dev/null -w '%{http_code}\n' --path-as-is \
		    https://api.test:$PORT\$p
	    done
	    curl -sS --path-as-is 'https://api.test:$PORT/bytes/..;/secret'
	    curl -sS -o /dev/null -w '%{http_code}\n' \
		-H 'X-HTTP-Method-Override: DELETE' https://api.test:$PORT/
	    curl -sS -H 'x-http-method: DELETE' https://api.test:$PORT/
	    curl -sS -o /dev/null -w '%{http_code}\n' \
		-H 'X-METHOD-OVERRIDE: POST' https://api.test:$PORT/
	    curl -sS -H 'X-HTTP-Method-Override: HEAD' https://api.test:$PORT/"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 400 ]
	[ "${lines[1]}" = 400 ]
	[ "${lines[2]}" = 400 ]
	[ "${lines[3]}" = 400 ]
	[ "${lines[4]}" = 400 ]
	[[ "${lines[5]}" == "cordon: GET api.test/bytes/..;/secret: the path cannot be judged: a ';' in the path"* ]]
	[[ "${lines[6]}" == "hint: send the path as the server will read it"*"network.inspect entry for api.test ($POL: network.inspect[0])"* ]]
	[ "${lines[7]}" = 403 ]
	[ "${lines[8]}" = 'cordon: GET api.test/: header X-HTTP-Method asks the server for method "DELETE", which is not among the methods network.inspect allows for api.test' ]
	[ "${lines[9]}" = "hint: send the request with the method itself and no X-HTTP-Method header, or add the method to \"methods\" of the network.inspect entry for api.test ($POL: network.inspect[0])" ]
	[ "${lines[10]}" = 403 ]
	# An override to a method the entry allows passes.
	[ "${lines[11]}" = hello ]
	[ "${#lines[@]}" -eq 12 ]
	# Only that one reached the origin.
	run cat "$BATS_TEST_TMPDIR/origin.heads"
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "GET / "* ]]
	run jq -r 'select(.event != "open") | select(.protocol == "https") | "\(.status) \(.path)"' "$ELOG"
	[ "${lines[0]}" = "400 /bytes/..;/secret" ]
	[ "${lines[2]}" = "400 /bytes/..%252fsecret" ]
	[ "${lines[4]}" = "400 /bytes/%c0%ae%c0%ae/secret" ]
	[ "${lines[6]}" = "403 /" ]
}

@test "inspect: bodies both ways, chunked, HEAD, and several requests on one connection" {
	head -c 1000000 /dev/urandom >"$UDIR/body"
	chmod 644 "$UDIR/body"
	run inspect_run --upstream-ca "$T/origin-ca.pem" --quiet --read-only \
	    "$UDIR/body" -- sh -c "
	    curl -sS --data-binary @$UDIR/body https://other.test:$PORT/echo |
		tail -c 1000000 | cmp - $UDIR/body && echo body-ok
	    curl -sS -H 'Transfer-Encoding: chunked' --data-binary @$UDIR/body \
		https://other.test:$PORT/echo | tail -c 1000000 |
		cmp - $UDIR/body && echo chunked-ok
	    curl -sS -I -o /dev/null -w '%{http_code}\n' \
		https://api.test:$PORT/
	    curl -sS -o /dev/null -o /dev/null -o /dev/null \
		-w '%{num_connects} ' https://api.test:$PORT/bytes/3000000 \
		https://api.test:$PORT/bytes/0 https://api.test:$PORT/bytes/5
	    echo
	    # A client slower than the origin: the proxy stops reading the
	    # origin and starts again, many times, and the end still comes.
	    timeout 30 curl -sS -o /dev/null --limit-rate 8M \
		-w '%{size_download}' https://api.test:$PORT/bytes/12000000"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = body-ok ]
	[ "${lines[1]}" = chunked-ok ]
	[ "${lines[2]}" = 200 ]
	# The later requests went on the first one's connection.
	[ "${lines[3]}" = "1 0 0 " ]
	[ "${lines[4]}" = 12000000 ]
	run jq -r 'select(.event != "open") | select(.protocol == "https") | "\(.method) \(.path) \(.status) \(.bytes_up) \(.bytes_down)"' "$ELOG"
	[[ "${lines[0]}" == "POST /echo 200 1000000 "* ]]
	[[ "${lines[1]}" == "POST /echo 200 "* ]]
	[ "${lines[2]}" = "HEAD / 200 0 0" ]
	[ "${lines[3]}" = "GET /bytes/3000000 200 0 3000000" ]
	[ "${lines[4]}" = "GET /bytes/0 200 0 0" ]
	[ "${lines[5]}" = "GET /bytes/5 200 0 5" ]
}

@test "credentials: the origin gets the real token; the sandbox only ever sees the placeholder" {
	run inspect_run --upstream-ca "$T/origin-ca.pem" --quiet -- sh -c "
	    echo \"token=\$GITHUB_TOKEN\"
	    curl -sS -H \"Authorization: Bearer \$GITHUB_TOKEN\" \
		https://api.test:$PORT/
	    env | grep -c realsecret || true"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^token=cordon-phantom-[0-9a-f]{32}$ ]]
	[ "${lines[1]}" = hello ]
	[ "${lines[2]}" = 0 ]
	[[ "$output" != *realsecret* ]]
	grep -qF 'Authorization=Bearer\x20realsecret' \
	    "$BATS_TEST_TMPDIR/origin.heads"
	run ! grep -q cordon-phantom "$BATS_TEST_TMPDIR/origin.heads"
}

@test "credentials: an answer that echoes the request gives the sandbox no trace of the real token" {
	run --separate-stderr inspect_run --upstream-ca "$T/origin-ca.pem" \
	    --quiet -- sh -c "
	    A=\"Authorization: Bearer \$GITHUB_TOKEN\"
	    curl -sS -i -H \"\$A\" https://api.test:$PORT/headers
	    curl -sS -H \"\$A\" -H 'Accept-Encoding: gzip' \
		https://api.test:$PORT/echo
	    curl -sS --http1.0 -H \"\$A\" https://api.test:$PORT/headers
	    curl -sS -w '%{http_code}\n' -H \"\$A\" https://api.test:$PORT/gzip
	    curl -sS -H \"\$A\" https://api.test:$PORT/gzip | wc -c"
	[ "$status" -eq 0 ]
	# Neither the command's output nor cordon's says the real value.
	[[ "$output" != *realsecret* ]]
	[[ "$stderr" != *realsecret* ]]
	# The origin got it, each time, and echoed it.
	[ "$(grep -cF 'Authorization=Bearer\x20realsecret' \
	    "$BATS_TEST_TMPDIR/origin.heads")" = 5 ]
	# In a head, the placeholder; in a body, as many '*' (the lengths
	# hold: curl read every body to its end).
	[[ "$output" =~ $'\r\n'"X-Echo: Authorization: Bearer cordon-phantom-"[0-9a-f]{32}$'\r\n' ]]
	[ "$(grep -c '^Authorization: Bearer \*\*\*\*\*\*\*\*\*\*.$' <<<"$output")" = 3 ]
	# It asked for no coding, and the server that codes anyway is refused.
	[[ "$output" == *"Accept-Encoding: identity"* ]]
	[[ "$output" != *"Accept-Encoding: gzip"* ]]
	[[ "$output" == *"cordon: the answer to a request carrying a credential's real value is coded (Content-Encoding: gzip), so the proxy cannot take the value out of it"*"hint: "*"leave this host out of \"credentials\""*502* ]]
	# Said, on standard error and in the log.
	[[ "$stderr" == *"the real value of GITHUB_TOKEN came back in the answer 2 times; taken out"* ]]
	run jq -r 'select(.event != "open") | select(.protocol == "https") | "\(.status) \(.path) \(.warning)"' "$ELOG"
	[ "${lines[0]}" = "200 /headers the real value of GITHUB_TOKEN came back in the answer 2 times; taken out" ]
	[ "${lines[1]}" = "200 /echo the real value of GITHUB_TOKEN came back in the answer 1 time; taken out" ]
	[ "${lines[3]}" = "502 /gzip null" ]
}

# The token files of the home, one token for each way the loader reads
# one: netrc and git's two stores and ~/.pypirc (Basic with the user),
# npm's _authToken (Bearer), _auth (Basic, the pair already in base64)
# and _password (Basic, with its username), cargo's (the whole header).
# SENT: the Authorization values the proxy is to send the origin; REAL:
# each real value (_auth's is the base64 of its pair) and the base64 of
# each user:value, none of which may come back.
token_files() {
	local h="$UDIR/home" b
	b() { printf %s "$1" | base64 -w0; }
	mkdir -p "$h/.config/git" "$h/.cargo"
	echo 'machine api.test login alice password netrc-real-1' >"$h/.netrc"
	echo "https://bob:gitcred-real-2@api.test:$PORT" >"$h/.git-credentials"
	echo 'https://carol:xdgcred-real-3@api.test' >"$h/.config/git/credentials"
	printf '[distutils]\nindex-servers = t\n[t]\nrepository = %s\n%s\n%s\n' \
	    "https://api.test:$PORT/" 'username = dave' 'password = pypi-real-4' \
	    >"$h/.pypirc"
	printf '//api.test:%s/t/:_authToken=%s\n//api.test:%s/a/:_auth=%s\n' \
	    "$PORT" npmtok-real-5 "$PORT" "$(b erin:npmauth-real-6)" >"$h/.npmrc"
	printf '//api.test:%s/p/:username=frank\n//api.test:%s/p/:_password=%s\n' \
	    "$PORT" "$PORT" "$(b npmpass-real-7)" >>"$h/.npmrc"
	printf '[registry]\ntoken = "cargo-real-8"\n' \
	    >"$h/.cargo/credentials.toml"
	SENT=("Basic $(b alice:netrc-real-1)" "Basic $(b bob:gitcred-real-2)"
	    "Basic $(b carol:xdgcred-real-3)" "Basic $(b dave:pypi-real-4)"
	    "Bearer npmtok-real-5" "Basic $(b erin:npmauth-real-6)"
	    "Basic $(b frank:npmpass-real-7)" cargo-real-8)
	REAL=(netrc-real-1 gitcred-real-2 xdgcred-real-3 pypi-real-4
	    npmtok-real-5 npmpass-real-7 cargo-real-8)
	for b in "${SENT[@]}"; do
		[[ $b != Basic* ]] || REAL+=("${b#Basic }")
	done
}

# The command that sends each token file's placeholder as its tool would,
# to $1 on api.test (crates.io for cargo's), -i.
TOKEN_SEND='ph() { grep -o "cordon-phantom-[0-9a-f]*" "$1" | sed -n "${2:-1}p"; }
	H="$0/$1"
	curl -sS -i --netrc "$H"
	curl -sS -i -u "bob:$(ph ~/.git-credentials)" "$H"
	curl -sS -i -u "carol:$(ph ~/.config/git/credentials)" "$H"
	curl -sS -i -u "dave:$(ph ~/.pypirc)" "$H"
	curl -sS -i -H "Authorization: Bearer $(ph ~/.npmrc 1)" "$H"
	curl -sS -i -H "Authorization: Basic $(ph ~/.npmrc 2)" "$H"
	curl -sS -i -u "frank:$(sed -n "s/.*_password=//p" ~/.npmrc |
	    base64 -d)" "$H"
	curl -sS -i -H "Authorization: $(ph ~/.cargo/credentials.toml)" \
	    "$(echo "$0" | sed s/api.test/crates.io/)/$1"'

# Fails, naming it, when file $1 holds any of REAL.
no_real_in() {
	local r
	for r in "${REAL[@]}"; do
		if grep -qF -- "$r" "$1"; then
			echo "$r in $1" >&2
			return 1
		fi
	done
}

@test "credentials: each token file's token, in every form the proxy sent it, comes back only as its placeholder" {
	token_files
	run --separate-stderr inspect_run --upstream-ca "$T/origin-ca.pem" \
	    --report "$UDIR/report.json" -- sh -c "$TOKEN_SEND" \
	    "https://api.test:$PORT" headers
	[ "$status" -eq 0 ]
	# The origin got each real value, in its tool's header.
	for s in "${SENT[@]}"; do
		grep -qF "Authorization=${s// /\\x20}" \
		    "$BATS_TEST_TMPDIR/origin.heads"
	done
	# /headers echoed each in a header and in the body: the sandbox,
	# cordon's own output, the log and the report hold none of them.
	printf '%s\n%s\n' "$output" "$stderr" >"$UDIR/seen"
	no_real_in "$UDIR/seen"
	no_real_in "$ELOG"
	no_real_in "$UDIR/report.json"
	# In the head, what the sandbox sent: a placeholder, in its form.
	sed -n 's|^X-Echo: Authorization: Basic \([A-Za-z0-9+/=]*\)\r$|\1|p' \
	    <<<"$output" | while read -r b; do base64 -d <<<"$b"; echo; done \
	    >"$UDIR/pairs"
	[ "$(grep -cx '[a-z]*:cordon-phantom-[0-9a-f]\{32\}' "$UDIR/pairs")" = 5 ]
	run grep -c '^X-Echo: Authorization: \(Bearer \|Basic \|\)cordon-phantom-[0-9a-f]\{32\}'$'\r''$' <<<"$output"
	[ "$output" = 3 ]
	# Each token was seen coming back, twice, and taken out.
	[ "$(grep -c 'came back in the answer 2 times; taken out' <<<"$stderr")" = 8 ]
}

@test "credentials: over plain HTTP nothing is filled in, and no form of a real value comes back either" {
	token_files
	PLAIN=$(free_port)
	start_bg plain "$HTTPD" --listen "tcp:127.0.0.1:$PLAIN" \
	    --log "$BATS_TEST_TMPDIR/plain.heads" --log-header Authorization
	wait_listen "tcp:127.0.0.1:$PLAIN"
	sed -i "s/\"plain.test:$PORT\"/\"plain.test:$PLAIN\"/" "$POL"
	# An answer carrying them however its server came to know them:
	# here, /echo sending back a body that holds each, and each pair.
	printf '%s\n' "${REAL[@]}" alice:netrc-real-1 frank:npmpass-real-7 \
	    >"$WS/forms"
	run --separate-stderr inspect_run --upstream-ca "$T/origin-ca.pem" \
	    -- sh -c "$TOKEN_SEND
	    curl -sS --data-binary @forms http://plain.test:$PLAIN/echo" \
	    "http://plain.test:$PLAIN" headers
	[ "$status" -eq 0 ]
	printf '%s\n%s\n' "$output" "$stderr" >"$UDIR/seen"
	# Plain HTTP: the placeholders went as they were, each said.
	run ! grep -q real "$BATS_TEST_TMPDIR/plain.heads"
	# (curl's ~/.netrc names api.test alone.)
	[ "$(grep -c 'Authorization=[^-]' "$BATS_TEST_TMPDIR/plain.heads")" = 7 ]
	grep -q "the placeholder of ~/.git-credentials was sent to plain.test in header Authorization; not replaced" "$UDIR/seen"
	no_real_in "$UDIR/seen"
	no_real_in "$ELOG"
	# Every line of the echoed body is masked, but the users' names.
	[ "$(grep -cx '\*\*\*\**' "$UDIR/seen")" = "${#REAL[@]}" ]
	grep -qx 'alice:\*\{12\}' "$UDIR/seen"
	grep -qx 'frank:\*\{14\}' "$UDIR/seen"
}

@test "credentials: an answer that does not parse gets no real value into cordon's 502, log or report" {
	token_files
	REAL=(realsecret "${REAL[@]}")
	run --separate-stderr inspect_run --upstream-ca "$T/origin-ca.pem" \
	    --report "$UDIR/report.json" -- sh -c '
	    C=$(grep -o "cordon-phantom-[0-9a-f]*" ~/.cargo/credentials.toml)
	    for k in status field length; do
		curl -sS -i -H "Authorization: Bearer $GITHUB_TOKEN" \
		    "https://api.test:$0/bad/$k"
		curl -sS -i --netrc "https://api.test:$0/bad/$k"
		curl -sS -i -H "Authorization: $C" "https://crates.io:$0/bad/$k"
	    done' "$PORT"
	[ "$status" -eq 0 ]
	# The origin got the real values, and put them in its heads.
	[ "$(grep -cF 'Authorization=Bearer\x20realsecret' \
	    "$BATS_TEST_TMPDIR/origin.heads")" = 3 ]
	[ "$(grep -cF "Authorization=Basic\\x20$(printf alice:netrc-real-1 |
	    base64)" "$BATS_TEST_TMPDIR/origin.heads")" = 3 ]
	[ "$(grep -cF 'Authorization=cargo-real-8' \
	    "$BATS_TEST_TMPDIR/origin.heads")" = 3 ]
	printf '%s\n%s\n' "$output" "$stderr" >"$UDIR/seen"
	no_real_in "$UDIR/seen"
	no_real_in "$ELOG"
	no_real_in "$UDIR/report.json"
	# Each got a 502 that says what was wrong, in its header and body.
	[ "$(grep -c '^HTTP/1.1 502 Bad Gateway' "$UDIR/seen")" = 9 ]
	M="a malformed answer from upstream:"
	[ "$(grep -c "^X-Cordon-Decision: [a-z.]*:$PORT: $M the status line ([0-9]* bytes from upstream, not shown) is not HTTP-version SP 3DIGIT SP reason" "$UDIR/seen")" = 3 ]
	grep -qx "cordon: crates.io:$PORT: $M header line (12 bytes from upstream, not shown) has no ':'" "$UDIR/seen"
	[ "$(grep -c "^cordon: [a-z.]*:$PORT: $M Content-Length ([0-9]* bytes from upstream, not shown) is not one decimal number" "$UDIR/seen")" = 3 ]
	run jq -r 'select(.event != "open") | select(.host == "crates.io" and .path == "/bad/status")
	    | .reason' "$ELOG"
	[ "$output" = "crates.io:$PORT: $M the status line (21 bytes from upstream, not shown) is not HTTP-version SP 3DIGIT SP reason" ]
}

@test "credentials: the placeholder sent to another host is not replaced, and is logged" {
	run --separate-stderr inspect_run --upstream-ca "$T/origin-ca.pem" --quiet -- sh -c "
	    curl -sS -H \"Authorization: Bearer \$GITHUB_TOKEN\" \
		https://other.test:$PORT/
	    curl -sS -H \"X-Token: \$GITHUB_TOKEN\" https://api.test:$PORT/
	    curl -sS --cacert $T/origin-ca.pem \
		-H \"Authorization: Bearer \$GITHUB_TOKEN\" \
		https://plain.test:$PORT/"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'hello\nhello\nhello')" ]
	# The run's proxy says so on standard error, as it happens.
	[[ "$stderr" == *"the placeholder of GITHUB_TOKEN was sent to other.test in header Authorization; not replaced"* ]]
	run ! grep -q realsecret "$BATS_TEST_TMPDIR/origin.heads"
	[ "$(grep -cF 'Authorization=Bearer\x20cordon-phantom-' \
	    "$BATS_TEST_TMPDIR/origin.heads")" = 2 ]
	run log_of https
	[[ "${lines[0]}" == *'"host":"other.test"'*'"warning":"the placeholder of GITHUB_TOKEN was sent to other.test in header Authorization; not replaced"'* ]]
	[[ "${lines[1]}" == *'"host":"api.test"'*'"warning":"the placeholder of GITHUB_TOKEN was sent to api.test in header X-Token; not replaced"'* ]]
	# The host that is not inspected was tunnelled: nothing to see.
	run log_of connect
	[[ "$output" == *'"host":"plain.test"'*'"warning":null'* ]]
}

# Pins api.test's credential in more places (a header and a cookie the
# policy names), gives plain.test one too, and serves plain.test over
# plain HTTP on $PLAIN.
pin_setup() {
	PLAIN=$(free_port)
	start_bg plain "$HTTPD" --listen "tcp:127.0.0.1:$PLAIN" \
	    --log "$BATS_TEST_TMPDIR/plain.heads" --log-header Authorization
	wait_listen "tcp:127.0.0.1:$PLAIN"
	sed -i "s/\"plain.test:$PORT\"/\"plain.test:$PLAIN\"/" "$POL"
	jq '.credentials[0] += {"headers": ["X-Api-Key"],
	    "cookies": ["user_session"]} | .credentials += [{"host":
	    "plain.test", "env": "GITHUB_TOKEN", "header": "Authorization",
	    "format": "Bearer %s"}]' "$POL" >"$POL.new"
	mv "$POL.new" "$POL"
	chmod 644 "$POL"
}

# What each request of the log carried and what became of it.
pin_log() {
	jq -r 'select((.protocol == "https" or .protocol == "http") and
	    .event != "open") |
	    "\(.protocol) \(.status) \(.decision) \(.credential)"' "$ELOG"
}

@test "credentials: a command's own token to a host cordon holds one for is refused, however sent" {
	pin_setup
	W="-o /dev/null -w '%{http_code}\n'"
	run --separate-stderr inspect_run --upstream-ca "$T/origin-ca.pem" \
	    --report "$WS/report.json" -- sh -c "
	    P=\"Authorization: Bearer \$GITHUB_TOKEN\"
	    A='Authorization: token ghp_ATTACKER'
	    U=https://api.test:$PORT/
	    curl -sS -i -H \"\$A\" \$U
	    curl -sS $W -H 'authorization: token ghp_ATTACKER' \$U
	    curl -sS $W -H \"\$P\" -H 'AUTHORIZATION: token ghp_ATTACKER' \$U
	    curl -sS $W -H 'X-Api-Key: ghp_ATTACKER' \$U
	    curl -sS $W -b 'theme=dark; user_session=ATTACKER' \$U
	    curl -sS -o /dev/null -w '%{http_code} %{num_connects}\n' \
		-H \"\$P\" \$U --next -o /dev/null \
		-w '%{http_code} %{num_connects}\n' -H \"\$A\" \$U
	    curl -sS $W -b 'theme=dark' \$U
	    curl -sS $W http://plain.test:$PLAIN/ -H \"\$A\"
	    curl -sS $W http://plain.test:$PLAIN/ -H \"\$P\"
	    curl -sS $W http://plain.test:$PLAIN/"
	[ "$status" -eq 0 ]
	M="GET api.test/: header Authorization carries a credential cordon did not put there, and api.test is pinned to cordon's credential (GITHUB_TOKEN): a command's own credential could act as another account"
	H="hint: send the placeholder of GITHUB_TOKEN as it was given, or, to let commands use their own credentials there, add {\"host\": \"api.test\", \"foreign\": \"allow\"} to \"credentials\" in your user policy or a --policy file"
	# (curl -i shows the proxy's answer to CONNECT first.)
	[ "${lines[2]}" = $'HTTP/1.1 403 Forbidden\r' ]
	[[ "$output" == *$'\r\n'"X-Cordon-Decision: $M"$'\r\n'* ]]
	[[ "$output" == *$'\r\n\r\n'"cordon: $M"$'\n'"$H"$'\n'* ]]
	[ "$(tail -n 10 <<<"$output")" = "$(printf '%s\n' 403 403 403 403 \
	    '200 1' '403 0' 200 403 200 200)" ]
	# Not one of them reached an origin with the attacker's token.
	run ! grep -q ATTACKER "$BATS_TEST_TMPDIR/origin.heads" \
	    "$BATS_TEST_TMPDIR/plain.heads"
	run pin_log
	[ "$output" = "$(printf 'https 403 deny %s\n' foreign foreign foreign \
	    foreign foreign
	    printf 'https 200 allow phantom\nhttps 403 deny foreign\n'
	    printf 'https 200 allow none\nhttp 403 deny foreign\n'
	    printf 'http 200 allow none\nhttp 200 allow none')" ]
	run jq -r 'select(.credential == "foreign") | .reason' "$ELOG"
	[[ "${lines[3]}" == "header X-Api-Key carries a credential"* ]]
	[[ "${lines[4]}" == "cookie user_session carries a credential"* ]]
	[[ "${lines[6]}" == *"plain.test is pinned to cordon's credential (GITHUB_TOKEN)"* ]]
	# The run's summary and the harness's report give the fix.
	[[ "$stderr" == *'add {"host": "api.test", "foreign": "allow"} to "credentials"'* ]]
	run jq -r '.refused[] | select(.host == "api.test") | .fix' \
	    "$WS/report.json"
	[ "$output" = "${H#hint: }" ]
}

@test "credentials: \"foreign\": \"allow\" lets a command's own token through, logged as foreign" {
	jq '.credentials += [{"host": "api.test", "foreign": "allow"}]' \
	    "$POL" >"$POL.new"
	mv "$POL.new" "$POL"
	chmod 644 "$POL"
	run inspect_run --upstream-ca "$T/origin-ca.pem" --quiet -- sh -c "
	    curl -sS -H 'Authorization: token ghp_ATTACKER' \
		https://api.test:$PORT/
	    curl -sS -H \"Authorization: Bearer \$GITHUB_TOKEN\" \
		https://api.test:$PORT/"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'hello\nhello')" ]
	grep -qF 'Authorization=token\x20ghp_ATTACKER' \
	    "$BATS_TEST_TMPDIR/origin.heads"
	grep -qF 'Authorization=Bearer\x20realsecret' \
	    "$BATS_TEST_TMPDIR/origin.heads"
	run pin_log
	[ "$output" = "$(printf 'https 200 allow foreign\nhttps 200 allow phantom')" ]
	run "$CORDON" policy explain --policy "$POL" "api.test:$PORT"
	[[ "$output" == *"credential: pinning is off: any other credential passes (\"foreign\": \"allow\", $POL: credentials[1])"* ]]
}

@test "credentials: policy explain says where a host's credential goes, and that it is pinned" {
	pin_setup
	run "$CORDON" policy explain --policy "$POL" "api.test:$PORT"
	[ "$status" -eq 0 ]
	[[ "$output" == *"credential: api.test ($POL: credentials[0]): a run's proxy puts GITHUB_TOKEN in Authorization"$'\n'"credential: pinned: another credential (in Authorization, X-Api-Key, cookie user_session) is refused with 403; hint: add {\"host\": \"api.test\", \"foreign\": \"allow\"} to credentials to let it pass"* ]]
	run "$CORDON" policy show --policy "$POL"
	[[ "$output" == *'"headers": ['*'"X-Api-Key"'* ]]
	# policy check's note on credentials with nothing inspected: for
	# an entry that fills a header in, not for one that only pins.
	write only.json <<-'EOF'
	{"version": 1, "credentials": [{"host": "npm.test", "foreign": "allow"}]}
	EOF
	run "$CORDON" policy check only.json
	[ "$output" = "only.json: ok" ]
	write fills.json <<-'EOF'
	{"version": 1, "credentials": [{"host": "npm.test", "env": "T",
	  "header": "Authorization", "format": "Bearer %s"}]}
	EOF
	run "$CORDON" policy check fills.json
	[[ "$output" == *"fills.json: note: credentials are filled in only on inspected requests"* ]]
}

@test "inspect: an origin whose certificate does not verify is not reached" {
	run inspect_run --quiet -- curl -sS -w '%{http_code}\n' \
	    https://api.test:$PORT/
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "cordon: api.test:$PORT: the upstream's certificate does not verify for api.test: unable to get local issuer certificate (if it is signed by a private CA, give that CA to the proxy: --upstream-ca FILE)" ]]
	[ "${lines[1]}" = 502 ]
	run ! grep -q "GET / " "$BATS_TEST_TMPDIR/origin.heads"
}

@test "inspect: a host not listed is tunnelled untouched, with its own certificate" {
	run inspect_run --upstream-ca "$T/origin-ca.pem" --quiet -- sh -c "
	    curl -sS -v --cacert $T/origin-ca.pem https://plain.test:$PORT/ \
		2>err.txt
	    grep -i 'issuer:' err.txt"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = hello ]
	[[ "${lines[1]}" == *"issuer: CN=origin test CA"* ]]
	run log_of connect
	[[ "$output" == *'"host":"plain.test","path":null,"decision":"allow","reason":null'* ]]
}

@test "inspect: a tunnel to an inspected host takes only TLS that names it" {
	run inspect_run --upstream-ca "$T/origin-ca.pem" --quiet -- sh -c "
	    curl -sS --connect-to other.test:$PORT:api.test:$PORT \
		https://other.test:$PORT/; echo curl=\$?
	    curl -sS -p http://api.test:$PORT/; echo curl=\$?"
	[[ "$output" == *curl=35* ]]
	[[ "$output" == *curl=52* || "$output" == *curl=56* ]]
	run log_of connect
	[[ "${lines[0]}" == *'"reason":"TLS server name \"other.test\" differs from the tunnel'\''s host api.test, and one of them is inspected (network.inspect)"'* ]]
	[[ "${lines[1]}" == *'"reason":"api.test is inspected (network.inspect): only TLS may be tunnelled to it'* ]]
	# Connected to, as every tunnel is before it is answered; sent nothing.
	[ -z "$(grep -v '^tls-handshake-failed' "$BATS_TEST_TMPDIR/origin.heads")" ]
}

@test "inspect: the CA key is read by a locked-down signer, not by the proxy" {
	# as_user execs: the background job becomes the outer cordon itself.
	inspect_run --upstream-ca "$T/origin-ca.pem" --quiet -- sleep 3 &
	outer=$!
	signer=
	for _ in $(seq 100); do
		for c in $(cat /proc/"$outer"/task/*/children 2>/dev/null); do
			grep -q '^Seccomp:	2' /proc/"$c"/status 2>/dev/null &&
			    signer=$c
		done
		[ -n "$signer" ] && break
		sleep 0.05
	done
	[ "$(cat /proc/"$outer"/comm)" = cordon ]
	[ -n "$signer" ]
	grep -q '^NoNewPrivs:	1' /proc/"$signer"/status
	# No descriptor of the key in either, once the signer has loaded it.
	[ -z "$(ls -l /proc/"$outer"/fd /proc/"$signer"/fd 2>/dev/null |
	    grep ca.key)" ]
	wait "$outer"
}

@test "cordon proxy: inspects after a reload that first asks for it; without a CA it does not start" {
	local px plain="$UDIR/plain.json" log="$BATS_TEST_TMPDIR/proxy.out"
	px=$(free_port)
	write "$plain" <<-EOF
	{"version": 1, "network": {"allow": ["api.test:$PORT"],
	   "allow_cidrs": ["127.0.0.1/32"]}}
	EOF
	cp "$plain" "$UDIR/live.json"
	start_bg proxy "$CORDON" proxy --only --policy "$UDIR/live.json" \
	    --listen "tcp:127.0.0.1:$px" --resolve api.test:127.0.0.1 \
	    --upstream-ca "$T/origin-ca.pem" --log "$ELOG"
	wait_listen "tcp:127.0.0.1:$px"
	# Tunnelled: curl sees the origin's own certificate.
	run curl -sS --cacert "$T/origin-ca.pem" -x "http://127.0.0.1:$px" \
	    "https://api.test:$PORT/"
	[ "$output" = hello ]
	# The CA folder is the test user's; the proxy here runs as us.
	"$CORDON" ca init --dir "$BATS_TEST_TMPDIR/ca" >/dev/null
	jq --arg ca "$BATS_TEST_TMPDIR/ca" '.network.inspect = [{"host":
	    "api.test", "methods": ["GET"], "paths": ["/"]}] |
	    .tls = {"ca_dir": $ca}' "$plain" >"$UDIR/live.json"
	kill -HUP "$BG_PID"
	for _ in $(seq 50); do
		grep -q "policy reloaded" "$BATS_TEST_TMPDIR/proxy.log" && break
		sleep 0.1
	done
	run curl -sS --cacert "$BATS_TEST_TMPDIR/ca/ca.crt" \
	    -x "http://127.0.0.1:$px" "https://api.test:$PORT/"
	[ "$output" = hello ]
	run curl -sS -o /dev/null -w '%{http_code}' \
	    --cacert "$BATS_TEST_TMPDIR/ca/ca.crt" -x "http://127.0.0.1:$px" \
	    "https://api.test:$PORT/other"
	[ "$output" = 403 ]
	# A policy that inspects, and no CA where it says: not started.
	jq '.tls.ca_dir = "/nonexistent/ca"' "$UDIR/live.json" >"$UDIR/noca.json"
	run "$CORDON" proxy --only --policy "$UDIR/noca.json" \
	    --listen "tcp:127.0.0.1:$(free_port)"
	[ "$status" -ne 0 ]
	[[ "$output" == *"network.inspect needs a CA: no CA in /nonexistent/ca: run \`cordon ca init --dir /nonexistent/ca\`"* ]]
}

@test "--proxy-socket: an operator's proxy inspects, and the run trusts its CA" {
	local sock="$UDIR/op.sock" opca="$UDIR/opca"
	# The operator's CA (the proxy's user's), its folder opened to 0711
	# so that runs can read ca.crt by name; ca.key stays 0600.
	"$CORDON" ca init --dir "$opca" >/dev/null
	# Remade as the operator does every few weeks: 0711 is kept.
	chmod 711 "$opca"
	"$CORDON" ca init --dir "$opca" --force >/dev/null
	chmod 700 "$opca"
	write "$UDIR/op.json" <<-EOF
	{"version": 1,
	 "network": {"allow": ["api.test:$PORT"],
	   "allow_cidrs": ["127.0.0.1/32"],
	   "inspect": [{"host": "api.test", "methods": ["GET"],
	     "paths": ["/"]}]},
	 "tls": {"ca_dir": "$opca"}}
	EOF
	chmod 644 "$UDIR/op.json"
	start_bg op "$CORDON" proxy --only --policy "$UDIR/op.json" \
	    --listen-sandbox "unix:$sock" --resolve api.test:127.0.0.1 \
	    --upstream-ca "$T/origin-ca.pem" --log "$BATS_TEST_TMPDIR/op.log"
	wait_listen "unix:$sock"
	chmod 666 "$sock"
	op_run() {
		cd "$WS" || return 1
		as_user "$UDIR/home" "$UCORDON" run --read-only "$UDIR/bin" \
		    --policy "$UDIR/op.json" --proxy-socket "$sock" --quiet "$@"
	}
	if [ "$(id -u)" -eq 0 ]; then
		# 0700, as `cordon ca init` makes it: the run cannot read it.
		run op_run -- true
		[ "$status" -eq 125 ]
		[[ "$output" == *"the operator's CA certificate must be readable by you: its folder 0711 and ca.crt 0644"* ]]
	fi
	chmod 711 "$opca"
	run op_run -- sh -c "
	    curl -sS -v https://api.test:$PORT/ 2>err.txt
	    grep -i 'issuer:' err.txt
	    curl -sS -o /dev/null -w '%{http_code}\n' \
		https://api.test:$PORT/other"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = hello ]
	[[ "${lines[1]}" == *"issuer: CN=cordon local CA"* ]]
	[ "${lines[2]}" = 403 ]
	[ "$(jq -r 'select(.event != "open") | select(.protocol == "https") | "\(.path) \(.status) \(.sandbox != null)"' "$BATS_TEST_TMPDIR/op.log" | tr '\n' ' ')" = "/ 200 true /other 403 true " ]
}

# An HTTPS origin of serve.py for api.test on $SPORT, with the origin's
# certificate, logging each TCP connection it accepts to $CONNS and each
# request to $REQS (options: serve.py's); the policy allows it.
start_tls_origin() {
	SPORT=$(free_port)
	CONNS="$BATS_TEST_TMPDIR/conns.log"
	REQS="$BATS_TEST_TMPDIR/requests.log"
	mkdir -p "$BATS_TEST_TMPDIR/www"
	echo hi >"$BATS_TEST_TMPDIR/www/index.html"
	start_bg sorigin python3 "$BATS_TEST_DIRNAME/clients/serve.py" http \
	    --listen "$SPORT" --root "$BATS_TEST_TMPDIR/www" \
	    --tls "$T/origin.pem" "$T/origin.key" --log "$REQS" \
	    --conns "$CONNS" "$@"
	wait_listen "tcp:127.0.0.1:$SPORT"
	jq --arg a "api.test:$SPORT" '.network.allow += [$a]' "$POL" \
	    >"$POL.new"
	mv "$POL.new" "$POL"
	chmod 644 "$POL"
}

@test "inspect: a run's second client connection takes the first's verified upstream from the pool" {
	start_tls_origin
	run inspect_run --upstream-ca "$T/origin-ca.pem" --quiet -- sh -c "
	    curl -sS https://api.test:$SPORT/
	    curl -sS https://api.test:$SPORT/"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'hi\nhi')" ]
	# Two tunnels, two requests, each decided and logged: one upstream.
	[ "$(wc -l <"$REQS")" -eq 2 ]
	[ "$(wc -l <"$CONNS")" -eq 1 ]
	run jq -r 'select(.event != "open") | select(.protocol == "https") | "\(.decision) \(.address) \(.status)"' "$ELOG"
	[ "$output" = "$(printf 'allow 127.0.0.1 200\nallow 127.0.0.1 200')" ]
}

# `cordon proxy` on a sandbox listener with the policy ($POL, its CA
# one of ours), metrics on $METRICS; bridges for sandbox ids (bridge_for
# NAME ID: its port in $BRIDGE).
start_inspecting_proxy() {
	SOCK="$BATS_TEST_TMPDIR/proxy.sock"
	METRICS=$(free_port)
	"$CORDON" ca init --dir "$BATS_TEST_TMPDIR/ca" >/dev/null
	jq --arg ca "$BATS_TEST_TMPDIR/ca" '.tls.ca_dir = $ca' "$POL" \
	    >"$UDIR/proxy.json"
	start_bg proxy "$CORDON" proxy --only --workers 1 \
	    --policy "$UDIR/proxy.json" --listen-sandbox "unix:$SOCK" \
	    --resolve api.test:127.0.0.1 --upstream-ca "$T/origin-ca.pem" \
	    --metrics "tcp:127.0.0.1:$METRICS" --log "$ELOG"
	wait_listen "unix:$SOCK"
	wait_listen "tcp:127.0.0.1:$METRICS"
}

bridge_for() {
	BRIDGE=$(free_port)
	start_bg "$1" "$CORDON" bridge --listen "tcp:127.0.0.1:$BRIDGE" \
	    --connect "unix:$SOCK" --proxy-id "$2"
	wait_listen "tcp:127.0.0.1:$BRIDGE"
}

# GETs https://api.test:$SPORT/ through the bridge on port $1, trusting
# the proxy's CA alone; prints the status.
get_tls_via() {
	curl -sS -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$1" \
	    --cacert "$BATS_TEST_TMPDIR/ca/ca.crt" "https://api.test:$SPORT/"
}

@test "inspect: pooled upstream TLS connections serve their own run only" {
	start_tls_origin
	start_inspecting_proxy
	bridge_for b1 sbx-one
	ONE=$BRIDGE
	bridge_for b2 sbx-two
	TWO=$BRIDGE
	[ "$(get_tls_via "$ONE")" = 200 ]
	[ "$(get_tls_via "$ONE")" = 200 ]
	[ "$(wc -l <"$CONNS")" -eq 1 ]
	[ "$(metric 'cordon_upstream_reused_total{from="pool"}')" -eq 1 ]
	# Run two never takes run one's; then its own, as run one does.
	[ "$(get_tls_via "$TWO")" = 200 ]
	[ "$(wc -l <"$CONNS")" -eq 2 ]
	[ "$(get_tls_via "$TWO")" = 200 ]
	[ "$(get_tls_via "$ONE")" = 200 ]
	[ "$(wc -l <"$CONNS")" -eq 2 ]
	[ "$(metric 'cordon_upstream_reused_total{from="pool"}')" -eq 3 ]
	[ "$(wc -l <"$REQS")" -eq 5 ]
	[ "$(jq -r 'select(.event != "open") | select(.protocol == "https") | "\(.sandbox) \(.status)"' \
	    "$ELOG" | tr '\n' ' ')" = "sbx-one 200 sbx-one 200 sbx-two 200 sbx-two 200 sbx-one 200 " ]
}

@test "inspect: a pooled upstream TLS connection the origin closed is never used" {
	# Closes a connection idle for half a second: gone from the pool.
	start_tls_origin --idle 0.5
	start_inspecting_proxy
	bridge_for b1 sbx-one
	[ "$(get_tls_via "$BRIDGE")" = 200 ]
	# Closed by the origin, then by the proxy.
	wait_for eval '! tcp_open_to "$SPORT"'
	[ "$(get_tls_via "$BRIDGE")" = 200 ]
	[ "$(wc -l <"$CONNS")" -eq 2 ]
	# Closed in the pool, not taken and retried.
	[ "$(metric 'cordon_upstream_reused_total{from="pool"}')" -eq 0 ]
}

@test "inspect: a tunnel's new upstream that the origin closes before the first request is replaced, the tunnel kept" {
	# Closes a connection idle for half a second, a new one too.
	start_tls_origin --idle 0.5
	start_inspecting_proxy
	bridge_for b1 sbx-one
	ONE=$BRIDGE
	bridge_for b2 sbx-two
	# A request at once goes on the tunnel's new upstream: no reuse.
	[ "$(get_tls_via "$ONE")" = 200 ]
	[ "$(metric 'cordon_upstream_reused_total{from="connection"}')" -eq 0 ]
	# Another run's: its handshake done, the client waits before its
	# request.
	cat >"$BATS_TEST_TMPDIR/late.py" <<'PY'
import socket, ssl, sys, time
port, sport, ca = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"CONNECT api.test:%s HTTP/1.1\r\nHost: x\r\n\r\n" % sport.encode())
r = b""
while b"\r\n\r\n" not in r:
    r += s.recv(100)
t = ssl.create_default_context(cafile=ca).wrap_socket(s,
    server_hostname="api.test")
time.sleep(1.5)
t.sendall(b"GET / HTTP/1.1\r\nHost: api.test:%s\r\n\r\n" % sport.encode())
print(t.recv(4096).split(b"\r\n")[0].decode())
PY
	run timeout 10 python3 "$BATS_TEST_TMPDIR/late.py" "$BRIDGE" "$SPORT" \
	    "$BATS_TEST_TMPDIR/ca/ca.crt"
	[ "$output" = "HTTP/1.1 200 OK" ]
	[ "$(wc -l <"$CONNS")" -eq 3 ]
	[ "$(wc -l <"$REQS")" -eq 2 ]
	[ "$(metric 'cordon_upstream_reused_total{from="connection"}')" -eq 0 ]
	[ "$(metric 'cordon_upstream_reused_total{from="pool"}')" -eq 0 ]
	[ "$(jq -r 'select(.event != "open") | select(.protocol == "https") | "\(.sandbox) \(.status)"' \
	    "$ELOG" | tr '\n' ' ')" = "sbx-one 200 sbx-two 200 " ]
}

@test "inspect: a kept or pooled upstream that closes as the request goes out is replaced, the request sent again" {
	# Each connection answers one request and drops the next unanswered.
	start_tls_origin --answer 1
	start_inspecting_proxy
	bridge_for b1 sbx-one
	[ "$(get_tls_via "$BRIDGE")" = 200 ]
	[ "$(get_tls_via "$BRIDGE")" = 200 ]
	# Taken from the pool, dropped by the origin, sent on a new one.
	[ "$(metric 'cordon_upstream_reused_total{from="pool"}')" -eq 1 ]
	[ "$(wc -l <"$CONNS")" -eq 2 ]
	[ "$(grep -c 'dropped$' "$REQS")" -eq 1 ]
	# One client connection, two requests: on a pooled upstream, then
	# on the one it kept; each dropped and sent again on a new one.
	run curl -sS -o /dev/null -o /dev/null -x "http://127.0.0.1:$BRIDGE" \
	    --cacert "$BATS_TEST_TMPDIR/ca/ca.crt" \
	    -w '%{http_code} %{num_connects} ' "https://api.test:$SPORT/" \
	    "https://api.test:$SPORT/"
	[ "$output" = "200 1 200 0 " ]
	[ "$(wc -l <"$CONNS")" -eq 4 ]
	[ "$(grep -c 'dropped$' "$REQS")" -eq 3 ]
	[ "$(metric 'cordon_upstream_reused_total{from="pool"}')" -eq 2 ]
	[ "$(jq -r 'select(.event != "open") | select(.protocol == "https") | .status' "$ELOG" |
	    tr '\n' ' ')" = "200 200 200 200 " ]
}
