#!/bin/sh
# Builds pkg/ from exactly the committed sources (HEAD) in a temporary
# worktree, and commits it through the index without touching the working
# tree. For a shared working tree where other changes are in flight: the
# committed pkg/ must always be what the committed sources build.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
sha=$(git rev-parse HEAD)
tree=$(mktemp -d /tmp/cg-pkg-XXXXXX)
trap 'git worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"' EXIT
git worktree add -q --detach "$tree" "$sha"
[ -d "$root/.tools" ] && ln -s "$root/.tools" "$tree/.tools"
# wasm-opt (binaryen) and the pinned node come from node_modules.
ln -s "$root/node_modules" "$tree/node_modules"
# Reuse one build folder between runs so each build is incremental.
mkdir -p "$root/target/pkg-worktree"
ln -s "$root/target/pkg-worktree" "$tree/target"
(cd "$tree" && sh scripts/build-wasm.sh)
changed=0
for f in "$tree"/pkg/*; do
  name=pkg/$(basename "$f")
  blob=$(git hash-object -w "$f")
  if [ "$(git rev-parse -q --verify "HEAD:$name" 2>/dev/null)" != "$blob" ]; then
    git update-index --add --cacheinfo "100644,$blob,$name"
    changed=1
  fi
done
if [ $changed -eq 1 ]; then
  # Plain commit of the index: a pathspec would take the working tree's pkg/.
  git commit -q -m "pkg/: rebuilt from $(git rev-parse --short "$sha")"
  echo "commit-pkg: committed pkg/ built from $sha"
else
  echo "commit-pkg: pkg/ already matches $sha"
fi
