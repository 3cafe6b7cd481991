#!/usr/bin/python3
"""A WebSocket echo server over TLS, and a client for it (websockets).

wsecho.py serve PORT CERT KEY
    Echoes each message.  "auth" is answered with the request's
    Authorization header, cut in two frames of one message (a
    continuation frame) and again as two messages.
wsecho.py bye PORT CERT KEY
    Answers each handshake with its 101 and a text frame "bye" in one
    write, then closes: the upgrade and the end come together.
wsecho.py talk URL
    Sends "hello", a 200000-byte binary message and "auth", printing
    what comes back; a refused handshake prints its status and the
    X-Cordon-Decision header.  Authorization is "Bearer $GITHUB_TOKEN".
"""
import asyncio
import base64
import hashlib
import os
import socket
import ssl
import sys

import websockets


async def echo(ws, path):
    auth = ws.request_headers.get("Authorization", "")
    async for msg in ws:
        if msg == "auth":
            half = len(auth) // 2
            await ws.send([auth[:half], auth[half:]])
            await ws.send(auth[:half])
            await ws.send(auth[half:])
        else:
            await ws.send(msg)


async def serve(port, cert, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    async with websockets.serve(echo, "127.0.0.1", port, ssl=ctx):
        await asyncio.Future()


def bye(port, cert, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv = socket.create_server(("127.0.0.1", port))
    while True:
        conn, _ = srv.accept()
        try:
            tls = ctx.wrap_socket(conn, server_side=True)
            head = b""
            while b"\r\n\r\n" not in head:
                head += tls.recv(4096)
            wskey = [line.split(b":", 1)[1].strip()
                     for line in head.split(b"\r\n")
                     if line.lower().startswith(b"sec-websocket-key:")][0]
            accept = base64.b64encode(hashlib.sha1(
                wskey + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
            tls.sendall(b"HTTP/1.1 101 Switching Protocols\r\n"
                        b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
                        b"Sec-WebSocket-Accept: " + accept +
                        b"\r\n\r\n\x81\x03bye")
            tls.close()
        except (OSError, IndexError):
            conn.close()


async def talk(url):
    token = os.environ.get("GITHUB_TOKEN", "")
    try:
        async with websockets.connect(url, extra_headers={
                "Authorization": "Bearer " + token}) as ws:
            if url.endswith("/bye"):
                print("bye:", await ws.recv())
                await ws.wait_closed()
                return
            await ws.send("hello")
            print("echo:", await ws.recv())
            big = bytes(range(256)) * 782
            big = big[:200000]
            await ws.send(big)
            print("big:", "same" if await ws.recv() == big else "differs")
            await ws.send("auth")
            print("auth:", await ws.recv())
            print("auth parts:", await ws.recv(), await ws.recv())
    except websockets.exceptions.InvalidStatusCode as e:
        print("refused:", e.status_code,
              e.headers.get("X-Cordon-Decision", ""))


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        asyncio.run(serve(int(sys.argv[2]), sys.argv[3], sys.argv[4]))
    elif sys.argv[1] == "bye":
        bye(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        asyncio.run(talk(sys.argv[2]))
