// A straightforward TypeScript version of the cache pin's step (docs/GUARD.md
// "The cache pin (Anthropic)"; the product's version is
// crates/economics/src/pin), for the benchmark only: the same rules over the
// payload object as Pi hands it, each prefix identified by a running SHA-1 over
// each block's JSON without its `cache_control`.
import { createHash } from "node:crypto";

type Loose = any;
export type Why = "question" | "read" | "write";
export interface Mark {
  message: number;
  block: number;
  why: Why;
}

interface Block {
  message: number | undefined;
  block: number;
  prefix: string;
  /** The block's own JSON (without `cache_control`): which blocks an edit changed. */
  own: string;
  chars: number;
  cc: Loose;
  text: boolean;
}
interface Entry {
  prefix: string;
  chars: number;
  at: number;
  ttl: number;
}

const ttlOf = (cc: Loose) => (cc?.ttl === "1h" ? 3_600_000 : 300_000);

function blocks(body: Loose): { blocks: Block[]; messages: { role: string; first: number; len: number }[] } {
  const out: Block[] = [];
  const messages: { role: string; first: number; len: number }[] = [];
  let hash = "";
  let chars = 0;
  const push = (message: number | undefined, k: number, b: Loose) => {
    const json = JSON.stringify(b, (key, v) => (key === "cache_control" ? undefined : v));
    hash = createHash("sha1").update(hash).update(json).digest("hex");
    chars += json.length;
    out.push({ message, block: k, prefix: hash, own: json, chars, cc: b?.cache_control, text: typeof b === "string" || b?.type === "text" });
  };
  (body.tools ?? []).forEach((t: Loose, i: number) => push(undefined, i, t));
  (Array.isArray(body.system) ? body.system : []).forEach((b: Loose, i: number) => push(undefined, i, b));
  body.messages.forEach((m: Loose, i: number) => {
    const first = out.length;
    hash = createHash("sha1").update(hash).update(m.role).digest("hex");
    if (typeof m.content === "string") push(i, 0, m.content);
    else m.content.forEach((b: Loose, k: number) => push(i, k, b));
    messages.push({ role: m.role, first, len: out.length - first });
  });
  return { blocks: out, messages };
}

export class ReferencePin {
  entries: Entry[] = [];
  last: { prefixes: string[]; owns: string[]; breakpoints: { prefix: string; chars: number; ttl: number }[]; at: number } | undefined;

  plan(body: Loose, now: number): { marks: Mark[]; dropSystem: boolean } {
    const { blocks: bs, messages } = blocks(body);
    const rolling = [...bs].reverse().find((b) => b.message !== undefined && b.cc);
    const result = { marks: [] as Mark[], dropSystem: false };
    if (rolling) {
      let last = messages.length - 1;
      while (last >= 0 && messages[last].role === "system") last--;
      const wanted: [number, Why][] = [];
      for (let q = last - 1; q >= 0; q--) {
        const m = messages[q];
        const texts = bs.slice(m.first, m.first + m.len).map((b) => b.text);
        if (m.role === "user" && texts.includes(true)) {
          wanted.push([m.first + texts.lastIndexOf(true), "question"]);
          break;
        }
      }
      const prev = this.last?.prefixes ?? [];
      let same = 0;
      while (same < bs.length && same < prev.length && bs[same].prefix === prev[same]) same++;
      if (this.last && same < prev.length && same < bs.length) {
        const live = new Set(this.entries.filter((e) => now - e.at < e.ttl).map((e) => e.prefix));
        let read = -1;
        for (let i = bs.length - 1; i >= 0; i--)
          if (live.has(bs[i].prefix)) {
            read = i;
            break;
          }
        const edit: [number, Why][] = [];
        if (read >= 0 && read < same) edit.push([read, "read"]);
        // The last changed block among those both requests hold.
        const owns = this.last.owns;
        let lastChanged = same;
        for (let i = Math.min(owns.length, bs.length) - 1; i >= same; i--)
          if (bs[i].own !== owns[i]) {
            lastChanged = i;
            break;
          }
        const holder = messages.findIndex((m) => m.first + m.len > lastChanged && m.role === "user" && m.len > 0);
        if (holder >= 0 && holder !== last) edit.push([messages[holder].first + messages[holder].len - 1, "write"]);
        // After an edit: read point, write anchor, then the question.
        if (edit[0]?.[1] === "read") wanted.unshift(...edit);
        else wanted.push(...edit);
      }
      const seen = new Set<number>();
      const fresh = wanted.filter(([b]) => !bs[b].cc && !seen.has(b) && (seen.add(b), true));
      const existing = bs.filter((b) => b.cc).length;
      let room = Math.max(0, 4 - existing);
      const system0 = !!(Array.isArray(body.system) && body.system[0]?.cache_control);
      if (fresh.length && room < fresh.length && system0) {
        result.dropSystem = true;
        room++;
      }
      if (fresh.length && room > 0) {
        for (const [b, why] of fresh.slice(0, room)) result.marks.push({ message: bs[b].message!, block: bs[b].block, why });
      } else result.dropSystem = false;
    }
    const marked = new Set(result.marks.map((m) => `${m.message}/${m.block}`));
    this.entries = this.entries.filter((e) => now - e.at < e.ttl);
    this.last = {
      at: now,
      prefixes: bs.map((b) => b.prefix),
      owns: bs.map((b) => b.own),
      breakpoints: bs
        .filter((b, i) => marked.has(`${b.message}/${b.block}`) || (b.cc && !(result.dropSystem && i === (body.tools?.length ?? 0))))
        .map((b) => ({ prefix: b.prefix, chars: b.chars, ttl: ttlOf(b.cc ?? rolling?.cc) })),
    };
    return result;
  }

  observe(read: number, write: number): void {
    if (!this.last) return;
    const lastChars = Math.max(0, ...this.last.breakpoints.map((b) => b.chars));
    const perChar = write > 0 && lastChars > 0 ? (read + write) / lastChars : 0.25;
    const prefixes = new Set(this.last.prefixes);
    for (const e of this.entries) if (read >= e.chars * perChar * 1.02 + 16 && prefixes.has(e.prefix)) e.at = this.last.at;
    if (write === 0) return;
    for (const b of this.last.breakpoints) {
      const tokens = b.chars * perChar;
      // The last breakpoint is written whenever anything was; the others need a margin past the read.
      if (b.chars < 4096 || (b.chars !== lastChars && tokens <= read + Math.max(tokens / 50, 16))) continue;
      this.entries = this.entries.filter((e) => e.prefix !== b.prefix);
      this.entries.push({ prefix: b.prefix, chars: b.chars, at: this.last.at, ttl: b.ttl });
    }
  }
}
