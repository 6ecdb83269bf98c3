// `pi-context-guard audit [PATH…] [--json] [--html FILE]`: the command's
// shell (arguments, where Pi keeps sessions, the files, progress on stderr,
// the exit code). Exit 0 when at least one file was read, 1 otherwise, 2 for
// a usage error.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { type Audited, json, text } from "./format.ts";
import { html } from "./html.ts";
import { readSession } from "./read.ts";
import { wouldDo } from "./would-do.ts";

const USAGE = `usage: pi-context-guard audit [PATH...] [--json] [--html FILE]
  PATH   a Pi session file (.jsonl) or a folder of them (searched recursively);
         none: Pi's session folder (PI_CODING_AGENT_SESSION_DIR, the sessionDir
         setting, PI_CODING_AGENT_DIR/sessions, ~/.pi/agent/sessions)
  --json       print one JSON object (docs/AUDIT.md)
  --html FILE  also write a self-contained HTML page with charts
`;

/** Progress shows from this many files on. */
const PROGRESS_FROM = 6;

const expand = (p: string) => (p === "~" || p.startsWith("~/") ? join(homedir(), p.slice(1)) : p);

/** Where Pi keeps sessions, as Pi finds it (main.js: the env, then the `sessionDir` setting; config.js: the agent dir). */
export function sessionFolder(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PI_CODING_AGENT_SESSION_DIR) return expand(env.PI_CODING_AGENT_SESSION_DIR);
  const agentDir = env.PI_CODING_AGENT_DIR ? expand(env.PI_CODING_AGENT_DIR) : join(homedir(), ".pi", "agent");
  try {
    const settings = JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8"));
    if (typeof settings?.sessionDir === "string" && settings.sessionDir) return expand(settings.sessionDir);
  } catch {
    // No settings file, or not JSON: Pi falls back to its default too.
  }
  return join(agentDir, "sessions");
}

/** The session files under `path` (a file, or a folder searched for `.jsonl`), each with the size its stat gave. */
function collect(path: string, out: { path: string; size: number }[], problems: { path: string; error: string }[]): void {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch (error) {
    problems.push({ path, error: (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file or folder" : String((error as Error).message) });
    return;
  }
  if (st.isFile()) {
    out.push({ path, size: st.size });
    return;
  }
  for (const name of readdirSync(path).sort()) {
    const p = join(path, name);
    let s: ReturnType<typeof statSync>;
    try {
      s = statSync(p);
    } catch {
      continue;
    }
    if (s.isDirectory()) collect(p, out, problems);
    else if (name.endsWith(".jsonl")) out.push({ path: p, size: s.size });
  }
}

function progress(done: number, total: number, bytes: number): void {
  const width = 30;
  const filled = Math.round((done / total) * width);
  process.stderr.write(`\r[${"#".repeat(filled)}${" ".repeat(width - filled)}] ${done}/${total} files, ${(bytes / 1e6).toFixed(1)} MB`);
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== "audit") {
    process.stderr.write(command === undefined || command === "--help" || command === "-h" ? USAGE : `unknown command: ${command}\n${USAGE}`);
    return command === "--help" || command === "-h" ? 0 : 2;
  }
  let asJson = false;
  let htmlFile: string | undefined;
  const paths: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === "--json") asJson = true;
    else if (a === "--html") {
      htmlFile = rest[++i];
      if (!htmlFile) {
        process.stderr.write(`--html needs a file name\n${USAGE}`);
        return 2;
      }
    } else if (a === "--help" || a === "-h") {
      process.stdout.write(USAGE);
      return 0;
    } else if (a.startsWith("--")) {
      process.stderr.write(`unknown option: ${a}\n${USAGE}`);
      return 2;
    } else paths.push(a);
  }
  const failed: { path: string; error: string }[] = [];
  const files: { path: string; size: number }[] = [];
  const roots = paths.length ? paths : [sessionFolder()];
  for (const p of roots) collect(resolve(p), files, failed);
  const audited: Audited[] = [];
  const show = files.length >= PROGRESS_FROM;
  let bytes = 0;
  for (const [i, { path, size }] of files.entries()) {
    if (show) progress(i, files.length, bytes);
    try {
      bytes += size;
      const read = await readSession(path, size);
      if (!read.ok) {
        failed.push({ path, error: read.error });
        continue;
      }
      const would = await wouldDo(read.session.light, read.session.model);
      // The branch's texts are the session's biggest part: let them go before the next file.
      read.session.light = { entries: [], leafId: read.session.light.leafId, texts: new Uint8Array(0), lengths: new Uint32Array(0) };
      audited.push(would.ok ? { session: read.session, wouldDo: would.value } : { session: read.session, wouldDo: undefined, wouldDoError: would.error });
    } catch (error) {
      failed.push({ path, error: error instanceof Error ? error.message : String(error) });
    }
  }
  if (show) {
    progress(files.length, files.length, bytes);
    process.stderr.write("\n");
  }
  if (files.length === 0 && failed.length === 0) failed.push({ path: paths.join(" ") || sessionFolder(), error: "no session files (.jsonl) found" });
  if (htmlFile) writeFileSync(htmlFile, html(audited, failed));
  process.stdout.write(asJson ? `${JSON.stringify(json(audited, failed), null, 2)}\n` : text(audited, failed));
  for (const f of failed) process.stderr.write(`${f.path}: ${f.error}\n`);
  return audited.length > 0 ? 0 : 1;
}
