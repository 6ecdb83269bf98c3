// `pi install <checkout>` and `pi -e <checkout>`, through the real command line.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pi, startRpc, tempAgent } from "../harness/cli.ts";
import { piVersion, repoRoot } from "../harness/pi.ts";

test(`pi install on Pi ${piVersion}: listed by pi list, loaded at the next start`, async () => {
  const dir = tempAgent();
  try {
    await pi(["install", repoRoot], dir);
    const { stdout } = await pi(["list"], dir);
    assert.ok(stdout.includes(repoRoot), `pi list shows the checkout:\n${stdout}`);

    // Started without -e for the package: it comes from the installed settings.
    const rpc = startRpc({ ...dir, loadProduct: false });
    try {
      const response = await rpc.command({ type: "prompt", message: "/context" });
      assert.equal(response.success, true);
      const note = await rpc.waitFor((r) => r.method === "notify");
      assert.match(String(note.message), /^Context: .*\n[\s\S]*Composition \(estimate: /);
    } finally {
      rpc.close();
    }
  } finally {
    dir.remove();
  }
});

test(`pi -e <checkout> on Pi ${piVersion} loads the package for one session`, async () => {
  const dir = tempAgent();
  const rpc = startRpc(dir);
  try {
    await rpc.command({ type: "prompt", message: "/context" });
    const note = await rpc.waitFor((r) => r.method === "notify");
    assert.match(String(note.message), /^Context: 0 \/ 200\.0k tokens[\s\S]*System prompt[\s\S]*Tool definitions \(\d+\)/);
  } finally {
    rpc.close();
    dir.remove();
  }
});
