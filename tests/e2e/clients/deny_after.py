#!/usr/bin/env python3
"""deny_after.py: a harness on cordon run's control channel (--control).

  deny_after.py CTL MARKS PATTERN
      Listens on the Unix socket CTL (mode 0777, for a run as another
      user), takes the run's connection, waits until the file MARKS/first
      exists (the test made the run's first connections), sends
      {"deny": PATTERN}, and creates MARKS/denied once the run says the
      rule is applied.  Reads until the run closes the channel.
"""
import json, os, socket, sys, time
ctl, marks, pattern = sys.argv[1:4]
l = socket.socket(socket.AF_UNIX)
l.bind(ctl)
os.chmod(ctl, 0o777)
l.listen(1)
c, _ = l.accept()
while not os.path.exists(os.path.join(marks, "first")):
    time.sleep(0.05)
c.sendall(json.dumps({"deny": pattern}).encode() + b"\n")
buf = b""
while True:
    d = c.recv(4096)
    if not d:
        break
    buf += d
    if b'"event":"applied"' in buf:
        open(os.path.join(marks, "denied"), "w").close()
