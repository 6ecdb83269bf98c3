// Reading what connect-recorder.mjs saw, and judging it: the tests open
// sockets only to this machine.
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";

/** One recorded connection or name lookup. */
export interface Connect {
  /** `start`: a process loaded the recorder (no target). */
  kind: "start" | "connect" | "udp" | "dns";
  host?: string;
  port?: number;
  /** A Unix socket path (a connect that cannot leave the machine). */
  path?: string;
  pid: number;
  script: string;
}

// Not through pi.ts: the offline check reads logs without loading Pi.
export const recorderPath = fileURLToPath(new URL("./connect-recorder.mjs", import.meta.url));

/** The environment that makes a Node child record into `log` (add it to the child's env). */
export function recorderEnv(log: string): Record<string, string> {
  const preload = `--import=${pathToFileURL(recorderPath).href}`;
  const inherited = process.env.NODE_OPTIONS ?? "";
  return { NODE_OPTIONS: inherited.includes(preload) ? inherited : `${inherited} ${preload}`.trim(), CG_CONNECT_LOG: log };
}

/** Records of this process (empty unless the recorder was imported). */
export function recorded(): Connect[] {
  return ((globalThis as Record<symbol, unknown>)[Symbol.for("cg.connects")] as Connect[] | undefined) ?? [];
}

/** Whether the recorder is installed in this process. */
export function recording(): boolean {
  return (globalThis as Record<symbol, unknown>)[Symbol.for("cg.connects")] !== undefined;
}

/** Records written to a log file (by children, or by the whole suite). */
export function readLog(log: string): Connect[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Connect);
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and the name localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Records that reached (or looked up) anything but this machine. */
export function offMachine(records: Connect[]): Connect[] {
  return records.filter((r) => r.kind !== "start" && r.path === undefined && !isLoopbackHost(r.host ?? ""));
}

/** The connections and lookups (not the process starts). */
export function targets(records: Connect[]): Connect[] {
  return records.filter((r) => r.kind !== "start");
}

/** One line per record, for a failure message. */
export function describe(records: Connect[]): string {
  const target = (r: Connect) => (r.kind === "start" ? "" : ` ${r.path ?? (r.port === undefined ? r.host : `${r.host}:${r.port}`)}`);
  return records.map((r) => `${r.kind}${target(r)} (pid ${r.pid} ${r.script})`).join("\n");
}

/**
 * Proves the recorder of this process is live: a fetch to a loopback server of
 * our own must show up with that server's port. A check of "no connection"
 * means nothing if the hook could be missing.
 */
export async function assertRecorderLive(): Promise<void> {
  if (!recording()) throw new Error("the connect recorder is not installed in this process");
  const server = createServer((_req, res) => res.end("ok"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const before = recorded().length;
    const reply = await fetch(`http://127.0.0.1:${port}/`);
    await reply.text();
    const seen = recorded()
      .slice(before)
      .some((r) => r.kind === "connect" && r.port === port);
    if (!seen) throw new Error(`the connect recorder missed a fetch to 127.0.0.1:${port}; records: ${describe(recorded().slice(before))}`);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
