// The audit command as a user installs it (issue 19, part 1): `npm pack`'s
// tarball installed into an empty folder the way `pi install` lays a package
// down (`npm install --legacy-peer-deps`: no Pi, no dev dependency beside
// it). With no Pi anywhere the command still reads every session and
// measures "guard would" on its own projection of each branch, saying so in
// one line; with Pi's `pi` on PATH it finds that Pi's package and uses its
// projection; on a Node older than the
// package's `engines` it says so in one sentence and exits 2.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { writeSession } from "../harness/audit-sessions.ts";
import { piModules, piVersion, repoRoot } from "../harness/pi.ts";

const dir = mkdtempSync(join(tmpdir(), "cg-audit-packed-"));
const bin = join(dir, "node_modules", "pi-context-guard", "bin", "pi-context-guard.mjs");
const session = join(dir, "s.jsonl");
/** PATH with this Node and the system's tools, and no `pi`. */
const bare = [dirname(process.execPath), "/usr/bin", "/bin"].join(delimiter);

before(async () => {
  const npm = (args: string[], cwd: string) => {
    const r = spawnSync("npm", args, { cwd, encoding: "utf8", env: { ...process.env, npm_config_loglevel: "error" } });
    assert.equal(r.status, 0, `npm ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  npm(["pack", "--pack-destination", dir], repoRoot);
  const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
  assert.ok(tarball, "npm pack wrote a tarball");
  npm(["install", "--offline", "--no-audit", "--no-fund", "--legacy-peer-deps", join(dir, tarball)], dir);
  await writeSession(session, { bytes: 20_000, outputChars: 5_000, callsPerRun: 1 });
});

after(() => rmSync(dir, { recursive: true, force: true }));

const audit = (path: string, ...options: string[]) =>
  spawnSync(process.execPath, [bin, "audit", session, ...options], { encoding: "utf8", cwd: dir, env: { ...process.env, PATH: path } });

test("installed with no Pi anywhere, the audit reads the session and measures 'guard would' on its own projection, saying so", () => {
  const r = audit(bare);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /requests/);
  assert.match(r.stderr, /^no Pi found \(neither `pi` on PATH nor a Pi package beside this one\): 'guard would' is measured on this package's own projection/m);
  assert.doesNotMatch(`${r.stdout}${r.stderr}`, /Cannot find package|ERR_|not computed/);
  const json = JSON.parse(audit(bare, "--json").stdout);
  assert.equal(json.sessions[0].wouldDo.projection, "own");
  assert.ok(json.sessions[0].wouldDo.candidates.length > 0, "candidates found without Pi");
});

test(`installed, with Pi ${piVersion}'s pi on PATH, the audit uses that Pi's projection, with the same figures`, () => {
  const withPi = [join(piModules, ".bin"), bare].join(delimiter);
  const r = audit(withPi);
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /no Pi found/);
  const json = JSON.parse(audit(withPi, "--json").stdout);
  assert.equal(json.sessions[0].wouldDo.projection, "pi");
  assert.deepEqual(json.sessions[0].wouldDo.candidates, JSON.parse(audit(bare, "--json").stdout).sessions[0].wouldDo.candidates);
});

test("on a Node older than the package's engines, one sentence and exit 2", (t) => {
  const old = spawnSync("/usr/bin/node", ["--version"], { encoding: "utf8" });
  const major = Number(/^v(\d+)/.exec(old.stdout ?? "")?.[1]);
  if (old.error || !(major < 22)) {
    t.skip(`no Node older than 22 at /usr/bin/node here (${old.error ? "none" : old.stdout.trim()}): not checked`);
    return;
  }
  const r = spawnSync("/usr/bin/node", [bin, "audit", session], { encoding: "utf8" });
  assert.equal(r.status, 2);
  assert.equal(r.stderr.trim(), `pi-context-guard needs Node.js 22.18 or newer (Pi 1.6 needs 22.19); this is Node.js ${old.stdout.trim().slice(1)}.`);
  assert.equal(r.stdout, "");
});
