#!/bin/sh
# The offline demo inside real Pi (see scripts/demo.ts). No key, no network,
# and nothing but Node and npm: the committed pkg/ is the core, the search is
# plain grep, and only the npm packages are installed.
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup.sh npm
# Pi's own startup network work (model catalog, fd/rg downloads) stays off.
PI_OFFLINE=1
export PI_OFFLINE
exec node_modules/.bin/node scripts/demo.ts "$@"
