// The `pi` command line: package commands and rpc mode, in a temporary agent dir,
// offline and without credentials (offline.ts).
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { offlineEnv } from "./offline.ts";
import { piCli, repoRoot } from "./pi.ts";
import { makeWorkspace } from "./workspace.ts";

const run = promisify(execFile);

/** A temporary agent dir (and work folder) for CLI tests. */
export function tempAgent(guardSettings: Record<string, unknown> = {}): { agentDir: string; cwd: string; remove: () => void } {
  return makeWorkspace("cli", { guardSettings });
}

/** Runs `pi <args>` to completion, with stdin closed (print mode reads a piped stdin as input). */
export async function pi(args: string[], options: { agentDir: string; cwd: string; env?: Record<string, string> }) {
  const running = run(process.execPath, [piCli, ...args], {
    cwd: options.cwd,
    env: offlineEnv({ PI_CODING_AGENT_DIR: options.agentDir, ...options.env }),
    timeout: 60_000,
  });
  running.child.stdin?.end();
  return running;
}

export interface RpcPi {
  /** Sends a command record and resolves with its response. */
  command: (record: Record<string, unknown>) => Promise<Record<string, unknown>>;
  /** Every record Pi wrote, in order. */
  records: Record<string, unknown>[];
  /** Waits for a record that matches. */
  waitFor: (match: (r: Record<string, unknown>) => boolean, timeoutMs?: number) => Promise<Record<string, unknown>>;
  /** Notifications sent through ctx.ui.notify. */
  notifications: () => string[];
  close: () => void;
}

/** Starts `pi --mode rpc` with the stand-in model and, unless told otherwise, this package. */
export function startRpc(options: { agentDir: string; cwd: string; loadProduct?: boolean; env?: Record<string, string>; args?: string[] }): RpcPi {
  const args = [piCli, "--mode", "rpc", "--no-session", "-e", join(repoRoot, "tests", "fixtures", "faux-cli.ts")];
  if (options.loadProduct !== false) args.push("-e", repoRoot);
  args.push("--model", "faux/faux-1", ...(options.args ?? []));
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: offlineEnv({ PI_CODING_AGENT_DIR: options.agentDir, ...options.env }),
  });
  const records: Record<string, unknown>[] = [];
  const waiters: { match: (r: Record<string, unknown>) => boolean; resolve: (r: Record<string, unknown>) => void }[] = [];
  let buffer = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (data: string) => {
    buffer += data;
    // Split on LF only: JSON strings may hold U+2028, which readline would split on.
    let at = buffer.indexOf("\n");
    while (at >= 0) {
      const line = buffer.slice(0, at).replace(/\r$/, "");
      buffer = buffer.slice(at + 1);
      at = buffer.indexOf("\n");
      if (!line.trim()) continue;
      const record = JSON.parse(line) as Record<string, unknown>;
      records.push(record);
      for (const w of [...waiters]) {
        if (w.match(record)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(record);
        }
      }
    }
  });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const waitFor: RpcPi["waitFor"] = (match, timeoutMs = 20_000) => {
    const seen = records.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`rpc: no matching record in ${timeoutMs} ms; stderr:\n${stderr}\nrecords:\n${records.map((r) => JSON.stringify(r)).join("\n")}`)),
        timeoutMs,
      );
      waiters.push({
        match,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      });
    });
  };
  let nextId = 0;
  return {
    records,
    waitFor,
    command: (record) => {
      const id = `t${++nextId}`;
      child.stdin.write(`${JSON.stringify({ id, ...record })}\n`);
      return waitFor((r) => r.type === "response" && r.id === id);
    },
    notifications: () => records.filter((r) => r.type === "extension_ui_request" && r.method === "notify").map((r) => String(r.message)),
    close: () => {
      child.kill();
    },
  };
}
