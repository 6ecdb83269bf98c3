// Offline by construction: every Pi the tests start, in-process or as a child,
// runs with PI_OFFLINE=1 and without any provider credential from the
// developer's environment.
//
// PI_OFFLINE turns off Pi's startup network work (version check, fd/rg
// download, package updates) and its model-catalog refresh (ModelRuntime's
// `modelNetworkEnabled` is `PI_OFFLINE === undefined`). The credential list is
// the one Pi itself reads (pi-ai's env-api-keys.js, every provider's variables),
// taken from the installed Pi so that it cannot fall behind a new provider. A
// test that needs a key for a loopback server sets a dummy one explicitly.
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Read by the Google SDK bundled in Pi's CLI, not listed in env-api-keys.js. */
const alsoCleared = ["GOOGLE_API_KEY"];

/** The environment variables Pi reads credentials from, in the Pi at `piModules`. */
export function providerKeyVariables(piModules: string): string[] {
  const file = join(piModules, "@earendil-works", "pi-ai", "dist", "env-api-keys.js");
  const source = readFileSync(file, "utf8");
  // Every upper-case string literal with an underscore: the variable names of
  // its provider map and its constants (ANTHROPIC_AUTH_TOKEN, AWS_PROFILE …).
  const names = new Set([...source.matchAll(/"([A-Z][A-Z0-9]*_[A-Z0-9_]+)"/g)].map((m) => m[1]));
  for (const known of ["OPENROUTER_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"]) {
    if (!names.has(known)) throw new Error(`offline harness: ${known} is not in ${file}; Pi's credential list moved, update providerKeyVariables`);
  }
  return [...names, ...alsoCleared].sort();
}

let cleared: string[] | undefined;

/** Clears every credential variable from this process and sets PI_OFFLINE; call before Pi is imported. */
export function goOffline(piModules: string): void {
  cleared = providerKeyVariables(piModules);
  for (const name of cleared) delete process.env[name];
  process.env.PI_OFFLINE = "1";
}

/** The variables `goOffline` cleared. */
export function clearedVariables(): readonly string[] {
  if (!cleared) throw new Error("offline harness: goOffline has not run (import Pi through tests/harness/pi.ts)");
  return cleared;
}

/**
 * The environment for a Pi child: this process's, without any credential,
 * with PI_OFFLINE=1, then `extra` (where a test sets a dummy key on purpose).
 */
export function offlineEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  for (const name of clearedVariables()) delete env[name];
  env.PI_OFFLINE = "1";
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}
