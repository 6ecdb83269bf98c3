// The first run, as a newcomer has it: `npm run demo` in a fresh clone on a
// machine with only Node and npm. `rg`, `fd`, `fdfind`, `cargo`, `rustup` and
// `rustc` are stand-ins that log their name and fail with 127 (command not
// found), and ~/.cargo/bin is off PATH, so the demo passes only if it needs
// none of them (the committed pkg/, plain grep, no Rust install).
//
// The clone gets this checkout's node_modules by copying (`cp -a`: ~2 s for
// 650 MB here, against ~23 s for `npm install` from a warm cache), so setup.sh
// finds them matching the lock file, as after a first `npm install`. The
// clone holds what is committed: uncommitted changes are not what a newcomer
// would get.
//
// On CG_PI=1.3.0 the same clone runs the demo on Pi 1.3.0 (the oldest
// supported), so the demo is checked on both Pis like every e2e test.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { test } from "node:test";
import { offlineEnv } from "../harness/offline.ts";
import { piVersion, repoRoot } from "../harness/pi.ts";

const MISSING = ["rg", "fd", "fdfind", "cargo", "rustup", "rustc"];

/** A folder of commands that log their name to `log` and fail as a missing command does. */
function missingCommands(dir: string, log: string): void {
  mkdirSync(dir);
  for (const name of MISSING) {
    const file = join(dir, name);
    writeFileSync(file, `#!/bin/sh\necho ${name} >> '${log}'\necho "${name}: command not found" >&2\nexit 127\n`);
    chmodSync(file, 0o755);
  }
}

/** PATH without Rust's folders, the stand-ins first. */
function bareMachinePath(stubs: string): string {
  const cargoBins = new Set([join(homedir(), ".cargo", "bin"), process.env.CARGO_HOME ? join(process.env.CARGO_HOME, "bin") : ""].map((p) => p && resolve(p)));
  const kept = (process.env.PATH ?? "").split(delimiter).filter((p) => p && !cargoBins.has(resolve(p)));
  return [stubs, ...kept].join(delimiter);
}

function run(command: string, args: string[], options: { cwd: string; env: Record<string, string>; timeoutMs: number }) {
  return new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((done, fail) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"], timeout: options.timeoutMs });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", fail);
    child.on("close", (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

test(`npm run demo from a fresh clone with only Node and npm (Pi ${piVersion})`, { timeout: 180_000 }, async () => {
  const base = mkdtempSync(join(tmpdir(), "cg-demo-"));
  try {
    const clone = join(base, "clone");
    execFileSync("git", ["clone", "--quiet", repoRoot, clone]);
    execFileSync("cp", ["-a", join(repoRoot, "node_modules"), join(clone, "node_modules")]);
    if (piVersion !== "1.6.0") {
      const versionModules = join("tests", "pi-versions", piVersion, "node_modules");
      execFileSync("cp", ["-a", join(repoRoot, versionModules), join(clone, versionModules)]);
    }
    const log = join(base, "called.log");
    const stubs = join(base, "bin");
    missingCommands(stubs, log);
    // No provider key (offlineEnv); PI_OFFLINE left for the demo to set itself;
    // npm's look for a newer npm off: a registry request the offline check would flag.
    const env = offlineEnv({
      PATH: bareMachinePath(stubs),
      PI_OFFLINE: undefined,
      CG_PI: piVersion === "1.6.0" ? undefined : piVersion,
      npm_config_update_notifier: "false",
    });

    const result = await run("npm", ["run", "--silent", "demo"], { cwd: clone, env, timeoutMs: 150_000 });
    const output = `--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
    assert.equal(result.signal, null, `the demo was stopped (${result.signal}): it hung\n${output}`);
    assert.equal(result.code, 0, `the demo exits 0\n${output}`);
    assert.equal(existsSync(log) ? readFileSync(log, "utf8") : "", "", `the demo called none of ${MISSING.join(", ")}\n${output}`);
    assert.equal(result.stderr, "", `the demo printed no error\n${output}`);

    const out = result.stdout;
    assert.ok(out.includes(`offline demo inside real Pi ${piVersion}`), `the demo ran on Pi ${piVersion}\n${output}`);
    assert.match(out, /^ {2}bash returned (3\d|4\d)\.\dk chars$/m, `the search printed tens of kilobytes\n${output}`);
    assert.match(
      out,
      /\[context-guard\] Distilled the output of bash `grep -rn status src\/services`: kept \d+ of \d+ lines/,
      `the search was distilled\n${output}`,
    );
    assert.match(out, /^ {2}recall returned (\d+\.\dk) chars; identical to the original: true$/m, `recall gave back the original\n${output}`);
    assert.ok(out.includes("The story held: the search was distilled, and recall gave it back byte for byte."), output);
    assert.doesNotMatch(out, /not found|Downloading|THE DEMO FAILED/i, output);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
