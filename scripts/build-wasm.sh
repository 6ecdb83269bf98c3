#!/bin/sh
# Builds the WebAssembly core into pkg/ (or into the folder given as $1).
#
# Reproducible: the same sources, rustc, wasm-bindgen and binaryen give the
# same bytes. Paths that would leak into the binary (this checkout, cargo's
# registry) are remapped, and pkg/BUILD records the toolchain so a check on
# another machine knows what it compares against.
#
# wasm-opt comes from the npm package `binaryen`, pinned in package.json (a
# distribution's wasm-opt is whatever version it ships, and another version
# writes other bytes). It runs with fixed flags after wasm-bindgen.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
out=${1:-pkg}

# rust-toolchain.toml pins the compiler and lists the target; rustup installs
# the target with a missing toolchain, but not into an installed one.
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  echo "build: adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# wasm-bindgen-cli must match the wasm-bindgen crate exactly, so read the version from Cargo.lock.
bindgen_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
[ -n "$bindgen_version" ] || { echo "build: wasm-bindgen not found in Cargo.lock" >&2; exit 1; }
tools="$root/.tools/wasm-bindgen-$bindgen_version"
bindgen="$tools/bin/wasm-bindgen"
if [ ! -x "$bindgen" ]; then
  echo "build: installing wasm-bindgen-cli $bindgen_version into .tools/ (about 5 minutes, once)"
  # --locked fails here: a locked dependency of the CLI is missing from the registry.
  cargo install wasm-bindgen-cli --version "$bindgen_version" --root "$tools"
fi

cargo_home=${CARGO_HOME:-$HOME/.cargo}
# The panic locations keep their file paths in the .wasm: the registry's
# index folder becomes a short name (about half a kilobyte; the budget is
# pkg/*.wasm ≤ 512 KB). The standard library's `/rustc/<commit>/library/…`
# paths come compiled with it, so a remap does not reach them.
remap="--remap-path-prefix=$root=/src --remap-path-prefix=$cargo_home=/cargo"
for index in "$cargo_home"/registry/src/*/; do
  [ -d "$index" ] && remap="$remap --remap-path-prefix=${index%/}=/crates"
done
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$remap" \
  cargo build --quiet --release --locked --target wasm32-unknown-unknown -p context-guard-wasm

mkdir -p "$out"
"$bindgen" --target web --remove-name-section --remove-producers-section --out-dir "$out" --out-name context_guard \
  target/wasm32-unknown-unknown/release/context_guard_wasm.wasm

# About a tenth off the size (the budget: pkg/*.wasm ≤ 512 KB): -Oz, run
# twice after --flatten --rereloop (which lets it restructure control flow:
# 1% more; the pass's speed is the same, tests/bench/pass.bench.ts), and
# --low-memory-unused, which folds constant offsets into loads and stores
# (Rust keeps its stack and data far above the first kilobyte). An -Oz
# before --flatten and --converge (the passes again until the size stops
# falling) take 0.6 KB more, for about three times the wasm-opt time (~35 s);
# --const-hoisting moves a large constant used several times into a global
# (5.5 KB off on 2026-12-03, the checkpoint's time unchanged:
# tests/bench/checkpoint.bench.ts, 48-50 ms against 48-51 ms without, side by
# side on one busy machine).
# --strip-target-features drops the features section (150 bytes), which only
# tools read, and wasm-bindgen has run. The features enabled are exactly
# those rustc enables for this target, so wasm-opt neither drops nor adds any.
node="$root/node_modules/.bin/node"
wasm_opt="$root/node_modules/binaryen/bin/wasm-opt"
[ -x "$node" ] && [ -f "$wasm_opt" ] || { echo "build: binaryen is missing from node_modules (run npm install)" >&2; exit 1; }
binaryen_version=$("$node" -p 'require(process.argv[1]).version' "$root/node_modules/binaryen/package.json")
"$node" "$wasm_opt" -Oz --flatten --rereloop -Oz -Oz --low-memory-unused --converge --const-hoisting --strip-target-features \
  --enable-bulk-memory --enable-multivalue --enable-mutable-globals --enable-nontrapping-float-to-int \
  --enable-reference-types --enable-sign-ext \
  "$out/context_guard_bg.wasm" -o "$out/context_guard_bg.wasm.opt"
mv "$out/context_guard_bg.wasm.opt" "$out/context_guard_bg.wasm"
{
  echo "rustc: $(rustc -V)"
  echo "wasm-bindgen: $bindgen_version"
  echo "binaryen: $binaryen_version"
} > "$out/BUILD"
echo "build: $out/context_guard_bg.wasm $(wc -c < "$out/context_guard_bg.wasm") bytes"
