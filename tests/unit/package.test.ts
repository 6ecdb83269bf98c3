// The package as npm packs it (issue 19, parts 4 and 5): what `pi install
// npm:…` and `npm install` get holds what the extension and the command need
// and nothing else, and package.json has the fields npm and Pi's package
// gallery read.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "../harness/pi.ts";

const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));

test("the tarball holds the extension, the wasm, the command and the docs, and no sources of the build or tests", () => {
  const r = spawnSync("npm", ["pack", "--dry-run", "--json"], { cwd: repoRoot, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const [packed] = JSON.parse(r.stdout) as { size: number; files: { path: string }[] }[];
  const paths = packed.files.map((f) => f.path);
  for (const needed of [
    "package.json",
    "README.md",
    "CHANGELOG.md",
    "LICENSE",
    "bin/pi-context-guard.mjs",
    "extension/index.ts",
    "pkg/context_guard.js",
    "pkg/context_guard_bg.wasm",
    "docs/GUARD.md",
  ]) {
    assert.ok(paths.includes(needed), `${needed} is in the tarball`);
  }
  const tops = new Set(paths.map((p) => p.split("/")[0]));
  assert.deepEqual([...tops].sort(), ["CHANGELOG.md", "LICENSE", "README.md", "bin", "docs", "extension", "package.json", "pkg"]);
  assert.ok(!paths.some((p) => p.endsWith(".map")), "no source maps of sources that are not shipped");
  console.log(`tarball: ${(packed.size / 1024).toFixed(1)} KB, ${paths.length} files`);
});

test("package.json: what npm and Pi's gallery read; no dependency but Pi's packages as peers", () => {
  assert.ok(pkg.keywords.includes("pi-package"));
  assert.equal(pkg.license, "MIT");
  assert.match(pkg.engines.node, /^>=22\.\d+/);
  assert.match(pkg.description, /context window/);
  assert.deepEqual(pkg.pi.extensions, ["./extension/index.ts"]);
  assert.equal(pkg.dependencies, undefined, "nothing is installed beside it at run time");
  for (const [name, range] of Object.entries(pkg.peerDependencies)) assert.equal(range, "*", name);
  const changelog = readFileSync(join(repoRoot, "CHANGELOG.md"), "utf8");
  assert.match(changelog, new RegExp(`^## ${pkg.version.replaceAll(".", "\\.")}\\b`, "m"), "the changelog's first entry is this version");
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const install = readme.slice(readme.indexOf("## Install"));
  // Issue 28: the lines that work today come first; the npm line says it waits for the package to be published.
  assert.ok(
    install.indexOf("pi install /path") >= 0 && install.indexOf("pi install /path") < install.indexOf("pi install npm:pi-context-guard"),
    "the install section leads with a folder",
  );
  assert.match(install.slice(0, install.indexOf("## Quick start")), /Once it is published, `pi install npm:pi-context-guard`/);
});
