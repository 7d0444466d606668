#!/usr/bin/env bash
# The image step of .ci/run: as root, installs the tools if they are missing, builds the image and
# runs its smoke test (a failure of either fails CI). Where it cannot (not root, the tools do not
# install, buildah cannot make a container here) it says so and why, and CI goes on.
# Usage: scripts/image/ci.sh (from anywhere; after npm ci and npm test)
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$SECONDS
skip() {
  echo "image: skipped ($*)"
  exit 0
}

[ "$(id -u)" = 0 ] || skip "not root: debootstrap and buildah's chroot isolation need root here"

tools=(buildah debootstrap debuerreotype-init wget)
missing=()
for tool in "${tools[@]}"; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "image: installing buildah, debootstrap, debuerreotype (missing: ${missing[*]})"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    buildah debootstrap debuerreotype wget debian-archive-keyring >/dev/null; }; then
    skip "buildah, debootstrap and debuerreotype did not install with apt-get"
  fi
fi
probe="$(buildah from scratch 2>&1)" || skip "buildah cannot make a container here: $probe"
mounted="$(buildah mount "$probe" 2>&1)" || {
  buildah rm "$probe" >/dev/null 2>&1
  skip "buildah cannot mount a container here: $mounted"
}
buildah rm "$probe" >/dev/null

scripts/image/build.sh
scripts/image/smoke.sh
echo "image: build and smoke test took $((SECONDS - started)) s"
