// The guard's host reads: Pi's projected entries, turned into the plain data
// the core reads (crates/base/src/entry.rs). Nothing is decided here.

/** `ProjectedSessionEntry` as far as the guard reads it. */
export interface ProjectedEntry {
  sourceEntry: { id: string; type: string; message?: unknown; customType?: string; content?: unknown };
  messages: unknown[];
}

export interface CoreEntry {
  id: string;
  entryType: string;
  messages: unknown[];
  raw?: unknown;
}

// The core reads only an image's header (for its dimensions), so the base64
// data is cut. 96k base64 characters is 72 KB: room for a JPEG's EXIF block
// before its frame header.
const IMAGE_HEAD_CHARS = 96 * 1024;

/** The projection's entries for the core; `raw` only where an edit changed what the model sees. */
export function coreEntries(entries: readonly ProjectedEntry[]): CoreEntry[] {
  return entries.map((entry) => {
    const out: CoreEntry = { id: entry.sourceEntry.id, entryType: entry.sourceEntry.type, messages: entry.messages.map(trimImages) };
    if (isEdited(entry)) out.raw = trimImages(rawMessage(entry.sourceEntry));
    return out;
  });
}

/**
 * The guard's records in the projection, each with its entry's index (`custom` entries are projected
 * with no messages, so the core places them among the entries it reads: guard/memo.rs).
 */
export function guardRecords(entries: readonly ProjectedEntry[]): { at: number; data: unknown }[] {
  const out: { at: number; data: unknown }[] = [];
  entries.forEach((entry, at) => {
    const source = entry.sourceEntry as SourceEntry;
    if (source.type === "custom" && source.customType === "context-guard") out.push({ at, data: source.data });
  });
  return out;
}

export function isEdited(entry: ProjectedEntry): boolean {
  const raw = rawMessage(entry.sourceEntry);
  return raw !== undefined && !(entry.messages.length === 1 && sameContent(entry.messages[0], raw));
}

interface SourceEntry {
  id: string;
  type: string;
  message?: unknown;
  customType?: string;
  content?: unknown;
  data?: unknown;
}

/** The raw message of an entry Pi can edit: a message, or a custom message as the model sees it. */
export function rawMessage(entry: SourceEntry): unknown {
  if (entry.type === "message") return entry.message;
  if (entry.type === "custom_message") return { role: "custom", customType: entry.customType, content: entry.content };
  return undefined;
}

/**
 * What `recall` of a prompt reads: the raw entries after it on the branch, and the ids the latest
 * record that omitted its exchange lists (`null` when no record omitted it; the core picks the entries).
 */
export function exchangeSource(
  branch: readonly SourceEntry[],
  promptId: string,
): { omitted: string[] | null; entries: { id: string; message: unknown }[] } | undefined {
  const at = branch.findIndex((e) => e.id === promptId);
  if (at < 0) return undefined;
  let omitted: string[] | null = null;
  for (const e of branch) {
    if (e.type !== "custom" || e.customType !== "context-guard") continue;
    const results = (e.data as { results?: { kind?: string; entryId?: string; outcome?: string; omitted?: unknown }[] } | undefined)?.results;
    for (const r of Array.isArray(results) ? results : []) {
      if (r?.kind === "exchange" && r.entryId === promptId && r.outcome === "removed") {
        omitted = Array.isArray(r.omitted) ? r.omitted.filter((id): id is string => typeof id === "string") : [];
      }
    }
  }
  const entries: { id: string; message: unknown }[] = [];
  for (const e of branch.slice(at + 1)) {
    const message = rawMessage(e);
    if (message !== undefined) entries.push({ id: e.id, message });
  }
  return { omitted, entries };
}

function sameContent(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const ca = (a as { content?: unknown })?.content;
  const cb = (b as { content?: unknown })?.content;
  if (ca === cb) return true;
  if (!Array.isArray(ca) || !Array.isArray(cb) || ca.length !== cb.length) return false;
  return ca.every((block, i) => block === cb[i] || sameBlock(block, cb[i]));
}

/** Text and image blocks by their fields (a string compare stops at the first difference); others as JSON. */
function sameBlock(a: { type?: unknown; text?: unknown; data?: unknown }, b: { type?: unknown; text?: unknown; data?: unknown } | undefined): boolean {
  if (a?.type !== b?.type) return false;
  if (a.type === "text") return a.text === b?.text && Object.keys(a).length === Object.keys(b ?? {}).length;
  if (a.type === "image") return a.data === b?.data && JSON.stringify({ ...a, data: "" }) === JSON.stringify({ ...b, data: "" });
  return JSON.stringify(a) === JSON.stringify(b);
}

function trimImages(message: unknown): unknown {
  const content = (message as { content?: unknown })?.content;
  if (!Array.isArray(content) || !content.some((b) => b?.type === "image")) return message;
  return {
    ...(message as object),
    content: content.map((b) =>
      b?.type === "image" && typeof b.data === "string" && b.data.length > IMAGE_HEAD_CHARS ? { ...b, data: b.data.slice(0, IMAGE_HEAD_CHARS) } : b,
    ),
  };
}
