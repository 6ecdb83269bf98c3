// A test oracle for the guard's replacement text (a header, the kept chunks
// verbatim, one omission line per removed run), written independently of the
// core: given the chunks the classifier saw (from the recorded requests) and
// which of them the stand-in kept, the note the next request must carry.
import type { ClassifierCall } from "./session.ts";

export interface SeenChunk {
  n: number;
  text: string;
}

/** Every chunk of one output, in order, from the classifier calls that carried it. */
export function chunksSeen(calls: ClassifierCall[], tool: string): SeenChunk[] {
  const out = new Map<number, string>();
  for (const call of calls) {
    const state = call.request.state as { tool?: string; chunks?: Record<string, string> };
    if (state.tool !== tool || !state.chunks) continue;
    for (const [key, text] of Object.entries(state.chunks)) out.set(Number(key.replace("chunk_", "")), text);
  }
  return [...out.entries()].sort((a, b) => a[0] - b[0]).map(([n, text]) => ({ n, text }));
}

const lineCount = (text: string) => (text === "" ? 0 : text.replace(/\n$/, "").split("\n").length);

/** `950`, `1.2k`, `36.1k` (one decimal, half up). */
export function shortCount(n: number): string {
  if (n < 1000) return String(n);
  const tenths = Math.floor((n + 50) / 100);
  return `${Math.floor(tenths / 10)}.${tenths % 10}k`;
}

export type Numbering = { kind: "grep" } | { kind: "file"; offset: number } | { kind: "output" };

/** The replacement text: the header, kept chunks verbatim, one omission line per removed run. */
export function expectedNote(options: {
  label: string;
  entryId: string;
  raw: string;
  chunks: SeenChunk[];
  /** Whether the stand-in kept this chunk. */
  kept: (chunk: SeenChunk) => boolean;
  numbering: Numbering;
}): string {
  const { chunks, kept } = options;
  const keptChunks = chunks.filter(kept);
  const keptLines = keptChunks.reduce((s, c) => s + lineCount(c.text), 0);
  const keptChars = keptChunks.reduce((s, c) => s + c.text.replace(/\n$/, "").length, 0);
  const recall = `recall({"entryId":"${options.entryId}"})`;
  const header =
    `[context-guard] Distilled the output of ${options.label}: kept ${keptLines} of ${lineCount(options.raw)} lines ` +
    `(${shortCount(keptChars)} of ${shortCount(options.raw.length)} chars); the rest was judged not needed for the answer. Full output: ${recall}.`;
  const parts = [header];
  let line = 1; // the output line the next chunk starts on
  let run: SeenChunk[] = [];
  let runStart = 1;
  const flush = () => {
    if (!run.length) return;
    const lines = run.reduce((s, c) => s + lineCount(c.text), 0);
    const first = runStart;
    const last = runStart + lines - 1;
    const span = (what: string, shift: number) =>
      first === last ? `[… ${what} line ${first + shift} omitted]` : `[… ${what} lines ${first + shift}-${last + shift} omitted]`;
    if (options.numbering.kind === "grep") {
      const files: string[] = [];
      for (const c of run) {
        for (const l of c.text.split("\n")) {
          const m = /^(.+?\.\w+)[:-]\d+[:-]/.exec(l);
          if (m && !files.includes(m[1])) files.push(m[1]);
        }
      }
      const more = files.length - 5;
      const list = more > 0 ? `${files.slice(0, 5).join(", ")} and ${more} more` : files.join(", ");
      parts.push(`[… ${lines} ${lines === 1 ? "line" : "lines"} omitted${files.length ? ` from ${list}` : ""}]`);
    } else if (options.numbering.kind === "file") {
      parts.push(span("file", options.numbering.offset - 1));
    } else {
      parts.push(span("output", 0));
    }
    run = [];
  };
  for (const c of chunks) {
    if (kept(c)) {
      flush();
      parts.push(c.text.replace(/\n$/, ""));
    } else {
      if (!run.length) runStart = line;
      run.push(c);
    }
    line += lineCount(c.text);
  }
  flush();
  return parts.join("\n");
}
