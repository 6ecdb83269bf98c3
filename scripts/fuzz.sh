#!/bin/sh
# Runs each fuzz target (fuzz/fuzz_targets: chunk, pass, pin, recall, secrets, settings) for
# a bounded time. CI runs it (.ci/run); by hand: sh scripts/fuzz.sh [seconds]
# (seconds per target, default 30).
#
# Installs what is missing, skipping what is there: the nightly toolchain that
# fuzz/rust-toolchain.toml names (cargo fuzz builds with nightly-only sanitizer
# flags) and cargo-fuzz, pinned, from crates.io into .tools/. When either cannot
# be installed, the targets are still compiled with the repository's pinned
# toolchain (libfuzzer-sys builds there without the sanitizer) and the script
# says that nothing was fuzzed.
#
# Measured on this 2-core machine: installing cargo-fuzz 2 min 40 s (once), the
# targets' first build 1 min 40 s, then 4 × the seconds given. A crash, a
# leak or an input slower than 20 s fails, with libFuzzer's report and the
# input saved under fuzz/artifacts/<target>/.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${1:-30}
case "$seconds" in
  "" | *[!0-9]*) echo "fuzz: the seconds per target must be a whole number, got '$seconds'" >&2; exit 2 ;;
esac
cargo_fuzz_version=0.13.2
tools="$root/.tools/cargo-fuzz-$cargo_fuzz_version"

not_fuzzed=""
if ! rustup toolchain list 2> /dev/null | grep -q '^nightly-'; then
  echo "fuzz: installing the nightly toolchain (fuzz/rust-toolchain.toml)"
  rustup toolchain install nightly --profile minimal || not_fuzzed="the nightly toolchain could not be installed"
fi
if [ -z "$not_fuzzed" ] && [ ! -x "$tools/bin/cargo-fuzz" ]; then
  echo "fuzz: installing cargo-fuzz $cargo_fuzz_version into .tools/ (about 3 minutes, once)"
  cargo install cargo-fuzz --version "$cargo_fuzz_version" --root "$tools" || not_fuzzed="cargo-fuzz could not be installed"
fi

cd fuzz
if [ -n "$not_fuzzed" ]; then
  channel=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$root/rust-toolchain.toml")
  RUSTUP_TOOLCHAIN=$channel cargo build --quiet --release --bins
  echo "fuzz: NOT FUZZED: $not_fuzzed; the targets compile with Rust $channel"
  exit 0
fi

PATH="$tools/bin:$PATH"
export PATH
start=$(date +%s)
cargo fuzz build
echo "fuzz: targets built in $(($(date +%s) - start)) s"
status=0
for target in $(cargo fuzz list); do
  log="target/fuzz-$target.log"
  if cargo fuzz run "$target" -- -max_total_time="$seconds" -timeout=20 > "$log" 2>&1; then
    echo "fuzz: $target: $(grep '^Done ' "$log" | tail -1)"
  else
    echo "fuzz: $target FAILED (the end of $log):"
    tail -40 "$log"
    status=1
  fi
done
exit $status
