#!/bin/sh
# Every benchmark under tests/bench/, against the budgets of the product spec.
#   npm run bench              the figures and each bench's verdict lines
#   npm run bench -- --check   also exits 1 when a time is over 1.9 × its
#                              budget × the calibration's scale (a fixed
#                              workload timed in the same run), a size over
#                              its budget, or the wasm path
#                              slower than the TypeScript version where the
#                              product requires it (tests/bench/verdict.ts)
# Every bench runs even when one fails; a bench that throws (its two paths
# disagree, say) fails either way.
set -eu
cd "$(dirname "$0")/.."
case "$*" in
  "" | --check) ;;
  *) echo "bench: unknown arguments '$*' (only --check)" >&2; exit 2 ;;
esac
sh scripts/setup.sh npm
status=0
for b in tests/bench/*.bench.ts; do
  echo "=== $b"
  node_modules/.bin/node "$b" "$@" || { echo "--- FAILED: $b"; status=1; }
done
exit $status
