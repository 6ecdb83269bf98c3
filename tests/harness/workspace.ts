// A temporary work folder and Pi agent dir for one test: the fixture files,
// the guard's settings file (the stand-in classifier as `model` unless the
// test says otherwise) and Pi's settings.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface WorkspaceOptions {
  /** Files of the work folder, by relative path. */
  files?: Record<string, string>;
  /** The guard's settings file, as an object (merged over the stand-in model) or as raw text. */
  guardSettings?: Record<string, unknown> | string;
  /** Pi's settings.json in the agent dir. */
  piSettings?: Record<string, unknown>;
}

export interface Workspace {
  base: string;
  cwd: string;
  agentDir: string;
  remove: () => void;
}

export function makeWorkspace(prefix: string, options: WorkspaceOptions = {}): Workspace {
  const base = mkdtempSync(join(tmpdir(), `cg-${prefix}-`));
  const cwd = join(base, "work");
  const agentDir = join(base, "agent");
  mkdirSync(cwd, { recursive: true });
  mkdirSync(agentDir, { recursive: true });
  for (const [path, text] of Object.entries(options.files ?? {})) {
    mkdirSync(dirname(join(cwd, path)), { recursive: true });
    writeFileSync(join(cwd, path), text);
  }
  const settings = options.guardSettings ?? {};
  writeFileSync(
    join(agentDir, "context-guard.json"),
    // The tests of what a pass decides see its edits at the boundary it was planned at: the judge is waited
    // for (`waitForJudge`), unless a test sets it. Those of the judge in the background set it false.
    typeof settings === "string" ? settings : JSON.stringify({ model: "fakejev/jev-test", waitForJudge: true, ...settings }),
  );
  if (options.piSettings) writeFileSync(join(agentDir, "settings.json"), JSON.stringify(options.piSettings));
  return { base, cwd, agentDir, remove: () => rmSync(base, { recursive: true, force: true }) };
}
