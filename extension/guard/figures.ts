// The guard's figures, read back from the session: what it keeps out of the
// window now, its lifetime total and its usage (the core computes them in
// guard/stats/). Shared by the status bar, `/guard` and `/context`.
//
// They are recomputed at every redraw, so the read is packed as columns
// (crates/guard-read/src/stats/columns.rs has the layout): the edited messages'
// roles, blocks and text lengths in one Uint32Array, the heads of their texts
// in one string, the records in one Float64Array, and images' base64 handed
// over only as far as the core asks. Nothing is decided here: every edited
// message goes as Pi holds it, and the core says what counts.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore } from "../core.ts";
import type { GuardRecord } from "./types.ts";
import { disabledBy } from "../switches.ts";
import type { GuardStats } from "../kept.ts";
import { isEdited, type ProjectedEntry, rawMessage } from "./collect.ts";
import { guardCore, type SavingsColumns, type StatusText } from "./wasm.ts";
import { sessionBill } from "./bill.ts";

export const RECORD_TYPE = "context-guard";

/** A branch entry as the figures read it. */
export interface BranchEntry {
  type: string;
  customType?: string;
  data?: unknown;
}

// The codes of stats/columns.rs (`role`, `form`, `item`, `mark`).
const ROLE_OTHER = 0;
const ROLE_USER = 1;
const ROLE_ASSISTANT = 2;
const ROLE_TOOL_RESULT = 3;
const ROLE_CUSTOM = 4;
const ROLE_BASH_EXECUTION = 5;
const FORM_STRING = 0;
const FORM_BLOCKS = 1;
const FORM_NONE = 2;
const FORM_SHELL = 3;
const FORM_SHELL_EXCLUDED = 4;
const ITEM_OTHER = 0;
const ITEM_TEXT = 1;
const ITEM_IMAGE = 2;
const ITEM_TOOL_CALL = 3;
const ITEM_THINKING = 4;
const MARK_COMPACTION = 1;
const MARK_RECORD = 2;
const MARK_STRIDE = 6;

// The rules read only a text's length and its start (the guard's marker and
// the exchange stub's first 43 characters), so a text crosses as its length
// and at most its first 64 characters: megabytes of output stay on this side.
const TEXT_HEAD = 64;

type Loose = { [key: string]: unknown } | null | undefined;

class Packer {
  // Written in place: a JavaScript array would cost a copy to become a typed one.
  shape = new Uint32Array(4096);
  n = 0;
  heads = "";
  images: string[] = [];

  /** Room for `count` more numbers. */
  room(count: number): void {
    if (this.n + count <= this.shape.length) return;
    const grown = new Uint32Array(Math.max(this.shape.length * 2, this.n + count));
    grown.set(this.shape);
    this.shape = grown;
  }

  entry(visible: number): void {
    this.room(1);
    this.shape[this.n++] = visible;
  }

  message(message: unknown): void {
    const m = message as Loose;
    if (m?.role === "bashExecution") return this.shell(m);
    const content = m?.content;
    const blocks = Array.isArray(content) ? content.length : 0;
    // A message, and at most three numbers an item.
    this.room(3 + 3 * Math.max(blocks, 1));
    this.shape[this.n++] = roleCode(m?.role);
    if (typeof content === "string") {
      this.shape[this.n++] = FORM_STRING;
      this.shape[this.n++] = 1;
      this.text(content);
    } else if (Array.isArray(content)) {
      this.shape[this.n++] = FORM_BLOCKS;
      this.shape[this.n++] = blocks;
      for (let i = 0; i < blocks; i++) this.block(content[i] as Loose);
    } else {
      this.shape[this.n++] = FORM_NONE;
      this.shape[this.n++] = 0;
    }
  }

  block(b: Loose): void {
    switch (b?.type) {
      case "text":
        return this.text(typeof b.text === "string" ? b.text : "");
      case "image":
        this.shape[this.n++] = ITEM_IMAGE;
        this.images.push(typeof b.data === "string" ? b.data : "");
        return;
      case "thinking":
        this.shape[this.n++] = ITEM_THINKING;
        this.shape[this.n++] = typeof b.thinking === "string" ? b.thinking.length : 0;
        this.shape[this.n++] = typeof b.thinkingSignature === "string" ? b.thinkingSignature.length : 0;
        return;
      case "toolCall": {
        const name = typeof b.name === "string" ? b.name : "";
        const args = argumentsJson(b.arguments);
        this.shape[this.n++] = ITEM_TOOL_CALL;
        this.shape[this.n++] = name.length;
        this.shape[this.n++] = args.length;
        this.heads += name + args;
        return;
      }
      default:
        this.shape[this.n++] = ITEM_OTHER;
    }
  }

  /** A `!` command: its command's and output's lengths (the rules read no head of it). */
  shell(m: NonNullable<Loose>): void {
    this.room(9);
    const length = (v: unknown) => (typeof v === "string" ? v.length : 0);
    this.shape[this.n++] = ROLE_BASH_EXECUTION;
    this.shape[this.n++] = m.excludeFromContext === true ? FORM_SHELL_EXCLUDED : FORM_SHELL;
    this.shape[this.n++] = 2;
    this.shape[this.n++] = ITEM_TEXT;
    this.shape[this.n++] = length(m.command);
    this.shape[this.n++] = 0;
    this.shape[this.n++] = ITEM_TEXT;
    this.shape[this.n++] = length(m.output);
    this.shape[this.n++] = 0;
  }

  text(text: string): void {
    let head = text;
    if (text.length > TEXT_HEAD) {
      // Never cut a surrogate pair.
      head = text.slice(0, (text.charCodeAt(TEXT_HEAD - 1) & 0xfc00) === 0xd800 ? TEXT_HEAD - 1 : TEXT_HEAD);
    }
    this.shape[this.n++] = ITEM_TEXT;
    this.shape[this.n++] = text.length;
    this.shape[this.n++] = head.length;
    this.heads += head;
  }
}

function roleCode(role: unknown): number {
  switch (role) {
    case "user":
      return ROLE_USER;
    case "assistant":
      return ROLE_ASSISTANT;
    case "toolResult":
      return ROLE_TOOL_RESULT;
    case "custom":
      return ROLE_CUSTOM;
    default:
      return ROLE_OTHER;
  }
}

function argumentsJson(args: unknown): string {
  try {
    return JSON.stringify(args ?? null) ?? "null";
  } catch {
    return "null"; // a cycle or a BigInt: arguments Pi could not have sent either
  }
}

const number = (v: unknown): number => (typeof v === "number" ? v : Number.NaN);

/**
 * The columns of the statistics from Pi's projected entries (only those an
 * edit changed go) and the branch (its records and compactions), and the
 * records themselves (oldest first).
 */
export function savingsColumns(entries: readonly ProjectedEntry[], branch: readonly BranchEntry[]): { columns: SavingsColumns; records: GuardRecord[] } {
  const packer = new Packer();
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    // Pi hands an unedited message through as the same object: most entries stop here.
    if (entry.messages.length === 1 && entry.messages[0] === entry.sourceEntry.message) continue;
    if (!isEdited(entry)) continue;
    packer.entry(entry.messages.length);
    for (const message of entry.messages) packer.message(message);
    packer.message(rawMessage(entry.sourceEntry));
  }
  let marks = new Float64Array(MARK_STRIDE * 256);
  let n = 0;
  const records: GuardRecord[] = [];
  for (let i = 0; i < branch.length; i++) {
    const entry = branch[i];
    const record = entry.type === "custom" && entry.customType === RECORD_TYPE;
    if (!record && entry.type !== "compaction") continue;
    if (n === marks.length) {
      const grown = new Float64Array(marks.length * 2);
      grown.set(marks);
      marks = grown;
    }
    if (record) {
      const data = entry.data as Loose;
      marks[n] = MARK_RECORD;
      marks[n + 1] = number(data?.savedChars);
      marks[n + 2] = number(data?.requests);
      marks[n + 3] = number(data?.inputTokens);
      marks[n + 4] = number(data?.costUsd);
      marks[n + 5] = data?.phase === "mid-run" ? 1 : 0;
      records.push(entry.data as GuardRecord);
    } else {
      marks[n] = MARK_COMPACTION; // the rest stays 0
    }
    n += MARK_STRIDE;
  }
  const columns = { shape: packer.shape.subarray(0, packer.n), heads: packer.heads, marks: marks.subarray(0, n), images: packer.images };
  return { columns, records };
}

/** The branch as the statistics read it, and the records on it (oldest first). */
export function statsInput(ctx: ExtensionContext): { input: SavingsColumns; records: GuardRecord[] } {
  const projection = ctx.sessionManager.buildSessionProjection() as unknown as { entries: ProjectedEntry[] };
  const { columns, records } = savingsColumns(projection.entries, ctx.sessionManager.getBranch() as unknown as BranchEntry[]);
  return { input: columns, records };
}

/** The figures and the status text, or the core's error. */
export function guardFigures(ctx: ExtensionContext, money = ""): { ok: true; value: { stats: GuardStats; status: StatusText } } | { ok: false; error: string } {
  return callCore(() => guardCore.savings(statsInput(ctx).input, money));
}

/**
 * What `/context` shows of the guard, with its net effect on the bill (guard/bill.ts, the figure
 * `/guard` shows too); `undefined` when the guard is switched off for this process.
 */
export function keptOut(ctx: ExtensionContext): GuardStats | undefined {
  if (disabledBy(["guard", "context-guard"])) return undefined;
  const figures = guardFigures(ctx);
  if (!figures.ok) return undefined;
  const bill = sessionBill(ctx);
  return bill ? { ...figures.value.stats, bill } : figures.value.stats;
}
