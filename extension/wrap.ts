// Lines wrapped to a terminal's width the way a person reads them: at spaces,
// each continuation keeping its line's indent, and a word too wide for a line
// (a path, an id) cut in the middle rather than broken. Used by the audit
// screen and by multi-line notifications in Pi's TUI.
import { truncateToWidth, visibleWidth } from "@earendil-works/pi-tui";

/**
 * A word too wide for the room, cut in the middle: `/home/u/.pi/…/2026-12-01_01J9.jsonl`. An id or a
 * path keeps its start and its end whole; it is never broken across lines.
 */
function middleCut(word: string, room: number): string {
  const chars = [...word];
  /** The leading characters of `from` that fit in `most` columns, and their width. */
  const keep = (from: string[], most: number) => {
    const out: string[] = [];
    let used = 0;
    for (const c of from) {
      if (used + visibleWidth(c) > most) break;
      used += visibleWidth(c);
      out.push(c);
    }
    return { out, used };
  };
  const head = keep(chars, Math.floor((room - 1) / 3));
  const tail = keep([...chars].reverse(), room - 1 - head.used).out.reverse();
  return `${head.out.join("")}…${tail.join("")}`;
}

/**
 * One plain line wrapped to `width` at spaces: the lines after the first keep its indent and two
 * spaces more; a word wider than a line's room is cut in the middle rather than broken (issue 28).
 */
export function wrapLine(line: string, width: number): string[] {
  const indent = /^ */.exec(line)?.[0] ?? "";
  const more = `${indent}  `;
  if (visibleWidth(line) <= width) return [line];
  // The room of a continuation line; the first line's is at least as wide, so a word cut to it fits both.
  const room = width - visibleWidth(more);
  if (room < 8) return [truncateToWidth(line, width, "…")];
  const out: string[] = [];
  let current = indent;
  let empty = true;
  for (const word of line.slice(indent.length).split(/ +/)) {
    const fitted = visibleWidth(word) > room ? middleCut(word, room) : word;
    if (empty) {
      current += fitted;
      empty = false;
    } else if (visibleWidth(current) + 1 + visibleWidth(fitted) <= width) current += ` ${fitted}`;
    else {
      out.push(current);
      current = more + fitted;
    }
  }
  out.push(current);
  return out;
}

/** Every line of `text` wrapped to `width` (see `wrapLine`). */
export function wrapText(text: string, width: number): string {
  return text
    .split("\n")
    .flatMap((line) => wrapLine(line, width))
    .join("\n");
}
