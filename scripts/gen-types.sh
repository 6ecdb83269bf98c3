#!/bin/sh
# The TypeScript types of what crosses the wasm boundary, generated from the
# Rust structs (ts-rs, the crates' `ts` feature) into extension/generated/,
# then formatted by Biome so they read like the rest.
#   sh scripts/gen-types.sh          writes extension/generated/
#   sh scripts/gen-types.sh --check  also fails when the files differ from the committed ones
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
out="$root/extension/generated"
rm -rf "$out"
mkdir -p "$out"
# Numbers are JavaScript numbers (the core's u64 counts stay far below 2^53); imports name their `.ts`.
# Each crate's export tests write its types and the ones they use from the crates below.
for crate in report economics guard guard-read; do
  TS_RS_EXPORT_DIR="$out" TS_RS_LARGE_INT=number TS_RS_IMPORT_EXTENSION=ts \
    cargo test --quiet --locked -p "context-guard-$crate" --features ts export_bindings > /dev/null
done
"$root/node_modules/.bin/biome" format --write "$out" > /dev/null
if [ "${1:-}" = "--check" ]; then
  if ! git diff --quiet --exit-code -- "$out" || [ -n "$(git ls-files --others --exclude-standard -- "$out")" ]; then
    git status --short -- "$out"
    echo "gen-types: extension/generated/ differs from what the crates give: run sh scripts/gen-types.sh and commit it" >&2
    exit 1
  fi
  echo "gen-types: extension/generated/ is what the crates give"
fi
