#!/usr/bin/env python3
"""A client of `cordon proxy --listen-sandbox tls:HOST:PORT`, as a remote
sandbox host would be: TLS with a client certificate (or none), then the
PROXY v2 header with the sandbox id inside the TLS stream (the bytes
lib/pp2.c writes: signature, version 2 LOCAL, no addresses, one
PP2_TYPE_UNIQUE_ID field), then one request.

usage: mtls_client.py PORT CA CERT|- KEY|- SANDBOX get URL
       mtls_client.py PORT CA CERT|- KEY|- SANDBOX connect HOST:PORT

MTLS_REPEAT=N in the environment: N times over.  Prints the proxy's status line (and, through a CONNECT, what the echo
server sent back); exits 0 when an answer came, 3 when the TLS session
was refused, 4 when the proxy closed without an answer.
"""
import os
import socket
import ssl
import struct
import sys

SIG = b"\r\n\r\n\x00\r\nQUIT\n"


def pp2(sandbox):
    ident = sandbox.encode()
    tlv = bytes([0x05]) + struct.pack(">H", len(ident)) + ident
    return SIG + bytes([0x20, 0x00]) + struct.pack(">H", len(tlv)) + tlv


def read_all(t):
    data = b""
    while True:
        try:
            chunk = t.recv(65536)
        except (ssl.SSLZeroReturnError, ConnectionResetError):
            break
        if not chunk:
            break
        data += chunk
    return data


def main():
    port, ca, cert, key, sandbox, mode, arg = sys.argv[1:8]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca)
    if cert != "-":
        ctx.load_cert_chain(cert, key)
    try:
        s = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
        t = ctx.wrap_socket(s, server_hostname="127.0.0.1")
        if mode == "get":
            hostport = arg.split("/")[2]
            req = ("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                   % (arg, hostport)).encode()
            t.sendall(pp2(sandbox) + req)
            data = read_all(t)
        else:
            req = ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n"
                   % (arg, arg)).encode()
            t.sendall(pp2(sandbox) + req)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = t.recv(4096)
                if not chunk:
                    break
                head += chunk
            data = head
            if head.startswith(b"HTTP/1.1 200"):
                t.sendall(b"ping through the tunnel\n")
                got = b""
                while b"\n" not in got:
                    chunk = t.recv(4096)
                    if not chunk:
                        break
                    got += chunk
                data = head.split(b"\r\n")[0] + b"\r\n" + got
    except ssl.SSLError as e:
        print("refused: %s" % e)
        return 3
    except (ConnectionResetError, BrokenPipeError) as e:
        print("refused: %s" % e)
        return 3
    if not data:
        print("no answer")
        return 4
    print(data.split(b"\r\n")[0].decode("latin-1"))
    if mode == "connect" and b"\r\n" in data:
        print(data.split(b"\r\n", 1)[1].decode("latin-1").strip())
    return 0


if __name__ == "__main__":
    # MTLS_REPEAT=N: N times over (a client retrying in a loop).
    for _ in range(int(os.environ.get("MTLS_REPEAT", "1")) - 1):
        main()
    sys.exit(main())
