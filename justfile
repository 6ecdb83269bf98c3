# The same commands as the npm scripts, for people who have `just`
# (`node_modules/.bin/just` after `npm install`).

# Build the wasm core into pkg/
build:
    sh scripts/build-wasm.sh

# The offline demo inside real Pi
demo:
    sh scripts/demo.sh

# Every test, ending with a pass/fail count
test:
    sh scripts/test.sh

# Benchmarks against the budgets
bench:
    sh scripts/bench.sh

# Fails when pkg/ is not what the sources build
check-pkg:
    sh scripts/check-pkg.sh
