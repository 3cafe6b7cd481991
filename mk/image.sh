#!/bin/sh
# make image: an OCI image of `cordon proxy`, built offline from the
# Debian archive alone.  The root holds the shared libraries the package
# depends on (and theirs), unpacked by mmdebstrap (variant extract: no
# shell, no dpkg, no set-id program) and kept as a tarball in OUTDIR (a
# second build skips that step while the package's Depends, the suite
# and the sources stay the same); `make deb`'s package is unpacked into
# a copy of it; buildah makes that folder an image that runs as the user
# cordon (uid 10001), never root, keeps it in a store of its own in
# OUTDIR and writes it to OUTDIR/cordon-proxy.tar, an OCI archive.
#
# usage: image.sh DEB OUTDIR TAG   (IMAGE_RUNROOT: the store's run folder)
# The store uses the vfs driver (no overlay mount needed) and is private
# to OUTDIR, so podman runs the image without touching the machine's own
# containers; IMAGE_STORE_FLAGS in the Makefile names the same store.
set -eu

deb=${1:?usage: image.sh DEB OUTDIR TAG}
out=${2:?usage: image.sh DEB OUTDIR TAG}
tag=${3:?usage: image.sh DEB OUTDIR TAG}
if [ "$(id -u)" -ne 0 ]; then
	echo "cordon: make image must run as root (mmdebstrap, dpkg --root" \
	    "and buildah keep the files' owners)" >&2
	echo "cordon: hint: sudo make image" >&2
	exit 1
fi

# shellcheck disable=SC1091
. /etc/os-release
suite=${IMAGE_SUITE:-$VERSION_CODENAME}
mirror=${IMAGE_MIRROR:-http://deb.debian.org/debian}
secmirror=${IMAGE_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
sources="deb $mirror $suite main
deb $mirror $suite-updates main
deb $secmirror $suite-security main"
# The package's Depends, less the versions: the base has what it needs.
deps=$(dpkg-deb -f "$deb" Depends | sed 's/([^)]*)//g; s/[[:space:]]//g')
key=$(printf '%s\n%s\n%s\n' "$suite" "$sources" "$deps" | sha256sum |
    cut -c1-16)
mkdir -p "$out"
base="$out/base-$suite-$key.tar"
store="--root $out/storage --runroot ${IMAGE_RUNROOT:?} --storage-driver vfs"

if [ ! -f "$base" ] || [ ! -s "$base" ]; then
	echo "image: mmdebstrap $suite (extract: $deps)"
	rm -f "$out"/base-*.tar
	# The shared libraries and what they depend on, unpacked and no
	# more: no shell, no dpkg, no coreutils, no set-id program.
	printf '%s\n' "$sources" | mmdebstrap --quiet --mode=root \
	    --variant=extract --include="$deps" \
	    --dpkgopt='path-exclude=/usr/share/man/*' \
	    --dpkgopt='path-exclude=/usr/share/doc/*' \
	    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	    --dpkgopt='path-exclude=/usr/share/locale/*' \
	    --dpkgopt='path-exclude=/usr/share/info/*' \
	    --dpkgopt='path-exclude=/usr/share/lintian/*' \
	    "$suite" "$out/tmp-base.tar" -
	mv "$out/tmp-base.tar" "$base"
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/root"
mkdir "$root"
tar -C "$root" -xf "$base"
# mmdebstrap leaves its apt and dpkg state behind in an extract root.
rm -rf "$root/var/cache/apt" "$root/var/lib/apt" "$root/var/lib/dpkg" \
    "$root/var/log/apt" "$root/etc/apt" "$root/etc/dpkg"
# The package's files, as dpkg would unpack them (the image has no dpkg
# to record them; the OCI labels say which version it is).
dpkg-deb -x "$deb" "$root"
rm -rf "$root/usr/share/man" "$root/usr/share/doc/cordon/changelog.gz" \
    "$root/lib/systemd" "$root/etc/logrotate.d" "$root/usr/lib/sysusers.d" \
    "$root/usr/lib/tmpfiles.d"
# Who is who: root, and the proxy's own user and group.
printf '%s\n' 'root:x:0:0:root:/root:/nonexistent' \
    'cordon:x:10001:10001:cordon proxy:/nonexistent:/nonexistent' \
    >"$root/etc/passwd"
printf '%s\n' 'root:x:0:' 'cordon:x:10001:' >"$root/etc/group"
echo 'hosts: files dns' >"$root/etc/nsswitch.conf"
chmod 0644 "$root/etc/passwd" "$root/etc/group" "$root/etc/nsswitch.conf"
install -d -m 1777 "$root/tmp"
# The folders it may write: a socket's (an emptyDir or a host folder in
# a pod) and a log file's, for an operator who prefers one.
install -d -o 10001 -g 10001 -m 0750 "$root/run/cordon" \
    "$root/var/log/cordon"
install -d -m 0755 "$root/etc/cordon/policy"
install -m 0644 "$root/usr/share/cordon/policies/default.json" \
    "$root/etc/cordon/policy/proxy.json"
# Nothing in the image may carry a set-id bit.
find "$root" -xdev -type f -perm /6000 -exec chmod ug-s {} +

version=$(dpkg-deb -f "$deb" Version)
# shellcheck disable=SC2086
ctr=$(buildah $store from --quiet scratch)
# shellcheck disable=SC2086
buildah $store copy --quiet "$ctr" "$root/" / >/dev/null
# shellcheck disable=SC2086
buildah $store config --user 10001:10001 --workingdir / \
    --entrypoint '["/usr/bin/cordon","proxy"]' \
    --cmd '["--listen","tcp:0.0.0.0:3128","--listen-sandbox","tcp:0.0.0.0:3129","--allow-non-loopback","--metrics","tcp:0.0.0.0:9464","--policy","/etc/cordon/policy/proxy.json","--log","-"]' \
    --port 3128/tcp --port 3129/tcp --port 9464/tcp \
    --stop-signal SIGTERM \
    --label org.opencontainers.image.title=cordon-proxy \
    --label org.opencontainers.image.version="$version" \
    --label org.opencontainers.image.description="cordon's egress proxy" \
    "$ctr"
# shellcheck disable=SC2086
buildah $store commit --quiet --rm "$ctr" "$tag" >/dev/null
# The image this one replaces, if any, goes.
# shellcheck disable=SC2086
buildah $store rmi --prune >/dev/null 2>&1 || :
rm -f "$out/cordon-proxy.tar"
# shellcheck disable=SC2086
buildah $store push --quiet "$tag" "oci-archive:$out/cordon-proxy.tar:$tag"
echo "$out/cordon-proxy.tar"
