// The context-per-request sparkline of the /context screen: the series the
// extension collected (Pi's calculateContextTokens of each request on the
// branch), drawn in at most `width` cells, with a line of marks under it.
//
// Pure and width-safe: one character per cell, never more cells than the width
// or the requests. A cell that stands for several requests shows their peak
// (a drop after a compaction would otherwise be averaged away) and every mark
// among them.

const LEVELS = "▁▂▃▄▅▆▇█";
/** A request's marks, as collect.ts sets them. */
const COMPACTION = 1;
const EDIT = 2;

export interface Sparkline {
  /** One level character per cell, scaled to the series' peak. */
  bars: string;
  /** One character per cell: `c` a compaction came before a request of the cell, `e` a context edit, ` ` neither; empty when nothing is marked. */
  marks: string;
}

export function sparkline(tokens: readonly number[], marks: readonly number[], width: number): Sparkline {
  const n = tokens.length;
  const cells = Math.max(0, Math.min(n, Math.floor(Number.isFinite(width) ? width : 0)));
  if (cells === 0) return { bars: "", marks: "" };
  let peak = 0;
  for (const t of tokens) if (Number.isFinite(t) && t > peak) peak = t;
  let bars = "";
  let line = "";
  let marked = false;
  for (let i = 0; i < cells; i++) {
    const from = Math.floor((i * n) / cells);
    const to = Math.max(from + 1, Math.floor(((i + 1) * n) / cells));
    let top = 0;
    let m = 0;
    for (let j = from; j < to; j++) {
      const t = tokens[j];
      if (Number.isFinite(t) && t > top) top = t;
      m |= marks[j] ?? 0;
    }
    bars += LEVELS[peak > 0 ? Math.round((top / peak) * (LEVELS.length - 1)) : 0];
    line += m & COMPACTION ? "c" : m & EDIT ? "e" : " ";
    if (m & (COMPACTION | EDIT)) marked = true;
  }
  return { bars, marks: marked ? line : "" };
}
