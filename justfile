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

# Each fuzz target for a bounded time (default 30 s each)
fuzz seconds="30":
    sh scripts/fuzz.sh {{seconds}}

# What CI runs on a clean clone: setup, every test, the benchmarks with --check, the fuzzing
ci:
    .ci/run

# The formatters and linters alone: Biome for TypeScript, rustfmt and clippy for Rust
lint:
    node_modules/.bin/biome ci
    cargo fmt --all --check
    cargo clippy --quiet --workspace --all-targets -- -D warnings

# Formats TypeScript and Rust in place
format:
    node_modules/.bin/biome format --write
    cargo fmt --all

# The TypeScript types of the /context report, generated from the Rust structs into extension/generated/
gen-types:
    sh scripts/gen-types.sh
