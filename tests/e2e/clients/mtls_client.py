#!/usr/bin/env python3
"""A client of `cordon proxy --listen-sandbox tls:HOST:PORT`, as a remote
sandbox host would be: TLS with a client certificate (or none), then the
PROXY v2 header with the sandbox id inside the TLS stream (the bytes
wire/pp2.c writes: signature, version 2 LOCAL, no addresses, one
PP2_TYPE_UNIQUE_ID field), then one request.

usage: mtls_client.py PORT CA CERT|- KEY|- SANDBOX get URL
       mtls_client.py PORT CA CERT|- KEY|- SANDBOX connect HOST:PORT
       mtls_client.py PORT CA CERT|- KEY|- SANDBOX inspect HOST:PORT PATH CA2
       mtls_client.py PORT CA CERT|- KEY|- SANDBOX tunnel HOST:PORT PATH

tunnel: a CONNECT, then a plain GET PATH inside it, read slowly at
first; prints the status line and the number of body bytes.
inspect: a CONNECT, then TLS inside the tunnel (verified against CA2,
the proxy's inspection CA), then GET PATH; prints the status line and
the number of body bytes.

MTLS_REPEAT=N in the environment: N times over.  MTLS_ORIGIN=A[,B...]:
the header carries an originator's uid field (0xe5) holding A (then B),
as cordon bridge --connect tls: adds.  Prints the proxy's status line (and, through a CONNECT, what the echo
server sent back); exits 0 when an answer came, 3 when the TLS session
was refused, 4 when the proxy closed without an answer.
"""
import os
import socket
import ssl
import sys
import time

import pp2



def read_all(t):
    # A bytearray: adding to bytes copies the whole each time, which for
    # 32 MiB in TLS records of a few KiB takes minutes.
    data = bytearray()
    while True:
        try:
            chunk = t.recv(65536)
        except (ssl.SSLZeroReturnError, ConnectionResetError):
            break
        if not chunk:
            break
        data += chunk
    return bytes(data)


def inner_get(t, host, path, ca2):
    """TLS inside the TLS stream t (SSLObject over memory BIOs), one GET:
    returns the whole answer."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca2)
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname=host.rsplit(":", 1)[0])

    def pump(step):
        while True:
            try:
                return step()
            except ssl.SSLWantReadError:
                if out.pending:
                    t.sendall(out.read())
                chunk = t.recv(65536)
                if not chunk:
                    inc.write_eof()
                else:
                    inc.write(chunk)
            finally:
                if out.pending:
                    t.sendall(out.read())

    pump(obj.do_handshake)
    pump(lambda: obj.write(("GET %s HTTP/1.1\r\nHost: %s\r\n"
                            "Connection: close\r\n\r\n" % (path, host))
                           .encode()))
    data = b""
    while True:
        try:
            chunk = pump(lambda: obj.read(65536))
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            break
        if not chunk:
            break
        data += chunk
    return data


def pp2_head(sandbox):
    """The PROXY v2 header naming sandbox, with MTLS_ORIGIN's fields."""
    fields = [(pp2.UNIQUE_ID, sandbox.encode())]
    if "MTLS_ORIGIN" in os.environ:
        fields += [(0xe5, v.encode())
                   for v in os.environ["MTLS_ORIGIN"].split(",")]
    return pp2.header(fields)


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
            t.sendall(pp2_head(sandbox) + req)
            data = read_all(t)
        elif mode == "tunnel":
            req = ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n"
                   % (arg, arg)).encode()
            t.sendall(pp2_head(sandbox) + req)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = t.recv(1)
                if not chunk:
                    break
                head += chunk
            if not head.startswith(b"HTTP/1.1 200"):
                print(head.split(b"\r\n")[0].decode("latin-1"))
                return 4
            t.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: "
                       "close\r\n\r\n" % (sys.argv[8], arg)).encode())
            # Let the proxy's buffers fill: it must stop reading, not grow.
            time.sleep(1)
            data = read_all(t)
            status, _, body = data.partition(b"\r\n\r\n")
            print(status.split(b"\r\n")[0].decode("latin-1"))
            print(len(body))
            return 0
        elif mode == "inspect":
            req = ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n"
                   % (arg, arg)).encode()
            t.sendall(pp2_head(sandbox) + req)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = t.recv(1)
                if not chunk:
                    break
                head += chunk
            if not head.startswith(b"HTTP/1.1 200"):
                print(head.split(b"\r\n")[0].decode("latin-1"))
                return 4
            data = inner_get(t, arg, sys.argv[8], sys.argv[9])
            status, _, body = data.partition(b"\r\n\r\n")
            print(status.split(b"\r\n")[0].decode("latin-1"))
            print(len(body))
            return 0
        else:
            req = ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n"
                   % (arg, arg)).encode()
            t.sendall(pp2_head(sandbox) + req)
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
