#!/bin/sh
# make deb: a Debian binary package of the tree, from what `make install`
# puts under a scratch root (PREFIX=/usr): the binary (stripped), the
# man pages (gzipped), the policies, the units, the logrotate file and
# whatever else install ships under /etc (each a conffile), with the
# shared libraries' packages as Depends (dpkg-shlibdeps), and a postinst
# (contrib/deb/postinst) that runs systemd-sysusers and systemd-tmpfiles.  Built with
# dpkg-deb under fakeroot: no debhelper, no debian/ folder to keep.
#
# usage: deb.sh BIN OUTDIR MAINTAINER
set -eu

bin=${1:?usage: deb.sh BIN OUTDIR MAINTAINER}
out=${2:?usage: deb.sh BIN OUTDIR MAINTAINER}
maint=${3:?usage: deb.sh BIN OUTDIR MAINTAINER}
top=$(cd "$(dirname "$0")/.." && pwd)
version=${DEB_VERSION:-$(sed -n \
    's/^#define CORDON_VERSION[[:space:]]*"\(.*\)"/\1/p' "$top/lib/util.h")}
arch=$(dpkg --print-architecture)
deb="$out/cordon_${version}_$arch.deb"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/root"

# Units go to /lib/systemd/system: Debian 12's packages ship them there.
make -s -C "$top" install DESTDIR="$root" PREFIX=/usr \
    UNITDIR=/lib/systemd/system BIN="$bin" -o "$bin" -o "$bin-main" \
    -o "$bin-log" -o "$bin-offline" \
    >/dev/null
strip --strip-unneeded --remove-section=.comment --remove-section=.note \
    "$root/usr/bin/cordon" "$root/usr/libexec/cordon/cordon-main" \
    "$root/usr/libexec/cordon/cordon-log" \
    "$root/usr/libexec/cordon/cordon-offline" \
    "$root/usr/libexec/cordon/cordon-session-exec"
gzip -9n "$root"/usr/share/man/man*/*

doc="$root/usr/share/doc/cordon"
install -d -m 0755 "$doc"
ct=$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)
cat >"$doc/copyright" <<EOF
cordon: a sandbox for the shell commands of AI coding agents.

Copyright (C) $(date -u -d "@$ct" +%Y) the cordon authors.

The project has not stated a license yet; see its source tree.
EOF
date=$(date -R -d "@$ct")
printf 'cordon (%s) unstable; urgency=medium\n\n  * Built from the source tree (make deb).\n\n -- %s  %s\n' \
    "$version" "$maint" "$date" | gzip -9n >"$doc/changelog.gz"
chmod 0644 "$doc/copyright" "$doc/changelog.gz"

# cordon and cordon-session-exec are static when musl built them (the
# Makefile says why: they start faster); lintian is told so, only then.
for f in usr/bin/cordon usr/libexec/cordon/cordon-session-exec; do
	readelf -d "$root/$f" | grep -q NEEDED && continue
	install -d -m 0755 "$root/usr/share/lintian/overrides"
	printf 'cordon: statically-linked-binary [%s]\n' "$f" \
	    >>"$root/usr/share/lintian/overrides/cordon"
	chmod 0644 "$root/usr/share/lintian/overrides/cordon"
done

install -d -m 0755 "$root/DEBIAN"
# dpkg-shlibdeps wants a debian/control beside it; only for this.
mkdir -p "$stage/debian"
printf 'Source: cordon\n\nPackage: cordon\nArchitecture: any\n' \
    >"$stage/debian/control"
depends=$(cd "$stage" && dpkg-shlibdeps -O -e"root/usr/bin/cordon" \
    -e"root/usr/libexec/cordon/cordon-main" \
    -e"root/usr/libexec/cordon/cordon-log" \
    -e"root/usr/libexec/cordon/cordon-offline" \
    -e"root/usr/libexec/cordon/cordon-session-exec" \
    2>/dev/null | sed -n 's/^shlibs:Depends=//p')
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
# cordon-main holds the archives of the libraries it does not load
# (LINK=static): Built-Using names their source packages, so that a
# security update of one of them shows this package needs building again.
built_using=
for dev in libevent-dev libssl-dev libseccomp-dev libc-ares-dev \
    libjansson-dev libnftnl-dev nettle-dev; do
	lib=$(dpkg -L "$dev" 2>/dev/null | grep -m1 '/lib[^/]*\.so$') || continue
	readelf -d "$root/usr/libexec/cordon/cordon-main" |
	    grep -q "\[$(basename "$lib")" && continue
	built_using="$built_using${built_using:+, }$(dpkg-query -W \
	    -f='${source:Package} (= ${source:Version})' "$dev")"
done
cat >"$root/DEBIAN/control" <<EOF
Package: cordon
Version: $version
Architecture: $arch
Maintainer: $maint
Installed-Size: $size
Depends: $depends
${built_using:+Built-Using: $built_using
}Section: net
Priority: optional
Homepage: https://example.org/cordon
Description: sandbox for the shell commands of AI coding agents
 cordon runs a command (npm install, pip install, git fetch, test
 runners) inside an OS sandbox (namespaces, Landlock, seccomp) whose only
 way to the network is a loopback egress proxy with per-domain
 allowlists, which logs every connection.  The proxy also runs alone
 (cordon-proxy.service) for allowlisting and egress logging, and a
 host's runs can reach a remote egress tier through the node-local
 originator (cordon-originator.service), which holds the host's key.
EOF
if [ -d "$root/etc" ]; then
	(cd "$root" && find etc -type f | sed 's|^|/|' | sort) \
	    >"$root/DEBIAN/conffiles"
fi
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -print |
    sed 's|^\./||' | sort | xargs md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN"/*
install -m 0755 "$top/contrib/deb/postinst" "$root/DEBIAN/postinst"
find "$root" -type d -exec chmod 0755 {} +
mkdir -p "$out"
fakeroot dpkg-deb --build --root-owner-group -Zxz "$root" "$deb" >/dev/null
echo "$deb"
