#!/usr/bin/python3
"""An HTTPS origin that echoes the request's Authorization header cut in
pieces, as an origin that reflects headers might: half at the end of one
header line and half in the next, and the same across a multipart
boundary, each half in a write of its own.

splitecho.py PORT CERT KEY
"""
import http.server
import ssl
import sys
import time


class Split(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        auth = self.headers.get("Authorization", "")
        half = len(auth) // 2
        first = ("--b\r\nContent-Type: text/plain\r\n\r\n"
                 "Authorization: " + auth[:half]).encode()
        second = ("\r\n--b\r\nContent-Type: text/plain\r\n\r\n" +
                  auth[half:] + "\r\n--b--\r\n").encode()
        self.send_response(200)
        self.send_header("X-Echo-A", auth[:half])
        self.send_header("X-Echo-B", auth[half:])
        self.send_header("Content-Type", "multipart/mixed; boundary=b")
        self.send_header("Content-Length", str(len(first) + len(second)))
        self.end_headers()
        self.wfile.write(first)
        self.wfile.flush()
        time.sleep(0.2)
        self.wfile.write(second)

    def log_message(self, *args):
        pass


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[2], sys.argv[3])
srv = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Split)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
