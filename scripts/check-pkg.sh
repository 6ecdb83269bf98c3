#!/bin/sh
# Fails when the committed pkg/ is not what the sources build.
#
# The build is reproducible for a given rustc, wasm-bindgen and binaryen
# (pkg/BUILD records all three), and rust-toolchain.toml pins the rustc that
# built pkg/, so every file is compared byte for byte, the .wasm included.
# A toolchain that differs from pkg/BUILD is a failure with its own message:
# either the pin moved without a rebuild of pkg/, or this machine does not
# honour the pin (no rustup, or RUSTUP_TOOLCHAIN set).
set -eu
cd "$(dirname "$0")/.."
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
sh scripts/build-wasm.sh "$fresh" > /dev/null
status=0
for f in pkg/*; do
  name=$(basename "$f")
  [ -e "$fresh/$name" ] || { echo "pkg: $name is committed but not built"; status=1; }
done
for f in "$fresh"/*; do
  name=$(basename "$f")
  [ -e "pkg/$name" ] || { echo "pkg: $name is built but not committed"; status=1; }
done
if ! cmp -s pkg/BUILD "$fresh/BUILD"; then
  echo "pkg: the toolchain differs from the one that built pkg/, so the .wasm bytes cannot be compared:"
  echo "     pkg/BUILD:  $(tr '\n' ' ' < pkg/BUILD)"
  echo "     this build: $(tr '\n' ' ' < "$fresh/BUILD")"
  echo "     rust-toolchain.toml pins $(sed -n 's/^channel *= *//p' rust-toolchain.toml); rebuild pkg/ with it (npm run build) and commit, or build with the pinned toolchain (rustup, RUSTUP_TOOLCHAIN unset)"
  status=1
fi
for f in "$fresh"/*; do
  name=$(basename "$f")
  [ "$name" != BUILD ] && [ -e "pkg/$name" ] || continue
  cmp -s "$f" "pkg/$name" || { echo "pkg: $name differs from a fresh build (run npm run build and commit pkg/)"; status=1; }
done
[ $status -eq 0 ] && echo "pkg: fresh (every file, the .wasm bytes included)"
exit $status
