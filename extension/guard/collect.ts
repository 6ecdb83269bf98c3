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
    const out: CoreEntry = { id: entry.sourceEntry.id, entryType: entry.sourceEntry.type, messages: entry.messages.map(trimImages) };
    if (isEdited(entry)) out.raw = trimImages(entry.sourceEntry.message);
    return out;
  });
}

/**
 * Only the message entries an edit changed (or omitted), with their raw message:
 * all the savings read. Pi hands unedited messages through as the same objects,
 * so this costs little on a long session.
 */
export function editedEntries(entries: readonly ProjectedEntry[]): CoreEntry[] {
  const out: CoreEntry[] = [];
  for (const entry of entries) {
    if (!isEdited(entry)) continue;
    out.push({
      id: entry.sourceEntry.id,
      entryType: entry.sourceEntry.type,
      messages: entry.messages.map(trimImages),
      raw: trimImages(entry.sourceEntry.message),
    });
  }
  return out;
}

function isEdited(entry: ProjectedEntry): boolean {
  const raw = entry.sourceEntry.type === "message" ? entry.sourceEntry.message : undefined;
  return raw !== undefined && !(entry.messages.length === 1 && sameContent(entry.messages[0], raw));
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
