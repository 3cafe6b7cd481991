#!/usr/bin/env python3
"""Many tunnels at once through `cordon proxy --listen-sandbox tls:`, as
one identity (its certificate): N TLS connections, each with the PROXY v2
header inside, then a CONNECT (or a SOCKS5 CONNECT) to HOST:PORT; prints
one answer a line, in order ("HTTP/1.1 200 ...", "HTTP/1.1 429 ...", or
"socks N" with the SOCKS5 reply code), keeps every tunnel open for
HOLD seconds, then closes them all.

usage: ident_tunnels.py PORT CA CERT KEY connect|socks N HOST:PORT [HOLD]
"""
import socket
import ssl
import struct
import sys
import time

import pp2



def recv_exact(t, n):
    data = b""
    while len(data) < n:
        chunk = t.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def one(ctx, port, mode, target, i):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    t = ctx.wrap_socket(s, server_hostname="127.0.0.1")
    host, tport = target.rsplit(":", 1)
    if mode == "socks":
        t.sendall(pp2.sandbox("tun-%d" % i) + b"\x05\x01\x00")
        if recv_exact(t, 2) != b"\x05\x00":
            return t, "socks no-greeting"
        t.sendall(b"\x05\x01\x00\x01" + socket.inet_aton(host) +
                  struct.pack(">H", int(tport)))
        rep = recv_exact(t, 10)
        return t, "socks %d" % (rep[1] if len(rep) > 1 else -1)
    t.sendall(pp2.sandbox("tun-%d" % i) +
              ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n"
               % (target, target)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = t.recv(4096)
        if not chunk:
            break
        head += chunk
    return t, head.split(b"\r\n")[0].decode("latin-1") or "no answer"


def main():
    port, ca, cert, key, mode, n, target = sys.argv[1:8]
    hold = float(sys.argv[8]) if len(sys.argv) > 8 else 2.0
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca)
    ctx.load_cert_chain(cert, key)
    held = []
    for i in range(int(n)):
        t, line = one(ctx, int(port), mode, target, i)
        print(line, flush=True)
        held.append(t)
    time.sleep(hold)
    for t in held:
        t.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
