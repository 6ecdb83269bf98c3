#!/bin/sh
# Installs what the demo and the tests need, skipping what is already there.
#
#   sh scripts/setup.sh npm   the npm packages at the root (Node 22, Pi 1.6.0,
#                             binaryen): all the demo and the benchmarks need,
#                             so a machine with only Node and npm can run them
#   sh scripts/setup.sh       also Pi 1.3.0 for the oldest-version tests and
#                             the Rust toolchain pinned in rust-toolchain.toml
#                             (the compiler that built pkg/, with the wasm
#                             target, rustfmt and clippy)
#
# wasm-bindgen-cli is installed by the build (scripts/build-wasm.sh) the first
# time it is needed; the fuzz toolchain by scripts/fuzz.sh. System packages
# (tmux, ripgrep, fd-find) are .ci/run's job, as they need root.
set -eu
cd "$(dirname "$0")/.."
case "${1:-all}" in
  npm | all) ;;
  *) echo "setup: unknown part '$1' (npm, or nothing for everything)" >&2; exit 2 ;;
esac

# npm install (from the lock file) is skipped while node_modules matches the lock file.
install_npm() { # <folder>
  if [ ! -f "$1/node_modules/.package-lock.json" ] || ! cmp -s "$1/package-lock.json" "$1/node_modules/.cg-lock"; then
    echo "setup: npm install in $1"
    (cd "$1" && npm install --no-audit --no-fund --loglevel=error)
    cp "$1/package-lock.json" "$1/node_modules/.cg-lock"
  fi
}
install_npm .
[ "${1:-all}" = npm ] && exit 0
install_npm tests/pi-versions/1.3.0

# The pinned toolchain, read from rust-toolchain.toml so the version lives in
# one place. rustup would install a missing toolchain on the first cargo call
# anyway, but not a target or component missing from an installed one.
command -v rustup > /dev/null || { echo "setup: rustup is not on PATH (the tests need Rust: https://rustup.rs)" >&2; exit 1; }
channel=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
[ -n "$channel" ] || { echo "setup: no channel in rust-toolchain.toml" >&2; exit 1; }
if ! rustup +"$channel" target list --installed 2> /dev/null | grep -qx wasm32-unknown-unknown ||
  ! rustup +"$channel" component list --installed 2> /dev/null | grep -q '^rustfmt' ||
  ! rustup +"$channel" component list --installed 2> /dev/null | grep -q '^clippy'; then
  echo "setup: installing Rust $channel with the wasm32-unknown-unknown target, rustfmt and clippy"
  rustup toolchain install "$channel" --profile minimal --target wasm32-unknown-unknown --component rustfmt,clippy
fi
