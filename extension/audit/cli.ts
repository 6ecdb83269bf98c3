// `pi-context-guard audit [PATH…] [--json] [--html FILE]`: the command's
// shell (arguments, where Pi keeps sessions, the files, progress on stderr,
// the exit code). Exit 0 when at least one file was read, 1 otherwise, 2 for
// a usage error.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { readAuditArgs } from "./args.ts";
import { json, text } from "./format.ts";
import { html } from "./html.ts";
import { auditFiles, sessionFiles, sessionFolder } from "./run.ts";
import { OWN_PROJECTION } from "./would-do.ts";

const USAGE = `usage: pi-context-guard audit [PATH...] [--json] [--html FILE]
  PATH   a Pi session file (.jsonl) or a folder of them (searched recursively);
         none: Pi's session folder (PI_CODING_AGENT_SESSION_DIR, the sessionDir
         setting, PI_CODING_AGENT_DIR/sessions, ~/.pi/agent/sessions)
  --json       print one JSON object (docs/AUDIT.md)
  --html FILE  also write a self-contained HTML page with charts
`;

/** Progress shows from this many files on. */
const PROGRESS_FROM = 6;

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
  const read = readAuditArgs(rest, true);
  if ("error" in read) {
    process.stderr.write(`${read.error}\n${USAGE}`);
    return 2;
  }
  if (read.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { paths, html: htmlFile, json: asJson } = read;
  const roots = paths.length ? paths : [sessionFolder()];
  const { files, failed } = sessionFiles(roots, process.cwd());
  const show = files.length >= PROGRESS_FROM;
  const done = await auditFiles(files, { progress: show ? progress : undefined });
  if (show) process.stderr.write("\n");
  const audited = done.audited;
  failed.push(...done.failed);
  if (files.length === 0 && failed.length === 0) failed.push({ path: paths.join(" ") || sessionFolder(), error: "no session files (.jsonl) found" });
  if (htmlFile) {
    const target = resolve(htmlFile);
    try {
      writeFileSync(target, html(audited, failed));
      process.stderr.write(`wrote the page: ${target}\n`);
    } catch (error) {
      process.stderr.write(`the page could not be written to ${target}: ${(error as Error).message}\n`);
      return 1;
    }
  }
  process.stdout.write(asJson ? `${JSON.stringify(json(audited, failed), null, 2)}\n` : text(audited, failed));
  if (audited.some((a) => a.wouldDo?.projection === "own")) process.stderr.write(`${OWN_PROJECTION}\n`);
  for (const f of failed) process.stderr.write(`${f.path}: ${f.error}\n`);
  return audited.length > 0 ? 0 : 1;
}
