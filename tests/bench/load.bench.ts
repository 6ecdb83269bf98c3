// Benchmark: loading the wasm core at extension load (budget 20 ms) and the
// size of pkg/*.wasm (budget 512 KB, 524,288 bytes).
//
// Each sample is a fresh Node process that imports extension/core.ts, the same
// module Pi loads, and reports the time `initSync` took (read + compile +
// instantiate). Fresh processes, because the cost only happens once per process.
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../harness/pi.ts";
import { sizeBudget, timeBudget } from "./verdict.ts";

const samples: number[] = [];
const probe = `import(${JSON.stringify(join(repoRoot, "extension", "core.ts"))}).then((m) => console.log(m.coreLoadMs))`;
for (let i = 0; i < 15; i++) {
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", probe], { encoding: "utf8" });
  samples.push(Number(out.trim()));
}
samples.sort((a, b) => a - b);
const median = samples[Math.floor(samples.length / 2)];
const bytes = statSync(join(repoRoot, "pkg", "context_guard_bg.wasm")).size;
console.log(
  `wasm load at extension load: median ${median.toFixed(2)} ms, max ${samples.at(-1)?.toFixed(2)} ms over ${samples.length} fresh processes (budget 20 ms: ${timeBudget("wasm load", median, 20)})`,
);
console.log(`pkg/context_guard_bg.wasm: ${(bytes / 1024).toFixed(1)} KB (budget 512 KB: ${sizeBudget("pkg/context_guard_bg.wasm", bytes, 512 * 1024)})`);
// What `pi install npm:…` downloads: the tarball npm packs (issue 19), printed beside the wasm.
const packed = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json"], { cwd: repoRoot, encoding: "utf8" }))[0] as {
  size: number;
  unpackedSize: number;
  files: unknown[];
};
console.log(
  `package tarball (npm pack): ${(packed.size / 1024).toFixed(1)} KB, ${(packed.unpackedSize / 1024).toFixed(1)} KB unpacked, ${packed.files.length} files (no budget)`,
);
