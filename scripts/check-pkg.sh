#!/bin/sh
# Fails when the committed pkg/ is not what the sources build.
#
# The build is reproducible for a given rustc and wasm-bindgen (pkg/BUILD records
# both). When this machine's rustc differs from the one that built pkg/, the
# .wasm bytes may differ for that reason alone; then everything else (the JS
# glue, the type declarations, the exported names) is still compared byte for
# byte and the note says so.
set -eu
cd "$(dirname "$0")/.."
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
sh scripts/build-wasm.sh "$fresh" > /dev/null
status=0
for f in pkg/*; do
  name=$(basename "$f")
  [ -e "$fresh/$name" ] || { echo "pkg: $name is committed but not built"; status=1; }
done
for f in "$fresh"/*; do
  name=$(basename "$f")
  [ -e "pkg/$name" ] || { echo "pkg: $name is built but not committed"; status=1; }
done
same_toolchain=yes
cmp -s pkg/BUILD "$fresh/BUILD" || same_toolchain=no
for f in "$fresh"/*; do
  name=$(basename "$f")
  [ -e "pkg/$name" ] || continue
  case "$name" in
    BUILD) continue ;;
    *.wasm) [ "$same_toolchain" = yes ] || continue ;;
  esac
  cmp -s "$f" "pkg/$name" || { echo "pkg: $name differs from a fresh build (run npm run build and commit pkg/)"; status=1; }
done
if [ "$same_toolchain" = no ]; then
  echo "pkg: note: this machine's toolchain differs from pkg/BUILD; compared the JS glue and declarations, not the .wasm bytes"
  echo "     committed: $(tr '\n' ' ' < pkg/BUILD)"
  echo "     here:      $(tr '\n' ' ' < "$fresh/BUILD")"
fi
[ $status -eq 0 ] && echo "pkg: fresh"
exit $status
