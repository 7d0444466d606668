#!/bin/sh
# Removes from a production node_modules what Node never loads at run time. The image build proves
# it with check-imports.mjs (every entry point that imported before still imports after); the smoke
# test runs the commands. Licence and notice files stay: the image redistributes these packages.
# Usage: prune-node-modules.sh <node_modules>
set -eu
dir="$1"

# Source maps, type declarations, TypeScript sources: for editors and debuggers, not for Node.
find "$dir" -type f \( -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.tsbuildinfo' \) -delete

# Documentation, keeping licence and notice texts.
find "$dir" -type f \( -iname '*.md' -o -iname '*.markdown' \) ! -iname 'licen[cs]e*' ! -iname 'notice*' ! -iname 'copying*' -delete

# Builds for browsers and React Native that a package's exports reach only through those conditions
# (Node never resolves them), and the MSAL library for browsers, which only @azure/identity's
# browser build imports.
node "$(dirname "$0")/browser-only-dirs.mjs" "$dir" | while IFS= read -r folder; do rm -rf "$folder"; done
rm -rf "$dir/@azure/msal-browser"

# A package's tests, examples, docs, benchmarks and CI settings (at the package's root, where they
# cannot be code: a folder named doc deeper down may be, as in yaml/dist/doc).
find "$dir" -type d -regex '\(.*/\)?node_modules/\(@[^/]*/\)?[^/]*/\(test\|tests\|__tests__\|example\|examples\|docs\|benchmark\|benchmarks\|bench\|\.github\)' \
  -prune -exec rm -rf {} +
find "$dir" -type d -name __tests__ -prune -exec rm -rf {} +

# The folders these left empty.
find "$dir" -mindepth 1 -type d -empty -delete
