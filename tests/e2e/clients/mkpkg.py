#!/usr/bin/env python3
"""mkpkg.py: packages made by the tests themselves, nothing downloaded.

  mkpkg.py npm ROOT NAME VERSION URL
      A static npm registry under ROOT for one package: the tarball
      ROOT/NAME/-/NAME-VERSION.tgz (package/package.json and
      package/index.js, which exports "NAME VERSION") and the packument
      ROOT/NAME/index.json, whose tarball address starts with URL (the
      registry's own, e.g. https://npm.test:PORT).

  mkpkg.py wheel ROOT NAME VERSION
      A pure-Python wheel (module NAME, whose WHO is "NAME VERSION", with
      METADATA, WHEEL and RECORD) in ROOT/files, and a PEP 503 simple
      index for it: ROOT/simple/index.html and ROOT/simple/NAME/index.html
      linking to it with its sha256.

  mkpkg.py gomod ROOT MODULE VERSION
      A static Go module proxy (GOPROXY protocol) under ROOT for one
      module: ROOT/MODULE/@v/list, VERSION.info, VERSION.mod and
      VERSION.zip, whose files are under MODULE@VERSION/: go.mod and
      probe.go, package probe, whose Who is "MODULE VERSION".
"""
import base64
import hashlib
import io
import json
import os
import sys
import tarfile
import zipfile

EPOCH = (2020, 1, 1, 0, 0, 0)


def npm(root, name, version, url):
    files = {
        "package/package.json": json.dumps(
            {"name": name, "version": version, "main": "index.js",
             "license": "MIT"}, indent=2).encode(),
        "package/index.js": ("module.exports = %s;\n"
                             % json.dumps(name + " " + version)).encode(),
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.USTAR_FORMAT) as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 1577836800
            tar.addfile(info, io.BytesIO(data))
    tgz = buf.getvalue()
    tgz_name = "%s-%s.tgz" % (name, version)
    os.makedirs(os.path.join(root, name, "-"), exist_ok=True)
    with open(os.path.join(root, name, "-", tgz_name), "wb") as f:
        f.write(tgz)
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()
    packument = {
        "_id": name,
        "name": name,
        "dist-tags": {"latest": version},
        "versions": {
            version: {
                "name": name,
                "version": version,
                "main": "index.js",
                "license": "MIT",
                "_id": "%s@%s" % (name, version),
                "dist": {
                    "tarball": "%s/%s/-/%s" % (url.rstrip("/"), name, tgz_name),
                    "shasum": hashlib.sha1(tgz).hexdigest(),
                    "integrity": integrity,
                },
            }
        },
        "time": {"created": "2020-01-01T00:00:00.000Z",
                 "modified": "2020-01-01T00:00:00.000Z",
                 version: "2020-01-01T00:00:00.000Z"},
    }
    with open(os.path.join(root, name, "index.json"), "w") as f:
        json.dump(packument, f, indent=2)


def record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def wheel(root, name, version):
    dist = "%s-%s.dist-info" % (name, version)
    files = {
        "%s.py" % name: ("WHO = %r\n" % ("%s %s" % (name, version))).encode(),
        dist + "/METADATA": ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
                             "Summary: a wheel made by cordon's tests\n"
                             % (name, version)).encode(),
        dist + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: mkpkg.py\n"
                         b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join("%s,%s,%d\n" % (p, record_hash(d), len(d))
                     for p, d in files.items())
    record += dist + "/RECORD,,\n"
    files[dist + "/RECORD"] = record.encode()
    whl = "%s-%s-py3-none-any.whl" % (name, version)
    os.makedirs(os.path.join(root, "files"), exist_ok=True)
    path = os.path.join(root, "files", whl)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files.items():
            z.writestr(zipfile.ZipInfo(p, EPOCH), d)
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    project = name.lower().replace("_", "-")
    os.makedirs(os.path.join(root, "simple", project), exist_ok=True)
    with open(os.path.join(root, "simple", "index.html"), "w") as f:
        f.write('<!DOCTYPE html>\n<html><body>\n<a href="%s/">%s</a>\n'
                '</body></html>\n' % (project, project))
    with open(os.path.join(root, "simple", project, "index.html"), "w") as f:
        f.write('<!DOCTYPE html>\n<html><body>\n'
                '<a href="../../files/%s#sha256=%s">%s</a>\n</body></html>\n'
                % (whl, sha, whl))


def gomod(root, module, version):
    gomod_text = "module %s\n\ngo 1.19\n" % module
    files = {
        "go.mod": gomod_text.encode(),
        "probe.go": ("package probe\n\nconst Who = %s\n"
                     % json.dumps(module + " " + version)).encode(),
    }
    at = os.path.join(root, module, "@v")
    os.makedirs(at, exist_ok=True)
    with zipfile.ZipFile(os.path.join(at, version + ".zip"), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for p, d in files.items():
            z.writestr(zipfile.ZipInfo("%s@%s/%s" % (module, version, p),
                                       EPOCH), d)
    with open(os.path.join(at, version + ".mod"), "w") as f:
        f.write(gomod_text)
    with open(os.path.join(at, version + ".info"), "w") as f:
        json.dump({"Version": version, "Time": "2020-01-01T00:00:00Z"}, f)
    with open(os.path.join(at, "list"), "w") as f:
        f.write(version + "\n")


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "npm":
        npm(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "wheel":
        wheel(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "gomod":
        gomod(*sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
