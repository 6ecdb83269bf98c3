#!/bin/sh
# The offline demo inside real Pi (see scripts/demo.ts). No key, no network.
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup.sh
exec node_modules/.bin/node scripts/demo.ts "$@"
