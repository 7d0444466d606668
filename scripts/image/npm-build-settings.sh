#!/usr/bin/env bash
# Writes into <dir> what `npm ci` inside the image build needs to reach this machine's registry, for
# buildah's --secret (mounted for the npm commands only, never written to a layer):
#   npmrc   the registry and proxy settings npm uses here, nothing else (no auth tokens)
#   ca.pem  the CA bundle npm trusts here (a TLS proxy's CA, say), for NODE_EXTRA_CA_CERTS
# and prints the matching buildah arguments, one a line.
# Usage: npm-build-settings.sh <dir>
set -euo pipefail
dir="$1"
mkdir -p "$dir"
chmod 0700 "$dir"

{
  echo "registry=$(npm config get registry)"
  for key in proxy https-proxy noproxy strict-ssl; do
    value="$(npm config get "$key")"
    case "$value" in null | undefined | '') ;; *) echo "$key=$value" ;; esac
  done
} >"$dir/npmrc"
echo "--secret=id=npmrc,src=$dir/npmrc"

ca="$(npm config get cafile)"
case "$ca" in null | undefined | '') ca="${NODE_EXTRA_CA_CERTS:-}" ;; esac
if [ -n "$ca" ] && [ -r "$ca" ]; then
  cp "$ca" "$dir/ca.pem"
  echo "--secret=id=npm_ca,src=$dir/ca.pem"
fi
