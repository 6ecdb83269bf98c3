// The redactor measured on data written apart from its rules (issue 25):
// the independent corpus of tests/harness/outside-secrets (a helper who never
// read the rules wrote it from gitleaks' rule set, providers' documented
// formats and the file formats secrets live in). A secret counts as withheld
// only when no 12-character piece of it is left. Reported for the seen seeds
// and, apart, for the seed kept out of sight while the rules were written;
// each part at least 99.5%, every kind at least 90% on the seen seeds (the
// unseen part's lowest kind is printed: see the test). The clean texts of the
// same helper (object listings, i18n files, access logs, code, dpkg status, a
// lockfile, minified code) get at most 0.5 placeholders per 100 KB each.
import assert from "node:assert/strict";
import { test } from "node:test";
import { guardCore } from "../../extension/guard/wasm.ts";
import { outsideCorpus, SEEN_SEEDS, UNSEEN_SEED } from "../harness/outside-secrets/corpus.ts";
import { cleanTexts } from "../harness/outside-secrets/clean.ts";
import { leftPieces } from "../harness/outside-secrets/check.ts";

function measure(seeds: number[]): { share: number; total: number; perKind: Map<string, [number, number]> } {
  const perKind = new Map<string, [number, number]>();
  let total = 0;
  let missed = 0;
  for (const seed of seeds) {
    const corpus = outsideCorpus(seed);
    const sent = corpus.outputs.map((o) => guardCore.withholdSecrets(o.text).text);
    for (const p of corpus.planted) {
      const left = leftPieces(p, sent[p.output ?? 0]);
      const k = perKind.get(p.kind) ?? [0, 0];
      k[0]++;
      if (left) {
        k[1]++;
        missed++;
      }
      perKind.set(p.kind, k);
      total++;
    }
  }
  return { share: 1 - missed / total, total, perKind };
}

for (const [part, seeds] of [
  ["seen seeds", SEEN_SEEDS],
  ["the seed kept out of sight", [UNSEEN_SEED]],
] as const) {
  test(`the independent corpus, ${part}: at least 99.5% withheld${part === "seen seeds" ? ", every kind at least 90%" : " (the lowest kind printed)"}`, () => {
    const { share, total, perKind } = measure([...seeds]);
    const worst = [...perKind].map(([k, [n, m]]) => [k, 1 - m / n] as const).sort((a, b) => a[1] - b[1]);
    console.log(
      `${part}: ${total} secrets of ${perKind.size} kinds, withheld ${(share * 100).toFixed(2)}%; lowest kinds: ${worst
        .slice(0, 4)
        .map(([k, s]) => `${k} ${(s * 100).toFixed(0)}%`)
        .join(", ")}`,
    );
    assert.ok(share >= 0.995, `${(share * 100).toFixed(2)}%`);
    // Every kind at least 90%: held on the seeds the rules were written against. On the seed kept out
    // of sight one kind missed it when it was first run (generic-token 85%, 2026-12-02; docs/GUARD.md);
    // the rules were not changed after that look, so the miss stands and is printed above, not gated.
    if (part === "seen seeds") for (const [k, s] of worst) assert.ok(s >= 0.9, `${k}: ${(s * 100).toFixed(0)}%`);
  });
}

test("clean texts of the independent helper: at most 0.5 placeholders per 100 KB each", () => {
  for (const seed of [1, 2]) {
    for (const { name, text } of cleanTexts(seed)) {
      const found = guardCore.withholdSecrets(text).found;
      const per100k = found.length / (text.length / 100_000);
      assert.ok(
        per100k <= 0.5,
        `${name} (seed ${seed}): ${found.length} placeholders, e.g. ${found
          .slice(0, 3)
          .map(([k, s]) => `${k} ${s.slice(0, 30)}`)
          .join("; ")}`,
      );
    }
  }
});
