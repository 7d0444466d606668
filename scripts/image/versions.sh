# Sourced by the image scripts: what the locally assembled base is made of, pinned.
# shellcheck shell=bash disable=SC2034 # the scripts that source this use these

# The Node of the image is the Node the tests run on: the `node` devDependency, as the lock file pins it.
# The base is assembled from that package's binary, so the two cannot drift apart.
NODE_VERSION="$(node -p 'require("./package-lock.json").packages["node_modules/node"].version')"

# What the official node:${NODE_VERSION}-bookworm-slim image adds besides the binary, at the versions
# it has: the npm and corepack that Node 24.21.0's release tarball bundles (its CHANGELOG: "upgrade
# npm to 11.19.0", "update corepack to 0.36.0") and the Yarn 1 the docker-node Dockerfile installs.
# After a bump of the `node` devDependency, read the new release's CHANGELOG and update these three:
# local-base.sh refuses to assemble a base for a Node version other than TOOLS_FOR_NODE.
TOOLS_FOR_NODE=24.21.0
NPM_VERSION=11.19.0
COREPACK_VERSION=0.36.0
YARN_VERSION=1.22.22

DEBIAN_SUITE=bookworm
# The Debian archive the host's apt uses, unless DEBIAN_MIRROR says otherwise.
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

# The local tags: `localhost/` keeps them apart from anything a registry serves.
LOCAL_DEBIAN_TAG="localhost/debian:${DEBIAN_SUITE}-slim"
LOCAL_NODE_TAG="localhost/node:${NODE_VERSION}-${DEBIAN_SUITE}-slim"
IMAGE_TAG="${IMAGE_TAG:-localhost/token-rotator:dev}"
