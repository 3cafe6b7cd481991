#!/usr/bin/env python3
"""A proxy's drain as a load balancer meets it: a CONNECT tunnel to an
echo server is open through tcp:127.0.0.1:PORT; SIGTERM goes to PID;
then a new client of every listener given must be turned away at once
(refused, or the Unix socket gone), not left waiting in the listen
queue; the open tunnel still echoes; once it closes, PID exits.

usage: drain.py PID HOST:PORT(echo) tcp:HOST:PORT|unix:PATH...

Prints one line for each step: "new tcp:...: refused in 0.00 s",
"tunnel: echoed", "exited in 0.00 s"; on a step gone wrong it says what
happened and exits 1.
"""
import os
import signal
import socket
import sys
import time


def dial(ep, timeout):
    kind, rest = ep.split(":", 1)
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        addr = rest
    else:
        host, port = rest.rsplit(":", 1)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        addr = (host, int(port))
    s.settimeout(timeout)
    s.connect(addr)
    return s


def alive(pid):
    """Whether pid runs (a zombie its parent has not waited for ended)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def main():
    pid, echo, eps = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    t = dial(eps[0], 5)
    t.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" %
               (echo, echo)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += t.recv(1)
    t.sendall(b"before\n")
    assert t.recv(64) == b"before\n"
    os.kill(pid, signal.SIGTERM)
    time.sleep(0.2)
    bad = False
    for ep in eps:
        start = time.monotonic()
        try:
            s = dial(ep, 3)
            s.sendall(b"CONNECT %s HTTP/1.1\r\n\r\n" % echo.encode())
            got = s.recv(64)
            print("new %s: accepted, then %r after %.2f s" %
                  (ep, got, time.monotonic() - start))
            bad = True
        except (ConnectionRefusedError, FileNotFoundError) as e:
            print("new %s: refused in %.2f s (%s)" %
                  (ep, time.monotonic() - start, e.__class__.__name__))
        except OSError as e:
            print("new %s: %s after %.2f s" %
                  (ep, e, time.monotonic() - start))
            bad = True
    t.sendall(b"after\n")
    got = t.recv(64)
    print("tunnel: echoed" if got == b"after\n" else "tunnel: %r" % got)
    bad = bad or got != b"after\n"
    t.close()
    start = time.monotonic()
    while time.monotonic() - start < 5 and alive(pid):
        time.sleep(0.02)
    if alive(pid):
        print("still running 5 s after the tunnel closed")
        bad = True
    else:
        print("exited in %.2f s" % (time.monotonic() - start))
    sys.exit(1 if bad else 0)


main()
