#!/usr/bin/env bash
# npm run image:smoke: runs the built image ($IMAGE_TAG) as its config says (uid 1000, its own
# entrypoint) with buildah's chroot isolation, which shares the host's network: `--version`,
# `validate` and `once` against the emulator running on the host, then checks that the sink holds
# the secret the emulator issued; that the emulator, the demo and the test hooks are not in the
# image; that every package the code imports loads; that nothing of this machine's npm settings or
# CA bundle is in it. Prints the image's size.
# Usage (as root, after scripts/image/build.sh): scripts/image/smoke.sh
# shellcheck disable=SC2016 # the single-quoted programs are JavaScript, for node -e
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/image
# shellcheck source=scripts/image/versions.sh
source "$here/versions.sh"
node=node_modules/.bin/node # the pinned Node, for the emulator and the checks on the host

fail() {
  echo "image smoke: FAIL: $*" >&2
  exit 1
}
ok() { echo "image smoke: ok: $*"; }

work="$(mktemp -d "${TMPDIR:-/var/tmp}/token-rotator-smoke.XXXXXX")"
container=
emulator=
cleanup() {
  [ -z "$emulator" ] || kill "$emulator" 2>/dev/null || true
  [ -z "$container" ] || buildah rm "$container" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

[ -f packages/emulator/dist/main.js ] || npm run build:all >/dev/null
container="$(buildah from --pull-never "$IMAGE_TAG")"
buildah inspect --type image "$IMAGE_TAG" >"$work/image.json"
# config <field>: a field of the image's OCI config, an array one element a line.
config() { "$node" -e 'const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).OCIv1.config; console.log([].concat(c[process.argv[2]] ?? []).join("\n"))' "$work/image.json" "$1"; }
user="$(config User)"
mapfile -t entrypoint < <(config Entrypoint)
[ "$user" = 1000:1000 ] || fail "the image runs as '$user', not 1000:1000"

# --- What is in the image (its root file system, before anything runs in it) ---
rootfs="$(buildah mount "$container")"
for path in /app/packages /app/node_modules/token-rotator-emulator /app/node_modules/token-rotator-kubernetes-double \
  /app/node_modules/token-rotator-demo /app/node_modules/oidc-provider; do
  [ ! -e "$rootfs$path" ] || fail "$path is in the image"
done
ok "no emulator, Kubernetes double, demo or OAuth server (oidc-provider) in the image"

# Nothing of this machine's npm settings or CAs: no npmrc, no secrets folder, and no certificate of
# the CA bundle npm trusts here that Node does not ship itself (a TLS proxy's CA, say).
leaks="$(find "$rootfs" \( -name .npmrc -o -path "$rootfs/run/secrets" \) -print)"
[ -z "$leaks" ] || fail "build settings left in the image: $leaks"
ca="$(npm config get cafile)"
case "$ca" in null | undefined | '') ca="${NODE_EXTRA_CA_CERTS:-}" ;; esac
if [ -n "$ca" ] && [ -r "$ca" ]; then
  "$node" -e '
    const pem = require("fs").readFileSync(process.argv[1], "utf8");
    const own = new Set(require("tls").rootCertificates.map((c) => c.replace(/\s/g, "")));
    for (const cert of pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [])
      if (!own.has(cert.replace(/\s/g, ""))) console.log(cert.split("\n")[1]);' "$ca" >"$work/machine-cas"
  if [ -s "$work/machine-cas" ] && grep -rlF -f "$work/machine-cas" "$rootfs" >"$work/found" 2>/dev/null; then
    fail "this machine's CA certificates are in the image: $(head -3 "$work/found")"
  fi
  ok "no npmrc and none of this machine's $(wc -l <"$work/machine-cas") extra CA certificates in the image"
fi
env_leak="$(config Env | grep -E '^(NPM_CONFIG_|NODE_EXTRA_CA_CERTS)' || true)"
[ -z "$env_leak" ] || fail "build settings in the image's environment: $env_leak"

size_total="$(du -sm "$rootfs" | cut -f1)"
size_modules="$(du -sm "$rootfs/app/node_modules" | cut -f1)"
size_dist="$(du -sm "$rootfs/app/dist" | cut -f1)"
buildah umount "$container" >/dev/null

# --- Running it: uid 1000, its entrypoint, the emulator on the host's loopback ---
mkdir -p "$work/etc" "$work/state" "$work/secrets"
cat >"$work/seed.yaml" <<'YAML'
tokens:
  - { id: tok-ingest, name: ingest-prod, expiresIn: 2d }
YAML
cat >"$work/etc/rotation.yaml" <<'YAML'
version: 1
tokens:
  - name: ingest-prod
    id: tok-ingest
    sinks:
      - { type: file, path: /secrets/ingest-prod.token }
YAML
"$node" packages/emulator/dist/main.js --port 0 --seed "$work/seed.yaml" --env-out "$work/etc/emulator.env" >"$work/emulator.log" 2>&1 &
emulator=$!
timeout 30 sh -c "until [ -s '$work/etc/emulator.env' ]; do sleep 0.1; done" || fail "the emulator did not start: $(cat "$work/emulator.log")"
chown -R 1000:1000 "$work/etc" "$work/state" "$work/secrets"
chmod 0700 "$work/state" "$work/secrets"

run() { # <output-file> <args...>: the image's entrypoint with these arguments, as the image's user
  local out="$1"
  shift
  buildah run --isolation chroot --user "$user" "${run_env[@]}" \
    -v "$work/etc:/etc/token-rotator:ro" -v "$work/state:/var/lib/token-rotator" -v "$work/secrets:/secrets" \
    "$container" -- "${entrypoint[@]}" "$@" >"$out" 2>&1
}
run_env=()

run "$work/version.out" --version || fail "--version: $(cat "$work/version.out")"
[ "$(cat "$work/version.out")" = "$("$node" -p 'require("./package.json").version')" ] || fail "--version printed $(cat "$work/version.out")"
ok "--version: $(cat "$work/version.out")"

run "$work/validate.out" validate --dotenv /etc/token-rotator/emulator.env || fail "validate: $(cat "$work/validate.out")"
ok "validate (the policy at ROTATOR_CONFIG, the emulator's settings)"

run "$work/once.out" once --dotenv /etc/token-rotator/emulator.env || fail "once: $(cat "$work/once.out")"
# Which token does the sink's secret belong to? The emulator knows; the secret is never printed.
whoami() {
  "$node" -e '
    const fs = require("fs");
    const api = /^ROTATOR_API_URL=(.*)$/m.exec(fs.readFileSync(process.argv[1], "utf8"))[1];
    const secret = fs.readFileSync(process.argv[2], "utf8").trim();
    fetch(`${api}/_emulator/whoami`, { headers: { authorization: `Bearer ${secret}` } })
      .then(async (r) => { const t = await r.json(); console.log(r.status === 200 ? `${t.name} ${t.id}` : `none`); });' \
    "$work/etc/emulator.env" "$work/secrets/ingest-prod.token"
}
[ -s "$work/secrets/ingest-prod.token" ] || fail "once wrote no sink file: $(cat "$work/once.out")"
read -r name id < <(whoami)
if [ "$name" != ingest-prod ] || [ "$id" = tok-ingest ]; then fail "the sink holds no working secret of a regenerated ingest-prod ($name $id)"; fi
[ "$(stat -c %u "$work/secrets/ingest-prod.token")" = 1000 ] || fail "the sink file is not uid 1000's"
ok "once: regenerated ingest-prod as $id; the sink holds its working secret"

# The test hooks do nothing here: with the crash failpoint set, a forced rotation completes.
run_env=(-e ROTATOR_TEST_FAILPOINT=intent)
run "$work/rotate.out" rotate ingest-prod --yes --reason smoke --dotenv /etc/token-rotator/emulator.env ||
  fail "rotate with ROTATOR_TEST_FAILPOINT set: $(cat "$work/rotate.out")"
run_env=()
grep -q 'ROTATOR_TEST_FAILPOINT is ignored' "$work/rotate.out" || fail "no warning that ROTATOR_TEST_FAILPOINT is ignored"
read -r name new_id < <(whoami)
if [ "$name" != ingest-prod ] || [ "$new_id" = "$id" ]; then fail "rotate did not deliver a new working secret"; fi
ok "ROTATOR_TEST_FAILPOINT is ignored (rotate completed: $new_id)"

if run "$work/emulator-cmd.out" emulator --port 0; then fail "the emulator command ran in the image"; fi
grep -q 'is its own program: npx token-rotator-emulator' "$work/emulator-cmd.out" || fail "emulator: $(cat "$work/emulator-cmd.out")"
ok "the emulator command says that the emulator is its own program"

# Every package specifier of dist/ loads in the image, as uid 1000 (the script in the throwaway
# container's layer, not in the image).
buildah copy --quiet "$container" "$here/check-imports.mjs" /app/check-imports.mjs >/dev/null
buildah run --isolation chroot --user "$user" "$container" -- node /app/check-imports.mjs dist >"$work/imports.out" 2>&1 ||
  fail "a package dist/ imports does not load: $(grep -v '^ok' "$work/imports.out")"
ok "$(tail -n 1 "$work/imports.out")"

echo "image smoke: passed. $IMAGE_TAG: ${size_total} MB on disk (node_modules ${size_modules} MB, dist ${size_dist} MB); labels:"
"$node" -e 'const l = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).OCIv1.config.Labels; for (const [k, v] of Object.entries(l)) if (k.startsWith("org.opencontainers")) console.log(`  ${k}=${v}`)' "$work/image.json"
