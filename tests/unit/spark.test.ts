// The /context screen's sparkline: width-safe, peaks kept, marks kept.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sparkline } from "../../extension/report/spark.ts";

test("one cell per request when they fit, scaled to the peak", () => {
  const s = sparkline([0, 50, 100, 25], [0, 0, 1, 2], 80);
  assert.equal(s.bars, "▁▅█▃");
  assert.equal(s.marks, "  ce");
});

test("more requests than cells: each cell is the peak of its requests, with every mark", () => {
  const tokens = Array.from({ length: 1000 }, (_, i) => (i === 501 ? 10_000 : 100));
  const marks = tokens.map((_, i) => (i === 998 ? 1 : 0));
  for (const width of [1, 7, 40, 199]) {
    const s = sparkline(tokens, marks, width);
    assert.equal([...s.bars].length, width, `width ${width}`);
    assert.equal([...s.marks].length, width);
    assert.equal([...s.bars].filter((c) => c === "█").length, 1, `the peak survives at width ${width}`);
    assert.equal(s.marks.trimEnd().at(-1), "c", "the compaction near the end is marked");
  }
});

test("nothing to draw, nothing marked, bad values", () => {
  assert.deepEqual(sparkline([], [], 40), { bars: "", marks: "" });
  assert.deepEqual(sparkline([5, 6], [], 0), { bars: "", marks: "" });
  assert.deepEqual(sparkline([5, 6], [], Number.NaN), { bars: "", marks: "" });
  assert.deepEqual(sparkline([0, Number.NaN, -3], [], 10), { bars: "▁▁▁", marks: "" });
});
