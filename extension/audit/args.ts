// The audit's arguments, read by `node:util`'s `parseArgs` for both the
// command line (`pi-context-guard audit`) and `/guard audit` inside Pi.
import { parseArgs } from "node:util";

export interface AuditArgs {
  paths: string[];
  html: string | undefined;
  json: boolean;
  help: boolean;
}

/**
 * The words after `audit`. `json` and `help` are the command line's (inside Pi, json is Pi's mode);
 * an error is worded for a person: `unknown option --x`, `--html needs a file name`.
 */
export function readAuditArgs(words: string[], commandLine: boolean): AuditArgs | { error: string } {
  const options = {
    html: { type: "string" as const },
    ...(commandLine ? { json: { type: "boolean" as const }, help: { type: "boolean" as const, short: "h" } } : {}),
  };
  try {
    const { values, positionals } = parseArgs({ args: words, options, allowPositionals: true, strict: true });
    const v = values as { html?: string; json?: boolean; help?: boolean };
    return { paths: positionals, html: v.html, json: v.json === true, help: v.help === true };
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") return { error: "--html needs a file name" };
    const option = /option '([^']*)'/i.exec((error as Error).message)?.[1] ?? "";
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return { error: `unknown option ${option.slice(0, 40)}` };
    return { error: (error as Error).message.split("\n")[0].slice(0, 200) };
  }
}
