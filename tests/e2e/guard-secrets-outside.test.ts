// Secrets withheld inside real Pi on text no one here wrote (issue 25): the
// outputs of the independent corpus (tests/harness/outside-secrets, one of
// its seen seeds) sit in plain files with innocent names; the scripted model
// `cat`s them, so the guard judges them as large outputs. Every string of
// every request the stand-in classifier receives is searched for every
// planted secret, by 12-character pieces: none may be left. The window keeps
// the originals.
import assert from "node:assert/strict";
import { test } from "node:test";
import { keepChunks, type ClassifyRequest } from "../harness/classifier.ts";
import { textOf, toolResultEntry } from "../harness/inspect.ts";
import { piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";
import { outsideCorpus } from "../harness/outside-secrets/corpus.ts";
import { leftPieces } from "../harness/outside-secrets/check.ts";

/** Every string inside a request, joined: JSON's escapes undone. */
function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v && typeof v === "object") for (const x of Object.values(v)) strings(x, out);
  return out;
}

test(`Pi ${piVersion}: no secret of the independent corpus reaches the judge`, async () => {
  const corpus = outsideCorpus(2);
  // Eight files of about 10 kB each, of whole outputs in corpus order.
  const files: Record<string, string> = {};
  const inFile: number[][] = [];
  let at = 0;
  for (let f = 0; f < 8; f++) {
    const picked: number[] = [];
    let text = "";
    while (text.length < 10_000 && at < corpus.outputs.length) {
      text += `$ ${corpus.outputs[at].label}\n${corpus.outputs[at].text}\n`;
      picked.push(at++);
    }
    files[`notes/part-${f}.txt`] = text;
    inFile.push(picked);
  }
  const pi = await startSession({
    files,
    classifier: keepChunks((_request: ClassifyRequest) => []),
    script: [Object.keys(files).map((path, i) => ({ tool: "bash", args: { command: `cat ${path}` }, id: `part${i}` })), "Read them all; nothing stands out."],
  });
  try {
    await pi.prompt("Skim these notes for anything odd.");
    const sent = pi.classifierCalls.map((c) => strings(c.request.state).join("\n")).join("\n");
    const planted = corpus.planted.filter((p) => p.output !== undefined && p.output < at);
    assert.ok(planted.length > 150, `${planted.length} secrets planted`);
    // Each file was sent (a line of it that holds no secret is in a request).
    for (const picked of inFile) {
      const line = corpus.outputs[picked[0]].label;
      assert.ok(sent.includes(line), `the output of ${line} was not sent`);
    }
    const left = planted.filter((p) => leftPieces(p, sent));
    assert.equal(left.length, 0, `left: ${left.map((p) => `${p.kind} in ${p.surrounding}`).join(", ")}`);
    // The window keeps the originals.
    const raw = textOf(toolResultEntry(pi.branch(), "part0").message);
    assert.ok(raw.includes(corpus.outputs[0].text.slice(0, 200)));
    console.log(
      `${planted.length} secrets of ${new Set(planted.map((p) => p.kind)).size} kinds in ${at} outputs, ${pi.classifierCalls.length} requests: none left`,
    );
  } finally {
    await pi.dispose();
  }
});
