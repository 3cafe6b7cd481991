#!/usr/bin/env python3
"""A long-lived tunnel through a tls: listener of cordon proxy (or the
load balancer in front of it), as a sandbox's open SSH or WebSocket
session would be: TLS with a client certificate, the PROXY v2 header
with the sandbox id, a CONNECT to an echo server, then a line every
0.2 s, each read back.

usage: hold_tunnel.py PORT CA CERT KEY SANDBOX HOST:PORT [SOURCE]

SOURCE is the address it connects from (127.0.0.2, another host to a
balancer that hashes the source).

Prints "open" once the tunnel is up, then "ok N" for each line echoed;
on a line not echoed (the tunnel broke) prints "lost: why" and exits 1.
"""
import os
import socket
import ssl
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e", "clients"))
import pp2  # noqa: E402 (tests/e2e/clients/pp2.py)



def main():
    port, ca, cert, key, sandbox, target = sys.argv[1:7]
    source = (sys.argv[7], 0) if len(sys.argv) > 7 else None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca)
    ctx.load_cert_chain(cert, key)
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=5,
                                 source_address=source)
    t = ctx.wrap_socket(s, server_hostname="127.0.0.1")
    t.sendall(pp2.sandbox(sandbox) + ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n"
                              % (target, target)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = t.recv(1)
        if not chunk:
            print("lost: no answer to CONNECT", flush=True)
            return 1
        head += chunk
    if not head.startswith(b"HTTP/1.1 200"):
        print("lost: " + head.split(b"\r\n")[0].decode("latin-1"),
              flush=True)
        return 1
    print("open", flush=True)
    n = 0
    while True:
        n += 1
        line = ("ping %d\n" % n).encode()
        try:
            t.sendall(line)
            got = b""
            while not got.endswith(b"\n"):
                chunk = t.recv(4096)
                if not chunk:
                    raise ConnectionError("closed")
                got += chunk
        except (OSError, ssl.SSLError, ConnectionError) as e:
            print("lost: %s" % e, flush=True)
            return 1
        if got != line:
            print("lost: echoed %r" % got, flush=True)
            return 1
        print("ok %d" % n, flush=True)
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main())
