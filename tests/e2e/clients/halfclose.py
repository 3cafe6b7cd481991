#!/usr/bin/env python3
"""A client that says everything at once and ends its side: the PROXY
v2 header (on a sandbox listener), a CONNECT or a SOCKS5 request, the
tunnel's first bytes and its end of stream (shutdown(SHUT_WR), or over
TLS close_notify, with the handshake's last flight), all in one write,
before the proxy has read a byte.  The proxy must carry the bytes up
the tunnel and the echo back, as if they had come one by one.

usage: halfclose.py N ENDPOINT connect|socks|connect-answered HOST:PORT
                    [SANDBOX] [CA CERT KEY]

connect-answered: the CONNECT first, and once its answer is read, the
tunnel's first bytes and the end in one write (the end then comes while
the proxy judges those bytes).

ENDPOINT is unix:PATH, tcp:HOST:PORT or tls:HOST:PORT (then CA, CERT
and KEY); SANDBOX, or -, sends the PROXY v2 header with that id.
N times over; prints how many of the N got their bytes back, and exits
1 unless all did.
"""
import socket
import ssl
import struct
import sys

import pp2

PAYLOAD = b"ping through a half-closed tunnel\n"


def request(kind, target):
    host, port = target.rsplit(":", 1)
    if kind == "connect":
        return ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" %
                (target, target)).encode()
    name = host.encode()
    return (b"\x05\x01\x00" + b"\x05\x01\x00\x03" + bytes([len(name)]) +
            name + struct.pack(">H", int(port)))


def dial(endpoint):
    kind, rest = endpoint.split(":", 1)
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(rest)
    else:
        host, port = rest.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
    s.settimeout(10)
    return s


def plain(s, data, later):
    s.sendall(data)
    got = b""
    if later:
        while b"\r\n\r\n" not in got:
            got += s.recv(1)
        s.sendall(later)
    s.shutdown(socket.SHUT_WR)
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return got
        got += chunk


def tls(s, data, later, ca, cert, key):
    """The handshake's last flight, data and close_notify in one send."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca)
    ctx.load_cert_chain(cert, key)
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="127.0.0.1")
    while True:
        try:
            obj.do_handshake()
            break
        except ssl.SSLWantReadError:
            if out.pending:
                s.sendall(out.read())
            chunk = s.recv(65536)
            if not chunk:
                return b""
            inc.write(chunk)
    got = b""
    if later:
        obj.write(data)
        s.sendall(out.read())
        while b"\r\n\r\n" not in got:
            try:
                got += obj.read(1)
            except ssl.SSLWantReadError:
                inc.write(s.recv(65536))
        data = later
    obj.write(data)
    try:
        obj.unwrap()
    except ssl.SSLWantReadError:
        pass
    s.sendall(out.read())
    while True:
        try:
            got += obj.read(65536)
            continue
        except ssl.SSLWantReadError:
            pass
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            return got
        chunk = s.recv(65536)
        if not chunk:
            return got
        inc.write(chunk)


def main():
    n, endpoint, kind, target = sys.argv[1:5]
    sandbox = sys.argv[5] if len(sys.argv) > 5 else "-"
    data = (pp2.sandbox(sandbox) if sandbox != "-" else b"") + \
        request(kind.split("-")[0], target)
    later = PAYLOAD if kind == "connect-answered" else b""
    if not later:
        data += PAYLOAD
    ok = 0
    for _ in range(int(n)):
        s = dial(endpoint)
        try:
            if endpoint.startswith("tls:"):
                got = tls(s, data, later, *sys.argv[6:9])
            else:
                got = plain(s, data, later)
        except OSError as e:
            got = str(e).encode()
        s.close()
        if got.endswith(PAYLOAD):
            ok += 1
        else:
            sys.stderr.write("got %r\n" % got)
    print("%d of %s" % (ok, n))
    sys.exit(0 if ok == int(n) else 1)


main()
