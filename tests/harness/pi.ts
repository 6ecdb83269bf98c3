// Which Pi the real-Pi tests run against, and its modules.
//
// CG_PI picks the version: "1.6.0" (the newest, installed at the repo root as a
// devDependency) or "1.3.0" (the oldest that installs here, in
// tests/pi-versions/1.3.0). Tests import Pi only through this file, so one test
// file runs unchanged on both, and every test runs offline (see offline.ts).
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { goOffline } from "./offline.ts";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const piVersion = process.env.CG_PI ?? "1.6.0";

export const piModules = piVersion === "1.6.0" ? join(repoRoot, "node_modules") : join(repoRoot, "tests", "pi-versions", piVersion, "node_modules");

function modulePath(pkg: string, file = "dist/index.js"): string {
  const path = join(piModules, "@earendil-works", pkg, file);
  if (!existsSync(path)) throw new Error(`Pi ${piVersion} is not installed: ${path} is missing (run the setup)`);
  return pathToFileURL(path).href;
}

/** The `pi` command of the chosen version. */
export const piCli = join(piModules, "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js");

// Loosely typed on purpose: the two versions' declarations differ in detail, and
// the harness only uses the parts both share (checked by the tests themselves).
// any is the honest type here
export type Loose = any;

// Before Pi is loaded: no credential from the developer's shell, PI_OFFLINE set.
goOffline(piModules);

export const agent: Loose = await import(modulePath("pi-coding-agent"));
export const ai: Loose = await import(modulePath("pi-ai"));
