// The `/guard audit` screen's wrapping (issue 28): continuation lines keep
// their indent, no line is wider than the terminal, and an id or a path too
// wide for a line is cut in the middle, never broken across lines.
import assert from "node:assert/strict";
import { test } from "node:test";
import { visibleWidth } from "@earendil-works/pi-tui";
import { wrapLine } from "../../extension/wrap.ts";

const path = "/home/someone/.pi/agent/sessions/--home-someone-projects-shop--/2026-12-01T09-05-00-000Z_0f3c9a1e-7b2d-4c55-9e61-2a8f4d6b1c07.jsonl";

test("wrapped lines keep their indent and fit the width at 80, 100 and 120 columns", () => {
  const line = `  in /home/someone/projects/shop; file ${path} (1.2MB); guard on, and a sentence long enough to wrap 日本語の文 🚀 twice over at eighty columns`;
  for (const width of [80, 100, 120]) {
    const lines = wrapLine(line, width);
    assert.ok(lines.length >= 2, `${width}: ${lines.join("\n")}`);
    assert.ok(
      lines.every((l) => visibleWidth(l) <= width),
      `${width}: ${lines.join("\n")}`,
    );
    assert.ok(lines[0].startsWith("  in "));
    for (const l of lines.slice(1)) assert.match(l, /^ {4}\S/, `a continuation keeps the indent and two more: ${l}`);
    // The path is whole where it fits, else cut once in the middle with its start and its end.
    const shown = lines.find((l) => l.includes("/home/someone/.pi"));
    assert.ok(shown, lines.join("\n"));
    if (width - 4 >= path.length) assert.ok(shown.includes(path), shown);
    else assert.match(shown, /\/home\/someone\/\.pi\S*…\S*\.jsonl/, shown);
    assert.equal(lines.join(" ").replace(/ +/g, " ").includes("2a8f4d6b1c07.jsonl"), true, "the id's end is kept");
  }
});

test("a short line is left as it is; a width too narrow for the indent cuts with an ellipsis", () => {
  assert.deepEqual(wrapLine("  short", 80), ["  short"]);
  const [only] = wrapLine(`${" ".repeat(30)}${"word ".repeat(10)}`, 36);
  // pi-tui's cut closes its styles with resets: the text is what counts.
  assert.ok(visibleWidth(only) <= 36 && only.replace(/\u001b\[[0-9;]*m/g, "").endsWith("…"), JSON.stringify(only));
});
