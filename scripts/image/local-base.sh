#!/usr/bin/env bash
# Assembles, imports and tags a local base image equal in content to the official
# node:<pinned version>-bookworm-slim, for machines that cannot reach an image registry, in the
# official image's two layers: Debian bookworm-slim (debian-rootfs.sh), then the `node` user (uid and
# gid 1000, home /home/node) and the Node release (node-files.sh). Each tag is reused once made
# (REBUILD_BASE=1 makes them again). Prints the Node tag on stdout; the rest goes to stderr.
# Usage (as root, from the repository root, after npm ci): local-base.sh
# shellcheck disable=SC2016 # the single-quoted commands run in the container, expanded there
set -euo pipefail
here="$(dirname "$0")"
# shellcheck source=scripts/image/versions.sh
source "$here/versions.sh"

if [ "$(id -u)" != 0 ]; then
  echo "local-base: assembling a base needs root (debootstrap); or set BASE to an image of $NODE_VERSION you have" >&2
  exit 1
fi
if [ "$NODE_VERSION" != "$TOOLS_FOR_NODE" ]; then
  echo "local-base: the lock file pins Node $NODE_VERSION, but scripts/image/versions.sh has the npm, corepack and Yarn versions of Node $TOOLS_FOR_NODE: update them from that release's CHANGELOG" >&2
  exit 1
fi

has_image() { [ "${REBUILD_BASE:-}" != 1 ] && buildah inspect --type image "$1" >/dev/null 2>&1; }
work="$(mktemp -d "${TMPDIR:-/var/tmp}/token-rotator-base.XXXXXX")"
container=
cleanup() {
  [ -z "$container" ] || buildah rm "$container" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

if ! has_image "$LOCAL_DEBIAN_TAG"; then
  echo "local-base: assembling $LOCAL_DEBIAN_TAG from $DEBIAN_MIRROR (debuerreotype)" >&2
  "$here/debian-rootfs.sh" "$DEBIAN_SUITE" "$DEBIAN_MIRROR" "$work" "$work/debian.tar"
  container="$(buildah from scratch)"
  buildah add --quiet "$container" "$work/debian.tar" / >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash "$container"
  buildah rmi "$LOCAL_DEBIAN_TAG" >/dev/null 2>&1 || true # the one REBUILD_BASE replaces
  buildah commit --quiet --rm "$container" "$LOCAL_DEBIAN_TAG" >/dev/null
  container=
fi

if ! has_image "$LOCAL_NODE_TAG"; then
  echo "local-base: assembling $LOCAL_NODE_TAG on $LOCAL_DEBIAN_TAG" >&2
  "$here/node-files.sh" "$work/node"
  container="$(buildah from --pull-never "$LOCAL_DEBIAN_TAG")"
  # The official image's own commands: the node user, uid and gid 1000.
  buildah run --isolation chroot "$container" -- sh -c \
    'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
  buildah copy --quiet "$container" "$work/node/usr/local" /usr/local >/dev/null
  buildah copy --quiet "$container" "$work/node/opt" /opt >/dev/null
  # The official image's smoke test.
  buildah run --isolation chroot "$container" -- sh -c \
    'echo "local-base: node $(node --version), npm $(npm --version), yarn $(yarn --version)"' >&2
  buildah config --env NODE_VERSION="$NODE_VERSION" --env YARN_VERSION="$YARN_VERSION" --cmd node "$container"
  buildah rmi "$LOCAL_NODE_TAG" >/dev/null 2>&1 || true
  buildah commit --quiet --rm "$container" "$LOCAL_NODE_TAG" >/dev/null
  container=
fi

echo "$LOCAL_NODE_TAG"
