// The guard's host reads: Pi's projected entries, turned into the plain data
// the core reads (crates/core/src/entry.rs). Nothing is decided here.

/** `ProjectedSessionEntry` as far as the guard reads it. */
export interface ProjectedEntry {
  sourceEntry: { id: string; type: string; message?: unknown; customType?: string };
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
    const source = entry.sourceEntry;
    const out: CoreEntry = { id: source.id, entryType: source.type, messages: entry.messages.map(trimImages) };
    const raw = source.type === "message" ? source.message : undefined;
    if (raw !== undefined && !(entry.messages.length === 1 && sameContent(entry.messages[0], raw))) {
      out.raw = trimImages(raw);
    }
    return out;
  });
}

function sameContent(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const ca = (a as { content?: unknown })?.content;
  const cb = (b as { content?: unknown })?.content;
  if (ca === cb) return true;
  if (!Array.isArray(ca) || !Array.isArray(cb) || ca.length !== cb.length) return false;
  return ca.every((block, i) => block === cb[i] || JSON.stringify(block) === JSON.stringify(cb[i]));
}

function trimImages(message: unknown): unknown {
  const content = (message as { content?: unknown })?.content;
  if (!Array.isArray(content) || !content.some((b) => b?.type === "image")) return message;
  return {
    ...(message as object),
    content: content.map((b) =>
      b?.type === "image" && typeof b.data === "string" && b.data.length > IMAGE_HEAD_CHARS
        ? { ...b, data: b.data.slice(0, IMAGE_HEAD_CHARS) }
        : b,
    ),
  };
}
