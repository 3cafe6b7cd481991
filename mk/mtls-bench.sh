#!/usr/bin/env bash
# mk/mtls-bench.sh: the "tls: listener" section of make bench (BENCH=mtls
# runs it alone).  One cordon proxy with two sandbox listeners, a plain
# TCP one and a tls: one (client certificates of a CA made here by
# tests/e2e/clients/mkpki.sh, RSA 2048, a CRL), and one python3 client
# opening CONNS new connections one after the other to each, interleaved,
# RUNS times: each sends the PROXY v2 header (inside TLS on the tls:
# listener), one GET through the proxy to a local httpd, and reads the
# answer.  Prints the median time of one connection, and the proxy's
# CPU time per connection (from /proc), for each and their difference:
# what the mTLS handshake costs a new connection.
set -eu

cordon=${1:?usage: mtls-bench.sh CORDON TOOLS_DIR}
tools=${2:?usage: mtls-bench.sh CORDON TOOLS_DIR}
RUNS=${RUNS:-5}
MTLS_CONNS=${MTLS_CONNS:-300}
tmp=$(mktemp -d)
pids=()
here=$(cd "$(dirname "$0")" && pwd)

# alive, tcp_listening, bg_named, wait_up, median, figure, ratio,
# bench_traps, next_port
. "$here/lib.sh"

bench_traps


sh "$here/../tests/e2e/clients/mkpki.sh" "$tmp/pki" >/dev/null
next_port; up=$port
bg_named httpd "$tools/httpd" --listen "tcp:127.0.0.1:$up"
wait_up "$bg_pid" "$up" || { echo "mtls bench: httpd did not start"; exit 1; }
next_port; plain=$port
next_port; tls=$port
bg_named proxy "$cordon" proxy --only --allow-domain "127.0.0.1:$up" \
    --allow-cidr 127.0.0.1/32 --log "$tmp/egress.log" \
    --listen-sandbox "tcp:127.0.0.1:$plain" \
    --listen-sandbox "tls:127.0.0.1:$tls" --tls-cert "$tmp/pki/server.crt" \
    --tls-key "$tmp/pki/server.key" --client-ca "$tmp/pki/ca.crt" \
    --crl "$tmp/pki/crl.pem"
proxy_pid=$bg_pid
wait_up "$proxy_pid" "$tls" || {
	echo "mtls bench: cordon proxy did not start:"; cat "$tmp/proxy.log"
	exit 1
}

# The client: CONNS connections to port $2, TLS when $1 is tls; prints
# the mean milliseconds of one, or "failed".
cat >"$tmp/client.py" <<'EOF'
import socket, ssl, struct, sys, time
mode, port, up, n, pki = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    int(sys.argv[4]), sys.argv[5]
ident = b"bench"
tlv = bytes([0x05]) + struct.pack(">H", len(ident)) + ident
hdr = b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x20, 0x00]) + \
    struct.pack(">H", len(tlv)) + tlv
req = hdr + ("GET http://127.0.0.1:%s/ HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n"
             "Connection: close\r\n\r\n" % (up, up)).encode()
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.load_verify_locations(pki + "/ca.crt")
ctx.load_cert_chain(pki + "/ci.crt", pki + "/ci.key")
start = time.monotonic()
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    # As curl does: no Nagle wait behind the handshake's last flight.
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if mode == "tls":
        s = ctx.wrap_socket(s, server_hostname="127.0.0.1")
    s.sendall(req)
    data = b""
    while True:
        try:
            c = s.recv(65536)
        except ssl.SSLError:
            break
        if not c:
            break
        data += c
    s.close()
    if not data.startswith(b"HTTP/1.1 200"):
        print("failed")
        sys.exit(0)
print("%.3f" % ((time.monotonic() - start) * 1000 / n))
EOF

# The proxy's CPU time so far, in clock ticks.
cpu() { awk '{ print $14 + $15 }' "/proc/$proxy_pid/stat"; }
hz=$(getconf CLK_TCK)

declare -A runs
for _ in $(seq "$RUNS"); do
	for how in plain tls; do
		p=$plain
		[ "$how" = tls ] && p=$tls
		before=$(cpu)
		ms=$(python3 "$tmp/client.py" "$how" "$p" "$up" "$MTLS_CONNS" \
		    "$tmp/pki")
		after=$(cpu)
		runs[ms.$how]+="$ms "
		runs[cpu.$how]+="$(echo "($after - $before) * 1000000 / $hz / \
		    $MTLS_CONNS" | bc -l) "
	done
done

echo "== tls: listener: $MTLS_CONNS new connections one after the" \
    "other, PROXY header and one GET each"
echo "   (RSA 2048 client and server certificates, a CRL; python3 client;" \
    "$RUNS runs, medians)"
printf '%-22s %16s %22s\n' "" "ms / connection" "proxy CPU us / conn"
for how in plain tls; do
	printf '%-22s %16s %22s\n' "--listen-sandbox $how:" \
	    "$(figure "ms.$how")" "$(printf '%.0f' "$(figure "cpu.$how")")"
done
m_plain=$(figure ms.plain) m_tls=$(figure ms.tls)
c_plain=$(figure cpu.plain) c_tls=$(figure cpu.tls)
if is_num "$m_plain" && is_num "$m_tls"; then
	printf '%-22s %16.3f %22.0f\n' "the handshake's cost" \
	    "$(echo "$m_tls - $m_plain" | bc -l)" \
	    "$(echo "$c_tls - $c_plain" | bc -l)"
fi
