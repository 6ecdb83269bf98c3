#!/bin/sh
# Builds the WebAssembly core into pkg/ (or into the folder given as $1).
#
# Reproducible: the same sources, rustc and wasm-bindgen give the same bytes.
# Paths that would leak into the binary (this checkout, cargo's registry) are
# remapped, and pkg/BUILD records the toolchain so a check on another machine
# knows what it compares against.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
out=${1:-pkg}

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
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="--remap-path-prefix=$root=/src --remap-path-prefix=$cargo_home=/cargo" \
  cargo build --quiet --release --locked --target wasm32-unknown-unknown -p context-guard-wasm

mkdir -p "$out"
"$bindgen" --target web --remove-name-section --remove-producers-section --out-dir "$out" --out-name context_guard \
  target/wasm32-unknown-unknown/release/context_guard_wasm.wasm
{
  echo "rustc: $(rustc -V)"
  echo "wasm-bindgen: $bindgen_version"
} > "$out/BUILD"
echo "build: $out/context_guard_bg.wasm $(wc -c < "$out/context_guard_bg.wasm") bytes"
