#!/bin/sh
# Every test of the project, ending with one pass/fail count line.
#   Rust: fmt, clippy, unit tests.  TypeScript: type check, unit tests.
#   Real Pi: the end-to-end tests on Pi 1.6.0 and on Pi 1.3.0.  pkg/: fresh.
set -u
cd "$(dirname "$0")/.."
sh scripts/setup.sh || { echo "RESULT: setup failed"; exit 1; }
PATH="$(pwd)/node_modules/.bin:$PATH"
export PATH

passed=0
failed=0
failures=""
step() { # <name> <command...>
  name=$1
  shift
  echo "=== $name"
  start=$(date +%s)
  if "$@"; then
    passed=$((passed + 1))
    echo "--- ok: $name ($(( $(date +%s) - start )) s)"
  else
    failed=$((failed + 1))
    failures="$failures
  - $name"
    echo "--- FAILED: $name"
  fi
}

step "cargo fmt --check" cargo fmt --all --check
step "cargo clippy -D warnings" cargo clippy --quiet --workspace --all-targets -- -D warnings
step "cargo test" cargo test --quiet --workspace
step "TypeScript type check" tsc -p tsconfig.json
step "TypeScript unit tests" node --test --test-reporter=dot 'tests/unit/*.test.ts'
step "real Pi 1.6.0" env CG_PI=1.6.0 node --test --test-concurrency=2 --test-reporter=dot 'tests/e2e/*.test.ts'
step "real Pi 1.3.0" env CG_PI=1.3.0 node --test --test-concurrency=2 --test-reporter=dot 'tests/e2e/*.test.ts'
step "pkg/ is fresh" sh scripts/check-pkg.sh

if [ $failed -eq 0 ]; then
  echo "RESULT: $passed passed, 0 failed"
else
  echo "RESULT: $passed passed, $failed failed:$failures"
  exit 1
fi
