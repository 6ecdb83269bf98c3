#!/bin/sh
# Installs what the demo and the tests need, skipping what is already there:
# the npm packages (with Node 22 and Pi 1.6.0), Pi 1.3.0 for the oldest-version
# tests, and the Rust wasm target. wasm-bindgen-cli is installed by the build
# (scripts/build-wasm.sh) the first time it is needed. System packages (tmux,
# ripgrep, fd-find) are .ci/run's job, as they need root.
set -eu
cd "$(dirname "$0")/.."

# npm install (from the lock file) is skipped while node_modules matches the lock file.
install_npm() { # <folder>
  if [ ! -f "$1/node_modules/.package-lock.json" ] || ! cmp -s "$1/package-lock.json" "$1/node_modules/.cg-lock"; then
    echo "setup: npm install in $1"
    (cd "$1" && npm install --no-audit --no-fund --loglevel=error)
    cp "$1/package-lock.json" "$1/node_modules/.cg-lock"
  fi
}
install_npm .
install_npm tests/pi-versions/1.3.0

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  echo "setup: adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
