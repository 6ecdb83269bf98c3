// The interactive Pi TUI in tmux, driven like a person drives it.
//
// `pi -e tests/fixtures/faux-cli.ts -e <this package> --model faux/faux-1` runs in
// a detached tmux session of its own socket; tests send keys and read the pane.
// Pi's output is never piped (it would draw nothing in the pane).
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { offlineEnv } from "./offline.ts";
import { piCli, repoRoot } from "./pi.ts";
import { makeWorkspace } from "./workspace.ts";

export interface TuiOptions {
  width?: number;
  height?: number;
  /** Files of the fixture folder, by relative path. */
  files?: Record<string, string>;
  /** The faux model's turns (see tests/fixtures/faux-cli.ts). */
  script?: unknown[];
  /** The guard's settings file (default: the stand-in classifier as `model`). */
  guardSettings?: Record<string, unknown> | string;
  /** Stand-in classifier behaviour for faux-cli.ts: "keep-all" (default), "keep-none", "error", "absent". */
  classifier?: string;
  /** Extra environment. */
  env?: Record<string, string>;
  /** Load this package (default true). */
  loadProduct?: boolean;
}

export interface Tui {
  cwd: string;
  agentDir: string;
  /** Sends tmux key names (`Enter`, `Escape`, `PageDown`, `C-c`, `q` …). */
  keys: (...keys: string[]) => void;
  /** Types text literally (no key-name lookup). */
  type: (text: string) => void;
  /** Types a line and presses Enter. */
  submit: (text: string) => void;
  /**
   * Runs a slash command whose arguments Pi completes: the first Enter takes the
   * completion, the second submits (an Enter on an empty editor does nothing).
   */
  command: (text: string) => Promise<void>;
  /** The visible pane as plain text (`escapes` keeps colours as SGR sequences). */
  capture: (options?: { escapes?: boolean }) => string;
  /** Waits until the pane matches, and returns it; throws with the last pane on timeout. */
  waitFor: (what: string | RegExp, options?: { timeoutMs?: number; escapes?: boolean }) => Promise<string>;
  resize: (width: number, height: number) => void;
  close: () => void;
}

let count = 0;

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** Starts Pi's TUI in tmux and waits for its editor to be ready. */
export async function startTui(options: TuiOptions = {}): Promise<Tui> {
  const workspace = makeWorkspace("tui", options);
  const { base, cwd, agentDir } = workspace;
  const scriptPath = join(base, "script.json");
  writeFileSync(scriptPath, JSON.stringify(options.script ?? []));

  const socket = `cg-${process.pid}-${++count}`;
  const env: Record<string, string> = {
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: "1",
    CG_FAUX_SCRIPT: scriptPath,
    CG_CLASSIFIER: options.classifier ?? "keep-all",
    TERM: "xterm-256color",
    COLORTERM: "truecolor",
    ...options.env,
  };
  const extensions = [join(repoRoot, "tests", "fixtures", "faux-cli.ts")];
  if (options.loadProduct !== false) extensions.push(repoRoot);
  const command = [
    "env",
    ...Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`),
    shellQuote(process.execPath),
    shellQuote(piCli),
    ...extensions.flatMap((e) => ["-e", shellQuote(e)]),
    "--model",
    "faux/faux-1",
  ].join(" ");
  const width = options.width ?? 120;
  const height = options.height ?? 40;
  // The tmux server starts with a clean environment (no credential, PI_OFFLINE=1),
  // which the pane's process inherits; `env` above adds the test's own variables.
  const serverEnv = offlineEnv();
  const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", env: serverEnv });
  tmux("new-session", "-d", "-x", String(width), "-y", String(height), "-c", cwd, command);
  tmux("set-option", "-g", "remain-on-exit", "on");

  const capture = (opts: { escapes?: boolean } = {}) => tmux("capture-pane", "-p", ...(opts.escapes ? ["-e"] : []), "-t", "0");
  const waitFor: Tui["waitFor"] = async (what, opts = {}) => {
    const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
    let pane = "";
    while (Date.now() < deadline) {
      pane = capture({ escapes: opts.escapes });
      if (typeof what === "string" ? pane.includes(what) : what.test(pane)) return pane;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${String(what)}; the pane was:\n${pane}`);
  };
  const tui: Tui = {
    cwd,
    agentDir,
    keys: (...keys) => void tmux("send-keys", "-t", "0", ...keys),
    type: (text) => void tmux("send-keys", "-t", "0", "-l", text),
    submit: (text) => {
      tmux("send-keys", "-t", "0", "-l", text);
      tmux("send-keys", "-t", "0", "Enter");
    },
    command: async (text) => {
      tmux("send-keys", "-t", "0", "-l", text);
      await new Promise((r) => setTimeout(r, 150));
      tmux("send-keys", "-t", "0", "Enter");
      await new Promise((r) => setTimeout(r, 150));
      tmux("send-keys", "-t", "0", "Enter");
    },
    capture,
    waitFor,
    resize: (w, h) => void tmux("resize-window", "-t", "0", "-x", String(w), "-y", String(h)),
    close: () => {
      try {
        tmux("kill-server");
      } catch {
        // already gone
      }
      workspace.remove();
    },
  };
  // Pi is ready when its footer shows the model.
  await waitFor("faux-1", { timeoutMs: 30_000 }).catch((error) => {
    tui.close();
    throw error;
  });
  return tui;
}
