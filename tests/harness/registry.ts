// A real npm registry on loopback for install tests: Verdaccio (a
// devDependency) in a child process, with storage and users in a temporary
// folder, no uplinks (a package it does not hold is a 404, never a fetch from
// npmjs.org) and one user whose token sits in a temporary `.npmrc`.
//
// For: publishing this checkout (or any folder or tarball) and letting npm,
// or Pi's package manager, install from it. Not for: anything that needs a
// package from the public registry.
//
// The server listens on 127.0.0.1 port 0 and reports the port it got, so two
// test files can run at once. It inherits this process's environment, so the
// connect recorder (NODE_OPTIONS) records its sockets too.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./pi.ts";

const run = promisify(execFile);

export interface Registry {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /** The `.npmrc` with the registry and the user's token. */
  npmrc: string;
  /**
   * npm's settings for a child that should use this registry and no other:
   * the registry, the `.npmrc`, a cache of its own (not ~/.npm, and not the
   * publisher's, which already holds every tarball it published) and no
   * update check. Environment variables, because they beat every `.npmrc`.
   */
  env: Record<string, string>;
  /**
   * Every URL that npm, run with `env` or by `publish`, fetched so far (the
   * `http fetch` lines of the debug logs in their caches). The connect recorder
   * cannot tell where npm's sockets go: Node's http agents (npm's too) call
   * net.connect with `path: null`, which it logs as a Unix socket named
   * "null", so a test checks npm's requests here.
   */
  fetched: () => string[];
  /** `npm publish <tarball or folder>` (scripts off), optionally under a dist-tag. */
  publish: (what: string, tag?: string) => Promise<void>;
  /** Stops the server and waits for it to exit. */
  stop: () => Promise<void>;
}

/** The Verdaccio configuration (JSON is YAML): local storage only, anyone reads, a logged-in user publishes. */
function config(dir: string): string {
  return JSON.stringify({
    storage: join(dir, "storage"),
    auth: { htpasswd: { file: join(dir, "htpasswd"), max_users: 1 } },
    uplinks: {},
    packages: { "**": { access: "$all", publish: "$authenticated" } },
    // No web UI (it is not needed and slows the start); no middlewares, so no
    // audit plugin (it would forward `npm audit` to npmjs.org).
    web: { enable: false },
    log: { type: "stdout", format: "json", level: "warn" },
  });
}

/** Starts the server in `dir` (created if missing), adds the user and writes the `.npmrc`. */
export async function startRegistry(dir: string): Promise<Registry> {
  mkdirSync(dir, { recursive: true });
  const configFile = join(dir, "config.yaml");
  writeFileSync(configFile, config(dir));
  const verdaccio = join(repoRoot, "node_modules", "verdaccio");
  // runServer gives a plain http.Server: listen on port 0 and print the port.
  const script = `require(${JSON.stringify(verdaccio)}).runServer(${JSON.stringify(configFile)}).then((app) =>
    app.listen(0, "127.0.0.1", () => process.stdout.write(JSON.stringify({ port: app.address().port }) + "\\n")),
  ).catch((error) => { console.error(error); process.exit(1); });`;
  const child = spawn(process.execPath, ["-e", script], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  const stop = () => stopChild(child);
  try {
    const port = await portOf(child);
    const url = `http://127.0.0.1:${port}/`;
    const token = await addUser(url);
    const npmrc = join(dir, "npmrc");
    writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
    const env = {
      npm_config_registry: url,
      npm_config_userconfig: npmrc,
      npm_config_cache: join(dir, "npm-cache"),
      npm_config_update_notifier: "false",
      npm_config_loglevel: "error",
      // Every run's debug log stays for `fetched` (npm keeps 10 by default).
      npm_config_logs_max: "1000",
    };
    const publisherCache = join(dir, "publisher-cache");
    const fetched = () =>
      [env.npm_config_cache, publisherCache].flatMap((cache) => {
        const logs = join(cache, "_logs");
        if (!existsSync(logs)) return [];
        return readdirSync(logs).flatMap((f) => [...readFileSync(join(logs, f), "utf8").matchAll(/ http fetch [A-Z]+ \d+ (\S+)/g)].map((m) => m[1]));
      });
    const publish = async (what: string, tag?: string) => {
      // An absolute path: npm reads `folder/file.tgz` as a GitHub shorthand.
      const args = ["publish", what, "--ignore-scripts", ...(tag ? ["--tag", tag] : [])];
      await run("npm", args, { cwd: dir, env: { ...process.env, ...env, npm_config_cache: publisherCache }, timeout: 60_000 });
    };
    return { url, npmrc, env, fetched, publish, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The port the server printed, or its error output when it exits or stays silent for 20 s. */
function portOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`registry: no port in 20 s; stderr:\n${err}`)), 20_000);
    child.stderr?.on("data", (d) => {
      err += d;
    });
    child.stdout?.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith('{"port":'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line).port);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`registry: exited with ${code} before listening; stderr:\n${err}`));
    });
  });
}

/** Creates the one user through npm's login endpoint; the answer carries its token. */
async function addUser(url: string): Promise<string> {
  const name = "cg-test";
  const response = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, password: "not-a-secret-test-password" }),
  });
  const body = (await response.json()) as { token?: string };
  if (!response.ok || !body.token) throw new Error(`registry: adding the user answered ${response.status} ${JSON.stringify(body)}`);
  return body.token;
}

/** Ends a child this module started and waits for it. */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill();
  });
}
