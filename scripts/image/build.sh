#!/usr/bin/env bash
# npm run image: builds the Dockerfile with buildah (chroot isolation: no daemon, no cgroups needed)
# and tags it $IMAGE_TAG (default localhost/token-rotator:dev).
# The base: $BASE if set; else the Dockerfile's digest-pinned default when a registry serves it;
# else a locally assembled equal of it (local-base.sh). The OCI labels come from package.json and git;
# npm inside the build reaches the registry with this machine's settings, passed as build secrets.
# Usage (as root, from anywhere; after npm ci): scripts/image/build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/image
# shellcheck source=scripts/image/versions.sh
source "$here/versions.sh"
started=$SECONDS

command -v buildah >/dev/null || {
  echo "image: buildah is not installed (apt-get install buildah debootstrap debuerreotype)" >&2
  exit 1
}

base_args=()
default_base="$(sed -n 's/^ARG BASE=//p' Dockerfile)"
if [ -n "${BASE:-}" ]; then
  base_args=(--build-arg "BASE=$BASE")
elif timeout 120 buildah pull --quiet "$default_base" >/dev/null 2>&1; then
  echo "image: base $default_base" >&2
else
  echo "image: no registry serves $default_base here: assembling an equal base locally" >&2
  base_args=(--build-arg "BASE=$("$here/local-base.sh")")
  echo "image: base ready after $((SECONDS - started)) s" >&2
fi

settings="$(mktemp -d "${TMPDIR:-/var/tmp}/token-rotator-npm.XXXXXX")"
trap 'rm -rf "$settings"' EXIT
mapfile -t secret_args < <("$here/npm-build-settings.sh" "$settings")

# The repository's address for org.opencontainers.image.source: package.json's `repository`.
source_url="$(node -p "const r = require('./package.json').repository; String((typeof r === 'string' ? r : r?.url) ?? 'unknown').replace(/^git\+/, '').replace(/\.git$/, '')")"
previous="$(buildah images --quiet --noheading "$IMAGE_TAG" 2>/dev/null || true)"

log="$settings/build.log"
if ! buildah bud --isolation chroot \
  "${base_args[@]}" "${secret_args[@]}" \
  --build-arg "VERSION=$(node -p 'require("./package.json").version')" \
  --build-arg "REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
  --build-arg "CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  --build-arg "SOURCE=$source_url" \
  --tag "$IMAGE_TAG" . >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "image: the build failed" >&2
  exit 1
fi
# What the pruning took off, and its proof (the production-dependencies stage).
grep -E '^(node_modules:|check-imports)' "$log" | sed 's/^/image: /' >&2 || true

# The image this build replaced under the tag is garbage now (kept if a container still uses it).
current="$(buildah images --quiet --noheading "$IMAGE_TAG")"
if [ -n "$previous" ] && [ "$previous" != "$current" ]; then buildah rmi "$previous" >/dev/null 2>&1 || true; fi

echo "image: built $IMAGE_TAG ($(buildah images --format '{{.Size}}' --noheading "$IMAGE_TAG")) in $((SECONDS - started)) s" >&2
