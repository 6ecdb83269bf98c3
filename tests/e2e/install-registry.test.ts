// `pi install` the way users get the package (issue 19, part 3), each source
// on loopback, through the real `pi` command and the real npm and git:
//
//   npm:  `npm pack` of this checkout, published to a real npm registry
//         (Verdaccio, no uplinks: tests/harness/registry.ts), then
//         `pi install npm:pi-context-guard`. A session started without `-e`
//         for the checkout answers /context and /guard, its guard distils a
//         large output with the CLI's stand-in classifier (keep-none: every
//         chunk judged not needed, so the output is replaced whole, outcome
//         "removed"), and the installed package's own
//         `pi-context-guard audit` reads that session.
//   git:  a bare clone of this checkout. Pi takes no local repository (the
//         skipped test says why, from Pi's source); served by `git daemon` on
//         127.0.0.1 it installs from a git:// URL and loads.
//   folder: `pi install <checkout>` is tests/e2e/install.test.ts's.
//
// Pi's package manager runs `npm` from PATH with Pi's own environment (1.6.0
// and 1.3.0: dist/core/package-manager.js, runNpmCommand and getEnv), so npm
// is pointed at the registry by npm's environment variables
// (npm_config_registry, npm_config_userconfig for the token,
// npm_config_cache: the registry's `env`). Nothing is read from or written to
// ~/.npmrc, ~/.npm or ~/.pi.
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { pi, type RpcPi, startRpc } from "../harness/cli.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { type Loose, piModules, piVersion, repoRoot } from "../harness/pi.ts";
import { type Registry, startRegistry, stopChild } from "../harness/registry.ts";
import { makeWorkspace, type Workspace } from "../harness/workspace.ts";

const run = promisify(execFile);
const version = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")).version as string;

let base = "";
let registry: Registry | undefined;

before(async () => {
  base = mkdtempSync(join(tmpdir(), "cg-install-registry-"));
  registry = await startRegistry(join(base, "registry"));
  const packed = join(base, "packed");
  mkdirSync(packed);
  // npm's own cache and logs in the temp folder, not ~/.npm.
  const env = { ...process.env, npm_config_cache: join(base, "pack-cache"), npm_config_loglevel: "error" };
  await run("npm", ["pack", "--pack-destination", packed], { cwd: repoRoot, env, timeout: 60_000 });
  const tarball = readdirSync(packed).find((f) => f.endsWith(".tgz"));
  assert.ok(tarball, "npm pack wrote a tarball");
  await registry.publish(join(packed, tarball));
});

after(async () => {
  await registry?.stop();
  if (base) rmSync(base, { recursive: true, force: true });
});

/** A build log of about 26k characters: large enough for the guard, nothing in it the answer needs. */
const buildLog = `${Array.from({ length: 1_200 }, (_, i) => `build step ${i + 1}: ok (${(i * 37) % 1000} ms)`).join("\n")}\n`;

/** A work folder with the log, an agent dir with the stand-in classifier as the guard's model. */
function workspace(): Workspace {
  return makeWorkspace("install-registry", { files: { "build.log": buildLog } });
}

/** `pi list`'s entry for `source`: the source line, then its install folder. */
async function listed(dir: Workspace, source: string): Promise<string> {
  const { stdout } = await pi(["list"], dir);
  const lines = stdout.split("\n").map((l) => l.trim());
  const at = lines.indexOf(source);
  assert.ok(at >= 0, `pi list shows ${source}:\n${stdout}`);
  return lines[at + 1];
}

/** The /context command's origin, as Pi reports it over rpc (get_commands' sourceInfo). */
async function contextCommandSource(rpc: RpcPi): Promise<Loose> {
  const response = await rpc.command({ type: "get_commands" });
  const commands = (response.data as Loose).commands as Loose[];
  const context = commands.find((c) => c.name === "context");
  assert.ok(context, `a /context command is registered: ${commands.map((c) => c.name).join(", ")}`);
  return context.sourceInfo;
}

/** Every request npm has made with the registry's settings went to the registry, the `expected` paths among them (a tarball: downloaded, not taken from the publisher's cache). */
function assertNpmStayedOnLoopback(registry: Registry, expected: string[]): void {
  const urls = registry.fetched();
  assert.deepEqual(
    urls.filter((u) => !u.startsWith(registry.url)),
    [],
    `npm fetched only from ${registry.url}`,
  );
  for (const path of expected) assert.ok(urls.includes(`${registry.url}${path}`), `npm fetched ${path}:\n${urls.join("\n")}`);
}

test(`Pi ${piVersion}: pi install npm:pi-context-guard from a registry on loopback; the session it loads into guards, the installed audit reads it`, async () => {
  assert.ok(registry);
  const dir = workspace();
  try {
    const install = await pi(["install", "npm:pi-context-guard"], { ...dir, env: registry.env });
    assert.match(install.stdout, /Installed npm:pi-context-guard/);
    assertNpmStayedOnLoopback(registry, [`pi-context-guard/-/pi-context-guard-${version}.tgz`]);
    const installed = join(dir.agentDir, "npm", "node_modules", "pi-context-guard");
    assert.equal(await listed(dir, "npm:pi-context-guard"), installed);
    // A copy from the registry, not a link to this checkout.
    assert.equal(realpathSync(installed), installed);
    assert.equal(JSON.parse(readFileSync(join(installed, "package.json"), "utf8")).version, version);
    assert.ok(!existsSync(join(installed, "tests")), "only the package's files were installed");

    const script = join(dir.base, "script.json");
    writeFileSync(script, JSON.stringify([{ tool: "bash", args: { command: "cat build.log" } }, "Every build step passed."]));
    // Without -e for the checkout: the package comes from the installed settings.
    const rpc = startRpc({ ...dir, loadProduct: false, env: { CG_FAUX_SCRIPT: script, CG_CLASSIFIER: "keep-none" } });
    const sessionFile = join(dir.base, "sessions", "installed.jsonl");
    try {
      // startRpc runs --no-session; an rpc client opens a session file with switch_session
      // (a new file: Pi creates it), so the run below is recorded where the audit can read it.
      mkdirSync(dirname(sessionFile));
      assert.equal((await rpc.command({ type: "switch_session", sessionPath: sessionFile })).success, true);
      const source = await contextCommandSource(rpc);
      assert.equal(source.source, "npm:pi-context-guard", JSON.stringify(source));
      assert.ok(String(source.path).startsWith(`${installed}/`), `loaded from the install folder: ${JSON.stringify(source)}`);

      assert.equal((await rpc.command({ type: "prompt", message: "/context" })).success, true);
      const report = await rpc.waitFor((r) => r.method === "notify" && /^Context: /.test(String(r.message)));
      assert.match(String(report.message), /^Context: 0 \/ 200\.0k tokens[\s\S]*Composition \(estimate: /);
      assert.equal((await rpc.command({ type: "prompt", message: "/guard" })).success, true);
      const status = await rpc.waitFor((r) => r.method === "notify" && /^context-guard: /.test(String(r.message)));
      assert.match(String(status.message), /^context-guard: on\n/);

      assert.equal((await rpc.command({ type: "prompt", message: "Did the build pass?" })).success, true);
      await rpc.waitFor((r) => r.type === "agent_end", 30_000);
      const entries = ((await rpc.command({ type: "get_entries" })).data as Loose).entries as Loose[];
      const result = entries.find((e) => e.type === "message" && e.message.role === "toolResult");
      assert.ok(result, "the bash call has a result entry");
      const raw = (result.message.content as Loose[]).map((c) => c.text).join("");
      assert.equal(raw, buildLog);
      const edits = entries.filter((e) => e.type === "context_edit");
      assert.deepEqual(
        edits.map((e) => [e.targetId, e.replacement.content.map((c: Loose) => c.text).join("")]),
        [
          [
            result.id,
            `[context-guard] Removed the output of bash \`cat build.log\`: 1200 lines (${(raw.length / 1000).toFixed(1)}k chars) judged not needed for the answer. Full output: recall({"entryId":"${result.id}"}).`,
          ],
        ],
      );
      const records = entries.filter((e) => e.type === "custom" && e.customType === "context-guard").map((e) => e.data);
      assert.deepEqual(
        records.map((r) => r.results.map((x: Loose) => [x.kind, x.entryId, x.outcome])),
        [[["large", result.id, "removed"]]],
      );
      assertNoPassFailure(rpc.notifications());
    } finally {
      rpc.close();
    }

    // The installed package's own command, with the Pi under test on PATH.
    const bin = join(installed, "bin", "pi-context-guard.mjs");
    const path = [join(piModules, ".bin"), dirname(process.execPath), "/usr/bin", "/bin"].join(delimiter);
    const audit = spawnSync(process.execPath, [bin, "audit", sessionFile], {
      cwd: dir.cwd,
      encoding: "utf8",
      env: { ...process.env, PATH: path },
      timeout: 60_000,
    });
    assert.equal(audit.status, 0, `audit: ${audit.stderr}\n${audit.stdout}`);
    // It found the session's guard record: the pass above, with what it kept out.
    assert.ok(audit.stdout.includes(`file ${sessionFile} (`), audit.stdout);
    assert.match(audit.stdout, /; guard on\n {2}2 requests, /);
    assert.match(audit.stdout, /\n {2}The guard kept [\d.]+k tokens of tool output out of the context at 1 run end or checkpoint\b/);
    // What it could still do is computed through the installed package (Pi's projection from its folder),
    // though the text shows it only for sessions the guard did not run on (issue 28).
    assert.doesNotMatch(audit.stdout, /\n {2}guard would: /);
    const json = spawnSync(process.execPath, [bin, "audit", "--json", sessionFile], {
      cwd: dir.cwd,
      encoding: "utf8",
      env: { ...process.env, PATH: path },
      timeout: 60_000,
    });
    assert.equal(json.status, 0, json.stderr);
    assert.ok(Array.isArray(JSON.parse(json.stdout).sessions[0].wouldDo?.candidates), json.stdout.slice(0, 400));
    assert.doesNotMatch(`${audit.stdout}${audit.stderr}${json.stderr}`, /Cannot find package|ERR_|not computed/);
  } finally {
    dir.remove();
  }
});

// --- git ---------------------------------------------------------------

/** Why git installs cannot be tried here, or undefined when git and its daemon are present. */
function gitMissing(): string | undefined {
  const exec = spawnSync("git", ["--exec-path"], { encoding: "utf8" });
  if (exec.error || exec.status !== 0) return `git is not installed here (${exec.error?.message ?? exec.stderr.trim()})`;
  if (!existsSync(join(exec.stdout.trim(), "git-daemon"))) return `git here has no daemon (no git-daemon in ${exec.stdout.trim()})`;
  return undefined;
}

/** A bare clone of this checkout's HEAD at `<root>/local/pi-context-guard.git` (Pi needs a host and two path parts). */
async function bareClone(root: string): Promise<string> {
  const repo = join(root, "local", "pi-context-guard.git");
  await run("git", ["clone", "--quiet", "--bare", repoRoot, repo], { timeout: 60_000 });
  return repo;
}

test(`Pi ${piVersion}: a local git repository is not a git source`, async (t) => {
  const missing = gitMissing();
  if (missing) {
    t.skip(`${missing}: not checked`);
    return;
  }
  const dir = workspace();
  try {
    const repo = await bareClone(join(dir.base, "git"));
    const asGit = await pi(["install", `git:${repo}`], dir).then(
      () => undefined,
      (error: { stderr?: string }) => String(error.stderr),
    );
    if (asGit === undefined) {
      // Pi took it: then it must be a real install.
      assert.ok(existsSync(join(dir.agentDir, "git")), "a git source is cloned under the agent dir");
      await listed(dir, `git:${repo}`);
      return;
    }
    assert.match(asGit, /Path does not exist: .*git:/);
    // As a plain path, the bare repository is recorded as a local folder, and nothing is cloned.
    await pi(["install", repo], dir);
    assert.equal(await listed(dir, relative(dir.agentDir, repo)), repo);
    assert.ok(!existsSync(join(dir.agentDir, "git")), "nothing was cloned");
    t.skip(
      `Pi ${piVersion} takes no local git repository: \`pi install git:<path>\` says "${asGit.trim().split("\n")[0]}", and a bare ` +
        "repository's path is recorded as a local folder, not cloned. Pi's parseGitUrl (dist/utils/git.js) takes only `git:` " +
        "host/path shorthands (a host with a dot, or localhost) and http(s)://, ssh:// and git:// URLs; parseSource " +
        "(dist/core/package-manager.js) makes every other source a local path. The next test serves the clone over git:// on loopback.",
    );
  } finally {
    dir.remove();
  }
});

/** A free loopback port (git daemon cannot report the one it got for port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** `git daemon` serving every repository under `root` on 127.0.0.1, read-only. */
async function gitDaemon(root: string): Promise<{ url: (path: string) => string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    "git",
    ["daemon", "--verbose", "--reuseaddr", "--export-all", "--listen=127.0.0.1", `--port=${port}`, `--base-path=${root}`, root],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`git daemon: not ready in 10 s:\n${log}`)), 10_000);
    child.stderr?.on("data", (d) => {
      log += d;
      if (log.includes("Ready to rumble")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`git daemon exited with ${code}:\n${log}`));
    });
  }).catch(async (error) => {
    await stopChild(child);
    throw error;
  });
  return { url: (path) => `git://127.0.0.1:${port}/${path}`, stop: () => stopChild(child) };
}

/**
 * The dependencies that a lockfile names by dist-tag (verdaccio-audit's
 * `"node-fetch": "cjs"`), each with the locked folder that answers it. Pi's
 * git install runs `npm install --omit=dev` in the clone, and npm asks the
 * registry what such a tag means even for a dev dependency it will not
 * install; npmjs.org would answer, a registry without uplinks must hold it.
 */
function taggedDependencies(lock: { packages: Record<string, Loose> }): { name: string; path: string; tag: string; version: string }[] {
  const isTag = (spec: string) => /^[A-Za-z][\w.-]*$/.test(spec) && !/^[vV]\d/.test(spec) && !/^[xX]$/.test(spec);
  const found: { name: string; path: string; tag: string; version: string }[] = [];
  for (const [at, entry] of Object.entries(lock.packages)) {
    for (const [name, spec] of Object.entries({ ...entry.dependencies, ...entry.optionalDependencies } as Record<string, string>)) {
      if (!isTag(spec)) continue;
      // Node's lookup: the nearest node_modules/<name> from `at` up.
      let from = at;
      for (;;) {
        const path = `${from ? `${from}/` : ""}node_modules/${name}`;
        if (lock.packages[path]) {
          found.push({ name, path, tag: spec, version: lock.packages[path].version });
          break;
        }
        if (!from) throw new Error(`lockfile: ${at} needs ${name}@${spec}, which it does not lock`);
        from = from.replace(/\/?node_modules\/(@[^/]+\/)?[^/]+$/, "");
      }
    }
  }
  return found;
}

test(`Pi ${piVersion}: pi install of a bare clone served by git daemon on loopback; the session loads it`, async (t) => {
  const missing = gitMissing();
  if (missing) {
    t.skip(`${missing}: not checked`);
    return;
  }
  assert.ok(registry);
  const dir = workspace();
  const root = join(dir.base, "git");
  let daemon: Awaited<ReturnType<typeof gitDaemon>> | undefined;
  try {
    const repo = await bareClone(root);
    daemon = await gitDaemon(root);
    const lock = JSON.parse((await run("git", ["--git-dir", repo, "show", "HEAD:package-lock.json"], { maxBuffer: 64 << 20 })).stdout);
    const tagged = taggedDependencies(lock);
    for (const dep of tagged) {
      const folder = join(repoRoot, dep.path);
      const have = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")).version;
      assert.equal(have, dep.version, `${dep.path} in node_modules is the locked version`);
      await registry.publish(folder, dep.tag);
    }

    // The URL needs the `git:` prefix: Pi reads a bare `git://…` as that prefix plus `//…`, a local path.
    const source = `git:${daemon.url("local/pi-context-guard.git")}`;
    const install = await pi(["install", source], { ...dir, env: registry.env });
    assert.ok(install.stdout.includes(`Installed ${source}`), install.stdout);
    // npm install --omit=dev in the clone asked the registry what the tags mean.
    assertNpmStayedOnLoopback(
      registry,
      tagged.map((d) => d.name),
    );
    const installed = join(dir.agentDir, "git", "127.0.0.1", "local", "pi-context-guard");
    assert.equal(await listed(dir, source), installed);
    const head = (await run("git", ["--git-dir", repo, "rev-parse", "HEAD"])).stdout.trim();
    assert.equal((await run("git", ["rev-parse", "HEAD"], { cwd: installed })).stdout.trim(), head, "the clone is at the checkout's HEAD");

    const rpc = startRpc({ ...dir, loadProduct: false });
    try {
      const loaded = await contextCommandSource(rpc);
      assert.equal(loaded.source, source, JSON.stringify(loaded));
      assert.ok(String(loaded.path).startsWith(`${installed}/`), `loaded from the clone: ${JSON.stringify(loaded)}`);
      assert.equal((await rpc.command({ type: "prompt", message: "/context" })).success, true);
      const report = await rpc.waitFor((r) => r.method === "notify" && /^Context: /.test(String(r.message)));
      assert.match(String(report.message), /^Context: 0 \/ 200\.0k tokens[\s\S]*Composition \(estimate: /);
    } finally {
      rpc.close();
    }
  } finally {
    await daemon?.stop();
    dir.remove();
  }
});
