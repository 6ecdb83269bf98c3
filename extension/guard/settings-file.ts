// The guard's settings file: where it is, reading it, writing `enabled` back.
// What the keys mean and how values are checked is the core's (settings.rs).
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { getAgentDir } from "@earendil-works/pi-coding-agent";

/** `PI_CONTEXT_GUARD_CONFIG`, else `context-guard.json` in Pi's agent dir (docs/GUARD.md "Settings"). */
export function settingsPath(): string {
  return process.env.PI_CONTEXT_GUARD_CONFIG || join(getAgentDir(), "context-guard.json");
}

/** The file's text; `undefined` when there is no file (every default applies, no warning). */
export function readSettingsText(path: string): { text: string | undefined; error?: string } {
  try {
    return { text: readFileSync(path, "utf8") };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { text: undefined };
    return { text: undefined, error: `cannot read ${path}: ${(error as Error).message}` };
  }
}

/** Replaces the file atomically (a crash mid-write leaves the old one). */
export function writeSettingsText(path: string, text: string): string | undefined {
  try {
    mkdirSync(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, text);
    renameSync(temporary, path);
    return undefined;
  } catch (error) {
    return `cannot write ${path}: ${(error as Error).message}`;
  }
}
