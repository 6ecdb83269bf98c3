// A straightforward TypeScript version of the status bar's savings
// recomputation (crates/guard-read/src/stats/), for the benchmark to compare
// against: same inputs (Pi's projected entries and the branch's records and
// compactions), same figures. Not used by the extension.

const MARK = "[context-guard]";
const EXCHANGE_STUB = "[context-guard] Omitted an earlier exchange";

// loose Pi shapes
type Loose = any;

function imageChars(data: string): number {
  // PNG only (the benchmark's images): width and height at bytes 16..24.
  const bytes = Buffer.from(data.slice(0, 64), "base64");
  let tokens = 1600;
  if (bytes.length >= 24 && bytes[0] === 0x89 && bytes[1] === 0x50) {
    const w = bytes.readUInt32BE(16);
    const h = bytes.readUInt32BE(20);
    if (w > 0 && h > 0) tokens = Math.min(Math.ceil((w * h) / 750), 6700);
  }
  return tokens * 4;
}

function blocksChars(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const b of content) {
    if (b?.type === "text") n += String(b.text ?? "").length;
    else if (b?.type === "image") n += imageChars(String(b.data ?? ""));
    else if (b?.type === "toolCall") n += String(b.name ?? "").length + JSON.stringify(b.arguments ?? null).length;
  }
  return n;
}

function firstText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  return content.find((b) => b?.type === "text")?.text;
}

export interface Figures {
  savedChars: number;
  items: number;
  lifetimeChars: number;
  compacted: boolean;
}

export function savings(entries: Loose[], branch: Loose[]): Figures {
  let savedChars = 0;
  let items = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    const raw = e.sourceEntry.type === "message" ? e.sourceEntry.message : undefined;
    if (!raw || (e.messages.length === 1 && e.messages[0] === raw)) continue;
    const visible = e.messages[0];
    if (e.messages.length === 1 && raw.role === "toolResult" && visible.role === "toolResult") {
      if (firstText(visible.content)?.startsWith(MARK) && !firstText(raw.content)?.startsWith(MARK)) {
        savedChars += Math.max(0, blocksChars(raw.content) - blocksChars(visible.content));
        items++;
      }
    } else if (e.messages.length === 1 && raw.role === "user" && visible.role === "user") {
      const text = firstText(visible.content) ?? "";
      if (text.startsWith(EXCHANGE_STUB) && !(firstText(raw.content) ?? "").startsWith(MARK)) {
        let rawChars = blocksChars(raw.content);
        while (i + 1 < entries.length) {
          const next = entries[i + 1];
          if (next.messages.length === 0 && next.sourceEntry.type === "message") {
            rawChars += blocksChars(next.sourceEntry.message.content);
            i++;
          } else if (next.messages.length === 1 && next.messages[0] === next.sourceEntry.message) {
            i++; // unchanged entries in between do not end the exchange in the edited list
          } else break;
        }
        savedChars += Math.max(0, rawChars - blocksChars(visible.content));
        items++;
      }
    }
  }
  let lifetimeChars = 0;
  let savedBefore = false;
  let compacted = false;
  for (const e of branch) {
    if (e.type === "custom" && e.customType === "context-guard") {
      const n = Number(e.data?.savedChars);
      const saved = Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
      lifetimeChars += saved;
      savedBefore ||= saved > 0;
    } else if (e.type === "compaction") compacted ||= savedBefore;
  }
  return { savedChars, items, lifetimeChars, compacted };
}
