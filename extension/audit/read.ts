// Reading one Pi session file (JSONL) for the audit, line by line, in two
// passes so that a 200 MB session never sits in memory whole:
//
//   1. every line: the header's checks, the whole file's figures, and each
//      entry's id and parent (Pi's tree: session-manager.js `_buildIndex`
//      makes the last entry the leaf, `buildSessionPath` walks `parentId`
//      from it);
//      the header's start time and folder and the first prompt, the facts
//      that name the session for a person;
//   2. the branch's lines only: the branch's figures, the requests after
//      each run, and each entry kept light for the core (text blocks of 256 characters or more written as
//      UTF-8 into one buffer and left as `{ type: "text", textAt: k }`, image
//      data cut to its header), then projected by Pi's own
//      `buildSessionProjection` (compaction and context edits applied).
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { core, OUT_OF_LINE_CHARS, type Loose } from "../core.ts";
import { type Figures, LaterRequests, Tally } from "./figures.ts";
import { BillEvents, billOf } from "../guard/bill.ts";
import type { GuardBill } from "../kept.ts";

/** The session format this audit reads: Pi's `CURRENT_SESSION_VERSION` in 1.3.0 and 1.6.0. */
export const SESSION_VERSION = 3;

/** Entry types Pi 1.3.0 and 1.6.0 write (session-manager.js). */
const KNOWN_TYPES = new Set([
  "message",
  "thinking_level_change",
  "model_change",
  "compaction",
  "branch_summary",
  "custom",
  "custom_message",
  "label",
  "session_info",
  "context_edit",
]);

/** A first prompt as the report names a session by it: one line, clipped. */
export const PROMPT_CHARS = 160;
// As guard/collect.ts: the core reads an image's header only.
const IMAGE_HEAD_CHARS = 96 * 1024;

/** A session's branch, light, with its long texts as UTF-8 beside it. */
export interface Branch {
  entries: Loose[];
  leafId: string | undefined;
  texts: Uint8Array;
  lengths: Uint32Array;
}

export interface SessionRead {
  path: string;
  bytes: number;
  id: string;
  cwd: string;
  /** The header's `timestamp`: when Pi started the session (ISO 8601), when it is a date. */
  startedAt: string | undefined;
  /** The file's first user message: one line, control and invisible characters out, at most `PROMPT_CHARS`; "" when none. */
  firstPrompt: string;
  /** Problems that did not stop the read (a bad line, an unknown entry type). */
  warnings: string[];
  branch: Figures;
  /** The whole file's figures, when the file holds more than the branch. */
  file: Figures | undefined;
  entries: number;
  branchEntries: number;
  /** The main model of the branch's last reply (`provider`, `api`), for the rewrite measure. */
  model: { provider: string; api: string } | undefined;
  /** The branch's requests after the run of each tool result and prompt. */
  later: LaterRequests;
  /**
   * The guard's net effect on the main model's bill on the branch (guard/bill.ts, the figure `/guard`
   * and `/context` show), priced by the session's recorded usage only (no catalog here); undefined
   * when the core could not compute it.
   */
  bill: GuardBill | undefined;
  light: Branch;
}

export type ReadResult = { ok: true; session: SessionRead } | { ok: false; path: string; error: string };

async function* lines(path: string): AsyncGenerator<string> {
  const input = createReadStream(path, { encoding: "utf8", highWaterMark: 1 << 20 });
  const reader = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const line of reader) yield line;
  } finally {
    reader.close();
    input.destroy();
  }
}

/** Whether the file's last byte is a newline (Pi ends every entry with one; a missing one is a cut write). */
async function endsWithNewline(path: string, size: number): Promise<boolean> {
  if (size === 0) return true;
  const { open } = await import("node:fs/promises");
  const file = await open(path, "r");
  try {
    const b = Buffer.alloc(1);
    await file.read(b, 0, 1, size - 1);
    return b[0] === 0x0a;
  } finally {
    await file.close();
  }
}

/** Texts written as UTF-8 one after another into a buffer that grows. */
class TextSink {
  private bytes = new Uint8Array(1 << 20);
  private at = 0;
  private lengths: number[] = [];
  private utf8 = new TextEncoder();

  push(text: string): number {
    const room = text.length * 3;
    if (this.at + room > this.bytes.length) {
      const next = new Uint8Array(Math.max(this.bytes.length * 2, this.at + room));
      next.set(this.bytes.subarray(0, this.at));
      this.bytes = next;
    }
    const written = this.utf8.encodeInto(text, this.bytes.subarray(this.at)).written;
    this.at += written;
    return this.lengths.push(written) - 1;
  }

  done(): { texts: Uint8Array; lengths: Uint32Array } {
    return { texts: this.bytes.subarray(0, this.at), lengths: Uint32Array.from(this.lengths) };
  }
}

function lightContent(content: unknown, sink: TextSink): unknown {
  if (!Array.isArray(content)) return content;
  return content.map((b) => {
    if (b?.type === "text" && typeof b.text === "string" && b.text.length >= OUT_OF_LINE_CHARS) return { type: "text", textAt: sink.push(b.text) };
    if (b?.type === "image" && typeof b.data === "string" && b.data.length > IMAGE_HEAD_CHARS) return { ...b, data: b.data.slice(0, IMAGE_HEAD_CHARS) };
    return b;
  });
}

/** A prompt's words as one clean line: its text blocks joined, sanitized and clipped by the core's `sanitizeLine`. */
export function promptLine(content: unknown): string {
  const blocks = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];
  const words = blocks
    .filter((b) => b?.type === "text" && typeof b.text === "string")
    .map((b) => b.text as string)
    .join(" ")
    // A pasted log can be megabytes: only its start is shown.
    .slice(0, PROMPT_CHARS * 8)
    // A terminal's colour and cursor codes whole (the core blanks their escape; the rest would show).
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, "")
    .replace(/\s+/g, " ");
  const line = core.sanitizeLine(words, PROMPT_CHARS);
  if (line) return line;
  return blocks.some((b) => b?.type === "image") ? "(an image)" : "";
}

/** The entry as the projection and the core read it, its long texts in `sink`. */
function light(entry: Loose, sink: TextSink): Loose {
  if (entry.type === "message" && entry.message) return { ...entry, message: { ...entry.message, content: lightContent(entry.message.content, sink) } };
  if (entry.type === "custom_message") return { ...entry, content: lightContent(entry.content, sink) };
  if (entry.type === "context_edit" && entry.replacement && Array.isArray(entry.replacement.content)) {
    return { ...entry, replacement: { ...entry.replacement, content: lightContent(entry.replacement.content, sink) } };
  }
  return entry;
}

/** Reads one session file; a file that is not a session of a format this reads is an error with the reason. */
export async function readSession(path: string, size: number): Promise<ReadResult> {
  const warnings: string[] = [];
  const fail = (error: string): ReadResult => ({ ok: false, path, error });
  const cut = !(await endsWithNewline(path, size));
  const fileTally = new Tally();
  const parents = new Map<string, string | null>();
  const lineOf = new Map<string, number>();
  const unknown = new Map<string, number>();
  let header: Loose | undefined;
  let firstPrompt: string | undefined;
  let leafId: string | undefined;
  let n = 0;
  let count = 0;
  let lastLine = 0;
  const badLines: number[] = [];
  for await (const line of lines(path)) {
    n++;
    if (!line.trim()) continue;
    lastLine = n;
    let entry: Loose;
    try {
      entry = JSON.parse(line);
    } catch {
      if (!header) return fail(`not a Pi session: line ${n} is not JSON`);
      badLines.push(n);
      continue;
    }
    if (!header) {
      if (entry?.type !== "session")
        return fail(`not a Pi session: the first entry is ${JSON.stringify(String(entry?.type ?? typeof entry)).slice(0, 40)}, not a "session" header`);
      header = entry;
      const version = typeof entry.version === "number" ? entry.version : 1;
      if (version < SESSION_VERSION)
        return fail(`session format v${version} is from an older Pi; open it once in Pi (which upgrades it to v${SESSION_VERSION}) and audit it again`);
      if (version > SESSION_VERSION)
        return fail(`session format v${version} is from a newer Pi than this audit reads (v${SESSION_VERSION}); update pi-context-guard`);
      continue;
    }
    if (typeof entry?.type !== "string" || typeof entry.id !== "string") {
      badLines.push(n);
      continue;
    }
    if (!KNOWN_TYPES.has(entry.type)) unknown.set(entry.type, (unknown.get(entry.type) ?? 0) + 1);
    count++;
    fileTally.add(entry);
    if (firstPrompt === undefined && entry.type === "message" && entry.message?.role === "user") firstPrompt = promptLine(entry.message.content);
    parents.set(entry.id, typeof entry.parentId === "string" ? entry.parentId : null);
    lineOf.set(entry.id, n);
    leafId = entry.id;
  }
  if (!header) return fail("not a Pi session: the file is empty");
  for (const at of badLines) {
    warnings.push(at === lastLine && cut ? `line ${at} is cut short (the last write did not finish); left out` : `line ${at} is not a session entry; left out`);
  }
  for (const [type, times] of unknown)
    warnings.push(`${times} entr${times === 1 ? "y" : "ies"} of unknown type "${type}" (a newer Pi?); counted in the tree, not in the figures`);

  // The branch: Pi's path from the leaf to the root.
  const onBranch = new Set<number>();
  for (let id: string | null | undefined = leafId; id; id = parents.get(id)) {
    const at = lineOf.get(id);
    if (at === undefined || onBranch.has(at)) break;
    onBranch.add(at);
  }
  parents.clear();
  lineOf.clear();

  const branchTally = new Tally();
  const later = new LaterRequests();
  const billEvents = new BillEvents();
  const sink = new TextSink();
  const entries: Loose[] = [];
  let model: SessionRead["model"];
  n = 0;
  for await (const line of lines(path)) {
    n++;
    if (!onBranch.has(n)) continue;
    const entry = JSON.parse(line) as Loose;
    branchTally.add(entry);
    later.add(entry);
    billEvents.add(entry);
    const m = entry.type === "message" ? entry.message : undefined;
    if (m?.role === "assistant" && typeof m.provider === "string") model = { provider: m.provider, api: typeof m.api === "string" ? m.api : "" };
    entries.push(light(entry, sink));
  }
  const { texts, lengths } = sink.done();
  const bill = billOf(billEvents.events, undefined);
  if (!bill.ok) warnings.push(`the guard's net effect on the bill was not computed: ${bill.error}`);
  return {
    ok: true,
    session: {
      path,
      bytes: size,
      id: String(header.id ?? ""),
      cwd: String(header.cwd ?? ""),
      startedAt: typeof header.timestamp === "string" && !Number.isNaN(Date.parse(header.timestamp)) ? header.timestamp : undefined,
      firstPrompt: firstPrompt ?? "",
      warnings,
      branch: branchTally.f,
      file: count > entries.length ? fileTally.f : undefined,
      entries: count,
      branchEntries: entries.length,
      model,
      later,
      bill: bill.ok ? bill.value : undefined,
      light: { entries, leafId, texts, lengths },
    },
  };
}
