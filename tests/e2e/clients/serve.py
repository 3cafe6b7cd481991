#!/usr/bin/env python3
"""serve.py: the far ends of tests/e2e/clients.bats, on loopback.

  serve.py http --listen PORT --root DIR [--git DIR] [--tls CERT KEY]
               [--log FILE] [--auth VALUE]... [--conns FILE] [--idle SECS]
               [--answer N]
      An HTTP/1.1 server (HTTPS with --tls) of the files under DIR: a
      folder is served by its index.html, else its index.json (a static
      npm registry: /NAME is NAME/index.json, the packument; a PEP 503
      simple index: /simple/NAME/ is simple/NAME/index.html).  With --git,
      every path under /git/ goes to `git http-backend` (smart HTTP) with
      DIR as GIT_PROJECT_ROOT.  With --log, one line per request: METHOD
      PATH Host.  With --auth, a request whose Authorization header is none of
      the VALUEs gets 401 (with a Basic challenge, as git wants) and is
      logged with "401" at the end.  With --conns, one line per TCP
      connection accepted: "accept HOST:PORT" (its client's).  With --idle,
      a connection idle between requests for SECS is closed (as servers
      whose keep-alive timeout is short do).  With --answer, a connection
      answers N requests; the next is read, logged with "dropped" at the
      end, and the connection closed unanswered (as a server whose idle
      timeout ends just as a request comes).  Prints "listening" once it
      listens.

  serve.py echo --listen PORT [--log FILE]
      A TCP echo service, not HTTP: each connection gets back what it
      sends, prefixed by "echo:" once, until it closes its side.

Test code: a thread per connection, nothing clever.
"""
import argparse
import os
import posixpath
import shutil
import socket
import socketserver
import ssl
import subprocess
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TYPES = {".json": "application/json", ".html": "text/html",
         ".tgz": "application/octet-stream",
         ".whl": "application/octet-stream"}
log_lock = threading.Lock()


def note(path, line):
    if path:
        with log_lock, open(path, "a") as f:
            f.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, body, ctype="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        opts = self.server.opts
        self.asked = getattr(self, "asked", 0) + 1
        if opts.answer is not None and self.asked > opts.answer:
            note(opts.log, "%s %s %s dropped" % (
                self.command, self.path, self.headers.get("Host", "-")))
            self.close_connection = True
            return
        note(opts.log, "%s %s %s" % (self.command, self.path,
                                      self.headers.get("Host", "-")))
        if opts.auth and self.headers.get("Authorization") not in opts.auth:
            note(opts.log, "%s %s %s 401" % (self.command, self.path,
                                              self.headers.get("Host", "-")))
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path)
        if opts.git and (path.startswith("/git/")):
            return self.git(path[len("/git"):], url.query)
        if self.command not in ("GET", "HEAD"):
            return self.answer(405, b"method not allowed\n")
        rel = posixpath.normpath(path).lstrip("/")
        if rel.startswith(".."):
            return self.answer(404, b"not found\n")
        full = os.path.join(opts.root, rel)
        if os.path.isdir(full):
            for index in ("index.html", "index.json"):
                if os.path.isfile(os.path.join(full, index)):
                    full = os.path.join(full, index)
                    break
        if not os.path.isfile(full):
            return self.answer(404, b"not found\n")
        with open(full, "rb") as f:
            body = f.read()
        ext = os.path.splitext(full)[1]
        self.answer(200, body, TYPES.get(ext, "application/octet-stream"))

    def git(self, path_info, query):
        length = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                body += self.rfile.read(size)
                self.rfile.readline()
        else:
            body = self.rfile.read(length) if length else b""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": self.server.opts.git,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path_info,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
        }
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             stdout=subprocess.PIPE, check=False).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        if not _:
            head, _, rest = out.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)

    do_GET = do_HEAD = do_POST = handle_any


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        note(self.server.opts.log, "echo connection")
        first = True
        while True:
            data = self.request.recv(65536)
            if not data:
                break
            self.request.sendall((b"echo:" if first else b"") + data)
            first = False


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def process_request(self, request, client_address):
        note(self.opts.conns, "accept %s:%d" % client_address[:2])
        super().process_request(request, client_address)


class EchoServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("http", "echo"))
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--root", default=".")
    ap.add_argument("--git")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--log")
    ap.add_argument("--auth", action="append", default=[])
    ap.add_argument("--conns")
    ap.add_argument("--idle", type=float)
    ap.add_argument("--answer", type=int)
    opts = ap.parse_args()
    if opts.mode == "echo":
        srv = EchoServer(("127.0.0.1", opts.listen), Echo)
    else:
        Handler.timeout = opts.idle
        srv = HTTPServer(("127.0.0.1", opts.listen), Handler)
        if opts.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*opts.tls)
            srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.opts = opts
    print("listening", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
