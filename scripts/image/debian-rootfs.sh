#!/usr/bin/env bash
# Writes a tarball of a Debian root file system equal in content to debian:<suite>-slim, the base of
# the official node:*-slim images, built from the Debian archive with the tool that builds the
# official one (debuerreotype): minbase debootstrap, the container apt/dpkg settings, the archive's
# sources and security updates, the "slim" path excludes (docs, man pages, locales), fixed timestamps.
# Usage: debian-rootfs.sh <suite> <mirror> <work-dir> <out.tar>   (as root)
set -euo pipefail
suite="$1" mirror="$2" work="$3" out="$4"
rootfs="$work/rootfs"
rm -rf "$rootfs"

# --non-debian: the release's own archive, not snapshot.debian.org (unreachable here); the epoch
# comes from the archive's Release date.
debuerreotype-init --non-debian "$rootfs" "$suite" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 30 "$work/debootstrap.log" >&2
  exit 1
}
debuerreotype-minimizing-config "$rootfs"
# The official image's sources (debuerreotype-debian-sources-list would probe snapshot.debian.org).
rm -f "$rootfs/etc/apt/sources.list"
cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: http://deb.debian.org/debian
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
debuerreotype-apt-get "$rootfs" update -qq
debuerreotype-apt-get "$rootfs" dist-upgrade -yqq >"$work/upgrade.log" 2>&1 || {
  tail -n 30 "$work/upgrade.log" >&2
  exit 1
}
debuerreotype-slimify "$rootfs"
debuerreotype-tar "$rootfs" "$out"
rm -rf "$rootfs"
