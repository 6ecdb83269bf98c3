#!/bin/sh
# Every benchmark under tests/bench/, against the budgets of the product spec.
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup.sh
for b in tests/bench/*.bench.ts; do
  echo "=== $b"
  node_modules/.bin/node "$b"
done
