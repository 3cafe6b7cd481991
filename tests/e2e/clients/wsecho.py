#!/usr/bin/python3
"""A WebSocket echo server over TLS, and a client for it (websockets).

wsecho.py serve PORT CERT KEY
    Echoes each message.  "auth" is answered with the request's
    Authorization header, cut in two frames of one message (a
    continuation frame) and again as two messages.
wsecho.py talk URL
    Sends "hello", a 200000-byte binary message and "auth", printing
    what comes back; a refused handshake prints its status and the
    X-Cordon-Decision header.  Authorization is "Bearer $GITHUB_TOKEN".
"""
import asyncio
import os
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


async def talk(url):
    token = os.environ.get("GITHUB_TOKEN", "")
    try:
        async with websockets.connect(url, extra_headers={
                "Authorization": "Bearer " + token}) as ws:
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
    else:
        asyncio.run(talk(sys.argv[2]))
