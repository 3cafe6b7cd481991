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

  mkpkg.py crate ROOT GITROOT NAME VERSION URL
      A Cargo registry for one crate: the .crate (NAME-VERSION/Cargo.toml
      and src/lib.rs, whose WHO is "NAME VERSION") as
      ROOT/crates/NAME/NAME-VERSION.crate, and its git index, a bare
      repository GITROOT/index.git with config.json (downloads from
      URL/crates/...) and the crate's line, with its sha256, at the path
      Cargo looks for it.
"""
import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile

EPOCH = (2020, 1, 1, 0, 0, 0)


def targz(files, prefix):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz",
                      format=tarfile.USTAR_FORMAT) as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(prefix + path)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 1577836800
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def npm(root, name, version, url):
    files = {
        "package/package.json": json.dumps(
            {"name": name, "version": version, "main": "index.js",
             "license": "MIT"}, indent=2).encode(),
        "package/index.js": ("module.exports = %s;\n"
                             % json.dumps(name + " " + version)).encode(),
    }
    tgz = targz(files, "")
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


def index_path(name):
    name = name.lower()
    if len(name) <= 2:
        return os.path.join(str(len(name)), name)
    if len(name) == 3:
        return os.path.join("3", name[0], name)
    return os.path.join(name[0:2], name[2:4], name)


def crate(root, gitroot, name, version, url):
    files = {
        "Cargo.toml": ('[package]\nname = "%s"\nversion = "%s"\n'
                       'edition = "2018"\n' % (name, version)).encode(),
        "src/lib.rs": ("pub const WHO: &str = %s;\n"
                       % json.dumps(name + " " + version)).encode(),
    }
    data = targz(files, "%s-%s/" % (name, version))
    os.makedirs(os.path.join(root, "crates", name), exist_ok=True)
    with open(os.path.join(root, "crates", name,
                           "%s-%s.crate" % (name, version)), "wb") as f:
        f.write(data)
    entry = {"name": name, "vers": version, "deps": [],
             "cksum": hashlib.sha256(data).hexdigest(), "features": {},
             "yanked": False}
    config = {"dl": url.rstrip("/") + "/crates/{crate}/{crate}-{version}.crate"}
    git = ["git", "-c", "user.name=cordon", "-c", "user.email=cordon@up.test",
           "-c", "init.defaultBranch=master"]
    with tempfile.TemporaryDirectory() as work:
        os.makedirs(os.path.dirname(os.path.join(work, index_path(name))))
        with open(os.path.join(work, index_path(name)), "w") as f:
            f.write(json.dumps(entry) + "\n")
        with open(os.path.join(work, "config.json"), "w") as f:
            json.dump(config, f)
        subprocess.run(git + ["init", "-q", work], check=True)
        subprocess.run(git + ["-C", work, "add", "."], check=True)
        subprocess.run(git + ["-C", work, "commit", "-q", "-m", "index"],
                       check=True)
        subprocess.run(git + ["clone", "-q", "--bare", work,
                              os.path.join(gitroot, "index.git")], check=True)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "npm":
        npm(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "wheel":
        wheel(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "gomod":
        gomod(*sys.argv[2:])
    elif len(sys.argv) == 7 and sys.argv[1] == "crate":
        crate(*sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
