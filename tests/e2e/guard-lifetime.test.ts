// The lifetime total inside real Pi: after a real compaction drops earlier
// edits the status shows `🛡 0 · Σ−… tok`, later `🛡 −… tok · N item(s) · Σ−… tok`, and the
// figures follow /tree and a reload because they are recomputed from the branch.
import assert from "node:assert/strict";
import { test } from "node:test";
import { keepMatching } from "../harness/classifier.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { entriesOf } from "../harness/inspect.ts";
import { piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

const tokens = (chars: number) => {
  const t = Math.ceil(chars / 4);
  if (t >= 10_000 && t < 1_000_000) return `${Math.floor((t + 500) / 1000)}k`;
  return t >= 1000 ? `${Math.floor((t + 50) / 100) / 10}k`.replace(/^(\d+)k$/, "$1.0k") : String(t);
};

test(`Pi ${piVersion}: Σ after a compaction, then new savings beside it; /tree and reload follow the branch`, async () => {
  const pi = await startSession({
    files: fixtureRepo(),
    classifier: keepMatching("=== 503"),
    piSettings: { compaction: { keepRecentTokens: 20 } },
    script: [
      { tool: "bash", args: { command: "rg -n status src/services" } },
      "Nine services retry on 503.",
      "Small talk.",
      "## Goal\nFind the retrying services.\n## Progress\nFound nine.",
      { tool: "read", args: { path: "src/lib/status.ts" } },
      "The table has 400 codes.",
    ],
  });
  try {
    await pi.prompt("Which services retry on 503?");
    const first = entriesOf(pi.branch(), "custom", "context-guard")[0].data.savedChars as number;
    assert.ok(first > 20_000);
    assert.equal(pi.status("context-guard"), `🛡 −${tokens(first)} tok · 1 item`);

    await pi.prompt(`And now something else. ${"Tell me more. ".repeat(20)}`);
    await pi.session.compact();
    assert.equal(entriesOf(pi.branch(), "compaction").length, 1);
    // The distilled output is now inside the summary: nothing is kept out, Σ remembers.
    assert.equal(pi.status("context-guard"), `🛡 0 · Σ−${tokens(first)} tok`);
    const beforeSecond = pi.session.sessionManager.getLeafId();

    await pi.prompt("How big is the status table?");
    const records = entriesOf(pi.branch(), "custom", "context-guard");
    const second = records.at(-1).data.savedChars as number;
    assert.equal(records.length, 2);
    assert.equal(pi.status("context-guard"), `🛡 −${tokens(second)} tok · 1 item · Σ−${tokens(first + second)} tok`);

    // Back in the tree to before the second run: its edit and record are off the branch.
    await pi.session.navigateTree(beforeSecond, { summarize: false });
    assert.equal(pi.status("context-guard"), `🛡 0 · Σ−${tokens(first)} tok`);

    // A reload starts the extension afresh; it recomputes the same from the session.
    const shown = pi.statuses.get("context-guard")?.length ?? 0;
    await pi.session.reload();
    assert.ok((pi.statuses.get("context-guard")?.length ?? 0) > shown, "the reloaded extension set the status again");
    assert.equal(pi.status("context-guard"), `🛡 0 · Σ−${tokens(first)} tok`);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});
